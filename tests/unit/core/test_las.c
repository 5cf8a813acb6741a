/*
 * The LAS order stage (PriorityOrder=las, prio.c) and its preemption
 * (preempt.c): one node of 8 GPUs, one threshold at 1,000 GPU-seconds, so
 * queue 0 holds jobs with less than 1,000 GPU-s attained and queue 1 the
 * rest. Expectations worked out by hand in each comment.
 */
#include "px_test.h"

#include "core/policytest.h"

static struct px_conf *las_conf(enum px_preempt_mode mode) {
  struct px_conf *c = tc_conf(1, 8, 0, 0);
  c->sched.order = PX_ORDER_LAS;
  c->sched.las_thresholds_gpu_s[0] = 1000;
  c->sched.las_nthresholds = 1;
  c->sched.preempt_mode = mode;
  return c;
}

static void sub8(struct pf *f, uint64_t id, int64_t now) {
  struct px_jobspec s = tc_spec("alice", 0, 8);
  s.time_limit_s = 10000;
  s.requeue = true;
  pf_sub_spec(f, id, &s, now);
}

/*
 * A (8 GPUs) runs 0-200, then is requeued: attained 8 x 200 = 1,600 GPU-s,
 * queue 1 (priority 8 - 1 = 7). B (submitted 10) and C (20) have none:
 * queue 0 (priority 8). At 200 B starts although A was submitted first;
 * when B ends at 300, C starts before A, FIFO within queue 0; then A.
 */
static void las_orders_by_attained_service(void **state) {
  (void)state;
  struct pf f = {.conf = las_conf(PX_PREEMPT_OFF)};
  pf_open(&f);
  sub8(&f, 1, 0);
  pf_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 1));
  sub8(&f, 2, 10);
  sub8(&f, 3, 20);
  pf_cycle(&f, 20);
  assert_int_equal(f.out.len, 0);
  assert_int_equal(pxc_job_requeue(f.core, 1, false, 200, NULL), 0);
  pf_cycle(&f, 200);
  assert_int_equal(f.out.len, 1);
  assert_non_null(tc_started(&f.out, 2));
  assert_int_equal(pxc_las_queue(f.core, pxc_job_find(f.core, 1), 200), 1);
  assert_int_equal(pxc_las_queue(f.core, pxc_job_find(f.core, 3), 200), 0);
  assert_int_equal(pxc_job_find(f.core, 1)->priority, 7);
  assert_int_equal(pxc_job_find(f.core, 3)->priority, 8);
  assert_true(pxc_job_find(f.core, 1)->las_served);  /* its key reads the service fields */
  assert_false(pxc_job_find(f.core, 3)->las_served); /* never ran: queue 0 from the hot line */
  pf_end(&f, 2, 300);
  pf_cycle(&f, 300);
  assert_int_equal(f.out.len, 1);
  assert_non_null(tc_started(&f.out, 3));
  pf_end(&f, 3, 400);
  pf_cycle(&f, 400);
  assert_non_null(tc_started(&f.out, 1));
  pf_close(&f);
}

/*
 * With PreemptMode=requeue. A runs from 0. B arrives at 100: A has attained
 * 800 GPU-s, queue 0 like B, so nobody is preempted (B waits). At 200
 * A has 1,600: queue 1, below B, and B preempts it (cause "las"). Requeued
 * at 200, A keeps its 1,600 GPU-s; B starts at 200 and A waits in queue 1.
 * A running job that crosses a threshold is demoted at the next cycle.
 */
static void las_preempts_demoted_job(void **state) {
  (void)state;
  struct pf f = {.conf = las_conf(PX_PREEMPT_REQUEUE)};
  pf_open(&f);
  sub8(&f, 1, 0);
  pf_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 1));
  sub8(&f, 2, 100);
  pf_cycle(&f, 100);
  assert_int_equal(pf_count(&f.out, PX_ACT_PREEMPT), 0);
  assert_null(tc_started(&f.out, 2));
  assert_int_equal(pf_view(f.core, 2).state, PX_JOB_PENDING);
  pf_cycle(&f, 200);
  const struct px_action *p = pf_action(&f.out, PX_ACT_PREEMPT, 1);
  assert_non_null(p);
  assert_int_equal(p->preemptor_job_id, 2);
  assert_int_equal(p->preempt_cause, PX_PREEMPT_BY_LAS);
  assert_string_equal(px_preempt_cause_name(p->preempt_cause), "las");
  assert_int_equal(p->preempt_mode, PX_PREEMPT_REQUEUE);
  assert_int_equal(pxc_job_requeue(f.core, 1, false, 200, NULL), 0);
  pf_cycle(&f, 200);
  assert_non_null(tc_started(&f.out, 2));
  assert_int_equal(pxc_las_queue(f.core, pxc_job_find(f.core, 1), 200), 1);
  assert_int_equal(pf_view(f.core, 1).state, PX_JOB_PENDING);
  /* B now runs; at 400 it has 1,600 too: same queue as A, no preemption. */
  pf_cycle(&f, 400);
  assert_int_equal(pf_count(&f.out, PX_ACT_PREEMPT), 0);
  pf_close(&f);
}

