/*
 * steps.c - job steps, on the main thread: srun inside an allocation runs
 * its tasks on every node of the job (or the first N) through the agents.
 * The endpoints (http/api_steps.c) queue these requests here:
 *
 *   POST   /v1/jobs/{id}/steps        {"argv":[...],"out_dir":"/abs", "env":[...],
 *                                      "cwd":"/abs","nodes":N,"ntasks":N,
 *                                      "ntasks_per_node":N}   -> 201 {"step_id":S,...}
 *   GET    /v1/jobs/{id}/steps        every step the server remembers of the job
 *   GET    /v1/jobs/{id}/steps/{n}    its state on each node and the exit codes
 *   DELETE /v1/jobs/{id}/steps/{n}    SIGTERM to its tasks, SIGKILL after KillWait
 *   POST   /v1/jobs/{id}/steps/{n}/end {"exit_code":E,...}: how a "local" step
 *                                      ended (srun ran its tasks itself, on
 *                                      the batch node; no orders go out)
 *
 * Only the job's user (or an operator) runs steps in it, and only while it
 * runs; a step runs as the job's user whoever asked for it. A step is durable: its start, each node's end and a cancel are
 * STEP records through the one event road (core/event.h), and the table
 * (step_table.c) is their fold, so a restarted server (or a standby that
 * took over) knows the steps that run, srun's polling goes on, and the
 * job's accounting row lists them (sacct N.0, N.1). Everything here runs on
 * the main thread (the requests are queued to it like any change), so the
 * table needs no lock. Step ids count from 0 per job attempt, as Slurm's.
 */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "proto/agent_msg.h"
#include "server/loop/loop.h"
#include "server/loop/step_body.h"
#include "server/nodes/nodes.h"
#include "server/step_table.h"
#include "server/tables.h"
#include "util/log.h"

#define STEP_NODES_MAX 4096

/* The job's node a terminal or a local step names (an index into
 * j->alloc), 0 when none was named, -1 (answered) when it is not one of the
 * job's. */
static int step_node(struct px_server *s, struct px_req *r, const struct px_step_body *b, const struct px_sjob *j) {
  for (uint32_t i = 0; b->node && i < j->nalloc; i++)
    if (!strcmp(s->conf->nodes[j->alloc[i].node].name, b->node)) return (int)i;
  if (!b->node) return 0;
  px_req_error(r, 400, "INVALID", "step.node: %s is not one of job %llu's nodes", b->node, (unsigned long long)j->id);
  return -1;
}

/* Nodes and tasks per node: a block distribution, as the job's own (nodes.c);
 * fewer tasks than nodes use fewer nodes, as Slurm's srun. */
static int layout(struct px_sstep *t, const struct px_step_body *b, const struct px_sjob *j, uint32_t first) {
  uint32_t n = b->nodes ? b->nodes : j->nalloc;
  if (b->ntasks && b->ntasks < n) n = b->ntasks;
  uint32_t total = b->ntasks ? b->ntasks : (b->per_node ? b->per_node : 1) * n;
  if (px_sstep_alloc(t, n)) return PX_ENOMEM;
  t->ntasks = total;
  for (uint32_t i = 0; i < n; i++) {
    t->node[i] = j->alloc[i + first].node;
    t->tasks[i] = total / n + (i < total % n ? 1 : 0);
  }
  return 0;
}

static void send_orders(struct px_server *s, const struct px_sstep *t, const struct px_step_body *b) {
  char **names = calloc(t->nnodes + 1, sizeof *names);
  if (!names) return;
  for (uint32_t i = 0; i < t->nnodes; i++) names[i] = (char *)s->conf->nodes[t->node[i]].name;
  struct px_step_order o = {.job_id = t->job_id, .step_id = t->step_id, .restart_count = t->restart,
                            .argv = b->argv, .env = b->env, .cwd = b->cwd, .out_dir = b->out_dir,
                            .nodes = names, .nnodes = t->nnodes, .tasks_per_node = t->tasks,
                            .ntasks = t->ntasks, .gpus_per_task = b->gpus_per_task,
                            .distribution = b->distribution, .container_image = b->ctr.container_image,
                            .container_mounts = b->ctr.container_mounts,
                            .container_workdir = b->ctr.container_workdir, .container_env = b->ctr.container_env};
  if (b->pty) { /* the relay's one-time credential goes to the node, never into the journal */
    o.pty_session = b->pty_session;
    o.pty_secret = b->pty_secret;
    o.pty_rows = b->rows;
    o.pty_cols = b->cols;
    o.pty_raw = b->raw;
  }
  for (uint32_t i = 0; i < t->nnodes; i++) {
    char *json = px_step_order_encode(&o);
    if (!json || px_outbox_push(s->outbox, t->node[i], PX_ORDER_STEP, json))
      px_error("job %llu: cannot queue step %u for %s", (unsigned long long)t->job_id, t->step_id, names[i]);
  }
  free(names);
}

