/*
 * core_int.h - the core's private state, shared by its .c files (never
 * included outside src/core/ and tests/unit/core/).
 *
 * Everything is dense arrays indexed by small integers: nodes and accounts by
 * their conf index, strings by an intern id, jobs by a slot in one slab. The
 * free-capacity index is per pool (a partition restricted to one GPU type):
 * one bitmap per free-GPU count k over the pool's nodes (ordered by Weight
 * then index) answers "first node with exactly k free GPUs" in a few word
 * operations, and per-leaf histograms of free GPU counts bound gang searches
 * without touching nodes (docs/performance.md).
 */
#ifndef PX_CORE_CORE_INT_H
#define PX_CORE_CORE_INT_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "core/stage.h"

/* ---- event handlers: px_core_apply (apply.c) dispatches to these; the
 * core's tests call them directly. Each returns 0 or PX_E*, filling diag;
 * nothing changes on error. */
/*
 * Validates and queues a job. Rejects (PX_EINVAL, PX_ENOENT, PX_EPERM,
 * PX_ELIMIT) what can never run, with *reject set to the reason (may be NULL)
 * and diag naming the field: unknown partition/account/QoS, account or QoS not
 * allowed in the partition, time over MaxTime/MaxWall, more nodes than
 * MaxNodes, a shape no node set of the partition can ever hold (GPUs, type,
 * CPUs, memory, features), submit limits, bad dependency/array syntax, an id
 * already in use. The core keeps only scheduling fields (launch fields are
 * the caller's).
 */
int pxc_submit(struct px_core *c, uint64_t job_id, const struct px_jobspec *spec, int64_t now,
               enum px_reason *reject, struct px_diag *diag);

/* Pending job or array remainder: removed. A running job: PX_ESTATE (stop it,
 * then report pxc_job_ended(CANCELLED)). Unknown id: PX_ENOENT. */
int pxc_cancel(struct px_core *c, uint64_t job_id, int64_t now, struct px_diag *diag);

/* Holds a pending job (priority 0, reason JobHeldUser/JobHeldAdmin). */
int pxc_hold(struct px_core *c, uint64_t job_id, bool admin, int64_t now, struct px_diag *diag);

/* Releases a hold; a user (admin=false) cannot release an admin hold: PX_EPERM. */
int pxc_release(struct px_core *c, uint64_t job_id, bool admin, int64_t now, struct px_diag *diag);

/* A running job ended (state is terminal): frees its resources, charges fair
 * share usage, resolves dependencies at the next cycle. The core then forgets
 * the job except for its end state, kept briefly for dependencies. */
int pxc_job_ended(struct px_core *c, uint64_t job_id, enum px_job_state state, int32_t exit_code,
                  int64_t now, struct px_diag *diag);

/* A running job stopped and goes back to pending with its id and submit time
 * (node failure, preemption, scontrol requeue); hold = requeue held. */
int pxc_job_requeue(struct px_core *c, uint64_t job_id, bool hold, int64_t now,
                    struct px_diag *diag);

/* Recovery (restore.c): job_id, submitted (or, with array_job_id, the next
 * task of that pending array), runs since start_s on exactly alloc[0..nalloc)
 * (cpu_word/ncpu_words ignored). RUNNING again with no START action; ends
 * and requeues are reported as for any started job. Nothing changes on error:
 * PX_ENOENT, PX_ESTATE (not pending, or the nodes lack those free resources),
 * PX_EINVAL (unknown node), PX_ENOMEM. */
int pxc_job_restore(struct px_core *c, uint64_t job_id, uint64_t array_job_id,
                    const struct px_alloc *alloc, uint32_t nalloc, int64_t time_limit_s,
                    int64_t start_s, struct px_diag *diag);

/* Recovery of a job that ended before the journal's last checkpoint: adds
 * what its run on alloc from start_s to end_s charged to fair share,
 * decayed to now as if it had been replayed. PX_ENOENT when user/account
 * has no association any more (nothing charged). */
int pxc_usage_replay(struct px_core *c, const char *user, const char *account, const char *qos,
                     const struct px_alloc *alloc, uint32_t nalloc, int64_t start_s, int64_t end_s,
                     struct px_diag *diag);

/* reason is copied (may be NULL). */
int pxc_node_event(struct px_core *c, uint32_t node, enum px_node_event ev, const char *reason,
                   int64_t now, struct px_diag *diag);

/* gpu_state.c: GPU gpu of node in or out of service (PX_EV_GPU). */
int pxc_gpu_set(struct px_core *c, uint32_t node, uint32_t gpu, bool usable, struct px_diag *d);

/* Pending jobs only (time limit of a running job: PX_ESTATE). */
int pxc_update(struct px_core *c, uint64_t job_id, const struct px_job_update *u, int64_t now,
               struct px_diag *diag);

int pxc_resv_add(struct px_core *c, const struct px_resv_spec *r, int64_t now,
                 struct px_diag *diag);

int pxc_resv_remove(struct px_core *c, const char *name, int64_t now, struct px_diag *diag);

/* A partition set DOWN or UP while running (part_state.c): down, its jobs stay
 * queued with reason PartitionDown and none starts. PX_ENOENT: no such index. */
int pxc_partition_set_up(struct px_core *c, uint32_t part, bool up);

/* Recovery (array_skip.c): the next task of pending array array_job_id,
 * task_job_id, whose start px_core_job_restore could not take back, runs
 * outside the scheduler since start_s: its index is used (never started
 * again) and it is RUNNING without resources until pxc_job_ended or
 * pxc_job_requeue. PX_ENOENT, PX_ESTATE (not the next task), PX_ENOMEM. */
int pxc_array_skip(struct px_core *c, uint64_t array_job_id, uint64_t task_job_id, int64_t start_s,
                   struct px_diag *diag);

