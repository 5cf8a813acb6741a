/*
 * test_accounts.c - what each policy changes per account, worked out by
 * hand on tiny traces with two accounts (qa, qb) and two policies: waits
 * (average, p95), GPU-hours delivered and lost, the JSON keys and their
 * changes against the first column, and the Fair Tree position sampled
 * from a core driven event by event.
 */
#include "px_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/event.h"
#include "sim/cluster.h"
#include "sim/policy.h"
#include "sim/recorded.h"
#include "sim/report.h"
#include "sim/run.h"

struct two {
  struct px_trace trace;
  struct px_conf *conf;
  struct px_sim_setup setup;
};

static void two_open(struct two *w, const char *file, uint32_t nnodes) {
  char path[1024];
  snprintf(path, sizeof path, "%s/traces/%s", getenv("PX_TESTDATA"), file);
  struct px_diag d;
  if (px_trace_load(&w->trace, path, &d)) fail_msg("%s", d.msg);
  const char *acc[] = {"qa", "qb"};
  w->conf = px_sim_cluster_new(nnodes, 8, acc, 2, NULL);
  assert_non_null(w->conf);
  if (px_sim_setup_init(&w->setup, &w->trace, w->conf, 2.0, &d)) fail_msg("%s", d.msg);
  assert_int_equal(w->setup.naccounts, 2);
  assert_string_equal(w->setup.accounts[0], "qa");
}

static void two_close(struct two *w) {
  px_sim_setup_fini(&w->setup);
  px_conf_free(w->conf);
  px_trace_fini(&w->trace);
}

/* Runs the example policy `name` (plus extra keys, may be NULL) into r. */
static void two_run(struct two *w, const char *name, const char *extra, struct px_sim_result *r) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/policies/%s.conf", getenv("PX_SRC"), name);
  struct px_sim_policy p;
  struct px_diag d;
  if (px_sim_policy_load(&p, path, &w->conf->sched, &d)) fail_msg("%s", d.msg);
  if (extra && px_sim_policy_parse(&p, extra, strlen(extra), &d)) fail_msg("%s", d.msg);
  struct px_sim_run_opts o = {.seed = 1};
  if (px_sim_run(&w->setup, &p.sched, name, &o, r, &d)) fail_msg("%s: %s", name, d.msg);
  assert_true(r->conserved);
}

static char *json_of(struct two *w, const struct px_sim_result *res, size_t n) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  struct px_sim_report rep = {.trace_path = "t", .setup = &w->setup, .results = res, .nresults = n};
  px_sim_report_json(f, &rep);
  fclose(f);
  return buf;
}

/*
 * One 8-GPU node. a1, a2 (qa) at 0 and b1 (qb) at 10, each 8 GPUs x 100 s.
 * FIFO: a1 0-100, a2 100-200, b1 200-300: qa waits 0 and 100 (avg 50, p95
 * the 2nd of 2: 100), qb 190. Multifactor (fair share weighs 10x age): at
 * 100 qa has usage and qb none, so b1 goes first: b1 100-200, a2 200-300:
 * qa waits 0 and 200 (avg 100, p95 200), qb 90. Either way qa gets
 * 2 x 800 GPU-s and qb 800, none lost.
 */
