/*
 * policy.c - the issue-4 policies' state and their hooks into the core:
 * choosing the backfill and preemption stages from the configuration,
 * copying QoS/partition preemption settings, quotas and advance
 * reservations, the work at the start of each cycle, and the part of the
 * `why` text these policies explain (which limit, which reservation, the
 * plan's expected start and what would let the job run now).
 */
#include <stdio.h>
#include <string.h>

#include "core/policy.h"

int pxc_policy_select(struct px_core *c) {
  struct pxc_policy *pol = pxc_calloc(c, 1, sizeof *pol);
  if (!pol) return PX_ENOMEM;
  c->pol = pol;
  pol->part_resv = pxc_calloc(c, c->nparts + 1, sizeof *pol->part_resv);
  pol->hidden = pxc_calloc(c, c->nnodes + 1, sizeof *pol->hidden);
  if (!pol->part_resv || !pol->hidden) return PX_ENOMEM;
  if (!c->sched.backfill_depth) c->sched.backfill_depth = UINT32_MAX; /* 0: not configured */
  pol->bf_last_s = INT64_MIN;
  if (c->sched.backfill == PX_BACKFILL_NONE) return 0;
  int rc = pxc_tl_init(c, &pol->tl, c->sched.backfill_window_s, c->sched.backfill_resolution_s);
  if (rc) return rc;
  pol->plan = true;
  c->reserve = &pxc_reserve_backfill;
  return 0;
}

static int load_preempt(struct px_core *c, const struct px_conf *conf) {
  struct pxc_policy *pol = c->pol;
  const char *t = conf->sched.preempt_type;
  pol->preempt_kind = (t && strstr(t, "qos") ? PXC_PREEMPT_BY_QOS : 0u) |
                      (t && strstr(t, "partition_prio") ? PXC_PREEMPT_BY_TIER : 0u);
  uint32_t nq = c->qos_cap + 1; /* QoS added online (acct.c) have their rows */
  pol->qos_preempt = pxc_calloc(c, nq, sizeof *pol->qos_preempt);
  pol->qos_mode = pxc_calloc(c, nq, sizeof *pol->qos_mode);
  pol->qos_grace_s = pxc_calloc(c, nq, sizeof *pol->qos_grace_s);
  pol->qos_min_run_s = pxc_calloc(c, nq, sizeof *pol->qos_min_run_s);
  pol->qos_signal = pxc_calloc(c, nq, sizeof *pol->qos_signal);
  pol->qos_pending = pxc_calloc(c, nq, sizeof *pol->qos_pending);
  pol->part_mode = pxc_calloc(c, c->nparts + 1, sizeof *pol->part_mode);
  pol->log = pxc_calloc(c, PX_CORE_PREEMPT_LOG, sizeof *pol->log);
  if (!pol->qos_preempt || !pol->qos_mode || !pol->qos_grace_s || !pol->qos_min_run_s || !pol->qos_signal || !pol->qos_pending ||
      !pol->part_mode || !pol->log)
    return PX_ENOMEM;
  for (uint32_t q = 0; q < c->nqos; q++) {
    const struct px_conf_qos *cq = &conf->qos[q];
    pol->qos_mode[q] = (uint8_t)cq->preempt_mode;
    pol->qos_grace_s[q] = cq->grace_time_s;
    pol->qos_min_run_s[q] = cq->min_runtime_s;
    pol->qos_signal[q] = cq->grace_signal;
    if (!cq->npreempt) continue;
    if (!(pol->qos_preempt[q] = pxc_calloc(c, nq / 32 + 1, sizeof **pol->qos_preempt))) return PX_ENOMEM;
    for (uint32_t i = 0; i < cq->npreempt; i++)
      if (cq->preempt[i] < c->nqos) pol->qos_preempt[q][cq->preempt[i] / 32] |= 1u << (cq->preempt[i] % 32);
  }
  for (uint32_t p = 0; p < c->nparts; p++) pol->part_mode[p] = (uint8_t)conf->partitions[p].preempt_mode;
  return 0;
}

void pxc_policy_qos_added(struct px_core *c, uint32_t q) {
  struct pxc_policy *pol = c->pol;
  if (!pol || !pol->qos_mode) return;
  pol->qos_mode[q] = (uint8_t)c->sched.preempt_mode;
  pol->qos_grace_s[q] = pol->qos_min_run_s[q] = 0;
  pol->qos_signal[q] = 0;
}

uint32_t pxc_policy_qos_preempted_by(const struct px_core *c, uint32_t q) {
  const struct pxc_policy *pol = c->pol;
  for (uint32_t k = 0; pol && pol->qos_preempt && k < c->nqos; k++)
    if (pol->qos_preempt[k] && (pol->qos_preempt[k][q / 32] >> (q % 32) & 1)) return k;
  return PX_NONE;
}

