/*
 * cmd_pty.c - the user's end of a terminal step (srun --pty, phalanx exec;
 * docs/interactive.md).
 *
 * The step is created like any (POST /v1/jobs/{id}/steps) with "pty":true
 * and the window size; the answer carries the relay session and this side's
 * one-time credential. A connection of its own then asks for
 * GET /v1/terminals/{session} with "Upgrade: phalanx-pty"; after the 101 it
 * carries frames (util/ptyframe.h). Our terminal goes raw, so every key,
 * Ctrl-C and Ctrl-Z included, travels as bytes to the remote terminal,
 * whose line discipline signals the remote foreground process group; a
 * window change (SIGWINCH) sends the new size. The command's EXIT frame is
 * our exit status. With stdin not a terminal the remote terminal neither
 * echoes nor maps newlines, and our stdin's end is sent as the terminal's
 * EOF. Leaving (SIGHUP, SIGTERM, the connection lost) closes the stream:
 * the remote command gets SIGHUP and the step ends.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_common.h"
#include "cli/step_files.h"
#include "util/ptyframe.h"
#ifndef PX_FRONT_END
#include "agent/pty_dial.h" /* https: the front end hands such commands to phalanxd (main.c) */
#endif

#define HEAD_MAX 8192
#define QUIET_CHECK_MS 3000

static volatile sig_atomic_t winch, leave, interrupts;
static void on_winch(int sig) { (void)sig, winch = 1; }
static void on_leave(int sig) { leave = sig; }
static void on_int(int sig) { (void)sig, interrupts++; }

struct term {
  int fd;                       /* the stream's socket (poll it) */
  void *tls;                    /* over https: the pty_dial connection carrying it (phalanxd) */
  bool tty;                     /* stdin is a terminal: raw mode, sizes */
  struct termios saved;
  bool raw_set, in_open, got_exit;
  int status;
  unsigned char in[PX_PTYFRAME_HEAD + PX_PTYFRAME_MAX + 4096];
  size_t nin;
};

static int send_all(int fd, const void *buf, size_t n) { /* plain sockets */
  const char *p = buf;
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
      struct pollfd pf = {.fd = fd, .events = POLLOUT};
      if (errno == EAGAIN && poll(&pf, 1, 30000) <= 0) return -1;
      continue;
    }
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* The stream, plain or TLS. */
static int stream_send(struct term *t, const void *buf, size_t n) {
#ifndef PX_FRONT_END
  if (t->tls) return px_dial_send(t->tls, buf, n);
#endif
  return send_all(t->fd, buf, n);
}

/* > 0 bytes, 0 the end, -1 broken, -2 nothing now. */
static ssize_t stream_recv(struct term *t, void *buf, size_t n) {
#ifndef PX_FRONT_END
  if (t->tls) return px_dial_recv(t->tls, buf, n);
#endif
  ssize_t r = recv(t->fd, buf, n, 0);
  if (r < 0) return errno == EINTR || errno == EAGAIN ? -2 : -1;
  return r;
}

static void stream_close(struct term *t) {
#ifndef PX_FRONT_END
  if (t->tls) px_dial_close(t->tls), free(t->tls), t->tls = NULL, t->fd = -1;
#endif
  if (t->fd >= 0) close(t->fd);
  t->fd = -1;
}

/* Over https (phalanxd only): the relay's connection through libcurl. */
static int upgrade_tls(struct px_cmd *c, struct term *t, const char *path, const char *secret) {
#ifndef PX_FRONT_END
  char server[400], err[512];
  struct px_client *k = &c->client;
  bool v6 = strchr(k->host, ':') != NULL;
  snprintf(server, sizeof server, "https://%s%s%s:%s", v6 ? "[" : "", k->host, v6 ? "]" : "", k->port);
  struct px_dial *dl = calloc(1, sizeof *dl);
  if (!dl) return px_cmd_error(c, "out of memory"), -1;
  if (px_dial_open(dl, server, k->ca_file, path, secret, err, sizeof err)) {
    free(dl);
    return px_cmd_error(c, "terminal: %s", err), -1;
  }
  t->tls = dl;
  t->fd = dl->fd;
  return 0;
#else
  (void)t, (void)path, (void)secret;
  return px_cmd_error(c, "terminal over https: this binary has no TLS (phalanxd has)"), -1;
#endif
}

static void write_all(int fd, const unsigned char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

static void window(uint16_t *rows, uint16_t *cols) {
  struct winsize ws = {0};
  if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) *rows = ws.ws_row, *cols = ws.ws_col;
}