/* ---- allocation (alloc.c): everything goes through the core's allocator */
void *pxc_alloc(struct px_core *c, size_t n);
void *pxc_calloc(struct px_core *c, size_t n, size_t size);
void *pxc_realloc(struct px_core *c, void *p, size_t n);
void pxc_free(struct px_core *c, void *p); /* NULL is a no-op */
/* Grows *v (element size sz, capacity *cap) to hold want elements. */
int pxc_grow(struct px_core *c, void **v, size_t *cap, size_t want, size_t sz);
#define PXC_GROW(c, vec, capp, want) \
  pxc_grow((c), (void **)&(vec), (capp), (want), sizeof *(vec))

/* Room for more actions in the caller's buffer (libc realloc). */
int pxc_actions_reserve(struct px_actions *a, size_t nact, size_t nalloc, size_t nwords);

/* u64 -> u32 map, open addressing (job ids, (user,account) pairs). */
struct pxc_map {
  uint64_t *keys;
  uint32_t *vals;
  size_t cap, len; /* cap: 0 or a power of two; key UINT64_MAX marks empty */
};
int pxc_map_put(struct px_core *c, struct pxc_map *m, uint64_t k, uint32_t v);
bool pxc_map_get(const struct pxc_map *m, uint64_t k, uint32_t *v);
bool pxc_map_del(struct pxc_map *m, uint64_t k);
void pxc_map_fini(struct px_core *c, struct pxc_map *m);
/* Reserves room for n more keys so that the next n puts cannot fail. */
int pxc_map_reserve(struct px_core *c, struct pxc_map *m, size_t n);

/* Interned strings: id <-> string, ids dense from 0. */
struct pxc_strtab {
  char **str;
  size_t n, cap;
  struct pxc_map idx; /* hash -> id chains by probing on (hash + i) keys */
};
/* id of s, interning it; PX_ENOMEM. */
int pxc_intern(struct px_core *c, const char *s, uint32_t *id);
/* id of s or PX_NONE without interning. */
uint32_t pxc_lookup(const struct px_core *c, const char *s);
const char *pxc_str(const struct px_core *c, uint32_t id);

/* ---- cluster ---------------------------------------------------------- */

/* One GPU type of a node with several (MIG profiles side by side). */
struct pxc_gtype {
  uint32_t type;            /* string id */
  px_bits64 gpus;           /* its GPUs */
};

/* The type of a node with several: no job asks it by name; its pool holds
 * the node whole, for jobs of any type (index.c). */
#define PXC_TYPE_MIXED (PX_NONE - 1)

struct pxc_node {
  uint32_t name;            /* string id */
  uint32_t cpus, ngpu, gpu_groups;
  uint64_t mem_mib;
  uint32_t gpu_type;        /* string id, PX_NONE, or PXC_TYPE_MIXED with gtypes */
  struct pxc_gtype *gtypes; /* several types: each type's GPUs (conf order: by name); NULL with one */
  uint32_t ngtypes;
  uint32_t weight;
  uint32_t leaf;            /* topology group (leaf switch / block / virtual) */
  uint64_t features;        /* bit per feature id (<= 64 features) */
  uint32_t cpu_word;        /* offset of its CPU-free bits in c->cpu_bits */
  uint32_t pool_first, npools; /* entries in c->node_pools */
  /* dynamic */
  px_bits64 gpu_free;
  px_bits64 gpu_bad;        /* out of service (a fault, gpu_state.c): never in gpu_free */
  px_bits64 gpu_bad_held;   /* of those, still held by the job that ran on it */
  px_bits64 gpu_shared;     /* carrying fractional jobs (share.c): never in gpu_free */
  uint8_t *share_used;      /* ngpu entries: hundredths in use per GPU; NULL unless it offers shares */
  uint32_t *share_user;     /* ngpu entries: the user (string id) of a shared GPU's jobs (GpuShares=USER) */
  uint32_t cpu_free;
  uint64_t mem_free;
  uint32_t njobs;
  uint32_t tenant, tenant_jobs; /* exclusive_account: account holding it */
  bool down, drain, excl;   /* excl: an --exclusive job holds it */
  bool shares;              /* offers GPU shares (GpuShares= on it or one of its partitions) */
  bool share_one_user;      /* GpuShares=USER: a shared GPU carries one user's jobs at a time */
  char *reason;
};

struct pxc_node_pool {       /* a node's membership in a pool */
  uint32_t pool, pos, lleaf;
};

/* A bitmap with a summary bit per word for fast find-next. */
struct pxc_bucket {
  uint64_t *w, *sum;
};

struct pxc_pool {
  uint32_t part, gpu_type;
  bool partial;             /* one type's GPUs of nodes with several (index.c): not for untyped jobs */
  uint32_t n, nwords, nsum;
  uint32_t *nodes;          /* by (weight, index) */
  uint32_t nclass, *class_start; /* weight classes: position ranges */
  uint32_t maxg;            /* buckets 0..maxg */
  uint64_t idle_k[2];       /* bit k: some node has k GPUs in all (k <= 64): where idle nodes sit */
  struct pxc_bucket *bk;    /* maxg + 1 */
  uint32_t *count;          /* maxg + 1: available nodes with k free GPUs */
  uint32_t nleaf;
  uint32_t *leaf_id;        /* local leaf -> topology group */
  uint32_t *leaf_start;     /* nleaf + 1, into leaf_nodes */
  uint32_t *leaf_nodes;     /* nodes grouped by local leaf, by (weight, index) */
  uint16_t *leaf_hist;      /* nleaf x (maxg + 1) */
  struct pxc_bucket *room;  /* PXC_SHARE_UNITS buckets: room[r] marks nodes with a shared GPU that
                               has exactly r hundredths free; NULL when no node offers shares */
  uint64_t static_cpus_max, static_mem_max; /* largest node */
};

