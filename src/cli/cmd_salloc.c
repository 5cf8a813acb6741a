/*
 * cmd_salloc.c - `salloc`, and `srun` inside a salloc shell.
 *
 * salloc allocates a job, then runs a command (default: $SHELL) here, on the
 * submit host as Slurm does, with the allocation's environment
 * (SLURM_JOB_ID, SLURM_JOB_NODELIST, ...); when the command exits it
 * relinquishes the allocation and exits with the command's status.
 *
 * The allocation's job holds the allocation: its script waits until salloc
 * drops an "end" file in a private directory under the current one (shared
 * with the nodes, as sbatch's output files are), so the job ends COMPLETED
 * as Slurm's does. `srun` in the salloc shell runs its step through the
 * server's step API on the allocation's nodes (cmd_srun_step.c), with the
 * shell's environment at that moment; interrupting it cancels the step.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_common.h"
#include "cli/ctr_env.h"
#include "cli/step_files.h"

#define SALLOC_DIR_ENV "PHALANX_SALLOC_DIR"

/* Holds the allocation until salloc relinquishes it. */
static const char hold_script[] =
    "while [ ! -e \"$d/end\" ]; do sleep 0.2; done\n";

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* The allocation job's script: hold until the end file appears. */
static char *alloc_script(const char *dir) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  fputs("#!/bin/sh\n# salloc's allocation: held until salloc relinquishes it (srun steps go through the server)\nd=", f);
  px_step_put_quoted(f, dir);
  fprintf(f, "\n%s", hold_script);
  fclose(f);
  return text;
}

/* Waits until the job runs; 0, or 1 when it ended first or the server failed. */
static int wait_running(struct px_cmd *c, uint64_t id) {
  char st[32];
  int exit_code;
  for (int polls = 0;; polls++) {
    if (px_step_job_state(c, id, st, sizeof st, &exit_code)) return 1;
    if (!strcmp(st, "RUNNING")) break;
    if (px_cli_state_is_finished(st)) {
      px_cmd_error(c, "job %llu ended %s before its allocation was granted", (unsigned long long)id, st);
      return 1;
    }
    if (polls == 2) fprintf(stderr, "salloc: job %llu queued and waiting for resources\n", (unsigned long long)id);
    sleep_ms(polls < 20 ? 50 : 250);
  }
  fprintf(stderr, "salloc: Granted job allocation %llu\n", (unsigned long long)id);
  return 0;
}

/* The allocation's variables, as a batch job has them. */
static void alloc_env(struct px_cmd *c, uint64_t id, const char *dir) {
  char path[64], num[32];
  snprintf(path, sizeof path, "/v1/jobs/%llu", (unsigned long long)id);
  long status = 0;
  json_t *resp = NULL;
  struct px_job_info j;
  snprintf(num, sizeof num, "%llu", (unsigned long long)id);
  setenv("SLURM_JOB_ID", num, 1);
  setenv("SLURM_JOBID", num, 1);
  setenv(SALLOC_DIR_ENV, dir, 1);
  if (px_cmd_call(c, "GET", path, NULL, &status, &resp) || status != 200 || px_cli_job_from_json(resp, &j)) {
    json_decref(resp);
    return;
  }
  json_decref(resp);
  if (j.nodelist) setenv("SLURM_JOB_NODELIST", j.nodelist, 1), setenv("SLURM_NODELIST", j.nodelist, 1);
  snprintf(num, sizeof num, "%u", j.nnodes);
  setenv("SLURM_JOB_NUM_NODES", num, 1);
  setenv("SLURM_NNODES", num, 1);
  if (j.spec.ntasks) snprintf(num, sizeof num, "%u", j.spec.ntasks), setenv("SLURM_NTASKS", num, 1);
  if (j.spec.partition) setenv("SLURM_JOB_PARTITION", j.spec.partition, 1);
  if (j.spec.account) setenv("SLURM_JOB_ACCOUNT", j.spec.account, 1);
  if (j.spec.name) setenv("SLURM_JOB_NAME", j.spec.name, 1);
  px_cli_job_fini(&j);
}

