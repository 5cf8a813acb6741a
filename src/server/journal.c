/*
 * journal.c - every change to the server state is a journal record, applied
 * by one function both live and at recovery, so the state after a restart is
 * the same fold of the same records.
 *
 * Live, a handler first asks the core (which may refuse: nothing is
 * recorded then), then calls px_journal_add(), which appends the record to
 * the group-commit batch and applies it to the job and node tables. At
 * recovery px_journal_apply(replay=true) also replays the core events: a
 * "start" puts the job back RUNNING on the record's exact allocation
 * (px_core_job_restore), an "end" or "requeue" is reported as live, so the
 * core's state after replay is the live one. Only when the core cannot take
 * an allocation back (the configuration changed) is the job kept out of the
 * core, its nodes held drained until it ends (server.c,
 * docs/operations.md "Recovery").
 *
 * Records (kind, job id, subject, data):
 *   submit  J  -     {"spec":{...},"ids":N}          N ids from J (arrays)
 *   cancel  J  user  {"signal":S}
 *   hold / release J {"admin":bool}
 *   update  J  -     {"nice":..,"time_limit_s":..,"priority":..}
 *   start   J  -     {"alloc":[{"node":"n01","ncpu":4,"gpus":[0,1],"mem_mib":M}],
 *                     "time_limit_s":T,"array_job_id":A,"array_task_id":K}
 *   end     J  -     {"state":"COMPLETED","exit_code":0,"term_signal":0,...}
 *   requeue J  -     {"hold":bool,"reason":"NODE_FAIL"}
 *   reject  J  -     {"reason":"..."}
 *   drain / resume / down / up  0  node  {"reason":"..."}
 *   part_down / part_up  0  partition  {"reason":"..."}
 *   resv    0  name  the canonical body of POST /v1/reservations (resv.c)
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "proto/jobspec_json.h"
#include "server/state.h"
#include "util/log.h"

int px_journal_add(struct px_server *s, const char *kind, uint64_t job_id, const char *subject,
                   char *data, int64_t now) {
  struct px_store_rec r = {0, now, kind, job_id, subject, data};
  int rc = px_commit_append(s, &r);
  return rc ? rc : px_journal_apply(s, &r, false);
}

int px_journal_add_submit(struct px_server *s, uint64_t job_id, uint64_t nids,
                          struct px_jobspec *spec, char *data, int64_t now) {
  struct px_store_rec r = {0, now, "submit", job_id, NULL, data};
  int rc = px_commit_append(s, &r);
  struct px_sjob *j = rc ? NULL : px_jobs_add(s, job_id, spec);
  if (!j) {
    px_jobspec_fini(spec);
    return rc ? rc : PX_ENOMEM;
  }
  j->submit = now;
  j->eligible = j->spec.begin_s > now ? j->spec.begin_s : now;
  j->mseq = r.seq;
  if (px_sjob_is_array(j)) j->arr_ntasks = (uint32_t)(nids - 1);
  if (job_id + nids > s->next_job_id) s->next_job_id = job_id + nids;
  return 0;
}

/* The accounting rows of the jobs that ended go with the records (commit.c). */
int px_journal_sync(struct px_server *s) { return px_commit_sync(s); }

int px_journal_commit(struct px_server *s) {
  if (!px_commit_open(s) && !s->acct_pending.len) return 0;
  return px_journal_sync(s);
}

/* ---- applying records ---- */

static struct px_sjob *job_of(struct px_server *s, const struct px_store_rec *r) {
  struct px_sjob *j = px_jobs_find(s, r->job_id);
  if (!j) px_warn("journal seq %llu (%s): unknown job %llu", (unsigned long long)r->seq, r->kind,
                  (unsigned long long)r->job_id);
  return j;
}

