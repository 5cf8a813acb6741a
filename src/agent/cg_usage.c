/*
 * cg_usage.c - what a running job uses now, read from its cgroup for sstat
 * (the agent's heartbeat carries it, agent.c): memory in use and its peak,
 * and CPU time. On v2 the group counts CPU itself (cpu.stat); on v1 jobs
 * have no cpuacct group (the supervisor counts ended processes from its
 * waits), so the running ones are summed from /proc/PID/stat.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cgroup.h"
#include "util/error.h"

static uint64_t file_u64(const char *dir, const char *file) {
  char path[PATH_MAX + 64], b[64];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "re");
  if (!f) return 0;
  uint64_t v = fgets(b, sizeof b, f) ? strtoull(b, NULL, 10) : 0;
  fclose(f);
  return v;
}

/* utime + stime of one process, in milliseconds. */
static uint64_t proc_cpu_ms(long pid) {
  char path[64], b[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "re");
  if (!f) return 0;
  size_t n = fread(b, 1, sizeof b - 1, f);
  fclose(f);
  b[n] = '\0';
  char *p = strrchr(b, ')'); /* the command may hold spaces and parentheses */
  unsigned long long ut = 0, st = 0;
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) return 0;
  long hz = sysconf(_SC_CLK_TCK);
  return hz > 0 ? (ut + st) * 1000 / (uint64_t)hz : 0;
}

static uint64_t procs_cpu_ms(const char *dir, uint32_t *nprocs) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/cgroup.procs", dir);
  FILE *f = fopen(path, "re");
  uint64_t ms = 0;
  long pid;
  while (f && fscanf(f, "%ld", &pid) == 1) ms += proc_cpu_ms(pid), ++*nprocs;
  if (f) fclose(f);
  return ms;
}

int px_cg_usage(const struct px_cg_layout *lay, const char *name, struct px_cg_usage *u) {
  memset(u, 0, sizeof *u);
  char dir[PATH_MAX + 64];
  if (lay->version == 2) {
    snprintf(dir, sizeof dir, "%s/%s", lay->base[0], name);
    if (access(dir, F_OK)) return PX_ENOENT;
    u->mem_mib = file_u64(dir, "memory.current") >> 20;
    u->peak_mem_mib = file_u64(dir, "memory.peak") >> 20;
    char b[PATH_MAX + 80];
    snprintf(b, sizeof b, "%s/cpu.stat", dir);
    FILE *f = fopen(b, "re");
    char line[128];
    while (f && fgets(line, sizeof line, f))
      if (!strncmp(line, "usage_usec ", 11)) u->cpu_time_ms = strtoull(line + 11, NULL, 10) / 1000;
    if (f) fclose(f);
    procs_cpu_ms(dir, &u->nprocs);
    return 0;
  }
  if (!lay->base[PX_CG_MEMORY][0]) return PX_ENOENT;
  snprintf(dir, sizeof dir, "%s/%s", lay->base[PX_CG_MEMORY], name);
  if (access(dir, F_OK)) return PX_ENOENT;
  u->mem_mib = file_u64(dir, "memory.usage_in_bytes") >> 20;
  u->peak_mem_mib = file_u64(dir, "memory.max_usage_in_bytes") >> 20;
  u->cpu_time_ms = procs_cpu_ms(dir, &u->nprocs);
  return 0;
}
