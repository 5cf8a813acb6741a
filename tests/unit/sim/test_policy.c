/*
 * test_policy.c - policy files: the scheduling keys (slurm.conf's own key
 * table, px_conf_sched_set), Slurm durations, the errors (line and key),
 * "a failed parse changes nothing", and the example policies shipped in
 * examples/policies/ (each must load and mean what its name says).
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cluster.h"
#include "sim/policy.h"

static struct px_conf *cluster; /* its scheduling keys are the base of every policy */

static int parse(struct px_sim_policy *p, const char *text, struct px_diag *d) {
  return px_sim_policy_parse(p, text, strlen(text), d);
}

static void test_keys(void **state) {
  (void)state;
  struct px_sim_policy p = {.name = "x", .sched = cluster->sched};
  const char *text =
      "# a comment\n"
      "\n"
      "SchedulerType=sched/backfill BackfillMode=conservative  # two on a line\n"
      "BackfillDepth=100\n"
      "PriorityWeightFairshare=10000\n"
      "PriorityWeightAge=1000\n"
      "PriorityDecayHalfLife=7-0\n"
      "PriorityMaxAge=1-12:30\n"
      "PriorityOrder=las\n"
      "PreemptType=preempt/qos\n"
      "PreemptMode=requeue\n"
      "PolicyName=cons\n";
  struct px_diag d;
  assert_int_equal(parse(&p, text, &d), 0);
  assert_string_equal(p.name, "cons");
  assert_string_equal(p.sched.scheduler_type, "sched/backfill");
  assert_int_equal(p.sched.backfill, PX_BACKFILL_CONSERVATIVE);
  assert_int_equal(p.sched.backfill_depth, 100);
  assert_int_equal(p.sched.weight_fairshare, 10000);
  assert_int_equal(p.sched.weight_age, 1000);
  assert_int_equal(p.sched.decay_half_life_s, 7 * 86400);
  assert_int_equal(p.sched.max_age_s, 86400 + 12 * 3600 + 30 * 60); /* D-HH:MM */
  assert_int_equal(p.sched.order, PX_ORDER_LAS);
  assert_string_equal(p.sched.preempt_type, "preempt/qos");
  assert_int_equal(p.sched.preempt_mode, PX_PREEMPT_REQUEUE);
  /* Plain numbers are minutes (Slurm), MM:SS and HH:MM:SS as written. */
  assert_int_equal(parse(&p, "PriorityDecayHalfLife=90\nPriorityMaxAge=2:03:04", &d), 0);
  assert_int_equal(p.sched.decay_half_life_s, 90 * 60);
  assert_int_equal(p.sched.max_age_s, 2 * 3600 + 3 * 60 + 4);
  /* sched/backfill alone (after builtin) means EASY: Slurm's backfill plans for the top job. */
  assert_int_equal(parse(&p, "SchedulerType=sched/builtin\nSchedulerType=sched/backfill", &d), 0);
  assert_int_equal(p.sched.backfill, PX_BACKFILL_EASY);
}

/* Slurm's SchedulerParameters as slurm.conf writes them, and the Phalanx keys
 * for the plan's window and step. */
static void test_sched_params(void **state) {
  (void)state;
  struct px_sim_policy p = {.name = "x", .sched = cluster->sched};
  struct px_diag d;
  assert_int_equal(p.sched.bf_interval_s, 0); /* unbounded unless asked */
  assert_int_equal(p.sched.bf_max_job_test, 0);
  assert_int_equal(p.sched.default_queue_depth, 0);
  const char *slurm = "SchedulerParameters=bf_continue,bf_interval=30,bf_max_job_test=1000,bf_window=1440,"
                      "bf_resolution=60,default_queue_depth=100\n";
  assert_int_equal(parse(&p, slurm, &d), 0);
  assert_int_equal(p.sched.bf_interval_s, 30);
  assert_int_equal(p.sched.bf_max_job_test, 1000);
  assert_int_equal(p.sched.backfill_depth, 1000); /* as slurm.conf: the reservations too */
  assert_int_equal(p.sched.default_queue_depth, 100);
  assert_int_equal(p.sched.backfill_window_s, 86400);
  assert_int_equal(p.sched.backfill_resolution_s, 60);
  assert_int_equal(parse(&p, "BackfillWindow=2-0\nBackfillResolution=600", &d), 0);
  assert_int_equal(p.sched.backfill_window_s, 2 * 86400);
  assert_int_equal(p.sched.backfill_resolution_s, 600);
  struct px_sim_policy before = p;
  assert_int_equal(parse(&p, "SchedulerParameters=bf_interval=60,max_rpc_cnt=150", &d), PX_EPARSE);
  /* slurm.conf's own words (it warns and goes on; a policy stops) */
  assert_non_null(strstr(d.msg, "line 1: SchedulerParameters: 1 option(s) ignored (first: max_rpc_cnt=150)"));
  assert_int_equal(memcmp(&p, &before, sizeof p), 0); /* bf_interval=60 not applied either */
  assert_int_equal(parse(&p, "SchedulerParameters=bf_interval=86401", &d), PX_EPARSE);
  assert_int_equal(parse(&p, "SchedulerParameters=bf_resolution=0", &d), PX_EPARSE);
  assert_int_equal(parse(&p, "SchedulerParameters=bf_continue=1", &d), PX_EPARSE);
  assert_int_equal(parse(&p, "SchedulerParameters=", &d), PX_EPARSE);
  assert_int_equal(parse(&p, "BackfillResolution=0", &d), PX_EPARSE);
}

