/*
 * stage.h - the policy stages of a scheduling cycle, each a small table of
 * function pointers chosen from the configuration at px_core_new():
 *
 *   order    the sort key of a pending job (multifactor, FIFO, LAS)
 *   place    node scoring: packing or spreading (feasibility is shared)
 *   reserve  what a job that could not be placed does to the jobs behind it
 *            in its partition. "block" (Slurm's builtin scheduler): they wait
 *            with reason Priority. Backfill (issue 4) plugs in here: it
 *            records a reservation and lets later jobs start only if they
 *            do not delay it.
 *   victims  preemption (issue 4): given a job that cannot be placed, choose
 *            whole running gangs to stop; "none" by default.
 *
 * Stages only read and write the core through core_int.h; a new policy is a
 * new table here plus a name in pxc_stage_select, testable on its own.
 */
#ifndef PX_CORE_STAGE_H
#define PX_CORE_STAGE_H

#include <stdbool.h>
#include <stdint.h>

struct px_core;
struct pxc_job;
struct px_actions;
struct pxc_place_result;

struct pxc_order_stage {
  const char *name;
  /* Called once per cycle before keys (e.g. to refresh fair share). */
  void (*prepare)(struct px_core *c, int64_t now);
  /* Sort key, smaller first: k1 then k2, ties broken by job id. Also stores
   * the job's priority in j->priority. */
  void (*key)(struct px_core *c, struct pxc_job *j, int64_t now, uint64_t *k1, uint64_t *k2);
};

struct pxc_place_stage {
  const char *name;
  bool spread; /* false: best fit (fewest free GPUs first); true: most free first */
};

struct pxc_reserve_stage {
  const char *name;
  /* Start of a cycle. */
  void (*begin)(struct px_core *c, int64_t now);
  /* j (highest remaining priority in its partition) could not be placed for
   * lack of resources. Returns true when the partition's later jobs must
   * wait (reason Priority), false when they may still be tried. */
  bool (*blocked)(struct px_core *c, struct pxc_job *j, int64_t now);
  /* May job j start now on the placement found, given reservations? The
   * stage may replace *res by another placement that j fits now. */
  bool (*may_start)(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res, int64_t now);
};

struct pxc_victims_stage {
  const char *name;
  /* Appends PREEMPT actions for j or does nothing; 0 or PX_ENOMEM. */
  int (*find)(struct px_core *c, struct pxc_job *j, int64_t now, struct px_actions *out);
};

/* The default reserve stage; also that of the main passes between backfill
 * passes (bf_interval, policy.c). */
extern const struct pxc_reserve_stage pxc_reserve_block;

/* Chooses the stages from c->sched; 0 or PX_EINVAL. */
int pxc_stage_select(struct px_core *c);

#endif
