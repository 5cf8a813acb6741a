/*
 * policy.h - private state of the issue-4 policies: the free-capacity plan
 * (backfill_plan.c), backfill (backfill.c, the `reserve` stage), preemption
 * (preempt.c, the `victims` stage), borrowable quotas (quota.c) and advance
 * reservations (resv.c). policy.c owns the struct and the hooks core_int.h
 * declares.
 *
 * The plan. Time from the cycle's `now` is cut into slots on an absolute grid
 * of res_s seconds (slot 0 = [now, t0 + res), slot k = [t0 + k res, ...),
 * t0 = now rounded down), nslots of them over the backfill window. For each
 * node and slot a cell holds the GPUs, CPUs and memory free in the whole
 * slot: the node's free resources now, plus what running jobs release from
 * the slot their time limit ends in (rounded up: the plan never counts on
 * capacity too early), minus reservations made this cycle, minus advance
 * reservation windows. Per pool (partition x GPU type), slot and local leaf
 * switch, a histogram counts nodes by free GPUs, so searches skip full slots
 * and leaves without touching nodes. Because the grid is absolute, a promise
 * computed at one cycle is never pushed later by rounding at the next.
 * Memory: nnodes x 2 nslots cells of 8 bytes (a row's window slides in a
 * buffer twice its length; 10,000 nodes x 289 slots: 46 MB).
 */
#ifndef PX_CORE_POLICY_H
#define PX_CORE_POLICY_H

#include "core/core_int.h"

/* ---- backfill_plan.c ---------------------------------------------------------- */

struct pxc_tl_cell {
  uint32_t mem_mib;
  uint16_t cpu;
  uint8_t gpu;
  uint8_t usable;   /* 0: down, drained or in a maintenance window */
};

/* What a search learned of a node (valid while its epoch is the search's):
 * no start before skip; it holds the search's fixed need over [ok_from,
 * ok_to). One record per node: a search reads them all together. */
struct pxc_tl_seen { uint32_t skip, skip_epoch, ok_from, ok_to, ok_epoch; };

/* A placement in the plan. */
struct pxc_tl_fit {
  uint32_t slot, end_slot;  /* [slot, end_slot) */
  uint32_t nnodes;
  uint32_t *nodes, *units;  /* scratch owned by the timeline */
};

/* The same histogram move for count nodes of one leaf of one pool: cells
 * [k0, k1) from GPU bucket from to bucket to (a gang's takes). */
struct pxc_tl_batch { uint32_t pool, lleaf, from, to, k0, k1, count; };

/* A search of a backfill pass: the job (id, shape hash, limit), the first
 * slot tried, and what it found (nodes and units at cells[off ..], 2 x
 * nnodes). */
struct pxc_tl_rec {  /* a search; from 0: a start that took [0, end_slot) (backfill.c) */
  uint64_t job_id, shape_h;
  int64_t limit;
  uint32_t from, slot, end_slot, nnodes;
  size_t off;
  bool found;
};
struct pxc_tl_log {
  struct pxc_tl_rec *rec;
  size_t n, cap;
  uint32_t *cells;
  size_t ncells, cells_cap;
  uint64_t gen;               /* the plan's gen when it was logged */
  uint64_t build;             /* and its nbuilds */
  bool open;                  /* still logging: nothing but its commits changed the plan */
};

