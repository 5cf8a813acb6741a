/*
 * handle.c - what the main thread does with each request (loop/loop.h). Each
 * handler checks the caller's right to act, asks the core (which may
 * refuse), records the change in the journal batch, and prepares the answer;
 * the loop sends answers only after the batch is committed.
 *
 * Authorisation rules (each 403 names its rule and is logged):
 *   own-job       users change only their own jobs
 *   coordinator   account coordinators change jobs of their accounts
 *   operator      operators and administrators change any job, drain nodes,
 *                 set priorities, lengthen time limits, lower nice below 0
 *   submit-as     only administrators submit as another user
 *   root-jobs     jobs as root only with AllowRootJobs
 *   agent-node    an agent speaks only for the node its credential names
 *   admin         only administrators create reservations
 *   accounts      only operators and administrators change accounts, users
 *                 and QoS (sacctmgr's AdminLevel=Operator may too)
 */
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "proto/event_json.h"
#include "proto/jfield.h"
#include "proto/jobspec_json.h"
#include "proto/views_json.h"
#include "server/loop/loop.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"
#include "server/svc/svc_server.h"
#include "util/hostlist.h"
#include "util/log.h"

static void deny(struct px_req *r, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void deny(struct px_req *r, const char *rule, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  px_warn("denied (%s): user %s uid %u: %s", rule, r->who.user, r->who.uid, msg);
  px_req_error(r, 403, "FORBIDDEN", "%s (rule %s)", msg, rule);
}

static bool is_operator(const struct px_req *r) { return r->who.roles & PX_ROLE_OPERATOR; }

/* May the caller change job j? Answers 403 and returns false if not. */
static bool may_change(struct px_server *s, struct px_req *r, const struct px_sjob *j) {
  if (is_operator(r) || r->who.uid == j->spec.uid) return true;
  if (px_auth_is_coordinator(s->auth, &r->who, j->spec.account)) return true;
  deny(r, "own-job", "job %llu belongs to %s", (unsigned long long)j->id,
       j->spec.user ? j->spec.user : "another user");
  return false;
}

static struct px_sjob *job_or_404(struct px_server *s, struct px_req *r) {
  struct px_sjob *j = px_jobs_find(s, r->job_id);
  if (!j) px_req_error(r, 404, "NOT_FOUND", "job %llu: no such job", (unsigned long long)r->job_id);
  return j;
}

static void answer_diag(struct px_req *r, int err, const struct px_diag *d) {
  px_req_answer(r, px_error_http_status(err), px_error_diag(px_error_code(err), d));
}

static void answer_ok(struct px_req *r) { px_req_answer(r, 200, strdup("{}")); }

/* ---- submit ---- */

/* Identity and defaults the server fills in: who submits, partition (the
 * account: record_account, once the core has placed the job). */
static int fill_spec(struct px_server *s, struct px_req *r, struct px_jobspec *sp) {
  bool admin = r->who.roles & PX_ROLE_ADMIN;
  if (sp->user && strcmp(sp->user, r->who.user) && !admin) {
    deny(r, "submit-as", "cannot submit as user %s", sp->user);
    return PX_EPERM;
  }
  if (!sp->user || !admin) {
    free(sp->user);
    if (!(sp->user = strdup(r->who.user))) return PX_ENOMEM;
    sp->uid = r->who.uid;
    sp->gid = r->who.gid;
  }
  if (sp->uid == 0 && !s->conf->phalanx.allow_root_jobs) {
    deny(r, "root-jobs", "jobs may not run as root (AllowRootJobs=NO)");
    return PX_EPERM;
  }
  const struct px_conf *c = s->conf;
  if (!sp->partition && c->default_partition != PX_NONE &&
      !(sp->partition = strdup(c->partitions[c->default_partition].name)))
    return PX_ENOMEM;
  return 0;
}

/* The core's diagnostic, with the job's path in the request. */
static void submit_refused(struct px_req *r, int rc, size_t i, struct px_diag *d) {
  char prefix[32];
  snprintf(prefix, sizeof prefix, r->batch ? "jobs[%zu]." : "job.", i);
  char msg[sizeof d->msg + sizeof prefix];
  snprintf(msg, sizeof msg, "%s%s", prefix, d->msg[0] ? d->msg : "spec: refused");
  snprintf(d->msg, sizeof d->msg, "%.255s", msg);
  /* a name the core does not know is a bad field of the body, not a missing URL */
  int err = rc == PX_ENOENT ? PX_EINVAL : rc;
  px_req_answer(r, px_error_http_status(err), px_error_diag(px_error_code(err), d));
}

/* All or none: each job of the request is applied to the core, once; when
 * one is refused, those before it are taken back (never journaled), else
 * all are journaled and join the table (events.c). */
static void submit(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_event *evs = calloc(r->nspecs ? r->nspecs : 1, sizeof *evs);
  struct px_event_result *res = calloc(r->nspecs ? r->nspecs : 1, sizeof *res);
  struct px_diag d;
  px_diag_clear(&d);
  uint64_t id = s->next_job_id;
  size_t i = 0;
  int rc = evs && res ? 0 : PX_ENOMEM;
  for (; !rc && i < r->nspecs; i++) {
    if ((rc = fill_spec(s, r, &r->specs[i]))) break;
    evs[i] = (struct px_event){.kind = PX_EV_SUBMIT, .job_id = id, .spec = &r->specs[i]};
    if ((rc = px_events_core(s, &evs[i], now, &res[i]))) {
      d = res[i].diag;
      break;
    }
    id += res[i].nids;
  }
  if (rc) {
    for (size_t k = 0; k < i; k++) { /* all or none */
      struct px_event undo = {.kind = PX_EV_CANCEL, .job_id = evs[k].job_id};
      struct px_event_result ur;
      px_core_apply(s->core, &undo, now, &ur);
    }
    if (!r->status) submit_refused(r, rc, i, &d);
    free(evs);
    free(res);
    return;
  }
  s->next_job_id = id;
  struct px_jbuf ans = {0};
  char num[48];
  px_jbuf_add(&ans, r->batch ? "{\"job_ids\":[" : "{\"job_id\":", r->batch ? 12 : 10);
  for (i = 0; i < r->nspecs; i++) {
    if (px_events_record(s, &evs[i], &res[i], now)) px_error("journal: out of memory");
    int n = snprintf(num, sizeof num, "%s%llu", i ? "," : "", (unsigned long long)evs[i].job_id);
    if (r->batch || i == 0) px_jbuf_add(&ans, num, (size_t)n);
  }
  px_jbuf_add(&ans, r->batch ? "]}" : "}", r->batch ? 2 : 1);
  if (ans.err) free(ans.p);
  px_req_answer(r, 201, ans.err ? NULL : ans.p);
  free(evs);
  free(res);
  s->need_cycle = true;
}

/* The answer of a dry run: the id the job would get, when and where it
 * would start (the core's estimate: now, a later time as running jobs end
 * and the jobs ahead start, or unknown: 0) and the CPUs it asks. */
static char *test_answer(struct px_server *s, uint64_t id, const struct px_jobspec *sp, int64_t now) {
  uint32_t max = s->conf->nnodes ? s->conf->nnodes : 1, n = 0, *nodes = calloc(max, sizeof *nodes);
  const char **names = calloc(max, sizeof *names);
  char *list = NULL, *text = NULL;
  struct px_job_view v;
  int64_t start = 0;
  if (!nodes || !names || px_core_job_estimate(s->core, id, now, &start, nodes, max, &n)) n = 0, start = 0;
  for (uint32_t i = 0; i < n; i++) names[i] = s->conf->nodes[nodes[i]].name;
  if (n && px_hostlist_compress(names, n, &list)) list = NULL;
  uint32_t ncpus = px_core_job_get(s->core, id, &v) ? 0 : v.ncpus;
  json_t *o = nodes && names ? json_pack("{sI sb sI ss sI ss}", "job_id", (json_int_t)id, "test_only", 1,
                                         "expected_start", (json_int_t)start, "nodelist", list ? list : "",
                                         "ncpus", (json_int_t)ncpus, "partition", sp->partition ? sp->partition : "")
                             : NULL;
  if (o) text = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  free(list);
  free(names);
  free(nodes);
  return text;
}

/* POST /v1/jobs?test_only=1 (sbatch --test-only): the job is judged by the
 * same SUBMIT event as a submit (the same refusals) under the id it would
 * get, answered, then taken back: nothing queued or journaled, no id used. */
static void submit_test(struct px_server *s, struct px_req *r, int64_t now) {
  if (r->batch || r->nspecs != 1)
    return px_req_error(r, 400, "INVALID", "test_only: tests one job (\"job\"), not a batch");
  struct px_diag d;
  px_diag_clear(&d);
  struct px_event ev = {.kind = PX_EV_SUBMIT, .job_id = s->next_job_id, .spec = &r->specs[0]};
  struct px_event_result res;
  int rc = fill_spec(s, r, &r->specs[0]);
  if (!rc && (rc = px_events_core(s, &ev, now, &res))) d = res.diag;
  if (rc) {
    if (!r->status) submit_refused(r, rc, 0, &d);
    return;
  }
  char *text = test_answer(s, ev.job_id, &r->specs[0], now);
  px_core_withdraw(s->core, ev.job_id, now); /* pending, just submitted: cannot be refused */
  if (!text) return px_req_error(r, 503, "NOMEM", "out of memory");
  px_req_answer(r, 200, text);
}

/* ---- job changes ---- */

/* Cancels one job that has not ended: a pending one leaves the queue, a
 * running one is told to stop (its end report then reads CANCELLED: the
 * record says by whom). */
static int cancel_one(struct px_server *s, struct px_req *r, struct px_sjob *j, int64_t now,
                      struct px_diag *d) {
  if (j->state == PX_JOB_RUNNING && !px_sjob_is_array(j)) px_nodes_stop(s, j, SIGTERM, "CANCELLED");
  struct px_event ev = {.kind = PX_EV_CANCEL, .job_id = j->id, .by = r->who.user, .signal = r->signal};
  struct px_event_result res;
  int rc = px_events_accept(s, &ev, now, &res);
  if (rc && d) *d = res.diag;
  return rc;
}

/* scancel J of an array, as Slurm: its tasks not yet started are dropped,
 * its started ones (running, or pending again after a requeue) cancelled or,
 * with a signal, signalled. */
static void cancel_array(struct px_server *s, struct px_req *r, struct px_sjob *a, int64_t now) {
  bool signal_only = r->signal && a->state != PX_JOB_PENDING;
  for (uint32_t k = 1; k <= a->arr_started; k++) {
    struct px_sjob *t = px_jobs_find(s, a->id + k);
    if (!t || px_job_state_terminal(t->state)) continue;
    if (signal_only && t->state == PX_JOB_RUNNING) px_nodes_signal(s, t, r->signal);
    else if (!signal_only && cancel_one(s, r, t, now, NULL)) px_error("journal: out of memory");
  }
  if (!signal_only) {
    struct px_diag d;
    int rc = cancel_one(s, r, a, now, &d); /* the remainder */
    if (rc) return answer_diag(r, rc, &d);
  }
  s->need_cycle = true;
  answer_ok(r);
}

static void cancel(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_sjob *j = job_or_404(s, r);
  if (!j || !may_change(s, r, j)) return;
  if (px_job_state_terminal(j->state)) {
    px_req_error(r, 409, "STATE", "job %llu already ended (%s)", (unsigned long long)j->id,
                 px_job_state_name(j->state));
    return;
  }
  if (px_sjob_is_array(j)) return cancel_array(s, r, j, now);
  if (r->signal && j->state == PX_JOB_RUNNING) { /* signal only, as scancel --signal */
    px_nodes_signal(s, j, r->signal);
    answer_ok(r);
    return;
  }
  struct px_diag d;
  int rc = cancel_one(s, r, j, now, &d);
  if (rc) return answer_diag(r, rc, &d);
  s->need_cycle = true;
  answer_ok(r);
}

/* Why a change of a pending job is refused, in Slurm 22.05's words (what
 * scontrol prints for an update of a running job's Partition=, Dependency=
 * ...; of an ended job's anything). A running job's time limit alone does
 * change (update); hold and release of one are no-ops to scontrol. */
static void not_pending(const struct px_sjob *j, char *msg, size_t size) {
  if (px_job_state_terminal(j->state))
    snprintf(msg, size, "job_id: Job has already finished (job %llu: %s)", (unsigned long long)j->id,
             px_job_state_name(j->state));
  else
    snprintf(msg, size, "job_id: Job is no longer pending execution (job %llu is %s)", (unsigned long long)j->id,
             px_job_state_name(j->state));
}

/* A change of a pending job (hold, release, update): the core decides. */
static void pending_change(struct px_server *s, struct px_req *r, struct px_sjob *j,
                           struct px_event *ev, int64_t now) {
  struct px_event_result res;
  px_diag_clear(&res.diag);
  int rc = j->state != PX_JOB_PENDING ? PX_ESTATE : px_events_accept(s, ev, now, &res);
  if (rc == PX_ESTATE && !res.diag.msg[0]) not_pending(j, res.diag.msg, sizeof res.diag.msg);
  if (rc == PX_EPERM) return deny(r, "operator", "only an operator releases an admin hold");
  if (rc) return answer_diag(r, rc, &res.diag);
  s->need_cycle = true;
  answer_ok(r);
}

static void hold_release(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_sjob *j = job_or_404(s, r);
  if (!j || !may_change(s, r, j)) return;
  struct px_event ev = {.kind = r->kind == PX_REQ_HOLD ? PX_EV_HOLD : PX_EV_RELEASE,
                        .job_id = j->id, .admin = is_operator(r)};
  pending_change(s, r, j, &ev, now);
}

/* A running job's new time limit (the core's UPDATE takes only that): the
 * journal keeps it, the plans use it, and the agents of its nodes, which
 * enforce limits, are told (a signal order that signals nothing). */
static void running_limit(struct px_server *s, struct px_req *r, struct px_sjob *j, struct px_event *ev,
                          int64_t now) {
  struct px_event_result res;
  int rc = px_events_accept(s, ev, now, &res);
  if (rc) return answer_diag(r, rc, &res.diag);
  struct px_signal_order o = {.job_id = j->id, .grace_s = -1, .time_limit_s = r->upd_time_limit_s};
  for (uint32_t i = 0; i < j->nalloc; i++) {
    char *json = px_signal_order_encode(&o);
    if (json) px_outbox_push(s->outbox, j->alloc[i].node, PX_ORDER_SIGNAL, json);
  }
  px_info("job %llu: time limit %lld s, set by %s", (unsigned long long)j->id, (long long)r->upd_time_limit_s,
          r->who.user);
  s->need_cycle = true;
  answer_ok(r);
}

/* As Slurm: users may only lower a limit (of a running job: the one it
 * runs under), operators set any. */
static void update(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_sjob *j = job_or_404(s, r);
  if (!j || !may_change(s, r, j)) return;
  bool running = j->state == PX_JOB_RUNNING && !px_sjob_is_array(j);
  int64_t limit = running && j->time_limit_s > 0 ? j->time_limit_s : j->spec.time_limit_s;
  if (!is_operator(r)) {
    if (r->upd_fields & PX_UPD_PRIORITY)
      return deny(r, "operator", "only operators set priorities");
    if ((r->upd_fields & PX_UPD_NICE) && r->upd_nice < 0)
      return deny(r, "operator", "only operators set a negative nice");
    if ((r->upd_fields & PX_UPD_TIME_LIMIT) && (limit == 0 || r->upd_time_limit_s > limit))
      return deny(r, "operator", "users may only lower a time limit");
  }
  struct px_event ev = {.kind = PX_EV_UPDATE, .job_id = j->id,
                        .update = {r->upd_fields, r->upd_nice, r->upd_time_limit_s, r->upd_priority}};
  if (running && r->upd_fields == PX_UPD_TIME_LIMIT) return running_limit(s, r, j, &ev, now);
  pending_change(s, r, j, &ev, now);
}

/* POST /v1/jobs/{id}/requeue, /requeuehold (scontrol requeue, requeuehold):
 * the owner, a coordinator or an operator sends a job back to the queue. A
 * running one is stopped as a node failure stops it: at once on its nodes
 * (the agents do not report that end; a late word of this attempt is
 * ignored by its restart count). A finished one is queued again from its
 * spec, as Slurm 22.05 does for a COMPLETED, FAILED, CANCELLED or TIMEOUT
 * batch job (checked: exit 0, PENDING, Restarts=1). Either way the REQUEUE
 * event, journaled: PENDING under the same id, Restarts + 1, held for
 * requeuehold. */
static void requeue(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_sjob *j = job_or_404(s, r);
  if (!j || !may_change(s, r, j)) return;
  bool hold = r->kind == PX_REQ_REQUEUE_HOLD;
  if (j->state == PX_JOB_PENDING || px_sjob_is_array(j))
    return px_req_error(r, 409, "STATE", "job_id: Job is pending execution (job %llu: only a running or "
                        "finished job is requeued)", (unsigned long long)j->id);
  if (!j->spec.requeue) /* Slurm's words for a running and a finished --no-requeue job alike */
    return px_req_error(r, 409, "DISABLED", "job_id: Requested operation is presently disabled (job %llu was "
                        "submitted with --no-requeue)", (unsigned long long)j->id);
  if (j->state != PX_JOB_RUNNING && (j->array_job_id || j->spec.service))
    return px_req_error(r, 409, "STATE", "job_id: Job has already finished (job %llu: %s; a finished array "
                        "task or service replica is not requeued)", (unsigned long long)j->id,
                        px_job_state_name(j->state));
  if (j->state == PX_JOB_RUNNING) {
    px_nodes_stop(s, j, SIGKILL, "NODE_FAIL");
    j->preempting = j->fault_requeue = false; /* a preemption under way ends here */
  }
  struct px_event ev = {.kind = PX_EV_REQUEUE, .job_id = j->id, .hold = hold,
                        .reason = hold ? "job_requeued_in_held_state" : NULL};
  struct px_event_result res;
  int rc = px_events_accept(s, &ev, now, &res);
  if (rc) return answer_diag(r, rc, &res.diag);
  px_info("job %llu requeued%s by %s", (unsigned long long)j->id, hold ? " held" : "", r->who.user);
  s->need_cycle = true;
  answer_ok(r);
}

static void show(struct px_server *s, struct px_req *r) {
  struct px_sjob *j = job_or_404(s, r);
  if (!j) return;
  struct px_job_info info;
  if (px_jobs_info(s, j, &info)) return px_req_error(r, 503, "NOMEM", "out of memory");
  if (r->full) { /* the launch fields: for those who may change the job */
    if (!may_change(s, r, j)) {
      px_job_info_fini(&info);
      return;
    }
    struct px_jobspec full;
    if (px_jobspec_copy(&full, &j->spec) == 0) {
      px_jobspec_fini(&info.spec);
      info.spec = full;
    }
  }
  struct px_job_view v;
  if (px_core_job_get(s->core, j->id, &v) == 0) { /* the core knows why and when */
    if (j->state == PX_JOB_PENDING) {
      snprintf(info.reason, sizeof info.reason, "%s", px_reason_name(v.reason));
      px_jobs_set_prio(s, j, &v);
      info.priority = j->priority;
      info.prio_age = j->prio[0], info.prio_fairshare = j->prio[1], info.prio_jobsize = j->prio[2];
      info.prio_partition = j->prio[3], info.prio_qos = j->prio[4];
    }
    info.expected_start = v.expected_start_s;
    if (v.why) info.why = strdup(v.why);
  }
  px_req_answer(r, 200, px_job_info_encode(&info));
  px_job_info_fini(&info);
}

/* ---- nodes and agents ---- */

static void drain_resume(struct px_server *s, struct px_req *r, int64_t now) {
  int idx = px_node_index(s, r->node);
  if (idx < 0) return px_req_error(r, 404, "NOT_FOUND", "node %s: no such node", r->node);
  if (!is_operator(r)) return deny(r, "operator", "only operators drain or resume nodes");
  bool drain = r->kind == PX_REQ_NODE_DRAIN;
  if (drain && !r->reason[0])
    return px_req_error(r, 400, "INVALID", "reason: a drain needs a reason");
  struct px_event ev = {.kind = drain ? PX_EV_NODE_DRAIN : PX_EV_NODE_RESUME, .node = (uint32_t)idx,
                        .reason = r->reason, .by = r->who.user}; /* sinfo -R: the operator */
  if (drain) ev.cause = px_drain_cause_name(PX_DRAIN_OPERATOR); /* no check lifts it, however worded */
  struct px_event_result res;
  int rc = px_events_accept(s, &ev, now, &res);
  if (rc) return answer_diag(r, rc, &res.diag);
  /* an operator's resume returns the node's faulty GPUs, not the quarantined ones */
  if (!drain && (rc = px_gpu_resume(s, (uint32_t)idx, -1, false, now)))
    return px_req_error(r, 500, "INTERNAL", "GPUs of %s: %s", r->node, px_strerror(rc));
  s->need_cycle = true;
  answer_ok(r);
}

/* POST /v1/nodes/{name}/gpu_resume: one GPU (or all) back, quarantined too. */
static void gpu_resume(struct px_server *s, struct px_req *r, int64_t now) {
  int idx = px_node_index(s, r->node);
  if (idx < 0) return px_req_error(r, 404, "NOT_FOUND", "node %s: no such node", r->node);
  if (!is_operator(r)) return deny(r, "operator", "only operators return GPUs to service");
  if (!r->batch && r->gpu.gpu >= s->conf->nodes[idx].ngpu)
    return px_req_error(r, 400, "INVALID", "gpu: node %s has %u GPUs, no index %u", r->node,
                        s->conf->nodes[idx].ngpu, r->gpu.gpu);
  int rc = px_gpu_resume(s, (uint32_t)idx, r->batch ? -1 : (int)r->gpu.gpu, true, now);
  if (rc) return px_req_error(r, 500, "INTERNAL", "GPUs of %s: %s", r->node, px_strerror(rc));
  answer_ok(r);
}

/* scontrol update PartitionName=P State=DOWN|UP: operators, journaled. */
static void part_state(struct px_server *s, struct px_req *r, int64_t now) {
  int idx = px_partition_index(s, r->node);
  if (idx < 0) return px_req_error(r, 404, "NOT_FOUND", "partition %s: no such partition", r->node);
  if (!is_operator(r)) return deny(r, "operator", "only operators change a partition's state");
  struct px_event ev = {.kind = r->kind == PX_REQ_PART_UP ? PX_EV_PART_UP : PX_EV_PART_DOWN,
                        .part = (uint32_t)idx, .reason = r->reason};
  struct px_event_result res;
  int rc = px_events_accept(s, &ev, now, &res);
  if (rc) return answer_diag(r, rc, &res.diag);
  s->need_cycle = true;
  answer_ok(r);
}

/* An agent acts only for the node its credential names; an administrator
 * without a node binding (e.g. `phalanx dev` over the Unix socket) for any. */
static bool agent_may(struct px_req *r, const char *node) {
  if (r->who.node[0] ? !strcmp(r->who.node, node) : (r->who.roles & PX_ROLE_ADMIN)) return true;
  deny(r, "agent-node", "credential of %s may not speak for node %s",
       r->who.node[0] ? r->who.node : r->who.user, node);
  return false;
}

static int task_ended(struct px_server *s, struct px_sjob *j, const struct px_task_report *t,
                      uint32_t node, int64_t now) {
  enum px_job_state st;
  if (!px_job_state_parse(t->state, &st) || st == PX_JOB_PENDING) return PX_EINVAL;
  if (st == PX_JOB_RUNNING) return px_svc_replica_report(s, j, t, now); /* a start confirmed, a replica's health */
  j->peak_mem_mib = t->peak_mem_mib;
  j->cpu_time_ms = t->cpu_time_ms;
  for (uint32_t i = 0; i < j->nalloc; i++) /* the gang ends whole */
    if (j->alloc[i].node != node)
      px_nodes_stop(s, &(struct px_sjob){.id = j->id, .alloc = &j->alloc[i], .nalloc = 1}, SIGKILL,
                    t->state);
  bool preempted = j->preempting || st == PX_JOB_PREEMPTED;
  /* A preempted job goes back to the queue (whole) unless it asked not to,
   * the mode is CANCEL, or someone cancelled it meanwhile. */
  bool requeue = preempted ? !j->preempt_cancel && j->spec.requeue && !j->cancelled_by
                           : t->requeue_requested && j->spec.requeue;
  j->preempting = false;
  const char *why = j->fault_requeue ? "GpuFault" : preempted ? "Preempted" : "Requeued";
  j->fault_requeue = false;
  if (requeue && !j->recovered) {
    struct px_event ev = {.kind = PX_EV_REQUEUE, .job_id = j->id, .reason = why};
    struct px_event_result res;
    s->need_cycle = true;
    return px_events_accept(s, &ev, now, &res);
  }
  if (preempted) st = PX_JOB_PREEMPTED;
  if (j->cancelled_by && st != PX_JOB_COMPLETED) st = PX_JOB_CANCELLED;
  /* a start that failed on the node (an image that is not there) says why */
  const char *why_failed = st == PX_JOB_FAILED && t->reason[0] ? t->reason : NULL;
  return px_jobs_end_why(s, j, st, t->exit_code, t->term_signal, why_failed, now);
}

/* One report: its HTTP status (200 when applied or a repeat), msg the error. */
static int report_one(struct px_server *s, const struct px_task_report *t, int64_t now, const char **code,
                      char *msg, size_t size) {
  int idx = px_node_index(s, t->node);
  struct px_sjob *j = px_jobs_find(s, t->job_id);
  *code = "NOT_FOUND";
  if (idx < 0 || !j) {
    snprintf(msg, size, "%s: unknown %s", idx < 0 ? "node" : "job_id", idx < 0 ? "node" : "job");
    return 404;
  }
  if (t->is_step) return px_steps_report(s, t, idx, now); /* a step's end is not the job's */
  if (t->restart_count < j->restarts) { /* a late word on an attempt since requeued */
    px_info("job %llu: report of attempt %u from %s ignored (attempt %u now)",
            (unsigned long long)j->id, t->restart_count, t->node, j->restarts);
    return 200;
  }
  *code = "STATE";
  if (t->restart_count > j->restarts) {
    snprintf(msg, size, "restart_count: job %llu is at attempt %u, not %u",
             (unsigned long long)j->id, j->restarts, t->restart_count);
    return 409;
  }
  bool here = false;
  for (uint32_t i = 0; i < j->nalloc; i++) here |= j->alloc[i].node == (uint32_t)idx;
  *code = "STATE";
  if (j->state != PX_JOB_RUNNING) {
    /* The agent retries until it hears 2xx: a repeated end is acknowledged. */
    if (px_job_state_terminal(j->state) || j->requeued) return 200;
    snprintf(msg, size, "job_id: job %llu is not running", (unsigned long long)j->id);
    return 409;
  }
  if (!here) {
    snprintf(msg, size, "node: job %llu does not run on %s", (unsigned long long)j->id, t->node);
    return 409;
  }
  if (task_ended(s, j, t, (uint32_t)idx, now) == PX_EINVAL) {
    *code = "INVALID";
    snprintf(msg, size, "state: not a job state");
    return 400;
  }
  return 200;
}

/* {"status":[...]}: one status per report of a batch, in order. */
static void agent_reports(struct px_server *s, struct px_req *r, int64_t now) {
  for (uint32_t i = 0; i < r->ntasks; i++)
    if (!agent_may(r, r->tasks[i].node)) return;
  json_t *st = json_array();
  for (uint32_t i = 0; st && i < r->ntasks; i++) {
    const char *code;
    char msg[160];
    int status = report_one(s, &r->tasks[i], now, &code, msg, sizeof msg);
    if (status != 200) px_debug("report of job %llu: %d %s", (unsigned long long)r->tasks[i].job_id, status, msg);
    json_array_append_new(st, json_integer(status));
  }
  json_t *o = st ? json_pack("{so}", "status", st) : NULL;
  px_req_answer(r, 200, o ? json_dumps(o, JSON_COMPACT) : NULL);
  json_decref(o);
}

static void agent_report(struct px_server *s, struct px_req *r, int64_t now) {
  if (r->tasks) return agent_reports(s, r, now);
  const struct px_task_report *t = &r->task;
  if (!agent_may(r, t->node)) return;
  const char *code;
  char msg[160];
  int status = report_one(s, t, now, &code, msg, sizeof msg);
  if (status != 200) return px_req_error(r, status, code, "%s", msg);
  answer_ok(r);
}
static void agent_register(struct px_server *s, struct px_req *r, int64_t now) {
  if (!agent_may(r, r->report.node)) return;
  if (px_nodes_register(s, r, now))
    return px_req_error(r, 404, "NOT_FOUND", "node: %s is not in the configuration",
                        r->report.node);
  /* Ends the agent finished while nobody listened. */
  int idx = px_node_index(s, r->report.node);
  for (uint32_t i = 0; i < r->report.njobs; i++) {
    const struct px_known_job *k = &r->report.jobs[i];
    struct px_sjob *j = px_jobs_find(s, k->job_id);
    if (!j || j->state != PX_JOB_RUNNING || !strcmp(k->state, "RUNNING")) continue;
    struct px_task_report t = {.job_id = k->job_id, .exit_code = k->exit_code,
                               .term_signal = k->term_signal};
    snprintf(t.node, sizeof t.node, "%s", r->report.node);
    snprintf(t.state, sizeof t.state, "%s", k->state);
    task_ended(s, j, &t, (uint32_t)idx, now);
  }
  int64_t hb = s->conf->phalanx.heartbeat_interval_s > 0 ? s->conf->phalanx.heartbeat_interval_s : 10;
  /* report_batch: this server takes {"reports":[...]} (proto/agent_msg.h) */
  json_t *o = json_pack("{sI ss sb sI}", "heartbeat_s", (json_int_t)hb, "node", r->report.node, "report_batch", 1,
                        "gpu_health_interval_ms", (json_int_t)s->conf->phalanx.gpu.health_interval_ms);
  const struct px_conf_phalanx *ph = &s->conf->phalanx;
  if (o && ph->health_check_program)
    json_object_set_new(o, "health_check", json_pack("{ss sI si}", "program", ph->health_check_program, "interval_s",
                                                     (json_int_t)ph->health_check_interval_s, "states",
                                                     (int)ph->health_check_states));
  if (o && ph->reboot_program) json_object_set_new(o, "reboot_program", json_string(ph->reboot_program));
  px_node_reboot_done(s, (uint32_t)idx, now); /* a registration after a reboot order: the reboot is done */
  px_req_answer(r, 200, json_dumps(o, JSON_COMPACT));
  json_decref(o);
}

static void agent_gpu(struct px_server *s, struct px_req *r, int64_t now) {
  if (!agent_may(r, r->gpu.node)) return;
  char msg[256];
  int rc = px_gpu_fault(s, &r->gpu, now, msg, sizeof msg);
  if (rc) return px_req_error(r, px_error_http_status(rc), px_error_code(rc), "%s", msg);
  answer_ok(r);
}

static void agent_health(struct px_server *s, struct px_req *r, int64_t now) {
  if (!agent_may(r, r->health.node)) return;
  char msg[256];
  int rc = px_node_health_report(s, &r->health, now, msg, sizeof msg);
  if (rc) return px_req_error(r, px_error_http_status(rc), px_error_code(rc), "%s", msg);
  answer_ok(r);
}

/* scontrol reboot [ASAP] [nextstate=RESUME|DOWN] [reason=...] NODE: operators. */
static void node_reboot(struct px_server *s, struct px_req *r, int64_t now) {
  int idx = px_node_index(s, r->node);
  if (idx < 0) return px_req_error(r, 404, "NOT_FOUND", "node %s: no such node", r->node);
  if (!is_operator(r)) return deny(r, "operator", "only operators reboot nodes");
  if (!s->conf->phalanx.reboot_program)
    return px_req_error(r, 400, "INVALID", "node: RebootProgram is not configured (slurm.conf)");
  int rc = px_node_reboot_request(s, (uint32_t)idx, r->batch, (enum px_reboot_next)r->signal, r->reason,
                                  r->who.user, now);
  if (rc) return px_req_error(r, 500, "INTERNAL", "reboot of %s: %s", r->node, px_strerror(rc));
  answer_ok(r);
}

static void agent_heartbeat(struct px_server *s, struct px_req *r, int64_t now) {
  if (!agent_may(r, r->node)) return;
  int idx = px_node_index(s, r->node);
  if (idx < 0) return px_req_error(r, 404, "NOT_FOUND", "node: %s is not configured", r->node);
  struct px_snode *n = &s->nodes[idx];
  if (!n->registered || n->down)
    return px_req_error(r, 409, "REGISTER", "node: %s must register first", r->node);
  n->last_heartbeat = now;
  px_usage_note(s, r->node, r->text, now);
  if (px_node_reboot_due(s, (uint32_t)idx)) return px_req_answer(r, 200, strdup("{\"reboot\":true}"));
  answer_ok(r);
}

/* ---- reservations ---- */

/* The request's canonical JSON (the API checked its shape) is the data of
 * a journal record of kind: the journal's decoder reads it (one decoder
 * for both, proto/event_json.c), the core judges it, it is journaled. */
static int accept_text(struct px_server *s, struct px_req *r, const char *kind, int64_t now,
                       struct px_event_rec *e, struct px_diag *d) {
  struct px_store_rec rec = {.kind = kind, .data = r->text};
  int rc = px_event_decode(&(struct px_event_names){s->conf, &s->node_names}, &rec, e, d);
  struct px_event_result res;
  if (!rc && (rc = px_events_accept(s, &e->ev, now, &res))) *d = res.diag;
  return rc;
}

static void resv_add(struct px_server *s, struct px_req *r, int64_t now) {
  if (!(r->who.roles & PX_ROLE_ADMIN))
    return deny(r, "admin", "only administrators create reservations");
  struct px_event_rec e;
  struct px_diag d;
  int rc = accept_text(s, r, "resv", now, &e, &d);
  if (!rc) {
    json_t *ans = json_pack("{ss}", "name", e.resv.name);
    px_req_answer(r, 201, json_dumps(ans, JSON_COMPACT));
    json_decref(ans);
    s->need_cycle = true;
  } else {
    answer_diag(r, rc, &d);
  }
  px_event_rec_fini(&e);
}

static void resv_delete(struct px_server *s, struct px_req *r, int64_t now) {
  if (!(r->who.roles & PX_ROLE_ADMIN))
    return deny(r, "admin", "only administrators delete reservations");
  struct px_event ev = {.kind = PX_EV_RESV_DELETE, .reason = r->node};
  struct px_event_result res;
  int rc = px_events_accept(s, &ev, now, &res);
  if (rc) return answer_diag(r, rc, &res.diag);
  json_t *ans = json_pack("{ss}", "name", r->node);
  px_req_answer(r, 200, json_dumps(ans, JSON_COMPACT));
  json_decref(ans);
  s->need_cycle = true;
}

/* ---- accounts (sacctmgr add, modify, delete) ---- */

/* The core judges the change against the live tree and jobs. */
static void acct_change(struct px_server *s, struct px_req *r, int64_t now) {
  if (!is_operator(r)) return deny(r, "accounts", "only operators and administrators change accounts");
  struct px_event_rec e;
  struct px_diag d;
  int rc = accept_text(s, r, "acct", now, &e, &d);
  if (rc) {
    answer_diag(r, rc, &d);
  } else {
    px_info("accounts: %s changed by %s", e.acct.name, r->who.user);
    json_t *ans = px_acct_edit_json(&e.acct);
    px_req_answer(r, e.acct.op == PX_ACCT_ADD ? 201 : 200, ans ? json_dumps(ans, JSON_COMPACT) : NULL);
    json_decref(ans);
    s->need_cycle = true;
  }
  px_event_rec_fini(&e);
}

void px_handle_request(struct px_server *s, struct px_req *r, int64_t now) {
  switch (r->kind) {
    case PX_REQ_SUBMIT: r->test_only ? submit_test(s, r, now) : submit(s, r, now); break;
    case PX_REQ_CANCEL: cancel(s, r, now); break;
    case PX_REQ_HOLD:
    case PX_REQ_RELEASE: hold_release(s, r, now); break;
    case PX_REQ_UPDATE: update(s, r, now); break;
    case PX_REQ_REQUEUE:
    case PX_REQ_REQUEUE_HOLD: requeue(s, r, now); break;
    case PX_REQ_JOB_SHOW: show(s, r); break;
    case PX_REQ_JOB_STAT: px_usage_answer(s, r); break;
    case PX_REQ_NODE_DRAIN:
    case PX_REQ_NODE_RESUME: drain_resume(s, r, now); break;
    case PX_REQ_PART_DOWN:
    case PX_REQ_PART_UP: part_state(s, r, now); break;
    case PX_REQ_AGENT_REGISTER: agent_register(s, r, now); break;
    case PX_REQ_AGENT_REPORT: agent_report(s, r, now); break;
    case PX_REQ_AGENT_HEARTBEAT: agent_heartbeat(s, r, now); break;
    case PX_REQ_AGENT_GPU: agent_gpu(s, r, now); break;
    case PX_REQ_GPU_RESUME: gpu_resume(s, r, now); break;
    case PX_REQ_AGENT_HEALTH: agent_health(s, r, now); break;
    case PX_REQ_NODE_REBOOT: node_reboot(s, r, now); break;
    case PX_REQ_RESV_ADD: resv_add(s, r, now); break;
    case PX_REQ_RESV_DELETE: resv_delete(s, r, now); break;
    case PX_REQ_ACCT: acct_change(s, r, now); break;
    case PX_REQ_STEP_ADD:
    case PX_REQ_STEP_SHOW:
    case PX_REQ_STEP_LIST:
    case PX_REQ_STEP_CANCEL:
    case PX_REQ_STEP_END: px_steps_handle(s, r, now); break;
    case PX_REQ_SVC_APPLY:
    case PX_REQ_SVC_SCALE:
    case PX_REQ_SVC_DELETE:
    case PX_REQ_SVC_SHOW:
    case PX_REQ_SVC_ENDPOINTS:
    case PX_REQ_SVC_LOAD: px_svc_handle(s, r, now); break;
  }
}
