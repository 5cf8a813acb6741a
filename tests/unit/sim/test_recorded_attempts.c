/*
 * test_recorded_attempts.c - the recorded column of a record whose job the
 * cluster requeued (recorded.c, fs_record.c): the earlier attempt's GPU
 * time shows as lost, its usage is charged to fair share as the cluster
 * charged it, and fidelity compares first starts. Worked by hand.
 */
#include "px_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/cluster.h"
#include "sim/recorded.h"
#include "sim/report.h"

/*
 * One 8-GPU node. Job a (qa, 8 GPUs) ran 0-30 until its node failed, was
 * requeued and ran again 40-140; b (qb, 8 GPUs, submitted at 10) ran
 * 140-240. Without the attempt column (REQUEUED_NONE) the record is a's
 * last run only.
 */
static const char RECORD[] =
    "job_id,submit_s,start_s,end_s,duration_s,gpus,nodes,user,queue,status,time_limit_s,attempt\n"
    "a,0,0,30,30,8,1,root,qa,NODE_FAIL,240,0\n"
    "a,0,40,140,100,8,1,root,qa,COMPLETED,240,1\n"
    "b,10,140,240,100,8,1,root,qb,COMPLETED,240,0\n";

struct rec {
  struct px_trace trace;
  struct px_conf *conf;
  struct px_sim_setup setup;
  struct px_sim_result r;
};

/* The record text without the rows that start with skip (NULL: all of them). */
static void rec_open(struct rec *w, const char *skip) {
  char text[512] = "";
  for (const char *p = RECORD, *e; *p; p = e + 1) {
    e = strchr(p, '\n');
    if (!skip || strncmp(p, skip, strlen(skip))) strncat(text, p, (size_t)(e - p + 1));
  }
  struct px_diag d;
  if (px_trace_parse(&w->trace, text, strlen(text), &d)) fail_msg("%s", d.msg);
  const char *acc[] = {"qa", "qb"};
  w->conf = px_sim_cluster_new(1, 8, acc, 2, NULL);
  assert_non_null(w->conf);
  if (px_sim_setup_init(&w->setup, &w->trace, w->conf, 2.0, &d)) fail_msg("%s", d.msg);
  if (px_sim_recorded(&w->setup, &w->r, &d)) fail_msg("%s", d.msg);
  assert_int_equal(px_sim_fs_recorded(&w->r, &w->setup, NULL), 0);
  assert_true(w->r.conserved);
}

static void rec_close(struct rec *w) {
  px_sim_result_fini(&w->r);
  px_sim_setup_fini(&w->setup);
  px_conf_free(w->conf);
  px_trace_fini(&w->trace);
}

/*
 * a's first run held 8 GPUs x 30 s for nothing: 240 GPU-s lost (qa held
 * 240 + 800, delivered 800), one preemption; busy 1,840 = jobs' 1,600 +
 * 240 lost. a waited 0-0 and 30-40 (its wait, to its last start, 40); b
 * 130. Fair share: each job bills its one CPU, so at 240 qa has used 30 +
 * 100 CPU-s and qb 100: level factors qa 0.5 / (130 / 230) = 0.885, qb
 * 0.5 / (100 / 230) = 1.15 (up to 240 s of the 7-day decay); without the
 * first run both used 100: 1 and 1.
 */
static void test_earlier_attempt_lost(void **state) {
  (void)state;
  struct rec w;
  rec_open(&w, NULL);
  const struct px_sim_result *r = &w.r;
  assert_int_equal(w.setup.njobs, 2);
  assert_int_equal(r->done, 2);
  assert_int_equal(r->preemptions, 1);
  assert_int_equal(r->gpu_s_lost, 240);
  assert_int_equal(r->gpu_s_jobs, 1600);
  assert_int_equal(r->gpu_s_busy, 1840);
  assert_int_equal(r->acct_gpu_s_held[0], 1040);
  assert_int_equal(r->acct_gpu_s_lost[0], 240);
  assert_int_equal(r->acct_gpu_s_delivered[0], 800);
  assert_int_equal(r->acct_gpu_s_held[1], 800);
  assert_int_equal(r->acct_gpu_s_lost[1], 0);
  assert_true(r->acct_wait_avg_s[0] == 40 && r->acct_wait_avg_s[1] == 130);
  assert_true(fabs(r->fs.level_end[0] - 0.5 / (130.0 / 230)) < 1e-3);
  assert_true(fabs(r->fs.level_end[1] - 0.5 / (100.0 / 230)) < 1e-3);
  /* the report says the record has them, and what they cost */
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  struct px_sim_report rep = {.trace_path = "t", .setup = &w.setup, .results = r, .nresults = 1};
  px_sim_report_table(out, &rep);
  fclose(out);
  assert_non_null(strstr(buf, "\n  requeued in the record: 1 jobs, 1 earlier attempts"));
  assert_non_null(strstr(buf, "\npreemptions                                 1\n"));
  free(buf);
  rec_close(&w);
  rec_open(&w, "a,0,0,30,"); /* the record of a's last attempt only */
  assert_int_equal(w.r.gpu_s_lost, 0);
  assert_int_equal(w.r.preemptions, 0);
  assert_int_equal(w.r.acct_gpu_s_lost[0], 0);
  assert_true(fabs(w.r.fs.level_end[0] - 1.0) < 1e-3 && fabs(w.r.fs.level_end[1] - 1.0) < 1e-3);
  rec_close(&w);
}

/*
 * A replay that starts a at 5 and b at 120: against the first starts (a
 * 0, b 140) |5 - 0| and |110 - 130|, mean 12.5 s over the mean recorded
 * wait (0 + 130) / 2 = 65 s; against a's last start (40) it would be
 * |5 - 40| and 20: 27.5 s over 85 s.
 */
static void test_fidelity_first_start(void **state) {
  (void)state;
  struct rec w;
  rec_open(&w, NULL);
  struct px_sim_jobrun runs[2] = {
      {.first_start_s = 5, .start_s = 5, .end_s = 105, .state = PX_SIMJ_DONE},
      {.first_start_s = 120, .start_s = 120, .end_s = 220, .state = PX_SIMJ_DONE},
  };
  struct px_sim_fidelity f;
  px_sim_fidelity(&w.setup, runs, &f);
  assert_int_equal(f.jobs, 2);
  assert_true(f.mean_abs_diff_s == 12.5 && f.mean_recorded_wait_s == 65);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  assert_int_equal(px_sim_fidelity_jobs(out, &w.setup, runs), 0);
  fclose(out);
  assert_non_null(strstr(buf, "\na,0,8,1,qa,0,5,0,5,5\n"));
  free(buf);
  rec_close(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_earlier_attempt_lost),
      cmocka_unit_test(test_fidelity_first_start),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
