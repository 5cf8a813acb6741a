/* proxy_hap.c - running and driving HAProxy (proxy_hap.h). */
#include "agent/proxy_hap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/jobdir.h"
#include "util/error.h"

extern char **environ;

void px_hap_init(struct px_hap *h, const char *bin, const char *dir) {
  memset(h, 0, sizeof *h);
  snprintf(h->bin, sizeof h->bin, "%s", bin);
  snprintf(h->dir, sizeof h->dir, "%s", dir);
  snprintf(h->cfg, sizeof h->cfg, "%s/haproxy.cfg", dir);
  snprintf(h->master, sizeof h->master, "%s/master.sock", dir);
  snprintf(h->admin, sizeof h->admin, "%s/admin.sock", dir);
}

static int sock_talk(const char *path, const char *cmd, char **resp) {
  if (resp) *resp = NULL;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    if (fd >= 0) close(fd);
    return PX_ECONNECT;
  }
  struct timeval tv = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  size_t len = strlen(cmd);
  char *line = malloc(len + 2);
  int rc = line ? 0 : PX_ENOMEM;
  if (line) {
    memcpy(line, cmd, len);
    line[len] = '\n';
    if (write(fd, line, len + 1) != (ssize_t)(len + 1)) rc = PX_EIO;
    free(line);
  }
  size_t cap = 4096, n = 0;
  char *buf = rc ? NULL : malloc(cap);
  for (ssize_t r = 1; buf && r > 0;) { /* HAProxy closes after a non-interactive command */
    if (n + 1024 > cap && !(buf = realloc(buf, cap *= 2))) break;
    r = read(fd, buf + n, cap - n - 1);
    if (r > 0) n += (size_t)r;
  }
  close(fd);
  if (!rc && !buf) rc = PX_ENOMEM;
  if (buf) buf[n] = '\0';
  if (resp) *resp = buf;
  else free(buf);
  return rc;
}

int px_hap_cmd(const char *sock, const char *cmd, char **resp) { return sock_talk(sock, cmd, resp); }

static long worker_pid(const struct px_hap *h) {
  char *info = NULL;
  long pid = 0;
  if (sock_talk(h->admin, "show info", &info) == 0 && info) {
    const char *p = strstr(info, "\nPid: ");
    if (p) pid = strtol(p + 6, NULL, 10);
  }
  free(info);
  return pid;
}

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Until the admin socket answers with a worker other than old (10 s). */
static int wait_worker(struct px_hap *h, long old, char *why, size_t size) {
  for (int i = 0; i < 1000; i++) {
    long pid = worker_pid(h);
    if (pid > 0 && pid != old) {
      h->worker = pid;
      return 0;
    }
    if (!px_hap_alive(h)) return snprintf(why, size, "haproxy exited; see %s/haproxy.log", h->dir), PX_EIO;
    nap_ms(10);
  }
  return snprintf(why, size, "haproxy's worker did not answer on %s within 10 s", h->admin), PX_ETIMEOUT;
}

static int write_cfg(struct px_hap *h, const char *text, char *why, size_t size) {
  int rc = px_file_put(h->dir, "haproxy.cfg", text);
  if (rc) snprintf(why, size, "cannot write %s", h->cfg);
  return rc;
}

int px_spawn_logged(char *const *argv, const char *log, bool own_group, pid_t *pid) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | (own_group ? POSIX_SPAWN_SETPGROUP : 0));
  int e = posix_spawnp(pid, argv[0], &fa, &at, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  return e;
}

int px_hap_start(struct px_hap *h, const char *cfg_text, char *why, size_t size) {
  int rc = write_cfg(h, cfg_text, why, size);
  if (rc) return rc;
  char log[320];
  snprintf(log, sizeof log, "%s/haproxy.log", h->dir);
  unlink(h->master);
  unlink(h->admin);
  char *argv[] = {h->bin, "-W", "-S", h->master, "-f", h->cfg, NULL};
  int e = px_spawn_logged(argv, log, false, &h->pid);
  if (e) {
    h->pid = 0;
    return snprintf(why, size, "cannot start %s: %s (install Debian's haproxy package)", h->bin, strerror(e)), PX_EIO;
  }
  return wait_worker(h, 0, why, size);
}

int px_hap_reload(struct px_hap *h, const char *cfg_text, char *why, size_t size) {
  int rc = write_cfg(h, cfg_text, why, size);
  if (rc) return rc;
  long old = h->worker;
  /* the master opens its CLI a little after its first worker answers */
  int tries = 0;
  while (sock_talk(h->master, "reload", NULL) != 0)
    if (++tries == 500 || !px_hap_alive(h))
      return snprintf(why, size, "haproxy's master CLI %s does not answer", h->master), PX_ECONNECT;
    else nap_ms(10);
  return wait_worker(h, old, why, size);
}

bool px_hap_alive(struct px_hap *h) {
  if (h->pid <= 0) return false;
  if (waitpid(h->pid, NULL, WNOHANG) == h->pid) h->pid = 0;
  return h->pid > 0;
}

void px_hap_stop(struct px_hap *h) {
  if (h->pid <= 0) return;
  kill(h->pid, SIGTERM); /* the master stops its workers */
  for (int i = 0; i < 500 && px_hap_alive(h); i++) nap_ms(10);
  if (h->pid > 0) {
    kill(h->pid, SIGKILL);
    waitpid(h->pid, NULL, 0);
  }
  h->pid = 0;
  unlink(h->master);
  unlink(h->admin);
}

/* The index of column name in the header "# pxname,svname,..." or -1. */
static int column(const char *header, const char *name) {
  int idx = 0;
  size_t len = strlen(name);
  for (const char *p = header + 2; p && *p && *p != '\n'; idx++) {
    if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\n')) return idx;
    p = strchr(p, ',');
    if (p) p++;
  }
  return -1;
}

static const char *field(const char *line, int idx, size_t *len) {
  for (int i = 0; i < idx && line; i++) {
    line = strpbrk(line, ",\n");
    if (!line || *line == '\n') return NULL;
    line++;
  }
  *len = line ? strcspn(line, ",\n") : 0;
  return line;
}

uint32_t px_hap_stat_parse(const char *csv, const char *prefix, struct px_hap_load *out, uint32_t cap) {
  if (!csv || strncmp(csv, "# ", 2) != 0) return 0;
  int scur = column(csv, "scur"), req = column(csv, "req_tot"), stot = column(csv, "stot");
  if (scur < 0 || (req < 0 && stot < 0)) return 0;
  uint32_t n = 0;
  for (const char *line = strchr(csv, '\n'); line && line[1] && n < cap; line = strchr(line + 1, '\n')) {
    const char *l = line + 1;
    size_t plen, slen, len;
    const char *px = field(l, 0, &plen), *sv = field(l, 1, &slen);
    if (!px || !sv || slen != 7 || strncmp(sv, "BACKEND", 7) || strncmp(px, prefix, strlen(prefix)) ||
        plen >= sizeof out->backend)
      continue;
    struct px_hap_load *o = &out[n];
    memset(o, 0, sizeof *o);
    memcpy(o->backend, px, plen);
    const char *v = field(l, scur, &len);
    if (v) o->scur = strtoull(v, NULL, 10);
    v = req >= 0 ? field(l, req, &len) : NULL;
    if ((!v || !len) && stot >= 0) v = field(l, stot, &len); /* no request count: sessions */
    if (v && len) o->req_tot = strtoull(v, NULL, 10);
    n++;
  }
  return n;
}
