/*
 * pty_host.c - `phalanxd pty-host -- CMD ARGS...`: the task of a terminal
 * step (docs/interactive.md). The job's supervisor starts it like any step
 * task, so it already runs as the user, inside the job's cgroup, with the
 * job's environment and working directory; the agent put the relay session
 * in its environment (PHALANX_PTY_*, removed before CMD runs).
 *
 * It dials the server's relay (pty_dial.h), opens a pseudo-terminal of the
 * CLI's window size and runs CMD on it in a session of its own (the terminal
 * is CMD's controlling terminal, so Ctrl-C and Ctrl-Z typed by the user
 * reach CMD's foreground process group through the line discipline, as on
 * any terminal). Then it copies: terminal output to the relay as DATA
 * frames, DATA frames to the terminal, WINSIZE frames to TIOCSWINSZ (the
 * kernel sends SIGWINCH), the client's EOF as the terminal's EOF character.
 * When CMD ends it sends EXIT with the status srun returns and exits with
 * it (the step's end); when the user leaves (the relay closes) CMD gets
 * SIGHUP, as from a closed terminal, then SIGKILL if it lingers.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "agent/pty.h"
#include "agent/pty_dial.h"
#include "util/ptyframe.h"

#define HANGUP_GRACE_MS 3000

struct host {
  struct px_dial link;
  int master, pidfd;
  pid_t child;
  unsigned char in[PX_PTYFRAME_HEAD + PX_PTYFRAME_MAX + 4096];
  size_t nin;
};

static volatile sig_atomic_t terminated;
static void on_term(int sig) { terminated = sig; }

static int child_status(int ws) { return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws); }

/* Input from a pipe: no echo, output bytes as written. Set by the parent
 * before any input is relayed: set in the child, input that came first
 * was echoed. */
static void set_raw(int slave) {
  struct termios t;
  if (tcgetattr(slave, &t)) return;
  t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
  t.c_oflag &= ~(tcflag_t)OPOST;
  tcsetattr(slave, TCSANOW, &t);
}

/* The pty's slave as the child's controlling terminal, then CMD. */
static void run_child(int slave, char **argv) {
  setsid();
  ioctl(slave, TIOCSCTTY, 0);
  dup2(slave, 0), dup2(slave, 1), dup2(slave, 2);
  /* the relay's connection (and libcurl's own descriptors) stay ours: CMD
   * holding them would keep a left session open, or write into its stream */
  close_range(3, ~0U, 0);
  signal(SIGTERM, SIG_DFL), signal(SIGPIPE, SIG_DFL);
  execvp(argv[0], argv);
  dprintf(2, "%s: %s\r\n", argv[0], strerror(errno));
  _exit(errno == ENOENT ? 127 : 126);
}

static int open_pty(struct host *h, const char *rows, const char *cols, bool raw, char **argv) {
  h->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  char name[128];
  if (h->master < 0 || grantpt(h->master) || unlockpt(h->master) || ptsname_r(h->master, name, sizeof name))
    return fprintf(stderr, "pty-host: cannot open a pseudo-terminal: %s\n", strerror(errno)), -1;
  int slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) return fprintf(stderr, "pty-host: cannot open %s: %s\n", name, strerror(errno)), -1;
  if (raw) set_raw(slave);
  struct winsize ws = {.ws_row = (unsigned short)strtoul(rows ? rows : "24", NULL, 10),
                       .ws_col = (unsigned short)strtoul(cols ? cols : "80", NULL, 10)};
  if (ws.ws_row && ws.ws_col) ioctl(h->master, TIOCSWINSZ, &ws);
  h->child = fork();
  if (h->child == 0) run_child(slave, argv);
  close(slave);
  if (h->child < 0) return fprintf(stderr, "pty-host: fork: %s\n", strerror(errno)), -1;
  h->pidfd = (int)syscall(SYS_pidfd_open, h->child, 0);
  fcntl(h->master, F_SETFL, fcntl(h->master, F_GETFL) | O_NONBLOCK);
  return 0;
}

