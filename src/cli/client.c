/*
 * client.c - the CLI's HTTP client (see client.h for why it is hand-written):
 * finding the server, connecting with a deadline, one request and its
 * answer on a kept-alive connection. Framing is in http1.c.
 *
 * Every wait is a poll() against the request's deadline, so a server that
 * accepts and never answers costs PHALANX_TIMEOUT, and one that is not there
 * costs a failed connect().
 */
#include "cli/client.h"
#include "commands.h"

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int set_where(struct px_client *c, const char *spec, struct px_diag *d) {
  if (!strncmp(spec, "unix:", 5)) {
    if (strlen(spec + 5) >= sizeof ((struct sockaddr_un *)0)->sun_path)
      return px_diag_set(d, PX_EINVAL, -1, "server socket path '%s' is too long", spec + 5);
    snprintf(c->socket_path, sizeof c->socket_path, "%s", spec + 5);
    snprintf(c->where, sizeof c->where, "unix:%s", c->socket_path);
    return 0;
  }
  bool tls = !strncmp(spec, "https://", 8);
  if (tls || !strncmp(spec, "http://", 7)) {
    size_t scheme = tls ? 8 : 7;
    const char *h = spec + scheme, *end = h + strcspn(h, "/");
    const char *colon = memrchr(h, ':', (size_t)(end - h));
    const char *port = colon ? colon + 1 : tls ? "443" : "80";
    size_t hlen = (size_t)((colon ? colon : end) - h), plen = colon ? (size_t)(end - port) : strlen(port);
    if (*h == '[' && hlen >= 2 && h[hlen - 1] == ']') h++, hlen -= 2; /* [::1]:8080 */
    if (!hlen || hlen >= sizeof c->host || !plen || plen >= sizeof c->port ||
        strspn(port, "0123456789") != plen)
      return px_diag_set(d, PX_EINVAL, -1, "server address '%s' is not %s://host:port", spec,
                         tls ? "https" : "http");
    memcpy(c->host, h, hlen), c->host[hlen] = '\0';
    memcpy(c->port, port, plen), c->port[plen] = '\0';
    c->tls = tls;
    snprintf(c->where, sizeof c->where, "%s%.*s", tls ? "https://" : "http://",
             (int)(end - (spec + scheme)), spec + scheme);
    return 0;
  }
  return px_diag_set(d, PX_EINVAL, -1,
                     "server address '%s' is neither unix:/path nor http(s)://host:port", spec);
}

/* Keeps one more controller address (a URL, or host:port for http). */
static void add_addr(struct px_client *c, const char *spec, size_t len, const char *scheme) {
  if (!len || c->naddrs == (int)(sizeof c->addrs / sizeof c->addrs[0])) return;
  bool url = memmem(spec, len, "://", 3) || spec[0] == '/' || !strncmp(spec, "unix:", 5);
  snprintf(c->addrs[c->naddrs++], sizeof c->addrs[0], "%s%.*s", url ? "" : scheme, (int)len, spec);
}

/* "a,b,c" into the list of addresses, the first one current. */
static int set_list(struct px_client *c, const char *list, const char *scheme, struct px_diag *d) {
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    add_addr(c, p, len, scheme);
    p += len + (p[len] == ',');
  }
  if (!c->naddrs) return px_diag_set(d, PX_EINVAL, -1, "server address list '%s' is empty", list);
  c->cur = 0;
  const char *first = c->addrs[0];
  if (first[0] != '/') return set_where(c, first, d);
  char spec[600];
  snprintf(spec, sizeof spec, "unix:%s", first);
  return set_where(c, spec, d);
}

/* Reads SocketPath= (preferred: local, identifies us by SO_PEERCRED) or
 * Listen= (https:// when the config has TLS keys; TLSCAFile= is the CA) from
 * the config without parsing the rest. */
