/*
 * requests.c - the service requests on the main thread (svc_server.h).
 * Authorisation as for jobs: a service's owner, a coordinator of its
 * account, or an operator changes it (rule own-service); anyone signed in
 * reads; only an operator (the proxy's credential) posts load. A change is
 * an event on the one event path, answered once it is durable.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "server/svc/svc_server.h"
#include "svc/svc_event.h"
#include "util/log.h"

static void answer_json(struct px_req *r, int status, json_t *o) {
  px_req_answer(r, status, o ? json_dumps(o, JSON_COMPACT) : NULL);
  json_decref(o);
}

static bool is_operator(const struct px_req *r) { return r->who.roles & PX_ROLE_OPERATOR; }

static bool may_change(struct px_server *s, struct px_req *r, const struct px_svc *v) {
  if (is_operator(r) || r->who.uid == v->spec.uid) return true;
  if (v->spec.account[0] && px_auth_is_coordinator(s->auth, &r->who, v->spec.account)) return true;
  px_warn("denied (own-service): user %s uid %u: service %s", r->who.user, r->who.uid, v->spec.name);
  px_req_error(r, 403, "FORBIDDEN", "service %s belongs to %s (rule own-service)", v->spec.name,
               v->spec.user);
  return false;
}

static struct px_svc *svc_or_404(struct px_server *s, struct px_req *r) {
  struct px_svc *v = px_svcs_find(&s->svc->t, r->node);
  if (!v) px_req_error(r, 404, "NOT_FOUND", "name: no service named '%s'", r->node);
  return v;
}

/* 400 with the field after "line N: " (the API's error names it). */
static void refuse(struct px_req *r, int rc, const struct px_diag *d) {
  const char *f = strstr(d->msg, ": ");
  char field[64] = "";
  if (f && !strncmp(d->msg, "line ", 5)) {
    const char *end = strstr(f + 2, ": ");
    if (end && end - (f + 2) < (long)sizeof field) snprintf(field, sizeof field, "%.*s", (int)(end - (f + 2)), f + 2);
  }
  int status = rc == PX_ENOMEM ? 503 : 400;
  px_req_answer(r, status, px_error_json(status == 400 ? "INVALID" : "UNAVAILABLE", d->msg, field));
}

/* Would the core take a replica of this spec (account, QoS, limits)? Tried
 * and taken back at once, as a batch submit that is refused (handle.c). */
static int dry_run(struct px_server *s, const struct px_svc_spec *spec, int64_t now,
                   struct px_diag *d) {
  struct px_svc v = {.spec = *spec, .generation = 1};
  struct px_jobspec js;
  if (px_svc_replica_spec(s, &v, 0, &js)) return PX_ENOMEM;
  struct px_event ev = {.kind = PX_EV_SUBMIT, .job_id = s->next_job_id, .spec = &js};
  struct px_event_result res;
  int rc = px_core_apply(s->core, &ev, now, &res);
  if (!rc) {
    struct px_event undo = {.kind = PX_EV_CANCEL, .job_id = ev.job_id};
    px_core_apply(s->core, &undo, now, &res);
  } else {
    int line = !strncmp(res.diag.msg, "account", 7) ? spec->line_account : spec->line_name;
    px_diag_set(d, rc, -1, "line %d: %s", line ? line : 1, res.diag.msg);
    d->line = line;
  }
  px_jobspec_fini(&js);
  return rc;
}

static int owner(struct px_server *s, struct px_req *r, struct px_svc_spec *spec,
                 const struct px_svc *v) {
  if (v) {
    if (!may_change(s, r, v)) return PX_EPERM;
    snprintf(spec->user, sizeof spec->user, "%s", v->spec.user);
    spec->uid = v->spec.uid;
    spec->gid = v->spec.gid;
    return 0;
  }
  snprintf(spec->user, sizeof spec->user, "%s", r->who.user);
  spec->uid = r->who.uid;
  spec->gid = r->who.gid;
  if (spec->uid == 0 && !s->conf->phalanx.allow_root_jobs) {
    px_req_error(r, 403, "FORBIDDEN", "services may not run as root (AllowRootJobs=NO, rule root-jobs)");
    return PX_EPERM;
  }
  return 0;
}

