/*
 * glue.c - the service table follows the one event path (svc_server.h):
 * the fold of every accepted event, an agent's report on a replica, and a
 * replica's launch order.
 */
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "server/svc/svc_server.h"
#include "svc/svc_event.h"
#include "util/log.h"

struct px_svc_server *px_svc_server_new(void) {
  struct px_svc_server *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  px_svcs_init(&v->t);
  pthread_mutex_init(&v->lock, NULL);
  v->render = true;
  return v;
}

void px_svc_server_free(struct px_svc_server *v) {
  if (!v) return;
  px_svcs_fini(&v->t);
  px_u64vec_fini(&v->stops);
  px_blob_unref(v->list);
  px_blob_unref(v->endpoints);
  pthread_mutex_destroy(&v->lock);
  free(v);
}

static bool is_svc_kind(enum px_event_kind k) {
  return k == PX_EV_SVC_APPLY || k == PX_EV_SVC_SCALE || k == PX_EV_SVC_DELETE ||
         k == PX_EV_SVC_ROLLBACK || k == PX_EV_SVC_REPLICA;
}

/* "FAILED exit 1", "CANCELLED", "OUT_OF_MEMORY": why a replica ended. */
static void end_reason(const struct px_sjob *j, char *buf, size_t n) {
  if (j->term_signal) snprintf(buf, n, "%s signal %d", px_job_state_name(j->state), j->term_signal);
  else snprintf(buf, n, "%s exit %d", px_job_state_name(j->state), j->exit_code);
}

/* A replica's job changed: its service follows. A job that names a service
 * it does not belong to (another owner) is not a replica. */
static void fold_job(struct px_svcs *t, const struct px_sjob *j, const struct px_event *ev,
                     int64_t now) {
  const char *name = j->spec.service;
  struct px_svc *v = px_svcs_find(t, name);
  if (!v) return;
  switch (ev->kind) {
    case PX_EV_SUBMIT:
      if (j->spec.uid != v->spec.uid) {
        px_warn("job %llu names service %s of another user: not a replica", (unsigned long long)j->id, name);
        return;
      }
      px_svcs_job_submitted(t, name, j->spec.replica, j->spec.service_generation, j->id, now);
      return;
    case PX_EV_START:
      px_svcs_job_started(t, name, j->id, j->nalloc ? j->alloc[0].node : PX_NONE, now);
      return;
    case PX_EV_REQUEUE:
      px_svcs_job_requeued(t, name, j->id);
      return;
    case PX_EV_CANCEL:
      if (!px_job_state_terminal(j->state)) px_svcs_job_stopping(t, name, j->id);
      break;
    default:
      break;
  }
  if (px_job_state_terminal(j->state)) {
    char why[96];
    end_reason(j, why, sizeof why);
    /* A lost node or a preemption is not the replica's failure (no backoff,
     * no CrashLoop): replica jobs are not requeued (tick.c), they end so. */
    bool failed = j->state != PX_JOB_NODE_FAIL && j->state != PX_JOB_PREEMPTED && !j->cancelled_by;
    px_svcs_job_ended(t, name, j->id, failed, why, now);
  }
}

int px_svc_fold(struct px_server *s, const struct px_event *ev, int64_t now) {
  struct px_svc_server *v = s->svc;
  if (!v) return 0;
  int rc = 0;
  if (is_svc_kind(ev->kind)) {
    struct px_diag d;
    rc = px_svcs_fold_event(&v->t, ev->kind, ev->svc, now, &d);
    if (rc) px_warn("journal seq %llu (%s): %s", (unsigned long long)s->seq,
                    px_event_kind_name(ev->kind), d.msg);
    if (rc != PX_ENOMEM) rc = 0; /* a record about a service gone: nothing to do */
  } else if (ev->job_id) {
    const struct px_sjob *j = px_jobs_find(s, ev->job_id);
    if (j && j->spec.service) fold_job(&v->t, j, ev, now);
  }
  if (v->t.endpoints_changed) {
    v->t.endpoints_seq = s->seq;
    v->t.endpoints_changed = false;
  }
  if (v->t.changed) v->render = true;
  return rc;
}

