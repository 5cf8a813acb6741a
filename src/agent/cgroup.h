/*
 * cgroup.h - one control group per job per node, on cgroup v2 when its
 * controllers are available and on v1 otherwise (hybrid hosts mount v2
 * without controllers; then v1 it is).
 *
 * Where: under the agent's own cgroup of each hierarchy (what systemd
 * delegates to a service), or under an explicit root, in
 * "<agent level>/job_<id>"; the agent level is named after the node and the
 * agent's state directory, so agents sharing a machine never share it. Job cgroups are created by the job's supervisor, which
 * itself stays outside them; only tasks are attached.
 *
 * Pooled groups (v1): the agent hands each job a slot, and the job runs in
 * "<agent level>/slot_<n>", made by the first job of that slot and reused by
 * the next ones: limits rewritten, peak and failure counters reset, device
 * rules restarted from "allow all", the memory charged by the previous job
 * emptied. A v1 mkdir and rmdir of a memory group each hold the kernel's
 * global cgroup mutex, the rmdir across RCU grace periods: hundreds of jobs
 * ending at once on one machine queued behind it with idle CPUs
 * (docs/agent.md, "Pooled cgroups").
 *
 * Limits: memory hard limit with swap off (v1 memory.limit_in_bytes plus
 * memory.memsw.limit_in_bytes when the kernel accounts swap, swappiness 0;
 * v2 memory.max and memory.swap.max=0), cpuset (the allocated cores), pids,
 * and device access to the allocated GPUs only (v1 devices.deny of the
 * other /dev/nvidiaN, or of the other MIG instances' devices; v2 needs a BPF program, which is out of scope: on v2
 * GPU isolation rests on CUDA_VISIBLE_DEVICES alone, and the agent says so).
 * CPU time: v2 cpu.stat; on v1 no cpuacct group is made (a mkdir and an
 * rmdir per job): the supervisor counts its waited-for processes instead.
 *
 * Ending: px_cgroup_kill() signals every process in the group (freezing it
 * first on v1 with a freezer so nothing forks in between, or cgroup.kill on
 * v2), and px_cgroup_wait_empty() waits until cgroup.procs is empty.
 */
#ifndef PX_AGENT_CGROUP_H
#define PX_AGENT_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum px_cg_ctl { PX_CG_MEMORY, PX_CG_CPUSET, PX_CG_PIDS, PX_CG_DEVICES, PX_CG_CPUACCT, PX_CG_FREEZER, PX_CG_NCTL };

/* Where job cgroups go on this node. */
struct px_cg_layout {
  int version;                      /* 1, 2, or 0 when no usable cgroup */
  char base[PX_CG_NCTL][PATH_MAX];  /* v1: per controller ("" when absent); v2: base[0] */
};

/* One job's cgroup. */
struct px_cgroup {
  int version;
  char path[PX_CG_NCTL][PATH_MAX];  /* v1 per controller; v2 path[0] */
};

/* A character device, for device rules beyond /dev/nvidiaN (MIG, mig_dev.h). */
struct px_cg_dev {
  uint32_t major, minor;
};

struct px_cg_limits {
  uint64_t mem_mib;                 /* 0: no limit */
  const char *cpus;                 /* "0-3,8" or NULL: inherit */
  uint64_t pids_max;                /* 0: no limit */
  const uint32_t *deny_gpus;        /* node GPU indices the job must not open */
  uint32_t ndeny_gpus;
  const struct px_cg_dev *deny_devs; /* other character devices the job must not open */
  uint32_t ndeny_devs;
  bool pooled;                      /* a slot's group: reuse it as it is, reset what a job leaves */
};

struct px_cg_stats {
  uint64_t peak_mem_mib;
  uint64_t cpu_time_ms;
  uint64_t oom_kills;               /* processes the kernel OOM-killed in the group */
  bool mem_limit_hit;               /* the limit was reached (v1 failcnt, v2 events max) */
};

/* Finds the layout: root_rel NULL means "under the agent's own cgroup";
 * name is the per-agent level. 0, or PX_EUNSUPPORTED when neither
 * version offers the memory controller. */
