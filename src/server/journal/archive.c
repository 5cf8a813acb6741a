/*
 * archive.c - checkpoints of the journal (issue 6). A finished job never
 * changes again, so its history need not be replayed: a checkpoint writes
 * the finished job as one archive row (its whole server record) and deletes
 * its journal records, in one transaction (store.h). The journal then holds
 * only the histories of live jobs (and node records), and recovery loads the
 * archive plus that tail, so its cost follows the live queue, not the
 * server's age. One exception: `scontrol requeue` of a finished job brings
 * it back to life (loop/handle.c); its later records then follow its
 * archive row in the journal, and recovery revives that row from the
 * archive when it meets the requeue record (px_archive_revive).
 *
 * An array moves whole, its record with every task it started, once the
 * record has ended (each started task has ended, none is left to start):
 * until then the core rebuilds the array's progress from its tasks'
 * records, so none of them leaves the journal before. Its row keeps the
 * task counts (show, array_pending) and the ids it reserved (ids go on
 * past its last task, started or not).
 *
 * Kept in the journal: finished jobs (and arrays) that a live job's
 * dependency names (the core must know how they ended). What an archived
 * job's runs charged to fair share, every attempt of a requeued one, is
 * given back to the core at recovery (archive_usage.c), so fair share
 * survives a restart.
 *
 * A checkpoint runs on the main thread right after a commit, when at least
 * min_jobs jobs wait for it, or any has waited for ARCHIVE_MAX_WAIT_S.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "proto/jobspec_json.h"
#include "server/journal/archive_usage.h"
#include "server/journal/journal.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"
#include "util/log.h"

#define ARCHIVE_MAX_WAIT_S 600

/* A finished job, or an array whose record ended (with its tasks); not a
 * task alone. */
static bool archivable(const struct px_sjob *j) {
  return px_job_state_terminal(j->state) && !j->array_job_id;
}

void px_archive_note(struct px_server *s, const struct px_sjob *j) {
  if (!archivable(j)) return;
  if (!s->arch_wait.len) s->arch_first_s = j->end;
  if (px_u64vec_push(&s->arch_wait, j->id)) px_warn("checkpoint: out of memory");
}

/* Every job id a live job's dependency expression names ("afterok:12:13"). */
static int dependency_targets(struct px_server *s, struct px_map *ids) {
  for (size_t i = 0; i < s->njobs; i++) {
    const struct px_sjob *j = s->jobs[i];
    const char *p = j->spec.dependency;
    if (!p || px_job_state_terminal(j->state)) continue;
    while (*p) {
      if (*p < '0' || *p > '9') {
        p++;
        continue;
      }
      char *end;
      uint64_t id = strtoull(p, &end, 10);
      if (px_map_put(ids, id, 1)) return PX_ENOMEM;
      p = end;
    }
  }
  return 0;
}

static json_t *alloc_json(struct px_server *s, const struct px_sjob *j) {
  json_t *a = json_array();
  for (uint32_t i = 0; i < j->nalloc; i++) {
    json_t *gpus = json_array();
    for (int g = 0; g < 64; g++)
      if (j->alloc[i].gpus >> g & 1) json_array_append_new(gpus, json_integer(g));
    json_t *e = json_pack("{ss sI so sI}", "node", s->conf->nodes[j->alloc[i].node].name, "ncpu",
                          (json_int_t)j->alloc[i].ncpu, "gpus", gpus, "mem_mib", (json_int_t)j->alloc[i].mem_mib);
    if (e && j->alloc[i].gpu_share) json_object_set_new(e, "gpu_share", json_integer(j->alloc[i].gpu_share));
    json_array_append_new(a, e);
  }
  return a;
}

/* Array fields of the row: a task's ids, a record's task counts. */
static void array_fields(const struct px_sjob *j, json_t *o) {
  if (j->array_job_id) {
    json_object_set_new(o, "array_job_id", json_integer((json_int_t)j->array_job_id));
    json_object_set_new(o, "array_task_id", json_integer((json_int_t)j->array_task_id));
  }
  if (!px_sjob_is_array(j)) return;
  json_t *a = json_pack("{sI sI sI sI sb}", "ntasks", (json_int_t)j->arr_ntasks, "started",
                        (json_int_t)j->arr_started, "ended", (json_int_t)j->arr_ended, "failed",
                        (json_int_t)j->arr_failed, "cancelled", j->arr_cancelled);
  json_object_set_new(o, "arr", a);
}

/* The archive row of a finished job: everything its views, accounting and
 * fair share read (attempts: its earlier runs, NULL when none; taken). */
