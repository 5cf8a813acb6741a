/*
 * svc.c - the service table and its folds (svc.h): every change of a
 * service or of one of its replicas, applied the same live and at recovery.
 * Services are kept sorted by name (a binary search per event); a service's
 * replicas are few (its count plus a surge), so they are scanned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc/svc.h"

static const char *const rep_state_names[] = {"pending", "starting", "ready", "unhealthy"};

const char *px_svc_rep_state_name(enum px_svc_rep_state st) {
  return (unsigned)st < 4 ? rep_state_names[st] : "unknown";
}

void px_svcs_init(struct px_svcs *t) { memset(t, 0, sizeof *t); }

static void svc_free(struct px_svc *s) {
  if (!s) return;
  px_svc_spec_fini(&s->spec);
  px_svc_spec_fini(&s->prev);
  free(s->reps);
  free(s->slots);
  free(s);
}

void px_svcs_fini(struct px_svcs *t) {
  for (size_t i = 0; i < t->n; i++) svc_free(t->v[i]);
  free(t->v);
  px_svcs_init(t);
}

/* Position of name, or where it would go. */
static size_t lower_bound(const struct px_svcs *t, const char *name) {
  size_t lo = 0, hi = t->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (strcmp(t->v[mid]->spec.name, name) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

struct px_svc *px_svcs_find(const struct px_svcs *t, const char *name) {
  if (!name) return NULL;
  size_t i = lower_bound(t, name);
  return i < t->n && !strcmp(t->v[i]->spec.name, name) ? t->v[i] : NULL;
}

struct px_svc_replica *px_svc_replica_find(const struct px_svc *s, uint64_t job_id) {
  for (uint32_t i = 0; i < s->nreps; i++)
    if (s->reps[i].job_id == job_id) return &s->reps[i];
  return NULL;
}

static void changed(struct px_svcs *t, bool endpoints) {
  t->changed = true;
  t->endpoints_changed |= endpoints;
}

static void decide(struct px_svc *s, uint32_t from, uint32_t to, const char *reason, int64_t now) {
  struct px_svc_decision *d = &s->decisions[s->ndecisions++ % PX_SVC_DECISIONS];
  *d = (struct px_svc_decision){now, from, to, ""};
  snprintf(d->reason, sizeof d->reason, "%s", reason ? reason : "");
}

/* ---- the service's own events ---- */

static int insert(struct px_svcs *t, struct px_svc *s) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 16;
    struct px_svc **v = realloc(t->v, cap * sizeof *v);
    if (!v) return PX_ENOMEM;
    t->v = v;
    t->cap = cap;
  }
  size_t at = lower_bound(t, s->spec.name);
  memmove(&t->v[at + 1], &t->v[at], (t->n - at) * sizeof *t->v);
  t->v[at] = s;
  t->n++;
  return 0;
}

int px_svcs_apply(struct px_svcs *t, const struct px_svc_spec *spec, int64_t now) {
  struct px_svc *s = px_svcs_find(t, spec->name);
  struct px_svc_spec copy;
  if (px_svc_spec_copy(&copy, spec)) return PX_ENOMEM;
  if (!s) {
    if (!(s = calloc(1, sizeof *s))) return px_svc_spec_fini(&copy), PX_ENOMEM;
    s->spec = copy;
    s->generation = 1;
    s->created_s = s->generation_s = now;
    s->replicas = spec->replicas;
    if (insert(t, s)) {
      svc_free(s);
      return PX_ENOMEM;
    }
    decide(s, 0, s->replicas, "created", now);
    changed(t, true);
    return 0;
  }
  bool new_gen = !px_svc_spec_same_template(&s->spec, spec);
  if (s->replicas != spec->replicas) decide(s, s->replicas, spec->replicas, "applied", now);
  s->replicas = spec->replicas;
  s->deleting = false;
  if (new_gen) {
    px_svc_spec_fini(&s->prev);
    s->prev = s->spec;
    s->has_prev = true;
    s->prev_generation = s->generation;
    s->same_as = 0;
    s->generation++;
    s->generation_s = now;
    s->rollback_reason[0] = '\0';
  } else {
    px_svc_spec_fini(&s->spec);
  }
  s->spec = copy;
  changed(t, true);
  return 0;
}