struct pxc_switch {          /* a tree switch above the leaves */
  uint32_t parent, level;
};

struct pxc_part {
  uint32_t name;
  uint32_t pool_first, npools;
  uint32_t nnodes, ngpu;
  bool up, exclusive_account;
  bool whole_nodes;         /* OverSubscribe=EXCLUSIVE: every job --exclusive */
  int64_t max_time_s, default_time_s;
  uint32_t max_nodes, tier, job_factor;
  uint64_t *allow_acct, *deny_acct, *allow_qos; /* bitsets or NULL */
};

struct pxc_assoc {
  uint32_t name, parent, depth;
  uint32_t first_child, next_sibling;
  bool is_user, use_parent;
  bool deleted;             /* removed online (acct.c): out of the tree, index kept */
  uint32_t shares;
  uint32_t user;            /* user id (string id) for user leaves */
  uint32_t fs_parent;       /* nearest ancestor that is not FairShare=parent */
  /* limits */
  uint64_t grp_gpus, grp_cpus, grp_mem, grp_nodes, grp_jobs;
  uint64_t max_jobs, max_submit, max_gpus_per_job; /* effective (inherited) */
  uint64_t own_max[3];      /* as set on this association (PX_NOLIMIT: inherited), same order */
  uint32_t default_qos;
  /* running totals over the subtree */
  uint64_t run_cgpus;        /* hundredths of GPUs (fractions charge their part) */
  uint64_t run_cpus, run_mem, run_nodes, run_jobs;
  uint64_t user_jobs, user_submit; /* user leaves: own running / running+pending */
  /* usage: value at usage_t, accruing at rate (billing/s of running jobs) */
  double usage, rate;
  int64_t usage_t;
  /* Fair Tree output (last cycle) */
  double norm_shares, eff_usage;
  long double level_fs;
  double fairshare;
};

/* QoS sacctmgr may add online (acct.c) until the next start: the tables
 * indexed by QoS (policy, partitions' AllowQos sets) are sized once. */
#define PXC_QOS_ONLINE_MAX 32

struct pxc_qos {
  uint32_t name, priority;
  uint64_t max_gpus_per_user, max_jobs_per_user, max_submit_per_user;
  int64_t max_wall_s;
  double usage_factor;
};

struct pxc_quser {           /* per (qos, user) counters */
  uint64_t cgpus, jobs, submit; /* cgpus: hundredths of GPUs */
};

/* ---- jobs ------------------------------------------------------------- */

/* What a job asks per placement unit. A fixed shape is nmin == nmax nodes
 * with one unit each (the per-node totals); a flexible one is `units` tasks,
 * any number per node. */
struct pxc_shape {
  uint32_t units, per_node_max;   /* per_node_max 1: fixed */
  uint32_t nmin, nmax;
  uint32_t gpu, cpu;              /* per unit */
  uint64_t mem;                   /* per unit, 0 with mem_prop */
  uint32_t base_cpu;              /* per node on top of units (--gpus=N alone) */
  bool mem_prop;                  /* no memory asked: node share of GPUs/CPUs */
  bool exclusive;
  uint8_t share;                  /* a fractional job: hundredths of one GPU (gpu is then 1,
                                     units 1, one node); 0: whole GPUs. A byte: the shape
                                     stays 40 bytes, the job's hot fields two cache lines */
};

enum { PXC_DEP_AFTER, PXC_DEP_AFTERANY, PXC_DEP_AFTEROK, PXC_DEP_AFTERNOTOK, PXC_DEP_SINGLETON };
struct pxc_dep {
  uint64_t job_id;
  uint8_t kind, done; /* done: 0 waiting, 1 satisfied, 2 never */
};
struct pxc_deps {
  uint32_t n;
  bool any;           /* '?' separated */
  struct pxc_dep d[];
};

struct pxc_range { uint32_t lo, hi, step; };
struct pxc_array {
  uint32_t ntasks, next, running, max_running;
  uint32_t ended, failed;       /* tasks ended, and how many not COMPLETED/0 */
  uint32_t nranges;
  struct pxc_range r[];
};

enum { PXC_F_HELD_USER = 1, PXC_F_HELD_ADMIN = 2, PXC_F_ADMIN_PRIO = 4, PXC_F_REQUEUE = 8, PXC_F_AGE_RESET = 16 }; /* AGE_RESET: eligible again from the next cycle (hold, requeue) */
enum { PXC_F_SIGNALLED = 32 }; /* issue 4: --signal sent for this run */
enum { PXC_F_TOPO_WAIT = 64 }; /* no placement while its partition had enough free GPUs */
enum { PXC_F_SERVICE = 128 }; /* a service's replica: never ends on its own, so no MaxTime/MaxWall */

/* Hot fields first: the cycle's gate, key and admit read only the first
 * 128 bytes of a pending record, so a cycle over 100,000 jobs streams two
 * cache lines per job. */
