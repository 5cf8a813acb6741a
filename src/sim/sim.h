/*
 * sim.h - the trace simulator: a workload replayed through the unchanged
 * scheduling core (src/core/) with a virtual clock.
 *
 * Three steps, each its own file:
 *
 *   setup (map.c)   trace + cluster -> the jobs to submit: queue -> account,
 *                   time limit, node count, and the jobs that cannot run on
 *                   this cluster (reported, never silently dropped). Shared
 *                   read-only by every policy of one run.
 *   run   (loop.c)  one policy: a discrete-event loop over a binary heap of
 *                   job ends and the submit-sorted trace; at each distinct
 *                   event time it applies the ends and submits to the core,
 *                   then calls px_core_cycle() once (and again only while the
 *                   cycle preempted or hit its start budget) and applies the
 *                   START / REJECT / PREEMPT actions.
 *   report (metrics.c, report.c, plot.c) the figures of one run per policy.
 *
 * The mapping rules are documented in docs/simulator.md; the constants here
 * are the ones it quotes.
 */
#ifndef PX_SIM_SIM_H
#define PX_SIM_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "conf/conf.h"
#include "sim/trace.h"

#define PX_SIM_LIMIT_FACTOR 2.0       /* default over-estimate: limit = duration x 2 */
#define PX_SIM_LIMIT_ROUND_S 60       /* limits are whole minutes, as users write them */
#define PX_SIM_EPOCH_S 1500000000     /* virtual "Unix time" of trace second 0 */
#define PX_SIM_JOB_MEM_MIB 1024       /* memory asked per node: never the binding limit */
#define PX_SIM_SERIES_BUCKETS 256     /* time-series resolution of reports and plots */
#define PX_SIM_DEFAULT_ACCOUNT "default" /* the account of jobs with an empty queue */
#define PX_SIM_QOS_RULES 16            /* --qos-map rules at most */
#define PX_SIM_HIGH_QOS "high"        /* the QoS --cluster defines besides normal (preempts it) */
#define PX_SIM_REASON_REFRESH_S 3600  /* px_core_set_lazy_reasons: a full cycle at least hourly */

enum px_sim_skip {
  PX_SIM_RUNS = 0,
  PX_SIM_SKIP_TOO_MANY_GPUS,  /* more GPUs than the cluster has */
  PX_SIM_SKIP_TOO_MANY_NODES, /* more nodes than the cluster has */
  PX_SIM_SKIP_GPUS_PER_NODE,  /* nodes given, GPUs per node over a node's GPUs */
  PX_SIM_SKIP_REJECTED,       /* the core refused it at submit or in a cycle */
  PX_SIM_SKIP_COUNT
};
const char *px_sim_skip_name(enum px_sim_skip s);

/* A trace job as the simulator submits it. */
struct px_sim_job {
  int64_t submit_s, duration_s, limit_s; /* trace seconds; limit the job's --time */
  uint32_t gpus, nodes;                  /* nodes >= 1 */
  uint32_t account;                      /* index into setup accounts */
  uint32_t assoc;                        /* conf index of the user association it runs under */
  uint32_t trace_index;                  /* into trace->jobs */
  uint8_t qos;                           /* 0: its account's default; else setup qos_names[qos - 1] */
  uint8_t skip;                          /* enum px_sim_skip decided at setup */
  bool after_target;                     /* a later job depends on its start (after:) */
};

struct px_sim_task {
  int64_t array_job_id;
  uint32_t job; /* index into px_sim_setup jobs */
};

struct px_sim_setup {
  const struct px_trace *trace;
  const struct px_conf *conf;   /* the cluster (accounts included) */
  struct px_sim_job *jobs;      /* sorted by (submit_s, trace line); job id = index + 1 */
  uint32_t njobs;
  const char **accounts;        /* account names, one per trace queue, sorted */
  uint32_t *account_assoc;      /* conf index of each account's user association */
  uint32_t naccounts;
  uint32_t node_gpus, nnodes;   /* the cluster's shape (largest node) */
  uint64_t total_gpus;
  double limit_factor;
  uint64_t nskipped[PX_SIM_SKIP_COUNT];
  const char *qos_map;          /* px_sim_setup_qos's rules, NULL: none */
  char qos_names[PX_SIM_QOS_RULES][64]; /* the QoS of each rule */
  uint64_t qos_jobs[PX_SIM_QOS_RULES]; /* jobs each rule mapped */
  uint32_t nqos_rules;
  /* dependencies (a trace with a dependency column, px_sim_dependency):
   * trace job id -> index into jobs, and the indexes of array tasks by
   * their array_job_id (then index) */
  struct px_smap dep_ids;
  struct px_sim_task *array_tasks;
  uint32_t narray_tasks;
  /* job names (a trace with a name column, px_sim_names_init): per job an
   * index into job_names, PX_TRACE_NONE when it has none; NULL when the
   * trace names no job */
  uint32_t *job_name;
  struct px_strvec job_names;
  struct px_smap job_name_index; /* job_names' strings -> their index */
};