static char *job_text(struct px_server *s, const struct px_sjob *j, json_t *attempts) {
  json_t *o = json_pack(
      "{so ss sb ss sI sI sI sI sI sI si si si so sI sI sI sI}", "spec",
      px_jobspec_to_json(&j->spec), "state", px_job_state_name(j->state), "requeued", j->requeued,
      "reason", j->reason, "priority", (json_int_t)j->priority, "submit", (json_int_t)j->submit,
      "eligible", (json_int_t)j->eligible, "start", (json_int_t)j->start, "end",
      (json_int_t)j->end, "time_limit_s", (json_int_t)j->time_limit_s, "exit_code",
      j->exit_code, "term_signal", j->term_signal, "restarts", (int)j->restarts, "alloc",
      alloc_json(s, j), "peak_mem_mib", (json_int_t)j->peak_mem_mib, "cpu_time_ms",
      (json_int_t)j->cpu_time_ms, "mseq", (json_int_t)j->mseq, "id", (json_int_t)j->id);
  if (o && j->cancelled_by) json_object_set_new(o, "cancelled_by", json_string(j->cancelled_by));
  if (o) array_fields(j, o);
  if (o && attempts) json_object_set_new(o, "attempts", attempts);
  else json_decref(attempts);
  char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  return text;
}

/* The rows a checkpoint writes (grown as arrays add their tasks). */
struct rows {
  struct px_store_arch *v;
  size_t n, cap;
};

static int row_add(struct px_server *s, struct rows *r, const struct px_sjob *j) {
  json_t *attempts;
  int rc = px_archive_attempts_get(s, j, &attempts);
  if (rc) return rc;
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 64;
    struct px_store_arch *v = realloc(r->v, cap * sizeof *v);
    if (!v) {
      json_decref(attempts);
      return PX_ENOMEM;
    }
    r->v = v;
    r->cap = cap;
  }
  r->v[r->n].job_id = j->id;
  return (r->v[r->n++].data = job_text(s, j, attempts)) ? 0 : PX_ENOMEM;
}

/* Is job id, or for an array any task of it, named by a live job? */
static bool named(const struct px_map *deps, const struct px_sjob *j) {
  uint32_t tasks = px_sjob_is_array(j) ? j->arr_started : 0;
  for (uint32_t k = 0; k <= tasks; k++)
    if (px_map_get(deps, j->id + k, NULL)) return true;
  return false;
}

/* The seq of the last record of j (or of a task of its array). */
static uint64_t newest_seq(struct px_server *s, const struct px_sjob *j) {
  uint64_t seq = j->mseq;
  for (uint32_t k = 1; px_sjob_is_array(j) && k <= j->arr_started; k++) {
    const struct px_sjob *t = px_jobs_find(s, j->id + k);
    if (t && t->mseq > seq) seq = t->mseq;
  }
  return seq;
}

/* j's rows: its own, and for an array those of the tasks it started. */
static int rows_of(struct px_server *s, struct rows *r, const struct px_sjob *j) {
  int rc = row_add(s, r, j);
  for (uint32_t k = 1; !rc && px_sjob_is_array(j) && k <= j->arr_started; k++) {
    const struct px_sjob *t = px_jobs_find(s, j->id + k);
    if (t) rc = row_add(s, r, t);
  }
  return rc;
}

int px_archive_checkpoint(struct px_server *s, int64_t now) {
  size_t n = s->arch_wait.len;
  if (!n || (n < s->opts.checkpoint_jobs && now - s->arch_first_s < ARCHIVE_MAX_WAIT_S)) return 0;
  struct px_map deps = {0};
  struct rows rows = {0};
  struct px_u64vec keep = {0}, take = {0};
  int rc = dependency_targets(s, &deps);
  uint64_t floor = px_ha_archive_floor(s);
  for (size_t i = 0; !rc && i < n; i++) {
    uint64_t id = s->arch_wait.v[i];
    struct px_sjob *j = px_jobs_find(s, id);
    if (!j || !archivable(j)) continue;
    /* named by a live job, or not yet read by a standby: later */
    if (named(&deps, j) || newest_seq(s, j) > floor) {
      rc = px_u64vec_push(&keep, id);
      continue;
    }
    rc = px_u64vec_push(&take, id);
  }
  /* Their last records durable first: a checkpoint must not delete the
   * journal rows of a job before a commit in flight adds one. With them the
   * accounting rows of the attempts that requeues ended, which the rows
   * read (under the store's lock: the committer uses it). */
  if (!rc && take.len && (rc = px_commit_sync(s)) == 0) {
    px_commit_lock(s);
    for (size_t i = 0; !rc && i < take.len; i++) {
      const struct px_sjob *j = px_jobs_find(s, take.v[i]);
      if (j) rc = rows_of(s, &rows, j);
    }
    if (rc)
      px_warn("checkpoint of %zu jobs not written (retried later): their rows: %s", take.len,
              rc == PX_ENOMEM ? "out of memory" : s->store->errmsg);
    else if ((rc = px_store_archive(s->store, rows.v, rows.n)))
      px_warn("checkpoint of %zu jobs failed (retried later): %s", rows.n, s->store->errmsg);
    px_commit_unlock(s);
  }
  size_t k = rows.n;
  px_u64vec_fini(&take);
  for (size_t i = 0; i < k; i++) free((char *)rows.v[i].data);
  free(rows.v);
  px_map_fini(&deps);
  if (!rc) { /* done: wait for the named ones only */
    px_u64vec_fini(&s->arch_wait);
    s->arch_wait = keep;
    s->arch_first_s = now;
    if (k) px_info("checkpoint: %zu finished jobs moved from the journal to the archive", k);
  } else {
    px_u64vec_fini(&keep);
  }
  return rc;
}

