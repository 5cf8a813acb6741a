/*
 * metrics.c - time series and end-of-run figures of a simulation (metrics.h).
 */
#include "sim/metrics.h"

#include <stdlib.h>
#include <string.h>

int px_sim_series_init(struct px_sim_series *s, uint32_t nbuckets, uint32_t nchannels, int64_t t0_s,
                       int64_t width_s) {
  memset(s, 0, sizeof *s);
  s->v = calloc((size_t)nbuckets * nchannels, sizeof *s->v);
  if (!s->v) return PX_ENOMEM;
  s->nbuckets = nbuckets & ~1u; /* even, so buckets merge in pairs */
  s->nchannels = nchannels;
  s->t0_s = t0_s;
  s->width_s = width_s > 0 ? width_s : 1;
  return 0;
}

void px_sim_series_fini(struct px_sim_series *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}

/* Halves the resolution: bucket b becomes buckets 2b and 2b+1. */
static void series_merge(struct px_sim_series *s) {
  uint32_t nc = s->nchannels, half = s->nbuckets / 2;
  for (uint32_t b = 0; b < half; b++) {
    for (uint32_t c = 0; c < nc; c++)
      s->v[(size_t)b * nc + c] = s->v[(size_t)2 * b * nc + c] + s->v[(size_t)(2 * b + 1) * nc + c];
  }
  memset(s->v + (size_t)half * nc, 0, (size_t)(s->nbuckets - half) * nc * sizeof *s->v);
  s->width_s *= 2;
  s->used = (s->used + 1) / 2;
}

void px_sim_series_add(struct px_sim_series *s, uint32_t ch, int64_t from_s, int64_t to_s, int64_t level) {
  if (to_s <= from_s || level == 0 || from_s < s->t0_s) return;
  while (to_s - s->t0_s > s->width_s * (int64_t)s->nbuckets) series_merge(s);
  int64_t w = s->width_s;
  for (int64_t t = from_s; t < to_s;) {
    int64_t b = (t - s->t0_s) / w;
    int64_t bend = s->t0_s + (b + 1) * w;
    int64_t upto = to_s < bend ? to_s : bend;
    s->v[(size_t)b * s->nchannels + ch] += level * (upto - t);
    if ((uint32_t)b + 1 > s->used) s->used = (uint32_t)b + 1;
    t = upto;
  }
}

const char *px_sim_size_name(int cls) {
  static const char *const n[PX_SIM_NSIZE] = {"all", "1", "2-8", "9-64", ">64"};
  return cls >= 0 && cls < PX_SIM_NSIZE ? n[cls] : "?";
}

