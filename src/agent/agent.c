/*
 * agent.c - the node agent's main loop (agent.h).
 *
 * One thread runs everything here; only the long poll for orders has its
 * own thread (agent_link.c), and supervisors are forked by a helper process
 * started before that thread (zygote.h). Each job is a supervisor process writing to
 * its job directory; the agent learns of ends from SIGCHLD (supervisors it
 * started), from the supervisors' datagrams, and from a once-a-second look
 * at supervisors it reattached to after a restart (not its children).
 */
#include "agent/agent.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_link.h"
#include "agent/gpu_watch.h"
#include "agent/mig_dev.h"
#include "agent/mps.h"
#include "agent/launch.h"
#include "agent/node_check.h"
#include "agent/pty.h"
#include "agent/step.h"
#include "agent/supervise.h"
#include "agent/svc_replica.h"
#include "agent/servers.h"
#include "agent/since.h"
#include "util/error.h"
#include "util/log.h"
#include "util/map.h"

struct ajob {
  uint64_t job_id;
  uint32_t restart;
  char dir[4096];
  pid_t sup;
  int64_t sup_start;
  bool ended;
  uint64_t batch;            /* the order batch that launched it */
  char stop_reason[32];      /* the reason of the last stop order, "" when none */
  char *pending;             /* control lines its supervisor could not take yet (held_line) */
  uint32_t slot;             /* its pooled cgroup (cgroup.h), 0 for none */
  struct px_launch_service *svc; /* a service replica's (svc_replica.h), NULL for batch */
  uint16_t ports[PX_SVC_PORTS_MAX]; /* its ports, held until it ends */
  struct ajob *next;
};

/* Directories of acknowledged jobs, kept to be renamed into place for the
 * next launch with their files (launch.c): a fresh directory costs seven
 * inodes, which a file system without a journal allocates slowly. */
#define POOL_MAX 32
#define HELD_RETRY_MS 2 /* held control lines (flush_held) are retried this often */
/* Pooled cgroups: more jobs at once on one node than this get a group of
 * their own, as before pooling. */
#define SLOTS_MAX 1024

struct agent {
  const struct px_agent_opts *o;
  uint32_t pool[POOL_MAX];   /* STATE/jobs/.free/<n> */
  uint32_t npool, pool_seq;
  struct px_site site;
  struct px_node_res res;
  struct px_link link;
  struct px_zygote zyg;
  struct ajob *jobs;
  struct px_map done;        /* job ids whose end the server acknowledged (dedupe) */
  int sfd, nfd;
  int heartbeat_s;
  uint64_t batch;            /* counts order batches */
  bool slot_used[SLOTS_MAX + 1]; /* [n]: slot_<n> belongs to a job whose end is not acknowledged */
  struct px_health_mon health;   /* service replicas' checks (svc_health.h) */
  struct px_gpu_watch gpus;      /* GPU faults (gpu_watch.h) */
  struct px_cg_layout cg_lay;    /* where job groups are, for sstat's usage (0: not probed yet, -1: none) */
  int cg_lay_state;
  struct px_node_check check;    /* HealthCheckProgram= (node_check.h) */
};

/* The lowest free slot (a group that already exists, most of the time), 0 when all are taken. */
static uint32_t slot_take(struct agent *a) {
  for (uint32_t n = 1; n <= SLOTS_MAX; n++)
    if (!a->slot_used[n]) return a->slot_used[n] = true, n;
  return 0;
}

static void slot_give(struct agent *a, uint32_t n) {
  if (n && n <= SLOTS_MAX) a->slot_used[n] = false;
}

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int px_agent_discover(const struct px_agent_opts *o, struct px_node_res *r, char *why, size_t whylen) {
  memset(r, 0, sizeof *r);
  px_discover_cpus(r);
  px_discover_mem(r);
  if (o->emulate_cpus) r->cpus = r->cores = o->emulate_cpus;
  if (o->emulate_mem_mib) r->mem_mib = o->emulate_mem_mib;
  if (o->emulate[0]) {
    if (px_discover_gpus_emulated(r, o->emulate, o->site.node)) {
      snprintf(why, whylen, "bad --emulate-gpus '%s' (want N[:TYPE[:GROUPS]], or MIG profiles N:PROFILE,N:PROFILE...)", o->emulate);
      return PX_EINVAL;
    }
    return 0;
  }
  /* No NVML is a node without GPUs, not an error: the server drains it if
   * its configuration promised GPUs. */
  px_discover_gpus_nvml(r, why, whylen);
  return 0;
}