struct pxc_tl {
  int64_t now, t0, res_s;
  uint32_t nslots;
  struct pxc_tl_cell *cell;   /* node-major: slot k of node at cell[node * stride + off + k] */
  size_t stride, off;         /* a row's storage (2 nslots), the window's start in it */
  size_t *hist_off;           /* per pool: start of its [leaf][k][g] counts (a leaf's slots adjacent) */
  uint16_t *hist;
  size_t *pcnt_off;           /* per pool: start of its [k][g] counts (all leaves) */
  uint32_t *pcnt;
  /* Per pool, [k][g] as pcnt: the first leaf whose histogram may count a
   * node with g GPUs or more free in slot k (leaves before it count none).
   * Between builds the plan only loses capacity, so it only moves forward;
   * valid while hint_epoch == epoch_built (backfill_plan.c, first_leaf). */
  uint32_t *leaf_hint;
  size_t hint_len;
  uint32_t hint_epoch;
  uint32_t *nodes, *units;    /* fit scratch (nnodes) */
  uint64_t *bound;            /* per local leaf (max leaves of a pool) */
  uint8_t *exact;
  uint32_t *leaves;
  struct pxc_tl_seen *seen;   /* per node: what this search learned of it */
  uint64_t *lkeys;             /* per leaf: choose()'s sort keys */
  uint32_t epoch;
  uint64_t walked;            /* nodes a single-node search read slot by slot (find_single) */
  struct pxc_map share_end;   /* (node << 8 | GPU) -> slot its last share ends in (add_releases) */
  /* Incremental builds: while the grid (t0) stays, the next build undoes
   * this cycle's takes and recomputes only the rows of nodes whose state
   * changed (pxc_tl_dirty) instead of every node x slot. */
  bool base_ok;               /* false: the next build is a full one */
  struct pxc_tl_undo *undo;
  size_t nundo, undo_cap;
  uint64_t *dirty_bits;       /* per node */
  uint32_t *dirty, ndirty;
  /* A built row never decreases along the slots (releases only add); a take
   * or a blocked window makes it drop where it starts. Per node, the last
   * slot where it may drop since the build (dec_epoch == epoch_built, else
   * none): past it the row is monotone, so a search checks one cell there. */
  uint32_t *dec_last, *dec_epoch, epoch_built;
  uint64_t ntakes;            /* takes and blocks so far: a cell may have dropped when it moved */
  uint64_t *stamp;            /* per node: ntakes after its last take or block */
  struct pxc_tl_batch batch;  /* histogram moves not yet made (backfill_plan.c, take_uniform) */
  /* The backfill pass's searches, logged for the next pass (backfill.c,
   * search). A build that changes nothing (same grid, no row redone, not a
   * full build) leaves gen as it was, so a pass whose plan has the same gen
   * starts from the same plan as the pass that logged; while both have
   * committed the same reservations (nothing else took anything: ntakes),
   * the same search of the same job from the same slot finds the same. */
  uint64_t gen;
  /* A build that redoes rows keeps gen too when it can compare them with
   * their last build (old_rows: ndirty x nslots, the cycle's takes on them
   * given back -- exact unless one clamped: dirty_clamped): since gen was
   * set the plan changed at most in slots [0, diff_to), and gained capacity
   * at most in [0, gain_to) (a start takes [0, its end) on its nodes, an
   * end gives [0, its limit's end) back). Starts in later slots read the
   * same cells or fewer, so the last pass's answers there hold (backfill.c,
   * search). The same bounds for the last build alone (build_*: when the
   * log is the last build's pass's), with the slots its window moved on
   * (build_shift; gen_shifted: one did since gen, diff_to and gain_to are
   * not this grid's), and those the pass uses (pass_*, widened as the pass
   * and the log go apart: backfill.c, search). */
  uint32_t diff_to, gain_to, build_diff_to, build_gain_to, build_shift;
  uint32_t pass_diff_to, pass_gain_to, pass_shift;
  bool gen_shifted;
  uint64_t nbuilds;
  bool dirty_clamped;
  struct pxc_tl_cell *old_rows;
  size_t old_cap;
  struct pxc_tl_log log[2];   /* the pass's (log_cur) and the last pass's */
  uint32_t log_cur;
  bool log_started;           /* this pass's log is open (at its first search) */
  bool replay_off;            /* tests: search every time */
  bool now_count_off;         /* tests: a real start now without fixed_next's count first */
  bool other_memo_off;        /* tests: every take_other_fit searched (backfill.c, other_failed) */
  /* take_other_fit's failures this cycle (backfill.c): by the job's
   * placement key, the shortest end slot no node set was free to */
  struct pxc_other_fail { uint64_t key, cycle; uint32_t end; } other_fail[64];
  size_t replay;              /* the last pass's next record to match; SIZE_MAX: no more this pass */
  uint64_t built_takes;       /* ntakes after the last build */
  uint64_t log_takes;         /* ntakes after the build or the last logged commit */
  uint64_t replayed;          /* searches answered from the log (tests, stats) */
  uint64_t replayed_diff;     /* of them, on a plan that changed since the log */
  /* Nodes with several GPU types (MIG profiles side by side): beside the
   * cells' total, each type's free GPUs per slot, so that a typed job is
   * planned on its own profile's instances (backfill_typed.c). */
  uint32_t *trow;             /* per node: its first typed row, PX_NONE without types */
  uint8_t *tcell;             /* typed rows, each laid out as a cell row (stride, off) */
  uint32_t ntrows;
};

