/*
 * Golden tests of squeue's output: the jobs of the real Slurm 22.05
 * transcript are rebuilt as px_job_info views (ids, names, states, reasons,
 * nodes and run times read off the transcript; priorities chosen so that
 * their order is the transcript's, with the held job at 0 as Slurm does) and
 * the output must equal the transcript's byte for byte.
 */
#include "px_test.h"

#include <time.h>

#include "cli/fmt_job.h"
#include "golden.h"

static struct px_job_info *pending_jobs(size_t *n) {
  /* id, name, reason, priority: the order of the transcript's PD lines. */
  static const struct {
    uint64_t id;
    const char *name, *reason;
    uint32_t prio;
  } pd[] = {{10053, "wrap", "PartitionNodeLimit", 3010}, {10127, "waits", "Resources", 3008},
            {10130, "later", "BeginTime", 3007},         {10129, "depends", "Dependency", 3006},
            {10055, "wrap", "PartitionTimeLimit", 3005}, {10128, "held", "JobHeldUser", 0}};
  struct px_job_info *v = calloc(6 + 64, sizeof *v);
  for (size_t i = 0; i < 6; i++) {
    job_init(&v[i], pd[i].id, "batch", pd[i].name, "PENDING", pd[i].reason, pd[i].prio);
    v[i].spec.time_limit_s = 600;
  }
  v[0].spec.nodes_min = 65;
  v[0].nnodes = 0;
  *n = 6;
  return v;
}

/* Fillers 10063..10126 on gpu0001..gpu0064 with the transcript's run times. */
static void add_fillers(struct px_job_info *v, size_t *n, int64_t now, const int secs[4],
                        bool skip_first) {
  for (int k = skip_first ? 1 : 0; k < 64; k++) {
    struct px_job_info *j = &v[(*n)++];
    char node[16];
    snprintf(node, sizeof node, "gpu%04d", k + 1);
    job_init(j, 10063 + (uint64_t)k, "batch", "filler", "RUNNING", "None", 2000);
    j->spec.time_limit_s = 1800;
    j->ncpus = 64;
    int e = k <= 20 ? secs[0] : k <= 46 ? secs[1] : k <= 61 ? secs[2] : secs[3];
    job_run(j, node, now - e, 0);
  }
}

/* The formatter sorts in place, so tests pick jobs by id. */
static struct px_job_info *find_job(struct px_job_info *v, size_t n, uint64_t id) {
  for (size_t i = 0; i < n; i++)
    if (v[i].job_id == id) return &v[i];
  fail_msg("job %llu not in the test data", (unsigned long long)id);
  return NULL;
}

static int render(const char *golden, struct px_job_info *v, size_t n,
                  const struct px_squeue_opts *o, const char *const patch[][2]) {
  char *got = NULL, *want = golden_read(golden);
  size_t len = 0;
  FILE *out = open_memstream(&got, &len);
  struct px_diag d;
  int rc = px_fmt_squeue(out, v, n, o, &d);
  fclose(out);
  assert_int_equal(rc, 0);
  assert_non_null(want);
  for (int i = 0; patch && patch[i][0]; i++) golden_patch(&want, patch[i][0], patch[i][1]);
  int diff = golden_diff(golden, want, got);
  free(got);
  free(want);
  return diff;
}

static void squeue_default_matches_transcript(void **state) {
  size_t n;
  struct px_job_info *v = pending_jobs(&n);
  int secs[4] = {8, 7, 5, 2};
  add_fillers(v, &n, T_SQUEUE_L, secs, false);
  struct px_squeue_opts o = {.now = T_SQUEUE_L};
  assert_int_equal(render("squeue_default.txt", v, n, &o, NULL), 0);
  /* The same layout spelled out with -o (the transcript's second check). */
  struct px_job_info two[2];
  memcpy(&two[0], find_job(v, n, 10127), sizeof two[0]);
  memcpy(&two[1], find_job(v, n, 10063), sizeof two[1]);
  o.format = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
  assert_int_equal(render("squeue_o.txt", two, 2, &o, NULL), 0);
  jobs_free(v, n);
}