static bool from_config(struct px_client *c, struct px_diag *d) {
  const char *path = getenv("PHALANX_CONF");
  FILE *f = fopen(path ? path : PX_CLI_DEFAULT_CONF, "re");
  if (!f) return false;
  char line[1024], sock[600] = "", listen[600] = "", ca[512] = "", ctl[1024] = "";
  bool tls = false;
  while (fgets(line, sizeof line, f)) {
    char *p = line;
    while (isspace((unsigned char)*p)) p++;
    char *val = strchr(p, '=');
    if (!val) continue;
    val++;
    val[strcspn(val, " \t\r\n#")] = '\0';
    if (!strncasecmp(p, "SocketPath=", 11)) snprintf(sock, sizeof sock, "unix:%s", val);
    if (!strncasecmp(p, "Listen=", 7)) snprintf(listen, sizeof listen, "%s", val);
    if (!strncasecmp(p, "TLSCertFile=", 12)) tls = true;
    if (!strncasecmp(p, "TLSCAFile=", 10)) tls = true, snprintf(ca, sizeof ca, "%s", val);
    if (!strncasecmp(p, "SlurmctldHost=", 14) && strlen(ctl) + strlen(val) + 2 < sizeof ctl)
      snprintf(ctl + strlen(ctl), sizeof ctl - strlen(ctl), "%s%s", *ctl ? "," : "", val);
  }
  fclose(f);
  if (!c->ca_file[0]) snprintf(c->ca_file, sizeof c->ca_file, "%s", ca);
  /* several controllers (SlurmctldHost= lines): whichever leads, not the local socket */
  if (strchr(ctl, ',')) return set_list(c, ctl, tls ? "https://" : "http://", d) == 0;
  if (*sock) return set_where(c, sock, d) == 0;
  if (!*listen) return false;
  char spec[620];
  snprintf(spec, sizeof spec, "%s%s", tls ? "https://" : "http://", listen);
  if (!c->ca_file[0]) snprintf(c->ca_file, sizeof c->ca_file, "%s", ca);
  return set_where(c, spec, d) == 0;
}

int px_client_init(struct px_client *c, struct px_diag *d) {
  memset(c, 0, sizeof *c);
  c->fd = -1;
  c->connect_timeout_ms = 3000;
  c->timeout_ms = 30000;
  const char *ca = getenv("PHALANX_CA_FILE");
  if (ca) snprintf(c->ca_file, sizeof c->ca_file, "%s", ca);
  const char *t = getenv("PHALANX_TIMEOUT");
  long secs = t ? strtol(t, NULL, 10) : 0;
  if (secs > 0 && secs < 86400) c->timeout_ms = secs * 1000;
  const char *env = getenv("PHALANX_SERVER");
  if (env && strchr(env, ',')) return set_list(c, env, "http://", d);
  if (env && *env) {
    if (env[0] != '/') return set_where(c, env, d);
    char spec[600];
    snprintf(spec, sizeof spec, "unix:%s", env);
    return set_where(c, spec, d);
  }
  if (from_config(c, d)) return 0;
  return set_where(c, "unix:" PX_CLI_DEFAULT_SOCKET, d);
}

void px_client_fini(struct px_client *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  px_client_tls_fini(c);
}

int px_cli_wants_tls(void) {
  struct px_client c;
  struct px_diag d;
  bool tls = px_client_init(&c, &d) == 0 && c.tls;
  px_client_fini(&c);
  return tls;
}

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits for fd to be ready for events. 1 ready, 0 deadline passed, -errno. */
static int wait_fd(int fd, short events, int64_t deadline) {
  for (;;) {
    int64_t left = deadline - now_ms();
    if (left <= 0) return 0;
    struct pollfd p = {.fd = fd, .events = events};
    int r = poll(&p, 1, left > INT32_MAX ? INT32_MAX : (int)left);
    if (r > 0) return 1;
    if (r < 0 && errno != EINTR) return -errno;
  }
}

static int unreachable(const struct px_client *c, struct px_diag *d, int code, const char *fmt,
                       ...) __attribute__((format(printf, 4, 5)));
