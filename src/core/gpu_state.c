/*
 * gpu_state.c - one GPU of a node in or out of service (PX_EV_GPU).
 *
 * A GPU out of service is a bit in the node's gpu_bad and never in its
 * gpu_free, so no placement sees it; the node's other GPUs stay in
 * service. A job that still holds the GPU when it goes out (the server's
 * policy may let it run on) keeps it: the bit is also in gpu_bad_held
 * until that job's release, which then leaves it out of gpu_free
 * (place.c). Back in service, a GPU nobody holds is free again at once;
 * one still held is freed by its job's release as any other.
 */
#include "core/core_int.h"

int pxc_gpu_set(struct px_core *c, uint32_t node, uint32_t gpu, bool usable, struct px_diag *d) {
  px_diag_clear(d);
  if (node >= c->nnodes) return px_diag_set(d, PX_ENOENT, -1, "node: no node %u", node);
  struct pxc_node *n = &c->nodes[node];
  if (gpu >= n->ngpu) return px_diag_set(d, PX_EINVAL, -1, "gpu: node has %u GPUs, no index %u", n->ngpu, gpu);
  px_bits64 bit = 1ULL << gpu;
  if (usable == !(n->gpu_bad & bit)) return 0; /* already so */
  pxc_index_node_remove(c, node);
  if (usable) {
    if (!(n->gpu_bad_held & bit)) n->gpu_free |= bit;
    n->gpu_bad &= ~bit;
    n->gpu_bad_held &= ~bit;
  } else {
    if (!(n->gpu_free & bit)) n->gpu_bad_held |= bit; /* a running job holds it */
    n->gpu_free &= ~bit;
    n->gpu_bad |= bit;
  }
  pxc_index_node_add(c, node);
  pxc_plan_node_changed(c, node, true);
  return 0;
}
