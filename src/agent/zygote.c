/* zygote.c - the agent's supervisor factory (zygote.h). */
#include "agent/zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/cgroup.h"
#include "agent/supervise.h"
#include "util/error.h"
#include "util/log.h"

#define SPAWN_TIMEOUT_MS 10000

static void default_signals(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
}

/* The zygote's command-line area (/proc/self/stat's arg_start and arg_end),
 * which its supervisors overwrite with their own: a forked supervisor
 * otherwise reads as `phalanx-supervisor --zygote 3:PID` in ps and pgrep
 * -f, and outliving its agent (as it should) it looked like a zygote that
 * had not died with the agent. */
static char *args_at;
static size_t args_len;

/* Finds the area and checks that it holds inside, a string of argv. */
static void find_args(const char *inside) {
  char buf[1024], *save = NULL;
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0) close(fd);
  char *p = n > 0 ? (buf[n] = '\0', strrchr(buf, ')')) : NULL;
  unsigned long start = 0, end = 0;
  /* after the command's ")": field 3 (state) onwards; 48 and 49 are the area */
  int field = 3;
  for (char *t = p ? strtok_r(p + 1, " ", &save) : NULL; t && field <= 49; t = strtok_r(NULL, " ", &save), field++) {
    if (field == 48) start = strtoul(t, NULL, 10);
    if (field == 49) end = strtoul(t, NULL, 10);
  }
  if (start && end > start && (uintptr_t)inside >= start && (uintptr_t)inside < end) {
    args_at = (char *)(uintptr_t)start;
    args_len = end - start;
  }
}

/* "phalanx-supervisor --supervise JOBDIR" over the zygote's command line,
 * the directory cut from the left ("...") when it does not fit. */
static void retitle(const char *jobdir) {
  static const char head[] = "phalanx-supervisor --supervise ";
  size_t room = args_len ? args_len - 1 : 0, dlen = strlen(jobdir), hlen = sizeof head - 1;
  if (room < hlen + 8) return;
  bool cut = hlen + dlen > room;
  const char *tail = cut ? jobdir + dlen - (room - hlen - 3) : jobdir;
  memset(args_at, 0, args_len);
  snprintf(args_at, args_len, "%s%s%s", head, cut ? "..." : "", tail);
}

/* The supervisor: what `phalanx agent --supervise DIR` would have done. */
static void supervisor(int fd, const char *jobdir) {
  close(fd);
  retitle(jobdir);
  /* signals: the zygote's, the defaults but SIGPIPE ignored, which
   * px_supervise_main wants too; no reset per job (64 system calls) */
  px_log_set_tag("supervisor");
  int rc = px_supervise_main(jobdir);
#ifdef __SANITIZE_ADDRESS__
  exit(rc); /* LeakSanitizer checks the supervisor at exit */
#else
  fflush(NULL);
  _exit(rc); /* skips the destructors of some 40 libraries, none of which holds anything */
#endif
}

/* A fork whose child is the agent's, not the zygote's (CLONE_PARENT): the
 * agent reaps it on SIGCHLD as it did an exec'd supervisor. A raw clone
 * skips glibc's fork bookkeeping, which a single-threaded process without
 * fork handlers does not need (the child's cached thread id is the
 * zygote's; nothing in the supervisor compares it across processes). */
static pid_t fork_for_agent(void) {
  return (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_PARENT | SIGCHLD), NULL, NULL, NULL, NULL);
}

/* What each supervisor (and task) would otherwise load again. */
static void warm(const char *cg_name, const char *cg_root) {
  if (cg_name && *cg_name) px_cg_probe_remember(cg_root && *cg_root ? cg_root : NULL, cg_name);
  struct passwd *pw = getpwnam("root"); /* loads the passwd and group NSS modules */
  gid_t groups[64];
  int ngroups = 64;
  if (pw) getgrouplist(pw->pw_name, pw->pw_gid, groups, &ngroups);
  endpwent();
  endgrent();
}

