/* dev_proxy.c - the proxy of `phalanx dev` (dev_proxy.h). */
#include "agent/dev_proxy.h"
#include "agent/proxy_hap.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned loopback_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  unsigned port = 0;
  if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

static int on_path(const char *prog) {
  const char *path = getenv("PATH");
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  for (char *save = NULL, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", d, prog);
    if (access(p, X_OK) == 0) return 1;
  }
  return 0;
}

pid_t px_dev_proxy_start(const char *self, const char *dir, const char *sock, char *addr, size_t size) {
  addr[0] = '\0';
  if (!on_path("haproxy") && !on_path("/usr/sbin/haproxy")) {
    fprintf(stderr, "phalanx dev: no haproxy, so no proxy to services (make deps, or apt-get install haproxy)\n");
    return 0;
  }
  char listen[64], run[4200], ready[4200], log[4200];
  snprintf(listen, sizeof listen, "127.0.0.1:%u", loopback_port());
  snprintf(run, sizeof run, "%s/proxy", dir);
  snprintf(ready, sizeof ready, "%s/proxy.ready", dir);
  snprintf(log, sizeof log, "%s/proxy.log", dir);
  unlink(ready);
  char *argv[] = {(char *)self, "proxy", "--server", (char *)sock, "--listen", listen, "--run-dir", run,
                  "--ready-file", ready, NULL};
  pid_t pid = 0;
  int e = px_spawn_logged(argv, log, true, &pid);
  if (e) return 0;
  struct stat st;
  for (int i = 0; i < 1000 && (stat(ready, &st) != 0 || st.st_size == 0); i++) { /* 10 s */
    if (waitpid(pid, NULL, WNOHANG) == pid) return fprintf(stderr, "phalanx dev: the proxy exited; see %s\n", log), 0;
    struct timespec ts = {0, 10000000L};
    nanosleep(&ts, NULL);
  }
  if (stat(ready, &st) != 0 || st.st_size == 0) {
    fprintf(stderr, "phalanx dev: the proxy did not start within 10 s; see %s\n", log);
    px_dev_proxy_stop(pid);
    return 0;
  }
  snprintf(addr, size, "%s", listen);
  return pid;
}

void px_dev_proxy_stop(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM); /* it stops its HAProxy */
  for (int i = 0; i < 1000; i++) {
    if (waitpid(pid, NULL, WNOHANG) != 0) return;
    struct timespec ts = {0, 10000000L};
    nanosleep(&ts, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}
