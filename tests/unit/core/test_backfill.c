/*
 * Backfill (the `reserve` stage): small clusters of 8-GPU nodes, FIFO order
 * (priority = submit order, so the reasoning stays on paper), a plan
 * resolution of 100 s so slot k starts at k x 100 s.
 */
#include "px_test.h"

#include "core/policytest.h"

static struct px_conf *bf_conf(uint32_t nnodes, uint32_t npl, enum px_backfill_mode mode) {
  struct px_conf *c = tc_conf(nnodes, 8, npl, 0);
  c->sched.order = PX_ORDER_FIFO;
  c->sched.backfill = mode;
  c->sched.backfill_resolution_s = 100;
  c->sched.backfill_window_s = 10000;
  return c;
}

/*
 * 4 nodes. t=0: A (2 nodes, 1000 s) takes nodes 0-1, B (1 node, 3000 s)
 * node 2. t=10: C (3 nodes, 1000 s) cannot start: node 3 alone is free. A
 * ends by 1000, so C is promised 1000 on nodes 0, 1, 3 until 2000. D (4
 * GPUs, 500 s) ends at 510 < 1000: it backfills on node 3. E (4 GPUs, 2000 s)
 * would still hold node 3 at 1000: it waits (Priority), and since C holds
 * nodes 0, 1, 3 over [1000, 2000) and B node 2 until 3000, its earliest
 * 2000-s window opens when C ends: 2000.
 */
static void setup_cde(struct pf *f) {
  pf_open(f);
  pf_sub(f, 1, "alice", 2, 8, 1000, 0);
  pf_sub(f, 2, "alice", 1, 8, 3000, 0);
  pf_cycle(f, 0);
  assert_int_equal(pf_node(&f->out, 1), 0);
  assert_int_equal(pf_node(&f->out, 2), 2);
  pf_sub(f, 3, "alice", 3, 8, 1000, 10);
  pf_sub(f, 4, "bob", 0, 4, 500, 10);
  pf_sub(f, 5, "bob", 0, 4, 2000, 10);
  pf_cycle(f, 10);
}

static void conservative_backfills_and_promises(void **state) {
  (void)state;
  struct pf f = {.conf = bf_conf(4, 0, PX_BACKFILL_CONSERVATIVE)};
  setup_cde(&f);
  assert_int_equal(f.out.len, 1);
  assert_int_equal(pf_node(&f.out, 4), 3);
  struct px_job_view c = pf_view(f.core, 3); /* the why text lives until the next query */
  assert_int_equal(c.reason, PX_REASON_RESOURCES);
  assert_int_equal(c.expected_start_s, 1000);
  assert_non_null(strstr(c.why, "place:"));
  assert_non_null(strstr(c.why, "expected start 1000 (reserved)"));
  /* With one node C would start now: node 3 was free when C was tried (D
   * came after). Not with 2: nodes 0-2 are busy. */
  assert_non_null(strstr(c.why, "--nodes=1"));
  struct px_job_view e = pf_view(f.core, 5);
  assert_int_equal(e.reason, PX_REASON_PRIORITY);
  assert_non_null(strstr(e.why, "reserve: it would fit now but would delay"));
  assert_int_equal(e.expected_start_s, 2000);
  /* E's reservation: at slot 20 every node but 2 is free; best fit takes node 0. */
  const struct pxc_tl *tl = &f.core->pol->tl;
  assert_int_equal(pxc_tl_row(tl, 0)[20].gpu, 4);
  assert_int_equal(pxc_tl_row(tl, 3)[20].gpu, 8);
  pf_close(&f);
}

/* The builtin scheduler (no backfill) holds the partition behind C: D waits
 * although it would have ended long before C could start. */
static void without_backfill_partition_waits(void **state) {
  (void)state;
  struct pf f = {.conf = bf_conf(4, 0, PX_BACKFILL_NONE)};
  setup_cde(&f);
  assert_int_equal(f.out.len, 0);
  assert_int_equal(tc_reason(f.core, 4), PX_REASON_PRIORITY);
  assert_int_equal(pf_view(f.core, 3).expected_start_s, 0);
  pf_close(&f);
}

