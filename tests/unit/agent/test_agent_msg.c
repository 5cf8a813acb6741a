/*
 * test_agent_msg.c - the server <-> agent codecs: round trips keep every
 * field, decoders are strict (unknown field, wrong type, broken cross-field
 * rule each name the field) and a failed decode leaves nothing behind.
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/agent_msg.h"

static const char *launch_json =
    "{\"job_id\":42,\"user\":\"alice\",\"uid\":1001,\"gid\":1001,\"name\":\"train\","
    "\"account\":\"llm\",\"partition\":\"gpu\",\"argv\":[\"/bin/true\",\"x\"],"
    "\"env\":[\"PATH=/bin\"],\"nodes\":[\"n01\",\"n02\"],\"node_addrs\":[\"10.0.0.1\",\"10.0.0.2\"],"
    "\"node_rank\":1,\"ntasks\":4,\"tasks_per_node\":[2,2],\"cpus_per_task\":8,"
    "\"gpus\":[2,3],\"gpus_per_node\":[2,2],\"cpu_ids\":[16,17],\"ncpus\":16,"
    "\"mem_mib\":4096,\"master_port\":29500,\"time_limit_s\":3600,\"start_time\":1700000000,"
    "\"open_mode\":\"append\",\"hint\":\"nomultithread\",\"distribution\":\"cyclic\",\"cpus_per_gpu\":4}";

static void launch_round_trip(void **state) {
  (void)state;
  struct px_launch l;
  struct px_diag d;
  assert_int_equal(px_launch_decode(launch_json, &l, &d), 0);
  assert_int_equal(l.job_id, 42);
  assert_int_equal(l.nnodes, 2);
  assert_string_equal(l.nodes[1], "n02");
  assert_null(l.nodes[2]);
  assert_int_equal(l.node_rank, 1);
  assert_int_equal(l.ngpus, 2);
  assert_int_equal(l.gpus[1], 3);
  assert_int_equal(l.master_port, 29500);
  assert_string_equal(l.argv[1], "x");
  assert_null(l.script);
  char *again = px_launch_encode(&l);
  assert_non_null(again);
  struct px_launch l2;
  assert_int_equal(px_launch_decode(again, &l2, &d), 0);
  assert_int_equal(l2.mem_mib, 4096);
  assert_int_equal(l2.tasks_per_node[0], 2);
  assert_string_equal(l2.node_addrs[0], "10.0.0.1");
  assert_int_equal(l2.time_limit_s, 3600);
  assert_string_equal(l2.open_mode, "append"); /* issue 17's layout options travel */
  assert_string_equal(l2.hint, "nomultithread");
  assert_string_equal(l2.distribution, "cyclic");
  assert_int_equal(l2.cpus_per_gpu, 4);
  assert_int_equal(l2.gpu_share, 0);
  free(again);
  px_launch_fini(&l);
  px_launch_fini(&l2);
}

/* Replaces the first occurrence of what in launch_json by with, then decodes. */
static int decode_edited(const char *what, const char *with, struct px_diag *d) {
  const char *p = strstr(launch_json, what);
  assert_non_null(p);
  char buf[2048];
  snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - launch_json), launch_json, with, p + strlen(what));
  struct px_launch l;
  memset(&l, 0x5a, sizeof l);
  int rc = px_launch_decode(buf, &l, d);
  if (rc == 0) px_launch_fini(&l);
  return rc;
}

static void launch_strict(void **state) {
  (void)state;
  struct px_diag d;
  assert_int_equal(decode_edited("\"name\"", "\"nmae\"", &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "launch.nmae: unknown field"));
  assert_int_equal(decode_edited("\"uid\":1001", "\"uid\":\"1001\"", &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "launch.uid: expected an integer"));
  assert_int_equal(decode_edited("\"node_rank\":1", "\"node_rank\":2", &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "node_rank"));
  /* 2+2 tasks on the nodes but ntasks says 5 */
  assert_int_equal(decode_edited("\"ntasks\":4", "\"ntasks\":5", &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "launch.ntasks"));
  assert_int_equal(decode_edited("\"tasks_per_node\":[2,2]", "\"tasks_per_node\":[4]", &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "tasks_per_node"));
  assert_int_equal(decode_edited("\"master_port\":29500", "\"master_port\":70000", &d), PX_EINVAL);
  assert_int_equal(decode_edited("\"argv\":[\"/bin/true\",\"x\"],", "", &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "script or argv"));
  assert_int_equal(decode_edited("\"uid\":1001", "\"uid\":-1", &d), PX_EINVAL);
  assert_int_equal(decode_edited("{", "[", &d), PX_EPARSE);
  /* a GPU share is of one GPU, below a whole one */
  assert_int_equal(decode_edited("\"cpus_per_gpu\":4", "\"gpu_share\":50", &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "gpu_share: 50 hundredths of 2 GPUs"));
  assert_int_equal(decode_edited("\"gpus\":[2,3]", "\"gpus\":[2],\"gpu_share\":100", &d), PX_EINVAL);
  assert_int_equal(decode_edited("\"gpus\":[2,3]", "\"gpus\":[2],\"gpu_share\":50", &d), 0);
}

