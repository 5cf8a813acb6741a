/*
 * metrics.c - counters and histograms for GET /metrics (Prometheus text
 * exposition format 0.0.4). API threads count requests by endpoint and
 * status; the main thread observes cycle, commit and queue-wait durations.
 * The cluster-state gauges (jobs by state, GPUs per partition, fair share)
 * are rendered by the main thread into each snapshot and appended here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

#define NBUCKETS 12
static const double bounds_s[NBUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                          0.05,   0.1,   0.25,   0.5,   1,    2.5};
/* queue wait: seconds from submit to start */
static const double wait_bounds_s[NBUCKETS] = {1,    5,     10,    30,    60,     300,
                                               900, 1800, 3600, 14400, 43200, 86400};

struct hist {
  uint64_t buckets[NBUCKETS], count;
  double sum;
};

struct endpoint_row {
  char endpoint[48];
  int status;
  uint64_t count;
  struct hist lat;
};

struct px_metrics {
  pthread_mutex_t lock;
  struct endpoint_row *rows;
  size_t nrows, cap;
  struct hist cycle, commit, wait;
};

static void observe(struct hist *h, const double *bounds, double v) {
  for (int i = 0; i < NBUCKETS; i++)
    if (v <= bounds[i]) h->buckets[i]++;
  h->count++;
  h->sum += v;
}

struct px_metrics *px_metrics_new(void) {
  struct px_metrics *m = calloc(1, sizeof *m);
  if (m) pthread_mutex_init(&m->lock, NULL);
  return m;
}

void px_metrics_free(struct px_metrics *m) {
  if (!m) return;
  pthread_mutex_destroy(&m->lock);
  free(m->rows);
  free(m);
}

void px_metrics_request(struct px_metrics *m, const char *endpoint, int status, double seconds) {
  pthread_mutex_lock(&m->lock);
  size_t i = 0;
  while (i < m->nrows && !(m->rows[i].status == status && !strcmp(m->rows[i].endpoint, endpoint)))
    i++;
  if (i == m->nrows) {
    if (m->nrows == m->cap) {
      size_t cap = m->cap ? m->cap * 2 : 32;
      struct endpoint_row *r = realloc(m->rows, cap * sizeof *r);
      if (!r) goto out;
      m->rows = r;
      m->cap = cap;
    }
    memset(&m->rows[i], 0, sizeof m->rows[i]);
    snprintf(m->rows[i].endpoint, sizeof m->rows[i].endpoint, "%s", endpoint);
    m->rows[i].status = status;
    m->nrows++;
  }
  m->rows[i].count++;
  observe(&m->rows[i].lat, bounds_s, seconds);
out:
  pthread_mutex_unlock(&m->lock);
}

#define MAIN_OBSERVE(fn, field, bounds)                 \
  void fn(struct px_metrics *m, double seconds) {      \
    pthread_mutex_lock(&m->lock);                      \
    observe(&m->field, bounds, seconds);               \
    pthread_mutex_unlock(&m->lock);                    \
  }
MAIN_OBSERVE(px_metrics_cycle, cycle, bounds_s)
MAIN_OBSERVE(px_metrics_commit, commit, bounds_s)
MAIN_OBSERVE(px_metrics_queue_wait, wait, wait_bounds_s)

struct buf {
  char *p;
  size_t len, cap;
  bool oom;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (b->p && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = (b->cap ? b->cap * 2 : 8192) + (size_t)n;
    char *p = realloc(b->p, cap);
    if (!p) {
      b->oom = true;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
}

static void put_hist(struct buf *b, const char *name, const char *labels, const struct hist *h,
                     const double *bounds) {
  const char *sep = *labels ? "," : "";
  for (int i = 0; i < NBUCKETS; i++)
    put(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep, bounds[i],
        (unsigned long long)h->buckets[i]);
  put(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep, (unsigned long long)h->count);
  put(b, "%s_sum%s%s%s %.6f\n", name, *labels ? "{" : "", labels, *labels ? "}" : "", h->sum);
  put(b, "%s_count%s%s%s %llu\n", name, *labels ? "{" : "", labels, *labels ? "}" : "",
      (unsigned long long)h->count);
}

char *px_metrics_render(struct px_metrics *m, const char *state_text) {
  struct buf b = {0};
  pthread_mutex_lock(&m->lock);
  put(&b, "# HELP phalanx_api_requests_total API requests by endpoint and HTTP status.\n"
          "# TYPE phalanx_api_requests_total counter\n");
  for (size_t i = 0; i < m->nrows; i++)
    put(&b, "phalanx_api_requests_total{endpoint=\"%s\",status=\"%d\"} %llu\n",
        m->rows[i].endpoint, m->rows[i].status, (unsigned long long)m->rows[i].count);
  put(&b, "# HELP phalanx_api_request_duration_seconds API request latency.\n"
          "# TYPE phalanx_api_request_duration_seconds histogram\n");
  for (size_t i = 0; i < m->nrows; i++) {
    char labels[96];
    snprintf(labels, sizeof labels, "endpoint=\"%s\",status=\"%d\"", m->rows[i].endpoint,
             m->rows[i].status);
    put_hist(&b, "phalanx_api_request_duration_seconds", labels, &m->rows[i].lat, bounds_s);
  }
  put(&b, "# HELP phalanx_scheduler_cycle_duration_seconds Scheduling cycle duration.\n"
          "# TYPE phalanx_scheduler_cycle_duration_seconds histogram\n");
  put_hist(&b, "phalanx_scheduler_cycle_duration_seconds", "", &m->cycle, bounds_s);
  put(&b, "# HELP phalanx_journal_commit_duration_seconds Journal group-commit latency.\n"
          "# TYPE phalanx_journal_commit_duration_seconds histogram\n");
  put_hist(&b, "phalanx_journal_commit_duration_seconds", "", &m->commit, bounds_s);
  put(&b, "# HELP phalanx_job_queue_wait_seconds Time from eligibility to start.\n"
          "# TYPE phalanx_job_queue_wait_seconds histogram\n");
  put_hist(&b, "phalanx_job_queue_wait_seconds", "", &m->wait, wait_bounds_s);
  pthread_mutex_unlock(&m->lock);
  if (state_text) put(&b, "%s", state_text);
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p ? b.p : calloc(1, 1);
}
