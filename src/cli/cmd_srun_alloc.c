/*
 * cmd_srun_alloc.c - `srun` outside an allocation: allocate, run, stream.
 *
 * Slurm's srun asks the controller for an allocation and then runs the step
 * in it, streaming the tasks' output back over the network. Here the
 * allocation is a batch job whose script is this same srun, with the same options and command, which then runs the step inside
 * the allocation as it would in any batch script (cmd_srun.c). The job's
 * stdout and stderr go to two files in the current directory (hidden,
 * removed at the end) that this process follows and copies to its own
 * stdout and stderr, as the tasks write them; the submit directory is
 * shared with the nodes wherever sbatch's output files are. The exit status
 * is the job's: the highest task exit status, as Slurm's srun.
 *
 * An interrupt (Ctrl-C, SIGTERM) cancels the job and waits for its end, so
 * no allocation outlives the command. --pty (an interactive terminal on a
 * node) allocates and runs a terminal step instead (cmd_srun_pty.c). With -N 2 and more, the srun in the job runs its step on every
 * node through the server (cmd_srun_step.c).
 */
#include <errno.h>
#include <fcntl.h>
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

extern char **environ;

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }

/* Our own path, as the job's script will exec it: argv[0] if it names a
 * file, else the first match on PATH (what the shell ran). */
int px_step_self_path(const char *argv0, char *out, size_t n) {
  char cwd[4096];
  if (strchr(argv0, '/')) {
    if (argv0[0] == '/') return snprintf(out, n, "%s", argv0) < (int)n ? 0 : -1;
    if (!getcwd(cwd, sizeof cwd)) return -1;
    return snprintf(out, n, "%s/%s", cwd, argv0) < (int)n ? 0 : -1;
  }
  const char *path = getenv("PATH");
  for (const char *p = path; p && *p;) {
    size_t len = strcspn(p, ":");
    if (len && snprintf(out, n, "%.*s/%s", (int)len, p, argv0) < (int)n && access(out, X_OK) == 0)
      return 0;
    p += len + (p[len] == ':');
  }
  return -1;
}

/* Appends s to the script, quoted for sh. */
void px_step_put_quoted(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputs("'\\''", f);
    else fputc(*s, f);
  }
  fputs("' ", f);
}

/* "#!/bin/sh ... exec SELF OPTIONS... COMMAND ARGS..." */
static char *step_script(const char *self, int argc, char **argv) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  fputs("#!/bin/sh\n# srun outside an allocation: the same srun runs the step in it.\nexec ", f);
  px_step_put_quoted(f, self);
  for (int i = 1; i < argc; i++) px_step_put_quoted(f, argv[i]);
  fputc('\n', f);
  fclose(f);
  return text;
}

int px_step_copy_environ(char ***out) {
  size_t n = 0;
  for (char **e = environ; *e; e++) n++;
  char **v = calloc(n + 1, sizeof *v);
  if (!v) return PX_ENOMEM;
  for (size_t i = 0; i < n; i++)
    if (!(v[i] = strdup(environ[i]))) return px_cli_strv_free(v, i), PX_ENOMEM;
  *out = v;
  return 0;
}

/* --container-image: the command itself is the job, its tasks started in
 * the image by the agents (this srun does not exist inside the image). */
static int container_argv(struct px_jobspec *s, int n, char **argv) {
  if (!(s->argv = calloc((size_t)n + 1, sizeof *s->argv))) return PX_ENOMEM;
  for (int i = 0; i < n; i++)
    if (!(s->argv[i] = strdup(argv[i]))) return PX_ENOMEM; /* the spec's fini frees what was made */
  return 0;
}

