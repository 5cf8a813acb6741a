/*
 * gated.c - the multifactor queue's gate verdicts and priority inputs kept
 * between cycles (core_int.h, struct pxc_gent).
 *
 * A cycle gated every pending job (holds, begin time, dependencies, its
 * partition's state and time limit) and keyed it from its record: on a deep
 * queue, two cache misses per job and cycle, the larger part of a cycle
 * that starts nothing (on the gang-heavy overload with a preempting QoS map
 * three quarters of the cycles). A job's verdict changes only at events:
 * a hold, a release or an update (jobs.c: pxc_kept_invalidate), a change of
 * the partitions or the configuration (the fingerprint, read each cycle),
 * or, for a job with a dependency or a begin time still ahead, with time
 * and with other jobs (VOLATILE: gated from its record every cycle). And
 * its multifactor priority reads only a few of its fields (struct
 * pxc_prio_in) besides the fair share of its association and the time,
 * which are read each cycle. So each pending job keeps an entry at its
 * place in c->pending (moved as the list moves), and a cycle reads the
 * dense entries instead of the records: the same eligible jobs, in the
 * same order, with the same keys, so the same heap.
 *
 * What the full pass also wrote into every record, the entries leave to
 * whoever reads it: a job's priority is written when it is tried (cycle.c,
 * try_job: a running job's priority is the one it started with, the only
 * one read; a pending job's view computes its own), and the marks of the
 * jobs left when the queue-order walk or the pass's tail needs them
 * (cycle.c, mark_rest; backfill_tail.c, groups_build).
 */
#include <string.h>

#include "core/policy.h"
#include "util/map.h"

bool pxc_gated_wanted(const struct px_core *c) {
  return c->pol && !c->gent_off && c->sched.order == PX_ORDER_MULTIFACTOR && !c->sched.weight_jobsize &&
         !c->sched.weight_tres;
}

/* The kept order's fingerprint and what the priority reads besides. */
static uint64_t fingerprint(const struct px_core *c) {
  uint64_t h = px_hash_u64(pxc_kept_fingerprint(c) ^ c->max_part_factor);
  h = px_hash_u64(h ^ c->max_qos_prio);
  for (uint32_t p = 0; c->sched.weight_partition && p < c->nparts; p++)
    h = px_hash_u64(h ^ c->parts[p].job_factor);
  for (uint32_t q = 0; c->sched.weight_qos && q < c->nqos; q++) h = px_hash_u64(h ^ c->qos[q].priority);
  return h;
}

bool pxc_gated_usable(struct px_core *c) {
  c->gent_live = false;
  if (!c->gent_valid) return false;
  if (!pxc_gated_wanted(c) || fingerprint(c) != c->gent_fp) return c->gent_valid = false;
  return true;
}

/* Best effort (a cache): without room the next cycle is a full pass. The
 * first entries come with the first full pass, not with the first submit. */
void pxc_gated_reserve(struct px_core *c) {
  if (c->gent_cap && pxc_gated_wanted(c) && PXC_GROW(c, c->gent, &c->gent_cap, c->npending + 1))
    c->gent_valid = false;
}

void pxc_gated_added(struct px_core *c, size_t i) {
  if (i < c->gent_cap) c->gent[i].st = PXC_GATED_NEW;
  else c->gent_valid = false;
}

void pxc_gated_moved(struct px_core *c, size_t i, size_t last) {
  if (c->gent_valid) c->gent[i] = c->gent[last];
}

void pxc_gated_rebuild_begin(struct px_core *c) {
  c->gent_valid = false;
  c->gent_rebuild = pxc_gated_wanted(c) && !PXC_GROW(c, c->gent, &c->gent_cap, c->npending + 1);
}

static bool volatile_gate(const struct pxc_job *j, enum px_reason r) {
  return j->deps || r == PX_REASON_BEGIN_TIME || r == PX_REASON_DEPENDENCY || r == PX_REASON_DEP_NEVER;
}

