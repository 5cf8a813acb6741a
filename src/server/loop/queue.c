/*
 * queue.c - requests from HTTP threads to the main thread (server.h). A FIFO
 * under one mutex; the caller sleeps on its own semaphore so that answering
 * a batch wakes exactly the threads whose requests were in it (one of them
 * first, to commit the batch: commit.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "server/server.h"

void px_queue_init(struct px_queue *q) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->wake, &ca);
  pthread_condattr_destroy(&ca);
  q->head = q->tail = NULL;
  q->stopping = q->poked = false;
}

void px_queue_fini(struct px_queue *q) {
  pthread_mutex_destroy(&q->lock);
  pthread_cond_destroy(&q->wake);
}

int px_queue_call(struct px_queue *q, struct px_req *r) {
  sem_init(&r->done, 0, 0);
  r->next = NULL;
  r->lead = NULL;
  r->status = 0;
  r->body = NULL;
  pthread_mutex_lock(&q->lock);
  if (q->stopping) {
    pthread_mutex_unlock(&q->lock);
    sem_destroy(&r->done);
    return PX_EAGAIN;
  }
  if (q->tail)
    q->tail->next = r;
  else
    q->head = r;
  q->tail = r;
  q->len++;
  pthread_cond_signal(&q->wake);
  pthread_mutex_unlock(&q->lock);
  while (sem_wait(&r->done) != 0 && errno == EINTR) {
  }
  if (r->lead) px_commit_lead(r); /* woken to commit its batch (commit.c) */
  sem_destroy(&r->done);
  return 0;
}

bool px_queue_pending(struct px_queue *q) {
  pthread_mutex_lock(&q->lock);
  bool any = q->head != NULL;
  pthread_mutex_unlock(&q->lock);
  return any;
}

void px_queue_poke(struct px_queue *q) {
  pthread_mutex_lock(&q->lock);
  q->poked = true;
  pthread_cond_signal(&q->wake);
  pthread_mutex_unlock(&q->lock);
}

struct px_req *px_queue_take(struct px_queue *q, int64_t deadline_ns) {
  struct timespec ts = {deadline_ns / 1000000000, deadline_ns % 1000000000};
  pthread_mutex_lock(&q->lock);
  while (!q->head && !q->stopping && !q->poked) {
    if (pthread_cond_timedwait(&q->wake, &q->lock, &ts) == ETIMEDOUT) break;
  }
  q->poked = false;
  struct px_req *r = q->head;
  q->head = q->tail = NULL;
  q->len = 0;
  pthread_mutex_unlock(&q->lock);
  return r;
}

struct px_req *px_queue_take_more(struct px_queue *q, struct px_req *reqs, size_t want,
                                  int64_t deadline_ns) {
  struct timespec ts = {deadline_ns / 1000000000, deadline_ns % 1000000000};
  size_t have = 0;
  struct px_req *last = reqs;
  for (; last && last->next; last = last->next) have++;
  have += last != NULL;
  pthread_mutex_lock(&q->lock);
  while (have + q->len < want && !q->stopping) {
    if (pthread_cond_timedwait(&q->wake, &q->lock, &ts) == ETIMEDOUT) break;
  }
  struct px_req *more = q->head;
  q->head = q->tail = NULL;
  q->len = 0;
  pthread_mutex_unlock(&q->lock);
  if (!last) return more;
  last->next = more;
  return reqs;
}

void px_req_answer(struct px_req *r, int status, char *body) {
  free(r->body); /* a later answer replaces an earlier one */
  r->status = status;
  r->body = body;
}

void px_req_done(struct px_req *r) {
  if (!r->status) px_req_answer(r, 500, NULL);
  sem_post(&r->done); /* r may be gone once this returns */
}

void px_req_fini(struct px_req *r) {
  for (size_t i = 0; i < r->nspecs; i++) px_jobspec_fini(&r->specs[i]);
  free(r->specs);
  r->specs = NULL;
  r->nspecs = 0;
  if (r->kind == PX_REQ_AGENT_REGISTER) px_node_report_fini(&r->report);
  free(r->text);
  r->text = NULL;
}

void px_queue_stop(struct px_queue *q) {
  pthread_mutex_lock(&q->lock);
  q->stopping = true;
  pthread_cond_broadcast(&q->wake);
  pthread_mutex_unlock(&q->lock);
}
