/*
 * Golden tests of sinfo, sacct, sshare, sprio and scontrol: the cluster of
 * the Slurm transcript (64 nodes gpu[0001-0064], 64 CPUs, 1024000 MB, 8 H100
 * each; partitions batch (default, 7 days) and urgent (1 day)) and its jobs
 * rebuilt as view structs; output compared byte for byte with what Slurm
 * printed. Where Phalanx knowingly prints something else, the test patches
 * the expected text and says why (tests/data/golden/README.md lists them).
 */
#include "px_test.h"

#include <time.h>

#include "golden.h"

static struct px_partition_info parts[2];
static struct px_node_info nodes[64];

static void cluster(const char *state) {
  memset(parts, 0, sizeof parts);
  parts[0] = (struct px_partition_info){.name = "batch", .nodelist = "gpu[0001-0064]",
                                        .is_default = true, .up = true, .max_time_s = 7 * 86400,
                                        .default_time_s = 3600, .nnodes = 64, .priority_tier = 1,
                                        .max_nodes = UINT32_MAX};
  parts[1] = parts[0];
  parts[1].name = "urgent";
  parts[1].is_default = false;
  parts[1].max_time_s = 86400;
  parts[1].priority_tier = 2;
  static char names[64][16];
  for (int i = 0; i < 64; i++) {
    snprintf(names[i], sizeof names[i], "gpu%04d", i + 1);
    nodes[i] = (struct px_node_info){.name = names[i], .addr = "127.0.0.1",
                                     .partitions = "batch,urgent", .cpus = 64, .gpus = 8,
                                     .gpu_type = "h100", .mem_mib = 1024000};
    snprintf(nodes[i].state, sizeof nodes[i].state, "%s", state);
  }
}

#define RENDER(out, got, call)                                                                 \
  do {                                                                                         \
    size_t len_ = 0;                                                                           \
    got = NULL;                                                                                \
    out = open_memstream(&got, &len_);                                                         \
    call;                                                                                      \
    fclose(out);                                                                               \
  } while (0)

static void expect(const char *golden, char *got, const char *const patch[][2]) {
  char *want = golden_read(golden);
  assert_non_null(want);
  for (int i = 0; patch && patch[i][0]; i++) golden_patch(&want, patch[i][0], patch[i][1]);
  int diff = golden_diff(golden, want, got);
  free(want);
  free(got);
  assert_int_equal(diff, 0);
}

static void sinfo_matches_transcript(void **state) {
  FILE *out;
  char *got;
  struct px_diag d;
  cluster("IDLE");
  struct px_sinfo_opts o = {0};
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 2, nodes, 64, &o, &d), 0));
  expect("sinfo_idle.txt", got, NULL);
  o.summarize = true;
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 2, nodes, 64, &o, &d), 0));
  expect("sinfo_s.txt", got, NULL);
  struct px_sinfo_opts f = {.format = "%P %a %l %D %t %G %N"};
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 2, nodes, 64, &f, &d), 0));
  expect("sinfo_o.txt", got, NULL);
  struct px_sinfo_opts nl = {.node_list = true}; /* -N -n gpu000[1-3]: the first 3 nodes */
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 2, nodes, 3, &nl, &d), 0));
  expect("sinfo_N.txt", got, NULL);
  cluster("ALLOCATED");
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 2, nodes, 64, &(struct px_sinfo_opts){0}, &d), 0));
  expect("sinfo_alloc.txt", got, NULL);
}

static void sinfo_groups_nodes_by_state(void **state) {
  /* Worked by hand: nodes 1-2 mixed, 3 drained with a reason, 4-64 idle.
   * Slurm's default order within a partition is state descending (mixed
   * before idle), one line per state group, hostlists compressed. */
  FILE *out;
  char *got;
  struct px_diag d;
  cluster("IDLE");
  snprintf(nodes[0].state, sizeof nodes[0].state, "MIXED");
  snprintf(nodes[1].state, sizeof nodes[1].state, "MIXED");
  snprintf(nodes[2].state, sizeof nodes[2].state, "DRAINED");
  nodes[2].reason = "bad gpu";
  parts[1].nnodes = 0;
  struct px_sinfo_opts o = {0};
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 1, nodes, 64, &o, &d), 0));
  assert_string_equal(got, "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
                           "batch*       up 7-00:00:00      2    mix gpu[0001-0002]\n"
                           "batch*       up 7-00:00:00      1  drain gpu0003\n"
                           "batch*       up 7-00:00:00     61   idle gpu[0004-0064]\n");
  free(got);
  struct px_sinfo_opts r = {.reasons = true};
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 1, nodes, 64, &r, &d), 0));
  assert_string_equal(got, "REASON               USER      TIMESTAMP           NODELIST\n"
                           "bad gpu              Unknown   Unknown             gpu0003\n");
  free(got);
  nodes[2].reason = NULL;
}

