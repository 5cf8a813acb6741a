/*
 * run.h - one simulated run: a policy over a prepared setup (sim.h), through
 * the scheduling core, into a struct px_sim_result (metrics.h). loop.c says
 * how the virtual clock advances.
 */
#ifndef PX_SIM_RUN_H
#define PX_SIM_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "conf/conf.h"
#include "sim/metrics.h"
#include "sim/sim.h"

struct px_sim_progress;

struct px_node_events;

struct px_sim_run_opts {
  uint64_t seed;                     /* the core's seed (tie-breaking shuffles, if any) */
  struct px_sim_progress *progress;  /* NULL: silent */
  struct px_sim_jobrun **runs_out;   /* when set: receives the per-job times (caller frees) */
  double gpu_fail_per_day;           /* injected GPU failures per GPU per day (failures.h; 0: none) */
  int64_t gpu_repair_s;              /* how long a failed GPU stays out of service */
  const struct px_node_events *node_events; /* the record's node outages, bound to the cluster
                                      * (node_events.h; NULL: none) */
  bool cycle_per_event;              /* a cycle after each end and each submit, as the server's
                                      * loop does, not one per instant (loop.c) */
};

/*
 * Replays s under the scheduling keys `policy` (the cluster's own keys
 * replaced). r is filled, owned by the caller (px_sim_result_fini). 0,
 * PX_ENOMEM, or the core's error (d says which event or cycle failed); on
 * error r is left empty.
 */
int px_sim_run(const struct px_sim_setup *s, const struct px_conf_sched *policy, const char *name,
               const struct px_sim_run_opts *o, struct px_sim_result *r, struct px_diag *d);

#endif
