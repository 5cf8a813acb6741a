/*
 * step_table.c - the job steps the server knows (srun's steps, started by
 * loop/steps.c on the agents), folded from STEP records so that a restarted
 * server, or a standby taking over, knows the steps that run and how the
 * others ended, and the job's accounting row lists them (sacct N.0, N.1).
 *
 * A STEP record's "step" object is one of
 *
 *   {"op":"start","restart":R,"step_id":S,"name":"python","time":T,
 *    "nodes":["n01","n02"],"tasks":[4,4],"out_dir":"/abs","pty":false,
 *    "local":false}
 *   {"op":"end","restart":R,"step_id":S,"node":"n01","state":"COMPLETED",
 *    "exit_code":0,"term_signal":0,"peak_mem_mib":M,"cpu_time_ms":C,"time":T}
 *   {"op":"cancel","restart":R,"step_id":S}
 *
 * (job_id is the record's own). The table keeps the last STEPS_MAX steps of
 * all jobs; a job's accounting row is written when it ends, so only a job
 * with more steps than that loses its oldest from accounting. Main thread.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "server/nodes/nodes.h"
#include "server/step_table.h"
#include "server/tables.h"
#include "util/hostlist.h"
#include "util/log.h"

#define STEPS_MAX 4096
#define STEP_NODES_MAX 4096

static void sstep_fini(struct px_sstep *t) {
  free(t->node);
  free(t->tasks);
  free(t->state);
  free(t->exit_code);
  free(t->term_signal);
  free(t->name);
  free(t->out_dir);
  memset(t, 0, sizeof *t);
}

void px_steps_free(struct px_steps *st) {
  if (!st) return;
  for (size_t i = 0; i < st->len; i++) sstep_fini(&st->v[i]);
  free(st->v);
  free(st);
}

struct px_sstep *px_steps_find(struct px_steps *st, uint64_t job, uint32_t restart, uint32_t id) {
  for (size_t i = st ? st->len : 0; i-- > 0;)
    if (st->v[i].job_id == job && st->v[i].restart == restart && st->v[i].step_id == id) return &st->v[i];
  return NULL;
}

uint32_t px_steps_next_id(const struct px_steps *st, uint64_t job, uint32_t restart) {
  uint32_t id = 0;
  for (size_t i = 0; st && i < st->len; i++) {
    const struct px_sstep *o = &st->v[i];
    if (o->job_id == job && o->restart == restart && o->step_id >= id) id = o->step_id + 1;
  }
  return id;
}

/* A zeroed slot at the end (not counted until the caller's ++len), the
 * oldest step forgotten when the table is full. */
static struct px_sstep *slot(struct px_server *s) {
  if (!s->steps && !(s->steps = calloc(1, sizeof *s->steps))) return NULL;
  struct px_steps *st = s->steps;
  if (st->len == STEPS_MAX) {
    sstep_fini(&st->v[0]);
    memmove(st->v, st->v + 1, (st->len - 1) * sizeof *st->v);
    st->len--;
  }
  if (st->len == st->cap) {
    size_t cap = st->cap ? st->cap * 2 : 16;
    struct px_sstep *v = realloc(st->v, cap * sizeof *v);
    if (!v) return NULL;
    st->v = v;
    st->cap = cap;
  }
  memset(&st->v[st->len], 0, sizeof st->v[0]);
  return &st->v[st->len];
}

int px_sstep_alloc(struct px_sstep *t, uint32_t nnodes) {
  t->nnodes = nnodes;
  t->node = calloc(nnodes, sizeof *t->node);
  t->tasks = calloc(nnodes, sizeof *t->tasks);
  t->state = calloc(nnodes, sizeof *t->state);
  t->exit_code = calloc(nnodes, sizeof *t->exit_code);
  t->term_signal = calloc(nnodes, sizeof *t->term_signal);
  if (!t->node || !t->tasks || !t->state || !t->exit_code || !t->term_signal) return PX_ENOMEM;
  for (uint32_t i = 0; i < nnodes; i++) snprintf(t->state[i], sizeof t->state[i], "RUNNING");
  return 0;
}

void px_sstep_drop(struct px_sstep *t) { sstep_fini(t); }

/* ---- records ---- */

