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
 *
 * Only the job's user (or an operator) runs steps in it, and only while
 * it runs; a step runs as the job's user whoever asked for it. A step is not durable state: nothing is journaled, a restarted
 * server has forgotten its steps (their tasks run on and die with the job),
 * and the table keeps the last STEPS_MAX steps of all jobs. Everything here
 * runs on the main thread (the requests are queued to it like any change), so
 * the table needs no lock. Step ids count from 0 per job attempt, as Slurm's.
 */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/agent_msg.h"
#include "proto/json_rd.h"
#include "server/loop/loop.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"
#include "util/log.h"

#define STEPS_MAX 4096
#define STEP_NODES_MAX 4096

struct sstep {
  uint64_t job_id;
  uint32_t step_id, restart, nnodes, ntasks;
  uint32_t *node;                /* conf node index per step node */
  uint32_t *tasks;               /* tasks per step node */
  char (*state)[24];             /* per node: "RUNNING" until its report */
  int32_t *exit_code, *term_signal;
  bool cancelled;
  char **argv;                   /* for listings (argv[0] is the step's name) */
  char *out_dir;                 /* where its tasks write (phalanx attach follows it) */
  bool pty;                      /* a terminal step: its output goes to the terminal */
};

struct px_steps {
  struct sstep *v;               /* oldest first */
  size_t len, cap;
};

static void sstep_fini(struct sstep *t) {
  free(t->node);
  free(t->tasks);
  free(t->state);
  free(t->exit_code);
  free(t->term_signal);
  px_strv_free(t->argv);
  free(t->out_dir);
  memset(t, 0, sizeof *t);
}

void px_steps_free(struct px_steps *st) {
  if (!st) return;
  for (size_t i = 0; i < st->len; i++) sstep_fini(&st->v[i]);
  free(st->v);
  free(st);
}

static struct sstep *find(struct px_steps *st, uint64_t job, uint32_t restart, uint32_t id) {
  for (size_t i = st ? st->len : 0; i-- > 0;)
    if (st->v[i].job_id == job && st->v[i].restart == restart && st->v[i].step_id == id) return &st->v[i];
  return NULL;
}

/* A free slot at the end, the oldest step forgotten when the table is full. */
static struct sstep *slot(struct px_server *s) {
  if (!s->steps && !(s->steps = calloc(1, sizeof *s->steps))) return NULL;
  struct px_steps *st = s->steps;
  if (st->len == STEPS_MAX) {
    sstep_fini(&st->v[0]);
    memmove(st->v, st->v + 1, (st->len - 1) * sizeof *st->v);
    st->len--;
  }
  if (st->len == st->cap) {
    size_t cap = st->cap ? st->cap * 2 : 16;
    struct sstep *v = realloc(st->v, cap * sizeof *v);
    if (!v) return NULL;
    st->v = v;
    st->cap = cap;
  }
  memset(&st->v[st->len], 0, sizeof st->v[0]);
  return &st->v[st->len];
}

/* ---- the request body ---- */

struct step_body {
  char **argv, **env, *cwd, *out_dir, *distribution;
  uint32_t nargv, nenv, nodes, ntasks, per_node, gpus_per_task;
  /* a terminal step: the relay session the HTTP layer opened (api_steps.c) */
  bool pty, raw;
  char *pty_session, *pty_secret, *node; /* node: the terminal's (srun --pty -w), NULL: the first */
  uint32_t rows, cols;
};

static void body_fini(struct step_body *b) {
  px_strv_free(b->argv);
  px_strv_free(b->env);
  free(b->cwd);
  free(b->out_dir);
  free(b->distribution);
  free(b->pty_session);
  free(b->pty_secret);
  free(b->node);
}

