/*
 * event_json.c - journal records <-> struct px_event (event_json.h). The
 * submit record, one per job of a storm of submits on the main thread, is
 * written directly (px_jobspec_write); the others through jansson.
 */
#include "proto/event_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/jfield.h"
#include "proto/jobspec_json.h"

static const char *str(const json_t *o, const char *key) {
  return json_string_value(json_object_get(o, key));
}
static int64_t num(const json_t *o, const char *key) {
  return json_integer_value(json_object_get(o, key));
}

static int node_of(const struct px_event_names *n, const char *name, uint32_t *out) {
  uint64_t v;
  if (!name || !px_smap_get(n->nodes, name, &v)) return PX_EINVAL;
  *out = (uint32_t)v;
  return 0;
}

static uint32_t part_of(const struct px_conf *c, const char *name) {
  for (uint32_t i = 0; name && i < c->npartitions; i++)
    if (!strcmp(c->partitions[i].name, name)) return i;
  return PX_NONE;
}

static uint32_t account_of(const struct px_conf *c, const char *name) {
  return name ? px_conf_find_account(c, name) : PX_NONE;
}

static bool state_parse(const char *name, enum px_job_state *out) {
  for (int s = PX_JOB_PENDING; name && s <= PX_JOB_PREEMPTED; s++)
    if (!strcmp(px_job_state_name((enum px_job_state)s), name)) {
      *out = (enum px_job_state)s;
      return true;
    }
  return false;
}

/* ---- decoding ---- */

static int decode_submit(struct px_event_rec *e, struct px_diag *d) {
  e->ev.spec = &e->spec;
  e->ids = (uint64_t)num(e->data, "ids");
  return px_jobspec_from_json(json_object_get(e->data, "spec"), &e->spec, "spec.", d);
}

static int decode_start(const struct px_event_names *n, struct px_event_rec *e, struct px_diag *d) {
  json_t *alloc = json_object_get(e->data, "alloc"), *a, *g;
  size_t na = json_array_size(alloc), i, k;
  if (!(e->alloc = calloc(na ? na : 1, sizeof *e->alloc))) return PX_ENOMEM;
  json_array_foreach(alloc, i, a) {
    struct px_alloc *x = &e->alloc[i];
    if (node_of(n, str(a, "node"), &x->node))
      return px_diag_set(d, PX_EINVAL, -1, "alloc[%zu].node: %.64s is not a configured node", i,
                         str(a, "node") ? str(a, "node") : "(missing)");
    x->ncpu = (uint32_t)num(a, "ncpu");
    x->mem_mib = (uint64_t)num(a, "mem_mib");
    json_array_foreach(json_object_get(a, "gpus"), k, g) x->gpus |= 1ull
                                                                    << (json_integer_value(g) & 63);
    x->gpu_share = (uint32_t)num(a, "gpu_share"); /* absent: whole GPUs */
    if (x->gpu_share >= 100 || (x->gpu_share && __builtin_popcountll(x->gpus) != 1))
      return px_diag_set(d, PX_EINVAL, -1, "alloc[%zu].gpu_share: %u is not a share (1-99) of one GPU", i,
                         x->gpu_share);
  }
  e->ev.alloc = e->alloc;
  e->ev.nalloc = (uint32_t)na;
  e->ev.time_limit_s = num(e->data, "time_limit_s");
  e->ev.array_job_id = (uint64_t)num(e->data, "array_job_id");
  e->ev.array_task_id = e->ev.array_job_id ? (uint32_t)num(e->data, "array_task_id") : PX_NONE;
  return 0;
}