/* gtype: the index of the typed job's type in the node's types, PX_NONE when none. */
/* uniform: the take was take_uniform's, so its give-back is too (backfill_plan.c, undo_takes). */
struct pxc_tl_undo { uint32_t node, g, cpu, k0, k1, gtype; uint64_t mem; bool uniform; };

/* A node's row: its cells of slots 0 .. nslots - 1. */
static inline struct pxc_tl_cell *pxc_tl_row(const struct pxc_tl *tl, uint32_t node) {
  return &tl->cell[(size_t)node * tl->stride + tl->off];
}

int pxc_tl_init(struct px_core *c, struct pxc_tl *tl, int64_t window_s, int64_t res_s);
void pxc_tl_fini(struct px_core *c, struct pxc_tl *tl);
/* Rebuilds the plan at now from node state and running jobs' time limits
 * (victims end at their kill time) and advance reservations; incrementally
 * when it can (full: false forces every row). */
void pxc_tl_build(struct px_core *c, struct pxc_tl *tl, int64_t now, bool full);
/* Tests: rebuilds the plan whole and returns 0 when it equals the plan as
 * built (incrementally), 1 when not, PX_ENOMEM. */
int pxc_tl_verify(struct px_core *c, struct pxc_tl *tl);
/* node's free resources or running jobs changed since the last build. */
void pxc_tl_dirty(struct pxc_tl *tl, uint32_t node);
int64_t pxc_tl_slot_time(const struct pxc_tl *tl, uint32_t k);
/* Slot holding time t rounded up (the first slot wholly after t); nslots if beyond. */
uint32_t pxc_tl_slot_ceil(const struct pxc_tl *tl, int64_t t);
/* End slot (exclusive) of a job of duration dur_s starting in slot k. */
uint32_t pxc_tl_end_slot(const struct pxc_tl *tl, uint32_t k, int64_t dur_s);
/* Units j can hold on node over slots [k0, k1) in the plan (0 if none). */
uint32_t pxc_tl_units(const struct px_core *c, const struct pxc_tl *tl, const struct pxc_job *j,
                      uint32_t node, uint32_t k0, uint32_t k1);
/* Takes (sign +1) or gives back (-1) u units of j on node over [k0, k1). */
void pxc_tl_take(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, uint32_t node,
                 uint32_t units, uint32_t k0, uint32_t k1, int sign);
/* Makes node unusable over [k0, k1) (a maintenance or other account's window). */
void pxc_tl_block(struct px_core *c, struct pxc_tl *tl, uint32_t node, uint32_t k0, uint32_t k1);
/* Earliest slot in [k_from, k_to) where j fits for its time limit; fills
 * fit. With real, nodes must also fit j right now (slot 0 starts). false
 * when none. */
bool pxc_tl_find(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, uint32_t k_from,
                 uint32_t k_to, bool real, struct pxc_tl_fit *fit);
void pxc_tl_commit(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j,
                   const struct pxc_tl_fit *fit);
bool pxc_tl_now_short(const struct px_core *c, const struct pxc_tl *tl, const struct pxc_job *j); /* backfill_plan.c */
/* A walk over the pools' nodes, leaf by leaf (pxc_tl_gpu_run). */
struct pxc_tl_cursor { uint32_t pool, leaf, q; };
/* Is there a node whose row holds g usable GPUs in every slot of [0, k)?
 * Scans from *cur on and leaves *cur at that node. For a series of calls
 * between takes-only changes to the plan with k never decreasing (a node
 * short once stays short), so over a cycle every node is read once plus
 * once per call. */
bool pxc_tl_gpu_run(const struct px_core *c, const struct pxc_tl *tl, struct pxc_tl_cursor *cur, uint32_t g,
                    uint32_t k);
/* Does node's row hold g usable GPUs in every slot of [0, k)? */
bool pxc_tl_gpu_run_node(const struct pxc_tl *tl, uint32_t node, uint32_t g, uint32_t k);
/* The node at the cursor (pxc_tl_gpu_run returned true). */
uint32_t pxc_tl_cursor_node(const struct px_core *c, const struct pxc_tl_cursor *cur);

/* ---- backfill_typed.c: per-type rows of nodes with several GPU types ----- */

