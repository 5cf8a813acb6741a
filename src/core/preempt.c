/*
 * preempt.c - the `victims` stage (stage.h): gang- and topology-aware
 * preemption with grace, requeue and anti-thrashing.
 *
 * Who may preempt whom: by QoS (the preemptor's QoS lists the victim's, and
 * not the other way round: two QoS listing each other would ping-pong, so
 * neither preempts), by partition PriorityTier (a higher tier preempts jobs
 * of lower tiers on shared nodes), or by quota reclaim (quota.c: a job within
 * its account's guarantee preempts jobs of accounts borrowing in its cohort,
 * but never one that, requeued, would itself be within its guarantee and
 * reclaim back), or, with PriorityOrder=las and a PreemptMode, by a lower
 * LAS queue (prio.c: the victim has attained more service). A victim must have run its QoS's minimum run time, must not
 * be exempt (preempted PreemptExemptAfter times within PreemptExemptPeriod),
 * and the cluster and its account must be under their hourly rate limits.
 *
 * Choosing victims: candidates are sorted cheapest first (fewest GPU-hours
 * lost, then lowest priority, then youngest); their resources are released
 * virtually one by one until the real placer finds a placement for the
 * preemptor (checked when the freed GPUs could suffice, then in growing
 * steps); then victims off the placement are dropped, and each remaining one
 * is dropped if the placement survives without it, so no victim is more than
 * needed. Whole jobs only, so a gang is never left partly running; if the
 * preemptor cannot fit with every allowed victim gone, nobody is preempted.
 *
 * Grace: the victim gets a SIGNAL action now (its --signal, else the QoS's
 * GraceSignal, else SIGTERM) and a PREEMPT action when the grace period (its
 * QoS GraceTime, else its --signal lead time) ends, unless it stops first.
 * Every decision is logged (px_core_preempt_next) for the usage report.
 */
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"
#include "util/map.h"

#define PXC_PREEMPT_TRIES 16 /* victim searches per cycle: a bounded cost */
#define PXC_PREEMPT_HOPELESS 64 /* LAS jobs per cycle found unable to preempt without a search */

static struct pxc_victim *victim_run(const struct px_core *c, uint64_t id, int64_t start_s) {
  struct pxc_policy *pol = c->pol;
  for (size_t i = 0; pol && i < pol->nvictims; i++)
    if (pol->victims[i].id == id && pol->victims[i].start_s == start_s) return &pol->victims[i];
  return NULL;
}

static struct pxc_victim *victim_of(const struct px_core *c, const struct pxc_job *j) {
  return victim_run(c, j->id, j->start_s);
}

int64_t pxc_preempt_kill_at(const struct px_core *c, const struct pxc_job *j) {
  const struct pxc_victim *v = victim_of(c, j);
  return v ? v->kill_at : 0;
}

static struct pxc_prejob *hist_get(const struct px_core *c, uint64_t id) {
  uint32_t i;
  return pxc_map_get(&c->pol->hist_by_id, id, &i) ? &c->pol->hist[i] : NULL;
}

/* Preemptions logged since now - 3600 (of victims of account, or all). */
static uint32_t count_hour(const struct px_core *c, int64_t now, uint32_t account) {
  const struct pxc_policy *pol = c->pol;
  uint32_t n = 0;
  for (size_t i = 0; i < pol->log_len; i++) {
    const struct px_preempt_record *r =
        &pol->log[(pol->log_head + pol->log_len - 1 - i) % PX_CORE_PREEMPT_LOG];
    if (r->time_s <= now - 3600) break;
    n += account == PX_NONE || r->victim_account == account;
  }
  return n;
}

/* The victim's QoS mode, else its partition's, else the cluster's; OFF
 * means not preemptable, except by quota reclaim, which requeues. */
static enum px_preempt_mode mode_for(const struct px_core *c, uint32_t qos, uint32_t part, uint8_t flags,
                                     enum px_preempt_cause cause) {
  const struct pxc_policy *pol = c->pol;
  enum px_preempt_mode m = (enum px_preempt_mode)pol->qos_mode[qos];
  if (m == PX_PREEMPT_OFF) m = (enum px_preempt_mode)pol->part_mode[part];
  if (m == PX_PREEMPT_OFF) m = c->sched.preempt_mode;
  if (m == PX_PREEMPT_OFF && cause == PX_PREEMPT_BY_RECLAIM) m = PX_PREEMPT_REQUEUE;
  if (m == PX_PREEMPT_SUSPEND) m = PX_PREEMPT_REQUEUE; /* GPU memory stays held: not offered */
  if (m == PX_PREEMPT_REQUEUE && !(flags & PXC_F_REQUEUE)) m = PX_PREEMPT_CANCEL;
  return m;
}

static enum px_preempt_mode mode_of(const struct px_core *c, const struct pxc_job *v,
                                    enum px_preempt_cause cause) {
  return mode_for(c, v->qos, v->part, v->flags, cause);
}

static bool qos_lists(const struct pxc_policy *pol, uint32_t q, uint32_t other) {
  return pol->qos_preempt[q] && (pol->qos_preempt[q][other / 32] >> (other % 32)) & 1;
}