int px_svcs_scale(struct px_svcs *t, const char *name, uint32_t replicas, const char *reason,
                  int64_t now) {
  struct px_svc *s = px_svcs_find(t, name);
  if (!s) return PX_ENOENT;
  decide(s, s->replicas, replicas, reason, now);
  s->replicas = replicas;
  changed(t, false);
  return 0;
}

static void remove_svc(struct px_svcs *t, struct px_svc *s) {
  size_t at = lower_bound(t, s->spec.name);
  memmove(&t->v[at], &t->v[at + 1], (t->n - at - 1) * sizeof *t->v);
  t->n--;
  svc_free(s);
  changed(t, true);
}

int px_svcs_delete(struct px_svcs *t, const char *name, int64_t now) {
  struct px_svc *s = px_svcs_find(t, name);
  if (!s) return PX_ENOENT;
  if (!s->nreps) return remove_svc(t, s), 0;
  s->deleting = true;
  decide(s, s->replicas, 0, "deleted", now);
  s->replicas = 0;
  changed(t, true);
  return 0;
}

int px_svcs_rollback(struct px_svcs *t, const char *name, const char *reason, int64_t now) {
  struct px_svc *s = px_svcs_find(t, name);
  if (!s) return PX_ENOENT;
  if (!s->has_prev) return 0;
  px_svc_spec_fini(&s->spec);
  s->spec = s->prev;
  px_svc_spec_init(&s->prev);
  s->has_prev = false;
  s->same_as = s->prev_generation; /* its replicas still run this spec: they stay */
  s->generation++;
  s->generation_s = now;
  snprintf(s->rollback_reason, sizeof s->rollback_reason, "%s", reason ? reason : "");
  changed(t, true);
  return 0;
}

/* ---- replicas ---- */

static struct px_svc_slot *slot(struct px_svc *s, uint32_t index) {
  if (index >= s->nslots) {
    uint32_t n = index + 1 > s->nslots * 2 ? index + 1 : s->nslots * 2;
    struct px_svc_slot *v = realloc(s->slots, n * sizeof *v);
    if (!v) return NULL;
    memset(&v[s->nslots], 0, (n - s->nslots) * sizeof *v);
    s->slots = v;
    s->nslots = n;
  }
  return &s->slots[index];
}

static void count_failure(struct px_svc *s, const struct px_svc_replica *r, const char *why,
                          int64_t now) {
  struct px_svc_slot *sl = slot(s, r->index);
  if (!sl) return;
  if (r->ready_s && now - r->ready_s >= PX_SVC_RESET_S) sl->failures = 0;
  sl->failures++;
  sl->last_fail_s = now;
  sl->fail_gen = r->generation;
  snprintf(sl->last_reason, sizeof sl->last_reason, "%s", why ? why : "failed");
}

int px_svcs_replica_change(struct px_svcs *t, const char *name, uint64_t job_id,
                           const struct px_svc_rep_change *c, int64_t now) {
  struct px_svc *s = px_svcs_find(t, name);
  struct px_svc_replica *r = s ? px_svc_replica_find(s, job_id) : NULL;
  if (!r) return PX_ENOENT;
  if (c->nports) {
    r->nports = c->nports;
    memcpy(r->port_names, c->port_names, sizeof r->port_names);
    memcpy(r->ports, c->ports, sizeof r->ports);
  }
  if (c->health && !strcmp(c->health, "ready")) {
    if (r->state != PX_SVC_REP_READY) r->ready_s = now;
    r->state = PX_SVC_REP_READY;
  } else if (c->health && !strcmp(c->health, "unhealthy")) {
    r->state = PX_SVC_REP_UNHEALTHY;
  } else if (c->health && !strcmp(c->health, "starting")) {
    r->state = PX_SVC_REP_STARTING;
  }
  if (c->reason) snprintf(r->reason, sizeof r->reason, "%s", c->reason);
  if (c->drain && !r->terminating) {
    r->terminating = true;
    r->term_s = now;
    if (c->failure) count_failure(s, r, c->reason, now);
  }
  changed(t, true);
  return 0;
}

