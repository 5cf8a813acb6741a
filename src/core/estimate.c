/*
 * estimate.c - when would a pending job start (sbatch --test-only), read
 * only: nothing a later cycle reads changes.
 *
 * Slurm 22.05's will-run test takes the earliest time the job fits as the
 * running jobs end (at their time limits), then pushes it later for the
 * pending jobs of its partition whose priority is not below its own (by
 * their CPU x time over the partition's CPUs; measured on the harness:
 * docs/slurm-migration.md). Here those jobs ahead get what the backfill
 * would give them instead: in a private copy of the backfill plan
 * (backfill_plan.c) built at `now`, each one ahead, in queue order, takes
 * its earliest fit; then the job's own earliest fit is searched. The
 * copy is private (the cycle's plan keeps its incremental state, its logs
 * and its caches), so the cost is one full build per call (nodes x slots)
 * plus at most 1,000 searches: about 60 ms of CPU on 10,000 nodes with
 * 100,000 jobs queued (the bench_core cluster), fine for a dry run a user
 * asks for now and then.
 *
 * The plan's slots are whole (backfill_window / backfill_resolution); a
 * start found in slot k is moved back to the latest release on its nodes
 * in (slot k - 1, slot k] -- a running job's limit, or a job ahead's
 * estimated start plus its limit -- which is Slurm's exact time when only
 * running jobs stand in the way.
 */
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "core/policy.h"

/* At most this many jobs ahead take their fit (the backfill's depth when
 * smaller): a deep queue's far end does not move the answer much. */
#define PXC_EST_AHEAD_MAX 1000

struct est_ahead { uint64_t k1, k2, id; uint32_t slot; };

