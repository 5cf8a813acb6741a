/*
 * cmd_srun_step.c - `srun` inside an allocation, over several nodes: the
 * step goes to the server (POST /v1/jobs/{id}/steps), which has each node's
 * agent start its share of the tasks in the job's cgroup (agent/step.h).
 *
 * The tasks write their output to per-task files in a private directory
 * under the current one, which the nodes share wherever sbatch's output
 * files are (the same assumption as srun outside an allocation): this
 * process copies each file to its own stdout or stderr as it grows
 * ("RANK: " in front of each line with -l), polls the step until every node
 * has reported its tasks' end, and exits with the highest task exit status.
 * SIGINT or SIGTERM cancels the step (DELETE .../steps/{n}) and waits for
 * its end. The directory is removed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_common.h"
#include "cli/step_files.h"

extern char **environ;

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }

/* One task's output file, copied as it grows. */
struct tfile {
  char path[4200];
  int fd, to;
  uint32_t rank;
  char part[4096];               /* -l: the line not yet complete */
  size_t plen;
};

/* srun --container-image and the rest (or salloc's, ctr_env.h): the step runs in the image. */
static int container_body(json_t *b, const struct px_jobspec *spec) {
  const char *k[] = {"container_image", "container_mounts", "container_workdir", "container_env"};
  const char *v[] = {spec->container_image, spec->container_mounts, spec->container_workdir, spec->container_env};
  for (size_t i = 0; i < 4; i++)
    if (v[i] && json_object_set_new(b, k[i], json_string(v[i]))) return -1;
  return 0;
}

/* Variables of the batch step that would be stale in the step's tasks; the
 * agent sets the step's own. */
bool px_step_env_stale(const char *kv) {
  static const char *const names[] = {"SLURM_NTASKS=", "SLURM_NPROCS=", "SLURM_NTASKS_PER_NODE=",
                                      "SLURM_TASKS_PER_NODE=", "SLURM_PROCID=", "SLURM_LOCALID=",
                                      "SLURM_NODEID=", "SLURM_GTIDS=", "SLURM_TASK_PID=", "RANK=",
                                      "LOCAL_RANK=", "WORLD_SIZE=", "LOCAL_WORLD_SIZE=",
                                      "SLURM_STEP_", "PHALANX_STEP_", "PHALANX_NTASKS", "PHALANX_PROCID=",
                                      "PHALANX_LOCALID=", "PHALANX_NODEID="};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strncmp(kv, names[i], strlen(names[i]))) return true;
  return false;
}

static json_t *step_body(const struct px_jobspec *spec, bool nodes_given, uint32_t nodes, char **argv,
                         const char *dir) {
  json_t *b = json_object(), *av = json_array(), *env = json_array();
  char cwd[4096];
  if (!b || !av || !env) goto fail;
  for (char **a = argv; *a; a++)
    if (json_array_append_new(av, json_string(*a))) goto fail;
  for (char **e = environ; *e; e++)
    if (!px_step_env_stale(*e) && json_array_append_new(env, json_string(*e))) goto fail;
  const char *wd = spec->workdir ? spec->workdir : getcwd(cwd, sizeof cwd);
  uint32_t ntasks = spec->ntasks, per = spec->ntasks_per_node;
  if (!ntasks && !per) { /* the job's layout, as srun inherits it */
    const char *n = getenv("SLURM_NTASKS"), *p = getenv("SLURM_NTASKS_PER_NODE");
    if (p && *p) per = (uint32_t)strtoul(p, NULL, 10);
    else if (n && *n && !nodes_given) ntasks = (uint32_t)strtoul(n, NULL, 10);
  }
  if (json_object_set_new(b, "argv", av) || json_object_set_new(b, "env", env)) {
    av = env = NULL;
    goto fail;
  }
  av = env = NULL;
  if ((wd && json_object_set_new(b, "cwd", json_string(wd))) || json_object_set_new(b, "out_dir", json_string(dir)) ||
      json_object_set_new(b, "nodes", json_integer(nodes)) ||
      (ntasks && json_object_set_new(b, "ntasks", json_integer(ntasks))) ||
      (per && !ntasks && json_object_set_new(b, "ntasks_per_node", json_integer(per))) ||
      (spec->gpus_per_task && json_object_set_new(b, "gpus_per_task", json_integer(spec->gpus_per_task))) ||
      (spec->distribution && json_object_set_new(b, "distribution", json_string(spec->distribution))) ||
      container_body(b, spec))
    goto fail;
  return b;
fail:
  json_decref(b);
  json_decref(av);
  json_decref(env);
  return NULL;
}

