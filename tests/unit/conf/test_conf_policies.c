/*
 * The scheduling-policy keys (docs/scheduling-policies.md): backfill window
 * and resolution, Slurm's SchedulerParameters bf_* options, preemption rate
 * limits and exemption, and a QoS's GraceSignal. Table-driven: good values
 * with the fields they must set (worked out by hand from Slurm's time format,
 * where a bare number is minutes), and every error path with file, line and
 * phrase.
 */
#include "px_test.h"

#include <stdint.h>
#include <string.h>

#include "conf/conf.h"

/* Defaults from conf.h's comments: 1 day window, 300 s resolution, depth all, 3600 s exemption. */
#define DEF_WIN 86400
#define DEF_RES 300
#define DEF_EX 3600

struct good_case {
  const char *slurm, *acct;
  int64_t window_s, resolution_s;
  uint32_t depth, max_per_hour, acct_max_per_hour, exempt_after;
  int64_t exempt_s;
  int32_t grace_signal; /* of QoS "high" when acct is set */
  uint32_t nwarnings;
};

static const struct good_case good[] = {
    {"", NULL, DEF_WIN, DEF_RES, UINT32_MAX, 0, 0, 0, DEF_EX, 0, 0},
    {"BackfillWindow=2-0\n", NULL, 2 * 86400, DEF_RES, UINT32_MAX, 0, 0, 0, DEF_EX, 0, 0},
    {"backfillwindow=90\n", NULL, 90 * 60, DEF_RES, UINT32_MAX, 0, 0, 0, DEF_EX, 0, 0},
    {"BackfillWindow=1:30:00\n", NULL, 5400, DEF_RES, UINT32_MAX, 0, 0, 0, DEF_EX, 0, 0},
    {"BackfillResolution=60\n", NULL, DEF_WIN, 60, UINT32_MAX, 0, 0, 0, DEF_EX, 0, 0},
    {"PreemptMaxPerHour=20\nPreemptAccountMaxPerHour=5\n", NULL, DEF_WIN, DEF_RES, UINT32_MAX, 20, 5, 0, DEF_EX,
     0, 0},
    {"PreemptExemptAfter=3\nPREEMPTEXEMPTPERIOD=2:00:00\n", NULL, DEF_WIN, DEF_RES, UINT32_MAX, 0, 0, 3, 7200, 0,
     0},
    /* bf_window is minutes (1440 = 1 day), bf_resolution seconds. */
    {"SchedulerParameters=bf_window=1440,bf_resolution=120,bf_max_job_test=500\n", NULL, 86400, 120, 500, 0, 0,
     0, DEF_EX, 0, 0},
    /* Unknown options: ignored with exactly one warning per line. */
    {"SchedulerParameters=bf_continue,BF_WINDOW=60,defer,max_rpc_cnt=150\n", NULL, 3600, DEF_RES, UINT32_MAX, 0,
     0, 0, DEF_EX, 0, 1},
    {"", "QOS=high GraceSignal=USR1\n", DEF_WIN, DEF_RES, UINT32_MAX, 0, 0, 0, DEF_EX, 10, 0},
    {"", "QOS=high gracesignal=SIGusr2\n", DEF_WIN, DEF_RES, UINT32_MAX, 0, 0, 0, DEF_EX, 12, 0},
    {"", "QOS=high GraceSignal=2\n", DEF_WIN, DEF_RES, UINT32_MAX, 0, 0, 0, DEF_EX, 2, 0},
    {"", "QOS=high GraceSignal=SIGTERM\n", DEF_WIN, DEF_RES, UINT32_MAX, 0, 0, 0, DEF_EX, 15, 0},
};

