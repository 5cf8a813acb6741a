/*
 * outbox.c - per-node queues of orders for agents (server.h). The main
 * thread pushes an order only after the change behind it is journaled; an
 * agent long-polls for orders newer than the last sequence it has acted on,
 * which also acknowledges (drops) the older ones. An agent that restarts
 * asks with after=0 and receives everything not yet acknowledged again, so
 * launches are idempotent on the agent side by job id.
 *
 * A poll waits in one of two ways: its thread sleeps on the node's
 * condition (px_outbox_wait: a thread per connection), or it parks a wake-up
 * on the node and its thread goes on serving other connections
 * (px_outbox_park: 10,000 agents' polls without 10,000 threads). Parked
 * polls sit in a list walked by px_outbox_expire once a second or so.
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/nodes/nodes.h"

#include "proto/agent_msg.h"
#include "util/log.h"

struct node_box {
  struct px_order *v;
  size_t len, cap;
  pthread_cond_t cond;
  /* a parked poll: wake(ctx) once */
  void (*wake)(void *ctx);
  void *ctx;
  int64_t deadline_ns;
  bool listed;                  /* in px_outbox.parked */
  bool no_time_limit;           /* its agent refuses "time_limit_s" (proto/agent_msg.h) */
};

struct px_outbox {
  pthread_mutex_t lock;
  struct node_box *nodes;
  uint32_t nnodes;
  uint64_t next_seq;
  bool stopping;
  uint32_t *parked;             /* nodes with a parked poll (unordered) */
  uint32_t nparked;
};

