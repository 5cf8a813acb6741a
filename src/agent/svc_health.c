/*
 * svc_health.c - the health rules of a replica and the monitor that runs
 * each replica's checks on a thread of its own (svc_health.h).
 */
#include "agent/svc_health.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/json_rd.h"
#include "util/error.h"
#include "util/log.h"

#define FIRST_PROBE_MS 50
/* Starting probes double up to this, not to the interval: doubling to a
 * second put the probe that finds an app up after 400 ms at 750 ms, and a
 * loaded node's first ready endpoint near 900 ms (svc_first_ready_ms,
 * target 500). Four loopback checks a second while a replica starts cost
 * nothing next to what it is starting. */
#define STARTING_PROBE_MAX_MS 200

/* ---- the rules ---- */

const char *px_health_state_name(enum px_health_state s) {
  return s == PX_HS_READY ? "ready" : s == PX_HS_UNHEALTHY ? "unhealthy" : "starting";
}

void px_health_fsm_init(struct px_health_fsm *f, const struct px_health_check *c, int64_t now_ms, bool reattached) {
  memset(f, 0, sizeof *f);
  f->interval_ms = c->interval_s * 1000;
  f->grace_ms = reattached ? 0 : c->startup_grace_s * 1000;
  f->threshold = c->failure_threshold ? c->failure_threshold : 1;
  f->start_ms = now_ms;
  f->counted_ms = INT64_MIN / 2;
  f->probe_ms = FIRST_PROBE_MS;
  f->state = PX_HS_STARTING;
}

bool px_health_fsm_step(struct px_health_fsm *f, bool ok, int64_t now_ms) {
  enum px_health_state was = f->state;
  if (ok) {
    f->fails = 0;
    f->state = PX_HS_READY;
    return was != f->state;
  }
  if (now_ms - f->start_ms < f->grace_ms) return false;
  if (f->state == PX_HS_STARTING && now_ms - f->counted_ms < f->interval_ms) return false;
  f->counted_ms = now_ms;
  if (++f->fails >= f->threshold) f->state = PX_HS_UNHEALTHY;
  return was != f->state;
}

uint32_t px_health_fsm_delay(struct px_health_fsm *f) {
  if (f->state != PX_HS_STARTING) return f->interval_ms;
  uint32_t cap = f->interval_ms < STARTING_PROBE_MAX_MS ? f->interval_ms : STARTING_PROBE_MAX_MS;
  uint32_t d = f->probe_ms < cap ? f->probe_ms : cap;
  f->probe_ms = f->probe_ms < cap ? f->probe_ms * 2 : cap;
  return d;
}

/* ---- the monitor ---- */

struct hwatch {
  struct px_health_mon *m;
  struct px_health_target t;
  bool stop;
  struct hwatch *next;
};

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int px_health_init(struct px_health_mon *m) {
  memset(m, 0, sizeof *m);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(&m->cv, &ca);
  pthread_condattr_destroy(&ca);
  if (rc || pthread_mutex_init(&m->mu, NULL)) return PX_ENOMEM;
  if (pipe2(m->wake, O_CLOEXEC | O_NONBLOCK) != 0) return PX_EIO;
  return 0;
}

/* Under m->mu. */
static void post(struct px_health_mon *m, const struct hwatch *w, enum px_health_state s, const char *reason) {
  if (m->nev == m->cap) {
    uint32_t cap = m->cap ? m->cap * 2 : 8;
    struct px_health_event *ev = realloc(m->ev, cap * sizeof *ev);
    if (!ev) return px_error("job %llu: out of memory reporting its health", (unsigned long long)w->t.job_id);
    m->ev = ev, m->cap = cap;
  }
  struct px_health_event *e = &m->ev[m->nev++];
  *e = (struct px_health_event){.job_id = w->t.job_id, .restart = w->t.restart};
  snprintf(e->health, sizeof e->health, "%s", px_health_state_name(s));
  snprintf(e->reason, sizeof e->reason, "%s", reason);
  ssize_t n = write(m->wake[1], "h", 1);
  (void)n; /* a full pipe already wakes the loop */
}

/* The reason a report gives: the last failure and, once unhealthy, how many in a row. */
static void reason_of(const struct px_health_fsm *f, const char *why, char *buf, size_t size) {
  if (f->state == PX_HS_READY) buf[0] = '\0';
  else if (f->state == PX_HS_UNHEALTHY) snprintf(buf, size, "%.90s (%u failures in a row)", why, f->fails);
  else snprintf(buf, size, "%s", why);
}

