/*
 * recorded.h - the recorded run of a trace exported from the cluster's own
 * accounting (`phalanx export`), as a result like a replay's, so that the
 * report puts what really happened in the first column next to the
 * policies (`phalanx sim --from-accounting`).
 */
#ifndef PX_SIM_RECORDED_H
#define PX_SIM_RECORDED_H

#include <stdio.h>

#include "sim/metrics.h"
#include "sim/sim.h"

#define PX_SIM_RECORDED_NAME "recorded"

/*
 * Fills r from the trace's start_s/end_s of every runnable job of s and
 * its earlier attempts (recorded.c: their GPU time lost to preemption). 0,
 * PX_EINVAL (d names the first job's line without a recorded run) or
 * PX_ENOMEM; on error r is left empty.
 */
int px_sim_recorded(const struct px_sim_setup *s, struct px_sim_result *r, struct px_diag *d);

/*
 * Fidelity of a replay against the record: the mean over jobs done in both
 * of |replayed wait - recorded wait|, and the mean recorded wait (seconds),
 * each wait up to the job's first start (a requeued job's: its first
 * attempt's in the record, its first run's in the replay).
 * runs: the replay's per-job times (px_sim_run_opts.runs_out).
 */
struct px_sim_fidelity {
  uint64_t jobs;
  double mean_abs_diff_s, mean_recorded_wait_s;
};
void px_sim_fidelity(const struct px_sim_setup *s, const struct px_sim_jobrun *runs, struct px_sim_fidelity *f);

/*
 * The comparison job by job, as CSV on f (header first): each job done in
 * both, in submit order, with its recorded and replayed first start and wait and
 * their difference (replayed - recorded; positive: the replay waited
 * longer). 0 or PX_EIO.
 */
int px_sim_fidelity_jobs(FILE *f, const struct px_sim_setup *s, const struct px_sim_jobrun *runs);

#endif