static int decode_resv(const struct px_event_names *n, struct px_event_rec *e, struct px_diag *d) {
  const struct px_conf *c = n->conf;
  json_t *nodes = json_object_get(e->data, "nodes"), *v;
  size_t nn = json_array_size(nodes), i;
  if (!(e->resv_nodes = calloc(nn ? nn : 1, sizeof *e->resv_nodes))) return PX_ENOMEM;
  json_array_foreach(
      nodes, i,
      v) if (node_of(n, json_string_value(v),
                     &e->resv_nodes[i])) return px_diag_set(d, PX_EINVAL, -1,
                                                            "nodes: %.64s is not a configured node",
                                                            json_string_value(v)
                                                                ? json_string_value(v)
                                                                : "(not a string)");
  const char *part = str(e->data, "partition"), *acct = str(e->data, "account");
  e->resv =
      (struct px_resv_spec){.name = str(e->data, "name"),
                            .start_s = num(e->data, "start_s"),
                            .end_s = num(e->data, "end_s"),
                            .nodes = nn ? e->resv_nodes : NULL,
                            .nnodes = (uint32_t)nn,
                            .partition = part_of(c, part),
                            .ngpus = (uint32_t)num(e->data, "ngpus"),
                            .account = account_of(c, acct),
                            .maintenance = json_is_true(json_object_get(e->data, "maintenance"))};
  if (part && e->resv.partition == PX_NONE)
    return px_diag_set(d, PX_EINVAL, -1, "partition: %.64s is not a partition", part);
  if (acct && e->resv.account == PX_NONE)
    return px_diag_set(d, PX_EINVAL, -1, "account: %.64s is not an account", acct);
  e->ev.resv = &e->resv;
  return 0;
}

/* {"gpu":3,"usable":false,"state":"UNUSABLE","fault":true,"reason":"..."} on the node's subject. */
static int decode_gpu(const struct px_event_names *n, const struct px_store_rec *r, struct px_event_rec *e,
                      struct px_diag *d) {
  struct px_event *ev = &e->ev;
  json_t *o = e->data, *g = json_object_get(o, "gpu");
  if (node_of(n, r->subject, &ev->node))
    return px_diag_set(d, PX_EINVAL, -1, "subject: node %.64s is not configured", r->subject ? r->subject : "(none)");
  if (!json_is_integer(g) || json_integer_value(g) < 0 || json_integer_value(g) >= 64)
    return px_diag_set(d, PX_EINVAL, -1, "gpu: must be an index 0..63");
  ev->gpu = (uint32_t)json_integer_value(g);
  ev->gpu_usable = json_is_true(json_object_get(o, "usable"));
  ev->gpu_fault = json_is_true(json_object_get(o, "fault"));
  ev->gpu_state = str(o, "state");
  if (!ev->gpu_state) return px_diag_set(d, PX_EINVAL, -1, "state: missing");
  return 0;
}