static void squeue_long_and_start_match_transcript(void **state) {
  size_t n;
  struct px_job_info *v = pending_jobs(&n);
  int secs[4] = {8, 7, 5, 2};
  add_fillers(v, &n, T_SQUEUE_L, secs, false);
  /* -j 10063,10127,10128,10129,10130 */
  struct px_job_info sel[5];
  memcpy(&sel[0], &v[1], sizeof *sel);
  memcpy(&sel[1], &v[2], sizeof *sel);
  memcpy(&sel[2], &v[3], sizeof *sel);
  memcpy(&sel[3], &v[5], sizeof *sel);
  memcpy(&sel[4], &v[6], sizeof *sel);
  struct px_squeue_opts o = {.now = T_SQUEUE_L, .long_list = true};
  assert_int_equal(render("squeue_l.txt", sel, 5, &o, NULL), 0);
  struct px_squeue_opts s = {.now = T_SQUEUE_L, .start = true};
  assert_int_equal(render("squeue_start.txt", &sel[0], 1, &s, NULL), 0);
  jobs_free(v, n);
}

static void squeue_sort_by_state_descending(void **state) {
  /* After the urgent job preempted 10063: fillers running, 10063 requeued,
   * 10131 completed in 3 s on gpu0001. Run times from the transcript. */
  int64_t now = T_SQUEUE_L + 9;
  struct px_job_info *v = calloc(70, sizeof *v);
  size_t n = 0;
  int secs[4] = {17, 16, 14, 11};
  add_fillers(v, &n, now, secs, true);
  job_init(&v[n++], 10063, "batch", "filler", "PENDING", "BeginTime", 2000);
  job_init(&v[n], 10131, "urgent", "urgent", "COMPLETED", "None", 3000);
  job_run(&v[n++], "gpu0001", now - 5, now - 2);
  struct px_squeue_opts o = {.now = now, .format = "%.8i %.9P %.8j %.2t %.10M %.12r %R",
                             .sort = "-t"};
  assert_int_equal(render("squeue_sort.txt", v, n, &o, NULL), 0);
  jobs_free(v, n);
}

static void squeue_all_states_match_transcript(void **state) {
  int64_t now = T_SQUEUE_L + 60;
  struct px_job_info *v = calloc(6, sizeof *v);
  job_init(&v[0], 10127, "batch", "waits", "COMPLETED", "None", 3008);
  job_run(&v[0], "gpu0001", now - 30, now - 25);
  job_init(&v[1], 10132, "batch", "fails", "FAILED", "NonZeroExitCode", 3007);
  job_run(&v[1], "gpu0001", now - 20, now - 19);
  job_init(&v[2], 10134, "batch", "cancelme", "CANCELLED", "None", 3006);
  job_run(&v[2], "gpu0001", now - 10, now - 9);
  job_init(&v[3], 10128, "batch", "held", "CANCELLED", "None", 0); /* never ran */
  job_init(&v[4], 10131, "urgent", "urgent", "COMPLETED", "None", 3000);
  job_run(&v[4], "gpu0001", now - 40, now - 37);
  struct px_squeue_opts o = {.now = now};
  assert_int_equal(render("squeue_all.txt", v, 5, &o, NULL), 0);
  /* The timed-out job, with the transcript's custom format. */
  job_init(&v[5], 10133, "batch", "timeout", "TIMEOUT", "TimeLimit", 3005);
  job_run(&v[5], "gpu0001", now - 61, now);
  o.format = "%.8i %.8j %.2t %T %.10M %r";
  assert_int_equal(render("squeue_timeout.txt", &v[5], 1, &o, NULL), 0);
  jobs_free(v, 6);
}

static void squeue_format_rules(void **state) {
  /* Worked by hand from Slurm's rules: '.' right-justifies, width cuts with
   * no marker, no width prints as is, %% is a literal percent. */
  struct px_job_info j;
  job_init(&j, 42, "batch", "averyveryverylongname", "PENDING", "Priority", 1);
  struct px_squeue_opts o = {.now = 0, .noheader = true, .format = "%5j|%.5j|%j|%%|%.3i"};
  char *got = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&got, &len);
  struct px_diag d;
  assert_int_equal(px_fmt_squeue(out, &j, 1, &o, &d), 0);
  fclose(out);
  assert_string_equal(got, "avery|avery|averyveryverylongname|%| 42\n");
  free(got);
  /* An unknown letter is refused with the spec named. */
  o.format = "%.5i %Z %W";
  out = open_memstream(&got, &len);
  assert_int_equal(px_fmt_squeue(out, &j, 1, &o, &d), PX_EINVAL);
  fclose(out);
  assert_non_null(strstr(d.msg, "%W"));
  free(got);
  /* -O: 20 wide, left, no separator; ':.N' right-justifies to N. */
  o.format = NULL;
  o.long_format = "JobID:.6,Name:8,StateCompact";
  out = open_memstream(&got, &len);
  assert_int_equal(px_fmt_squeue(out, &j, 1, &o, &d), 0);
  fclose(out);
  assert_string_equal(got, "    42averyverPD                  \n");
  free(got);
  px_jobspec_fini(&j.spec);
}

