/*
 * snap.c - immutable, refcounted snapshots for readers (server.h). The box's
 * mutex is held only to swap the pointer or take a reference: a reader
 * listing 100,000 jobs holds no lock while it encodes them, and the main
 * thread never waits for a reader.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "proto/views_json.h"
#include "server/server.h"

struct px_jview *px_jview_new(const struct px_job_info *info, uint64_t mseq) {
  struct px_jview *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  atomic_init(&v->refs, 1);
  atomic_init(&v->json, NULL);
  v->mseq = mseq;
  v->info = *info; /* takes ownership of info's strings */
  return v;
}

void px_jview_ref(struct px_jview *v) { atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed); }

void px_jview_unref(struct px_jview *v) {
  if (!v || atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) != 1) return;
  px_job_info_fini(&v->info);
  free(atomic_load(&v->json));
  free(v);
}

const char *px_jview_json(struct px_jview *v) {
  char *cur = atomic_load_explicit(&v->json, memory_order_acquire);
  if (cur) return cur;
  char *mine = px_job_info_encode(&v->info);
  if (!mine) return NULL;
  /* Two readers may race to encode: the loser frees its copy. */
  if (!atomic_compare_exchange_strong(&v->json, &cur, mine)) {
    free(mine);
    return cur;
  }
  return mine;
}

struct px_blob *px_blob_alloc(size_t len) {
  struct px_blob *b = malloc(sizeof *b + len + 1);
  if (!b) return NULL;
  atomic_init(&b->refs, 1);
  b->len = len;
  b->text[len] = '\0';
  return b;
}

struct px_blob *px_blob_new(const char *text) {
  size_t len = strlen(text);
  struct px_blob *b = px_blob_alloc(len);
  if (b) memcpy(b->text, text, len + 1);
  return b;
}

void px_blob_ref(struct px_blob *b) {
  if (b) atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

void px_blob_unref(struct px_blob *b) {
  if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) free(b);
}

struct px_snap_parked {
  void (*wake)(void *ctx);
  void *ctx;
  uint64_t after;
  int64_t deadline_ns;
  struct px_snap_parked *next;
};

/* Wakes and forgets the parked watches that may answer now: every one when
 * all, else those with a newer snapshot or past their deadline (lock held). */
static void wake_parked(struct px_snapbox *b, bool all, int64_t now_ns) {
  struct px_snap_parked **pp = &b->parked;
  while (*pp) {
    struct px_snap_parked *p = *pp;
    if (all || p->deadline_ns <= now_ns || (b->cur && b->cur->seq > p->after)) {
      *pp = p->next;
      p->wake(p->ctx);
      free(p);
    } else {
      pp = &p->next;
    }
  }
}

bool px_snap_park(struct px_snapbox *b, uint64_t after, int64_t deadline_ns,
                  void (*wake)(void *ctx), void *ctx) {
  pthread_mutex_lock(&b->lock);
  bool ready = b->stopping || (b->cur && b->cur->seq > after);
  if (!ready) {
    struct px_snap_parked *p = malloc(sizeof *p);
    if (p) *p = (struct px_snap_parked){wake, ctx, after, deadline_ns, b->parked}, b->parked = p;
    else ready = true; /* no memory: answer now rather than never */
  }
  pthread_mutex_unlock(&b->lock);
  return ready;
}

void px_snap_expire(struct px_snapbox *b, int64_t now_ns) {
  pthread_mutex_lock(&b->lock);
  wake_parked(b, false, now_ns);
  pthread_mutex_unlock(&b->lock);
}

void px_snapbox_init(struct px_snapbox *b) {
  pthread_mutex_init(&b->lock, NULL);
  pthread_cond_init(&b->changed, NULL);
  b->cur = NULL;
  b->stopping = false;
  b->parked = NULL;
}

void px_snapbox_fini(struct px_snapbox *b) {
  px_snap_release(b->cur);
  b->cur = NULL;
  pthread_mutex_destroy(&b->lock);
  pthread_cond_destroy(&b->changed);
}

void px_snapbox_stop(struct px_snapbox *b) {
  pthread_mutex_lock(&b->lock);
  b->stopping = true;
  pthread_cond_broadcast(&b->changed);
  wake_parked(b, true, 0);
  pthread_mutex_unlock(&b->lock);
}

void px_snapbox_publish(struct px_snapbox *b, struct px_snap *s) {
  pthread_mutex_lock(&b->lock);
  struct px_snap *old = b->cur;
  b->cur = s;
  pthread_cond_broadcast(&b->changed);
  if (b->parked) wake_parked(b, false, INT64_MIN);
  pthread_mutex_unlock(&b->lock);
  px_snap_release(old); /* outside the lock: freeing may take a while */
}

struct px_snap *px_snap_acquire(struct px_snapbox *b) {
  pthread_mutex_lock(&b->lock);
  struct px_snap *s = b->cur;
  if (s) atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
  pthread_mutex_unlock(&b->lock);
  return s;
}

struct px_snap *px_snap_wait(struct px_snapbox *b, uint64_t after, int64_t deadline_ns) {
  struct timespec ts = {deadline_ns / 1000000000, deadline_ns % 1000000000};
  pthread_mutex_lock(&b->lock);
  while (!b->stopping && (!b->cur || b->cur->seq <= after)) {
    if (pthread_cond_timedwait(&b->changed, &b->lock, &ts) == ETIMEDOUT) break;
  }
  struct px_snap *s = b->cur;
  if (s) atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
  pthread_mutex_unlock(&b->lock);
  return s;
}

void px_snap_release(struct px_snap *s) {
  if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
  for (size_t i = 0; i < s->njobs; i++) px_jview_unref(s->jobs[i]);
  free(s->jobs);
  px_blob_unref(s->nodes);
  px_blob_unref(s->partitions);
  px_blob_unref(s->shares);
  px_blob_unref(s->state_metrics);
  px_blob_unref(s->reservations);
  free(s);
}

size_t px_snap_lower_bound(const struct px_snap *s, uint64_t id) {
  size_t lo = 0, hi = s->njobs;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->jobs[mid]->info.job_id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The warmer: encodes the JSON of every view of each new snapshot on its own
 * thread, so that a listing finds the text ready and the main thread never
 * spends its time encoding. */
static void *warmer(void *arg) {
  struct px_snapbox *b = arg;
  uint64_t done = 0;
  struct sched_param sp = {0}; /* a helper of readers: below the main loop (http.c) */
  pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
  setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
  for (;;) {
    struct px_snap *s = px_snap_wait(b, done, px_snap_far_future_ns());
    pthread_mutex_lock(&b->lock);
    bool stop = b->stopping;
    pthread_mutex_unlock(&b->lock);
    if (stop || !s) {
      px_snap_release(s);
      return NULL;
    }
    for (size_t i = s->njobs; i-- > 0;) px_jview_json(s->jobs[i]); /* newest first */
    done = s->seq;
    px_snap_release(s);
  }
}

int px_snapbox_start_warmer(struct px_snapbox *b) {
  b->warmer_started = pthread_create(&b->warmer, NULL, warmer, b) == 0;
  return b->warmer_started ? 0 : PX_ENOMEM;
}

void px_snapbox_join_warmer(struct px_snapbox *b) {
  if (b->warmer_started) pthread_join(b->warmer, NULL);
  b->warmer_started = false;
}

int64_t px_snap_far_future_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return ((int64_t)t.tv_sec + 3600) * 1000000000LL;
}
