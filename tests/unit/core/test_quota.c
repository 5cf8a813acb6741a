/*
 * Guaranteed quotas with borrowing in a cohort, and reclaim. Accounts ta and
 * tb (users ua and ub) under root, both in cohort c1 unless said otherwise;
 * nodes of 8 GPUs; GPU figures below are worked from the guarantees.
 */
#include "px_test.h"

#include "core/policytest.h"

struct qa { uint32_t ta, tb; };

static struct px_conf *q_conf(uint32_t nnodes, uint64_t ga, uint64_t gb, struct qa *ids) {
  struct px_conf *c = tc_conf(nnodes, 8, 0, 0);
  ids->ta = px_testconf_account(c, "ta", 0, 1);
  ids->tb = px_testconf_account(c, "tb", 0, 1);
  px_testconf_user(c, "ua", ids->ta, 1);
  px_testconf_user(c, "ub", ids->tb, 1);
  c->accounts[ids->ta].guaranteed_gpus = ga;
  c->accounts[ids->tb].guaranteed_gpus = gb;
  c->accounts[ids->ta].cohort = "c1";
  c->accounts[ids->tb].cohort = "c1";
  c->sched.order = PX_ORDER_FIFO;
  return c;
}

static size_t npreemptions(struct px_core *c) {
  size_t cur = 0, n = 0;
  struct px_preempt_record r;
  while (px_core_preempt_next(c, &cur, &r)) n++;
  return n;
}

/* 16 GPUs, 8 guaranteed each. tb's first job is within its guarantee, its
 * second borrows ta's idle 8, its third would borrow 16 > 8 lendable. */
static void borrow_idle_quota(void **state) {
  (void)state;
  struct qa q;
  struct pf f = {.conf = q_conf(3, 8, 8, &q)};
  pf_open(&f);
  for (uint64_t i = 1; i <= 3; i++) pf_sub(&f, i, "ub", 1, 8, 3600, 0);
  pf_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 1));
  assert_non_null(tc_started(&f.out, 2));
  assert_int_equal(tc_reason(f.core, 3), PX_REASON_QUOTA_COHORT);
  struct px_job_view v = pf_view(f.core, 3);
  assert_string_equal(px_reason_name(v.reason), "QuotaCohortExhausted");
  assert_non_null(strstr(v.why, "account tb"));
  assert_non_null(strstr(v.why, "0 GPUs left to lend"));
  pf_close(&f);
}

/* BorrowingLimit=4: the second job would borrow 8. */
static void borrowing_limit(void **state) {
  (void)state;
  struct qa q;
  struct pf f = {.conf = q_conf(3, 8, 8, &q)};
  f.conf->accounts[q.tb].borrow_limit_gpus = 4;
  pf_open(&f);
  pf_sub(&f, 1, "ub", 1, 8, 3600, 0);
  pf_sub(&f, 2, "ub", 1, 8, 3600, 0);
  pf_sub(&f, 3, "ub", 0, 4, 3600, 0);
  pf_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 1));
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_QUOTA_BORROW_LIMIT);
  assert_non_null(tc_started(&f.out, 3)); /* borrows exactly 4 */
  pf_close(&f);
}

/* LendingLimit=0 on ta: nothing to borrow. A guarantee without a cohort is
 * a cap. */
static void lending_limit_and_plain_cap(void **state) {
  (void)state;
  struct qa q;
  struct pf f = {.conf = q_conf(3, 8, 8, &q)};
  f.conf->accounts[q.ta].lend_limit_gpus = 0;
  pf_open(&f);
  pf_sub(&f, 1, "ub", 1, 8, 3600, 0);
  pf_sub(&f, 2, "ub", 1, 8, 3600, 0);
  pf_cycle(&f, 0);
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_QUOTA_COHORT);
  pf_close(&f);
  f = (struct pf){.conf = q_conf(3, 8, 8, &q)};
  f.conf->accounts[q.tb].cohort = NULL;
  pf_open(&f);
  pf_sub(&f, 1, "ub", 1, 8, 3600, 0);
  pf_sub(&f, 2, "ub", 1, 8, 3600, 0);
  pf_cycle(&f, 0);
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_QUOTA_BORROW_LIMIT);
  pf_close(&f);
}

/*
 * Reclaim: tb fills both nodes (job 1 from 0, job 2 from 100: 8 borrowed).
 * ta's job 3 (8 GPUs, within its guarantee) at 1000 takes back the newest:
 * job 2 (7200 GPU-s against 8000). Requeued, job 2 would borrow again from
 * ta's now-used guarantee: QuotaCohortExhausted, and nothing thrashes.
 */