static int apply_submit(struct px_server *s, const struct px_store_rec *r, json_t *o,
                        bool replay) {
  struct px_jobspec spec;
  struct px_diag d;
  px_jobspec_init(&spec);
  if (px_jobspec_from_json(json_object_get(o, "spec"), &spec, "spec.", &d)) {
    px_error("journal seq %llu: bad spec: %s", (unsigned long long)r->seq, d.msg);
    return PX_EPROTO;
  }
  uint64_t ids = (uint64_t)json_integer_value(json_object_get(o, "ids"));
  if (replay) {
    enum px_reason why = PX_REASON_NONE;
    int rc = px_core_submit(s->core, r->job_id, &spec, r->time, &why, &d);
    if (rc) px_warn("recovery: job %llu no longer accepted: %s", (unsigned long long)r->job_id,
                    d.msg);
    if (rc) ids = ids ? ids : 1;
    struct px_sjob *j = px_jobs_add(s, r->job_id, &spec);
    if (!j) return PX_ENOMEM;
    j->submit = r->time;
    j->eligible = spec.begin_s > r->time ? spec.begin_s : r->time;
    j->mseq = r->seq;
    if (rc) {
      j->state = PX_JOB_FAILED;
      j->end = r->time;
      snprintf(j->reason, sizeof j->reason, "%s", "InvalidOnRecovery");
    }
  } else {
    struct px_sjob *j = px_jobs_add(s, r->job_id, &spec);
    if (!j) return PX_ENOMEM;
    j->submit = r->time;
    j->eligible = j->spec.begin_s > r->time ? j->spec.begin_s : r->time;
    j->mseq = r->seq;
  }
  struct px_sjob *j = px_jobs_find(s, r->job_id);
  if (j && px_sjob_is_array(j) && ids > 1) j->arr_ntasks = (uint32_t)(ids - 1);
  uint64_t next = r->job_id + (ids ? ids : 1);
  if (next > s->next_job_id) s->next_job_id = next;
  return 0;
}

/* Replay of a start: the core runs the job on its allocation again; when it
 * cannot, the job is kept out of it (recovered: nodes held drained). */
static void restore_in_core(struct px_server *s, struct px_sjob *j, uint64_t array_job_id,
                            int64_t time) {
  struct px_alloc *a = calloc(j->nalloc ? j->nalloc : 1, sizeof *a);
  struct px_diag d;
  px_diag_clear(&d);
  for (uint32_t i = 0; a && i < j->nalloc; i++)
    a[i] = (struct px_alloc){j->alloc[i].node, j->alloc[i].ncpu, j->alloc[i].gpus,
                             j->alloc[i].mem_mib, 0, 0};
  int rc = a ? px_core_job_restore(s->core, j->id, array_job_id, a, j->nalloc, j->time_limit_s,
                                   time, &d)
             : PX_ENOMEM;
  free(a);
  j->recovered = rc != 0;
  j->skipped = false;
  if (!rc) return;
  px_warn("recovery: job %llu runs outside the scheduler, its nodes drained: %s",
          (unsigned long long)j->id, d.msg[0] ? d.msg : px_strerror(rc));
  /* A task's index stays used in its array, or a cycle would start the
   * same task id again while this one runs (px_core_array_skip). */
  if (array_job_id && px_core_array_skip(s->core, array_job_id, j->id, time, NULL) == 0) {
    j->skipped = true;
    return;
  }
  px_core_cancel(s->core, j->id, time, NULL);
}

static int apply_start(struct px_server *s, const struct px_store_rec *r, json_t *o,
                       bool replay) {
  struct px_sjob *j = px_jobs_find(s, r->job_id);
  uint64_t array_job_id = (uint64_t)json_integer_value(json_object_get(o, "array_job_id"));
  if (!j && array_job_id) {
    /* An array task starting: its record is born from the array's spec. */
    struct px_sjob *parent = px_jobs_find(s, array_job_id);
    struct px_jobspec spec;
    if (!parent || px_jobspec_copy(&spec, &parent->spec)) return PX_ENOMEM;
    free(spec.array);
    spec.array = NULL;
    j = px_jobs_add(s, r->job_id, &spec);
    if (!j) return PX_ENOMEM;
    j->array_job_id = array_job_id;
    j->array_task_id = (uint32_t)json_integer_value(json_object_get(o, "array_task_id"));
    j->submit = parent->submit;
    j->eligible = parent->eligible;
    if (!parent->arr_started++) parent->start = r->time;
  }
  if (!j) return job_of(s, r) ? 0 : PX_ENOENT;
  json_t *alloc = json_object_get(o, "alloc");
  size_t n = json_array_size(alloc);
  struct px_sjob_node *a = calloc(n ? n : 1, sizeof *a);
  if (!a) return PX_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    json_t *e = json_array_get(alloc, i), *g;
    size_t k;
    int idx = px_node_index(s, json_string_value(json_object_get(e, "node")));
    a[i].node = idx < 0 ? 0 : (uint32_t)idx;
    a[i].ncpu = (uint32_t)json_integer_value(json_object_get(e, "ncpu"));
    a[i].mem_mib = (uint64_t)json_integer_value(json_object_get(e, "mem_mib"));
    json_array_foreach(json_object_get(e, "gpus"), k, g) a[i].gpus |= 1ull << (json_integer_value(g) & 63);
  }
  free(j->alloc);
  j->alloc = a;
  j->nalloc = (uint32_t)n;
  j->state = PX_JOB_RUNNING;
  j->requeued = false;
  j->start = r->time;
  j->end = 0;
  j->time_limit_s = json_integer_value(json_object_get(o, "time_limit_s"));
  snprintf(j->reason, sizeof j->reason, "None");
  if (replay) restore_in_core(s, j, array_job_id, r->time);
  return 0;
}

