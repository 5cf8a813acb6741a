/*
 * server.h - what every group of the server shares (server/ only), below
 * all of them: the requests HTTP threads queue to the main thread, the
 * snapshots they read, the metrics, the answers' error encoding, and the
 * server object's options and life. It includes none of the groups'
 * headers (state.h draws the map of them).
 *
 * Threads and ownership. The main thread (loop.c) owns everything mutable:
 * the scheduling core, the job table (jobs.c), the node table, the store.
 * HTTP threads (http.c, one per connection, libmicrohttpd) never touch it:
 *   - a change (submit, cancel, drain, agent report ...) becomes a struct
 *     px_req queued to the main thread (queue.c); the thread sleeps on the
 *     request's semaphore until the change is journaled (group commit) and
 *     the answer written; the main thread may wake one request of a group
 *     first to run the group's commit itself (commit.c), touching only the
 *     store;
 *   - a read (list jobs, nodes, metrics, watch) uses the snapshot the main
 *     thread publishes after each cycle (snap.c): an immutable, refcounted
 *     object swapped under a mutex held only for the pointer swap, so readers
 *     never block scheduling and scheduling never waits for readers.
 *   - agents' order queues (nodes/outbox.c) are the one other shared
 *     structure, under their own mutex, written by the main thread after
 *     journaling.
 */
#ifndef PX_SERVER_SERVER_H
#define PX_SERVER_SERVER_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "conf/conf.h"
#include "core/jobspec.h"
#include "proto/agent_msg.h"
#include "proto/gpu_msg.h"
#include "proto/views.h"
#include "server/auth/auth.h"
#include "util/error.h"

/* ---- requests to the main thread (queue.c) ---- */

enum px_req_kind {
  PX_REQ_SUBMIT,
  PX_REQ_CANCEL,
  PX_REQ_HOLD,
  PX_REQ_RELEASE,
  PX_REQ_UPDATE,
  PX_REQ_JOB_SHOW,
  PX_REQ_JOB_STAT,             /* sstat: the running job's use (loop/usage.c) */
  PX_REQ_NODE_DRAIN,
  PX_REQ_NODE_RESUME,
  PX_REQ_PART_DOWN,            /* r->node names the partition */
  PX_REQ_PART_UP,
  PX_REQ_AGENT_REGISTER,
  PX_REQ_AGENT_REPORT,
  PX_REQ_AGENT_HEARTBEAT,
  PX_REQ_RESV_ADD,
  PX_REQ_RESV_DELETE,           /* r->node names the reservation */
  PX_REQ_ACCT,                  /* r->text: an accounts change (proto/acct_json.c) */
  PX_REQ_STEP_ADD,              /* job steps (api_steps.c) */
  PX_REQ_STEP_SHOW,
  PX_REQ_STEP_LIST,
  PX_REQ_STEP_CANCEL,
  PX_REQ_STEP_END,              /* a step srun ran itself has ended */
  PX_REQ_SVC_APPLY,             /* services (server/svc/): r->text the spec, r->reason a workdir */
  PX_REQ_SVC_SCALE,             /* r->node the service, r->job_id the count */
  PX_REQ_SVC_DELETE,
  PX_REQ_SVC_SHOW,
  PX_REQ_SVC_ENDPOINTS,
  PX_REQ_SVC_LOAD,              /* r->text {"in_flight":N,"requests_per_s":R} */
  PX_REQ_AGENT_GPU,             /* a GPU fault (r->gpu) */
  PX_REQ_GPU_RESUME,            /* r->node's GPU r->gpu.gpu back in service (r->batch: every one) */
  PX_REQ_AGENT_HEALTH,          /* a health check result (r->health) */
  PX_REQ_NODE_REBOOT,           /* r->node, r->batch: ASAP, r->signal: enum px_reboot_next, r->reason */
  PX_REQ_REQUEUE,               /* a running job back to pending (scontrol requeue) */
  PX_REQ_REQUEUE_HOLD,          /* the same, held (scontrol requeuehold) */
};

