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
 * and its caches), so the cost is one full build per call: nodes x slots,
 * fine for a dry run a user asks for.
 *
 * The plan's slots are whole (backfill_window / backfill_resolution); a
 * start found in slot k is moved back to the latest end of a running job
 * on its nodes that falls in slot k - 1 .. k, which is Slurm's exact time
 * when only running jobs stand in the way.
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

/* The pending jobs ahead of j, in queue order (a job submitted now comes
 * after every one of its priority, as in Slurm's estimate). *n: how many
 * (at most the cap). */
static struct est_ahead *jobs_ahead(struct px_core *c, const struct pxc_job *j, int64_t now, size_t *n) {
  struct est_ahead mine, *v = pxc_calloc(c, c->npending + 1, sizeof *v);
  *n = 0;
  if (!v) return NULL;
  est_key(c, j, now, &mine);
  for (size_t i = 0; i < c->npending; i++) {
    const struct pxc_job *x = &c->jobs[c->pending[i]];
    if (x == j || x->state != PX_JOB_PENDING || !waits_for_room(x, now)) continue;
    est_key(c, x, now, &v[*n]);
    v[*n].slot = c->pending[i];
    if (ahead_cmp(&v[*n], &mine) < 0) (*n)++;
  }
  qsort(v, *n, sizeof *v, ahead_cmp);
  size_t cap = c->sched.backfill_depth && c->sched.backfill_depth < PXC_EST_AHEAD_MAX ? c->sched.backfill_depth
                                                                                     : PXC_EST_AHEAD_MAX;
  if (*n > cap) *n = cap;
  return v;
}

/* When a running job's allocation is given back (its limit, or its
 * preemption kill time). */
static int64_t release_at(const struct px_core *c, const struct pxc_job *x) {
  int64_t end = x->time_limit_s >= INT64_MAX - x->start_s ? INT64_MAX : x->start_s + x->time_limit_s;
  int64_t kill = pxc_preempt_kill_at(c, x);
  return kill && kill < end ? kill : end;
}

/* What the jobs ahead give back, to the second: each one's node and end
 * (its estimated start plus its limit). */
struct est_ends {
  struct est_end { int64_t end_s; uint32_t node; } *v;
  size_t n, cap;
};

/* The latest release on the nodes marked in on that falls in (after, to]
 * (after when none): running jobs' and the jobs ahead's. */
static int64_t last_release(const struct px_core *c, const struct est_ends *ahead, const uint8_t *on, int64_t after,
                            int64_t to) {
  int64_t best = after;
  for (size_t s = 0; s < c->njob_slots; s++) {
    const struct pxc_job *x = &c->jobs[s];
    if (x->state != PX_JOB_RUNNING || !x->nalloc) continue;
    int64_t end = release_at(c, x);
    if (end <= best || end > to) continue;
    for (uint32_t i = 0; i < x->nalloc; i++)
      if (on[x->alloc[i].node]) best = end;
  }
  for (size_t i = 0; i < ahead->n; i++)
    if (ahead->v[i].end_s > best && ahead->v[i].end_s <= to && on[ahead->v[i].node]) best = ahead->v[i].end_s;
  return best;
}

/* The start of fit in seconds: its slot's time, or the latest release on
 * its nodes after the slot before began (what made room, to the second). */
static int64_t exact_start(struct px_core *c, const struct pxc_tl *tl, const struct est_ends *ahead,
                           const struct pxc_tl_fit *fit) {
  if (fit->slot == 0) return tl->now;
  int64_t at = pxc_tl_slot_time(tl, fit->slot), prev = pxc_tl_slot_time(tl, fit->slot - 1);
  uint8_t *on = pxc_calloc(c, c->nnodes + 1, 1);
  if (!on) return at;
  for (uint32_t i = 0; i < fit->nnodes; i++) on[fit->nodes[i]] = 1;
  int64_t best = last_release(c, ahead, on, prev, at);
  pxc_free(c, on);
  return best > prev ? best : at;
}

/* Job x ahead takes fit in the plan; its ends are noted. */
static int take_ahead(struct px_core *c, struct pxc_tl *tl, struct est_ends *ends, const struct pxc_job *x,
                      const struct pxc_tl_fit *fit) {
  int64_t start = exact_start(c, tl, ends, fit);
  int64_t end = x->time_limit_s >= INT64_MAX - start ? INT64_MAX : start + x->time_limit_s;
  if (PXC_GROW(c, ends->v, &ends->cap, ends->n + fit->nnodes)) return PX_ENOMEM;
  for (uint32_t i = 0; i < fit->nnodes; i++) ends->v[ends->n++] = (struct est_end){end, fit->nodes[i]};
  pxc_tl_commit(c, tl, x, fit);
  return 0;
}

/* Fills the private plan with the jobs ahead's fits, then finds j's. */
static int plan_search(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, int64_t now,
                       struct est_ends *ends, struct pxc_tl_fit *fit, bool *found) {
  size_t n = 0;
  struct est_ahead *v = jobs_ahead(c, j, now, &n);
  if (!v) return PX_ENOMEM;
  pxc_tl_build(c, tl, now, true);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const struct pxc_job *x = &c->jobs[v[i].slot];
    if (pxc_tl_find(c, tl, x, 0, tl->nslots, false, fit)) rc = take_ahead(c, tl, ends, x, fit);
  }
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
  if (!rc) rc = plan_search(c, &tl, j, now, &ends, &fit, &found);
  if (!rc && found) {
    *start_s = exact_start(c, &tl, &ends, &fit);
    for (uint32_t i = 0; i < fit.nnodes && i < max; i++) nodes[i] = fit.nodes[i];
    *nnodes = fit.nnodes < max ? fit.nnodes : max;
  }
  pxc_free(c, ends.v);
  pxc_tl_fini(c, &tl);
  return rc;
}
