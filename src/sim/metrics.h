/*
 * metrics.h - what one simulated run measures, and how it is collected.
 *
 * During the run the loop keeps per-job times (struct px_sim_jobrun) and
 * feeds a time series (struct px_sim_series) the piecewise-constant levels
 * between events: busy GPUs, pending jobs, and busy GPUs per account. The
 * series stores exact integrals (GPU-seconds, job-seconds) in a fixed number
 * of buckets; when the clock outruns the last bucket, neighbours are merged
 * and the bucket width doubles, so memory is fixed whatever the trace's span
 * and no bucket is ever approximated.
 *
 * At the end px_sim_result_compute() turns the jobs into distributions
 * (nearest-rank percentiles: the p-th of n sorted values is element
 * ceil(p n / 100) - 1), per-account shares and Jain's index, and checks
 * conservation. All integer arithmetic until the final averages, so the same
 * run gives the same bytes.
 */
#ifndef PX_SIM_METRICS_H
#define PX_SIM_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/sim.h"
#include "util/vec.h"

/* Declared here, not in metrics.c: clang flags unused static inline helpers in a .c file. */
PX_VEC_DECLARE(px_i64vec, int64_t)

enum px_sim_state { PX_SIMJ_PENDING, PX_SIMJ_RUNNING, PX_SIMJ_DONE, PX_SIMJ_REJECTED, PX_SIMJ_SKIPPED };

enum {
  PX_SIMJ_TIMEOUT = 1,    /* ran into its time limit (trace limit below duration) */
  PX_SIMJ_BACKFILLED = 2, /* started by backfill */
  PX_SIMJ_TOPO_WAIT = 4,  /* waited while enough GPUs were free: placement/topology */
};

struct px_sim_jobrun {
  int64_t first_start_s, start_s, end_s; /* -1 until known */
  int64_t saved_s;                        /* work kept by checkpoints of earlier runs (s of its duration) */
  uint32_t attempt;                       /* bumped by a preemption: older end events are stale */
  uint16_t npreempt;
  uint8_t state, flags;
};

/* Channels of the series: 0 busy GPUs, 1 pending jobs, 2 + a account a's busy GPUs. */
#define PX_SIM_CH_BUSY 0
#define PX_SIM_CH_PENDING 1
#define PX_SIM_CH_ACCOUNT 2

struct px_sim_series {
  int64_t t0_s, width_s;  /* bucket b covers [t0 + b w, t0 + (b+1) w) */
  uint32_t nbuckets, used;/* used: buckets touched so far */
  uint32_t nchannels;
  int64_t *v;             /* nbuckets x nchannels integrals (level x seconds) */
};

int px_sim_series_init(struct px_sim_series *s, uint32_t nbuckets, uint32_t nchannels, int64_t t0_s,
                       int64_t width_s);
void px_sim_series_fini(struct px_sim_series *s);
/* Adds level x |[from, to)| into channel ch, split over the buckets it spans. */
void px_sim_series_add(struct px_sim_series *s, uint32_t ch, int64_t from_s, int64_t to_s, int64_t level);

/* Size classes of the reports: all, 1 GPU, 2-8, 9-64, more than 64. */
enum { PX_SIM_SIZE_ALL, PX_SIM_SIZE_1, PX_SIM_SIZE_2_8, PX_SIM_SIZE_9_64, PX_SIM_SIZE_65UP, PX_SIM_NSIZE };
const char *px_sim_size_name(int cls);
int px_sim_size_class(uint32_t gpus);

/* v[0..n) sorted ascending; then its p-th percentile by nearest rank (0 when n is 0). */
void px_sim_sort_i64(int64_t *v, size_t n);
int64_t px_sim_rank(const int64_t *sorted, size_t n, unsigned p);

struct px_sim_dist {
  uint64_t n;
  double avg_s;
  int64_t p50_s, p95_s, p99_s, max_s;
};

#define PX_SIM_CDF_POINTS 200 /* JCT quantiles kept for the CDF picture */

