/* step.c - job steps inside a job's supervisor (step.h). */
#include "agent/step.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/hostnames.h"
#include "agent/jobenv.h"
#include "agent/pty.h"
#include "agent/task.h"
#include "util/error.h"
#include "util/log.h"

#define NEVER INT64_MAX
#define MAX_STEP_TASKS 1024

static void notify_agent(const struct px_step_host *h, uint32_t id) {
  if (!h->site->notify[0]) return;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%.107s", h->site->notify);
  const char *base = strrchr(h->dir, '/') ? strrchr(h->dir, '/') + 1 : h->dir;
  char msg[256];
  int n = snprintf(msg, sizeof msg, "step:%s:%u", base, id);
  sendto(fd, msg, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&a, sizeof a);
  close(fd);
}

/* The end of a step on this node: the worst exit code, the first signal,
 * what its tasks used (r: NULL when none started). */
static void step_end(struct px_step_host *h, uint32_t id, const char *state, int exit_code, int sig,
                     const struct px_step_run *r) {
  char name[64], line[160];
  snprintf(name, sizeof name, "step.%u.status", id);
  snprintf(line, sizeof line, "%s %d %d %llu %llu %lld\n", state, exit_code, sig,
           (unsigned long long)(r ? r->cpu_time_ms : 0), (unsigned long long)(r ? (r->peak_rss_kib + 1023) / 1024 : 0),
           (long long)time(NULL));
  if (px_file_put(h->dir, name, line))
    px_error("job %llu: cannot write the status of step %u", (unsigned long long)h->l->job_id, id);
  px_info("job %llu: step %u %s exit %d signal %d", (unsigned long long)h->l->job_id, id, state, exit_code, sig);
  notify_agent(h, id);
}

static void run_free(struct px_step_run *r) {
  if (r->ctr) px_ctr_fini(r->ctr);
  free(r->ctr);
  free(r->pids);
  free(r->wstatus);
  memset(r, 0, sizeof *r);
}

static void run_done(struct px_step_host *h, struct px_step_run *r) {
  int worst = 0, sig = 0;
  for (uint32_t i = 0; i < r->ntasks; i++) {
    int ws = r->wstatus[i];
    if (WIFEXITED(ws) && WEXITSTATUS(ws) > worst) worst = WEXITSTATUS(ws);
    if (WIFSIGNALED(ws) && !sig) sig = WTERMSIG(ws);
  }
  step_end(h, r->id, sig || worst ? "FAILED" : "COMPLETED", worst ? worst : sig ? 128 + sig : 0, sig, r);
  run_free(r);
}

/* The job's order as the step sees it: the step's command, layout,
 * environment, directory and output files. Pointers borrowed from both. */
static int step_launch(const struct px_step_host *h, const struct px_step_order *o, struct px_launch *sl,
                       char *out, char *err, size_t n) {
  const struct px_launch *l = h->l;
  *sl = *l;
  int rank = -1;
  if (o->pty_session && o->nnodes == 1) { /* a terminal: any one node of the job (srun --pty -w) */
    uint32_t k = 0;
    while (k < l->nnodes && strcmp(o->nodes[0], l->nodes[k])) k++;
    if (k == l->nnodes) return PX_EINVAL;
    if (strcmp(o->nodes[0], h->site->node)) return PX_ENOENT;
    sl->nodes = l->nodes + k;
    if (l->node_addrs) sl->node_addrs = l->node_addrs + k;
    if (l->gpus_per_node) sl->gpus_per_node = l->gpus_per_node + k;
    l = sl; /* the prefix check below now holds: the step's one node is the first */
  }
  for (uint32_t i = 0; i < o->nnodes; i++) {
    /* a prefix of the job's nodes, so addresses and GPU counts line up */
    if (i >= l->nnodes || strcmp(o->nodes[i], l->nodes[i])) return PX_EINVAL;
    if (!strcmp(o->nodes[i], h->site->node)) rank = (int)i;
  }
  if (rank < 0) return PX_ENOENT;
  snprintf(out, n, "%s/%%t.out", o->out_dir);
  snprintf(err, n, "%s/%%t.err", o->out_dir);
  sl->script = NULL;
  sl->argv = o->argv;
  if (o->env) sl->env = o->env;
  if (o->cwd) sl->workdir = o->cwd;
  sl->stdout_path = out;
  sl->stderr_path = err;
  sl->stdin_path = NULL;
  sl->nnodes = o->nnodes;
  sl->node_rank = (uint32_t)rank;
  sl->ntasks = o->ntasks;
  sl->tasks_per_node = o->tasks_per_node;
  if (o->distribution) sl->distribution = o->distribution; /* srun -m: the ranks of this step */
  sl->container_image = o->container_image; /* the step's own image, or the host */
  sl->container_mounts = o->container_mounts;
  sl->container_workdir = o->container_workdir;
  sl->container_env = o->container_env;
  return 0;
}

