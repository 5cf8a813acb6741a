/*
 * slurmrestd_db.c - /slurmdb/v0.0.39/jobs (the accounting store, as sacct
 * reads it: one record per attempt), associations (the configured accounts
 * tree: an account's row and each user's row under it), accounts, users
 * and qos (the configuration's, with the changes made online since: the
 * ACCT events, read under the server's acct_lock; deleted entries are
 * left out), in v0.0.39's slurmdbd shapes. sacctmgr's show commands read
 * these too (cli/cmd_sacctmgr.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/http/slurmrestd.h"
#include "server/http/slurmrestd_steps.h"
#include "server/tables.h"

/* ---- jobs ---- */

struct db_ctx {
  const struct px_api_call *c;
  json_t *jobs;
};

static json_t *tres_list(uint32_t ncpus, uint64_t mem_mib, uint32_t nnodes, uint32_t ngpus) {
  json_t *a = json_pack("[{ss ss si sI} {ss ss si sI} {ss ss si sI}]", "type", "cpu", "name", "",
                        "id", 1, "count", (json_int_t)ncpus, "type", "mem", "name", "", "id", 2,
                        "count", (json_int_t)mem_mib, "type", "node", "name", "", "id", 4, "count",
                        (json_int_t)nnodes);
  if (a && ngpus)
    json_array_append_new(a, json_pack("{ss ss si sI}", "type", "gres", "name", "gpu", "id", 1001,
                                       "count", (json_int_t)ngpus));
  return a;
}

static json_t *db_time(const struct px_acct_row *r) {
  int64_t end = r->end_time ? r->end_time : (r->start_time ? (int64_t)time(NULL) : 0);
  return json_pack("{sI sI sI sI sI si s{si si} s{si si} s{si si}}", "elapsed",
                   (json_int_t)(r->start_time && end > r->start_time ? end - r->start_time : 0),
                   "eligible", (json_int_t)r->eligible_time, "end", (json_int_t)r->end_time, "start",
                   (json_int_t)r->start_time, "submission", (json_int_t)r->submit_time, "suspended", 0,
                   "system", "seconds", 0, "microseconds", 0, "total", "seconds", 0, "microseconds", 0,
                   "user", "seconds", 0, "microseconds", 0);
}

/* slurmdbd's exit code of a job: {"status", "return_code", "signal":
 * {"signal_id", "name"}}. */
static json_t *exit_code(const char *state, int32_t exit_code, int32_t term_signal) {
  bool ended = strcmp(state, "PENDING") && strcmp(state, "RUNNING") && strcmp(state, "COMPLETING");
  const char *status = !ended ? "PENDING" : term_signal ? "SIGNALED" : exit_code ? "ERROR" : "SUCCESS";
  return json_pack("{ss si s{si ss}}", "status", status, "return_code", exit_code, "signal",
                   "signal_id", term_signal, "name", "");
}

static int db_row(void *ctx, const struct px_acct_row *r) {
  struct db_ctx *x = ctx;
  const char *state = r->state ? r->state : "";
  json_t *o = json_pack(
      "{sI ss ss ss ss ss ss si ss s{ss ss ss ss} s{so ss} so so s{so so} s{sI so si}}", "job_id",
      (json_int_t)r->job_id, "name", r->name ? r->name : "", "user", r->user ? r->user : "",
      "account", r->account ? r->account : "", "partition", r->partition ? r->partition : "",
      "qos", r->qos ? r->qos : "", "nodes", r->nodelist ? r->nodelist : "None assigned",
      "allocation_nodes", (int)r->nnodes, "cluster", px_sr_cluster(x->c), "association",
      "account", r->account ? r->account : "", "cluster", px_sr_cluster(x->c), "partition",
      r->partition ? r->partition : "", "user", r->user ? r->user : "", "state", "current",
      json_string(state), "reason", "None", "exit_code", exit_code(state, r->exit_code, r->term_signal),
      "time", db_time(r), "tres", "allocated",
      tres_list(r->ncpus, r->mem_mib, r->nnodes, r->ngpus), "requested",
      tres_list(r->ncpus, r->mem_mib, r->nnodes, r->ngpus), "array", "job_id",
      (json_int_t)r->array_job_id, "task_id",
      r->array_job_id ? px_sr_noval(r->array_task_id) : px_sr_noval_unset(), "task", 0);
  if (!o) return PX_ENOMEM;
  json_object_set_new(o, "restart_cnt", json_integer(r->attempt));
  json_object_set_new(o, "steps", px_sr_db_steps(r->job_id, r->steps));
  json_object_set_new(o, "flags", json_array());
  return json_array_append_new(x->jobs, o) ? PX_ENOMEM : 0;
}

