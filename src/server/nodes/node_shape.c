/*
 * node_shape.c - what an agent registers with, against its node's
 * NodeName= line, on the main thread (docs/agent.md, "Resources").
 *
 * A node whose agent finds fewer CPUs, less memory or fewer GPUs than the
 * configuration says (a GPU fallen off the bus, a driver that did not load),
 * or GPUs of several types numbered otherwise than Gres= numbers them, must
 * not take jobs for resources it does not have: it is drained, with the
 * reason in Slurm's words (`gres/gpu count reported lower than configured
 * (4 < 8)`, px_node_report_shortfall). Slurm 22.05 does the same (its node
 * shows IDLE+DRAIN+INVALID_REG, "inval" in sinfo, with that reason).
 *
 * A later registration that matches the configuration resumes the node when
 * this check drained it (the drain's cause is the registration's, drain.c),
 * never when an operator or another cause did, however their reason is
 * worded: their drain and reason stay. Slurm keeps the
 * node DRAIN until an operator resumes it; here, as with the health check
 * (node_health.c), the cause is known to be gone, so the node comes back.
 * The drain is journaled like any other, with its cause, so a restarted
 * server still knows it is this check's until the agent registers again.
 */
#include <stdio.h>
#include <string.h>

#include "core/event.h"
#include "proto/agent_msg.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"
#include "util/log.h"

/* A node with GPUs of several types (MIG profiles side by side) is
 * scheduled by index, the configured types numbered in name order; an agent
 * that reports another order (or other profiles) would run jobs on the
 * wrong instances. True, with why, at the first index that differs. */
static bool gpu_layout_differs(const struct px_conf_node *cn, const struct px_node_report *rep, char *why,
                               size_t size) {
  if (cn->ngpu_types < 2) return false;
  for (uint32_t i = 0; i < cn->ngpu; i++) {
    const char *want = px_conf_gpu_type_at(cn, i), *got = i < rep->ngpus ? rep->gpus[i].type : "missing";
    if (strcmp(want, got) == 0) continue;
    snprintf(why, size, "gres/gpu layout: GPU %u is %s, Gres= says %s", i, got, want);
    return true;
  }
  return false;
}

int px_node_shape_check(struct px_server *s, uint32_t node, const struct px_node_report *rep, int64_t now) {
  const struct px_conf_node *cn = &s->conf->nodes[node];
  struct px_snode *n = &s->nodes[node];
  char why[512];
  /* several types: the layout names the first GPU that differs (a missing
   * one too); one type: only GPUs of it count */
  bool bad = gpu_layout_differs(cn, rep, why, sizeof why) ||
             px_node_report_shortfall(rep, cn->cpus, cn->mem_mib, cn->ngpu, cn->ngpu_types ? NULL : cn->gpu_type,
                                      why, sizeof why);
  bool ours = px_node_drained_for(s, node, PX_DRAIN_REGISTRATION);
  if (bad && n->admin_drain && !ours) {
    px_warn("node %s: %s (already drained: %s)", cn->name, why, n->reason);
    return 0;
  }
  if (bad && ours && !strcmp(n->reason, why)) return 0; /* drained for this already */
  if (bad) {
    px_warn("node %s: %s: drained (it registered with less than configured)", cn->name, why);
    return px_node_event(s, PX_EV_NODE_DRAIN, node, why, NULL, PX_DRAIN_REGISTRATION, now);
  }
  if (!ours) return 0;
  px_info("node %s: registered with its configured resources again: resumed (was: %s)", cn->name, n->reason);
  return px_node_event(s, PX_EV_NODE_RESUME, node, NULL, NULL, PX_DRAIN_NONE, now);
}