static int ahead_cmp(const void *a, const void *b) {
  const struct est_ahead *x = a, *y = b;
  if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
  if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Waits for resources or for the jobs before it, as its last cycle said:
 * not gated (hold, begin time, dependency, partition) nor over a limit. */
static bool waits_for_room(const struct pxc_job *x, int64_t now) {
  if (x->flags & (PXC_F_HELD_USER | PXC_F_HELD_ADMIN) || x->begin_s > now || x->arr) return false;
  switch ((enum px_reason)x->reason) {
  case PX_REASON_NONE: case PX_REASON_PRIORITY: case PX_REASON_RESOURCES: case PX_REASON_TOPOLOGY:
  case PX_REASON_REQ_NODE_NOT_AVAIL: case PX_REASON_RESV_MAINT: case PX_REASON_PREEMPTING:
    return true;
  default:
    return false;
  }
}

/* Queue key, smaller first: the partition's tier, then (multifactor) the
 * priority at now, higher first; FIFO and LAS put every job of its tier
 * or above ahead of a job submitted now. */
static void est_key(const struct px_core *c, const struct pxc_job *x, int64_t now, struct est_ahead *e) {
  struct px_prio_factors f;
  uint32_t prio = 0;
  if (c->sched.order == PX_ORDER_MULTIFACTOR) pxc_prio_factors(c, x, now, &f), prio = f.priority;
  *e = (struct est_ahead){pxc_tier_key(c, x->part) | (UINT32_MAX - prio), (uint64_t)x->submit_s ^ (1ULL << 63),
                          x->id, 0};
}

/* Keeps e if among the cap first in queue order: v[0 .. *n) is a heap
 * whose top is the last of those kept (a deep queue is not sorted whole). */
static void keep_first(struct est_ahead *v, size_t *n, size_t cap, const struct est_ahead *e) {
  size_t i;
  if (*n < cap) {
    for (i = (*n)++; i && ahead_cmp(&v[(i - 1) / 2], e) < 0; i = (i - 1) / 2) v[i] = v[(i - 1) / 2];
    v[i] = *e;
    return;
  }
  if (!cap || ahead_cmp(e, &v[0]) >= 0) return;
  for (i = 0;;) { /* e replaces the top and goes down */
    size_t k = 2 * i + 1;
    if (k >= *n) break;
    if (k + 1 < *n && ahead_cmp(&v[k + 1], &v[k]) > 0) k++;
    if (ahead_cmp(&v[k], e) <= 0) break;
    v[i] = v[k], i = k;
  }
  v[i] = *e;
}

/* The pending jobs ahead of j, in queue order (a job submitted now comes
 * after every one of its priority, as in Slurm's estimate), the first cap
 * of them. *n: how many. */
static struct est_ahead *jobs_ahead(struct px_core *c, const struct pxc_job *j, int64_t now, size_t *n) {
  size_t cap = c->sched.backfill_depth && c->sched.backfill_depth < PXC_EST_AHEAD_MAX ? c->sched.backfill_depth
                                                                                     : PXC_EST_AHEAD_MAX;
  struct est_ahead mine, e, *v = pxc_calloc(c, cap + 1, sizeof *v);
  *n = 0;
  if (!v) return NULL;
  est_key(c, j, now, &mine);
  for (size_t i = 0; i < c->npending; i++) {
    const struct pxc_job *x = &c->jobs[c->pending[i]];
    if (x == j || x->state != PX_JOB_PENDING || !waits_for_room(x, now)) continue;
    est_key(c, x, now, &e);
    e.slot = c->pending[i];
    if (ahead_cmp(&e, &mine) < 0) keep_first(v, n, cap, &e);
  }
  qsort(v, *n, sizeof *v, ahead_cmp);
  return v;
}

/* When a running job's allocation is given back (its limit, or its
 * preemption kill time). */
static int64_t release_at(const struct px_core *c, const struct pxc_job *x) {
  int64_t end = x->time_limit_s >= INT64_MAX - x->start_s ? INT64_MAX : x->start_s + x->time_limit_s;
  int64_t kill = pxc_preempt_kill_at(c, x);
  return kill && kill < end ? kill : end;
}

/* What makes room, to the second: each running allocation's node and
 * release (sorted by time, read once), each job ahead's nodes and end (its
 * estimated start plus its limit); on: scratch marks of a fit's nodes. */
struct est_end { int64_t end_s; uint32_t node; };
struct est_ends {
  struct est_end *run, *v;
  size_t nrun, n, cap;
  uint8_t *on;
};

static int end_cmp(const void *a, const void *b) {
  const struct est_end *x = a, *y = b;
  return x->end_s < y->end_s ? -1 : x->end_s > y->end_s;
}

static int ends_init(struct px_core *c, struct est_ends *e) {
  size_t n = 0;
  for (size_t s = 0; s < c->njob_slots; s++)
    if (c->jobs[s].state == PX_JOB_RUNNING) n += c->jobs[s].nalloc;
  e->run = pxc_calloc(c, n + 1, sizeof *e->run);
  e->on = pxc_calloc(c, c->nnodes + 1, 1);
  if (!e->run || !e->on) return PX_ENOMEM;
  for (size_t s = 0; s < c->njob_slots; s++) {
    const struct pxc_job *x = &c->jobs[s];
    if (x->state != PX_JOB_RUNNING) continue;
    for (uint32_t i = 0; i < x->nalloc; i++) e->run[e->nrun++] = (struct est_end){release_at(c, x), x->alloc[i].node};
  }
  qsort(e->run, e->nrun, sizeof *e->run, end_cmp);
  return 0;
}

static void ends_fini(struct px_core *c, struct est_ends *e) {
  pxc_free(c, e->run);
  pxc_free(c, e->v);
  pxc_free(c, e->on);
}

/* The latest release on the nodes marked in e->on that falls in (after,
 * to] (after when none): running jobs' and the jobs ahead's. */
static int64_t last_release(const struct est_ends *e, int64_t after, int64_t to) {
  int64_t best = after;
  size_t lo = 0, hi = e->nrun;
  while (lo < hi) { /* the first running release after `after` */
    size_t mid = lo + (hi - lo) / 2;
    if (e->run[mid].end_s <= after) lo = mid + 1;
    else hi = mid;
  }
  for (size_t i = lo; i < e->nrun && e->run[i].end_s <= to; i++)
    if (e->on[e->run[i].node]) best = e->run[i].end_s;
  for (size_t i = 0; i < e->n; i++)
    if (e->v[i].end_s > best && e->v[i].end_s <= to && e->on[e->v[i].node]) best = e->v[i].end_s;
  return best;
}

/* The start of fit in seconds: its slot's time, or the latest release on
 * its nodes after the slot before began (what made room, to the second). */
static int64_t exact_start(const struct pxc_tl *tl, struct est_ends *e, const struct pxc_tl_fit *fit) {
  if (fit->slot == 0) return tl->now;
  int64_t at = pxc_tl_slot_time(tl, fit->slot), prev = pxc_tl_slot_time(tl, fit->slot - 1);
  for (uint32_t i = 0; i < fit->nnodes; i++) e->on[fit->nodes[i]] = 1;
  int64_t best = last_release(e, prev, at);
  for (uint32_t i = 0; i < fit->nnodes; i++) e->on[fit->nodes[i]] = 0;
  return best > prev ? best : at;
}

/* Job x ahead takes fit in the plan; its ends are noted. */
static int take_ahead(struct px_core *c, struct pxc_tl *tl, struct est_ends *ends, const struct pxc_job *x,
                      const struct pxc_tl_fit *fit) {
  int64_t start = exact_start(tl, ends, fit);
  int64_t end = x->time_limit_s >= INT64_MAX - start ? INT64_MAX : start + x->time_limit_s;
  if (PXC_GROW(c, ends->v, &ends->cap, ends->n + fit->nnodes)) return PX_ENOMEM;
  for (uint32_t i = 0; i < fit->nnodes; i++) ends->v[ends->n++] = (struct est_end){end, fit->nodes[i]};
  pxc_tl_commit(c, tl, x, fit);
  return 0;
}

/* Job x's earliest fit in the plan from the first slot its kind (shape
 * and time limit) may still fit in: the plan only loses capacity as the
 * jobs ahead take theirs, so where one job of a kind found no room, the
 * next one of that kind finds none either (backfill.c's cursor; most of a
 * deep queue is a few kinds). */
static bool find_from_kind(struct px_core *c, struct pxc_tl *tl, struct pxc_map *from, const struct pxc_job *x,
                           struct pxc_tl_fit *fit) {
  uint64_t key = (pxc_shape_hash(x) ^ (uint64_t)x->time_limit_s) & (UINT64_MAX >> 1);
  uint32_t k = 0;
  pxc_map_get(from, key, &k);
  bool found = k < tl->nslots && pxc_tl_find(c, tl, x, k, tl->nslots, false, fit);
  pxc_map_put(c, from, key, found ? fit->slot : tl->nslots); /* best effort: a cache */
  return found;
}

/* Fills the private plan with the jobs ahead's fits, then finds j's. */
static int plan_search(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, int64_t now,
                       struct est_ends *ends, struct pxc_tl_fit *fit, bool *found) {
  size_t n = 0;
  struct est_ahead *v = jobs_ahead(c, j, now, &n);
  if (!v) return PX_ENOMEM;
  pxc_tl_build(c, tl, now, true);
  struct pxc_map from = {0};
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const struct pxc_job *x = &c->jobs[v[i].slot];
    if (find_from_kind(c, tl, &from, x, fit)) rc = take_ahead(c, tl, ends, x, fit);
  }
  pxc_map_fini(c, &from);
  pxc_free(c, v);
  *found = !rc && pxc_tl_find(c, tl, j, 0, tl->nslots, false, fit);
  return rc;
}

