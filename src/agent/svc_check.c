/*
 * svc_check.c - one health check of a replica (svc_health.h): an HTTP GET
 * on 127.0.0.1 (2xx and 3xx pass, as for a kubelet), a TCP connect, or a
 * command run as the job's user inside the job's cgroup, each bounded by
 * the check's timeout_s.
 *
 * The command runs as a grandchild. The agent's main loop reaps its
 * supervisors with waitpid(-1), which would take the exit status of any
 * child of ours that delivers SIGCHLD, and exec turns every child into one
 * that does. So the checker's own child is a clone with no exit signal
 * that never execs (invisible to waitpid(-1), waited for with __WCLONE):
 * it forks the command, which joins the job's cgroup, becomes the job's
 * user and execs, and it passes the command's end on as its own exit
 * status. Both children make raw system calls only (they are copies of a
 * multi-threaded process); everything that allocates or reads the user
 * database is done before.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/jobdir.h"
#include "agent/svc_health.h"

static size_t discard(char *data, size_t size, size_t n, void *ud) {
  (void)data, (void)ud;
  return size * n;
}

static bool check_http(const struct px_health_target *t, char *why, size_t size) {
  CURL *c = curl_easy_init();
  if (!c) return snprintf(why, size, "GET %s: out of memory", t->check.path), false;
  char url[320];
  snprintf(url, sizeof url, "http://127.0.0.1:%u%s", t->port, t->check.path);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)t->check.timeout_s * 1000L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
  CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) return snprintf(why, size, "GET %s: %s", t->check.path, curl_easy_strerror(rc)), false;
  if (status < 200 || status >= 400) return snprintf(why, size, "GET %s: %ld", t->check.path, status), false;
  return true;
}

static bool check_tcp(const struct px_health_target *t, char *why, size_t size) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return snprintf(why, size, "tcp %u: %s", t->port, strerror(errno)), false;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(t->port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int err = 0;
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    err = errno;
    struct pollfd p = {fd, POLLOUT, 0};
    if (err == EINPROGRESS) {
      int n = poll(&p, 1, (int)t->check.timeout_s * 1000);
      socklen_t len = sizeof err;
      if (n == 0) err = ETIMEDOUT;
      else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
  }
  close(fd);
  if (err) snprintf(why, size, "tcp %u: %s", t->port, strerror(err));
  return err == 0;
}

/* ---- command ---- */

#define CMD_STACK (64 * 1024)
#define MAX_GROUPS 256

struct cmd_prep {
  const struct px_health_target *t;
  char procs[PX_CG_NCTL][PATH_MAX + 16];
  int nprocs;
  gid_t groups[MAX_GROUPS];
  int ngroups;
  bool change_user;
  char *envp[4];
};

/* The command: joins the job's cgroup, becomes the user, execs. */
static void cmd_exec(const struct cmd_prep *p) {
  for (int i = 0; i < p->nprocs; i++) {
    int fd = open(p->procs[i], O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1) _exit(126);
    close(fd);
  }
  /* raw system calls: glibc's wrappers may signal the agent's threads (setxid) */
  if (p->change_user && (syscall(SYS_setgroups, (size_t)p->ngroups, p->groups) != 0 ||
                         syscall(SYS_setresgid, p->t->gid, p->t->gid, p->t->gid) != 0 ||
                         syscall(SYS_setresuid, p->t->uid, p->t->uid, p->t->uid) != 0))
    _exit(126);
  int null = open("/dev/null", O_RDWR);
  if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) _exit(126);
  if (chdir("/") != 0) _exit(126);
  sigset_t none;
  sigemptyset(&none);
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(uint64_t));
  execvpe(p->t->check.command[0], p->t->check.command, p->envp);
  _exit(127);
}

/* The checker's child: the leader of a process group the checker kills
 * at the timeout; its exit status is the command's (128+N for signal N). */