static void rm_rf(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char p[4400];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* A job's step files (step.h) do not follow its directory into the pool. */
static void remove_step_files(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[4400];
  while (d && (e = readdir(d))) {
    if (strncmp(e->d_name, "step.", 5) != 0) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  if (d) closedir(d);
}

static char *end_report(struct agent *a, const struct ajob *j, const struct px_job_status *st) {
  struct px_task_report r = {.job_id = st->job_id, .exit_code = st->exit_code, .term_signal = st->term_signal,
                             .peak_mem_mib = st->peak_mem_mib, .cpu_time_ms = st->cpu_time_ms,
                             .start_time = st->start_time, .end_time = st->end_time,
                             .restart_count = j->restart};
  snprintf(r.node, sizeof r.node, "%s", a->site.node);
  snprintf(r.state, sizeof r.state, "%s", st->state);
  snprintf(r.reason, sizeof r.reason, "%.127s", st->error); /* a failed start: why, for squeue and sacct */
  return px_task_report_encode(&r);
}

static void on_acked(const char *dir, void *ud);

static void pool_path(const struct agent *a, uint32_t n, char *buf, size_t size) {
  snprintf(buf, size, "%s/jobs/.free/%u", a->o->state_dir, n);
}

/* The ended job's directory joins the pool: its files become the temporary
 * names that px_file_put writes (and renames from), so none of them is read
 * as the next job's; the FIFO stays. */
static void recycle(struct agent *a, const char *dir) {
  static const char *const files[] = {"launch.json", "site.json", "state.json", "status.json", "slurm_script"};
  char to[4300], from[4400], tmp[4400];
  if (a->npool == POOL_MAX) return rm_rf(dir);
  remove_step_files(dir);
  uint32_t n = a->pool_seq++;
  pool_path(a, n, to, sizeof to);
  if (rename(dir, to) != 0) return rm_rf(dir);
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(from, sizeof from, "%s/%s", to, files[i]);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", to, files[i]);
    if (rename(from, tmp) != 0 && errno != ENOENT) return rm_rf(to);
  }
  snprintf(tmp, sizeof tmp, "%s/.slurm_script.tmp", to);
  chmod(tmp, 0600); /* was the user's, read-only */
  chmod(to, 0700);
  a->pool[a->npool++] = n;
}

/* A group of this agent's level that a job it found at start still owns:
 * its slot, or (v2, or retired) its job_<id> group. */
static bool cg_in_use(const char *name, void *ctx) {
  struct agent *a = ctx;
  unsigned long long n;
  char tail;
  if (sscanf(name, "slot_%llu%c", &n, &tail) == 1) return n > SLOTS_MAX || a->slot_used[n];
  if (sscanf(name, "job_%llu%c", &n, &tail) != 1) return true; /* not ours to judge */
  for (struct ajob *j = a->jobs; j; j = j->next)
    if (j->job_id == n) return true;
  return false;
}

/* At start, after reattaching: groups a killed predecessor left go (cgroup.h). */
static void sweep_cgroups(struct agent *a) {
  struct px_cg_layout lay;
  if (a->site.no_cgroup ||
      px_cg_probe(&lay, a->site.cgroup_root[0] ? a->site.cgroup_root : NULL, a->site.cgroup_name))
    return;
  px_info("cgroup level %s (v%d)", a->site.cgroup_name, lay.version); /* what to look for when one lingers */
  int n = px_cg_sweep_stale(&lay, cg_in_use, a);
  if (n) px_info("removed %d cgroup(s) an earlier agent of this node left behind", n);
}

/* At start: what a previous run left in the pool goes. */
static void pool_reset(struct agent *a) {
  char dir[4200], sub[4500];
  snprintf(dir, sizeof dir, "%s/jobs/.free", a->o->state_dir);
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
    rm_rf(sub);
  }
  if (d) closedir(d);
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) px_warn("cannot create %s: %s", dir, strerror(errno));
}

/* The job's supervisor wrote its status (or died without): queue the end. */
static void job_ended(struct agent *a, struct ajob *j) {
  struct px_job_status st;
  int rc = px_status_read(j->dir, &st);
  if (rc == PX_ENOENT) {
    /* supervisor gone without a word: end what is left, call it failed */
    px_job_order(j->dir, SIGKILL, 0, "FAILED");
    memset(&st, 0, sizeof st);
    st.job_id = j->job_id;
    snprintf(st.state, sizeof st.state, "FAILED");
    snprintf(st.error, sizeof st.error, "the job's supervisor ended without a status");
    st.exit_code = 1;
    st.end_time = time(NULL);
    px_status_write(j->dir, &st);
  } else if (rc) {
    return;
  }
  j->ended = true;
  if (j->svc) px_health_unwatch(&a->health, j->job_id, j->restart);
  px_info("job %llu ended: %s", (unsigned long long)j->job_id, st.state);
  /* An attempt the server stopped for a node failure has already been ended
   * or requeued there; its end would only race with the next attempt, which
   * may run on this very node. A preempted attempt IS reported: the server
   * keeps its GPUs allocated until the end arrives, so the preemptor never
   * shares a GPU with a victim still in its grace time. */
  if (strcmp(st.state, j->stop_reason) == 0 && strcmp(st.state, "NODE_FAIL") == 0) {
    on_acked(j->dir, a);
    return;
  }
  px_link_queue(&a->link, end_report(a, j, &st), j->dir);
}

static struct ajob *find_dir(struct agent *a, const char *name) {
  for (struct ajob *j = a->jobs; j; j = j->next) {
    const char *base = strrchr(j->dir, '/');
    if (base && strcmp(base + 1, name) == 0) return j;
  }
  return NULL;
}

static struct ajob *add_job(struct agent *a, uint64_t id, uint32_t restart, pid_t sup) {
  struct ajob *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  j->job_id = id;
  j->restart = restart;
  j->sup = sup;
  px_jobdir_path(a->o->state_dir, id, restart, j->dir, sizeof j->dir);
  j->next = a->jobs;
  a->jobs = j;
  return j;
}

static void on_acked(const char *dir_in, void *ud) {
  struct agent *a = ud;
  char dir[4096]; /* dir_in may be the job's own field, freed below */
  snprintf(dir, sizeof dir, "%s", dir_in);
  for (struct ajob **pp = &a->jobs; *pp; pp = &(*pp)->next) {
    struct ajob *j = *pp;
    if (strcmp(j->dir, dir) != 0) continue;
    px_map_put(&a->done, j->job_id, j->restart);
    slot_give(a, j->slot); /* its supervisor released the group before writing its status */
    *pp = j->next;
    free(j->pending);
    px_launch_service_free(j->svc);
    free(j);
    break;
  }
  recycle(a, dir);
}

