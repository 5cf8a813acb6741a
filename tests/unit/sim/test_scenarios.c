/*
 * test_scenarios.c - tiny traces (tests/data/traces/) replayed through the
 * real core, with start times worked out by hand in the comments, plus
 * conservation and determinism on a 500-job mix.
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cluster.h"
#include "sim/policy.h"
#include "sim/report.h"
#include "sim/run.h"

struct world {
  struct px_trace trace;
  struct px_conf *conf;
  struct px_sim_setup setup;
};

static void world_open(struct world *w, const char *file, uint32_t nnodes, uint32_t ngpu, double factor) {
  char path[1024];
  snprintf(path, sizeof path, "%s/traces/%s", getenv("PX_TESTDATA"), file);
  struct px_diag d;
  if (px_trace_load(&w->trace, path, &d)) fail_msg("%s", d.msg);
  const char **names;
  uint32_t n;
  assert_int_equal(px_sim_trace_accounts(&w->trace, &names, &n), 0);
  w->conf = px_sim_cluster_new(nnodes, ngpu, names, n, NULL);
  free(names);
  assert_non_null(w->conf);
  if (px_sim_setup_init(&w->setup, &w->trace, w->conf, factor, &d)) fail_msg("%s", d.msg);
}

static void world_close(struct world *w) {
  px_sim_setup_fini(&w->setup);
  px_conf_free(w->conf);
  px_trace_fini(&w->trace);
}

static void policy(struct px_sim_policy *p, const char *name, const struct px_conf *base) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/policies/%s.conf", getenv("PX_SRC"), name);
  struct px_diag d;
  if (px_sim_policy_load(p, path, &base->sched, &d)) fail_msg("%s", d.msg);
}

/* One node of ngpu GPUs and the example policy pol. */
static void world_policy(struct world *w, const char *file, uint32_t ngpu, double factor, const char *pol,
                         struct px_sim_policy *p) {
  world_open(w, file, 1, ngpu, factor);
  policy(p, pol, w->conf);
}

/* Runs p and checks each job's start time (jobs are in submit order; ids a, b, c, d). */
static void expect_starts_opts(struct world *w, const struct px_sim_policy *pp, bool per_event,
                               const int64_t *starts, struct px_sim_result *r) {
  struct px_sim_policy p = *pp;
  const char *pol = p.name;
  struct px_sim_jobrun *runs = NULL;
  struct px_sim_run_opts o = {.seed = 1, .runs_out = &runs, .cycle_per_event = per_event};
  struct px_diag d;
  int rc = px_sim_run(&w->setup, &p.sched, p.name, &o, r, &d);
  if (rc) fail_msg("%s: %s", pol, d.msg);
  for (uint32_t i = 0; i < w->setup.njobs; i++) {
    if (runs[i].start_s != starts[i])
      fail_msg("%s: job %s started at %lld, expected %lld", pol,
               px_trace_id(&w->trace, &w->trace.jobs.v[w->setup.jobs[i].trace_index]), (long long)runs[i].start_s,
               (long long)starts[i]);
  }
  free(runs);
  assert_true(r->conserved);
}

static void expect_starts_of(struct world *w, const struct px_sim_policy *pp, const int64_t *starts,
                             struct px_sim_result *r) {
  expect_starts_opts(w, pp, false, starts, r);
}

static void expect_starts(struct world *w, const char *pol, const int64_t *starts, struct px_sim_result *r) {
  struct px_sim_policy p;
  policy(&p, pol, w->conf);
  expect_starts_of(w, &p, starts, r);
}

/*
 * FIFO on one 8-GPU node: a (8 GPUs, 0-100) fills it; b and c (4 each) start
 * together when a ends at 100 and end at 150; d (2) waits behind them until
 * 150 and ends at 160. JCTs 100, 140, 130, 130: average 125, makespan 160.
 */
