/* emu_net.c - many HTTP requests from one thread (emu_net.h). */
#include "agent/emu_net.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "agent/http.h"
#include "agent/servers.h"
#include "util/error.h"
#include "util/log.h"

#define MAX_INFLIGHT 64 /* throttled requests at once (see the header) */
/* Transfers are spread over this many multi handles by the caller's key (its
 * node): curl looks for a reusable connection by walking every connection to
 * the same host, so one multi with 10,000 polls' connections spent most of
 * the emulator's CPU in that walk during a burst. */
#define NSHARDS 64

struct px_emnet;

struct shard {
  CURLM *m;
  struct px_emnet *n;
  uint32_t idx;
  int64_t due_ms;
};

struct emreq {
  CURL *h;
  struct curl_slist *hdr;
  char *body;
  struct px_http_body resp;
  bool long_poll;
  struct shard *sh;
  px_emnet_done_fn done;
  void *ud;
  struct emreq *next; /* waiting list */
  struct emreq *aprev, *anext; /* added to the multi */
  struct px_ha_hdr ha;         /* the answer's term and leader (servers.h) */
  int server;                  /* the index of the controller it went to */
};

struct px_emnet {
  struct shard sh[NSHARDS];
  struct px_servers list;  /* the controllers (servers.h) */
  char ca_file[PATH_MAX]; /* for an https server (http.h) */
  bool tls_warned;        /* a certificate problem is logged once, not per node */
  int epfd;
  uint32_t inflight, busy; /* throttled in flight; all in flight or waiting */
  struct emreq *wait_head, *wait_tail;
  struct emreq *active;
  bool closing;
};

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* curl tells which sockets to watch: mirrored into the caller's epoll set,
 * the event's data naming the shard (high half) and the descriptor. */
static int on_socket(CURL *h, curl_socket_t fd, int what, void *ud, void *sockp) {
  struct shard *sh = ud;
  int epfd = sh->n->epfd;
  (void)h;
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
    curl_multi_assign(sh->m, fd, NULL);
    return 0;
  }
  struct epoll_event ev = {.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0),
                           .data.u64 = (uint64_t)(sh->idx + 1) << 32 | (uint32_t)fd};
  if (!sockp) { /* first time: ADD, and mark it known */
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
    curl_multi_assign(sh->m, fd, sh);
  } else {
    epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
  }
  return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *ud) {
  struct shard *sh = ud;
  (void)m;
  sh->due_ms = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;
  return 0;
}

int px_emnet_new(const char *base, const char *ca_file, int epfd, uint32_t max_sockets,
                 struct px_emnet **out) {
  struct px_emnet *n = calloc(1, sizeof *n);
  char why[128];
  if (!n) return PX_ENOMEM;
  if (px_servers_parse(&n->list, base, why, sizeof why)) {
    px_error("%s", why);
    free(n);
    return PX_EINVAL;
  }
  snprintf(n->ca_file, sizeof n->ca_file, "%s", ca_file ? ca_file : "");
  n->epfd = epfd;
  for (uint32_t i = 0; i < NSHARDS; i++) {
    struct shard *sh = &n->sh[i];
    *sh = (struct shard){.m = curl_multi_init(), .n = n, .idx = i, .due_ms = -1};
    if (!sh->m) {
      px_emnet_free(n);
      return PX_ENOMEM;
    }
    curl_multi_setopt(sh->m, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(sh->m, CURLMOPT_SOCKETDATA, sh);
    curl_multi_setopt(sh->m, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(sh->m, CURLMOPT_TIMERDATA, sh);
    /* keep a connection per long poll plus the throttled ones, for reuse */
    curl_multi_setopt(sh->m, CURLMOPT_MAXCONNECTS, (long)(max_sockets / NSHARDS + MAX_INFLIGHT));
  }
  *out = n;
  return 0;
}

static void req_free(struct emreq *r) {
  curl_slist_free_all(r->hdr);
  free(r->body);
  free(r->resp.p);
  free(r);
}

static void active_add(struct px_emnet *n, struct emreq *r) {
  r->aprev = NULL;
  r->anext = n->active;
  if (n->active) n->active->aprev = r;
  n->active = r;
}

static void active_del(struct px_emnet *n, struct emreq *r) {
  if (r->aprev) r->aprev->anext = r->anext;
  else n->active = r->anext;
  if (r->anext) r->anext->aprev = r->aprev;
}

/* Requests still in flight or waiting end as failed, so their owners free what they hold. */
void px_emnet_free(struct px_emnet *n) {
  if (!n) return;
  n->closing = true;
  while (n->active || n->wait_head) {
    struct emreq *r = n->active ? n->active : n->wait_head;
    if (r == n->active) {
      active_del(n, r);
      curl_multi_remove_handle(r->sh->m, r->h);
    } else {
      n->wait_head = r->next;
    }
    curl_easy_cleanup(r->h);
    px_emnet_done_fn done = r->done;
    void *ud = r->ud;
    req_free(r);
    done(ud, PX_ECONNECT, 0, NULL);
  }
  for (uint32_t i = 0; i < NSHARDS; i++) curl_multi_cleanup(n->sh[i].m);
  free(n);
}

static void start(struct px_emnet *n, struct emreq *r) {
  if (!r->long_poll) n->inflight++;
  active_add(n, r);
  if (curl_multi_add_handle(r->sh->m, r->h) != CURLM_OK) px_error("emulated nodes: cannot start a request");
}

/* A transfer to a controller the process has left (servers.h), a long poll
 * held by a paused leader most of all, is given up (curl asks at least once
 * a second) so that it is sent again to the current one. */
static int left_behind(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d) {
  struct emreq *r = ud;
  return r->server != px_servers_cur(&r->sh->n->list);
}

int px_emnet_request(struct px_emnet *n, uint32_t key, const char *method, const char *path, const char *auth,
                     const char *body, long timeout_ms, bool long_poll, px_emnet_done_fn done, void *ud) {
  if (n->closing) return PX_ESTATE;
  struct emreq *r = calloc(1, sizeof *r);
  char url[1024];
  if (!r || !(r->h = curl_easy_init()) || (body && !(r->body = strdup(body)))) {
    if (r) curl_easy_cleanup(r->h), free(r);
    return PX_ENOMEM;
  }
  r->server = px_servers_cur(&n->list);
  snprintf(url, sizeof url, "%s%s", n->list.base[r->server], path);
  /* several controllers: a hung one is left after 5 s, not the caller's 15 */
  if (!long_poll && n->list.n > 1 && timeout_ms > 5000) timeout_ms = 5000;
  struct curl_slist *t;
  if (auth && (t = curl_slist_append(r->hdr, auth))) r->hdr = t;
  if (body && (t = curl_slist_append(r->hdr, "Content-Type: application/json"))) r->hdr = t;
  if ((t = curl_slist_append(r->hdr, "Expect:"))) r->hdr = t; /* no 100-continue round trip */
  r->long_poll = long_poll;
  r->sh = &n->sh[key % NSHARDS];
  r->done = done;
  r->ud = ud;
  CURL *h = r->h;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, r->hdr);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, px_http_collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->resp);
  curl_easy_setopt(h, CURLOPT_PRIVATE, r);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, px_servers_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &r->ha);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, left_behind);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, r);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  px_http_tls(h, n->ca_file);
  if (body) {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
  } else if (strcmp(method, "GET") != 0) {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
  }
  n->busy++;
  if (long_poll || n->inflight < MAX_INFLIGHT) {
    start(n, r);
    return 0;
  }
  if (n->wait_tail) n->wait_tail->next = r;
  else n->wait_head = r;
  n->wait_tail = r;
  return 0;
}

