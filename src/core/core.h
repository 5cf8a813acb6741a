/*
 * core.h - the scheduling core: a pure, deterministic engine shared unchanged
 * by the server and the simulator. Events in, actions out; no I/O, no
 * threads, no clock: `now` (Unix seconds) is an argument of every call.
 *
 * Design. px_core_new() copies what it needs from a struct px_conf (nodes,
 * GPU types and NVLink groups, features, partitions, the switch tree or
 * blocks, the account tree, QoS, the sched weights) into dense arrays; the
 * conf may be freed afterwards. Events (submit, cancel, hold, release,
 * update, job started/ended/requeued, node and partition state,
 * reservations: core/event.h) are applied one at a time by px_core_apply,
 * the one entry point for changes of state; each returns 0 or a negative
 * PX_E* code with a struct px_diag naming the field, and changes nothing on
 * error. px_core_cycle() then runs the stages in order
 *
 *   order   (priority: multifactor with Fair Tree, FIFO, LAS; stage.h)
 *   admit   (limits: account GrpTRES/GrpJobs/MaxJobs, QoS per-user, partition)
 *   place   (gang placement: feasibility, then topology and packing scores)
 *   reserve (hook: what a blocked job does to the jobs behind it; the default
 *            blocks its partition as Slurm's builtin scheduler does; backfill
 *            replaces it -- issue 4)
 *   victims (hook: preemption -- issue 4; none by default)
 *
 * and appends START/REJECT (later PREEMPT/SIGNAL) actions to a caller-owned
 * buffer. Every pending job gets a Slurm reason name and a `why` text.
 * Placement never scans nodes x jobs: per partition and GPU type a bucket
 * index by free GPU count finds single-node fits, per leaf switch histograms
 * bound gang searches, and a per-cycle cache of failed shapes stops a full
 * cluster from being probed again by every identical job (docs/performance.md).
 *
 * Identity. The caller assigns job ids (the server from its journal, the
 * simulator from its trace). A submit consumes px_core_ids_needed() ids (the
 * result of PX_EV_SUBMIT says how many)
 * starting at the given one: 1 for a plain job, 1 + ntasks for an array,
 * whose pending record keeps job_id J and whose task at position k (0-based,
 * in task-id order) starts as job id J + 1 + k with array_job_id J. Once
 * every task has started the record is no longer listed by
 * px_core_job_next (px_core_job_get still finds it); once every task has
 * ended, J counts as ended for dependencies (COMPLETED if all succeeded).
 *
 * Ownership. Views returned by queries point into the core and are valid
 * until the next call that changes the core (any event or cycle) or the next
 * query of the same kind (the `why` text is formatted into one buffer).
 * Memory: every internal allocation goes through the allocator given to
 * px_core_new_with_alloc (default: libc), so tests can fail allocations; an
 * event that cannot allocate returns PX_ENOMEM and changes nothing.
 */
#ifndef PX_CORE_CORE_H
#define PX_CORE_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"
#include "core/jobspec.h"
#include "util/bitmap.h"
#include "util/error.h"

struct px_core;