static void *watch_main(void *arg) {
  struct hwatch *w = arg;
  struct px_health_mon *m = w->m;
  struct px_health_fsm f;
  px_health_fsm_init(&f, &w->t.check, mono_ms(), w->t.reattached);
  bool announce = w->t.reattached;
  pthread_mutex_lock(&m->mu);
  while (!w->stop) {
    pthread_mutex_unlock(&m->mu);
    char why[128] = "", reason[128];
    bool ok = px_health_run(&w->t, why, sizeof why);
    bool changed = px_health_fsm_step(&f, ok, mono_ms());
    reason_of(&f, why, reason, sizeof reason);
    uint32_t delay = px_health_fsm_delay(&f);
    pthread_mutex_lock(&m->mu);
    if ((changed || announce) && !w->stop) post(m, w, f.state, reason);
    announce = false;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += delay / 1000;
    until.tv_nsec += (long)(delay % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    while (!w->stop && pthread_cond_timedwait(&m->cv, &m->mu, &until) != ETIMEDOUT) {
    }
  }
  for (struct hwatch **pp = &m->watches; *pp; pp = &(*pp)->next)
    if (*pp == w) {
      *pp = w->next;
      break;
    }
  m->running--;
  pthread_cond_broadcast(&m->cv);
  pthread_mutex_unlock(&m->mu);
  px_strv_free(w->t.check.command);
  free(w);
  return NULL;
}

static char **strv_dup(char *const *v) {
  size_t n = 0;
  while (v && v[n]) n++;
  char **d = calloc(n + 1, sizeof *d);
  for (size_t i = 0; d && i < n; i++)
    if (!(d[i] = strdup(v[i]))) return px_strv_free(d), NULL;
  return d;
}

int px_health_watch(struct px_health_mon *m, const struct px_health_target *t) {
  struct hwatch *w = calloc(1, sizeof *w);
  if (!w) return PX_ENOMEM;
  w->m = m;
  w->t = *t;
  w->t.check.command = t->check.command ? strv_dup(t->check.command) : NULL;
  if (t->check.command && !w->t.check.command) return free(w), PX_ENOMEM;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&at, 256 * 1024);
  pthread_t th;
  pthread_mutex_lock(&m->mu);
  int rc = pthread_create(&th, &at, watch_main, w);
  if (!rc) {
    w->next = m->watches;
    m->watches = w;
    m->running++;
  }
  pthread_mutex_unlock(&m->mu);
  pthread_attr_destroy(&at);
  if (rc) {
    px_strv_free(w->t.check.command);
    free(w);
    return PX_EAGAIN;
  }
  return 0;
}

void px_health_unwatch(struct px_health_mon *m, uint64_t job_id, uint32_t restart) {
  pthread_mutex_lock(&m->mu);
  for (struct hwatch *w = m->watches; w; w = w->next)
    if (w->t.job_id == job_id && w->t.restart == restart) w->stop = true;
  pthread_cond_broadcast(&m->cv);
  pthread_mutex_unlock(&m->mu);
}

struct px_health_event *px_health_take(struct px_health_mon *m, uint32_t *n) {
  char buf[64];
  while (read(m->wake[0], buf, sizeof buf) > 0) {
  }
  pthread_mutex_lock(&m->mu);
  struct px_health_event *ev = m->ev;
  *n = m->nev;
  m->ev = NULL;
  m->nev = m->cap = 0;
  pthread_mutex_unlock(&m->mu);
  return ev;
}

void px_health_fini(struct px_health_mon *m) {
  if (!m->wake[1]) return; /* never initialised */
  pthread_mutex_lock(&m->mu);
  for (struct hwatch *w = m->watches; w; w = w->next) w->stop = true;
  pthread_cond_broadcast(&m->cv);
  while (m->running) pthread_cond_wait(&m->cv, &m->mu);
  pthread_mutex_unlock(&m->mu);
  free(m->ev);
  close(m->wake[0]);
  close(m->wake[1]);
  pthread_cond_destroy(&m->cv);
  pthread_mutex_destroy(&m->mu);
  memset(m, 0, sizeof *m);
}
