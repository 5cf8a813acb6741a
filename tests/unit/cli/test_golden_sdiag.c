/*
 * test_golden_sdiag.c - sdiag's report (px_fmt_sdiag) against the real
 * Slurm 22.05 sdiag captured on the reference harness
 * (tests/data/golden/harness/sdiag.txt, its README gives the commands):
 * the document GET /v1/diag would send with the same numbers renders byte
 * for byte, but for the one difference patched below with its reason. Also
 * the -i / -t orders.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "golden.h"

static json_t *rpc(const char *name, int id, int count, int ave, int total) {
  return json_pack("{ss si si si si}", "type", name, "type_id", id, "count", count,
                   "average_time_us", ave, "total_time_us", total);
}

/* The numbers of the harness' capture, as the server's document. */
static json_t *harness_doc(void) {
  json_t *types = json_pack(
      "[o o o o o o o]", rpc("REQUEST_COMPLETE_BATCH_SCRIPT", 5018, 3, 1740, 5222),
      rpc("REQUEST_JOB_INFO", 2003, 3, 1218, 3655), rpc("REQUEST_PARTITION_INFO", 2009, 3, 1099, 3297),
      rpc("REQUEST_STATS_INFO", 2035, 2, 169, 338), rpc("REQUEST_SUBMIT_BATCH_JOB", 4003, 2, 1238, 2477),
      rpc("REQUEST_JOB_INFO_SINGLE", 2021, 1, 220, 220), rpc("REQUEST_FED_INFO", 2049, 1, 149, 149));
  json_t *users = json_pack("[{ss si si si si}]", "user", "root", "user_id", 0, "count", 15,
                            "average_time_us", 1023, "total_time_us", 15358);
  json_t *d = json_pack(
      "{sI sI sI si si si si si si"
      " s{si si si si si si si}"
      " s{si si si si si si si} s{si si si si si si si} s{si si sI si} so so}",
      "time", (json_int_t)1796417056, "since", (json_int_t)1796416985, "job_states_ts",
      (json_int_t)1796417039, "server_thread_count", 3, "agent_queue_size", 0, "agent_count", 0,
      "agent_thread_count", 0, "dbd_agent_queue_size", 0, "gettimeofday_latency_us", 17, "jobs",
      "submitted", 2, "started", 4, "completed", 3, "cancelled", 0, "failed", 0, "pending", 1,
      "running", 2, "main", "count", 6, "last_us", 94, "max_us", 411, "mean_us", 140, "last_depth", 2,
      "mean_depth", 1, "queue_length", 2, "backfill", "count", 1, "last_us", 431, "max_us", 431,
      "mean_us", 431, "last_depth", 2, "mean_depth", 2, "queue_length", 2, "backfill_jobs", "total",
      1, "last_cycle", 1, "when_last_cycle", (json_int_t)1796417032, "active", 0, "rpcs_by_type",
      types, "rpcs_by_user", users);
  assert_non_null(d);
  return d;
}

/* The report as a malloc'd string (read back from a temporary file). */
static char *render(const json_t *d, char sort_by) {
  FILE *out = tmpfile();
  assert_non_null(out);
  px_fmt_sdiag(out, d, sort_by);
  long n = ftell(out);
  char *got = calloc(1, (size_t)n + 1);
  assert_non_null(got);
  rewind(out);
  assert_int_equal(fread(got, 1, (size_t)n, out), (size_t)n);
  fclose(out);
  return got;
}

static void sdiag_matches_harness(void **state) {
  (void)state;
  json_t *d = harness_doc();
  char *got = render(d, 'c'), *want = golden_read("harness/sdiag.txt");
  assert_non_null(want);
  /* Phalanx's backfill plans in its reservation list, not in Slurm's table
   * of node-space records: there is no table size to report. */
  golden_patch(&want, "\tLast table size: 3\n", "\tLast table size: 0\n");
  golden_patch(&want, "\tMean table size: 3\n", "\tMean table size: 0\n");
  int diff = golden_diff("harness/sdiag.txt", want, got);
  free(want);
  free(got);
  json_decref(d);
  assert_int_equal(diff, 0);
}

/* The first RPC line under each order. */
static void first_rpc(const json_t *d, char sort_by, const char *want) {
  char *got = render(d, sort_by);
  const char *p = strstr(got, "by message type\n\t");
  assert_non_null(p);
  assert_int_equal(strncmp(p + strlen("by message type\n\t"), want, strlen(want)), 0);
  free(got);
}

static void sdiag_sort_orders(void **state) {
  (void)state;
  json_t *d = harness_doc();
  first_rpc(d, 'i', "REQUEST_JOB_INFO "); /* lowest id: 2003 */
  first_rpc(d, 't', "REQUEST_COMPLETE_BATCH_SCRIPT "); /* most total time: 5222 */
  first_rpc(d, 'T', "REQUEST_COMPLETE_BATCH_SCRIPT "); /* highest average: 1740 */
  json_decref(d);
}

/* Before a minute of data and before any backfill cycle: the lines Slurm
 * leaves out are left out (the harness' first capture). */
static void sdiag_short_and_no_backfill(void **state) {
  (void)state;
  json_t *d = harness_doc();
  json_object_set_new(d, "since", json_integer(1796417056 - 55));
  json_object_set_new(json_object_get(d, "backfill"), "count", json_integer(0));
  char *got = render(d, 'c');
  assert_null(strstr(got, "Cycles per minute"));
  assert_non_null(strstr(got, "\tLast cycle when: N/A\n"));
  assert_null(strstr(got, "Depth Mean"));
  assert_null(strstr(got, "Mean table size"));
  free(got);
  json_decref(d);
}

int main(void) {
  setenv("TZ", "UTC", 1);
  tzset();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sdiag_matches_harness),
      cmocka_unit_test(sdiag_sort_orders),
      cmocka_unit_test(sdiag_short_and_no_backfill),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
