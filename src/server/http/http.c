/*
 * http.c - the HTTP front (libmicrohttpd) on a Unix socket for local clients
 * and on TCP for agents and remote clients.
 *
 * The Unix socket has a thread per connection (poll(), not select(): with
 * thousands of agent sockets open, a local client's descriptor is above
 * FD_SETSIZE). The TCP listener is event-driven: a few threads (epoll), and
 * an agent's long poll parks its connection on the node's outbox
 * (MHD_suspend_connection) until an order, its deadline or shutdown resumes
 * it. At 10,000 nodes a thread per connection meant 10,000 threads idling in
 * long polls, past this host's descriptor and thread limits
 * (docs/operations.md, Scale). A pool thread that waits for the main thread
 * (a report, a submit) holds up only the connections it serves meanwhile.
 *
 * A request goes through fixed phases: body (limit PX_SERVER_MAX_BODY; a
 * larger Content-Length is refused before reading), authentication
 * (SO_PEERCRED on the Unix socket, Authorization on TCP; 401 without),
 * per-user rate limit (429 with Retry-After), route, then the endpoint
 * (api.c). Every answer is JSON; errors are
 * {"error":{"code":..,"message":..,"field":..}} with a stable code.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/api.h"
#include "server/http/http.h"
#include "server/http/slurmrestd.h"
#include "server/http/tls.h"
#include "server/journal/journal.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"
#include "util/log.h"

char *px_error_json(const char *code, const char *message, const char *field) {
  json_t *e = json_pack("{ss ss}", "code", code, "message", message ? message : "");
  if (e && field && *field) json_object_set_new(e, "field", json_string(field));
  json_t *o = e ? json_pack("{so}", "error", e) : NULL;
  char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  return s;
}

/* The one table from error codes to the API's answers: HTTP status and
 * the error's code. A limit is a rule the request breaks (403, as Slurm
 * refuses a job over its association's limits), not a rate (429 is the rate
 * limiter's own answer, ratelimit.c). Codes not listed: 400 INVALID. */
#define PX_HTTP_ERRORS(X)              \
  X(PX_EINVAL, 400, "INVALID")         \
  X(PX_EPARSE, 400, "PARSE")           \
  X(PX_ERANGE, 400, "RANGE")           \
  X(PX_EAUTH, 401, "UNAUTHENTICATED")  \
  X(PX_EPERM, 403, "FORBIDDEN")        \
  X(PX_ELIMIT, 403, "LIMIT")           \
  X(PX_ENOENT, 404, "NOT_FOUND")       \
  X(PX_ESTATE, 409, "STATE")           \
  X(PX_EEXIST, 409, "EXISTS")          \
  X(PX_ENOMEM, 503, "UNAVAILABLE")

static const struct {
  int err, status;
  const char *code;
} http_errors[] = {
#define PX_HTTP_ERROR_ROW(err, status, code) {err, status, code},
    PX_HTTP_ERRORS(PX_HTTP_ERROR_ROW)
#undef PX_HTTP_ERROR_ROW
};

static int http_row(int err) {
  for (size_t i = 0; i < sizeof http_errors / sizeof http_errors[0]; i++)
    if (http_errors[i].err == err) return (int)i;
  return 0; /* INVALID */
}

const char *px_error_code(int err) { return http_errors[http_row(err)].code; }

int px_error_http_status(int err) { return http_errors[http_row(err)].status; }

char *px_error_diag(const char *code, const struct px_diag *d) {
  char field[128] = "";
  const char *colon = strstr(d->msg, ": ");
  if (colon && (size_t)(colon - d->msg) < sizeof field && !memchr(d->msg, ' ', colon - d->msg))
    snprintf(field, sizeof field, "%.*s", (int)(colon - d->msg), d->msg);
  return px_error_json(code, d->msg[0] ? d->msg : "invalid request", field);
}

void px_req_error(struct px_req *r, int status, const char *code, const char *fmt, ...) {
  struct px_diag d = {.pos = -1};
  va_list ap;
  va_start(ap, fmt);
  px_diag_vformat(&d, fmt, ap);
  va_end(ap);
  px_req_answer(r, status, px_error_diag(code, &d));
}

/* ---- per-connection request state ---- */

struct conn {
  char *body;
  size_t len, cap;
  bool too_large;
  int64_t t0_ns;
  /* a parked long poll (api.h): answered from the outbox when resumed */
  bool parked;
  bool park_snap;               /* a watch parked on the snapshots */
  uint32_t node;
  uint64_t after;
};