/* "GET path" with the upgrade and the credential; 0 after the 101, with
 * any stream bytes that followed it in t->in. */
static int upgrade(struct px_cmd *c, struct term *t, const char *path, const char *secret) {
  if (c->client.tls) return upgrade_tls(c, t, path, secret);
  struct px_diag d;
  px_diag_clear(&d);
  if (px_client_open_stream(&c->client, &t->fd, &d)) return px_cmd_error(c, "%s", d.msg), -1;
  char req[1024], head[HEAD_MAX + 1];
  int len = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: phalanx-pty\r\n"
                     "X-Phalanx-Secret: %s\r\n\r\n", path, secret);
  if (len <= 0 || (size_t)len >= sizeof req || send_all(t->fd, req, (size_t)len))
    return px_cmd_error(c, "cannot send the terminal request: %s", strerror(errno)), -1;
  size_t n = 0;
  char *end = NULL;
  while (!end) {
    struct pollfd pf = {.fd = t->fd, .events = POLLIN};
    if (poll(&pf, 1, 30000) <= 0) return px_cmd_error(c, "the server did not answer the terminal request"), -1;
    ssize_t r = recv(t->fd, head + n, HEAD_MAX - n, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) return px_cmd_error(c, "the server closed the terminal connection"), -1;
    n += (size_t)r;
    head[n] = '\0';
    end = strstr(head, "\r\n\r\n");
    if (!end && n == HEAD_MAX) return px_cmd_error(c, "the terminal answer's head is too long"), -1;
  }
  int status = 0;
  if (sscanf(head, "HTTP/1.%*d %d", &status) != 1 || status != 101) {
    json_error_t e;
    json_t *err = json_loads(end + 4, 0, &e);
    char msg[512];
    px_client_error_text(status, err, msg, sizeof msg);
    json_decref(err);
    return px_cmd_error(c, "terminal: %s", msg), -1;
  }
  size_t used = (size_t)(end + 4 - head);
  t->nin = n - used;
  memcpy(t->in, head + used, t->nin);
  return 0;
}

/* Frames from the pty host. -1: not our protocol. */
static int take_frames(struct term *t) {
  size_t off = 0;
  for (;;) {
    struct px_ptyframe f;
    long used = px_ptyframe_next(t->in + off, t->nin - off, &f);
    if (used < 0) return -1;
    if (!used) break;
    off += (size_t)used;
    if (f.type == PX_PTYF_DATA) write_all(STDOUT_FILENO, f.data, f.len);
    else if (f.type == PX_PTYF_EXIT) t->got_exit = true, t->status = f.status;
  }
  memmove(t->in, t->in + off, t->nin - off);
  t->nin -= off;
  return 0;
}

static int send_frame_data(struct term *t, const void *p, size_t n) {
  unsigned char f[PX_PTYFRAME_HEAD + PX_PTYFRAME_MAX];
  return stream_send(t, f, px_ptyframe_data(f, p, n));
}

/* What happened while poll slept: a window change, an interrupt to pass on. */
static int signals(struct term *t) {
  unsigned char f[PX_PTYFRAME_HEAD + 4];
  if (winch) {
    winch = 0;
    uint16_t rows = 0, cols = 0;
    window(&rows, &cols);
    if (rows && stream_send(t, f, px_ptyframe_winsize(f, rows, cols))) return -1;
  }
  for (; interrupts > 0; interrupts--) /* not a terminal: our Ctrl-C is the remote one */
    if (send_frame_data(t, "\003", 1)) return -1;
  return 0;
}