struct px_core;

/*
 * Where each account stands in the core's Fair Tree (px_core_share_get,
 * the numbers `sshare -l` shows), sampled by px_sim_fs_sample after each
 * step of the loop: the account's user association's fair-share factor
 * (rank/N: 1 is first in line, as the core ranks users) and the account
 * association's level factor (its share of the level over its usage of
 * the level: > 1 used less than its share). Both as of the core's last
 * cycle. The factor is held between samples, so its time average is exact
 * (series: factor x PX_SIM_FS_SCALE per account, integrated like the busy
 * GPUs). The recorded run's come from a core given its runs
 * (px_sim_fs_recorded); sampled false: no positions (a replay whose loop
 * does not call px_sim_fs_sample, or a record not yet given to a core).
 *
 * A core ranks only when it cycles, so a position depends on when the
 * cycles ran as well as on the usage. Each sample notes whether the core
 * cycled since the one before (px_core_stats): ranked_s, with t0_s and
 * last_s, is the run's clock, the instants its core ranked, so that the
 * recorded run's core can rank at the same instants (fs_record.c).
 */
#define PX_SIM_FS_SCALE 1000000 /* factor fixed point: integer integrals, the same bytes every run */

struct px_sim_fs {
  bool sampled;
  int64_t t0_s, last_s;        /* first and last sample */
  uint32_t *user_row, *acct_row; /* per setup account: its share rows (UINT32_MAX: none) */
  int64_t *held;               /* per account: factor x PX_SIM_FS_SCALE since last_s */
  double *factor_avg;          /* over [t0, last] (px_sim_result_compute) */
  double *factor_end, *level_end; /* at the last sample; level: INFINITY without usage, NAN FairShare=parent */
  struct px_sim_series series; /* per account: factor x scale x seconds */
  uint64_t core_cycles;        /* the core's cycle count at the last sample */
  struct px_i64vec ranked_s;   /* the samples after which the core had cycled, ascending */
};

struct px_sim_result {
  char policy[64];
  uint64_t submitted;           /* jobs given to the core (setup's runnable jobs) */
  uint64_t done, rejected, timed_out;
  uint64_t preemptions, backfilled, topo_waited;
  uint64_t stuck;               /* still pending when no event was left (a bug if > 0) */
  uint64_t cycles, events;
  uint64_t idle_cycles;         /* cycles that returned no action */
  char reject_example[192];     /* the first rejection's message, or "" */
  int64_t first_submit_s, last_end_s, makespan_s;
  struct px_sim_dist jct[PX_SIM_NSIZE], wait[PX_SIM_NSIZE];
  int64_t jct_cdf_s[PX_SIM_CDF_POINTS + 1]; /* quantile k/PX_SIM_CDF_POINTS of JCT */
  /* Conservation: busy GPU-seconds integrated over time equal the GPU-seconds
   * of the jobs' runs (completed runs plus work lost to preemption). */
  int64_t gpu_s_busy, gpu_s_jobs, gpu_s_lost;
  /* The checkpoint model (CheckpointInterval=, CheckpointRestartCost=, loop.c):
   * the work of requeued runs kept by their checkpoints (conserved too: busy
   * = jobs + lost + lost to failures + kept), and the GPU-seconds spent
   * loading checkpoints (inside the runs' time). */
  int64_t gpu_s_ckpt_kept, gpu_s_restart;
  int64_t ckpt_interval_s, ckpt_restart_s; /* the policy's, 0: plain requeue */
  uint64_t las_promotions;      /* LasStarveLimit promotions (the core's count) */
  /* Injected GPU failures (failures.h): how many, the jobs they requeued,
   * the work those runs lost (GPU-seconds, also conserved) and the time the
   * GPUs were out of service (GPU-seconds). */
  uint64_t gpu_failures, gpu_fail_requeues;
  uint64_t node_outages, node_fail_requeues; /* the record's DOWN periods replayed, and the jobs they requeued */
  int64_t gpu_s_lost_fail, gpu_s_down;
  bool conserved;
  double util_avg;              /* busy GPU-s / (GPUs x makespan) */
  uint32_t naccounts;
  int64_t *acct_gpu_s;          /* per setup account */
  double *acct_fair;            /* its fair share (normalised raw shares) */
  double *acct_wait_avg_s;      /* mean queueing delay of its jobs */
  uint64_t *acct_jobs;          /* its jobs done */
  int64_t *acct_wait_p95_s;     /* nearest-rank p95 of its jobs' waits */
  int64_t *acct_gpu_s_held;     /* GPU-seconds its jobs held, every run (the series) */
  int64_t *acct_gpu_s_lost;     /* of those, lost to preemption and GPU failures: work thrown
                                 * away, and the time its completed runs spent loading checkpoints */
  int64_t *acct_gpu_s_delivered;/* held - lost: its jobs' work (a completed job: its duration) */
  struct px_sim_fs fs;
  double jain;                  /* over accounts of mean(duration / JCT) */
  struct px_sim_series series;
};

