/*
 * nodes.c - nodes and their agents, on the main thread: registration and
 * reconciliation, heartbeats and silence (SlurmdTimeout), launch and stop
 * orders, and the end of a job everywhere it runs.
 *
 * Liveness is not journaled: a restarted server starts with every node "not
 * responding" (DOWN in the core) until its agent registers, which is what
 * the node's real state is to a server that has just started. Operator
 * drains are journaled. A node silent for longer than the timeout goes DOWN
 * and its jobs are requeued (requeue allowed, the default) or end NODE_FAIL,
 * always whole: every other node of the gang is told to stop the job.
 */
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"
#include "server/svc/svc_server.h"
#include "util/log.h"

int px_node_index(const struct px_server *s, const char *name) {
  if (!name) return -1;
  uint32_t i = px_core_node_index(s->core, name);
  return i == PX_NONE ? -1 : (int)i;
}

/* The configuration's order is the core's (core.c builds one from the other). */
int px_partition_index(const struct px_server *s, const char *name) {
  for (uint32_t i = 0; name && i < s->conf->npartitions; i++)
    if (!strcmp(s->conf->partitions[i].name, name)) return (int)i;
  return -1;
}

/* ---- orders ---- */

static uint32_t *tasks_per_node(const struct px_sjob *j, uint32_t *total) {
  uint32_t n = j->nalloc, *t = calloc(n ? n : 1, sizeof *t);
  if (!t) return NULL;
  uint32_t ntasks = j->spec.ntasks;
  if (!ntasks) ntasks = j->spec.ntasks_per_node ? j->spec.ntasks_per_node * n : n;
  for (uint32_t i = 0; i < n; i++) t[i] = ntasks / n + (i < ntasks % n ? 1 : 0); /* block */
  *total = ntasks;
  return t;
}

static void launch_one(struct px_server *s, const struct px_sjob *j, uint32_t rank,
                       const char **names, const char **addrs, uint32_t *tpn, uint32_t ntasks,
                       uint32_t *gpn) {
  const struct px_jobspec *sp = &j->spec;
  uint32_t gpus[64], ng = 0;
  for (int g = 0; g < 64; g++)
    if (j->alloc[rank].gpus >> g & 1) gpus[ng++] = (uint32_t)g;
  struct px_launch l = {
      .job_id = j->id, .array_job_id = j->array_job_id,
      .array_task_id = j->array_task_id == PX_NONE ? 0 : j->array_task_id,
      .restart_count = j->restarts, .name = sp->name, .user = sp->user, .account = sp->account,
      .partition = sp->partition, .qos = sp->qos, .uid = sp->uid, .gid = sp->gid,
      .workdir = sp->workdir, .submit_dir = sp->submit_dir, .script = sp->script,
      .argv = sp->argv, .stdout_path = sp->stdout_path, .stderr_path = sp->stderr_path,
      .stdin_path = sp->stdin_path, .env = sp->env, .time_limit_s = j->time_limit_s,
      .start_time = j->start, .signal_num = sp->signal_num, .signal_time_s = sp->signal_time_s,
      .nodes = (char **)names, .node_addrs = (char **)addrs, .nnodes = j->nalloc,
      .node_rank = rank, .ntasks = ntasks, .tasks_per_node = tpn,
      .cpus_per_task = sp->cpus_per_task ? sp->cpus_per_task : 1, .gpus = gpus, .ngpus = ng,
      .gpus_per_node = gpn, .ncpus = j->alloc[rank].ncpu, .mem_mib = j->alloc[rank].mem_mib,
      .master_port = (uint16_t)(20000 + j->id % 20000), .open_mode = sp->open_mode, .hint = sp->hint,
      .distribution = sp->distribution, .cpus_per_gpu = sp->cpus_per_gpu,
      .gpu_share = j->alloc[rank].gpu_share,
      .container_image = sp->container_image, .container_mounts = sp->container_mounts,
      .container_workdir = sp->container_workdir, .container_env = sp->container_env,
      .container_image_dir = (char *)s->conf->phalanx.container_image_dir};
  l.service = px_svc_launch_of(s, j); /* a service's replica: ports, health check */
  char *json = px_launch_encode(&l);
  px_svc_launch_release(l.service);
  if (!json || px_outbox_push(s->outbox, j->alloc[rank].node, true, json))
    px_error("job %llu: cannot queue its launch for %s", (unsigned long long)j->id, names[rank]);
}