static void put_all(int fd, const char *p, size_t n) {
  for (ssize_t w; n > 0; p += w, n -= (size_t)w)
    if ((w = write(fd, p, n)) <= 0) return;
}

/* Copies what is new; with label, whole lines with the rank in front
 * (what is left of a last line goes out at the end, flush). */
static void pump(struct tfile *f, bool label, bool flush) {
  if (f->fd < 0 && (f->fd = open(f->path, O_RDONLY | O_CLOEXEC)) < 0) return;
  char buf[65536], pre[16];
  ssize_t r;
  int plen = snprintf(pre, sizeof pre, "%u: ", f->rank);
  while ((r = read(f->fd, buf, sizeof buf)) > 0) {
    if (!label) {
      put_all(f->to, buf, (size_t)r);
      continue;
    }
    for (ssize_t i = 0; i < r; i++) {
      f->part[f->plen++] = buf[i];
      if (buf[i] != '\n' && f->plen < sizeof f->part) continue;
      put_all(f->to, pre, (size_t)plen);
      put_all(f->to, f->part, f->plen);
      f->plen = 0;
    }
  }
  if (flush && label && f->plen) {
    put_all(f->to, pre, (size_t)plen);
    put_all(f->to, f->part, f->plen);
    put_all(f->to, "\n", 1);
    f->plen = 0;
  }
}

/* One request that must answer `want`: 0 with *resp, or 1 after a message
 * (prefix, then the server's error). */
static int call(struct px_cmd *c, const char *method, const char *path, json_t *body, long want,
                const char *prefix, json_t **resp) {
  long status = 0;
  if (px_cmd_call(c, method, path, body, &status, resp)) return 1;
  if (status == want) return 0;
  char msg[512];
  px_client_error_text(status, *resp, msg, sizeof msg);
  px_cmd_error(c, "%s%s", prefix, msg);
  json_decref(*resp);
  *resp = NULL;
  return 1;
}

/* A step is durable (the server journals it), so srun rides out a server
 * restart or a standby's takeover as Slurm's srun rides out slurmctld's:
 * while the server cannot be reached or answers 503 it waits, up to
 * SERVER_WAIT_S, saying so once. 0 with the answer, or 1 after a message. */
#define SERVER_WAIT_S 120
static int poll_step(struct px_cmd *c, const char *path, long *status, json_t **resp) {
  time_t until = time(NULL) + SERVER_WAIT_S;
  bool said = false;
  for (;;) {
    struct px_diag d;
    px_diag_clear(&d);
    *resp = NULL;
    int rc = px_client_call(&c->client, "GET", path, NULL, status, resp, &d);
    if (!rc && *status != 503) return 0;
    if (!rc) snprintf(d.msg, sizeof d.msg, "the server is not ready (503)");
    json_decref(*resp);
    *resp = NULL;
    if (time(NULL) >= until) return fprintf(stderr, "phalanx: %s\n", d.msg), 1;
    if (!said) fprintf(stderr, "srun: %s; waiting for the server\n", d.msg), said = true;
    nanosleep(&(struct timespec){0, 500 * 1000000L}, NULL);
  }
}

/* The step's state and exit code: 0, or 1 after a message. */
static int step_state(struct px_cmd *c, const char *path, char *st, size_t n, int *exit_code, json_t **last) {
  json_t *resp = NULL;
  long status = 0;
  if (poll_step(c, path, &status, &resp)) return 1;
  if (status != 200) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    px_cmd_error(c, "%s", msg);
    json_decref(resp);
    return 1;
  }
  const char *state = json_string_value(json_object_get(resp, "state"));
  snprintf(st, n, "%s", state ? state : "");
  *exit_code = (int)json_integer_value(json_object_get(resp, "exit_code"));
  json_decref(*last);
  *last = resp;
  return 0;
}

/* "srun: error: n02: tasks 2-3: Exited with exit code 3", as Slurm's srun. */
static void say_failures(const json_t *step) {
  json_t *nodes = json_object_get(step, "nodes"), *n;
  size_t i;
  uint32_t first = 0;
  json_array_foreach(nodes, i, n) {
    uint32_t tasks = (uint32_t)json_integer_value(json_object_get(n, "tasks"));
    int ec = (int)json_integer_value(json_object_get(n, "exit_code"));
    int sig = (int)json_integer_value(json_object_get(n, "term_signal"));
    const char *node = json_string_value(json_object_get(n, "node"));
    char range[48];
    if (tasks > 1) snprintf(range, sizeof range, "tasks %u-%u", first, first + tasks - 1);
    else snprintf(range, sizeof range, "task %u", first);
    if (sig) fprintf(stderr, "srun: error: %s: %s: %s\n", node, range, strsignal(sig));
    else if (ec) fprintf(stderr, "srun: error: %s: %s: Exited with exit code %d\n", node, range, ec);
    first += tasks;
  }
}