/* Typed row ti of node (node has types). */
static inline uint8_t *pxc_tlt_row(const struct pxc_tl *tl, uint32_t node, uint32_t ti) {
  return &tl->tcell[(size_t)(tl->trow[node] + ti) * tl->stride + tl->off];
}
static inline bool pxc_tlt_has(const struct pxc_tl *tl, uint32_t node) {
  return tl->ntrows && tl->trow[node] != PX_NONE;
}
int pxc_tlt_init(struct px_core *c, struct pxc_tl *tl);
void pxc_tlt_fini(struct px_core *c, struct pxc_tl *tl);
uint32_t pxc_tlt_find(const struct px_core *c, const struct pxc_job *j, uint32_t node);
/* The index of j's GPU type among node's types: PX_NONE for an untyped or
 * exclusive job, or a node without types (the total then says it all).
 * Inline: the searches ask it per node, and mostly of untyped jobs. */
static inline uint32_t pxc_tlt_index(const struct px_core *c, const struct pxc_tl *tl, const struct pxc_job *j,
                                     uint32_t node) {
  if (j->gpu_type == PX_NONE || !pxc_tlt_has(tl, node) || j->shape.exclusive) return PX_NONE;
  return pxc_tlt_find(c, j, node);
}
/* GPUs gpus of node (all of them: whole) come back in slot k, each to its type. */
void pxc_tlt_release(const struct px_core *c, struct pxc_tl *tl, uint32_t node, px_bits64 gpus, bool whole,
                     uint32_t k);
/* Sums node's typed rows over [k0, S) as fill_cells does the cells: from
 * the free GPUs now (k0 = 0) or the cell before k0. */
void pxc_tlt_fill(const struct px_core *c, struct pxc_tl *tl, uint32_t node, uint32_t k0, bool usable);
void pxc_tlt_clear(const struct px_core *c, struct pxc_tl *tl, uint32_t node, uint32_t k0, uint32_t k1);
/* Takes (+1) or gives back (-1) g GPUs of type ti on node over [k0, k1);
 * true when a take clamped a cell (no exact undo). */
bool pxc_tlt_take(struct pxc_tl *tl, uint32_t node, uint32_t ti, uint32_t g, uint32_t k0, uint32_t k1, int sign);
/* The slide of slide_rows (backfill_plan.c), before tl->off moves. */
void pxc_tlt_slide(struct pxc_tl *tl, uint32_t m, bool back);
/* Copies the typed rows' S slots to dst (ntrows x S), or compares them (0: same). */
void pxc_tlt_copy(const struct pxc_tl *tl, uint8_t *dst);
int pxc_tlt_cmp(const struct pxc_tl *tl, const uint8_t *src);

/* ---- backfill.c ---------------------------------------------------------- */

/* What would let a blocked job run (the why text); a few per cycle. */
struct pxc_bf_hint {
  uint64_t job_id;
  int64_t max_time_s;        /* it would start now with --time <= this; 0: no */
  uint32_t max_nodes;        /* it would start now with -N this; 0: no */
  uint32_t other_part;       /* it would start now in this partition; PX_NONE: no */
  bool reserved;             /* holds a reservation (not only an estimate) */
};
#define PXC_BF_HINTS 32

/* Jobs of one per-node shape (single nodes and fixed gangs, backfill.c):
 * (nodes or units n, time limit d) found no room before
 * slot f, so neither does any gang with >= n nodes and >= d seconds. */
#define PXC_BF_FRONT 8
struct pxc_bf_front {
  uint32_t len;
  uint32_t n[PXC_BF_FRONT], f[PXC_BF_FRONT];
  int64_t d[PXC_BF_FRONT];
};

struct pxc_bf_lim { int64_t limit; uint32_t slot, grp; }; /* grp: its group (groups_build), in the padding;
                                                             slot: under the kept order its place in c->sort */
/* What the tail's groups read of a job: its time limit, g GPUs on each of n
 * nodes (g PX_NONE: it turns the tail off). Cached per slot for the kept
 * order's jobs (kept.c), whose shape and limit change only through an
 * update, which drops the order. */