static void test_waits_two_policies(void **state) {
  (void)state;
  struct two w;
  two_open(&w, "two_accounts.csv", 1);
  struct px_sim_result r[2];
  two_run(&w, "fifo", NULL, &r[0]);
  two_run(&w, "multifactor", NULL, &r[1]);
  const double avg[2][2] = {{50, 190}, {100, 90}};
  const int64_t p95[2][2] = {{100, 190}, {200, 90}};
  for (int i = 0; i < 2; i++) {
    for (int a = 0; a < 2; a++) {
      assert_true(r[i].acct_wait_avg_s[a] == avg[i][a]);
      assert_int_equal(r[i].acct_wait_p95_s[a], p95[i][a]);
      assert_int_equal(r[i].acct_gpu_s_delivered[a], a ? 800 : 1600);
      assert_int_equal(r[i].acct_gpu_s_held[a], a ? 800 : 1600);
      assert_int_equal(r[i].acct_gpu_s_lost[a], 0);
    }
  }
  /*
   * Positions, once the loop samples the core after each instant (run.h's
   * px_sim_fs_sample call): cycles at 0 (no usage: both 1), 100 (a1's
   * usage: qa 0.5, qb 1) and 200; none at 10 (nothing free) nor at 300
   * (nothing pending). FIFO at 200: qa has all the usage, qa 0.5, qb 1:
   * qa averages (100 x 1 + 200 x 0.5) / 300 = 2/3, qb 1. Multifactor at
   * 200: qa's 100 s ran earlier and decayed more than qb's, so qa ranks
   * first again: qa 1, qb 0.5; both average (1 + 0.5 + 1) / 3 = 5/6.
   */
  if (r[0].fs.sampled) {
    assert_true(r[1].fs.sampled);
    const double avg_fs[2][2] = {{2.0 / 3, 1}, {5.0 / 6, 5.0 / 6}}, end_fs[2][2] = {{0.5, 1}, {1, 0.5}};
    for (int i = 0; i < 2; i++) {
      assert_int_equal(r[i].fs.last_s, 300);
      for (int a = 0; a < 2; a++) {
        assert_true(fabs(r[i].fs.factor_avg[a] - avg_fs[i][a]) < 1e-12);
        assert_true(r[i].fs.factor_end[a] == end_fs[i][a]);
      }
    }
    assert_true(r[1].fs.level_end[0] > 1 && r[1].fs.level_end[1] < 1);
  }
  /* The changes, against the first column (fifo): qa +50 s avg, +100 p95; qb -100, -100. */
  char *js = json_of(&w, r, 2);
  assert_non_null(strstr(js, "\"name\": \"qa\", \"jobs\": 2, \"gpu_s\": 1600, \"share\": 0.6667, \"fair_share\": 0.5000, "
                             "\"wait_avg_s\": 100.000, \"wait_p95_s\": 200, \"gpu_s_held\": 1600, "
                             "\"gpu_s_delivered\": 1600, \"gpu_s_lost\": 0"));
  assert_non_null(strstr(js, "\"change\": {\"against\": \"fifo\", \"gpu_s_delivered\": 0, \"gpu_s_lost\": 0, "
                             "\"wait_avg_s\": 50.000, \"wait_p95_s\": 100"));
  assert_non_null(strstr(js, "\"change\": {\"against\": \"fifo\", \"gpu_s_delivered\": 0, \"gpu_s_lost\": 0, "
                             "\"wait_avg_s\": -100.000, \"wait_p95_s\": -100"));
  free(js);
  /* The table: qa's multifactor row, its changes in brackets, in GPU-minutes
   * and minutes (the largest wait is 200 s): 26.7 GPU-min, waits 1.7 (+0.8)
   * and 3.3 (+1.7) min. */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  struct px_sim_report rep = {.trace_path = "t", .setup = &w.setup, .results = r, .nresults = 2};
  px_sim_report_table(f, &rep);
  fclose(f);
  assert_non_null(strstr(buf, "(in brackets: the change against fifo"));
  assert_non_null(strstr(buf, "account          policy         GPU-min delivered GPU-min lost      wait avg (min)    "
                              "wait p95 (min)    fair-share avg    fair-share end    level FS end\n"));
  assert_non_null(strstr(buf, " multifactor    26.7 (+0.0)       0.0 (+0.0)        1.7 (+0.8)        3.3 (+1.7)   "));
  free(buf);
  px_sim_result_fini(&r[0]);
  px_sim_result_fini(&r[1]);
  two_close(&w);
}

/*
 * Two 8-GPU nodes, preempt.conf with c (qb, 16 GPUs, QoS high) at 250
 * requeueing a and b (qa, 8 GPUs x 1000 s each): test_scenarios.c's
 * checkpoint case, split over two accounts. Plain requeue: qa held
 * 2 x 8 x (250 + 1000) = 20,000 GPU-s, lost 4,000, delivered 16,000.
 * Checkpoints every 100 s, 30 s to load: qa held 2 x 8 x (250 + 830) =
 * 17,280; delivered 16,000 again (the final runs' 13,280 without their
 * 480 loading, plus 3,200 kept); lost 1,280: 2 x 8 x 50 thrown away plus
 * the 480 loading. qb: 1,600 held and delivered either way.
 */