static void report_codecs(void **state) {
  (void)state;
  struct px_gpu_info g[2] = {{0, "GPU-EMU-n01-0", "h100", 81920, 0, -1, -1, -1}, {1, "GPU-EMU-n01-1", "h100", 81920, 1, -1, -1, -1}};
  struct px_known_job k = {7, "COMPLETED", 0, 0};
  struct px_node_report r = {.node = "n01", .addr = "10.77.0.2", .cpus = 64, .mem_mib = 512000,
                             .gpus = g, .ngpus = 2, .jobs = &k, .njobs = 1, .version = "0.1.0"};
  char *s = px_node_report_encode(&r);
  assert_non_null(s);
  struct px_node_report r2;
  struct px_diag d;
  assert_int_equal(px_node_report_decode(s, &r2, &d), 0);
  assert_int_equal(r2.ngpus, 2);
  assert_string_equal(r2.gpus[1].uuid, "GPU-EMU-n01-1");
  assert_int_equal(r2.gpus[1].group, 1);
  assert_int_equal(r2.njobs, 1);
  assert_string_equal(r2.jobs[0].state, "COMPLETED");
  px_node_report_fini(&r2);
  free(s);

  struct px_task_report t = {.node = "n01", .job_id = 9, .state = "OUT_OF_MEMORY", .term_signal = 9,
                             .peak_mem_mib = 64, .cpu_time_ms = 1500, .start_time = 10, .end_time = 20};
  s = px_task_report_encode(&t);
  struct px_task_report t2;
  assert_int_equal(px_task_report_decode(s, &t2, &d), 0);
  assert_string_equal(t2.state, "OUT_OF_MEMORY");
  assert_int_equal(t2.cpu_time_ms, 1500);
  free(s);
  assert_int_equal(px_task_report_decode("{\"node\":\"n\",\"job_id\":1,\"state\":\"DONE\"}", &t2, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "task_report.state"));
}

static void work_codec(void **state) {
  (void)state;
  char buf[4096];
  snprintf(buf, sizeof buf,
           "{\"seq\":5,\"launch\":[%s],\"signal\":[{\"job_id\":3,\"signal\":15,\"grace_s\":30,"
           "\"reason\":\"CANCELLED\"}]}",
           launch_json);
  struct px_agent_work w;
  struct px_diag d;
  assert_int_equal(px_agent_work_decode(buf, &w, &d), 0);
  assert_int_equal(w.seq, 5);
  assert_int_equal(w.nlaunch, 1);
  assert_int_equal(w.launch[0].job_id, 42);
  assert_int_equal(w.nsignal, 1);
  assert_string_equal(w.signal[0].reason, "CANCELLED");
  char *s = px_agent_work_encode(&w);
  struct px_agent_work w2;
  assert_int_equal(px_agent_work_decode(s, &w2, &d), 0);
  assert_int_equal(w2.signal[0].grace_s, 30);
  free(s);
  px_agent_work_fini(&w);
  px_agent_work_fini(&w2);
  /* a bad launch inside names its index */
  assert_int_equal(px_agent_work_decode("{\"seq\":1,\"launch\":[{\"job_id\":1}]}", &w, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "launch[0]"));
  struct px_signal_order so;
  assert_int_equal(px_signal_order_decode("{\"job_id\":1,\"signal\":99}", &so, &d), PX_EINVAL);
}

