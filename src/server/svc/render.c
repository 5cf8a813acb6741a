/*
 * render.c - services as the API shows them (svc_server.h): a summary per
 * service for the listing, the whole of one for `service show` (replicas,
 * scaling decisions with their reasons, the spec), and the endpoints (the
 * ready replicas that are not terminating, with the node's address and the
 * ports the agent picked).
 */
#include <stdlib.h>
#include <string.h>

#include "server/svc/svc_server.h"

json_t *px_svc_summary_json(const struct px_svc *v, int64_t now) {
  char reason[256];
  const char *state = px_svc_status(v, now, reason, sizeof reason);
  return json_pack("{ss ss ss sI sI ss sI ss sb}", "name", v->spec.name, "account",
                   v->spec.account, "user", v->spec.user, "replicas", (json_int_t)v->replicas,
                   "ready", (json_int_t)px_svc_ready(v), "state", state, "generation",
                   (json_int_t)v->generation, "reason", reason, "autoscale", v->spec.autoscale);
}

static json_t *ports_json(const struct px_svc_replica *r) {
  json_t *o = json_object();
  for (uint32_t i = 0; o && i < r->nports; i++)
    json_object_set_new(o, r->port_names[i], json_integer(r->ports[i]));
  return o;
}

static const char *node_name(struct px_server *s, uint32_t node) {
  return node < s->conf->nnodes ? s->conf->nodes[node].name : "";
}

static const char *node_host(struct px_server *s, uint32_t node) {
  if (node >= s->conf->nnodes) return "";
  const struct px_conf_node *cn = &s->conf->nodes[node];
  return s->nodes[node].addr[0] ? s->nodes[node].addr : cn->addr ? cn->addr : cn->name;
}

static json_t *replicas_json(struct px_server *s, const struct px_svc *v) {
  json_t *a = json_array();
  for (uint32_t i = 0; a && i < v->nreps; i++) {
    const struct px_svc_replica *r = &v->reps[i];
    json_array_append_new(
        a, json_pack("{sI sI sI ss sb ss so ss}", "index", (json_int_t)r->index, "job_id",
                     (json_int_t)r->job_id, "generation", (json_int_t)r->generation, "state",
                     px_svc_rep_state_name(r->state), "terminating", r->terminating, "node",
                     node_name(s, r->node), "ports", ports_json(r), "reason", r->reason));
  }
  return a;
}

static json_t *decisions_json(const struct px_svc *v) {
  json_t *a = json_array();
  uint32_t first = v->ndecisions > PX_SVC_DECISIONS ? v->ndecisions - PX_SVC_DECISIONS : 0;
  for (uint32_t k = first; a && k < v->ndecisions; k++) {
    const struct px_svc_decision *d = &v->decisions[k % PX_SVC_DECISIONS];
    json_array_append_new(a, json_pack("{sI sI sI ss}", "time", (json_int_t)d->time_s, "from",
                                       (json_int_t)d->from, "to", (json_int_t)d->to, "reason",
                                       d->reason));
  }
  return a;
}

json_t *px_svc_show_json(struct px_server *s, const struct px_svc *v, int64_t now) {
  json_t *o = px_svc_summary_json(v, now);
  char *spec = px_svc_spec_json(&v->spec);
  if (!o || !spec) {
    free(spec);
    json_decref(o);
    return NULL;
  }
  json_object_set_new(o, "spec", json_loads(spec, 0, NULL));
  free(spec);
  json_object_set_new(o, "created", json_integer(v->created_s));
  json_object_set_new(o, "generation_time", json_integer(v->generation_s));
  json_object_set_new(o, "replica_jobs", replicas_json(s, v));
  json_object_set_new(o, "decisions", decisions_json(v));
  if (v->spec.autoscale)
    json_object_set_new(o, "load", json_pack("{sf sf sI}", "in_flight", v->in_flight,
                                             "requests_per_s", v->rps, "time",
                                             (json_int_t)v->load_s));
  return o;
}

json_t *px_svc_endpoints_json(struct px_server *s, const struct px_svc *v) {
  json_t *ports = json_array(), *eps = json_array();
  for (uint32_t i = 0; ports && i < v->spec.nports; i++)
    json_array_append_new(ports, json_string(v->spec.ports[i]));
  for (uint32_t i = 0; eps && i < v->nreps; i++) {
    const struct px_svc_replica *r = &v->reps[i];
    if (r->terminating || r->state != PX_SVC_REP_READY) continue;
    json_array_append_new(eps, json_pack("{sI sI ss ss so}", "replica", (json_int_t)r->index,
                                         "job_id", (json_int_t)r->job_id, "node",
                                         node_name(s, r->node), "host", node_host(s, r->node),
                                         "ports", ports_json(r)));
  }
  return json_pack("{ss so so}", "name", v->spec.name, "ports", ports, "endpoints", eps);
}

static struct px_blob *blob_of(json_t *o) {
  char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  struct px_blob *b = text ? px_blob_new(text) : NULL;
  free(text);
  return b;
}

void px_svc_render(struct px_server *s, int64_t now) {
  struct px_svc_server *sv = s->svc;
  json_t *list = json_array(), *eps = json_array();
  for (size_t i = 0; list && eps && i < sv->t.n; i++) {
    json_array_append_new(list, px_svc_summary_json(sv->t.v[i], now));
    json_array_append_new(eps, px_svc_endpoints_json(s, sv->t.v[i]));
  }
  struct px_blob *lb = blob_of(json_pack("{so}", "services", list));
  struct px_blob *eb = blob_of(json_pack("{sI so}", "seq", (json_int_t)sv->t.endpoints_seq,
                                         "services", eps));
  if (!lb || !eb) { /* kept stale until the next change */
    px_blob_unref(lb);
    px_blob_unref(eb);
    return;
  }
  pthread_mutex_lock(&sv->lock);
  struct px_blob *ol = sv->list, *oe = sv->endpoints;
  sv->list = lb;
  sv->endpoints = eb;
  sv->endpoints_seq = sv->t.endpoints_seq;
  pthread_mutex_unlock(&sv->lock);
  px_blob_unref(ol);
  px_blob_unref(oe);
}