/* Slurm's pending/reject reason names (squeue %r), one table. */
#define PX_REASON_MAP(X)                                                 \
  X(NONE, "None")                                                        \
  X(PRIORITY, "Priority")                                                \
  X(RESOURCES, "Resources")                                              \
  X(DEPENDENCY, "Dependency")                                            \
  X(DEP_NEVER, "DependencyNeverSatisfied")                               \
  X(BEGIN_TIME, "BeginTime")                                             \
  X(HELD_USER, "JobHeldUser")                                            \
  X(HELD_ADMIN, "JobHeldAdmin")                                          \
  X(ASSOC_GRP_GRES, "AssocGrpGRES")                                      \
  X(ASSOC_GRP_CPU, "AssocGrpCpuLimit")                                   \
  X(ASSOC_GRP_MEM, "AssocGrpMemLimit")                                   \
  X(ASSOC_GRP_NODE, "AssocGrpNodeLimit")                                 \
  X(ASSOC_GRP_JOBS, "AssocGrpJobsLimit")                                 \
  X(ASSOC_MAX_JOBS, "AssocMaxJobsLimit")                                 \
  X(QOS_MAX_GRES_PER_USER, "QOSMaxGRESPerUser")                          \
  X(QOS_MAX_JOBS_PER_USER, "QOSMaxJobsPerUserLimit")                     \
  X(REQ_NODE_NOT_AVAIL, "ReqNodeNotAvail")                               \
  X(PARTITION_DOWN, "PartitionDown")                                     \
  X(PARTITION_TIME_LIMIT, "PartitionTimeLimit")                          \
  X(PARTITION_NODE_LIMIT, "PartitionNodeLimit")                          \
  X(ARRAY_TASK_LIMIT, "JobArrayTaskLimit")                               \
  X(TOPOLOGY, "Resources")       /* waiting for --switches (Slurm shows Resources) */ \
  X(INVALID_ACCOUNT, "InvalidAccount")                                   \
  X(INVALID_QOS, "InvalidQOS")                                           \
  X(ACCOUNT_NOT_ALLOWED, "AccountNotAllowed")                            \
  X(QOS_NOT_ALLOWED, "QOSNotAllowed")                                    \
  X(BAD_CONSTRAINTS, "BadConstraints")                                   \
  X(ASSOC_MAX_SUBMIT, "AssocMaxSubmitJobLimit")                          \
  X(QOS_MAX_SUBMIT, "QOSMaxSubmitJobPerUserLimit")                       \
  X(QOS_MAX_WALL, "QOSMaxWallDurationPerJobLimit")                       \
  X(ASSOC_MAX_GRES_PER_JOB, "AssocMaxGRESPerJob")                       \
  /* issue 4: quotas, reservations, preemption */                      \
  X(QUOTA_BORROW_LIMIT, "QuotaBorrowLimit")  /* over guarantee + BorrowingLimit */ \
  X(QUOTA_COHORT, "QuotaCohortExhausted")    /* no lendable idle quota left in the cohort */ \
  X(RESV_MAINT, "ReqNodeNotAvail, Reserved for maintenance")            \
  X(RESV_ACCOUNT, "ReqNodeNotAvail, Reserved for other account")        \
  X(PREEMPTING, "WaitingForPreemption")      /* victims are being stopped for it */ \
  X(RESERVATION, "Reservation")              /* --reservation: its window is not open */

enum px_reason {
#define PX_REASON_ENUM(name, str) PX_REASON_##name,
  PX_REASON_MAP(PX_REASON_ENUM)
#undef PX_REASON_ENUM
  PX_REASON_COUNT
};
const char *px_reason_name(enum px_reason r);

enum px_job_state {
  PX_JOB_PENDING,
  PX_JOB_RUNNING,
  /* terminal states, as given to PX_EV_END (the core forgets the job) */
  PX_JOB_COMPLETED,
  PX_JOB_FAILED,
  PX_JOB_CANCELLED,
  PX_JOB_TIMEOUT,
  PX_JOB_OUT_OF_MEMORY,
  PX_JOB_NODE_FAIL,
  PX_JOB_PREEMPTED,
};
const char *px_job_state_name(enum px_job_state s); /* "PENDING", ... */

/* ---- life cycle ---------------------------------------------------------- */

/* Lua-style allocator: realloc(ud, p, old_size, new_size); new_size 0 frees
 * and returns NULL. Must return NULL (leaving p intact) on failure. */
struct px_core_allocator {
  void *(*realloc)(void *ud, void *p, size_t old_size, size_t new_size);
  void *ud;
};

/* NULL with *err = PX_EINVAL (conf inconsistent, diag-less) or PX_ENOMEM. */
struct px_core *px_core_new(const struct px_conf *conf, uint64_t seed, int *err);
struct px_core *px_core_new_with_alloc(const struct px_conf *conf, uint64_t seed,
                                       const struct px_core_allocator *alloc, int *err);
void px_core_free(struct px_core *c); /* NULL is a no-op */

/* ---- events ---------------------------------------------------------------
 * Every change of state is a struct px_event given to px_core_apply()
 * (core/event.h); the types below are fields of events. */

/* Job ids a submit of spec consumes (1, or 1 + array task count), or PX_EINVAL
 * / PX_ERANGE when the array expression is bad (diag names "array"). */
int64_t px_core_ids_needed(const struct px_jobspec *spec, struct px_diag *diag);

enum px_node_event {
  PX_NODE_EV_UP,     /* responding again: clears DOWN (not DRAIN) */
  PX_NODE_EV_DOWN,   /* not responding / failed; running jobs are the caller's to end */
  PX_NODE_EV_DRAIN,  /* admin: no new jobs; running ones finish */
  PX_NODE_EV_RESUME, /* admin: clears DRAIN and DOWN */
};

