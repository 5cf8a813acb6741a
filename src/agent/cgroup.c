/*
 * cgroup.c - per-job control groups on cgroup v1 and v2 (cgroup.h).
 *
 * The layout is found from /proc/self/mountinfo (which hierarchies exist and
 * where) and /proc/self/cgroup (where this process sits in each), so the
 * agent works unchanged under systemd, in a container, or on a hybrid host.
 */
#include "agent/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/error.h"
#include "util/log.h"

/* Where the probe reads the hierarchies and this process's place in them
 * (px_cg_set_proc_files points them at a test's fake). */
static const char *mountinfo_path = "/proc/self/mountinfo", *cgroup_path = "/proc/self/cgroup";

void px_cg_set_proc_files(const char *mountinfo, const char *cgroup) {
  mountinfo_path = mountinfo ? mountinfo : "/proc/self/mountinfo";
  cgroup_path = cgroup ? cgroup : "/proc/self/cgroup";
}

static const char *const ctl_name[PX_CG_NCTL] = {"memory", "cpuset", "pids", "devices", "cpuacct", "freezer"};
#define NVIDIA_MAJOR 195 /* /dev/nvidiaN is char 195:N (nvidiactl is 195:255) */

static int write_file(const char *dir, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int write_file(const char *dir, const char *file, const char *fmt, ...) {
  char path[PATH_MAX + 64], val[256];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(val, sizeof val, fmt, ap);
  va_end(ap);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t w = write(fd, val, (size_t)n);
  int e = w < 0 ? -errno : 0;
  close(fd);
  return e;
}

/* Reads a small file into buf; returns bytes or -errno. */
static int read_file(const char *dir, const char *file, char *buf, size_t size) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t n = read(fd, buf, size - 1);
  int e = errno;
  close(fd);
  if (n < 0) return -e;
  buf[n] = '\0';
  return (int)n;
}

static uint64_t read_u64(const char *dir, const char *file) {
  char b[64];
  if (read_file(dir, file, b, sizeof b) <= 0) return 0;
  return strtoull(b, NULL, 10);
}

/* The value after "key " in a "key value" per line file (memory.events, cpu.stat). */
static uint64_t read_keyed(const char *dir, const char *file, const char *key) {
  char b[4096];
  if (read_file(dir, file, b, sizeof b) <= 0) return 0;
  size_t klen = strlen(key);
  for (char *line = b; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    if (strncmp(line, key, klen) == 0 && line[klen] == ' ') return strtoull(line + klen + 1, NULL, 10);
  return 0;
}

/* This process's path in the hierarchy whose /proc/self/cgroup controller
 * list contains want ("" for the v2 line). */
static int own_path(const char *want, char *out, size_t size) {
  FILE *f = fopen(cgroup_path, "re");
  if (!f) return -errno;
  char line[PATH_MAX + 128];
  int rc = PX_ENOENT;
  while (rc && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) continue;
    *c2 = '\0';
    const char *ctls = c1 + 1;
    bool match = !*want ? !*ctls : false;
    for (char *tok = *want ? strtok(c1 + 1, ",") : NULL; tok && !match; tok = strtok(NULL, ","))
      match = strcmp(tok, want) == 0;
    if (match) {
      snprintf(out, size, "%s", strcmp(c2 + 1, "/") == 0 ? "" : c2 + 1);
      rc = 0;
    }
  }
  fclose(f);
  return rc;
}

/* Mount point of the v1 hierarchy carrying ctl, or of cgroup2 (ctl NULL). */
static int mount_of(const char *ctl, char *out, size_t size) {
  FILE *f = fopen(mountinfo_path, "re");
  if (!f) return -errno;
  char line[4096];
  int rc = PX_ENOENT;
  while (rc && fgets(line, sizeof line, f)) {
    char *sep = strstr(line, " - ");
    if (!sep) continue;
    char mnt[PATH_MAX], fstype[32], src[64], opts[1024];
    if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1) continue;
    if (sscanf(sep + 3, "%31s %63s %1023s", fstype, src, opts) != 3) continue;
    bool hit = false;
    if (!ctl) {
      hit = strcmp(fstype, "cgroup2") == 0;
    } else if (strcmp(fstype, "cgroup") == 0) {
      for (char *tok = strtok(opts, ","); tok && !hit; tok = strtok(NULL, ",")) hit = strcmp(tok, ctl) == 0;
    }
    if (hit) {
      snprintf(out, size, "%s", mnt);
      rc = 0;
    }
  }
  fclose(f);
  return rc;
}