struct pxc_bf_job { int64_t limit; uint32_t g, n; };
struct pxc_fit_memo { uint64_t key; uint32_t nnodes, off; }; /* a shape's placement: fit_nu[off ..] */
#define PXC_FIT_MEMO 64       /* shapes memoised per tail (a linear scan) */
void pxc_bf_job_of(const struct pxc_job *j, struct pxc_bf_job *out);
#define PXC_BF_NB 16          /* node-count buckets of the tail's groups (backfill_tail.c) */
#define PXC_BF_BEST 8         /* a group's shortest limits kept before its heap is built (backfill_tail.c) */
struct pxc_bf_class {         /* jobs left needing g GPUs on each of >= need nodes */
  uint32_t g, need;
  size_t off, n;              /* its heap: lims[off .. off + n) */
  struct pxc_bf_lim best[PXC_BF_BEST]; /* before the heaps: its PXC_BF_BEST first jobs by (limit, place) */
  uint32_t nbest, best_at;    /* of them; the first whose job may be left */
  bool best_all;              /* they are all its jobs */
  uint32_t top;               /* the kept order: its last step in lims (backfill_tail.c, kept_build) */
  struct pxc_tl_cursor wit;   /* where the search for more nodes goes on */
  uint32_t wit_off, nwit;     /* nodes found: wits[wit_off ..], holding [0, wit_k) as of ntakes wit_takes */
  uint32_t wit_k;
  uint64_t wit_takes;
};

extern const struct pxc_reserve_stage pxc_reserve_backfill;
/* backfill_tail.c: a new pass; can no job left in the queue start (c->starts_only)? */
void pxc_bf_tail_begin(struct px_core *c);
bool pxc_bf_tail_reached(struct px_core *c);
const struct pxc_bf_hint *pxc_bf_hint_get(const struct px_core *c, uint64_t job_id);

/* ---- preempt.c ----------------------------------------------------------- */

struct pxc_claim {            /* a pending preemptor's hold on the nodes it preempted on */
  uint64_t id;
  bool offered;               /* its victims had all stopped at a cycle's start: one cycle to start */
};

struct pxc_victim {           /* a job being preempted */
  uint64_t id, preemptor;
  int64_t start_s;            /* the run being preempted */
  int64_t kill_at;
  uint32_t preemptor_account;
  uint8_t mode, cause;
  bool killed;                /* PREEMPT action sent */
};

struct pxc_prejob {           /* a job's preemption history (survives requeue) */
  uint64_t id;
  uint32_t count;
  int64_t last_s;
};

struct pxc_pcand { uint32_t slot; uint64_t k1, k2, id; };

/* A running job as a victim search reads it (preempt.c, list_running):
 * copied once a cycle from its record, so that each search streams these
 * and reads the record (its nodes) of a candidate only, not of every
 * running job (their misses were a fifth of a preempting replay). */
struct pxc_runsum {
  uint64_t id, ngpu;
  int64_t start_s;
  uint32_t slot, priority, assoc;
  uint16_t qos, part;
  uint8_t flags;
};

extern const struct pxc_victims_stage pxc_victims_preempt;
/* Cycle start: PREEMPT actions for victims whose grace ended, --signal
 * warnings before time limits, forgetting victims that stopped. */
int pxc_preempt_begin(struct px_core *c, int64_t now, struct px_actions *out);
/* Kill time of a running job being preempted, or 0. */
int64_t pxc_preempt_kill_at(const struct px_core *c, const struct pxc_job *j);

/* ---- quota.c ------------------------------------------------------------- */

struct pxc_qacct {            /* an account with a guarantee or a cohort */
  uint32_t assoc, cohort;     /* cohort: string id or PX_NONE */
  uint64_t guaranteed, borrow_limit, lend_limit;
  uint64_t reclaiming;        /* GPUs its preemptors wait for (lends none of it) */
};

int pxc_quota_load(struct px_core *c, const struct px_conf *conf);
/* Room for associations up to index cap (acct.c grows the tree): 0 or
 * PX_ENOMEM (nothing changed). */
int pxc_quota_grow(struct px_core *c, uint32_t cap);
/* A new association is governed by its parent's quota account. */
void pxc_quota_adopt(struct px_core *c, uint32_t assoc);
/* The quota account governing assoc, or NULL. */
struct pxc_qacct *pxc_quota_of(const struct px_core *c, uint32_t assoc);
/* Is j entitled to reclaim (its account stays within its guarantee)? */
bool pxc_quota_entitled(const struct px_core *c, const struct pxc_job *j);
/* May a job (vgpu GPUs) of victim_assoc's quota account be reclaimed for
 * preemptor_assoc's, taken GPUs (this one included) being taken from it? Its
 * account must borrow in the same cohort, and once requeued the job must
 * not be within its own guarantee (else it would reclaim straight back).
 * With taken = vgpu = 0: is the account borrowing in that cohort at all? */