enum {
  PX_UPD_NICE = 1 << 0,
  PX_UPD_TIME_LIMIT = 1 << 1,
  PX_UPD_PRIORITY = 1 << 2, /* admin-set priority; 0 returns to the formula */
};
struct px_job_update {
  unsigned fields; /* PX_UPD_* */
  int32_t nice;
  int64_t time_limit_s;
  uint32_t priority;
};

/* ---- advance reservations (issue 4, resv.c) ------------------------------ */

/*
 * Reserves nodes (or a GPU count of a partition, taken as whole nodes from
 * the partition's end) for [start_s, end_s), for one account (its jobs may
 * use them, nobody else's) or for maintenance (nobody; account PX_NONE).
 * No other job whose time limit crosses into the window starts on those
 * nodes; backfill plans around the window. Names are unique (PX_EEXIST).
 */
struct px_resv_spec {
  const char *name;
  int64_t start_s, end_s;
  const uint32_t *nodes;   /* conf node indexes, or NULL with ngpus */
  uint32_t nnodes;
  uint32_t partition;      /* with ngpus */
  uint32_t ngpus;
  uint32_t account;        /* conf account index, or PX_NONE */
  bool maintenance;
};

/* ---- the cycle ------------------------------------------------------------ */

/* One node of a placement. CPU ids are bits of out->cpu_words[cpu_word ..
 * cpu_word + ncpu_words) (bit i = CPU i of the node). */
struct px_alloc {
  uint32_t node;        /* conf node index */
  uint32_t ncpu;
  px_bits64 gpus;       /* GPU indices on the node */
  uint64_t mem_mib;
  uint32_t cpu_word, ncpu_words;
  uint32_t gpu_share;   /* a fractional job (docs/gpus.md): hundredths of the one GPU in gpus; 0: whole GPUs */
};

enum px_action_kind {
  PX_ACT_START,   /* start job_id on allocs[alloc_first, +nalloc) */
  PX_ACT_REJECT,  /* drop job_id: it can never run (reason); not emitted yet:
                     submit rejects, and a job that can no longer run keeps
                     its pending reason, as in Slurm */
  PX_ACT_PREEMPT, /* issue 4: stop job_id for preemptor_job_id */
  PX_ACT_SIGNAL,  /* issue 4: send signal to job_id */
};

/* Why a job is preempted (issue 4). */
enum px_preempt_cause {
  PX_PREEMPT_BY_QOS,       /* the preemptor's QoS lists the victim's */
  PX_PREEMPT_BY_TIER,      /* partition PriorityTier */
  PX_PREEMPT_BY_RECLAIM,   /* quota reclaim: the victim's account borrows the preemptor's guarantee */
  PX_PREEMPT_BY_LAS,       /* PriorityOrder=las: the victim sits in a lower attained-service queue */
};
const char *px_preempt_cause_name(enum px_preempt_cause c); /* "qos", "tier", "reclaim", "las" */

struct px_action {
  enum px_action_kind kind;
  enum px_reason reason;
  uint64_t job_id;
  uint64_t array_job_id;   /* 0 unless an array task */
  uint32_t array_task_id;  /* PX_NONE unless an array task */
  uint32_t alloc_first, nalloc;
  int64_t time_limit_s;    /* START: the limit the job runs under */
  uint64_t preemptor_job_id;
  int32_t signal;
  /* issue 4. SIGNAL: deliver `signal` now (preemption grace, or --signal
   * before the time limit: preemptor_job_id 0); kill_at_s is when the PREEMPT
   * follows (0: none, a time-limit warning). PREEMPT: stop job_id now; with
   * preempt_mode PX_PREEMPT_REQUEUE report PX_EV_REQUEUE, with
   * PX_PREEMPT_CANCEL PX_EV_END(PREEMPTED). */
  enum px_preempt_mode preempt_mode;
  enum px_preempt_cause preempt_cause;
  int64_t kill_at_s;
  double gpu_hours_lost;   /* GPUs x run time so far, as of the decision */
  /* START: the job started while a higher-priority job of its partition,
   * tried earlier in this cycle, could not (the backfill stage let it pass) */
  bool backfilled;
  /* START: at some cycle while pending, the job found no placement although
   * its partition had as many free GPUs as it asks (fragmentation, gang or
   * switch shape): it waited for topology, not for capacity */
  bool waited_topology;
};