/* Ports this agent handed to replicas still running (a replica may not have bound them yet). */
static uint32_t ports_taken(const struct agent *a, uint16_t *out, uint32_t cap) {
  uint32_t n = 0;
  for (const struct ajob *j = a->jobs; j; j = j->next)
    for (uint32_t i = 0; j->svc && !j->ended && i < j->svc->nports && n < cap; i++) out[n++] = j->ports[i];
  return n;
}

/* A replica that cannot start here (no free port) ends at once, FAILED with the reason logged. */
static void replica_refused(struct agent *a, const struct px_launch *l, const char *why) {
  px_error("job %llu: replica %u of %s cannot start: %s", (unsigned long long)l->job_id, l->service->replica,
           l->service->name, why);
  struct px_task_report r = {.job_id = l->job_id, .restart_count = l->restart_count, .exit_code = 1,
                             .start_time = time(NULL), .end_time = time(NULL)};
  snprintf(r.node, sizeof r.node, "%s", a->site.node);
  snprintf(r.state, sizeof r.state, "FAILED");
  px_map_put(&a->done, l->job_id, l->restart_count);
  px_link_queue(&a->link, px_task_report_encode(&r), NULL);
}

/* The replica runs: its ports stay held with the job, its checks start. */
static void replica_started(struct agent *a, struct ajob *j, struct px_launch *l, const uint16_t *ports) {
  memcpy(j->ports, ports, sizeof j->ports);
  char *rep = px_replica_running(&a->health, a->site.node, l, ports, j->dir, false);
  if (rep) px_link_queue(&a->link, rep, NULL);
  j->svc = l->service; /* the job keeps the order's service */
  l->service = NULL;
}

static void launch(struct agent *a, struct px_launch *l) {
  if (strcmp(l->nodes[l->node_rank], a->site.node) != 0) {
    px_error("job %llu: order for node %s reached %s; ignored", (unsigned long long)l->job_id,
             l->nodes[l->node_rank], a->site.node);
    return;
  }
  uint64_t r;
  if (px_map_get(&a->done, l->job_id, &r) && r == l->restart_count) return; /* already ran and reported */
  uint16_t ports[PX_SVC_PORTS_MAX] = {0}, taken[256];
  char dir[4096], reuse[4300] = "", why[128];
  if (l->service && px_replica_prepare(l, &a->o->service_ports, taken, ports_taken(a, taken, 256), ports, why,
                                       sizeof why))
    return replica_refused(a, l, why);
  if (a->npool) pool_path(a, a->pool[a->npool - 1], reuse, sizeof reuse);
  pid_t pid = 0;
  bool used = false;
  uint32_t slot = a->site.no_cgroup ? 0 : slot_take(a);
  a->site.cg_slot = slot;
  int rc = px_job_start(a->o->state_dir, l, &a->site, &a->zyg, reuse[0] ? reuse : NULL, &used, dir, sizeof dir, &pid);
  a->site.cg_slot = 0;
  if (used || (reuse[0] && rc != PX_EEXIST)) a->npool--; /* taken, or gone */
  if (rc == PX_EEXIST) return slot_give(a, slot); /* started before: never twice */
  struct ajob *j = add_job(a, l->job_id, l->restart_count, pid);
  if (!j) return; /* the slot stays taken: its job may run */
  j->slot = slot;
  if (rc) {
    job_ended(a, j);
    return;
  }
  j->sup_start = px_proc_start(pid);
  j->batch = a->batch;
  if (l->service) replica_started(a, j, l, ports);
  /* No RUNNING report: the server made the job RUNNING when it sent the
   * order, and a start that fails is reported as the job's end. */
  px_info("job %llu: started (supervisor %d)", (unsigned long long)l->job_id, (int)pid);
}

/* ---- control lines for a supervisor still starting ----
 * A supervisor opens its control FIFO a few milliseconds after its fork
 * (salloc's first srun, or a cancel, can come sooner). A line it cannot
 * take yet is held here, in order, and retried from the main loop while the
 * supervisor lives, instead of failing the step or being taken for a dead
 * supervisor's job. */

static bool supervisor_alive(const struct ajob *j) { return !j->ended && j->sup > 0 && kill(j->sup, 0) == 0; }

/* 0: delivered or held; PX_ESTATE: no supervisor will ever read it. */
static int ctl_send(struct ajob *j, const char *line) {
  if (!j->pending && px_job_ctl_line(j->dir, line) == 0) return 0;
  if (!supervisor_alive(j)) return PX_ESTATE;
  size_t old = j->pending ? strlen(j->pending) : 0, len = strlen(line);
  char *p = realloc(j->pending, old + len + 1);
  if (!p) return PX_ESTATE;
  memcpy(p + old, line, len + 1);
  j->pending = p;
  return 0;
}

static void step_report(struct agent *a, uint64_t job_id, uint32_t restart, uint32_t step,
                        const struct px_step_status *st);

/* A held line that will never be read: a step's share fails at once (srun
 * must not wait for it); a stop order acts on what the job left. */
static void undeliverable(struct agent *a, struct ajob *j, const char *line) {
  unsigned step, sig, grace;
  char reason[32];
  if (sscanf(line, "step %u", &step) == 1)
    step_report(a, j->job_id, j->restart, step, &(struct px_step_status){.state = "FAILED", .exit_code = 1});
  else if (sscanf(line, "%u %u %31s", &sig, &grace, reason) == 3)
    px_job_order(j->dir, (int)sig, (int)grace, strcmp(reason, "-") ? reason : "");
}