/* --gpus-per-task: every node must hold its tasks' share of the job's GPUs
 * there (Slurm refuses such a step too). 0, or PX_EINVAL with d filled. */
static int gpus_fit(const struct px_sstep *t, const struct px_step_body *b, const struct px_server *s,
                    const struct px_sjob *j, struct px_diag *d) {
  for (uint32_t i = 0; b->gpus_per_task && i < t->nnodes; i++) {
    uint32_t have = (uint32_t)__builtin_popcountll(j->alloc[i].gpus);
    if ((uint64_t)t->tasks[i] * b->gpus_per_task > have) {
      return px_diag_set(d, PX_EINVAL, -1, "step.gpus_per_task: %u tasks x %u GPUs on %s exceed the job's %u GPUs there",
                         t->tasks[i], b->gpus_per_task, s->conf->nodes[t->node[i]].name, have);
    }
  }
  return 0;
}

/* The job, running, and the caller's to run steps in; else answered. */
static struct px_sjob *own_running_job(struct px_server *s, struct px_req *r) {
  struct px_sjob *j = px_jobs_find(s, r->job_id);
  if (!j) {
    px_req_error(r, 404, "NOT_FOUND", "job %llu: no such job", (unsigned long long)r->job_id);
    return NULL;
  }
  /* operators too (phalanx exec is what an operator debugs with); the
   * tasks still run as the job's user */
  if (r->who.uid != j->spec.uid && r->who.uid != 0 && !(r->who.roles & PX_ROLE_OPERATOR)) {
    px_warn("denied (own-job): user %s uid %u: steps of job %llu", r->who.user, r->who.uid,
            (unsigned long long)j->id);
    px_req_error(r, 403, "FORBIDDEN", "job %llu belongs to %s: only its user and operators run steps in it (rule own-job)",
                 (unsigned long long)j->id, j->spec.user ? j->spec.user : "another user");
    return NULL;
  }
  return j;
}

/* A STEP record through the road; 0, or why it was not recorded. */
static int record(struct px_server *s, uint64_t job, char *rec, int64_t now) {
  if (!rec) return PX_ENOMEM;
  struct px_event ev = {.kind = PX_EV_STEP, .job_id = job, .step = rec};
  struct px_event_result res;
  int rc = px_events_accept(s, &ev, now, &res);
  free(rec);
  return rc;
}

/* The step journaled (the table's entry is its fold), then its orders. */
static void step_add(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_sjob *j = own_running_job(s, r);
  if (!j) return;
  if (j->state != PX_JOB_RUNNING || j->preempting || j->cancelled_by) /* or it is ending */
    return px_req_error(r, 409, "STATE", "job %llu is not running (%s)", (unsigned long long)j->id,
                        j->cancelled_by ? "cancelled" : px_job_state_name(j->state));
  struct px_step_body b = {0};
  struct px_diag d;
  px_diag_clear(&d);
  int rc = px_step_body_decode(r->text, &b, j->nalloc, &d);
  if (rc) {
    px_step_body_fini(&b);
    return px_req_answer(r, px_error_http_status(rc), px_error_diag(px_error_code(rc), &d));
  }
  int first = step_node(s, r, &b, j);
  if (first < 0) return px_step_body_fini(&b);
  struct px_sstep t = {.job_id = j->id, .restart = j->restarts, .pty = b.pty, .local = b.local,
                       .step_id = px_steps_next_id(s->steps, j->id, j->restarts)};
  if (layout(&t, &b, j, (uint32_t)first) || !(t.name = strdup(b.argv[0])) ||
      !(t.out_dir = strdup(b.out_dir ? b.out_dir : "")))
    rc = PX_ENOMEM;
  else if ((rc = gpus_fit(&t, &b, s, j, &d))) rc = PX_EINVAL;
  else rc = record(s, j->id, px_step_rec_start(s, &t, now), now);
  const struct px_sstep *kept = rc ? NULL : px_steps_find(s->steps, j->id, j->restarts, t.step_id);
  if (kept && !b.local) send_orders(s, kept, &b); /* a local step's tasks are srun's */
  px_step_body_fini(&b);
  if (rc == PX_EINVAL) {
    px_sstep_drop(&t);
    return px_req_answer(r, 400, px_error_diag(px_error_code(PX_EINVAL), &d));
  }
  if (!kept) {
    px_sstep_drop(&t);
    return px_req_error(r, 503, "UNAVAILABLE", "job %llu: the step could not be recorded", (unsigned long long)j->id);
  }
  px_info("job %llu: step %u: %u tasks on %u nodes", (unsigned long long)j->id, t.step_id, t.ntasks, t.nnodes);
  json_t *o = json_pack("{sI sI sI sI}", "job_id", (json_int_t)j->id, "step_id", (json_int_t)t.step_id,
                        "ntasks", (json_int_t)t.ntasks, "nodes", (json_int_t)t.nnodes);
  px_sstep_drop(&t);
  px_req_answer(r, 201, o ? json_dumps(o, JSON_COMPACT) : NULL);
  json_decref(o);
}