int px_zygote_main(const char *fd_pid, const char *cg_name, const char *cg_root) {
  int fd = -1;
  long agent = 0;
  /* agent 1: the agent is its PID namespace's init (a container's
   * entrypoint), whose death kills every process of the namespace; the
   * zygote refused it, and such an agent started every supervisor by exec */
  if (sscanf(fd_pid, "%d:%ld", &fd, &agent) != 2 || fd < 3 || agent < 1) return 2;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != (pid_t)agent) return 0; /* the agent died before the line above */
  prctl(PR_SET_NAME, "px-zygote");
  find_args(fd_pid);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  default_signals();
  signal(SIGPIPE, SIG_IGN);
  warm(cg_name, cg_root);
  char dir[PATH_MAX];
  for (;;) {
    ssize_t n = recv(fd, dir, sizeof dir - 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    dir[n] = '\0';
    pid_t c = fork_for_agent();
    if (c == 0) supervisor(fd, dir);
    int32_t ans = c > 0 ? (int32_t)c : -(int32_t)errno;
    if (send(fd, &ans, sizeof ans, MSG_NOSIGNAL) < 0) return 0;
  }
}

/* path: phalanx-supervisor, installed beside this binary (supervisor_main.c
 * says why), or PX_ENOENT and path this binary itself. */
static int lean_binary(char *path, size_t size) {
  ssize_t len = readlink("/proc/self/exe", path, size - 1);
  if (len <= 0) return PX_EIO;
  path[len] = '\0';
  char lean[PATH_MAX];
  const char *slash = strrchr(path, '/');
  int dir = slash ? (int)(slash - path) + 1 : 0;
  if (snprintf(lean, sizeof lean, "%.*sphalanx-supervisor", dir, path) >= (int)size || access(lean, X_OK))
    return PX_ENOENT;
  memcpy(path, lean, strlen(lean) + 1);
  return 0;
}

int px_zygote_start(struct px_zygote *z, const char *cg_root, const char *cg_name, bool no_cgroup) {
  z->pid = 0;
  z->fd = -1;
  char self[PATH_MAX], arg[64];
  int found = lean_binary(self, sizeof self);
  if (found != 0 && found != PX_ENOENT) return PX_EIO;
  snprintf(arg, sizeof arg, "3:%ld", (long)getpid());
  /* phalanxd agent --zygote ..., or phalanx-supervisor --zygote ... */
  char *argv[] = {self, "agent", "--zygote", arg, no_cgroup ? NULL : (char *)cg_name,
                  cg_root && *cg_root ? (char *)cg_root : NULL, NULL};
  char **args = argv;
  if (found == 0) {
    argv[1] = self;
    args = argv + 1;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return PX_EIO;
  pid_t c = fork();
  if (c < 0) {
    close(sv[0]);
    close(sv[1]);
    return PX_EIO;
  }
  if (c == 0) {
    /* keep stdout/stderr (the agent's log) and the socket as fd 3, nothing else */
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nul > 0) dup2(nul, 0);
    if (dup2(sv[1], 3) != 3) _exit(127); /* dup2 clears close-on-exec */
    close_range(4, ~0U, 0);
    setenv("LD_BIND_NOW", "1", 1);
    default_signals();
    execv(args[0], args);
    _exit(127);
  }
  close(sv[1]);
  z->pid = c;
  z->fd = sv[0];
  return 0;
}

int px_zygote_spawn(struct px_zygote *z, const char *jobdir, pid_t *pid) {
  if (z->fd < 0) return PX_ESTATE;
  size_t len = strlen(jobdir);
  int32_t ans = 0;
  struct pollfd p = {z->fd, POLLIN, 0};
  int rc = PX_EIO;
  if (len < PATH_MAX && send(z->fd, jobdir, len, MSG_NOSIGNAL) == (ssize_t)len) {
    int n;
    while ((n = poll(&p, 1, SPAWN_TIMEOUT_MS)) < 0 && errno == EINTR) {}
    if (n == 1 && recv(z->fd, &ans, sizeof ans, 0) == (ssize_t)sizeof ans) rc = 0;
  }
  if (rc) {
    px_error("the supervisor factory stopped answering; supervisors start by exec from now on");
    px_zygote_stop(z);
    return rc;
  }
  if (ans <= 0) {
    errno = -ans;
    return PX_EAGAIN;
  }
  *pid = (pid_t)ans;
  return 0;
}

void px_zygote_stop(struct px_zygote *z) {
  if (z->fd >= 0) close(z->fd); /* end-of-file: the zygote exits */
  z->fd = -1;
  if (z->pid > 0) {
    kill(z->pid, SIGKILL);
    while (waitpid(z->pid, NULL, 0) < 0 && errno == EINTR) {}
  }
  z->pid = 0;
}
