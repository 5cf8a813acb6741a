/* oci_image.c - finding, unpacking and caching container images (oci_image.h). */
#include "agent/oci_image.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DIGEST_HEX 64
#define KEY_MAX 80

/* Everything the user-side child works with. */
struct job {
  const struct px_image_req *r;
  char path[PATH_MAX];       /* the image, resolved */
  char tag[256];             /* NAME:TAG looked up: the layout's ref.name, else "" */
  struct stat st;
  char userdir[PATH_MAX];    /* CACHE/<uid>/work: the user's (unpacking, memos) */
  char pubdir[PATH_MAX];     /* CACHE/<uid>: root's, the published images */
  char key[KEY_MAX];         /* "sha256-<hex>" */
  char manifest_hex[DIGEST_HEX + 1];
  char *err;
  size_t errlen;
};

/* "ContainerImage: REF: what" into the job's error; -1. */
__attribute__((format(printf, 2, 3))) static int fail(struct job *j, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(j->err, j->errlen, "ContainerImage: %s: %s", j->r->ref, what);
  return -1;
}

static bool hex64(const char *s) {
  for (int i = 0; i < DIGEST_HEX; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  return s[DIGEST_HEX] == '\0';
}

/* "sha256:<hex>" into hex; false when it is not that. */
static bool digest_hex(const char *d, char *hex) {
  if (!d || strncmp(d, "sha256:", 7) || !hex64(d + 7)) return false;
  memcpy(hex, d + 7, DIGEST_HEX + 1);
  return true;
}

/* ---- where the image is ---- */

static bool try_path(struct job *j, const char *fmt, const char *a, const char *b) {
  snprintf(j->path, sizeof j->path, fmt, a, b);
  return stat(j->path, &j->st) == 0;
}

static int resolve(struct job *j) {
  const struct px_image_req *r = j->r;
  if (strchr(r->ref, '/')) {
    if (r->ref[0] == '/' ? try_path(j, "%s%s", r->ref, "") : try_path(j, "%s/%s", r->base_dir, r->ref)) return 0;
    return fail(j, errno == EACCES ? "permission denied" : "no such image");
  }
  if (!r->image_dir || !r->image_dir[0])
    return fail(j, "no such image (not a path, and this node has no image directory)");
  if (try_path(j, "%s/%s", r->image_dir, r->ref) || try_path(j, "%s/%s.tar", r->image_dir, r->ref)) return 0;
  const char *colon = strchr(r->ref, ':');
  if (colon && colon > r->ref) { /* NAME:TAG: the layout NAME, its manifest tagged TAG */
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(colon - r->ref), r->ref);
    snprintf(j->tag, sizeof j->tag, "%s", colon + 1);
    if (try_path(j, "%s/%s", r->image_dir, name) && S_ISDIR(j->st.st_mode)) return 0;
  }
  return fail(j, "no such image in %s", r->image_dir);
}

/* ---- OCI layout ---- */

static bool tag_matches(json_t *m, const char *tag) {
  json_t *ann = json_object_get(m, "annotations");
  const char *n = json_string_value(json_object_get(ann, "org.opencontainers.image.ref.name"));
  return !*tag || (n && !strcmp(n, tag));
}

static int oci_key(struct job *j) {
  char p[PATH_MAX + 16];
  snprintf(p, sizeof p, "%s/index.json", j->path);
  json_t *idx = json_load_file(p, 0, NULL);
  if (!idx) return fail(j, "not an OCI image layout (no readable index.json) nor a docker-archive tar");
  json_t *ms = json_object_get(idx, "manifests"), *m;
  size_t i;
  int rc = *j->tag ? fail(j, "no manifest tagged %s in index.json", j->tag) : fail(j, "index.json lists no manifest");
  json_array_foreach(ms, i, m) {
    if (!tag_matches(m, j->tag)) continue;
    if (!digest_hex(json_string_value(json_object_get(m, "digest")), j->manifest_hex)) {
      rc = fail(j, "index.json: a manifest digest is not sha256:<64 hex digits>");
      break;
    }
    snprintf(j->key, sizeof j->key, "sha256-%s", j->manifest_hex);
    rc = 0;
    break;
  }
  json_decref(idx);
  return rc;
}

static int blob_path(const struct job *j, json_t *desc, char *out, size_t n) {
  char hex[DIGEST_HEX + 1];
  if (!digest_hex(json_string_value(json_object_get(desc, "digest")), hex)) return -1;
  snprintf(out, n, "%s/blobs/sha256/%s", j->path, hex);
  return 0;
}

/* Copies the config blob (JSON) to dst, as JSON: a blob that does not parse is refused. */
static int copy_config(struct job *j, const char *src, const char *dst) {
  json_t *c = json_load_file(src, 0, NULL);
  int rc = c && json_is_object(c) && json_dump_file(c, dst, JSON_COMPACT) == 0 ? 0 : -1;
  json_decref(c);
  return rc ? fail(j, "the image's configuration %s is not JSON", src) : 0;
}