void px_nodes_launch(struct px_server *s, const struct px_sjob *j) {
  uint32_t n = j->nalloc, ntasks = 0;
  const char **names = calloc(n + 1, sizeof *names), **addrs = calloc(n + 1, sizeof *addrs);
  uint32_t *gpn = calloc(n + 1, sizeof *gpn), *tpn = tasks_per_node(j, &ntasks);
  if (names && addrs && gpn && tpn) {
    for (uint32_t i = 0; i < n; i++) {
      const struct px_conf_node *cn = &s->conf->nodes[j->alloc[i].node];
      const struct px_snode *sn = &s->nodes[j->alloc[i].node];
      names[i] = cn->name;
      addrs[i] = sn->addr[0] ? sn->addr : cn->addr ? cn->addr : cn->name;
      gpn[i] = (uint32_t)px_bits64_count(j->alloc[i].gpus);
    }
    for (uint32_t i = 0; i < n; i++) launch_one(s, j, i, names, addrs, tpn, ntasks, gpn);
  } else {
    px_error("job %llu: out of memory building its launch", (unsigned long long)j->id);
  }
  free(names);
  free(addrs);
  free(gpn);
  free(tpn);
}

static void stop_on(struct px_server *s, uint32_t node, uint64_t job_id, int sig,
                    const char *reason) {
  int64_t grace = s->conf->phalanx.kill_wait_s > 0 ? s->conf->phalanx.kill_wait_s : 30;
  struct px_signal_order o = {.job_id = job_id, .signal = sig, .grace_s = (int32_t)grace};
  snprintf(o.reason, sizeof o.reason, "%s", reason);
  char *json = px_signal_order_encode(&o);
  if (json) px_outbox_push(s->outbox, node, false, json);
}

void px_nodes_signal(struct px_server *s, const struct px_sjob *j, int sig) {
  for (uint32_t i = 0; i < j->nalloc; i++) {
    struct px_signal_order o = {.job_id = j->id, .signal = sig, .grace_s = -1, .reason = "SIGNAL"}; /* grace -1: signal only */
    char *json = px_signal_order_encode(&o);
    if (json) px_outbox_push(s->outbox, j->alloc[i].node, false, json);
  }
}

void px_nodes_stop(struct px_server *s, const struct px_sjob *j, int sig, const char *reason) {
  for (uint32_t i = 0; i < j->nalloc; i++) stop_on(s, j->alloc[i].node, j->id, sig, reason);
}

/* ---- ends and requeues ---- */

int px_jobs_end(struct px_server *s, struct px_sjob *j, enum px_job_state st, int32_t exit_code,
                int32_t term_signal, int64_t now) {
  return px_jobs_end_why(s, j, st, exit_code, term_signal, NULL, now);
}

int px_jobs_end_why(struct px_server *s, struct px_sjob *j, enum px_job_state st, int32_t exit_code,
                    int32_t term_signal, const char *reason, int64_t now) {
  struct px_event ev = {.kind = PX_EV_END, .job_id = j->id, .state = st, .exit_code = exit_code,
                        .term_signal = term_signal, .peak_mem_mib = j->peak_mem_mib,
                        .cpu_time_ms = j->cpu_time_ms, .reason = reason};
  struct px_event_result res;
  int rc = px_events_accept(s, &ev, now, &res);
  s->need_cycle = true;
  if (!rc) rc = px_u64vec_push(&s->acct_pending, j->id); /* written with the commit */
  return rc;
}

