/*
 * test_spec.c - the service spec's parser: a good spec with its defaults,
 * JSON read by the same parser, the canonical form read back equal, and
 * every kind of bad spec refused with the line and the field named.
 */
#include "px_test.h"

#include <string.h>

#include "conf/conf.h"
#include "svc/spec.h"

static const char good[] =
    "name: web\n"
    "account: ml\n"
    "replicas: 3\n"
    "resources: {gpus: 1, cpus: 2, memory: 4G}\n"
    "command: [\"python3\", \"-m\", \"http.server\"]\n"
    "env: {MODEL: llama}\n"
    "ports: [http, metrics]\n"
    "health: {http: /healthz, port: http, failure_threshold: 5}\n"
    "restart: {backoff_s: 2, max_backoff_s: 60}\n"
    "spread: true\n"
    "update: {max_surge: 1, max_unavailable: 0}\n"
    "drain_s: 3\n";

static void parses_with_defaults(void **state) {
  struct px_svc_spec s;
  struct px_diag d;
  assert_int_equal(px_svc_spec_parse(good, strlen(good), 0, &s, &d), 0);
  assert_string_equal(s.name, "web");
  assert_int_equal(s.replicas, 3);
  assert_int_equal(s.gpus, 1);
  assert_int_equal(s.mem_mib, 4096);
  assert_string_equal(s.argv[2], "http.server");
  assert_string_equal(s.env[0], "MODEL=llama");
  assert_int_equal(s.nports, 2);
  assert_int_equal(s.health.type, PX_SVC_HEALTH_HTTP);
  assert_string_equal(s.health.path, "/healthz");
  assert_int_equal(s.health.failure_threshold, 5);
  assert_int_equal(s.health.interval_s, 2); /* default */
  assert_true(s.spread);
  assert_int_equal(s.drain_s, 3);
  assert_int_equal(s.progress_deadline_s, 120);
  px_svc_spec_fini(&s);
}

/* The canonical JSON reads back through the same parser to the same JSON. */
static void json_round_trip(void **state) {
  struct px_svc_spec s, back;
  struct px_diag d;
  assert_int_equal(px_svc_spec_parse(good, strlen(good), 0, &s, &d), 0);
  snprintf(s.user, sizeof s.user, "alice");
  s.uid = 1000;
  char *j = px_svc_spec_json(&s);
  assert_non_null(j);
  assert_int_equal(px_svc_spec_parse(j, strlen(j), PX_SVC_SPEC_INTERNAL, &back, &d), 0);
  char *j2 = px_svc_spec_json(&back);
  assert_string_equal(j, j2);
  assert_true(px_svc_spec_same_template(&s, &back));
  back.replicas = 7; /* a count is not a new generation */
  assert_true(px_svc_spec_same_template(&s, &back));
  free(back.env[0]);
  back.env[0] = strdup("MODEL=mistral");
  assert_false(px_svc_spec_same_template(&s, &back));
  /* without the internal flag the owner cannot be given */
  struct px_svc_spec x;
  assert_int_equal(px_svc_spec_parse(j, strlen(j), 0, &x, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "gid: unknown field")); /* sorted keys: gid comes first */
  free(j);
  free(j2);
  px_svc_spec_fini(&s);
  px_svc_spec_fini(&back);
}

static void autoscale_defaults_to_min(void **state) {
  const char *y = "name: a\ncommand: [sleep, '1']\nautoscale: {min: 2, max: 8, target_in_flight: 10}\n";
  struct px_svc_spec s;
  struct px_diag d;
  assert_int_equal(px_svc_spec_parse(y, strlen(y), 0, &s, &d), 0);
  assert_true(s.autoscale);
  assert_int_equal(s.replicas, 2);
  assert_int_equal(s.scale_down_window_s, 60);
  px_svc_spec_fini(&s);
}

