/*
 * A service's replica in the core: a job with no time limit (it never ends
 * on its own). Backfill must never plan a start behind it as if it ended,
 * and a partition's MaxTime does not refuse it (a batch job of the same
 * length is refused).
 */
#include "px_test.h"

#include "core/policytest.h"
#include "util/units.h"

static struct px_conf *conf3(void) {
  struct px_conf *c = tc_conf(3, 8, 0, 0);
  c->sched.order = PX_ORDER_FIFO;
  c->sched.backfill = PX_BACKFILL_CONSERVATIVE;
  c->sched.backfill_resolution_s = 100;
  c->sched.backfill_window_s = 10000;
  return c;
}

static void replica(struct pf *f, uint64_t id, int64_t now) {
  struct px_jobspec s = tc_spec("alice", 0, 8);
  s.time_limit_s = PX_TIME_UNLIMITED;
  s.service = "web";
  s.replica = 0;
  pf_sub_spec(f, id, &s, now);
}

/*
 * 3 nodes. R (a replica, 8 GPUs) on node 0, A (8 GPUs, 1000 s) on node 1.
 * C needs all 3 nodes: R never ends, so C has no expected start at all
 * (not "after R's time limit"), and D (8 GPUs, 5000 s) backfills on node 2
 * at once: no reservation of C's stands in its way.
 */
static void backfill_never_plans_behind_a_replica(void **state) {
  (void)state;
  struct pf f = {.conf = conf3()};
  pf_open(&f);
  replica(&f, 1, 0);
  pf_sub(&f, 2, "alice", 0, 8, 1000, 0);
  pf_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 1));
  assert_int_equal(tc_started(&f.out, 1)->time_limit_s, PX_TIME_UNLIMITED);
  assert_non_null(tc_started(&f.out, 2));
  pf_sub(&f, 3, "bob", 3, 8, 1000, 10);
  pf_sub(&f, 4, "bob", 0, 8, 5000, 10);
  pf_cycle(&f, 10);
  assert_int_equal(pf_view(f.core, 3).expected_start_s, 0);
  assert_non_null(tc_started(&f.out, 4));
  /* with A gone, C still never starts while R runs; R's end lets it */
  pf_end(&f, 2, 1000);
  pf_end(&f, 4, 1000);
  pf_cycle(&f, 1000);
  assert_null(tc_started(&f.out, 3));
  assert_int_equal(pf_view(f.core, 3).expected_start_s, 0);
  pf_end(&f, 1, 2000);
  pf_cycle(&f, 2000);
  assert_non_null(tc_started(&f.out, 3));
  pf_close(&f);
}

/* MaxTime bounds batch work; a replica has none and is not refused. */
static void replica_not_bound_by_max_time(void **state) {
  (void)state;
  struct pf f = {.conf = conf3()};
  f.conf->partitions[0].max_time_s = 3600;
  pf_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 8);
  s.time_limit_s = PX_TIME_UNLIMITED;
  struct px_diag d;
  enum px_reason r;
  assert_int_equal(pxc_submit(f.core, 1, &s, 0, &r, &d), PX_ELIMIT);
  replica(&f, 2, 0);
  pf_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 2));
  pf_close(&f);
}

/* --exclude (a spread service's replicas): never placed on a listed node,
 * also by backfill; a bad list is refused naming the field. */
static void exclude_keeps_jobs_off_nodes(void **state) {
  (void)state;
  struct pf f = {.conf = conf3()};
  pf_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.time_limit_s = 100;
  s.exclude = "n[00000-00001]";
  pf_sub_spec(&f, 1, &s, 0);
  s.exclude = "n00002,n00000";
  pf_sub_spec(&f, 2, &s, 0);
  pf_cycle(&f, 0);
  assert_int_equal(pf_node(&f.out, 1), 2);
  assert_int_equal(pf_node(&f.out, 2), 1);
  /* every node excluded: it could never run, refused at submit */
  struct px_diag d;
  enum px_reason r;
  s.exclude = "n[00000-00002]";
  assert_int_equal(pxc_submit(f.core, 3, &s, 0, &r, &d), PX_ELIMIT);
  /* two nodes excluded, the third busy: it waits, never planned on them */
  s.gpus_per_node = 8;
  s.exclude = "n[00000-00001]";
  pf_sub_spec(&f, 6, &s, 1);
  pf_cycle(&f, 1);
  assert_null(tc_started(&f.out, 6));
  assert_int_equal(pf_view(f.core, 6).expected_start_s, 100); /* job 1 ends at 100 on n00002 */
  s.gpus_per_node = 1;
  s.exclude = "n09999";
  assert_int_equal(pxc_submit(f.core, 4, &s, 0, &r, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "exclude: no node named n09999"));
  s.exclude = "n[0-";
  assert_int_not_equal(pxc_submit(f.core, 5, &s, 0, &r, &d), 0);
  assert_non_null(strstr(d.msg, "exclude: not a list of nodes"));
  pf_close(&f);
}

/*
 * Batch borrows a service account's idle quota and gives it back when the
 * service scales up. svc and batch guarantee 8 GPUs each in one cohort, 2
 * nodes of 8: batch's second job (from 100) borrows svc's idle 8. svc's
 * new replica (8 GPUs, no time limit, not requeueable, as the controller
 * submits it) reclaims it at 1000 like any job within its guarantee, and
 * starts once the borrower is requeued.
 */
static void replica_reclaims_lent_quota(void **state) {
  (void)state;
  struct px_conf *c = tc_conf(2, 8, 0, 0);
  uint32_t svc = px_testconf_account(c, "svc", 0, 1), batch = px_testconf_account(c, "batch", 0, 1);
  px_testconf_user(c, "us", svc, 1);
  px_testconf_user(c, "ub", batch, 1);
  c->accounts[svc].guaranteed_gpus = c->accounts[batch].guaranteed_gpus = 8;
  c->accounts[svc].cohort = c->accounts[batch].cohort = "c1";
  c->sched.order = PX_ORDER_FIFO;
  struct pf f = {.conf = c};
  pf_open(&f);
  pf_borrow_two_nodes(&f, "ub");
  struct px_jobspec s = tc_spec("us", 1, 8);
  s.time_limit_s = PX_TIME_UNLIMITED;
  s.requeue = false;
  s.service = "web";
  s.replica = 1;
  pf_sub_spec(&f, 3, &s, 1000);
  pf_cycle(&f, 1000);
  const struct px_action *a = pf_action(&f.out, PX_ACT_PREEMPT, 2);
  assert_non_null(a);
  assert_int_equal(a->preempt_cause, PX_PREEMPT_BY_RECLAIM);
  assert_int_equal(pf_count(&f.out, PX_ACT_PREEMPT), 1);
  assert_int_equal(pxc_job_requeue(f.core, 2, false, 1001, NULL), 0);
  pf_cycle(&f, 1001);
  assert_non_null(tc_started(&f.out, 3));
  assert_int_equal(tc_started(&f.out, 3)->time_limit_s, PX_TIME_UNLIMITED);
  pf_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(backfill_never_plans_behind_a_replica),
      cmocka_unit_test(replica_not_bound_by_max_time),
      cmocka_unit_test(exclude_keeps_jobs_off_nodes),
      cmocka_unit_test(replica_reclaims_lent_quota),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