/* Caller-owned; the core appends (growing it with libc realloc). */
struct px_actions {
  struct px_action *v;
  size_t len, cap;
  struct px_alloc *allocs;
  size_t nallocs, allocs_cap;
  uint64_t *cpu_words;
  size_t ncpu_words, cpu_words_cap;
};
void px_actions_init(struct px_actions *a);
void px_actions_clear(struct px_actions *a);
void px_actions_fini(struct px_actions *a);

/*
 * Runs order -> admit -> place (-> reserve, victims) at time now and appends
 * actions to out (cleared first). Jobs started are RUNNING in the core when it
 * returns. Work budget: at most conf-independent PX_CORE_CYCLE_MAX_STARTS
 * starts per cycle; the rest wait for the next cycle (reason Priority). On
 * PX_ENOMEM, out holds the actions committed so far: apply them.
 */
#define PX_CORE_CYCLE_MAX_STARTS 100000
int px_core_cycle(struct px_core *c, int64_t now, struct px_actions *out);

/*
 * Lazy reasons, for callers that only consume actions (the simulator). A
 * cycle normally visits every pending job to refresh its reason and backfill
 * estimate. With interval_s > 0, a cycle that finds no usable free GPU left
 * while every remaining eligible job needs one (so none could start) stops
 * there: the jobs not yet visited keep the reason and estimate of their last
 * visit. Starts are exactly those of a full cycle; at least every interval_s
 * seconds a cycle is full. 0 (the default, the server's): every cycle full.
 */
void px_core_set_lazy_reasons(struct px_core *c, int64_t interval_s);

/*
 * With SchedulerParameters bf_interval, a cycle sooner than bf_interval
 * seconds after the last backfill pass is a main pass (no backfill). When a
 * main pass since the last backfill pass left a job waiting, the next
 * backfill pass is owed at the time returned (core time); 0 when none is
 * owed. A caller that cycles only on events (the simulator) cycles then too;
 * the server's periodic cycle covers it.
 */
int64_t px_core_next_pass_s(const struct px_core *c);

/* ---- queries -------------------------------------------------------------- */

struct px_prio_factors {
  double age, fairshare, jobsize, partition, qos, tres; /* each in [0,1] */
  /* each factor times its PriorityWeight* (sprio's columns) */
  double w_age, w_fairshare, w_jobsize, w_partition, w_qos, w_tres;
  int64_t nice;
  uint32_t priority;  /* the result: sum of weight x factor - nice, clamped to [1, 2^32-1]; 0 held */
  bool admin_set;     /* priority set by PX_EV_UPDATE */
};

struct px_job_view {
  uint64_t job_id;
  uint64_t array_job_id;       /* the array's id for tasks and array records, else 0 */
  uint32_t array_task_id;      /* PX_NONE for non-tasks and array records */
  uint32_t array_tasks_pending;/* array record: tasks not yet started */
  uint32_t array_max_running;  /* the %N, 0 = none */
  enum px_job_state state;
  enum px_reason reason;
  const char *why;             /* long explanation; valid until the next query */
  const char *user;
  uint32_t assoc;              /* conf account index of the user association */
  uint32_t account;            /* its parent account */
  uint32_t partition, qos;
  bool held_user, held_admin;
  struct px_prio_factors prio;
  int64_t submit_s, eligible_s, begin_s, start_s, time_limit_s;
  int64_t expected_start_s;    /* 0 = unknown (backfill fills it, issue 4) */
  uint32_t nnodes, ncpus, ngpus; /* requested while pending, allocated when running */
  uint32_t gpu_share;          /* a fractional job: hundredths of one GPU (ngpus is then 1); 0: none */
  uint64_t mem_mib;
  const struct px_alloc *alloc; /* running: nalloc nodes; CPU bits in cpu_words */
  uint32_t nalloc;
  const uint64_t *cpu_words;
  uint32_t restarts;
};

size_t px_core_njobs(const struct px_core *c);
/* Iterates live jobs (pending records, running jobs) in an order fixed by the
 * event history; *cursor starts at 0. false at the end. */
bool px_core_job_next(struct px_core *c, size_t *cursor, struct px_job_view *out);
int px_core_job_get(struct px_core *c, uint64_t job_id, struct px_job_view *out);
/* sbatch --test-only's start estimate for pending job job_id, read only
 * (estimate.c): now when the next cycle would start it, else the earliest
 * time it fits as running jobs end at their limits after the eligible
 * pending jobs ahead of it in the queue took their earliest fits (a private
 * copy of the backfill plan); 0 when it fits nowhere in the plan's window.
 * nodes: where (conf indexes, at most max; *nnodes of them). PX_ENOENT: no
 * such pending job (an array record is not placed whole). */