/* ---- an agent's report on a replica ---- */

static bool same_ports(const struct px_svc_replica *r, const struct px_task_report *t) {
  if (r->nports != t->nports) return false;
  for (uint32_t i = 0; i < t->nports; i++)
    if (r->ports[i] != t->ports[i] || strcmp(r->port_names[i], t->port_names[i])) return false;
  return true;
}

int px_svc_replica_report(struct px_server *s, struct px_sjob *j, const struct px_task_report *t,
                  int64_t now) {
  struct px_svc *v = s->svc && j->spec.service ? px_svcs_find(&s->svc->t, j->spec.service) : NULL;
  struct px_svc_replica *r = v ? px_svc_replica_find(v, j->id) : NULL;
  if (!r || !t->has_service) return 0;
  const char *was = px_svc_rep_state_name(r->state);
  if (!strcmp(was, t->health) && same_ports(r, t)) return 0; /* a repeat */
  struct px_svc_rep_change c = {.health = t->health,
                                .reason = t->health_reason[0] ? t->health_reason : NULL,
                                .nports = t->nports};
  for (uint32_t i = 0; i < t->nports && i < PX_SVC_MAX_PORTS; i++) {
    snprintf(c.port_names[i], sizeof c.port_names[i], "%.15s", t->port_names[i]);
    c.ports[i] = t->ports[i];
  }
  char *rec = px_svc_ev_replica(v->spec.name, j->id, &c);
  if (!rec) return PX_ENOMEM;
  struct px_event ev = {.kind = PX_EV_SVC_REPLICA, .job_id = j->id, .svc = rec};
  struct px_event_result res;
  int rc = px_events_accept(s, &ev, now, &res);
  free(rec);
  return rc;
}

/* ---- a replica's launch order ---- */

/* The spec its generation ran with: the current one, or the previous. */
static const struct px_svc_spec *spec_of(const struct px_svc *v, uint64_t generation) {
  return !px_svc_is_current(v, generation) && v->has_prev ? &v->prev : &v->spec;
}

struct px_launch_service *px_svc_launch_of(struct px_server *s, const struct px_sjob *j) {
  struct px_svc *v = s->svc && j->spec.service ? px_svcs_find(&s->svc->t, j->spec.service) : NULL;
  if (!v) return NULL;
  const struct px_svc_spec *sp = spec_of(v, j->spec.service_generation);
  struct px_launch_service *l = calloc(1, sizeof *l);
  if (!l || !(l->ports = calloc(sp->nports + 1, sizeof *l->ports))) {
    free(l);
    return NULL;
  }
  snprintf(l->name, sizeof l->name, "%s", sp->name);
  l->replica = j->spec.replica;
  l->generation = j->spec.service_generation;
  for (uint32_t i = 0; i < sp->nports; i++)
    if ((l->ports[i] = strdup(sp->ports[i]))) l->nports++;
  const struct px_svc_health *h = &sp->health;
  l->health = (struct px_health_check){.type = (enum px_health_type)h->type, .command = h->command,
                                       .interval_s = h->interval_s, .timeout_s = h->timeout_s,
                                       .failure_threshold = h->failure_threshold,
                                       .startup_grace_s = h->startup_grace_s};
  snprintf(l->health.port, sizeof l->health.port, "%s", h->port);
  snprintf(l->health.path, sizeof l->health.path, "%s", h->path);
  return l;
}

/* The command is borrowed from the spec (px_svc_launch_of). */
void px_svc_launch_release(struct px_launch_service *l) {
  if (!l) return;
  for (uint32_t i = 0; l->ports && l->ports[i]; i++) free(l->ports[i]);
  free(l->ports);
  free(l);
}