/* dst = dir "/" name; PX_ERANGE when it does not fit. */
static int join(char *dst, size_t size, const char *dir, const char *name) {
  size_t a = strlen(dir), b = strlen(name);
  if (a + b + 2 > size) return PX_ERANGE;
  memcpy(dst, dir, a);
  dst[a] = '/';
  memcpy(dst + a + 1, name, b + 1);
  return 0;
}

static bool has_word(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0')) return true;
  return false;
}

static int probe_v2(struct px_cg_layout *lay, const char *root_rel, const char *name) {
  char mnt[PATH_MAX], own[PATH_MAX], ctls[512], dir[PATH_MAX + 8];
  if (mount_of(NULL, mnt, sizeof mnt) || own_path("", own, sizeof own)) return PX_EUNSUPPORTED;
  int w = snprintf(dir, sizeof dir, "%s%s", mnt, root_rel ? root_rel : own);
  if (w < 0 || (size_t)w >= sizeof dir) return PX_ERANGE;
  if (read_file(dir, "cgroup.controllers", ctls, sizeof ctls) < 0 || !has_word(ctls, "memory"))
    return PX_EUNSUPPORTED;
  lay->version = 2;
  w = snprintf(lay->base[0], sizeof lay->base[0], "%s/%s", dir, name);
  return w < 0 || (size_t)w >= sizeof lay->base[0] ? PX_ERANGE : 0;
}

/* px_cg_probe_remember's answer, for the same arguments. */
static struct {
  bool valid;
  char root[PATH_MAX], name[256];
  int rc;
  struct px_cg_layout lay;
} memo;

static bool memo_hit(const char *root_rel, const char *name) {
  return memo.valid && strcmp(memo.root, root_rel ? root_rel : "") == 0 && strcmp(memo.name, name) == 0;
}

static int probe(struct px_cg_layout *lay, const char *root_rel, const char *name) {
  memset(lay, 0, sizeof *lay);
  if (probe_v2(lay, root_rel, name) == 0) return 0;
  memset(lay, 0, sizeof *lay);
  for (int c = 0; c < PX_CG_NCTL; c++) {
    char mnt[PATH_MAX], own[PATH_MAX];
    if (mount_of(ctl_name[c], mnt, sizeof mnt) || own_path(ctl_name[c], own, sizeof own)) continue;
    if (access(mnt, W_OK) != 0) continue;
    int w = snprintf(lay->base[c], sizeof lay->base[c], "%s%s/%s", mnt, root_rel ? root_rel : own, name);
    if (w < 0 || (size_t)w >= sizeof lay->base[c]) lay->base[c][0] = '\0';
  }
  if (!lay->base[PX_CG_MEMORY][0]) return PX_EUNSUPPORTED;
  lay->version = 1;
  return 0;
}

int px_cg_probe(struct px_cg_layout *lay, const char *root_rel, const char *name) {
  if (!memo_hit(root_rel, name)) return probe(lay, root_rel, name);
  *lay = memo.lay;
  return memo.rc;
}

void px_cg_probe_remember(const char *root_rel, const char *name) {
  memo.valid = false;
  if (snprintf(memo.root, sizeof memo.root, "%s", root_rel ? root_rel : "") >= (int)sizeof memo.root ||
      snprintf(memo.name, sizeof memo.name, "%s", name) >= (int)sizeof memo.name)
    return;
  memo.rc = probe(&memo.lay, root_rel, name);
  memo.valid = true;
}