/* With --ha every answer carries the controller's term (agents refuse
 * orders of a term lower than one they have seen), and a standby's 503 the
 * leader's address, where clients retry (docs/operations.md). */
static void ha_headers(struct px_server *s, struct MHD_Response *resp, int status) {
  if (!s->ha) return;
  char term[24], leader[256];
  snprintf(term, sizeof term, "%llu", (unsigned long long)px_ha_term(s));
  MHD_add_response_header(resp, "X-Phalanx-Term", term);
  if (status != 503) return;
  MHD_add_response_header(resp, "Retry-After", "1");
  px_ha_leader_addr(s, leader, sizeof leader);
  if (leader[0]) MHD_add_response_header(resp, "X-Phalanx-Leader", leader);
}

static enum MHD_Result send_text(struct px_server *s, struct MHD_Connection *c, int status,
                                 char *text, const char *ctype) {
  if (!text) {
    status = 503;
    text = px_error_json("UNAVAILABLE", "out of memory", NULL);
    if (!text) return MHD_NO;
  }
  struct MHD_Response *resp =
      MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
  if (!resp) {
    free(text);
    return MHD_NO;
  }
  MHD_add_response_header(resp, "Content-Type", ctype);
  if (status == 401) MHD_add_response_header(resp, "WWW-Authenticate", "Bearer, MUNGE");
  if (status == 429) MHD_add_response_header(resp, "Retry-After", "1");
  ha_headers(s, resp, status);
  enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, resp);
  MHD_destroy_response(resp);
  return ret;
}

/* A body produced block by block from a snapshot (no copy of the whole). */
static enum MHD_Result send_stream(struct MHD_Connection *c, struct px_api_call *call) {
  struct MHD_Response *resp = MHD_create_response_from_callback(
      MHD_SIZE_UNKNOWN, 256 * 1024, call->stream_fn, call->stream_cls, call->stream_free);
  if (!resp) {
    call->stream_free(call->stream_cls);
    return MHD_NO;
  }
  MHD_add_response_header(resp, "Content-Type", "application/json");
  enum MHD_Result ret = MHD_queue_response(c, (unsigned)call->status, resp);
  MHD_destroy_response(resp);
  return ret;
}

/* An answer the endpoint built with its own headers (the dashboard's files). */
static enum MHD_Result send_response(struct MHD_Connection *c, struct px_api_call *call) {
  enum MHD_Result ret = MHD_queue_response(c, (unsigned)call->status, call->response);
  MHD_destroy_response(call->response);
  return ret;
}

static bool body_append(struct conn *k, const char *data, size_t n, size_t limit) {
  if (k->too_large || k->len + n > limit) {
    k->too_large = true;
    return true; /* keep reading (discarding) so that we can answer 413 */
  }
  if (k->len + n + 1 > k->cap) {
    size_t cap = (k->cap ? k->cap * 2 : 4096) + n;
    if (cap > limit + 1) cap = limit + 1;
    char *p = realloc(k->body, cap);
    if (!p) return false;
    k->body = p;
    k->cap = cap;
  }
  memcpy(k->body + k->len, data, n);
  k->len += n;
  k->body[k->len] = '\0';
  return true;
}

static int authenticate_native(struct px_server *s, struct MHD_Connection *c, bool is_unix,
                               bool tls, struct px_ident *who, char *why, size_t whylen);

/* Authentication for the listener this connection came in on. */
static int authenticate(struct px_server *s, struct MHD_Connection *c, bool is_unix, bool tls,
                        struct px_ident *who, char *why, size_t whylen) {
  /* slurmrestd's headers (slurmrestd.h): a token instead of Authorization,
   * and the user to act as, on either listener */
  const char *sr_name = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-SLURM-USER-NAME");
  const char *sr_token = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-SLURM-USER-TOKEN");
  if (sr_name || sr_token) {
    memset(who, 0, sizeof *who);
    if (sr_token && !is_unix) { /* a bearer credential: the same transport rule (tls.h) */
      const union MHD_ConnectionInfo *peer =
          MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
      if (!px_tls_credential_ok(tls, peer ? peer->client_addr : NULL, why, whylen)) return PX_EAUTH;
    }
    int rc = sr_token ? 0 : authenticate_native(s, c, is_unix, tls, who, why, whylen);
    return rc ? rc : px_sr_auth_headers(s->auth, sr_name, sr_token, who, why, whylen);
  }
  return authenticate_native(s, c, is_unix, tls, who, why, whylen);
}

