/*
 * cmd_srun.c - `srun` and `salloc`.
 *
 * Inside an allocation (SLURM_JOB_ID set), a step confined to the node that
 * runs the batch script is launched here, by this process: one child per
 * task with Slurm's per-task variables (SLURM_PROCID, SLURM_LOCALID,
 * SLURM_STEP_ID, ...), each task's share of the job's GPUs with
 * --gpus-per-task, output streamed (prefixed "N: " with -l), and the highest
 * task exit status returned. That covers the common single-node
 * `srun python train.py` lines. The server still records such a step
 * (srun_local.c): its id, its end and what its tasks used, for sacct. A step over several nodes goes to the
 * server, whose agents start its tasks on every node (cmd_srun_step.c).
 * Outside an allocation, srun allocates a job that runs this
 * step in it (cmd_srun_alloc.c); in a salloc shell its step goes through
 * the server's step API (cmd_srun_step.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cmd_common.h"
#include "cli/ctr_env.h"
#include "cli/srun_local.h"
#include "cli/step_files.h"

#define MAX_TASKS 1024

struct step {
  struct px_cmd cmd;
  struct px_jobspec spec;
  struct px_cli_extra x;
  uint32_t ntasks, step_id;
  const char *node;
  char **gpus;               /* the job's GPU ids on this node */
  size_t ngpus;
};

static const char *env_or(const char *name, const char *dflt) {
  const char *v = getenv(name);
  return v && *v ? v : dflt;
}

static void set_num(const char *name, unsigned long v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lu", v);
  setenv(name, buf, 1);
}

/* In the child: the task's environment, then exec. */
static void exec_task(const struct step *s, uint32_t rank, char **argv) {
  char sid[32];
  snprintf(sid, sizeof sid, "%u", s->step_id);
  set_num("SLURM_PROCID", rank);
  set_num("SLURM_LOCALID", rank);
  setenv("SLURM_NODEID", "0", 1);
  setenv("SLURM_STEP_ID", sid, 1);
  setenv("SLURM_STEPID", sid, 1);
  set_num("SLURM_STEP_NUM_TASKS", s->ntasks);
  setenv("SLURM_STEP_NUM_NODES", "1", 1);
  setenv("SLURM_STEP_NODELIST", s->node, 1);
  set_num("SLURM_STEP_TASKS_PER_NODE", s->ntasks);
  set_num("SLURM_NTASKS", s->ntasks);
  set_num("SLURM_NPROCS", s->ntasks);
  if (s->spec.distribution) setenv("SLURM_DISTRIBUTION", s->spec.distribution, 1); /* srun -m, as Slurm's tasks see it */
  uint32_t per = s->spec.gpus_per_task;
  if (per && s->ngpus) { /* task r sees GPUs [r*per, r*per+per) of the job's */
    char list[512] = "";
    size_t o = 0;
    for (uint32_t g = rank * per; g < (rank + 1) * per && g < s->ngpus; g++)
      o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", o ? "," : "", s->gpus[g]);
    setenv("CUDA_VISIBLE_DEVICES", list, 1);
    setenv("GPU_DEVICE_ORDINAL", list, 1);
    setenv("ROCR_VISIBLE_DEVICES", list, 1);
  }
  if (s->spec.workdir && chdir(s->spec.workdir)) {
    fprintf(stderr, "srun: error: cannot enter %s: %s\n", s->spec.workdir, strerror(errno));
    _exit(1);
  }
  execvp(argv[0], argv);
  fprintf(stderr, "srun: error: execve(): %s: %s\n", argv[0], strerror(errno));
  _exit(errno == ENOENT ? 127 : 126);
}

/* -l: copy complete lines from each task's pipe with its rank in front. */
static void pump_labelled(int *fds, uint32_t n) {
  struct pollfd *p = calloc(n, sizeof *p);
  char (*partial)[4096] = calloc(n, sizeof *partial);
  size_t *plen = calloc(n, sizeof *plen);
  if (!p || !partial || !plen) goto done;
  uint32_t open_fds = n;
  for (uint32_t i = 0; i < n; i++) p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
  while (open_fds > 0) {
    if (poll(p, n, -1) < 0 && errno != EINTR) break;
    for (uint32_t i = 0; i < n; i++) {
      if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t got = read(p[i].fd, partial[i] + plen[i], sizeof partial[i] - plen[i] - 1);
      if (got <= 0) {
        if (plen[i]) printf("%u: %.*s\n", i, (int)plen[i], partial[i]);
        close(p[i].fd);
        p[i].fd = -1;
        open_fds--;
        continue;
      }
      plen[i] += (size_t)got;
      char *start = partial[i], *nl;
      while ((nl = memchr(start, '\n', plen[i] - (size_t)(start - partial[i])))) {
        printf("%u: %.*s\n", i, (int)(nl - start), start);
        start = nl + 1;
      }
      plen[i] -= (size_t)(start - partial[i]);
      memmove(partial[i], start, plen[i]);
      if (plen[i] == sizeof partial[i] - 1) { /* a very long line: flush it as is */
        printf("%u: %.*s\n", i, (int)plen[i], partial[i]);
        plen[i] = 0;
      }
    }
    fflush(stdout);
  }
done:
  free(p);
  free(partial);
  free(plen);
}