/* Who drained a node and when, as the real Slurm 22.05 printed it on this
 * box (05:47 UTC, SlurmUser root): an operator's `scontrol update
 * State=DRAIN Reason="bad fan"` and slurmctld's own drain of a node that
 * registered 4 of its 8 GPUs. Slurm listed gpu0002 first (its state was
 * "inval", which Phalanx does not have: both drained here, in node order). */
static void sinfo_reason_user_and_time(void **state) {
  FILE *out;
  char *got;
  struct px_diag d;
  cluster("IDLE");
  snprintf(nodes[0].state, sizeof nodes[0].state, "DRAINED");
  snprintf(nodes[1].state, sizeof nodes[1].state, "DRAINED");
  nodes[0].reason = "bad fan", nodes[0].reason_user = "root", nodes[0].reason_time = 1796449639;
  nodes[1].reason = "gres/gpu count reported lower than configured (4 < 8)";
  nodes[1].reason_user = "root", nodes[1].reason_time = 1796449647;
  struct px_sinfo_opts r = {.reasons = true};
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 2, nodes, 64, &r, &d), 0));
  assert_string_equal(got, "REASON               USER      TIMESTAMP           NODELIST\n"
                           "bad fan              root      2026-12-05T05:47:19 gpu0001\n"
                           "gres/gpu count repor root      2026-12-05T05:47:27 gpu0002\n");
  free(got);
  struct px_sinfo_opts f = {.reasons = true, .format = "%E|%U|%u|%H|%N|%T"};
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 2, nodes, 64, &f, &d), 0));
  assert_string_equal(got, "REASON|USER|USER|TIMESTAMP|NODELIST|STATE\n"
                           "bad fan|root(0)|root|2026-12-05T05:47:19|gpu0001|drained\n"
                           "gres/gpu count reported lower than configured (4 < 8)|root(0)|root|"
                           "2026-12-05T05:47:27|gpu0002|drained\n");
  free(got);
  /* gpu0001 resumed: Slurm's sinfo -R -l then */
  snprintf(nodes[0].state, sizeof nodes[0].state, "IDLE");
  nodes[0].reason = NULL;
  struct px_sinfo_opts l = {.reasons = true, .long_list = true, .now = 1796449678};
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 2, nodes, 64, &l, &d), 0));
  assert_string_equal(got, "Sat Dec 05 05:47:58 2026\n"
                           "REASON               USER         TIMESTAMP           STATE  NODELIST\n"
                           "gres/gpu count repor root(0)      2026-12-05T05:47:27 drain  gpu0002\n");
  free(got);
  /* no reason: Slurm's sinfo -N -o "%N %E %u %H" */
  struct px_sinfo_opts n = {.node_list = true, .format = "%N %E %u %H"};
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 1, nodes, 1, &n, &d), 0));
  assert_string_equal(got, "NODELIST REASON USER TIMESTAMP\ngpu0001 none Unknown Unknown\n");
  free(got);
  /* a drain journaled before the user was kept: its time, nobody */
  nodes[1].reason_user = NULL;
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 2, nodes, 64, &f, &d), 0));
  assert_non_null(strstr(got, "|Unknown|Unknown|2026-12-05T05:47:27|gpu0002|"));
  free(got);
  /* -O GresUsed keeps its column now that %U is the reason's user */
  struct px_sinfo_opts g = {.node_list = true, .long_format = "NodeList,GresUsed,UserLong,Timestamp"};
  RENDER(out, got, assert_int_equal(px_fmt_sinfo(out, parts, 1, nodes, 1, &g, &d), 0));
  assert_non_null(strstr(got, "GRES_USED"));
  assert_non_null(strstr(got, "gpu:h100:0(IDX:N/A)"));
  free(got);
  memset(nodes, 0, sizeof nodes);
}