/* Query arguments as slurmrestd's: users, account, partition, job_name is
 * not kept; start_time / end_time as Unix times. */
static int db_query(struct px_api_call *c, struct px_acct_query *q) {
  const char *v;
  char *end;
  q->user = px_api_arg(c, "users");
  q->account = px_api_arg(c, "account");
  q->partition = px_api_arg(c, "partition");
  q->limit = 100000;
  static const char *const times[] = {"start_time", "end_time"};
  int64_t *dst[] = {&q->since, &q->until};
  for (int i = 0; i < 2; i++) {
    if (!(v = px_api_arg(c, times[i]))) continue;
    long long t = strtoll(v, &end, 10);
    if (end == v || *end || t < 0) {
      px_sr_error(c, 400, PX_SR_EQUERY, "%s: expected a Unix time, got '%.64s'", times[i], v);
      return PX_EINVAL;
    }
    *dst[i] = t;
  }
  if (!px_sr_may_see(c, NULL)) q->user = c->who.user; /* private mode: one's own */
  return 0;
}

void px_sr_db_jobs(struct px_api_call *c) {
  struct px_acct_query q = {0};
  if (db_query(c, &q)) return;
  struct db_ctx x = {c, json_array()};
  pthread_mutex_lock(&c->s->rstore_lock);
  int rc = x.jobs ? px_store_acct_query(c->s->rstore, &q, db_row, &x) : PX_ENOMEM;
  pthread_mutex_unlock(&c->s->rstore_lock);
  if (rc) {
    json_decref(x.jobs);
    return px_sr_error(c, 503, PX_SR_EGENERIC, "accounting query failed");
  }
  json_t *o = px_sr_response(c, true);
  if (o) json_object_set_new(o, "jobs", x.jobs);
  else json_decref(x.jobs);
  px_sr_answer(c, 200, o);
}

/* ---- associations ---- */

static json_t *limit(uint64_t v) { return v == PX_NOLIMIT ? px_sr_noval_infinite() : px_sr_noval((int64_t)v); }

/* max.tres.total: the GrpTRES limits that are set. */
static json_t *grp_tres(const struct px_conf_account *a) {
  json_t *t = json_array();
  const struct {
    const char *type, *name;
    int id;
    uint64_t v;
  } rows[] = {{"cpu", "", 1, a->grp_cpus}, {"mem", "", 2, a->grp_mem_mib}, {"node", "", 4, a->grp_nodes},
              {"gres", "gpu", 1001, a->grp_gpus}};
  for (size_t i = 0; t && i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].v != PX_NOLIMIT)
      json_array_append_new(t, json_pack("{ss ss si sI}", "type", rows[i].type, "name", rows[i].name,
                                         "id", rows[i].id, "count", (json_int_t)rows[i].v));
  return t;
}

#define SR_FS_USE_PARENT 0x7FFFFFFF /* Slurm's shares_raw for Fairshare=parent */

/* One limit as a TRES list: gres/gpu=N, or none. */
static json_t *gpu_tres(uint64_t n) {
  json_t *t = json_array();
  if (t && n != PX_NOLIMIT && n)
    json_array_append_new(t, json_pack("{ss ss si sI}", "type", "gres", "name", "gpu", "id", 1001,
                                       "count", (json_int_t)n));
  return t;
}