void pxc_gated_note(struct px_core *c, size_t i, const struct pxc_job *j, enum px_reason r) {
  if (i >= c->gent_cap) return; /* only when the rebuild found no room: it ends invalid */
  struct pxc_gent *g = &c->gent[i];
  g->st = volatile_gate(j, r) ? PXC_GATED_VOLATILE : r != PX_REASON_NONE ? PXC_GATED_OUT : PXC_GATED_IN;
  g->prio = j->priority; /* this cycle's, keyed from the record (a volatile job's too) */
  if (g->st != PXC_GATED_IN) return;
  g->from_s = 1, g->until_s = 0; /* no memo yet */
  pxc_prio_in_of(j, &g->in);
  g->submit_s = j->submit_s;
  g->id = j->id;
  g->nogpu = pxc_job_ngpu(j) == 0 || j->shape.share;
}

void pxc_gated_rebuild_end(struct px_core *c) {
  if (!c->gent_rebuild) return; /* no room: the full pass again */
  c->gent_rebuild = false;
  c->gent_fp = fingerprint(c);
  c->gent_valid = true;
}

/* ---- the priorities' memo ------------------------------------------------ */

/*
 * A pending job's priority (pxc_prio_simple) moves with time only through
 * its age, and the computed value never decreases as time passes with its
 * fair share fixed: the wait's conversion, the quotient by PriorityMaxAge
 * (or 1 once capped), the product by the weight (not negative), each sum
 * with a term that does not move, the floor and the clamps are all
 * monotone, each rounded as it is. So if it is P at t0 and P at t1, it is
 * P at every time between: a priority found again at a later time holds
 * until then, while the association's fair share is the same double.
 * An entry keeps the span over which its priority holds; a cycle reads the
 * memo instead of computing a quotient and a floor per pending job.
 */
void pxc_gated_fs(struct px_core *c) {
  size_t had = c->gent_fs_cap, had_gen = c->gent_fs_gen_cap;
  c->gent_fs_ok = !PXC_GROW(c, c->gent_fs, &c->gent_fs_cap, c->nassoc + 1) &&
                  !PXC_GROW(c, c->gent_fs_gen, &c->gent_fs_gen_cap, c->nassoc + 1);
  if (!c->gent_fs_ok) return; /* no memo this cycle: pxc_gated_prio computes */
  if (c->gent_fs_cap > had) memset(c->gent_fs + had, 0, (c->gent_fs_cap - had) * sizeof *c->gent_fs);
  if (c->gent_fs_gen_cap > had_gen)
    memset(c->gent_fs_gen + had_gen, 0, (c->gent_fs_gen_cap - had_gen) * sizeof *c->gent_fs_gen);
  for (uint32_t a = 0; a < c->nassoc; a++)
    if (memcmp(&c->gent_fs[a], &c->assoc[a].fairshare, sizeof(double))) {
      memcpy(&c->gent_fs[a], &c->assoc[a].fairshare, sizeof(double));
      c->gent_fs_gen[a]++;
    }
}

/* The latest time until which priority p, found at now, holds (now: only
 * then): a constant one forever; else the estimate of when the age term
 * reaches the next whole priority, a second short, checked there. */
static int64_t prio_until(const struct px_core *c, const struct pxc_prio_in *in, int64_t now, uint32_t p) {
  const struct px_conf_sched *w = &c->sched;
  if ((in->flags & (PXC_F_HELD_USER | PXC_F_HELD_ADMIN | PXC_F_ADMIN_PRIO)) || !w->weight_age || !in->eligible_s)
    return INT64_MAX;
  if (now <= in->eligible_s) return now; /* no age yet: it starts after */
  if (w->max_age_s <= 0 || now - in->eligible_s >= w->max_age_s) return INT64_MAX; /* capped */
  int64_t cap = in->eligible_s + w->max_age_s;
  if (pxc_prio_simple(c, in, cap) == p) return INT64_MAX;
  double v = pxc_prio_sum(c, in, now);
  double secs = (floor(v) + 1 - v) * (double)w->max_age_s / w->weight_age - 1;
  if (!(secs >= 1)) return now;
  int64_t t = secs < (double)(cap - now) ? now + (int64_t)secs : cap;
  return pxc_prio_simple(c, in, t) == p ? t : now;
}

uint32_t pxc_gated_prio_new(struct px_core *c, struct pxc_gent *g, int64_t now) {
  if (!c->gent_fs_ok || g->in.assoc >= c->nassoc) return pxc_prio_simple(c, &g->in, now);
  uint32_t p = pxc_prio_simple(c, &g->in, now);
  g->fs_gen = c->gent_fs_gen[g->in.assoc];
  g->from_s = now;
  g->until_s = prio_until(c, &g->in, now, p);
  return p;
}