/* Main loop: hands held lines over, in order; true while some stay held. */
static bool flush_held(struct agent *a) {
  bool left = false;
  for (struct ajob *j = a->jobs; j; j = j->next) {
    while (j->pending && *j->pending) {
      char *nl = strchr(j->pending, '\n'), line[256];
      size_t len = nl ? (size_t)(nl - j->pending) + 1 : strlen(j->pending);
      snprintf(line, sizeof line, "%.*s", (int)len, j->pending);
      if (px_job_ctl_line(j->dir, line) != 0) {
        if (supervisor_alive(j)) break;
        undeliverable(a, j, line);
      }
      memmove(j->pending, j->pending + len, strlen(j->pending + len) + 1);
    }
    if (j->pending && !*j->pending) free(j->pending), j->pending = NULL;
    left |= j->pending != NULL;
  }
  return left;
}

/* Orders name a job, not an attempt. When an older attempt still runs
 * beside one launched in this same batch (a requeue onto this node), the
 * order is the old attempt's stop; otherwise it is for every attempt here.
 * An order with a time limit signals nothing: it moves the job's limit. */
static void order(struct agent *a, const struct px_signal_order *s) {
  bool older = false, any = false;
  for (struct ajob *j = a->jobs; j; j = j->next)
    if (j->job_id == s->job_id && !j->ended) any = true, older |= j->batch != a->batch;
  if (!any) {
    px_debug("signal for job %llu, not running here", (unsigned long long)s->job_id);
    return;
  }
  for (struct ajob *j = a->jobs, *next; j; j = next) {
    next = j->next; /* job_ended may free j */
    if (j->job_id != s->job_id || j->ended || (older && j->batch == a->batch)) continue;
    char line[96];
    if (s->time_limit_s > 0) { /* no signal: the new time limit, for the supervisor's timer */
      snprintf(line, sizeof line, "limit %lld\n", (long long)s->time_limit_s);
      ctl_send(j, line);
      continue;
    }
    if (s->reason[0]) snprintf(j->stop_reason, sizeof j->stop_reason, "%s", s->reason);
    px_job_order_line(line, sizeof line, (int)s->signal, (int)s->grace_s, s->reason);
    if (ctl_send(j, line) && px_job_order(j->dir, s->signal, s->grace_s, s->reason) == PX_ESTATE) job_ended(a, j);
  }
}

/* ---- job steps (step.h) ---- */

static struct ajob *running_job(struct agent *a, uint64_t id) {
  for (struct ajob *j = a->jobs; j; j = j->next)
    if (j->job_id == id && !j->ended) return j;
  return NULL;
}

static void step_report(struct agent *a, uint64_t job_id, uint32_t restart, uint32_t step,
                        const struct px_step_status *st) {
  struct px_task_report r = {.job_id = job_id, .restart_count = restart, .is_step = true, .step_id = step,
                             .exit_code = st->exit_code, .term_signal = st->term_signal,
                             .peak_mem_mib = st->peak_mem_mib, .cpu_time_ms = st->cpu_time_ms,
                             .end_time = st->end_time > 0 ? st->end_time : time(NULL)};
  snprintf(r.node, sizeof r.node, "%s", a->site.node);
  snprintf(r.state, sizeof r.state, "%s", st->state);
  px_link_queue(&a->link, px_task_report_encode(&r), NULL);
}

/* The order goes into the job's directory, then a word to its supervisor. */
static void step_order(struct agent *a, const struct px_step_order *o) {
  struct ajob *j = running_job(a, o->job_id);
  char name[64], line[64];
  /* a terminal step runs behind the pty host (pty.h) */
  char *json = o->pty_session ? px_pty_order_encode(o, a->o->server, a->o->ca_file) : px_step_order_encode(o);
  snprintf(name, sizeof name, "step.%u.json", o->step_id);
  snprintf(line, sizeof line, "step %u\n", o->step_id);
  int rc = !j ? PX_ENOENT : !json ? PX_ENOMEM : px_file_put(j->dir, name, json);
  if (!rc) rc = ctl_send(j, line);
  free(json);
  if (!rc) return;
  /* the job is not (or no longer) here: the step's share ends at once, so srun does not wait */
  px_warn("job %llu: step %u cannot start here: %s", (unsigned long long)o->job_id, o->step_id, px_strerror(rc));
  step_report(a, o->job_id, o->restart_count, o->step_id, &(struct px_step_status){.state = "FAILED", .exit_code = 1});
}

static void step_signal(struct agent *a, const struct px_signal_order *s) {
  struct ajob *j = running_job(a, s->job_id);
  char line[96];
  snprintf(line, sizeof line, "stepsig %u %d %d\n", s->step_id, (int)s->signal, (int)s->grace_s);
  if (j) ctl_send(j, line);
}

/* "step:<jobdir name>:<N>" from a supervisor: the step's share ended here. */
static void step_ended(struct agent *a, const char *note) {
  char base[200];
  unsigned id;
  if (sscanf(note, "step:%199[^:]:%u", base, &id) != 2) return;
  struct ajob *j = find_dir(a, base);
  struct px_step_status st;
  if (!j || px_step_status_read(j->dir, id, &st)) return;
  step_report(a, j->job_id, j->restart, id, &st);
}

