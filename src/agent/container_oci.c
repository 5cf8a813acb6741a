/*
 * container_oci.c - the OCI runtime configuration of one task (container.h
 * says what it contains and why), built with jansson.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "agent/container.h"
#include "agent/container_int.h"

#define NVIDIA_MAJOR 195 /* the driver's character major: /dev/nvidiaN is 195:N, nvidiactl 195:255 */

static json_t *strs(const char *const *v) {
  json_t *a = json_array();
  for (; a && *v; v++) json_array_append_new(a, json_string(*v));
  return a;
}

static json_t *mount_of(const char *dst, const char *type, const char *src, const char *const *opts) {
  return json_pack("{ss ss ss so}", "destination", dst, "type", type, "source", src, "options", strs(opts));
}

/* The standard file systems: what every process expects to find. */
static void add_std_mounts(json_t *m) {
  static const char *const proc[] = {"nosuid", "noexec", "nodev", NULL};
  static const char *const dev[] = {"nosuid", "strictatime", "mode=755", "size=65536k", NULL};
  static const char *const pts[] = {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", NULL};
  static const char *const shm[] = {"nosuid", "nodev", "mode=1777", NULL};
  static const char *const sys[] = {"rbind", "nosuid", "noexec", "nodev", "ro", NULL};
  static const char *const tmp[] = {"nosuid", "nodev", "mode=1777", NULL};
  json_array_append_new(m, mount_of("/proc", "proc", "proc", proc));
  json_array_append_new(m, mount_of("/dev", "tmpfs", "tmpfs", dev));
  json_array_append_new(m, mount_of("/dev/pts", "devpts", "devpts", pts));
  json_array_append_new(m, mount_of("/dev/shm", "tmpfs", "shm", shm));
  json_array_append_new(m, mount_of("/sys", "none", "/sys", sys));
  json_array_append_new(m, mount_of("/tmp", "tmpfs", "tmpfs", tmp));
  /* names and resolvers of the host: the tasks share its network */
  static const char *const ro[] = {"rbind", "ro", "nosuid", "nodev", NULL};
  struct stat st;
  if (stat("/etc/hosts", &st) == 0) json_array_append_new(m, mount_of("/etc/hosts", "none", "/etc/hosts", ro));
  if (stat("/etc/resolv.conf", &st) == 0)
    json_array_append_new(m, mount_of("/etc/resolv.conf", "none", "/etc/resolv.conf", ro));
}

static void add_user_mounts(json_t *m, const struct px_ctr *c) {
  const struct px_ctr_mounts *um = &c->mounts;
  for (size_t i = 0; i < um->n; i++) {
    const struct px_ctr_mount *u = &um->v[i];
    const char *opts[8];
    int n = 0;
    opts[n++] = "rbind";
    opts[n++] = u->ro ? "ro" : "rw";
    opts[n++] = u->propagation;
    if (u->nosuid) opts[n++] = "nosuid";
    if (u->nodev) opts[n++] = "nodev";
    if (u->noexec) opts[n++] = "noexec";
    opts[n] = NULL;
    json_array_append_new(m, mount_of(u->dst, "none", c->stage[i], opts)); /* the source, opened as the user */
  }
}

static json_t *device(const char *path, unsigned major_no, unsigned minor_no) {
  return json_pack("{ss ss sI sI si si si}", "path", path, "type", "c", "major", (json_int_t)major_no, "minor",
                   (json_int_t)minor_no, "fileMode", 0666, "uid", 0, "gid", 0);
}

/* The job's GPUs as device nodes: the host's when it has them, else the
 * driver's numbering (emulated GPUs have no device files). */
static json_t *gpu_devices(const struct px_launch *l) {
  json_t *d = json_array();
  char path[64];
  struct stat st;
  for (uint32_t i = 0; d && i < l->ngpus; i++) {
    snprintf(path, sizeof path, "/dev/nvidia%u", l->gpus[i]);
    bool host = stat(path, &st) == 0 && S_ISCHR(st.st_mode);
    json_array_append_new(d, device(path, host ? major(st.st_rdev) : NVIDIA_MAJOR,
                                    host ? minor(st.st_rdev) : l->gpus[i]));
  }
  static const char *const shared[] = {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"};
  for (size_t i = 0; d && l->ngpus && i < sizeof shared / sizeof shared[0]; i++)
    if (stat(shared[i], &st) == 0 && S_ISCHR(st.st_mode))
      json_array_append_new(d, device(shared[i], major(st.st_rdev), minor(st.st_rdev)));
  return d;
}

static bool env_name_in(char *const *env, const char *kv) {
  size_t len = strcspn(kv, "=");
  for (; env && *env; env++)
    if (!strncmp(*env, kv, len) && (*env)[len] == '=') return true;
  return false;
}

/* The job's environment over the image's, but for the variables the image
 * sets and --container-env does not name (pyxis' rule). */
static json_t *merged_env(const struct px_ctr *c, const struct px_launch *l, char *const *env) {
  json_t *a = json_array();
  for (char *const *e = env; a && e && *e; e++) {
    size_t len = strcspn(*e, "=");
    if (!strncmp(*e, "SLURM_TASK_PID=", 15)) continue; /* the runtime's child is the task: not known here */
    if (env_name_in(c->img_env, *e) && !px_ctr_env_listed(l->container_env, *e, len)) continue;
    json_array_append_new(a, json_string(*e));
  }
  for (char *const *e = c->img_env; a && e && *e; e++) {
    size_t len = strcspn(*e, "=");
    if (px_ctr_env_listed(l->container_env, *e, len) && env_name_in(env, *e)) continue;
    json_array_append_new(a, json_string(*e));
  }
  return a;
}

static json_t *process(const struct px_ctr *c, const struct px_launch *l, char *const *env, const char *script,
                       const gid_t *groups, int ngroups) {
  json_t *gids = json_array();
  for (int i = 0; gids && i < ngroups; i++) json_array_append_new(gids, json_integer(groups[i]));
  json_t *user = json_pack("{sI sI so}", "uid", (json_int_t)l->uid, "gid", (json_int_t)l->gid, "additionalGids", gids);
  static const char *const none[] = {NULL};
  json_t *caps = json_pack("{so so so so}", "bounding", strs(none), "effective", strs(none), "permitted",
                           strs(none), "ambient", strs(none));
  const char *batch[] = {PX_CTR_SCRIPT, NULL};
  json_t *args = strs(script ? batch : (const char *const *)l->argv);
  return json_pack("{sb so so so ss so sb}", "terminal", 0, "user", user, "args", args, "env",
                   merged_env(c, l, env), "cwd", c->workdir, "capabilities", caps, "noNewPrivileges", 1);
}

static json_t *linux_part(const struct px_launch *l) {
  static const char *const masked[] = {"/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                                       "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
                                       "/proc/scsi", "/sys/firmware", NULL};
  static const char *const ro[] = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL};
  return json_pack("{s[{ss}] so so so}", "namespaces", "type", "mount", "devices", gpu_devices(l), "maskedPaths",
                   strs(masked), "readonlyPaths", strs(ro));
}

json_t *px_ctr_config(const struct px_ctr *c, const struct px_launch *l, char *const *env, const char *script,
                      const gid_t *groups, int ngroups) {
  json_t *mounts = json_array();
  if (!mounts) return NULL;
  add_std_mounts(mounts);
  add_user_mounts(mounts, c);
  static const char *const sro[] = {"bind", "ro", "nosuid", "nodev", NULL};
  if (script) json_array_append_new(mounts, mount_of(PX_CTR_SCRIPT, "none", script, sro));
  return json_pack("{ss so s{ss sb} so so}", "ociVersion", "1.0.2", "process",
                   process(c, l, env, script, groups, ngroups), "root", "path", c->img.rootfs, "readonly", 1,
                   "mounts", mounts, "linux", linux_part(l));
}