static int apply_end(struct px_server *s, const struct px_store_rec *r, json_t *o, bool replay) {
  struct px_sjob *j = job_of(s, r);
  if (!j) return 0;
  enum px_job_state st = PX_JOB_FAILED;
  px_job_state_parse(json_string_value(json_object_get(o, "state")), &st);
  int32_t exit_code = (int32_t)json_integer_value(json_object_get(o, "exit_code"));
  if (replay && j->state == PX_JOB_PENDING) px_core_cancel(s->core, j->id, r->time, NULL);
  if (replay && j->state == PX_JOB_RUNNING && px_sjob_in_core(j))
    px_core_job_ended(s->core, j->id, st, exit_code, r->time, NULL);
  if (replay) j->recovered = j->skipped = false;
  j->state = st;
  j->end = r->time;
  j->exit_code = exit_code;
  j->term_signal = (int32_t)json_integer_value(json_object_get(o, "term_signal"));
  j->peak_mem_mib = (uint64_t)json_integer_value(json_object_get(o, "peak_mem_mib"));
  j->cpu_time_ms = (uint64_t)json_integer_value(json_object_get(o, "cpu_time_ms"));
  const char *reason = json_string_value(json_object_get(o, "reason"));
  snprintf(j->reason, sizeof j->reason, "%s", reason ? reason : "None");
  return 0;
}

static int apply_requeue(struct px_server *s, const struct px_store_rec *r, json_t *o,
                         bool replay) {
  struct px_sjob *j = job_of(s, r);
  if (!j) return 0;
  bool hold = json_is_true(json_object_get(o, "hold"));
  if (replay && j->state == PX_JOB_RUNNING && px_sjob_in_core(j)) {
    px_core_job_requeue(s->core, j->id, hold, r->time, NULL);
    j->recovered = j->skipped = false;
  } else if (replay && j->recovered) {
    /* Kept out of the core at its start (restore_in_core): queue it again. */
    j->recovered = false;
    enum px_reason why;
    struct px_jobspec spec;
    if (px_jobspec_copy(&spec, &j->spec)) return PX_ENOMEM;
    spec.hold = hold;
    if (px_core_submit(s->core, j->id, &spec, j->submit, &why, NULL))
      px_warn("recovery: requeued job %llu refused by the core", (unsigned long long)j->id);
    px_jobspec_fini(&spec);
  }
  j->state = PX_JOB_PENDING;
  j->requeued = true;
  j->restarts++;
  j->start = j->end = 0;
  free(j->alloc);
  j->alloc = NULL;
  j->nalloc = 0;
  const char *reason = json_string_value(json_object_get(o, "reason"));
  snprintf(j->reason, sizeof j->reason, "%s", reason ? reason : "BeginTime");
  return 0;
}

/* A job that ended without running (cancelled while pending, rejected) has
 * its accounting row too, as sacct shows it; live, it is written in the
 * same transaction as the record (commit.c take_acct), so replay finds it. */
static int ended_unstarted(struct px_server *s, const struct px_sjob *j, bool replay) {
  return replay ? 0 : px_u64vec_push(&s->acct_pending, j->id);
}