struct px_outbox *px_outbox_new(const struct px_conf *conf) {
  struct px_outbox *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->nnodes = conf->nnodes;
  o->nodes = calloc(conf->nnodes ? conf->nnodes : 1, sizeof *o->nodes);
  o->parked = calloc(conf->nnodes ? conf->nnodes : 1, sizeof *o->parked);
  if (!o->nodes || !o->parked) {
    free(o->nodes);
    free(o->parked);
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

void px_outbox_renumber(struct px_outbox *o) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  uint64_t us = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
  pthread_mutex_lock(&o->lock);
  if (us > o->next_seq) o->next_seq = us;
  pthread_mutex_unlock(&o->lock);
}

void px_outbox_free(struct px_outbox *o) {
  if (!o) return;
  for (uint32_t i = 0; i < o->nnodes; i++) {
    for (size_t k = 0; k < o->nodes[i].len; k++) free(o->nodes[i].v[k].json);
    free(o->nodes[i].v);
    pthread_cond_destroy(&o->nodes[i].cond);
  }
  free(o->nodes);
  free(o->parked);
  pthread_mutex_destroy(&o->lock);
  free(o);
}

/* Runs a parked poll's wake-up (lock held; the wake-up must not take it)
 * and leaves the node's entry in o->parked for expire to drop. */
static void unpark(struct node_box *b) {
  if (!b->wake) return;
  void (*wake)(void *) = b->wake;
  b->wake = NULL;
  wake(b->ctx);
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
  unpark(b);
  pthread_mutex_unlock(&o->lock);
  return 0;
}

/* Drops orders the agent has acknowledged (seq <= after). An after this
 * outbox never reached counts another controller's orders (the agent
 * polled the leader before this one took over): none of ours is
 * acknowledged, all are sent. Lock held. */
static void drop_acked(const struct px_outbox *o, struct node_box *b, uint64_t after) {
  if (after >= o->next_seq) return;
  size_t k = 0;
  while (k < b->len && b->v[k].seq <= after) free(b->v[k++].json);
  if (!k) return;
  memmove(b->v, b->v + k, (b->len - k) * sizeof *b->v);
  b->len -= k;
}

void px_outbox_agent_version(struct px_outbox *o, uint32_t node, const char *version) {
  if (node >= o->nnodes) return;
  pthread_mutex_lock(&o->lock);
  o->nodes[node].no_time_limit = !px_agent_takes_time_limit(version);
  pthread_mutex_unlock(&o->lock);
}

/* Whether order e goes to the node: a new time limit is left out for an
 * agent that refuses the field (it would refuse the whole answer, and every
 * answer after it); it keeps the old limit there. Lock held. */
static bool deliverable(const struct node_box *b, int kind, json_t *e, uint32_t node) {
  json_t *limit = kind == PX_ORDER_SIGNAL && b->no_time_limit ? json_object_get(e, "time_limit_s") : NULL;
  if (!limit) return true;
  px_warn("node index %u: its agent is older than version 0.2.0: job %lld's new time limit (%lld s) not sent, "
          "the job keeps its old one there", node, (long long)json_integer_value(json_object_get(e, "job_id")),
          (long long)json_integer_value(limit));
  return false;
}

/* {"seq":S,"launch":[...],"signal":[...]} of the queued orders, with
 * "step":[...] only when there are steps (agents before steps refuse the
 * key); S covers the orders left out too, so the agent acknowledges them.
 * Lock held. */
static char *render(const struct node_box *b, uint32_t node, uint64_t after) {
  json_t *o = json_object(), *launch = json_array(), *sig = json_array(), *step = json_array();
  uint64_t seq = after;
  for (size_t k = 0; o && launch && sig && step && k < b->len; k++) {
    json_t *e = json_loads(b->v[k].json, 0, NULL);
    int kind = b->v[k].kind;
    if (e && !deliverable(b, kind, e, node)) json_decref(e), e = NULL;
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
  drop_acked(o, b, after);
  while (!b->len && !o->stopping) {
    if (pthread_cond_timedwait(&b->cond, &o->lock, &ts) == ETIMEDOUT) break;
  }
  char *s = render(b, node, after);
  pthread_mutex_unlock(&o->lock);
  return s;
}

bool px_outbox_park(struct px_outbox *o, uint32_t node, uint64_t after, int64_t deadline_ns,
                    void (*wake)(void *ctx), void *ctx) {
  if (node >= o->nnodes) return true;
  pthread_mutex_lock(&o->lock);
  struct node_box *b = &o->nodes[node];
  drop_acked(o, b, after);
  bool ready = b->len || o->stopping;
  if (!ready) {
    unpark(b); /* an earlier poll of the node (its agent restarted): answered now */
    if (!b->listed) o->parked[o->nparked++] = node, b->listed = true;
    b->wake = wake;
    b->ctx = ctx;
    b->deadline_ns = deadline_ns;
  }
  pthread_mutex_unlock(&o->lock);
  return ready;
}

char *px_outbox_take(struct px_outbox *o, uint32_t node, uint64_t after) {
  if (node >= o->nnodes) return NULL;
  pthread_mutex_lock(&o->lock);
  struct node_box *b = &o->nodes[node];
  drop_acked(o, b, after);
  char *s = render(b, node, after);
  pthread_mutex_unlock(&o->lock);
  return s;
}

void px_outbox_expire(struct px_outbox *o, int64_t now_ns) {
  pthread_mutex_lock(&o->lock);
  uint32_t keep = 0;
  for (uint32_t i = 0; i < o->nparked; i++) {
    struct node_box *b = &o->nodes[o->parked[i]];
    if (b->wake && (b->deadline_ns <= now_ns || o->stopping)) unpark(b);
    if (b->wake) o->parked[keep++] = o->parked[i];
    else b->listed = false;
  }
  o->nparked = keep;
  pthread_mutex_unlock(&o->lock);
}

void px_outbox_stop(struct px_outbox *o) {
  pthread_mutex_lock(&o->lock);
  o->stopping = true;
  for (uint32_t i = 0; i < o->nnodes; i++) pthread_cond_broadcast(&o->nodes[i].cond);
  pthread_mutex_unlock(&o->lock);
  px_outbox_expire(o, INT64_MAX);
}