static int unreachable(const struct px_client *c, struct px_diag *d, int code, const char *fmt,
                       ...) {
  char why[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  return px_diag_set(d, code, -1, "cannot reach the server at %s: %s", c->where, why);
}

/* A non-blocking connect finished by the deadline. 0 or -errno (-ETIMEDOUT). */
static int connect_by(int fd, const struct sockaddr *a, socklen_t alen, int64_t deadline) {
  while (connect(fd, a, alen) != 0) {
    if (errno == EINTR) continue;
    if (errno == EAGAIN) { /* a Unix socket's backlog is full: the server is slow, retry */
      if (now_ms() >= deadline) return -ETIMEDOUT;
      poll(NULL, 0, 5);
      continue;
    }
    if (errno != EINPROGRESS) return -errno;
    int r = wait_fd(fd, POLLOUT, deadline);
    if (r <= 0) return r ? r : -ETIMEDOUT;
    int err = 0;
    socklen_t elen = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
    return -err;
  }
  return 0;
}

static int connect_unix(struct px_client *c, int64_t deadline) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  size_t len = strlen(c->socket_path); /* fits: set_where checked it */
  memcpy(a.sun_path, c->socket_path, len < sizeof a.sun_path ? len : sizeof a.sun_path - 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -errno;
  int r = connect_by(fd, (struct sockaddr *)&a, sizeof a, deadline);
  if (r) return close(fd), r;
  c->fd = fd;
  return 0;
}

static int connect_tcp(struct px_client *c, int64_t deadline, struct px_diag *d) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
  int g = getaddrinfo(c->host, c->port, &hints, &res);
  if (g) return unreachable(c, d, PX_ECONNECT, "cannot resolve '%s': %s", c->host, gai_strerror(g));
  int r = -ECONNREFUSED;
  for (struct addrinfo *ai = res; ai && c->fd < 0; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    r = connect_by(fd, ai->ai_addr, ai->ai_addrlen, deadline);
    if (r) {
      close(fd);
      continue;
    }
    int one = 1; /* a request is one write; no Nagle delay on the next */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd;
  }
  freeaddrinfo(res);
  if (c->fd >= 0) return 0;
  if (r == -ETIMEDOUT)
    return unreachable(c, d, PX_ETIMEOUT, "connect timed out after %ld ms", c->connect_timeout_ms);
  return unreachable(c, d, PX_ECONNECT, "connect: %s", strerror(-r));
}

static int open_conn(struct px_client *c, int64_t deadline, struct px_diag *d) {
  int64_t by = now_ms() + c->connect_timeout_ms;
  if (by > deadline) by = deadline;
  if (!c->socket_path[0]) return connect_tcp(c, by, d);
  int r = connect_unix(c, by);
  if (r == -ETIMEDOUT)
    return unreachable(c, d, PX_ETIMEOUT, "connect timed out after %ld ms", c->connect_timeout_ms);
  if (r) return unreachable(c, d, PX_ECONNECT, "connect: %s", strerror(-r));
  c->nreq = 0;
  return 0;
}

int px_client_open_stream(struct px_client *c, int *fd, struct px_diag *d) {
  if (c->tls) return px_diag_set(d, PX_EINVAL, -1, "an https:// stream goes through libcurl (cmd_pty.c)");
  int saved = c->fd;
  c->fd = -1;
  int rc = open_conn(c, now_ms() + c->connect_timeout_ms, d);
  *fd = c->fd;
  c->fd = saved;
  return rc;
}

static int timed_out(const struct px_client *c, struct px_diag *d) {
  return unreachable(c, d, PX_ETIMEOUT, "no answer within %ld s (PHALANX_TIMEOUT sets the limit)",
                     c->timeout_ms / 1000);
}

/* Writes all of iov by the deadline. */
static int send_all(struct px_client *c, struct iovec *iov, int niov, int64_t deadline,
                    struct px_diag *d) {
  while (niov > 0) {
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
    ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) return unreachable(c, d, PX_ECONNECT, "send: %s", strerror(errno));
      int r = wait_fd(c->fd, POLLOUT, deadline);
      if (r <= 0) return r ? unreachable(c, d, PX_ECONNECT, "poll: %s", strerror(-r)) : timed_out(c, d);
      continue;
    }
    for (size_t k = (size_t)w; niov > 0 && k >= iov->iov_len; niov--, iov++) k -= iov->iov_len, w = (ssize_t)k;
    if (niov > 0) iov->iov_base = (char *)iov->iov_base + w, iov->iov_len -= (size_t)w;
  }
  return 0;
}

/* The answer being read: raw bytes in buf[0..n), the head once parsed. */
struct rx {
  char *buf;
  size_t n, cap;
  long head_len; /* 0 until the head is in */
  struct px_http_head h;
  struct px_http_chunks ch;
};

/* Reads more bytes. >0 read, 0 end of stream, <0 error (set in d). */
static ssize_t rx_more(struct px_client *c, struct rx *x, int64_t deadline, struct px_diag *d) {
  /* Small first (most answers are a few hundred bytes; a 256 KiB buffer
   * cost sbatch an mmap, a munmap and page faults), doubling for listings,
   * or once the head gave the body's length, that size at once (a page of
   * sacct's rows is megabytes: doubling copied it and faulted it in twice). */
  size_t want = x->head_len && !x->h.chunked && x->h.content_length >= 0
                    ? (size_t)x->head_len + (size_t)x->h.content_length + 1
                    : 0;
  if (want ? x->cap < want : x->cap - x->n < (x->cap >> 2) + 1) {
    size_t cap = want ? want : x->cap ? x->cap * 2 : 16384;
    char *b = realloc(x->buf, cap);
    if (!b) return px_diag_set(d, PX_ENOMEM, -1, "out of memory reading the server's answer");
    x->buf = b, x->cap = cap;
  }
  for (;;) {
    ssize_t r = recv(c->fd, x->buf + x->n, x->cap - x->n - 1, 0);
    if (r >= 0) return x->n += (size_t)r, r;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return unreachable(c, d, PX_ECONNECT, "receive: %s", strerror(errno));
    int w = wait_fd(c->fd, POLLIN, deadline);
    if (w <= 0) return w ? unreachable(c, d, PX_ECONNECT, "poll: %s", strerror(-w)) : timed_out(c, d);
  }
}

