/*
 * api_session.c - web sessions (phalanx session start; docs/interactive.md):
 * the server's reverse proxy to a web application running as a job.
 *
 *   ANY /sessions/{job}/...   -> http://<the job's node>:<its session port>/sessions/{job}/...
 *
 * A session is a job like any other (squeue lists it, fair share charges
 * it) whose comment says "phalanx-session port=P": the session host on the
 * node (agent/session_host.c) listens on P and passes connections to the
 * application, ending the job when nobody has used it for its idle time.
 * The comment is journaled with the job, so the URL survives a restart of
 * the server; a user who writes such a comment on another of their jobs
 * reaches nothing they could not reach from inside that job.
 *
 * Only the job's user and operators get through. A browser cannot send our
 * Authorization header, so a first visit may carry the API token as
 * ?phalanx_token=T: it is checked, set as a cookie for this session's path
 * only, and the browser is sent to the same URL without it. The Unix
 * socket's peer credentials work too (curl --unix-socket).
 *
 * The request goes upstream as HTTP/1.0 with Connection: close (so the
 * answer is never chunked) and the answer comes back whole. A request to
 * upgrade the connection (a WebSocket: a notebook's kernels) is passed on
 * as such and, once the application agrees, spliced (session_ws.c).
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/api.h"
#include "server/http/http.h"
#include "server/tables.h"
#include "util/log.h"

#define UPSTREAM_CONNECT_MS 5000
#define UPSTREAM_ANSWER_MS 60000
#define UPSTREAM_MAX (64u << 20)
#define COOKIE "phalanx_session"

struct target {
  uint64_t job;
  uint32_t uid;
  char user[64], node[256], addr[256];
  unsigned port;
};

/* The session's job, running, with its port and node. 0, or answered. */
static int find_target(struct px_api_call *c, struct target *t) {
  char *end;
  t->job = strtoull(c->arg, &end, 10);
  if (*end || !t->job) return px_api_error(c, 404, "NOT_FOUND", "session %.64s: not a job id", c->arg), -1;
  struct px_snap *snap = px_api_snap_fresh(c->s);
  size_t i = px_snap_lower_bound(snap, t->job);
  const struct px_job_info *j = i < snap->njobs && snap->jobs[i]->info.job_id == t->job ? &snap->jobs[i]->info : NULL;
  const char *note = j && j->spec.comment ? strstr(j->spec.comment, "phalanx-session port=") : NULL;
  int rc = 0;
  if (!j || !note) rc = -1, px_api_error(c, 404, "NOT_FOUND", "session %llu: no such session", (unsigned long long)t->job);
  else if (strcmp(j->state, "RUNNING") || !j->nodelist)
    rc = -1, px_api_error(c, 503, "UNAVAILABLE", "session %llu is %s", (unsigned long long)t->job, j->state);
  else {
    t->uid = j->spec.uid;
    t->port = (unsigned)strtoul(note + strlen("phalanx-session port="), NULL, 10);
    snprintf(t->user, sizeof t->user, "%s", j->spec.user ? j->spec.user : "another user");
    snprintf(t->node, sizeof t->node, "%.*s", (int)strcspn(j->nodelist, ",["), j->nodelist);
  }
  /* the node's address, as the agents' peers reach it (MASTER_ADDR) */
  json_error_t e;
  json_t *nodes = rc ? NULL : json_loadb(snap->nodes->text, snap->nodes->len, 0, &e), *n;
  size_t k;
  json_array_foreach(json_object_get(nodes, "nodes"), k, n) {
    const char *name = json_string_value(json_object_get(n, "name"));
    if (!name || strcmp(name, t->node)) continue;
    const char *a = json_string_value(json_object_get(n, "addr"));
    snprintf(t->addr, sizeof t->addr, "%s", a && *a ? a : t->node);
  }
  json_decref(nodes);
  px_snap_release(snap);
  if (!rc && (!t->addr[0] || t->port < 1024 || t->port > 65535))
    rc = -1, px_api_error(c, 503, "UNAVAILABLE", "session %llu: its node or port is unknown", (unsigned long long)t->job);
  return rc;
}

/* ---- who may pass ---- */

static const char *cookie_token(struct px_api_call *c) {
  return MHD_lookup_connection_value(c->conn, MHD_COOKIE_KIND, COOKIE);
}

/* The caller, from the Authorization header, the session cookie, a first
 * visit's token, or the Unix socket's peer. 0, or answered (401). */
static int identify(struct px_api_call *c, const char *query_token) {
  char why[256] = "no credential: send Authorization, or open the URL phalanx session start printed";
  const char *h = MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, "Authorization");
  const char *tok = query_token ? query_token : cookie_token(c);
  char bearer[4200];
  if (!h && tok) snprintf(bearer, sizeof bearer, "Bearer %s", tok), h = bearer;
  if (h && px_auth_header(c->s->auth, h, &c->who, why, sizeof why) == 0) return 0;
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
  struct sockaddr_storage sa;
  socklen_t len = sizeof sa;
  if (!h && ci && getsockname(ci->connect_fd, (struct sockaddr *)&sa, &len) == 0 && sa.ss_family == AF_UNIX &&
      px_auth_peercred(c->s->auth, ci->connect_fd, &c->who) == 0)
    return 0;
  return px_api_error(c, 401, "UNAUTHENTICATED", "%s", why), -1;
}