static void apply(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_svc_spec spec;
  struct px_diag d;
  int rc = px_svc_spec_parse(r->text ? r->text : "", r->text ? strlen(r->text) : 0, 0, &spec, &d);
  if (rc) return refuse(r, rc, &d);
  struct px_svc *v = px_svcs_find(&s->svc->t, spec.name);
  if ((rc = owner(s, r, &spec, v))) goto out;
  if (!spec.workdir && r->reason[0] && !(spec.workdir = strdup(r->reason))) {
    rc = PX_ENOMEM;
    goto out;
  }
  if (v && spec.autoscale) /* the autoscaler's count stays, within the new bounds */
    spec.replicas = v->replicas < spec.min ? spec.min : v->replicas > spec.max ? spec.max : v->replicas;
  if ((rc = px_svc_spec_check_conf(&spec, s->conf, &d)) || (rc = dry_run(s, &spec, now, &d))) {
    refuse(r, rc, &d);
    goto out;
  }
  bool same = v && !v->deleting && px_svc_spec_same_template(&v->spec, &spec);
  char *rec = px_svc_ev_apply(&spec);
  struct px_event ev = {.kind = PX_EV_SVC_APPLY, .svc = rec};
  struct px_event_result res;
  rc = rec ? px_events_accept(s, &ev, now, &res) : PX_ENOMEM;
  free(rec);
  if (rc) goto out;
  v = px_svcs_find(&s->svc->t, spec.name);
  json_t *o = v ? px_svc_summary_json(v, now) : NULL;
  if (o) json_object_set_new(o, "new_generation", json_boolean(!same));
  answer_json(r, v && v->generation == 1 && !same ? 201 : 200, o);
out:
  if (rc && !r->status) px_req_error(r, 503, "UNAVAILABLE", "out of memory");
  px_svc_spec_fini(&spec);
}

static void scale(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_svc *v = svc_or_404(s, r);
  if (!v || !may_change(s, r, v)) return;
  uint32_t n = (uint32_t)r->job_id;
  if (v->deleting) return px_req_error(r, 409, "STATE", "service %s is being deleted", v->spec.name);
  if (v->spec.autoscale && (n < v->spec.min || n > v->spec.max))
    return px_req_error(r, 409, "STATE", "replicas: service %s is autoscaled between %u and %u",
                        v->spec.name, v->spec.min, v->spec.max);
  char why[128];
  snprintf(why, sizeof why, "scaled by %s", r->who.user);
  char *rec = px_svc_ev_scale(v->spec.name, n, why);
  struct px_event ev = {.kind = PX_EV_SVC_SCALE, .svc = rec};
  struct px_event_result res;
  int rc = rec ? px_events_accept(s, &ev, now, &res) : PX_ENOMEM;
  free(rec);
  if (rc) return px_req_error(r, 503, "UNAVAILABLE", "%s", px_strerror(rc));
  answer_json(r, 200, px_svc_summary_json(px_svcs_find(&s->svc->t, r->node), now));
}

static void delete(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_svc *v = svc_or_404(s, r);
  if (!v || !may_change(s, r, v)) return;
  char *rec = px_svc_ev_delete(v->spec.name, r->who.user);
  struct px_event ev = {.kind = PX_EV_SVC_DELETE, .svc = rec};
  struct px_event_result res;
  int rc = rec ? px_events_accept(s, &ev, now, &res) : PX_ENOMEM;
  free(rec);
  if (rc) return px_req_error(r, 503, "UNAVAILABLE", "%s", px_strerror(rc));
  px_req_answer(r, 200, strdup("{}"));
}

static void load(struct px_server *s, struct px_req *r, int64_t now) {
  if (!is_operator(r)) {
    px_req_error(r, 403, "FORBIDDEN", "only an operator (the proxy) posts load (rule operator)");
    return;
  }
  struct px_svc *v = svc_or_404(s, r);
  json_t *o = v && r->text ? json_loads(r->text, 0, NULL) : NULL;
  if (!v) return;
  json_t *in = json_object_get(o, "in_flight"), *rps = json_object_get(o, "requests_per_s");
  if (!json_is_number(in) || json_number_value(in) < 0 || (rps && !json_is_number(rps))) {
    json_decref(o);
    return px_req_error(r, 400, "INVALID", "in_flight: a number of 0 or more is required");
  }
  px_svc_load(v, json_number_value(in), rps ? json_number_value(rps) : 0, now);
  s->svc->t.changed = true; /* the controller looks again */
  json_decref(o);
  px_req_answer(r, 200, strdup("{}"));
}

void px_svc_handle(struct px_server *s, struct px_req *r, int64_t now) {
  struct px_svc *v;
  switch (r->kind) {
    case PX_REQ_SVC_APPLY: return apply(s, r, now);
    case PX_REQ_SVC_SCALE: return scale(s, r, now);
    case PX_REQ_SVC_DELETE: return delete(s, r, now);
    case PX_REQ_SVC_LOAD: return load(s, r, now);
    case PX_REQ_SVC_SHOW:
      if ((v = svc_or_404(s, r))) answer_json(r, 200, px_svc_show_json(s, v, now));
      return;
    case PX_REQ_SVC_ENDPOINTS:
      if ((v = svc_or_404(s, r))) {
        json_t *o = px_svc_endpoints_json(s, v);
        if (o) json_object_set_new(o, "seq", json_integer((json_int_t)s->svc->t.endpoints_seq));
        answer_json(r, 200, o);
      }
      return;
    default:
      px_req_error(r, 400, "INVALID", "not a service request");
  }
}