/* May p (LAS queue pq) preempt running v now? Sets the cause. Rate limits
 * and reclaim amounts are checked while choosing. v's LAS queue is the one
 * list_running read this cycle (las_q: 0 when promoted, so never above pq). */
static bool may_preempt(const struct px_core *c, const struct pxc_job *p, uint32_t pq, const struct pxc_runsum *v,
                        int64_t now, enum px_preempt_cause *cause) {
  const struct pxc_policy *pol = c->pol;
  if (v->id == p->id || victim_run(c, v->id, v->start_s)) return false;
  if (v->start_s >= now) return false; /* started this very cycle, after p was passed over */
  if (now - v->start_s < pol->qos_min_run_s[v->qos]) return false;
  const struct pxc_prejob *h = c->sched.preempt_exempt_after ? hist_get(c, v->id) : NULL; /* a lookup per victim */
  if (h && h->count >= c->sched.preempt_exempt_after &&
      now - h->last_s < (c->sched.preempt_exempt_s ? c->sched.preempt_exempt_s : 3600))
    return false;
  if ((pol->preempt_kind & PXC_PREEMPT_BY_QOS) && qos_lists(pol, p->qos, v->qos) && !qos_lists(pol, v->qos, p->qos))
    *cause = PX_PREEMPT_BY_QOS;
  else if ((pol->preempt_kind & PXC_PREEMPT_BY_TIER) && c->parts[p->part].tier > c->parts[v->part].tier)
    *cause = PX_PREEMPT_BY_TIER;
  else if ((pol->preempt_kind & PXC_PREEMPT_BY_LAS) && pq < pol->las_q[v->slot])
    *cause = PX_PREEMPT_BY_LAS;
  else if (pol->nqacct && pxc_quota_entitled(c, p) &&
           pxc_quota_reclaimable(c, v->assoc, p->assoc, 0, 0))
    *cause = PX_PREEMPT_BY_RECLAIM;
  else
    return false;
  if (mode_for(c, v->qos, v->part, v->flags, *cause) == PX_PREEMPT_OFF) return false;
  const struct pxc_job *j = &c->jobs[v->slot]; /* the record only for a candidate */
  for (uint32_t i = 0; i < j->nalloc; i++)
    if (pxc_node_in_part(c, j->alloc[i].node, p->part)) return true;
  return false;
}

/* Gives v's resources back to its nodes (sign +1) or takes them again (-1),
 * mirroring pxc_place_release/commit without touching v's record. */
static void virt_release(struct px_core *c, const struct pxc_job *v, int sign) {
  for (uint32_t i = 0; i < v->nalloc; i++) {
    const struct px_alloc *a = &v->alloc[i];
    struct pxc_node *n = &c->nodes[a->node];
    pxc_index_node_remove(c, a->node);
    uint32_t g = (uint32_t)__builtin_ctzll(a->gpus | 1ULL << 63);
    px_bits64 held = n->gpu_bad_held;
    if (a->gpu_share && sign > 0) pxc_share_give(n, g, a->gpu_share), n->gpu_bad_held = held; /* whole only if last */
    if (a->gpu_share && sign < 0) pxc_share_take(n, g, a->gpu_share, v->user);
    if (sign > 0) {
      if (!a->gpu_share) n->gpu_free |= a->gpus & ~n->gpu_bad;
      n->cpu_free += a->ncpu;
      n->mem_free += a->mem_mib;
      n->njobs--;
      n->excl = false;
      if (n->tenant != PX_NONE && --n->tenant_jobs == 0) n->tenant = PX_NONE;
    } else {
      if (!a->gpu_share) n->gpu_free &= ~a->gpus;
      n->cpu_free -= a->ncpu;
      n->mem_free -= a->mem_mib;
      n->njobs++;
      n->excl = v->shape.exclusive;
      if (c->parts[v->part].exclusive_account || n->tenant != PX_NONE) {
        n->tenant = v->account;
        n->tenant_jobs++;
      }
    }
    pxc_index_node_add(c, a->node);
  }
}

static bool placeable(struct px_core *c, struct pxc_job *p, int64_t now, struct pxc_place_result *res) {
  if (pxc_place_find(c, p, res)) return false;
  for (uint32_t i = 0; i < res->nnodes; i++) {
    enum px_reason why;
    if (!pxc_resv_allows(c, p, res->nodes[i], now, &why)) return false;
  }
  return true;
}

/* Candidate order: cheapest first (GPU-seconds of run lost, priority,
 * latest start), youngest id first on ties; a total order (ids are unique),
 * so every correct sort gives the same sequence. */
static bool cand_before(const struct pxc_pcand *x, const struct pxc_pcand *y) {
  if (x->k1 != y->k1) return x->k1 < y->k1;
  if (x->k2 != y->k2) return x->k2 < y->k2;
  return x->id > y->id;
}

static struct pxc_pcand cand_of(const struct pxc_runsum *v, int64_t now) {
  uint64_t run = now > v->start_s ? (uint64_t)(now - v->start_s) : 0;
  return (struct pxc_pcand){v->slot, v->ngpu * run, (uint64_t)v->priority << 32 | (UINT32_MAX - (uint32_t)v->start_s), v->id};
}