struct pxc_job {
  /* line 0: gate */
  uint64_t id;
  struct pxc_deps *deps;
  struct pxc_array *arr;
  int64_t begin_s, eligible_s, submit_s, time_limit_s;
  uint16_t part, qos;
  uint8_t state, reason, flags;
  uint8_t las_served; /* LAS: attained_gpu_s > 0 (else its queue is 0 without reading the cold fields) */
  /* line 1: key and admit */
  uint32_t assoc, user, priority, mark; /* mark: cycle number while waiting to be tried */
  int32_t nice;
  uint32_t nalloc;
  struct pxc_shape shape;
  /* cold */
  uint64_t array_id;
  uint32_t task_id;         /* PX_NONE unless an array task */
  uint32_t account, name;
  uint32_t gpu_type, constraint; /* string id / constraint id, PX_NONE = any */
  uint32_t *excl, nexcl;    /* --exclude: nodes it may not use, ascending */
  uint32_t *req, nreq;      /* --nodelist: the nodes it runs on, all of them, ascending */
  uint32_t resv;            /* --reservation: its name (string id), PX_NONE = none */
  int64_t time_min_s;       /* --time-min: backfill may shorten time_limit_s down to it; 0 = no */
  uint32_t admin_priority, restarts, pend_pos;
  uint32_t switches;
  int64_t switches_wait_s, start_s;
  uint32_t why_a, why_b;    /* numbers for the why text */
  double billing;           /* running: billable TRES per second x UsageFactor */
  struct px_alloc *alloc;   /* running */
  uint64_t *cpu_words;
  uint32_t ncpu_words;
  /* issue 4 (policy.h) */
  int64_t expected_start_s; /* backfill plan; 0 unknown */
  int32_t signal_num, signal_time_s; /* --signal=SIG@TIME, 0 none */
  double attained_gpu_s;    /* LAS: GPUs x seconds of its earlier (requeued) runs */
  double las_base_gpu_s;    /* LAS: attained_gpu_s at its last starvation promotion (its queue counts from it) */
  /* pxc_job_hashes: its shape hashes, memoised for one cycle (a cycle asks up to five times) */
  uint64_t memo_shape_h, memo_front_h;
  uint32_t memo_cycle, memo_front_cycle;
  uint64_t kept_k1;         /* kept.c: its natural key while kept (PXC_KEPT_IN) */
  uint8_t kept;             /* kept.c: PXC_KEPT_* */
};

struct pxc_constraint {      /* DNF: OR of AND-masks */
  uint32_t nterms;
  uint64_t *terms;
};

struct pxc_cand { uint64_t key; uint32_t node, units; };

struct pxc_finished { uint64_t id; int64_t end_s; uint8_t state; bool ok; };

struct pxc_sortent { uint64_t k1, k2, id; uint32_t slot, part; };

struct pxc_prio_in {
  int64_t eligible_s;
  uint32_t assoc, admin_priority;
  int32_t nice;
  uint16_t part, qos;
  uint8_t flags;
};

/* gated.c: a pending job's gate verdict as it stands until an event says
 * otherwise (NEW: not known yet; VOLATILE: a dependency or a begin time,
 * gated from the record every cycle), and what its key reads. */
enum { PXC_GATED_NEW, PXC_GATED_IN, PXC_GATED_OUT, PXC_GATED_VOLATILE };
struct pxc_gent {
  struct pxc_prio_in in;
  int64_t submit_s;
  uint64_t id;
  int64_t from_s, until_s; /* prio holds over [from_s, until_s] while its association's fair share does */
  uint32_t fs_gen;         /* ... which had this generation (c->gent_fs_gen) */
  uint32_t prio;  /* this cycle's (written to the record when the job is tried) */
  uint8_t st;     /* PXC_GATED_* */
  uint8_t nogpu;  /* needs no GPU, or a fraction of a shared one */
};

/* The queue's order: smaller key first, ties by job id (ids are unique). */
static inline bool pxc_sortent_before(const struct pxc_sortent *x, const struct pxc_sortent *y) {
  if (x->k1 != y->k1) return x->k1 < y->k1;
  if (x->k2 != y->k2) return x->k2 < y->k2;
  return x->id < y->id;
}

struct px_core {
  struct px_core_allocator al;
  size_t bytes;
  uint64_t seed;
  struct pxc_strtab strs;
  struct px_conf_sched sched;   /* copied; string fields cleared */
  const struct pxc_order_stage *order;
  const struct pxc_place_stage *place;
  const struct pxc_reserve_stage *reserve;
  const struct pxc_victims_stage *victims;

  uint32_t nnodes;
  struct pxc_node *nodes;
  /* preempt.c: per node, the pending preemptor whose claim holds it (0:
   * none); NULL while nothing is claimed. Read by pxc_node_fit. */
  const uint64_t *claim_of;
  uint64_t *cpu_bits;
  struct pxc_node_pool *node_pools;
  uint32_t nfeatures;
  uint32_t feature_ids[64];     /* feature bit -> string id */

  uint32_t npools;
  struct pxc_pool *pools;
  uint32_t nparts, default_part;
  struct pxc_part *parts;

  uint32_t nleaves, nswitches, max_level;
  uint32_t *leaf_parent;        /* leaf -> switch or PX_NONE */
  struct pxc_switch *switches;

  uint32_t nassoc, nuser_assoc;
  uint32_t assoc_cap;                /* arrays indexed by association hold assoc_cap + 1 (acct.c) */
  struct pxc_assoc *assoc;
  struct pxc_map assoc_by_user_acct; /* (user id << 32 | account name id) -> assoc */
  struct pxc_map default_assoc;      /* user id -> first association */
  uint32_t *share_rows;              /* sshare order (nshare_rows: the live associations) */
  uint32_t nshare_rows;
  uint32_t part_acct_words;          /* words of the partitions' account bitsets */
  uint32_t *fs_list;                 /* Fair Tree visit lists (nassoc) */
  double *fs_level_sum;              /* per fair-share parent: shares of its level */
  uint32_t nqos, qos_cap;            /* qos_cap: nqos of the configuration + PXC_QOS_ONLINE_MAX */
  struct pxc_qos *qos;               /* qos_cap + 1; a deleted one's name is PX_NONE (acct.c) */
  uint32_t max_qos_prio, max_part_factor;
  uint32_t nusers;                   /* distinct user ids are string ids; counters keyed below */
  struct pxc_map quser_idx;          /* (qos << 32 | user) -> quser slot */
  struct pxc_quser *quser;
  size_t nquser, quser_cap;
  uint64_t total_nodes, total_cpus;

