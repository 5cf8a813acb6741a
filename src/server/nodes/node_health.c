/*
 * node_health.c - the site's node health check and `scontrol reboot`, on
 * the main thread (docs/gpus.md).
 *
 * Health check: agents run HealthCheckProgram= and report when its result
 * changes (POST /v1/agent/health). A failure drains the node with the
 * program's message ("HealthCheck: <message>"); a later success resumes a
 * node that the check itself drained (the drain's cause, drain.c), never
 * one an operator or a fault drained, whatever their reason says.
 *
 * Reboot: an operator asks for one (POST /v1/nodes/{name}/reboot). ASAP
 * drains the node at once ("Reboot ASAP"), so it empties; without ASAP the
 * node keeps taking jobs and reboots whenever it happens to be empty, as in
 * Slurm. The order travels in the answer to the agent's next heartbeat once
 * the node runs no job; the agent runs RebootProgram=. The reboot is done
 * when the agent registers again: the node then takes its next state
 * (RESUME: back in service, its faulty GPUs too; DOWN: kept drained; by
 * default back as it was before the request). The request is not journaled
 * (as liveness is not): a server restarted meanwhile forgets it, and an
 * ASAP node stays drained with its reason for an operator to see.
 */
#include <stdio.h>
#include <string.h>

#include "core/event.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"
#include "util/log.h"

#define HC_PREFIX "HealthCheck: "
#define REBOOT_PREFIX "Reboot ASAP"

int px_node_health_report(struct px_server *s, const struct px_node_health *h, int64_t now, char *msg, size_t size) {
  int idx = px_node_index(s, h->node);
  if (idx < 0) return snprintf(msg, size, "node: %.64s is not configured", h->node), PX_ENOENT;
  struct px_snode *n = &s->nodes[idx];
  bool ours = px_node_drained_for(s, (uint32_t)idx, PX_DRAIN_HEALTH_CHECK);
  int rc = 0;
  if (!h->ok && !n->admin_drain) {
    char reason[300];
    snprintf(reason, sizeof reason, HC_PREFIX "%s", h->message[0] ? h->message : "failed");
    px_warn("node %s: health check failed: %s", h->node, h->message);
    rc = px_node_event(s, PX_EV_NODE_DRAIN, (uint32_t)idx, reason, NULL, PX_DRAIN_HEALTH_CHECK, now);
  } else if (h->ok && ours) {
    px_info("node %s: health check passes again: resumed", h->node);
    rc = px_node_event(s, PX_EV_NODE_RESUME, (uint32_t)idx, NULL, NULL, PX_DRAIN_NONE, now);
  }
  if (rc) snprintf(msg, size, "the node's state could not be recorded: %s", px_strerror(rc));
  return rc;
}

int px_node_reboot_request(struct px_server *s, uint32_t node, bool asap, enum px_reboot_next next, const char *reason,
                           const char *by, int64_t now) {
  struct px_snode *n = &s->nodes[node];
  n->reboot = PX_REBOOT_REQUESTED;
  n->reboot_asap = asap;
  n->reboot_next = next;
  n->reboot_was_drained = n->admin_drain;
  s->nodes_dirty = s->dirty = true;
  px_info("node %s: reboot requested%s", s->conf->nodes[node].name, asap ? " (ASAP: drained)" : "");
  if (!asap || n->admin_drain) return 0;
  char why[300];
  snprintf(why, sizeof why, REBOOT_PREFIX "%s%s", reason && *reason ? ": " : "", reason ? reason : "");
  return px_node_event(s, PX_EV_NODE_DRAIN, node, why, by, PX_DRAIN_REBOOT, now); /* sinfo -R: the operator who asked */
}

bool px_node_reboot_due(struct px_server *s, uint32_t node) {
  struct px_snode *n = &s->nodes[node];
  struct px_node_view v;
  if (n->reboot != PX_REBOOT_REQUESTED || px_core_node_get(s->core, node, &v) || v.njobs) return false;
  n->reboot = PX_REBOOT_ORDERED;
  s->nodes_dirty = s->dirty = true;
  px_info("node %s: empty: reboot ordered", s->conf->nodes[node].name);
  return true;
}

void px_node_reboot_done(struct px_server *s, uint32_t node, int64_t now) {
  struct px_snode *n = &s->nodes[node];
  if (n->reboot != PX_REBOOT_ORDERED) return;
  n->reboot = PX_REBOOT_NONE;
  const char *name = s->conf->nodes[node].name;
  bool ours = px_node_drained_for(s, node, PX_DRAIN_REBOOT);
  int rc = 0;
  if (n->reboot_next == PX_REBOOT_NEXT_DOWN) {
    rc = px_node_event(s, PX_EV_NODE_DRAIN, node, "Reboot complete: nextstate=DOWN", NULL, PX_DRAIN_REBOOT, now);
  } else if (n->reboot_next == PX_REBOOT_NEXT_RESUME || (ours && !n->reboot_was_drained)) {
    rc = px_node_event(s, PX_EV_NODE_RESUME, node, NULL, NULL, PX_DRAIN_NONE, now);
    if (!rc) rc = px_gpu_resume(s, node, -1, false, now); /* a healthy re-registration: faulty GPUs back */
  }
  if (rc) px_error("node %s: state after reboot not recorded: %s", name, px_strerror(rc));
  else px_info("node %s: rebooted and registered", name);
}

const char *px_node_reboot_state(const struct px_server *s, uint32_t node) {
  switch (s->nodes[node].reboot) {
    case PX_REBOOT_REQUESTED: return "REBOOT_REQUESTED";
    case PX_REBOOT_ORDERED: return "REBOOT_ISSUED";
    default: return NULL;
  }
}
