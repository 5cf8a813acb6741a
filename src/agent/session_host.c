/*
 * session_host.c - `phalanxd session-host --port P --idle-s N -- CMD ARGS`:
 * the task of a web session's job (phalanx session start;
 * docs/interactive.md). It runs as the job's user in the job's cgroup, like
 * the batch script it replaces.
 *
 * It listens on P, the port the server's reverse proxy dials
 * (server/http/api_session.c), starts CMD with PORT set to a free loopback
 * port of its own choosing (and PHALANX_SESSION_BASE=/sessions/<job>/, the
 * path the application is served under), and passes each connection on to
 * it, byte for byte. Passing the bytes is how it knows the session is used:
 * when no connection is open and none carried a byte for N seconds, it
 * stops CMD (SIGTERM to its process group, SIGKILL 5 s later) and ends, so
 * the job ends and its GPUs go back. CMD's own end ends it with CMD's
 * status; so does the job's (SIGTERM from a cancel or the time limit,
 * passed on to CMD).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/pty.h"

#define MAX_PAIRS 64
#define APP_WAIT_MS 10000
#define STOP_GRACE_MS 5000

struct pair {
  int client, app;
};

struct host {
  int listener, pidfd;
  pid_t app_pid;
  uint16_t app_port;
  struct pair p[MAX_PAIRS];
  int npairs;
  int64_t last_ms;
};

static volatile sig_atomic_t stop_sig;
static void on_stop(int sig) { stop_sig = sig; }

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int listen_on(uint16_t port, bool loopback) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
                          .sin_addr.s_addr = htonl(loopback ? INADDR_LOOPBACK : INADDR_ANY)};
  if (fd < 0) return -1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 64)) return close(fd), -1;
  return fd;
}

/* A free loopback port for the application (free when asked: it binds it next). */
static uint16_t free_port(void) {
  int fd = listen_on(0, true);
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  uint16_t port = fd >= 0 && !getsockname(fd, (struct sockaddr *)&a, &len) ? ntohs(a.sin_port) : 0;
  if (fd >= 0) close(fd);
  return port;
}