static int apply_layers(struct job *j, json_t *layers, const char *base, const char *tmp, bool oci) {
  char rootfs[PATH_MAX + 16], layer[PATH_MAX * 2], why[768];
  snprintf(rootfs, sizeof rootfs, "%s/rootfs", tmp);
  size_t i;
  json_t *l;
  json_array_foreach(layers, i, l) {
    if (oci ? blob_path(j, l, layer, sizeof layer) != 0 : !json_is_string(l) || strstr(json_string_value(l), ".."))
      return fail(j, "a layer's name or digest is not valid");
    if (!oci) snprintf(layer, sizeof layer, "%s/%s", base, json_string_value(l));
    if (px_layer_apply(rootfs, layer, why, sizeof why)) return fail(j, "%s", why);
  }
  return 0;
}

static int oci_unpack(struct job *j, const char *tmp) {
  char p[PATH_MAX * 2], cfg[PATH_MAX + 16];
  snprintf(p, sizeof p, "%s/blobs/sha256/%s", j->path, j->manifest_hex);
  json_t *man = json_load_file(p, 0, NULL);
  if (!man) return fail(j, "the manifest %s is missing or not JSON", p);
  json_t *layers = json_object_get(man, "layers");
  int rc = json_is_array(layers) ? 0 : fail(j, "the manifest has no layers");
  if (!rc && blob_path(j, json_object_get(man, "config"), p, sizeof p))
    rc = fail(j, "the manifest's config digest is not valid");
  snprintf(cfg, sizeof cfg, "%.4000s/config.json", tmp);
  if (!rc) rc = copy_config(j, p, cfg);
  if (!rc) rc = apply_layers(j, layers, j->path, tmp, true);
  json_decref(man);
  return rc;
}

/* ---- docker archive ---- */

static void memo_path(const struct job *j, char *out, size_t n) {
  snprintf(out, n, "%s/by-file/%llx-%llx-%llx-%lld.%ld", j->userdir, (unsigned long long)j->st.st_dev,
           (unsigned long long)j->st.st_ino, (unsigned long long)j->st.st_size, (long long)j->st.st_mtim.tv_sec,
           j->st.st_mtim.tv_nsec);
}

/* docker's image id: the config's file name in manifest.json, "<hex>.json" or "blobs/sha256/<hex>". */
static int archive_key_of(struct job *j, json_t *man) {
  const char *c = json_string_value(json_object_get(json_array_get(man, 0), "Config"));
  const char *base = c ? (strrchr(c, '/') ? strrchr(c, '/') + 1 : c) : NULL;
  char hex[DIGEST_HEX + 8];
  snprintf(hex, sizeof hex, "%.64s", base ? base : "");
  if (!base || strlen(base) < DIGEST_HEX || !hex64(hex)) return fail(j, "manifest.json names no image config");
  snprintf(j->key, sizeof j->key, "sha256-%s", hex);
  return 0;
}

static int archive_key(struct job *j) {
  char memo[PATH_MAX + 128];
  memo_path(j, memo, sizeof memo);
  FILE *f = fopen(memo, "r");
  if (f) {
    bool ok = fgets(j->key, sizeof j->key, f) && !strncmp(j->key, "sha256-", 7) && hex64(j->key + 7);
    fclose(f);
    if (ok) return 0;
  }
  char tmpl[PATH_MAX + 32];
  snprintf(tmpl, sizeof tmpl, "%s/.manifest.XXXXXX", j->userdir);
  int fd = mkstemp(tmpl);
  if (fd < 0) return fail(j, "cannot write into the image cache");
  char *argv[] = {"tar", "-xOf", j->path, "manifest.json", NULL};
  int st = px_run_wait(argv, fd);
  if (st != 0) { /* an archive written with "./" before its names */
    argv[3] = "./manifest.json";
    st = ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0 ? px_run_wait(argv, fd) : -1;
  }
  close(fd);
  json_t *man = st == 0 ? json_load_file(tmpl, 0, NULL) : NULL;
  unlink(tmpl);
  if (!man) return fail(j, "not an OCI image layout nor a docker-archive tar (no manifest.json)");
  int rc = archive_key_of(j, man);
  json_decref(man);
  return rc;
}

static void memo_write(const struct job *j) {
  char memo[PATH_MAX + 128], tmp[PATH_MAX + 160], dir[PATH_MAX + 16];
  snprintf(dir, sizeof dir, "%s/by-file", j->userdir);
  mkdir(dir, 0700);
  memo_path(j, memo, sizeof memo);
  snprintf(tmp, sizeof tmp, "%s.%d", memo, (int)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) return;
  bool ok = fprintf(f, "%s\n", j->key) > 0;
  if (fclose(f) == 0 && ok) rename(tmp, memo);
  else unlink(tmp);
}

