/* supervise.c - the per-job supervisor (supervise.h). */
#include "agent/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/cgroup.h"
#include "agent/jobdir.h"
#include "agent/mig_dev.h"
#include "agent/mps.h"
#include "agent/step.h"
#include "agent/task.h"
#include "proto/agent_msg.h"
#include "util/error.h"
#include "util/log.h"

#define MAX_LOCAL_TASKS 1024
#define NEVER INT64_MAX

struct sup {
  const char *dir;
  struct px_launch l;
  struct px_site site;
  struct px_cg_layout lay;
  struct px_cgroup cg;
  struct px_job_status st;
  bool renumber;
  pid_t pids[MAX_LOCAL_TASKS];
  int wstatus[MAX_LOCAL_TASKS];
  uint32_t ntasks, alive;
  pid_t pgid;
  char reason[32];               /* the end the agent or the limit asked for */
  int64_t signal_at, limit_at;   /* wall ms: the job's --signal, the time limit */
  int64_t kill_at;               /* monotonic ms: SIGKILL everything */
  bool hold;                     /* no local task: hold the allocation until told */
  bool pooled;                   /* the cgroup is the agent's slot: kept for the next job */
  uint64_t oom_base;             /* its OOM kill count before this job */
  struct px_step_host steps;     /* job steps (srun) running here */
  struct px_ctr ctr;             /* --container-image: the job's container here */
  bool has_ctr;
};