/* A running job lost its node: requeue it whole, or end it NODE_FAIL. */
static int job_node_failed(struct px_server *s, struct px_sjob *j, int64_t now) {
  px_nodes_stop(s, j, SIGKILL, "NODE_FAIL");
  if (!j->spec.requeue) return px_jobs_end(s, j, PX_JOB_NODE_FAIL, 0, 0, now);
  struct px_event ev = {.kind = PX_EV_REQUEUE, .job_id = j->id, .reason = "NodeFail"};
  struct px_event_result res;
  s->need_cycle = true;
  return px_events_accept(s, &ev, now, &res);
}

void px_node_set_reason(struct px_snode *n, const char *reason, const char *by, int64_t now) {
  bool set = reason && *reason;
  snprintf(n->reason, sizeof n->reason, "%s", set ? reason : "");
  snprintf(n->reason_by, sizeof n->reason_by, "%s", set && by ? by : "");
  n->reason_time = set ? now : 0;
}

/* Node liveness (heartbeats, registration) is not journaled: after a
 * restart every node is down until its agent registers again (server.c). */
static void node_alive(struct px_server *s, uint32_t node, bool up, const char *reason, int64_t now) {
  struct px_event ev = {.kind = up ? PX_EV_NODE_UP : PX_EV_NODE_DOWN, .node = node, .reason = reason,
                        .by = s->self_user};
  struct px_event_result res;
  if (!px_events_apply(s, &ev, now, &res)) px_node_acct_event(s, &ev, now); /* sacctmgr show event */
  s->dirty = true;
}

static bool runs_on(const struct px_sjob *j, uint32_t node) {
  for (uint32_t i = 0; i < j->nalloc; i++)
    if (j->alloc[i].node == node) return true;
  return false;
}

/* Every job running on node ends as on a lost node (requeued or NODE_FAIL). */
static void fail_jobs_on(struct px_server *s, uint32_t node, int64_t now) {
  for (size_t i = 0; i < s->njobs; i++) {
    struct px_sjob *j = s->jobs[i];
    if (j->state == PX_JOB_RUNNING && runs_on(j, node)) job_node_failed(s, j, now);
  }
}

static void node_down(struct px_server *s, uint32_t node, const char *reason, int64_t now) {
  struct px_snode *n = &s->nodes[node];
  if (n->down) return;
  node_alive(s, node, false, reason, now);
  px_warn("node %s is DOWN: %s", s->conf->nodes[node].name, reason);
  fail_jobs_on(s, node, now);
}

/* A node whose agent has not registered within the timeout of the server's
 * start is as silent as one that stopped answering: it is DOWN from the
 * start (open_state), and the jobs the journal says run there are given up
 * once, as node_down does (otherwise they would stay RUNNING for ever). */
static void give_up_unregistered(struct px_server *s, uint32_t node, int64_t now) {
  struct px_snode *n = &s->nodes[node];
  n->given_up = true;
  if (!n->admin_drain) px_node_set_reason(n, "Not responding", s->self_user, now); /* a drain keeps its own */
  s->nodes_dirty = s->dirty = true;
  px_warn("node %s: no agent since the server started: DOWN", s->conf->nodes[node].name);
  fail_jobs_on(s, node, now);
}

/* A journal stall (commit.c) held heartbeats back: none counts as missed. */
static void forgive_stall(struct px_server *s, int64_t now) {
  unsigned stalls = atomic_load(&s->commit.stalls);
  if (stalls == s->commit.stalls_seen) return;
  s->commit.stalls_seen = stalls;
  for (uint32_t i = 0; i < s->conf->nnodes; i++)
    if (s->nodes[i].registered) s->nodes[i].last_heartbeat = now;
}

void px_nodes_check(struct px_server *s, int64_t now) {
  int64_t timeout = s->opts.node_timeout_s;
  forgive_stall(s, now);
  bool since_start = px_now_mono_ns() - s->start_mono_ns > timeout * 1000000000LL;
  for (uint32_t i = 0; i < s->conf->nnodes; i++) {
    struct px_snode *n = &s->nodes[i];
    if (n->registered && !n->down && now - n->last_heartbeat > timeout)
      node_down(s, i, "Not responding", now);
    else if (!n->registered && !n->given_up && since_start)
      give_up_unregistered(s, i, now);
  }
}