/* The candidates wait in a min-heap (cand_before) and leave it cheapest
 * first, only as many as a search takes (usually a few of hundreds):
 * sorting them all was a tenth of a LAS replay; the order taken is the
 * sorted order, a total one (ids are unique). */
static void cand_down(struct pxc_pcand *h, size_t n, size_t i) {
  struct pxc_pcand x = h[i];
  for (;;) {
    size_t k = 2 * i + 1;
    if (k >= n) break;
    if (k + 1 < n && cand_before(&h[k + 1], &h[k])) k++;
    if (!cand_before(&h[k], &x)) break;
    h[i] = h[k];
    i = k;
  }
  h[i] = x;
}

static struct pxc_pcand cand_pop(struct pxc_pcand *h, size_t *n) {
  struct pxc_pcand top = h[0];
  h[0] = h[--*n];
  if (*n) cand_down(h, *n, 0);
  return top;
}

/* Candidates, in pol->cand_tmp as a heap (grow_set takes them out into
 * pol->cand, cheapest first). pol->chosen per job slot: bit 0 chosen (its
 * resources virtually released), bits 1-3 cause + 1, bit 4 dropped while
 * shrinking. */
static int collect(struct px_core *c, struct pxc_job *p, int64_t now, size_t *ncand) {
  struct pxc_policy *pol = c->pol;
  if (PXC_GROW(c, pol->chosen, &pol->chosen_cap, c->njob_slots + 1)) return PX_ENOMEM;
  uint32_t pq = (pol->preempt_kind & PXC_PREEMPT_BY_LAS) ? pxc_las_queue(c, p, now) : 0;
  size_t n = 0;
  for (size_t i = 0; i < pol->nrunning; i++) {
    const struct pxc_runsum *v = &pol->running[i];
    enum px_preempt_cause cause;
    pol->chosen[v->slot] = 0;
    if (!may_preempt(c, p, pq, v, now, &cause)) continue;
    if (PXC_GROW(c, pol->cand_tmp, &pol->cand_tmp_cap, n + 1)) return PX_ENOMEM;
    pol->cand_tmp[n++] = cand_of(v, now);
    pol->chosen[v->slot] = (uint8_t)(cause + 1) << 1;
  }
  if (PXC_GROW(c, pol->cand, &pol->cand_cap, n + 1)) return PX_ENOMEM;
  for (size_t i = n / 2; i-- > 0;) cand_down(pol->cand_tmp, n, i);
  *ncand = n;
  return 0;
}

/* GPUs already taken this search from victims under the same quota account. */
static uint64_t taken_from(const struct px_core *c, size_t ncand, uint32_t assoc) {
  const struct pxc_policy *pol = c->pol;
  const struct pxc_qacct *q = pxc_quota_of(c, assoc);
  uint64_t t = 0;
  for (size_t i = 0; i < ncand; i++) {
    const struct pxc_job *v = &c->jobs[pol->cand[i].slot];
    if ((pol->chosen[pol->cand[i].slot] & 1) && pxc_quota_of(c, v->assoc) == q) t += pxc_job_ngpu(v);
  }
  return t;
}

/* Victims of account already chosen this search. */
static uint32_t chosen_of(const struct px_core *c, size_t ncand, uint32_t account) {
  uint32_t n = 0;
  for (size_t i = 0; i < ncand; i++) {
    uint32_t s = c->pol->cand[i].slot;
    n += (c->pol->chosen[s] & 1) && (account == PX_NONE || c->jobs[s].account == account);
  }
  return n;
}

static bool allowed_now(struct px_core *c, struct pxc_job *p, const struct pxc_job *v, size_t ncand,
                        int64_t now) {
  uint32_t lim = c->sched.preempt_account_max_per_hour;
  if (lim && count_hour(c, now, v->account) + chosen_of(c, ncand, v->account) >= lim) return false;
  lim = c->sched.preempt_max_per_hour;
  if (lim && count_hour(c, now, PX_NONE) + chosen_of(c, ncand, PX_NONE) >= lim) return false;
  enum px_preempt_cause cause = (enum px_preempt_cause)(((c->pol->chosen[v - c->jobs] >> 1) & 7) - 1);
  if (cause != PX_PREEMPT_BY_RECLAIM) return true;
  return pxc_quota_reclaimable(c, v->assoc, p->assoc, taken_from(c, ncand, v->assoc) + pxc_job_ngpu(v),
                               pxc_job_ngpu(v));
}

static void set_chosen(struct px_core *c, uint32_t slot, bool on) {
  struct pxc_policy *pol = c->pol;
  if (on == (pol->chosen[slot] & 1)) return;
  virt_release(c, &c->jobs[slot], on ? +1 : -1);
  pol->chosen[slot] = (uint8_t)((pol->chosen[slot] & ~1) | on);
}

static bool on_placement(const struct pxc_job *v, const struct pxc_place_result *res) {
  for (uint32_t i = 0; i < v->nalloc; i++)
    for (uint32_t k = 0; k < res->nnodes; k++)
      if (v->alloc[i].node == res->nodes[k]) return true;
  return false;
}