static void good_values_set_their_fields(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    const struct good_case *g = &good[i];
    struct px_conf_text t = {g->slurm, NULL, g->acct, "slurm.conf", 0};
    struct px_conf *c = NULL;
    struct px_conf_diags d = {0};
    if (px_conf_parse_text(&t, &c, &d) != 0) {
      print_error("case %zu failed: %s\n", i, d.len ? d.v[0].text : "?");
      fail();
    }
    const struct px_conf_sched *s = &c->sched;
    assert_int_equal(s->backfill_window_s, g->window_s);
    assert_int_equal(s->backfill_resolution_s, g->resolution_s);
    assert_int_equal(s->backfill_depth, g->depth);
    assert_int_equal(s->preempt_max_per_hour, g->max_per_hour);
    assert_int_equal(s->preempt_account_max_per_hour, g->acct_max_per_hour);
    assert_int_equal(s->preempt_exempt_after, g->exempt_after);
    assert_int_equal(s->preempt_exempt_s, g->exempt_s);
    if (g->acct) {
      uint32_t q = px_conf_find_qos(c, "high");
      assert_true(q != PX_NONE);
      assert_int_equal(c->qos[q].grace_signal, g->grace_signal);
    }
    assert_int_equal(d.nwarnings, g->nwarnings);
    px_conf_free(c);
    px_conf_diags_fini(&d);
  }
}

/* The cycle bounds of issue 5: Slurm's names in SchedulerParameters, 0
 * (unbounded) when absent. */
static void cycle_bounds_are_read(void **state) {
  (void)state;
  const char *lines[] = {"", "SchedulerParameters=bf_interval=30,bf_max_job_test=1000,default_queue_depth=100\n"};
  for (int i = 0; i < 2; i++) {
    struct px_conf_text t = {lines[i], NULL, NULL, "slurm.conf", 0};
    struct px_conf *c = NULL;
    struct px_conf_diags d = {0};
    assert_int_equal(px_conf_parse_text(&t, &c, &d), 0);
    assert_int_equal(c->sched.bf_interval_s, i ? 30 : 0);
    assert_int_equal(c->sched.bf_max_job_test, i ? 1000 : 0);
    assert_int_equal(c->sched.default_queue_depth, i ? 100 : 0);
    assert_int_equal(d.nwarnings, 0);
    px_conf_free(c);
    px_conf_diags_fini(&d);
  }
}

struct err_case {
  const char *slurm, *acct;
  const char *file;
  int line;
  const char *phrase;
};

static const struct err_case errs[] = {
    {"BackfillWindow=soon\n", NULL, "slurm.conf", 1, "BackfillWindow=soon: position 1"},
    {"\nBackfillWindow=1:75:00\n", NULL, "slurm.conf", 2, "minutes must be 0-59"},
    {"BackfillResolution=0\n", NULL, "slurm.conf", 1, "BackfillResolution=0: expected a whole number of seconds, at least 1"},
    {"BackfillResolution=5m\n", NULL, "slurm.conf", 1, "BackfillResolution=5m: expected a whole number"},
    {"PreemptMaxPerHour=-1\n", NULL, "slurm.conf", 1, "PreemptMaxPerHour=-1: expected a whole number"},
    {"PreemptAccountMaxPerHour=many\n", NULL, "slurm.conf", 1, "PreemptAccountMaxPerHour=many: expected a whole number"},
    {"PreemptExemptAfter=4294967295\n", NULL, "slurm.conf", 1, "PreemptExemptAfter=4294967295: expected a whole number"},
    {"PreemptExemptPeriod=later\n", NULL, "slurm.conf", 1, "PreemptExemptPeriod=later"},
    {"SchedulerParameters=bf_window=x\n", NULL, "slurm.conf", 1, "bf_window=x: expected a whole number"},
    {"SchedulerParameters=bf_resolution=0\n", NULL, "slurm.conf", 1, "bf_resolution=0: expected a positive number of seconds"},
    {"SchedulerParameters=bf_max_job_test=-2\n", NULL, "slurm.conf", 1, "bf_max_job_test=-2: expected a whole number"},
    {"SchedulerParameters=bf_interval=86401\n", NULL, "slurm.conf", 1, "bf_interval=86401: expected a whole number from 0 to 86400"},
    {"SchedulerParameters=bf_window=60,,defer\n", NULL, "slurm.conf", 1, "SchedulerParameters"},
    {"BackfilWindow=60\n", NULL, "slurm.conf", 1, "did you mean BackfillWindow?"},
    {"", "QOS=high GraceSignal=USR3\n", "accounts.conf", 1, "GraceSignal=USR3: expected a signal name"},
    {"", "QOS=high GraceSignal=0\n", "accounts.conf", 1, "GraceSignal=0: expected a signal name"},
    {"", "QOS=high GraceSignal=65\n", "accounts.conf", 1, "or number 1..64"},
    {"", "QOS=high GraceSignal=10x\n", "accounts.conf", 1, "GraceSignal=10x"},
    {"", "QOS=high GraceSignal=\n", "accounts.conf", 1, "GraceSignal="},
    {"LasThresholds=3600,3600\n", NULL, "slurm.conf", 1, "LasThresholds=3600,3600: expected ascending GPU-second "
                                                         "thresholds such as 3600,36000 (item 2: 3600 is not above "
                                                         "the previous threshold 3600)"},
    {"LasThresholds=0\n", NULL, "slurm.conf", 1, "(item 1: a whole number of GPU-seconds, at least 1)"},
    {"LasThresholds=3600,-5\n", NULL, "slurm.conf", 1, "(item 2: a whole number of GPU-seconds, at least 1)"},
    {"LasThresholds=1h\n", NULL, "slurm.conf", 1, "LasThresholds=1h: expected ascending"},
    {"LasThresholds=10,\n", NULL, "slurm.conf", 1, "(item 2: a whole number"},
    {"LasThresholds=\n", NULL, "slurm.conf", 1, "(item 1: a whole number"},
    {"LasThresholds=99999999999999999999\n", NULL, "slurm.conf", 1, "(item 1: a whole number"},
    {"LasThresholds=1,2,3,4,5,6,7,8\n", NULL, "slurm.conf", 1, "(at most 7 thresholds)"},
};

