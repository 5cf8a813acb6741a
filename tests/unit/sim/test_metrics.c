/*
 * test_metrics.c - the time series (exact integrals, bucket merging) and the
 * end-of-run figures (nearest-rank percentiles, shares, Jain's index,
 * conservation) on job times written by hand.
 */
#include "px_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cluster.h"
#include "sim/metrics.h"

static int64_t ch_sum(const struct px_sim_series *s, uint32_t ch) {
  int64_t t = 0;
  for (uint32_t b = 0; b < s->nbuckets; b++) t += s->v[(size_t)b * s->nchannels + ch];
  return t;
}

/* 4 buckets of 10 s from t=100. 3 GPUs over [105, 125) = 60 GPU-s: 15 + 30 + 15. */
static void test_series_split(void **state) {
  (void)state;
  struct px_sim_series s;
  assert_int_equal(px_sim_series_init(&s, 4, 2, 100, 10), 0);
  px_sim_series_add(&s, 0, 105, 125, 3);
  assert_int_equal(s.v[0 * 2], 15);
  assert_int_equal(s.v[1 * 2], 30);
  assert_int_equal(s.v[2 * 2], 15);
  assert_int_equal(s.used, 3);
  /* Past the end (t=100+40): the buckets merge pairwise and the width doubles
   * until [135, 175) fits: width 20 covers 80 s. Total stays exact. */
  px_sim_series_add(&s, 1, 135, 175, 2);
  assert_int_equal(s.width_s, 20);
  assert_int_equal(s.v[0 * 2], 45);        /* 15 + 30 */
  assert_int_equal(s.v[1 * 2], 15);
  assert_int_equal(s.v[1 * 2 + 1], 10);    /* [135,140) x 2 */
  assert_int_equal(s.v[2 * 2 + 1], 40);    /* [140,160) */
  assert_int_equal(s.v[3 * 2 + 1], 30);    /* [160,175) */
  assert_int_equal(ch_sum(&s, 0), 60);
  assert_int_equal(ch_sum(&s, 1), 80);
  px_sim_series_fini(&s);
}

/*
 * Two accounts on a 1x8 cluster; five jobs done (submit, start, end, gpus):
 *   a: (0,0,10,1) (0,10,30,2) (5,30,35,1)    JCT 10, 30, 30   wait 0, 10, 25
 *   b: (0,0,100,4) (50,100,110,8)            JCT 100, 60      wait 0, 50
 * JCT sorted 10 30 30 60 100: p50 = v[ceil(2.5)-1] = v[2] = 30, p95 = v[4] = 100.
 * run/JCT: a (1 + 20/30 + 5/30)/3 = 11/18, b (1 + 10/60)/2 = 7/12.
 * Jain = (11/18 + 7/12)^2 / (2 ((11/18)^2 + (7/12)^2)).
 */