static int authenticate_native(struct px_server *s, struct MHD_Connection *c, bool is_unix,
                               bool tls, struct px_ident *who, char *why, size_t whylen) {
  if (is_unix) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci && px_auth_peercred(s->auth, ci->connect_fd, who) == 0) return 0;
    snprintf(why, whylen, "cannot identify the peer of the Unix socket");
    return PX_EAUTH;
  }
  const union MHD_ConnectionInfo *peer =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!px_tls_credential_ok(tls, peer ? peer->client_addr : NULL, why, whylen)) return PX_EAUTH;
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
  return px_auth_header(s->auth, h, who, why, whylen);
}

/*
 * Readers never slow scheduling. A connection thread that serves a listing
 * (or another snapshot read) drops to SCHED_BATCH at nice +10 for the rest of
 * its life (one thread per connection, so per client); lowering needs no
 * privilege, and a thread never raises itself back. That is enough for a
 * few readers, not for a storm: CFS shares a core by weight, and 200 readers
 * at nice +10 (110 each) outweigh the main loop (1,024) twenty times over;
 * with 200 clients listing 1,000 jobs in a loop (bench_server reads) the
 * loop's cycles took 2.4 times their quiet wall time (p50), 6 to 9 times at
 * p99, most of the readers' CPU being the kernel copying their bodies into
 * the sockets. So while more readers are at work than twice the cores (a
 * storm), a reader's thread drops further, to SCHED_IDLE (weight 3): the
 * readers then run on whatever CPU the main loop leaves, and the cycles
 * keep their quiet latency while listings go on at most of their former
 * rate. Not always: SCHED_IDLE threads get almost nothing while other work
 * keeps every core busy, and a lone `squeue` on a loaded host must still
 * answer.
 */
static _Thread_local bool lowered, idled;
static atomic_int readers_at_work;
static int storm_readers = 4; /* 2 x cores, set by px_http_start */

static void reader_priority(bool storm) {
  struct sched_param sp = {0};
  if (!lowered) {
    lowered = true;
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
  }
  if (storm && !idled) idled = pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) == 0;
}

/* A reader's streamed body: the reader is at work until it is sent. */
struct reader_stream {
  MHD_ContentReaderCallback fn;
  MHD_ContentReaderFreeCallback free_fn;
  void *cls;
};

static ssize_t reader_stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
  struct reader_stream *t = cls;
  return t->fn(t->cls, pos, buf, max);
}

static void reader_stream_free(void *cls) {
  struct reader_stream *t = cls;
  atomic_fetch_sub(&readers_at_work, 1);
  t->free_fn(t->cls);
  free(t);
}

/* A reader route on a connection's own thread: lowered (idled in a storm),
 * and counted at work until its answer is built or its stream is sent. */
static void serve_reader(const struct px_route *route, struct px_api_call *call) {
  reader_priority(atomic_fetch_add(&readers_at_work, 1) + 1 > storm_readers);
  route->fn(call);
  struct reader_stream *t = call->stream_fn ? malloc(sizeof *t) : NULL;
  if (!t) {
    atomic_fetch_sub(&readers_at_work, 1);
    return;
  }
  *t = (struct reader_stream){call->stream_fn, call->stream_free, call->stream_cls};
  call->stream_fn = reader_stream_read;
  call->stream_free = reader_stream_free;
  call->stream_cls = t;
}

bool px_http_thread_lowered(void) { return lowered; }

struct listener {
  struct px_server *s;
  bool is_unix;
  bool pooled;               /* event-driven: polls park, threads are shared */
  bool tls;                  /* HTTPS (tls.h); plain TCP takes credentials from loopback only */
};

static void resume_parked(void *ctx) { MHD_resume_connection(ctx); }

/* Suspends the connection first, so that a wake-up from another thread
 * always finds it suspended; resumes it at once when orders were waiting. */
static enum MHD_Result park(struct px_server *s, struct MHD_Connection *c, struct conn *k,
                            const struct px_api_call *call) {
  k->parked = true;
  k->park_snap = call->park_snap;
  k->node = call->park_node;
  k->after = call->park_after;
  MHD_suspend_connection(c);
  bool ready;
  if (k->park_snap) {
    atomic_fetch_add(&s->snap_watchers, 1); /* changes are published promptly meanwhile */
    px_queue_poke(&s->queue);
    ready = px_snap_park(&s->snaps, k->after, call->park_deadline_ns, resume_parked, c);
  } else {
    ready = px_outbox_park(s->outbox, k->node, k->after, call->park_deadline_ns, resume_parked, c);
  }
  if (ready) MHD_resume_connection(c);
  return MHD_YES;
}

