/*
 * session_ws.c - WebSockets (any HTTP upgrade) through the web sessions'
 * reverse proxy (api_session.c; docs/interactive.md): what a notebook's
 * kernels talk over.
 *
 * The request goes to the application as HTTP/1.1 asking for the same
 * upgrade, with the client's Sec-WebSocket-* headers. When the application
 * answers 101, the client gets the same answer (its headers), libmicrohttpd
 * hands over the client's connection (MHD_create_response_for_upgrade), and
 * a thread copies bytes both ways until either side closes, then closes
 * both. Any other answer is a 502 that names the status. Tunnels are counted
 * in a list under one mutex so that a stopping server can end them.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/api.h"
#include "server/http/http.h"
#include "util/log.h"

#define HEAD_MAX 16384

struct tunnel {
  int up;                        /* the application */
  char head[HEAD_MAX + 1];       /* its answer's head, then what followed it */
  size_t nhead, body;
  MHD_socket client;
  struct MHD_UpgradeResponseHandle *urh;
  char *extra;                   /* the client's bytes MHD read past its request */
  size_t nextra;
  struct tunnel *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cv = PTHREAD_COND_INITIALIZER;
static struct tunnel *live;
static unsigned running;

static void copy_loop(struct tunnel *t) {
  if ((t->nextra && !px_session_send_all(t->up, t->extra, t->nextra)) ||
      (t->nhead > t->body && !px_session_send_all(t->client, t->head + t->body, t->nhead - t->body)))
    return;
  struct pollfd p[2] = {{.fd = t->client, .events = POLLIN}, {.fd = t->up, .events = POLLIN}};
  char buf[16384];
  for (;;) {
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; i++) {
      if (!p[i].revents) continue;
      ssize_t r = recv(p[i].fd, buf, sizeof buf, MSG_DONTWAIT);
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (r <= 0 || !px_session_send_all(p[1 - i].fd, buf, (size_t)r)) return;
    }
  }
}

static void *tunnel_main(void *arg) {
  struct tunnel *t = arg;
  copy_loop(t);
  pthread_mutex_lock(&mu);
  for (struct tunnel **q = &live; *q; q = &(*q)->next)
    if (*q == t) {
      *q = t->next;
      break;
    }
  running--;
  pthread_cond_broadcast(&idle_cv);
  pthread_mutex_unlock(&mu);
  shutdown(t->client, SHUT_RDWR);
  MHD_upgrade_action(t->urh, MHD_UPGRADE_ACTION_CLOSE);
  close(t->up);
  free(t->extra);
  free(t);
  return NULL;
}

static void on_upgraded(void *cls, struct MHD_Connection *c, void *req_cls, const char *extra_in, size_t extra_in_size,
                        MHD_socket sock, struct MHD_UpgradeResponseHandle *urh) {
  (void)c, (void)req_cls;
  struct tunnel *t = cls;
  t->client = sock;
  t->urh = urh;
  if (extra_in_size && (t->extra = malloc(extra_in_size))) {
    memcpy(t->extra, extra_in, extra_in_size);
    t->nextra = extra_in_size;
  }
  pthread_t th;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&at, 256 * 1024);
  pthread_mutex_lock(&mu);
  bool ok = pthread_create(&th, &at, tunnel_main, t) == 0;
  if (ok) t->next = live, live = t, running++;
  pthread_mutex_unlock(&mu);
  pthread_attr_destroy(&at);
  if (!ok) {
    MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
    close(t->up);
    free(t->extra);
    free(t);
  }
}

/* The application's answer's head (and what came after it). 0 or -1. */
static int read_head(struct tunnel *t) {
  while (t->nhead < HEAD_MAX) {
    ssize_t r = recv(t->up, t->head + t->nhead, HEAD_MAX - t->nhead, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    t->nhead += (size_t)r;
    t->head[t->nhead] = '\0';
    char *end = memmem(t->head, t->nhead, "\r\n\r\n", 4);
    if (end) return t->body = (size_t)(end + 4 - t->head), 0;
  }
  return -1;
}

static void add_header(void *ud, const char *k, const char *v) { MHD_add_response_header(ud, k, v); }

void px_session_tunnel(struct px_api_call *c, const char *addr, unsigned port, const char *upgrade) {
  struct tunnel *t = calloc(1, sizeof *t);
  size_t n = 0;
  char *req = t ? px_session_request(c, addr, port, upgrade, &n) : NULL;
  if (t) t->up = req ? px_session_dial(addr, port) : -1;
  bool sent = t && t->up >= 0 && px_session_send_all(t->up, req, n);
  free(req);
  int status = 0;
  size_t body = 0;
  struct MHD_Response *resp = NULL;
  char head[HEAD_MAX + 1];
  if (sent && !read_head(t)) {
    memcpy(head, t->head, t->nhead + 1); /* parsed on a copy: the bytes after the head stay whole */
    resp = MHD_create_response_for_upgrade(on_upgraded, t);
    if (resp && (px_session_answer_parse(head, t->nhead, &status, &body, add_header, resp) || status != 101))
      MHD_destroy_response(resp), resp = NULL;
  }
  if (!resp) {
    if (t && t->up >= 0) close(t->up);
    free(t);
    if (!sent) return px_api_error(c, 502, "BAD_GATEWAY", "session: the application does not answer at %s:%u", addr, port);
    return px_api_error(c, 502, "BAD_GATEWAY", "session: the application did not agree to the upgrade (%s, status %d)",
                        upgrade, status);
  }
  MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, upgrade);
  c->status = MHD_HTTP_SWITCHING_PROTOCOLS;
  c->response = resp;
}

void px_session_stop(void) {
  pthread_mutex_lock(&mu);
  for (struct tunnel *t = live; t; t = t->next) shutdown(t->up, SHUT_RDWR); /* the copy loop sees the end */
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  while (running > 0)
    if (pthread_cond_timedwait(&idle_cv, &mu, &until) == ETIMEDOUT) break;
  pthread_mutex_unlock(&mu);
}
