/*
 * The CLI's hand-written HTTP/1.1 client: the framing (a head, chunked
 * bodies fed one byte at a time, broken inputs refused) and the exchange
 * against a scripted server thread on a Unix socket: a kept-alive
 * connection reused, a stale one retried once, a body read to the close,
 * and a server that never answers bounded by PHALANX_TIMEOUT.
 */
#include "px_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/client.h"

static void head_parses_status_and_framing(void **state) {
  struct px_http_head h;
  const char *ok = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{}";
  assert_int_equal(px_http_head(ok, strlen(ok), &h), (long)strlen(ok) - 2);
  assert_int_equal(h.status, 201);
  assert_int_equal(h.content_length, 13);
  assert_false(h.chunked);
  assert_false(h.close);
  assert_int_equal(px_http_head(ok, 30, &h), 0); /* incomplete: more bytes */

  const char *old = "HTTP/1.0 200 OK\r\ntransfer-encoding:  Chunked \r\n\r\n";
  assert_true(px_http_head(old, strlen(old), &h) > 0);
  assert_true(h.chunked);
  assert_true(h.close); /* 1.0 closes unless it says keep-alive */
  const char *ka = "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n";
  assert_true(px_http_head(ka, strlen(ka), &h) > 0);
  assert_false(h.close);
  const char *bare = "HTTP/1.1 204 No Content\r\n\r\n";
  assert_int_equal(px_http_head(bare, strlen(bare), &h), (long)strlen(bare));
  assert_int_equal(h.content_length, -1);

  const char *smtp = "220 mail.example.com ESMTP\r\n\r\n";
  assert_int_equal(px_http_head(smtp, strlen(smtp), &h), -1);
  const char *badlen = "HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n";
  assert_int_equal(px_http_head(badlen, strlen(badlen), &h), -1);
}

static void chunks_decode_in_place_at_any_split(void **state) {
  const char *raw = "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n";
  size_t n = strlen(raw);
  for (size_t split = 0; split <= n; split++) { /* bytes arrive in two pieces */
    char buf[128];
    memcpy(buf, raw, n);
    struct px_http_chunks st = {0};
    int r = px_http_dechunk(buf, split, &st);
    assert_int_equal(r, split == n);
    if (split < n) assert_int_equal(px_http_dechunk(buf, n, &st), 1);
    assert_int_equal(st.out, 12);
    assert_memory_equal(buf, "hello, world", 12);
  }
  char bad[] = "zz\r\nhello\r\n";
  struct px_http_chunks st = {0};
  assert_int_equal(px_http_dechunk(bad, strlen(bad), &st), -1);
  char nocrlf[] = "2\r\nabXY0\r\n\r\n";
  memset(&st, 0, sizeof st);
  assert_int_equal(px_http_dechunk(nocrlf, strlen(nocrlf), &st), -1);
}

/* ---- a scripted server -------------------------------------------------- */

enum step { ANSWER_KEEP, ANSWER_THEN_CLOSE, CLOSE_SILENTLY, ANSWER_TO_EOF, CHUNKED, HANG };

struct script {
  int lfd;
  enum step steps[8];
  int nsteps, accepted, served;
};

/* Reads one request (head + Content-Length body); 0 at end of stream. */
static int read_request(int fd) {
  char buf[8192];
  size_t n = 0;
  for (;;) {
    ssize_t r = read(fd, buf + n, sizeof buf - n - 1);
    if (r <= 0) return 0;
    n += (size_t)r;
    buf[n] = '\0';
    char *end = strstr(buf, "\r\n\r\n");
    if (!end) continue;
    char *cl = strstr(buf, "Content-Length: ");
    size_t want = (size_t)(end + 4 - buf) + (cl ? strtoul(cl + 16, NULL, 10) : 0);
    if (n >= want) return 1;
  }
}

static void put(int fd, const char *s) {
  size_t n = strlen(s);
  assert_int_equal(write(fd, s, n), (ssize_t)n);
}

static void *serve(void *arg) {
  struct script *s = arg;
  int fd = -1;
  for (int i = 0; i < s->nsteps; i++) {
    if (fd < 0) {
      fd = accept(s->lfd, NULL, NULL);
      s->accepted++;
    }
    if (!read_request(fd)) { /* the client gave up on this connection */
      close(fd);
      fd = -1;
      i--;
      continue;
    }
    s->served++;
    switch (s->steps[i]) {
      case ANSWER_KEEP: put(fd, "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n{\"a\":1}\n"); break;
      case ANSWER_THEN_CLOSE:
        put(fd, "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n{\"a\":2}\n");
        close(fd), fd = -1; /* no Connection: close: the client learns on its next request */
        break;
      case CLOSE_SILENTLY: close(fd), fd = -1; break;
      case ANSWER_TO_EOF:
        put(fd, "HTTP/1.0 404 Not Found\r\n\r\n{\"error\":{\"message\":\"no job 7\"}}");
        close(fd), fd = -1;
        break;
      case CHUNKED:
        put(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n");
        put(fd, "3\r\n:3}\r\n0\r\n\r\n");
        break;
      case HANG: sleep(2); break;
    }
  }
  if (fd >= 0) close(fd);
  return NULL;
}

static void start(struct script *s, pthread_t *t, char *path) {
  snprintf(path, 108, "/tmp/px-http1-%d.sock", (int)getpid());
  unlink(path);
  s->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(s->lfd, 8), 0);
  char spec[200];
  snprintf(spec, sizeof spec, "unix:%s", path);
  setenv("PHALANX_SERVER", spec, 1);
  assert_int_equal(pthread_create(t, NULL, serve, s), 0);
}