bool pxc_quota_reclaimable(const struct px_core *c, uint32_t victim_assoc, uint32_t preemptor_assoc,
                           uint64_t taken, uint64_t vgpu);
uint64_t pxc_quota_used(const struct px_core *c, const struct pxc_qacct *q);

/* ---- resv.c -------------------------------------------------------------- */

struct pxc_resv {
  uint32_t name;              /* string id */
  int64_t start_s, end_s;
  uint64_t *nodes;            /* bitset over nodes */
  uint32_t *list, nlist;
  uint32_t account;           /* PX_NONE: maintenance */
};

/* May j (running from now for its time limit) use node? */
bool pxc_resv_allows(const struct px_core *c, const struct pxc_job *j, uint32_t node, int64_t now,
                     enum px_reason *why);
void pxc_resv_plan(struct px_core *c, struct pxc_tl *tl);
/* --reservation at submit: the reservation must exist and be j's account's
 * (Slurm's "Requested reservation is invalid" / "Access denied"). */
int pxc_resv_check_use(const struct px_core *c, const struct pxc_job *j, const char *name, struct px_diag *d);

/* ---- kept.c: the LAS order kept between cycles ---------------------------- */

/* A LAS key changes only at discrete events: a job is queued (submit,
 * requeue), leaves (start, cancel) or is promoted (a time known in advance);
 * held jobs and the gate's other static verdicts stay until an event. So
 * the eligible jobs are kept sorted between cycles and a cycle copies them
 * instead of gating, keying and heapifying every pending job. Kept only
 * where provably equal to the full pass; anything else (a hold, a release,
 * an update, a job with dependencies or a future begin time, partitions or
 * the scheduler configuration changed) invalidates it and the next cycle
 * rebuilds it from the full pass (cycle.c, queue_eligible). */
enum { PXC_KEPT_NONE, PXC_KEPT_QUEUED, PXC_KEPT_IN, PXC_KEPT_GATED }; /* pxc_job.kept */

struct pxc_kept_promo { int64_t t_s; uint64_t id; uint32_t slot; };

struct pxc_kept {
  bool off;                   /* tests: the full pass every cycle */
  bool valid;
  bool used;                  /* this cycle's order is the kept one (cycle.c, take_in_order) */
  struct pxc_sortent *v, *w;  /* the eligible jobs, natural keys, descending (the cycle pops from
                                 the end); w: the merge's output, swapped with v */
  size_t n, cap, wcap, ndead; /* ndead: entries of v whose job left (slot PX_NONE) */
  struct pxc_sortent *add;    /* queued jobs (slot, id) to gate and key at the next cycle */
  size_t nadd, add_cap;
  struct pxc_kept_promo *promo; /* min-heap by t_s: when a kept job may be promoted */
  size_t npromo, promo_cap;
  uint32_t *part_n;           /* kept eligible jobs per partition */
  size_t part_cap, nogpu;     /* nogpu: kept jobs counted in c->nogpu_eligible */
  uint64_t fp;                /* fingerprint of what the gate and key read outside the jobs */
  uint32_t *snap;             /* the pending list at the cycle's start (its order: the full pass's) */
  size_t nsnap, snap_cap;
  uint32_t *pos, *at;         /* heap_as_full's scratch: per job slot, per snapshot position */
  size_t pos_cap, at_cap;
};

/* Is the order LAS (the only order kept)? */
bool pxc_kept_wanted(const struct px_core *c);
/* What the gate and the key read outside the jobs: the partitions' state,
 * time limits and tiers, the scheduler's configuration and the stages. */
uint64_t pxc_kept_fingerprint(const struct px_core *c);
void pxc_kept_invalidate(struct px_core *c);
/* jobs.c: a job joins or leaves the pending list (also counted by QoS:
 * pol->qos_pending). */
void pxc_kept_added(struct px_core *c, struct pxc_job *j);
void pxc_kept_removed(struct px_core *c, struct pxc_job *j);
/* cycle.c's full pass: begin, each pending job's gate verdict (e: its
 * eligible entry with the natural key, before pxc_policy_key), end. */
