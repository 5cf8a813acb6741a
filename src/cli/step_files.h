/*
 * step_files.h - what `srun` outside an allocation (cmd_srun_alloc.c),
 * `salloc` (cmd_salloc.c) and multi-node steps (cmd_srun_step.c) share: a
 * job allocated for them, the srun command line that runs a step in it, and
 * output followed from files on the directory the submit host shares with
 * the nodes.
 */
#ifndef PX_CLI_STEP_FILES_H
#define PX_CLI_STEP_FILES_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/cmd_common.h"

/* Our own path as a job's script can exec it (argv[0], else PATH). 0 or -1. */
int px_step_self_path(const char *argv0, char *out, size_t n);
/* s quoted for sh, then a space. */
void px_step_put_quoted(FILE *f, const char *s);
/* A copy of our environment (srun's and salloc's --export=ALL). */
int px_step_copy_environ(char ***out);
/* POST the job: 0 with *id, or 1 after "Unable to allocate resources: ..." */
int px_step_allocate(struct px_cmd *c, const struct px_jobspec *spec, uint64_t *id);
/* GET the job's state (and exit code): 0, or 1 after a message. */
int px_step_job_state(struct px_cmd *c, uint64_t id, char *st, size_t n, int *exit_code);
void px_step_cancel_job(struct px_cmd *c, uint64_t id);
/* Waits for the job to run ("queued and waiting" said when it waits): 0, or
 * 1 after a message (it ended, or *stop was set: the caller's signal). */
int px_step_wait_running(struct px_cmd *c, uint64_t id, volatile sig_atomic_t *stop);
/* SIGINT and SIGTERM to fn while a job is followed (old: what to restore). */
void px_step_catch(void (*fn)(int), struct sigaction old[2]);
void px_step_uncatch(const struct sigaction old[2]);

/* A followed file: opened once it exists, copied to `to` as it grows. */
struct px_follow {
  char path[4200];
  int fd, to; /* to: our descriptor (1 or 2); -1: not ours to follow */
};
void px_follow_pump(struct px_follow *f);
/* Closes it, and removes the file when it was ours. */
void px_follow_fini(struct px_follow *f);

/* In a salloc shell (not on the allocation's node): srun's steps go
 * through the server's step API (cmd_salloc.c). */
bool px_srun_in_salloc(void);

/* A variable of the batch step that would be stale in a new step's tasks
 * (SLURM_PROCID, SLURM_STEP_*, ...): the agent sets the step's own. */
bool px_step_env_stale(const char *kv);

/* srun --pty outside an allocation (cmd_srun_pty.c): allocate a job that
 * holds the allocation, run the terminal step in it, end the job. */
int px_srun_pty_outside(struct px_cmd *c, struct px_jobspec *spec, const struct px_cli_extra *x, char **argv);

/* Inside an allocation, a step over several nodes (or from a salloc shell) through the server
 * (cmd_srun_step.c): returns srun's exit status. */
int px_srun_step(struct px_cmd *c, const struct px_jobspec *spec, bool label, bool nodes_given, uint32_t nodes,
                 char **argv);

#endif
