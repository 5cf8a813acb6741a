/*
 * Unit tests of the proto/ JSON codecs: a full job spec and job view survive
 * a round trip, and the strict decoder refuses each malformed input of a
 * table with a diagnostic naming the field (the expected field names are the
 * ones written in each input, read off by hand).
 */
#include "px_test.h"

#include <stdlib.h>
#include <string.h>

#include "proto/jobspec_json.h"
#include "proto/views_json.h"

static void fill_spec(struct px_jobspec *s) {
  px_jobspec_init(s);
  s->name = strdup("train");
  s->user = strdup("alice");
  s->uid = 1001;
  s->gid = 1001;
  s->account = strdup("ml");
  s->partition = strdup("gpu");
  s->nodes_min = 2;
  s->nodes_max = 4;
  s->gpus_per_node = 8;
  s->gpu_type = strdup("h100");
  s->mem_per_node_mib = 512000;
  s->time_limit_s = 86400;
  s->nice = -5;
  s->requeue = false;
  s->no_requeue_given = true;
  s->script = strdup("#!/bin/sh\necho hi\n");
  s->argv = calloc(3, sizeof(char *));
  s->argv[0] = strdup("python");
  s->argv[1] = strdup("train.py");
  s->env = calloc(2, sizeof(char *));
  s->env[0] = strdup("PATH=/usr/bin");
  s->stdout_path = strdup("logs/%j.out");
}

static void spec_round_trip(void **state) {
  (void)state;
  struct px_jobspec a, b;
  struct px_diag d;
  fill_spec(&a);
  char *text = px_jobspec_encode(&a);
  assert_non_null(text);
  assert_int_equal(px_jobspec_decode(text, &b, &d), 0);
  assert_string_equal(b.name, "train");
  assert_string_equal(b.user, "alice");
  assert_int_equal(b.uid, 1001);
  assert_int_equal(b.nodes_max, 4);
  assert_int_equal(b.gpus_per_node, 8);
  assert_int_equal(b.mem_per_node_mib, 512000);
  assert_int_equal(b.time_limit_s, 86400);
  assert_int_equal(b.nice, -5);
  assert_false(b.requeue);
  assert_true(b.no_requeue_given);
  assert_string_equal(b.script, "#!/bin/sh\necho hi\n");
  assert_string_equal(b.argv[1], "train.py");
  assert_null(b.argv[2]);
  assert_string_equal(b.env[0], "PATH=/usr/bin");
  assert_null(b.qos);
  char *again = px_jobspec_encode(&b);
  assert_string_equal(text, again); /* encoding is deterministic */
  free(text);
  free(again);
  px_jobspec_fini(&a);
  px_jobspec_fini(&b);
}

static void spec_unlimited_time(void **state) {
  (void)state;
  struct px_jobspec s;
  struct px_diag d;
  /* INT64_MAX is PX_TIME_UNLIMITED and must be accepted. */
  assert_int_equal(px_jobspec_decode("{\"time_limit_s\":9223372036854775807}", &s, &d), 0);
  assert_true(s.time_limit_s == INT64_MAX);
  px_jobspec_fini(&s);
}

struct bad_case {
  const char *json;
  int err;
  const char *field; /* the diagnostic must start with this */
};

