/*
 * zygote.h - starting job supervisors without a new exec of `phalanx`.
 *
 * An exec of the phalanx binary costs about 8 ms of CPU (the dynamic linker
 * maps and resolves some 40 libraries: curl, libpq, sqlite and theirs),
 * which was most of what a short job cost the node. The agent cannot just
 * fork: it has threads (the order poll), and a fork that runs on without
 * exec may inherit a lock another thread held. So at startup, while still
 * single-threaded, the agent forks a helper, the zygote, which never starts
 * a thread and forks each supervisor on request. The zygote is itself a
 * fresh exec (one per agent start) of `phalanx-supervisor --zygote`, a
 * binary of the supervisor's code, libc and jansson only, so that each fork
 * and each supervisor's exit copies and unmaps little (supervisor_main.c);
 * `phalanxd agent --zygote` when that binary is missing. What every
 * supervisor would redo is done once, before the forks, and shared:
 * symbols bound at load (LD_BIND_NOW, in its environment only), the cgroup
 * layout probed (px_cg_probe_remember), the user database modules loaded.
 *
 * The supervisor must be the agent's child, as an exec'd one was (the agent
 * reaps it on SIGCHLD): the zygote forks it with CLONE_PARENT, which makes
 * the zygote's parent, the agent, its parent.
 *
 * Protocol on a SOCK_SEQPACKET pair: the agent sends a job directory, the
 * answer is one int32: the supervisor's pid, or -errno. The zygote dies with
 * the agent (PR_SET_PDEATHSIG, and end-of-file on the socket).
 */
#ifndef PX_AGENT_ZYGOTE_H
#define PX_AGENT_ZYGOTE_H

#include <stdbool.h>
#include <sys/types.h>

struct px_zygote {
  pid_t pid;  /* 0: none (callers fall back to exec) */
  int fd;
};

/* Starts the zygote (a fork and exec: call before any thread starts);
 * cg_root "" or NULL: under the agent's own cgroup; no_cgroup: none.
 * 0 or PX_EIO. */
int px_zygote_start(struct px_zygote *z, const char *cg_root, const char *cg_name, bool no_cgroup);
/* `phalanx agent --zygote FD:AGENTPID [CGNAME [CGROOT]]`: the zygote's
 * body; returns only on bad arguments. */
int px_zygote_main(const char *fd_pid, const char *cg_name, const char *cg_root);
/* Starts a supervisor for jobdir; 0 with *pid, or an error (the zygote is
 * then stopped, and later calls fail at once). */
int px_zygote_spawn(struct px_zygote *z, const char *jobdir, pid_t *pid);
void px_zygote_stop(struct px_zygote *z);

#endif
