/*
 * test_agent_msg_svc.c - the services part of the agent protocol: a launch's
 * "service" object and a task report's ports and health round-trip every
 * field, stay absent for batch jobs, and each malformed value is refused
 * naming its field.
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/agent_msg.h"

#define LAUNCH_HEAD                                                                            \
  "{\"job_id\":5,\"user\":\"alice\",\"uid\":1001,\"gid\":1001,\"argv\":[\"srv\"],"             \
  "\"nodes\":[\"n01\"],\"node_rank\":0,\"ntasks\":1,\"tasks_per_node\":[1]"

static const char *svc_json =
    LAUNCH_HEAD ",\"service\":{\"name\":\"web\",\"replica\":3,\"generation\":7,"
                "\"ports\":[\"http\",\"metrics\"],\"health\":{\"type\":\"http\",\"port\":\"http\","
                "\"path\":\"/healthz\",\"interval_s\":2,\"timeout_s\":1,\"failure_threshold\":4,"
                "\"startup_grace_s\":10}}}";

static void launch_service_round_trip(void **state) {
  (void)state;
  struct px_launch l, l2;
  struct px_diag d;
  assert_int_equal(px_launch_decode(svc_json, &l, &d), 0);
  assert_non_null(l.service);
  assert_string_equal(l.service->name, "web");
  assert_int_equal(l.service->replica, 3);
  assert_int_equal(l.service->generation, 7);
  assert_int_equal(l.service->nports, 2);
  assert_string_equal(l.service->ports[1], "metrics");
  assert_int_equal(l.service->health.type, PX_HEALTH_HTTP);
  assert_string_equal(l.service->health.path, "/healthz");
  assert_int_equal(l.service->health.failure_threshold, 4);
  assert_int_equal(l.service->health.startup_grace_s, 10);
  char *s = px_launch_encode(&l);
  assert_int_equal(px_launch_decode(s, &l2, &d), 0);
  assert_string_equal(l2.service->health.port, "http");
  assert_int_equal(l2.service->health.interval_s, 2);
  free(s);
  px_launch_fini(&l);
  px_launch_fini(&l2);

  /* a command check and the defaults of an absent health */
  const char *cmd = LAUNCH_HEAD ",\"service\":{\"name\":\"w\",\"replica\":0,\"health\":{\"type\":\"command\","
                                "\"command\":[\"sh\",\"-c\",\"true\"]}}}";
  assert_int_equal(px_launch_decode(cmd, &l, &d), 0);
  assert_string_equal(l.service->health.command[2], "true");
  assert_int_equal(l.service->health.interval_s, 10);
  assert_int_equal(l.service->nports, 0);
  s = px_launch_encode(&l);
  assert_int_equal(px_launch_decode(s, &l2, &d), 0);
  assert_string_equal(l2.service->health.command[0], "sh");
  free(s);
  px_launch_fini(&l);
  px_launch_fini(&l2);
  const char *none = LAUNCH_HEAD ",\"service\":{\"name\":\"w\",\"replica\":1}}";
  assert_int_equal(px_launch_decode(none, &l, &d), 0);
  assert_int_equal(l.service->health.type, PX_HEALTH_NONE);
  px_launch_fini(&l);

  /* a batch job has no "service" on the wire */
  assert_int_equal(px_launch_decode(LAUNCH_HEAD "}", &l, &d), 0);
  assert_null(l.service);
  s = px_launch_encode(&l);
  assert_null(strstr(s, "service"));
  free(s);
  px_launch_fini(&l);
}