/* The step and each node's end (step_table.c px_sstep_state). */
static json_t *step_json(const struct px_server *s, const struct px_sstep *t, const struct px_sjob *j) {
  json_t *nodes = json_array();
  for (uint32_t i = 0; nodes && i < t->nnodes; i++)
    json_array_append_new(nodes, json_pack("{ss sI ss si si}", "node", s->conf->nodes[t->node[i]].name,
                                           "tasks", (json_int_t)t->tasks[i], "state", t->state[i],
                                           "exit_code", (int)t->exit_code[i], "term_signal",
                                           (int)t->term_signal[i]));
  bool job_over = !j || j->state != PX_JOB_RUNNING || j->restarts != t->restart;
  int32_t worst, sig;
  const char *state = px_sstep_state(t, job_over, &worst, &sig);
  if (!strcmp(state, "CANCELLED") && px_sstep_running(t) && !worst) worst = 1; /* ended with the job */
  if (!strcmp(state, "FAILED") && !worst && sig) worst = 128 + sig;
  return json_pack("{sI sI ss si sI so s[s] ss sb}", "job_id", (json_int_t)t->job_id, "step_id",
                   (json_int_t)t->step_id, "state", state, "exit_code", (int)worst, "ntasks",
                   (json_int_t)t->ntasks, "nodes", nodes, "argv", t->name ? t->name : "", "out_dir",
                   t->out_dir ? t->out_dir : "", "pty", t->pty);
}

static void step_show(struct px_server *s, struct px_req *r, bool all) {
  struct px_sjob *j = own_running_job(s, r);
  if (!j) return;
  json_t *list = all ? json_array() : NULL;
  for (size_t i = 0; s->steps && i < s->steps->len; i++) {
    const struct px_sstep *t = &s->steps->v[i];
    if (t->job_id != j->id || t->restart != j->restarts || (!all && t->step_id != r->step_id)) continue;
    json_t *o = step_json(s, t, j);
    if (!all) {
      px_req_answer(r, 200, o ? json_dumps(o, JSON_COMPACT) : NULL);
      json_decref(o);
      return;
    }
    json_array_append_new(list, o);
  }
  if (!all)
    return px_req_error(r, 404, "NOT_FOUND", "job %llu has no step %u (or it is forgotten)",
                        (unsigned long long)j->id, r->step_id);
  json_t *o = json_pack("{so}", "steps", list);
  px_req_answer(r, 200, o ? json_dumps(o, JSON_COMPACT) : NULL);
  json_decref(o);
}

/* The request's step of the caller's job (its current attempt); NULL when
 * answered. */
static struct px_sstep *own_step(struct px_server *s, struct px_req *r, struct px_sjob **job) {
  struct px_sjob *j = *job = own_running_job(s, r);
  struct px_sstep *t = j ? px_steps_find(s->steps, j->id, j->restarts, r->step_id) : NULL;
  if (j && !t)
    px_req_error(r, 404, "NOT_FOUND", "job %llu has no step %u (or it is forgotten)", (unsigned long long)j->id,
                 r->step_id);
  return t;
}