static enum MHD_Result send_text(struct px_server *s, struct MHD_Connection *c, int status,
                                 char *text, const char *ctype);

/* A resumed long poll: what the node's outbox holds now (possibly nothing). */
static enum MHD_Result unpark(struct px_server *s, struct MHD_Connection *c, struct conn *k) {
  k->parked = false;
  if (!px_ha_leading(s)) /* deposed while it waited: no order leaves (ha.c) */
    return send_text(s, c, 503, px_error_json("UNAVAILABLE", "this controller no longer leads", NULL),
                     "application/json");
  char *answer = px_outbox_take(s->outbox, k->node, k->after);
  double secs = (double)(px_now_mono_ns() - k->t0_ns) / 1e9;
  px_metrics_request(s->metrics, "/v1/agent/work", answer ? 200 : 503, secs);
  return send_text(s, c, 200, answer, "application/json");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls) {
  struct listener *l = cls;
  struct px_server *s = l->s;
  struct conn *k = *con_cls;
  bool resumed = false;
  if (k && k->parked && !k->park_snap) return unpark(s, c, k);
  if (k && k->parked) { /* a watch: its handler runs again and answers from the snapshot */
    k->parked = k->park_snap = false;
    atomic_fetch_sub(&s->snap_watchers, 1);
    resumed = true;
  }
  if (!k) { /* headers only: refuse an announced oversized body before reading it */
    if (!(k = calloc(1, sizeof *k))) return MHD_NO;
    k->t0_ns = px_now_mono_ns();
    *con_cls = k;
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > s->opts.max_body_bytes) k->too_large = true;
    else return MHD_YES;
  }
  if (*upload_size) {
    if (!body_append(k, upload, *upload_size, s->opts.max_body_bytes)) return MHD_NO;
    *upload_size = 0;
    return MHD_YES;
  }
  struct px_api_call call = {.s = s, .conn = c, .method = method, .url = url,
                             .body = k->body ? k->body : "", .body_len = k->len, .can_park = l->pooled,
                             .resumed = resumed, .t0_ns = k->t0_ns};
  const struct px_route *route = px_api_route(method, url, &call);
  const char *endpoint = route ? route->pattern : "other";
  if (k->too_large) {
    call.status = 413;
    call.answer = px_error_json("TOO_LARGE", "request body over the size limit", "body");
  } else if (route && !route->open && !px_ha_leading(s)) {
    call.status = 503;
    call.answer = px_error_json("NOT_LEADER",
                                "this controller is a standby: ask the leader (X-Phalanx-Leader)", NULL);
  } else if (!route) {
    call.status = call.method_mismatch ? 405 : 404;
    call.answer = px_error_json(call.method_mismatch ? "METHOD_NOT_ALLOWED" : "NOT_FOUND",
                                call.method_mismatch ? "method not allowed here" : "no such endpoint",
                                NULL);
  } else {
    char why[256] = "";
    int rc = route->open ? 0 : authenticate(s, c, l->is_unix, l->tls, &call.who, why, sizeof why);
    if (rc) {
      call.status = 401;
      call.answer = px_error_json("UNAUTHENTICATED", why, NULL);
    } else if (!resumed && !route->open && !(call.who.roles & PX_ROLE_ADMIN) &&
               !px_ratelimit_take(s->rl, call.who.uid, (double)px_now_mono_ns() / 1e9)) {
      call.status = 429;
      call.answer = px_error_json("RATE_LIMITED", "too many requests from this user; retry later",
                                  NULL);
    } else {
      if (route->reader && !l->pooled) serve_reader(route, &call); /* a pool thread serves everyone */
      else route->fn(&call);
      if (call.park) return park(s, c, k, &call);
    }
  }
  double secs = (double)(px_now_mono_ns() - k->t0_ns) / 1e9;
  px_metrics_request(s->metrics, endpoint, call.status, secs);
  px_sdiag_rpc(s->sdiag, method, endpoint, call.who.user, call.who.uid, secs);
  px_sr_wrap_error(&call, url); /* slurmrestd's paths answer errors in its shape */
  if (call.stream_fn) return send_stream(c, &call);
  if (call.response) return send_response(c, &call);
  return send_text(s, c, call.status, call.answer, call.ctype ? call.ctype : "application/json");
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe) {
  struct conn *k = *con_cls;
  if (!k) return;
  free(k->body);
  free(k);
  *con_cls = NULL;
}