/* The placer's answer now, when no job waits ahead: what the next cycle
 * would start (true), as px_core_job_fits_now. */
static bool starts_now_alone(struct px_core *c, const struct pxc_job *j, int64_t now, uint32_t *nodes,
                             uint32_t max, uint32_t *nnodes) {
  size_t n = 0;
  struct est_ahead *v = jobs_ahead(c, j, now, &n);
  pxc_free(c, v);
  if (!v || n) return false;
  return !px_core_job_fits_now(c, j->id, now, nodes, max, nnodes) && *nnodes;
}

int px_core_job_estimate(struct px_core *c, uint64_t job_id, int64_t now, int64_t *start_s, uint32_t *nodes,
                         uint32_t max, uint32_t *nnodes) {
  const struct pxc_job *j = pxc_job_find(c, job_id);
  *start_s = 0, *nnodes = 0;
  if (!j || j->state != PX_JOB_PENDING || j->arr) return PX_ENOENT;
  if (starts_now_alone(c, j, now, nodes, max, nnodes)) return *start_s = now, 0;
  *nnodes = 0;
  if (j->resv != PX_NONE) return 0; /* its window's nodes are blocked in the plan: only now is known */
  struct pxc_tl tl;
  int rc = pxc_tl_init(c, &tl, c->sched.backfill_window_s, c->sched.backfill_resolution_s);
  struct pxc_tl_fit fit;
  struct est_ends ends = {0};
  bool found = false;
  if (!rc) rc = ends_init(c, &ends);
  if (!rc) rc = plan_search(c, &tl, j, now, &ends, &fit, &found);
  if (!rc && found) {
    *start_s = exact_start(&tl, &ends, &fit);
    for (uint32_t i = 0; i < fit.nnodes && i < max; i++) nodes[i] = fit.nodes[i];
    *nnodes = fit.nnodes < max ? fit.nnodes : max;
  }
  ends_fini(c, &ends);
  pxc_tl_fini(c, &tl);
  return rc;
}