void pxc_kept_rebuild_begin(struct px_core *c);
void pxc_kept_rebuild_job(struct px_core *c, struct pxc_job *j, enum px_reason r, const struct pxc_sortent *e);
void pxc_kept_rebuild_end(struct px_core *c);
/* This cycle's eligible jobs into c->sort[0 .. n), descending, with
 * c->part_left and c->nogpu_eligible; returns n, or SIZE_MAX when the kept
 * order cannot be used (then the full pass runs). */
size_t pxc_kept_fill(struct px_core *c, int64_t now);

/* preempt.c: may a victim search still run this cycle? */
bool pxc_preempt_searches_left(const struct px_core *c);
/* id started or left: its claim on the nodes its victims freed ends. */
void pxc_claim_end(struct px_core *c, uint64_t id);
/* May j hold a claim (any preemptor while some claim exists, a superset)?
 * Then the placements and failures of other jobs of its shape say nothing
 * of its own: the shape caches (cycle.c) and take_other_fit's memo
 * (backfill.c) are bypassed. */
bool pxc_may_claim(const struct px_core *c, const struct pxc_job *j);
/* preempt.c: the running jobs' index (struct pxc_policy, run_idx). */
void pxc_running_started(struct px_core *c, uint32_t slot);
void pxc_running_left(struct px_core *c, uint32_t slot);
void pxc_running_unseen(struct px_core *c);
/* The running jobs' slots, ascending (n of them; every RUNNING slot),
 * built from every slot when not kept; NULL without memory. */
const uint32_t *pxc_running_slots(struct px_core *c, size_t *n);

/* ---- policy.c ------------------------------------------------------------ */

/* Builds this cycle's plan if not yet built. Until a job is blocked the plan
 * is not needed: without reservations every placement found now is free in
 * the plan for its whole limit, and jobs started before the build are
 * running when it reads them, which is the same plan as building first and
 * committing them (except with advance reservations: built at cycle start). */
void pxc_plan_ensure(struct px_core *c);

/* pol->preempt_kind's causes: PreemptType's QoS and partition-tier
 * preemption, and LAS's higher queue over a lower one. */
enum { PXC_PREEMPT_BY_QOS = 1u, PXC_PREEMPT_BY_TIER = 2u, PXC_PREEMPT_BY_LAS = 4u };

