/*
 * cmd_salloc.c - `salloc`, and `srun` inside a salloc shell.
 *
 * salloc allocates a job, then runs a command (default: $SHELL) here, on the
 * submit host as Slurm does, with the allocation's environment
 * (SLURM_JOB_ID, SLURM_JOB_NODELIST, ...); when the command exits it
 * relinquishes the allocation and exits with the command's status.
 *
 * Without a step API in the server, the allocation's job runs a small loop
 * (the script below) that takes step requests from a private directory
 * under the current one (shared with the nodes, as sbatch's output files
 * are): `srun` in the salloc shell writes its own command line there, the
 * loop runs it on the node (that srun then finds itself inside the batch
 * job and runs the step as in any batch script), and the requesting srun
 * copies the step's output files to its stdout and stderr and exits with its
 * status. The step sees the environment salloc was started with, not later
 * changes in the shell; interrupting such an srun does not stop the step.
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
#include "cli/step_files.h"

#define SALLOC_DIR_ENV "PHALANX_SALLOC_DIR"

static const char loop_script[] =
    "while [ ! -e \"$d/end\" ]; do\n"
    "  for r in \"$d\"/*.req; do\n"
    "    [ -e \"$r\" ] || continue\n"
    "    n=${r%.req}\n"
    "    mv \"$r\" \"$n.run\" || continue\n"
    "    (sh \"$n.run\" >\"$n.out\" 2>\"$n.err\"; echo $? >\"$n.rc.tmp\"; mv \"$n.rc.tmp\" \"$n.rc\") &\n"
    "  done\n"
    "  sleep 0.1\n"
    "done\n"
    "wait\n";

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* The allocation job's script: the loop over the step directory. */
static char *alloc_script(const char *dir) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  fputs("#!/bin/sh\n# salloc's allocation: runs the steps srun sends from the salloc shell\nd=", f);
  px_step_put_quoted(f, dir);
  fprintf(f, "\n%s", loop_script);
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
  if (!getcwd(cwd, sizeof cwd)) return px_cmd_error(c, "cannot read the current directory"), 1;
  snprintf(dir, sizeof dir, "%s/.phalanx-salloc-%d", cwd, (int)getpid());
  if (mkdir(dir, 0700)) return px_cmd_error(c, "cannot create %s: %s", dir, strerror(errno)), 1;
  snprintf(out, sizeof out, "%s/alloc.out", dir);
  spec->uid = (uint32_t)getuid();
  spec->gid = (uint32_t)getgid();
  int rc = 1;
  if ((!spec->name && !(spec->name = strdup(first < argc ? basename(argv[first]) : "interactive"))) ||
      !(spec->user = strdup(px_cmd_user())) || !(spec->submit_dir = strdup(cwd)) ||
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
    px_cmd_error(&c, "%s", d.msg);
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

static int write_request(const char *dir, const char *name, const char *self, int argc, char **argv) {
  char tmp[4400], req[4400], cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return -1;
  snprintf(tmp, sizeof tmp, "%s/%s.tmp", dir, name);
  snprintf(req, sizeof req, "%s/%s.req", dir, name);
  FILE *f = fopen(tmp, "we");
  if (!f) return -1;
  fputs("cd ", f);
  px_step_put_quoted(f, cwd);
  fputs("|| exit 1\nexec ", f);
  px_step_put_quoted(f, self);
  for (int i = 1; i < argc; i++) px_step_put_quoted(f, argv[i]);
  fputc('\n', f);
  if (fclose(f)) return -1;
  return rename(tmp, req);
}

int px_srun_salloc_step(struct px_cmd *c, int argc, char **argv, int first) {
  const char *dir = getenv(SALLOC_DIR_ENV);
  uint64_t id = strtoull(getenv("SLURM_JOB_ID"), NULL, 10);
  char self[4096], name[64], rcpath[4400];
  if (first >= argc) return px_cmd_error(c, "No command given to execute."), 1;
  if (px_step_self_path(argv[0], self, sizeof self)) return px_cmd_error(c, "cannot find my own path"), 1;
  snprintf(name, sizeof name, "%d-%lld", (int)getpid(), (long long)time(NULL));
  if (write_request(dir, name, self, argc, argv))
    return px_cmd_error(c, "cannot write the step request in %s: %s", dir, strerror(errno)), 1;
  struct px_follow out = {.fd = -1, .to = STDOUT_FILENO}, err = {.fd = -1, .to = STDERR_FILENO};
  snprintf(out.path, sizeof out.path, "%s/%s.out", dir, name);
  snprintf(err.path, sizeof err.path, "%s/%s.err", dir, name);
  snprintf(rcpath, sizeof rcpath, "%s/%s.rc", dir, name);
  int rc = -1;
  for (int polls = 0; rc < 0; polls++) {
    px_follow_pump(&out), px_follow_pump(&err);
    FILE *f = fopen(rcpath, "re");
    if (f) {
      if (fscanf(f, "%d", &rc) != 1) rc = 1;
      fclose(f);
      break;
    }
    char st[32];
    int ec;
    if (polls % 20 == 19 && (px_step_job_state(c, id, st, sizeof st, &ec) || px_cli_state_is_finished(st))) {
      px_cmd_error(c, "the allocation (job %llu) has ended", (unsigned long long)id);
      rc = 1;
      break;
    }
    sleep_ms(polls < 20 ? 50 : 200);
  }
  px_follow_pump(&out), px_follow_pump(&err);
  px_follow_fini(&out), px_follow_fini(&err);
  unlink(rcpath);
  snprintf(rcpath, sizeof rcpath, "%s/%s.run", dir, name);
  unlink(rcpath);
  return rc;
}