/*
 * The sorted account names of a trace (one per queue; PX_SIM_DEFAULT_ACCOUNT
 * for jobs without one). *names points into the trace and a malloc'd array
 * the caller frees. 0 or PX_ENOMEM.
 */
int px_sim_trace_accounts(const struct px_trace *t, const char ***names, uint32_t *n);

/*
 * Maps a trace onto a cluster. conf must hold every account of
 * px_sim_trace_accounts() (a user association of that name under an account
 * of that name, as px_sim_cluster_new builds). limit_factor >= 1 scales
 * durations into time limits for jobs whose trace gives none. 0, PX_EINVAL
 * (d: an account missing from conf, a bad factor) or PX_ENOMEM.
 */
int px_sim_setup_init(struct px_sim_setup *s, const struct px_trace *t, const struct px_conf *conf,
                      double limit_factor, struct px_diag *d);
void px_sim_setup_fini(struct px_sim_setup *s);

struct px_sim_jobrun;

/* px_sim_setup's dep_ids and array_tasks (px_sim_setup_init calls it for a
 * trace with dependencies). 0 or PX_ENOMEM. */
int px_sim_deps_init(struct px_sim_setup *s);

/*
 * px_sim_setup's job names (px_sim_setup_init calls it for a trace with a
 * name column): each job's trace name, qualified by its recorded user
 * ("alice/train") when it runs as another user (deps.c says why). 0 or
 * PX_ENOMEM.
 */
int px_sim_names_init(struct px_sim_setup *s);

/* The name job (an index into s->jobs) is submitted under, NULL: none. */
static inline const char *px_sim_job_name(const struct px_sim_setup *s, uint32_t job) {
  return s->job_name && s->job_name[job] != PX_TRACE_NONE ? s->job_names.v[s->job_name[job]] : NULL;
}

/*
 * The dependency the core holds job (an index into s->jobs) by at its
 * submit: its trace dependency with the trace's job ids as core ids, and
 * only what is still to wait for (runs: every job's state so far). The
 * record shows that the job ran, so its dependency was met there: each term
 * waits for its job's end (after: its start) whatever its kind (the replay
 * ends every job COMPLETED, so afterok/afternotok would hold it forever on a
 * job that ended otherwise in the record); a term naming a job that never
 * runs in the replay (not in the trace: cancelled while pending; skipped;
 * rejected; a later job) is met, as Slurm counts after/afterany/afternotok
 * on a job that will never run, and an array's id waits for all its tasks.
 * singleton stays: the core holds the job while a job of its name and user
 * runs (px_sim_job_name); a job without a name has none to wait for (met).
 * NULL (*out): nothing to wait for; else a malloc'd string. 0 or PX_ENOMEM.
 */
int px_sim_dependency(const struct px_sim_setup *s, uint32_t job, const struct px_sim_jobrun *runs, char **out);

/*
 * --qos-map: gives trace jobs a QoS by rule, so that preempt/qos has someone
 * to preempt (every trace job otherwise runs under its account's default
 * QoS, normal). spec is comma-separated RULE:QOS, the first matching rule
 * wins, unmatched jobs keep the default; RULE is queue=NAME (the trace queue,
 * case-insensitive), gpus>=N or gpus<=N (total GPUs). Every QOS must exist
 * in s->conf. spec is borrowed for s's lifetime. 0, or PX_EINVAL with d
 * naming the rule.
 */
int px_sim_setup_qos(struct px_sim_setup *s, const char *spec, struct px_diag *d);

/*
 * The core job spec of job (an index into s->jobs) as it runs under the
 * user association assoc (a conf index): its name (px_sim_job_name), user
 * and account, the shape, the time limit, the trace's partition and QoS,
 * the --qos-map QoS over them.
 * Strings are borrowed from s. The replay (loop.c) adds what only a
 * submit needs (requeue, --begin); the recorded run's fair share
 * (fs_record.c) gives it to recovery as is.
 */
struct px_jobspec;
void px_sim_job_spec(const struct px_sim_setup *s, uint32_t job, uint32_t assoc, struct px_jobspec *spec);

#endif