  struct pxc_constraint *cons;
  size_t ncons, cons_cap;
  struct pxc_map cons_by_str;        /* string id -> constraint id */

  /* jobs */
  struct pxc_job *jobs;
  size_t njob_slots, jobs_cap;
  uint32_t *free_slots;
  size_t nfree, free_cap;
  size_t nlive;
  struct pxc_map job_by_id;
  uint32_t *pending;
  size_t npending, pending_cap;
  struct pxc_finished *fin;          /* in end order, purged after PXC_FINISHED_KEEP_S */
  size_t fin_head, nfin, fin_cap;
  struct pxc_map fin_by_id;          /* id -> sequence number (fin_seq0 + index) */
  uint32_t fin_seq0;
  struct pxc_map node_by_name;       /* name string id -> node */
  struct pxc_map singleton_running;  /* (user << 32 | name) -> running count */

  /* placement scratch, sized at px_core_new so placing never allocates */
  uint64_t *pl_bound, *pl_sum;
  uint8_t *pl_exact;
  uint32_t *pl_leaves, *pl_nodes, *pl_units;
  struct pxc_cand *pl_cand;
  struct pxc_map static_fit;         /* shape hash -> fits the partition when idle */

  /* per-cycle scratch */
  struct pxc_sortent *sort;
  size_t sort_cap;
  struct pxc_map fail_shapes;        /* shapes that found no room this cycle */
  bool any_tenancy;                  /* some partition has exclusive_account */
  uint32_t *scratch_u32;
  size_t scratch_cap;
  bool *part_blocked;
  bool *part_passed;                 /* a job of the partition could not start this cycle */
  int64_t lazy_s, last_full_s;       /* px_core_set_lazy_reasons; time of the last full cycle */
  size_t nogpu_eligible;             /* eligible jobs this cycle that need no GPU */
  bool starts_only;                  /* lazy reasons set and no victim search left this cycle: a pass may
                                        stop reserving once nothing more can start (backfill_tail.c), even
                                        in the periodic full cycle, whose reasons stay as before but for
                                        estimates */
  size_t sort_left;                  /* jobs not yet taken: c->sort[0 .. sort_left) (the heap) */
  bool pass_tail;                    /* starts_only: no job left in the queue can start (the reserve stage) */
  uint32_t *part_left;               /* per partition: eligible jobs not yet tried */
  uint32_t tests_left;               /* jobs this pass may still try (bf_max_job_test, default_queue_depth) */
  bool main_pass;                    /* a cycle between backfill passes (bf_interval) */
  bool pass_cut;                     /* this pass stopped at its tests_left */
  int64_t last_fs_s;
  struct pxc_gent *gent;             /* gated.c: per pending job, at its place in c->pending */
  size_t gent_cap;
  uint64_t gent_fp;                  /* what the gate and key read outside the jobs, at the rebuild */
  bool gent_valid;                   /* every entry describes its job (else the full pass rebuilds) */
  bool gent_rebuild;                 /* this full pass rebuilds them */
  bool gent_off;                     /* tests: always the full pass */
  bool gent_live;                    /* this cycle keyed the entries: a job tried gets its priority */
  double *gent_fs;                   /* per association: its fair share at the last cycle ... */
  uint32_t *gent_fs_gen;             /* ... and how often it changed */
  size_t gent_fs_cap, gent_fs_gen_cap;
  bool gent_fs_ok;                   /* both sized this cycle (else no memo) */
  uint64_t budget_end;               /* stats.started value that ends this cycle's starts */
  int64_t now;

  struct px_core_stats stats;
  char why[512];
  struct pxc_policy *pol;            /* issue 4: backfill, preemption, quotas, reservations (policy.h) */
};

#define PXC_FINISHED_KEEP_S 300


/* The partition tier's part of a queue key (high tiers first). */
static inline uint64_t pxc_tier_key(const struct px_core *c, uint32_t part) {
  uint32_t t = c->parts[part].tier;
  return (uint64_t)(UINT16_MAX - (t > UINT16_MAX ? UINT16_MAX : t)) << 32;
}

/* The priority pxc_prio_factors computes, bit for bit, for the queue key
 * (prio.c), without job size and TRES weights: a factor of weight 0 adds
 * +0.0 to a sum of terms that are never negative, which changes nothing,
 * so it is not computed (the policies weigh two or three factors; this
 * runs for every pending job at every cycle). Fair share is always added:
 * a NaN there must poison the sum as it does there. The age is fmin(1.0,
 * d / max) without the call: a wait d of at least max gives a quotient of
 * at least 1, a shorter one a quotient below 1 (or 1 itself). Reads only
 * *in, which the gated entries keep per pending job (gated.c). */
static inline double pxc_prio_sum(const struct px_core *c, const struct pxc_prio_in *in, int64_t now) {
  const struct px_conf_sched *w = &c->sched;
  double age = 0;
  if (in->eligible_s && now > in->eligible_s) {
    int64_t d = now - in->eligible_s;
    age = w->max_age_s > 0 ? (d >= w->max_age_s ? 1.0 : (double)d / (double)w->max_age_s) : 1.0;
  }
  double sum = w->weight_age * age + w->weight_fairshare * c->assoc[in->assoc].fairshare;
  if (w->weight_partition)
    sum += w->weight_partition * (c->max_part_factor ? (double)c->parts[in->part].job_factor / c->max_part_factor : 0);
  if (w->weight_qos) sum += w->weight_qos * (c->max_qos_prio ? (double)c->qos[in->qos].priority / c->max_qos_prio : 0);
  return sum - (double)in->nice;
}

