/*
 * api_node_events.c - GET /v1/accounting/events: the node events of
 * accounting (store.h px_node_event_row; sacctmgr show event, `phalanx
 * export`), read through the server's second, read-only store connection.
 * start and end (Unix seconds) select the events overlapping [start, end):
 * those still open or ended at or after start, begun before end. Nodes are
 * filtered by the client (a hostlist it expands itself).
 */
#include <stdlib.h>
#include <string.h>

#include "server/api.h"
#include "server/tables.h"

static int event_row(void *ctx, const struct px_node_event_row *e) {
  json_t *o = json_pack("{ss ss ss ss ss sI sI}", "node", e->node ? e->node : "", "state", e->state ? e->state : "",
                        "reason", e->reason ? e->reason : "", "cause", e->cause ? e->cause : "", "user",
                        e->user ? e->user : "", "start", (json_int_t)e->start, "end", (json_int_t)e->end);
  return o ? json_array_append_new(ctx, o) : PX_ENOMEM;
}

/* A Unix time, or absent (0); false when it is not one. */
static bool unix_arg(struct px_api_call *c, const char *name, int64_t *out) {
  const char *v = px_api_arg(c, name);
  char *end;
  *out = 0;
  if (!v) return true;
  long long t = strtoll(v, &end, 10);
  if (end == v || *end || t < 0) return false;
  *out = t;
  return true;
}

void px_api_node_events(struct px_api_call *c) {
  struct px_node_event_query q;
  if (!unix_arg(c, "start", &q.start)) return px_api_error(c, 400, "INVALID", "start: expected a Unix time");
  if (!unix_arg(c, "end", &q.end)) return px_api_error(c, 400, "INVALID", "end: expected a Unix time");
  json_t *rows = json_array();
  if (!rows) return px_api_error(c, 503, "UNAVAILABLE", "out of memory");
  pthread_mutex_lock(&c->s->rstore_lock);
  int rc = px_store_node_events_query(c->s->rstore, &q, event_row, rows);
  pthread_mutex_unlock(&c->s->rstore_lock);
  json_t *o = rc ? NULL : json_object();
  const char *cluster = c->s->conf->cluster_name;
  if (o) json_object_set_new(o, "cluster", json_string(cluster ? cluster : ""));
  if (!o || json_object_set_new(o, "events", rows)) { /* set_new takes rows either way */
    if (!o) json_decref(rows);
    json_decref(o);
    return px_api_error(c, 503, "UNAVAILABLE", "node event query failed");
  }
  c->answer = json_dumps(o, JSON_COMPACT);
  c->status = c->answer ? 200 : 503;
  json_decref(o);
}
