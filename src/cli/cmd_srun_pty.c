/*
 * cmd_srun_pty.c - `srun --pty CMD` outside an allocation: allocate first,
 * as Slurm's srun does, then run CMD on a terminal in it (cmd_pty.c).
 *
 * The allocation is a job whose script only holds it (`sleep` until
 * cancelled): the terminal is a step of that job, on its first node, in its
 * cgroup. When the terminal ends (the user leaves, or CMD exits) the job
 * is cancelled, so no allocation outlives srun; srun exits with CMD's
 * status. An interrupt while the job waits for resources cancels it.
 */
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_common.h"
#include "cli/step_files.h"

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }

static const char holder_script[] =
    "#!/bin/sh\n# srun --pty: this job holds the allocation while the terminal is open\n"
    "exec sleep 2147483647\n";

static int fill_holder(struct px_jobspec *s, const struct px_cli_extra *x, char **argv) {
  char cwd[4096], cmd[4096];
  if (!getcwd(cwd, sizeof cwd)) return PX_EIO;
  s->uid = (uint32_t)getuid();
  s->gid = (uint32_t)getgid();
  snprintf(cmd, sizeof cmd, "%s", argv[0]);
  if ((!s->name && !(s->name = strdup(basename(cmd)))) || !(s->submit_dir = strdup(cwd)) ||
      (!s->workdir && !(s->workdir = strdup(cwd))) || !(s->script = strdup(holder_script)))
    return PX_ENOMEM;
  if (!s->stdout_path && !(s->stdout_path = strdup("/dev/null"))) return PX_ENOMEM;
  if (!s->env && (!x->export_spec || strcasecmp(x->export_spec, "NONE")) && px_step_copy_environ(&s->env))
    return PX_ENOMEM;
  return 0;
}

int px_step_wait_running(struct px_cmd *c, uint64_t id, volatile sig_atomic_t *stop) {
  char st[32] = "";
  int exit_code = 0;
  bool said = false;
  for (int polls = 0;; polls++) {
    if (*stop) {
      px_cmd_error(c, "interrupted: cancelling job %llu", (unsigned long long)id);
      return 1;
    }
    if (px_step_job_state(c, id, st, sizeof st, &exit_code)) return 1;
    if (!strcmp(st, "RUNNING")) break;
    if (strcmp(st, "PENDING")) {
      px_cmd_error(c, "job %llu ended %s before its terminal opened", (unsigned long long)id, st);
      return 1;
    }
    if (!said && polls >= 2) fprintf(stderr, "%s: job %llu queued and waiting for resources\n", c->prog, (unsigned long long)id);
    said |= polls >= 2;
    struct timespec t = {0, (polls < 20 ? 50 : 250) * 1000000L};
    nanosleep(&t, NULL);
  }
  if (said) fprintf(stderr, "%s: job %llu has been allocated resources\n", c->prog, (unsigned long long)id);
  return 0;
}

int px_srun_pty_outside(struct px_cmd *c, struct px_jobspec *spec, const struct px_cli_extra *x, char **argv) {
  int rc = fill_holder(spec, x, argv);
  if (rc) return px_cmd_error(c, "%s", px_strerror(rc)), 1;
  uint64_t id;
  if (px_step_allocate(c, spec, &id)) return 1;
  struct sigaction old[2];
  px_step_catch(on_signal, old);
  rc = px_step_wait_running(c, id, &interrupted);
  px_step_uncatch(old);
  if (!rc) {
    char job[32];
    snprintf(job, sizeof job, "%llu", (unsigned long long)id);
    rc = px_pty_step(c, job, argv, true, NULL); /* -w went into the allocation */
  }
  px_step_cancel_job(c, id); /* the allocation ends with the terminal */
  return rc;
}