static inline uint32_t pxc_prio_simple(const struct px_core *c, const struct pxc_prio_in *in, int64_t now) {
  if (in->flags & (PXC_F_HELD_USER | PXC_F_HELD_ADMIN)) return 0;
  if (in->flags & PXC_F_ADMIN_PRIO) return in->admin_priority;
  double sum = floor(pxc_prio_sum(c, in, now));
  return sum < 1 ? 1 : sum > (double)UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}

/* core.c */
uint32_t pxc_node_avail_gpus(const struct pxc_node *n);

/* index.c: keep pools in step with a node's free GPUs and availability. */
int pxc_index_build(struct px_core *c, const struct px_conf *conf);
void pxc_index_node_remove(struct px_core *c, uint32_t node);
void pxc_index_node_add(struct px_core *c, uint32_t node);
/* May job j use pool p (its type, or any for an untyped job)? (place.c) */
bool pxc_pool_matches(const struct pxc_job *j, const struct pxc_pool *p);
bool pxc_node_usable(const struct pxc_node *n);
/* The GPUs of n that a job asking type t may take: all of them for t
 * PX_NONE (an untyped request takes any) or PXC_TYPE_MIXED, else those of
 * that type (none when n has no such GPU). */
static inline px_bits64 pxc_type_gpus(const struct pxc_node *n, uint32_t t) {
  px_bits64 all = px_bits64_range(0, (int)n->ngpu);
  if (t == PX_NONE || t == PXC_TYPE_MIXED) return all;
  if (!n->ngtypes) return n->gpu_type == t ? all : 0;
  for (uint32_t i = 0; i < n->ngtypes; i++)
    if (n->gtypes[i].type == t) return n->gtypes[i].gpus;
  return 0;
}
/* first position >= from and < hi with bit set in bucket k of pool p, or hi */
uint32_t pxc_bucket_next(const struct pxc_pool *p, uint32_t k, uint32_t from, uint32_t hi);

/* share.c: fractional GPUs, counted in hundredths (docs/gpus.md) */
#define PXC_SHARE_UNITS 100
struct pxc_place_result;
/* Free hundredths of shared GPU g of n. */
static inline uint32_t pxc_share_room(const struct pxc_node *n, uint32_t g) {
  return PXC_SHARE_UNITS - n->share_used[g];
}
/* The GPU of n a share of `share` hundredths of user's goes on: the shared
 * one with the least room that holds it (best fit; with GpuShares=USER only
 * user's), else a free one (free: the candidates for a fresh GPU); PX_NONE
 * when neither. */
uint32_t pxc_share_pick(const struct pxc_node *n, px_bits64 free, uint32_t share, uint32_t user, px_bits64 types);
/* Takes / gives back `share` hundredths of GPU g of n for user's job (index
 * kept by the caller). */
void pxc_share_take(struct pxc_node *n, uint32_t g, uint32_t share, uint32_t user);
void pxc_share_give(struct pxc_node *n, uint32_t g, uint32_t share);
/* Can n take `share` hundredths of user's on a GPU already shared, or on one of `free`?
 * (types: the GPUs of the type asked, pxc_type_gpus; free is within them) */
bool pxc_share_fits(const struct pxc_node *n, px_bits64 free, uint32_t share, uint32_t user, px_bits64 types);
/* Single-node placement of a fractional job: onto a shared GPU first. */
bool pxc_place_share(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res);
/* Nodes of pool p with a shared GPU of exactly r hundredths free (index.c). */
uint32_t pxc_room_next(const struct pxc_pool *p, uint32_t r, uint32_t from, uint32_t hi);

/* place.c */
struct pxc_place_result {
  uint32_t nnodes;
  uint32_t *nodes, *units; /* scratch: chosen nodes and units per node */
  enum px_reason fail;
};
/* Finds a placement for j now; 0 found, 1 not found (res->fail), PX_ENOMEM. */
int pxc_place_scratch_init(struct px_core *c);
uint64_t pxc_shape_hash(const struct pxc_job *j);
/* pxc_shape_hash of j, and of j with its unit and node counts cleared (the
 * backfill's gang frontiers), computed once per cycle: the shape of a
 * pending job does not change during a cycle. */
void pxc_job_hashes(const struct px_core *c, struct pxc_job *j, uint64_t *shape_h, uint64_t *front_h);
int pxc_place_find(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res);
uint64_t pxc_mem_for(const struct pxc_job *j, const struct pxc_node *n, uint32_t units);
/* Number of units the node can host for j now (0 if none). */
/* Is node one of partition part's (through any of its pools)? */
bool pxc_node_in_part(const struct px_core *c, uint32_t node, uint32_t part);
/* Is node in j's --exclude list (binary search)? */
bool pxc_excluded(const struct pxc_job *j, uint32_t node);
/* Does the reservation named name (string id) exist and hold node? (resv.c) */
bool pxc_resv_holds(const struct px_core *c, uint32_t name, uint32_t node);
/* Does j restrict its nodes beyond the partition's (features, GPU type,
 * --exclude, --nodelist, --reservation)? Then pxc_node_fit must be asked. */
static inline bool pxc_job_node_filtered(const struct pxc_job *j) {
  return j->constraint != PX_NONE || j->gpu_type != PX_NONE || j->nexcl || j->nreq || j->resv != PX_NONE;
}
uint32_t pxc_node_fit(const struct px_core *c, const struct pxc_job *j, uint32_t node, bool idle);
/* Can j ever fit the partition (all nodes idle; avail_only: only usable nodes)? */
bool pxc_fits_static(struct px_core *c, const struct pxc_job *j, bool avail_only);
/* Allocates the chosen nodes for j and marks them used. */
int pxc_place_commit(struct px_core *c, struct pxc_job *j, const struct pxc_place_result *res);
void pxc_place_release(struct px_core *c, struct pxc_job *j);

