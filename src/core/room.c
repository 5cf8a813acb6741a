/* room.c - could a cycle start anything at all? (core.h) */
#include "core/core_int.h"

/* A job needs at least one CPU of an up, undrained node that no --exclusive
 * job holds; when a job may preempt (px_core_may_preempt) it may also
 * make room so, and then the answer is always yes. O(nodes), stopping at the
 * first node with room. */
bool px_core_has_room(const struct px_core *c) {
  if (px_core_may_preempt(c)) return true;
  for (uint32_t i = 0; i < c->nnodes; i++) {
    const struct pxc_node *n = &c->nodes[i];
    if (!n->down && !n->drain && !n->excl && n->cpu_free > 0) return true;
  }
  return false;
}
