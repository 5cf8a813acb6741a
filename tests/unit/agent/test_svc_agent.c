/*
 * test_svc_agent.c - the agent's side of service replicas: the health rules
 * (grace, threshold, recovery, fast probing while starting), port picking
 * (never a port in use or already handed out), the environment and reading
 * ports back from it, and each kind of check against real listeners and
 * processes on this host.
 */
#include "px_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/svc_health.h"
#include "agent/svc_port.h"
#include "agent/svc_replica.h"

static const struct px_health_check check = {.type = PX_HEALTH_TCP, .interval_s = 2, .timeout_s = 1,
                                             .failure_threshold = 3, .startup_grace_s = 10};

static void fsm_rules(void **state) {
  (void)state;
  struct px_health_fsm f;
  px_health_fsm_init(&f, &check, 0, false);
  /* failures within the grace never count */
  for (int64_t t = 0; t < 10000; t += 500) assert_false(px_health_fsm_step(&f, false, t));
  assert_int_equal(f.state, PX_HS_STARTING);
  assert_int_equal(f.fails, 0);
  /* after it, while starting, at most one failure per interval counts */
  assert_false(px_health_fsm_step(&f, false, 10000));
  assert_false(px_health_fsm_step(&f, false, 10050));
  assert_int_equal(f.fails, 1);
  assert_false(px_health_fsm_step(&f, false, 12000));
  assert_true(px_health_fsm_step(&f, false, 14000));
  assert_int_equal(f.state, PX_HS_UNHEALTHY);
  /* a pass makes it ready, and fails-in-a-row start again */
  assert_true(px_health_fsm_step(&f, true, 16000));
  assert_int_equal(f.state, PX_HS_READY);
  assert_false(px_health_fsm_step(&f, false, 18000));
  assert_false(px_health_fsm_step(&f, true, 20000));
  assert_false(px_health_fsm_step(&f, false, 22000));
  assert_false(px_health_fsm_step(&f, false, 24000));
  assert_int_equal(f.state, PX_HS_READY);
  assert_true(px_health_fsm_step(&f, false, 26000));
  assert_int_equal(f.state, PX_HS_UNHEALTHY);
  assert_int_equal(px_health_fsm_delay(&f), 2000);

  /* starting: probes at 50 ms doubling up to 200 ms (or the interval if shorter) */
  px_health_fsm_init(&f, &check, 0, false);
  uint32_t want[] = {50, 100, 200, 200, 200};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) assert_int_equal(px_health_fsm_delay(&f), want[i]);
  /* a reattached replica has no grace left */
  px_health_fsm_init(&f, &check, 0, true);
  px_health_fsm_step(&f, false, 0);
  assert_int_equal(f.fails, 1);
}

static int listener(uint16_t *port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(fd, 16), 0);
  getsockname(fd, (struct sockaddr *)&a, &len);
  *port = ntohs(a.sin_port);
  return fd;
}

static void ports_pick(void **state) {
  (void)state;
  struct px_port_range r;
  assert_int_equal(px_port_range_parse("30000-32767", &r), 0);
  assert_int_equal(r.lo, 30000);
  assert_int_equal(r.hi, 32767);
  const char *bad[] = {"", "1-2", "5000", "6000-5000", "5000-70000", "5000-6000x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_int_not_equal(px_port_range_parse(bad[i], &r), 0);
  /* a range of three ports, one held by a socket here, one already handed out */
  uint16_t held;
  int fd = listener(&held);
  if (held < 1024 || held > 65533) fail_msg("ephemeral port %u out of the test's assumptions", held);
  r.lo = held, r.hi = (uint16_t)(held + 2);
  uint16_t taken[] = {(uint16_t)(held + 1)}, out[2] = {0};
  if (!px_port_free((uint16_t)(held + 2))) {
    close(fd);
    return px_test_skip("ports_pick", "ports", "the port after an ephemeral one is busy");
  }
  assert_false(px_port_free(held));
  assert_int_equal(px_ports_pick(&r, taken, 1, 1, 0, out), 0);
  assert_int_equal(out[0], held + 2);
  assert_int_equal(px_ports_pick(&r, taken, 1, 2, 7, out), PX_ELIMIT);
  close(fd);
}

static void service_env(void **state) {
  (void)state;
  char *names[] = {"http", "grpc-admin", NULL};
  struct px_launch_service s = {.name = "web", .replica = 4, .ports = names, .nports = 2};
  uint16_t ports[] = {31000, 31001}, back[2] = {0};
  char **env = calloc(2, sizeof *env);
  env[0] = strdup("HOME=/h");
  assert_int_equal(px_svc_env_add(&env, &s, ports), 0);
  const char *want[] = {"HOME=/h", "PX_SERVICE=web", "PX_REPLICA=4", "PORT=31000", "PX_PORT_HTTP=31000",
                        "PX_PORT_GRPC_ADMIN=31001", NULL};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    if (!want[i]) assert_null(env[i]);
    else assert_string_equal(env[i], want[i]);
  }
  assert_true(px_svc_env_ports(env, &s, back));
  assert_int_equal(back[1], 31001);
  free(env[5]);
  env[5] = strdup("PX_PORT_GRPC_ADMIN=x");
  assert_false(px_svc_env_ports(env, &s, back));
  for (char **e = env; *e; e++) free(*e);
  free(env);
  char *json = px_svc_running_report("n01", 7, 1, &s, ports, "unhealthy", "tcp 31000: refused");
  struct px_task_report t;
  struct px_diag d;
  assert_int_equal(px_task_report_decode(json, &t, &d), 0);
  assert_int_equal(t.nports, 2);
  assert_string_equal(t.port_names[1], "grpc-admin");
  assert_string_equal(t.health_reason, "tcp 31000: refused");
  free(json);
}