static int archive_unpack(struct job *j, const char *tmp) {
  char ar[PATH_MAX + 16], p[PATH_MAX * 2], cfg[PATH_MAX + 16];
  snprintf(ar, sizeof ar, "%.4000s/archive", tmp);
  if (mkdir(ar, 0700)) return fail(j, "cannot write into the image cache");
  char *argv[] = {"tar", "-xf", j->path, "-C", ar, "--no-same-owner", NULL};
  if (px_run_wait(argv, -1) != 0) return fail(j, "cannot unpack the docker archive");
  snprintf(p, sizeof p, "%s/manifest.json", ar);
  json_t *man = json_load_file(p, 0, NULL), *first = json_array_get(man, 0);
  const char *c = json_string_value(json_object_get(first, "Config"));
  int rc = c && !strstr(c, "..") ? 0 : fail(j, "manifest.json names no image config");
  snprintf(p, sizeof p, "%s/%s", ar, c ? c : "");
  snprintf(cfg, sizeof cfg, "%.4000s/config.json", tmp);
  if (!rc) rc = copy_config(j, p, cfg);
  if (!rc) rc = apply_layers(j, json_object_get(first, "Layers"), ar, tmp, false);
  json_decref(man);
  px_rm_tree(ar);
  return rc;
}

/* ---- the user's side ---- */

/* Into CACHE/<uid>/work/.tmp.<pid>, which the parent then publishes. */
static int unpack(struct job *j, bool *unpacked) {
  char tmp[PATH_MAX + 32], rootfs[PATH_MAX + 48];
  snprintf(tmp, sizeof tmp, "%s/.tmp.%d", j->userdir, (int)getpid());
  px_rm_tree(tmp); /* a crashed unpack of a process with our pid */
  snprintf(rootfs, sizeof rootfs, "%s/rootfs", tmp);
  if (mkdir(tmp, 0700) || mkdir(rootfs, 0755)) return fail(j, "cannot write into the image cache");
  int rc = S_ISDIR(j->st.st_mode) ? oci_unpack(j, tmp) : archive_unpack(j, tmp);
  if (!rc) return *unpacked = true, 0;
  px_rm_tree(tmp);
  return rc;
}

static int as_user(struct job *j, bool *unpacked) {
  if (resolve(j)) return -1;
  int rc = S_ISDIR(j->st.st_mode) ? oci_key(j) : S_ISREG(j->st.st_mode) ? archive_key(j)
                                                 : fail(j, "not a directory or a file");
  if (rc) return rc;
  char final[PATH_MAX + KEY_MAX];
  snprintf(final, sizeof final, "%s/%s", j->pubdir, j->key);
  struct stat st;
  if (stat(final, &st) != 0 && (rc = unpack(j, unpacked))) return rc;
  if (!S_ISDIR(j->st.st_mode)) memo_write(j);
  return 0;
}

static int drop_to_user(const struct px_image_req *r) {
  if (initgroups(r->user, r->gid) != 0 || setgid(r->gid) != 0 || setuid(r->uid) != 0) return -1;
  return r->uid != 0 && setuid(0) == 0 ? -1 : 0;
}

/* A directory of owner uid and this mode, made when missing; 0 or -1. */
static int own_dir(const char *dir, mode_t mode, uid_t uid, gid_t gid) {
  if (mkdir(dir, mode) != 0 && errno != EEXIST) return -1;
  struct stat st;
  if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return -1;
  if ((st.st_uid != uid || st.st_gid != gid) && lchown(dir, uid, gid) != 0) return -1;
  return (st.st_mode & 07777) == mode || chmod(dir, mode) == 0 ? 0 : -1;
}

/* CACHE (root's), CACHE/<uid> (root's: the user cannot swap a published
 * image for a symlink) and CACHE/<uid>/work (the user's). */
static int make_userdir(const struct px_image_req *r, char *pub, char *work, size_t n) {
  mkdir(r->cache_dir, 0711);
  snprintf(pub, n, "%.4000s/%u", r->cache_dir, (unsigned)r->uid);
  snprintf(work, n, "%.4000s/work", pub);
  return own_dir(pub, 0755, 0, 0) || own_dir(work, 0700, r->uid, r->gid) ? -1 : 0;
}

/* Runs px_rm_tree(path) as the user: a tree the user can change under us is
 * never walked by root. */
static void rm_as_user(const struct px_image_req *r, const char *path) {
  pid_t c = fork();
  if (c == 0) _exit(drop_to_user(r) || px_rm_tree(path) ? 1 : 0);
  while (c > 0 && waitpid(c, NULL, 0) < 0 && errno == EINTR) {}
}

