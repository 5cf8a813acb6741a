/*
 * mig_dev.c - naming a MIG instance's device nodes (mig_dev.h): read from
 * the driver's mig-minors and /proc/devices at the agent's start, written
 * to STATE/gpu_devices, and turned into a job's device denials by its
 * supervisor.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/jobdir.h"
#include "agent/mig_dev.h"
#include "util/error.h"

#define NVIDIA_MAJOR 195 /* /dev/nvidiaN */

int px_mig_caps_major(const char *text) {
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    int major, used = 0;
    if (sscanf(p, " %d nvidia-caps%n", &major, &used) == 1 && used && (p[used] == '\n' || !p[used]) &&
        major > 0 && major < 4096)
      return major;
  }
  return -1;
}

int px_mig_cap_minor(const char *text, int gpu, int gi, int ci) {
  char want[64];
  if (ci < 0) snprintf(want, sizeof want, "gpu%d/gi%d/access", gpu, gi);
  else snprintf(want, sizeof want, "gpu%d/gi%d/ci%d/access", gpu, gi, ci);
  size_t wl = strlen(want);
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    int minor;
    if (strncmp(p, want, wl) == 0 && p[wl] == ' ' && sscanf(p + wl, " %d", &minor) == 1 && minor >= 0 &&
        minor < (1 << 20))
      return minor;
  }
  return -1;
}

/* A file's text (malloc'd) by its full path. */
static char *slurp(const char *path) {
  char dir[4096];
  const char *slash = strrchr(path, '/');
  if (!slash || (size_t)(slash - path) >= sizeof dir) return NULL;
  memcpy(dir, path, (size_t)(slash - path));
  dir[slash - path] = '\0';
  return px_file_get(dir[0] ? dir : "/", slash + 1);
}

static const char *env_or(const char *name, const char *dflt) {
  const char *v = getenv(name);
  return v && *v ? v : dflt;
}

/* One instance's line: its parent, its GPU instance, its compute instance;
 * a whole GPU beside instances (not in MIG mode), its /dev/nvidiaN alone. */
static int instance_line(const struct px_gpu_info *g, const char *minors, int caps, char *line, size_t size,
                         char *why, size_t whylen) {
  if (strncmp(g->uuid, "MIG-", 4) != 0) {
    if (g->dev_minor < 0) {
      snprintf(why, whylen, "GPU %s: NVML gave no minor number", g->uuid);
      return PX_ENOENT;
    }
    snprintf(line, size, "%d:%d\n", NVIDIA_MAJOR, g->dev_minor);
    return 0;
  }
  int gi = g->dev_minor < 0 || g->mig_gi < 0 ? -1 : px_mig_cap_minor(minors, g->dev_minor, g->mig_gi, -1);
  int ci = gi < 0 || g->mig_ci < 0 ? -1 : px_mig_cap_minor(minors, g->dev_minor, g->mig_gi, g->mig_ci);
  if (ci < 0) {
    snprintf(why, whylen, "MIG instance %s (GPU %d, GI %d, CI %d): no capability minors in mig-minors", g->uuid,
             g->dev_minor, g->mig_gi, g->mig_ci);
    return PX_ENOENT;
  }
  snprintf(line, size, "%d:%d %d:%d %d:%d\n", NVIDIA_MAJOR, g->dev_minor, caps, gi, caps, ci);
  return 0;
}

int px_mig_devices_write(const struct px_node_res *r, const char *path, char *why, size_t whylen) {
  const char *mpath = env_or("PHALANX_MIG_MINORS", "/proc/driver/nvidia-caps/mig-minors");
  const char *dpath = env_or("PHALANX_PROC_DEVICES", "/proc/devices");
  char *minors = slurp(mpath), *devs = slurp(dpath);
  int caps = devs ? px_mig_caps_major(devs) : -1, rc = 0;
  char *text = calloc(r->ngpus + 1, 64);
  if (!minors || caps < 0 || !text) {
    snprintf(why, whylen, "%s", !minors ? "cannot read the MIG capability minors"
                                : caps < 0 ? "no nvidia-caps major in /proc/devices"
                                           : "out of memory");
    if (!minors) snprintf(why + strlen(why), whylen - strlen(why), " (%s)", mpath);
    rc = text ? PX_ENOENT : PX_ENOMEM;
  }
  size_t len = 0;
  for (uint32_t i = 0; !rc && i < r->ngpus; i++) {
    rc = instance_line(&r->gpus[i], minors, caps, text + len, 64, why, whylen);
    len += strlen(text + len);
  }
  if (!rc) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    if (!slash || px_file_put(dir, slash + 1, text)) rc = PX_EIO;
    if (rc) snprintf(why, whylen, "cannot write %s", path);
  }
  free(minors);
  free(devs);
  free(text);
  return rc;
}

static bool has_dev(const struct px_cg_dev *v, uint32_t n, struct px_cg_dev d) {
  for (uint32_t i = 0; i < n; i++)
    if (v[i].major == d.major && v[i].minor == d.minor) return true;
  return false;
}

/* The devices of one line into v (no duplicates). */
static void line_devs(const char *line, struct px_cg_dev *v, uint32_t *n) {
  unsigned maj, min;
  int used;
  while (*n < PX_MIG_DEVS_MAX && sscanf(line, " %u:%u%n", &maj, &min, &used) == 2) {
    struct px_cg_dev d = {maj, min};
    if (!has_dev(v, *n, d)) v[(*n)++] = d;
    line += used;
  }
}

int px_mig_devices_deny(const char *path, const uint32_t *gpus, uint32_t ngpus, struct px_cg_dev *deny,
                        uint32_t *ndeny) {
  char *text = slurp(path);
  if (!text) return PX_EIO;
  struct px_cg_dev mine[PX_MIG_DEVS_MAX], all[PX_MIG_DEVS_MAX];
  uint32_t nmine = 0, nall = 0, idx = 0;
  for (char *line = text; *line; idx++) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    bool job = false;
    for (uint32_t k = 0; k < ngpus; k++) job |= gpus[k] == idx;
    line_devs(line, all, &nall);
    if (job) line_devs(line, mine, &nmine);
    if (!nl) break;
    line = nl + 1;
  }
  free(text);
  *ndeny = 0;
  for (uint32_t i = 0; i < nall; i++)
    if (!has_dev(mine, nmine, all[i])) deny[(*ndeny)++] = all[i];
  return 0;
}