/* EASY: C reserves, E only gets an estimate (the same 2000: C's reservation
 * is there), and its interval is not taken from the plan. */
static void easy_reserves_only_the_top_job(void **state) {
  (void)state;
  struct pf f = {.conf = bf_conf(4, 0, PX_BACKFILL_EASY)};
  setup_cde(&f);
  assert_int_equal(pf_node(&f.out, 4), 3);
  struct px_job_view e = pf_view(f.core, 5);
  assert_int_equal(e.expected_start_s, 2000);
  assert_non_null(strstr(e.why, "(estimate)"));
  const struct pxc_tl *tl = &f.core->pol->tl;
  assert_int_equal(pxc_tl_row(tl, 0)[20].gpu, 8);
  pf_close(&f);
}

/*
 * A ends early at 400: the next cycle's plan has nodes 0-1 free now and node
 * 3 free when D's limit ends (510, slot 6 of the absolute grid: 600), so C's
 * reservation moves from 1000 to 600. D really ends at 510 and C starts then.
 */
static void early_end_pulls_reservation_forward(void **state) {
  (void)state;
  struct pf f = {.conf = bf_conf(4, 0, PX_BACKFILL_CONSERVATIVE)};
  setup_cde(&f);
  pf_end(&f, 1, 400);
  pf_cycle(&f, 400);
  assert_null(tc_started(&f.out, 3));
  assert_int_equal(pf_view(f.core, 3).expected_start_s, 600);
  pf_end(&f, 4, 510);
  pf_cycle(&f, 510);
  assert_non_null(tc_started(&f.out, 3));
  pf_close(&f);
}

/*
 * Topology: 6 nodes in leaves {0,1,2} {3,4,5}, each running a one-node job;
 * those on nodes 0, 3, 4 end at 1000, the others at 5000. Gang G (2 nodes,
 * 1000 s) is planned at 1000 inside one leaf: nodes 3-4, not 0 and 3. So H
 * (1 node, 2000 s) behind it can be promised node 0 from 1000 as well.
 */
static void gang_reservation_stays_in_one_leaf(void **state) {
  (void)state;
  struct pf f = {.conf = bf_conf(6, 3, PX_BACKFILL_CONSERVATIVE)};
  pf_open(&f);
  int64_t lim[6] = {1000, 5000, 5000, 1000, 1000, 5000};
  for (uint64_t i = 0; i < 6; i++) pf_sub(&f, i + 1, "alice", 1, 8, lim[i], 0);
  pf_cycle(&f, 0);
  for (uint64_t i = 0; i < 6; i++) assert_int_equal(pf_node(&f.out, i + 1), i);
  pf_sub(&f, 7, "bob", 2, 8, 1000, 5);
  pf_sub(&f, 8, "bob", 1, 8, 2000, 5);
  pf_cycle(&f, 5);
  assert_int_equal(pf_view(f.core, 7).expected_start_s, 1000);
  assert_int_equal(pf_view(f.core, 8).expected_start_s, 1000);
  const struct pxc_tl *tl = &f.core->pol->tl;
  assert_int_equal(pxc_tl_row(tl, 3)[10].gpu, 0);
  assert_int_equal(pxc_tl_row(tl, 4)[10].gpu, 0);
  assert_int_equal(pxc_tl_row(tl, 0)[10].gpu, 0); /* H */
  assert_int_equal(pxc_tl_row(tl, 0)[30].gpu, 8);
  pf_close(&f);
}

/* A job that would start now elsewhere says so: 2 partitions of 2 nodes;
 * p0 is full until 5000, p1 idle; alice may use both. */