static json_t *assoc_json(const struct px_api_call *c, uint32_t i) {
  const struct px_conf *cf = c->s->conf;
  const struct px_conf_account *a = &cf->accounts[i];
  const char *account = a->is_user ? cf->accounts[a->parent].name : a->name;
  const char *parent = a->is_user || a->parent == PX_NONE ? "" : cf->accounts[a->parent].name;
  /* default.qos: as set on this association (Slurm resolves inheritance at
   * run time too); empty when inherited */
  json_t *o = json_pack("{ss ss ss ss ss sb sI s{ss} s{sI}}", "account", account, "cluster",
                        px_sr_cluster(c), "partition", "", "user", a->is_user ? a->name : "",
                        "parent_account", parent, "is_default", a->is_default_account, "shares_raw",
                        (json_int_t)(a->fairshare == PX_FAIRSHARE_PARENT ? SR_FS_USE_PARENT : a->fairshare),
                        "default", "qos", a->default_qos ? a->default_qos : "", "id", "id", (json_int_t)i);
  if (!o) return NULL;
  json_object_set_new(o, "max",
                      json_pack("{s{so so s{so}} s{so s{so}}}", "jobs", "active", limit(a->max_jobs),
                                "total", limit(a->max_submit_jobs), "per", "count", limit(a->grp_jobs),
                                "tres", "total", grp_tres(a), "per", "job", gpu_tres(a->max_gpus_per_job)));
  json_t *qos = json_array();
  for (uint32_t k = 0; qos && k < cf->nqos; k++)
    if (!cf->qos[k].deleted) json_array_append_new(qos, json_string(cf->qos[k].name));
  json_object_set_new(o, "qos", qos);
  json_object_set_new(o, "flags", json_array());
  return o;
}

/* Every live association's children grouped by parent (kids[first[p] ..
 * first[p + 1])), each group its users, then its sub-accounts, by name:
 * Slurm's order for the walk, in O(n log n) however many users the tree
 * gained online. */
struct assoc_walk {
  const struct px_api_call *c;
  const char *user, *account;
  json_t *rows;
  uint32_t *first, *kids; /* naccounts + 2 offsets, naccounts children */
};

static int users_then_name(const void *x, const void *y, void *ctx) {
  const struct px_conf *cf = ctx;
  const struct px_conf_account *a = &cf->accounts[*(const uint32_t *)x], *b = &cf->accounts[*(const uint32_t *)y];
  if (a->is_user != b->is_user) return a->is_user ? -1 : 1;
  return strcmp(a->name, b->name);
}

static bool group_children(struct assoc_walk *w, const struct px_conf *cf) {
  uint32_t n = cf->naccounts;
  w->first = calloc((size_t)n + 2, sizeof *w->first);
  w->kids = calloc((size_t)n + 1, sizeof *w->kids);
  if (!w->first || !w->kids) return false;
  for (uint32_t k = 0; k < n; k++) /* counts at p + 2, ends of groups after the sums */
    if (!cf->accounts[k].deleted && cf->accounts[k].parent != PX_NONE) w->first[cf->accounts[k].parent + 2]++;
  for (uint32_t i = 2; i < n + 2; i++) w->first[i] += w->first[i - 1];
  for (uint32_t k = 0; k < n; k++) /* first[p + 1] runs from p's start to its end */
    if (!cf->accounts[k].deleted && cf->accounts[k].parent != PX_NONE) w->kids[w->first[cf->accounts[k].parent + 1]++] = k;
  for (uint32_t p = 0; p < n; p++)
    qsort_r(w->kids + w->first[p], w->first[p + 1] - w->first[p], sizeof *w->kids, users_then_name, (void *)cf);
  return true;
}

/* Slurm's order: an account, its users by name, then its sub-accounts by
 * name, each in turn. */
static void walk(struct assoc_walk *w, uint32_t i) {
  const struct px_conf *cf = w->c->s->conf;
  bool acct_ok = !w->account || !strcmp(w->account, cf->accounts[i].name);
  if (acct_ok && !w->user) json_array_append_new(w->rows, assoc_json(w->c, i));
  for (uint32_t k = w->first[i]; k < w->first[i + 1]; k++) {
    uint32_t x = w->kids[k];
    if (!cf->accounts[x].is_user) walk(w, x);
    else if (acct_ok && (!w->user || !strcmp(w->user, cf->accounts[x].name)))
      json_array_append_new(w->rows, assoc_json(w->c, x));
  }
}

