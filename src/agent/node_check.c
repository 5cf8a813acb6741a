/* node_check.c - HealthCheckProgram= and RebootProgram= on the agent (node_check.h). */
#include "agent/node_check.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf/conf.h" /* PX_HC_* */
#include "proto/gpu_msg.h"
#include "util/error.h"
#include "util/log.h"

void px_node_check_init(struct px_node_check *h, const char *node) {
  memset(h, 0, sizeof *h);
  snprintf(h->node, sizeof h->node, "%s", node);
  h->fd = -1;
  h->last = -1;
  h->next_ms = INT64_MAX;
}

/* CYCLE: the node's own offset within the interval, so that the nodes do
 * not all check at once. */
static int64_t cycle_offset(const struct px_node_check *h) {
  uint64_t x = 1469598103934665603ull;
  for (const char *p = h->node; *p; p++) x = (x ^ (unsigned char)*p) * 1099511628211ull;
  return h->interval_ms ? (int64_t)(x % (uint64_t)h->interval_ms) : 0;
}

void px_node_check_config(struct px_node_check *h, const char *program, int64_t interval_s, unsigned states,
                          int64_t now_ms) {
  bool same = !strcmp(h->program, program ? program : "");
  snprintf(h->program, sizeof h->program, "%s", program ? program : "");
  h->interval_ms = interval_s > 0 ? interval_s * 1000 : 0;
  h->states = states;
  if (!h->program[0]) h->next_ms = INT64_MAX;
  else if (!same || h->next_ms == INT64_MAX) h->next_ms = now_ms; /* first run at once (registration) */
}

static bool state_suits(const struct px_node_check *h, bool busy) {
  unsigned s = h->states & ~PX_HC_CYCLE;
  if (!s || (s & PX_HC_ANY)) return true;
  return busy ? (s & (PX_HC_ALLOC | PX_HC_MIXED)) != 0 : (s & (PX_HC_IDLE | PX_HC_NONDRAINED_IDLE)) != 0;
}

/* fork + exec /bin/sh -c cmd in a session of its own, signals unblocked;
 * out_fd: where its stdout and stderr go (-1: /dev/null). */
static pid_t spawn(const char *cmd, int out_fd) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  setsid();
  int null = open("/dev/null", O_RDWR);
  dup2(null, 0);
  dup2(out_fd >= 0 ? out_fd : null, 1);
  dup2(out_fd >= 0 ? out_fd : null, 2);
  execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
  _exit(127);
}

static void start(struct px_node_check *h, int64_t now_ms) {
  int p[2];
  if (pipe2(p, O_CLOEXEC)) {
    px_warn("health check: pipe: %s", strerror(errno));
    return;
  }
  fcntl(p[0], F_SETFL, O_NONBLOCK);
  h->pid = spawn(h->program, p[1]);
  close(p[1]);
  if (h->pid < 0) {
    px_warn("health check: fork: %s", strerror(errno));
    h->pid = 0;
    close(p[0]);
    return;
  }
  h->fd = p[0];
  h->len = 0;
  h->started_ms = now_ms;
}

static void drain_output(struct px_node_check *h) {
  char junk[256];
  ssize_t n;
  while (h->fd >= 0) {
    size_t room = sizeof h->out - 1 - h->len;
    n = room ? read(h->fd, h->out + h->len, room) : read(h->fd, junk, sizeof junk);
    if (n <= 0) break;
    if (room) h->len += (size_t)n;
  }
  h->out[h->len] = '\0';
}

void px_node_check_tick(struct px_node_check *h, int64_t now_ms, bool busy) {
  drain_output(h);
  if (h->pid > 0 && now_ms - h->started_ms > PX_NODE_CHECK_TIMEOUT_MS) {
    px_warn("health check: still running after %d s: killed", PX_NODE_CHECK_TIMEOUT_MS / 1000);
    kill(-h->pid, SIGKILL);
    h->started_ms = INT64_MAX / 2; /* killed once; the reap reports it */
  }
  if (h->pid || !h->program[0] || now_ms < h->next_ms) return;
  bool first = h->last < 0;
  h->next_ms = h->interval_ms ? now_ms + h->interval_ms : INT64_MAX;
  if (first && (h->states & PX_HC_CYCLE)) h->next_ms += cycle_offset(h);
  if (first || state_suits(h, busy)) start(h, now_ms);
}

int64_t px_node_check_due(const struct px_node_check *h) {
  if (h->pid > 0) return h->started_ms + PX_NODE_CHECK_TIMEOUT_MS + 1;
  return h->program[0] ? h->next_ms : INT64_MAX;
}

/* The first non-empty line of the output, or how the program ended. */
static void message(const struct px_node_check *h, int status, char *buf, size_t size) {
  const char *p = h->out;
  while (*p == '\n' || *p == ' ') p++;
  size_t len = strcspn(p, "\n");
  if (len) snprintf(buf, size, "%.*s", (int)len, p);
  else if (WIFSIGNALED(status)) snprintf(buf, size, "killed by signal %d", WTERMSIG(status));
  else snprintf(buf, size, "exit code %d", WEXITSTATUS(status));
}

bool px_node_check_reaped(struct px_node_check *h, pid_t pid, int status, int64_t now_ms, char **report) {
  (void)now_ms;
  *report = NULL;
  if (pid <= 0 || pid != h->pid) return false;
  drain_output(h);
  close(h->fd);
  h->fd = -1;
  h->pid = 0;
  struct px_node_health r = {.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0};
  snprintf(r.node, sizeof r.node, "%s", h->node);
  if (!r.ok) message(h, status, r.message, sizeof r.message);
  /* a failure is said every time (an operator may have resumed the node
   * meanwhile); health only when it is news */
  if (r.ok && h->last == 1) return true;
  if (h->last != (int)r.ok || strcmp(h->last_msg, r.message)) px_info("health check: %s%s%s", r.ok ? "healthy" : "FAILED", r.ok ? "" : ": ", r.message);
  h->last = r.ok;
  snprintf(h->last_msg, sizeof h->last_msg, "%s", r.message);
  *report = px_node_health_encode(&r);
  return true;
}

void px_node_check_fini(struct px_node_check *h) {
  if (h->pid > 0) {
    kill(-h->pid, SIGKILL);
    waitpid(h->pid, NULL, 0);
  }
  if (h->fd >= 0) close(h->fd);
  h->fd = -1;
  h->pid = 0;
}

int px_node_reboot(const char *program) {
  px_warn("reboot ordered by the server: running %s", program);
  pid_t pid = spawn(program, -1);
  return pid < 0 ? PX_EIO : 0;
}
