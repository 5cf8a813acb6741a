/*
 * testconf.h - building a struct px_conf in code, for the core's tests, the
 * benchmark and the simulator's `--cluster 256x8` shorthand: a homogeneous
 * cluster with an optional switch tree (leaves of nodes_per_leaf nodes under
 * spines of leaves_per_spine leaves under one root) or blocks, partitions
 * splitting the nodes evenly, an account root and a QoS "normal". Accounts,
 * users, QoS and partitions are then added one call at a time. Everything
 * lives in the conf's arena; free with px_conf_free(). Builders return the
 * new index, or PX_NONE when out of memory or capacity.
 */
#ifndef PX_CORE_TESTCONF_H
#define PX_CORE_TESTCONF_H

#include <stdint.h>

#include "conf/conf.h"

struct px_testconf_spec {
  uint32_t nnodes, gpus_per_node, cpus_per_node;
  uint64_t mem_mib;
  uint32_t gpu_groups;        /* default 1 */
  const char *gpu_type;       /* NULL: untyped */
  uint32_t nodes_per_leaf;    /* 0: no switch tree */
  uint32_t leaves_per_spine;  /* 0: all leaves under one root */
  uint32_t nodes_per_block;   /* block topology when no switch tree; 0: none */
  uint32_t npartitions;       /* nodes split evenly as p0, p1, ...; 0: none (p0 default) */
};

#define PX_TESTCONF_MAX_ACCOUNTS 8192
#define PX_TESTCONF_MAX_QOS 64
#define PX_TESTCONF_MAX_PARTITIONS 64

struct px_conf *px_testconf_new(const struct px_testconf_spec *s);
uint32_t px_testconf_account(struct px_conf *c, const char *name, uint32_t parent, uint32_t shares);
uint32_t px_testconf_user(struct px_conf *c, const char *user, uint32_t account, uint32_t shares);
uint32_t px_testconf_qos(struct px_conf *c, const char *name, uint32_t priority);
/* A partition over nodes [first, first + n). */
uint32_t px_testconf_partition(struct px_conf *c, const char *name, uint32_t first, uint32_t n);
/* Comma-separated features for one node; 0 or PX_ENOMEM. */
int px_testconf_features(struct px_conf *c, uint32_t node, const char *csv);

#endif
