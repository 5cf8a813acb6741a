/* part_state.c - a partition set DOWN or UP while the server runs (core.h):
 * `scontrol update PartitionName=P State=DOWN|UP`. DOWN keeps its jobs
 * queued and starts none (reason PartitionDown, as Slurm): the cycle's gate
 * reads the flag afresh for every job, so the next cycle follows it. */
#include "core/core_int.h"

int pxc_partition_set_up(struct px_core *c, uint32_t part, bool up) {
  if (part >= c->nparts) return PX_ENOENT;
  c->parts[part].up = up;
  return 0;
}

bool px_core_partition_up(const struct px_core *c, uint32_t part) {
  return part < c->nparts && c->parts[part].up;
}
