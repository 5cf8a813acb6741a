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

/* The jobs pending and running now (snapshot: the jobs not yet archived),
 * added to sdiag's counters of submitted, started and ended jobs. */
static void job_states(struct px_server *s, json_t *jobs, int64_t *states_ts) {
  uint64_t pending = 0, running = 0;
  struct px_snap *snap = px_api_snap_fresh(s);
  *states_ts = snap->time;
  for (size_t i = 0; i < snap->njobs; i++) {
    const struct px_job_info *j = &snap->jobs[i]->info;
    if (j->array_job_id == j->job_id && j->spec.array) continue; /* its tasks count */
    pending += !strcmp(j->state, "PENDING");
    running += !strcmp(j->state, "RUNNING") || !strcmp(j->state, "COMPLETING");
  }
  px_snap_release(snap);
  json_object_set_new(jobs, "pending", json_integer((json_int_t)pending));
  json_object_set_new(jobs, "running", json_integer((json_int_t)running));
}

/* Microseconds for 1000 reads of the clock, as sdiag reports
 * gettimeofday()'s: what a slow clock source costs every timestamp. */
static int64_t clock_latency_us(void) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < 1000; i++) clock_gettime(CLOCK_REALTIME, &t);
  clock_gettime(CLOCK_MONOTONIC, &t);
  return ((int64_t)(t.tv_sec - t0.tv_sec) * 1000000000 + (t.tv_nsec - t0.tv_nsec)) / 1000;
}

/* The whole document, shared with slurmrestd's diag (slurmrestd_cluster.c). */
json_t *px_api_diag_json(struct px_server *s) {
  int64_t now = time(NULL);
  json_t *o = px_sdiag_json(s->sdiag, now);
  if (!o) return NULL;
  int64_t states_ts = now;
  if (json_is_object(json_object_get(o, "jobs"))) job_states(s, json_object_get(o, "jobs"), &states_ts);
  json_object_set_new(o, "job_states_ts", json_integer(states_ts));
  json_object_set_new(o, "gettimeofday_latency_us", json_integer(clock_latency_us()));
  /* one main thread schedules; agents are reached by their own long polls,
   * so no agent queue or threads of slurmctld's kind exist */
  static const char *const one_or_zero[] = {"server_thread_count", "agent_queue_size",
                                            "agent_count", "agent_thread_count",
                                            "dbd_agent_queue_size"};
  for (size_t i = 0; i < sizeof one_or_zero / sizeof one_or_zero[0]; i++)
    json_object_set_new(o, one_or_zero[i], json_integer(i == 0));
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
