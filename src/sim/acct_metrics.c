/*
 * acct_metrics.c - what a policy changes for each account (metrics.h): the
 * p95 of its waits, the GPU-seconds its jobs held, lost and delivered, and
 * where it stood in the core's Fair Tree over the run.
 *
 * GPU-seconds come from the two exact sources the run already has: the
 * series' per-account integral of busy GPUs (every run of every job) and
 * the per-job times (the completed run, plus the work checkpoints kept from
 * earlier runs). What the account held beyond those two was lost to
 * preemption or GPU failures, so the per-account figures add up to the
 * run's conserved totals.
 *
 * The fair-share position is read from the core (px_core_share_get), never
 * recomputed here: the simulator shows the numbers the core ordered by.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "sim/metrics.h"

/* Each account's waits, grouped by a counting sort, then its nearest-rank p95. */
static int wait_p95(struct px_sim_result *r, const struct px_sim_setup *s, const struct px_sim_jobrun *runs) {
  uint32_t na = s->naccounts;
  size_t *at = calloc((size_t)na + 1, sizeof *at);
  int64_t *w = malloc(((size_t)s->njobs + 1) * sizeof *w);
  if (!at || !w) {
    free(at);
    free(w);
    return PX_ENOMEM;
  }
  for (uint32_t a = 0; a < na; a++) at[a + 1] = at[a] + r->acct_jobs[a];
  for (uint32_t i = 0; i < s->njobs; i++)
    if (runs[i].state == PX_SIMJ_DONE) w[at[s->jobs[i].account]++] = runs[i].start_s - s->jobs[i].submit_s;
  size_t from = 0;
  for (uint32_t a = 0; a < na; a++) { /* at[a] is now the end of account a's run of waits */
    size_t n = at[a] - from;
    px_sim_sort_i64(w + from, n);
    r->acct_wait_p95_s[a] = px_sim_rank(w + from, n, 95);
    from = at[a];
  }
  free(at);
  free(w);
  return 0;
}

/* Held from the series, delivered from the jobs, lost the difference. A
 * job's delivered work is its completed run without the checkpoint it
 * loaded first (the loop's restart cost, cut by a shorter run) plus what
 * checkpoints kept of its earlier runs: a job that completed delivers its
 * duration under every policy, and what preemption cost it (the work
 * thrown away, the loading) shows as lost. */
static void gpu_seconds(struct px_sim_result *r, const struct px_sim_setup *s, const struct px_sim_jobrun *runs) {
  const struct px_sim_series *ser = &r->series;
  for (uint32_t a = 0; a < s->naccounts && PX_SIM_CH_ACCOUNT + a < ser->nchannels; a++)
    for (uint32_t b = 0; b < ser->used; b++) r->acct_gpu_s_held[a] += ser->v[(size_t)b * ser->nchannels + PX_SIM_CH_ACCOUNT + a];
  for (uint32_t i = 0; i < s->njobs; i++) {
    const struct px_sim_job *j = &s->jobs[i];
    const struct px_sim_jobrun *u = &runs[i];
    if (u->state != PX_SIMJ_DONE || !u->saved_s) continue;
    int64_t run = u->end_s - u->start_s, loading = r->ckpt_restart_s < run ? r->ckpt_restart_s : run;
    r->acct_gpu_s_delivered[j->account] += (int64_t)j->gpus * (u->saved_s - loading);
  }
  for (uint32_t a = 0; a < s->naccounts; a++) {
    r->acct_gpu_s_delivered[a] += r->acct_gpu_s[a];
    r->acct_gpu_s_lost[a] = r->acct_gpu_s_held[a] - r->acct_gpu_s_delivered[a];
  }
}

void px_sim_fs_finish(struct px_sim_fs *fs, uint32_t na) {
  if (!fs->sampled) return;
  int64_t span = fs->last_s - fs->t0_s;
  for (uint32_t a = 0; a < na; a++) {
    int64_t sum = 0;
    for (uint32_t b = 0; b < fs->series.used; b++) sum += fs->series.v[(size_t)b * fs->series.nchannels + a];
    fs->factor_avg[a] = span > 0 ? (double)sum / PX_SIM_FS_SCALE / (double)span : fs->factor_end[a];
  }
}

int px_sim_acct_compute(struct px_sim_result *r, const struct px_sim_setup *s, const struct px_sim_jobrun *runs) {
  size_t n = (size_t)s->naccounts + 1;
  r->acct_wait_p95_s = calloc(n, sizeof *r->acct_wait_p95_s);
  r->acct_gpu_s_held = calloc(n, sizeof *r->acct_gpu_s_held);
  r->acct_gpu_s_lost = calloc(n, sizeof *r->acct_gpu_s_lost);
  r->acct_gpu_s_delivered = calloc(n, sizeof *r->acct_gpu_s_delivered);
  if (!r->acct_wait_p95_s || !r->acct_gpu_s_held || !r->acct_gpu_s_lost || !r->acct_gpu_s_delivered)
    return PX_ENOMEM;
  gpu_seconds(r, s, runs);
  /* the record has no core of its own: px_sim_fs_recorded gives its runs to one */
  px_sim_fs_finish(&r->fs, s->naccounts);
  return wait_p95(r, s, runs);
}

