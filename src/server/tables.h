/*
 * tables.h - what the main thread owns (server/ only): the server object,
 * the job table (jobs.c), the node table, and the one road that changes
 * them (events.c). Every group of the server includes it; it includes none
 * of them (server.h and auth/auth.h are below it). Nothing here is touched
 * by HTTP threads; they see it only through snapshots (server.h).
 *
 * The job table keeps what the core does not: the full spec (launch fields),
 * placement by name, times, exit status, accounting figures. It follows the
 * events the core accepted (events.c: the same fold live and at recovery),
 * so a restarted server rebuilds it exactly from the journal.
 */
#ifndef PX_SERVER_TABLES_H
#define PX_SERVER_TABLES_H

#include <jansson.h>
#include <microhttpd.h>

#include "core/core.h"
#include "server/server.h"
#include "store/store.h"
#include "util/map.h"
#include "util/vec.h"

/* One node of a running job's placement. */
struct px_sjob_node {
  uint32_t node;                /* conf index */
  uint32_t ncpu;
  px_bits64 gpus;
  uint64_t mem_mib;
  uint32_t gpu_share;           /* a fractional job: hundredths of its one GPU; 0: whole GPUs */
};

struct px_sjob {
  uint64_t id;
  uint64_t array_job_id;        /* 0 unless an array task */
  uint32_t array_task_id;       /* PX_NONE unless an array task */
  struct px_jobspec spec;
  uint32_t part;                /* conf partition index, PX_NONE if unknown */
  enum px_job_state state;
  bool requeued;                /* pending again after a requeue, until it starts (a repeated end report is acked) */
  bool preempting;              /* the core preempted it; stop orders sent, end not yet reported */
  bool preempt_cancel;          /* PreemptMode=CANCEL: ends PREEMPTED instead of requeueing */
  bool fault_requeue;           /* a GPU fault's graceful requeue (nodes/gpu_health.c): stopping, requeued at its end */
  bool recovered;               /* running at recovery outside the core's resources, nodes held drained */
  bool skipped;                 /* a recovered array task the core holds without resources (px_core_array_skip) */
  bool unconfirmed;             /* running at recovery: its agents must know it */
  char reason[128];             /* pending reason / end reason (a failed start says why) */
  uint32_t priority;
  uint32_t prio[7];             /* weighted components: age fairshare jobsize partition qos site assoc */
  int64_t prio_time;            /* when priority was last taken from the core */
  int64_t submit, eligible, start, end, time_limit_s;
  int32_t exit_code, term_signal;
  uint32_t restarts;
  struct px_sjob_node *alloc;
  uint32_t nalloc;
  char *cancelled_by;
  uint64_t peak_mem_mib, cpu_time_ms;
  uint64_t mseq;                /* journal seq of the last change */
  uint64_t submit_seq, start_seq, end_seq; /* journal seqs of its submit (an array task: its
                                 * array's), of its (last) start and of the record that ended
                                 * it: their order within a second, for its accounting row (0: not yet) */
  /* An array's own record (px_sjob_is_array): its tasks are ids id + 1 ..
   * id + arr_ntasks, started in that order (core.h). Its state is their
   * fold (px_jobs_array_fold), never reported by an agent. */
  uint32_t arr_ntasks, arr_started, arr_ended, arr_failed;
  bool arr_cancelled;           /* cancelled: no further task starts */
  struct px_jview *view;        /* published view, NULL when stale */
};

