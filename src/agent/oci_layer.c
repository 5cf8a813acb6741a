/*
 * oci_layer.c - applying an image layer with the system's tar, and the
 * small process helpers the image code shares (oci_image.h).
 *
 * Why tar(1) and no library: GNU tar is on every Debian node, reads gzip
 * (and, with the zstd package, zstd) layers by itself, refuses members
 * that climb out with "..", and is what a person would run by hand to
 * check a layer. Whiteouts are the one thing it does not know: the layer's
 * listing (tar -t) names them, they are applied first (removing what lower
 * layers put there), and the extraction then skips them.
 */
#include "agent/oci_image.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"

int px_run_wait(char *const argv[], int out_fd) {
  pid_t c = fork();
  if (c < 0) return -1;
  if (c == 0) {
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    dup2(out_fd >= 0 ? out_fd : null, 1);
    dup2(null, 0);
    execvp(argv[0], argv);
    _exit(127);
  }
  int st;
  while (waitpid(c, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* argv's stdout, whole (malloc'd), or NULL; *status its exit status. */
static char *run_capture(char *const argv[], int *status) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return NULL;
  pid_t c = fork();
  if (c < 0) return close(fds[0]), close(fds[1]), NULL;
  if (c == 0) {
    dup2(fds[1], 1);
    execvp(argv[0], argv);
    _exit(127);
  }
  close(fds[1]);
  size_t len = 0, cap = 65536;
  char *buf = malloc(cap);
  ssize_t n;
  while (buf && (n = read(fds[0], buf + len, cap - len - 1)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    len += (size_t)n;
    if (cap - len < 4096) {
      char *b = realloc(buf, cap *= 2);
      if (!b) free(buf);
      buf = b;
    }
  }
  close(fds[0]);
  int st;
  while (waitpid(c, &st, 0) < 0 && errno == EINTR) {}
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (buf) buf[len] = '\0';
  return buf;
}

static int rm_one(const char *path, const struct stat *sb, int type, struct FTW *f) {
  (void)sb, (void)type, (void)f;
  return remove(path) != 0 && errno != ENOENT ? -1 : 0;
}

int px_rm_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode)) return unlink(path);
  return nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS);
}

/* Everything under dir but dir itself (an opaque whiteout). */
static int rm_below(const char *path, const struct stat *sb, int type, struct FTW *f) {
  return f->level == 0 ? 0 : rm_one(path, sb, type, f);
}

static bool has_dotdot(const char *name) {
  for (const char *p = name; *p;) {
    size_t n = strcspn(p, "/");
    if (n == 2 && p[0] == '.' && p[1] == '.') return true;
    p += n + (p[n] == '/');
  }
  return false;
}

/* One member of the listing: a whiteout is applied, anything else ignored. */
static int whiteout(const char *rootfs, char *name, char *err, size_t errlen) {
  while (name[0] == '.' && name[1] == '/') name += 2;
  while (name[0] == '/') name++;
  char *slash = strrchr(name, '/');
  const char *base = slash ? slash + 1 : name;
  if (strncmp(base, WH_PREFIX, strlen(WH_PREFIX)) != 0) return 0;
  if (has_dotdot(name)) return snprintf(err, errlen, "a layer member climbs out: %.200s", name), -1;
  char target[PATH_MAX];
  int dirlen = slash ? (int)(slash - name) : 0;
  if (!strcmp(base, WH_OPAQUE)) {
    snprintf(target, sizeof target, "%s/%.*s", rootfs, dirlen, name);
    struct stat st;
    if (lstat(target, &st) == 0 && S_ISDIR(st.st_mode) && nftw(target, rm_below, 32, FTW_DEPTH | FTW_PHYS) != 0)
      return snprintf(err, errlen, "cannot apply the opaque whiteout %.200s", name), -1;
    return 0;
  }
  snprintf(target, sizeof target, "%s/%.*s%s%s", rootfs, dirlen, name, slash ? "/" : "", base + strlen(WH_PREFIX));
  if (px_rm_tree(target) != 0) return snprintf(err, errlen, "cannot apply the whiteout %.200s", name), -1;
  return 0;
}

int px_layer_apply(const char *rootfs, const char *layer, char *err, size_t errlen) {
  char *list_argv[] = {"tar", "--quoting-style=literal", "-tf", (char *)layer, NULL};
  int st = -1;
  char *list = run_capture(list_argv, &st);
  if (!list || st != 0) {
    free(list);
    return snprintf(err, errlen, "cannot read the layer %s (not a tar?)", layer), -1;
  }
  int rc = 0;
  for (char *line = list; !rc && *line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    rc = whiteout(rootfs, line, err, errlen);
    if (!nl) break;
    line = nl + 1;
  }
  free(list);
  if (rc) return rc;
  char *x_argv[] = {"tar", "-xpf", (char *)layer, "-C", (char *)rootfs, "--no-same-owner", "--exclude=" WH_PREFIX "*", NULL};
  st = px_run_wait(x_argv, -1);
  if (st != 0) return snprintf(err, errlen, "cannot unpack the layer %s (tar exit %d)", layer, st), -1;
  return 0;
}
