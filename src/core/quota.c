/*
 * quota.c - guaranteed GPU quotas with borrowing inside a cohort (the
 * Kueue/KAI model on Phalanx's account tree).
 *
 * A quota account is one with GuaranteedGPUs or a Cohort; a job is governed
 * by the nearest such account at or above its association, and its usage is
 * that account's running GPUs (the core keeps them per subtree). A job is
 * admitted when its account stays within its guarantee; beyond, it borrows:
 * the account's borrowing (usage over guarantee) may not exceed its
 * BorrowingLimit, and all borrowing in the cohort may not exceed what the
 * other members lend: each lends its idle guarantee up to its LendingLimit,
 * and nothing while one of its jobs is reclaiming (so the GPUs freed for it
 * cannot be borrowed away again). An account with a guarantee
 * and no cohort is capped at it. Reclaim (preempt.c) takes back borrowed
 * GPUs for a job within its guarantee. All checks are O(cohort members).
 */
#include "core/policy.h"

int pxc_quota_load(struct px_core *c, const struct px_conf *conf) {
  struct pxc_policy *pol = c->pol;
  uint32_t n = 0;
  for (uint32_t i = 0; i < conf->naccounts; i++)
    n += conf->accounts[i].guaranteed_gpus || conf->accounts[i].cohort;
  pol->qacct_of = pxc_calloc(c, c->nassoc + 1, sizeof *pol->qacct_of);
  pol->qacct = pxc_calloc(c, n + 1, sizeof *pol->qacct);
  if (!pol->qacct_of || !pol->qacct) return PX_ENOMEM;
  for (uint32_t i = 0; i < conf->naccounts; i++) {
    const struct px_conf_account *a = &conf->accounts[i];
    uint32_t q = PX_NONE;
    if (a->guaranteed_gpus || a->cohort) {
      q = pol->nqacct++;
      struct pxc_qacct *x = &pol->qacct[q];
      *x = (struct pxc_qacct){i, PX_NONE, a->guaranteed_gpus, a->borrow_limit_gpus, a->lend_limit_gpus, 0};
      if (a->cohort && pxc_intern(c, a->cohort, &x->cohort)) return PX_ENOMEM;
    } else if (a->parent != PX_NONE) {
      q = pol->qacct_of[a->parent]; /* parents come first */
    }
    pol->qacct_of[i] = q;
  }
  return 0;
}

int pxc_quota_grow(struct px_core *c, uint32_t cap) {
  struct pxc_policy *pol = c->pol;
  if (!pol || !pol->qacct_of) return 0;
  uint32_t *v = pxc_realloc(c, pol->qacct_of, ((size_t)cap + 1) * sizeof *v);
  if (!v) return PX_ENOMEM;
  pol->qacct_of = v;
  return 0;
}

void pxc_quota_adopt(struct px_core *c, uint32_t assoc) {
  struct pxc_policy *pol = c->pol;
  uint32_t parent = c->assoc[assoc].parent;
  if (pol && pol->qacct_of) pol->qacct_of[assoc] = parent == PX_NONE ? PX_NONE : pol->qacct_of[parent];
}

struct pxc_qacct *pxc_quota_of(const struct px_core *c, uint32_t assoc) {
  const struct pxc_policy *pol = c->pol;
  if (!pol || !pol->nqacct || assoc >= c->nassoc || pol->qacct_of[assoc] == PX_NONE) return NULL;
  return &pol->qacct[pol->qacct_of[assoc]];
}

uint64_t pxc_quota_used(const struct px_core *c, const struct pxc_qacct *q) {
  /* whole GPUs: the fractions running count up (a quota is in GPUs) */
  return (c->assoc[q->assoc].run_cgpus + PXC_SHARE_UNITS - 1) / PXC_SHARE_UNITS;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* What the rest of q's cohort lends, and how much of it others borrow. */
static void cohort_pool(const struct px_core *c, const struct pxc_qacct *q, uint64_t *lend,
                        uint64_t *borrowed) {
  const struct pxc_policy *pol = c->pol;
  *lend = *borrowed = 0;
  for (uint32_t i = 0; i < pol->nqacct; i++) {
    const struct pxc_qacct *m = &pol->qacct[i];
    if (m == q || m->cohort != q->cohort) continue;
    uint64_t used = pxc_quota_used(c, m);
    if (!m->reclaiming) /* an account taking its quota back lends nothing meanwhile */
      *lend += min_u64(m->guaranteed > used ? m->guaranteed - used : 0, m->lend_limit);
    *borrowed += used > m->guaranteed ? used - m->guaranteed : 0;
  }
}

/* Usage as j's admission sees it: GPUs its account's reclaiming jobs wait
 * for count as used, except j's own. */
static uint64_t used_for(const struct px_core *c, const struct pxc_qacct *q, const struct pxc_job *j) {
  uint64_t used = pxc_quota_used(c, q) + q->reclaiming;
  uint32_t at;
  if (q->reclaiming && pxc_map_get(&c->pol->preemptor_ids, j->id, &at) && c->pol->reclaimers[at] >> 63)
    used -= pxc_job_ngpu(j); /* its own reclaim */
  return used;
}

enum px_reason pxc_quota_admit(struct px_core *c, const struct pxc_job *j, uint32_t *wa, uint32_t *wb) {
  const struct pxc_qacct *q = pxc_quota_of(c, j->assoc);
  if (!q) return PX_REASON_NONE;
  uint64_t x = pxc_job_ngpu(j), used = used_for(c, q, j);
  if (used + x <= q->guaranteed) return PX_REASON_NONE;
  uint64_t over = used + x - q->guaranteed;
  *wa = q->assoc;
  if (q->cohort == PX_NONE) {
    *wb = (uint32_t)q->guaranteed;
    return PX_REASON_QUOTA_BORROW_LIMIT;
  }
  if (q->borrow_limit != PX_NOLIMIT && over > q->borrow_limit) {
    *wb = (uint32_t)q->borrow_limit;
    return PX_REASON_QUOTA_BORROW_LIMIT;
  }
  uint64_t lend, borrowed;
  cohort_pool(c, q, &lend, &borrowed);
  if (borrowed + over > lend) {
    uint64_t mine = used > q->guaranteed ? used - q->guaranteed : 0, taken = borrowed + mine;
    *wb = (uint32_t)(lend > taken ? lend - taken : 0); /* what is left to borrow */
    return PX_REASON_QUOTA_COHORT;
  }
  return PX_REASON_NONE;
}

bool pxc_quota_entitled(const struct px_core *c, const struct pxc_job *j) {
  const struct pxc_qacct *q = pxc_quota_of(c, j->assoc);
  return q && used_for(c, q, j) + pxc_job_ngpu(j) <= q->guaranteed;
}

bool pxc_quota_reclaimable(const struct px_core *c, uint32_t victim_assoc, uint32_t preemptor_assoc,
                           uint64_t taken, uint64_t vgpu) {
  const struct pxc_qacct *v = pxc_quota_of(c, victim_assoc), *p = pxc_quota_of(c, preemptor_assoc);
  if (!v || !p || v == p || v->cohort == PX_NONE || v->cohort != p->cohort) return false;
  uint64_t used = pxc_quota_used(c, v);
  if (used <= v->guaranteed || taken > used) return false;
  return used - taken + vgpu > v->guaranteed;
}