/* fairshare.c */
void pxc_fs_advance(struct px_core *c, uint32_t assoc, int64_t now); /* assoc and ancestors */
void pxc_fs_charge(struct px_core *c, uint32_t assoc, double rate_delta, int64_t now);
void pxc_fs_update(struct px_core *c, int64_t now);                  /* whole tree + ranking */
int pxc_fs_build(struct px_core *c);
/* Room for n associations in the Fair Tree's arrays (acct.c grows the tree). */
int pxc_fs_reserve(struct px_core *c, uint32_t n);
/* sshare's rows again, after the tree changed. */
void pxc_fs_rows(struct px_core *c);

/* acct.c: an online change of the accounts tree or a QoS (PX_EV_ACCT). */
int pxc_acct_edit(struct px_core *c, const struct px_acct_edit *e, struct px_diag *d);
/* Effective (inherited) limits of assoc a's subtree from own_max. */
void pxc_acct_inherit(struct px_core *c, uint32_t a);

/* limits.c */
enum px_reason pxc_admit(struct px_core *c, const struct pxc_job *j, uint32_t *a, uint32_t *b);
enum px_reason pxc_admit_placement(struct px_core *c, const struct pxc_job *j,
                                   const struct pxc_place_result *res, uint32_t *a, uint32_t *b);
void pxc_limits_count(struct px_core *c, const struct pxc_job *j, int sign);
struct pxc_quser *pxc_quser_get(struct px_core *c, uint32_t qos, uint32_t user);
int pxc_quser_ensure(struct px_core *c, uint32_t qos, uint32_t user);

/* prio.c */
/* LAS queue of j at now (0 = the first; prio.c): attained service, runs
 * before a requeue plus the current one, against the thresholds. */
uint32_t pxc_las_queue(const struct px_core *c, const struct pxc_job *j, int64_t now);
/* GPUs j's attained service counts per second: a fraction of a shared GPU
 * its share (0.5 for --gpus=0.5), whole GPUs their number. */
double pxc_las_gpus(const struct pxc_job *j);
/* Free GPUs on usable nodes of j's partition (of its GPU type, if any; cycle.c). */
uint64_t pxc_part_free_gpus(const struct px_core *c, const struct pxc_job *j);
/* The cycle's gate: holds, begin time, dependencies, partition state and
 * time limit; sets the eligible time when first passed (cycle.c). */
enum px_reason pxc_gate(struct px_core *c, struct pxc_job *j, int64_t now);
/* In its first run since a starvation promotion (LasStarveLimit), until
 * that run is as long as all its runs before: LAS does not preempt it, so
 * a starving job's run time at least doubles with each promotion and it
 * cannot ping-pong with the jobs it displaced (prio.c). */
bool pxc_las_promoted(const struct pxc_job *j, int64_t now);
/* LasStarveLimit: promotes pending j to queue 0 if it waited long enough
 * (prio.c); true when it did. pxc_las_promote_from: a time no later than
 * the first at which it would (INT64_MAX: never, as its fields stand). */
bool pxc_las_promote(struct px_core *c, struct pxc_job *j, int64_t now);
int64_t pxc_las_promote_from(const struct px_core *c, const struct pxc_job *j);
void pxc_prio_factors(const struct px_core *c, const struct pxc_job *j, int64_t now,
                      struct px_prio_factors *f);
/* What a multifactor priority without job size and TRES weights reads of
 * a job; pxc_prio_simple below computes it (the queue key's priority). */
void pxc_prio_in_of(const struct pxc_job *j, struct pxc_prio_in *in);

/* gated.c: the multifactor queue's gate verdicts and priority inputs kept
 * between cycles, one entry per pending job at its place in c->pending. */
bool pxc_gated_wanted(const struct px_core *c);
/* May this cycle read the entries instead of the records? */
bool pxc_gated_usable(struct px_core *c);
/* The full pass: entries rebuilt from the gate's verdicts (begin, then
 * note for pending job i after its gate and key, then end). */
void pxc_gated_rebuild_begin(struct px_core *c);
void pxc_gated_note(struct px_core *c, size_t i, const struct pxc_job *j, enum px_reason r);
/* The cycle's start: the associations' fair shares that changed. */
void pxc_gated_fs(struct px_core *c);
/* g's priority now, computed (and its memo renewed) */
uint32_t pxc_gated_prio_new(struct px_core *c, struct pxc_gent *g, int64_t now);
/* g's priority now (gated.c): its memo while it holds, else computed. */
static inline uint32_t pxc_gated_prio(struct px_core *c, struct pxc_gent *g, int64_t now) {
  if (c->gent_fs_ok && g->in.assoc < c->nassoc && g->fs_gen == c->gent_fs_gen[g->in.assoc] && g->from_s <= now &&
      now <= g->until_s)
    return g->prio;
  return pxc_gated_prio_new(c, g, now);
}
void pxc_gated_rebuild_end(struct px_core *c);
/* pending list changes (jobs.c): room, a job appended at i, the job at
 * last moved to i */
void pxc_gated_reserve(struct px_core *c);
void pxc_gated_added(struct px_core *c, size_t i);
void pxc_gated_moved(struct px_core *c, size_t i, size_t last);

