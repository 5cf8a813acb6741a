/*
 * relay.c - the server's relay of interactive streams (srun --pty, phalanx
 * exec): two upgraded HTTP connections, one from the user's CLI and one from
 * the pty host on the node, spliced byte for byte (docs/interactive.md).
 *
 * A terminal step's creation (api_steps.c) opens a session here: a random
 * session id and two one-time credentials, one handed to the CLI in the
 * step's answer and one sent to the node inside the step's order. Each side
 * then asks GET /v1/terminals/{session} with "Upgrade: phalanx-pty" and its
 * credential in X-Phalanx-Secret; a credential works once, and a session
 * whose two sides are not both here within RELAY_WAIT_S is closed. The
 * agent never listens on a port: both sides dial the server, which is the
 * one address users and nodes can both reach.
 *
 * The relay does not read the stream (util/ptyframe.h is the two ends'
 * business): one thread per session copies each side's bytes to the other
 * until either side closes, then closes both. Sessions live in a list under
 * one mutex, touched only when a side arrives or a session ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/api.h"
#include "server/http/http.h"
#include "util/log.h"

#define RELAY_WAIT_S 60
#define RELAY_SIDES 2 /* 0: the user's CLI, 1: the node's pty host */

struct side {
  bool claimed, here;
  MHD_socket sock;
  MHD_socket wire;              /* the connection's own socket (not sock when TLS) */
  struct MHD_UpgradeResponseHandle *urh;
  char *extra;                  /* bytes MHD read past the request head */
  size_t nextra;
};

struct relay {
  char id[PX_RELAY_ID_LEN + 1];
  char secret[RELAY_SIDES][PX_RELAY_SECRET_LEN + 1];
  struct side side[RELAY_SIDES];
  int64_t deadline_ns;          /* both sides here by then, or closed */
  bool thread_started;
  bool closing;                 /* the thread closes the sides: a late one is closed at once */
  unsigned pending;             /* sides claimed whose upgrade has not arrived yet */
  bool thread_done;             /* unlisted; the last late arrival frees it */
  pthread_cond_t cv;
  struct relay *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cv = PTHREAD_COND_INITIALIZER;
static struct relay *sessions;
static unsigned running;        /* relay threads alive (px_relay_stop waits for 0) */
static bool stopping;

static int hex_random(char *out, size_t nbytes) {
  unsigned char raw[32];
  if (nbytes > sizeof raw || getrandom(raw, nbytes, 0) != (ssize_t)nbytes) return PX_EIO;
  for (size_t i = 0; i < nbytes; i++) snprintf(out + 2 * i, 3, "%02x", raw[i]);
  return 0;
}

static void relay_free(struct relay *r) {
  for (int i = 0; i < RELAY_SIDES; i++) free(r->side[i].extra);
  pthread_cond_destroy(&r->cv);
  free(r);
}

static void unlink_locked(struct relay *r) {
  for (struct relay **p = &sessions; *p; p = &(*p)->next)
    if (*p == r) {
      *p = r->next;
      return;
    }
}

/* Sessions nobody came for (no thread owns them). Caller holds mu. */
static void sweep_locked(int64_t now) {
  for (struct relay **p = &sessions; *p;) {
    struct relay *r = *p;
    if (!r->thread_started && now > r->deadline_ns) {
      *p = r->next;
      relay_free(r);
    } else {
      p = &r->next;
    }
  }
}

int px_relay_open(char *id, char *client_secret, char *node_secret) {
  struct relay *r = calloc(1, sizeof *r);
  if (!r) return PX_ENOMEM;
  if (hex_random(r->id, PX_RELAY_ID_LEN / 2) || hex_random(r->secret[0], PX_RELAY_SECRET_LEN / 2) ||
      hex_random(r->secret[1], PX_RELAY_SECRET_LEN / 2)) {
    free(r);
    return PX_EIO;
  }
  pthread_cond_init(&r->cv, NULL);
  int64_t now = px_now_mono_ns();
  r->deadline_ns = now + RELAY_WAIT_S * 1000000000LL;
  memcpy(id, r->id, sizeof r->id);
  memcpy(client_secret, r->secret[0], sizeof r->secret[0]);
  memcpy(node_secret, r->secret[1], sizeof r->secret[1]);
  pthread_mutex_lock(&mu);
  sweep_locked(now);
  r->next = sessions;
  sessions = r;
  pthread_mutex_unlock(&mu);
  return 0;
}

void px_relay_drop(const char *id) {
  pthread_mutex_lock(&mu);
  for (struct relay *r = sessions; r; r = r->next)
    if (!strcmp(r->id, id) && !r->thread_started) {
      unlink_locked(r);
      relay_free(r);
      break;
    }
  pthread_mutex_unlock(&mu);
}

/* ---- the splice ---- */

static bool put_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) {
      struct pollfd pf = {.fd = fd, .events = POLLOUT};
      if (poll(&pf, 1, 30000) <= 0) return false; /* a peer that reads nothing for 30 s is gone */
      continue;
    }
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

