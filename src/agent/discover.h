/*
 * discover.h - what this node really has: CPUs (the affinity mask, with
 * cores told from threads through /sys topology), memory (MemTotal, or the
 * agent's own cgroup limit when lower), and GPUs, either real ones through
 * NVML loaded at run time with dlopen("libnvidia-ml.so.1") (name, UUID,
 * memory, NVLink peers grouped into islands; no build-time dependency on
 * the driver) or emulated ones for machines without GPUs.
 */
#ifndef PX_AGENT_DISCOVER_H
#define PX_AGENT_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/agent_msg.h"

#define PX_MAX_NODE_GPUS 64

struct px_node_res {
  uint32_t cpus;              /* usable logical CPUs */
  uint32_t cores;             /* distinct physical cores among them */
  uint64_t mem_mib;
  struct px_gpu_info gpus[PX_MAX_NODE_GPUS];
  uint32_t ngpus;
  bool emulated;
};

void px_discover_cpus(struct px_node_res *r);
void px_discover_mem(struct px_node_res *r);
/* Real GPUs through NVML (library path from $PHALANX_NVML_LIB, else the
 * driver's). 0 (possibly with no GPU), or PX_EUNSUPPORTED with why filled
 * when NVML is absent or fails. */
int px_discover_gpus_nvml(struct px_node_res *r, char *why, size_t whylen);
/* "8", "8:h100" or "8:h100:2" (count, type, NVLink groups); a MIG profile
 * as the type ("56:1g.10gb") emulates that many MIG instances, and a list
 * of them ("7:1g.10gb,1:3g.40gb,2:2g.20gb") a mixed layout, packed onto
 * GPUs of 7 slices in the order given. 0 or PX_EINVAL. */
int px_discover_gpus_emulated(struct px_node_res *r, const char *spec, const char *node);

/* Is type a MIG profile name ("1g.10gb", "3g.40gb")? Then *slices gets how
 * many instances of it one GPU holds and *mem_mib their memory (either may
 * be NULL). */
bool px_mig_profile(const char *type, uint32_t *slices, uint64_t *mem_mib);
/* A node with MIG instances among its GPUs (UUIDs "MIG-...", whole GPUs
 * beside them "GPU-..."). */
bool px_gpus_are_mig(const struct px_node_res *r);
/* MIG instances ordered as the server numbers them: by type name, then as
 * discovered; indices renumbered. A no-op without MIG. */
void px_mig_order(struct px_node_res *r);

/* Groups GPUs from a symmetric link matrix: linked[i*n+j] true when i and j
 * share an NVLink island. group[i] gets dense ids in order of first GPU. */
void px_gpu_group(const bool *linked, uint32_t n, uint32_t *group);

#endif