static void test_lost_two_policies(void **state) {
  (void)state;
  struct two w;
  two_open(&w, "preempt_two_accounts.csv", 2);
  struct px_diag d;
  if (px_sim_setup_qos(&w.setup, "gpus>=9:high", &d)) fail_msg("%s", d.msg);
  struct px_sim_result r[2];
  two_run(&w, "preempt", NULL, &r[0]);
  two_run(&w, "preempt", "CheckpointInterval=1:40 CheckpointRestartCost=30", &r[1]);
  const int64_t held[2] = {20000, 17280}, lost[2] = {4000, 1280}, delivered[2] = {16000, 16000};
  for (int i = 0; i < 2; i++) {
    assert_int_equal(r[i].acct_gpu_s_held[0], held[i]);
    assert_int_equal(r[i].acct_gpu_s_lost[0], lost[i]);
    assert_int_equal(r[i].acct_gpu_s_delivered[0], delivered[i]);
    assert_int_equal(r[i].acct_gpu_s_held[1], 1600);
    assert_int_equal(r[i].acct_gpu_s_lost[1], 0);
    /* the accounts' losses are the run's, with the final runs' loading */
    assert_int_equal(r[i].acct_gpu_s_lost[0] + r[i].acct_gpu_s_lost[1],
                     r[i].gpu_s_lost + r[i].gpu_s_lost_fail + (i ? 480 : 0));
  }
  char *js = json_of(&w, r, 2);
  assert_non_null(strstr(js, "\"change\": {\"against\": \"preempt\", \"gpu_s_delivered\": 0, \"gpu_s_lost\": -2720,"));
  free(js);
  px_sim_result_fini(&r[0]);
  px_sim_result_fini(&r[1]);
  two_close(&w);
}

/* ---- the Fair Tree position, from a core driven by hand --------------------- */

static void core_do(struct px_core *c, struct px_event *ev, int64_t t) {
  struct px_event_result res;
  if (px_core_apply(c, ev, PX_SIM_EPOCH_S + t, &res)) fail_msg("event at %lld: %s", (long long)t, res.diag.msg);
}

static void submit(struct px_core *c, uint64_t id, const char *acct, int64_t t) {
  struct px_jobspec spec;
  px_jobspec_init(&spec);
  spec.user = spec.account = (char *)acct;
  spec.gpus_per_node = 8;
  spec.time_limit_s = 600;
  spec.mem_per_node_mib = PX_SIM_JOB_MEM_MIB;
  struct px_event ev = {.kind = PX_EV_SUBMIT, .job_id = id, .spec = &spec};
  core_do(c, &ev, t);
}

static void cycle_starts(struct px_core *c, int64_t t, uint64_t job) {
  struct px_actions acts;
  px_actions_init(&acts);
  assert_int_equal(px_core_cycle(c, PX_SIM_EPOCH_S + t, &acts), 0);
  assert_int_equal(acts.len, 1);
  assert_int_equal(acts.v[0].kind, PX_ACT_START);
  assert_int_equal(acts.v[0].job_id, job);
  px_actions_fini(&acts);
}

/*
 * One 8-GPU node, users qa and qb (equal shares). t=0: job 1 (qa) starts;
 * the cycle saw no usage, so both level factors are infinite and tied:
 * both users rank 2 of 2, factor 1. t=100: job 1 ends, job 2 (qb) starts;
 * the cycle sees qa with all the usage: qb (no usage, infinite) ranks 2,
 * factor 1, qa 1 of 2, factor 0.5, and qa's level factor is its share
 * over its usage, 0.5 / 1. t=300: a sample without a cycle keeps them.
 * Averages over [0, 300]: qa (100 x 1 + 200 x 0.5) / 300 = 2/3, qb 1.
 */