static bool pump_stdin(struct term *t) {
  unsigned char buf[PX_PTYFRAME_MAX];
  ssize_t r = read(STDIN_FILENO, buf, sizeof buf);
  if (r < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (r > 0) return send_frame_data(t, buf, (size_t)r) == 0;
  unsigned char f[PX_PTYFRAME_HEAD];
  t->in_open = false; /* our input ended: the remote terminal's EOF */
  return stream_send(t, f, px_ptyframe_eof(f)) == 0;
}

/* 1: more; 0: the stream ended; -1: broken. */
/* Reads until nothing is left (TLS may hold decrypted bytes poll cannot see). */
static int pump_sock(struct term *t) {
  for (;;) {
    ssize_t r = stream_recv(t, t->in + t->nin, sizeof t->in - t->nin);
    if (r == -2) return 1;
    if (r <= 0) return 0;
    t->nin += (size_t)r;
    if (take_frames(t)) return -1;
  }
}

/* Is the step still running? The relay cannot always tell that the node's
 * side went away without its EXIT (a TLS peer's close is not passed on by
 * libmicrohttpd's upgrade), so a quiet stream asks now and then. */
static bool step_running(struct px_cmd *c, const char *job, uint32_t step) {
  char path[128];
  snprintf(path, sizeof path, "/v1/jobs/%s/steps/%u", job, step);
  long status = 0;
  json_t *resp = NULL;
  if (px_cmd_call(c, "GET", path, NULL, &status, &resp)) return true; /* the server is away: keep waiting */
  const char *st = json_string_value(json_object_get(resp, "state"));
  bool running = status != 200 || !st || !strcmp(st, "RUNNING");
  json_decref(resp);
  return running;
}

static int relay(struct term *t, struct px_cmd *c, const char *job, uint32_t step) {
  if (t->nin && take_frames(t)) return -1;
  while (!leave && !t->got_exit) { /* EXIT is the last frame */
    if (signals(t)) return -1;
    struct pollfd p[2] = {{.fd = t->fd, .events = POLLIN}, {.fd = t->in_open ? STDIN_FILENO : -1, .events = POLLIN}};
    int n = poll(p, 2, QUIET_CHECK_MS);
    if (n == 0 && !step_running(c, job, step)) return -1;
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (p[1].revents && !pump_stdin(t)) return -1;
    if (p[0].revents) {
      int r = pump_sock(t);
      if (r <= 0) return r;
    }
  }
  return 0;
}

static void raw_mode(struct term *t) {
  if (!t->tty || tcgetattr(STDIN_FILENO, &t->saved)) return;
  struct termios r = t->saved;
  cfmakeraw(&r);
  t->raw_set = tcsetattr(STDIN_FILENO, TCSADRAIN, &r) == 0;
}

static void handlers(bool tty, struct sigaction *old) {
  struct sigaction w = {.sa_handler = on_winch}, l = {.sa_handler = on_leave}, i = {.sa_handler = on_int};
  sigemptyset(&w.sa_mask), sigemptyset(&l.sa_mask), sigemptyset(&i.sa_mask);
  sigaction(SIGWINCH, &w, &old[0]);
  sigaction(SIGTERM, &l, &old[1]);
  sigaction(SIGHUP, &l, &old[2]);
  sigaction(SIGINT, tty ? &l : &i, &old[3]); /* raw: a SIGINT here comes from kill, not a key */
  signal(SIGPIPE, SIG_IGN);
}

static void restore(const struct term *t, const struct sigaction *old) {
  if (t->raw_set) tcsetattr(STDIN_FILENO, TCSADRAIN, &t->saved);
  sigaction(SIGWINCH, &old[0], NULL);
  sigaction(SIGTERM, &old[1], NULL);
  sigaction(SIGHUP, &old[2], NULL);
  sigaction(SIGINT, &old[3], NULL);
}

static int pty_run(struct px_cmd *c, const char *path, const char *secret, const char *job, uint32_t step) {
  struct term t = {.fd = -1, .tty = isatty(STDIN_FILENO) == 1, .in_open = true};
  struct sigaction old[4];
  if (upgrade(c, &t, path, secret)) {
    stream_close(&t);
    return -1;
  }
  handlers(t.tty, old);
  raw_mode(&t);
  if (t.tty) winch = 1; /* the size may have changed since the step was asked for */
  int rc = relay(&t, c, job, step);
  restore(&t, old);
  stream_close(&t);
  if (!t.got_exit && !leave)
    px_cmd_error(c, "the terminal's stream %s without the command's exit status", rc < 0 ? "broke off" : "ended");
  return t.got_exit ? t.status : -1;
}

/* The body of a terminal step: argv, the window, one task on one node;
 * with_env: our environment (srun's), else the job's (exec's); node: one
 * of the job's nodes (srun --pty -w), NULL for its first. */
static json_t *step_body(char **argv, const char *out_dir, bool with_env, const char *node) {
  extern char **environ;
  uint16_t rows = 24, cols = 80;
  window(&rows, &cols);
  char cwd[4096];
  json_t *b = json_object(), *av = json_array(), *env = json_array();
  bool bad = !b || !av || !env;
  for (char **a = argv; !bad && *a; a++) bad = json_array_append_new(av, json_string(*a)) != 0;
  for (char **e = environ; !bad && with_env && *e; e++)
    if (!px_step_env_stale(*e)) bad = json_array_append_new(env, json_string(*e)) != 0;
  if (bad) {
    json_decref(b), json_decref(av), json_decref(env);
    return NULL;
  }
  bad = json_object_set_new(b, "argv", av) != 0;
  if (with_env) bad |= json_object_set_new(b, "env", env) != 0;
  else json_decref(env);
  bad |= json_object_set_new(b, "out_dir", json_string(out_dir)) != 0;
  if (getcwd(cwd, sizeof cwd)) bad |= json_object_set_new(b, "cwd", json_string(cwd)) != 0;
  bad |= json_object_set_new(b, "nodes", json_integer(1)) || json_object_set_new(b, "ntasks", json_integer(1));
  bad |= json_object_set_new(b, "pty", json_true()) || json_object_set_new(b, "rows", json_integer(rows)) ||
         json_object_set_new(b, "cols", json_integer(cols));
  if (!isatty(STDIN_FILENO)) bad |= json_object_set_new(b, "raw", json_true()) != 0;
  if (node) bad |= json_object_set_new(b, "node", json_string(node)) != 0;
  if (bad) json_decref(b);
  return bad ? NULL : b;
}

/* The pty host's own complaints (it could not dial, CMD did not start). */
static void show_errors(const char *dir) {
  char path[4200], buf[2048];
  snprintf(path, sizeof path, "%s/0.err", dir);
  FILE *f = fopen(path, "r");
  if (!f) return;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  if (n) fwrite(buf, 1, n, stderr);
}

static void remove_dir(const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/0.out", dir), unlink(path);
  snprintf(path, sizeof path, "%s/0.err", dir), unlink(path);
  rmdir(dir);
}

/* The step's exit code once it ended (the stream broke before its EXIT). */
static int step_end_code(struct px_cmd *c, const char *job, uint32_t step) {
  char path[128];
  snprintf(path, sizeof path, "/v1/jobs/%s/steps/%u", job, step);
  for (int i = 0; i < 100; i++) {
    long status = 0;
    json_t *resp = NULL;
    if (px_cmd_call(c, "GET", path, NULL, &status, &resp)) return 1;
    const char *st = json_string_value(json_object_get(resp, "state"));
    int code = (int)json_integer_value(json_object_get(resp, "exit_code"));
    bool running = status == 200 && st && !strcmp(st, "RUNNING");
    json_decref(resp);
    if (!running) return status == 200 ? (code ? code : 1) : 1;
    struct timespec ts = {0, 100 * 1000000L};
    nanosleep(&ts, NULL);
  }
  return 1;
}

int px_pty_step(struct px_cmd *c, const char *job, char **argv, bool with_env, const char *node) {
  char cwd[3900], dir[4096], path[96];
  if (!getcwd(cwd, sizeof cwd)) return px_cmd_error(c, "cannot read the current directory: %s", strerror(errno)), 1;
  snprintf(dir, sizeof dir, "%s/.phalanx-pty-%d-%s", cwd, (int)getpid(), job);
  if (mkdir(dir, 0700) && errno != EEXIST) return px_cmd_error(c, "cannot create %s: %s", dir, strerror(errno)), 1;
    if (node && strpbrk(node, ",[ "))
    return rmdir(dir), px_cmd_error(c, "--nodelist=%s: a terminal runs on one node; name one", node), 1;
  json_t *body = step_body(argv, dir, with_env, node), *resp = NULL;
  long status = 0;
  int rc = 1;
  snprintf(path, sizeof path, "/v1/jobs/%s/steps", job);
  if (!body) px_cmd_error(c, "the command or an exported variable is not valid UTF-8 text");
  else if (!px_cmd_call(c, "POST", path, body, &status, &resp)) {
    const char *tpath = json_string_value(json_object_get(json_object_get(resp, "terminal"), "path"));
    const char *secret = json_string_value(json_object_get(json_object_get(resp, "terminal"), "secret"));
    uint32_t step = (uint32_t)json_integer_value(json_object_get(resp, "step_id"));
    if (status != 201 || !tpath || !secret) {
      char msg[512];
      px_client_error_text(status, resp, msg, sizeof msg);
      px_cmd_error(c, "Unable to create a terminal step in job %s: %s", job, msg);
    } else if ((rc = pty_run(c, tpath, secret, job, step)) < 0) {
      rc = step_end_code(c, job, step);
      show_errors(dir);
    }
  }
  json_decref(body);
  json_decref(resp);
  remove_dir(dir);
  return rc;
}