/* Waits for task r: its exit status for srun's, its usage added to u. */
static int reap_task(const struct step *s, uint32_t r, pid_t pid, struct px_local_usage *u) {
  int st = 0;
  struct rusage ru = {0};
  while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {}
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  if (WIFSIGNALED(st)) {
    fprintf(stderr, "srun: error: %s: task %u: %s\n", s->node, r, strsignal(WTERMSIG(st)));
    if (!u->term_signal) u->term_signal = WTERMSIG(st);
  } else if (code) {
    fprintf(stderr, "srun: error: %s: task %u: Exited with exit code %d\n", s->node, r, code);
    if (code > u->exit_code) u->exit_code = code;
  }
  if ((uint64_t)ru.ru_maxrss > u->peak_rss_kib) u->peak_rss_kib = (uint64_t)ru.ru_maxrss;
  u->cpu_time_ms += (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                    (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
  return code;
}

static int run_tasks(struct step *s, char **argv, struct px_local_usage *u) {
  pid_t pids[MAX_TASKS];
  int fds[MAX_TASKS];
  fflush(NULL);
  for (uint32_t r = 0; r < s->ntasks; r++) {
    int pfd[2] = {-1, -1};
    if (s->x.label && pipe2(pfd, O_CLOEXEC)) return 1;
    pids[r] = fork();
    if (pids[r] < 0) return 1;
    if (pids[r] == 0) {
      if (s->x.label) {
        dup2(pfd[1], STDOUT_FILENO);
        dup2(pfd[1], STDERR_FILENO);
      }
      exec_task(s, r, argv);
    }
    if (s->x.label) {
      close(pfd[1]);
      fds[r] = pfd[0];
    }
  }
  if (s->x.label) pump_labelled(fds, s->ntasks);
  int worst = 0;
  for (uint32_t r = 0; r < s->ntasks; r++) {
    int code = reap_task(s, r, pids[r], u);
    if (code > worst) worst = code;
  }
  return worst;
}

/* Splits the job's GPU list ("0,1,2,3") for --gpus-per-task. */
static void job_gpus(struct step *s) {
  const char *list = env_or("SLURM_JOB_GPUS", env_or("CUDA_VISIBLE_DEVICES", ""));
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", list);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t && s->ngpus < 256; t = strtok_r(NULL, ",", &save)) {
    char **g = realloc(s->gpus, (s->ngpus + 1) * sizeof *g);
    if (!g || !(g[s->ngpus] = strdup(t))) return;
    s->gpus = g;
    s->ngpus++;
  }
}

static int step_in_allocation(struct step *s, int argc, char **argv, int first) {
  const char *job = getenv("SLURM_JOB_ID");
  unsigned long job_nodes = strtoul(env_or("SLURM_JOB_NUM_NODES", "1"), NULL, 10);
  uint32_t nodes = s->spec.nodes_min ? s->spec.nodes_min : (uint32_t)job_nodes;
  if (first >= argc) {
    px_cmd_error(&s->cmd, "No command given to execute.");
    return 1;
  }
  if (s->x.pty) /* a terminal on the job's first node, through the server (cmd_pty.c) */
    return px_pty_step(&s->cmd, job, argv + first, true, s->spec.nodelist);
  if (px_ctr_from_env(&s->spec)) return px_cmd_error(&s->cmd, "out of memory"), 1; /* salloc's image */
  s->ntasks = s->spec.ntasks ? s->spec.ntasks
              : s->spec.ntasks_per_node ? s->spec.ntasks_per_node
                                        : (uint32_t)strtoul(env_or("SLURM_NTASKS", "1"), NULL, 10);
  /* the agents start the tasks on every node (cmd_srun_step.c); from a
   * salloc shell (not on a node) always, even on one node */
  if (nodes > 1 || px_srun_in_salloc() || s->spec.container_image) /* the agent runs the image */
    return px_srun_step(&s->cmd, &s->spec, s->x.label, s->spec.nodes_min != 0, nodes, argv + first);
  if (s->ntasks == 0 || s->ntasks > MAX_TASKS) {
    px_cmd_error(&s->cmd, "Invalid number of tasks: %u", s->ntasks);
    return 1;
  }
  const char *here = getenv("SLURMD_NODENAME");
  s->node = here && *here ? here : env_or("SLURM_JOB_NODELIST", "localhost");
  bool recorded;
  s->step_id = px_srun_local_start(&s->cmd, job, here && *here ? here : NULL, argv + first, s->ntasks, &recorded);
  job_gpus(s);
  struct px_local_usage u = {0};
  int rc = run_tasks(s, argv + first, &u);
  if (recorded) px_srun_local_end(&s->cmd, job, s->step_id, &u);
  return rc;
}

int px_cmd_srun(int argc, char **argv, bool native) {
  struct step s = {0};
  px_cmd_init(&s.cmd, "srun", true);
  px_jobspec_init(&s.spec);
  struct px_cli_optlist l = {0};
  struct px_diag d;
  int first, rc = 1;
  px_diag_clear(&d);
  if (px_cli_parse_argv(PX_TOOL_SRUN, argc, argv, &l, &first, &d) ||
      px_cli_apply(&l, &s.spec, &s.x, s.cmd.now, &d))
    rc = px_cmd_option_error(&s.cmd, &s.x, d.msg);
  else if (getenv("SLURM_JOB_ID"))
    rc = step_in_allocation(&s, argc, argv, first);
  else
    rc = px_srun_outside(&s.cmd, &s.spec, &s.x, argc, argv, first);
  px_cli_strv_free(s.gpus, s.ngpus);
  px_cli_optlist_fini(&l);
  px_cli_extra_fini(&s.x);
  px_jobspec_fini(&s.spec);
  px_cmd_fini(&s.cmd);
  return rc;
}