char *px_step_rec_start(const struct px_server *s, const struct px_sstep *t, int64_t now) {
  json_t *nodes = json_array(), *tasks = json_array();
  for (uint32_t i = 0; i < t->nnodes; i++) {
    json_array_append_new(nodes, json_string(s->conf->nodes[t->node[i]].name));
    json_array_append_new(tasks, json_integer(t->tasks[i]));
  }
  json_t *o = json_pack("{ss sI sI ss sI so so ss sb sb}", "op", "start", "restart", (json_int_t)t->restart,
                        "step_id", (json_int_t)t->step_id, "name", t->name ? t->name : "",
                        "time", (json_int_t)now, "nodes", nodes, "tasks", tasks, "out_dir",
                        t->out_dir ? t->out_dir : "", "pty", t->pty, "local", t->local);
  char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  return text;
}

char *px_step_rec_end(const struct px_task_report *r, const char *node, int64_t now) {
  json_t *o = json_pack("{ss sI sI ss ss si si sI sI sI}", "op", "end", "restart",
                        (json_int_t)r->restart_count, "step_id", (json_int_t)r->step_id, "node", node,
                        "state", r->state, "exit_code", (int)r->exit_code, "term_signal",
                        (int)r->term_signal, "peak_mem_mib", (json_int_t)r->peak_mem_mib,
                        "cpu_time_ms", (json_int_t)r->cpu_time_ms, "time",
                        (json_int_t)(r->end_time > 0 ? r->end_time : now));
  char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  return text;
}

char *px_step_rec_cancel(const struct px_sstep *t) {
  json_t *o = json_pack("{ss sI sI}", "op", "cancel", "restart", (json_int_t)t->restart, "step_id",
                        (json_int_t)t->step_id);
  char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  return text;
}

/* ---- the fold ---- */

static const char *str_or(const json_t *v, const char *dflt) {
  return json_is_string(v) ? json_string_value(v) : dflt;
}

static int fold_start(struct px_server *s, uint64_t job, const json_t *o) {
  uint32_t restart = (uint32_t)json_integer_value(json_object_get(o, "restart"));
  uint32_t id = (uint32_t)json_integer_value(json_object_get(o, "step_id"));
  const json_t *nodes = json_object_get(o, "nodes"), *tasks = json_object_get(o, "tasks");
  size_t n = json_array_size(nodes);
  if (!n || n > STEP_NODES_MAX || json_array_size(tasks) != n) return PX_EINVAL;
  if (px_steps_find(s->steps, job, restart, id)) return 0; /* a repeat */
  struct px_sstep *t = slot(s);
  if (!t) return PX_ENOMEM;
  *t = (struct px_sstep){.job_id = job, .step_id = id, .restart = restart,
                         .start_time = json_integer_value(json_object_get(o, "time")),
                         .name = strdup(str_or(json_object_get(o, "name"), "")),
                         .out_dir = strdup(str_or(json_object_get(o, "out_dir"), "")),
                         .pty = json_is_true(json_object_get(o, "pty")),
                         .local = json_is_true(json_object_get(o, "local"))};
  int rc = t->name && t->out_dir ? px_sstep_alloc(t, (uint32_t)n) : PX_ENOMEM;
  for (uint32_t i = 0; !rc && i < n; i++) {
    int idx = px_node_index(s, json_string_value(json_array_get(nodes, i)));
    if (idx < 0) rc = PX_EINVAL; /* a node no longer configured */
    t->node[i] = (uint32_t)(idx < 0 ? 0 : idx);
    t->tasks[i] = (uint32_t)json_integer_value(json_array_get(tasks, i));
    t->ntasks += t->tasks[i];
  }
  if (rc) return sstep_fini(t), rc;
  s->steps->len++;
  return 0;
}

static void fold_end(struct px_sstep *t, const struct px_server *s, const json_t *o) {
  int node = px_node_index(s, json_string_value(json_object_get(o, "node")));
  for (uint32_t i = 0; i < t->nnodes; i++) {
    if ((int)t->node[i] != node || strcmp(t->state[i], "RUNNING")) continue;
    snprintf(t->state[i], sizeof t->state[i], "%s", str_or(json_object_get(o, "state"), "FAILED"));
    t->exit_code[i] = (int32_t)json_integer_value(json_object_get(o, "exit_code"));
    t->term_signal[i] = (int32_t)json_integer_value(json_object_get(o, "term_signal"));
    uint64_t mem = (uint64_t)json_integer_value(json_object_get(o, "peak_mem_mib"));
    if (mem > t->peak_mem_mib) t->peak_mem_mib = mem;
    t->cpu_time_ms += (uint64_t)json_integer_value(json_object_get(o, "cpu_time_ms"));
    int64_t end = json_integer_value(json_object_get(o, "time"));
    if (end > t->end_time) t->end_time = end;
  }
}