/* Whether the body is complete (1), needs more (0) or is broken (-1). */
static int rx_body_done(struct rx *x, bool eof) {
  size_t got = x->n - (size_t)x->head_len;
  if (x->h.status == 204 || x->h.status == 304) return 1;
  if (x->h.chunked) return px_http_dechunk(x->buf + x->head_len, got, &x->ch);
  if (x->h.content_length >= 0) {
    if (got >= (size_t)x->h.content_length) return 1;
    return eof ? -1 : 0;
  }
  return eof ? 1 : 0; /* no length: the body ends with the connection */
}

/* Reads one answer into x. PX_ECONNECT with *fresh still true when the
 * connection ended before any byte (a stale kept-alive one: retry). */
static int receive(struct px_client *c, struct rx *x, int64_t deadline, bool *fresh,
                   struct px_diag *d) {
  for (;;) {
    ssize_t r = rx_more(c, x, deadline, d);
    if (r < 0) return (int)r;
    if (r > 0) *fresh = false;
    if (!x->head_len) {
      long hl = px_http_head(x->buf, x->n, &x->h);
      if (hl < 0) return unreachable(c, d, PX_EPROTO, "the answer is not HTTP");
      if (hl > 0 && x->h.status < 200) { /* 100 Continue and the like: skip it */
        memmove(x->buf, x->buf + hl, x->n - (size_t)hl);
        x->n -= (size_t)hl;
        continue;
      }
      x->head_len = hl;
      if (!hl) {
        if (!r) return unreachable(c, d, PX_ECONNECT, "the connection closed before an answer");
        continue;
      }
    }
    int done = rx_body_done(x, r == 0);
    if (done < 0) return unreachable(c, d, PX_EPROTO, "the answer's body is cut short or garbled");
    if (done) return 0;
    if (!r) return unreachable(c, d, PX_EPROTO, "the answer's body is cut short");
  }
}

static char *request_head(const struct px_client *c, const char *method, const char *path,
                          size_t blen, bool body) {
  const char *token = getenv("PHALANX_TOKEN");
  bool unix_sock = c->socket_path[0] != '\0', auth = token && *token;
  char length[80] = "";
  if (body) snprintf(length, sizeof length, "Content-Type: application/json\r\nContent-Length: %zu\r\n", blen);
  char *head = NULL;
  if (asprintf(&head, "%s %s HTTP/1.1\r\nHost: %s%s%s\r\nAccept: application/json\r\n%s%s%s%s\r\n",
               method, path, unix_sock ? "localhost" : c->host, unix_sock ? "" : ":",
               unix_sock ? "" : c->port, auth ? "Authorization: Bearer " : "", auth ? token : "",
               auth ? "\r\n" : "", length) < 0)
    return NULL;
  return head;
}

/* One exchange on c->fd (connected). */
static int exchange(struct px_client *c, const char *head, const char *body, size_t blen,
                    int64_t deadline, struct rx *x, bool *fresh, struct px_diag *d) {
  struct iovec iov[2] = {{(void *)head, strlen(head)}, {(void *)body, body ? blen : 0}};
  int rc = send_all(c, iov, body && blen ? 2 : 1, deadline, d);
  if (rc) return rc;
  return receive(c, x, deadline, fresh, d);
}

/* One request to the current address; *sent says whether it may have
 * reached the server (then it is not sent again elsewhere). */
