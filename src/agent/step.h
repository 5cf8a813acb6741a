/*
 * step.h - job steps inside a job's supervisor (srun inside an allocation,
 * POST /v1/jobs/{id}/steps).
 *
 * The agent writes the step's order to JOBDIR/step.<N>.json and tells the
 * job's supervisor "step N" through its ctl FIFO. The supervisor starts this
 * node's share of the step's tasks exactly as it starts the job's own (same
 * cgroup, same process group, the same user, the same launcher), from the
 * job's launch order with the step's command, task layout, environment and
 * working directory; each task writes <out_dir>/<rank>.out and .err. When
 * the last of them ends it writes JOBDIR/step.<N>.status ("STATE EXIT SIGNAL")
 * and sends the agent the datagram "step:<jobdir name>:<N>"; the agent
 * reports the end (px_task_report with is_step). "stepsig N SIG GRACE"
 * signals a step's tasks (SIGKILL after GRACE seconds when GRACE >= 0).
 * Steps end with their job: the supervisor's last act kills the cgroup.
 */
#ifndef PX_AGENT_STEP_H
#define PX_AGENT_STEP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/cgroup.h"
#include "agent/jobdir.h"
#include "proto/agent_msg.h"

#define PX_STEPS_MAX 64          /* steps running at once on one node of a job */

struct px_step_run {
  bool used;
  uint32_t id, ntasks, alive;
  pid_t *pids;                   /* negative once reaped */
  int *wstatus;
  int64_t kill_at_ms;            /* monotonic; INT64_MAX: none */
  uint64_t cpu_time_ms;          /* user + system of its reaped tasks (wait4) */
  uint64_t peak_rss_kib;         /* the largest of its tasks' peak RSS */
  struct px_ctr *ctr;            /* srun --container-image: the step's container, or NULL */
};

/* What a step borrows from its job's supervisor. */
struct px_step_host {
  const char *dir;               /* the job directory */
  const struct px_launch *l;     /* the job's launch order */
  const struct px_site *site;
  const struct px_cgroup *cg;
  bool renumber_gpus;
  pid_t *pgid;                   /* the job's process group (set by the first task when 0) */
  struct px_step_run run[PX_STEPS_MAX];
};

/* Starts step id from JOBDIR/step.<id>.json; a step that cannot start ends
 * at once (FAILED, exit 1, reported like any end). */
void px_step_start(struct px_step_host *h, uint32_t id);
/* Signals step id's tasks; grace_s >= 0: SIGKILL after that many seconds. */
void px_step_signal(struct px_step_host *h, uint32_t id, int sig, int grace_s);
/* A reaped child (ru: its wait4 usage, or NULL): true when it was a step's
 * task (its step may end here). */
struct rusage;
bool px_step_reaped(struct px_step_host *h, pid_t pid, int wstatus, const struct rusage *ru);
/* Milliseconds until the next step timer (-1: none), and running them. */
int px_step_next_timeout(const struct px_step_host *h, int64_t now_ms);
void px_step_timers(struct px_step_host *h, int64_t now_ms);
void px_step_fini(struct px_step_host *h);

/* How a step's share ended on this node: its status file's line
 * "STATE EXIT SIGNAL CPU_MS PEAK_MIB END" (the last three may be absent). */
struct px_step_status {
  char state[24];
  int32_t exit_code, term_signal;
  uint64_t cpu_time_ms, peak_mem_mib;
  int64_t end_time;
};
/* Agent side: the step's status. 0 or PX_ENOENT. */
int px_step_status_read(const char *jobdir, uint32_t id, struct px_step_status *st);
/* Agent side: queues "line" on the job's ctl FIFO. 0, or PX_ESTATE when no
 * supervisor listens. */
int px_job_ctl_line(const char *jobdir, const char *line);

#endif
