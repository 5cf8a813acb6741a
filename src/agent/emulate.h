/*
 * emulate.h - `phalanx agent --emulate-nodes dev[0001-4096]`: one process
 * serving many emulated nodes, for trying and measuring the control plane at
 * thousands of nodes on one machine (as KWOK does for Kubernetes, or Slurm's
 * multiple-slurmd builds).
 *
 * Each node is a whole agent as far as the server can tell: it registers
 * (with its own credential, GPUs, CPUs and memory), heartbeats, long-polls
 * for its orders and reports its jobs' ends through the same endpoints, with
 * the same messages, as `phalanx agent`. What differs is inside: one thread
 * and one epoll loop drive every node's requests (emu_net.h), and jobs are
 * either
 *   sim   no process: the node reports the end after the job's run time (the
 *         N of a `sleep N` command or script line, or of PX_EMU_RUN_S=N in its
 *         environment; 0 otherwise) — to measure the control plane alone;
 *   real  the job's command as a plain child process of the emulator, as the
 *         emulator's user, without cgroups, supervisor or output files — to
 *         measure it with real process starts (`true`, `sleep`).
 * Steps are refused (their share ends FAILED at once).
 *
 * The emulator keeps a small state log (STATE_DIR/emulate.log): the jobs it
 * runs and the ends it has reported, so a restarted emulator re-registers
 * its nodes with the jobs they still run and never starts an order twice.
 * Nodes named, one per line, in STATE_DIR/silent go silent on SIGUSR1 (no
 * heartbeat, no poll, no report: to the server, a dead node) and come back
 * (register again) when a later SIGUSR1 finds them gone from the file.
 * GPU faults are injected as "NODE gpufault GPU FAULT CODE DETAIL"
 * datagrams on STATE_DIR/agent.sock (`phalanx dev inject`, gpu_watch.h),
 * which the node reports to the server (POST /v1/agent/gpu, once: no retry).
 */
#ifndef PX_AGENT_EMULATE_H
#define PX_AGENT_EMULATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

struct px_emu_opts {
  char server[256];
  char ca_file[PATH_MAX];   /* --ca-file, for an https server */
  char nodes[4096];        /* hostlist expression */
  char state_dir[PATH_MAX];
  char token_dir[PATH_MAX]; /* DIR/<node>.token: each node's credential ("" for none) */
  char gpus[64];            /* --emulate-gpus spec, per node */
  uint32_t cpus;            /* per node */
  uint64_t mem_mib;         /* per node */
  int heartbeat_s;          /* until the server names its interval */
  bool real_jobs;           /* --emulate-jobs real (default sim) */
  bool kill_jobs_on_exit;
};

/* Runs until SIGTERM/SIGINT; returns the process exit status. */
int px_emu_run(const struct px_emu_opts *o);

#endif