static bool has_error(const struct px_conf_diags *d, const struct err_case *c) {
  for (size_t i = 0; i < d->len; i++)
    if (d->v[i].is_error && d->v[i].line == c->line && !strcmp(d->v[i].file, c->file) &&
        strstr(d->v[i].text, c->phrase))
      return true;
  return false;
}

static void every_error_names_file_line_and_problem(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
    const struct err_case *c = &errs[i];
    struct px_conf_text t = {c->slurm, NULL, c->acct, "slurm.conf", 0};
    struct px_conf *conf = NULL;
    struct px_conf_diags d = {0};
    int rc = px_conf_parse_text(&t, &conf, &d);
    if (rc != PX_EPARSE || !has_error(&d, c) || conf) {
      print_error("case %zu: want %s:%d '%s', rc %d, got:\n", i, c->file, c->line, c->phrase, rc);
      for (size_t k = 0; k < d.len; k++) print_error("  %s:%d %s\n", d.v[k].file, d.v[k].line, d.v[k].text);
      fail();
    }
    px_conf_diags_fini(&d);
  }
}

/* LasThresholds= (PriorityOrder=las): the server reads what the simulator's policy files say. */
static void las_thresholds_are_read(void **state) {
  (void)state;
  static const struct {
    const char *slurm;
    uint32_t n;
    int64_t t[3];
  } cases[] = {
      {"", 0, {0}}, /* unset: the core's defaults (1 and 10 GPU-hours) */
      {"LasThresholds=3600,36000\n", 2, {3600, 36000}},
      {"PriorityOrder=las\nLasThresholds=60\n", 1, {60}},
      {"LasThresholds=1,2,3\n", 3, {1, 2, 3}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct px_conf_text t = {cases[i].slurm, NULL, NULL, "slurm.conf", 0};
    struct px_conf *conf = NULL;
    struct px_conf_diags d = {0};
    assert_int_equal(px_conf_parse_text(&t, &conf, &d), 0);
    assert_non_null(conf);
    assert_int_equal(conf->sched.las_nthresholds, cases[i].n);
    for (uint32_t k = 0; k < cases[i].n; k++) assert_int_equal(conf->sched.las_thresholds_gpu_s[k], cases[i].t[k]);
    px_conf_free(conf);
    px_conf_diags_fini(&d);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(las_thresholds_are_read),
      cmocka_unit_test(good_values_set_their_fields),
      cmocka_unit_test(cycle_bounds_are_read),
      cmocka_unit_test(every_error_names_file_line_and_problem),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
