/*
 * deps.c - a trace job's dependency in the replay (px_sim_dependency,
 * sim.h): the trace names jobs by the record's ids, the core by the
 * replay's (index + 1), and only what the replay still has to wait for is
 * passed on (docs/simulator.md, "What-if on your own cluster"). And the
 * name each job is submitted under (px_sim_names_init), which `singleton`
 * keys on with the user: the core holds a singleton job itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/metrics.h"
#include "sim/sim.h"

static int cmp_task(const void *a, const void *b) {
  const struct px_sim_task *x = a, *y = b;
  if (x->array_job_id != y->array_job_id) return x->array_job_id < y->array_job_id ? -1 : 1;
  return x->job < y->job ? -1 : x->job > y->job;
}

static uint32_t find_job(const struct px_sim_setup *s, const char *id);

/* The jobs an after: term names (job ids only: an array's tasks are rare
 * there), whose start frees a job (px_sim_job after_target). */
static void mark_after_targets(struct px_sim_setup *s) {
  const struct px_trace *t = s->trace;
  for (uint32_t i = 0; i < s->njobs; i++) {
    uint32_t name = t->jobs.v[s->jobs[i].trace_index].dependency;
    for (const char *p = name == PX_TRACE_NONE ? "" : px_trace_name(t, name); (p = strstr(p, "after:"));) {
      for (p += 5; *p == ':'; p += 1 + strspn(p + 1, "0123456789")) {
        char id[24];
        size_t n = strspn(p + 1, "0123456789");
        snprintf(id, sizeof id, "%.*s", (int)(n < sizeof id ? n : sizeof id - 1), p + 1);
        uint32_t k = find_job(s, id);
        if (k != UINT32_MAX) s->jobs[k].after_target = true;
      }
    }
  }
}

int px_sim_deps_init(struct px_sim_setup *s) {
  const struct px_trace *t = s->trace;
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->njobs; i++) {
    const struct px_trace_job *tj = &t->jobs.v[s->jobs[i].trace_index];
    if (px_smap_put(&s->dep_ids, px_trace_id(t, tj), i)) return PX_ENOMEM;
    n += tj->array_job_id >= 0;
  }
  if (n && !(s->array_tasks = malloc(n * sizeof *s->array_tasks))) return PX_ENOMEM;
  for (uint32_t i = 0; i < s->njobs; i++) {
    int64_t a = t->jobs.v[s->jobs[i].trace_index].array_job_id;
    if (a >= 0) s->array_tasks[s->narray_tasks++] = (struct px_sim_task){a, i};
  }
  if (s->narray_tasks) qsort(s->array_tasks, s->narray_tasks, sizeof *s->array_tasks, cmp_task); /* NULL when none */
  mark_after_targets(s);
  return 0;
}

static uint32_t find_job(const struct px_sim_setup *s, const char *id) {
  uint64_t k;
  return px_smap_get(&s->dep_ids, id, &k) ? (uint32_t)k : UINT32_MAX;
}

/* The dependency being built: the terms still waited for. */
struct dep_out {
  char *buf;
  size_t len, cap;
  char sep;      /* ',' (all) or '?' (any) */
  bool met;      /* '?': an alternative is met, the whole is */
  bool nomem;
};

/* Appends term (at most 39 bytes) after the separator. */
static void put(struct dep_out *o, const char *term) {
  char buf[41];
  int n = snprintf(buf, sizeof buf, "%s%s", o->len ? (o->sep == '?' ? "?" : ",") : "", term);
  if (o->len + (size_t)n + 1 > o->cap) {
    size_t cap = o->cap ? o->cap * 2 + (size_t)n : 64;
    char *b = realloc(o->buf, cap);
    if (!b) {
      o->nomem = true;
      return;
    }
    o->buf = b, o->cap = cap;
  }
  memcpy(o->buf + o->len, buf, (size_t)n + 1);
  o->len += (size_t)n;
}

static void put_term(struct dep_out *o, bool after, uint32_t job) {
  char term[32];
  snprintf(term, sizeof term, "%s:%u", after ? "after" : "afterany", job + 1);
  put(o, term);
}

/* Whether job must still wait for target k (after: its start, else its end). */
static bool waits(const struct px_sim_setup *s, uint32_t job, uint32_t k, bool after,
                  const struct px_sim_jobrun *runs) {
  if (k >= job || s->jobs[k].skip != PX_SIM_RUNS) return false; /* never runs before it: met */
  uint8_t st = runs[k].state;
  if (st == PX_SIMJ_REJECTED || st == PX_SIMJ_SKIPPED || st == PX_SIMJ_DONE) return false;
  return !after || runs[k].first_start_s < 0;
}