/* Releases candidates cheapest first until p fits; true with the set in
 * pol->chosen bit 0 (resources still virtually released). *ncand: the
 * candidates on the heap; then those taken off it, pol->cand[0 .. *ncand)
 * in order (none of the rest is chosen). */
static bool grow_set(struct px_core *c, struct pxc_job *p, size_t *ncand, int64_t now,
                     struct pxc_place_result *res) {
  struct pxc_policy *pol = c->pol;
  uint64_t need = pxc_job_ngpu(p), freed = 0;
  size_t taken = 0, tested = 0, next_test = 0, step = 1, left = *ncand;
  for (size_t i = 0; left; i++) {
    pol->cand[i] = cand_pop(pol->cand_tmp, &left);
    *ncand = i + 1;
    uint32_t s = pol->cand[i].slot;
    if (!allowed_now(c, p, &c->jobs[s], i, now)) continue;
    set_chosen(c, s, true);
    freed += pxc_job_ngpu(&c->jobs[s]);
    if (++taken < next_test || freed < need) continue;
    tested = taken;
    if (placeable(c, p, now, res)) return true;
    next_test = taken + step; /* test again after 1, 2, 4, ... more victims */
    step *= 2;
  }
  return taken && tested != taken && placeable(c, p, now, res);
}

/* Drops victims the placement does not need; res stays a valid placement. */
static void shrink_set(struct px_core *c, struct pxc_job *p, size_t ncand, int64_t now,
                       struct pxc_place_result *res) {
  struct pxc_policy *pol = c->pol;
  for (size_t i = 0; i < ncand; i++) {
    uint32_t s = pol->cand[i].slot;
    if ((pol->chosen[s] & 1) && !on_placement(&c->jobs[s], res)) {
      set_chosen(c, s, false);
      pol->chosen[s] |= 16; /* dropped: restored if the placer then wants it */
    }
  }
  if (!placeable(c, p, now, res)) { /* the placer now prefers other nodes: keep the set */
    for (size_t i = 0; i < ncand; i++)
      if (pol->chosen[pol->cand[i].slot] & 16) set_chosen(c, pol->cand[i].slot, true);
    placeable(c, p, now, res);
    return;
  }
  for (size_t i = ncand; i-- > 0;) { /* most expensive first */
    uint32_t s = pol->cand[i].slot;
    if (!(pol->chosen[s] & 1)) continue;
    set_chosen(c, s, false);
    if (!placeable(c, p, now, res)) set_chosen(c, s, true);
  }
  placeable(c, p, now, res);
}

static int note(struct px_core *c, const struct pxc_job *p, const struct pxc_job *v,
                enum px_preempt_cause cause, enum px_preempt_mode mode, int64_t now, double lost) {
  struct pxc_policy *pol = c->pol;
  struct px_preempt_record r = {v->id, p->id, v->account, p->account, cause, mode, now, lost};
  if (pol->log_len == PX_CORE_PREEMPT_LOG) {
    pol->log[pol->log_head] = r;
    pol->log_head = (pol->log_head + 1) % PX_CORE_PREEMPT_LOG;
  } else {
    pol->log[(pol->log_head + pol->log_len++) % PX_CORE_PREEMPT_LOG] = r;
  }
  struct pxc_prejob *h = hist_get(c, v->id);
  if (!h) {
    if (PXC_GROW(c, pol->hist, &pol->hist_cap, pol->nhist + 1) ||
        pxc_map_put(c, &pol->hist_by_id, v->id, (uint32_t)pol->nhist))
      return PX_ENOMEM;
    h = &pol->hist[pol->nhist++];
    *h = (struct pxc_prejob){v->id, 0, 0};
  }
  h->count++;
  h->last_s = now;
  return 0;
}

/* Appends the SIGNAL or PREEMPT action for a new victim and remembers it. */
static int emit(struct px_core *c, const struct pxc_job *p, const struct pxc_job *v,
                enum px_preempt_cause cause, int64_t now, struct px_actions *out) {
  struct pxc_policy *pol = c->pol;
  if (pxc_actions_reserve(out, 1, 0, 0) || PXC_GROW(c, pol->victims, &pol->victims_cap, pol->nvictims + 1))
    return PX_ENOMEM;
  enum px_preempt_mode mode = mode_of(c, v, cause);
  int64_t grace = pol->qos_grace_s[v->qos];
  if (!grace && v->signal_num) grace = v->signal_time_s;
  int32_t sig = v->signal_num ? v->signal_num : pol->qos_signal[v->qos] ? pol->qos_signal[v->qos] : 15;
  double lost = (double)pxc_job_ngpu(v) * (double)(now - v->start_s) / 3600.0;
  int rc = note(c, p, v, cause, mode, now, lost);
  if (rc) return rc;
  out->v[out->len++] = (struct px_action){
      .kind = grace > 0 ? PX_ACT_SIGNAL : PX_ACT_PREEMPT, .reason = PX_REASON_NONE, .job_id = v->id,
      .array_job_id = v->task_id != PX_NONE ? v->array_id : 0, .array_task_id = v->task_id,
      .preemptor_job_id = p->id, .signal = grace > 0 ? sig : 0, .preempt_mode = mode,
      .preempt_cause = cause, .kill_at_s = now + grace, .gpu_hours_lost = lost};
  pol->victims[pol->nvictims++] = (struct pxc_victim){v->id, p->id, v->start_s, now + grace, p->account,
                                                      (uint8_t)mode, (uint8_t)cause, grace <= 0};
  /* Its kill time moves its release in the plan (add_releases): its rows
   * are redone at the next build, which then needs not be a full one. A
   * victim leaves the list only when it stops, which redoes them again. */
  if (pol->plan)
    for (uint32_t i = 0; i < v->nalloc; i++) pxc_tl_dirty(&pol->tl, v->alloc[i].node);
  return 0;
}