int px_cg_probe(struct px_cg_layout *lay, const char *root_rel, const char *node);
/* Probes now and answers later px_cg_probe calls with the same arguments
 * from memory: the agent's zygote does this once, so that each supervisor
 * it forks skips reading /proc/self/mountinfo seven times. */
void px_cg_probe_remember(const char *root_rel, const char *node);

/* Tests: read mountinfo and cgroup (the formats of /proc/self/mountinfo
 * and /proc/self/cgroup) instead of this process's; NULL restores those.
 * The strings are kept, not copied. */
void px_cg_set_proc_files(const char *mountinfo, const char *cgroup);

/* cgroup v2 allows controllers for child groups only in groups without
 * processes of their own ("no internal processes"): on v2 the agent moves
 * itself into a leaf "<own>/agent" so its own group can delegate to jobs.
 * A no-op on v1 or with an explicit root. 0 or PX_EIO. */
int px_cg_v2_prepare(const char *root_rel);

/* Creates (or reuses) the job's cgroup and applies the limits. */
int px_cg_create(const struct px_cg_layout *lay, const char *name, const struct px_cg_limits *lim,
                 struct px_cgroup *cg, char *err, size_t errlen);
/* Moves pid (0: the caller) into every controller of the group. */
int px_cg_attach(const struct px_cgroup *cg, pid_t pid);
/* Signals every process in the group; returns how many were signalled. */
int px_cg_kill(const struct px_cgroup *cg, int sig);
/* Number of processes still in the group (0 when it has none or is gone). */
int px_cg_count(const struct px_cgroup *cg);
/* Kills (SIGKILL) and waits until empty, up to timeout_ms; 0 or PX_ETIMEOUT. */
int px_cg_drain(const struct px_cgroup *cg, int timeout_ms);
void px_cg_stats(const struct px_cgroup *cg, struct px_cg_stats *st);
/* A running job's use now, from its group `name` under lay (cg_usage.c):
 * sstat's figures. 0, or PX_ENOENT when there is no such group. */
struct px_cg_usage {
  uint64_t mem_mib, peak_mem_mib, cpu_time_ms;
  uint32_t nprocs;
};
int px_cg_usage(const struct px_cg_layout *lay, const char *name, struct px_cg_usage *u);
/* Removes the job's directories. The per-agent level stays (creating
 * cpuset groups is slow) until px_cg_remove_base, when the agent stops. */
void px_cg_destroy(const struct px_cgroup *cg);
/* A pooled group after its job: the memory its job left charged (page
 * cache) is reclaimed, the group stays for the slot's next job. A group
 * still holding processes is renamed to retired (a name of the job), so
 * that the slot's next job starts in a new one. */
void px_cg_release(const struct px_cgroup *cg, const char *retired);
/* The OOM kills counted so far (v1 memory.oom_control counts for the life
 * of the group: a pooled group's next job subtracts its start value). */
uint64_t px_cg_oom_kills(const struct px_cgroup *cg);
/* Removes the agent level and the idle pooled groups under it (one still
 * holding processes stays, and so does the level above it). An empty group
 * the kernel still calls busy (tasks still exiting on a loaded host) is
 * retried for up to 5 s, as in px_cg_destroy. */
void px_cg_remove_base(const struct px_cg_layout *lay);

/* At an agent's start: the groups under its level that an agent killed
 * before it left behind (kill -9 never reaches px_cg_remove_base) go — an
 * idle slot, an ended job's group — unless in_use(name, ctx) claims them
 * (a slot or job the new agent found in its state directory). Processes in
 * an unclaimed group are orphans of no job this agent knows, which nothing
 * else would ever stop: they are killed (SIGKILL, up to 2 s) first; a group
 * they still hold stays. Returns how many were removed. The level is the
 * agent's own (node and state directory): another agent's groups are never
 * touched. */
typedef bool (*px_cg_in_use_fn)(const char *name, void *ctx);
int px_cg_sweep_stale(const struct px_cg_layout *lay, px_cg_in_use_fn in_use, void *ctx);
/* True when device access is constrained (v1 devices controller present). */
bool px_cg_constrains_devices(const struct px_cg_layout *lay);

#endif