/* ---- upstream ---- */

int px_session_dial(const char *host, unsigned port) {
  char ps[16];
  snprintf(ps, sizeof ps, "%u", port);
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
  if (getaddrinfo(host, ps, &hints, &res)) return -1;
  int fd = -1;
  for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    struct timeval tv = {UPSTREAM_CONNECT_MS / 1000, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, ai->ai_addr, ai->ai_addrlen)) close(fd), fd = -1;
  }
  freeaddrinfo(res);
  if (fd >= 0) {
    struct timeval tv = {UPSTREAM_ANSWER_MS / 1000, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  return fd;
}

struct head_out {
  FILE *f;
};

static bool hop_by_hop(const char *k) {
  static const char *const names[] = {"Connection", "Keep-Alive", "Transfer-Encoding", "Content-Length", "Upgrade",
                                      "Proxy-Connection", "TE", "Trailer", "Authorization", "Host", "Cookie",
                                      "X-Forwarded-User" /* ours to say, not the client's */};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcasecmp(k, names[i])) return true;
  return false;
}

static enum MHD_Result put_header(void *cls, enum MHD_ValueKind kind, const char *k, const char *v) {
  (void)kind;
  struct head_out *o = cls;
  if (!hop_by_hop(k)) fprintf(o->f, "%s: %s\r\n", k, v ? v : "");
  return MHD_YES;
}

struct query {
  FILE *f;
  bool more;
};

static void put_escaped(FILE *f, const char *s) {
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || strchr("-._~", ch))
      fputc(ch, f);
    else
      fprintf(f, "%%%02X", ch);
  }
}

/* The query again, but our token. */
static enum MHD_Result put_arg(void *cls, enum MHD_ValueKind kind, const char *k, const char *v) {
  (void)kind;
  struct query *q = cls;
  if (!strcmp(k, "phalanx_token")) return MHD_YES;
  fputc(q->more ? '&' : '?', q->f);
  q->more = true;
  put_escaped(q->f, k);
  if (v) fputc('=', q->f), put_escaped(q->f, v);
  return MHD_YES;
}

/* The request as the application gets it: our path, its headers but ours,
 * and its cookies but the session's. */
char *px_session_request(struct px_api_call *c, const char *addr, unsigned port, const char *upgrade, size_t *n) {
  char *text = NULL;
  struct head_out o = {.f = open_memstream(&text, n)};
  if (!o.f) return NULL;
  struct query qs = {.f = o.f};
  fprintf(o.f, "%s %s", c->method, c->url);
  MHD_get_connection_values(c->conn, MHD_GET_ARGUMENT_KIND, put_arg, &qs); /* MHD parsed the query away */
  if (upgrade) /* a WebSocket: HTTP/1.1 and the upgrade asked for (session_ws.c) */
    fprintf(o.f, " HTTP/1.1\r\nHost: %s:%u\r\nConnection: Upgrade\r\nUpgrade: %s\r\nX-Forwarded-User: %s\r\n", addr,
            port, upgrade, c->who.user);
  else
    fprintf(o.f, " HTTP/1.0\r\nHost: %s:%u\r\nConnection: close\r\nX-Forwarded-User: %s\r\n", addr, port, c->who.user);
  MHD_get_connection_values(c->conn, MHD_HEADER_KIND, put_header, &o);
  const char *cookies = MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, "Cookie");
  if (cookies) { /* all but ours: the application's own session cookies pass */
    fputs("Cookie: ", o.f);
    bool first = true;
    for (const char *p = cookies; *p;) {
      while (*p == ' ') p++;
      size_t len = strcspn(p, ";");
      if (len && strncmp(p, COOKIE "=", strlen(COOKIE) + 1))
        fprintf(o.f, "%s%.*s", first ? "" : "; ", (int)len, p), first = false;
      p += len + (p[len] == ';');
    }
    fputs("\r\n", o.f);
  }
  if (c->body_len) fprintf(o.f, "Content-Length: %zu\r\n", c->body_len);
  fputs("\r\n", o.f);
  if (c->body_len) fwrite(c->body, 1, c->body_len, o.f);
  fclose(o.f);
  return text;
}

bool px_session_send_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w, n -= (size_t)w;
  }
  return true;
}

/* The whole answer (HTTP/1.0: until the application closes). */
static char *read_answer(int fd, size_t *n) {
  size_t cap = 65536;
  char *buf = malloc(cap + 1);
  *n = 0;
  while (buf) {
    if (*n == cap) {
      char *b = cap < UPSTREAM_MAX ? realloc(buf, cap * 2 + 1) : NULL;
      if (!b) break;
      buf = b, cap *= 2;
    }
    ssize_t r = recv(fd, buf + *n, cap - *n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      buf[*n] = '\0';
      return r == 0 ? buf : (free(buf), NULL);
    }
    *n += (size_t)r;
  }
  free(buf);
  return NULL;
}

