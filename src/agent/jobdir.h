/*
 * jobdir.h - a job's directory in the agent's state dir, the on-disk
 * contract between the agent and a job's supervisor:
 *
 *   STATE/jobs/<id>.<restart>/launch.json   the order (px_launch), by the agent
 *                             site.json     node facts the supervisor needs, by the agent
 *                             state.json    supervisor pid, task pids, cgroup paths, by the supervisor
 *                             status.json   how the job ended, by the supervisor (its last act)
 *                             reported      empty marker: the server acknowledged the end
 *                             ctl           FIFO: "SIGNAL GRACE_S REASON\n" orders to the supervisor
 *
 * Every file is written whole to a temporary name and renamed, so a reader
 * (a restarted agent) sees either the old or the new content. The
 * directory's existence is what makes a launch idempotent: an order for a
 * job that already has one is never started again.
 */
#ifndef PX_AGENT_JOBDIR_H
#define PX_AGENT_JOBDIR_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/cgroup.h"

/* What the agent tells each supervisor about its node. */
struct px_site {
  char node[64];
  char cluster[64];
  char cgroup_root[256];   /* "" : under the agent's own cgroup */
  char cgroup_name[128];   /* the agent's level: "phalanx_<node>.<hash of its state dir>" */
  uint32_t cg_slot;        /* per job: 1.. the pooled group "slot_<n>" it runs in (cgroup.h); 0 its own */
  char notify[PATH_MAX];   /* agent's datagram socket, "" for none */
  int64_t kill_wait_s;     /* SIGTERM -> SIGKILL at the time limit */
  uint64_t pids_max;
  uint32_t node_ngpus;     /* every GPU index below this not in the job is denied */
  bool allow_root;
  bool no_cgroup;          /* run without cgroups (tests as non-root; never in production) */
  bool emulated_gpus;      /* no device files behind the GPUs: keep physical indices */
  bool emulated_cpus;      /* the node claims CPUs it lacks: no CPU pinning */
  char gpu_uuids[PATH_MAX]; /* MIG instances: a file of the node's GPU UUIDs, one per index ("" : whole GPUs) */
  char gpu_devs[PATH_MAX];  /* MIG instances: their devices, one line per index (mig_dev.h; "" : no rules) */
  uint64_t gpu_mem_mib;    /* memory of one of its GPUs: a fractional job's MPS memory limit (0: unknown) */
  char mps_control[PATH_MAX]; /* nvidia-cuda-mps-control found at the agent's start ("" : none, shares not enforced) */
  char mps_dir[PATH_MAX];  /* STATE/mps: the per-GPU MPS daemons' pipe and log directories (mps.h) */
  /* containers (container.h): where image names are looked up ("" : paths only), the
   * unpacked images' cache (STATE/images by default), the OCI runtime ("" : crun) */
  char ctr_image_dir[PATH_MAX];
  char ctr_cache_dir[PATH_MAX];
  char ctr_runtime[PATH_MAX];
};

struct px_job_status {
  uint64_t job_id;
  char state[24];
  int32_t exit_code, term_signal;
  uint64_t peak_mem_mib, cpu_time_ms;
  int64_t start_time, end_time;
  char error[256];         /* why a launch failed, "" otherwise */
};

/* Written by the supervisor once its tasks run. */
struct px_job_state {
  pid_t supervisor;
  int64_t supervisor_start;  /* /proc start time ticks: tells a reused pid apart */
  pid_t pgid;
  struct px_cgroup cg;
};

int px_site_write(const char *dir, const struct px_site *s);
int px_site_read(const char *dir, struct px_site *s);
int px_status_write(const char *dir, const struct px_job_status *st);
/* 0, PX_ENOENT when the job has not ended, or a parse error. */
int px_status_read(const char *dir, struct px_job_status *st);
int px_state_write(const char *dir, const struct px_job_state *st);
int px_state_read(const char *dir, struct px_job_state *st);

/* Writes text to dir/name atomically (temp file, rename), without fsync:
 * the files carry jobs across a restart of the agent, which the page cache
 * survives; a crash of the node ends its jobs anyway (px_status_write). */
int px_file_put(const char *dir, const char *name, const char *text);
/* Reads dir/name whole (malloc'd, NUL-terminated) or NULL (errno set). */
char *px_file_get(const char *dir, const char *name);

/* The start time of pid from /proc/PID/stat (field 22), or -1. */
int64_t px_proc_start(pid_t pid);
/* True when pid is alive and started at start (not a reused pid). */
bool px_proc_same(pid_t pid, int64_t start);

#endif