static bool waits_on_victims(const struct px_core *c, const struct pxc_job *p) {
  for (size_t i = 0; i < c->pol->nvictims; i++)
    if (c->pol->victims[i].preemptor == p->id) return true;
  return false;
}

/* ---- claims ----------------------------------------------------------------
 * A preemptor's victims stop after the cycle that chose them (at once, or
 * after their grace), and the preemptor starts at a later cycle. Until then
 * the nodes of its placement are its claim: no other job is placed there
 * (pxc_node_fit). Without it a later preemptor of the same cycle counted
 * on the same free GPUs; at the next cycle the preemptors go first
 * (pxc_policy_key), but the second's start crossed the first's placement
 * or reservation, so it did not start, and the requeued victims, next in
 * the queue, took its nodes back, to be preempted again at the next event.
 * On a gang-heavy overload under QoS preemption 59% of 124k preemptions
 * were of jobs that had run under a minute, most of them restarted on the
 * nodes freed for a gang that then did not start. A claim ends when its preemptor starts or
 * leaves, or when its victims had all stopped at a cycle's start and that
 * cycle did not start it (its claim was no longer enough: it searches
 * again). */

static void claim_drop_at(struct px_core *c, size_t i) {
  struct pxc_policy *pol = c->pol;
  uint64_t id = pol->claims[i].id;
  for (uint32_t n = 0; n < c->nnodes; n++)
    if (pol->claim_node[n] == id) pol->claim_node[n] = 0;
  pol->claims[i] = pol->claims[--pol->nclaims];
  if (!pol->nclaims) c->claim_of = NULL;
}

static size_t claim_find(const struct pxc_policy *pol, uint64_t id) {
  for (size_t i = 0; i < pol->nclaims; i++)
    if (pol->claims[i].id == id) return i;
  return SIZE_MAX;
}

void pxc_claim_end(struct px_core *c, uint64_t id) {
  struct pxc_policy *pol = c->pol;
  size_t i = pol && pol->nclaims ? claim_find(pol, id) : SIZE_MAX;
  if (i != SIZE_MAX) claim_drop_at(c, i);
}

bool pxc_may_claim(const struct px_core *c, const struct pxc_job *j) {
  return c->claim_of && pxc_map_get(&c->pol->preemptor_ids, j->id, NULL);
}

/* p's claim is now res's nodes (any earlier one ends). */
static int claim_set(struct px_core *c, const struct pxc_job *p, const struct pxc_place_result *res) {
  struct pxc_policy *pol = c->pol;
  pxc_claim_end(c, p->id);
  if (!pol->claim_node && !(pol->claim_node = pxc_calloc(c, c->nnodes + 1, sizeof *pol->claim_node)))
    return PX_ENOMEM;
  if (PXC_GROW(c, pol->claims, &pol->claims_cap, pol->nclaims + 1)) return PX_ENOMEM;
  pol->claims[pol->nclaims++] = (struct pxc_claim){p->id, false};
  for (uint32_t i = 0; i < res->nnodes; i++) pol->claim_node[res->nodes[i]] = p->id;
  c->claim_of = pol->claim_node;
  return 0;
}

/* At a cycle's start: claims of preemptors gone, or offered a cycle
 * already with no victim left, end; the others are offered. */
static void claims_begin(struct px_core *c) {
  struct pxc_policy *pol = c->pol;
  for (size_t i = pol->nclaims; i-- > 0;) {
    struct pxc_claim *k = &pol->claims[i];
    const struct pxc_job *p = pxc_job_find(c, k->id);
    bool waits = p && p->state == PX_JOB_PENDING && waits_on_victims(c, p);
    if (!p || p->state != PX_JOB_PENDING || (!waits && k->offered)) claim_drop_at(c, i);
    else k->offered = !waits;
  }
}

/* ---- the running jobs' index ------------------------------------------------ */