static int64_t now_ms(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void fail_launch(struct sup *s, const char *msg) {
  if (!s->st.error[0]) snprintf(s->st.error, sizeof s->st.error, "%.255s", msg);
  px_error("job %llu: %s", (unsigned long long)s->l.job_id, msg);
}

/* Each process gets a catchable signal exactly once: the cgroup holds every
 * process of the job (setsid'd ones too), so the process group is only the
 * fallback without a cgroup. SIGKILL goes both ways, as a second net. */
static void signal_all(struct sup *s, int sig) {
  if (s->cg.version) px_cg_kill(&s->cg, sig);
  if (s->pgid > 0 && (!s->cg.version || sig == SIGKILL)) kill(-s->pgid, sig);
}

static int load(struct sup *s) {
  char *text = px_file_get(s->dir, "launch.json");
  struct px_diag d;
  if (!text) return PX_ENOENT;
  int rc = px_launch_decode(text, &s->l, &d);
  free(text);
  if (rc) {
    px_error("%s/launch.json: %s", s->dir, d.msg);
    return rc;
  }
  rc = px_site_read(s->dir, &s->site);
  if (rc) px_launch_fini(&s->l);
  return rc;
}

/* Who may run, where the cgroup goes and what it limits. */
static void prepare(struct sup *s) {
  const struct px_launch *l = &s->l;
  struct passwd *pw = getpwnam(l->user);
  if (!pw || pw->pw_uid != l->uid) return fail_launch(s, "the submitting user is unknown on this node (or has another uid)");
  if (l->uid == 0 && !s->site.allow_root) return fail_launch(s, "jobs of root are refused (AllowRootJobs=no)");
  if (s->site.no_cgroup) return;
  int rc = px_cg_probe(&s->lay, s->site.cgroup_root[0] ? s->site.cgroup_root : NULL, s->site.cgroup_name);
  if (rc) return fail_launch(s, "no usable cgroup hierarchy (memory controller) on this node");
  char cpus[2048] = "", name[64], err[512] = "";
  size_t len = 0;
  for (uint32_t i = 0; !s->site.emulated_cpus && i < l->ncpu_ids && len < sizeof cpus - 12; i++)
    len += (size_t)snprintf(cpus + len, sizeof cpus - len, "%s%u", i ? "," : "", l->cpu_ids[i]);
  uint32_t deny[64], ndeny = 0;
  for (uint32_t g = 0; g < s->site.node_ngpus && g < 64; g++) {
    bool mine = false;
    for (uint32_t k = 0; k < l->ngpus; k++) mine |= l->gpus[k] == g;
    if (!mine) deny[ndeny++] = g;
  }
  struct px_cg_dev devs[PX_MIG_DEVS_MAX];
  uint32_t ndevs = 0;
  if (s->site.gpu_devs[0] && px_mig_devices_deny(s->site.gpu_devs, l->gpus, l->ngpus, devs, &ndevs))
    return fail_launch(s, "cannot read the MIG instances' devices (STATE/gpu_devices)");
  /* pooled slots on v1 only: v2 has no way to restart a group's peak (memory.peak) */
  s->pooled = s->site.cg_slot && s->lay.version == 1;
  struct px_cg_limits lim = {l->mem_mib, len ? cpus : NULL, s->site.pids_max, deny, ndeny, devs, ndevs, s->pooled};
  if (s->pooled) snprintf(name, sizeof name, "slot_%u", s->site.cg_slot);
  else snprintf(name, sizeof name, "job_%llu", (unsigned long long)l->job_id);
  if (px_cg_create(&s->lay, name, &lim, &s->cg, err, sizeof err)) return fail_launch(s, err);
  if (s->pooled) s->oom_base = px_cg_oom_kills(&s->cg);
  s->renumber = px_cg_constrains_devices(&s->lay) && s->site.node_ngpus && !s->site.emulated_gpus;
}

/* The script goes where its user (and nobody else) can run it. */
static int write_script(struct sup *s, char *path, size_t size) {
  snprintf(path, size, "%s/slurm_script", s->dir);
  if (px_file_put(s->dir, "slurm_script", s->l.script) || chown(path, s->l.uid, s->l.gid) ||
      chmod(path, 0500) || chmod(s->dir, 0711)) {
    fail_launch(s, "cannot write the batch script");
    return PX_EIO;
  }
  return 0;
}

static void start_tasks(struct sup *s) {
  const struct px_launch *l = &s->l;
  char script[4096];
  bool batch = l->script != NULL;
  if (batch && l->node_rank != 0) {
    s->hold = true; /* the batch step runs on the first node; here the allocation waits for steps */
    return;
  }
  if (batch && write_script(s, script, sizeof script)) return;
  uint32_t n = batch ? 1 : l->tasks_per_node[l->node_rank];
  if (n > MAX_LOCAL_TASKS) return fail_launch(s, "too many tasks on one node");
  char why[1024];
  if (l->container_image && px_ctr_prepare(&s->ctr, l, &s->site, s->dir, "batch", why, sizeof why)) return fail_launch(s, why);
  s->has_ctr = l->container_image != NULL;
  for (uint32_t i = 0; i < n; i++) {
    /* --open-mode=append: a requeued job's log grows across its runs */
    bool append = l->open_mode && !strcmp(l->open_mode, "append");
    struct px_task_spec t = {l, &s->site, &s->cg, batch ? script : NULL, i, batch, s->renumber,
                             s->pgid, i == 0 && !append, NULL, 0, s->has_ctr ? &s->ctr : NULL};
    char err[512];
    pid_t pid;
    if (px_task_spawn(&t, &pid, err, sizeof err)) {
      fail_launch(s, err);
      signal_all(s, SIGKILL);
      return;
    }
    if (!s->pgid) s->pgid = pid;
    s->pids[s->ntasks++] = pid;
    s->alive++;
  }
}

static void reap(struct sup *s) {
  int ws;
  pid_t pid;
  struct rusage ru;
  while ((pid = wait4(-1, &ws, WNOHANG, &ru)) > 0) { /* wait4: a step's tasks' usage (sacct N.0) */
    if (px_step_reaped(&s->steps, pid, ws, &ru)) continue;
    for (uint32_t i = 0; i < s->ntasks; i++) {
      if (s->pids[i] != pid) continue;
      s->wstatus[i] = ws;
      s->pids[i] = -pid; /* reaped */
      s->alive--;
    }
  }
}

/* When the time limit (and the --signal before it) falls, from the start. */
static void limit_times(struct sup *s) {
  const struct px_launch *l = &s->l;
  s->signal_at = s->limit_at = NEVER;
  int64_t start = (l->start_time > 0 ? l->start_time : s->st.start_time) * 1000;
  if (l->time_limit_s > 0 && l->time_limit_s < INT64_MAX / 2000) {
    s->limit_at = start + l->time_limit_s * 1000;
    if (l->signal_num > 0) s->signal_at = s->limit_at - (int64_t)l->signal_time_s * 1000;
  }
}

static void set_limits(struct sup *s) {
  s->kill_at = NEVER;
  limit_times(s);
}

/* "limit SECONDS": the server changed the running job's time limit
 * (scontrol update TimeLimit=); a job already stopped for its old one
 * stays stopped. */
static void new_limit(struct sup *s, long long limit_s) {
  if (limit_s <= 0 || !strcmp(s->reason, "TIMEOUT")) return;
  px_info("job %llu: time limit now %lld s", (unsigned long long)s->l.job_id, limit_s);
  s->l.time_limit_s = limit_s;
  limit_times(s);
}

/* A stop or signal order: sig to every task (none when 0), SIGKILL after
 * grace seconds (-1: never). Only a stop (grace >= 0) names the job's end; a
 * signal-only order (scancel --signal, a preemption warning) leaves it to
 * run on. */
static void obey(struct sup *s, int sig, int grace, const char *reason) {
  if (grace >= 0 && reason[0] && !s->reason[0]) snprintf(s->reason, sizeof s->reason, "%s", reason);
  if (sig == SIGTERM) signal_all(s, SIGCONT);
  if (sig > 0) signal_all(s, sig);
  int64_t at = now_ms(CLOCK_MONOTONIC) + (int64_t)grace * 1000;
  if (grace >= 0 && at < s->kill_at) s->kill_at = at;
  if (s->hold && grace >= 0 && reason[0]) s->hold = false;
}

/* "SIG GRACE REASON" lines from the agent (and "step", "stepsig", "limit"). */
static void read_orders(struct sup *s, int fd) {
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  if (n <= 0) return;
  buf[n] = '\0';
  for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
    int sig = 0, grace = -1;
    char reason[32] = "";
    unsigned step;
    if (sscanf(line, "step %u", &step) == 1) { /* step.h */
      px_step_start(&s->steps, step);
      continue;
    }
    long long limit_s;
    if (sscanf(line, "limit %lld", &limit_s) == 1) {
      new_limit(s, limit_s);
      continue;
    }
    if (sscanf(line, "stepsig %u %d %d", &step, &sig, &grace) == 3) {
      px_step_signal(&s->steps, step, sig, grace);
      continue;
    }
    if (sscanf(line, "%d %d %31s", &sig, &grace, reason) < 2) continue;
    if (strcmp(reason, "-") == 0) reason[0] = '\0';
    px_info("job %llu: order signal %d grace %d %s", (unsigned long long)s->l.job_id, sig, grace, reason);
    obey(s, sig, grace, reason);
  }
}