static void spec_strict_errors(void **state) {
  (void)state;
  static const struct bad_case cases[] = {
      {"{\"gpus\":1", PX_EPARSE, "body"},
      {"[1,2]", PX_EINVAL, "body"},
      {"{\"gpu\":1}", PX_EINVAL, "gpu"},
      {"{\"gpus\":\"8\"}", PX_EINVAL, "gpus"},
      {"{\"gpus\":-1}", PX_ERANGE, "gpus"},
      {"{\"gpus\":1000001}", PX_ERANGE, "gpus"},
      {"{\"gpus\":1.5}", PX_EINVAL, "gpus"},
      {"{\"gpus\":99999999999999999999999}", PX_EPARSE, "body"},
      {"{\"nodes_min\":4,\"nodes_max\":2}", PX_EINVAL, "nodes_max"},
      {"{\"hold\":1}", PX_EINVAL, "hold"},
      {"{\"name\":\"a\\u0000b\"}", PX_EPARSE, "body"}, /* jansson refuses NUL */
      {"{\"name\":\"a\\nb\"}", PX_EINVAL, "name"},
      {"{\"stdout_path\":\"../../etc/passwd\"}", PX_EINVAL, "stdout_path"},
      {"{\"stderr_path\":\"/tmp/x/../y\"}", PX_EINVAL, "stderr_path"},
      {"{\"env\":[\"NOEQUALS\"]}", PX_EINVAL, "env"},
      {"{\"env\":\"A=1\"}", PX_EINVAL, "env"},
      {"{\"argv\":[1]}", PX_EINVAL, "argv[0]"},
      {"{\"argv\":[]}", PX_EINVAL, "argv"},
      {"{\"uid\":4294967295}", PX_ERANGE, "uid"},
      {"{\"time_limit_s\":-1}", PX_ERANGE, "time_limit_s"},
      {"{\"gpus\":1,\"gpus\":2}", PX_EPARSE, "body"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct px_jobspec s;
    struct px_diag d;
    px_diag_clear(&d);
    int rc = px_jobspec_decode(cases[i].json, &s, &d);
    if (rc != cases[i].err || strncmp(d.msg, cases[i].field, strlen(cases[i].field)) != 0)
      fail_msg("case %zu %s: rc %d msg '%s'", i, cases[i].json, rc, d.msg);
    /* nothing half-filled: the spec is in its init state */
    assert_null(s.name);
    assert_null(s.argv);
    assert_null(s.env);
  }
}

static void job_info_round_trip(void **state) {
  (void)state;
  struct px_job_info a, b;
  struct px_diag d;
  px_job_info_init(&a);
  a.job_id = 42;
  a.array_task_id = UINT32_MAX;
  snprintf(a.state, sizeof a.state, "RUNNING");
  snprintf(a.reason, sizeof a.reason, "None");
  a.nodelist = strdup("n[01-02]");
  a.ngpus = 16;
  a.billable_tres_s = 12.5;
  a.spec.name = strdup("x");
  char *text = px_job_info_encode(&a);
  assert_int_equal(px_job_info_decode(text, &b, &d), 0);
  assert_int_equal(b.job_id, 42);
  assert_int_equal(b.array_task_id, UINT32_MAX);
  assert_string_equal(b.state, "RUNNING");
  assert_string_equal(b.nodelist, "n[01-02]");
  assert_string_equal(b.spec.name, "x");
  assert_true(b.billable_tres_s == 12.5);
  free(text);
  px_job_info_fini(&b);
  /* a nested error names the nested path */
  assert_int_equal(px_job_info_decode("{\"job_id\":1,\"spec\":{\"cpus\":2}}", &b, &d), PX_EINVAL);
  assert_string_equal(d.msg, "spec.cpus: unknown field");
  px_job_info_fini(&b);
  /* a state longer than its fixed array is refused, not truncated */
  assert_int_equal(px_job_info_decode("{\"state\":\"RUNNINGRUNNINGRUNNINGRUNNING\"}", &b, &d),
                   PX_ERANGE);
  px_job_info_fini(&a);
}

/* The direct writer must produce exactly what jansson's encoder does. */
static void direct_writer_matches_jansson(void **state) {
  (void)state;
  static const double reals[] = {0.0, 12.5, 1e300, 3.0, 0.1, 2.5e-7, -1.0 / 3};
  for (size_t k = 0; k < sizeof reals / sizeof reals[0]; k++) {
    struct px_job_info a;
    px_job_info_init(&a);
    a.job_id = 9007199254740993ULL;
    a.exit_code = -3;
    a.billable_tres_s = reals[k];
    a.why = strdup("line1\nquote \" back\\slash tab\t ctl\x01 utf8 \xc3\xa9");
    snprintf(a.state, sizeof a.state, "PENDING");
    fill_spec(&a.spec);
    char *fast = px_job_info_encode(&a);
    json_t *tmp = px_job_info_to_json(&a);
    char *slow = json_dumps(tmp, JSON_COMPACT);
    json_decref(tmp);
    assert_string_equal(fast, slow);
    free(fast);
    free(slow);
    px_job_info_fini(&a);
  }
}

static void node_info_round_trip(void **state) {
  (void)state;
  struct px_node_info n = {0}, m;
  struct px_diag d;
  n.name = strdup("n01");
  snprintf(n.state, sizeof n.state, "IDLE");
  n.gpus = 8;
  json_t *o = px_node_info_to_json(&n);
  assert_int_equal(px_node_info_from_json(o, &m, &d), 0);
  assert_string_equal(m.name, "n01");
  assert_string_equal(m.state, "IDLE");
  assert_int_equal(m.gpus, 8);
  json_decref(o);
  px_node_info_fini(&n);
  px_node_info_fini(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(spec_round_trip),     cmocka_unit_test(spec_unlimited_time),
      cmocka_unit_test(spec_strict_errors),  cmocka_unit_test(job_info_round_trip),
      cmocka_unit_test(node_info_round_trip), cmocka_unit_test(direct_writer_matches_jansson),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