static int apply_job_misc(struct px_server *s, const struct px_store_rec *r, json_t *o,
                          bool replay) {
  struct px_sjob *j = job_of(s, r);
  if (!j) return 0;
  bool admin = json_is_true(json_object_get(o, "admin"));
  if (!strcmp(r->kind, "cancel")) {
    free(j->cancelled_by);
    j->cancelled_by = r->subject ? strdup(r->subject) : NULL;
    if (px_sjob_is_array(j)) { /* the remainder; its tasks have their own records */
      if (replay && j->state == PX_JOB_PENDING) px_core_cancel(s->core, j->id, r->time, NULL);
      j->arr_cancelled = true;
      px_jobs_array_fold(s, j, r->time);
    } else if (j->state == PX_JOB_PENDING) {
      if (replay) px_core_cancel(s->core, j->id, r->time, NULL);
      j->state = PX_JOB_CANCELLED;
      j->end = r->time;
      return ended_unstarted(s, j, replay);
    }
  } else if (!strcmp(r->kind, "hold")) {
    if (replay) px_core_hold(s->core, j->id, admin, r->time, NULL);
    snprintf(j->reason, sizeof j->reason, admin ? "JobHeldAdmin" : "JobHeldUser");
  } else if (!strcmp(r->kind, "release")) {
    if (replay) px_core_release(s->core, j->id, admin, r->time, NULL);
    snprintf(j->reason, sizeof j->reason, "Priority");
  } else if (!strcmp(r->kind, "update")) {
    struct px_job_update u = {0};
    json_t *v;
    if ((v = json_object_get(o, "nice"))) u.fields |= PX_UPD_NICE, u.nice = (int32_t)json_integer_value(v);
    if ((v = json_object_get(o, "time_limit_s")))
      u.fields |= PX_UPD_TIME_LIMIT, u.time_limit_s = json_integer_value(v);
    if ((v = json_object_get(o, "priority")))
      u.fields |= PX_UPD_PRIORITY, u.priority = (uint32_t)json_integer_value(v);
    if (replay) px_core_update(s->core, j->id, &u, r->time, NULL);
    if (u.fields & PX_UPD_NICE) j->spec.nice = u.nice;
    if (u.fields & PX_UPD_TIME_LIMIT) j->spec.time_limit_s = u.time_limit_s;
  } else if (!strcmp(r->kind, "reject")) {
    if (replay) px_core_cancel(s->core, j->id, r->time, NULL);
    const char *reason = json_string_value(json_object_get(o, "reason"));
    j->state = PX_JOB_FAILED;
    j->end = r->time;
    snprintf(j->reason, sizeof j->reason, "%s", reason ? reason : "Rejected");
    return ended_unstarted(s, j, replay);
  }
  return 0;
}

static int apply_node(struct px_server *s, const struct px_store_rec *r, json_t *o, bool replay) {
  int idx = px_node_index(s, r->subject);
  if (idx < 0) return 0;
  struct px_snode *n = &s->nodes[idx];
  const char *reason = json_string_value(json_object_get(o, "reason"));
  enum px_node_event ev = PX_NODE_EV_UP;
  if (!strcmp(r->kind, "drain")) {
    ev = PX_NODE_EV_DRAIN;
    n->admin_drain = true;
  } else if (!strcmp(r->kind, "resume")) {
    ev = PX_NODE_EV_RESUME;
    n->admin_drain = false;
    n->down = false;
  } else if (!strcmp(r->kind, "down")) {
    ev = PX_NODE_EV_DOWN;
    n->down = true;
  } else {
    n->down = false;
  }
  snprintf(n->reason, sizeof n->reason, "%s", reason ? reason : "");
  if (replay) px_core_node_event(s->core, (uint32_t)idx, ev, reason, r->time, NULL);
  s->nodes_dirty = true;
  return 0;
}

/* A partition set DOWN or UP: live, the handler told the core first. */
static int apply_part(struct px_server *s, const struct px_store_rec *r, bool replay) {
  int idx = px_partition_index(s, r->subject);
  if (idx >= 0 && replay) px_core_partition_set_up(s->core, (uint32_t)idx, !strcmp(r->kind, "part_up"));
  s->nodes_dirty = true;
  return 0;
}