/*
 * Starvation promotion, LasStarveLimit=2, no preemption. A (8 GPUs) runs
 * 0-200 and is requeued: 1,600 GPU-s, queue 1, it ran 200 s. B (10) starts
 * at 200 in queue 0; C (20) waits in queue 0. A re-entered the queue at 200,
 * so at 599 it has waited 399 s < 2 x 200: still queue 1; at 600 it has
 * waited 400 s: promoted to queue 0, its service forgotten. FIFO within
 * queue 0 puts A (submitted 0) before C (20): when B ends at 700, A starts.
 * Without the limit C would start first (las_orders_by_attained_service).
 */
static void las_promotes_starving_job(void **state) {
  (void)state;
  struct pf f = {.conf = las_conf(PX_PREEMPT_OFF)};
  f.conf->sched.las_starve_limit = 2.0;
  pf_open(&f);
  sub8(&f, 1, 0);
  pf_cycle(&f, 0);
  sub8(&f, 2, 10);
  sub8(&f, 3, 20);
  assert_int_equal(pxc_job_requeue(f.core, 1, false, 200, NULL), 0);
  pf_cycle(&f, 200);
  assert_non_null(tc_started(&f.out, 2));
  pf_cycle(&f, 599);
  assert_int_equal(pxc_las_queue(f.core, pxc_job_find(f.core, 1), 599), 1);
  struct px_core_stats st;
  px_core_stats(f.core, &st);
  assert_int_equal(st.las_promotions, 0);
  pf_cycle(&f, 600);
  assert_int_equal(pxc_las_queue(f.core, pxc_job_find(f.core, 1), 600), 0);
  assert_int_equal(pxc_job_find(f.core, 1)->priority, 8);
  px_core_stats(f.core, &st);
  assert_int_equal(st.las_promotions, 1);
  pf_end(&f, 2, 700);
  pf_cycle(&f, 700);
  assert_int_equal(f.out.len, 1);
  assert_non_null(tc_started(&f.out, 1));
  pf_close(&f);
}

/*
 * A fraction of a shared GPU attains its share of GPU-seconds (issue 19):
 * A asks --gpus=0.5 on a node offering shares and starts at 0. At 1,000 s
 * it has 0.5 x 1,000 = 500 GPU-s: queue 0 (whole-GPU counting said 1,000,
 * queue 1); at 1,999 s 999.5, queue 0; at 2,000 s 1,000: queue 1. Requeued
 * at 1,500 it keeps 0.5 x 1,500 = 750 GPU-s and waits in queue 0.
 */
static void las_charges_the_fraction(void **state) {
  (void)state;
  struct pf f = {.conf = las_conf(PX_PREEMPT_OFF)};
  f.conf->nodes[0].gpu_shares = true;
  pf_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 0);
  s.gpu_share = 50;
  s.time_limit_s = 10000;
  s.requeue = true;
  pf_sub_spec(&f, 1, &s, 0);
  pf_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 1));
  const struct pxc_job *a = pxc_job_find(f.core, 1);
  assert_true(pxc_las_gpus(a) == 0.5);
  assert_int_equal(pxc_las_queue(f.core, a, 1000), 0);
  assert_int_equal(pxc_las_queue(f.core, a, 1999), 0);
  assert_int_equal(pxc_las_queue(f.core, a, 2000), 1);
  assert_int_equal(pxc_job_requeue(f.core, 1, false, 1500, NULL), 0);
  a = pxc_job_find(f.core, 1);
  assert_true(a->attained_gpu_s == 750.0);
  assert_int_equal(pxc_las_queue(f.core, a, 1500), 0);
  pf_close(&f);
}

/* Thresholds must be positive and strictly ascending: else the core refuses
 * the configuration (the simulator's policy parser names the key first). */
static void las_bad_thresholds_refused(void **state) {
  (void)state;
  struct px_conf *c = las_conf(PX_PREEMPT_OFF);
  c->sched.las_thresholds_gpu_s[0] = 5000;
  c->sched.las_thresholds_gpu_s[1] = 5000;
  c->sched.las_nthresholds = 2;
  int err = 0;
  assert_null(px_core_new(c, 1, &err));
  assert_int_equal(err, PX_EINVAL);
  px_conf_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(las_orders_by_attained_service),
      cmocka_unit_test(las_preempts_demoted_job),
      cmocka_unit_test(las_promotes_starving_job),
      cmocka_unit_test(las_charges_the_fraction),
      cmocka_unit_test(las_bad_thresholds_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