/* ---- recovery ---- */

static int load_alloc(struct px_server *s, struct px_sjob *j, json_t *a) {
  size_t n = json_array_size(a);
  if (!n) return 0;
  if (!(j->alloc = calloc(n, sizeof *j->alloc))) return PX_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    json_t *e = json_array_get(a, i), *g;
    size_t x;
    int idx = px_node_index(s, json_string_value(json_object_get(e, "node")));
    j->alloc[i].node = idx < 0 ? 0 : (uint32_t)idx;
    j->alloc[i].ncpu = (uint32_t)json_integer_value(json_object_get(e, "ncpu"));
    j->alloc[i].mem_mib = (uint64_t)json_integer_value(json_object_get(e, "mem_mib"));
    json_array_foreach(json_object_get(e, "gpus"), x, g) j->alloc[i].gpus |= 1ull << (json_integer_value(g) & 63);
    j->alloc[i].gpu_share = (uint32_t)json_integer_value(json_object_get(e, "gpu_share")) % 100;
  }
  j->nalloc = (uint32_t)n;
  return 0;
}

static int64_t geti(json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

/* A task's ids, a record's task counts (array_fields). */
static void load_array(struct px_sjob *j, json_t *o) {
  if (json_object_get(o, "array_job_id")) {
    j->array_job_id = (uint64_t)geti(o, "array_job_id");
    j->array_task_id = (uint32_t)geti(o, "array_task_id");
  }
  json_t *a = json_object_get(o, "arr");
  if (!a) return;
  j->arr_ntasks = (uint32_t)geti(a, "ntasks");
  j->arr_started = (uint32_t)geti(a, "started");
  j->arr_ended = (uint32_t)geti(a, "ended");
  j->arr_failed = (uint32_t)geti(a, "failed");
  j->arr_cancelled = json_is_true(json_object_get(a, "cancelled"));
}

/* One archived job into the recovery list (sorted: the archive is by id). */
static int load_one(void *ctx, const struct px_store_arch *a) {
  struct px_server *s = ctx;
  json_t *o = a->data ? json_loads(a->data, 0, NULL) : NULL;
  struct px_jobspec spec;
  struct px_diag d;
  px_jobspec_init(&spec);
  if (!o || px_jobspec_from_json(json_object_get(o, "spec"), &spec, "spec.", &d)) {
    px_error("archive: job %llu unreadable, skipped", (unsigned long long)a->job_id);
    json_decref(o);
    return 0;
  }
  struct px_sjob *j = calloc(1, sizeof *j);
  int rc = j ? 0 : PX_ENOMEM;
  if (!rc) {
    j->id = a->job_id;
    j->array_task_id = PX_NONE;
    j->spec = spec;
    px_jobspec_init(&spec);
    j->part = PX_NONE;
    for (uint32_t k = 0; j->spec.partition && k < s->conf->npartitions; k++)
      if (!strcmp(s->conf->partitions[k].name, j->spec.partition)) j->part = k;
    j->state = PX_JOB_FAILED;
    px_job_state_parse(json_string_value(json_object_get(o, "state")), &j->state);
    j->requeued = json_is_true(json_object_get(o, "requeued"));
    const char *reason = json_string_value(json_object_get(o, "reason"));
    snprintf(j->reason, sizeof j->reason, "%s", reason ? reason : "");
    j->priority = (uint32_t)geti(o, "priority");
    j->submit = geti(o, "submit"), j->eligible = geti(o, "eligible");
    j->start = geti(o, "start"), j->end = geti(o, "end");
    j->time_limit_s = geti(o, "time_limit_s");
    j->exit_code = (int32_t)geti(o, "exit_code"), j->term_signal = (int32_t)geti(o, "term_signal");
    j->restarts = (uint32_t)geti(o, "restarts");
    j->peak_mem_mib = (uint64_t)geti(o, "peak_mem_mib");
    j->cpu_time_ms = (uint64_t)geti(o, "cpu_time_ms");
    j->mseq = (uint64_t)geti(o, "mseq");
    const char *by = json_string_value(json_object_get(o, "cancelled_by"));
    if (by && !(j->cancelled_by = strdup(by))) rc = PX_ENOMEM;
    load_array(j, o);
    if (!rc) rc = load_alloc(s, j, json_object_get(o, "alloc"));
    if (!rc) rc = px_archive_attempts_load(s, j->id, o);
    if (!rc && s->narch == s->arch_cap) {
      size_t cap = s->arch_cap ? s->arch_cap * 2 : 1024;
      struct px_sjob **v = realloc(s->arch, cap * sizeof *v);
      if (v) s->arch = v, s->arch_cap = cap;
      else rc = PX_ENOMEM;
    }
  }
  if (!rc) {
    s->arch[s->narch++] = j;
    uint64_t next = j->id + 1 + (px_sjob_is_array(j) ? j->arr_ntasks : 0); /* ids it reserved */
    if (next > s->next_job_id) s->next_job_id = next;
    if (j->mseq > s->seq) s->seq = j->mseq;
  } else if (j) {
    px_jobspec_fini(&j->spec);
    free(j->alloc);
    free(j->cancelled_by);
    free(j);
  }
  px_jobspec_fini(&spec);
  json_decref(o);
  return rc;
}

int px_archive_load(struct px_server *s) { return px_store_archive_replay(s->store, load_one, s); }

/* The loaded archive is in id order: found by bisection; taken out of it
 * with a move of those after it (a requeue of an archived job is rare). */
int px_archive_revive(struct px_server *s, uint64_t job_id) {
  size_t lo = 0, hi = s->narch;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->arch[mid]->id < job_id) lo = mid + 1;
    else hi = mid;
  }
  if (lo == s->narch || s->arch[lo]->id != job_id) return 0;
  struct px_sjob *j = s->arch[lo];
  int rc = px_jobs_insert(s, j);
  if (rc) return rc == PX_EEXIST ? 0 : rc; /* in the table already: the merge keeps that one */
  memmove(&s->arch[lo], &s->arch[lo + 1], (s->narch - lo - 1) * sizeof *s->arch);
  s->narch--;
  size_t runs = 0; /* its own cursor: the merge's then skips the runs of a job it no longer holds */
  px_archive_charge(s, j, &runs); /* as the merge would have: its runs before the requeue */
  px_info("recovery: job %llu was requeued after its checkpoint: its archived record goes on",
          (unsigned long long)job_id);
  return 0;
}