static void stop(struct script *s, pthread_t t, const char *path) {
  pthread_join(t, NULL);
  close(s->lfd);
  unlink(path);
  unsetenv("PHALANX_SERVER");
}

static long get_a(struct px_client *c, json_t **resp, struct px_diag *d) {
  long status = 0;
  int rc = px_client_call(c, "GET", "/v1/x", NULL, &status, resp, d);
  return rc ? rc : status;
}

static void keepalive_reused_and_stale_retried(void **state) {
  struct script s = {.steps = {ANSWER_KEEP, ANSWER_THEN_CLOSE, CHUNKED, ANSWER_TO_EOF}, .nsteps = 4};
  pthread_t t;
  char path[108];
  start(&s, &t, path);
  struct px_client c;
  struct px_diag d;
  json_t *r = NULL;
  assert_int_equal(px_client_init(&c, &d), 0);
  assert_int_equal(get_a(&c, &r, &d), 200);
  assert_int_equal(json_integer_value(json_object_get(r, "a")), 1);
  json_decref(r);
  /* a POST with a body on the kept-alive connection */
  json_t *body = json_pack("{s:s}", "k", "v");
  long status = 0;
  assert_int_equal(px_client_call(&c, "POST", "/v1/x", body, &status, &r, &d), 0);
  json_decref(body);
  assert_int_equal(json_integer_value(json_object_get(r, "a")), 2);
  json_decref(r);
  /* the server closed that one: the next request goes on a new connection */
  assert_int_equal(get_a(&c, &r, &d), 200);
  assert_int_equal(json_integer_value(json_object_get(r, "a")), 3);
  json_decref(r);
  assert_int_equal(get_a(&c, &r, &d), 404); /* HTTP/1.0, body to the close */
  char msg[100];
  px_client_error_text(404, r, msg, sizeof msg);
  assert_string_equal(msg, "no job 7");
  json_decref(r);
  px_client_fini(&c);
  stop(&s, t, path);
  assert_int_equal(s.accepted, 2);
  assert_int_equal(s.served, 4);
}

static void fresh_connection_closed_is_an_error(void **state) {
  struct script s = {.steps = {CLOSE_SILENTLY}, .nsteps = 1};
  pthread_t t;
  char path[108];
  start(&s, &t, path);
  struct px_client c;
  struct px_diag d;
  json_t *r = NULL;
  assert_int_equal(px_client_init(&c, &d), 0);
  assert_int_equal(get_a(&c, &r, &d), PX_ECONNECT); /* not retried: it was not a reused one */
  assert_non_null(strstr(d.msg, "closed before an answer"));
  px_client_fini(&c);
  stop(&s, t, path);
}

static void hung_server_times_out(void **state) {
  struct script s = {.steps = {HANG}, .nsteps = 1};
  pthread_t t;
  char path[108];
  start(&s, &t, path);
  setenv("PHALANX_TIMEOUT", "1", 1);
  struct px_client c;
  struct px_diag d;
  json_t *r = NULL;
  assert_int_equal(px_client_init(&c, &d), 0);
  time_t t0 = time(NULL);
  assert_int_equal(get_a(&c, &r, &d), PX_ETIMEOUT);
  assert_true(time(NULL) - t0 <= 2);
  assert_non_null(strstr(d.msg, "no answer within 1 s"));
  px_client_fini(&c);
  unsetenv("PHALANX_TIMEOUT");
  stop(&s, t, path);
}

/* High availability: a standby names the leader; any controller with --ha its term. */
static void head_reads_leader(void **state) {
  (void)state;
  struct px_http_head h;
  const char *r = "HTTP/1.1 503 Service Unavailable\r\nX-Phalanx-Term: 3\r\n"
                  "X-Phalanx-Leader: http://127.0.0.1:7001\r\nContent-Length: 0\r\n\r\n";
  assert_true(px_http_head(r, strlen(r), &h) > 0);
  assert_true(h.ha);
  assert_string_equal(h.leader, "http://127.0.0.1:7001");
  const char *plain = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  assert_true(px_http_head(plain, strlen(plain), &h) > 0);
  assert_false(h.ha);
  assert_string_equal(h.leader, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(head_reads_leader),
      cmocka_unit_test(head_parses_status_and_framing),
      cmocka_unit_test(chunks_decode_in_place_at_any_split),
      cmocka_unit_test(keepalive_reused_and_stale_retried),
      cmocka_unit_test(fresh_connection_closed_is_an_error),
      cmocka_unit_test(hung_server_times_out),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