struct px_snode {
  int64_t last_heartbeat;       /* 0: never registered */
  bool registered;
  bool admin_drain;             /* drained through the road, by whatever cause (vs. recovery's hold) */
  uint8_t drain_cause;          /* enum px_drain_cause (nodes/nodes.h): why admin_drain; NONE when not */
  bool down;
  bool down_recorded;           /* its DOWN row is open in accounting (nodes/node_acct.c; live, not restored) */
  bool given_up;                /* no agent within the timeout of recovery: its jobs failed */
  uint32_t recovered_jobs;      /* recovered running jobs holding it drained */
  int64_t recovered_since;      /* when they began to (Unix s; sinfo -R's TIMESTAMP); 0: not held */
  char addr[64];
  char reason[256];
  char reason_by[64];           /* who set reason ("": not known, e.g. a journal from before it was kept) */
  int64_t reason_time;          /* when (Unix s; 0: not known) */
  struct px_sgpu *gpus;         /* GPU health (nodes/gpu_health.c); NULL until a GPU's first fault */
  uint8_t reboot;               /* enum px_reboot_state (nodes/node_health.c) */
  uint8_t reboot_next;          /* enum px_reboot_next */
  bool reboot_asap, reboot_was_drained;
  uint32_t gpu_gen;             /* counts its GPUs' changes (the published text follows) */
  uint32_t gpu_faults;          /* counted faults of its GPUs since gpu_window (flapping, gpu_health.c) */
  int64_t gpu_window;
};

struct px_arch_run; /* an archived job's earlier attempt (journal/archive_usage.c) */

/* Group commit (commit.c): batches of journal records, sealed by the main
 * thread in order and committed off it. */
struct px_commit_batch;
struct px_committer {
  pthread_mutex_t store_lock;   /* held by whoever uses the store (commits, accounting, checkpoints) */
  pthread_mutex_t lock;         /* the sealed queue, done flags and free list */
  pthread_cond_t done_cv;       /* a batch is done */
  struct px_commit_batch *open; /* main thread: the batch being built */
  struct px_commit_batch *head, *tail; /* sealed, not yet committed */
  struct px_commit_batch *free; /* done batches kept for reuse */
  void *scratch;                /* several batches' records in one array (under store_lock) */
  size_t scratch_cap;           /* bytes */
  void *scratch_rows;           /* and their accounting rows */
  size_t scratch_rows_cap;
  atomic_bool failed;           /* a commit failed: nothing more is committed */
  atomic_bool stalled;          /* a commit that may yet succeed is being retried */
  atomic_uint stalls;           /* stalls so far (the main thread sees one ended) */
  unsigned stalls_seen;         /* main thread: stalls it has made up for */
  char stall_why[256];          /* the store's error (under lock) */
};

struct px_server {
  struct px_conf *conf;
  struct px_server_opts opts;
  char *owned_socket, *owned_url; /* defaults built from the state dir */
  struct px_store *store;
  struct px_store *rstore;      /* second connection for API reads (usage, accounting) */
  pthread_mutex_t rstore_lock;
  /* The accounts tree and QoS of conf change online (an ACCT event, written
   * by the main thread under the write lock); API threads that read them
   * (the slurmdb listings, coordinator checks) hold the read lock. */
  pthread_rwlock_t acct_lock;
  struct px_core *core;
  struct px_auth *auth;
  unsigned char jwt_key[256];   /* HS256 key (jwt.key in the state dir) */
  size_t jwt_key_len;
  struct px_ratelimit *rl;
  struct px_metrics *metrics;
  struct px_sdiag *sdiag;       /* sdiag's statistics (loop/sdiag.c) */
  struct px_outbox *outbox;
  struct px_steps *steps;       /* job steps (loop/steps.c), main thread only; NULL until one */
  struct px_mailer *mailer;     /* MailProg runs in flight (loop/mail.c); NULL until one */
  json_t *usage, *usage_nodes;  /* running jobs' use per node, for sstat (loop/usage.c) */
  struct px_svc_server *svc;    /* services (server/svc/svc_server.h) */
  struct px_ha *ha;             /* high availability (journal/ha.c); NULL without --ha */
  struct px_queue queue;
  struct px_snapbox snaps;
  struct MHD_Daemon *unix_d, *tcp_d;
  atomic_bool stop;
  int64_t start_mono_ns;

