/*
 * api_ha.c - GET /v1/controllers (issue 16): every controller of the
 * store with its role, term, the journal seq it has applied and its lag
 * behind the leader's, read from the store's table of controllers
 * (store.h), so that any controller answers, a standby too. A server on
 * SQLite is the one controller there is.
 */
#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

#include "server/api.h"
#include "server/journal/journal.h"
#include "server/tables.h"

static int ctl_row(void *ctx, const struct px_store_ctl *c) {
  json_t *o = json_pack("{ss ss ss sI sI sI sI}", "name", c->name, "addr", c->addr, "role", c->role,
                        "term", (json_int_t)c->term, "seq", (json_int_t)c->seq, "pid",
                        (json_int_t)c->pid, "age_ms", (json_int_t)c->age_ms);
  return o && json_array_append_new(ctx, o) == 0 ? 0 : PX_ENOMEM;
}

/* lag = the leader's applied seq - each one's (0 for the leader). */
static void add_lag(json_t *list) {
  json_int_t top = 0;
  size_t i;
  json_t *o;
  json_array_foreach(list, i, o) {
    json_int_t seq = json_integer_value(json_object_get(o, "seq"));
    if (seq > top) top = seq;
  }
  json_array_foreach(list, i, o) {
    json_int_t lag = top - json_integer_value(json_object_get(o, "seq"));
    json_object_set_new(o, "lag", json_integer(lag));
  }
}

static json_t *single(struct px_server *s) {
  json_t *a = json_array();
  json_array_append_new(a, json_pack("{ss ss ss sI sI sI sI sI}", "name", "local", "addr",
                                     s->opts.socket_path, "role", "leader", "term", (json_int_t)0,
                                     "seq", (json_int_t)atomic_load(&s->committed_seq), "pid",
                                     (json_int_t)getpid(), "age_ms", (json_int_t)0, "lag",
                                     (json_int_t)0));
  return a;
}

void px_api_controllers(struct px_api_call *c) {
  struct px_server *s = c->s;
  json_t *list;
  if (!s->ha) {
    list = single(s);
  } else {
    list = json_array();
    pthread_mutex_lock(&s->rstore_lock);
    int rc = px_store_ctl_list(s->rstore, ctl_row, list);
    pthread_mutex_unlock(&s->rstore_lock);
    if (rc) {
      json_decref(list);
      return px_api_error(c, 503, "UNAVAILABLE", "controllers: the store cannot be read");
    }
    add_lag(list);
  }
  char leader[256];
  px_ha_leader_addr(s, leader, sizeof leader);
  /* applied_seq: this controller's own, live (the table's is up to a report old) */
  json_t *o = json_pack("{so sI ss sI}", "controllers", list, "term", (json_int_t)px_ha_term(s),
                        "leader", leader, "applied_seq", (json_int_t)atomic_load(&s->committed_seq));
  c->answer = o ? json_dumps(o, JSON_COMPACT) : NULL;
  c->status = c->answer ? 200 : 503;
  json_decref(o);
}