/* "pty":true: one task on the job's first node, in a relay session. */
static void pty_decode(struct px_rd *rd, struct step_body *b) {
  px_rd_bool(rd, "pty", false, &b->pty);
  px_rd_bool(rd, "raw", false, &b->raw);
  px_rd_u32(rd, "rows", false, &b->rows);
  px_rd_u32(rd, "cols", false, &b->cols);
  px_rd_str(rd, "pty_session", false, &b->pty_session);
  px_rd_str(rd, "pty_secret", false, &b->pty_secret);
  px_rd_str(rd, "node", false, &b->node);
  if (!rd->err && b->node && !b->pty) px_rd_fail(rd, "node", "only a terminal step (\"pty\":true) names its node");
  if (rd->err || !b->pty) return;
  if (b->rows > 65535 || b->cols > 65535) px_rd_fail(rd, b->rows > 65535 ? "rows" : "cols", "more than 65535");
  else if (b->nodes > 1) px_rd_fail(rd, "nodes", "a terminal runs on one node, not %u", b->nodes);
  else if (b->ntasks > 1 || b->per_node > 1) px_rd_fail(rd, "ntasks", "a terminal runs one task");
  else if (!b->pty_session || !b->pty_secret) px_rd_fail(rd, "pty", "no relay session (the server opens it)");
  b->nodes = b->ntasks = 1;
  b->per_node = 0;
}

static int body_decode(const char *text, struct step_body *b, uint32_t job_nodes, struct px_diag *d) {
  json_t *j;
  int rc = px_rd_parse(text, &j, d);
  if (rc) return rc;
  struct px_rd rd;
  px_rd_init(&rd, j, "step", d);
  px_rd_strv(&rd, "argv", true, &b->argv, &b->nargv);
  px_rd_strv(&rd, "env", false, &b->env, &b->nenv);
  px_rd_str(&rd, "cwd", false, &b->cwd);
  px_rd_str(&rd, "out_dir", true, &b->out_dir);
  px_rd_u32(&rd, "nodes", false, &b->nodes);
  px_rd_u32(&rd, "ntasks", false, &b->ntasks);
  px_rd_u32(&rd, "ntasks_per_node", false, &b->per_node);
  px_rd_u32(&rd, "gpus_per_task", false, &b->gpus_per_task);
  px_rd_str(&rd, "distribution", false, &b->distribution);
  pty_decode(&rd, b);
  if (!rd.err && b->distribution) { /* srun -m: Slurm's grammar, the job spec's check */
    struct px_jobspec probe;
    px_jobspec_init(&probe);
    probe.distribution = b->distribution;
    probe.nodelist = "-"; /* arbitrary: the step's nodes are the job's */
    struct px_diag why;
    if (px_jobspec_check_launch(&probe, &why)) px_rd_fail(&rd, "distribution", "%s", why.msg);
  }
  if (!rd.err && b->gpus_per_task > 64) px_rd_fail(&rd, "gpus_per_task", "%u is more than 64", b->gpus_per_task);
  if (!rd.err && !b->nargv) px_rd_fail(&rd, "argv", "must not be empty");
  if (!rd.err && b->out_dir[0] != '/') px_rd_fail(&rd, "out_dir", "must be an absolute path");
  if (!rd.err && b->cwd && b->cwd[0] != '/') px_rd_fail(&rd, "cwd", "must be an absolute path");
  for (uint32_t i = 0; !rd.err && i < b->nenv; i++)
    if (!strchr(b->env[i], '=') || b->env[i][0] == '=') px_rd_fail(&rd, "env", "entry %u is not K=V", i);
  if (!rd.err && b->nodes > job_nodes)
    px_rd_fail(&rd, "nodes", "%u is more than the job's %u nodes", b->nodes, job_nodes);
  if (!rd.err && b->ntasks && b->per_node) px_rd_fail(&rd, "ntasks_per_node", "give ntasks or ntasks_per_node, not both");
  if (!rd.err && (b->ntasks > 65536 || b->per_node > 1024)) px_rd_fail(&rd, b->ntasks ? "ntasks" : "ntasks_per_node", "too many tasks");
  rc = px_rd_done(&rd);
  json_decref(j);
  return rc;
}

/* Nodes and tasks per node: a block distribution, as the job's own (nodes.c);
 * fewer tasks than nodes use fewer nodes, as Slurm's srun. */
/* The job's node the terminal asked for (an index into j->alloc), 0 when
 * none was named, -1 (answered) when it is not one of the job's. */
static int terminal_node(struct px_server *s, struct px_req *r, const struct step_body *b, const struct px_sjob *j) {
  for (uint32_t i = 0; b->node && i < j->nalloc; i++)
    if (!strcmp(s->conf->nodes[j->alloc[i].node].name, b->node)) return (int)i;
  if (!b->node) return 0;
  px_req_error(r, 400, "INVALID", "step.node: %s is not one of job %llu's nodes", b->node, (unsigned long long)j->id);
  return -1;
}