  /* job table: sorted by id (ids only grow, so appends keep it sorted) */
  struct px_smap node_names;    /* name -> conf index, immutable after start */
  struct px_sjob **jobs;
  size_t njobs, jobs_cap;
  struct px_map index;          /* job id -> position in jobs */
  uint64_t next_job_id;
  uint64_t seq;                 /* last journal seq assigned */
  _Atomic uint64_t committed_seq; /* last seq durable (read by API threads) */
  atomic_int snap_waiters;      /* readers waiting for a snapshot to catch up */
  atomic_int snap_watchers;     /* long-polls waiting for changes (publish promptly) */

  struct px_snode *nodes;       /* conf->nnodes */
  char self_user[64];           /* the user the server runs as: who its own drains are by (Slurm's SlurmUser) */

  struct px_committer commit;   /* group commit (commit.c) */
  struct px_actions acts;
  struct px_u64vec acct_pending; /* jobs whose accounting row is due */
  struct px_u64vec follow;      /* jobs an event changed since the last cycle (loop.c follow_cycle) */
  int64_t follow_all_ns;        /* when every pending job was last read from the core */
  struct px_u64vec arch_wait;   /* finished jobs the next checkpoint archives (archive.c) */
  int64_t arch_first_s;         /* when the oldest of them ended */
  struct px_sjob **arch;        /* recovery: archived jobs, by id, until merged */
  size_t narch, arch_cap;
  struct px_arch_run *arch_runs; /* recovery: their earlier attempts, by id, until charged (archive_usage.c) */
  size_t narch_runs, arch_runs_cap;

  bool need_cycle, dirty, nodes_dirty;
  size_t gather_target;         /* requests a group commit gathers (loop.c) */
  uint64_t cycles;              /* scheduling cycles run */
  int64_t cycle_cpu_ns;         /* main-thread CPU spent in them */
  int64_t last_cycle_ns, last_publish_ns, last_view_refresh_ns;
  int64_t no_room_until_ns;     /* a due cycle that could start nothing waits till then (loop.c) */
  int64_t cycle_cost_ns, publish_cost_ns; /* last durations: the cadence adapts */
  struct px_blob *state_metrics;          /* rebuilt at most once a second */
  int64_t state_metrics_ns;
  int64_t publish_start_ns;               /* when the last publish began (loop.c metrics_stale) */
  struct px_blob *nodes_blob, *parts_blob; /* reused while no node changed (publish.c) */
  struct px_pub_nodes *pub_nodes;         /* each node's text, kept (pub_nodes.c) */
  struct px_blob *shares_blob;            /* rebuilt at most once a second */
  int64_t shares_ns;
  bool shares_stale;                      /* a publish reused an older one: refresh at shares_ns + 1 s */
  uint64_t gpu_faults[PX_GPU_FAULT_COUNT]; /* GPU faults by class since start (/metrics) */
  json_t *resv_created;                   /* reservations made through the API (resv.c) */
  json_t *resv_deleted;                   /* names of configured reservations deleted since */
  struct px_blob *resv_blob;              /* rebuilt when resv_dirty */
  bool resv_dirty;
};

/* After recovery, or a standby's takeover (journal/ha.c): running jobs
 * wait for their agents to confirm them (server.c). */
void px_server_hold_recovered(struct px_server *s, int64_t now);

/* ---- job table (jobs.c) ---- */
/* The record of a whole array (`sbatch --array`), not one of its tasks. */
static inline bool px_sjob_is_array(const struct px_sjob *j) {
  return j->spec.array && !j->array_job_id;
}
/* Does the core know j runs (ends and requeues go to it)? Not a recovered
 * job, except an array task the core holds without resources. */
static inline bool px_sjob_in_core(const struct px_sjob *j) { return !j->recovered || j->skipped; }
/* An array's record after a change of its tasks: PENDING while a task is
 * left to start, RUNNING while one has not ended, then CANCELLED (its
 * remainder was cancelled), FAILED (a task did not complete with 0) or
 * COMPLETED. No accounting row: the tasks have theirs (as Slurm's sacct). */