static void take_orders(struct agent *a) {
  uint32_t n;
  struct px_agent_work *w = px_link_take(&a->link, &n);
  for (uint32_t i = 0; i < n; i++) {
    a->batch++;
    for (uint32_t k = 0; k < w[i].nlaunch; k++) launch(a, &w[i].launch[k]);
    for (uint32_t k = 0; k < w[i].nsignal; k++)
      w[i].signal[k].is_step ? step_signal(a, &w[i].signal[k]) : order(a, &w[i].signal[k]);
    for (uint32_t k = 0; k < w[i].nstep; k++) step_order(a, &w[i].step[k]);
    px_agent_work_fini(&w[i]);
  }
  free(w);
}

static void reap(struct agent *a) {
  int ws;
  pid_t pid;
  char *rep;
  while ((pid = waitpid(-1, &ws, WNOHANG)) > 0) {
    if (px_node_check_reaped(&a->check, pid, ws, mono_ms(), &rep)) {
      if (rep) px_gpu_watch_post(&a->gpus, "/v1/agent/health", rep);
      continue;
    }
    for (struct ajob *j = a->jobs, *next; j; j = next) {
      next = j->next; /* job_ended may free j */
      if (j->sup == pid && !j->ended) job_ended(a, j);
    }
  }
}

static bool busy(const struct agent *a) {
  for (const struct ajob *j = a->jobs; j; j = j->next)
    if (!j->ended) return true;
  return false;
}

/* The heartbeat; its answer may order the reboot (`scontrol reboot`). */
/* [{"job_id","restart","mem_mib","peak_mem_mib","cpu_time_ms","ntasks"}...]
 * of the running jobs, from their groups: what sstat shows (the server
 * keeps the last heartbeat's). NULL when none can be read. */
static char *jobs_usage(struct agent *a) {
  if (a->site.no_cgroup || !a->jobs) return NULL;
  if (!a->cg_lay_state)
    a->cg_lay_state = px_cg_probe(&a->cg_lay, a->site.cgroup_root[0] ? a->site.cgroup_root : NULL,
                                  a->site.cgroup_name) ? -1 : 1;
  if (a->cg_lay_state < 0) return NULL;
  json_t *arr = json_array();
  for (const struct ajob *j = a->jobs; arr && j; j = j->next) {
    char name[64];
    struct px_cg_usage u;
    if (j->ended) continue;
    if (j->slot) snprintf(name, sizeof name, "slot_%u", j->slot);
    else snprintf(name, sizeof name, "job_%llu", (unsigned long long)j->job_id);
    if (px_cg_usage(&a->cg_lay, name, &u)) continue;
    json_array_append_new(arr, json_pack("{sI sI sI sI sI sI}", "job_id", (json_int_t)j->job_id, "restart",
                                         (json_int_t)j->restart, "mem_mib", (json_int_t)u.mem_mib,
                                         "peak_mem_mib", (json_int_t)u.peak_mem_mib, "cpu_time_ms",
                                         (json_int_t)u.cpu_time_ms, "ntasks", (json_int_t)u.nprocs));
  }
  char *text = json_array_size(arr) ? json_dumps(arr, JSON_COMPACT) : NULL;
  json_decref(arr);
  return text;
}

static void heartbeat(struct agent *a) {
  bool reboot = false;
  char *usage = jobs_usage(a);
  px_link_heartbeat(&a->link, usage, &reboot);
  free(usage);
  if (!reboot) return;
  if (!a->link.reboot_program[0]) px_error("reboot ordered, but the server names no RebootProgram");
  else if (px_node_reboot(a->link.reboot_program)) px_error("reboot: cannot start %s", a->link.reboot_program);
}

/* Supervisors this agent did not start (reattached) are not its children. */
static void check_foreign(struct agent *a) {
  for (struct ajob *j = a->jobs, *next; j; j = next) {
    next = j->next; /* job_ended may free j */
    if (!j->ended && !px_proc_same(j->sup, j->sup_start)) job_ended(a, j);
  }
}

static void read_notes(struct agent *a) {
  char name[256];
  ssize_t n;
  while ((n = recv(a->nfd, name, sizeof name - 1, MSG_DONTWAIT)) > 0) {
    name[n] = '\0';
    if (strncmp(name, "step:", 5) == 0) {
      step_ended(a, name);
      continue;
    }
    if (strncmp(name, "gpufault ", 9) == 0) { /* an injected fault (emulated GPUs, gpu_watch.h) */
      struct px_gpu_fault f;
      if (px_gpu_fault_parse_note(name, a->site.node, &f) == 0 && f.gpu < a->res.ngpus) px_gpu_watch_add(&a->gpus, &f);
      else px_warn("bad GPU fault injection: %s", name);
      continue;
    }
    struct ajob *j = find_dir(a, name);
    if (j && !j->ended) job_ended(a, j);
  }
}

/* A replica found running after a restart: its ports are held again and
 * its checks restart; true when that sent (or will send) its RUNNING report. */
static bool replica_reattached(struct agent *a, struct ajob *j) {
  struct px_launch l;
  uint16_t ports[PX_SVC_PORTS_MAX] = {0};
  int rc = px_replica_recover(j->dir, &l, ports);
  if (rc) {
    px_warn("job %llu: its order cannot be read back (%s); reattached without service checks",
            (unsigned long long)j->job_id, px_strerror(rc));
    return false;
  }
  bool svc = l.service != NULL;
  if (svc) {
    char *rep = px_replica_running(&a->health, a->site.node, &l, ports, j->dir, true);
    if (rep) px_link_queue(&a->link, rep, NULL);
    memcpy(j->ports, ports, sizeof j->ports);
    j->svc = l.service;
    l.service = NULL;
  }
  px_launch_fini(&l);
  return svc;
}