/* SLURM_STEP_ID and the job's own node list, which the step's layout hides. */
static int step_env(const struct px_launch *l, uint32_t id, char **after, size_t n) {
  size_t k = 0;
  char list[4096];
  px_agent_hostlist(l->nodes, l->nnodes, list, sizeof list);
  const char *fmt[][2] = {{"SLURM_STEP_ID", "%u"}, {"SLURM_STEPID", "%u"}, {"PHALANX_STEP_ID", "%u"}};
  for (size_t i = 0; i < 3 && k < n; i++) {
    char v[64];
    snprintf(v, sizeof v, "%s=%u", fmt[i][0], id);
    if (!(after[k++] = strdup(v))) return PX_ENOMEM;
  }
  char v[4200];
  snprintf(v, sizeof v, "SLURM_JOB_NUM_NODES=%u", l->nnodes);
  if (k < n && !(after[k++] = strdup(v))) return PX_ENOMEM;
  snprintf(v, sizeof v, "SLURM_JOB_NODELIST=%s", list);
  if (k < n && !(after[k++] = strdup(v))) return PX_ENOMEM;
  return 0;
}

static int spawn_all(struct px_step_host *h, struct px_step_run *r, const struct px_launch *sl,
                     uint32_t gpus_per_task, char **after, char *err, size_t errlen) {
  uint32_t n = sl->tasks_per_node[sl->node_rank];
  if (n > MAX_STEP_TASKS) return snprintf(err, errlen, "too many tasks on one node"), PX_ERANGE;
  r->pids = calloc(n, sizeof *r->pids);
  r->wstatus = calloc(n, sizeof *r->wstatus);
  if (!r->pids || !r->wstatus) return snprintf(err, errlen, "out of memory"), PX_ENOMEM;
  for (uint32_t i = 0; i < n; i++) {
    struct px_task_spec t = {.l = sl, .site = h->site, .cg = h->cg, .local_id = i,
                             .renumber_gpus = h->renumber_gpus, .pgid = *h->pgid,
                             .truncate_output = true, .env_after = after, .gpus_per_task = gpus_per_task,
                             .ctr = r->ctr};
    pid_t pid;
    if (px_task_spawn(&t, &pid, err, errlen)) return PX_EIO;
    if (!*h->pgid) *h->pgid = pid;
    r->pids[r->ntasks++] = pid;
    r->alive++;
  }
  return 0;
}

/* A step whose container cannot start says why where srun looks: the
 * error file of its first task here, written as the job's user. */
static void step_tell(const struct px_launch *sl, const char *out_dir, const char *why) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%u.err", out_dir, px_jobenv_proc_id(sl, 0));
  pid_t c = fork();
  if (c == 0) {
    if (initgroups(sl->user, sl->gid) || setgid(sl->gid) || setuid(sl->uid)) _exit(1);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) dprintf(fd, "phalanx: error: %s\n", why);
    _exit(0);
  }
  while (c > 0 && waitpid(c, NULL, 0) < 0 && errno == EINTR) {}
}

/* srun --container-image: the step's own container (its image is in the
 * node's cache after the first step that used it). */
static int step_container(const struct px_step_host *h, struct px_step_run *r, const struct px_launch *sl, char *err,
                          size_t n) {
  if (!sl->container_image) return 0;
  char tag[32];
  snprintf(tag, sizeof tag, "s%u", r->id);
  if (!(r->ctr = malloc(sizeof *r->ctr))) return snprintf(err, n, "out of memory"), PX_ENOMEM;
  if (px_ctr_prepare(r->ctr, sl, h->site, h->dir, tag, err, n) == 0) return 0;
  free(r->ctr);
  r->ctr = NULL;
  return PX_EIO;
}