static int cmd_middle(void *arg) {
  syscall(SYS_setpgid, 0, 0);
  long c = syscall(SYS_clone, (unsigned long)SIGCHLD, NULL, NULL, NULL, 0UL);
  if (c == 0) cmd_exec(arg);
  if (c < 0) _exit(126);
  int st = 0;
  while (syscall(SYS_wait4, c, &st, 0, NULL) < 0)
    if (errno != EINTR) _exit(126);
  _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* The job's cgroup files to join (none before its supervisor wrote them, or without cgroups). */
static void cmd_cgroup(struct cmd_prep *p) {
  struct px_job_state js;
  if (px_state_read(p->t->jobdir, &js) != 0 || !js.cg.version) return;
  const char *file = js.cg.version == 1 ? "tasks" : "cgroup.procs";
  for (int c = 0; c < PX_CG_NCTL; c++)
    if (js.cg.path[c][0]) snprintf(p->procs[p->nprocs++], sizeof p->procs[0], "%s/%s", js.cg.path[c], file);
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for the child up to the timeout, then kills its process group. */
static bool cmd_wait(pid_t c, const struct px_health_check *h, char *why, size_t size) {
  uint32_t timeout_s = h->timeout_s;
  int64_t deadline = now_ms() + (int64_t)timeout_s * 1000;
  int st;
  for (long pause_ms = 1;; pause_ms = pause_ms < 50 ? pause_ms * 2 : 50) {
    pid_t r = waitpid(c, &st, WNOHANG | __WCLONE);
    if (r == c) break;
    if (r < 0 && errno != EINTR) return snprintf(why, size, "command: wait: %s", strerror(errno)), false;
    if (now_ms() >= deadline) {
      kill(-c, SIGKILL);
      kill(c, SIGKILL);
      waitpid(c, &st, __WCLONE);
      return snprintf(why, size, "command: timed out after %u s", timeout_s), false;
    }
    struct timespec ts = {0, pause_ms * 1000000L};
    nanosleep(&ts, NULL);
  }
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  if (code == 0) return true;
  if (code > 128) snprintf(why, size, "command: killed by signal %d", code - 128);
  else if (WEXITSTATUS(st) == 126) snprintf(why, size, "command: could not join the job's cgroup or user");
  else if (WEXITSTATUS(st) == 127) snprintf(why, size, "command: cannot execute %.90s", h->command[0]);
  else snprintf(why, size, "command: exit %d", code);
  return false;
}

static bool check_command(const struct px_health_target *t, char *why, size_t size) {
  struct cmd_prep *p = calloc(1, sizeof *p);
  char *stack = mmap(NULL, CMD_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  bool ok = false;
  if (!p || stack == MAP_FAILED) {
    snprintf(why, size, "command: out of memory");
    goto out;
  }
  p->t = t;
  cmd_cgroup(p);
  p->change_user = geteuid() == 0 || t->uid != geteuid();
  p->ngroups = MAX_GROUPS;
  if (p->change_user && getgrouplist(t->user, t->gid, p->groups, &p->ngroups) < 0) {
    snprintf(why, size, "command: more than %d groups for %s", MAX_GROUPS, t->user);
    goto out;
  }
  p->envp[0] = "PATH=/usr/local/bin:/usr/bin:/bin";
  /* no exit signal and no exec: only a __WCLONE wait sees it (see the top of the file) */
  pid_t c = clone(cmd_middle, stack + CMD_STACK, 0, p);
  if (c < 0) snprintf(why, size, "command: clone: %s", strerror(errno));
  else ok = cmd_wait(c, &t->check, why, size);
out:
  if (stack != MAP_FAILED) munmap(stack, CMD_STACK);
  free(p);
  return ok;
}

bool px_health_run(const struct px_health_target *t, char *why, size_t size) {
  switch (t->check.type) {
    case PX_HEALTH_HTTP: return check_http(t, why, size);
    case PX_HEALTH_TCP: return check_tcp(t, why, size);
    case PX_HEALTH_COMMAND: return check_command(t, why, size);
    default: return true;
  }
}