/* One job id of a term: the job of that id, else the tasks of that array. */
static void add_target(const struct px_sim_setup *s, uint32_t job, const char *id, bool after,
                       const struct px_sim_jobrun *runs, struct dep_out *o) {
  uint64_t k;
  if (px_smap_get(&s->dep_ids, id, &k)) {
    if (waits(s, job, (uint32_t)k, after, runs)) put_term(o, after, (uint32_t)k);
    else o->met = true;
    return;
  }
  int64_t a = strtoll(id, NULL, 10);
  size_t lo = 0, hi = s->narray_tasks;
  while (lo < hi) { /* the array's first task */
    size_t mid = (lo + hi) / 2;
    if (s->array_tasks[mid].array_job_id < a) lo = mid + 1;
    else hi = mid;
  }
  bool any = false;
  for (; lo < s->narray_tasks && s->array_tasks[lo].array_job_id == a; lo++) {
    uint32_t task = s->array_tasks[lo].job;
    if (waits(s, job, task, after, runs)) put_term(o, after, task), any = true;
  }
  if (!any) o->met = true; /* all its tasks, or a job the trace lacks */
}

int px_sim_dependency(const struct px_sim_setup *s, uint32_t job, const struct px_sim_jobrun *runs, char **out) {
  const struct px_trace *t = s->trace;
  uint32_t name = t->jobs.v[s->jobs[job].trace_index].dependency;
  *out = NULL;
  if (name == PX_TRACE_NONE) return 0;
  const char *p = px_trace_name(t, name); /* checked by the trace reader */
  struct dep_out o = {.sep = strchr(p, '?') ? '?' : ','};
  while (*p) {
    size_t len = strcspn(p, ",?");
    bool after = len > 6 && !strncmp(p, "after:", 6);
    const char *q = memchr(p, ':', len); /* NULL: singleton */
    /* singleton: the core holds the job while a job of its name and user
     * runs; a job without a name (an export without the column) has none
     * to wait for, as in the core */
    if (!q && px_sim_job_name(s, job)) put(&o, "singleton");
    else if (!q) o.met = true;
    while (q && q < p + len) {
      char id[24];
      size_t n = strspn(q + 1, "0123456789");
      snprintf(id, sizeof id, "%.*s", (int)(n < sizeof id ? n : sizeof id - 1), q + 1);
      add_target(s, job, id, after, runs, &o);
      q += 1 + n;
    }
    p += len + (p[len] != 0);
  }
  if (o.nomem || (o.sep == '?' && o.met)) free(o.buf), o.buf = NULL;
  if (o.nomem) return PX_ENOMEM;
  *out = o.buf;
  return 0;
}

/* ---- job names ------------------------------------------------------------ */

/* The interned copy of "user/name" (user NULL: "name"). */
static int name_put(struct px_sim_setup *s, const char *user, const char *name, uint32_t *out) {
  size_t nu = user ? strlen(user) + 1 : 0, nn = strlen(name) + 1;
  char *key = malloc(nu + nn);
  if (!key) return PX_ENOMEM;
  if (user) memcpy(key, user, nu - 1), key[nu - 1] = '/';
  memcpy(key + nu, name, nn);
  uint64_t k;
  if (px_smap_get(&s->job_name_index, key, &k)) {
    free(key);
    *out = (uint32_t)k;
    return 0;
  }
  if (px_strvec_push(&s->job_names, key)) {
    free(key);
    return PX_ENOMEM;
  }
  *out = (uint32_t)(s->job_names.len - 1); /* key is freed with job_names from here */
  return px_smap_put(&s->job_name_index, key, *out) ? PX_ENOMEM : 0;
}

/*
 * The name a job is submitted under is its trace name; when it runs as
 * another user than its recorded one (the accounts tree lacks that user
 * under its account: --cluster runs all of a queue's jobs as the queue's
 * one user), its recorded user qualifies it ("alice/train"), so that a
 * singleton is still held only by its own user's namesakes.
 */
int px_sim_names_init(struct px_sim_setup *s) {
  const struct px_trace *t = s->trace;
  if (!(s->job_name = malloc((s->njobs + 1) * sizeof *s->job_name))) return PX_ENOMEM;
  for (uint32_t i = 0; i < s->njobs; i++) {
    const struct px_trace_job *tj = &t->jobs.v[s->jobs[i].trace_index];
    s->job_name[i] = PX_TRACE_NONE;
    if (tj->name == PX_TRACE_NONE) continue;
    const char *user = tj->user == PX_TRACE_NONE ? NULL : px_trace_name(t, tj->user);
    if (user && !strcmp(user, s->conf->accounts[s->jobs[i].assoc].name)) user = NULL;
    int rc = name_put(s, user, px_trace_name(t, tj->name), &s->job_name[i]);
    if (rc) return rc;
  }
  return 0;
}
