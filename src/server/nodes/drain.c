/*
 * drain.c - a node's drain and its cause, on the main thread.
 *
 * Several parts of the server drain a node on their own account: a short
 * registration (node_shape.c), a failed health check and a reboot
 * (node_health.c), a GPU fault (gpu_health.c); operators drain for theirs
 * (loop/handle.c). A check that sees its cause gone lifts the drain only
 * when the drain is its own, and it knows that by the drain's cause, never
 * by its reason's wording: an operator may well word a reason like a
 * check's ("Low CPUs (reported: fan)") and their drain must stay. The
 * cause goes down the one road with the drain (px_node_event: the record
 * keeps it, events.c folds it onto the node), so a restarted server or a
 * standby following the journal knows it too.
 *
 * A job that recovery could not give back to the core (it runs outside the
 * scheduler, events.c) holds its nodes drained in the core alone, never
 * journaled: each recovery decides it afresh. The node keeps when that
 * began, for sinfo -R's TIMESTAMP (pub_nodes.c), as it does for any other
 * drain.
 */
#include <string.h>

#include "server/nodes/nodes.h"
#include "server/tables.h"

#define RECOVERY_REASON "phalanx: recovered running jobs"

static const char *const cause_names[] = {
#define PX_DRAIN_CAUSE_NAME(c, name) name,
    PX_DRAIN_CAUSES(PX_DRAIN_CAUSE_NAME)
#undef PX_DRAIN_CAUSE_NAME
};

const char *px_drain_cause_name(enum px_drain_cause c) {
  return (size_t)c < sizeof cause_names / sizeof cause_names[0] ? cause_names[c] : "unknown";
}

enum px_drain_cause px_drain_cause_parse(const char *name) {
  for (size_t c = 0; name && *name && c < sizeof cause_names / sizeof cause_names[0]; c++)
    if (!strcmp(cause_names[c], name)) return (enum px_drain_cause)c;
  return PX_DRAIN_UNKNOWN;
}

int px_node_event(struct px_server *s, enum px_event_kind kind, uint32_t node, const char *reason, const char *by,
                  enum px_drain_cause cause, int64_t now) {
  struct px_event ev = {.kind = kind, .node = node, .reason = reason, .by = by};
  if (kind == PX_EV_NODE_DRAIN) ev.cause = px_drain_cause_name(cause);
  struct px_event_result res;
  s->need_cycle = true;
  return px_events_accept(s, &ev, now, &res);
}

bool px_node_drained_for(const struct px_server *s, uint32_t node, enum px_drain_cause cause) {
  const struct px_snode *n = &s->nodes[node];
  return n->admin_drain && n->drain_cause == cause;
}

/* The core's own drain and resume: not a record (recovery redoes them). */
static void core_node_event(struct px_server *s, enum px_event_kind kind, uint32_t node, const char *reason,
                            int64_t now) {
  struct px_event ev = {.kind = kind, .node = node, .reason = reason};
  struct px_event_result res;
  px_core_apply(s->core, &ev, now, &res);
  s->nodes_dirty = s->dirty = true;
}

void px_node_hold_recovered(struct px_server *s, uint32_t node, int64_t now) {
  struct px_snode *n = &s->nodes[node];
  if (n->recovered_jobs++) return;
  n->recovered_since = now;
  core_node_event(s, PX_EV_NODE_DRAIN, node, RECOVERY_REASON, now);
}

void px_node_release_recovered(struct px_server *s, uint32_t node, int64_t now) {
  struct px_snode *n = &s->nodes[node];
  if (!n->recovered_jobs || --n->recovered_jobs) return;
  n->recovered_since = 0;
  if (!n->admin_drain) core_node_event(s, PX_EV_NODE_RESUME, node, NULL, now);
}
