/*
 * api_svc.c - the services' HTTP endpoints (docs/api/openapi.yaml):
 *
 *   GET    /v1/services                 the listing (rendered by the main thread)
 *   POST   /v1/services                 apply a spec (YAML or JSON body)
 *   GET    /v1/services/endpoints       every service's ready replicas;
 *                                       ?wait=SEQ holds the request (up to
 *                                       25 s) until the endpoints' seq differs
 *   GET    /v1/services/NAME            one service in full
 *   DELETE /v1/services/NAME
 *   POST   /v1/services/NAME/scale      {"replicas":N}
 *   POST   /v1/services/NAME/load       {"in_flight":N,"requests_per_s":R} (operator)
 *   GET    /v1/services/NAME/endpoints  one service's endpoints
 *
 * The long poll parks its connection on the snapshots like a watch (no
 * thread held on the event-driven listener): each publish resumes it, and
 * it answers once the endpoints changed or its 25 s are up.
 */
#include <stdlib.h>
#include <string.h>

#include "server/svc/svc_server.h"

#define ENDPOINTS_WAIT_NS (25 * 1000000000LL)

static struct px_blob *take(struct px_svc_server *sv, bool endpoints, uint64_t *seq) {
  pthread_mutex_lock(&sv->lock);
  struct px_blob *b = endpoints ? sv->endpoints : sv->list;
  if (b) px_blob_ref(b);
  if (seq) *seq = sv->endpoints_seq;
  pthread_mutex_unlock(&sv->lock);
  return b;
}

static void answer_blob(struct px_api_call *c, struct px_blob *b, const char *empty) {
  c->status = 200;
  c->answer = strdup(b ? b->text : empty);
  px_blob_unref(b);
}

void px_api_svc_list(struct px_api_call *c) {
  answer_blob(c, take(c->s->svc, false, NULL), "{\"services\":[]}");
}

static bool parse_u64(const char *v, uint64_t *out) {
  char *end;
  if (!v || !*v || *v == '-') return false;
  *out = strtoull(v, &end, 10);
  return !*end;
}

void px_api_svc_endpoints(struct px_api_call *c) {
  struct px_svc_server *sv = c->s->svc;
  const char *w = px_api_arg(c, "wait");
  uint64_t wait = 0, seq;
  if (w && !parse_u64(w, &wait))
    return px_api_error(c, 400, "INVALID", "wait: must be a sequence number");
  struct px_blob *b = take(sv, true, &seq);
  int64_t deadline = px_now_real_ns() + ENDPOINTS_WAIT_NS -
                     (px_now_mono_ns() - (c->t0_ns ? c->t0_ns : px_now_mono_ns()));
  while (w && seq == wait && px_now_real_ns() < deadline && !atomic_load(&c->s->stop)) {
    struct px_snap *snap = px_snap_acquire(&c->s->snaps);
    uint64_t after = snap->seq;
    px_snap_release(snap);
    if (c->can_park) { /* resumed at the next publish, then asked again */
      px_blob_unref(b);
      c->park = c->park_snap = true;
      c->park_after = after;
      c->park_deadline_ns = deadline;
      return;
    }
    atomic_fetch_add(&c->s->snap_watchers, 1);
    px_queue_poke(&c->s->queue);
    px_snap_release(px_snap_wait(&c->s->snaps, after, deadline));
    atomic_fetch_sub(&c->s->snap_watchers, 1);
    px_blob_unref(b);
    b = take(sv, true, &seq);
  }
  answer_blob(c, b, "{\"seq\":0,\"services\":[]}");
}

/* A request to the main thread about service NAME (c->arg). */
static void to_main(struct px_api_call *c, enum px_req_kind kind, char *text, uint64_t n) {
  struct px_req r = {.kind = kind, .who = c->who, .text = text, .job_id = n};
  snprintf(r.node, sizeof r.node, "%.63s", c->arg);
  const char *wd = kind == PX_REQ_SVC_APPLY ? px_api_arg(c, "workdir") : NULL;
  if (wd && wd[0] == '/') snprintf(r.reason, sizeof r.reason, "%s", wd);
  px_api_call_main(c, &r);
  px_req_fini(&r);
}

void px_api_svc_apply(struct px_api_call *c) {
  char *text = strndup(c->body, c->body_len);
  if (!text) return px_api_error(c, 503, "UNAVAILABLE", "out of memory");
  c->arg[0] = '\0';
  to_main(c, PX_REQ_SVC_APPLY, text, 0);
}

void px_api_svc_show(struct px_api_call *c) { to_main(c, PX_REQ_SVC_SHOW, NULL, 0); }
void px_api_svc_delete(struct px_api_call *c) { to_main(c, PX_REQ_SVC_DELETE, NULL, 0); }
void px_api_svc_endpoints_one(struct px_api_call *c) { to_main(c, PX_REQ_SVC_ENDPOINTS, NULL, 0); }

void px_api_svc_scale(struct px_api_call *c) {
  json_t *o = px_api_body_object(c);
  if (!o) return;
  json_t *n = json_object_get(o, "replicas");
  json_int_t v = json_is_integer(n) ? json_integer_value(n) : -1;
  json_decref(o);
  if (v < 0 || v > PX_SVC_MAX_REPLICAS)
    return px_api_error(c, 400, "INVALID", "replicas: a whole number from 0 to %d is required",
                        PX_SVC_MAX_REPLICAS);
  to_main(c, PX_REQ_SVC_SCALE, NULL, (uint64_t)v);
}

void px_api_svc_load(struct px_api_call *c) {
  char *text = strndup(c->body, c->body_len);
  if (!text) return px_api_error(c, 503, "UNAVAILABLE", "out of memory");
  to_main(c, PX_REQ_SVC_LOAD, text, 0);
}
