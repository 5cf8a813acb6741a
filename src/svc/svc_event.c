/*
 * svc_event.c - the records of a service's own events (the svc member of
 * a px_event, JSON text, kept under "svc" in the journal) and their fold
 * into the table (svc_event.h). The same function folds a live event and
 * a recovered one.
 *
 *   svc_apply     {"spec":{canonical spec}}
 *   svc_scale     {"name":"web","replicas":4,"reason":"..."}
 *   svc_delete    {"name":"web","by":"alice"}
 *   svc_rollback  {"name":"web","reason":"..."}
 *   svc_replica   {"name":"web","job_id":12,"health":"ready","reason":"..",
 *                  "ports":{"http":31234},"drain":false,"failure":false}
 */
#include "svc/svc_event.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dump(json_t *o) {
  char *t = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  return t;
}

char *px_svc_ev_apply(const struct px_svc_spec *spec) {
  char *sj = px_svc_spec_json(spec);
  json_t *so = sj ? json_loads(sj, 0, NULL) : NULL;
  free(sj);
  return so ? dump(json_pack("{so}", "spec", so)) : NULL;
}

char *px_svc_ev_scale(const char *name, uint32_t replicas, const char *reason) {
  return dump(json_pack("{ss sI ss}", "name", name, "replicas", (json_int_t)replicas, "reason",
                        reason ? reason : ""));
}

char *px_svc_ev_delete(const char *name, const char *by) {
  return dump(json_pack("{ss ss}", "name", name, "by", by ? by : ""));
}

char *px_svc_ev_rollback(const char *name, const char *reason) {
  return dump(json_pack("{ss ss}", "name", name, "reason", reason ? reason : ""));
}

char *px_svc_ev_replica(const char *name, uint64_t job_id, const struct px_svc_rep_change *c) {
  json_t *o = json_pack("{ss sI sb sb}", "name", name, "job_id", (json_int_t)job_id, "drain",
                        c->drain, "failure", c->failure);
  if (!o) return NULL;
  if (c->health) json_object_set_new(o, "health", json_string(c->health));
  if (c->reason) json_object_set_new(o, "reason", json_string(c->reason));
  if (c->nports) {
    json_t *p = json_object();
    for (uint32_t i = 0; p && i < c->nports; i++)
      json_object_set_new(p, c->port_names[i], json_integer(c->ports[i]));
    json_object_set_new(o, "ports", p);
  }
  return dump(o);
}

static int bad(struct px_diag *d, const char *what) {
  return px_diag_set(d, PX_EINVAL, -1, "svc: %s", what);
}

static int fold_replica(struct px_svcs *t, const json_t *o, int64_t now, struct px_diag *d) {
  struct px_svc_rep_change c = {
      .health = json_string_value(json_object_get(o, "health")),
      .reason = json_string_value(json_object_get(o, "reason")),
      .drain = json_is_true(json_object_get(o, "drain")),
      .failure = json_is_true(json_object_get(o, "failure"))};
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)json_object_get(o, "ports"), key, v) {
    if (c.nports == PX_SVC_MAX_PORTS) break;
    snprintf(c.port_names[c.nports], sizeof c.port_names[0], "%s", key);
    c.ports[c.nports++] = (uint16_t)json_integer_value(v);
  }
  const char *name = json_string_value(json_object_get(o, "name"));
  uint64_t job = (uint64_t)json_integer_value(json_object_get(o, "job_id"));
  if (!name || !job) return bad(d, "replica record without name or job_id");
  int rc = px_svcs_replica_change(t, name, job, &c, now);
  return rc == PX_ENOENT ? 0 : rc; /* the replica ended meanwhile: nothing to change */
}

int px_svcs_fold_event(struct px_svcs *t, enum px_event_kind kind, const char *text, int64_t now,
                       struct px_diag *d) {
  json_t *o = text ? json_loads(text, 0, NULL) : NULL;
  if (!json_is_object(o)) {
    json_decref(o);
    return bad(d, "not a JSON object");
  }
  const char *name = json_string_value(json_object_get(o, "name"));
  int rc = 0;
  switch (kind) {
    case PX_EV_SVC_APPLY: {
      char *sj = json_dumps(json_object_get(o, "spec"), JSON_COMPACT);
      struct px_svc_spec spec;
      rc = sj ? px_svc_spec_parse(sj, strlen(sj), PX_SVC_SPEC_INTERNAL, &spec, d) : bad(d, "no spec");
      free(sj);
      if (!rc) {
        rc = px_svcs_apply(t, &spec, now);
        px_svc_spec_fini(&spec);
      }
      break;
    }
    case PX_EV_SVC_SCALE:
      rc = px_svcs_scale(t, name, (uint32_t)json_integer_value(json_object_get(o, "replicas")),
                         json_string_value(json_object_get(o, "reason")), now);
      break;
    case PX_EV_SVC_DELETE:
      rc = px_svcs_delete(t, name, now);
      break;
    case PX_EV_SVC_ROLLBACK:
      rc = px_svcs_rollback(t, name, json_string_value(json_object_get(o, "reason")), now);
      break;
    case PX_EV_SVC_REPLICA:
      rc = fold_replica(t, o, now, d);
      break;
    default:
      rc = bad(d, "not a service record");
      break;
  }
  if (rc == PX_ENOENT) px_diag_set(d, rc, -1, "name: no service %.64s", name ? name : "(none)");
  json_decref(o);
  return rc;
}