/* Copies until either side closes. */
static void splice_sides(struct relay *r) {
  struct side *a = &r->side[0], *b = &r->side[1];
  if ((a->nextra && !put_all(b->sock, a->extra, a->nextra)) ||
      (b->nextra && !put_all(a->sock, b->extra, b->nextra)))
    return;
  char buf[16384];
  struct pollfd p[2] = {{.fd = a->sock, .events = POLLIN}, {.fd = b->sock, .events = POLLIN}};
  for (;;) {
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; i++) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = recv(p[i].fd, buf, sizeof buf, 0);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0 || !put_all(p[1 - i].fd, buf, (size_t)got)) return;
    }
  }
}

/* Ends the side's connection itself, not only our end of it: over TLS,
 * libmicrohttpd forwards between sock and the wire, and after our close it
 * may wait for the idle peer's next bytes before closing the wire (a pty
 * host whose command prints nothing never learnt that its user left). A
 * shutdown of the wire ends it at once; the descriptor stays
 * libmicrohttpd's, closed by it after the CLOSE action. */
static void shut_side(struct side *s) {
  shutdown(s->sock, SHUT_RDWR);
  if (s->wire != MHD_INVALID_SOCKET && s->wire != s->sock) shutdown(s->wire, SHUT_RDWR);
}

static void close_side(struct side *s) {
  shut_side(s);
  MHD_upgrade_action(s->urh, MHD_UPGRADE_ACTION_CLOSE);
}

/* Waits for the second side, splices, closes. The session stays listed
 * (so px_relay_stop can reach its sockets) until it is freed here, or by
 * the last late arrival (pending). */
static void *relay_main(void *arg) {
  struct relay *r = arg;
  pthread_mutex_lock(&mu);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  int64_t left = r->deadline_ns - px_now_mono_ns();
  if (left < 0) left = 0;
  until.tv_sec += left / 1000000000LL;
  until.tv_nsec += left % 1000000000LL;
  if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
  while (!(r->side[0].here && r->side[1].here) && !stopping)
    if (pthread_cond_timedwait(&r->cv, &mu, &until) == ETIMEDOUT) break;
  bool both = r->side[0].here && r->side[1].here && !stopping;
  if (!both) r->closing = true;
  pthread_mutex_unlock(&mu);
  if (both) splice_sides(r);
  else px_warn("terminal %s: the other side did not come within %d s", r->id, RELAY_WAIT_S);
  pthread_mutex_lock(&mu);
  r->closing = true;
  for (int i = 0; i < RELAY_SIDES; i++)
    if (r->side[i].here) close_side(&r->side[i]);
  unlink_locked(r);
  r->thread_done = true;
  if (!r->pending) relay_free(r);
  running--;
  pthread_cond_broadcast(&idle_cv);
  pthread_mutex_unlock(&mu);
  return NULL;
}

struct arrival {
  struct relay *r;
  int side;
};

static bool start_thread(struct relay *r) {
  pthread_t t;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&at, 256 * 1024);
  bool ok = pthread_create(&t, &at, relay_main, r) == 0;
  pthread_attr_destroy(&at);
  if (ok) r->thread_started = true, running++;
  return ok;
}

