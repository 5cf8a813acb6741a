/*
 * The client's plumbing without a server: where it looks for the server
 * (PHALANX_SERVER, then the config's SocketPath=/Listen=, then the default
 * socket), that a server which is not there is one error naming the address,
 * and the JSON both ways (keys are the C field names; zero fields omitted).
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_json.h"
#include "cli/client.h"

/* A config file with text in conf (a mkstemp template), named by PHALANX_CONF. */
static void use_conf(char *conf, const char *text) {
  int fd = mkstemp(conf);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  setenv("PHALANX_CONF", conf, 1);
}

static void server_found_in_documented_order(void **state) {
  struct px_client c;
  struct px_diag d;
  char conf[] = "/tmp/px-cli-conf-XXXXXX";
  use_conf(conf, "ClusterName=t\n  Listen=10.0.0.1:44100\nSocketPath=/run/px.sock # local\n");

  setenv("PHALANX_SERVER", "http://127.0.0.1:44123/", 1);
  assert_int_equal(px_client_init(&c, &d), 0);
  assert_string_equal(c.where, "http://127.0.0.1:44123"); /* trailing slash dropped */
  assert_string_equal(c.socket_path, "");
  assert_string_equal(c.host, "127.0.0.1");
  assert_string_equal(c.port, "44123");
  px_client_fini(&c);

  setenv("PHALANX_SERVER", "http://[::1]:8080", 1);
  assert_int_equal(px_client_init(&c, &d), 0);
  assert_string_equal(c.host, "::1");
  assert_string_equal(c.port, "8080");
  setenv("PHALANX_SERVER", "http://h:80x", 1);
  assert_int_equal(px_client_init(&c, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "is not http://host:port"));
  setenv("PHALANX_SERVER", "https://h:8443", 1); /* TLS: phalanxd's libcurl makes the request */
  setenv("PHALANX_CA_FILE", "/etc/phalanx/ca.pem", 1);
  assert_int_equal(px_client_init(&c, &d), 0);
  assert_true(c.tls);
  assert_string_equal(c.where, "https://h:8443");
  assert_string_equal(c.port, "8443");
  assert_string_equal(c.ca_file, "/etc/phalanx/ca.pem");
  px_client_fini(&c);
  unsetenv("PHALANX_CA_FILE");
  setenv("PHALANX_SERVER", "https://h", 1);
  assert_int_equal(px_client_init(&c, &d), 0);
  assert_string_equal(c.port, "443");
  px_client_fini(&c);

  setenv("PHALANX_SERVER", "/tmp/x.sock", 1); /* a bare path is a socket */
  assert_int_equal(px_client_init(&c, &d), 0);
  assert_string_equal(c.where, "unix:/tmp/x.sock");
  px_client_fini(&c);

  setenv("PHALANX_SERVER", "ftp://nope", 1);
  assert_int_equal(px_client_init(&c, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "neither unix:/path nor http(s)://host:port"));

  unsetenv("PHALANX_SERVER"); /* the config: SocketPath wins over Listen */
  assert_int_equal(px_client_init(&c, &d), 0);
  assert_string_equal(c.where, "unix:/run/px.sock");
  px_client_fini(&c);

  setenv("PHALANX_CONF", "/nonexistent/phalanx.conf", 1); /* no config: the default socket */
  assert_int_equal(px_client_init(&c, &d), 0);
  assert_string_equal(c.where, "unix:" PX_CLI_DEFAULT_SOCKET);
  px_client_fini(&c);
  unlink(conf);
  unsetenv("PHALANX_CONF");
}

/* A config whose Listen= has TLS keys beside it is reached over https, with its CA. */
static void config_with_tls_is_https(void **state) {
  struct px_client c;
  struct px_diag d;
  char conf[] = "/tmp/px-cli-conf-XXXXXX";
  use_conf(conf, "Listen=ctl.example:6817\nTLSCertFile=/etc/px/s.pem\nTLSCAFile=/etc/px/ca.pem\n");
  unsetenv("PHALANX_SERVER");
  assert_int_equal(px_client_init(&c, &d), 0);
  assert_true(c.tls);
  assert_string_equal(c.where, "https://ctl.example:6817");
  assert_string_equal(c.ca_file, "/etc/px/ca.pem");
  px_client_fini(&c);
  setenv("PHALANX_CA_FILE", "/other/ca.pem", 1); /* the environment wins */
  assert_int_equal(px_client_init(&c, &d), 0);
  assert_string_equal(c.ca_file, "/other/ca.pem");
  px_client_fini(&c);
  unsetenv("PHALANX_CA_FILE");
  unlink(conf);
  unsetenv("PHALANX_CONF");
}