/* ---- listeners ---- */

static int unix_listener(const char *path, struct px_diag *d) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof sa.sun_path)
    return px_diag_set(d, PX_EINVAL, -1, "socket path too long: %s", path);
  memcpy(sa.sun_path, path, strlen(path) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return px_diag_set(d, PX_EIO, -1, "socket: %s", strerror(errno));
  unlink(path); /* a stale socket of a previous run */
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) || chmod(path, 0666) || listen(fd, 1024)) {
    px_diag_set(d, PX_EIO, -1, "cannot listen on %s: %s", path, strerror(errno));
    close(fd);
    return PX_EIO;
  }
  return fd; /* everyone may connect: the kernel tells us who they are */
}

/* A TCP socket bound and listening at hostport, once tls.h's rules allow it. */
static int tcp_listener(const char *hostport, bool tls, bool allow_plain, struct px_diag *d) {
  char host[256];
  const char *colon = strrchr(hostport, ':');
  if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof host)
    return px_diag_set(d, PX_EINVAL, -1, "listen: expected HOST:PORT, got '%s'", hostport);
  snprintf(host, sizeof host, "%.*s", (int)(colon - hostport), hostport);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
  struct addrinfo *ai = NULL;
  if (getaddrinfo(host, colon + 1, &hints, &ai) || !ai)
    return px_diag_set(d, PX_EINVAL, -1, "listen: cannot resolve '%s'", hostport);
  int rc = px_tls_check_listen(hostport, ai->ai_addr, tls, allow_plain, d);
  if (rc) {
    freeaddrinfo(ai);
    return rc;
  }
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1024)) {
    px_diag_set(d, PX_EIO, -1, "cannot listen on %s: %s", hostport, strerror(errno));
    if (fd >= 0) close(fd);
    freeaddrinfo(ai);
    return PX_EIO;
  }
  freeaddrinfo(ai);
  return fd;
}

static struct listener unix_l, tcp_l;

static struct MHD_Daemon *start_daemon(struct listener *l, int fd) {
  return MHD_start_daemon(
      MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_ALLOW_UPGRADE, 0, NULL,
      NULL, on_request, l, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_NOTIFY_COMPLETED, on_done,
      NULL, MHD_OPTION_CONNECTION_LIMIT, 4096u, MHD_OPTION_CONNECTION_TIMEOUT, 120u,
      MHD_OPTION_THREAD_STACK_SIZE, (size_t)(256 * 1024), MHD_OPTION_END);
}

/* Each connection's buffer for its request line, headers and upload chunks
 * (bodies are copied out as they come): libmicrohttpd's default, 32 KiB,
 * cleared at each request, was 320 MB resident and most of the idle CPU with
 * 10,000 agents' polls open. Headers (a bearer token is ~300 bytes) fit. */
#define PX_HTTP_CONN_POOL_BYTES (8 * 1024)

/* Threads of the TCP listener: enough that a few waiting on the main thread
 * leave others serving, and more than the cores for a reason of
 * libmicrohttpd's: each thread of the pool keeps its own list of suspended
 * connections (the agents' parked polls) and walks all of it whenever one
 * of them is resumed (an order), so the walk's cost per order is the parked
 * polls over the threads. With 4 threads at 10,000 nodes that walk was 10 %
 * of the server's CPU during a burst; 16 threads cost little more than
 * their stacks (they sleep in epoll). */
static unsigned pool_threads(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN) * 8;
  return n < 16 ? 16u : n > 64 ? 64u : (unsigned)n;
}

/* Connections the TCP listener may hold: one per agent's poll and one per
 * agent's other requests, within the descriptors this process may open
 * (the soft limit is raised to the hard one). */
static unsigned tcp_connection_limit(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 4096u;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  return rl.rlim_cur > 4096 + 512 ? (unsigned)(rl.rlim_cur - 512) : 4096u;
}

/* The TCP listener's certificate and key, kept until the daemon stops. */
static struct px_tls_files tls_files;