/* ---- fair-share samples ---------------------------------------------------- */

/* Each account's user association and account association among the share rows. */
static void fs_rows(struct px_sim_fs *fs, const struct px_sim_setup *s, const struct px_core *core) {
  for (uint32_t a = 0; a < s->naccounts; a++) fs->user_row[a] = fs->acct_row[a] = UINT32_MAX;
  size_t nrows = px_core_nshares(core);
  for (size_t row = 0; row < nrows; row++) {
    struct px_share_view v;
    if (px_core_share_get(core, row, &v)) continue;
    for (uint32_t a = 0; a < s->naccounts; a++) {
      uint32_t user = s->account_assoc[a];
      if (v.assoc == user) fs->user_row[a] = (uint32_t)row;
      else if (v.assoc == s->conf->accounts[user].parent) fs->acct_row[a] = (uint32_t)row;
    }
  }
}

static int fs_init(struct px_sim_result *r, const struct px_sim_setup *s, const struct px_core *core, int64_t t_s) {
  struct px_sim_fs *fs = &r->fs;
  size_t n = (size_t)s->naccounts + 1;
  fs->user_row = calloc(n, sizeof *fs->user_row);
  fs->acct_row = calloc(n, sizeof *fs->acct_row);
  fs->held = calloc(n, sizeof *fs->held);
  fs->factor_avg = calloc(n, sizeof *fs->factor_avg);
  fs->factor_end = calloc(n, sizeof *fs->factor_end);
  fs->level_end = calloc(n, sizeof *fs->level_end);
  if (!fs->user_row || !fs->acct_row || !fs->held || !fs->factor_avg || !fs->factor_end || !fs->level_end)
    return PX_ENOMEM;
  /* the same grid as the busy series, so the pictures line up */
  if (px_sim_series_init(&fs->series, PX_SIM_SERIES_BUCKETS, s->naccounts ? s->naccounts : 1, r->series.t0_s,
                         r->series.width_s))
    return PX_ENOMEM;
  fs_rows(fs, s, core);
  fs->sampled = true;
  fs->t0_s = fs->last_s = t_s;
  return 0;
}

static double row_value(const struct px_core *core, uint32_t row, bool level) {
  struct px_share_view v;
  if (row == UINT32_MAX || px_core_share_get(core, row, &v)) return NAN;
  return level ? v.level_fs : v.fairshare;
}

/* When the core cycled since the last sample, it ranked at t (the loop
 * samples after each instant's cycles): t joins the clock. */
static int note_ranked(struct px_sim_fs *fs, const struct px_core *core, int64_t t_s) {
  struct px_core_stats st;
  px_core_stats(core, &st);
  if (st.cycles == fs->core_cycles) return 0;
  fs->core_cycles = st.cycles;
  if (fs->ranked_s.len && fs->ranked_s.v[fs->ranked_s.len - 1] == t_s) return 0;
  return px_i64vec_push(&fs->ranked_s, t_s);
}

int px_sim_fs_sample(struct px_sim_result *r, const struct px_sim_setup *s, const struct px_core *core, int64_t t_s) {
  struct px_sim_fs *fs = &r->fs;
  int rc = fs->sampled ? 0 : fs_init(r, s, core, t_s);
  if (!rc) rc = note_ranked(fs, core, t_s);
  if (rc) return rc;
  for (uint32_t a = 0; a < s->naccounts; a++) px_sim_series_add(&fs->series, a, fs->last_s, t_s, fs->held[a]);
  fs->last_s = t_s;
  for (uint32_t a = 0; a < s->naccounts; a++) {
    double f = row_value(core, fs->user_row[a], false);
    fs->factor_end[a] = f;
    fs->held[a] = isfinite(f) ? llround(f * PX_SIM_FS_SCALE) : 0;
    fs->level_end[a] = row_value(core, fs->acct_row[a], true);
  }
  return 0;
}

void px_sim_acct_fini(struct px_sim_result *r) {
  free(r->acct_wait_p95_s);
  free(r->acct_gpu_s_held);
  free(r->acct_gpu_s_lost);
  free(r->acct_gpu_s_delivered);
  px_sim_fs_fini(&r->fs);
}

void px_sim_fs_fini(struct px_sim_fs *fs) {
  free(fs->user_row);
  free(fs->acct_row);
  free(fs->held);
  free(fs->factor_avg);
  free(fs->factor_end);
  free(fs->level_end);
  px_sim_series_fini(&fs->series);
  px_i64vec_fini(&fs->ranked_s);
  memset(fs, 0, sizeof *fs);
}
