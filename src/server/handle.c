/*
 * handle.c - what the main thread does with each request (server.h). Each
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
 */
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/jfield.h"
#include "proto/jobspec_json.h"
#include "proto/views_json.h"
#include "server/api.h"
#include "server/state.h"
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

static int status_of(int err) {
  switch (err) {
    case PX_ENOENT: return 404;
    case PX_EPERM: return 403;
    case PX_ESTATE: return 409;
    case PX_ELIMIT: return 429;
    case PX_EEXIST: return 409;
    case PX_ENOMEM: return 503;
    default: return 400;
  }
}

static void answer_diag(struct px_req *r, int err, const struct px_diag *d) {
  px_req_answer(r, status_of(err), px_error_diag(px_error_code(err), d));
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

/* A job without --account went to the user's default association, by the
 * core's rule (DefaultAccount=, else the first). The journal keeps the
 * account it got, so that a replay does not depend on the accounts file;
 * without memory for the copy the replay chooses by the same rule. */
static void record_account(struct px_server *s, uint64_t id, struct px_jobspec *sp) {
  struct px_job_view v;
  if (sp->account || px_core_job_get(s->core, id, &v) || v.account == PX_NONE) return;
  sp->account = strdup(s->conf->accounts[v.account].name);
}

/* The "submit" record {"spec":{...},"ids":N}, written directly (no JSON
 * tree: this runs for every job of a batch on the main thread). */
static char *submit_record(const struct px_jobspec *sp, uint64_t nids) {
  struct px_jbuf b = {0};
  char tail[48];
  px_jbuf_add(&b, "{\"spec\":{", 9);
  px_jobspec_write(&b, sp);
  int n = snprintf(tail, sizeof tail, "},\"ids\":%llu}", (unsigned long long)nids);
  px_jbuf_add(&b, tail, (size_t)n);
  if (b.err) free(b.p);
  return b.err ? NULL : b.p;
}

static void submit(struct px_server *s, struct px_req *r, int64_t now) {
  uint64_t first = s->next_job_id, id = first;
  uint64_t *ids = calloc(r->nspecs ? r->nspecs : 1, sizeof *ids);
  struct px_diag d;
  size_t i = 0;
  int rc = ids ? 0 : PX_ENOMEM;
  char prefix[32];
  for (; !rc && i < r->nspecs; i++) {
    px_diag_clear(&d);
    if ((rc = fill_spec(s, r, &r->specs[i]))) break;
    int64_t n = px_core_ids_needed(&r->specs[i], &d);
    enum px_reason why = PX_REASON_NONE;
    if (n < 0) rc = (int)n;
    if (!rc) rc = px_core_submit(s->core, id, &r->specs[i], now, &why, &d);
    if (rc) break;
    record_account(s, id, &r->specs[i]);
    ids[i] = id;
    id += (uint64_t)n;
  }
  if (rc) {
    for (size_t k = 0; k < i; k++) px_core_cancel(s->core, ids[k], now, NULL); /* all or none */
    if (!r->status) { /* the core's diagnostic, with the job's path in the request */
      snprintf(prefix, sizeof prefix, r->batch ? "jobs[%zu]." : "job.", i);
      char msg[sizeof d.msg + sizeof prefix];
      snprintf(msg, sizeof msg, "%s%s", prefix, d.msg[0] ? d.msg : "spec: refused");
      snprintf(d.msg, sizeof d.msg, "%.255s", msg);
      /* a job that breaks a rule or limit is forbidden; anything else is invalid */
      int status = rc == PX_EPERM || rc == PX_ELIMIT ? 403 : rc == PX_ENOMEM ? 503 : 400;
      px_req_answer(r, status, px_error_diag(rc == PX_ENOENT ? "INVALID" : px_error_code(rc), &d));
    }
    free(ids);
    return;
  }
  s->next_job_id = id;
  struct px_jbuf ans = {0};
  char num[48];
  px_jbuf_add(&ans, r->batch ? "{\"job_ids\":[" : "{\"job_id\":", r->batch ? 12 : 10);
  for (i = 0; i < r->nspecs; i++) {
    uint64_t nids = (i + 1 < r->nspecs ? ids[i + 1] : id) - ids[i];
    if (px_journal_add_submit(s, ids[i], nids, &r->specs[i], submit_record(&r->specs[i], nids), now))
      px_error("journal: out of memory");
    int n = snprintf(num, sizeof num, "%s%llu", i ? "," : "", (unsigned long long)ids[i]);
    if (r->batch || i == 0) px_jbuf_add(&ans, num, (size_t)n);
  }
  px_jbuf_add(&ans, r->batch ? "]}" : "}", r->batch ? 2 : 1);
  if (ans.err) free(ans.p);
  px_req_answer(r, 201, ans.err ? NULL : ans.p);
  free(ids);
  s->need_cycle = true;
}

/* ---- job changes ---- */

/* Cancels one job that has not ended (the record says by whom: the end
 * report of a running one then reads CANCELLED). */
static int cancel_one(struct px_server *s, struct px_req *r, struct px_sjob *j, int64_t now) {
  if (j->state == PX_JOB_PENDING && !px_sjob_is_array(j)) {
    int rc = px_core_cancel(s->core, j->id, now, NULL);
    if (rc && rc != PX_ENOENT) return rc;
  } else if (j->state == PX_JOB_RUNNING && !px_sjob_is_array(j)) {
    px_nodes_stop(s, j, SIGTERM, "CANCELLED");
  }
  json_t *o = json_pack("{si}", "signal", r->signal);
  int rc = px_journal_add(s, "cancel", j->id, r->who.user, json_dumps(o, JSON_COMPACT), now);
  json_decref(o);
  return rc;
}

/* scancel J of an array, as Slurm: its tasks not yet started are dropped,
 * its started ones (running, or pending again after a requeue) cancelled or,
 * with a signal, signalled. */
static void cancel_array(struct px_server *s, struct px_req *r, struct px_sjob *a, int64_t now) {
  bool signal_only = r->signal && a->state != PX_JOB_PENDING;
  if (a->state == PX_JOB_PENDING && !signal_only) {
    struct px_diag d;
    int rc = px_core_cancel(s->core, a->id, now, &d); /* the remainder */
    if (rc && rc != PX_ENOENT) return answer_diag(r, rc, &d);
  }
  for (uint32_t k = 1; k <= a->arr_started; k++) {
    struct px_sjob *t = px_jobs_find(s, a->id + k);
    if (!t || px_job_state_terminal(t->state)) continue;
    if (signal_only && t->state == PX_JOB_RUNNING) px_nodes_signal(s, t, r->signal);
    else if (!signal_only && cancel_one(s, r, t, now)) px_error("journal: out of memory");
  }
  if (!signal_only && cancel_one(s, r, a, now)) px_error("journal: out of memory");
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
  if (j->state == PX_JOB_PENDING) {
    struct px_diag d;
    int rc = px_core_cancel(s->core, j->id, now, &d);
    if (rc && rc != PX_ENOENT) return answer_diag(r, rc, &d);
  } else {
    px_nodes_stop(s, j, SIGTERM, "CANCELLED");
  }
  json_t *o = json_pack("{si}", "signal", r->signal);
  px_journal_add(s, "cancel", j->id, r->who.user, json_dumps(o, JSON_COMPACT), now);
  json_decref(o);
  s->need_cycle = true;
  answer_ok(r);
}

static void hold_release(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_sjob *j = job_or_404(s, r);
  if (!j || !may_change(s, r, j)) return;
  bool admin = is_operator(r), hold = r->kind == PX_REQ_HOLD;
  struct px_diag d;
  px_diag_clear(&d);
  int rc = j->state != PX_JOB_PENDING ? PX_ESTATE
           : hold                     ? px_core_hold(s->core, j->id, admin, now, &d)
                                      : px_core_release(s->core, j->id, admin, now, &d);
  if (rc == PX_ESTATE && !d.msg[0]) snprintf(d.msg, sizeof d.msg, "job_id: job is not pending");
  if (rc == PX_EPERM) return deny(r, "operator", "only an operator releases an admin hold");
  if (rc) return answer_diag(r, rc, &d);
  json_t *o = json_pack("{sb}", "admin", admin);
  px_journal_add(s, hold ? "hold" : "release", j->id, NULL, json_dumps(o, JSON_COMPACT), now);
  json_decref(o);
  s->need_cycle = true;
  answer_ok(r);
}

static void update(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_sjob *j = job_or_404(s, r);
  if (!j || !may_change(s, r, j)) return;
  if (!is_operator(r)) {
    if (r->upd_fields & PX_UPD_PRIORITY)
      return deny(r, "operator", "only operators set priorities");
    if ((r->upd_fields & PX_UPD_NICE) && r->upd_nice < 0)
      return deny(r, "operator", "only operators set a negative nice");
    if ((r->upd_fields & PX_UPD_TIME_LIMIT) &&
        (j->spec.time_limit_s == 0 || r->upd_time_limit_s > j->spec.time_limit_s))
      return deny(r, "operator", "users may only lower a time limit");
  }
  struct px_job_update u = {r->upd_fields, r->upd_nice, r->upd_time_limit_s, r->upd_priority};
  struct px_diag d;
  px_diag_clear(&d);
  int rc = j->state != PX_JOB_PENDING ? PX_ESTATE : px_core_update(s->core, j->id, &u, now, &d);
  if (rc == PX_ESTATE && !d.msg[0]) snprintf(d.msg, sizeof d.msg, "job_id: job is not pending");
  if (rc) return answer_diag(r, rc, &d);
  json_t *o = json_object();
  if (u.fields & PX_UPD_NICE) json_object_set_new(o, "nice", json_integer(u.nice));
  if (u.fields & PX_UPD_TIME_LIMIT) json_object_set_new(o, "time_limit_s", json_integer(u.time_limit_s));
  if (u.fields & PX_UPD_PRIORITY) json_object_set_new(o, "priority", json_integer(u.priority));
  px_journal_add(s, "update", j->id, NULL, json_dumps(o, JSON_COMPACT), now);
  json_decref(o);
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
  struct px_diag d;
  px_diag_clear(&d);
  int rc = px_core_node_event(s->core, (uint32_t)idx, drain ? PX_NODE_EV_DRAIN : PX_NODE_EV_RESUME,
                              r->reason, now, &d);
  if (rc) return answer_diag(r, rc, &d);
  json_t *o = json_pack("{ss}", "reason", r->reason);
  px_journal_add(s, drain ? "drain" : "resume", 0, r->node, json_dumps(o, JSON_COMPACT), now);
  json_decref(o);
  s->need_cycle = true;
  answer_ok(r);
}

/* scontrol update PartitionName=P State=DOWN|UP: operators, journaled. */
static void part_state(struct px_server *s, struct px_req *r, int64_t now) {
  int idx = px_partition_index(s, r->node);
  if (idx < 0) return px_req_error(r, 404, "NOT_FOUND", "partition %s: no such partition", r->node);
  if (!is_operator(r)) return deny(r, "operator", "only operators change a partition's state");
  bool up = r->kind == PX_REQ_PART_UP;
  px_core_partition_set_up(s->core, (uint32_t)idx, up);
  json_t *o = json_pack("{ss}", "reason", r->reason);
  px_journal_add(s, up ? "part_up" : "part_down", 0, r->node, json_dumps(o, JSON_COMPACT), now);
  json_decref(o);
  s->need_cycle = true;
  s->nodes_dirty = true; /* the partitions' listing follows the nodes' */
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
  if (st == PX_JOB_RUNNING) return 0; /* confirmation of a start */
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
  if (requeue && !j->recovered) {
    px_core_job_requeue(s->core, j->id, false, now, NULL);
    s->need_cycle = true;
    return px_journal_add(s, "requeue", j->id, NULL,
                          strdup(preempted ? "{\"hold\":false,\"reason\":\"Preempted\"}"
                                           : "{\"hold\":false,\"reason\":\"Requeued\"}"),
                          now);
  }
  if (preempted) st = PX_JOB_PREEMPTED;
  if (j->cancelled_by && st != PX_JOB_COMPLETED) st = PX_JOB_CANCELLED;
  return px_jobs_end(s, j, st, t->exit_code, t->term_signal, now);
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
  if (t->is_step) return px_steps_report(s, t, idx); /* a step's end is not the job's */
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
  json_t *o = json_pack("{sI ss sb}", "heartbeat_s", (json_int_t)hb, "node", r->report.node, "report_batch", 1);
  px_req_answer(r, 200, json_dumps(o, JSON_COMPACT));
  json_decref(o);
}

static void agent_heartbeat(struct px_server *s, struct px_req *r, int64_t now) {
  if (!agent_may(r, r->node)) return;
  int idx = px_node_index(s, r->node);
  if (idx < 0) return px_req_error(r, 404, "NOT_FOUND", "node: %s is not configured", r->node);
  struct px_snode *n = &s->nodes[idx];
  if (!n->registered || n->down)
    return px_req_error(r, 409, "REGISTER", "node: %s must register first", r->node);
  n->last_heartbeat = now;
  answer_ok(r);
}

/* ---- reservations ---- */

static void resv_add(struct px_server *s, struct px_req *r, int64_t now) {
  if (!(r->who.roles & PX_ROLE_ADMIN))
    return deny(r, "admin", "only administrators create reservations");
  json_t *o = json_loads(r->text, 0, NULL);
  struct px_diag d;
  px_diag_clear(&d);
  int rc = o ? px_resv_apply(s, o, now, &d) : PX_ENOMEM;
  const char *name = json_string_value(json_object_get(o, "name"));
  if (!rc) {
    px_journal_add(s, "resv", 0, name, strdup(r->text), now);
    json_t *ans = json_pack("{ss}", "name", name);
    px_req_answer(r, 201, json_dumps(ans, JSON_COMPACT));
    json_decref(ans);
    s->need_cycle = true;
  } else {
    answer_diag(r, rc, &d);
  }
  json_decref(o);
}

void px_handle_request(struct px_server *s, struct px_req *r, int64_t now) {
  switch (r->kind) {
    case PX_REQ_SUBMIT: submit(s, r, now); break;
    case PX_REQ_CANCEL: cancel(s, r, now); break;
    case PX_REQ_HOLD:
    case PX_REQ_RELEASE: hold_release(s, r, now); break;
    case PX_REQ_UPDATE: update(s, r, now); break;
    case PX_REQ_JOB_SHOW: show(s, r); break;
    case PX_REQ_NODE_DRAIN:
    case PX_REQ_NODE_RESUME: drain_resume(s, r, now); break;
    case PX_REQ_PART_DOWN:
    case PX_REQ_PART_UP: part_state(s, r, now); break;
    case PX_REQ_AGENT_REGISTER: agent_register(s, r, now); break;
    case PX_REQ_AGENT_REPORT: agent_report(s, r, now); break;
    case PX_REQ_AGENT_HEARTBEAT: agent_heartbeat(s, r, now); break;
    case PX_REQ_RESV_ADD: resv_add(s, r, now); break;
    case PX_REQ_STEP_ADD:
    case PX_REQ_STEP_SHOW:
    case PX_REQ_STEP_LIST:
    case PX_REQ_STEP_CANCEL: px_steps_handle(s, r); break;
  }
}