static void step_cancel(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_sjob *j;
  struct px_sstep *t = own_step(s, r, &j);
  if (!t) return;
  if (t->local) /* no agent knows its tasks: srun on the node is their parent */
    return px_req_error(r, 409, "STATE", "step %llu.%u runs under srun on %s: signal that srun, or cancel the job",
                        (unsigned long long)j->id, t->step_id, s->conf->nodes[t->node[0]].name);
  uint32_t id = t->step_id;
  if (!t->cancelled && record(s, j->id, px_step_rec_cancel(t), now))
    return px_req_error(r, 503, "UNAVAILABLE", "job %llu: the cancel could not be recorded", (unsigned long long)j->id);
  if (!(t = px_steps_find(s->steps, j->id, j->restarts, id))) return px_req_answer(r, 200, strdup("{}"));
  int64_t grace = s->conf->phalanx.kill_wait_s > 0 ? s->conf->phalanx.kill_wait_s : 30;
  struct px_signal_order o = {.job_id = j->id, .signal = SIGTERM, .grace_s = (int32_t)grace,
                              .reason = "CANCELLED", .is_step = true, .step_id = t->step_id};
  for (uint32_t i = 0; i < t->nnodes; i++) {
    if (strcmp(t->state[i], "RUNNING")) continue;
    char *json = px_signal_order_encode(&o);
    if (json) px_outbox_push(s->outbox, t->node[i], PX_ORDER_SIGNAL, json);
  }
  px_req_answer(r, 200, strdup("{}"));
}

/* How a step srun ran itself ended: its one node's end, journaled as an
 * agent's report of a node's is (px_steps_report). */
static void step_end(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_sjob *j;
  struct px_sstep *t = own_step(s, r, &j);
  if (!t) return;
  if (!t->local)
    return px_req_error(r, 409, "STATE", "step %llu.%u is run by the agents: they report its end",
                        (unsigned long long)j->id, t->step_id);
  struct px_step_end e;
  struct px_diag d;
  px_diag_clear(&d);
  int rc = px_step_end_decode(r->text, &e, &d);
  if (rc) return px_req_answer(r, px_error_http_status(rc), px_error_diag(px_error_code(rc), &d));
  struct px_task_report rep = {.job_id = j->id, .exit_code = e.exit_code, .term_signal = e.term_signal,
                               .peak_mem_mib = e.peak_mem_mib, .cpu_time_ms = e.cpu_time_ms,
                               .restart_count = t->restart, .is_step = true, .step_id = t->step_id};
  snprintf(rep.state, sizeof rep.state, "%s", e.exit_code || e.term_signal ? "FAILED" : "COMPLETED");
  if (px_steps_report(s, &rep, (int)t->node[0], now) != 200)
    return px_req_error(r, 503, "UNAVAILABLE", "job %llu: the step's end could not be recorded", (unsigned long long)j->id);
  px_req_answer(r, 200, strdup("{}"));
}

void px_steps_handle(struct px_server *s, struct px_req *r, int64_t now) {
  switch (r->kind) {
    case PX_REQ_STEP_ADD: step_add(s, r, now); break;
    case PX_REQ_STEP_SHOW: step_show(s, r, false); break;
    case PX_REQ_STEP_LIST: step_show(s, r, true); break;
    case PX_REQ_STEP_CANCEL: step_cancel(s, r, now); break;
    case PX_REQ_STEP_END: step_end(s, r, now); break;
    default: break;
  }
}

/* A node's end of a step, journaled once (an agent's repeat changes nothing);
 * 503 asks the agent to send it again when it could not be recorded. */
int px_steps_report(struct px_server *s, const struct px_task_report *t, int node, int64_t now) {
  struct px_sstep *st = px_steps_find(s->steps, t->job_id, t->restart_count, t->step_id);
  if (!st) return 200; /* forgotten (more steps than the table holds): nothing waits for it */
  bool open = false;
  for (uint32_t i = 0; i < st->nnodes; i++) open |= st->node[i] == (uint32_t)node && !strcmp(st->state[i], "RUNNING");
  if (!open) return 200;
  return record(s, t->job_id, px_step_rec_end(t, s->conf->nodes[node].name, now), now) ? 503 : 200;
}