int pxc_policy_load(struct px_core *c, const struct px_conf *conf) {
  int rc;
  if ((rc = load_preempt(c, conf)) || (rc = pxc_quota_load(c, conf))) return rc;
  if (c->sched.order == PX_ORDER_LAS && c->sched.preempt_mode != PX_PREEMPT_OFF)
    c->pol->preempt_kind |= PXC_PREEMPT_BY_LAS; /* LAS: a higher queue preempts a lower one */
  if (c->pol->preempt_kind || c->pol->nqacct) c->victims = &pxc_victims_preempt;
  for (uint32_t i = 0; i < conf->nreservations; i++) {
    const struct px_conf_resv *r = &conf->reservations[i];
    struct px_resv_spec s = {r->name, r->start_s, r->end_s, r->nodes, r->nnodes, r->partition,
                             r->ngpus, r->account, r->maintenance};
    if ((rc = pxc_resv_add(c, &s, 0, NULL))) return rc == PX_ENOMEM ? rc : PX_EINVAL;
  }
  return 0;
}

void pxc_policy_free(struct px_core *c) {
  struct pxc_policy *pol = c->pol;
  if (!pol) return;
  pxc_tl_fini(c, &pol->tl);
  for (uint32_t q = 0; pol->qos_preempt && q < c->qos_cap; q++) pxc_free(c, pol->qos_preempt[q]);
  for (size_t i = 0; i < pol->nresv_adv; i++) {
    pxc_free(c, pol->resv[i].nodes);
    pxc_free(c, pol->resv[i].list);
  }
  void *v[] = {pol->part_resv, pol->qos_preempt, pol->qos_mode, pol->qos_grace_s, pol->qos_min_run_s,
               pol->qos_signal, pol->qos_pending, pol->part_mode, pol->victims, pol->hist, pol->log, pol->cand, pol->cand_tmp,
               pol->chosen, pol->claims, pol->claim_node, pol->qacct, pol->qacct_of, pol->resv, pol->hidden, pol->reclaimers, pol->fronts, pol->lims, pol->cls, pol->wits, pol->running, pol->las_q,
               pol->lims_in, pol->kept.v, pol->kept.w, pol->kept.add, pol->kept.promo, pol->kept.part_n, pol->kept.snap, pol->kept.pos, pol->kept.at, pol->run_idx,
               pol->bf_jobs, pol->fits, pol->fit_nu};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) pxc_free(c, v[i]);
  pxc_map_fini(c, &pol->cursor);
  pxc_map_fini(c, &pol->front_idx);
  pxc_map_fini(c, &pol->hist_by_id);
  pxc_map_fini(c, &pol->preemptor_ids);
  pxc_free(c, pol);
  c->pol = NULL;
  c->claim_of = NULL; /* pol->claim_node, freed above */
}

/* bf_interval: a backfill pass once the interval has passed since the last
 * one; the cycles between are Slurm's main passes: priority order, a job
 * that cannot start holds back its partition (the block stage), at most
 * default_queue_depth jobs tried. A backfill pass tries at most
 * bf_max_job_test jobs. */
static void choose_pass(struct px_core *c, int64_t now) {
  struct pxc_policy *pol = c->pol;
  const struct px_conf_sched *s = &c->sched;
  uint32_t cap = 0;
  c->main_pass = pol->plan && s->bf_interval_s > 0 && pol->bf_last_s != INT64_MIN && now >= pol->bf_last_s &&
                 now - pol->bf_last_s < s->bf_interval_s;
  if (c->main_pass) {
    c->reserve = &pxc_reserve_block;
    cap = s->default_queue_depth;
  } else if (pol->plan) {
    c->reserve = &pxc_reserve_backfill;
    pol->bf_last_s = now;
    pol->bf_owed = false;
    cap = s->bf_max_job_test;
  }
  c->tests_left = cap ? cap : UINT32_MAX;
}

void pxc_policy_main_pass_done(struct px_core *c) {
  bool waiting = c->pass_cut;
  for (uint32_t p = 0; p < c->nparts && !waiting; p++) waiting = c->part_blocked[p];
  if (waiting) c->pol->bf_owed = true;
}

int64_t px_core_next_pass_s(const struct px_core *c) {
  const struct pxc_policy *pol = c->pol;
  return pol && pol->bf_owed ? pol->bf_last_s + c->sched.bf_interval_s : 0;
}