static void test_fifo_one_node(void **state) {
  (void)state;
  struct world w;
  world_open(&w, "fifo_1node.csv", 1, 8, 2.0);
  struct px_sim_result r;
  const int64_t starts[] = {0, 100, 100, 150};
  expect_starts(&w, "fifo", starts, &r);
  assert_int_equal(r.done, 4);
  assert_int_equal(r.makespan_s, 160);
  assert_true(r.jct[0].avg_s == 125.0);
  assert_int_equal(r.gpu_s_busy, 8 * 100 + 4 * 50 + 4 * 50 + 2 * 10);
  px_sim_result_fini(&r);
  world_close(&w);
}

/*
 * One 8-GPU node, limits = durations (factor 1; all whole minutes).
 * a (2 GPUs, 0-600) runs; b (8 GPUs) cannot start before a ends: 600-1800.
 * c (4 GPUs, 540 s) arrives at 60 into the hole: it ends at 600, exactly when
 * b's reservation begins, so backfill starts it at 60. d (2 GPUs, 1200 s)
 * would run past 600 and delay b: it waits until b ends at 1800.
 * Without backfill, c and d wait behind b: both start at 1800.
 */
static void test_backfill_hole(void **state) {
  (void)state;
  struct world w;
  world_open(&w, "backfill_hole.csv", 1, 8, 1.0);
  struct px_sim_result r;
  const int64_t without[] = {0, 600, 1800, 1800};
  expect_starts(&w, "multifactor", without, &r);
  assert_int_equal(r.backfilled, 0);
  px_sim_result_fini(&r);
  const int64_t with[] = {0, 600, 60, 1800};
  expect_starts(&w, "easy", with, &r);
  assert_int_equal(r.backfilled, 1); /* c, past b's reservation */
  px_sim_result_fini(&r);
  expect_starts(&w, "conservative", with, &r);
  assert_int_equal(r.backfilled, 1);
  px_sim_result_fini(&r);
  world_close(&w);
}

/*
 * The same hole with limits 2 x durations, conservative. Unbounded: b is
 * promised a's limit (1200); c (limit 1080) backfills at 60, d (2400) would
 * delay b; a and c end at 600, b runs 600-1800, d from 1800.
 * SchedulerParameters=bf_interval=120: the cycle at 60 is a main pass (the
 * pass at 0 was a backfill pass): b holds c back and the pass owes a
 * backfill pass at 120, when the loop wakes with no event: c starts then
 * (its limit ends at 1200, with b's promise). a ends at 600 but c runs until
 * 660: b starts then, in a main pass, and d after it, at 1860.
 */
static void test_bf_interval_wakes(void **state) {
  (void)state;
  struct world w;
  struct px_sim_result r;
  struct px_sim_policy p;
  world_policy(&w, "backfill_hole.csv", 8, 2.0, "conservative", &p);
  const int64_t unbounded[] = {0, 600, 60, 1800};
  expect_starts_of(&w, &p, unbounded, &r);
  px_sim_result_fini(&r);
  const char *bound = "SchedulerParameters=bf_interval=120";
  assert_int_equal(px_sim_policy_parse(&p, bound, strlen(bound), NULL), 0);
  const int64_t bounded[] = {0, 660, 120, 1860};
  expect_starts_of(&w, &p, bounded, &r);
  assert_int_equal(r.backfilled, 1);
  px_sim_result_fini(&r);
  world_close(&w);
}

/*
 * One 4-GPU node, EASY backfill, limits from the trace. a, b (1 GPU each,
 * 600 s, limits 1200) and c (2 GPUs, 1800 s) fill it at 0; d (2 GPUs, 300 s)
 * arrives at 60, e (1 GPU, 300 s, limit 600) at 120. a and b end at 600.
 * One cycle per instant (a trace replay) sees both ends at once: d starts
 * at 600 in the 2 GPUs, e waits for d's end at 900. A cycle after each end
 * (cycle_per_event: the server's loop, for a replay of its accounting) sees
 * a's end alone: 1 GPU, d does not fit and is promised b's limit (1200), e
 * ends by 1200 and backfills at 600; b's end then frees 1 GPU only, and d
 * starts when e ends at 900.
 */
