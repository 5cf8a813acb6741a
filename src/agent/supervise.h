/*
 * supervise.h - the per-job supervisor, `phalanx agent --supervise JOBDIR`.
 *
 * The agent starts one supervisor per job (in its own session, so the
 * agent can die or restart without touching the job). The supervisor
 * creates the job's cgroup, starts the tasks, enforces the time limit
 * (the job's --signal ahead of it, then SIGTERM, then SIGKILL after
 * KillWait), obeys orders from the agent (the ctl FIFO: signal, grace,
 * reason), and when the tasks are gone kills whatever is left in the cgroup,
 * waits until it is empty, reads the accounting, and writes status.json as
 * its last act. It is a child subreaper, so a task's daemonised children
 * come back to it rather than to init.
 */
#ifndef PX_AGENT_SUPERVISE_H
#define PX_AGENT_SUPERVISE_H

#include <stdint.h>
#include <stddef.h>

/* The supervisor's body; returns the process exit status. */
int px_supervise_main(const char *jobdir);

/* Sends an order to a job's supervisor through its FIFO. When no
 * supervisor listens (it died), kills the job's cgroup and process group at
 * once and returns PX_ESTATE: the caller then records the end itself. */
int px_job_order(const char *jobdir, int sig, int grace_s, const char *reason);
/* The FIFO line of such an order ("SIG GRACE REASON\n", reason "-" when
 * none); its length. */
int px_job_order_line(char *buf, size_t size, int sig, int grace_s, const char *reason);

#endif