static void reclaim_newest_borrower(void **state) {
  (void)state;
  struct qa q;
  struct pf f = {.conf = q_conf(2, 8, 8, &q)};
  pf_open(&f);
  pf_borrow_two_nodes(&f, "ub");
  pf_sub(&f, 3, "ua", 1, 8, 86400, 1000);
  pf_cycle(&f, 1000);
  const struct px_action *a = pf_action(&f.out, PX_ACT_PREEMPT, 2);
  assert_non_null(a);
  assert_int_equal(a->preempt_cause, PX_PREEMPT_BY_RECLAIM);
  assert_int_equal(a->preempt_mode, PX_PREEMPT_REQUEUE);
  assert_int_equal(pf_count(&f.out, PX_ACT_PREEMPT), 1);
  assert_int_equal(pxc_job_requeue(f.core, 2, false, 1001, NULL), 0);
  pf_cycle(&f, 1001);
  assert_non_null(tc_started(&f.out, 3));
  for (int64_t t = 1100; t < 5000; t += 100) pf_cycle(&f, t);
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_QUOTA_COHORT);
  assert_int_equal(npreemptions(f.core), 1);
  pf_close(&f);
}

/*
 * Ping-pong with uneven sizes: one node, 4 guaranteed each. tb runs two
 * 3-GPU jobs (6: borrows 2 of ta's idle 4). ta's 4-GPU job reclaims the
 * newest (tb at 3; requeued it would make 6 > 4, so it is not entitled and
 * cannot reclaim back): free 2 + 3 = 5 >= 4. Then 20 cycles: no more.
 */
static void two_queue_ping_pong(void **state) {
  (void)state;
  struct qa q;
  struct pf f = {.conf = q_conf(1, 4, 4, &q)};
  pf_open(&f);
  pf_sub(&f, 1, "ub", 0, 3, 86400, 0);
  pf_cycle(&f, 0);
  pf_sub(&f, 2, "ub", 0, 3, 86400, 100);
  pf_cycle(&f, 100);
  assert_non_null(tc_started(&f.out, 2));
  pf_sub(&f, 3, "ua", 0, 4, 86400, 1000);
  pf_cycle(&f, 1000);
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 2));
  assert_int_equal(pxc_job_requeue(f.core, 2, false, 1001, NULL), 0);
  for (int64_t t = 1001; t < 3000; t += 100) {
    pf_cycle(&f, t);
    assert_int_equal(pf_count(&f.out, PX_ACT_PREEMPT), 0);
  }
  assert_int_equal(pf_view(f.core, 3).state, PX_JOB_RUNNING);
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_QUOTA_COHORT);
  assert_int_equal(npreemptions(f.core), 1);
  pf_close(&f);
}

/*
 * Reclaim never takes a job that could reclaim straight back: tb runs two
 * 3-GPU jobs (6 of its 4), alice (no quota) 2 GPUs: the node is full. ta
 * needs 4: tb's newest frees 3 (tb at 3 after, +3 = 6 > 4: allowed) but 3 is
 * not enough, and the other would leave tb at 0, where it would be within
 * its guarantee (0 + 3 <= 4) and reclaim back: so nobody is preempted.
 */
static void reclaim_never_preempts_a_job_that_could_reclaim_back(void **state) {
  (void)state;
  struct qa q;
  struct pf f = {.conf = q_conf(1, 4, 4, &q)};
  pf_open(&f);
  pf_sub(&f, 1, "ub", 0, 3, 86400, 0);
  pf_sub(&f, 2, "ub", 0, 3, 86400, 0);
  pf_sub(&f, 3, "alice", 0, 2, 86400, 0);
  pf_cycle(&f, 0);
  assert_int_equal(f.out.len, 3);
  pf_sub(&f, 4, "ua", 0, 4, 86400, 1000);
  pf_cycle(&f, 1000);
  assert_int_equal(f.out.len, 0);
  assert_int_equal(tc_reason(f.core, 4), PX_REASON_RESOURCES);
  pf_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(borrow_idle_quota),
      cmocka_unit_test(borrowing_limit),
      cmocka_unit_test(lending_limit_and_plain_cap),
      cmocka_unit_test(reclaim_newest_borrower),
      cmocka_unit_test(two_queue_ping_pong),
      cmocka_unit_test(reclaim_never_preempts_a_job_that_could_reclaim_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
