/*
 * cluster.h - the simulated cluster: a struct px_conf built from the
 * `--cluster NxG` shorthand, and the accounts a trace needs.
 *
 * The shorthand builds what the server would read from a small slurm.conf
 * (it is written as such and parsed by src/conf/): N nodes "sim00001".. with
 * G GPUs each, 64 CPUs and 1 TiB, a two-level switch tree (leaf switches of
 * 32 nodes under one spine), one default partition "sim" over every node,
 * and the configuration's default scheduling keys. Accounts come from the
 * trace: root, then one account per queue with FairShare=1 and one user of
 * the same name.
 */
#ifndef PX_SIM_CLUSTER_H
#define PX_SIM_CLUSTER_H

#include <stdint.h>

#include "conf/conf.h"
#include "util/error.h"

#define PX_SIM_LEAF_NODES 32 /* nodes per leaf switch in the shorthand tree */
#define PX_SIM_NODE_CPUS 64
#define PX_SIM_NODE_MEM_MIB (1024u * 1024u)

/* Parses "256x8" (nodes x GPUs per node). 0 or PX_EINVAL (d says why). */
int px_sim_cluster_parse(const char *spec, uint32_t *nnodes, uint32_t *ngpu, struct px_diag *d);

/*
 * A new conf for nnodes x ngpu with the accounts named. NULL with d set when
 * a name is not a plain word (letters, digits, _ - .), or out of memory.
 */
struct px_conf *px_sim_cluster_new(uint32_t nnodes, uint32_t ngpu, const char *const *accounts,
                                   uint32_t naccounts, struct px_diag *d);

#endif