int px_sim_size_class(uint32_t gpus) {
  if (gpus <= 1) return PX_SIM_SIZE_1;
  if (gpus <= 8) return PX_SIM_SIZE_2_8;
  if (gpus <= 64) return PX_SIM_SIZE_9_64;
  return PX_SIM_SIZE_65UP;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

void px_sim_sort_i64(int64_t *v, size_t n) { qsort(v, n, sizeof *v, cmp_i64); }

/* Nearest rank: the p-th percentile of n sorted values is v[ceil(p n / 100) - 1]. */
int64_t px_sim_rank(const int64_t *v, size_t n, unsigned p) {
  if (!n) return 0;
  size_t k = (p * n + 99) / 100;
  return v[k ? k - 1 : 0];
}

static void dist_of(struct px_sim_dist *d, struct px_i64vec *v) {
  memset(d, 0, sizeof *d);
  if (!v->len) return;
  px_sim_sort_i64(v->v, v->len);
  int64_t sum = 0;
  for (size_t i = 0; i < v->len; i++) sum += v->v[i];
  d->n = v->len;
  d->avg_s = (double)sum / (double)v->len;
  d->p50_s = px_sim_rank(v->v, v->len, 50);
  d->p95_s = px_sim_rank(v->v, v->len, 95);
  d->p99_s = px_sim_rank(v->v, v->len, 99);
  d->max_s = v->v[v->len - 1];
}

/* Collects JCT and waiting times per size class (index 0: all). */
static int collect(struct px_sim_result *r, const struct px_sim_setup *s, const struct px_sim_jobrun *runs,
                   struct px_i64vec *jct, struct px_i64vec *wait) {
  for (uint32_t i = 0; i < s->njobs; i++) {
    const struct px_sim_jobrun *u = &runs[i];
    if (u->state != PX_SIMJ_DONE) continue;
    const struct px_sim_job *j = &s->jobs[i];
    int cls = px_sim_size_class(j->gpus);
    int64_t c = u->end_s - j->submit_s, w = u->start_s - j->submit_s;
    if (px_i64vec_push(&jct[0], c) || px_i64vec_push(&jct[cls], c) || px_i64vec_push(&wait[0], w) ||
        px_i64vec_push(&wait[cls], w))
      return PX_ENOMEM;
    r->gpu_s_jobs += (int64_t)j->gpus * (u->end_s - u->start_s);
    if (u->end_s > r->last_end_s) r->last_end_s = u->end_s;
  }
  return 0;
}

/* Per-account GPU-seconds, fair shares (raw shares of the accounts, normalised) and Jain's index. */
static int fairness(struct px_sim_result *r, const struct px_sim_setup *s, const struct px_sim_jobrun *runs) {
  uint32_t na = s->naccounts;
  r->naccounts = na;
  r->acct_gpu_s = calloc(na + 1, sizeof *r->acct_gpu_s);
  r->acct_fair = calloc(na + 1, sizeof *r->acct_fair);
  r->acct_wait_avg_s = calloc(na + 1, sizeof *r->acct_wait_avg_s);
  r->acct_jobs = calloc(na + 1, sizeof *r->acct_jobs);
  double *ratio = calloc(na + 1, sizeof *ratio);
  uint64_t *njob = r->acct_jobs;
  if (!r->acct_gpu_s || !r->acct_fair || !ratio || !njob || !r->acct_wait_avg_s) {
    free(ratio);
    return PX_ENOMEM;
  }
  double shares = 0;
  for (uint32_t a = 0; a < na; a++) {
    const struct px_conf_account *u = &s->conf->accounts[s->account_assoc[a]];
    r->acct_fair[a] = u->parent == PX_NONE ? 1 : s->conf->accounts[u->parent].fairshare;
    shares += r->acct_fair[a];
  }
  for (uint32_t a = 0; a < na; a++) r->acct_fair[a] = shares > 0 ? r->acct_fair[a] / shares : 0;
  for (uint32_t i = 0; i < s->njobs; i++) {
    const struct px_sim_job *j = &s->jobs[i];
    if (runs[i].state != PX_SIMJ_DONE) continue;
    int64_t run = runs[i].end_s - runs[i].start_s, jct = runs[i].end_s - j->submit_s;
    r->acct_gpu_s[j->account] += (int64_t)j->gpus * run;
    ratio[j->account] += jct > 0 ? (double)run / (double)jct : 1.0;
    r->acct_wait_avg_s[j->account] += (double)(runs[i].start_s - j->submit_s);
    njob[j->account]++;
  }
  for (uint32_t a = 0; a < na; a++)
    if (njob[a]) r->acct_wait_avg_s[a] /= (double)njob[a];
  double sx = 0, sxx = 0;
  uint32_t n = 0;
  for (uint32_t a = 0; a < na; a++) {
    if (!njob[a]) continue;
    double x = ratio[a] / (double)njob[a];
    sx += x;
    sxx += x * x;
    n++;
  }
  r->jain = n && sxx > 0 ? sx * sx / ((double)n * sxx) : 1.0;
  free(ratio);
  return 0;
}

static void cdf_of(struct px_sim_result *r, const struct px_i64vec *sorted) {
  for (int k = 0; k <= PX_SIM_CDF_POINTS; k++) {
    if (!sorted->len) break;
    size_t idx = (size_t)((uint64_t)k * (sorted->len - 1) / PX_SIM_CDF_POINTS);
    r->jct_cdf_s[k] = sorted->v[idx];
  }
}

int px_sim_result_compute(struct px_sim_result *r, const struct px_sim_setup *s,
                          const struct px_sim_jobrun *runs) {
  struct px_i64vec jct[PX_SIM_NSIZE] = {{0}}, wait[PX_SIM_NSIZE] = {{0}};
  r->gpu_s_jobs = 0;
  r->last_end_s = r->first_submit_s;
  int rc = collect(r, s, runs, jct, wait);
  if (!rc) rc = fairness(r, s, runs);
  if (!rc) rc = px_sim_acct_compute(r, s, runs);
  if (!rc) {
    for (int c = 0; c < PX_SIM_NSIZE; c++) {
      dist_of(&r->jct[c], &jct[c]);
      dist_of(&r->wait[c], &wait[c]);
    }
    cdf_of(r, &jct[0]);
    r->makespan_s = r->last_end_s - r->first_submit_s;
    r->gpu_s_busy = 0;
    for (uint32_t b = 0; b < r->series.used; b++)
      r->gpu_s_busy += r->series.v[(size_t)b * r->series.nchannels + PX_SIM_CH_BUSY];
    r->util_avg = r->makespan_s > 0 && s->total_gpus
                      ? (double)r->gpu_s_busy / ((double)s->total_gpus * (double)r->makespan_s)
                      : 0;
    r->conserved = r->gpu_s_busy == r->gpu_s_jobs + r->gpu_s_lost + r->gpu_s_lost_fail + r->gpu_s_ckpt_kept &&
                   r->done + r->rejected == r->submitted && r->stuck == 0;
  }
  for (int c = 0; c < PX_SIM_NSIZE; c++) {
    px_i64vec_fini(&jct[c]);
    px_i64vec_fini(&wait[c]);
  }
  return rc;
}

void px_sim_result_fini(struct px_sim_result *r) {
  free(r->acct_gpu_s);
  free(r->acct_fair);
  free(r->acct_wait_avg_s);
  free(r->acct_jobs);
  px_sim_acct_fini(r);
  px_sim_series_fini(&r->series);
  memset(r, 0, sizeof *r);
}