bool px_cg_constrains_devices(const struct px_cg_layout *lay) {
  return lay->version == 1 && lay->base[PX_CG_DEVICES][0];
}

/* mkdir that accepts an existing directory; cpuset levels inherit the
 * parent's cpus and mems (a v1 cpuset with empty sets refuses tasks). */
static int make_dir(const char *path, bool cpuset) {
  if (mkdir(path, 0755) != 0 && errno != EEXIST) return -errno;
  if (!cpuset) return 0;
  char parent[PATH_MAX], val[512];
  snprintf(parent, sizeof parent, "%s", path);
  char *slash = strrchr(parent, '/');
  if (!slash) return 0;
  *slash = '\0';
  const char *files[] = {"cpuset.cpus", "cpuset.mems"};
  for (int i = 0; i < 2; i++) {
    char cur[512];
    if (read_file(path, files[i], cur, sizeof cur) > 1) continue; /* already set */
    int n = read_file(parent, files[i], val, sizeof val);
    if (n <= 0) return n ? n : PX_EIO;
    val[strcspn(val, "\n")] = '\0';
    int rc = write_file(path, files[i], "%s", val);
    if (rc) return rc;
  }
  return 0;
}

/* One rule per write(2), all through one open file: the other GPUs'
 * /dev/nvidiaN, then any other devices (a MIG neighbour's). */
static int deny_gpus(const char *dir, const struct px_cg_limits *lim, char *err, size_t errlen) {
  char path[PATH_MAX + 32];
  /* a pooled group still has its previous job's rules */
  if (lim->pooled && write_file(dir, "devices.allow", "a") != 0) {
    snprintf(err, errlen, "cannot reset the device rules of %s", dir);
    return PX_EIO;
  }
  snprintf(path, sizeof path, "%s/devices.deny", dir);
  int fd = open(path, O_WRONLY | O_CLOEXEC), rc = fd < 0 ? -errno : 0;
  uint32_t i = 0, n = lim->ndeny_gpus + lim->ndeny_devs;
  char rule[64];
  for (; !rc && i < n; i++) {
    struct px_cg_dev d = i < lim->ndeny_gpus ? (struct px_cg_dev){NVIDIA_MAJOR, lim->deny_gpus[i]}
                                             : lim->deny_devs[i - lim->ndeny_gpus];
    int len = snprintf(rule, sizeof rule, "c %u:%u rwm", d.major, d.minor);
    if (write(fd, rule, (size_t)len) < 0) rc = -errno;
  }
  if (fd >= 0) close(fd);
  if (rc) snprintf(err, errlen, "cannot write device rule %s: %s", i ? rule : "", strerror(-rc));
  return rc;
}

/* v1 memory limit (with swap off) and, in a pooled group, the counters its
 * previous job left: peak and failures restart from now; a job without a
 * limit gets none back. */
static int set_memory_v1(const char *mem, const struct px_cg_limits *lim, char *err, size_t errlen) {
  if (!lim->mem_mib && !lim->pooled) return 0;
  char val[32] = "-1";
  if (lim->mem_mib) snprintf(val, sizeof val, "%llu", (unsigned long long)(lim->mem_mib << 20));
  /* memsw >= mem at every step: lift memsw first when the old limit may be lower */
  if (lim->pooled) write_file(mem, "memory.memsw.limit_in_bytes", "-1");
  int rc = write_file(mem, "memory.limit_in_bytes", "%s", val);
  /* memsw exists only when the kernel accounts swap; limit == mem means no swap */
  int sw = write_file(mem, "memory.memsw.limit_in_bytes", "%s", val);
  if (!rc && sw && sw != -ENOENT) rc = sw;
  write_file(mem, "memory.swappiness", "0"); /* refused for some groups; memsw is the hard net */
  if (!rc && lim->pooled) rc = write_file(mem, "memory.max_usage_in_bytes", "0");
  if (!rc && lim->pooled) rc = write_file(mem, "memory.failcnt", "0");
  if (rc) snprintf(err, errlen, "cannot set memory limit in %s: %s", mem, strerror(-rc));
  return rc;
}