/* A reservation made through the API: live, the handler applied it first
 * (resv.c); at replay it goes to the core again. */
static int apply_resv(struct px_server *s, const struct px_store_rec *r, json_t *o, bool replay) {
  struct px_diag d;
  px_diag_clear(&d);
  if (replay && px_resv_apply(s, o, r->time, &d))
    px_warn("recovery: reservation %s not restored: %s", r->subject ? r->subject : "?", d.msg);
  return 0;
}

/* A task's record was born (started) or ended: its array's record follows. */
static void array_task_changed(struct px_server *s, const struct px_sjob *t, int64_t now) {
  struct px_sjob *a = px_jobs_find(s, t->array_job_id);
  if (!a) return;
  bool was_over = px_job_state_terminal(a->state);
  if (px_job_state_terminal(t->state)) {
    a->arr_ended++;
    a->arr_failed += t->state != PX_JOB_COMPLETED || t->exit_code != 0;
  }
  px_jobs_array_fold(s, a, now);
  if (!was_over && px_job_state_terminal(a->state)) px_archive_note(s, a); /* all its tasks ended */
}

int px_journal_apply(struct px_server *s, const struct px_store_rec *r, bool replay) {
  json_t *o = r->data ? json_loads(r->data, 0, NULL) : json_object();
  if (!o) {
    px_error("journal seq %llu: unreadable data", (unsigned long long)r->seq);
    return PX_EPROTO;
  }
  int rc = 0;
  const char *k = r->kind;
  struct px_sjob *before = r->job_id ? px_jobs_find(s, r->job_id) : NULL;
  bool was_over = before && px_job_state_terminal(before->state);
  if (!strcmp(k, "submit"))
    rc = apply_submit(s, r, o, replay);
  else if (!strcmp(k, "start"))
    rc = apply_start(s, r, o, replay);
  else if (!strcmp(k, "end"))
    rc = apply_end(s, r, o, replay);
  else if (!strcmp(k, "requeue"))
    rc = apply_requeue(s, r, o, replay);
  else if (!strcmp(k, "drain") || !strcmp(k, "resume") || !strcmp(k, "down") || !strcmp(k, "up"))
    rc = apply_node(s, r, o, replay);
  else if (!strcmp(k, "resv"))
    rc = apply_resv(s, r, o, replay);
  else if (!strcmp(k, "part_down") || !strcmp(k, "part_up"))
    rc = apply_part(s, r, replay);
  else
    rc = apply_job_misc(s, r, o, replay);
  if (r->job_id) {
    struct px_sjob *j = px_jobs_find(s, r->job_id);
    if (j) {
      j->mseq = r->seq;
      px_jobs_touch(s, j);
      if (!was_over && px_job_state_terminal(j->state)) px_archive_note(s, j);
      bool born = !before, ended = !was_over && px_job_state_terminal(j->state);
      if (j->array_job_id && (born || ended)) array_task_changed(s, j, r->time);
    }
  }
  json_decref(o);
  return rc;
}

static int replay_one(void *ctx, const struct px_store_rec *r) {
  struct px_server *s = ctx;
  s->seq = r->seq;
  int rc = px_journal_apply(s, r, true);
  return rc == PX_ENOMEM ? rc : 0; /* a bad record is logged and skipped */
}

/* The archive of finished jobs (archive.c), then the journal of the live
 * ones, then both merged by id. */
int px_journal_recover(struct px_server *s, struct px_diag *d) {
  int rc = px_archive_load(s);
  uint64_t floor = s->seq; /* archived changes: seqs never go back */
  if (!rc) rc = px_store_replay(s->store, 0, replay_one, s);
  if (rc) return px_diag_set(d, rc, -1, "recovery: %s", s->store->errmsg);
  if ((rc = px_archive_merge(s))) return px_diag_set(d, rc, -1, "recovery: out of memory");
  uint64_t last = 0;
  if (!px_store_last_seq(s->store, &last) && last > s->seq) s->seq = last;
  if (floor > s->seq) s->seq = floor;
  atomic_store(&s->committed_seq, s->seq);
  return 0;
}