static void launch_service_strict(void **state) {
  (void)state;
  const char *bad[][2] = {
      {"{\"replica\":0}", "launch.service.name: required"},
      {"{\"name\":\"\",\"replica\":0}", "launch.service.name: must not be empty"},
      {"{\"name\":\"w\"}", "launch.service.replica: required"},
      {"{\"name\":\"w\",\"replica\":-1}", "launch.service.replica"},
      {"{\"name\":\"w\",\"replica\":0,\"port\":[]}", "launch.service.port: unknown field"},
      {"{\"name\":\"w\",\"replica\":0,\"ports\":[\"Http\"]}", "launch.service.ports: 'Http'"},
      {"{\"name\":\"w\",\"replica\":0,\"ports\":[\"a\",\"a\"]}", "appears twice"},
      {"{\"name\":\"w\",\"replica\":0,\"ports\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\"]}",
       "at most 8"},
      {"{\"name\":\"w\",\"replica\":0,\"ports\":[1]}", "launch.service.ports: element 0"},
      {"{\"name\":\"w\",\"replica\":0,\"health\":{}}", "launch.service.health.type: required"},
      {"{\"name\":\"w\",\"replica\":0,\"health\":{\"type\":\"grpc\"}}", "'grpc' is not"},
      {"{\"name\":\"w\",\"replica\":0,\"health\":{\"type\":\"tcp\"}}", "health.port: required"},
      {"{\"name\":\"w\",\"replica\":0,\"ports\":[\"a\"],\"health\":{\"type\":\"tcp\",\"port\":\"b\"}}",
       "'b' is not one of"},
      {"{\"name\":\"w\",\"replica\":0,\"ports\":[\"a\"],\"health\":{\"type\":\"http\",\"port\":\"a\"}}",
       "health.path: must start"},
      {"{\"name\":\"w\",\"replica\":0,\"ports\":[\"a\"],\"health\":{\"type\":\"tcp\",\"port\":\"a\","
       "\"path\":\"/\"}}", "health.path: only for http"},
      {"{\"name\":\"w\",\"replica\":0,\"health\":{\"type\":\"command\"}}", "health.command: must not"},
      {"{\"name\":\"w\",\"replica\":0,\"health\":{\"type\":\"none\",\"command\":[\"x\"]}}",
       "health.command: only for"},
      {"{\"name\":\"w\",\"replica\":0,\"health\":{\"type\":\"none\",\"interval_s\":0}}",
       "health.interval_s: 0 out of range"},
      {"{\"name\":\"w\",\"replica\":0,\"health\":{\"type\":\"none\",\"timeout_s\":\"1\"}}",
       "health.timeout_s: expected an integer"},
      {"{\"name\":\"w\",\"replica\":0,\"health\":{\"type\":\"none\",\"failure_threshold\":0}}",
       "health.failure_threshold"},
      {"{\"name\":\"w\",\"replica\":0,\"health\":{\"type\":\"none\",\"startup_grace_s\":86401}}",
       "health.startup_grace_s"},
      {"{\"name\":\"w\",\"replica\":0,\"health\":{\"type\":\"none\",\"x\":1}}", "health.x: unknown"},
      {"[]", "launch.service: expected a JSON object"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char buf[1024];
    snprintf(buf, sizeof buf, LAUNCH_HEAD ",\"service\":%s}", bad[i][0]);
    struct px_launch l;
    struct px_diag d;
    memset(&l, 0x5a, sizeof l);
    if (px_launch_decode(buf, &l, &d) == 0) fail_msg("accepted: %s", bad[i][0]);
    if (!strstr(d.msg, bad[i][1])) fail_msg("'%s' does not say %s", d.msg, bad[i][1]);
  }
}

static void report_service_round_trip(void **state) {
  (void)state;
  struct px_task_report t = {.node = "n01", .job_id = 9, .state = "RUNNING", .has_service = true,
                             .ports = {31234, 31235}, .port_names = {"http", "metrics"}, .nports = 2,
                             .health = "unhealthy", .health_reason = "GET /healthz: 503 (3 failures in a row)"};
  char *s = px_task_report_encode(&t);
  assert_non_null(strstr(s, "\"ports\":{\"http\":31234,\"metrics\":31235}"));
  struct px_task_report t2;
  struct px_diag d;
  assert_int_equal(px_task_report_decode(s, &t2, &d), 0);
  assert_true(t2.has_service);
  assert_int_equal(t2.nports, 2);
  assert_string_equal(t2.port_names[1], "metrics");
  assert_int_equal(t2.ports[1], 31235);
  assert_string_equal(t2.health, "unhealthy");
  assert_string_equal(t2.health_reason, t.health_reason);
  free(s);
  /* a batch report carries none of it */
  struct px_task_report b = {.node = "n01", .job_id = 9, .state = "COMPLETED"};
  s = px_task_report_encode(&b);
  assert_null(strstr(s, "health"));
  assert_null(strstr(s, "ports"));
  assert_int_equal(px_task_report_decode(s, &t2, &d), 0);
  assert_false(t2.has_service);
  free(s);
}

static void report_service_strict(void **state) {
  (void)state;
  const char *bad[][2] = {
      {"\"RUNNING\",\"health\":\"fine\"", "task_report.health: 'fine' is not"},
      {"\"COMPLETED\",\"health\":\"ready\"", "task_report.health: only in a RUNNING"},
      {"\"RUNNING\",\"ports\":{\"http\":1}", "task_report.ports: only with health"},
      {"\"RUNNING\",\"health_reason\":\"x\"", "task_report.health_reason: only with health"},
      {"\"RUNNING\",\"health\":\"ready\",\"ports\":{\"http\":0}", "ports: http: expected a TCP port"},
      {"\"RUNNING\",\"health\":\"ready\",\"ports\":{\"http\":65536}", "ports: http: expected"},
      {"\"RUNNING\",\"health\":\"ready\",\"ports\":{\"HTTP\":80}", "'HTTP' is not a port name"},
      {"\"RUNNING\",\"health\":\"ready\",\"ports\":[80]", "task_report.ports: expected an object"},
      {"\"RUNNING\",\"health\":1", "task_report.health: expected a string"},
      {"\"RUNNING\",\"health\":\"ready\",\"ports\":{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,"
       "\"g\":7,\"h\":8,\"i\":9}", "at most 8"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char buf[512];
    snprintf(buf, sizeof buf, "{\"node\":\"n\",\"job_id\":1,\"state\":%s}", bad[i][0]);
    struct px_task_report t;
    struct px_diag d;
    if (px_task_report_decode(buf, &t, &d) == 0) fail_msg("accepted: %s", buf);
    if (!strstr(d.msg, bad[i][1])) fail_msg("'%s' does not say %s", d.msg, bad[i][1]);
  }
  char longer[400];
  snprintf(longer, sizeof longer, "{\"node\":\"n\",\"job_id\":1,\"state\":\"RUNNING\",\"health\":\"ready\","
                                  "\"health_reason\":\"%0200d\"}", 0);
  struct px_task_report t;
  struct px_diag d;
  assert_int_not_equal(px_task_report_decode(longer, &t, &d), 0);
  assert_non_null(strstr(d.msg, "health_reason: longer than 127"));
  assert_true(px_svc_port_name_ok("http-2"));
  assert_false(px_svc_port_name_ok("2http"));
  assert_false(px_svc_port_name_ok(""));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(launch_service_round_trip),
      cmocka_unit_test(launch_service_strict),
      cmocka_unit_test(report_service_round_trip),
      cmocka_unit_test(report_service_strict),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