/* Runs the command here; its exit status (128 + signal when killed). */
static int run_command(int argc, char **argv, int first) {
  char *shell[] = {getenv("SHELL") ? getenv("SHELL") : "/bin/sh", NULL};
  char **cmd = first < argc ? argv + first : shell;
  pid_t pid = fork();
  if (pid < 0) return perror("salloc: fork"), 1;
  if (pid == 0) {
    execvp(cmd[0], cmd);
    fprintf(stderr, "salloc: error: %s: %s\n", cmd[0], strerror(errno));
    _exit(127);
  }
  /* The shell owns the terminal's Ctrl-C; salloc waits for it. */
  struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGINT, &ign, &old_int);
  sigaction(SIGQUIT, &ign, &old_quit);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) continue;
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGQUIT, &old_quit, NULL);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Ends the loop (the job then completes), cancelling it if it lingers. */
static void relinquish(struct px_cmd *c, uint64_t id, const char *dir) {
  char path[4400], st[32] = "";
  int exit_code;
  fprintf(stderr, "salloc: Relinquishing job allocation %llu\n", (unsigned long long)id);
  snprintf(path, sizeof path, "%s/end", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
  for (int i = 0; i < 50; i++) { /* up to 5 s: the loop polls every 0.1 s */
    if (px_step_job_state(c, id, st, sizeof st, &exit_code) || px_cli_state_is_finished(st)) break;
    sleep_ms(100);
  }
  if (!px_cli_state_is_finished(st)) px_step_cancel_job(c, id);
  unlink(path);
  snprintf(path, sizeof path, "%s/alloc.out", dir);
  unlink(path);
  rmdir(dir);
}

static int salloc_run(struct px_cmd *c, struct px_jobspec *spec, const struct px_cli_extra *x,
                      int argc, char **argv, int first) {
  char cwd[4096], dir[4200], out[4300];
  if (x->pty) return px_cmd_error(c, "--pty: salloc's command already runs on this terminal"), 1;
  if (px_ctr_to_env(spec)) return px_cmd_error(c, "out of memory"), 1; /* the sruns' images, not the job's */
  if (!getcwd(cwd, sizeof cwd)) return px_cmd_error(c, "cannot read the current directory"), 1;
  snprintf(dir, sizeof dir, "%s/.phalanx-salloc-%d", cwd, (int)getpid());
  if (mkdir(dir, 0700)) return px_cmd_error(c, "cannot create %s: %s", dir, strerror(errno)), 1;
  snprintf(out, sizeof out, "%s/alloc.out", dir);
  /* No user name: the server takes it from the connection (cmd_sbatch.c). */
  spec->uid = (uint32_t)getuid();
  spec->gid = (uint32_t)getgid();
  int rc = 1;
  if ((!spec->name && !(spec->name = strdup(first < argc ? basename(argv[first]) : "interactive"))) ||
      !(spec->submit_dir = strdup(cwd)) ||
      (!spec->workdir && !(spec->workdir = strdup(cwd))) || !(spec->script = alloc_script(dir)) ||
      !(spec->stdout_path = strdup(out)) || (!spec->env && px_step_copy_environ(&spec->env))) {
    px_cmd_error(c, "out of memory");
    rmdir(dir);
    return 1;
  }
  uint64_t id;
  if (px_step_allocate(c, spec, &id)) {
    rmdir(dir);
    return 1;
  }
  if (!wait_running(c, id)) {
    alloc_env(c, id, dir);
    rc = run_command(argc, argv, first);
  }
  relinquish(c, id, dir);
  return rc;
}

int px_cmd_salloc(int argc, char **argv, bool native) {
  struct px_cmd c;
  px_cmd_init(&c, "salloc", true);
  struct px_jobspec spec;
  px_jobspec_init(&spec);
  struct px_cli_extra x = {0};
  struct px_cli_optlist l = {0};
  struct px_diag d;
  int first, rc = 1;
  px_diag_clear(&d);
  if (px_cli_parse_argv(PX_TOOL_SALLOC, argc, argv, &l, &first, &d) ||
      px_cli_apply(&l, &spec, &x, c.now, &d))
    rc = px_cmd_option_error(&c, &x, d.msg);
  else
    rc = salloc_run(&c, &spec, &x, argc, argv, first);
  px_cli_optlist_fini(&l);
  px_cli_extra_fini(&x);
  px_jobspec_fini(&spec);
  px_cmd_fini(&c);
  return rc;
}

/* ---- srun in a salloc shell --------------------------------------------- */

bool px_srun_in_salloc(void) { return getenv(SALLOC_DIR_ENV) && !getenv("SLURMD_NODENAME"); }