static void test_fair_share_position(void **state) {
  (void)state;
  struct two w;
  two_open(&w, "two_accounts.csv", 1);
  int err = 0;
  struct px_core *c = px_core_new(w.conf, 1, &err);
  assert_non_null(c);
  struct px_sim_result r;
  memset(&r, 0, sizeof r);
  assert_int_equal(px_sim_series_init(&r.series, 16, PX_SIM_CH_ACCOUNT + 2, 0, 100), 0);
  submit(c, 1, "qa", 0);
  cycle_starts(c, 0, 1);
  assert_int_equal(px_sim_fs_sample(&r, &w.setup, c, 0), 0);
  assert_true(r.fs.factor_end[0] == 1.0 && r.fs.factor_end[1] == 1.0);
  assert_true(isinf(r.fs.level_end[0]) && isinf(r.fs.level_end[1]));
  struct px_event end = {.kind = PX_EV_END, .job_id = 1, .state = PX_JOB_COMPLETED};
  core_do(c, &end, 100);
  submit(c, 2, "qb", 100);
  cycle_starts(c, 100, 2);
  assert_int_equal(px_sim_fs_sample(&r, &w.setup, c, 100), 0);
  assert_true(r.fs.factor_end[0] == 0.5 && r.fs.factor_end[1] == 1.0);
  assert_true(fabs(r.fs.level_end[0] - 0.5) < 1e-12 && isinf(r.fs.level_end[1]));
  assert_int_equal(px_sim_fs_sample(&r, &w.setup, c, 300), 0);
  /* the end-of-run figures (the jobs themselves do not matter here) */
  struct px_sim_jobrun runs[3];
  for (int i = 0; i < 3; i++) runs[i] = (struct px_sim_jobrun){-1, -1, -1, 0, 0, 0, PX_SIMJ_SKIPPED, 0};
  assert_int_equal(px_sim_result_compute(&r, &w.setup, runs), 0);
  assert_true(fabs(r.fs.factor_avg[0] - 2.0 / 3) < 1e-12);
  assert_true(r.fs.factor_avg[1] == 1.0);
  struct px_sim_result both[2] = {r, r}; /* shallow: only read */
  snprintf(both[0].policy, sizeof both[0].policy, "first");
  char *js = json_of(&w, both, 2);
  assert_non_null(strstr(js, "\"fair_share_position\": {\"factor_avg\": 0.6667, \"factor_end\": 0.5000, "
                             "\"level_fs_end\": 0.5000}"));
  assert_non_null(strstr(js, "\"fair_share_position\": {\"factor_avg\": 1.0000, \"factor_end\": 1.0000, "
                             "\"level_fs_end\": null}"));
  assert_non_null(strstr(js, "\"fair_share_against\": \"first\", \"factor_avg\": 0.0000}"));
  free(js);
  px_sim_result_fini(&r);
  px_core_free(c);
  two_close(&w);
}

/*
 * The recorded run (--from-accounting) has no core of its own: its runs go
 * to one as recovery gives it running jobs (fs_record.c). The record is
 * FIFO's outcome above: a1 0-100, a2 100-200 (qa), b1 200-300 (qb).
 * Without a replay's clock that core cycles at every start and end: the
 * cycles at 0 .. 200 rank as in test_fair_share_position (qa 1, then 0.5
 * once a1 has run; qb 1, b1 only starting at 200); at 300 qa holds two of
 * the three jobs' usage, qb one (every job bills its one CPU): level
 * factors qa 0.5 / (2/3) = 0.75, qb 0.5 / (1/3) = 1.5 (up to the 7-day
 * decay over 300 s), qb first. qa averages (100 x 1 + 200 x 0.5) / 300.
 */