void px_step_start(struct px_step_host *h, uint32_t id) {
  char name[64], out[4200], errp[4200], err[512] = "";
  snprintf(name, sizeof name, "step.%u.json", id);
  char *text = px_file_get(h->dir, name);
  struct px_step_order o;
  struct px_launch sl;
  struct px_diag d;
  char *after[16] = {0};
  size_t nafter = 5;
  struct px_step_run *r = NULL;
  for (int i = 0; i < PX_STEPS_MAX && !r; i++)
    if (!h->run[i].used) r = &h->run[i];
  int rc = !text ? PX_ENOENT : px_step_order_decode(text, &o, &d);
  free(text);
  if (rc) return step_end(h, id, "FAILED", 1, 0, NULL);
  rc = step_launch(h, &o, &sl, out, errp, sizeof out);
  if (rc == PX_ENOENT) snprintf(err, sizeof err, "this node is not one of the step's");
  else if (rc) snprintf(err, sizeof err, "the step's nodes are not the job's");
  else if (!r) rc = PX_ELIMIT, snprintf(err, sizeof err, "more than %d steps at once", PX_STEPS_MAX);
  else if ((rc = step_env(h->l, id, after, 5)) || (rc = px_pty_step_env(&o, after, &nafter, 15)))
    snprintf(err, sizeof err, "out of memory");
  if (!rc) {
    *r = (struct px_step_run){.used = true, .id = id, .kill_at_ms = NEVER};
    if ((rc = step_container(h, r, &sl, err, sizeof err))) step_tell(&sl, o.out_dir, err);
    if (!rc) rc = spawn_all(h, r, &sl, o.gpus_per_task, after, err, sizeof err);
  }
  for (int i = 0; i < 16; i++) free(after[i]);
  px_step_order_fini(&o);
  if (!rc) return;
  px_error("job %llu: step %u: %s", (unsigned long long)h->l->job_id, id, err);
  if (r && r->used && r->alive) { /* some started: they go, the step ends when they are reaped */
    for (uint32_t i = 0; i < r->ntasks; i++)
      if (r->pids[i] > 0) kill(r->pids[i], SIGKILL);
    return;
  }
  if (r && r->used) run_free(r);
  step_end(h, id, "FAILED", 1, 0, NULL);
}

void px_step_signal(struct px_step_host *h, uint32_t id, int sig, int grace_s) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  for (int i = 0; i < PX_STEPS_MAX; i++) {
    struct px_step_run *r = &h->run[i];
    if (!r->used || r->id != id) continue;
    for (uint32_t k = 0; k < r->ntasks; k++)
      if (r->pids[k] > 0) {
        if (sig == SIGTERM) kill(r->pids[k], SIGCONT);
        if (sig > 0) kill(r->pids[k], sig);
      }
    if (grace_s >= 0 && now + grace_s * 1000LL < r->kill_at_ms) r->kill_at_ms = now + grace_s * 1000LL;
  }
}

bool px_step_reaped(struct px_step_host *h, pid_t pid, int wstatus, const struct rusage *ru) {
  for (int i = 0; i < PX_STEPS_MAX; i++) {
    struct px_step_run *r = &h->run[i];
    for (uint32_t k = 0; r->used && k < r->ntasks; k++) {
      if (r->pids[k] != pid) continue;
      r->pids[k] = -pid;
      r->wstatus[k] = wstatus;
      if (ru) {
        r->cpu_time_ms += (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000 +
                          (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1000;
        if ((uint64_t)ru->ru_maxrss > r->peak_rss_kib) r->peak_rss_kib = (uint64_t)ru->ru_maxrss;
      }
      if (--r->alive == 0) run_done(h, r);
      return true;
    }
  }
  return false;
}

int px_step_next_timeout(const struct px_step_host *h, int64_t now_ms) {
  int64_t t = NEVER;
  for (int i = 0; i < PX_STEPS_MAX; i++)
    if (h->run[i].used && h->run[i].kill_at_ms - now_ms < t) t = h->run[i].kill_at_ms - now_ms;
  if (t == NEVER) return -1;
  return t < 0 ? 0 : t > 60000 ? 60000 : (int)t;
}

void px_step_timers(struct px_step_host *h, int64_t now_ms) {
  for (int i = 0; i < PX_STEPS_MAX; i++) {
    struct px_step_run *r = &h->run[i];
    if (!r->used || now_ms < r->kill_at_ms) continue;
    for (uint32_t k = 0; k < r->ntasks; k++)
      if (r->pids[k] > 0) kill(r->pids[k], SIGKILL);
    r->kill_at_ms = NEVER;
  }
}

void px_step_fini(struct px_step_host *h) {
  for (int i = 0; i < PX_STEPS_MAX; i++) run_free(&h->run[i]);
}

int px_step_status_read(const char *jobdir, uint32_t id, struct px_step_status *st) {
  char name[64];
  snprintf(name, sizeof name, "step.%u.status", id);
  char *text = px_file_get(jobdir, name);
  int ec = 0, sig = 0;
  unsigned long long cpu = 0, mib = 0;
  long long end = 0;
  memset(st, 0, sizeof *st);
  bool ok = text && sscanf(text, "%23s %d %d %llu %llu %lld", st->state, &ec, &sig, &cpu, &mib, &end) >= 3;
  free(text);
  if (!ok) return PX_ENOENT;
  st->exit_code = ec;
  st->term_signal = sig;
  st->cpu_time_ms = cpu;
  st->peak_mem_mib = mib;
  st->end_time = end;
  return 0;
}

int px_job_ctl_line(const char *jobdir, const char *line) {
  char path[4200];
  snprintf(path, sizeof path, "%s/ctl", jobdir);
  int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return PX_ESTATE;
  size_t len = strlen(line);
  ssize_t w = write(fd, line, len); /* < PIPE_BUF: atomic */
  close(fd);
  return w == (ssize_t)len ? 0 : PX_ESTATE;
}