static int request_one(struct px_client *c, const char *method, const char *path,
                       const char *body, size_t blen, int64_t deadline, struct px_http_reply *r,
                       char *leader, bool *ha, bool *sent, struct px_diag *d) {
  memset(r, 0, sizeof *r);
  *sent = true;
  if (c->tls) {
    int rc = px_client_tls_request(c, method, path, body, blen, r, d);
    *sent = !c->tls_unsent;
    snprintf(leader, 128, "%s", c->tls_head.leader);
    *ha = c->tls_head.ha;
    return rc;
  }
  char *head = request_head(c, method, path, blen, body != NULL);
  if (!head) return px_diag_set(d, PX_ENOMEM, -1, "out of memory");
  struct rx x = {0};
  int rc;
  for (int attempt = 0;; attempt++) {
    bool reused = c->fd >= 0, fresh = true;
    if (!reused && (rc = open_conn(c, deadline, d))) {
      *sent = attempt > 0;
      break;
    }
    free(x.buf);
    memset(&x, 0, sizeof x);
    rc = exchange(c, head, body, blen, deadline, &x, &fresh, d);
    if (rc) px_client_fini(c);
    /* A kept-alive connection the server closed meanwhile: once more on a new one. */
    if (!rc || !(reused && fresh && rc == PX_ECONNECT && attempt == 0)) break;
  }
  free(head);
  if (rc) return free(x.buf), rc;
  size_t blen_in = x.n - (size_t)x.head_len;
  r->len = x.h.chunked ? x.ch.out : (x.h.content_length >= 0 ? (size_t)x.h.content_length : blen_in);
  if (x.h.status == 204 || x.h.status == 304) r->len = 0;
  /* Our requests are never pipelined: bytes past the body mean a confused
   * server; do not reuse its connection. */
  if (x.h.close || (!x.h.chunked && blen_in > r->len)) px_client_fini(c);
  else c->nreq++;
  memmove(x.buf, x.buf + x.head_len, r->len);
  x.buf[r->len] = '\0';
  r->status = x.h.status;
  r->body = x.buf;
  snprintf(leader, 128, "%s", x.h.leader);
  *ha = x.h.ha;
  return 0;
}

/* The next controller: the leader a standby named when it is listed, else
 * the next address. true after a whole round (time to pause). */
static bool move_on(struct px_client *c, const char *leader, struct px_diag *d) {
  px_client_fini(c);
  int was = c->cur;
  c->cur = (c->cur + 1) % c->naddrs;
  for (int i = 0; leader && *leader && i < c->naddrs; i++)
    if (!strcmp(c->addrs[i], leader)) c->cur = i;
  const char *a = c->addrs[c->cur];
  char spec[600];
  snprintf(spec, sizeof spec, "%s%s", a[0] == '/' ? "unix:" : "", a);
  set_where(c, spec, d);
  return c->cur <= was;
}

int px_client_request(struct px_client *c, const char *method, const char *path,
                      const char *body, size_t blen, struct px_http_reply *r, struct px_diag *d) {
  int64_t deadline = now_ms() + c->timeout_ms;
  for (;;) {
    char leader[128] = "";
    bool sent, ha = false;
    int rc = request_one(c, method, path, body, blen, deadline, r, leader, &ha, &sent, d);
    bool standby = !rc && r->status == 503 && ha;
    /* a GET changes nothing: sent again after a controller died under it */
    bool again = rc && (!sent || !strcmp(method, "GET"));
    if (c->naddrs < 2 || !(standby || again) || now_ms() >= deadline) return rc;
    if (standby) free(r->body), r->body = NULL;
    if (move_on(c, standby ? leader : NULL, d)) poll(NULL, 0, 200); /* no leader yet: a takeover */
  }
}

int px_client_call(struct px_client *c, const char *method, const char *path, json_t *body,
                   long *status, json_t **resp, struct px_diag *d) {
  *resp = NULL;
  char *text = NULL;
  if (body && !(text = json_dumps(body, JSON_COMPACT)))
    return px_diag_set(d, PX_ENOMEM, -1, "out of memory");
  struct px_http_reply r;
  int rc = px_client_request(c, method, path, text, text ? strlen(text) : 0, &r, d);
  free(text);
  if (rc) return rc;
  *status = r.status;
  if (r.len) {
    json_error_t je;
    *resp = json_loadb(r.body, r.len, 0, &je);
    if (!*resp)
      rc = px_diag_set(d, PX_EPROTO, -1, "the server at %s sent a reply that is not JSON (%s)",
                       c->where, je.text);
  }
  free(r.body);
  return rc;
}

void px_client_error_text(long status, const json_t *resp, char *buf, size_t n) {
  const char *msg = json_string_value(json_object_get(json_object_get(resp, "error"), "message"));
  if (msg)
    snprintf(buf, n, "%s", msg);
  else
    snprintf(buf, n, "the server answered HTTP %ld", status);
}