/* SIGTERM or SIGINT to the supervisor itself (an administrator's kill, or
 * any process manager's stop): the job is cancelled as by an order, its
 * tasks signalled and killed after KillWait, and its end written for the
 * agent to report. Before, the signal was read and dropped, and a
 * supervisor whose agent was gone (a held allocation waits for the agent
 * forever) outlived every SIGTERM. SIGHUP and SIGUSR1 stay ignored: the
 * supervisor has no terminal, and a stray one must not end a job. */
static void signalled(struct sup *s, const struct signalfd_siginfo *si) {
  if (si->ssi_signo != SIGTERM && si->ssi_signo != SIGINT) return;
  px_info("job %llu: supervisor got signal %u from pid %u: cancelling the job", (unsigned long long)s->l.job_id,
          si->ssi_signo, si->ssi_pid);
  obey(s, SIGTERM, (int)s->site.kill_wait_s, "CANCELLED");
}

static void on_timers(struct sup *s) {
  int64_t wall = now_ms(CLOCK_REALTIME);
  if (wall >= s->signal_at) {
    signal_all(s, s->l.signal_num);
    s->signal_at = NEVER;
  }
  if (wall >= s->limit_at) {
    px_info("job %llu: time limit reached", (unsigned long long)s->l.job_id);
    if (!s->reason[0]) snprintf(s->reason, sizeof s->reason, "TIMEOUT");
    signal_all(s, SIGCONT);
    signal_all(s, SIGTERM);
    int64_t at = now_ms(CLOCK_MONOTONIC) + s->site.kill_wait_s * 1000;
    if (at < s->kill_at) s->kill_at = at;
    s->limit_at = NEVER;
    s->hold = false;
  }
  if (now_ms(CLOCK_MONOTONIC) >= s->kill_at) {
    signal_all(s, SIGKILL);
    s->kill_at = NEVER;
  }
  px_step_timers(&s->steps, now_ms(CLOCK_MONOTONIC));
}