/* A replica's health changed: its RUNNING report says so (none once it ended). */
static void health_events(struct agent *a) {
  uint32_t n;
  struct px_health_event *ev = px_health_take(&a->health, &n);
  for (uint32_t i = 0; i < n; i++)
    for (struct ajob *j = a->jobs; j; j = j->next) {
      if (j->job_id != ev[i].job_id || j->restart != ev[i].restart || j->ended || !j->svc) continue;
      px_info("job %llu: replica %u of %s is %s%s%s", (unsigned long long)j->job_id, j->svc->replica, j->svc->name,
              ev[i].health, ev[i].reason[0] ? ": " : "", ev[i].reason);
      px_link_queue(&a->link, px_svc_running_report(a->site.node, j->job_id, j->restart, j->svc, j->ports, ev[i].health,
                                            ev[i].reason), NULL);
    }
  free(ev);
}

/* After a restart: every job directory is a job this node started. Those
 * whose supervisor still runs are reattached; those that ended meanwhile
 * have their end (re)queued. */
static void reattach(struct agent *a) {
  char jobs[4200];
  snprintf(jobs, sizeof jobs, "%s/jobs", a->o->state_dir);
  DIR *d = opendir(jobs);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    unsigned long long id;
    unsigned restart;
    if (sscanf(e->d_name, "%llu.%u", &id, &restart) != 2) continue;
    struct ajob *j = add_job(a, id, restart, 0);
    if (!j) break;
    struct px_job_state js;
    if (px_state_read(j->dir, &js) == 0) {
      j->sup = js.supervisor;
      j->sup_start = js.supervisor_start;
    }
    struct px_site site;
    if (px_site_read(j->dir, &site) == 0 && site.cg_slot && site.cg_slot <= SLOTS_MAX)
      a->slot_used[j->slot = site.cg_slot] = true;
    if (px_proc_same(j->sup, j->sup_start)) {
      px_info("job %llu: reattached to supervisor %d", id, (int)j->sup);
      if (replica_reattached(a, j)) continue;
      struct px_task_report rep = {.job_id = id, .restart_count = restart};
      snprintf(rep.node, sizeof rep.node, "%s", a->site.node);
      snprintf(rep.state, sizeof rep.state, "RUNNING");
      px_link_queue(&a->link, px_task_report_encode(&rep), NULL);
    } else {
      job_ended(a, j);
    }
  }
  closedir(d);
}

static int node_report(struct agent *a, struct px_node_report *r) {
  memset(r, 0, sizeof *r);
  snprintf(r->node, sizeof r->node, "%s", a->site.node);
  snprintf(r->addr, sizeof r->addr, "%s", a->o->addr[0] ? a->o->addr : a->site.node);
  snprintf(r->version, sizeof r->version, "%s", PX_AGENT_VERSION);
  r->since = px_agent_since(a->o->state_dir);
  r->cpus = a->res.cpus;
  r->mem_mib = a->res.mem_mib;
  r->gpus = a->res.gpus;
  r->ngpus = a->res.ngpus;
  uint32_t n = 0;
  for (struct ajob *j = a->jobs; j; j = j->next) n++;
  r->jobs = calloc(n ? n : 1, sizeof *r->jobs);
  if (!r->jobs) return PX_ENOMEM;
  for (struct ajob *j = a->jobs; j; j = j->next) {
    struct px_known_job *k = &r->jobs[r->njobs++];
    struct px_job_status st;
    k->job_id = j->job_id;
    if (j->ended && px_status_read(j->dir, &st) == 0) {
      snprintf(k->state, sizeof k->state, "%s", st.state);
      k->exit_code = st.exit_code;
      k->term_signal = st.term_signal;
    } else {
      snprintf(k->state, sizeof k->state, "RUNNING");
    }
  }
  return 0;
}

static int do_register(struct agent *a) {
  struct px_node_report r;
  if (node_report(a, &r)) return PX_ENOMEM;
  int rc = px_link_register(&a->link, &r, &a->heartbeat_s);
  free(r.jobs);
  return rc;
}

static int open_notify(struct agent *a) {
  if (strlen(a->o->state_dir) + 12 > sizeof a->site.notify) return -1;
  snprintf(a->site.notify, sizeof a->site.notify, "%.*s/agent.sock", (int)sizeof a->site.notify - 12, a->o->state_dir);
  unlink(a->site.notify);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  snprintf(addr.sun_path, sizeof addr.sun_path, "%.107s", a->site.notify);
  if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    px_warn("no notify socket at %s (%s); ends found by polling", a->site.notify, strerror(errno));
    if (fd >= 0) close(fd);
    a->site.notify[0] = '\0';
    return -1;
  }
  return fd;
}

/* `phalanx dev`: the agent's jobs stop with it. */
static void stop_jobs(struct agent *a) {
  for (struct ajob *j = a->jobs; j; j = j->next)
    if (!j->ended) px_job_order(j->dir, SIGKILL, 0, "CANCELLED");
  for (int i = 0; i < 500; i++) {
    bool left = false;
    reap(a);
    check_foreign(a);
    for (struct ajob *j = a->jobs; j; j = j->next) left |= !j->ended;
    if (!left) break;
    struct timespec ts = {0, 10000000L};
    nanosleep(&ts, NULL);
  }
  px_link_flush(&a->link, mono_ms(), on_acked, a);
}

/* Registers when not registered (first start, or the server came back),
 * with a growing pause between tries (but a steady short one while the
 * answer is a standby's 503: a takeover is under way and ends within a
 * lease); starts the order poll the first time.
 * The next heartbeat is due one of the server's intervals (its answer sets
 * heartbeat_s) after the registration: counted from the agent's start with
 * its own default (10 s) instead, the first one came after a short
 * SlurmdTimeout (5 s with HeartbeatInterval=1) had called the node DOWN. */