int px_session_answer_parse(char *raw, size_t n, int *status, size_t *body,
                            void (*header)(void *ud, const char *k, const char *v), void *ud) {
  char *end = n >= 4 ? memmem(raw, n, "\r\n\r\n", 4) : NULL;
  if (!end || n < 12 || memcmp(raw, "HTTP/1.", 7)) return -1;
  if (memchr(raw, '\0', (size_t)(end - raw))) return -1; /* a head with a NUL is not HTTP */
  *status = 0;
  for (int i = 9; i < 12; i++) {
    if (raw[i] < '0' || raw[i] > '9') return -1;
    *status = *status * 10 + raw[i] - '0';
  }
  if (raw[8] != ' ' || *status < 100 || *status > 599) return -1;
  *body = (size_t)(end + 4 - raw);
  *end = '\0';
  char *save = NULL;
  strtok_r(raw, "\r\n", &save); /* the status line */
  for (char *l = strtok_r(NULL, "\r\n", &save); l; l = strtok_r(NULL, "\r\n", &save)) {
    char *colon = strchr(l, ':');
    if (!colon || colon == l) continue;
    *colon = '\0';
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    if (!hop_by_hop(l)) header(ud, l, v);
  }
  return 0;
}

static void add_header(void *ud, const char *k, const char *v) { MHD_add_response_header(ud, k, v); }

/* The application's answer as ours: its status, headers but hop-by-hop, body. */
static int answer_from(struct px_api_call *c, char *raw, size_t n) {
  char *copy = malloc(n + 1);
  int status = 0;
  size_t body = 0;
  struct MHD_Response *resp = NULL;
  if (copy) memcpy(copy, raw, n), copy[n] = '\0';
  /* the head is parsed on a copy: its lines are cut up while the body is copied out */
  char *end = copy ? memmem(copy, n, "\r\n\r\n", 4) : NULL;
  if (end) resp = MHD_create_response_from_buffer(n - (size_t)(end + 4 - copy), raw + (end + 4 - copy),
                                                  MHD_RESPMEM_MUST_COPY);
  int rc = resp ? px_session_answer_parse(copy, n, &status, &body, add_header, resp) : -1;
  free(copy);
  if (rc) {
    if (resp) MHD_destroy_response(resp);
    return -1;
  }
  c->status = status;
  c->response = resp;
  return 0;
}

static void proxy(struct px_api_call *c, const struct target *t) {
  size_t n = 0;
  char *req = px_session_request(c, t->addr, t->port, NULL, &n);
  int fd = req ? px_session_dial(t->addr, t->port) : -1;
  bool sent = fd >= 0 && px_session_send_all(fd, req, n);
  free(req);
  char *raw = sent ? read_answer(fd, &n) : NULL;
  if (fd >= 0) close(fd);
  if (!raw || answer_from(c, raw, n))
    px_api_error(c, 502, "BAD_GATEWAY", "session %llu: %s at %s:%u", (unsigned long long)t->job,
                 fd < 0 ? "the application does not answer" : "the application's answer is not HTTP", t->addr, t->port);
  free(raw);
}

/* A first visit with ?phalanx_token=: the cookie, and the URL without it. */
static void set_cookie(struct px_api_call *c, const struct target *t, const char *token) {
  struct MHD_Response *resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
  char cookie[4400], *where = NULL;
  size_t n = 0;
  struct query q = {.f = open_memstream(&where, &n)};
  if (q.f) { /* the same URL, its other arguments kept */
    fputs(c->url, q.f);
    MHD_get_connection_values(c->conn, MHD_GET_ARGUMENT_KIND, put_arg, &q);
    fclose(q.f);
  }
  if (!resp || !where) {
    if (resp) MHD_destroy_response(resp);
    free(where);
    return px_api_error(c, 503, "NOMEM", "out of memory");
  }
  snprintf(cookie, sizeof cookie, COOKIE "=%s; Path=/sessions/%llu/; HttpOnly; SameSite=Strict", token,
           (unsigned long long)t->job);
  MHD_add_response_header(resp, "Set-Cookie", cookie);
  MHD_add_response_header(resp, "Location", where);
  free(where);
  c->status = 303;
  c->response = resp;
}

void px_api_session(struct px_api_call *c) {
  struct target t = {0};
  if (find_target(c, &t)) return;
  const char *query_token = MHD_lookup_connection_value(c->conn, MHD_GET_ARGUMENT_KIND, "phalanx_token");
  if (identify(c, query_token)) return;
  if (c->who.uid != t.uid && c->who.uid != 0 && !(c->who.roles & PX_ROLE_OPERATOR)) {
    px_warn("denied (own-session): user %s uid %u: session %llu", c->who.user, c->who.uid, (unsigned long long)t.job);
    return px_api_error(c, 403, "FORBIDDEN", "session %llu belongs to %s: only its user and operators open it (rule own-job)",
                        (unsigned long long)t.job, t.user);
  }
  if (query_token) return set_cookie(c, &t, query_token);
  const char *up = MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, "Upgrade");
  if (up && *up) return px_session_tunnel(c, t.addr, t.port, up);
  proxy(c, &t);
}