static int next_timeout(const struct sup *s) {
  int64_t wall = now_ms(CLOCK_REALTIME), mono = now_ms(CLOCK_MONOTONIC), t = NEVER;
  if (s->signal_at != NEVER && s->signal_at - wall < t) t = s->signal_at - wall;
  if (s->limit_at != NEVER && s->limit_at - wall < t) t = s->limit_at - wall;
  if (s->kill_at != NEVER && s->kill_at - mono < t) t = s->kill_at - mono;
  int st = px_step_next_timeout(&s->steps, mono);
  if (st >= 0 && st < t) t = st;
  if (t == NEVER) return -1;
  return t < 0 ? 0 : t > 60000 ? 60000 : (int)t;
}

/* The job's end state from how its tasks ended (see docs/agent.md). */
static void decide(struct sup *s, const struct px_cg_stats *cs) {
  struct px_job_status *st = &s->st;
  int worst_exit = 0, sig = 0;
  for (uint32_t i = 0; i < s->ntasks; i++) {
    int ws = s->wstatus[i];
    if (WIFEXITED(ws) && WEXITSTATUS(ws) > worst_exit) worst_exit = WEXITSTATUS(ws);
    if (WIFSIGNALED(ws) && !sig) sig = WTERMSIG(ws);
  }
  st->exit_code = worst_exit;
  st->term_signal = sig;
  const char *state = "COMPLETED";
  if (st->error[0]) {
    state = "FAILED";
    if (!st->exit_code) st->exit_code = 1;
  } else if (s->reason[0] && strcmp(s->reason, "COMPLETED") != 0) {
    state = s->reason;
  } else if (cs->oom_kills > 0 || (sig == SIGKILL && cs->mem_limit_hit)) {
    state = "OUT_OF_MEMORY";
  } else if (sig || worst_exit) {
    state = "FAILED";
  }
  snprintf(st->state, sizeof st->state, "%.23s", state);
}

static void notify_agent(const struct sup *s) {
  if (!s->site.notify[0]) return;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%.107s", s->site.notify);
  const char *base = strrchr(s->dir, '/') ? strrchr(s->dir, '/') + 1 : s->dir;
  sendto(fd, base, strlen(base), MSG_DONTWAIT, (struct sockaddr *)&a, sizeof a);
  close(fd);
}

/* CPU time of every process of the job: each is this subreaper's child or
 * descendant, waited for by now (v1 job groups have no cpuacct, cgroup.c). */
static uint64_t children_cpu_ms(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_CHILDREN, &ru) != 0) return 0;
  return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
         (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

/* Before the status: the agent gives the slot to its next job once it reads it. */
static void end_cgroup(struct sup *s) {
  if (!s->pooled) return px_cg_destroy(&s->cg);
  char retired[64];
  snprintf(retired, sizeof retired, "job_%llu", (unsigned long long)s->l.job_id);
  px_cg_release(&s->cg, retired);
}

static void finish(struct sup *s) {
  /* Nothing outlives the job: stragglers in the cgroup or process group die now. */
  signal_all(s, SIGKILL);
  if (s->cg.version && px_cg_drain(&s->cg, 10000)) px_warn("job %llu: cgroup not empty after 10 s", (unsigned long long)s->l.job_id);
  while (waitpid(-1, NULL, WNOHANG) > 0) {}
  if (s->has_ctr) px_ctr_fini(&s->ctr); /* before the status: then the agent may recycle the directory */
  s->has_ctr = false;
  struct px_cg_stats cs = {0};
  if (s->cg.version) px_cg_stats(&s->cg, &cs);
  cs.oom_kills = cs.oom_kills > s->oom_base ? cs.oom_kills - s->oom_base : 0;
  s->st.peak_mem_mib = cs.peak_mem_mib;
  s->st.cpu_time_ms = s->cg.version == 2 ? cs.cpu_time_ms : children_cpu_ms();
  s->st.end_time = time(NULL);
  decide(s, &cs);
  if (s->cg.version) end_cgroup(s);
  if (px_status_write(s->dir, &s->st)) px_error("job %llu: cannot write status", (unsigned long long)s->l.job_id);
  px_info("job %llu: %s exit %d signal %d", (unsigned long long)s->l.job_id, s->st.state, s->st.exit_code, s->st.term_signal);
  notify_agent(s);
}

static int open_ctl(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/ctl", dir);
  if (mkfifo(path, 0600) != 0 && errno != EEXIST) return -1;
  /* O_RDWR: the FIFO never reports end-of-file when a writer leaves */
  return open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
}

static void write_state(struct sup *s) {
  struct px_job_state js = {getpid(), px_proc_start(getpid()), s->pgid, s->cg};
  if (px_state_write(s->dir, &js)) px_warn("job %llu: cannot write state.json", (unsigned long long)s->l.job_id);
}

static void loop(struct sup *s, int sfd, int cfd) {
  while (s->alive > 0 || s->hold) {
    struct pollfd p[2] = {{sfd, POLLIN, 0}, {cfd, POLLIN, 0}};
    int n = poll(p, cfd >= 0 ? 2 : 1, next_timeout(s));
    if (n < 0 && errno != EINTR) break;
    if (p[0].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) signalled(s, &si);
      reap(s);
    }
    if (cfd >= 0 && (p[1].revents & POLLIN)) read_orders(s, cfd);
    on_timers(s);
    reap(s);
  }
}