int pxc_policy_begin(struct px_core *c, int64_t now, struct px_actions *out) {
  struct pxc_policy *pol = c->pol;
  pol->tries = pol->hopeless = 0;
  choose_pass(c, now);
  int rc = pxc_preempt_begin(c, now, out);
  if (rc) return rc;
  /* no pair of jobs could preempt (preempt.conf without a QoS that
   * preempts another): the cycle runs as without the victims stage */
  pol->victims_live = px_core_may_preempt(c);
  pol->plan_built = false;
  if (pol->plan && pol->nresv_adv) pxc_plan_ensure(c);
  return 0;
}

void pxc_plan_ensure(struct px_core *c) {
  struct pxc_policy *pol = c->pol;
  if (!pol->plan || pol->plan_built) return;
  /* advance reservations move releases: whole. Victims' kill times
   * move theirs too, but their rows are marked to be redone (preempt.c,
   * emit): with LAS's preemptions full builds were a fifth of its time on
   * a gang-heavy overload. */
  pxc_tl_build(c, &pol->tl, c->now, pol->nresv_adv);
  pol->plan_built = true;
}

void pxc_plan_node_changed(struct px_core *c, uint32_t node, bool availability) {
  struct pxc_policy *pol = c->pol;
  if (!pol || !pol->plan) return;
  if (availability) pol->tl.base_ok = false;
  else pxc_tl_dirty(&pol->tl, node);
}

void pxc_policy_key(const struct px_core *c, uint64_t id, uint64_t *k1) {
  if (c->pol->preemptor_ids.len && pxc_map_get(&c->pol->preemptor_ids, id, NULL)) *k1 = 0;
}

/* ---- why ----------------------------------------------------------------- */

static void reason_text(struct px_core *c, const struct pxc_job *j, char *w, size_t n) {
  const char *acct = j->why_a < c->nassoc ? pxc_str(c, c->assoc[j->why_a].name) : "?";
  switch ((enum px_reason)j->reason) {
  case PX_REASON_QUOTA_BORROW_LIMIT:
    snprintf(w, n, "admit: account %s would borrow beyond its limit (guarantee plus BorrowingLimit; "
                   "limit %u GPUs); waits for its own jobs to end", acct, j->why_b);
    break;
  case PX_REASON_QUOTA_COHORT:
    snprintf(w, n, "admit: account %s is over its guarantee and its cohort has %u GPUs left to lend; "
                   "waits for idle quota (LendingLimit) in the cohort", acct, j->why_b);
    break;
  case PX_REASON_RESV_MAINT:
    snprintf(w, n, "place: the free nodes are reserved for maintenance before the time limit would end; "
                   "a shorter --time or other nodes would let it run");
    break;
  case PX_REASON_RESV_ACCOUNT:
    snprintf(w, n, "place: the free nodes are reserved for another account before the time limit "
                   "would end; a shorter --time or other nodes would let it run");
    break;
  case PX_REASON_PREEMPTING:
    snprintf(w, n, "victims: running jobs are being preempted for it; it starts when they stop");
    break;
  default: break;
  }
}

void pxc_policy_why(struct px_core *c, const struct pxc_job *j, char *w, size_t n) {
  if (!c->pol) return;
  size_t len = strlen(w);
  if (c->pol->plan && !c->main_pass && j->reason == PX_REASON_PRIORITY) /* backfill's Priority: the reserve stage */
    snprintf(w, n, "reserve: it would fit now but would delay the reservations of higher-priority jobs");
  if (!len) reason_text(c, j, w, n);
  len = strlen(w);
  if (!c->pol->plan || j->state != PX_JOB_PENDING || !len) return;
  const struct pxc_bf_hint *h = pxc_bf_hint_get(c, j->id);
  if (j->expected_start_s)
    len += (size_t)snprintf(w + len, len < n ? n - len : 0, "; backfill: expected start %lld (%s)",
                            (long long)j->expected_start_s, h && h->reserved ? "reserved" : "estimate");
  else if (j->reason == PX_REASON_RESOURCES || j->reason == PX_REASON_PRIORITY)
    len += (size_t)snprintf(w + len, len < n ? n - len : 0,
                            "; backfill: no start found within the backfill window");
  if (!h) return;
  if (h->max_time_s && len < n)
    len += (size_t)snprintf(w + len, n - len, "; would start now with --time<=%lld", (long long)h->max_time_s);
  if (h->max_nodes && len < n)
    len += (size_t)snprintf(w + len, n - len, "; would start now with --nodes=%u", h->max_nodes);
  if (h->other_part != PX_NONE && len < n)
    snprintf(w + len, n - len, "; would start now in partition %s", pxc_str(c, c->parts[h->other_part].name));
}