void px_jobs_array_fold(struct px_server *s, struct px_sjob *a, int64_t now);
/* "5-15%4": the tasks of array a not yet started (malloc'd; "" when none). */
char *px_jobs_array_pending(const struct px_sjob *a);
struct px_sjob *px_jobs_find(struct px_server *s, uint64_t id);

/* A new job with the given id (> every existing id); takes spec. */
struct px_sjob *px_jobs_add(struct px_server *s, uint64_t id, struct px_jobspec *spec);
/* A whole record j into the table, at its id's place; the table takes j on
 * success. PX_EEXIST: its id is there already; PX_ENOMEM. */
int px_jobs_insert(struct px_server *s, struct px_sjob *j);
/* Marks the job's published view stale (after any change). */
void px_jobs_touch(struct px_server *s, struct px_sjob *j);
/* Fills a client view of j (spec without script/env); 0 or PX_ENOMEM. */
int px_jobs_info(struct px_server *s, const struct px_sjob *j, struct px_job_info *out);
/* Takes the priority and its weighted components from a core view. */
void px_jobs_set_prio(struct px_server *s, struct px_sjob *j, const struct px_job_view *v);
/* After a cycle: a pending job takes the reason and priority of the core's
 * view v (its view is rebuilt when they moved; a priority alone only every
 * 30 s unless prio_now). */
void px_jobs_follow(struct px_server *s, struct px_sjob *j, const struct px_job_view *v,
                    int64_t now, bool prio_now);
/* "n[01-02]" style list of a running job's nodes (malloc'd). */
char *px_jobs_nodelist(struct px_server *s, const struct px_sjob *j);
/* The accounting row of j (strings point into j). */
void px_jobs_acct_row(struct px_server *s, const struct px_sjob *j, struct px_acct_row *r,
                      char *nodelist);
/* The row of the attempt a requeue ends, from the running j before the
 * requeue clears its run: ended at end by the record end_seq, in state. */
void px_jobs_attempt_row(struct px_server *s, const struct px_sjob *j, struct px_acct_row *r,
                         char *nodelist, const char *state, int64_t end, uint64_t end_seq);
bool px_job_state_terminal(enum px_job_state st);
/* "RUNNING" -> state; false when unknown. */
bool px_job_state_parse(const char *name, enum px_job_state *out);
void px_jobs_free_all(struct px_server *s);

/* ---- events (events.c): every change of state goes through here ---- */
struct px_event;
struct px_event_result;
/* Live: the core applies ev; when it accepts, the record is added to the
 * journal batch and the tables follow (the answer waits for the commit).
 * 0, or the core's refusal (res->diag says why: nothing changed), or the
 * journal's failure (fatal: logged). */
int px_events_accept(struct px_server *s, struct px_event *ev, int64_t now,
                     struct px_event_result *res);
/* Recovery: the same without the journal (the record is already in it). */
int px_events_apply(struct px_server *s, struct px_event *ev, int64_t now,
                    struct px_event_result *res);
/* The two halves of px_events_accept, for a batch of submits that the core
 * takes all or none (handle.c): the core's part (with what the record keeps
 * of its decisions) and the journal and tables' part. */
int px_events_core(struct px_server *s, struct px_event *ev, int64_t now,
                   struct px_event_result *res);
int px_events_record(struct px_server *s, struct px_event *ev,
                     const struct px_event_result *res, int64_t now);
/* An event the core applied itself (a cycle's START or REJECT): journaled
 * (px_events_journal), then the tables follow (px_events_fold, which takes
 * a SUBMIT's spec and sets the job's mseq to the last seq). */
int px_events_journal(struct px_server *s, const struct px_event *ev,
                      const struct px_event_result *res, int64_t now);
int px_events_fold(struct px_server *s, const struct px_event *ev,
                   const struct px_event_result *res, int64_t now);
/* Live only: queues the accounting row of a job that ended without running. */
int px_events_account_unstarted(struct px_server *s, const struct px_event *ev);

#endif