static int decode_kind(const struct px_event_names *n, const struct px_store_rec *r,
                       struct px_event_rec *e, struct px_diag *d) {
  struct px_event *ev = &e->ev;
  json_t *o = e->data, *v;
  ev->reason = str(o, "reason");
  switch (ev->kind) {
    case PX_EV_SUBMIT:
      return decode_submit(e, d);
    case PX_EV_START:
      return decode_start(n, e, d);
    case PX_EV_RESV:
      return decode_resv(n, e, d);
    case PX_EV_CANCEL:
      ev->by = r->subject;
      ev->signal = (int32_t)num(o, "signal");
      return 0;
    case PX_EV_HOLD:
    case PX_EV_RELEASE:
      ev->admin = json_is_true(json_object_get(o, "admin"));
      return 0;
    case PX_EV_UPDATE:
      if ((v = json_object_get(o, "nice")))
        ev->update.fields |= PX_UPD_NICE, ev->update.nice = (int32_t)json_integer_value(v);
      if ((v = json_object_get(o, "time_limit_s")))
        ev->update.fields |= PX_UPD_TIME_LIMIT, ev->update.time_limit_s = json_integer_value(v);
      if ((v = json_object_get(o, "priority")))
        ev->update.fields |= PX_UPD_PRIORITY, ev->update.priority = (uint32_t)json_integer_value(v);
      return 0;
    case PX_EV_END:
      ev->state = PX_JOB_FAILED;
      state_parse(str(o, "state"), &ev->state);
      ev->exit_code = (int32_t)num(o, "exit_code");
      ev->term_signal = (int32_t)num(o, "term_signal");
      ev->peak_mem_mib = (uint64_t)num(o, "peak_mem_mib");
      ev->cpu_time_ms = (uint64_t)num(o, "cpu_time_ms");
      return 0;
    case PX_EV_REQUEUE:
      ev->hold = json_is_true(json_object_get(o, "hold"));
      return 0;
    case PX_EV_NODE_DRAIN:
    case PX_EV_NODE_RESUME:
    case PX_EV_NODE_DOWN:
    case PX_EV_NODE_UP:
      ev->by = str(o, "by"); /* absent before it was kept: not known */
      ev->cause = str(o, "cause"); /* a drain's; absent before it was kept (the loader infers it) */
      if (node_of(n, r->subject, &ev->node))
        return px_diag_set(d, PX_EINVAL, -1, "subject: node %.64s is not configured",
                           r->subject ? r->subject : "(none)");
      return 0;
    case PX_EV_GPU:
      return decode_gpu(n, r, e, d);
    case PX_EV_PART_DOWN:
    case PX_EV_PART_UP:
      if ((ev->part = part_of(n->conf, r->subject)) == PX_NONE)
        return px_diag_set(d, PX_EINVAL, -1, "subject: partition %.64s is not configured",
                           r->subject ? r->subject : "(none)");
      return 0;
    case PX_EV_SVC_APPLY:
    case PX_EV_SVC_SCALE:
    case PX_EV_SVC_DELETE:
    case PX_EV_SVC_ROLLBACK:
    case PX_EV_SVC_REPLICA:
      if (!json_is_object(v = json_object_get(o, "svc")))
        return px_diag_set(d, PX_EINVAL, -1, "svc: missing");
      return (ev->svc = e->svc_text = json_dumps(v, JSON_COMPACT)) ? 0 : PX_ENOMEM;
    case PX_EV_RESV_DELETE:
      if (!(ev->reason = str(o, "name"))) return px_diag_set(d, PX_EINVAL, -1, "name: missing");
      return 0;
    case PX_EV_STEP:
      if (!json_is_object(v = json_object_get(o, "step")))
        return px_diag_set(d, PX_EINVAL, -1, "step: missing");
      return (ev->step = e->svc_text = json_dumps(v, JSON_COMPACT)) ? 0 : PX_ENOMEM;
    case PX_EV_ACCT:
      ev->reason = NULL;
      ev->acct = &e->acct;
      return px_acct_edit_from_json(o, &e->acct, d);
    default:
      return 0; /* reject: the reason only */
  }
}

int px_event_decode(const struct px_event_names *n, const struct px_store_rec *r,
                    struct px_event_rec *out, struct px_diag *d) {
  memset(out, 0, sizeof *out);
  px_jobspec_init(&out->spec);
  px_diag_clear(d);
  out->ev.job_id = r->job_id;
  out->ev.array_task_id = PX_NONE;
  if (!px_event_kind_parse(r->kind, &out->ev.kind) || out->ev.kind == PX_EV_USAGE)
    return px_diag_set(d, PX_EINVAL, -1, "kind: unknown record kind %.31s", r->kind ? r->kind : "");
  out->data = r->data ? json_loads(r->data, 0, NULL) : json_object();
  if (!json_is_object(out->data)) return px_diag_set(d, PX_EINVAL, -1, "data: not a JSON object");
  json_int_t v = json_integer_value(json_object_get(out->data, "v"));
  if (v < 0 || v > PX_EVENT_VERSION)
    return px_diag_set(d, PX_EPROTO, -1, "v: record version %lld is newer than this server's (%d)",
                       (long long)v, PX_EVENT_VERSION);
  out->version = (unsigned)v;
  return decode_kind(n, r, out, d);
}