/* scontrol show node: Reason=... [user@time], as Slurm printed it. */
static void scontrol_node_reason(void **state) {
  FILE *out;
  char *got;
  cluster("DRAINED");
  nodes[0].reason = "bad fan", nodes[0].reason_user = "root", nodes[0].reason_time = 1796449639;
  RENDER(out, got, px_fmt_scontrol_node(out, &nodes[0]));
  assert_non_null(strstr(got, "\n   Reason=bad fan [root@2026-12-05T05:47:19]\n"));
  free(got);
  nodes[0].reason_time = 0; /* when is not known: the reason alone */
  RENDER(out, got, px_fmt_scontrol_node(out, &nodes[0]));
  assert_non_null(strstr(got, "\n   Reason=bad fan\n"));
  free(got);
  memset(nodes, 0, sizeof nodes);
}

static struct px_job_info *acct_jobs(size_t *n) {
  /* The transcript's finished jobs in record order (10063's requeued record
   * comes after 10131). Times relative to t0 = 2026-12-02T13:39:02Z. */
  int64_t t0 = 1796218742;
  struct px_job_info *v = calloc(7, sizeof *v);
  job_init(&v[0], 10127, "batch", "waits", "COMPLETED", "None", 3008);
  v[0].ncpus = 8;
  v[0].ngpus = 1;
  job_run(&v[0], "gpu0001", t0 - 20, t0 - 15);
  job_init(&v[1], 10128, "batch", "held", "CANCELLED", "None", 0);
  v[1].cancelled_by = strdup("0");
  job_init(&v[2], 10131, "urgent", "urgent", "COMPLETED", "None", 3000);
  v[2].ncpus = 64;
  v[2].ngpus = 8;
  job_run(&v[2], "gpu0001", t0 - 30, t0 - 27);
  job_init(&v[3], 10063, "batch", "filler", "CANCELLED", "None", 2000);
  v[3].ncpus = 64;
  v[3].cancelled_by = strdup("0");
  job_init(&v[4], 10132, "batch", "fails", "FAILED", "NonZeroExitCode", 3007);
  v[4].exit_code = 3;
  job_run(&v[4], "gpu0001", t0, t0 + 1);
  job_init(&v[5], 10133, "batch", "timeout", "TIMEOUT", "TimeLimit", 3006);
  job_run(&v[5], "gpu0001", t0, t0 + 61);
  job_init(&v[6], 10134, "batch", "cancelme", "CANCELLED", "None", 3005);
  v[6].cancelled_by = strdup("0");
  job_run(&v[6], "gpu0001", t0, t0 + 1);
  *n = 7;
  return v;
}

static void sacct_matches_transcript(void **state) {
  FILE *out;
  char *got;
  struct px_diag d;
  size_t n;
  struct px_job_info *v = acct_jobs(&n);
  struct px_sacct_opts o = {.now = 1796218900};
  RENDER(out, got, assert_int_equal(px_fmt_sacct(out, v, n, &o, &d), 0));
  expect("sacct_default.txt", got, NULL);
  /* -X -j 10127,10132,10134,10133 -o ...,AllocTRES%40 */
  struct px_job_info sel[4] = {v[0], v[4], v[5], v[6]};
  struct px_sacct_opts x = {.now = 1796218900, .allocations = true,
                            .format = "JobID,JobName,Account,State,ExitCode,Elapsed,AllocTRES%40"};
  RENDER(out, got, assert_int_equal(px_fmt_sacct(out, sel, 4, &x, &d), 0));
  expect("sacct_X_o.txt", got, NULL);
  /* --parsable2 keeps full values and drops padding and the dashes line. */
  struct px_sacct_opts p = {.now = 1796218900, .allocations = true, .parsable2 = true,
                            .format = "JobID,State,ExitCode"};
  RENDER(out, got, assert_int_equal(px_fmt_sacct(out, &v[6], 1, &p, &d), 0));
  assert_string_equal(got, "JobID|State|ExitCode\n10134|CANCELLED by 0|0:0\n");
  free(got);
  p.format = "JobID,Bogus";
  RENDER(out, got, assert_int_equal(px_fmt_sacct(out, v, 1, &p, &d), PX_EINVAL));
  free(got);
  assert_non_null(strstr(d.msg, "Bogus"));
  jobs_free(v, n);
}