/* A fractional job: its GPU's MPS daemon, where the node has MPS (mps.h).
 * Without it, or when it fails, the job runs with its limits visible but
 * not enforced (site.mps_control cleared: the environment says so). */
static bool mps_begin(struct sup *s) {
  char err[512];
  if (!s->l.gpu_share || s->l.ngpus != 1 || !s->site.mps_control[0]) return false;
  if (!px_mps_join(s->site.mps_control, s->site.mps_dir, s->l.gpus[0], s->l.job_id, err, sizeof err)) return true;
  px_warn("job %llu: %s: its GPU share is not enforced", (unsigned long long)s->l.job_id, err);
  s->site.mps_control[0] = '\0';
  return false;
}

int px_supervise_main(const char *jobdir) {
  static struct sup s; /* large (cgroup paths); one per process */
  memset(&s, 0, sizeof s);
  s.dir = jobdir;
  setsid();
  sigset_t mask;
  sigemptyset(&mask);
  int sigs[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(&mask, sigs[i]);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  signal(SIGPIPE, SIG_IGN);
  int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  if (load(&s)) return 1;
  char comm[16];
  snprintf(comm, sizeof comm, "px-job%llu", (unsigned long long)s.l.job_id);
  prctl(PR_SET_NAME, comm); /* what ps and top show for it */
  s.st.job_id = s.l.job_id;
  s.st.start_time = time(NULL);
  set_limits(&s);
  prepare(&s);
  int cfd = open_ctl(jobdir);
  /* state.json before any task runs: it names the cgroup, through which
   * the agent ends the tasks should this supervisor die. Only without a
   * cgroup is the process group (known once the first task runs) the
   * handle, and worth a second write. */
  write_state(&s);
  s.steps = (struct px_step_host){.dir = jobdir, .l = &s.l, .site = &s.site, .cg = &s.cg,
                                  .renumber_gpus = s.renumber, .pgid = &s.pgid};
  bool mps = !s.st.error[0] && mps_begin(&s);
  if (!s.st.error[0]) start_tasks(&s);
  if (!s.cg.version) write_state(&s);
  if (!s.st.error[0]) loop(&s, sfd, cfd);
  finish(&s);
  if (mps) px_mps_leave(s.site.mps_control, s.site.mps_dir, s.l.gpus[0], s.l.job_id);
  if (cfd >= 0) close(cfd);
  if (sfd >= 0) close(sfd);
  px_step_fini(&s.steps);
  px_launch_fini(&s.l);
  return 0;
}

int px_job_order_line(char *buf, size_t size, int sig, int grace_s, const char *reason) {
  return snprintf(buf, size, "%d %d %s\n", sig, grace_s, reason && *reason ? reason : "-");
}

int px_job_order(const char *jobdir, int sig, int grace_s, const char *reason) {
  char path[4096], line[128];
  snprintf(path, sizeof path, "%s/ctl", jobdir);
  int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) {
    int n = px_job_order_line(line, sizeof line, sig, grace_s, reason);
    ssize_t w = write(fd, line, (size_t)n); /* < PIPE_BUF: atomic */
    close(fd);
    if (w == n) return 0;
  }
  /* No supervisor: act on what the job left behind. */
  struct px_job_state js;
  if (px_state_read(jobdir, &js)) return PX_ESTATE;
  if (js.cg.version) px_cg_drain(&js.cg, 10000);
  if (js.pgid > 0) kill(-js.pgid, SIGKILL);
  if (js.cg.version) px_cg_destroy(&js.cg);
  return PX_ESTATE;
}