static int follow(struct px_cmd *c, const char *job, uint32_t step, struct tfile *files, uint32_t nfiles,
                  bool label) {
  char path[128], st[32] = "";
  snprintf(path, sizeof path, "/v1/jobs/%s/steps/%u", job, step);
  int exit_code = 0, polls = 0, rc = 1;
  bool cancelled = false;
  json_t *last = NULL;
  for (;;) {
    if (interrupted && !cancelled) {
      fprintf(stderr, "srun: interrupted: cancelling step %s.%u\n", job, step);
      long status = 0;
      json_t *resp = NULL;
      if (!px_cmd_call(c, "DELETE", path, NULL, &status, &resp)) json_decref(resp);
      cancelled = true;
    }
    if (step_state(c, path, st, sizeof st, &exit_code, &last)) goto done;
    for (uint32_t i = 0; i < nfiles; i++) pump(&files[i], label, false);
    if (strcmp(st, "RUNNING")) break;
    struct timespec t = {0, (polls < 20 ? 50 : 250) * 1000000L};
    nanosleep(&t, NULL);
    polls++;
  }
  for (uint32_t i = 0; i < nfiles; i++) pump(&files[i], label, true);
  say_failures(last);
  if (!strcmp(st, "COMPLETED")) rc = 0;
  else rc = exit_code ? exit_code : 1;
  if (strcmp(st, "COMPLETED") && strcmp(st, "FAILED"))
    fprintf(stderr, "srun: error: step %s.%u ended %s\n", job, step, st);
done:
  json_decref(last);
  return rc;
}

/* POST the step: 0 with *step and *ntasks, or 1 after a message. */
static int post_step(struct px_cmd *c, const char *job, json_t *body, uint32_t *step, uint32_t *ntasks) {
  char path[96];
  snprintf(path, sizeof path, "/v1/jobs/%s/steps", job);
  json_t *resp = NULL;
  char what[96];
  snprintf(what, sizeof what, "Unable to create step for job %s: ", job);
  if (call(c, "POST", path, body, 201, what, &resp)) return 1;
  *step = (uint32_t)json_integer_value(json_object_get(resp, "step_id"));
  *ntasks = (uint32_t)json_integer_value(json_object_get(resp, "ntasks"));
  json_decref(resp);
  return 0;
}

int px_srun_step(struct px_cmd *c, const struct px_jobspec *spec, bool label, bool nodes_given, uint32_t nodes,
                 char **argv) {
  const char *job = getenv("SLURM_JOB_ID");
  char dir[4096], cwd[3900];
  if (!getcwd(cwd, sizeof cwd)) return px_cmd_error(c, "cannot read the current directory: %s", strerror(errno)), 1;
  snprintf(dir, sizeof dir, "%s/.phalanx-srun-%d-%s", cwd, (int)getpid(), job);
  if (mkdir(dir, 0700) && errno != EEXIST)
    return px_cmd_error(c, "cannot create %s for the tasks' output: %s", dir, strerror(errno)), 1;
  json_t *body = step_body(spec, nodes_given, nodes, argv, dir);
  uint32_t step = 0, ntasks = 0;
  int rc = 1;
  struct tfile *files = NULL;
  if (!body) px_cmd_error(c, "the command or an exported variable is not valid UTF-8 text");
  else if (!post_step(c, job, body, &step, &ntasks) && (files = calloc(2 * (size_t)ntasks + 1, sizeof *files))) {
    for (uint32_t r = 0; r < 2 * ntasks; r++) {
      struct tfile *f = &files[r];
      f->rank = r / 2;
      f->fd = -1;
      f->to = r % 2 ? STDERR_FILENO : STDOUT_FILENO;
      snprintf(f->path, sizeof f->path, "%s/%u.%s", dir, f->rank, r % 2 ? "err" : "out");
    }
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    rc = follow(c, job, step, files, 2 * ntasks, label);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
  }
  json_decref(body);
  for (uint32_t r = 0; files && r < 2 * ntasks; r++) {
    if (files[r].fd >= 0) close(files[r].fd);
    unlink(files[r].path);
  }
  free(files);
  rmdir(dir);
  return rc;
}