int px_steps_fold(struct px_server *s, const struct px_event *ev) {
  if (ev->kind != PX_EV_STEP) return 0;
  json_t *o = json_loads(ev->step, 0, NULL);
  const char *op = json_string_value(json_object_get(o, "op"));
  int rc = 0;
  if (!op) {
    rc = PX_EINVAL;
  } else if (!strcmp(op, "start")) {
    rc = fold_start(s, ev->job_id, o);
  } else {
    struct px_sstep *t = px_steps_find(s->steps, ev->job_id,
                                       (uint32_t)json_integer_value(json_object_get(o, "restart")),
                                       (uint32_t)json_integer_value(json_object_get(o, "step_id")));
    if (t && !strcmp(op, "end")) fold_end(t, s, o);
    else if (t && !strcmp(op, "cancel")) t->cancelled = true;
  }
  if (rc) px_warn("job %llu: step record not folded (%s)", (unsigned long long)ev->job_id, px_strerror(rc));
  json_decref(o);
  return 0; /* the record is history: a step the table cannot hold is not the job's failure */
}

/* ---- views ---- */

bool px_sstep_running(const struct px_sstep *t) {
  for (uint32_t i = 0; i < t->nnodes; i++)
    if (!strcmp(t->state[i], "RUNNING")) return true;
  return false;
}

/* RUNNING while a node has not reported (CANCELLED once the job is over:
 * its tasks ended with it), then the worst end of its nodes. */
const char *px_sstep_state(const struct px_sstep *t, bool job_over, int32_t *exit_code, int32_t *sig) {
  int32_t worst = 0, first_sig = 0;
  bool failed = false, oom = false, timeout = false;
  for (uint32_t i = 0; i < t->nnodes; i++) {
    failed |= !strcmp(t->state[i], "FAILED") || !strcmp(t->state[i], "CANCELLED");
    oom |= !strcmp(t->state[i], "OUT_OF_MEMORY");
    timeout |= !strcmp(t->state[i], "TIMEOUT");
    if (t->exit_code[i] > worst) worst = t->exit_code[i];
    if (!first_sig) first_sig = t->term_signal[i];
  }
  *exit_code = worst;
  *sig = first_sig;
  if (px_sstep_running(t)) {
    if (!job_over) return "RUNNING";
    if (!first_sig) *sig = 9;
    return "CANCELLED";
  }
  if (t->cancelled) return "CANCELLED";
  if (oom) return "OUT_OF_MEMORY";
  if (timeout) return "TIMEOUT";
  return failed || worst || first_sig ? "FAILED" : "COMPLETED";
}

static char *step_nodelist(const struct px_server *s, const struct px_sstep *t) {
  const char **names = calloc(t->nnodes, sizeof *names);
  char *list = NULL;
  if (!names) return NULL;
  for (uint32_t i = 0; i < t->nnodes; i++) names[i] = s->conf->nodes[t->node[i]].name;
  if (px_hostlist_compress(names, t->nnodes, &list)) list = NULL;
  free(names);
  return list;
}

/* One step of the accounting row (the sacct step line's fields). */
static json_t *acct_step(const struct px_server *s, const struct px_sstep *t, int64_t job_end) {
  int32_t ec, sig;
  const char *state = px_sstep_state(t, true, &ec, &sig);
  char *list = step_nodelist(s, t);
  int64_t end = px_sstep_running(t) || !t->end_time ? job_end : t->end_time;
  json_t *o = json_pack("{sI ss ss si si sI sI sI sI ss sI sI}", "step_id", (json_int_t)t->step_id,
                        "name", t->name ? t->name : "", "state", state, "exit_code", (int)ec,
                        "term_signal", (int)sig, "start_time", (json_int_t)t->start_time,
                        "end_time", (json_int_t)end, "nnodes", (json_int_t)t->nnodes, "ntasks",
                        (json_int_t)t->ntasks, "nodelist", list ? list : "", "peak_mem_mib",
                        (json_int_t)t->peak_mem_mib, "cpu_time_ms", (json_int_t)t->cpu_time_ms);
  free(list);
  return o;
}

char *px_steps_acct_text(struct px_server *s, const struct px_sjob *j) {
  json_t *arr = NULL;
  for (size_t i = 0; s->steps && i < s->steps->len; i++) {
    const struct px_sstep *t = &s->steps->v[i];
    if (t->job_id != j->id || t->restart != j->restarts) continue;
    if (!arr && !(arr = json_array())) return NULL;
    json_array_append_new(arr, acct_step(s, t, j->end));
  }
  char *text = arr ? json_dumps(arr, JSON_COMPACT) : NULL;
  json_decref(arr);
  return text;
}