static int create_v1(const struct px_cg_layout *lay, const char *name, const struct px_cg_limits *lim,
                     struct px_cgroup *cg, char *err, size_t errlen) {
  for (int c = 0; c < PX_CG_NCTL; c++) {
    if (!lay->base[c][0]) continue;
    /* A group that would limit nothing is the parent's limits again: the
     * job skips it (an unpinned job, one denied no device; a mkdir and an
     * rmdir less of the costlier controllers per job). */
    if ((c == PX_CG_CPUSET && !lim->cpus) || (c == PX_CG_DEVICES && !lim->ndeny_gpus && !lim->ndeny_devs)) continue;
    /* Nor a cpuacct group: the supervisor, subreaper of every process of
     * the job, counts their CPU time from its own waits (getrusage). */
    if (c == PX_CG_CPUACCT) continue;
    int rc = join(cg->path[c], sizeof cg->path[c], lay->base[c], name);
    struct stat sb;
    if (!rc && lim->pooled && stat(cg->path[c], &sb) == 0) continue; /* the slot's group, made before */
    /* the agent's level exists but for the first job: try the job's first
     * (a cpuset level must have its cpus and mems set, which make_dir sees to) */
    bool first = c == PX_CG_CPUSET || rc || mkdir(cg->path[c], 0755) != 0;
    if (!rc && first) rc = make_dir(lay->base[c], c == PX_CG_CPUSET);
    if (!rc && first) rc = make_dir(cg->path[c], c == PX_CG_CPUSET);
    if (rc) {
      snprintf(err, errlen, "cannot create %s: %s", cg->path[c], strerror(-rc));
      return PX_EIO;
    }
  }
  int rc = set_memory_v1(cg->path[PX_CG_MEMORY], lim, err, errlen);
  if (!rc && lim->cpus && cg->path[PX_CG_CPUSET][0]) {
    rc = write_file(cg->path[PX_CG_CPUSET], "cpuset.cpus", "%s", lim->cpus);
    if (rc) snprintf(err, errlen, "cannot pin to CPUs %s: %s", lim->cpus, strerror(-rc));
  }
  if (!rc && (lim->pids_max || lim->pooled) && cg->path[PX_CG_PIDS][0]) {
    if (lim->pids_max) rc = write_file(cg->path[PX_CG_PIDS], "pids.max", "%llu", (unsigned long long)lim->pids_max);
    else rc = write_file(cg->path[PX_CG_PIDS], "pids.max", "max");
  }
  if (!rc && cg->path[PX_CG_DEVICES][0] && (lim->ndeny_gpus || lim->ndeny_devs)) rc = deny_gpus(cg->path[PX_CG_DEVICES], lim, err, errlen);
  /* a pooled group whose last supervisor died while it was frozen (px_cg_kill) */
  if (!rc && lim->pooled && cg->path[PX_CG_FREEZER][0]) rc = write_file(cg->path[PX_CG_FREEZER], "freezer.state", "THAWED");
  return rc ? PX_EIO : 0;
}

/* One write per controller: a write naming one the level cannot offer
 * would enable none of them (memory is what matters; the rest may be absent). */
static void enable_controllers(const char *dir) {
  static const char *const ctls[] = {"+memory\n", "+cpuset\n", "+pids\n", "+cpu\n"};
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
  int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  for (size_t i = 0; fd >= 0 && i < sizeof ctls / sizeof ctls[0]; i++)
    if (write(fd, ctls[i], strlen(ctls[i])) < 0) { /* not offered here */ }
  if (fd >= 0) close(fd);
}