/* After the journal's replay: the archived jobs join the table in id order
 * (and each of their runs is charged to fair share, after the live jobs'
 * replay so that it decays from each association's latest time). */
int px_archive_merge(struct px_server *s) {
  size_t n = s->njobs + s->narch, a = 0, b = 0, k = 0, runs = 0;
  if (!s->narch) return 0;
  struct px_sjob **v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return PX_ENOMEM;
  while (a < s->njobs || b < s->narch) {
    if (b == s->narch || (a < s->njobs && s->jobs[a]->id < s->arch[b]->id)) {
      v[k++] = s->jobs[a++];
    } else if (a < s->njobs && s->jobs[a]->id == s->arch[b]->id) {
      px_warn("archive: job %llu is also in the journal: the journal's record kept",
              (unsigned long long)s->arch[b]->id);
      struct px_sjob *j = s->arch[b++];
      px_jobspec_fini(&j->spec);
      free(j->alloc);
      free(j->cancelled_by);
      free(j);
    } else {
      px_archive_charge(s, s->arch[b], &runs);
      v[k++] = s->arch[b++];
    }
  }
  free(s->jobs);
  s->jobs = v;
  s->njobs = k;
  s->jobs_cap = n;
  free(s->arch);
  s->arch = NULL;
  s->narch = s->arch_cap = 0;
  px_archive_attempts_free(s);
  px_map_fini(&s->index);
  memset(&s->index, 0, sizeof s->index);
  for (size_t i = 0; i < k; i++)
    if (px_map_put(&s->index, s->jobs[i]->id, i)) return PX_ENOMEM;
  return 0;
}

void px_archive_free(struct px_server *s) {
  for (size_t i = 0; i < s->narch; i++) {
    struct px_sjob *j = s->arch[i];
    px_jobspec_fini(&j->spec);
    free(j->alloc);
    free(j->cancelled_by);
    free(j);
  }
  free(s->arch);
  s->arch = NULL;
  s->narch = s->arch_cap = 0;
  px_archive_attempts_free(s);
  px_u64vec_fini(&s->arch_wait);
}