int px_core_job_estimate(struct px_core *c, uint64_t job_id, int64_t now, int64_t *start_s, uint32_t *nodes,
                         uint32_t max, uint32_t *nnodes);

enum px_node_avail { PX_NODE_UP, PX_NODE_DOWN, PX_NODE_DRAIN };
struct px_node_view {
  uint32_t node;
  enum px_node_avail avail;   /* DRAIN with njobs > 0 is Slurm's DRAINING */
  const char *reason;         /* NULL when none */
  uint32_t cpus, cpus_alloc, gpus, gpus_alloc;
  px_bits64 gpus_free;
  px_bits64 gpus_bad;         /* out of service after a fault (PX_EV_GPU); not counted as allocated */
  px_bits64 gpus_shared;      /* carrying fractional jobs (docs/gpus.md): allocated, not free */
  uint32_t gpu_share_used;    /* hundredths in use over gpus_shared */
  bool gpu_shares;            /* offers GPU shares (GpuShares=) */
  uint64_t mem_mib, mem_alloc_mib;
  uint32_t njobs;
  uint32_t tenant;            /* exclusive_account partitions: the account on it, or PX_NONE */
};
uint32_t px_core_nnodes(const struct px_core *c);
int px_core_node_get(const struct px_core *c, uint32_t node, struct px_node_view *out);
uint32_t px_core_node_index(const struct px_core *c, const char *name); /* PX_NONE if unknown */

/* sshare -l rows as of the last cycle, depth first (users before sub-accounts). */
struct px_share_view {
  uint32_t assoc;             /* conf account index */
  uint32_t parent;            /* PX_NONE for root */
  uint32_t depth;
  bool is_user;
  bool shares_parent;         /* FairShare=parent */
  uint32_t raw_shares;
  double norm_shares;         /* within the level (Fair Tree) */
  double raw_usage;           /* decayed billable TRES-seconds, subtree */
  double norm_usage;          /* raw / root raw */
  double effective_usage;     /* raw / fair-share parent raw */
  double level_fs;            /* INFINITY with no usage; NAN for FairShare=parent */
  double fairshare;           /* users: rank/N; NAN for accounts */
};
size_t px_core_nshares(const struct px_core *c);
int px_core_share_get(const struct px_core *c, size_t row, struct px_share_view *out);

/* Preemptions decided so far, oldest first (issue 4): the accounting rows
 * (victim, preemptor, cause, GPU-hours lost) the server stores for the usage
 * report. *cursor starts at 0; the core keeps the last PX_CORE_PREEMPT_LOG. */
#define PX_CORE_PREEMPT_LOG 4096
struct px_preempt_record {
  uint64_t victim_job_id, preemptor_job_id;
  uint32_t victim_account, preemptor_account; /* conf account indexes */
  enum px_preempt_cause cause;
  enum px_preempt_mode mode;
  int64_t time_s;
  double gpu_hours_lost;
};
bool px_core_preempt_next(const struct px_core *c, size_t *cursor, struct px_preempt_record *out);

struct px_core_stats {
  uint64_t cycles, started, place_attempts, place_fast_fail, shape_cache_hits;
  uint64_t backfilled;        /* START actions with backfilled set */
  uint64_t lazy_stops;        /* cycles cut short by px_core_set_lazy_reasons */
  uint64_t las_promotions;    /* LasStarveLimit: pending jobs promoted to LAS queue 0 */
  size_t bytes_in_use;        /* through the core's allocator */
  size_t pending_records;
};
void px_core_stats(const struct px_core *c, struct px_core_stats *out);

bool px_core_partition_up(const struct px_core *c, uint32_t part);

/* False when no cycle could start anything now: no up, undrained node has a
 * free CPU and no preemption stage could make room (room.c). */
bool px_core_has_room(const struct px_core *c);

/* Could a cycle preempt now: a preemption stage whose configuration lets
 * some job preempt another (a QoS that preempts one not preempting it
 * back, partition tiers, LAS, quotas), or victims or preemptors still
 * pending (preempt.c). False: no cycle starts a job without free GPUs. */
bool px_core_may_preempt(const struct px_core *c);

#endif