static int start_app(struct host *h, char **argv) {
  char port[16], base[64];
  snprintf(port, sizeof port, "%u", h->app_port);
  const char *job = getenv("SLURM_JOB_ID");
  snprintf(base, sizeof base, "/sessions/%s/", job ? job : "0");
  setenv("PORT", port, 1);
  setenv("PHALANX_SESSION_PORT", port, 1);
  setenv("PHALANX_SESSION_BASE", base, 1);
  h->app_pid = fork();
  if (h->app_pid < 0) return -1;
  if (h->app_pid == 0) {
    setpgid(0, 0); /* its own group: the whole application is stopped at once */
    signal(SIGTERM, SIG_DFL), signal(SIGPIPE, SIG_DFL);
    execvp(argv[0], argv);
    fprintf(stderr, "session-host: %s: %s\n", argv[0], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  setpgid(h->app_pid, h->app_pid);
  h->pidfd = (int)syscall(SYS_pidfd_open, h->app_pid, 0);
  return 0;
}

/* The application's end of a new connection (it may still be starting). */
static int dial_app(const struct host *h) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(h->app_port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  for (int64_t until = now_ms() + APP_WAIT_MS; !stop_sig;) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (!connect(fd, (struct sockaddr *)&a, sizeof a)) return fd;
    close(fd);
    if (now_ms() > until) return -1;
    struct timespec t = {0, 50 * 1000000L};
    nanosleep(&t, NULL);
  }
  return -1;
}

static void drop_pair(struct host *h, int i) {
  close(h->p[i].client), close(h->p[i].app);
  h->p[i] = h->p[--h->npairs];
}

static void accept_one(struct host *h) {
  int c = accept4(h->listener, NULL, NULL, SOCK_CLOEXEC);
  if (c < 0) return;
  int a = h->npairs < MAX_PAIRS ? dial_app(h) : -1;
  if (a < 0) { /* the proxy answers 502; the browser retries */
    close(c);
    return;
  }
  h->p[h->npairs++] = (struct pair){c, a};
  h->last_ms = now_ms();
}

/* One side's bytes to the other; false when that pair is done. */
static bool pass(int from, int to) {
  char buf[65536];
  ssize_t r = recv(from, buf, sizeof buf, 0);
  if (r < 0 && errno == EINTR) return true;
  if (r <= 0) return false;
  for (ssize_t off = 0, w; off < r; off += w)
    if ((w = send(to, buf + off, (size_t)(r - off), MSG_NOSIGNAL)) <= 0) return false;
  return true;
}

static int app_status(struct host *h, int grace_ms, int sig) {
  if (sig) kill(-h->app_pid, sig);
  struct pollfd p = {.fd = h->pidfd, .events = POLLIN};
  if (sig && (h->pidfd < 0 || poll(&p, 1, grace_ms) <= 0)) kill(-h->app_pid, SIGKILL);
  int ws = 0;
  while (waitpid(h->app_pid, &ws, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static int serve(struct host *h, int idle_s) {
  struct pollfd p[2 + 2 * MAX_PAIRS];
  for (;;) {
    if (stop_sig) return app_status(h, STOP_GRACE_MS, SIGTERM);
    int64_t idle_left = (int64_t)idle_s * 1000 - (now_ms() - h->last_ms);
    if (idle_s > 0 && !h->npairs && idle_left <= 0) {
      fprintf(stderr, "session-host: no use for %d s: the session ends\n", idle_s);
      app_status(h, STOP_GRACE_MS, SIGTERM);
      return 0;
    }
    p[0] = (struct pollfd){.fd = h->listener, .events = POLLIN};
    p[1] = (struct pollfd){.fd = h->pidfd, .events = POLLIN};
    for (int i = 0; i < h->npairs; i++) {
      p[2 + 2 * i] = (struct pollfd){.fd = h->p[i].client, .events = POLLIN};
      p[3 + 2 * i] = (struct pollfd){.fd = h->p[i].app, .events = POLLIN};
    }
    int n = 2 + 2 * h->npairs;
    int wait = idle_s > 0 && !h->npairs ? (int)(idle_left < 1000 ? idle_left : 1000) : 1000;
    if (poll(p, (nfds_t)n, wait) < 0 && errno != EINTR) return app_status(h, STOP_GRACE_MS, SIGTERM);
    if (p[1].revents & POLLIN) return app_status(h, 0, 0);
    for (int i = h->npairs - 1; i >= 0; i--) {
      short rc = p[2 + 2 * i].revents, ra = p[3 + 2 * i].revents;
      if (!rc && !ra) continue;
      h->last_ms = now_ms();
      if ((rc && !pass(h->p[i].client, h->p[i].app)) || (ra && !pass(h->p[i].app, h->p[i].client))) drop_pair(h, i);
    }
    if (p[0].revents & POLLIN) accept_one(h);
  }
}

int px_cmd_session_host(int argc, char **argv) {
  long port = 0, idle_s = 0;
  int i = 1;
  for (; i + 1 < argc && strcmp(argv[i], "--"); i += 2) {
    if (!strcmp(argv[i], "--port")) port = strtol(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--idle-s")) idle_s = strtol(argv[i + 1], NULL, 10);
    else break;
  }
  if (i < argc && !strcmp(argv[i], "--")) i++;
  if (i >= argc || port < 1024 || port > 65535 || idle_s < 0 || idle_s > 30 * 86400) {
    fprintf(stderr, "usage: session-host --port 1024..65535 [--idle-s SECONDS] -- COMMAND [ARGS...]\n");
    return 2;
  }
  struct host h = {.pidfd = -1, .last_ms = now_ms()};
  if ((h.listener = listen_on((uint16_t)port, false)) < 0) {
    fprintf(stderr, "session-host: cannot listen on port %ld of this node: %s\n", port, strerror(errno));
    return 1;
  }
  struct sigaction sa = {.sa_handler = on_stop};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  if (!(h.app_port = free_port()) || start_app(&h, argv + i)) {
    fprintf(stderr, "session-host: cannot start %s: %s\n", argv[i], strerror(errno));
    return 1;
  }
  fprintf(stderr, "session-host: %s on port %u, served on port %ld (idle limit %ld s)\n", argv[i], h.app_port, port,
          idle_s);
  int status = serve(&h, (int)idle_s);
  while (h.npairs) drop_pair(&h, h.npairs - 1);
  close(h.listener);
  if (h.pidfd >= 0) close(h.pidfd);
  return status;
}