static void sshare_matches_transcript(void **state) {
  /* The rows Slurm printed: NormShares = shares / sibling sum (101 under root). */
  struct px_share_info rows[] = {
      {"root", NULL, 0, 0, 0.0, 824981, 1.0, 1.0, 0, 0},
      {"root", "root", 1, 1, 0.009901, 0, 0, 0.0, 1.0, 0},
      {"llm", NULL, 1, 40, 0.396040, 824981, 1.0, 1.0, 0, 0},
      {"llm", "root", 2, 1, 1.0, 824981, 1.0, 1.0, 0.2, 0},
      {"research", NULL, 1, 10, 0.099010, 0, 0, 0, 0, 0},
      {"research", "root", 2, 1, 1.0, 0, 0, 0, 1.0, 0},
      {"speech", NULL, 1, 20, 0.198020, 0, 0, 0, 0, 0},
      {"speech", "root", 2, 1, 1.0, 0, 0, 0, 1.0, 0},
      {"vision", NULL, 1, 30, 0.297030, 0, 0, 0, 0, 0},
      {"vision", "root", 2, 1, 1.0, 0, 0, 0, 1.0, 0},
  };
  FILE *out;
  char *got;
  struct px_sshare_opts o = {0};
  RENDER(out, got, px_fmt_sshare(out, rows, 10, &o));
  expect("sshare_a.txt", got, NULL);
}

static void sprio_matches_transcript(void **state) {
  struct px_job_info j;
  job_init(&j, 10127, "batch", "waits", "PENDING", "Resources", 3008);
  j.prio_fairshare = 2000;
  j.prio_jobsize = 9;
  j.prio_partition = 1000;
  FILE *out;
  char *got;
  RENDER(out, got, px_fmt_sprio(out, &j, 1, true, false));
  expect("sprio_l.txt", got, NULL);
  px_jobspec_fini(&j.spec);
}

static void scontrol_matches_transcript(void **state) {
  FILE *out;
  char *got;
  struct px_job_info j;
  job_init(&j, 10127, "batch", "waits", "PENDING", "Resources", 3008);
  j.spec.time_limit_s = 600;
  j.spec.cpus_per_task = 8;
  j.spec.gpus_per_node = 1;
  j.spec.workdir = strdup("$SB_STATE/jobs/cli");
  j.ncpus = 8;
  j.ngpus = 1;
  j.mem_mib = 1024000;
  j.submit_time = j.eligible_time = 1796218726;
  RENDER(out, got, px_fmt_scontrol_job(out, &j, 1796218730));
  /* Phalanx has no "last scheduling evaluation" time nor a session id. */
  static const char *const pending_patch[][2] = {
      {"LastSchedEval=2026-12-02T13:38:48", "LastSchedEval=2026-12-02T13:38:46"},
      {"AllocNode:Sid=localhost:2643", "AllocNode:Sid=localhost:0"},
      {NULL, NULL}};
  expect("scontrol_job_pending.txt", got, pending_patch);
  px_jobspec_fini(&j.spec);

  job_init(&j, 10132, "batch", "fails", "FAILED", "NonZeroExitCode", 3007);
  j.spec.time_limit_s = 300;
  j.spec.workdir = strdup("$SB_STATE/jobs/cli");
  j.exit_code = 3;
  j.submit_time = j.eligible_time = 1796218742;
  job_run(&j, "gpu0001", 1796218742, 1796218743);
  RENDER(out, got, px_fmt_scontrol_job(out, &j, 1796218800));
  static const char *const failed_patch[][2] = {
      {"AllocNode:Sid=localhost:2643", "AllocNode:Sid=localhost:0"}, {NULL, NULL}};
  expect("scontrol_job_failed.txt", got, failed_patch);
  px_jobspec_fini(&j.spec);
  free(j.nodelist);

  cluster("IDLE");
  RENDER(out, got, px_fmt_scontrol_partition(out, &parts[0], nodes, 64));
  static const char *const part_patch[][2] = {
      {"PreemptMode=REQUEUE", "PreemptMode=N/A"}, {NULL, NULL}};
  expect("scontrol_partition.txt", got, part_patch);
}