/* Each bad spec: the error names this line and this field. */
static const struct {
  const char *yaml, *want;
} bad[] = {
    {"name: web\ncommand: [x]\nreplicass: 2\n", "line 3: replicass: unknown field"},
    {"name: web\ncommand: [x]\nreplicas: -1\n", "line 3: replicas: must be 0 or more, not -1"},
    {"name: web\ncommand: [x]\nreplicas: two\n", "line 3: replicas: must be a whole number"},
    {"name: web\ncommand: [x]\nports: [http, http]\n", "line 3: ports[1]: port 'http' clashes"},
    {"name: web\ncommand: [x]\nports: [http]\nhealth:\n  http: /h\n  port: admin\n",
     "line 6: health.port: no port named 'admin'"},
    {"name: web\ncommand: [x]\nhealth: {tcp: true}\n", "health.port: a tcp check needs a port"},
    {"name: web\ncommand: [x]\nresources:\n  gpus: 2\n  disk: 5\n", "line 5: resources.disk: unknown field"},
    {"name: web\ncommand: [x]\nresources: {memory: lots}\n", "line 3: resources.memory: 'lots' is not a size"},
    {"name: Web\ncommand: [x]\n", "line 1: name: 'Web' must be lower-case"},
    {"command: [x]\n", "line 1: name: missing"},
    {"name: web\n", "command: missing"},
    {"name: web\ncommand: [x]\nscript: echo\n", "script: give command or script, not both"},
    {"name: web\ncommand: x\n", "line 2: command: must be a list"},
    {"name: web\ncommand: [x]\nupdate: {max_surge: 0}\n", "line 3: update: max_surge and max_unavailable"},
    {"name: web\ncommand: [x]\nautoscale: {min: 5, max: 2, target_in_flight: 1}\n", "line 3: autoscale.min: 5 is over max 2"},
    {"name: web\ncommand: [x]\nspread: maybe\n", "line 3: spread: must be true or false"},
    {"name: web\ncommand: [x]\nname: other\n", "line 3: name: given twice"},
    {"name: web\ncommand: [x]\nenv: {1X: y}\n", "line 3: env.1X: not a variable name"},
    {"name: web\ncommand: [x]\nworkdir: rel\n", "line 3: workdir: must be an absolute path"},
    {"name: web\n  command: [x\n", "line 2: spec: not YAML"},
    {"- a\n- b\n", "line 1: spec: must be a mapping"},
    {"", "line 1: spec: empty"},
    {"{\"name\": \"web\", \"command\": [\"x\"], \"replicas\": -3}", "line 1: replicas: must be 0 or more, not -3"},
};

static void bad_specs_name_line_and_field(void **state) {
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct px_svc_spec s;
    struct px_diag d;
    int rc = px_svc_spec_parse(bad[i].yaml, strlen(bad[i].yaml), 0, &s, &d);
    if (rc == 0 || !strstr(d.msg, bad[i].want))
      fail_msg("case %zu: rc %d, message '%s', want '%s'", i, rc, d.msg, bad[i].want);
    assert_true(d.line > 0);
    assert_null(s.argv); /* nothing kept */
  }
}

/* GPUs over what the partition's nodes have, an unknown partition. */
static void checked_against_the_configuration(void **state) {
  const char *cf = "NodeName=n[1-2] CPUs=8 RealMemory=16000 Gres=gpu:4\n"
                   "PartitionName=gpu Nodes=n[1-2] Default=YES\n";
  struct px_conf *conf = NULL;
  struct px_diag d;
  assert_int_equal(px_conf_parse_string(cf, NULL, &conf, NULL), 0);
  const char *y = "name: web\ncommand: [x]\nresources:\n  gpus: 8\n";
  struct px_svc_spec s;
  assert_int_equal(px_svc_spec_parse(y, strlen(y), 0, &s, &d), 0);
  assert_int_equal(px_svc_spec_check_conf(&s, conf, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "line 4: resources.gpus: 8 GPUs per replica, but the nodes of partition gpu have at most 4"));
  s.gpus = 4;
  assert_int_equal(px_svc_spec_check_conf(&s, conf, &d), 0);
  snprintf(s.partition, sizeof s.partition, "cpu");
  assert_int_equal(px_svc_spec_check_conf(&s, conf, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "partition: no partition named 'cpu'"));
  px_svc_spec_fini(&s);
  px_conf_free(conf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parses_with_defaults),
      cmocka_unit_test(json_round_trip),
      cmocka_unit_test(autoscale_defaults_to_min),
      cmocka_unit_test(bad_specs_name_line_and_field),
      cmocka_unit_test(checked_against_the_configuration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