static void why_names_another_partition_and_shorter_time(void **state) {
  (void)state;
  struct px_testconf_spec s = {.nnodes = 4, .gpus_per_node = 8, .cpus_per_node = 64, .mem_mib = TC_MEM,
                               .npartitions = 2};
  struct px_conf *conf = px_testconf_new(&s);
  uint32_t a = px_testconf_account(conf, "acct", 0, 1);
  px_testconf_user(conf, "alice", a, 1);
  conf->sched.order = PX_ORDER_FIFO;
  conf->sched.backfill = PX_BACKFILL_CONSERVATIVE;
  conf->sched.backfill_resolution_s = 100;
  conf->sched.backfill_window_s = 10000;
  struct pf f = {.conf = conf};
  pf_open(&f);
  pf_sub(&f, 1, "alice", 1, 8, 5000, 0);  /* node 0 until 5000 */
  pf_sub(&f, 2, "alice", 1, 8, 500, 0);   /* node 1 until 500 */
  pf_cycle(&f, 0);
  pf_sub(&f, 3, "alice", 2, 8, 1000, 10); /* p0: both nodes at 5000 */
  pf_cycle(&f, 10);
  struct px_job_view v = pf_view(f.core, 3);
  assert_int_equal(v.expected_start_s, 5000);
  assert_non_null(strstr(v.why, "in partition p1"));
  /* -N 1 fits from 500 only, not now: no --nodes hint; no shorter time helps now */
  assert_null(strstr(v.why, "--nodes="));
  assert_null(strstr(v.why, "--time<="));
  pf_close(&f);
}

/*
 * SchedulerParameters bf_interval=60: the cycle at 0 is a backfill pass; the
 * one at 10 a main pass, where C, which cannot start, holds back D and E
 * (Slurm's main scheduler), and which owes the next backfill pass at 60. The
 * pass at 60 backfills D (it ends at 560, before C's 1000) and owes nothing.
 */
static void bf_interval_defers_backfill_to_the_next_pass(void **state) {
  (void)state;
  struct pf f = {.conf = bf_conf(4, 0, PX_BACKFILL_CONSERVATIVE)};
  f.conf->sched.bf_interval_s = 60;
  setup_cde(&f);
  assert_int_equal(f.out.len, 0);
  assert_int_equal(tc_reason(f.core, 4), PX_REASON_PRIORITY);
  assert_non_null(strstr(pf_view(f.core, 4).why, "order: higher-priority jobs")); /* not backfill's text */
  assert_int_equal(px_core_next_pass_s(f.core), 60);
  pf_cycle(&f, 30); /* still a main pass: nothing changes */
  assert_int_equal(f.out.len, 0);
  pf_cycle(&f, 60);
  assert_int_equal(f.out.len, 1);
  const struct px_action *d = tc_started(&f.out, 4);
  assert_non_null(d);
  assert_true(d->backfilled);
  assert_int_equal(pf_view(f.core, 3).expected_start_s, 1000);
  assert_int_equal(tc_reason(f.core, 5), PX_REASON_PRIORITY);
  assert_int_equal(px_core_next_pass_s(f.core), 0);
  pf_close(&f);
}

/* bf_max_job_test=2: at 10 the pass tries C (blocked, reserved) and D
 * (backfilled), then stops: E is not tried and gets no estimate (without
 * the bound it is promised 2000, conservative_backfills_and_promises). */
static void bf_max_job_test_stops_the_pass(void **state) {
  (void)state;
  struct pf f = {.conf = bf_conf(4, 0, PX_BACKFILL_CONSERVATIVE)};
  f.conf->sched.bf_max_job_test = 2;
  setup_cde(&f);
  assert_int_equal(f.out.len, 1);
  assert_non_null(tc_started(&f.out, 4));
  assert_int_equal(pf_view(f.core, 3).expected_start_s, 1000);
  assert_int_equal(tc_reason(f.core, 5), PX_REASON_PRIORITY);
  assert_int_equal(pf_view(f.core, 5).expected_start_s, 0);
  pf_close(&f);
}

/* default_queue_depth=1 with bf_interval=60: the main pass at 10 starts X
 * only (Y and Z would fit), and owes a backfill pass, which starts them. */