/* Moves what the child unpacked (work/.tmp.<pid>) under CACHE/<uid>/<key>:
 * its two entries into a root-owned directory first, checked there (a
 * symlink the user swapped in is refused), then that directory renamed into
 * place. Another job that published the same key first wins: ours goes back
 * to the user's side and is removed as the user. */
static int publish(const struct px_image_req *r, const char *pub, const char *work, pid_t c, const char *final) {
  char tmp[PATH_MAX], stage[PATH_MAX], a[PATH_MAX + 16], b[PATH_MAX + 16];
  snprintf(tmp, sizeof tmp, "%.4000s/.tmp.%d", work, (int)c);
  snprintf(stage, sizeof stage, "%.4000s/.pub.%d", pub, (int)c);
  static const char *const names[] = {"rootfs", "config.json"};
  int rc = mkdir(stage, 0755);
  struct stat st[2];
  for (int i = 0; !rc && i < 2; i++) {
    snprintf(a, sizeof a, "%s/%s", tmp, names[i]);
    snprintf(b, sizeof b, "%s/%s", stage, names[i]);
    rc = rename(a, b) || lstat(b, &st[i]) ? -1 : 0;
  }
  if (!rc && (!S_ISDIR(st[0].st_mode) || !S_ISREG(st[1].st_mode))) rc = -1;
  if (!rc && rename(stage, final) != 0) rc = errno == EEXIST || errno == ENOTEMPTY ? 1 : -1;
  if (rc) { /* back to the user's side, to be removed there */
    snprintf(a, sizeof a, "%s/rootfs", stage);
    snprintf(b, sizeof b, "%s/rootfs", tmp);
    rename(a, b);
    snprintf(a, sizeof a, "%s/config.json", stage);
    unlink(a);
    rmdir(stage);
  }
  rm_as_user(r, tmp);
  return rc < 0 ? -1 : 0; /* 1: the same image is there, whole */
}

/* The child: "K key U" (U: 1 when it unpacked) or "E message" on fd. */
static __attribute__((noreturn)) void child(const struct px_image_req *r, const char *pub, const char *work, int fd) {
  static char err[1024];
  struct job j = {.r = r, .err = err, .errlen = sizeof err};
  snprintf(j.userdir, sizeof j.userdir, "%s", work);
  snprintf(j.pubdir, sizeof j.pubdir, "%s", pub);
  bool unpacked = false;
  umask(022);
  int rc = drop_to_user(r) ? (snprintf(err, sizeof err, "ContainerImage: %s: cannot become %s", r->ref, r->user), -1)
                           : as_user(&j, &unpacked);
  if (rc) dprintf(fd, "E %s", err);
  else dprintf(fd, "K %s %d", j.key, unpacked);
  _exit(rc ? 1 : 0);
}

int px_image_prepare(const struct px_image_req *r, struct px_image *out, char *err, size_t errlen) {
  char userdir[PATH_MAX], work[PATH_MAX], msg[1200] = "";
  memset(out, 0, sizeof *out);
  if (make_userdir(r, userdir, work, sizeof userdir))
    return snprintf(err, errlen, "ContainerImage: %s: cannot make the image cache in %s", r->ref, r->cache_dir), -1;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return snprintf(err, errlen, "ContainerImage: %s: pipe: %s", r->ref, strerror(errno)), -1;
  pid_t c = fork();
  if (c == 0) close(fds[0]), child(r, userdir, work, fds[1]);
  close(fds[1]);
  size_t len = 0;
  ssize_t n;
  while (c > 0 && len < sizeof msg - 1 && (n = read(fds[0], msg + len, sizeof msg - 1 - len)) != 0)
    if (n > 0) len += (size_t)n;
    else if (errno != EINTR) break;
  close(fds[0]);
  int st = -1;
  while (c > 0 && waitpid(c, &st, 0) < 0 && errno == EINTR) {}
  msg[len] = '\0';
  char key[KEY_MAX];
  int unpacked = 0;
  if (c < 0 || msg[0] != 'K' || sscanf(msg, "K %79s %d", key, &unpacked) != 2) {
    snprintf(err, errlen, "%s", msg[0] == 'E' ? msg + 2 : "ContainerImage: the image could not be prepared");
    return -1;
  }
  snprintf(out->dir, sizeof out->dir, "%.4000s/%.79s", userdir, key);
  if (unpacked && publish(r, userdir, work, c, out->dir))
    return snprintf(err, errlen, "ContainerImage: %s: the unpacked image could not be put into the cache", r->ref), -1;
  snprintf(out->rootfs, sizeof out->rootfs, "%.4080s/rootfs", out->dir);
  snprintf(out->config, sizeof out->config, "%.4080s/config.json", out->dir);
  out->unpacked = unpacked != 0;
  return 0;
}