static void ensure_registered(struct agent *a, int64_t now, int64_t *reg_at, int *backoff, int64_t *next_hb) {
  if (a->link.registered || now < *reg_at) return;
  if (do_register(a) != 0) {
    *reg_at = now + (a->link.register_status == 503 ? PX_TAKEOVER_RETRY_MS : *backoff);
    if (a->link.register_status != 503) *backoff = *backoff < 2000 ? *backoff * 2 : 2000;
    return;
  }
  *backoff = 100;
  *next_hb = now + a->heartbeat_s * 1000L;
  if (a->link.gpu_interval_ms) atomic_store(&a->gpus.interval_ms, a->link.gpu_interval_ms);
  px_node_check_config(&a->check, a->link.hc_program, a->link.hc_interval_s, a->link.hc_states, now);
  if (!a->link.thread_started && px_link_start_poll(&a->link) != 0) px_error("cannot start the order poll");
}

static void loop(struct agent *a) {
  int64_t next_hb = mono_ms() + a->heartbeat_s * 1000L, next_scan = mono_ms() + 1000, reg_at = 0;
  int backoff = 100;
  for (;;) {
    int64_t now = mono_ms();
    ensure_registered(a, now, &reg_at, &backoff, &next_hb);
    if (a->link.registered && now >= px_link_due(&a->link)) px_link_flush(&a->link, now, on_acked, a);
    int64_t wake = next_hb < next_scan ? next_hb : next_scan;
    if (!a->link.registered && reg_at < wake) wake = reg_at;
    if (a->link.registered && px_link_due(&a->link) < wake) wake = px_link_due(&a->link);
    if (a->link.registered && px_gpu_watch_due(&a->gpus) < wake) wake = px_gpu_watch_due(&a->gpus);
    if (px_node_check_due(&a->check) < wake) wake = px_node_check_due(&a->check);
    int timeout = wake > now ? (int)(wake - now) : 0;
    if (flush_held(a) && timeout > HELD_RETRY_MS) timeout = HELD_RETRY_MS;
    struct pollfd p[5] = {{a->sfd, POLLIN, 0},  {a->link.wake[0], POLLIN, 0}, {a->health.wake[0], POLLIN, 0},
                          {a->gpus.wake[0], POLLIN, 0}, {a->nfd, POLLIN, 0}};
    if (poll(p, a->nfd >= 0 ? 5 : 4, timeout) < 0 && errno != EINTR) break;
    if (p[0].revents & POLLIN) {
      struct signalfd_siginfo si;
      bool quit = false;
      while (read(a->sfd, &si, sizeof si) == (ssize_t)sizeof si)
        quit |= si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT;
      reap(a);
      if (quit) break;
    }
    if (p[1].revents & POLLIN) take_orders(a);
    if (p[2].revents & POLLIN) health_events(a);
    if (a->nfd >= 0 && (p[4].revents & POLLIN)) read_notes(a);
    now = mono_ms();
    if (now >= px_node_check_due(&a->check)) px_node_check_tick(&a->check, now, busy(a));
    if ((p[3].revents & POLLIN) || (a->link.registered && now >= px_gpu_watch_due(&a->gpus)))
      px_gpu_watch_send(&a->gpus, &a->link, now); /* before anything else: a GPU fault moves gangs */
    if (now >= next_scan) {
      check_foreign(a);
      next_scan = now + 1000;
    }
    if (now >= next_hb && a->link.registered) {
      heartbeat(a);
      next_hb = now + a->heartbeat_s * 1000L;
    }
  }
}

static void agent_fini(struct agent *a) {
  px_node_check_fini(&a->check);
  px_gpu_watch_fini(&a->gpus);
  px_health_fini(&a->health);
  px_link_fini(&a->link);
  px_zygote_stop(&a->zyg);
  while (a->jobs) {
    struct ajob *n = a->jobs->next;
    free(a->jobs->pending);
    px_launch_service_free(a->jobs->svc);
    free(a->jobs);
    a->jobs = n;
  }
  px_map_fini(&a->done);
  if (a->nfd >= 0) close(a->nfd);
  if (a->sfd >= 0) close(a->sfd);
  if (a->site.notify[0]) unlink(a->site.notify);
  struct px_cg_layout lay;
  if (!a->site.no_cgroup &&
      px_cg_probe(&lay, a->site.cgroup_root[0] ? a->site.cgroup_root : NULL, a->site.cgroup_name) == 0)
    px_cg_remove_base(&lay);
}

/* MIG instances: jobs see theirs by UUID (STATE/gpu_uuids, one per index,
 * read by the supervisors). The device rules by index (node_ngpus) do not
 * apply to instances: each job is denied the devices of the instances not
 * its own instead (STATE/gpu_devices, mig_dev.h), when the driver names
 * them; without, CUDA_VISIBLE_DEVICES alone confines it (and the log says
 * so). */
/* "1g.10gb x7, 3g.40gb x1": the node's profiles (instances come by type, px_mig_order). */
static void mig_profiles(const struct px_node_res *r, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (uint32_t i = 0, n = 1; i < r->ngpus && len < size; i++, n++) {
    if (i + 1 < r->ngpus && !strcmp(r->gpus[i].type, r->gpus[i + 1].type)) continue;
    int w = snprintf(buf + len, size - len, "%s%s x%u", len ? ", " : "", r->gpus[i].type, n);
    if (w < 0) break;
    len += (size_t)w;
    n = 0;
  }
}