/* The options of issue 17 in scontrol show job, against the Slurm 22.05
 * harness's own output for the same held job (captured into
 * golden/harness/scontrol_job_options.txt by the command in its README):
 * sbatch -H -J opts -t 5 -o envout.txt --open-mode=append -m cyclic
 * --hint=nomultithread --gpus=1 --cpus-per-gpu=2 -w gpu0004 -x gpu0003
 * --time-min=2 --reservation=r1 --wrap true. */
static void scontrol_job_options_match_harness(void **state) {
  (void)state;
  FILE *out;
  char *got;
  struct px_job_info j;
  job_init(&j, 47, "batch", "opts", "PENDING", "JobHeldUser", 0);
  free(j.spec.account), free(j.spec.qos); /* the harness ran without accounting */
  j.spec.account = j.spec.qos = NULL;
  j.spec.time_limit_s = 300, j.spec.time_min_s = 120;
  j.spec.nodelist = strdup("gpu0004"), j.spec.exclude = strdup("gpu0003");
  j.spec.reservation = strdup("r1"), j.spec.hint = strdup("nomultithread");
  j.spec.distribution = strdup("cyclic"), j.spec.open_mode = strdup("append");
  j.spec.gpus = 1, j.spec.cpus_per_gpu = 2;
  j.spec.workdir = strdup("/tmp/sbp"), j.spec.stdout_path = strdup("envout.txt");
  j.mem_mib = 1024000;
  j.ngpus = 1;
  j.submit_time = 1796408302; /* 2026-12-04T18:18:22Z */
  RENDER(out, got, px_fmt_scontrol_job(out, &j, 1796408302));
  static const char *const patch[][2] = {
      {"AllocNode:Sid=localhost:13797", "AllocNode:Sid=localhost:0"}, /* no session id */
      /* Slurm leaves a pending job's --gpus (TresPerJob) out of its TRES; Phalanx counts it */
      {"TRES=cpu=1,mem=1000G,node=1,billing=1", "TRES=cpu=1,mem=1000G,node=1,billing=1,gres/gpu=1"},
      {NULL, NULL}};
  expect("harness/scontrol_job_options.txt", got, patch);
  px_jobspec_fini(&j.spec);
}

/* A pending array record shows its remainder as the task id, as Slurm's
 * "ArrayTaskId=3-9%2"; a started task its own index. */
static void scontrol_array_ids(void **state) {
  (void)state;
  FILE *out;
  char *got;
  struct px_job_info j;
  job_init(&j, 77, "batch", "sweep", "PENDING", "Priority", 3008);
  j.array_job_id = 77;
  j.array_task_id = UINT32_MAX;
  j.array_pending = strdup("3-9%2");
  RENDER(out, got, px_fmt_scontrol_job(out, &j, 1796218730));
  assert_non_null(strstr(got, "JobId=77 ArrayJobId=77 ArrayTaskId=3-9%2 JobName=sweep\n"));
  free(got);
  free(j.array_pending);
  j.array_pending = NULL;
  j.job_id = 80;
  j.array_task_id = 2;
  RENDER(out, got, px_fmt_scontrol_job(out, &j, 1796218730));
  assert_non_null(strstr(got, "JobId=80 ArrayJobId=77 ArrayTaskId=2 JobName=sweep\n"));
  free(got);
  px_jobspec_fini(&j.spec);
}

int main(void) {
  setenv("TZ", "UTC", 1);
  tzset();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sinfo_matches_transcript),
      cmocka_unit_test(sinfo_groups_nodes_by_state),
      cmocka_unit_test(sinfo_reason_user_and_time),
      cmocka_unit_test(scontrol_node_reason),
      cmocka_unit_test(sacct_matches_transcript),
      cmocka_unit_test(sshare_matches_transcript),
      cmocka_unit_test(sprio_matches_transcript),
      cmocka_unit_test(scontrol_matches_transcript),
      cmocka_unit_test(scontrol_array_ids),
      cmocka_unit_test(scontrol_job_options_match_harness),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
