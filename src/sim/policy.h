/*
 * policy.h - a policy file: the scheduling keys of the configuration, in
 * slurm.conf's Key=Value form, applied over a cluster's struct px_conf_sched.
 *
 *   # examples/policies/conservative.conf
 *   SchedulerType=sched/backfill
 *   BackfillMode=conservative
 *   PriorityType=priority/multifactor
 *   PriorityWeightFairshare=10000
 *   PriorityDecayHalfLife=7-0
 *
 * Only scheduling keys are accepted (a policy cannot change the cluster);
 * an unknown key or a bad value is an error naming the file, line and key.
 * The keys, their values and their checks are the configuration's own (its
 * key table, through px_conf_sched_set; docs/config.md, docs/scheduling.md);
 * this reader exists because the simulator must apply them onto a cluster
 * it built itself. Durations take Slurm's forms: minutes,
 * MM:SS, HH:MM:SS, D-HH[:MM[:SS]].
 */
#ifndef PX_SIM_POLICY_H
#define PX_SIM_POLICY_H

#include <stddef.h>

#include "conf/conf.h"
#include "util/error.h"

struct px_sim_policy {
  char name[64];               /* PolicyName=, else the file's base name without .conf */
  struct px_conf_sched sched;  /* the base keys with the file's applied */
};

/* Applies text over p->sched (p->name kept unless the text names it). 0 or PX_EPARSE (d: line, key). */
int px_sim_policy_parse(struct px_sim_policy *p, const char *text, size_t len, struct px_diag *d);
/* Reads a file: p->sched starts from base, p->name from the file name. PX_EIO when unreadable. */
int px_sim_policy_load(struct px_sim_policy *p, const char *path, const struct px_conf_sched *base,
                       struct px_diag *d);

#endif