static void test_cycle_per_event(void **state) {
  (void)state;
  struct world w;
  struct px_sim_result r;
  struct px_sim_policy p;
  world_policy(&w, "ends_together.csv", 4, 1.0, "easy", &p);
  const int64_t starts[2][5] = {{0, 0, 0, 600, 900}, {0, 0, 0, 900, 600}}; /* per instant, per event */
  for (int per_event = 0; per_event < 2; per_event++) {
    expect_starts_opts(&w, &p, per_event, starts[per_event], &r);
    assert_int_equal(r.backfilled, per_event); /* e, into a's GPU */
    px_sim_result_fini(&r);
  }
  world_close(&w);
}

/*
 * The server's order inside one second (submit_seq, end_seq of an exported
 * record). One 2-GPU node, EASY backfill, a cycle per event. a and b (1 GPU,
 * 0-100, limits 1200) run; c (2 GPUs, 200 s) waits from 10, promised b's
 * limit. At 100 a ends (seq 6), d (1 GPU, 50 s, limit 50) is submitted (7)
 * and b ends (8): after a's end c does not fit, d backfills into a's GPU
 * (it ends by 150, before c's promise), b's end leaves c 1 GPU: c starts
 * when d ends, at 150. seq_order_late.csv submits d after both ends (9):
 * c starts at 100 in both GPUs and d waits for it, until 300; so does the
 * first trace replayed per instant (both ends, then d, then one cycle).
 * seq_cycles.csv has the same events with the seqs of the starts: the
 * server's cycle that started c (9) came after b's end (8), so it saw a's
 * end, d and b's end at once: the replay cycles there and at the end of
 * the second, not after each event, and c starts at 100, d at 300.
 * seq_carry.csv: that cycle ran at 101 (its cadence carried it over the
 * second's end): no cycle ends second 100, the replay wakes at 101 for the
 * recorded cycle with no event of its own, and c starts then, d at 301.
 * seq_left.csv: the same, but a's recorded run is 50-100 (a requeued job:
 * its failed first run is not in the record); the replay starts a at 0,
 * so it ends at 50, where the record has no end: the replay has left the
 * record, the marks no longer apply, and it cycles after each event: d
 * backfills into a's GPU on its submit at 100 (it ends by c's promise),
 * c starts when d ends, at 150 (following the marks: c at 101, d at 301).
 */
static void test_order_within_second(void **state) {
  (void)state;
  struct world w;
  struct px_sim_result r;
  struct px_sim_policy p;
  world_policy(&w, "seq_order.csv", 2, 1.0, "easy", &p);
  assert_int_equal(w.trace.nseq, 4);
  const int64_t by_seq[] = {0, 0, 150, 100}, ends_first[] = {0, 0, 100, 300};
  expect_starts_opts(&w, &p, true, by_seq, &r);
  assert_int_equal(r.backfilled, 1); /* d */
  px_sim_result_fini(&r);
  expect_starts_opts(&w, &p, false, ends_first, &r);
  px_sim_result_fini(&r);
  world_close(&w);
  world_policy(&w, "seq_order_late.csv", 2, 1.0, "easy", &p);
  expect_starts_opts(&w, &p, true, ends_first, &r);
  assert_int_equal(r.backfilled, 0);
  px_sim_result_fini(&r);
  world_close(&w);
  world_policy(&w, "seq_cycles.csv", 2, 1.0, "easy", &p);
  expect_starts_opts(&w, &p, true, ends_first, &r);
  assert_int_equal(r.backfilled, 0);
  px_sim_result_fini(&r);
  world_close(&w);
  world_policy(&w, "seq_carry.csv", 2, 1.0, "easy", &p);
  const int64_t carried[] = {0, 0, 101, 301};
  expect_starts_opts(&w, &p, true, carried, &r);
  px_sim_result_fini(&r);
  world_close(&w);
  world_policy(&w, "seq_left.csv", 2, 1.0, "easy", &p);
  const int64_t left[] = {0, 0, 150, 100};
  expect_starts_opts(&w, &p, true, left, &r);
  px_sim_result_fini(&r);
  world_close(&w);
}