struct pxc_policy {
  /* backfill */
  struct pxc_tl tl;
  bool plan;                  /* backfill on: tl is built each cycle ... */
  bool plan_built;            /* ... when first needed (pxc_plan_ensure) */
  struct pxc_map cursor;      /* (shape, time limit) -> first slot not ruled out */
  struct pxc_map front_idx;   /* per-node gang shape -> fronts[] */
  struct pxc_bf_front *fronts;
  size_t nfronts, fronts_cap;
  uint32_t nresv;             /* reservations made this cycle */
  /* The pass's tail (backfill_tail.c; c->starts_only, the simulator): once no
   * job left in the queue can start this cycle, reservations are skipped. */
  struct pxc_bf_lim *lims;    /* the jobs left by group: a min-heap of time limits each */
  size_t lims_cap;
  struct pxc_bf_lim *lims_in; /* the jobs left in queue order with their groups (groups_build) */
  size_t lims_in_cap;
  struct pxc_bf_class *cls;   /* per (GPUs per node 0 .. maxg, node-count bucket) */
  size_t cls_cap;
  uint32_t *wits;             /* the groups' nodes found */
  size_t wits_cap;
  uint32_t ncls, cls_last;    /* groups; the last one found its nodes */
  bool lims_built, tail, tail_off;
  bool lims_heaped;           /* the groups' heaps are built (else their best[]: backfill_tail.c) */
  uint32_t tail_best;         /* tests: keep fewer of best[] (0: PXC_BF_BEST) */
  size_t lims_n;              /* lims_in's jobs */
  bool lims_pos;              /* lims[].slot is a place in c->sort (the kept order: jobs left are
                                 c->sort[0 .. sort_left)), not a job slot */
  struct pxc_bf_job *bf_jobs; /* per job slot, the kept order's jobs (kept.c, keep): the groups
                                 read this dense array, not a deep queue's records */
  size_t bf_jobs_cap;
  /* The tail's placements by shape (cycle.c, tail_find): while nothing
   * starts and no action is added, a shape's placement stays the same. */
  struct pxc_fit_memo *fits;
  size_t nfits, fits_cap;
  uint32_t *fit_nu;           /* each memo's nodes, then its units */
  size_t fit_len, fit_cap;
  uint64_t fits_started;      /* c->stats.started and the actions' count they hold for */
  size_t fits_out;
  bool fits_on;               /* within tail_rest */
  bool fits_off;              /* tests: search every time */
  /* bf_interval (issue 5): cycles between backfill passes are main passes */
  int64_t bf_last_s;          /* time of the last backfill pass; INT64_MIN: none yet */
  bool bf_owed;               /* a main pass since left a job waiting */
  bool *part_resv;            /* EASY: the partition's top job has one */
  struct pxc_bf_hint hints[PXC_BF_HINTS];
  uint32_t nhints;
  /* preemption */
  uint32_t preempt_kind;      /* PXC_PREEMPT_BY_*: what may preempt what */
  uint32_t **qos_preempt;     /* per QoS: bitset of QoS it may preempt */
  uint32_t *qos_pending;      /* per QoS: jobs in the pending list (kept.c's hooks; px_core_may_preempt) */
  uint32_t *qos_npreempt;
  uint8_t *qos_mode;
  int64_t *qos_grace_s, *qos_min_run_s;
  int32_t *qos_signal;
  uint8_t *part_mode;
  struct pxc_victim *victims;
  size_t nvictims, victims_cap;
  struct pxc_prejob *hist;
  size_t nhist, hist_cap;
  struct pxc_map hist_by_id;
  struct px_preempt_record *log;  /* ring of PX_CORE_PREEMPT_LOG */
  size_t log_head, log_len;
  struct pxc_pcand *cand, *cand_tmp; /* victim candidates; room for sorting them */
  size_t cand_cap, cand_tmp_cap;
  uint8_t *chosen;            /* per job slot: virtually released this search */
  size_t chosen_cap;
  bool victims_live;          /* this cycle may preempt (px_core_may_preempt): the victims stage runs */
  uint32_t tries;             /* victim searches this cycle */
  uint32_t hopeless;          /* LAS jobs this cycle that could not preempt (preempt.c, las_hopeless) */
  /* Running job slots, listed at the cycle's first victim search (a search
   * reads only them), and for LAS the GPUs they hold per queue above q
   * (las_above[q]: an upper bound of what LAS may preempt for a queue-q job). */
  struct pxc_runsum *running;
  size_t nrunning, running_cap;
  uint64_t running_cycle;     /* c->stats.cycles when listed */
  uint8_t *las_q;             /* per running job slot: its LAS queue this cycle, 0 if promoted */
  size_t las_q_cap;
  /* The slots of running jobs, ascending, so that listing them does not
   * read every job slot (a deep queue's pending records): kept by the
   * cycle's starts and jobs.c's requeues and drops; run_idx_ok is false
   * until a full scan built it and again after a job became RUNNING where
   * no hook saw it (restore.c: pxc_running_unseen). */
  uint32_t *run_idx;
  size_t nrun_idx, run_idx_cap;
  bool run_idx_ok;
  uint64_t las_above[PX_LAS_MAX_THRESHOLDS + 1];
  bool any_signal;            /* some job was submitted with --signal (the warning scan runs) */
  uint64_t *reclaimers;       /* pending jobs that preempted (bit 63: by reclaim: their account lends nothing) */
  size_t nreclaimers, reclaimers_cap;
  struct pxc_map preemptor_ids; /* the same ids, for the queue order */
  /* Claims (preempt.c): the nodes a preemptor's victims are freeing are
   * its own until it starts there or the cycle after they stopped ends. */
  struct pxc_claim *claims;
  size_t nclaims, claims_cap;
  uint64_t *claim_node;       /* per node: the claimant's id, 0 none (c->claim_of while any) */
  /* quotas */
  struct pxc_qacct *qacct;
  uint32_t nqacct;
  uint32_t *qacct_of;         /* per assoc: index into qacct or PX_NONE */
  /* advance reservations */
  struct pxc_resv *resv;
  size_t nresv_adv, resv_cap;
  uint32_t *hidden;           /* nodes hidden while placing again (nnodes) */
  struct pxc_kept kept;       /* kept.c */
};

#endif