void px_event_rec_fini(struct px_event_rec *e) {
  px_jobspec_fini(&e->spec);
  free(e->alloc);
  free(e->resv_nodes);
  free(e->svc_text);
  json_decref(e->data);
  memset(e, 0, sizeof *e);
}

/* ---- encoding ---- */

json_t *px_event_resv_json(const struct px_conf *conf, const struct px_resv_spec *r) {
  json_t *nodes = json_array();
  for (uint32_t k = 0; nodes && k < r->nnodes; k++)
    json_array_append_new(nodes, json_string(conf->nodes[r->nodes[k]].name));
  json_t *o = json_pack("{ss sI sI so sI sb}", "name", r->name, "start_s", (json_int_t)r->start_s,
                        "end_s", (json_int_t)r->end_s, "nodes", nodes, "ngpus",
                        (json_int_t)r->ngpus, "maintenance", r->maintenance);
  if (o && r->partition != PX_NONE)
    json_object_set_new(o, "partition", json_string(conf->partitions[r->partition].name));
  if (o && r->account != PX_NONE)
    json_object_set_new(o, "account", json_string(conf->accounts[r->account].name));
  return o;
}

/* {"v":1,"spec":{...},"ids":N}, written directly (no JSON tree). */
static char *submit_data(const struct px_event *ev, uint64_t nids) {
  struct px_jbuf b = {0};
  char head[32], tail[48];
  int n = snprintf(head, sizeof head, "{\"v\":%d,\"spec\":{", PX_EVENT_VERSION);
  px_jbuf_add(&b, head, (size_t)n);
  px_jobspec_write(&b, ev->spec);
  n = snprintf(tail, sizeof tail, "},\"ids\":%llu}", (unsigned long long)nids);
  px_jbuf_add(&b, tail, (size_t)n);
  if (b.err) free(b.p);
  return b.err ? NULL : b.p;
}

static json_t *start_data(const struct px_conf *conf, const struct px_event *ev) {
  json_t *alloc = json_array();
  for (uint32_t i = 0; alloc && i < ev->nalloc; i++) {
    const struct px_alloc *al = &ev->alloc[i];
    json_t *gpus = json_array();
    for (int g = 0; g < 64; g++)
      if (al->gpus >> g & 1) json_array_append_new(gpus, json_integer(g));
    json_t *e = json_pack("{ss sI so sI}", "node", conf->nodes[al->node].name, "ncpu", (json_int_t)al->ncpu,
                          "gpus", gpus, "mem_mib", (json_int_t)al->mem_mib);
    if (e && al->gpu_share) json_object_set_new(e, "gpu_share", json_integer(al->gpu_share));
    json_array_append_new(alloc, e);
  }
  return json_pack("{so sI sI sI}", "alloc", alloc, "time_limit_s", (json_int_t)ev->time_limit_s,
                   "array_job_id", (json_int_t)ev->array_job_id, "array_task_id",
                   (json_int_t)(ev->array_task_id == PX_NONE ? 0 : ev->array_task_id));
}

static json_t *update_data(const struct px_job_update *u) {
  json_t *o = json_object();
  if (o && (u->fields & PX_UPD_NICE)) json_object_set_new(o, "nice", json_integer(u->nice));
  if (o && (u->fields & PX_UPD_TIME_LIMIT))
    json_object_set_new(o, "time_limit_s", json_integer(u->time_limit_s));
  if (o && (u->fields & PX_UPD_PRIORITY))
    json_object_set_new(o, "priority", json_integer(u->priority));
  return o;
}

/* {"reason":R} with who ("by") and a drain's cause when known. */
static json_t *node_data(const struct px_event *ev, const char *reason) {
  json_t *o = json_pack("{ss}", "reason", reason);
  if (o && ev->by && json_object_set_new(o, "by", json_string(ev->by))) json_decref(o), o = NULL;
  if (o && ev->cause && json_object_set_new(o, "cause", json_string(ev->cause))) json_decref(o), o = NULL;
  return o;
}