/* The starts under FIFO, and under EASY as a replay of accounting runs it
 * (a cycle per event); nothing rejected. */
static void expect_record_starts(struct world *w, const int64_t *starts) {
  struct px_sim_result r;
  expect_starts(w, "fifo", starts, &r);
  assert_int_equal(r.rejected, 0);
  px_sim_result_fini(&r);
  struct px_sim_policy p;
  policy(&p, "easy", w->conf);
  expect_starts_opts(w, &p, true, starts, &r);
  px_sim_result_fini(&r);
}

/*
 * One 8-GPU node, FIFO, a record's dependencies (ids are the record's):
 * 13 (afterok:12) would start at once, it waits for 12's end at 100; 14
 * names a job the record lacks (cancelled while pending): met; 15 waits for
 * both tasks of array 50 (the later ends at 60); 16's '?' has a met
 * alternative (99); 17's singleton has no name (a trace without the column):
 * nothing to wait for; 18
 * (after:13) starts a second after 13 (the next cycle); 19 names jobs that ended long before its
 * submit (gone from the core's memory): met, not a rejected submit.
 */
static void test_dependency(void **state) {
  (void)state;
  struct world w;
  world_open(&w, "dependency.csv", 1, 8, 2.0);
  assert_int_equal(w.trace.ndependent, 7);
  const int64_t starts[] = {0, 0, 0, 100, 20, 60, 30, 30, 101, 500};
  expect_record_starts(&w, starts);
  world_close(&w);
}

/*
 * One 8-GPU node, a record's singletons (the core's own: a singleton job
 * starts while no job of its name and user runs). 1 (alice, train) runs
 * 0-100; 2 (alice, train) would start at 10, but waits for 1 and for 6
 * (alice, train without a dependency, 30-130): it starts at 130. 3 (bob,
 * train) does not wait: another user (both run as the queue's one user
 * here, so the replay names them alice/train and bob/train). 4 (alice,
 * eval) has no namesake running; 5 has no name (an export without the
 * column): nothing to wait for. 7 (afterany:1,singleton) needs both: at
 * 130 it and 2 are free, 2 (the older) starts and holds it until 180.
 * 8 (afterany:4?singleton) needs either: 4 ended at 30, so it starts at 40
 * beside its running namesakes 1 and 6.
 */
static void test_singleton(void **state) {
  (void)state;
  struct world w;
  world_open(&w, "singleton.csv", 1, 8, 2.0);
  assert_string_equal(px_sim_job_name(&w.setup, 0), "alice/train");
  assert_string_equal(px_sim_job_name(&w.setup, 2), "bob/train");
  assert_null(px_sim_job_name(&w.setup, 4));
  const int64_t starts[] = {0, 130, 10, 20, 20, 30, 180, 40};
  expect_record_starts(&w, starts);
  world_close(&w);
}

/*
 * One 8-GPU node, FIFO. b's eligible_s (its --begin, from an exported
 * trace) is 300: submitted at 0 but gated until then, it does not hold back
 * c (60), and the loop wakes at 300 with no other event to start it.
 */
static void test_begin_time(void **state) {
  (void)state;
  struct world w;
  world_open(&w, "begin_time.csv", 1, 8, 2.0);
  struct px_sim_result r;
  const int64_t starts[] = {0, 300, 60};
  expect_starts(&w, "fifo", starts, &r);
  px_sim_result_fini(&r);
  world_close(&w);
}

/*
 * Two 8-GPU nodes. a and b (6 GPUs each) take one node each, leaving 2 + 2
 * free. c (4 GPUs on 1 node) does not fit although 4 GPUs are free: it waits
 * for a to end (100) and runs 100-150 on a's node. d (16 GPUs = 2 whole
 * nodes, a gang) waits for both nodes: b ends at 200, so d runs 200-250.
 */