int px_svcs_job_submitted(struct px_svcs *t, const char *name, uint32_t index, uint64_t generation,
                          uint64_t job_id, int64_t now) {
  struct px_svc *s = px_svcs_find(t, name);
  if (!s) return PX_ENOENT;
  if (s->nreps == s->reps_cap) {
    uint32_t cap = s->reps_cap ? s->reps_cap * 2 : 4;
    struct px_svc_replica *v = realloc(s->reps, cap * sizeof *v);
    if (!v) return PX_ENOMEM;
    s->reps = v;
    s->reps_cap = cap;
  }
  s->reps[s->nreps++] = (struct px_svc_replica){.job_id = job_id, .index = index,
                                                .generation = generation, .node = PX_NONE,
                                                .submit_s = now};
  changed(t, false);
  return 0;
}

int px_svcs_job_started(struct px_svcs *t, const char *name, uint64_t job_id, uint32_t node,
                        int64_t now) {
  struct px_svc *s = px_svcs_find(t, name);
  struct px_svc_replica *r = s ? px_svc_replica_find(s, job_id) : NULL;
  if (!r) return PX_ENOENT;
  r->node = node;
  r->start_s = now;
  /* Without a check a replica is ready once it runs (contract: "none"). */
  r->state = s->spec.health.type == PX_SVC_HEALTH_NONE && px_svc_is_current(s, r->generation)
                 ? PX_SVC_REP_READY : PX_SVC_REP_STARTING;
  if (r->state == PX_SVC_REP_READY) r->ready_s = now;
  changed(t, true);
  return 0;
}

void px_svcs_job_stopping(struct px_svcs *t, const char *name, uint64_t job_id) {
  struct px_svc *s = px_svcs_find(t, name);
  struct px_svc_replica *r = s ? px_svc_replica_find(s, job_id) : NULL;
  if (!r) return;
  r->stopping = r->terminating = true;
  changed(t, true);
}

void px_svcs_job_requeued(struct px_svcs *t, const char *name, uint64_t job_id) {
  struct px_svc *s = px_svcs_find(t, name);
  struct px_svc_replica *r = s ? px_svc_replica_find(s, job_id) : NULL;
  if (!r) return;
  r->state = PX_SVC_REP_PENDING;
  r->node = PX_NONE;
  r->nports = 0;
  changed(t, true);
}

void px_svcs_job_ended(struct px_svcs *t, const char *name, uint64_t job_id, bool failed,
                       const char *why, int64_t now) {
  struct px_svc *s = px_svcs_find(t, name);
  struct px_svc_replica *r = s ? px_svc_replica_find(s, job_id) : NULL;
  if (!r) return;
  if (failed && !r->terminating) count_failure(s, r, why, now);
  else if (!r->terminating && r->ready_s && now - r->ready_s >= PX_SVC_RESET_S && slot(s, r->index))
    s->slots[r->index].failures = 0;
  *r = s->reps[--s->nreps];
  changed(t, true);
  if (s->deleting && !s->nreps) remove_svc(t, s);
}

void px_svc_load(struct px_svc *s, double in_flight, double rps, int64_t now) {
  s->in_flight = in_flight < 0 ? 0 : in_flight;
  s->rps = rps;
  s->load_s = now;
  if (!s->spec.autoscale) return;
  double per = (double)s->spec.target_in_flight;
  uint32_t want = (uint32_t)((s->in_flight + per - 1e-9) / per);
  if (want < s->spec.min) want = s->spec.min;
  if (want > s->spec.max) want = s->spec.max;
  struct px_svc_rec *last = s->nrecs ? &s->recs[(s->nrecs - 1) % PX_SVC_RECS] : NULL;
  if (last && last->time_s == now) last->want = want; /* one a second */
  else s->recs[s->nrecs++ % PX_SVC_RECS] = (struct px_svc_rec){now, want};
}
