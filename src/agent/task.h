/*
 * task.h - starting one task of a job.
 *
 * The child joins the job's cgroup and process group while still root,
 * pins itself to the job's CPUs, then becomes the submitting user for good
 * (the user's groups, setgid, setuid, and a check that root cannot be
 * regained), and only then opens its output files and enters the working
 * directory, so every path is reached with the user's rights, never root's.
 * A failure before exec is reported to the parent through a close-on-exec
 * pipe.
 *
 * The child is a vfork-like clone (CLONE_VM | CLONE_VFORK, its own stack),
 * as posix_spawn makes: a fork would copy the supervisor's page tables only
 * for exec to throw them away. So everything that allocates or reads the
 * user database (environment, group list, output paths) is prepared by the
 * parent, and the child makes system calls only.
 */
#ifndef PX_AGENT_TASK_H
#define PX_AGENT_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/cgroup.h"
#include "agent/container.h"
#include "agent/jobdir.h"
#include "proto/agent_msg.h"

struct px_task_spec {
  const struct px_launch *l;
  const struct px_site *site;
  const struct px_cgroup *cg;
  const char *script_path;   /* the batch script, or NULL for argv tasks */
  uint32_t local_id;
  bool batch;
  bool renumber_gpus;
  pid_t pgid;                /* 0: the task starts the job's process group */
  bool truncate_output;      /* the first writer of a shared output file */
  char *const *env_after;    /* "K=V" set over the built environment (a step's), or NULL */
  uint32_t gpus_per_task;    /* 0: the task sees the job's GPUs on the node; else its own
                              * slice of them, the local_id-th group of this many */
  const struct px_ctr *ctr;  /* the job's container (container.h), or NULL: the task runs on the host */
};

/* Forks and starts the task. 0 with *pid set, or an error with err filled
 * (the child, if any, has been reaped). */
int px_task_spawn(const struct px_task_spec *t, pid_t *pid, char *err, size_t errlen);

#endif