static void test_gang_whole_node(void **state) {
  (void)state;
  struct world w;
  world_open(&w, "gang_whole_node.csv", 2, 8, 2.0);
  struct px_sim_result r;
  const int64_t starts[] = {0, 0, 100, 200};
  expect_starts(&w, "fifo", starts, &r);
  assert_int_equal(r.makespan_s, 250);
  assert_int_equal(r.topo_waited, 1); /* c: 4 GPUs free (2 + 2) at 0, on no single node */
  px_sim_result_fini(&r);
  world_close(&w);
}

/* Every policy on the mix: all jobs done or skipped, GPU-seconds conserved. */
/*
 * preempt.conf on two 8-GPU nodes: a and b (8 GPUs each, 0-1000) fill them;
 * c (16 GPUs, a 2-node gang, 100 s) arrives at 10. Every trace job is QoS
 * normal, so nobody preempts: c starts when both end, at 1000. With
 * --qos-map gpus>=9:high, c (QoS high, Preempt=normal) requeues a and b at
 * 10 and starts at once; they restart when c ends, at 110 (their first run
 * is lost: 2 x 8 GPUs x 10 s).
 */
static void test_preempt_qos_map(void **state) {
  (void)state;
  struct world w;
  world_open(&w, "preempt_gang.csv", 2, 8, 2.0);
  struct px_sim_result r;
  const int64_t unmapped[] = {0, 0, 1000};
  expect_starts(&w, "preempt", unmapped, &r);
  assert_int_equal(r.preemptions, 0);
  px_sim_result_fini(&r);
  struct px_diag d;
  if (px_sim_setup_qos(&w.setup, "gpus>=9:high", &d)) fail_msg("%s", d.msg);
  const int64_t mapped[] = {110, 110, 10};
  expect_starts(&w, "preempt", mapped, &r);
  assert_int_equal(r.preemptions, 2);
  assert_int_equal(r.gpu_s_lost, 2 * 8 * 10);
  /* The report names the map at top level, before the policies. */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  struct px_sim_report rep = {.trace_path = "preempt_gang.csv", .setup = &w.setup, .results = &r, .nresults = 1};
  px_sim_report_json(f, &rep);
  fclose(f);
  const char *map = strstr(buf, "\n  \"qos_map\": {\"rules\": \"gpus>=9:high\", \"jobs_per_rule\": [1]},\n");
  assert_non_null(map);
  assert_true(map < strstr(buf, "\"policies\": ["));
  free(buf);
  px_sim_result_fini(&r);
  world_close(&w);
}

/*
 * The checkpoint model: preempt_ckpt.csv is preempt_gang.csv with c arriving
 * at 250. With --qos-map gpus>=9:high c requeues a and b at 250 and runs
 * 250-350. Plain requeue: their 250 s are lost (2 x 8 x 250 = 4,000 GPU-s)
 * and they run 1,000 s again, ending at 1,350. With a checkpoint every 100 s
 * and a 30 s restart: 200 s of each is kept (3,200 GPU-s), 50 s lost (800),
 * and each resumes at 350 for 30 + 800 s, ending at 1,180; loading costs
 * 2 x 8 x 30 = 480 GPU-s. Busy 1,600 + 4,000 + 13,280 = 18,880 GPU-s = the
 * final runs (14,880) + lost + kept.
 */