struct px_req {
  enum px_req_kind kind;
  struct px_ident who;
  uint64_t job_id;
  char node[64];
  char reason[256];
  int32_t signal;
  bool batch;                   /* submit: answer {"job_ids":[...]} */
  bool test_only;               /* submit: a dry run (sbatch --test-only), nothing kept */
  bool full;                    /* show: include script and environment */
  struct px_jobspec *specs;     /* submit: nspecs decoded specs (owned) */
  size_t nspecs;
  unsigned upd_fields;          /* update: PX_UPD_* of core.h */
  int32_t upd_nice;
  int64_t upd_time_limit_s;
  uint32_t upd_priority;
  struct px_node_report report; /* register */
  struct px_task_report task;   /* report */
  char *text;                   /* reservation: its canonical JSON (owned) */
  struct px_task_report *tasks; /* report batch (owned by the API thread), ntasks entries */
  uint32_t ntasks;
  uint32_t step_id;             /* step show/cancel */
  struct px_gpu_fault gpu;      /* GPU fault; GPU resume: gpu.gpu */
  struct px_node_health health; /* health check result */
  /* the answer, written by the main thread */
  int status;                   /* HTTP status */
  char *body;                   /* malloc'd JSON */
  sem_t done;
  bool may_lead;                /* its thread may run a group commit (not a lowered reader) */
  struct px_commit_batch *lead; /* set when woken to lead its batch's commit (commit.c) */
  struct px_req *next;
};

struct px_queue {
  pthread_mutex_t lock;
  pthread_cond_t wake;          /* the main thread waits here */
  struct px_req *head, *tail;
  size_t len;                   /* requests queued */
  bool stopping;
  bool poked;                   /* px_queue_poke since the last take */
};

void px_queue_init(struct px_queue *q);
void px_queue_fini(struct px_queue *q);
/* API thread: queue r and wait for the answer. PX_EAGAIN when stopping. */
int px_queue_call(struct px_queue *q, struct px_req *r);
/* Main thread: take every queued request, waiting until one arrives or
 * deadline (CLOCK_MONOTONIC ns) passes. NULL when none. */
struct px_req *px_queue_take(struct px_queue *q, int64_t deadline_ns);
/* Main thread: appends to reqs (the list a take returned) the requests that
 * arrive until it holds `want` or deadline (CLOCK_MONOTONIC ns) passes. */
struct px_req *px_queue_take_more(struct px_queue *q, struct px_req *reqs, size_t want,
                                  int64_t deadline_ns);
/* Main thread: set r's answer (takes body; NULL body: an empty error). */
void px_req_answer(struct px_req *r, int status, char *body);
/* Main thread, after the journal commit: wake r's thread (r is then gone). */
void px_req_done(struct px_req *r);
/* r's thread, woken to lead: commits every sealed batch (commit.c). */
void px_commit_lead(struct px_req *r);
/* Frees the request's owned payload (specs, report). */
void px_req_fini(struct px_req *r);
void px_queue_stop(struct px_queue *q);
/* Main thread: does a request wait? */
bool px_queue_pending(struct px_queue *q);
/* Wakes the main thread without a request (a reader waits for a snapshot). */
void px_queue_poke(struct px_queue *q);

/* ---- immutable snapshots (snap.c) ---- */

/* One job as readers see it; immutable once published, refcounted. */
struct px_jview {
  atomic_int refs;
  uint64_t mseq;                /* journal seq of its last change */
  struct px_job_info info;      /* spec without script and env */
  _Atomic(char *) json;         /* encoded lazily by the first reader */
};

struct px_jview *px_jview_new(const struct px_job_info *info, uint64_t mseq);
void px_jview_ref(struct px_jview *v);
void px_jview_unref(struct px_jview *v);
/* The view's JSON text (cached). NULL on ENOMEM. */
const char *px_jview_json(struct px_jview *v);

/* A refcounted text blob shared by snapshots while it does not change. */
struct px_blob {
  atomic_int refs;
  size_t len;
  char text[];
};
struct px_blob *px_blob_new(const char *text);
/* A blob of len bytes to fill (text[len] is set to '\0'), refs 1. */
struct px_blob *px_blob_alloc(size_t len);
void px_blob_ref(struct px_blob *b);
void px_blob_unref(struct px_blob *b);