static struct MHD_Daemon *start_pooled(struct listener *l, int fd) {
  struct MHD_OptionItem tls_opts[] = {{MHD_OPTION_HTTPS_MEM_KEY, 0, tls_files.key},
                                      {MHD_OPTION_HTTPS_MEM_CERT, 0, tls_files.cert},
                                      {MHD_OPTION_END, 0, NULL}};
  return MHD_start_daemon(
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE |
          (l->tls ? MHD_USE_TLS : 0),
      0, NULL, NULL, on_request, l, MHD_OPTION_ARRAY, l->tls ? tls_opts : tls_opts + 2,
      MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL,
      MHD_OPTION_THREAD_POOL_SIZE, pool_threads(), MHD_OPTION_CONNECTION_LIMIT,
      tcp_connection_limit(), MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_THREAD_STACK_SIZE,
      (size_t)(256 * 1024), MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)PX_HTTP_CONN_POOL_BYTES,
      MHD_OPTION_END);
}

/* Parked polls past their deadline are answered (empty) about once a second. */
static pthread_t sweeper;
static bool sweeper_started;
static pthread_mutex_t sweep_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sweep_cv = PTHREAD_COND_INITIALIZER;
static bool sweep_stop;

static void *sweep_main(void *arg) {
  struct px_server *s = arg;
  pthread_mutex_lock(&sweep_mu);
  while (!sweep_stop) {
    int64_t at = px_now_real_ns() + 500000000LL;
    struct timespec ts = {at / 1000000000, at % 1000000000};
    pthread_cond_timedwait(&sweep_cv, &sweep_mu, &ts);
    pthread_mutex_unlock(&sweep_mu);
    px_outbox_expire(s->outbox, px_now_real_ns());
    px_snap_expire(&s->snaps, px_now_real_ns());
    pthread_mutex_lock(&sweep_mu);
  }
  pthread_mutex_unlock(&sweep_mu);
  return NULL;
}

int px_http_start(struct px_server *s, struct px_diag *d) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  storm_readers = ncpu > 1 ? 2 * (int)ncpu : 2;
  unix_l = (struct listener){s, true, false, false};
  tcp_l = (struct listener){s, false, true, false};
  int fd = unix_listener(s->opts.socket_path, d);
  if (fd < 0) return fd;
  if (!(s->unix_d = start_daemon(&unix_l, fd))) {
    close(fd);
    return px_diag_set(d, PX_EIO, -1, "cannot start the HTTP server on %s", s->opts.socket_path);
  }
  if (!s->opts.listen) return 0;
  int rc = px_tls_load(&s->conf->phalanx, &tls_files, d);
  if (rc) return rc;
  tcp_l.tls = tls_files.cert != NULL;
  if (tcp_l.tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
    return px_diag_set(d, PX_EUNSUPPORTED, -1, "TLSCertFile: this libmicrohttpd has no TLS");
  if ((fd = tcp_listener(s->opts.listen, tcp_l.tls, s->conf->phalanx.allow_plain_tcp, d)) < 0)
    return fd;
  if (!(s->tcp_d = start_pooled(&tcp_l, fd))) {
    close(fd);
    return px_diag_set(d, PX_EIO, -1, "cannot start the %s server on %s (%s)",
                       tcp_l.tls ? "HTTPS" : "HTTP", s->opts.listen,
                       tcp_l.tls ? "is the key the certificate's, both PEM?" : "see the log");
  }
  px_info("listening on %s (%s)", s->opts.listen, tcp_l.tls ? "TLS" : "plain TCP");
  sweep_stop = false;
  sweeper_started = pthread_create(&sweeper, NULL, sweep_main, s) == 0;
  return 0;
}

void px_http_stop(struct px_server *s) {
  if (sweeper_started) {
    pthread_mutex_lock(&sweep_mu);
    sweep_stop = true;
    pthread_cond_signal(&sweep_cv);
    pthread_mutex_unlock(&sweep_mu);
    pthread_join(sweeper, NULL);
    sweeper_started = false;
  }
  if (s->outbox) px_outbox_stop(s->outbox); /* parked polls resume before the daemon stops */
  px_relay_stop(); /* upgraded connections are ours to close (relay.c, session_ws.c) */
  px_session_stop();
  if (s->unix_d) MHD_stop_daemon(s->unix_d);
  if (s->tcp_d) MHD_stop_daemon(s->tcp_d);
  s->unix_d = s->tcp_d = NULL;
  px_tls_fini(&tls_files);
  if (s->opts.socket_path) unlink(s->opts.socket_path);
}