/* A running job's new time limit: on the wire only when set, positive,
 * and taken by agents from version 0.2.0 on (older ones refuse the field:
 * their decoder is strict, as this one is to any field it does not know). */
static void time_limit_order(void **state) {
  (void)state;
  struct px_signal_order o = {.job_id = 9, .grace_s = -1, .time_limit_s = 7200}, back;
  struct px_diag d;
  char *s = px_signal_order_encode(&o);
  assert_int_equal(px_signal_order_decode(s, &back, &d), 0);
  assert_int_equal(back.time_limit_s, 7200);
  free(s);
  o.time_limit_s = 0;
  s = px_signal_order_encode(&o);
  assert_null(strstr(s, "time_limit_s"));
  free(s);
  assert_int_equal(px_signal_order_decode("{\"job_id\":1,\"signal\":0,\"time_limit_s\":-5}", &back, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "time_limit_s"));
  assert_int_equal(px_signal_order_decode("{\"job_id\":1,\"signal\":0,\"time_limt_s\":5}", &back, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "time_limt_s"));
  assert_true(px_agent_takes_time_limit(PX_AGENT_VERSION));
  assert_true(px_agent_takes_time_limit("0.2.0"));
  assert_true(px_agent_takes_time_limit("0.10.1"));
  assert_true(px_agent_takes_time_limit("1.0.0"));
  assert_false(px_agent_takes_time_limit("0.1.0"));
  assert_false(px_agent_takes_time_limit("0.1.9-rc1"));
  assert_false(px_agent_takes_time_limit("0.0.3"));
  assert_true(px_agent_takes_time_limit("test")); /* not a version: a stand-in of today's */
}

/* The batch form of reports: encoded from already encoded reports, decoded
 * strictly (a bad entry names its index; too many is refused). */
