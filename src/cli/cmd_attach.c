/*
 * cmd_attach.c - `phalanx attach JOB[.STEP]` and Slurm's `sattach
 * JOB.STEP`: a running job's (or step's) output, as it is written, until
 * it ends.
 *
 * The output is read where the tasks write it, the directory the submit
 * host shares with the nodes (the assumption srun and sbatch's output files
 * already make): the job's StdOut file, or a step's per-task files under its
 * out_dir (GET /v1/jobs/{id}/steps/{n}), each line of a step's task with its
 * rank in front when the step has several (as sattach --label). What was
 * written before is shown first. A terminal step's output goes to the
 * terminal that opened it, not to files: attaching to one is refused,
 * saying so. Ctrl-C detaches; the job goes on.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cmd_common.h"
#include "cli/step_files.h"

#define MAX_FOLLOW 256

static volatile sig_atomic_t detached;
static void on_int(int sig) { (void)sig, detached = 1; }

/* The job's state, or its step's ("" when the server answered no). */
static void state_of(struct px_cmd *c, const char *path, char *st, size_t n, json_t **out) {
  long status = 0;
  json_t *resp = NULL;
  st[0] = '\0';
  if (px_cmd_call(c, "GET", path, NULL, &status, &resp)) return;
  if (status != 200) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    px_cmd_error(c, "%s", msg);
    json_decref(resp);
    return;
  }
  const char *s = json_string_value(json_object_get(resp, "state"));
  if (!s) s = json_string_value(json_object_get(json_object_get(resp, "job"), "state"));
  snprintf(st, n, "%s", s ? s : "?");
  if (out) *out = resp;
  else json_decref(resp);
}

static int follow(struct px_cmd *c, const char *path, struct px_follow *f, size_t nf) {
  struct sigaction sa = {.sa_handler = on_int}, old;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);
  char st[32] = "RUNNING";
  while (!detached && (!strcmp(st, "RUNNING") || !strcmp(st, "PENDING") || !strcmp(st, "CONFIGURING"))) {
    for (size_t i = 0; i < nf; i++) px_follow_pump(&f[i]);
    struct timespec t = {0, 200 * 1000000L};
    nanosleep(&t, NULL);
    state_of(c, path, st, sizeof st, NULL);
    if (!st[0]) break;
  }
  for (size_t i = 0; i < nf; i++) px_follow_pump(&f[i]), f[i].to = -1, px_follow_fini(&f[i]);
  sigaction(SIGINT, &old, NULL);
  return st[0] ? 0 : 1;
}

/* A step: its tasks' files (ranks from the step's task count). */
static int attach_step(struct px_cmd *c, const char *job, unsigned step) {
  char path[128], st[32];
  snprintf(path, sizeof path, "/v1/jobs/%s/steps/%u", job, step);
  json_t *s = NULL;
  state_of(c, path, st, sizeof st, &s);
  if (!s) return 1;
  const char *dir = json_string_value(json_object_get(s, "out_dir"));
  size_t ntasks = (size_t)json_integer_value(json_object_get(s, "ntasks"));
  int rc = 1;
  if (json_is_true(json_object_get(s, "pty")))
    px_cmd_error(c, "step %s.%u is a terminal: its output goes to the terminal that opened it", job, step);
  else if (!dir || !*dir)
    px_cmd_error(c, "step %s.%u: the server does not say where its output goes", job, step);
  else if (ntasks * 2 > MAX_FOLLOW)
    px_cmd_error(c, "step %s.%u has %zu tasks; attach follows at most %d", job, step, ntasks, MAX_FOLLOW / 2);
  else {
    struct px_follow f[MAX_FOLLOW];
    for (size_t i = 0; i < 2 * ntasks; i++) {
      snprintf(f[i].path, sizeof f[i].path, "%s/%zu.%s", dir, i / 2, i % 2 ? "err" : "out");
      f[i].fd = -1;
      f[i].to = i % 2 ? 2 : 1;
    }
    rc = follow(c, path, f, 2 * ntasks);
  }
  json_decref(s);
  return rc;
}

/* A job's output file name: Slurm's common patterns (%j %x %u %%),
 * relative to its working directory; slurm-%j.out when none was given. */
static void out_file(const json_t *spec, const char *job, const char *pat, char *out, size_t n) {
  const char *wd = json_string_value(json_object_get(spec, "workdir"));
  const char *name = json_string_value(json_object_get(spec, "name"));
  const char *user = json_string_value(json_object_get(spec, "user"));
  size_t o = 0;
  if (pat[0] != '/' && wd) o = (size_t)snprintf(out, n, "%s/", wd);
  for (const char *p = pat; *p && o + 1 < n; p++) {
    const char *v = NULL;
    if (p[0] == '%' && p[1]) {
      p++;
      v = *p == 'j' ? job : *p == 'x' ? name : *p == 'u' ? user : *p == '%' ? "%" : "";
    }
    int w = v ? snprintf(out + o, n - o, "%s", v) : snprintf(out + o, n - o, "%c", *p);
    if (w > 0) o += (size_t)w;
  }
  if (o >= n) o = n - 1;
  out[o] = '\0';
}

/* The job: its StdOut (and StdErr when apart) files. */
static int attach_job(struct px_cmd *c, const char *job) {
  char path[128], st[32];
  snprintf(path, sizeof path, "/v1/jobs/%s", job);
  json_t *j = NULL;
  state_of(c, path, st, sizeof st, &j);
  if (!j) return 1;
  json_t *spec = json_object_get(j, "spec");
  const char *out = json_string_value(json_object_get(spec, "stdout_path"));
  const char *err = json_string_value(json_object_get(spec, "stderr_path"));
  struct px_follow f[2] = {{.fd = -1, .to = 1}, {.fd = -1, .to = 2}};
  size_t nf = 1;
  out_file(spec, job, out && *out ? out : "slurm-%j.out", f[0].path, sizeof f[0].path);
  if (err && *err) out_file(spec, job, err, f[1].path, sizeof f[1].path);
  if (err && *err && strcmp(f[0].path, f[1].path)) nf = 2;
  int rc = follow(c, path, f, nf);
  json_decref(j);
  return rc;
}

static int attach(const char *prog, bool slurm, int argc, char **argv) {
  struct px_cmd c;
  px_cmd_init(&c, prog, slurm);
  int rc = 2;
  const char *arg = argc > 1 ? argv[argc - 1] : NULL;
  char job[32] = "";
  unsigned step = 0;
  int used = 0;
  bool has_step = arg && sscanf(arg, "%31[0-9].%u%n", job, &step, &used) == 2 && !arg[used];
  if (!has_step && arg && !(sscanf(arg, "%31[0-9]%n", job, &used) == 1 && !arg[used])) job[0] = '\0';
  if (!job[0] || (slurm && !has_step))
    px_cmd_error(&c, "usage: %s %s", prog, slurm ? "JOBID.STEPID" : "JOBID[.STEPID]");
  else rc = has_step ? attach_step(&c, job, step) : attach_job(&c, job);
  px_cmd_fini(&c);
  return rc;
}

int px_verb_attach(int argc, char **argv) { return attach("phalanx attach", false, argc, argv); }
int px_cmd_sattach(int argc, char **argv, bool native) { (void)native; return attach("sattach", true, argc, argv); }