static void test_checkpoint_resume(void **state) {
  (void)state;
  struct world w;
  world_open(&w, "preempt_ckpt.csv", 2, 8, 2.0);
  struct px_diag d;
  if (px_sim_setup_qos(&w.setup, "gpus>=9:high", &d)) fail_msg("%s", d.msg);
  struct px_sim_policy p;
  policy(&p, "preempt", w.conf);
  const int64_t starts[] = {350, 350, 250};
  struct px_sim_result r;
  expect_starts_of(&w, &p, starts, &r);
  assert_int_equal(r.gpu_s_lost, 2 * 8 * 250);
  assert_int_equal(r.last_end_s, 1350);
  assert_int_equal(r.gpu_s_ckpt_kept, 0);
  px_sim_result_fini(&r);
  const char ckpt[] = "CheckpointInterval=1:40 CheckpointRestartCost=30";
  if (px_sim_policy_parse(&p, ckpt, sizeof ckpt - 1, &d)) fail_msg("%s", d.msg);
  expect_starts_of(&w, &p, starts, &r);
  assert_int_equal(r.preemptions, 2);
  assert_int_equal(r.gpu_s_lost, 2 * 8 * 50);
  assert_int_equal(r.gpu_s_ckpt_kept, 2 * 8 * 200);
  assert_int_equal(r.gpu_s_restart, 2 * 8 * 30);
  assert_int_equal(r.last_end_s, 1180);
  assert_int_equal(r.gpu_s_busy, 18880);
  assert_int_equal(r.ckpt_interval_s, 100);
  px_sim_result_fini(&r);
  world_close(&w);
}

static void test_conservation(void **state) {
  (void)state;
  struct world w;
  world_open(&w, "mix_500.csv", 8, 8, 2.0);
  assert_int_equal(w.setup.nskipped[PX_SIM_SKIP_TOO_MANY_GPUS], 1); /* "huge" */
  assert_int_equal(w.trace.nfractional, 1);
  static const char *const pols[] = {"fifo", "multifactor", "easy", "conservative"};
  for (size_t i = 0; i < sizeof pols / sizeof pols[0]; i++) {
    struct px_sim_policy p;
    policy(&p, pols[i], w.conf);
    struct px_sim_result r;
    struct px_diag d;
    struct px_sim_run_opts o = {.seed = 1};
    if (px_sim_run(&w.setup, &p.sched, p.name, &o, &r, &d)) fail_msg("%s: %s", pols[i], d.msg);
    assert_int_equal(r.submitted, 501);
    assert_int_equal(r.done + r.rejected, 501);
    assert_int_equal(r.stuck, 0);
    assert_int_equal(r.gpu_s_busy, r.gpu_s_jobs + r.gpu_s_lost);
    assert_true(r.conserved);
    px_sim_result_fini(&r);
  }
  world_close(&w);
}

static char *json_of(struct world *w, const char *pol, size_t *len) {
  struct px_sim_policy p;
  policy(&p, pol, w->conf);
  struct px_sim_result r;
  struct px_diag d;
  struct px_sim_run_opts o = {.seed = 1};
  if (px_sim_run(&w->setup, &p.sched, p.name, &o, &r, &d)) fail_msg("%s", d.msg);
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  struct px_sim_report rep = {.trace_path = "mix_500.csv", .setup = &w->setup, .results = &r, .nresults = 1};
  px_sim_report_json(f, &rep);
  fclose(f);
  px_sim_result_fini(&r);
  return buf;
}

/* Same inputs, same bytes: two runs in one process (fresh core each time). */
static void test_determinism(void **state) {
  (void)state;
  struct world w;
  world_open(&w, "mix_500.csv", 8, 8, 2.0);
  size_t n1, n2;
  char *a = json_of(&w, "multifactor", &n1);
  char *b = json_of(&w, "multifactor", &n2);
  assert_int_equal(n1, n2);
  assert_memory_equal(a, b, n1);
  assert_non_null(strstr(a, "\"conserved\": true"));
  free(a);
  free(b);
  world_close(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fifo_one_node),   cmocka_unit_test(test_backfill_hole),
      cmocka_unit_test(test_bf_interval_wakes), cmocka_unit_test(test_cycle_per_event),
      cmocka_unit_test(test_order_within_second), cmocka_unit_test(test_begin_time),
      cmocka_unit_test(test_dependency),       cmocka_unit_test(test_singleton),
      cmocka_unit_test(test_gang_whole_node), cmocka_unit_test(test_conservation),
      cmocka_unit_test(test_determinism),     cmocka_unit_test(test_preempt_qos_map), cmocka_unit_test(test_checkpoint_resume),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