static void test_errors(void **state) {
  (void)state;
  struct px_sim_policy p = {.name = "x", .sched = cluster->sched};
  struct px_sim_policy before = p;
  struct px_diag d;
  assert_int_equal(parse(&p, "PriorityWeightAge=5\nNodeName=n1 Gres=gpu:8\n", &d), PX_EPARSE);
  assert_string_equal(d.msg, "line 2: NodeName is not a scheduling key a policy may set");
  assert_int_equal(memcmp(&p, &before, sizeof p), 0); /* nothing changed, not even line 1's key */
  assert_int_equal(parse(&p, "BackfillMode=sometimes", &d), PX_EPARSE);
  assert_string_equal(d.msg, "line 1: BackfillMode=sometimes: expected one of easy, conservative or none");
  assert_int_equal(parse(&p, "PriorityWeightAge=-1", &d), PX_EPARSE);
  assert_int_equal(parse(&p, "PriorityWeightAge=99999999999", &d), PX_EPARSE);
  assert_int_equal(parse(&p, "PriorityDecayHalfLife=7-", &d), PX_EPARSE);
  assert_int_equal(parse(&p, "PriorityDecayHalfLife=1:2:3:4", &d), PX_EPARSE);
  assert_int_equal(parse(&p, "justaword", &d), PX_EPARSE);
  assert_string_equal(d.msg, "line 1: 'justaword' is not Key=Value");
}

/* The shipped policies: the five built-ins of the issue, LAS, and the bench's
 * conservative under Slurm-style cycle bounds. */
static void test_examples(void **state) {
  (void)state;
  const char *src = getenv("PX_SRC");
  assert_non_null(src);
  struct px_conf_sched base = cluster->sched;
  static const struct {
    const char *file;
    enum px_backfill_mode bf;
    enum px_priority_order order;
    bool fairshare, preempt, basic;
  } ex[] = {
      {"fifo", PX_BACKFILL_NONE, PX_ORDER_FIFO, false, false, true},
      {"multifactor", PX_BACKFILL_NONE, PX_ORDER_MULTIFACTOR, true, false, false},
      {"easy", PX_BACKFILL_EASY, PX_ORDER_MULTIFACTOR, true, false, false},
      {"conservative", PX_BACKFILL_CONSERVATIVE, PX_ORDER_MULTIFACTOR, true, false, false},
      {"conservative-bounded", PX_BACKFILL_CONSERVATIVE, PX_ORDER_MULTIFACTOR, true, false, false},
      {"preempt", PX_BACKFILL_CONSERVATIVE, PX_ORDER_MULTIFACTOR, true, true, false},
      {"las", PX_BACKFILL_EASY, PX_ORDER_LAS, false, true, false},
      {"las-requeue", PX_BACKFILL_EASY, PX_ORDER_LAS, false, true, false},
  };
  for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/policies/%s.conf", src, ex[i].file);
    struct px_sim_policy p;
    struct px_diag d;
    int rc = px_sim_policy_load(&p, path, &base, &d);
    if (rc) fail_msg("%s: %s", path, d.msg);
    assert_string_equal(p.name, ex[i].file);
    assert_int_equal(p.sched.backfill, ex[i].bf);
    assert_int_equal(p.sched.order, ex[i].order);
    assert_int_equal(p.sched.weight_fairshare > 0, ex[i].fairshare);
    assert_int_equal(p.sched.preempt_mode != PX_PREEMPT_OFF, ex[i].preempt);
    assert_int_equal(strcmp(p.sched.priority_type, "priority/basic") == 0, ex[i].basic);
    assert_int_equal(p.sched.bf_interval_s > 0, strstr(ex[i].file, "bounded") != NULL); /* the bench's bounds */
    /* las.conf is Tiresias' setting: checkpoints every 15 min, 60 s to load, promotion at 4x */
    bool tiresias = strcmp(ex[i].file, "las") == 0;
    assert_int_equal(p.sched.ckpt_interval_s, tiresias ? 900 : 0);
    assert_int_equal(p.sched.ckpt_restart_s, tiresias ? 60 : 0);
    assert_true(p.sched.las_starve_limit == (tiresias ? 4.0 : 0.0));
  }
}

int main(void) {
  const char *acc[] = {"a"};
  cluster = px_sim_cluster_new(1, 8, acc, 1, NULL);
  if (!cluster) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_keys),
      cmocka_unit_test(test_sched_params),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_examples),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  px_conf_free(cluster);
  return rc;
}