static void report_batch(void **state) {
  (void)state;
  struct px_task_report a = {.node = "n01", .job_id = 7, .state = "COMPLETED", .cpu_time_ms = 12, .restart_count = 1};
  struct px_task_report b = {.node = "n01", .job_id = 8, .state = "FAILED", .exit_code = 3};
  char *enc[2] = {px_task_report_encode(&a), px_task_report_encode(&b)};
  char *s = px_task_reports_encode(enc, 2);
  struct px_task_report *v = NULL;
  uint32_t n = 0;
  struct px_diag d;
  assert_int_equal(px_task_reports_decode(s, &v, &n, &d), 0);
  assert_int_equal(n, 2);
  assert_int_equal(v[0].job_id, 7);
  assert_int_equal(v[0].cpu_time_ms, 12);
  assert_int_equal(v[0].restart_count, 1);
  assert_string_equal(v[1].state, "FAILED");
  assert_int_equal(v[1].exit_code, 3);
  free(v);
  free(s);
  free(enc[0]);
  free(enc[1]);
  s = px_task_reports_encode(NULL, 0);
  assert_string_equal(s, "{\"reports\":[]}");
  assert_int_equal(px_task_reports_decode(s, &v, &n, &d), 0);
  assert_int_equal(n, 0);
  free(v);
  free(s);
  const char *bad[][2] = {
      {"{\"reports\":[{\"node\":\"n\",\"job_id\":1,\"state\":\"COMPLETED\"},"
       "{\"node\":\"n\",\"job_id\":2,\"state\":\"DONE\"}]}", "reports[1].state"},
      {"{\"reports\":{}}", "reports"},
      {"{}", "reports"},
      {"{\"reports\":[],\"extra\":1}", "extra"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    v = NULL;
    if (px_task_reports_decode(bad[i][0], &v, &n, &d) == 0) fail_msg("accepted: %s", bad[i][0]);
    if (!strstr(d.msg, bad[i][1])) fail_msg("'%s' does not name %s", d.msg, bad[i][1]);
    assert_null(v);
  }
  /* more than PX_TASK_REPORTS_MAX */
  char *many[PX_TASK_REPORTS_MAX + 1];
  char *one = px_task_report_encode(&a);
  for (int i = 0; i <= PX_TASK_REPORTS_MAX; i++) many[i] = one;
  s = px_task_reports_encode(many, PX_TASK_REPORTS_MAX + 1);
  assert_int_not_equal(px_task_reports_decode(s, &v, &n, &d), 0);
  assert_non_null(strstr(d.msg, "at most"));
  free(s);
  free(one);
}

/* Job steps: the order round-trips inside a work answer, the step id of a
 * report and of a cancel survives (and stays absent for a job's own), and
 * each malformed order is refused naming its field. */
static void step_codecs(void **state) {
  (void)state;
  char *argv[] = {"python", "train.py", NULL}, *env[] = {"A=1", NULL}, *nodes[] = {"n01", "n02", NULL};
  uint32_t tpn[] = {2, 1};
  struct px_step_order o = {.job_id = 7, .step_id = 3, .restart_count = 1, .argv = argv, .env = env,
                            .cwd = "/home/a", .out_dir = "/home/a/.s", .nodes = nodes, .nnodes = 2,
                            .tasks_per_node = tpn, .ntasks = 3, .gpus_per_task = 2, .distribution = "cyclic"};
  struct px_agent_work w = {.seq = 9, .step = &o, .nstep = 1}, w2;
  struct px_diag d;
  char *s = px_agent_work_encode(&w);
  assert_int_equal(px_agent_work_decode(s, &w2, &d), 0);
  assert_int_equal(w2.nstep, 1);
  assert_int_equal(w2.step[0].step_id, 3);
  assert_int_equal(w2.step[0].restart_count, 1);
  assert_string_equal(w2.step[0].argv[1], "train.py");
  assert_string_equal(w2.step[0].env[0], "A=1");
  assert_string_equal(w2.step[0].out_dir, "/home/a/.s");
  assert_int_equal(w2.step[0].tasks_per_node[0], 2);
  assert_string_equal(w2.step[0].nodes[1], "n02");
  assert_int_equal(w2.step[0].gpus_per_task, 2);
  assert_string_equal(w2.step[0].distribution, "cyclic"); /* srun -m (issue 17) */
  px_agent_work_fini(&w2);
  free(s);
  /* no step: no "step" key at all (an older agent's strict decoder) */
  w.nstep = 0;
  s = px_agent_work_encode(&w);
  assert_null(strstr(s, "step"));
  free(s);

  struct px_task_report t = {.node = "n01", .job_id = 7, .state = "FAILED", .exit_code = 2}, t2;
  s = px_task_report_encode(&t);
  assert_null(strstr(s, "step_id"));
  assert_int_equal(px_task_report_decode(s, &t2, &d), 0);
  assert_false(t2.is_step);
  free(s);
  t.is_step = true, t.step_id = 0;
  s = px_task_report_encode(&t);
  assert_int_equal(px_task_report_decode(s, &t2, &d), 0);
  assert_true(t2.is_step);
  assert_int_equal(t2.step_id, 0);
  free(s);
  struct px_signal_order so = {.job_id = 7, .signal = 15, .is_step = true, .step_id = 4}, so2;
  s = px_signal_order_encode(&so);
  assert_int_equal(px_signal_order_decode(s, &so2, &d), 0);
  assert_true(so2.is_step);
  assert_int_equal(so2.step_id, 4);
  free(s);

  const char *bad[][2] = {
      {"{\"job_id\":1,\"step_id\":0,\"argv\":[],\"out_dir\":\"/o\",\"nodes\":[\"n\"],"
       "\"tasks_per_node\":[1],\"ntasks\":1}", "step.argv"},
      {"{\"job_id\":1,\"step_id\":0,\"argv\":[\"x\"],\"out_dir\":\"o\",\"nodes\":[\"n\"],"
       "\"tasks_per_node\":[1],\"ntasks\":1}", "step.out_dir"},
      {"{\"job_id\":1,\"step_id\":0,\"argv\":[\"x\"],\"out_dir\":\"/o\",\"nodes\":[\"n\"],"
       "\"tasks_per_node\":[1,1],\"ntasks\":2}", "step.tasks_per_node"},
      {"{\"job_id\":1,\"step_id\":0,\"argv\":[\"x\"],\"out_dir\":\"/o\",\"nodes\":[\"n\"],"
       "\"tasks_per_node\":[0],\"ntasks\":0}", "step.tasks_per_node"},
      {"{\"job_id\":1,\"step_id\":0,\"argv\":[\"x\"],\"out_dir\":\"/o\",\"nodes\":[\"n\"],"
       "\"tasks_per_node\":[2],\"ntasks\":1}", "step.ntasks"},
      {"{\"job_id\":1,\"argv\":[\"x\"],\"out_dir\":\"/o\",\"nodes\":[\"n\"],"
       "\"tasks_per_node\":[1],\"ntasks\":1}", "step.step_id"},
      {"{\"job_id\":1,\"step_id\":0,\"argv\":[\"x\"],\"out_dir\":\"/o\",\"nodes\":[\"n\"],"
       "\"tasks_per_node\":[1],\"ntasks\":1,\"gpus\":[]}", "step.gpus"},
      {"{\"job_id\":1,\"step_id\":0,\"argv\":[\"x\"],\"out_dir\":\"/o\",\"nodes\":[\"n\"],"
       "\"tasks_per_node\":[1],\"ntasks\":1,\"gpus_per_task\":65}", "step.gpus_per_task"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct px_step_order x;
    if (px_step_order_decode(bad[i][0], &x, &d) == 0) fail_msg("accepted: %s", bad[i][0]);
    if (!strstr(d.msg, bad[i][1])) fail_msg("'%s' does not name %s", d.msg, bad[i][1]);
  }
}

/* A terminal step's order (docs/interactive.md): the relay session and the
 * window round-trip, are absent from other steps, and a terminal of more
 * than one task or an oversized window is refused naming the field. */
static void terminal_step_codec(void **state) {
  (void)state;
  char *argv[] = {"bash", NULL}, *nodes[] = {"n02", NULL};
  uint32_t tpn[] = {1};
  struct px_step_order o = {.job_id = 7, .step_id = 1, .argv = argv, .out_dir = "/o", .nodes = nodes, .nnodes = 1,
                            .tasks_per_node = tpn, .ntasks = 1, .pty_session = "ab12", .pty_secret = "s3",
                            .pty_server = "https://ctl:6817", .pty_ca = "/etc/ca.pem", .pty_rows = 40,
                            .pty_cols = 120, .pty_raw = true},
                        o2;
  struct px_diag d;
  char *s = px_step_order_encode(&o);
  assert_int_equal(px_step_order_decode(s, &o2, &d), 0);
  assert_string_equal(o2.pty_session, "ab12");
  assert_string_equal(o2.pty_secret, "s3");
  assert_string_equal(o2.pty_server, "https://ctl:6817");
  assert_string_equal(o2.pty_ca, "/etc/ca.pem");
  assert_int_equal(o2.pty_rows, 40);
  assert_int_equal(o2.pty_cols, 120);
  assert_true(o2.pty_raw);
  px_step_order_fini(&o2);
  free(s);
  o.pty_session = NULL;
  s = px_step_order_encode(&o);
  assert_null(strstr(s, "pty"));
  free(s);
  const char *bad[][2] = {
      {"{\"job_id\":1,\"step_id\":0,\"argv\":[\"x\"],\"out_dir\":\"/o\",\"nodes\":[\"n\"],"
       "\"tasks_per_node\":[2],\"ntasks\":2,\"pty_session\":\"a\",\"pty_secret\":\"b\"}", "step.ntasks"},
      {"{\"job_id\":1,\"step_id\":0,\"argv\":[\"x\"],\"out_dir\":\"/o\",\"nodes\":[\"n\"],"
       "\"tasks_per_node\":[1],\"ntasks\":1,\"pty_session\":\"a\"}", "step.pty_secret"},
      {"{\"job_id\":1,\"step_id\":0,\"argv\":[\"x\"],\"out_dir\":\"/o\",\"nodes\":[\"n\"],"
       "\"tasks_per_node\":[1],\"ntasks\":1,\"pty_session\":\"a\",\"pty_secret\":\"b\",\"pty_rows\":70000}",
       "step.pty_rows"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct px_step_order x;
    if (px_step_order_decode(bad[i][0], &x, &d) == 0) fail_msg("accepted: %s", bad[i][0]);
    if (!strstr(d.msg, bad[i][1])) fail_msg("'%s' does not name %s", d.msg, bad[i][1]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(step_codecs),
      cmocka_unit_test(terminal_step_codec),
      cmocka_unit_test(launch_round_trip),
      cmocka_unit_test(launch_strict),
      cmocka_unit_test(report_codecs),
      cmocka_unit_test(work_codec),
      cmocka_unit_test(report_batch),
      cmocka_unit_test(time_limit_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