static int mig_site(struct agent *a) {
  char path[PATH_MAX], why[512] = "", profiles[512];
  if ((size_t)snprintf(path, sizeof path, "%.4000s/gpu_uuids", a->o->state_dir) >= sizeof path) return PX_EINVAL;
  FILE *f = fopen(path, "we");
  for (uint32_t i = 0; f && i < a->res.ngpus; i++) fprintf(f, "%s\n", a->res.gpus[i].uuid);
  if (!f || fclose(f) != 0) {
    px_error("cannot write %s: %s", path, strerror(errno));
    return PX_EIO;
  }
  memcpy(a->site.gpu_uuids, path, sizeof path);
  a->site.node_ngpus = 0;
  snprintf(path, sizeof path, "%.4000s/gpu_devices", a->o->state_dir);
  int rc = a->res.emulated ? PX_ENOENT : px_mig_devices_write(&a->res, path, why, sizeof why);
  if (!rc) memcpy(a->site.gpu_devs, path, sizeof path);
  else unlink(path);
  mig_profiles(&a->res, profiles, sizeof profiles);
  px_info("%u MIG instances (%s): jobs see theirs by UUID; %s%s", a->res.ngpus, profiles,
          rc ? "no device rules: " : "each job's device cgroup denies the other instances' capabilities",
          rc ? (a->res.emulated ? "emulated" : why) : "");
  return 0;
}

/* Fractional GPUs (docs/gpus.md): the GPU memory a share's limit is cut
 * from, and whether MPS can enforce it here. */
static void shares_site(struct agent *a) {
  a->site.gpu_mem_mib = a->res.ngpus ? a->res.gpus[0].mem_mib : 0;
  snprintf(a->site.mps_dir, sizeof a->site.mps_dir, "%.4000s/mps", a->o->state_dir);
  if (!a->res.ngpus || px_gpus_are_mig(&a->res)) return;
  if (px_mps_find(a->site.mps_control, sizeof a->site.mps_control))
    px_info("GPU shares: MPS through %s (one control daemon per shared GPU)", a->site.mps_control);
  else
    px_info("GPU shares: no nvidia-cuda-mps-control: a share's memory and SM limits are only visible to its "
            "job, not enforced");
}

int px_agent_run(const struct px_agent_opts *o) {
  static struct agent a;
  memset(&a, 0, sizeof a);
  a.o = o;
  a.site = o->site;
  a.heartbeat_s = o->heartbeat_s;
  a.sfd = a.nfd = -1;
  a.gpus.wake[0] = a.gpus.wake[1] = -1; /* not yet set up: nothing for agent_fini */
  px_node_check_init(&a.check, o->site.node);
  char tag[96], why[256] = "";
  snprintf(tag, sizeof tag, "agent %s", o->site.node);
  px_log_set_tag(tag);
  if (px_agent_discover(o, &a.res, why, sizeof why)) {
    px_error("%s", why);
    return 2;
  }
  if (why[0]) px_info("%s", why);
  a.site.node_ngpus = a.res.ngpus;
  a.site.emulated_gpus = a.res.emulated;
  a.site.emulated_cpus = o->emulate_cpus != 0;
  px_info("%u CPUs (%u cores), %llu MiB, %u GPUs%s", a.res.cpus, a.res.cores, (unsigned long long)a.res.mem_mib,
          a.res.ngpus, a.res.emulated ? " (emulated)" : "");
  char jobs[4200];
  snprintf(jobs, sizeof jobs, "%s/jobs", o->state_dir);
  if ((mkdir(o->state_dir, 0755) != 0 && errno != EEXIST) || (mkdir(jobs, 0711) != 0 && errno != EEXIST)) {
    px_error("cannot create state directory %s: %s", o->state_dir, strerror(errno));
    return 2;
  }
  if (px_gpus_are_mig(&a.res) && mig_site(&a) != 0) return 2;
  shares_site(&a);
  if (px_zygote_start(&a.zyg, a.site.cgroup_root, a.site.cgroup_name, a.site.no_cgroup)) px_warn("no supervisor factory; supervisors start by exec");
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = px_link_init(&a.link, o->server, o->ca_file, o->site.node, o->token_file, o->munge);
  if (rc) {
    px_error("cannot set up the connection to %s: %s", o->server, px_strerror(rc));
    px_zygote_stop(&a.zyg);
    curl_global_cleanup();
    return 2;
  }
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  signal(SIGPIPE, SIG_IGN);
  a.sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  a.nfd = open_notify(&a);
  if (px_health_init(&a.health) || px_gpu_watch_init(&a.gpus, o->site.node, a.res.ngpus)) {
    px_error("cannot set up the health checks of service replicas and GPUs");
    agent_fini(&a);
    curl_global_cleanup();
    return 2;
  }
  a.gpus.mig = px_gpus_are_mig(&a.res);
  for (uint32_t i = 0; a.gpus.mig && i < a.res.ngpus && i < 64; i++) a.gpus.parent[i] = (uint8_t)a.res.gpus[i].group;
  if (!a.res.emulated && a.res.ngpus && px_gpu_watch_start_nvml(&a.gpus))
    px_warn("no GPU health watch: NVML would not start a second time");
  pool_reset(&a);
  reattach(&a);
  sweep_cgroups(&a);
  loop(&a);
  if (o->kill_jobs_on_exit) stop_jobs(&a);
  px_info("stopping%s", o->kill_jobs_on_exit ? "" : " (jobs keep running)");
  agent_fini(&a);
  curl_global_cleanup();
  return 0;
}
