/*
 * recorded.c - the recorded run as a result (recorded.h).
 *
 * Each runnable job ran from its recorded start to its recorded end (its
 * duration, checked by the trace reader): the series gets its GPUs over
 * that span and "pending" over its wait, then the same
 * px_sim_result_compute() as a replay, so every figure of the report means
 * the same thing in every column. A job the cluster requeued ran before
 * that too, once per earlier attempt (trace.h): those runs held their GPUs
 * (the series) for work the requeue threw away, so they count where a
 * replay counts its own preemptions' runs, as GPU time lost to preemption
 * (each one a preemption, whatever requeued it: a node failure, a
 * preemption, a requeue), and the job pends again from each requeue to
 * the next start. Its wait, as a replay's, runs to its last start; its
 * first start is the first attempt's.
 */
#include "sim/recorded.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct px_trace_job *tjob(const struct px_sim_setup *s, uint32_t i) {
  return &s->trace->jobs.v[s->jobs[i].trace_index];
}

/* A run of job j's GPUs over [start, end): busy, and its account's. */
static void record_run(struct px_sim_result *r, const struct px_sim_job *j, int64_t start_s, int64_t end_s) {
  px_sim_series_add(&r->series, PX_SIM_CH_BUSY, start_s, end_s, j->gpus);
  px_sim_series_add(&r->series, PX_SIM_CH_ACCOUNT + j->account, start_s, end_s, j->gpus);
}

static void record_job(struct px_sim_result *r, const struct px_sim_setup *s, uint32_t i,
                       struct px_sim_jobrun *u) {
  const struct px_sim_job *j = &s->jobs[i];
  const struct px_trace_job *t = tjob(s, i);
  const struct px_trace_attempt *a = px_trace_earlier(s->trace, t);
  int64_t pending_s = j->submit_s; /* since when it waits */
  for (uint32_t k = 0; k < t->nearlier; k++) {
    record_run(r, j, a[k].start_s, a[k].end_s);
    px_sim_series_add(&r->series, PX_SIM_CH_PENDING, pending_s, a[k].start_s, 1);
    r->gpu_s_lost += (int64_t)j->gpus * (a[k].end_s - a[k].start_s);
    r->preemptions++;
    pending_s = a[k].end_s;
  }
  *u = (struct px_sim_jobrun){.first_start_s = px_trace_first_start(s->trace, t), .start_s = t->start_s,
                              .end_s = t->end_s, .state = PX_SIMJ_DONE,
                              .npreempt = (uint16_t)(t->nearlier < UINT16_MAX ? t->nearlier : UINT16_MAX)};
  record_run(r, j, t->start_s, t->end_s);
  px_sim_series_add(&r->series, PX_SIM_CH_PENDING, pending_s, t->start_s, 1);
  r->submitted++;
  r->done++;
}

int px_sim_recorded(const struct px_sim_setup *s, struct px_sim_result *r, struct px_diag *d) {
  memset(r, 0, sizeof *r);
  px_diag_clear(d);
  snprintf(r->policy, sizeof r->policy, "%s", PX_SIM_RECORDED_NAME);
  for (uint32_t i = 0; i < s->njobs; i++) {
    if (tjob(s, i)->start_s < 0)
      return px_diag_set(d, PX_EINVAL, -1, "line %u: no recorded run (start_s, end_s): not an exported trace",
                         tjob(s, i)->line);
  }
  struct px_sim_jobrun *runs = malloc(((size_t)s->njobs + 1) * sizeof *runs);
  int64_t t0 = s->njobs ? s->jobs[0].submit_s : 0, span = s->njobs ? s->jobs[s->njobs - 1].submit_s - t0 : 0;
  if (!runs || px_sim_series_init(&r->series, PX_SIM_SERIES_BUCKETS, PX_SIM_CH_ACCOUNT + s->naccounts, t0,
                                  span / (PX_SIM_SERIES_BUCKETS / 2) + 1)) {
    free(runs);
    return PX_ENOMEM;
  }
  r->first_submit_s = t0;
  for (uint32_t i = 0; i < s->njobs; i++) {
    if (s->jobs[i].skip == PX_SIM_RUNS) record_job(r, s, i, &runs[i]);
    else runs[i] = (struct px_sim_jobrun){.first_start_s = -1, .start_s = -1, .end_s = -1, .state = PX_SIMJ_SKIPPED};
  }
  int rc = px_sim_result_compute(r, s, runs);
  free(runs);
  if (rc) px_sim_result_fini(r);
  return rc;
}

void px_sim_fidelity(const struct px_sim_setup *s, const struct px_sim_jobrun *runs, struct px_sim_fidelity *f) {
  double diff = 0, rec = 0;
  memset(f, 0, sizeof *f);
  for (uint32_t i = 0; i < s->njobs; i++) {
    const struct px_trace_job *t = tjob(s, i);
    if (runs[i].state != PX_SIMJ_DONE || t->start_s < 0) continue;
    int64_t first = px_trace_first_start(s->trace, t);
    int64_t w_rec = first - s->jobs[i].submit_s, w_sim = runs[i].first_start_s - s->jobs[i].submit_s;
    diff += (double)(w_sim > w_rec ? w_sim - w_rec : w_rec - w_sim);
    rec += (double)w_rec;
    f->jobs++;
  }
  if (f->jobs) {
    f->mean_abs_diff_s = diff / (double)f->jobs;
    f->mean_recorded_wait_s = rec / (double)f->jobs;
  }
}

int px_sim_fidelity_jobs(FILE *f, const struct px_sim_setup *s, const struct px_sim_jobrun *runs) {
  fprintf(f, "job_id,submit_s,gpus,nodes,queue,recorded_start_s,replayed_start_s,recorded_wait_s,replayed_wait_s,"
             "difference_s\n");
  for (uint32_t i = 0; i < s->njobs; i++) {
    const struct px_trace_job *t = tjob(s, i);
    if (runs[i].state != PX_SIMJ_DONE || t->start_s < 0) continue;
    int64_t sub = s->jobs[i].submit_s, first = px_trace_first_start(s->trace, t);
    int64_t w_rec = first - sub, w_sim = runs[i].first_start_s - sub;
    fprintf(f, "%s,%lld,%u,%u,%s,%lld,%lld,%lld,%lld,%lld\n", px_trace_id(s->trace, t), (long long)sub,
            s->jobs[i].gpus, s->jobs[i].nodes, px_trace_name(s->trace, t->queue), (long long)first,
            (long long)runs[i].first_start_s, (long long)w_rec, (long long)w_sim, (long long)(w_sim - w_rec));
  }
  return ferror(f) ? PX_EIO : 0;
}
