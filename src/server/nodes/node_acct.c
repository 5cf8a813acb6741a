/*
 * node_acct.c - the accounting of node events (sacctmgr show event, issue
 * 21), on the main thread: when a node goes DOWN or is drained a row opens
 * (node, state, reason, cause, user, start; end 0), and when it comes back,
 * is resumed or changes state the node's open row is ended (the new state
 * opens its own), as Slurm's event table keeps them. `phalanx export`
 * writes them next to the jobs, and `phalanx sim --from-accounting` takes
 * the nodes out of service for each span (src/sim/node_events.c).
 *
 * Live only, by the leader: drains and resumes as the road records them
 * (events.c px_events_record, never on recovery or on a standby following
 * the journal), down and up as the node checks find them (nodes.c; not
 * journaled). The rows ride the group commit (commit.c); the store keys
 * them (node, start, state), so a repeat in the same second is one row.
 */
#include "server/journal/journal.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"
#include "util/log.h"

static void add(struct px_server *s, const struct px_node_event_row *e) {
  int rc = px_commit_add_node_event(s, e);
  if (rc) px_warn("accounting: node %s event not written: %s", e->node, px_strerror(rc));
}

/* The node's open rows of state (NULL: any) end now. */
static void close_open(struct px_server *s, const char *node, const char *state, int64_t now) {
  add(s, &(struct px_node_event_row){.close = true, .node = node, .state = state, .end = now});
}

/* A row of the node's drain as it stands (its reason, cause and who). */
static void open_drain(struct px_server *s, uint32_t node, int64_t now) {
  const struct px_snode *n = &s->nodes[node];
  add(s, &(struct px_node_event_row){.node = s->conf->nodes[node].name, .state = "DRAIN", .reason = n->reason,
                                     .cause = px_drain_cause_name((enum px_drain_cause)n->drain_cause),
                                     .user = n->reason_by, .start = now});
}

/* Back up: its DOWN row ends; a drained node's drain goes on in a row of
 * its own, when its DOWN row ended it (down_recorded: seen going down by
 * this server). A node down since the server started opened no row; one
 * that went down under an earlier run of the server may have: its DOWN
 * row is ended all the same, its drain's row (ended then) not reopened. */
static void back_up(struct px_server *s, uint32_t node, int64_t now) {
  struct px_snode *n = &s->nodes[node];
  close_open(s, s->conf->nodes[node].name, "DOWN", now);
  if (n->down_recorded && n->admin_drain) open_drain(s, node, now);
  n->down_recorded = false;
}

void px_node_acct_event(struct px_server *s, const struct px_event *ev, int64_t now) {
  const char *name = s->conf->nodes[ev->node].name;
  switch (ev->kind) {
    case PX_EV_NODE_DRAIN:
      close_open(s, name, NULL, now);
      open_drain(s, ev->node, now);
      s->nodes[ev->node].down_recorded = false;
      return;
    case PX_EV_NODE_DOWN:
      close_open(s, name, NULL, now);
      add(s, &(struct px_node_event_row){.node = name, .state = "DOWN", .reason = ev->reason ? ev->reason : "",
                                         .cause = "", .user = ev->by ? ev->by : "", .start = now});
      s->nodes[ev->node].down_recorded = true;
      return;
    case PX_EV_NODE_UP:
      back_up(s, ev->node, now);
      return;
    case PX_EV_NODE_RESUME: /* lifts a down too (events.c fold_node) */
      close_open(s, name, NULL, now);
      s->nodes[ev->node].down_recorded = false;
      return;
    default:
      return;
  }
}
