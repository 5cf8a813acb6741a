/*
 * ratelimit.c - per-user token buckets (http/http.h): each uid earns rate
 * tokens per second up to burst; a request spends one. One mutex: the work
 * under it is a hash lookup and two multiplications.
 */
#include <pthread.h>
#include <stdlib.h>

#include "server/http/http.h"
#include "util/map.h"

struct bucket {
  double tokens, last_s;
};

struct px_ratelimit {
  pthread_mutex_t lock;
  double rate, burst;
  struct px_map index; /* uid -> slot in buckets */
  struct bucket *buckets;
  size_t n, cap;
};

struct px_ratelimit *px_ratelimit_new(double rate_per_s, double burst) {
  struct px_ratelimit *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  pthread_mutex_init(&r->lock, NULL);
  r->rate = rate_per_s;
  r->burst = burst > 1 ? burst : 1;
  return r;
}

void px_ratelimit_free(struct px_ratelimit *r) {
  if (!r) return;
  pthread_mutex_destroy(&r->lock);
  px_map_fini(&r->index);
  free(r->buckets);
  free(r);
}

static struct bucket *find(struct px_ratelimit *r, uint32_t uid, double now_s) {
  uint64_t slot;
  if (px_map_get(&r->index, uid, &slot)) return &r->buckets[slot];
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 64;
    struct bucket *b = realloc(r->buckets, cap * sizeof *b);
    if (!b) return NULL;
    r->buckets = b;
    r->cap = cap;
  }
  if (px_map_put(&r->index, uid, r->n)) return NULL;
  r->buckets[r->n] = (struct bucket){r->burst, now_s};
  return &r->buckets[r->n++];
}

bool px_ratelimit_take(struct px_ratelimit *r, uint32_t uid, double now_s) {
  if (!r || r->rate <= 0) return true;
  pthread_mutex_lock(&r->lock);
  struct bucket *b = find(r, uid, now_s);
  bool ok = true; /* out of memory: fail open rather than lock users out */
  if (b) {
    b->tokens += (now_s - b->last_s) * r->rate;
    if (b->tokens > r->burst) b->tokens = r->burst;
    b->last_s = now_s;
    ok = b->tokens >= 1;
    if (ok) b->tokens -= 1;
  }
  pthread_mutex_unlock(&r->lock);
  return ok;
}