/* MHD hands over the upgraded socket: the side is here. */
static void on_upgrade(void *cls, struct MHD_Connection *c, void *req_cls, const char *extra_in,
                       size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh) {
  (void)req_cls;
  struct arrival *a = cls;
  struct relay *r = a->r;
  struct side *s = &r->side[a->side];
  free(a);
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  pthread_mutex_lock(&mu);
  r->pending--;
  s->sock = sock;
  s->wire = ci ? ci->connect_fd : MHD_INVALID_SOCKET;
  s->urh = urh;
  if (r->closing || (!r->thread_started && !start_thread(r))) { /* too late, or cannot relay */
    close_side(s);
    if (!r->pending && !r->thread_started) unlink_locked(r), relay_free(r);
    else if (!r->pending && r->thread_done) relay_free(r);
    pthread_mutex_unlock(&mu);
    return;
  }
  if (extra_in_size && (s->extra = malloc(extra_in_size))) {
    memcpy(s->extra, extra_in, extra_in_size);
    s->nextra = extra_in_size;
  }
  int fl = fcntl(sock, F_GETFL);
  if (fl >= 0) fcntl(sock, F_SETFL, fl | O_NONBLOCK);
  s->here = true;
  pthread_cond_signal(&r->cv);
  pthread_mutex_unlock(&mu);
}

/* Constant time: a wrong credential takes as long whatever its prefix. */
static bool secret_eq(const char *want, const char *got) {
  size_t n = strlen(want);
  if (strlen(got) != n) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < n; i++) diff |= (unsigned char)(want[i] ^ got[i]);
  return diff == 0;
}

/* Which side got is the credential of (claiming it), or an error answered. */
static int claim(struct px_api_call *c, const char *got, struct relay **out) {
  pthread_mutex_lock(&mu);
  sweep_locked(px_now_mono_ns());
  struct relay *r = sessions;
  while (r && strcmp(r->id, c->arg)) r = r->next;
  int side = -1;
  for (int i = 0; r && i < RELAY_SIDES && side < 0; i++)
    if (secret_eq(r->secret[i], got)) side = i;
  bool reused = side >= 0 && r->side[side].claimed;
  if (side >= 0 && !reused) r->side[side].claimed = true, r->pending++;
  pthread_mutex_unlock(&mu);
  if (!r) {
    px_api_error(c, 404, "NOT_FOUND", "terminal %.64s: no such session (ended, or not claimed within %d s)", c->arg,
                 RELAY_WAIT_S);
    return -1;
  }
  if (side < 0 || reused) {
    px_warn("denied (terminal-credential): terminal %s: %s credential", r->id, reused ? "a used" : "a wrong");
    px_api_error(c, 403, "FORBIDDEN", "X-Phalanx-Secret: %s for terminal %.64s",
                 reused ? "this one-time credential was already used" : "not the session's credential", c->arg);
    return -1;
  }
  *out = r;
  return side;
}

void px_api_terminal(struct px_api_call *c) {
  const char *up = MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, "Upgrade");
  const char *got = MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, "X-Phalanx-Secret");
  if (!up || strcasecmp(up, PX_RELAY_PROTOCOL))
    return px_api_error(c, 400, "INVALID", "Upgrade: must be %s (this endpoint is a stream, not a document)",
                        PX_RELAY_PROTOCOL);
  if (!got || !*got) return px_api_error(c, 401, "UNAUTHENTICATED", "X-Phalanx-Secret: the session's credential is required");
  struct relay *r = NULL;
  int side = claim(c, got, &r);
  if (side < 0) return;
  struct arrival *a = malloc(sizeof *a);
  struct MHD_Response *resp = a ? MHD_create_response_for_upgrade(on_upgrade, a) : NULL;
  if (!resp) {
    free(a);
    return px_api_error(c, 503, "NOMEM", "cannot upgrade the connection");
  }
  *a = (struct arrival){.r = r, .side = side};
  MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, PX_RELAY_PROTOCOL);
  c->status = MHD_HTTP_SWITCHING_PROTOCOLS;
  c->response = resp;
}

void px_relay_stop(void) {
  pthread_mutex_lock(&mu);
  stopping = true;
  for (struct relay *r = sessions; r; r = r->next) {
    pthread_cond_signal(&r->cv);
    for (int i = 0; i < RELAY_SIDES; i++)
      if (r->side[i].here) shut_side(&r->side[i]); /* the splice sees the end */
  }
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  while (running > 0)
    if (pthread_cond_timedwait(&idle_cv, &mu, &until) == ETIMEDOUT) break;
  while (sessions && !running) { /* nobody came for these */
    struct relay *r = sessions;
    sessions = r->next;
    relay_free(r);
  }
  stopping = false;
  pthread_mutex_unlock(&mu);
}
