/*
 * plan.c - the controller (svc.h): what one service needs now, in a fixed
 * order of phases, each a small function:
 *
 *   delete     drain every replica, stop each after drain_s
 *   stop       drained replicas whose drain_s has passed
 *   unhealthy  out of the endpoints, counted as a failure of its index
 *   autoscale  a new count, within the stabilisation windows (like HPA)
 *   rollback   a new generation that does not become ready goes back
 *   scale down replicas above the count
 *   replace    an index with no replica gets one, after its backoff
 *   roll       old-generation replicas replaced within max_surge /
 *              max_unavailable, each only once its successor is ready
 *
 * The plan reads the state and changes nothing; the caller turns each
 * action into an event whose fold changes the state, then plans again.
 */
#include <stdio.h>
#include <string.h>

#include "svc/svc.h"

struct plan {
  const struct px_svc *s;
  int64_t now, due;
  struct px_svc_act *out;
  size_t cap, n;
};

static struct px_svc_act *act(struct plan *p, enum px_svc_act_kind kind) {
  if (p->n == p->cap) return NULL;
  struct px_svc_act *a = &p->out[p->n++];
  memset(a, 0, sizeof *a);
  a->kind = kind;
  return a;
}

static void at(struct plan *p, int64_t t) {
  if (t < p->due) p->due = t;
}

static bool live(const struct px_svc_replica *r) { return !r->terminating; }

/* Out of the endpoints first; one not started yet is simply stopped. */
static void drain(struct plan *p, const struct px_svc_replica *r, bool failure, const char *why) {
  struct px_svc_act *a = act(p, r->state == PX_SVC_REP_PENDING ? PX_SVC_ACT_STOP : PX_SVC_ACT_DRAIN);
  if (!a) return;
  a->job_id = r->job_id;
  a->failure = failure;
  snprintf(a->reason, sizeof a->reason, "%s", why);
}

static void stop_drained(struct plan *p) {
  for (uint32_t i = 0; i < p->s->nreps; i++) {
    const struct px_svc_replica *r = &p->s->reps[i];
    if (!r->terminating || r->stopping) continue;
    int64_t when = r->term_s + p->s->spec.drain_s;
    if (p->now < when) {
      at(p, when);
      continue;
    }
    struct px_svc_act *a = act(p, PX_SVC_ACT_STOP);
    if (!a) return;
    a->job_id = r->job_id;
    snprintf(a->reason, sizeof a->reason, "drained: %s", r->reason);
  }
}

static void drain_unhealthy(struct plan *p) {
  for (uint32_t i = 0; i < p->s->nreps; i++) {
    const struct px_svc_replica *r = &p->s->reps[i];
    if (!live(r) || r->state != PX_SVC_REP_UNHEALTHY) continue;
    char why[192];
    snprintf(why, sizeof why, "unhealthy: %s", r->reason[0] ? r->reason : "health check failed");
    drain(p, r, true, why);
  }
}

/* ---- autoscaling ---- */

/* The lowest (up) or highest (down) recommendation of the last window_s. */
static uint32_t windowed(const struct px_svc *s, int64_t now, int64_t window_s, bool lowest) {
  uint32_t first = s->nrecs > PX_SVC_RECS ? s->nrecs - PX_SVC_RECS : 0, v = 0;
  bool any = false;
  for (uint32_t k = s->nrecs; k-- > first;) {
    const struct px_svc_rec *r = &s->recs[k % PX_SVC_RECS];
    if (any && r->time_s < now - window_s) break;
    if (!any || (lowest ? r->want < v : r->want > v)) v = r->want;
    any = true;
  }
  return v;
}

static bool autoscale(struct plan *p) {
  const struct px_svc *s = p->s;
  const struct px_svc_spec *sp = &s->spec;
  if (!sp->autoscale || !s->nrecs || p->now - s->load_s > PX_SVC_LOAD_STALE_S) return false;
  uint32_t raw = s->recs[(s->nrecs - 1) % PX_SVC_RECS].want, want = s->replicas;
  int64_t window = 0;
  if (raw > s->replicas) {
    window = sp->scale_up_window_s;
    want = windowed(s, p->now, window, true);
  } else if (raw < s->replicas) {
    window = sp->scale_down_window_s;
    want = windowed(s, p->now, window, false);
  }
  if (want == s->replicas) {
    if (raw != s->replicas) at(p, p->now + 1); /* the window may move on */
    return false;
  }
  struct px_svc_act *a = act(p, PX_SVC_ACT_SCALE);
  if (!a) return false;
  a->count = want;
  snprintf(a->reason, sizeof a->reason,
           "autoscale: %.1f in flight over %u replicas, target %u each: %u (the %s of the last %llds)",
           s->in_flight, s->replicas, sp->target_in_flight, want,
           want > s->replicas ? "lowest" : "highest", (long long)window);
  return true;
}

/* ---- rollback ---- */