void px_sr_db_associations(struct px_api_call *c) {
  const struct px_conf *cf = c->s->conf;
  pthread_rwlock_rdlock(&c->s->acct_lock);
  struct assoc_walk w = {c, px_api_arg(c, "user"), px_api_arg(c, "account"), json_array(), NULL, NULL};
  if (w.rows && cf->naccounts && group_children(&w, cf)) walk(&w, 0); /* index 0 is the root */
  pthread_rwlock_unlock(&c->s->acct_lock);
  free(w.first);
  free(w.kids);
  json_t *o = px_sr_response(c, true);
  if (o && w.rows) json_object_set_new(o, "associations", w.rows);
  else json_decref(w.rows);
  px_sr_answer(c, 200, o);
}

/* ---- qos ---- */

static json_t *qos_json(const struct px_conf *cf, uint32_t i) {
  static const char *const modes[] = {"DISABLED", "CANCEL", "REQUEUE", "SUSPEND"};
  const struct px_conf_qos *q = &cf->qos[i];
  json_t *list = json_array();
  for (uint32_t k = 0; list && k < q->npreempt; k++)
    json_array_append_new(list, json_string(cf->qos[q->preempt[k]].name));
  int64_t wall_min = q->max_wall_s >= PX_TIME_UNLIMITED || q->max_wall_s <= 0 ? -1 : q->max_wall_s / 60;
  json_t *wall = wall_min < 0 ? px_sr_noval_infinite() : px_sr_noval(wall_min);
  json_t *max = json_pack("{s{s{so}} s{s{s{so}} s{so}} s{s{so}}}", "wall_clock", "per", "job", wall,
                          "jobs", "active_jobs", "per", "user", limit(q->max_jobs_per_user), "per",
                          "user", limit(q->max_submit_per_user), "tres", "per", "user",
                          gpu_tres(q->max_gpus_per_user));
  json_t *o = json_pack("{ss ss si so s{so s[s] so} s{sI so} so s[]}", "name", q->name, "description",
                        "", "id", (int)i + 1, "priority", px_sr_noval(q->priority), "preempt", "list",
                        list, "mode", modes[q->preempt_mode], "exempt_time",
                        q->min_runtime_s ? px_sr_noval(q->min_runtime_s) : px_sr_noval_unset(),
                        "limits", "grace_time", (json_int_t)q->grace_time_s, "max", max,
                        "usage_factor",
                        json_pack("{sb sb sf}", "set", 1, "infinite", 0, "number", q->usage_factor),
                        "flags");
  return o;
}

void px_sr_db_qos(struct px_api_call *c) {
  const struct px_conf *cf = c->s->conf;
  json_t *a = json_array();
  pthread_rwlock_rdlock(&c->s->acct_lock);
  for (uint32_t i = 0; a && i < cf->nqos; i++)
    if (!cf->qos[i].deleted) json_array_append_new(a, qos_json(cf, i));
  pthread_rwlock_unlock(&c->s->acct_lock);
  json_t *o = px_sr_response(c, true);
  if (o && a) json_object_set_new(o, "qos", a);
  else json_decref(a);
  px_sr_answer(c, 200, o);
}

/* ---- accounts and users ---- */

static bool in_list(const char *name, const char **list, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (!strcmp(list[i], name)) return true;
  return false;
}

/* {"account","cluster","partition","user"}: how v0.0.39 points at an association. */
static json_t *assoc_short(const struct px_api_call *c, const char *account, const char *user) {
  return json_pack("{ss ss ss ss}", "account", account, "cluster", px_sr_cluster(c), "partition", "",
                   "user", user ? user : "");
}

/* Accounts (not user leaves): description and organization as sacctmgr
 * defaults them (the name, and the parent's name), coordinators, and the
 * association of each of their users. */