/* Gauges the main thread computes for /metrics at publish time. */
struct px_gauges {
  char *text;                   /* Prometheus lines of the cluster state (malloc'd) */
};

struct px_snap {
  atomic_int refs;
  uint64_t seq;                 /* journal seq this snapshot reflects */
  int64_t time;
  struct px_jview **jobs;       /* sorted by job id */
  size_t njobs;
  struct px_blob *nodes, *partitions, *shares, *state_metrics; /* JSON / Prometheus text */
  struct px_blob *reservations; /* {"reservations":[...]}: configured and created */
};

struct px_snap_parked;

struct px_snapbox {
  pthread_mutex_t lock;         /* held only to swap or take a reference */
  pthread_cond_t changed;       /* watchers wait for a newer seq */
  struct px_snap *cur;
  bool stopping;
  struct px_snap_parked *parked; /* watches waiting without a thread (px_snap_park) */
  pthread_t warmer;             /* pre-encodes views (snap.c) */
  bool warmer_started;
};

void px_snapbox_init(struct px_snapbox *b);
void px_snapbox_fini(struct px_snapbox *b);
/* Wakes every watcher for good (shutdown). */
void px_snapbox_stop(struct px_snapbox *b);
/* The thread that encodes each new snapshot's views ahead of readers. */
int px_snapbox_start_warmer(struct px_snapbox *b);
void px_snapbox_join_warmer(struct px_snapbox *b); /* after px_snapbox_stop */
int64_t px_snap_far_future_ns(void);
/* Main thread: publish s (the box takes the caller's reference). */
void px_snapbox_publish(struct px_snapbox *b, struct px_snap *s);
/* Readers: a reference to the current snapshot (never NULL after the first publish). */
struct px_snap *px_snap_acquire(struct px_snapbox *b);
/* Waits until a snapshot with seq > after is published or deadline (realtime
 * ns) passes; returns a reference to the current one either way. */
struct px_snap *px_snap_wait(struct px_snapbox *b, uint64_t after, int64_t deadline_ns);
void px_snap_release(struct px_snap *s);
/* The same wait without a thread, for an event-driven listener: true when a
 * snapshot with seq > after is there already (or the box stops); otherwise
 * wake(ctx) runs once, under the box's lock, when one is published, at
 * shutdown, or from px_snap_expire once deadline (realtime ns) has passed. */
bool px_snap_park(struct px_snapbox *b, uint64_t after, int64_t deadline_ns,
                  void (*wake)(void *ctx), void *ctx);
void px_snap_expire(struct px_snapbox *b, int64_t now_ns);
/* Index of the first job with id >= id (binary search). */
size_t px_snap_lower_bound(const struct px_snap *s, uint64_t id);

/* ---- sdiag's statistics (loop/sdiag.c) ---- */

struct px_sdiag;
struct px_sdiag *px_sdiag_new(int64_t now);
void px_sdiag_free(struct px_sdiag *g);
struct px_sdiag_cycle {
  int64_t now;                  /* Unix s */
  uint64_t us;                  /* its duration */
  uint64_t depth;               /* pending jobs it considered */
  uint64_t queue_len;           /* pending jobs at its start */
  uint64_t backfilled_total;    /* jobs the core started out of priority order so far */
  bool backfill;                /* the backfill stage ran (sched/backfill) */
};
/* Main thread: one scheduling cycle. */
void px_sdiag_cycle(struct px_sdiag *g, const struct px_sdiag_cycle *c);
/* API threads: one request of method on endpoint (a route pattern) by user. */
void px_sdiag_rpc(struct px_sdiag *g, const char *method, const char *endpoint, const char *user,
                  uint32_t uid, double seconds);
void px_sdiag_reset(struct px_sdiag *g, int64_t now);
/* A job event just journaled (live, loop/events.c). */
enum px_sdiag_jobs { PX_SDIAG_SUBMITTED, PX_SDIAG_STARTED, PX_SDIAG_COMPLETED, PX_SDIAG_CANCELLED, PX_SDIAG_FAILED,
                     PX_SDIAG_JOBS };