/* Where slot is or would go in run_idx. */
static size_t run_idx_at(const struct pxc_policy *pol, uint32_t slot) {
  size_t lo = 0, hi = pol->nrun_idx;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (pol->run_idx[mid] < slot) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

void pxc_running_started(struct px_core *c, uint32_t slot) {
  struct pxc_policy *pol = c->pol;
  if (!pol || !pol->run_idx_ok) return;
  if (PXC_GROW(c, pol->run_idx, &pol->run_idx_cap, pol->nrun_idx + 1)) {
    pol->run_idx_ok = false; /* the next listing scans every slot */
    return;
  }
  size_t i = run_idx_at(pol, slot);
  if (i < pol->nrun_idx && pol->run_idx[i] == slot) return;
  memmove(pol->run_idx + i + 1, pol->run_idx + i, (pol->nrun_idx - i) * sizeof *pol->run_idx);
  pol->run_idx[i] = slot;
  pol->nrun_idx++;
}

void pxc_running_left(struct px_core *c, uint32_t slot) {
  struct pxc_policy *pol = c->pol;
  if (!pol || !pol->run_idx_ok) return;
  size_t i = run_idx_at(pol, slot);
  if (i == pol->nrun_idx || pol->run_idx[i] != slot) return;
  pol->nrun_idx--;
  memmove(pol->run_idx + i, pol->run_idx + i + 1, (pol->nrun_idx - i) * sizeof *pol->run_idx);
}

void pxc_running_unseen(struct px_core *c) {
  if (c->pol) c->pol->run_idx_ok = false;
}

/* Every slot read once: the index from scratch. */
static int run_idx_build(struct px_core *c) {
  struct pxc_policy *pol = c->pol;
  pol->nrun_idx = 0;
  for (size_t s = 0; s < c->njob_slots; s++) {
    if (c->jobs[s].state != PX_JOB_RUNNING) continue;
    if (PXC_GROW(c, pol->run_idx, &pol->run_idx_cap, pol->nrun_idx + 1)) return PX_ENOMEM;
    pol->run_idx[pol->nrun_idx++] = (uint32_t)s;
  }
  pol->run_idx_ok = true;
  return 0;
}

const uint32_t *pxc_running_slots(struct px_core *c, size_t *n) {
  struct pxc_policy *pol = c->pol;
  if (!pol->run_idx_ok && run_idx_build(c)) return NULL;
  *n = pol->nrun_idx;
  return pol->run_idx;
}

static struct pxc_runsum runsum_of(const struct px_core *c, const struct pxc_job *v, uint32_t s) {
  (void)c;
  return (struct pxc_runsum){.id = v->id, .ngpu = pxc_job_ngpu(v), .start_s = v->start_s,
                             .slot = s, .priority = v->priority, .assoc = v->assoc, .qos = v->qos,
                             .part = v->part, .flags = v->flags};
}

/* Lists the running jobs once per cycle (jobs that start later in the
 * cycle cannot be victims in it: may_preempt), with LAS's GPUs per queue
 * and each one's queue (las_q), in slot order. */
static int list_running(struct px_core *c, int64_t now) {
  struct pxc_policy *pol = c->pol;
  if (pol->running_cycle == c->stats.cycles) return 0;
  if (!pol->run_idx_ok && run_idx_build(c)) return PX_ENOMEM;
  pol->nrunning = 0;
  if (PXC_GROW(c, pol->las_q, &pol->las_q_cap, c->njob_slots + 1)) return PX_ENOMEM;
  memset(pol->las_above, 0, sizeof pol->las_above);
  for (size_t i = 0; i < pol->nrun_idx; i++) {
    uint32_t s = pol->run_idx[i];
    const struct pxc_job *v = &c->jobs[s];
    if (v->state != PX_JOB_RUNNING || !v->nalloc || v->arr) continue;
    if (PXC_GROW(c, pol->running, &pol->running_cap, pol->nrunning + 1)) return PX_ENOMEM;
    pol->running[pol->nrunning++] = runsum_of(c, v, (uint32_t)s);
    pol->las_q[s] = 0;
    if (!(pol->preempt_kind & PXC_PREEMPT_BY_LAS) || pxc_las_promoted(v, now)) continue;
    uint32_t q = pxc_las_queue(c, v, now);
    pol->las_q[s] = (uint8_t)q;
    for (uint32_t k = 0; k < q && k <= PX_LAS_MAX_THRESHOLDS; k++) pol->las_above[k] += pxc_job_ngpu(v);
  }
  pol->running_cycle = c->stats.cycles;
  return 0;
}

/* Only LAS may preempt for p, and even every running job of a lower queue
 * and every free GPU of its partition would not seat it: no search. */
static bool las_hopeless(struct px_core *c, const struct pxc_job *p, int64_t now) {
  const struct pxc_policy *pol = c->pol;
  if (pol->preempt_kind != PXC_PREEMPT_BY_LAS || pol->nqacct) return false;
  uint32_t q = pxc_las_queue(c, p, now);
  uint64_t above = q <= PX_LAS_MAX_THRESHOLDS ? pol->las_above[q] : 0;
  return above == 0 || above + pxc_part_free_gpus(c, p) < pxc_job_ngpu(p);
}

bool pxc_preempt_searches_left(const struct px_core *c) {
  return c->pol->victims_live && c->pol->tries < PXC_PREEMPT_TRIES;
}

/* Does the QoS of some pending job list another that does not list it
 * back (may_preempt's QoS cause for some pair)? */
static bool qos_pair_preempts(const struct px_core *c) {
  const struct pxc_policy *pol = c->pol;
  for (uint32_t q = 0; pol->qos_preempt && q < c->nqos; q++)
    for (uint32_t o = 0; pol->qos_preempt[q] && pol->qos_pending[q] && o < c->nqos; o++)
      if (qos_lists(pol, q, o) && !qos_lists(pol, o, q)) return true;
  return false;
}

static bool tiers_differ(const struct px_core *c) {
  for (uint32_t p = 1; p < c->nparts; p++)
    if (c->parts[p].tier != c->parts[0].tier) return true;
  return false;
}

/* Could may_preempt say yes for a pending job? Read from the configuration
 * and the pending jobs' QoS as they are now (O(QoS^2)), so a change takes
 * effect at the next cycle: no, when no pending job's QoS preempts another
 * (preempt.conf in the simulator without --qos-map: every job is normal)
 * and there are no tiers to preempt by, no LAS order, no quotas, and no
 * victim or preemptor left from an earlier search. */
bool px_core_may_preempt(const struct px_core *c) {
  const struct pxc_policy *pol = c->pol;
  if (!pol || !c->victims || !c->victims->find) return false;
  if (pol->nvictims || pol->nreclaimers || pol->nqacct || (pol->preempt_kind & PXC_PREEMPT_BY_LAS)) return true;
  return ((pol->preempt_kind & PXC_PREEMPT_BY_TIER) && tiers_differ(c)) ||
         ((pol->preempt_kind & PXC_PREEMPT_BY_QOS) && qos_pair_preempts(c));
}

static int victims_find(struct px_core *c, struct pxc_job *p, int64_t now, struct px_actions *out) {
  struct pxc_policy *pol = c->pol;
  pxc_plan_ensure(c); /* before any victim's kill time changes what the plan reads */
  if (p->reason != PX_REASON_RESOURCES && p->reason != PX_REASON_TOPOLOGY) return 0;
  if (waits_on_victims(c, p)) {
    p->reason = PX_REASON_PREEMPTING;
    return 0;
  }
  if (pol->tries >= PXC_PREEMPT_TRIES) return 0;
  if (c->sched.preempt_max_per_hour && count_hour(c, now, PX_NONE) >= c->sched.preempt_max_per_hour)
    return 0;
  int lrc = list_running(c, now);
  if (lrc) return lrc;
  if (las_hopeless(c, p, now)) { /* cheap, but bounded too: the rest of a deep queue waits for the next cycle */
    if (++pol->hopeless == PXC_PREEMPT_HOPELESS && c->lazy_s > 0) c->starts_only = true;
    return 0;
  }
  /* with lazy reasons (the simulator), once the searches are spent only
   * starts are left to find: the pass may stop as without preemption */
  if (++pol->tries == PXC_PREEMPT_TRIES && c->lazy_s > 0) c->starts_only = true;
  size_t ncand;
  int rc = collect(c, p, now, &ncand);
  if (rc || !ncand) return rc;
  struct pxc_place_result res;
  bool ok = grow_set(c, p, &ncand, now, &res);
  if (ok) shrink_set(c, p, ncand, now, &res);
  for (size_t i = 0; i < ncand; i++) {
    uint32_t s = pol->cand[i].slot;
    if (!(pol->chosen[s] & 1)) continue;
    set_chosen(c, s, false); /* victims run on until they stop */
    pol->chosen[s] |= ok;
  }
  bool reclaim = false;
  for (size_t i = 0; ok && i < ncand && rc == 0; i++) {
    uint32_t s = pol->cand[i].slot;
    if (!(pol->chosen[s] & 1)) continue;
    enum px_preempt_cause cause = (enum px_preempt_cause)(((pol->chosen[s] >> 1) & 7) - 1);
    reclaim |= cause == PX_PREEMPT_BY_RECLAIM;
    rc = emit(c, p, &c->jobs[s], cause, now, out);
  }
  if (rc == 0 && ok) { /* remember p (once) as a preemptor until it starts */
    uint32_t at;
    if (!pxc_map_get(&pol->preemptor_ids, p->id, &at)) {
      if (PXC_GROW(c, pol->reclaimers, &pol->reclaimers_cap, pol->nreclaimers + 1) ||
          pxc_map_put(c, &pol->preemptor_ids, p->id, (uint32_t)pol->nreclaimers))
        return PX_ENOMEM;
      at = (uint32_t)pol->nreclaimers;
      pol->reclaimers[pol->nreclaimers++] = p->id;
    }
    struct pxc_qacct *q = reclaim && !(pol->reclaimers[at] >> 63) ? pxc_quota_of(c, p->assoc) : NULL;
    if (q) q->reclaiming += pxc_job_ngpu(p);
    pol->reclaimers[at] |= (uint64_t)reclaim << 63;
  }
  if (ok) {
    p->reason = PX_REASON_PREEMPTING;
    if ((rc = claim_set(c, p, &res))) return rc;
    if (pol->plan) { /* what is free on its nodes now is kept for it too */
      struct pxc_tl_fit fit = {0, pxc_tl_end_slot(&pol->tl, 0, p->time_limit_s), res.nnodes, res.nodes, res.units};
      /* its victims still hold these nodes, so the take clamps: their rows
       * are redone at the next build rather than the whole plan */
      for (uint32_t i = 0; i < res.nnodes; i++) pxc_tl_dirty(&pol->tl, res.nodes[i]);
      pxc_tl_commit(c, &pol->tl, p, &fit);
    }
  }
  return rc;
}

const struct pxc_victims_stage pxc_victims_preempt = {"preempt", victims_find};

/* ---- cycle start ------------------------------------------------------- */

static int signal_action(struct px_actions *out, const struct pxc_job *j, int32_t sig) {
  if (pxc_actions_reserve(out, 1, 0, 0)) return PX_ENOMEM;
  out->v[out->len++] = (struct px_action){.kind = PX_ACT_SIGNAL, .reason = PX_REASON_NONE, .job_id = j->id,
                                          .array_job_id = j->task_id != PX_NONE ? j->array_id : 0,
                                          .array_task_id = j->task_id, .signal = sig};
  return 0;
}

int pxc_preempt_begin(struct px_core *c, int64_t now, struct px_actions *out) {
  struct pxc_policy *pol = c->pol;
  size_t keep = 0;
  for (uint32_t q = 0; q < pol->nqacct; q++) pol->qacct[q].reclaiming = 0;
  for (size_t i = 0; i < pol->nvictims; i++) {
    struct pxc_victim *v = &pol->victims[i];
    const struct pxc_job *j = pxc_job_find(c, v->id);
    if (!j || j->state != PX_JOB_RUNNING || j->start_s != v->start_s) continue; /* it stopped */
    if (!v->killed && v->kill_at <= now) {
      if (pxc_actions_reserve(out, 1, 0, 0)) return PX_ENOMEM;
      out->v[out->len++] = (struct px_action){
          .kind = PX_ACT_PREEMPT, .reason = PX_REASON_NONE, .job_id = v->id,
          .array_job_id = j->task_id != PX_NONE ? j->array_id : 0, .array_task_id = j->task_id,
          .preemptor_job_id = v->preemptor, .preempt_mode = (enum px_preempt_mode)v->mode,
          .preempt_cause = (enum px_preempt_cause)v->cause, .kill_at_s = now,
          .gpu_hours_lost = (double)pxc_job_ngpu(j) * (double)(now - j->start_s) / 3600.0};
      v->killed = true;
    }
    pol->victims[keep++] = *v;
  }
  pol->nvictims = keep;
  claims_begin(c);
  /* a reclaiming job's account lends none of what it reclaims until it starts */
  keep = 0;
  for (size_t i = 0; i < pol->nreclaimers; i++) {
    uint64_t id = pol->reclaimers[i] & ~(1ULL << 63);
    const struct pxc_job *pj = pxc_job_find(c, id);
    if (!pj || pj->state != PX_JOB_PENDING) {
      pxc_map_del(&pol->preemptor_ids, id);
      continue;
    }
    struct pxc_qacct *q = pol->reclaimers[i] >> 63 ? pxc_quota_of(c, pj->assoc) : NULL;
    if (q) q->reclaiming += pxc_job_ngpu(pj);
    pxc_map_put(c, &pol->preemptor_ids, id, (uint32_t)keep); /* existing key: no growth */
    pol->reclaimers[keep++] = pol->reclaimers[i];
  }
  pol->nreclaimers = keep;
  /* --signal=SIG@T: warn T seconds before the time limit, once per run */
  for (size_t s = 0; pol->any_signal && s < c->njob_slots; s++) {
    struct pxc_job *j = &c->jobs[s];
    if (j->state != PX_JOB_RUNNING || !j->signal_num || (j->flags & PXC_F_SIGNALLED) || !j->nalloc ||
        j->time_limit_s >= INT64_MAX / 4)
      continue;
    if (now < j->start_s + j->time_limit_s - j->signal_time_s) continue;
    if (signal_action(out, j, j->signal_num)) return PX_ENOMEM;
    j->flags |= PXC_F_SIGNALLED;
  }
  if (pol->nhist > 2 * c->nlive + 64) { /* forget the histories of jobs that left */
    size_t n = 0;
    for (size_t i = 0; i < pol->nhist; i++) {
      pxc_map_del(&pol->hist_by_id, pol->hist[i].id);
      if (pxc_job_find(c, pol->hist[i].id)) pol->hist[n++] = pol->hist[i];
    }
    pol->nhist = n;
    for (size_t i = 0; i < n; i++) pxc_map_put(c, &pol->hist_by_id, pol->hist[i].id, (uint32_t)i);
  }
  return 0;
}

bool px_core_preempt_next(const struct px_core *c, size_t *cursor, struct px_preempt_record *out) {
  const struct pxc_policy *pol = c->pol;
  if (!pol || *cursor >= pol->log_len) return false;
  *out = pol->log[(pol->log_head + (*cursor)++) % PX_CORE_PREEMPT_LOG];
  return true;
}

const char *px_preempt_cause_name(enum px_preempt_cause cause) {
  static const char *const names[] = {"qos", "tier", "reclaim", "las"};
  return (unsigned)cause < 4 ? names[cause] : "unknown";
}