static int create_v2(const struct px_cg_layout *lay, const char *name, const struct px_cg_limits *lim,
                     struct px_cgroup *cg, char *err, size_t errlen) {
  char parent[PATH_MAX];
  snprintf(parent, sizeof parent, "%s", lay->base[0]);
  char *slash = strrchr(parent, '/');
  if (slash) *slash = '\0';
  /* Controllers must be enabled at every level above the job. */
  enable_controllers(parent);
  int rc = make_dir(lay->base[0], false);
  if (!rc) enable_controllers(lay->base[0]);
  if (!rc) rc = join(cg->path[0], sizeof cg->path[0], lay->base[0], name);
  if (!rc) rc = make_dir(cg->path[0], false);
  if (rc) {
    snprintf(err, errlen, "cannot create %s: %s", cg->path[0], strerror(-rc));
    return PX_EIO;
  }
  const char *file = "memory.max";
  if (lim->mem_mib) {
    rc = write_file(cg->path[0], file, "%llu", (unsigned long long)(lim->mem_mib << 20));
    int sw = rc ? 0 : write_file(cg->path[0], "memory.swap.max", "0");
    if (sw && sw != -ENOENT) rc = sw, file = "memory.swap.max"; /* ENOENT: no swap accounting, no swap */
  }
  if (!rc && lim->cpus) rc = write_file(cg->path[0], file = "cpuset.cpus", "%s", lim->cpus);
  if (!rc && lim->pids_max) rc = write_file(cg->path[0], file = "pids.max", "%llu", (unsigned long long)lim->pids_max);
  if (rc) snprintf(err, errlen, "cannot set %s in %s: %s", file, cg->path[0], strerror(-rc));
  return rc ? PX_EIO : 0;
}

int px_cg_v2_prepare(const char *root_rel) {
  struct px_cg_layout lay;
  if (root_rel || probe_v2(&lay, NULL, "x") != 0) return 0;
  char own[PATH_MAX], leaf[PATH_MAX];
  snprintf(own, sizeof own, "%s", lay.base[0]);
  char *slash = strrchr(own, '/');
  if (slash) *slash = '\0';
  if (join(leaf, sizeof leaf, own, "agent") || make_dir(leaf, false)) return PX_EIO;
  return write_file(leaf, "cgroup.procs", "%d", (int)getpid()) ? PX_EIO : 0;
}

int px_cg_create(const struct px_cg_layout *lay, const char *name, const struct px_cg_limits *lim,
                 struct px_cgroup *cg, char *err, size_t errlen) {
  memset(cg, 0, sizeof *cg);
  cg->version = lay->version;
  if (lay->version == 0) return 0; /* no cgroups: nothing to create */
  int rc = lay->version == 2 ? create_v2(lay, name, lim, cg, err, errlen)
                             : create_v1(lay, name, lim, cg, err, errlen);
  if (rc) px_cg_destroy(cg);
  return rc;
}

int px_cg_attach(const struct px_cgroup *cg, pid_t pid) {
  if (!pid) pid = getpid();
  for (int c = 0; c < PX_CG_NCTL; c++) {
    if (!cg->path[c][0]) continue;
    int rc = write_file(cg->path[c], "cgroup.procs", "%d", (int)pid);
    if (rc) return rc;
  }
  return 0;
}

/* The directory whose cgroup.procs lists the job's processes. */
static const char *track(const struct px_cgroup *cg) {
  static const int order[] = {PX_CG_MEMORY, PX_CG_FREEZER, PX_CG_PIDS, PX_CG_CPUACCT, PX_CG_CPUSET, PX_CG_DEVICES};
  if (cg->version == 2) return cg->path[0][0] ? cg->path[0] : NULL;
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    if (cg->path[order[i]][0]) return cg->path[order[i]];
  return NULL;
}

