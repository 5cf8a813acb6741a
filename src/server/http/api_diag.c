/*
 * api_diag.c - GET /v1/diag (what sdiag prints: loop/sdiag.c's statistics
 * plus the job counts of the snapshot) and POST /v1/diag/reset (sdiag -r,
 * operators only, as Slurm's).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/api.h"
#include "server/http/slurmrestd.h"
#include "server/tables.h"

/* Jobs submitted, started and ended since the statistics began, and those
 * pending and running now (snapshot: the jobs not yet archived). */
static json_t *job_counts(struct px_server *s, int64_t since) {
  uint64_t submitted = 0, started = 0, completed = 0, cancelled = 0, failed = 0, pending = 0,
           running = 0;
  struct px_snap *snap = px_api_snap_fresh(s);
  for (size_t i = 0; i < snap->njobs; i++) {
    const struct px_job_info *j = &snap->jobs[i]->info;
    if (j->array_job_id == j->job_id && j->spec.array) continue; /* its tasks count */
    submitted += j->submit_time >= since;
    started += j->start_time >= since;
    pending += !strcmp(j->state, "PENDING");
    running += !strcmp(j->state, "RUNNING") || !strcmp(j->state, "COMPLETING");
    if (!j->end_time || j->end_time < since) continue;
    if (!strcmp(j->state, "COMPLETED")) completed++;
    else if (!strcmp(j->state, "CANCELLED")) cancelled++;
    else failed++;
  }
  px_snap_release(snap);
  return json_pack("{sI sI sI sI sI sI sI}", "submitted", (json_int_t)submitted, "started",
                   (json_int_t)started, "completed", (json_int_t)completed, "cancelled",
                   (json_int_t)cancelled, "failed", (json_int_t)failed, "pending",
                   (json_int_t)pending, "running", (json_int_t)running);
}

/* The whole document, shared with slurmrestd's diag (slurmrestd_cluster.c). */
json_t *px_api_diag_json(struct px_server *s) {
  int64_t now = time(NULL);
  json_t *o = px_sdiag_json(s->sdiag, now);
  if (!o) return NULL;
  int64_t since = json_integer_value(json_object_get(o, "since"));
  json_object_set_new(o, "jobs", job_counts(s, since));
  json_object_set_new(o, "server_thread_count", json_integer(1));
  json_object_set_new(o, "agent_queue_size", json_integer(0));
  json_object_set_new(o, "start_time",
                      json_integer(now - (px_now_mono_ns() - s->start_mono_ns) / 1000000000LL));
  return o;
}

void px_api_diag(struct px_api_call *c) {
  json_t *o = px_api_diag_json(c->s);
  c->answer = o ? json_dumps(o, JSON_COMPACT) : NULL;
  c->status = c->answer ? 200 : 503;
  json_decref(o);
}

void px_api_diag_reset(struct px_api_call *c) {
  if (!(c->who.roles & PX_ROLE_OPERATOR))
    return px_api_error(c, 403, "FORBIDDEN", "diag reset: only operators may reset the statistics");
  px_sdiag_reset(c->s->sdiag, time(NULL));
  c->answer = strdup("{}");
  c->status = c->answer ? 200 : 503;
}