void px_sr_db_accounts(struct px_api_call *c) {
  const struct px_conf *cf = c->s->conf;
  json_t *a = json_array();
  pthread_rwlock_rdlock(&c->s->acct_lock);
  for (uint32_t i = 0; a && i < cf->naccounts; i++) {
    const struct px_conf_account *x = &cf->accounts[i];
    if (x->is_user || x->deleted) continue;
    json_t *coords = json_array(), *assocs = json_array();
    for (uint32_t k = 0; k < x->ncoordinators; k++)
      json_array_append_new(coords, json_pack("{ss sb}", "name", x->coordinators[k], "direct", 1));
    json_array_append_new(assocs, assoc_short(c, x->name, NULL));
    for (uint32_t k = 0; k < cf->naccounts; k++)
      if (cf->accounts[k].is_user && cf->accounts[k].parent == i && !cf->accounts[k].deleted)
        json_array_append_new(assocs, assoc_short(c, x->name, cf->accounts[k].name));
    const char *desc = x->description ? x->description : x->parent == PX_NONE ? "default root account" : x->name;
    const char *org = x->organization ? x->organization : x->parent == PX_NONE ? x->name : cf->accounts[x->parent].name;
    json_array_append_new(a, json_pack("{ss ss ss so so s[]}", "name", x->name, "description", desc,
                                       "organization", org, "coordinators", coords, "associations", assocs, "flags"));
  }
  pthread_rwlock_unlock(&c->s->acct_lock);
  json_t *o = px_sr_response(c, true);
  if (o && a) json_object_set_new(o, "accounts", a);
  else json_decref(a);
  px_sr_answer(c, 200, o);
}

/* Users: each user leaf's name once, its default account, its
 * administrator level (root and Administrators=: Administrator;
 * Operators=: Operator), its associations and the accounts it coordinates. */
void px_sr_db_users(struct px_api_call *c) {
  const struct px_conf *cf = c->s->conf;
  const struct px_conf_phalanx *p = &cf->phalanx;
  json_t *a = json_array();
  pthread_rwlock_rdlock(&c->s->acct_lock);
  for (uint32_t i = 0; a && i < cf->naccounts; i++) {
    const struct px_conf_account *x = &cf->accounts[i];
    uint32_t first = 0;
    while (first < i && !(cf->accounts[first].is_user && !cf->accounts[first].deleted &&
                          !strcmp(cf->accounts[first].name, x->name)))
      first++;
    if (!x->is_user || x->deleted || first < i) continue; /* one row per user name */
    const char *def = NULL;
    json_t *assocs = json_array(), *coords = json_array();
    for (uint32_t k = i; k < cf->naccounts; k++) {
      const struct px_conf_account *u = &cf->accounts[k];
      if (!u->is_user || u->deleted || strcmp(u->name, x->name)) continue;
      json_array_append_new(assocs, assoc_short(c, cf->accounts[u->parent].name, u->name));
      if (u->is_default_account || !def) def = cf->accounts[u->parent].name;
    }
    for (uint32_t k = 0; k < cf->naccounts; k++)
      if (!cf->accounts[k].is_user && !cf->accounts[k].deleted &&
          in_list(x->name, cf->accounts[k].coordinators, cf->accounts[k].ncoordinators))
        json_array_append_new(coords, json_pack("{ss sb}", "name", cf->accounts[k].name, "direct", 1));
    const char *level = !strcmp(x->name, "root") || in_list(x->name, p->administrators, p->nadministrators)
                            ? "Administrator"
                        : in_list(x->name, p->operators, p->noperators) ? "Operator"
                                                                         : "None";
    json_array_append_new(a, json_pack("{ss s{ss ss} s[s] so so s[]}", "name", x->name, "default",
                                       "account", def ? def : "", "wckey", "", "administrator_level",
                                       level, "associations", assocs, "coordinators", coords, "flags"));
  }
  pthread_rwlock_unlock(&c->s->acct_lock);
  json_t *o = px_sr_response(c, true);
  if (o && a) json_object_set_new(o, "users", a);
  else json_decref(a);
  px_sr_answer(c, 200, o);
}