/* Who and where, the script, and the two files we follow. */
static int fill_job(struct px_jobspec *s, const struct px_cli_extra *x, const char *self, int argc,
                    char **argv, int first, char *out_pat, char *err_pat, size_t n) {
  char cwd[4096], cmd[4096];
  if (!getcwd(cwd, sizeof cwd)) return PX_EIO;
  /* No user name: the server takes it from the connection (cmd_sbatch.c). */
  s->uid = (uint32_t)getuid();
  s->gid = (uint32_t)getgid();
  snprintf(cmd, sizeof cmd, "%s", argv[first]);
  if ((!s->name && !(s->name = strdup(basename(cmd)))) || !(s->submit_dir = strdup(cwd)) ||
      (!s->workdir && !(s->workdir = strdup(cwd))))
    return PX_ENOMEM;
  if (s->container_image ? container_argv(s, argc - first, argv + first) != 0
                         : !(s->script = step_script(self, argc, argv)))
    return PX_ENOMEM;
  if (!s->env && (!x->export_spec || strcasecmp(x->export_spec, "NONE")) && px_step_copy_environ(&s->env))
    return PX_ENOMEM;
  /* %j: the agent names the files; we learn the id from the answer. */
  snprintf(out_pat, n, "%s/.phalanx-srun-%d-%%j.out", cwd, (int)getpid());
  snprintf(err_pat, n, "%s/.phalanx-srun-%d-%%j.err", cwd, (int)getpid());
  bool user_out = s->stdout_path != NULL;
  if (!s->stdout_path && !(s->stdout_path = strdup(out_pat))) return PX_ENOMEM;
  if (!s->stderr_path && !user_out && !(s->stderr_path = strdup(err_pat))) return PX_ENOMEM;
  return 0;
}

static void follow_init(struct px_follow *f, const char *pat, uint64_t id, bool ours, int to) {
  const char *j = strstr(pat, "%j");
  snprintf(f->path, sizeof f->path, "%.*s%llu%s", (int)(j - pat), pat, (unsigned long long)id, j + 2);
  f->fd = -1;
  f->to = ours ? to : -1;
}

void px_follow_pump(struct px_follow *f) {
  if (f->to < 0) return;
  if (f->fd < 0 && (f->fd = open(f->path, O_RDONLY | O_CLOEXEC)) < 0) return;
  char buf[65536];
  ssize_t r;
  while ((r = read(f->fd, buf, sizeof buf)) > 0)
    for (ssize_t w, off = 0; off < r; off += w)
      if ((w = write(f->to, buf + off, (size_t)(r - off))) <= 0) return;
}

void px_follow_fini(struct px_follow *f) {
  if (f->fd >= 0) close(f->fd);
  if (f->to >= 0) unlink(f->path);
}

/* The job's state; 0 with *st filled, or 1 (message printed). */
int px_step_job_state(struct px_cmd *c, uint64_t id, char *st, size_t n, int *exit_code) {
  char path[64];
  snprintf(path, sizeof path, "/v1/jobs/%llu", (unsigned long long)id);
  long status = 0;
  json_t *resp = NULL;
  if (px_cmd_call(c, "GET", path, NULL, &status, &resp)) return 1;
  struct px_job_info j;
  int rc = status == 200 ? px_cli_job_from_json(resp, &j) : PX_EPROTO;
  json_decref(resp);
  if (rc) {
    px_cmd_error(c, "job %llu: the server's answer could not be read", (unsigned long long)id);
    return 1;
  }
  snprintf(st, n, "%s", j.state);
  *exit_code = j.exit_code;
  px_cli_job_fini(&j);
  return 0;
}

void px_step_cancel_job(struct px_cmd *c, uint64_t id) {
  char path[64];
  snprintf(path, sizeof path, "/v1/jobs/%llu", (unsigned long long)id);
  long status = 0;
  json_t *resp = NULL;
  if (!px_cmd_call(c, "DELETE", path, NULL, &status, &resp)) json_decref(resp);
}