static void squeue_array_ids_and_times(void **state) {
  /* Array task "10059_1", the pending remainder "10059_[2-5%2]"; run times
   * of 1 h 1 min 1 s and 1 day 2 h are "1:01:01" and "1-02:00:00". */
  struct px_job_info v[2];
  job_init(&v[0], 10060, "batch", "sweep", "RUNNING", "None", 5);
  v[0].array_job_id = 10059;
  v[0].array_task_id = 1;
  job_run(&v[0], "gpu0002", 1000, 0);
  job_init(&v[1], 10059, "batch", "sweep", "PENDING", "JobArrayTaskLimit", 5);
  v[1].array_job_id = 10059;
  v[1].array_pending = strdup("2-5%2");
  struct px_squeue_opts o = {.now = 1000 + 3661, .noheader = true, .format = "%i %M %l"};
  v[0].spec.time_limit_s = 93600;
  v[1].spec.time_limit_s = PX_CLI_UNLIMITED;
  char *got = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&got, &len);
  struct px_diag d;
  assert_int_equal(px_fmt_squeue(out, v, 2, &o, &d), 0);
  fclose(out);
  assert_string_equal(got, "10059_[2-5%2] 0:00 UNLIMITED\n10059_1 1:01:01 1-02:00:00\n");
  free(got);
  for (int i = 0; i < 2; i++) {
    px_jobspec_fini(&v[i].spec);
    free(v[i].nodelist);
    free(v[i].array_pending);
  }
}

/* h65's sweep on the harness: an array's pending tasks with a step are
 * written out (sbatch --array=1-9:2%2 with 1 and 3 running: 17_[5,7,9%2]),
 * other forms kept; dependencies are one term per job ("afterok:1:2" is
 * afterok:1(unfulfilled),afterok:2(unfulfilled)), with the list's separator. */
static void squeue_array_steps_and_dependency_terms(void **state) {
  static const struct {
    const char *pending, *shown;
  } arrays[] = {{"5-9:2%2", "5,7,9%2"}, {"1-9:2", "1,3,5,7,9"}, {"0-20:5,3", "0,3,5,10,15,20"},
                {"2-5%2", "2-5%2"},     {"1,3-4", "1,3-4"},      {"1-7:3,2-3:1", "1-4,7"},
                {"0-4000000:2", "0-4000000:2"}}; /* too many to write out */
  char buf[256];
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
    px_fmt_array_pending(buf, sizeof buf, arrays[i].pending);
    assert_string_equal(buf, arrays[i].shown);
  }
  static const struct {
    const char *dep, *shown;
  } deps[] = {{"afterok:1:2,singleton", "afterok:1(unfulfilled),afterok:2(unfulfilled),singleton(unfulfilled)"},
              {"afterok:1?afterany:2:3", "afterok:1(unfulfilled)?afterany:2(unfulfilled)?afterany:3(unfulfilled)"},
              {"afterany:7", "afterany:7(unfulfilled)"}};
  struct px_job_info j;
  job_init(&j, 20, "batch", "dep", "PENDING", "Dependency", 5);
  for (size_t i = 0; i < sizeof deps / sizeof deps[0]; i++) {
    free(j.spec.dependency);
    j.spec.dependency = strdup(deps[i].dep);
    px_fmt_job_dependency(buf, sizeof buf, &j);
    assert_string_equal(buf, deps[i].shown);
  }
  px_jobspec_fini(&j.spec);
}

int main(void) {
  setenv("TZ", "UTC", 1);
  tzset();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(squeue_default_matches_transcript),
      cmocka_unit_test(squeue_long_and_start_match_transcript),
      cmocka_unit_test(squeue_sort_by_state_descending),
      cmocka_unit_test(squeue_all_states_match_transcript),
      cmocka_unit_test(squeue_format_rules),
      cmocka_unit_test(squeue_array_ids_and_times),
      cmocka_unit_test(squeue_array_steps_and_dependency_terms),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