static void test_result(void **state) {
  (void)state;
  const char *acc[] = {"a", "b"};
  struct px_conf *c = px_sim_cluster_new(1, 8, acc, 2, NULL);
  struct px_sim_job jobs[] = {
      {.submit_s = 0, .duration_s = 10, .gpus = 1, .nodes = 1, .account = 0},
      {.submit_s = 0, .duration_s = 20, .gpus = 2, .nodes = 1, .account = 0},
      {.submit_s = 5, .duration_s = 5, .gpus = 1, .nodes = 1, .account = 0},
      {.submit_s = 0, .duration_s = 100, .gpus = 4, .nodes = 1, .account = 1},
      {.submit_s = 50, .duration_s = 10, .gpus = 8, .nodes = 1, .account = 1},
  };
  struct px_sim_jobrun runs[] = {
      {0, 0, 10, 0, 0, 0, PX_SIMJ_DONE, 0},    {10, 10, 30, 0, 0, 0, PX_SIMJ_DONE, 0},
      {30, 30, 35, 0, 0, 0, PX_SIMJ_DONE, 0},  {0, 0, 100, 0, 0, 0, PX_SIMJ_DONE, 0},
      {100, 100, 110, 0, 0, 0, PX_SIMJ_DONE, 0},
  };
  const char *names[] = {"a", "b"};
  uint32_t assoc[] = {2, 4};
  struct px_sim_setup s = {.conf = c, .jobs = jobs, .njobs = 5, .accounts = names, .account_assoc = assoc,
                           .naccounts = 2, .total_gpus = 8, .node_gpus = 8, .nnodes = 1};
  struct px_sim_result r;
  memset(&r, 0, sizeof r);
  assert_int_equal(px_sim_series_init(&r.series, 16, 4, 0, 10), 0);
  /* The busy levels the loop would integrate: 10 + 40 + 5 + 400 + 80 = 535 GPU-s. */
  for (size_t i = 0; i < 5; i++) px_sim_series_add(&r.series, PX_SIM_CH_BUSY, runs[i].start_s, runs[i].end_s, jobs[i].gpus);
  r.submitted = r.done = 5;
  assert_int_equal(px_sim_result_compute(&r, &s, runs), 0);
  assert_int_equal(r.makespan_s, 110);
  assert_int_equal(r.jct[PX_SIM_SIZE_ALL].n, 5);
  assert_int_equal(r.jct[PX_SIM_SIZE_ALL].p50_s, 30);
  assert_int_equal(r.jct[PX_SIM_SIZE_ALL].p95_s, 100);
  assert_true(fabs(r.jct[PX_SIM_SIZE_ALL].avg_s - 46.0) < 1e-9);
  assert_int_equal(r.jct[PX_SIM_SIZE_1].n, 2);
  assert_int_equal(r.jct[PX_SIM_SIZE_2_8].n, 3);
  assert_int_equal(r.wait[PX_SIM_SIZE_ALL].max_s, 50);
  assert_int_equal(r.gpu_s_busy, 535);
  assert_int_equal(r.gpu_s_jobs, 535);
  assert_true(r.conserved);
  assert_true(fabs(r.util_avg - 535.0 / (8 * 110)) < 1e-12);
  assert_int_equal(r.acct_gpu_s[0], 55);
  assert_int_equal(r.acct_gpu_s[1], 480);
  assert_true(fabs(r.acct_fair[0] - 0.5) < 1e-12);
  assert_true(fabs(r.acct_wait_avg_s[0] - 35.0 / 3) < 1e-9);
  double a = 11.0 / 18, b = 7.0 / 12;
  assert_true(fabs(r.jain - (a + b) * (a + b) / (2 * (a * a + b * b))) < 1e-12);
  px_sim_result_fini(&r);

  /* A job still running at the end (or GPU-seconds not matching) breaks conservation. */
  memset(&r, 0, sizeof r);
  assert_int_equal(px_sim_series_init(&r.series, 16, 4, 0, 10), 0);
  px_sim_series_add(&r.series, PX_SIM_CH_BUSY, 0, 10, 1);
  r.submitted = 5;
  r.done = 4;
  assert_int_equal(px_sim_result_compute(&r, &s, runs), 0);
  assert_false(r.conserved);
  px_sim_result_fini(&r);
  px_conf_free(c);
}

static void test_size_classes(void **state) {
  (void)state;
  assert_int_equal(px_sim_size_class(1), PX_SIM_SIZE_1);
  assert_int_equal(px_sim_size_class(2), PX_SIM_SIZE_2_8);
  assert_int_equal(px_sim_size_class(8), PX_SIM_SIZE_2_8);
  assert_int_equal(px_sim_size_class(9), PX_SIM_SIZE_9_64);
  assert_int_equal(px_sim_size_class(64), PX_SIM_SIZE_9_64);
  assert_int_equal(px_sim_size_class(65), PX_SIM_SIZE_65UP);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_series_split),
      cmocka_unit_test(test_result),
      cmocka_unit_test(test_size_classes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