/* Follows the job to its end; returns srun's exit status. */
static int follow_job(struct px_cmd *c, uint64_t id, struct px_follow *out, struct px_follow *err) {
  char st[32] = "";
  int exit_code = 0, polls = 0;
  bool said_queued = false, cancelled = false;
  for (;;) {
    if (interrupted && !cancelled) {
      fprintf(stderr, "srun: interrupted: cancelling job %llu\n", (unsigned long long)id);
      px_step_cancel_job(c, id);
      cancelled = true;
    }
    if (px_step_job_state(c, id, st, sizeof st, &exit_code)) return 1;
    px_follow_pump(out), px_follow_pump(err);
    if (px_cli_state_is_finished(st)) break;
    if (!strcmp(st, "PENDING") && !said_queued && polls >= 2) {
      fprintf(stderr, "srun: job %llu queued and waiting for resources\n", (unsigned long long)id);
      said_queued = true;
    } else if (strcmp(st, "PENDING") && said_queued) {
      fprintf(stderr, "srun: job %llu has been allocated resources\n", (unsigned long long)id);
      said_queued = false;
    }
    /* Short waits first (most steps are short), then at most 4 a second. */
    struct timespec t = {0, (polls < 20 ? 50 : 250) * 1000000L};
    nanosleep(&t, NULL);
    polls++;
  }
  px_follow_pump(out), px_follow_pump(err);
  if (!strcmp(st, "COMPLETED")) return 0;
  if (strcmp(st, "FAILED")) fprintf(stderr, "srun: error: job %llu ended %s\n", (unsigned long long)id, st);
  return exit_code ? exit_code : 1;
}

void px_step_catch(void (*fn)(int), struct sigaction old[2]) {
  struct sigaction sa = {.sa_handler = fn};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old[0]);
  sigaction(SIGTERM, &sa, &old[1]);
}

void px_step_uncatch(const struct sigaction old[2]) {
  sigaction(SIGINT, &old[0], NULL);
  sigaction(SIGTERM, &old[1], NULL);
}

/* POST the job; 0 with *id, or 1 (message in srun's words printed). */
int px_step_allocate(struct px_cmd *c, const struct px_jobspec *spec, uint64_t *id) {
  json_t *body = json_object(), *job = px_cli_jobspec_to_json(spec), *resp = NULL;
  if (!body || !job || json_object_set_new(body, "job", job)) {
    json_decref(body);
    px_cmd_error(c, "the command, an option or an exported variable is not valid UTF-8 text");
    return 1;
  }
  long status = 0;
  int rc = px_cmd_call(c, "POST", "/v1/jobs", body, &status, &resp);
  json_decref(body);
  if (rc) return 1;
  if (status / 100 != 2) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    px_cmd_error(c, "Unable to allocate resources: %s", msg);
    json_decref(resp);
    return 1;
  }
  *id = (uint64_t)json_integer_value(json_object_get(resp, "job_id"));
  json_decref(resp);
  return 0;
}

int px_srun_outside(struct px_cmd *c, struct px_jobspec *spec, const struct px_cli_extra *x, int argc,
                    char **argv, int first) {
  char self[4096], out_pat[4200], err_pat[4200];
  if (first >= argc) return px_cmd_error(c, "No command given to execute."), 1;
  if (x->pty) return px_srun_pty_outside(c, spec, x, argv + first); /* cmd_srun_pty.c */
  if (px_step_self_path(argv[0], self, sizeof self)) return px_cmd_error(c, "cannot find my own path (%s)", argv[0]), 1;
  /* a user's -o (and -e) file is left alone; -o alone takes stderr too */
  bool own_out = !spec->stdout_path, own_err = !spec->stderr_path && !spec->stdout_path;
  int rc = fill_job(spec, x, self, argc, argv, first, out_pat, err_pat, sizeof out_pat);
  if (rc) return px_cmd_error(c, "%s", px_strerror(rc)), 1;
  uint64_t id;
  if (px_step_allocate(c, spec, &id)) return 1;
  struct sigaction old[2];
  px_step_catch(on_signal, old);
  struct px_follow out, err;
  follow_init(&out, out_pat, id, own_out, STDOUT_FILENO);
  follow_init(&err, err_pat, id, own_err, STDERR_FILENO);
  rc = follow_job(c, id, &out, &err);
  px_follow_fini(&out);
  px_follow_fini(&err);
  px_step_uncatch(old);
  return rc;
}
