/*
 * failures.h - GPU failures injected into a simulated run (`phalanx sim
 * --gpu-failures RATE`, docs/simulator.md).
 *
 * Failures arrive as a Poisson process over the cluster's GPUs (RATE per
 * GPU per day, inter-arrival times drawn from the run's seed, so a run is
 * the same every time), each on a GPU drawn uniformly. A failed GPU goes
 * out of service through the core's PX_EV_GPU event, as on the server; the
 * job running on it is requeued whole (the server's default policy for an
 * XID: gpu+requeue) and its run's GPU-seconds are lost. The GPU is repaired
 * (back in service) repair_s later. Failures stop once no job is left to
 * run or arrive.
 */
#ifndef PX_SIM_FAILURES_H
#define PX_SIM_FAILURES_H

#include <stdbool.h>
#include <stdint.h>

#include "conf/conf.h"
#include "core/core.h"

struct px_sim_repair {
  int64_t t_s, failed_s;
  uint32_t node, gpu;
};

struct px_sim_failures {
  double per_s;                /* cluster-wide failures per second (0: off) */
  int64_t repair_s;
  uint64_t rng;
  int64_t next_s;              /* the next failure (INT64_MAX: none) */
  struct px_sim_repair *q;     /* repairs due, in time order (a constant repair time keeps it so) */
  size_t head, n, cap;
  const struct px_conf *conf;
  uint64_t total_gpus;
};

/* rate: failures per GPU per day. 0 (off when rate is 0). */
void px_sim_failures_init(struct px_sim_failures *f, const struct px_conf *conf, uint64_t total_gpus, double rate,
                          int64_t repair_s, uint64_t seed, int64_t t0_s);
void px_sim_failures_fini(struct px_sim_failures *f);
/* When the next failure or repair is due (INT64_MAX: none). */
int64_t px_sim_failures_due(const struct px_sim_failures *f);

/* A failure due now: the GPU it hits (false when none is due or it hit a
 * GPU already out); the next failure is drawn. */
bool px_sim_failure_take(struct px_sim_failures *f, int64_t now_s, uint32_t *node, uint32_t *gpu);
/* Queues the repair of a GPU that failed now. 0 or PX_ENOMEM. */
int px_sim_failure_repair_at(struct px_sim_failures *f, int64_t now_s, uint32_t node, uint32_t gpu);
/* A repair due now (its GPU and how long it was out), false when none. */
bool px_sim_repair_take(struct px_sim_failures *f, int64_t now_s, uint32_t *node, uint32_t *gpu, int64_t *down_s);
/* No more failures (nothing left to run). */
void px_sim_failures_stop(struct px_sim_failures *f);

#endif