static void unreachable_server_is_one_error(void **state) {
  struct px_client c;
  struct px_diag d;
  setenv("PHALANX_SERVER", "unix:/tmp/px-cli-no-such.sock", 1);
  assert_int_equal(px_client_init(&c, &d), 0);
  long status = 0;
  json_t *resp = (json_t *)1;
  assert_int_equal(px_client_call(&c, "GET", "/v1/jobs", NULL, &status, &resp, &d), PX_ECONNECT);
  assert_null(resp);
  assert_string_equal(d.msg, "cannot reach the server at unix:/tmp/px-cli-no-such.sock: "
                             "connect: No such file or directory");
  px_client_fini(&c);
  unsetenv("PHALANX_SERVER");
}

static void jobspec_to_json_uses_field_names(void **state) {
  struct px_jobspec s;
  px_jobspec_init(&s);
  s.name = strdup("train");
  s.gpus_per_node = 8;
  s.time_limit_s = 3600;
  s.mem_per_node_mib = 102400;
  char *argv[] = {"/home/a/job.sh", "x", NULL};
  s.argv = argv;
  json_t *o = px_cli_jobspec_to_json(&s);
  s.argv = NULL;
  char *text = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
  /* Worked by hand: non-zero fields and every bool; requeue defaults true. */
  assert_string_equal(text, "{\"argv\":[\"/home/a/job.sh\",\"x\"],\"exclusive\":false,"
                            "\"gpus_per_node\":8,\"hold\":false,\"mem_per_node_mib\":102400,"
                            "\"name\":\"train\",\"no_requeue_given\":false,\"requeue\":true,"
                            "\"signal_batch_only\":false,\"time_limit_s\":3600}");
  free(text);
  json_decref(o);
  px_jobspec_fini(&s);
}

static void job_views_decode(void **state) {
  const char *wire = "{\"jobs\":[{\"job_id\":10127,\"state\":\"PENDING\",\"reason\":\"Resources\","
                     "\"priority\":3008,\"future_field\":[1,2],\"spec\":{\"name\":\"waits\","
                     "\"partition\":\"batch\",\"time_limit_s\":600,\"env\":[\"A=1\"]}},"
                     "{\"job_id\":10060,\"array_job_id\":10059,\"array_task_id\":1,"
                     "\"state\":\"RUNNING\",\"nodelist\":\"gpu0002\"}]}";
  json_t *o = json_loads(wire, 0, NULL);
  struct px_job_info *v;
  size_t n;
  assert_int_equal(px_cli_jobs_from_json(json_object_get(o, "jobs"), &v, &n), 0);
  assert_int_equal(n, 2);
  assert_int_equal(v[0].job_id, 10127);
  assert_string_equal(v[0].reason, "Resources");
  assert_string_equal(v[0].spec.name, "waits");
  assert_int_equal(v[0].spec.time_limit_s, 600);
  assert_string_equal(v[0].spec.env[0], "A=1");
  assert_null(v[0].spec.env[1]);
  assert_int_equal(v[0].array_task_id, UINT32_MAX); /* absent: not an array task */
  assert_true(v[0].spec.requeue);                   /* absent bool keeps the spec default */
  assert_int_equal(v[1].array_task_id, 1);
  assert_string_equal(v[1].reason, "None");
  assert_string_equal(v[1].nodelist, "gpu0002");
  px_cli_jobs_free(v, n);
  json_decref(o);
  /* A wrong type is an error and leaves nothing allocated. */
  o = json_loads("[{\"job_id\":\"ten\"}]", 0, NULL);
  assert_int_equal(px_cli_jobs_from_json(o, &v, &n), PX_EPROTO);
  json_decref(o);
  o = json_loads("[{\"job_id\":1,\"spec\":{\"env\":[\"A=1\",7]}}]", 0, NULL);
  assert_int_equal(px_cli_jobs_from_json(o, &v, &n), PX_EPROTO);
  json_decref(o);
}

/* The server leaves defaults out: task 0 of array 11 arrives without
 * array_task_id and must print as 11_0, not as the pending record 11_[...]. */
static void array_task_zero_decodes(void **state) {
  (void)state;
  json_t *o = json_loads("{\"job_id\":12,\"array_job_id\":11,\"state\":\"COMPLETED\"}", 0, NULL);
  struct px_job_info j;
  assert_int_equal(px_cli_job_from_json(o, &j), 0);
  assert_int_equal(j.array_task_id, 0);
  px_cli_job_fini(&j);
  json_decref(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(server_found_in_documented_order),
      cmocka_unit_test(config_with_tls_is_https),
      cmocka_unit_test(unreachable_server_is_one_error),
      cmocka_unit_test(jobspec_to_json_uses_field_names),
      cmocka_unit_test(job_views_decode),
      cmocka_unit_test(array_task_zero_decodes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
