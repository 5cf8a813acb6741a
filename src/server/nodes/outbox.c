/*
 * outbox.c - per-node queues of orders for agents (server.h). The main
 * thread pushes an order only after the change behind it is journaled; an
 * agent long-polls for orders newer than the last sequence it has acted on,
 * which also acknowledges (drops) the older ones. An agent that restarts
 * asks with after=0 and receives everything not yet acknowledged again, so
 * launches are idempotent on the agent side by job id.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server.h"

struct node_box {
  struct px_order *v;
  size_t len, cap;
  pthread_cond_t cond;
};

struct px_outbox {
  pthread_mutex_t lock;
  struct node_box *nodes;
  uint32_t nnodes;
  uint64_t next_seq;
  bool stopping;
};

struct px_outbox *px_outbox_new(const struct px_conf *conf) {
  struct px_outbox *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->nnodes = conf->nnodes;
  o->nodes = calloc(conf->nnodes ? conf->nnodes : 1, sizeof *o->nodes);
  if (!o->nodes) {
    free(o);
    return NULL;
  }
  pthread_mutex_init(&o->lock, NULL);
  for (uint32_t i = 0; i < o->nnodes; i++) pthread_cond_init(&o->nodes[i].cond, NULL);
  /* Order seqs start at the wall clock in microseconds so that they keep
   * growing across server restarts: an agent polling with the last seq it saw
   * from the previous server never mistakes new orders for acknowledged ones. */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  o->next_seq = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
  return o;
}

void px_outbox_free(struct px_outbox *o) {
  if (!o) return;
  for (uint32_t i = 0; i < o->nnodes; i++) {
    for (size_t k = 0; k < o->nodes[i].len; k++) free(o->nodes[i].v[k].json);
    free(o->nodes[i].v);
    pthread_cond_destroy(&o->nodes[i].cond);
  }
  free(o->nodes);
  pthread_mutex_destroy(&o->lock);
  free(o);
}

int px_outbox_push(struct px_outbox *o, uint32_t node, int kind, char *json) {
  if (node >= o->nnodes) {
    free(json);
    return PX_EINVAL;
  }
  pthread_mutex_lock(&o->lock);
  struct node_box *b = &o->nodes[node];
  if (b->len == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 8;
    struct px_order *v = realloc(b->v, cap * sizeof *v);
    if (!v) {
      pthread_mutex_unlock(&o->lock);
      free(json);
      return PX_ENOMEM;
    }
    b->v = v;
    b->cap = cap;
  }
  b->v[b->len++] = (struct px_order){o->next_seq++, json, kind};
  pthread_cond_broadcast(&b->cond);
  pthread_mutex_unlock(&o->lock);
  return 0;
}

/* Drops orders the agent has acknowledged (seq <= after). Lock held. */
static void drop_acked(struct node_box *b, uint64_t after) {
  size_t k = 0;
  while (k < b->len && b->v[k].seq <= after) free(b->v[k++].json);
  if (!k) return;
  memmove(b->v, b->v + k, (b->len - k) * sizeof *b->v);
  b->len -= k;
}

/* {"seq":S,"launch":[...],"signal":[...]} of the queued orders, with
 * "step":[...] only when there are steps (agents before steps refuse the
 * key). Lock held. */
static char *render(const struct node_box *b, uint64_t after) {
  json_t *o = json_object(), *launch = json_array(), *sig = json_array(), *step = json_array();
  uint64_t seq = after;
  for (size_t k = 0; o && launch && sig && step && k < b->len; k++) {
    json_t *e = json_loads(b->v[k].json, 0, NULL);
    int kind = b->v[k].kind;
    if (e) json_array_append_new(kind == PX_ORDER_LAUNCH ? launch : kind == PX_ORDER_STEP ? step : sig, e);
    seq = b->v[k].seq;
  }
  json_object_set_new(o, "seq", json_integer((json_int_t)seq));
  json_object_set_new(o, "launch", launch);
  json_object_set_new(o, "signal", sig);
  if (json_array_size(step)) json_object_set(o, "step", step);
  json_decref(step);
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return s;
}

char *px_outbox_wait(struct px_outbox *o, uint32_t node, uint64_t after, int64_t deadline_ns) {
  if (node >= o->nnodes) return NULL;
  struct timespec ts = {deadline_ns / 1000000000, deadline_ns % 1000000000};
  pthread_mutex_lock(&o->lock);
  struct node_box *b = &o->nodes[node];
  drop_acked(b, after);
  while (!b->len && !o->stopping) {
    if (pthread_cond_timedwait(&b->cond, &o->lock, &ts) == ETIMEDOUT) break;
  }
  char *s = render(b, after);
  pthread_mutex_unlock(&o->lock);
  return s;
}

void px_outbox_stop(struct px_outbox *o) {
  pthread_mutex_lock(&o->lock);
  o->stopping = true;
  for (uint32_t i = 0; i < o->nnodes; i++) pthread_cond_broadcast(&o->nodes[i].cond);
  pthread_mutex_unlock(&o->lock);
}