static void test_recorded_position(void **state) {
  (void)state;
  struct two w;
  two_open(&w, "two_accounts_recorded.csv", 1);
  struct px_sim_result r;
  struct px_diag d;
  if (px_sim_recorded(&w.setup, &r, &d)) fail_msg("%s", d.msg);
  assert_false(r.fs.sampled); /* not yet given to a core */
  assert_int_equal(px_sim_fs_recorded(&r, &w.setup, NULL), 0);
  assert_true(r.fs.sampled);
  assert_int_equal(r.fs.t0_s, 0);
  assert_int_equal(r.fs.last_s, 300);
  assert_true(fabs(r.fs.factor_avg[0] - 2.0 / 3) < 1e-12 && r.fs.factor_avg[1] == 1.0);
  assert_true(r.fs.factor_end[0] == 0.5 && r.fs.factor_end[1] == 1.0);
  assert_true(fabs(r.fs.level_end[0] - 0.75) < 1e-3 && fabs(r.fs.level_end[1] - 1.5) < 1e-3);
  assert_int_equal(r.acct_wait_p95_s[0], 100);
  assert_int_equal(r.acct_wait_p95_s[1], 190);
  px_sim_result_fini(&r);
  two_close(&w);
}

/*
 * The same record replayed under FIFO as --from-accounting replays it (a
 * cycle after each event) runs every job when the record did. Its core
 * ranked at 0, 100 and 200 only (none at 10: no room; none at 300: nothing
 * pending), so at the end it still shows the ranks of 200, where qa had
 * all the usage: level factors qa 0.5 and qb infinite, not the 0.75 and
 * 1.5 of a core that also ranked at 300 (above). Given the replay's clock
 * the recorded run's core ranks at the same instants: every position
 * equal, to the bit.
 */
static void test_recorded_position_replayed(void **state) {
  (void)state;
  struct two w;
  two_open(&w, "two_accounts_recorded.csv", 1);
  struct px_sim_result rec, rep;
  struct px_diag d;
  if (px_sim_recorded(&w.setup, &rec, &d)) fail_msg("%s", d.msg);
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/policies/fifo.conf", getenv("PX_SRC"));
  struct px_sim_policy p;
  if (px_sim_policy_load(&p, path, &w.conf->sched, &d)) fail_msg("%s", d.msg);
  struct px_sim_jobrun *runs = NULL;
  struct px_sim_run_opts o = {.seed = 1, .runs_out = &runs, .cycle_per_event = true};
  if (px_sim_run(&w.setup, &p.sched, "cluster", &o, &rep, &d)) fail_msg("%s", d.msg);
  for (uint32_t i = 0; i < w.setup.njobs; i++) { /* the replay reproduces the record */
    const struct px_trace_job *t = &w.trace.jobs.v[w.setup.jobs[i].trace_index];
    assert_int_equal(runs[i].start_s, t->start_s);
    assert_int_equal(runs[i].end_s, t->end_s);
  }
  free(runs);
  assert_int_equal(rep.fs.ranked_s.len, 3);
  assert_int_equal(rep.fs.ranked_s.v[2], 200);
  assert_true(fabs(rep.fs.level_end[0] - 0.5) < 1e-12 && isinf(rep.fs.level_end[1]));
  assert_int_equal(px_sim_fs_recorded(&rec, &w.setup, &rep), 0);
  assert_int_equal(rec.fs.t0_s, rep.fs.t0_s);
  assert_int_equal(rec.fs.last_s, rep.fs.last_s);
  for (uint32_t a = 0; a < 2; a++) {
    assert_memory_equal(&rec.fs.factor_avg[a], &rep.fs.factor_avg[a], sizeof(double));
    assert_memory_equal(&rec.fs.factor_end[a], &rep.fs.factor_end[a], sizeof(double));
    assert_memory_equal(&rec.fs.level_end[a], &rep.fs.level_end[a], sizeof(double));
  }
  /* and the report shows them so: no change against the recorded column */
  struct px_sim_result both[2] = {rec, rep}; /* shallow: only read */
  char *js = json_of(&w, both, 2);
  assert_non_null(strstr(js, "\"fair_share_against\": \"recorded\", \"factor_avg\": 0.0000}"));
  assert_null(strstr(js, "\"fair_share_against\": \"recorded\", \"factor_avg\": -"));
  free(js);
  px_sim_result_fini(&rec);
  px_sim_result_fini(&rep);
  two_close(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_waits_two_policies),
      cmocka_unit_test(test_lost_two_policies),
      cmocka_unit_test(test_fair_share_position),
      cmocka_unit_test(test_recorded_position),
      cmocka_unit_test(test_recorded_position_replayed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
