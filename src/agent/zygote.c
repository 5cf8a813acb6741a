/* zygote.c - the agent's supervisor factory (zygote.h). */
#include "agent/zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* The supervisor: what `phalanx agent --supervise DIR` would have done. */
static void supervisor(int fd, const char *jobdir) {
  close(fd);
  default_signals();
  px_log_set_tag("supervisor");
  exit(px_supervise_main(jobdir));
}

/* The go-between: forks the supervisor, tells the agent its pid, exits. */
static void between(int fd, const char *jobdir) {
  pid_t s = fork();
  if (s == 0) supervisor(fd, jobdir);
  int32_t ans = s > 0 ? (int32_t)s : -(int32_t)errno;
  if (send(fd, &ans, sizeof ans, MSG_NOSIGNAL) < 0) { /* the agent is gone: the supervisor runs on */ }
  _exit(0);
}

static void zygote_main(int fd, pid_t agent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != agent) _exit(0); /* the agent died before the line above */
  prctl(PR_SET_NAME, "px-zygote");
  default_signals();
  signal(SIGPIPE, SIG_IGN);
  char dir[PATH_MAX];
  for (;;) {
    ssize_t n = recv(fd, dir, sizeof dir - 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(0);
    dir[n] = '\0';
    pid_t c = fork();
    if (c == 0) between(fd, dir);
    if (c < 0) {
      int32_t ans = -(int32_t)errno;
      if (send(fd, &ans, sizeof ans, MSG_NOSIGNAL) < 0) _exit(0);
      continue;
    }
    while (waitpid(c, NULL, 0) < 0 && errno == EINTR) {}
  }
}

int px_zygote_start(struct px_zygote *z) {
  z->pid = 0;
  z->fd = -1;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return PX_EIO;
  pid_t agent = getpid(), c = fork();
  if (c < 0) {
    close(sv[0]);
    close(sv[1]);
    return PX_EIO;
  }
  if (c == 0) {
    /* keep stdout/stderr (the agent's log) and the socket, nothing else */
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nul > 0) dup2(nul, 0);
    int fd = dup2(sv[1], 3) == 3 ? 3 : -1;
    if (fd < 0) _exit(0);
    close_range(4, ~0U, 0);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    zygote_main(fd, agent);
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