static void default_queue_depth_bounds_main_passes(void **state) {
  (void)state;
  struct pf f = {.conf = bf_conf(4, 0, PX_BACKFILL_CONSERVATIVE)};
  f.conf->sched.bf_interval_s = 60;
  f.conf->sched.default_queue_depth = 1;
  pf_open(&f);
  pf_sub(&f, 1, "alice", 1, 8, 1000, 0);
  pf_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 1));
  assert_int_equal(px_core_next_pass_s(f.core), 0);
  for (uint64_t id = 2; id <= 4; id++) pf_sub(&f, id, "bob", 1, 8, 1000, 10);
  pf_cycle(&f, 10);
  assert_int_equal(f.out.len, 1);
  assert_non_null(tc_started(&f.out, 2));
  assert_int_equal(px_core_next_pass_s(f.core), 60);
  pf_cycle(&f, 60);
  assert_int_equal(f.out.len, 2);
  assert_non_null(tc_started(&f.out, 3));
  assert_non_null(tc_started(&f.out, 4));
  pf_close(&f);
}

static void sub_frac(struct pf *f, uint64_t id, uint32_t hundredths, int64_t limit_s, int64_t now) {
  struct px_jobspec s = tc_spec("alice", 0, 0);
  s.gpu_share = hundredths;
  s.time_limit_s = limit_s;
  pf_sub_spec(f, id, &s, now);
}

/*
 * One 8-GPU node offering shares (issue 19). t=0: W (6 GPUs, 5000 s) takes
 * GPUs 0-5; A (0.5, 1000 s) opens GPU 6, B (0.5, 2000 s) joins it (best
 * fit); X (1 GPU, 3000 s) takes GPU 7. t=10: D (1 whole GPU, 500 s) finds
 * none free. GPU 6 is whole again when its last share ends, B's at 2000
 * (A's end at 1000 leaves B on it), GPU 7 at 3000: D is promised 2000.
 * Before the plan knew shares it released no shared GPU: 3000.
 */
static void shared_gpu_whole_when_last_share_ends(void **state) {
  (void)state;
  struct pf f = {.conf = bf_conf(1, 0, PX_BACKFILL_CONSERVATIVE)};
  f.conf->nodes[0].gpu_shares = true;
  pf_open(&f);
  pf_sub(&f, 1, "alice", 0, 6, 5000, 0);
  sub_frac(&f, 2, 50, 1000, 0);
  sub_frac(&f, 3, 50, 2000, 0);
  pf_sub(&f, 4, "alice", 0, 1, 3000, 0);
  pf_cycle(&f, 0);
  assert_int_equal(f.out.len, 4);
  struct px_node_view nv;
  assert_int_equal(px_core_node_get(f.core, 0, &nv), 0);
  assert_true(nv.gpus_shared == 1u << 6 && nv.gpus_free == 0);
  pf_sub(&f, 5, "bob", 0, 1, 500, 10);
  pf_cycle(&f, 10);
  assert_int_equal(f.out.len, 0);
  assert_int_equal(pf_view(f.core, 5).expected_start_s, 2000);
  /* A ends: B still shares GPU 6, so the promise stays. */
  pf_end(&f, 2, 1000);
  pf_cycle(&f, 1000);
  assert_int_equal(pf_view(f.core, 5).expected_start_s, 2000);
  pxc_tl_build(f.core, &f.core->pol->tl, 1000, false); /* incremental, as the next cycle's: equals a full build */
  assert_int_equal(pxc_tl_verify(f.core, &f.core->pol->tl), 0);
  pf_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(conservative_backfills_and_promises),
      cmocka_unit_test(without_backfill_partition_waits),
      cmocka_unit_test(easy_reserves_only_the_top_job),
      cmocka_unit_test(early_end_pulls_reservation_forward),
      cmocka_unit_test(gang_reservation_stays_in_one_leaf),
      cmocka_unit_test(why_names_another_partition_and_shorter_time),
      cmocka_unit_test(bf_interval_defers_backfill_to_the_next_pass),
      cmocka_unit_test(bf_max_job_test_stops_the_pass),
      cmocka_unit_test(default_queue_depth_bounds_main_passes),
      cmocka_unit_test(shared_gpu_whole_when_last_share_ends),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