/* ---- registration and reconciliation ---- */

static const struct px_known_job *known(const struct px_node_report *r, uint64_t id) {
  for (uint32_t i = 0; i < r->njobs; i++)
    if (r->jobs[i].job_id == id) return &r->jobs[i];
  return NULL;
}

/* A job running by the journal that the agent does not know, although the
 * agent has held every job given to it since before the job started
 * (report.since, agent/since.c): the launch order never reached it. The
 * controller that journaled the START died (or lost its lease) before the
 * order left; the START is durable, so the job is launched again rather than
 * failed, once, to all of its nodes. */
static bool never_reached(const struct px_sjob *j, const struct px_node_report *r) {
  return j->unconfirmed && !j->recovered && r->since > 0 && j->start >= r->since;
}

int px_nodes_register(struct px_server *s, struct px_req *r, int64_t now) {
  int idx = px_node_index(s, r->report.node);
  if (idx < 0) return PX_ENOENT;
  struct px_snode *n = &s->nodes[idx];
  n->registered = true;
  n->last_heartbeat = now;
  snprintf(n->addr, sizeof n->addr, "%s", r->report.addr);
  px_outbox_agent_version(s->outbox, (uint32_t)idx, r->report.version);
  if (!px_agent_takes_time_limit(r->report.version))
    px_warn("node %s: agent version '%s': a running job's new time limit is not sent to it (upgrade the agent)",
            r->report.node, r->report.version);
  if (n->down) node_alive(s, (uint32_t)idx, true, NULL, now);
  if (!n->admin_drain) px_node_set_reason(n, NULL, NULL, 0);
  s->nodes_dirty = s->dirty = s->need_cycle = true;
  int rc = px_node_shape_check(s, (uint32_t)idx, &r->report, now); /* fewer GPUs than configured: drained */
  if (rc) px_error("node %s: cannot record its drain or resume: %s", r->report.node, px_strerror(rc));
  /* What the journal says runs here, against what the agent knows. */
  for (size_t i = 0; i < s->njobs; i++) {
    struct px_sjob *j = s->jobs[i];
    if (j->state != PX_JOB_RUNNING || !runs_on(j, (uint32_t)idx)) continue;
    const struct px_known_job *k = known(&r->report, j->id);
    if (!k && never_reached(j, &r->report) && j->cancelled_by) {
      /* Cancelled meanwhile: its stop went to an agent that did not know
       * the job and dropped it, so a launch sent now would run for good
       * (a service deleted right after a restart). It never ran: it ends. */
      px_info("job %llu: cancelled before its lost launch reached %s: ended", (unsigned long long)j->id,
              r->report.node);
      j->unconfirmed = false;
      px_nodes_stop(s, j, SIGKILL, "CANCELLED"); /* its other nodes, should one have it */
      px_jobs_end(s, j, PX_JOB_CANCELLED, 0, 0, now);
    } else if (!k && never_reached(j, &r->report)) {
      px_warn("job %llu: node %s never got its launch (lost in a restart or takeover): sent again",
              (unsigned long long)j->id, r->report.node);
      j->unconfirmed = false; /* the other nodes may register before the order reaches them */
      px_nodes_launch(s, j);  /* every node of it: an agent starts a job once at most */
    } else if (!k && (j->recovered || j->unconfirmed)) {
      px_warn("job %llu: node %s does not know it after recovery", (unsigned long long)j->id,
              r->report.node);
      job_node_failed(s, j, now);
    }
  }
  /* What the agent runs that the journal does not put there: stop it. */
  for (uint32_t i = 0; i < r->report.njobs; i++) {
    const struct px_known_job *k = &r->report.jobs[i];
    struct px_sjob *j = px_jobs_find(s, k->job_id);
    bool ours = j && j->state == PX_JOB_RUNNING && runs_on(j, (uint32_t)idx);
    if (!ours && !strcmp(k->state, "RUNNING")) stop_on(s, (uint32_t)idx, k->job_id, SIGKILL, "CANCELLED");
  }
  return 0;
}