/* Answers each connection with one canned HTTP response. */
struct tiny_http {
  int fd;
  const char *_Atomic status;
  _Atomic int served;  /* counted before the answer goes out: the checker may return at once */
};

static void *serve(void *arg) {
  struct tiny_http *h = arg;
  for (int c; (c = accept(h->fd, NULL, NULL)) >= 0; close(c)) {
    char buf[1024], resp[128];
    if (read(c, buf, sizeof buf) <= 0) continue;
    int n = snprintf(resp, sizeof resp, "HTTP/1.0 %s\r\nContent-Length: 0\r\n\r\n", h->status);
    h->served++;
    if (write(c, resp, (size_t)n) != n) h->served--;
  }
  return NULL;
}

static void checks_real(void **state) {
  (void)state;
  char why[128];
  struct px_health_target t = {.check = check, .uid = getuid(), .gid = getgid(), .jobdir = "/nonexistent"};
  snprintf(t.user, sizeof t.user, "root");
  int fd = listener(&t.port);
  assert_true(px_health_run(&t, why, sizeof why));
  /* http: 204 passes, 503 fails with the status in the reason */
  struct tiny_http h = {.fd = fd, .status = "204 No Content"};
  pthread_t th;
  pthread_create(&th, NULL, serve, &h);
  t.check.type = PX_HEALTH_HTTP;
  snprintf(t.check.path, sizeof t.check.path, "/healthz");
  assert_true(px_health_run(&t, why, sizeof why));
  h.status = "503 Service Unavailable";
  assert_false(px_health_run(&t, why, sizeof why));
  assert_string_equal(why, "GET /healthz: 503");
  assert_int_equal(h.served, 2);
  shutdown(fd, SHUT_RDWR);
  close(fd);
  pthread_join(th, NULL);
  /* nothing listens any more */
  assert_false(px_health_run(&t, why, sizeof why));
  assert_non_null(strstr(why, "GET /healthz: "));
  t.check.type = PX_HEALTH_TCP;
  assert_false(px_health_run(&t, why, sizeof why));
  assert_non_null(strstr(why, "Connection refused"));
  /* command: its exit status, a timeout, a missing program */
  char *ok[] = {"true", NULL}, *no[] = {"sh", "-c", "exit 3", NULL}, *slow[] = {"sleep", "5", NULL},
       *none[] = {"/nonexistent/prog", NULL};
  t.check.type = PX_HEALTH_COMMAND;
  t.check.command = ok;
  if (!px_health_run(&t, why, sizeof why)) fail_msg("true failed: %s", why);
  t.check.command = no;
  assert_false(px_health_run(&t, why, sizeof why));
  assert_string_equal(why, "command: exit 3");
  t.check.command = slow;
  assert_false(px_health_run(&t, why, sizeof why));
  assert_string_equal(why, "command: timed out after 1 s");
  t.check.command = none;
  assert_false(px_health_run(&t, why, sizeof why));
  assert_string_equal(why, "command: cannot execute /nonexistent/prog");
}

/* The monitor: a watched replica goes ready when its port opens, unhealthy
 * when it closes, and an unwatched one says nothing more. */
static void monitor_events(void **state) {
  (void)state;
  struct px_health_mon m;
  assert_int_equal(px_health_init(&m), 0);
  uint16_t port;
  int fd = listener(&port);
  struct px_health_target t = {.job_id = 9, .restart = 2, .check = check, .port = port};
  t.check.interval_s = 1;
  t.check.startup_grace_s = 0;
  t.check.failure_threshold = 1;
  assert_int_equal(px_health_watch(&m, &t), 0);
  const char *want[] = {"ready", "unhealthy"};
  for (int k = 0; k < 2; k++) {
    uint32_t n = 0;
    struct px_health_event *ev = NULL;
    for (int i = 0; i < 400 && !n; i++) { /* up to 4 s */
      free(ev);
      usleep(10000);
      ev = px_health_take(&m, &n);
    }
    assert_int_equal(n, 1);
    assert_int_equal(ev[0].job_id, 9);
    assert_int_equal(ev[0].restart, 2);
    assert_string_equal(ev[0].health, want[k]);
    if (k == 1) assert_non_null(strstr(ev[0].reason, "(1 failures in a row)"));
    free(ev);
    close(fd);
  }
  px_health_unwatch(&m, 9, 2);
  px_health_fini(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fsm_rules),    cmocka_unit_test(ports_pick),  cmocka_unit_test(service_env),
      cmocka_unit_test(checks_real),  cmocka_unit_test(monitor_events),
  };
  return px_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
