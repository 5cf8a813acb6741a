/* container.c - a job's container on this node: prepare, one task's runtime command, clean up (container.h). */
#include "agent/container.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/container_int.h"

#define MAX_GROUPS 1024

/* crun refuses hybrid hosts whose v2 hierarchy has a controller (container.h). */
static bool cgroup2_has_controllers(void) {
  int fd = open("/sys/fs/cgroup/unified/cgroup.controllers", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char c;
  bool any = read(fd, &c, 1) == 1 && c != '\n';
  close(fd);
  return any;
}

/* The image configuration's Env and WorkingDir (the file is the user's: no symlink followed). */
static int read_image_config(struct px_ctr *c, const struct px_launch *l, char *err, size_t errlen) {
  int fd = open(c->img.config, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  json_t *root = fd >= 0 ? json_loadfd(fd, 0, NULL) : NULL;
  if (fd >= 0) close(fd);
  if (!root) return snprintf(err, errlen, "ContainerImage: %s: its configuration cannot be read", l->container_image), -1;
  json_t *cfg = json_object_get(root, "config"), *env = json_object_get(cfg, "Env"), *e;
  size_t n = json_array_size(env), i, k = 0;
  c->img_env = calloc(n + 1, sizeof *c->img_env);
  json_array_foreach(env, i, e) {
    const char *s = json_string_value(e);
    if (c->img_env && s && strchr(s, '=') && !(c->img_env[k++] = strdup(s))) break;
  }
  const char *wd = json_string_value(json_object_get(cfg, "WorkingDir"));
  snprintf(c->workdir, sizeof c->workdir, "%s",
           l->container_workdir ? l->container_workdir : wd && wd[0] == '/' ? wd : "/");
  json_decref(root);
  return c->img_env ? 0 : (snprintf(err, errlen, "out of memory reading the image configuration"), -1);
}

/* The staging directory and its entries' names (container.h). */
static int stage_mounts(struct px_ctr *c) {
  if (!c->mounts.n) return 0;
  snprintf(c->stage_dir, sizeof c->stage_dir, "%.4000s/ctr.%s.mnt", c->jobdir, c->tag);
  if (mkdir(c->stage_dir, 0700) != 0 && errno != EEXIST) return -1;
  if (!(c->stage = calloc(c->mounts.n, sizeof *c->stage))) return -1;
  for (size_t i = 0; i < c->mounts.n; i++)
    if (asprintf(&c->stage[i], "%s/%zu", c->stage_dir, i) < 0) return c->stage[i] = NULL, -1;
  return 0;
}

int px_ctr_prepare(struct px_ctr *c, const struct px_launch *l, const struct px_site *site, const char *jobdir,
                   const char *tag, char *err, size_t errlen) {
  memset(c, 0, sizeof *c);
  struct px_diag d;
  if (px_ctr_mounts_parse(l->container_mounts, &c->mounts, &d))
    return snprintf(err, errlen, "ContainerMounts: %s", d.msg), -1;
  struct px_image_req r = {.ref = l->container_image, .base_dir = l->workdir ? l->workdir : l->submit_dir ? l->submit_dir : "/",
                           /* the agent's --container-image-dir, else the cluster's ContainerImageDir= */
                           .image_dir = site->ctr_image_dir[0] ? site->ctr_image_dir : l->container_image_dir,
                           .cache_dir = site->ctr_cache_dir,
                           .user = l->user, .uid = l->uid, .gid = l->gid};
  if (px_image_prepare(&r, &c->img, err, errlen) || read_image_config(c, l, err, errlen)) {
    px_ctr_fini(c);
    return -1;
  }
  snprintf(c->jobdir, sizeof c->jobdir, "%s", jobdir);
  snprintf(c->tag, sizeof c->tag, "%s", tag);
  snprintf(c->state_dir, sizeof c->state_dir, "%.4000s/crun.%s", jobdir, c->tag);
  snprintf(c->runtime, sizeof c->runtime, "%s", site->ctr_runtime[0] ? site->ctr_runtime : PX_CTR_RUNTIME_DEFAULT);
  c->hide_cgroup2 = cgroup2_has_controllers();
  if ((mkdir(c->state_dir, 0700) != 0 && errno != EEXIST) || stage_mounts(c)) {
    px_ctr_fini(c);
    return snprintf(err, errlen, "cannot make the container's directories in %s", jobdir), -1;
  }
  return 0;
}

void px_ctr_fini(struct px_ctr *c) {
  if (c->state_dir[0]) px_rm_tree(c->state_dir);
  for (uint32_t i = 0; c->jobdir[0]; i++) { /* the tasks' configurations, ctr.<tag>.0.json ... */
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/ctr.%s.%u.json", c->jobdir, c->tag, i);
    if (unlink(p) != 0) break;
  }
  if (c->stage_dir[0]) rmdir(c->stage_dir); /* the tasks' tmpfs over it went with their namespaces */
  for (size_t i = 0; c->stage && i < c->mounts.n; i++) free(c->stage[i]);
  free(c->stage);
  for (char **e = c->img_env; e && *e; e++) free(*e);
  free(c->img_env);
  px_ctr_mounts_fini(&c->mounts);
  memset(c, 0, sizeof *c);
}

/* "/proc/self/fd/N" into buf (no allocation: the task's child). */
static void fd_path(char *buf, int fd) {
  static const char pre[] = "/proc/self/fd/";
  memcpy(buf, pre, sizeof pre - 1);
  char rev[12];
  int n = 0;
  do rev[n++] = (char)('0' + fd % 10), fd /= 10;
  while (fd && n < 11);
  for (int i = 0; i < n; i++) buf[sizeof pre - 1 + i] = rev[n - 1 - i];
  buf[sizeof pre - 1 + n] = '\0';
}

/* Opens src with the user's effective ids (root again after). */
static int open_as_user(const char *src, uid_t uid, gid_t gid, const gid_t *groups, int ngroups) {
  if (syscall(SYS_setgroups, (size_t)ngroups, groups) || syscall(SYS_setresgid, -1, gid, -1) ||
      syscall(SYS_setresuid, -1, uid, -1))
    return -1;
  int fd = open(src, O_PATH | O_CLOEXEC);
  int saved = errno;
  if (syscall(SYS_setresuid, -1, 0, -1) || syscall(SYS_setresgid, -1, 0, -1) || syscall(SYS_setgroups, (size_t)0, NULL))
    return fd >= 0 ? close(fd), -1 : -1;
  errno = saved;
  return fd;
}

static int stage_one(const struct px_ctr *c, size_t i, uid_t uid, gid_t gid, const gid_t *groups, int ngroups) {
  int fd = open_as_user(c->mounts.v[i].src, uid, gid, groups, ngroups);
  if (fd < 0) return -1;
  struct stat st;
  char proc[32];
  fd_path(proc, fd);
  int rc = fstat(fd, &st);
  if (!rc && S_ISDIR(st.st_mode)) rc = mkdir(c->stage[i], 0700);
  else if (!rc) rc = mknod(c->stage[i], S_IFREG | 0600, 0);
  if (!rc) rc = mount(proc, c->stage[i], NULL, MS_BIND | MS_REC, NULL);
  int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

int px_ctr_child_setup(const struct px_ctr *c, uid_t uid, gid_t gid, const gid_t *groups, int ngroups,
                       const char **what, const char **arg) {
  *arg = NULL;
  *what = "cannot make a mount namespace for the runtime";
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) return -1;
  *what = "cannot hide the cgroup v2 hierarchy from the runtime";
  if (c->hide_cgroup2 && umount2("/sys/fs/cgroup/unified", MNT_DETACH) != 0) return -1;
  *what = "cannot stage the container's mounts";
  if (c->mounts.n && mount("tmpfs", c->stage_dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") != 0) return -1;
  *what = "ContainerMounts:";
  for (size_t i = 0; i < c->mounts.n; i++) {
    *arg = c->mounts.v[i].src;
    if (stage_one(c, i, uid, gid, groups, ngroups)) return -1;
  }
  return 0;
}

int px_ctr_task(const struct px_ctr *c, const struct px_launch *l, char *const *env, const char *script,
                uint32_t local_id, struct px_ctr_task *t, char *err, size_t errlen) {
  gid_t groups[MAX_GROUPS];
  int ngroups = MAX_GROUPS;
  if (getgrouplist(l->user, l->gid, groups, &ngroups) < 0) ngroups = 0;
  json_t *cfg = px_ctr_config(c, l, env, script, groups, ngroups);
  snprintf(t->cfg, sizeof t->cfg, "%.4000s/ctr.%s.%u.json", c->jobdir, c->tag, local_id);
  int rc = cfg ? json_dump_file(cfg, t->cfg, JSON_COMPACT) : -1;
  json_decref(cfg);
  if (rc) return snprintf(err, errlen, "cannot write the container configuration %s", t->cfg), -1;
  snprintf(t->id, sizeof t->id, "px-%llu.%u.%u.%s.%u", (unsigned long long)l->job_id, l->restart_count,
           l->node_rank, c->tag, local_id);
  char *const argv[] = {(char *)c->runtime, "--root", (char *)c->state_dir, "--cgroup-manager=disabled", "run",
                        "--bundle", (char *)c->jobdir, "--config", t->cfg, "--no-new-keyring", t->id, NULL};
  memcpy(t->argv, argv, sizeof argv);
  return 0;
}