/*
 * Fills r from the finished jobs (the series and counters the loop already
 * filled). 0 or PX_ENOMEM.
 */
int px_sim_result_compute(struct px_sim_result *r, const struct px_sim_setup *s,
                          const struct px_sim_jobrun *runs);
void px_sim_result_fini(struct px_sim_result *r);

/*
 * Reads the core's fair-share rows at t (a step's time, after its cycles)
 * into r->fs: the factors held since the previous sample are integrated up
 * to t, then the new ones are kept. 0 or PX_ENOMEM (first call allocates).
 */
int px_sim_fs_sample(struct px_sim_result *r, const struct px_sim_setup *s, const struct px_core *core, int64_t t_s);

/* A run of job (an index into setup jobs) from start_s to end_s. */
struct px_sim_span {
  uint32_t job;
  int64_t start_s, end_s;
};

/*
 * Positions from runs given to a core of the cluster's own configuration
 * as recovery gives running jobs (fs_record.c), ranked and sampled at the
 * instants of clock (another run's px_sim_fs), or without one at each
 * instant a run starts or ends. Only jobs in state DONE count, and the
 * nextra runs of extra (a record's earlier attempts of requeued jobs: each
 * charged as a job of its own, under its job's user and GPUs). 0,
 * PX_ENOMEM or the core's refusal of the cluster.
 */
int px_sim_fs_from_runs(struct px_sim_result *r, const struct px_sim_setup *s, const struct px_sim_jobrun *runs,
                        const struct px_sim_span *extra, size_t nextra, const struct px_sim_fs *clock);

/*
 * The recorded run's positions (rec: px_sim_recorded's result; its fs is
 * replaced): the trace's recorded runs, a requeued job's earlier attempts
 * included (charged as the cluster did), through px_sim_fs_from_runs, ranked
 * when replay's core ranked (the replay of the cluster's own keys: when it
 * reproduces the record, both columns show the same positions), or at each
 * recorded start and end when replay is NULL. 0, PX_ENOMEM or the core's
 * refusal of the cluster.
 */
int px_sim_fs_recorded(struct px_sim_result *rec, const struct px_sim_setup *s, const struct px_sim_result *replay);

/* Fills factor_avg: the time averages of the sampled factors over [t0, last]. */
void px_sim_fs_finish(struct px_sim_fs *fs, uint32_t naccounts);
/* Frees what fs holds and zeroes it (sampled false). */
void px_sim_fs_fini(struct px_sim_fs *fs);

/* The per-account figures beyond shares and average waits (acct_metrics.c),
 * part of px_sim_result_compute / px_sim_result_fini. */
int px_sim_acct_compute(struct px_sim_result *r, const struct px_sim_setup *s, const struct px_sim_jobrun *runs);
void px_sim_acct_fini(struct px_sim_result *r);

#endif