/* jobs.c */
struct pxc_job *pxc_job_find(struct px_core *c, uint64_t id);
void pxc_pending_remove(struct px_core *c, struct pxc_job *j);
int pxc_pending_add(struct px_core *c, struct pxc_job *j);
/* Room for one more pending job (queue and the cycle's sort scratch). */
int pxc_pending_reserve(struct px_core *c);
void pxc_job_drop(struct px_core *c, struct pxc_job *j);
uint32_t pxc_array_task_at(const struct pxc_array *a, uint32_t pos);
int pxc_slot_new(struct px_core *c, uint32_t *slot);
void pxc_array_task_ended(struct px_core *c, uint64_t array_id, bool ok, int64_t now);
int pxc_finished_add(struct px_core *c, uint64_t id, uint8_t state, bool ok, int64_t now);
void pxc_finished_purge(struct px_core *c, int64_t now);
const struct pxc_finished *pxc_finished_get(const struct px_core *c, uint64_t id);
uint64_t pxc_job_ngpu_alloc(const struct pxc_job *j); /* limits.c: a running job's, from its allocation */
/* GPUs of j (a fractional job: 1, the GPU it is on). Inline: every cycle
 * asks it of every pending job, which has no allocation. */
static inline uint64_t pxc_job_ngpu(const struct pxc_job *j) {
  return j->nalloc ? pxc_job_ngpu_alloc(j) : (uint64_t)j->shape.units * j->shape.gpu;
}
uint64_t pxc_job_cgpu(const struct pxc_job *j); /* hundredths of GPUs: a fraction exactly */
uint64_t pxc_job_ncpu(const struct pxc_job *j);
/* Billable TRES per second of an allocation under QoS qos (TRESBillingWeights;
 * CPUs when no weight is set), times the QoS's UsageFactor (restore.c). */
/* The record of the next task of the array record at slot, copied from it
 * into *ts (cycle.c; recovery too); the slab may move, so pointers into it
 * are stale afterwards. PX_EEXIST when that id is taken. Then
 * pxc_task_settle: started (indexed, counted live) or not (slot freed). */
int pxc_task_new(struct px_core *c, uint32_t slot, uint32_t *ts);
void pxc_task_settle(struct px_core *c, uint32_t ts, bool started);
/* The arrays a job's allocation keeps: nalloc entries and nwords CPU words
 * (place.c); both or neither (PX_ENOMEM). */
int pxc_alloc_arrays(struct px_core *c, uint32_t nalloc, uint32_t nwords, struct px_alloc **al, uint64_t **words);
/* The array record r's next task started (in a cycle, or at recovery): when
 * it was the last, r leaves the pending queue (cycle.c). */
void pxc_array_task_began(struct px_core *c, struct pxc_job *r);
double pxc_alloc_billing(const struct px_core *c, uint32_t qos, const struct px_alloc *alloc,
                         uint32_t nalloc);

/* issue 4 hooks (policy.c, quota.c, resv.c; the rest in policy.h) */
int pxc_policy_select(struct px_core *c); /* backfill/preemption stages; allocates c->pol */
int pxc_policy_load(struct px_core *c, const struct px_conf *conf); /* preemption, quotas, reservations */
/* The live QoS named name (a deleted one has no name), or PX_NONE. */
uint32_t pxc_qos_index(const struct px_core *c, const char *name);
/* QoS q was added online (acct.c): it preempts none, the cluster's PreemptMode. */
void pxc_policy_qos_added(struct px_core *c, uint32_t q);
/* A QoS whose Preempt= names q, or PX_NONE. */
uint32_t pxc_policy_qos_preempted_by(const struct px_core *c, uint32_t q);
/* Fills (default reasons: appends to) the why text in w[0..n). */
void pxc_policy_why(struct px_core *c, const struct pxc_job *j, char *w, size_t n);
void pxc_policy_free(struct px_core *c);
/* node's free resources changed (place.c) or its availability (a node
 * event: the backfill plan is then rebuilt whole). */
void pxc_plan_node_changed(struct px_core *c, uint32_t node, bool availability);
/* Of free (GPUs of node), those an untyped job of limit_s may take without
 * taking a type's instances the backfill plan holds for a typed job
 * (backfill_typed.c); free itself without a plan or GPU types. */
px_bits64 pxc_tlt_spare(const struct px_core *c, uint32_t node, px_bits64 free, int64_t limit_s);
/* End of a main pass: it owes a backfill pass when it left a job waiting. */
void pxc_policy_main_pass_done(struct px_core *c);
/* A pending job that has preempted others sorts first (k1 = 0): the
 * resources freed are for it. */
void pxc_policy_key(const struct px_core *c, uint64_t id, uint64_t *k1);
/* Cycle start: kills after grace, --signal warnings, the capacity plan. */
int pxc_policy_begin(struct px_core *c, int64_t now, struct px_actions *out);
enum px_reason pxc_quota_admit(struct px_core *c, const struct pxc_job *j, uint32_t *a, uint32_t *b);
/* Moves res off nodes that advance reservations keep from j (placing again);
 * NONE when res may be used, else the reason j waits. */
enum px_reason pxc_resv_filter(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res,
                               int64_t now);

/* parse.c: job spec expressions */
int pxc_parse_array(struct px_core *c, const char *s, struct pxc_array **out, struct px_diag *d);
uint32_t pxc_array_count(const char *s, int *err, struct px_diag *d);
int pxc_parse_deps(struct px_core *c, const char *s, struct pxc_deps **out, struct px_diag *d);
int pxc_parse_constraint(struct px_core *c, const char *s, uint32_t *id, struct px_diag *d);
/* A --constraint expression as OR-of-AND feature masks (parse_cons.c):
 * terms[CONS_TERMS_MAX]. 0, or the error with d naming the offset. */
#define CONS_TERMS_MAX 16
int pxc_cons_terms(const struct px_core *c, const char *s, uint64_t *terms, uint32_t *nterms, struct px_diag *d);
/* --exclude's or --nodelist's hostlist (field names it in errors) into
 * ascending, distinct node indexes (pxc_alloc'd); not with an array. */
int pxc_parse_nodes(struct px_core *c, const char *field, const char *s, bool array, uint32_t **out, uint32_t *n,
                      struct px_diag *d);

#endif