static int layout(struct sstep *t, const struct step_body *b, const struct px_sjob *j, uint32_t first) {
  uint32_t n = b->nodes ? b->nodes : j->nalloc;
  if (b->ntasks && b->ntasks < n) n = b->ntasks;
  uint32_t total = b->ntasks ? b->ntasks : (b->per_node ? b->per_node : 1) * n;
  t->nnodes = n;
  t->ntasks = total;
  t->node = calloc(n, sizeof *t->node);
  t->tasks = calloc(n, sizeof *t->tasks);
  t->state = calloc(n, sizeof *t->state);
  t->exit_code = calloc(n, sizeof *t->exit_code);
  t->term_signal = calloc(n, sizeof *t->term_signal);
  if (!t->node || !t->tasks || !t->state || !t->exit_code || !t->term_signal) return PX_ENOMEM;
  for (uint32_t i = 0; i < n; i++) {
    t->node[i] = j->alloc[i + first].node;
    t->tasks[i] = total / n + (i < total % n ? 1 : 0);
    snprintf(t->state[i], sizeof t->state[i], "RUNNING");
  }
  return 0;
}

static void send_orders(struct px_server *s, const struct sstep *t, const struct step_body *b) {
  char **names = calloc(t->nnodes + 1, sizeof *names);
  if (!names) return;
  for (uint32_t i = 0; i < t->nnodes; i++) names[i] = (char *)s->conf->nodes[t->node[i]].name;
  struct px_step_order o = {.job_id = t->job_id, .step_id = t->step_id, .restart_count = t->restart,
                            .argv = b->argv, .env = b->env, .cwd = b->cwd, .out_dir = b->out_dir,
                            .nodes = names, .nnodes = t->nnodes, .tasks_per_node = t->tasks,
                            .ntasks = t->ntasks, .gpus_per_task = b->gpus_per_task,
                            .distribution = b->distribution};
  if (b->pty) {
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
static int gpus_fit(const struct sstep *t, const struct step_body *b, const struct px_server *s,
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

static void step_add(struct px_server *s, struct px_req *r) {
  struct px_sjob *j = own_running_job(s, r);
  if (!j) return;
  if (j->state != PX_JOB_RUNNING || j->preempting || j->cancelled_by) /* or it is ending */
    return px_req_error(r, 409, "STATE", "job %llu is not running (%s)", (unsigned long long)j->id,
                        j->cancelled_by ? "cancelled" : px_job_state_name(j->state));
  struct step_body b = {0};
  struct px_diag d;
  px_diag_clear(&d);
  int rc = body_decode(r->text, &b, j->nalloc, &d);
  if (rc) {
    body_fini(&b);
    return px_req_answer(r, px_error_http_status(rc), px_error_diag(px_error_code(rc), &d));
  }
  int first = terminal_node(s, r, &b, j);
  if (first < 0) return body_fini(&b);
  uint32_t id = 0;
  for (size_t i = 0; s->steps && i < s->steps->len; i++) {
    const struct sstep *o = &s->steps->v[i];
    if (o->job_id == j->id && o->restart == j->restarts && o->step_id >= id) id = o->step_id + 1;
  }
  struct sstep *t = slot(s);
  if (t) *t = (struct sstep){.job_id = j->id, .step_id = id, .restart = j->restarts, .argv = b.argv, .pty = b.pty};
  if (!t || layout(t, &b, j, (uint32_t)first)) {
    if (t) t->argv = NULL, sstep_fini(t);
    body_fini(&b);
    return px_req_error(r, 503, "NOMEM", "out of memory");
  }
  if (gpus_fit(t, &b, s, j, &d)) {
    t->argv = NULL, sstep_fini(t);
    body_fini(&b);
    return px_req_answer(r, 400, px_error_diag(px_error_code(PX_EINVAL), &d));
  }
  s->steps->len++;
  send_orders(s, t, &b);
  t->out_dir = b.out_dir;
  b.argv = NULL; /* the step keeps them */
  b.out_dir = NULL;
  body_fini(&b);
  px_info("job %llu: step %u: %u tasks on %u nodes", (unsigned long long)j->id, id, t->ntasks, t->nnodes);
  json_t *o = json_pack("{sI sI sI sI}", "job_id", (json_int_t)j->id, "step_id", (json_int_t)id, "ntasks",
                        (json_int_t)t->ntasks, "nodes", (json_int_t)t->nnodes);
  px_req_answer(r, 201, o ? json_dumps(o, JSON_COMPACT) : NULL);
  json_decref(o);
}

/* The step's state: RUNNING while a node has not reported, then the worst
 * end; a step of a job that ended without its report ended with the job. */
static json_t *step_json(const struct px_server *s, const struct sstep *t, const struct px_sjob *j) {
  json_t *nodes = json_array();
  int32_t worst = 0;
  bool running = false, failed = false;
  for (uint32_t i = 0; nodes && i < t->nnodes; i++) {
    running |= !strcmp(t->state[i], "RUNNING");
    failed |= !strcmp(t->state[i], "FAILED") || !strcmp(t->state[i], "CANCELLED");
    if (t->exit_code[i] > worst) worst = t->exit_code[i];
    json_array_append_new(nodes, json_pack("{ss sI ss si si}", "node", s->conf->nodes[t->node[i]].name,
                                           "tasks", (json_int_t)t->tasks[i], "state", t->state[i],
                                           "exit_code", (int)t->exit_code[i], "term_signal",
                                           (int)t->term_signal[i]));
  }
  bool job_over = !j || j->state != PX_JOB_RUNNING || j->restarts != t->restart;
  const char *state = running ? (job_over ? "CANCELLED" : "RUNNING")
                      : failed || worst ? (t->cancelled ? "CANCELLED" : "FAILED")
                                        : "COMPLETED";
  if (running && job_over && !worst) worst = 1;
  return json_pack("{sI sI ss si sI so s[s] ss sb}", "job_id", (json_int_t)t->job_id, "step_id",
                   (json_int_t)t->step_id, "state", state, "exit_code", (int)worst, "ntasks",
                   (json_int_t)t->ntasks, "nodes", nodes, "argv", t->argv[0], "out_dir",
                   t->out_dir ? t->out_dir : "", "pty", t->pty);
}

static void step_show(struct px_server *s, struct px_req *r, bool all) {
  struct px_sjob *j = own_running_job(s, r);
  if (!j) return;
  json_t *list = all ? json_array() : NULL;
  for (size_t i = 0; s->steps && i < s->steps->len; i++) {
    const struct sstep *t = &s->steps->v[i];
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

static void step_cancel(struct px_server *s, struct px_req *r) {
  struct px_sjob *j = own_running_job(s, r);
  if (!j) return;
  struct sstep *t = find(s->steps, j->id, j->restarts, r->step_id);
  if (!t)
    return px_req_error(r, 404, "NOT_FOUND", "job %llu has no step %u (or it is forgotten)",
                        (unsigned long long)j->id, r->step_id);
  int64_t grace = s->conf->phalanx.kill_wait_s > 0 ? s->conf->phalanx.kill_wait_s : 30;
  struct px_signal_order o = {.job_id = j->id, .signal = SIGTERM, .grace_s = (int32_t)grace,
                              .reason = "CANCELLED", .is_step = true, .step_id = t->step_id};
  t->cancelled = true;
  for (uint32_t i = 0; i < t->nnodes; i++) {
    if (strcmp(t->state[i], "RUNNING")) continue;
    char *json = px_signal_order_encode(&o);
    if (json) px_outbox_push(s->outbox, t->node[i], PX_ORDER_SIGNAL, json);
  }
  px_req_answer(r, 200, strdup("{}"));
}

void px_steps_handle(struct px_server *s, struct px_req *r) {
  switch (r->kind) {
    case PX_REQ_STEP_ADD: step_add(s, r); break;
    case PX_REQ_STEP_SHOW: step_show(s, r, false); break;
    case PX_REQ_STEP_LIST: step_show(s, r, true); break;
    case PX_REQ_STEP_CANCEL: step_cancel(s, r); break;
    default: break;
  }
}

int px_steps_report(struct px_server *s, const struct px_task_report *t, int node) {
  struct sstep *st = find(s->steps, t->job_id, t->restart_count, t->step_id);
  if (!st) return 200; /* forgotten (a server restart): nothing waits for it */
  for (uint32_t i = 0; i < st->nnodes; i++) {
    if (st->node[i] != (uint32_t)node) continue;
    snprintf(st->state[i], sizeof st->state[i], "%s", t->state);
    st->exit_code[i] = t->exit_code;
    st->term_signal[i] = t->term_signal;
  }
  return 200;
}
