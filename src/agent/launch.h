/*
 * launch.h - the agent's side of starting a job: make the job directory
 * (its existence is the "already started" mark), write the order and the
 * node facts into it, and start the job's supervisor as a new process of
 * its own session: forked by the agent's zygote (zygote.h), or, when there
 * is none, `phalanx agent --supervise JOBDIR` exec'd afresh (the agent is
 * multi-threaded: a fork that ran on without exec could inherit a lock
 * another thread held). The supervisor is the agent's child only until the
 * agent restarts; after that the agent finds it again through state.json
 * (reattach), so nothing requires it to stay a child.
 */
#ifndef PX_AGENT_LAUNCH_H
#define PX_AGENT_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "agent/jobdir.h"
#include "agent/zygote.h"
#include "proto/agent_msg.h"

/* STATE/jobs/<job>.<restart> into buf. */
void px_jobdir_path(const char *state_dir, uint64_t job_id, uint32_t restart, char *buf, size_t size);

/* 0 with *pid the supervisor (z: the zygote, or NULL); PX_EEXIST when this attempt was already
 * started here (nothing is done: a task never starts twice). reuse: an
 * ended job's directory to rename into place instead of a new one (its
 * files already moved to their temporary names), or NULL; *used says
 * whether it was taken. */
int px_job_start(const char *state_dir, const struct px_launch *l, const struct px_site *site,
                 struct px_zygote *z, const char *reuse, bool *used, char *jobdir, size_t size, pid_t *pid);

#endif