static json_t *kind_data(const struct px_conf *conf, const struct px_event *ev,
                         struct px_store_rec *out) {
  const char *reason = ev->reason ? ev->reason : "";
  switch (ev->kind) {
    case PX_EV_START:
      return start_data(conf, ev);
    case PX_EV_CANCEL:
      out->subject = ev->by;
      return json_pack("{si}", "signal", ev->signal);
    case PX_EV_HOLD:
    case PX_EV_RELEASE:
      return json_pack("{sb}", "admin", ev->admin);
    case PX_EV_UPDATE:
      return update_data(&ev->update);
    case PX_EV_END: {
      json_t *o = json_pack("{ss si si sI sI}", "state", px_job_state_name(ev->state), "exit_code",
                            ev->exit_code, "term_signal", ev->term_signal, "peak_mem_mib",
                            (json_int_t)ev->peak_mem_mib, "cpu_time_ms", (json_int_t)ev->cpu_time_ms);
      if (o && *reason && json_object_set_new(o, "reason", json_string(reason))) json_decref(o), o = NULL;
      return o;
    }
    case PX_EV_REQUEUE:
      return json_pack("{sb ss}", "hold", ev->hold, "reason", reason);
    case PX_EV_REJECT:
      return json_pack("{ss}", "reason", reason);
    case PX_EV_NODE_DRAIN:
    case PX_EV_NODE_RESUME:
    case PX_EV_NODE_DOWN:
    case PX_EV_NODE_UP:
      out->subject = conf->nodes[ev->node].name;
      return node_data(ev, reason);
    case PX_EV_GPU:
      out->subject = conf->nodes[ev->node].name;
      return json_pack("{si sb ss sb ss}", "gpu", (int)ev->gpu, "usable", ev->gpu_usable, "state",
                       ev->gpu_state ? ev->gpu_state : "", "fault", ev->gpu_fault, "reason", reason);
    case PX_EV_PART_DOWN:
    case PX_EV_PART_UP:
      out->subject = conf->partitions[ev->part].name;
      return json_pack("{ss}", "reason", reason);
    case PX_EV_RESV:
      out->subject = ev->resv->name;
      return px_event_resv_json(conf, ev->resv);
    case PX_EV_SVC_APPLY:
    case PX_EV_SVC_SCALE:
    case PX_EV_SVC_DELETE:
    case PX_EV_SVC_ROLLBACK:
    case PX_EV_SVC_REPLICA: {
      json_t *svc = ev->svc ? json_loads(ev->svc, 0, NULL) : NULL;
      return svc ? json_pack("{so}", "svc", svc) : NULL;
    }
    case PX_EV_RESV_DELETE:
      out->subject = ev->reason;
      return json_pack("{ss}", "name", reason);
    case PX_EV_STEP: {
      json_t *step = ev->step ? json_loads(ev->step, 0, NULL) : NULL;
      return step ? json_pack("{so}", "step", step) : NULL;
    }
    case PX_EV_ACCT:
      if (!ev->acct) return NULL;
      out->subject = ev->acct->name;
      return px_acct_edit_json(ev->acct);
    default:
      return NULL;
  }
}

char *px_event_encode(const struct px_conf *conf, const struct px_event *ev,
                      const struct px_event_result *res, struct px_store_rec *out) {
  out->kind = px_event_kind_name(ev->kind);
  out->job_id = ev->job_id;
  out->subject = NULL;
  if (ev->kind == PX_EV_SUBMIT) return submit_data(ev, res ? res->nids : 1);
  json_t *o = kind_data(conf, ev, out);
  if (!o) return NULL;
  char *text = NULL;
  if (!json_object_set_new(o, "v", json_integer(PX_EVENT_VERSION)))
    text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  return text;
}