/* Another controller for the next requests when this one is gone or a
 * standby; an answer of a lower term than heard is refused (servers.h).
 * Only a request sent to the current controller moves the list: a hundred
 * polls failing together move it once. */
static void follow_leader(struct px_emnet *n, struct emreq *r, int *rc, long *status) {
  bool stale = !*rc && *status < 300 && !px_servers_term_ok(r->ha.term); /* orders: 2xx */
  bool away = *rc == PX_ECONNECT || *rc == PX_ETIMEOUT ||
              (!*rc && *status == 503 && (r->ha.leader[0] || r->ha.term));
  if (stale) {
    *rc = PX_ESTATE;
    *status = 0;
  }
  if (stale || away) px_servers_next(&n->list, r->server, r->ha.leader);
}

/* Transfers that finished: their callbacks, then waiting requests take the freed places. */
static void harvest(struct px_emnet *n, struct shard *sh) {
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(sh->m, &left))) {
    if (msg->msg != CURLMSG_DONE) continue;
    struct emreq *r = NULL;
    CURLcode res = msg->data.result;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
    curl_multi_remove_handle(sh->m, r->h);
    active_del(n, r);
    long status = 0;
    int rc = res == CURLE_OK ? 0 : res == CURLE_OPERATION_TIMEDOUT ? PX_ETIMEOUT : PX_ECONNECT;
    if ((res == CURLE_PEER_FAILED_VERIFICATION || res == CURLE_SSL_CACERT_BADFILE) && !n->tls_warned) {
      char why[512];
      px_http_failure(res, "", n->ca_file, why, sizeof why);
      px_warn("server %s: %s", px_servers_base(&n->list), why);
      n->tls_warned = true;
    }
    if (!rc) curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &status);
    follow_leader(n, r, &rc, &status);
    if (!r->long_poll) n->inflight--;
    n->busy--;
    char *body = r->resp.p;
    r->resp.p = NULL;
    px_emnet_done_fn done = r->done;
    void *ud = r->ud;
    curl_easy_cleanup(r->h);
    req_free(r);
    done(ud, rc, status, rc ? (free(body), NULL) : body);
  }
  while (n->wait_head && n->inflight < MAX_INFLIGHT) {
    struct emreq *r = n->wait_head;
    if (!(n->wait_head = r->next)) n->wait_tail = NULL;
    r->next = NULL;
    start(n, r);
  }
}

void px_emnet_socket(struct px_emnet *n, uint64_t data, uint32_t ev) {
  uint32_t idx = (uint32_t)(data >> 32) - 1;
  int fd = (int)(uint32_t)data, running;
  int mask = (ev & EPOLLIN ? CURL_CSELECT_IN : 0) | (ev & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
             (ev & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
  if (idx >= NSHARDS) return;
  curl_multi_socket_action(n->sh[idx].m, fd, mask, &running);
  harvest(n, &n->sh[idx]);
}

void px_emnet_timeout(struct px_emnet *n, int64_t now_ms) {
  for (uint32_t i = 0; i < NSHARDS; i++) {
    struct shard *sh = &n->sh[i];
    if (sh->due_ms < 0 || sh->due_ms > now_ms) continue;
    int running;
    sh->due_ms = -1;
    curl_multi_socket_action(sh->m, CURL_SOCKET_TIMEOUT, 0, &running);
    harvest(n, sh);
  }
}

int64_t px_emnet_due_ms(const struct px_emnet *n) {
  int64_t due = -1;
  for (uint32_t i = 0; i < NSHARDS; i++)
    if (n->sh[i].due_ms >= 0 && (due < 0 || n->sh[i].due_ms < due)) due = n->sh[i].due_ms;
  return due;
}

uint32_t px_emnet_busy(const struct px_emnet *n) { return n->busy; }