static bool rollback(struct plan *p) {
  const struct px_svc *s = p->s;
  if (!s->has_prev) return false;
  char why[192] = "";
  for (uint32_t i = 0; i < s->replicas && i < s->nslots && !why[0]; i++) {
    const struct px_svc_slot *sl = &s->slots[i];
    if (sl->fail_gen == s->generation && sl->failures >= PX_SVC_CRASHLOOP)
      snprintf(why, sizeof why, "generation %llu failed %u times in a row (replica %u: %.80s)",
               (unsigned long long)s->generation, sl->failures, i, sl->last_reason);
  }
  for (uint32_t i = 0; i < s->nreps && !why[0]; i++) {
    const struct px_svc_replica *r = &s->reps[i];
    if (!live(r) || !px_svc_is_current(s, r->generation) || r->state == PX_SVC_REP_READY) continue;
    int64_t deadline = r->submit_s + s->spec.progress_deadline_s;
    if (p->now < deadline) {
      at(p, deadline);
      continue;
    }
    snprintf(why, sizeof why, "generation %llu not ready within %llds (replica %u %s%s%.80s)",
             (unsigned long long)s->generation, (long long)s->spec.progress_deadline_s, r->index,
             px_svc_rep_state_name(r->state), r->reason[0] ? ": " : "", r->reason);
  }
  if (!why[0]) return false;
  struct px_svc_act *a = act(p, PX_SVC_ACT_ROLLBACK);
  if (a) snprintf(a->reason, sizeof a->reason, "rolled back: %.170s", why);
  return a != NULL;
}

/* ---- replicas per index ---- */

int64_t px_svc_next_start(const struct px_svc *s, uint32_t index) {
  if (index >= s->nslots || !s->slots[index].failures) return INT64_MIN;
  const struct px_svc_slot *sl = &s->slots[index];
  int64_t wait = s->spec.backoff_s;
  for (uint32_t k = 1; k < sl->failures && wait < s->spec.max_backoff_s; k++) wait *= 2;
  if (wait > s->spec.max_backoff_s) wait = s->spec.max_backoff_s;
  return sl->last_fail_s + wait;
}

static void submit(struct plan *p, uint32_t index, const char *why) {
  int64_t when = px_svc_next_start(p->s, index);
  if (p->now < when) {
    at(p, when);
    return;
  }
  struct px_svc_act *a = act(p, PX_SVC_ACT_SUBMIT);
  if (!a) return;
  a->index = index;
  a->generation = p->s->generation;
  snprintf(a->reason, sizeof a->reason, "%s", why);
}

struct idx {
  const struct px_svc_replica *cur, *old;   /* live, of this generation / an older one */
};

static void per_index(const struct px_svc *s, struct idx *ix, uint32_t n) {
  memset(ix, 0, n * sizeof *ix);
  for (uint32_t i = 0; i < s->nreps; i++) {
    const struct px_svc_replica *r = &s->reps[i];
    if (!live(r) || r->index >= n) continue;
    if (px_svc_is_current(s, r->generation)) ix[r->index].cur = r;
    else ix[r->index].old = r;
  }
}

static bool spread_blocked(const struct px_svc *s) {
  if (!s->spec.spread) return false;
  for (uint32_t i = 0; i < s->nreps; i++)
    if (s->reps[i].state == PX_SVC_REP_PENDING && live(&s->reps[i])) return true;
  return false;
}

static void scale_down(struct plan *p) {
  for (uint32_t i = 0; i < p->s->nreps; i++) {
    const struct px_svc_replica *r = &p->s->reps[i];
    if (live(r) && r->index >= p->s->replicas) drain(p, r, false, "scaled down");
  }
}

/* Indices without any replica get one; then old ones are replaced. */
static void replace_and_roll(struct plan *p) {
  const struct px_svc *s = p->s;
  uint32_t want = s->replicas, live_n = 0, ready = 0;
  struct idx ix[PX_SVC_MAX_REPLICAS];
  per_index(s, ix, want);
  for (uint32_t i = 0; i < s->nreps; i++) {
    if (!live(&s->reps[i]) || s->reps[i].index >= want) continue;
    live_n++;
    ready += s->reps[i].state == PX_SVC_REP_READY;
  }
  bool one_at_a_time = spread_blocked(s);
  for (uint32_t i = 0; i < want; i++) {
    if (ix[i].cur || ix[i].old || one_at_a_time) continue;
    submit(p, i, "replica missing");
    one_at_a_time = s->spec.spread;
    live_n++;
  }
  uint32_t unavailable_ok = s->spec.max_unavailable;
  int64_t room = (int64_t)want + s->spec.max_surge - live_n;
  for (uint32_t i = 0; i < want; i++) {
    const struct idx *x = &ix[i];
    if (!x->old) continue;
    bool old_ready = x->old->state == PX_SVC_REP_READY;
    if (x->cur) {
      if (x->cur->state != PX_SVC_REP_READY) continue;
      drain(p, x->old, false, "replaced by the new generation");
      ready -= old_ready;
      room++;
      continue;
    }
    if (room > 0 && !one_at_a_time) {
      submit(p, i, "rolling update");
      one_at_a_time = s->spec.spread;
      room--;
    } else if (ready - old_ready + unavailable_ok >= want) {
      drain(p, x->old, false, "rolling update");
      ready -= old_ready;
    }
  }
}

size_t px_svc_plan(const struct px_svc *s, int64_t now, struct px_svc_act *out, size_t cap,
                   int64_t *due) {
  struct plan p = {s, now, INT64_MAX, out, cap, 0};
  if (s->deleting) {
    for (uint32_t i = 0; i < s->nreps; i++)
      if (live(&s->reps[i])) drain(&p, &s->reps[i], false, "service deleted");
    stop_drained(&p);
  } else {
    stop_drained(&p);
    drain_unhealthy(&p);
    if (!autoscale(&p) && !rollback(&p)) {
      scale_down(&p);
      replace_and_roll(&p);
    }
  }
  *due = p.due;
  return p.n;
}