static void write_master(struct host *h, const unsigned char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(h->master, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) {
      struct pollfd pf = {.fd = h->master, .events = POLLOUT};
      if (poll(&pf, 1, 1000) <= 0) return; /* CMD reads nothing: drop, as a full terminal would block */
      continue;
    }
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

/* Frames from the client. -1: not our protocol. */
static int take_frames(struct host *h) {
  size_t off = 0;
  for (;;) {
    struct px_ptyframe f;
    long used = px_ptyframe_next(h->in + off, h->nin - off, &f);
    if (used < 0) return -1;
    if (used == 0) break;
    off += (size_t)used;
    if (f.type == PX_PTYF_DATA) write_master(h, f.data, f.len);
    else if (f.type == PX_PTYF_WINSIZE) {
      struct winsize ws = {.ws_row = f.rows, .ws_col = f.cols};
      ioctl(h->master, TIOCSWINSZ, &ws);
    } else if (f.type == PX_PTYF_EOF) {
      struct termios t;
      unsigned char eof = 4;
      if (!tcgetattr(h->master, &t) && t.c_cc[VEOF]) eof = t.c_cc[VEOF];
      write_master(h, &eof, 1);
    }
  }
  memmove(h->in, h->in + off, h->nin - off);
  h->nin -= off;
  return 0;
}

/* Terminal output to the relay; false when the terminal is gone (EIO). */
static bool pump_master(struct host *h) {
  unsigned char buf[PX_PTYFRAME_HEAD + PX_PTYFRAME_MAX];
  for (;;) {
    ssize_t r = read(h->master, buf + PX_PTYFRAME_HEAD, PX_PTYFRAME_MAX);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r < 0 && errno == EAGAIN;
    unsigned char frame[PX_PTYFRAME_HEAD + PX_PTYFRAME_MAX];
    size_t n = px_ptyframe_data(frame, buf + PX_PTYFRAME_HEAD, (size_t)r);
    if (px_dial_send(&h->link, frame, n)) return true; /* the relay's end shows on its side */
  }
}

/* Client bytes; false when the user left (the relay closed). */
static bool pump_link(struct host *h) {
  for (;;) {
    ssize_t r = px_dial_recv(&h->link, h->in + h->nin, sizeof h->in - h->nin);
    if (r == -2) return true;
    if (r <= 0) return false;
    h->nin += (size_t)r;
    if (take_frames(h)) {
      fprintf(stderr, "pty-host: the relay sent bytes that are not frames\n");
      return false;
    }
  }
}

/* The user left: SIGHUP as from a closed terminal, then SIGKILL. */
static int hang_up(struct host *h, int sig) {
  pid_t fg = tcgetpgrp(h->master);
  kill(-h->child, sig);
  if (fg > 0) kill(-fg, sig);
  close(h->master);
  h->master = -1;
  struct pollfd p = {.fd = h->pidfd, .events = POLLIN};
  if (h->pidfd < 0 || poll(&p, 1, HANGUP_GRACE_MS) <= 0) kill(-h->child, SIGKILL), kill(h->child, SIGKILL);
  int ws = 0;
  while (waitpid(h->child, &ws, 0) < 0 && errno == EINTR) {}
  return child_status(ws);
}

static int serve(struct host *h) {
  bool link_open = true;
  for (;;) {
    if (terminated) return hang_up(h, SIGHUP);
    struct pollfd p[3] = {{.fd = h->master, .events = POLLIN}, {.fd = h->link.fd, .events = POLLIN},
                          {.fd = h->pidfd, .events = POLLIN}};
    if (h->link.nleft) p[1].revents = POLLIN;
    else if (poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      return hang_up(h, SIGHUP);
    }
    if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && !pump_master(h)) p[2].revents |= POLLIN;
    if (p[1].revents && !(link_open = pump_link(h))) return hang_up(h, SIGHUP);
    if (p[2].revents & POLLIN) break; /* CMD ended (or its terminal did) */
  }
  int ws = 0;
  while (waitpid(h->child, &ws, 0) < 0 && errno == EINTR) {}
  pump_master(h); /* its last words */
  int status = child_status(ws);
  unsigned char x[PX_PTYFRAME_HEAD + 4];
  if (link_open) px_dial_send(&h->link, x, px_ptyframe_exit(x, status));
  return status;
}

int px_cmd_pty_host(int argc, char **argv) {
  int first = 1;
  if (first < argc && !strcmp(argv[first], "--")) first++;
  const char *server = getenv("PHALANX_PTY_SERVER"), *session = getenv("PHALANX_PTY_SESSION");
  const char *secret = getenv("PHALANX_PTY_SECRET");
  if (first >= argc || !server || !session || !secret) {
    fprintf(stderr, "pty-host: run by the agent for a terminal step (PHALANX_PTY_* and a command)\n");
    return 2;
  }
  char path[128], err[512], srv[1024], sec[256], ca[1024], rows[16], cols[16];
  snprintf(path, sizeof path, "/v1/terminals/%s", session);
  snprintf(srv, sizeof srv, "%s", server);
  snprintf(sec, sizeof sec, "%s", secret);
  snprintf(ca, sizeof ca, "%s", getenv("PHALANX_PTY_CA") ? getenv("PHALANX_PTY_CA") : "");
  snprintf(rows, sizeof rows, "%s", getenv("PHALANX_PTY_ROWS") ? getenv("PHALANX_PTY_ROWS") : "24");
  snprintf(cols, sizeof cols, "%s", getenv("PHALANX_PTY_COLS") ? getenv("PHALANX_PTY_COLS") : "80");
  bool raw = getenv("PHALANX_PTY_RAW") != NULL;
  const char *vars[] = {"PHALANX_PTY_SERVER", "PHALANX_PTY_SESSION", "PHALANX_PTY_SECRET", "PHALANX_PTY_CA",
                        "PHALANX_PTY_ROWS", "PHALANX_PTY_COLS", "PHALANX_PTY_RAW"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]); /* not CMD's business */
  struct sigaction sa = {.sa_handler = on_term};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  struct host h = {.master = -1, .pidfd = -1};
  if (px_dial_open(&h.link, srv, ca, path, sec, err, sizeof err)) {
    fprintf(stderr, "pty-host: %s\n", err);
    return 1;
  }
  int status = open_pty(&h, rows, cols, raw, argv + first) ? 1 : serve(&h);
  px_dial_close(&h.link);
  if (h.master >= 0) close(h.master);
  if (h.pidfd >= 0) close(h.pidfd);
  return status;
}