/* Calls fn on every pid in the group; returns the count. */
static int each_pid(const struct px_cgroup *cg, int sig) {
  const char *dir = track(cg);
  if (!dir) return 0;
  char path[PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/cgroup.procs", dir);
  FILE *f = fopen(path, "re");
  if (!f) return 0;
  int n = 0;
  long pid;
  while (fscanf(f, "%ld", &pid) == 1) {
    if (sig) kill((pid_t)pid, sig);
    n++;
  }
  fclose(f);
  return n;
}

int px_cg_count(const struct px_cgroup *cg) { return each_pid(cg, 0); }

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* v1 freezer: stop every task so none forks while being signalled. */
static bool freeze(const char *dir, bool on) {
  if (!dir[0] || write_file(dir, "freezer.state", on ? "FROZEN" : "THAWED")) return false;
  for (int i = 0; on && i < 200; i++) {
    char st[32];
    if (read_file(dir, "freezer.state", st, sizeof st) > 0 && strncmp(st, "FROZEN", 6) == 0) return true;
    nap_ms(1);
  }
  return true;
}

int px_cg_kill(const struct px_cgroup *cg, int sig) {
  if (cg->version == 2 && sig == SIGKILL && write_file(cg->path[0], "cgroup.kill", "1") == 0)
    return px_cg_count(cg);
  if (px_cg_count(cg) == 0) return 0;
  bool frozen = cg->version == 1 && sig == SIGKILL && freeze(cg->path[PX_CG_FREEZER], true);
  int n = each_pid(cg, sig);
  if (frozen) freeze(cg->path[PX_CG_FREEZER], false);
  return n;
}

int px_cg_drain(const struct px_cgroup *cg, int timeout_ms) {
  for (int waited = 0; px_cg_count(cg) > 0; waited += 5) {
    if (waited >= timeout_ms) return PX_ETIMEOUT;
    px_cg_kill(cg, SIGKILL);
    nap_ms(5);
  }
  return 0;
}

void px_cg_stats(const struct px_cgroup *cg, struct px_cg_stats *st) {
  memset(st, 0, sizeof st[0]);
  if (cg->version == 2) {
    const char *d = cg->path[0];
    st->peak_mem_mib = read_u64(d, "memory.peak") >> 20;
    st->cpu_time_ms = read_keyed(d, "cpu.stat", "usage_usec") / 1000;
    st->oom_kills = px_cg_oom_kills(cg);
    st->mem_limit_hit = read_keyed(d, "memory.events", "max") > 0;
    return;
  }
  const char *mem = cg->path[PX_CG_MEMORY];
  if (mem[0]) {
    st->peak_mem_mib = read_u64(mem, "memory.max_usage_in_bytes") >> 20;
    st->oom_kills = px_cg_oom_kills(cg);
    st->mem_limit_hit = read_u64(mem, "memory.failcnt") > 0;
  }
}

/* A group whose last task has just been killed can refuse rmdir for a while
 * (EBUSY: the task is still exiting, or its exit not yet accounted, which a
 * loaded host stretches from microseconds to seconds). Teardown retries an
 * empty group's rmdir for up to this long; a group still holding a live
 * process is a job's and is left at once. */
#define TEARDOWN_MS 5000
#define TEARDOWN_NAP_MS 10

/* Does the group directory list any process? (A gone one does not.) */
static bool holds_tasks(const char *dir) {
  char buf[32];
  return read_file(dir, "cgroup.procs", buf, sizeof buf) > 0 && buf[0] >= '0' && buf[0] <= '9';
}

/* rmdir that waits out a busy but empty group; 0, or -1 with the group left. */
static int remove_group(const char *dir) {
  for (int waited = 0;; waited += TEARDOWN_NAP_MS) {
    if (rmdir(dir) == 0 || errno == ENOENT) return 0;
    if (errno != EBUSY || holds_tasks(dir) || waited >= TEARDOWN_MS) return -1;
    nap_ms(TEARDOWN_NAP_MS);
  }
}

void px_cg_destroy(const struct px_cgroup *cg) {
  for (int c = 0; c < PX_CG_NCTL; c++)
    if (cg->path[c][0] && remove_group(cg->path[c]))
      px_warn("cgroup %s left behind: %s", cg->path[c], strerror(errno));
}

void px_cg_release(const struct px_cgroup *cg, const char *retired) {
  if (px_cg_count(cg) > 0) {
    for (int c = 0; c < PX_CG_NCTL; c++) {
      if (!cg->path[c][0]) continue;
      char to[PATH_MAX + 64], *slash;
      snprintf(to, sizeof to, "%s", cg->path[c]);
      if ((slash = strrchr(to, '/'))) snprintf(slash + 1, sizeof to - (size_t)(slash + 1 - to), "%s", retired);
      rename(cg->path[c], to);
    }
    return;
  }
  /* Page cache the job left stays charged to the group: reclaim it, unless
   * there is next to none (force_empty drains every CPU's LRU lists, a
   * wait on all of them). */
  const char *mem = cg->version == 1 ? cg->path[PX_CG_MEMORY] : "";
  if (mem[0] && read_u64(mem, "memory.usage_in_bytes") > (1u << 20)) write_file(mem, "memory.force_empty", "0");
}

uint64_t px_cg_oom_kills(const struct px_cgroup *cg) {
  if (cg->version == 2) return read_keyed(cg->path[0], "memory.events", "oom_kill");
  return cg->path[PX_CG_MEMORY][0] ? read_keyed(cg->path[PX_CG_MEMORY], "memory.oom_control", "oom_kill") : 0;
}

/* One controller's agent level: its idle slot groups, then itself. A slot
 * or other group that holds a live process (a job still running while the
 * agent is away, or one retired as job_<id>) is kept, and so is the level. */
static void remove_level(const char *base) {
  DIR *d = opendir(base);
  struct dirent *e;
  bool kept = false;
  while (d && (e = readdir(d))) {
    char sub[PATH_MAX + 300];
    if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
    snprintf(sub, sizeof sub, "%s/%s", base, e->d_name);
    bool slot = strncmp(e->d_name, "slot_", 5) == 0;
    if (slot && remove_group(sub) == 0) continue;
    kept = true;
    px_warn("cgroup %s kept: %s", sub,
            !slot ? "a job's own group" : holds_tasks(sub) ? "it holds processes" : strerror(errno));
  }
  if (d) closedir(d);
  if (!kept && remove_group(base)) px_warn("cgroup %s left behind: %s", base, strerror(errno));
}

/* Processes in a group of this agent's level that no job of it claims: an
 * agent killed before left them (their job's directory is gone, so no
 * reattach and no order from the server will ever stop them; a replica
 * would serve on, unlisted, on its port). They go, as a job's end kills
 * what is left of it. 0 once the group is empty, or PX_ETIMEOUT. */
static int kill_orphans(const struct px_cg_layout *lay, const char *name) {
  struct px_cgroup cg = {.version = lay->version};
  for (int c = 0; c < PX_CG_NCTL; c++)
    if (!lay->base[c][0] || join(cg.path[c], sizeof cg.path[c], lay->base[c], name) ||
        access(cg.path[c], F_OK) != 0)
      cg.path[c][0] = '\0';
  return px_cg_drain(&cg, 2000);
}

int px_cg_sweep_stale(const struct px_cg_layout *lay, px_cg_in_use_fn in_use, void *ctx) {
  int removed = 0;
  for (int c = 0; c < PX_CG_NCTL; c++) {
    DIR *d = lay->base[c][0] ? opendir(lay->base[c]) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
      char sub[PATH_MAX + 300];
      if (e->d_type != DT_DIR || e->d_name[0] == '.' || in_use(e->d_name, ctx)) continue;
      snprintf(sub, sizeof sub, "%s/%s", lay->base[c], e->d_name);
      if (holds_tasks(sub) && kill_orphans(lay, e->d_name) == 0)
        px_warn("cgroup %s: killed the processes an earlier agent left there for no job of this agent", sub);
      if (holds_tasks(sub)) px_warn("cgroup %s kept: it holds processes of no job of this agent", sub);
      else if (remove_group(sub) == 0) removed++;
      else px_warn("stale cgroup %s left behind: %s", sub, strerror(errno));
    }
    if (d) closedir(d);
  }
  return removed;
}

void px_cg_remove_base(const struct px_cg_layout *lay) {
  for (int c = 0; c < PX_CG_NCTL; c++)
    if (lay->base[c][0]) remove_level(lay->base[c]);
}