void px_sdiag_job(struct px_sdiag *g, enum px_sdiag_jobs what);
/* A copy: {"time","since","main":{...},"backfill":{...},"backfill_jobs":{...},
 * "rpcs_by_type":[...],"rpcs_by_user":[...]}. Request types are named as
 * Slurm's RPCs where one does the same ("type", "type_id"), else
 * "METHOD /pattern" with type_id 0. */
json_t *px_sdiag_json(struct px_sdiag *g, int64_t now);

/* ---- metrics (metrics.c) ---- */

struct px_metrics;
struct px_metrics *px_metrics_new(void);
void px_metrics_free(struct px_metrics *m);
/* API threads: one request of endpoint (a route pattern) answered with status. */
void px_metrics_request(struct px_metrics *m, const char *endpoint, int status, double seconds);
/* Main thread (commits: also a request thread leading one). */
void px_metrics_cycle(struct px_metrics *m, double seconds);
void px_metrics_commit(struct px_metrics *m, double seconds);
void px_metrics_queue_wait(struct px_metrics *m, double seconds);
/* The whole exposition: the counters above plus the snapshot's state text. */
char *px_metrics_render(struct px_metrics *m, const char *state_text);

/* ---- answers (declared for every group; defined in http/http.c) ---- */

/* Errors as JSON (http.c): {"error":{"code","message","field"}} malloc'd. */
char *px_error_json(const char *code, const char *message, const char *field);
/* From a proto/ diagnostic: the field is the part before ": ". */
char *px_error_diag(const char *code, const struct px_diag *d);
/* Answer r with an error. */
void px_req_error(struct px_req *r, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Stable error code of a PX_E* ("INVALID", "NOT_FOUND", ...). */
const char *px_error_code(int err);
/* Its HTTP status, from the same table (http.c). */
int px_error_http_status(int err);

/* Reads (creating it when asked) the HS256 key <state_dir>/jwt.key. */
int px_server_jwt_key(const char *state_dir, bool create, unsigned char *key, size_t *len);

/* Clocks (loop.c). */
int64_t px_now_mono_ns(void);
int64_t px_now_real_ns(void);

/* ---- the server object ---- */

struct px_server_opts {
  const char *config_path;
  const char *state_dir;
  const char *store_url;        /* default sqlite:<state_dir>/state.db */
  const char *listen;           /* host:port or NULL (no TCP) */
  const char *socket_path;      /* NULL: <state_dir>/phalanx.sock */
  const char *munge_socket;     /* NULL: libmunge's default */
  double rate_per_s, rate_burst;/* per-user API limits; rate 0 = none */
  size_t max_body_bytes;
  int64_t node_timeout_s;       /* SlurmdTimeout */
  size_t checkpoint_jobs;       /* finished jobs per checkpoint (archive.c); 0: 1000 */
  /* High availability (journal/ha.c, PostgreSQL store only). */
  bool ha;                      /* --ha: lead only while holding the lease, else stand by */
  const char *ha_name;          /* this controller's name (default host:port or hostname) */
  const char *ha_addr;          /* the URL clients reach it at (default http://<listen>) */
  int64_t lease_ms;             /* the lease's length (default PX_HA_LEASE_MS) */
};

#define PX_HA_LEASE_MS 3000
/* Exit status of a controller that lost its lease: its supervisor starts
 * it again, as a standby with a fresh state (docs/operations.md). */
#define PX_HA_EXIT_DEPOSED 75

struct px_server;

int px_server_new(struct px_conf *conf, const struct px_server_opts *o, struct px_server **out,
                  struct px_diag *d);
/* Runs until px_server_stop (or SIGTERM/SIGINT through the command). */
int px_server_run(struct px_server *s);
void px_server_stop(struct px_server *s);
void px_server_free(struct px_server *s);

/* Defaults. */
#define PX_SERVER_MAX_BODY (8u << 20)
#define PX_SERVER_WATCH_MAX_S 30
#define PX_SERVER_POLL_MAX_S 20
#define PX_MIN_JOB_AGE_S 300 /* ended jobs stay in default listings this long */

#endif
