/*
 * api_misc.c - the route table and the helpers every endpoint uses, plus the
 * small endpoints: usage and accounting (through the server's second,
 * read-only store connection), reservations, whoami, metrics, the API
 * document.
 */
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/jfield.h"
#include "proto/views_json.h"
#include "server/api.h"
#include "server/http/acct_text.h"
#include "server/http/http.h"
#include "server/http/slurmrestd.h"
#include "server/journal/journal.h"
#include "server/openapi.h"
#include "server/tables.h"
#include "server/svc/svc_server.h"

static const struct px_route routes[] = {
    {"POST", "/v1/jobs", px_api_submit, false, false},
    {"GET", "/v1/jobs", px_api_jobs_list, false, true},
    {"GET", "/v1/jobs/{}", px_api_job_show, false, false},
    {"GET", "/v1/jobs/{}/stat", px_api_job_stat, false, false},
    {"DELETE", "/v1/jobs/{}", px_api_job_cancel, false, false},
    {"PATCH", "/v1/jobs/{}", px_api_job_update, false, false},
    {"POST", "/v1/jobs/{}/hold", px_api_job_hold, false, false},
    {"POST", "/v1/jobs/{}/release", px_api_job_release, false, false},
    {"POST", "/v1/jobs/{}/requeue", px_api_job_requeue, false, false},
    {"POST", "/v1/jobs/{}/requeuehold", px_api_job_requeue_hold, false, false},
    {"POST", "/v1/jobs/{}/steps", px_api_step_create, false, false},
    {"GET", "/v1/jobs/{}/steps", px_api_steps_list, false, false},
    {"GET", "/v1/jobs/{}/steps/{}", px_api_step_show, false, false},
    {"DELETE", "/v1/jobs/{}/steps/{}", px_api_step_cancel, false, false},
    {"POST", "/v1/jobs/{}/steps/{}/end", px_api_step_end, false, false},
    /* open: each side brings its one-time credential (relay.c) */
    {"GET", "/v1/terminals/{}", px_api_terminal, true, false},
    /* open: the session checks its own credentials (a browser's cookie; api_session.c) */
    {"GET", "/sessions/{}/*", px_api_session, true, false},
    {"POST", "/sessions/{}/*", px_api_session, true, false},
    {"PUT", "/sessions/{}/*", px_api_session, true, false},
    {"PATCH", "/sessions/{}/*", px_api_session, true, false},
    {"DELETE", "/sessions/{}/*", px_api_session, true, false},
    {"GET", "/v1/watch", px_api_watch, false, true},
    {"GET", "/v1/services", px_api_svc_list, false, true},
    {"POST", "/v1/services", px_api_svc_apply, false, false},
    {"GET", "/v1/services/endpoints", px_api_svc_endpoints, false, true},
    {"GET", "/v1/services/{}", px_api_svc_show, false, false},
    {"DELETE", "/v1/services/{}", px_api_svc_delete, false, false},
    {"POST", "/v1/services/{}/scale", px_api_svc_scale, false, false},
    {"POST", "/v1/services/{}/load", px_api_svc_load, false, false},
    {"GET", "/v1/services/{}/endpoints", px_api_svc_endpoints_one, false, false},
    {"GET", "/v1/nodes", px_api_nodes_list, false, true},
    {"GET", "/v1/nodes/{}", px_api_node_show, false, false},
    {"POST", "/v1/nodes/{}/drain", px_api_node_drain, false, false},
    {"POST", "/v1/nodes/{}/resume", px_api_node_resume, false, false},
    {"POST", "/v1/nodes/{}/gpu_resume", px_api_node_gpu_resume, false, false},
    {"POST", "/v1/nodes/{}/reboot", px_api_node_reboot, false, false},
    {"GET", "/v1/partitions", px_api_partitions, false, true},
    {"POST", "/v1/partitions/{}/down", px_api_partition_down, false, false},
    {"POST", "/v1/partitions/{}/up", px_api_partition_up, false, false},
    {"GET", "/v1/shares", px_api_shares, false, true},
    {"GET", "/v1/usage", px_api_usage, false, false},
    {"GET", "/v1/accounting", px_api_accounting, false, false},
    {"GET", "/v1/accounting/events", px_api_node_events, false, false},
    {"GET", "/v1/reservations", px_api_reservations, false, true},
    {"POST", "/v1/reservations", px_api_resv_create, false, false},
    {"DELETE", "/v1/reservations/{}", px_api_resv_delete, false, false},
    {"POST", "/v1/accounts", px_api_acct_change, false, false},
    {"GET", "/v1/whoami", px_api_whoami, false, false},
    {"POST", "/v1/tokens", px_api_token, false, false},
    {"POST", "/v1/agent/register", px_api_agent_register, false, false},
    {"GET", "/v1/agent/work", px_api_agent_work, false, false},
    {"POST", "/v1/agent/report", px_api_agent_report, false, false},
    {"POST", "/v1/agent/heartbeat", px_api_agent_heartbeat, false, false},
    {"POST", "/v1/agent/gpu", px_api_agent_gpu, false, false},
    {"POST", "/v1/agent/health", px_api_agent_health, false, false},
    {"GET", "/v1/openapi.json", px_api_openapi, true, false},
    {"GET", "/metrics", px_api_metrics, true, false},
    {"GET", "/v1/controllers", px_api_controllers, true, false},
    {"GET", "/ui", px_api_ui_file, true, false}, {"GET", "/ui/", px_api_ui_file, true, false},
    {"GET", "/ui/{}", px_api_ui_file, true, false},
    {"POST", "/v1/ui/link", px_api_ui_link, false, false},
    {"GET", "/v1/ui/topology", px_api_ui_topology, false, true},
    {"GET", "/v1/jobs/{}/output", px_api_ui_output, false, true},
    {"GET", "/v1/diag", px_api_diag, false, false},
    {"POST", "/v1/diag/reset", px_api_diag_reset, false, false},
};

/* Matches url against pattern; "{}" takes one non-empty segment into arg,
 * a final "*" the rest of the url, whatever it is. */
bool px_api_match(const char *pattern, const char *url, char *arg, size_t arglen) {
  while (*pattern && *url) {
    if (pattern[0] == '*' && !pattern[1]) return true;
    if (pattern[0] == '{' && pattern[1] == '}') {
      size_t n = strcspn(url, "/");
      if (!n || n >= arglen) return false;
      snprintf(arg, arglen, "%.*s", (int)n, url);
      url += n;
      pattern += 2;
    } else if (*pattern++ != *url++) {
      return false;
    }
  }
  return (!*pattern || !strcmp(pattern, "*")) && !*url;
}

const struct px_route *px_api_route(const char *method, const char *url, struct px_api_call *c) {
  for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
    if (!px_api_match(routes[i].pattern, url, c->arg, sizeof c->arg)) continue;
    if (!strcmp(routes[i].method, method)) return &routes[i];
    c->method_mismatch = true;
  }
  return px_sr_route(method, url, c); /* slurmrestd's paths (slurmrestd.h) */
}

void px_api_error(struct px_api_call *c, int status, const char *code, const char *fmt, ...) {
  struct px_diag d = {.pos = -1};
  va_list ap;
  va_start(ap, fmt);
  px_diag_vformat(&d, fmt, ap);
  va_end(ap);
  free(c->answer);
  c->status = status;
  c->answer = px_error_diag(code, &d);
}

void px_api_error_diag(struct px_api_call *c, int err, const struct px_diag *d) {
  free(c->answer);
  c->status = px_error_http_status(err);
  c->answer = px_error_diag(px_error_code(err), d);
}

const char *px_api_arg(struct px_api_call *c, const char *name) {
  return MHD_lookup_connection_value(c->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* Does r change what the journal holds? (Reads and steps, which are not
 * durable state, do not.) */
static bool journals(const struct px_req *r) {
  switch (r->kind) {
  case PX_REQ_JOB_SHOW:
  case PX_REQ_AGENT_HEARTBEAT:
  case PX_REQ_STEP_ADD:
  case PX_REQ_STEP_SHOW:
  case PX_REQ_STEP_LIST:
  case PX_REQ_STEP_CANCEL:
  case PX_REQ_STEP_END:
  case PX_REQ_SVC_SHOW:
  case PX_REQ_SVC_ENDPOINTS:
  case PX_REQ_SVC_LOAD:
    return false;
  default:
    return true;
  }
}

void px_api_call_main(struct px_api_call *c, struct px_req *r) {
  r->may_lead = !px_http_thread_lowered();
  char why[256];
  if (journals(r) && px_commit_stalled(c->s, why, sizeof why)) {
    px_api_error(c, 503, "UNAVAILABLE", "the journal cannot be written (%s): changes are refused until it can, listings are served", why);
    return;
  }
  if (px_queue_call(&c->s->queue, r)) {
    px_api_error(c, 503, "UNAVAILABLE", "server is shutting down");
    return;
  }
  c->status = r->status;
  c->answer = r->body;
  r->body = NULL;
}

json_t *px_api_body_object(struct px_api_call *c) {
  struct px_diag d;
  json_t *o = NULL;
  px_diag_clear(&d);
  int rc = px_jf_parse_object(c->body, c->body_len, &o, &d);
  if (rc) px_api_error_diag(c, rc, &d);
  return o;
}

/* ---- usage and accounting ---- */

/* A Unix time ("1700000000", what the CLI sends) or a span back from now
 * ("30d", "12h", "90m", "45s"); absent: 30 days back. */
static bool parse_since(const char *s, int64_t now, int64_t *out) {
  char *end;
  if (!s) {
    *out = now - 30 * 86400;
    return true;
  }
  long long v = strtoll(s, &end, 10);
  if (end == s || v < 0 || v > INT64_MAX / 86400) return false;
  int64_t mult = 0;
  if (*end == 'd') mult = 86400;
  else if (*end == 'h') mult = 3600;
  else if (*end == 'm') mult = 60;
  else if (*end == 's') mult = 1;
  if (mult) end++;
  if (*end) return false;
  *out = mult ? now - v * mult : v;
  return true;
}

struct usage_ctx {
  json_t *rows;
  double total_gpu_s;
};

static int usage_row(void *ctx, const struct px_usage_row *r) {
  struct usage_ctx *u = ctx;
  u->total_gpu_s += r->gpu_s;
  json_array_append_new(
      u->rows, json_pack("{ss sf sf sI sf}", "key", r->key, "gpu_hours", r->gpu_s / 3600.0,
                         "billable_hours", r->billable_s / 3600.0, "jobs", (json_int_t)r->jobs,
                         "avg_wait_s", r->jobs ? r->wait_s_sum / (double)r->jobs : 0.0));
  return 0;
}

/* share: this key's part of the GPU-hours; fair_share: its normalised shares. */
static void add_shares(struct px_server *s, json_t *rows, double total, const char *by) {
  struct px_snap *snap = px_snap_acquire(&s->snaps);
  json_t *tree = json_loads(snap->shares->text, 0, NULL), *row, *sh;
  px_snap_release(snap);
  size_t i, k;
  json_array_foreach(rows, i, row) {
    double gpu_h = json_real_value(json_object_get(row, "gpu_hours"));
    json_object_set_new(row, "share", json_real(total > 0 ? gpu_h * 3600.0 / total : 0));
    const char *key = json_string_value(json_object_get(row, "key"));
    json_array_foreach(json_object_get(tree, "shares"), k, sh) {
      bool is_user = json_is_string(json_object_get(sh, "user"));
      const char *name = json_string_value(json_object_get(sh, is_user ? "user" : "account"));
      if (!name || strcmp(name, key) || is_user != !strcmp(by, "user")) continue;
      json_object_set_new(row, "fair_share", json_real(json_real_value(json_object_get(sh, "norm_shares"))));
      break;
    }
  }
  json_decref(tree);
}

void px_api_usage(struct px_api_call *c) {
  int64_t now = time(NULL), since;
  const char *by = px_api_arg(c, "by");
  enum px_usage_by b = PX_USAGE_ACCOUNT;
  if (!by) by = "account";
  if (!strcmp(by, "user")) b = PX_USAGE_USER;
  else if (!strcmp(by, "partition")) b = PX_USAGE_PARTITION;
  else if (!strcmp(by, "service")) b = PX_USAGE_SERVICE;
  else if (strcmp(by, "account"))
    return px_api_error(c, 400, "INVALID", "by: must be account, user, partition or service");
  if (!parse_since(px_api_arg(c, "since"), now, &since))
    return px_api_error(c, 400, "INVALID", "since: expected a Unix time or a span such as 30d, 12h, 90m");
  struct usage_ctx u = {json_array(), 0};
  pthread_mutex_lock(&c->s->rstore_lock);
  int rc = px_store_usage(c->s->rstore, since, now, b, usage_row, &u);
  pthread_mutex_unlock(&c->s->rstore_lock);
  if (rc) {
    json_decref(u.rows);
    return px_api_error(c, 503, "UNAVAILABLE", "usage query failed");
  }
  if (b == PX_USAGE_ACCOUNT || b == PX_USAGE_USER) add_shares(c->s, u.rows, u.total_gpu_s, by);
  json_t *o = json_pack("{sI sI ss so}", "since", (json_int_t)since, "until", (json_int_t)now,
                        "by", by, "usage", u.rows);
  c->answer = json_dumps(o, JSON_COMPACT);
  c->status = 200;
  json_decref(o);
}

/* One accounting row as a job view (the shape sacct decodes): one per
 * attempt, restarts = the attempt number (acct_text.c). */
static int acct_row(void *ctx, const struct px_acct_row *r) {
  struct px_acct_text *t = ctx;
  px_acct_text_row(t, r);
  return t->b.err;
}

void px_api_accounting(struct px_api_call *c) {
  struct px_acct_query q = {0};
  int64_t now = time(NULL);
  const char *v;
  char *end;
  q.user = px_api_arg(c, "user");
  q.account = px_api_arg(c, "account");
  q.partition = px_api_arg(c, "partition");
  if ((v = px_api_arg(c, "since")) && !parse_since(v, now, &q.since))
    return px_api_error(c, 400, "INVALID", "since: expected a Unix time or a span such as 30d, 12h, 90m");
  if ((v = px_api_arg(c, "until")) && !parse_since(v, now, &q.until))
    return px_api_error(c, 400, "INVALID", "until: expected a Unix time or a span such as 1d");
  if ((v = px_api_arg(c, "id")) && (!(q.job_id = strtoull(v, &end, 10)) || *end))
    return px_api_error(c, 400, "INVALID", "id: not a job id");
  q.limit = 10000;
  if ((v = px_api_arg(c, "limit")) && ((q.limit = (uint32_t)strtoul(v, &end, 10)) == 0 || *end ||
                                       q.limit > 100000))
    return px_api_error(c, 400, "RANGE", "limit: 1 to 100000");
  if ((v = px_api_arg(c, "after")) && (!(q.after_job_id = strtoull(v, &end, 10)) || *end))
    return px_api_error(c, 400, "INVALID", "after: not a job id");
  if (c->s->conf->phalanx.private_jobs && !(c->who.roles & PX_ROLE_OPERATOR)) q.user = c->who.user;
  struct px_acct_text t;
  px_acct_text_begin(&t);
  pthread_mutex_lock(&c->s->rstore_lock);
  int rc = px_store_acct_query(c->s->rstore, &q, acct_row, &t);
  pthread_mutex_unlock(&c->s->rstore_lock);
  char *text = px_acct_text_end(&t, t.rows == q.limit);
  if (rc || !text) {
    free(text);
    return px_api_error(c, 503, "UNAVAILABLE", "accounting query failed");
  }
  c->answer = text;
  c->status = 200;
}

/* The configured advance reservations (ReservationName= lines; creating one
 * through the API is not offered yet: POST answers 405). The conf is
 * immutable after start, so no lock. */
void px_api_reservations(struct px_api_call *c) {
  struct px_snap *snap = px_api_snap_fresh(c->s);
  c->answer = strdup(snap->reservations->text);
  c->status = 200;
  px_snap_release(snap);
}

/* POST /v1/reservations: types and shape checked here; names resolved, the
 * caller's role and the core's rules (name taken, end after start, account
 * or maintenance) on the main thread (handle.c, resv.c). */
#define RESV_MAX_NODES 4096
static int resv_canonical(struct px_api_call *c, json_t *b, json_t **out) {
  static const char *const keys[] = {"name",  "start_s", "end_s",   "duration_s", "nodes",
                                     "partition", "ngpus", "account", "maintenance"};
  const char *key;
  json_t *v;
  json_object_foreach(b, key, v) {
    size_t k = 0;
    while (k < sizeof keys / sizeof keys[0] && strcmp(keys[k], key)) k++;
    if (k == sizeof keys / sizeof keys[0])
      return px_api_error(c, 400, "INVALID", "%.64s: unknown field", key), PX_EINVAL;
    bool str = k == 0 || k == 5 || k == 7, num = k == 1 || k == 2 || k == 3 || k == 6;
    if ((str && (!json_is_string(v) || !json_string_length(v) || json_string_length(v) > 63)) ||
        (num && (!json_is_integer(v) || json_integer_value(v) < 0 ||
                 json_integer_value(v) > (k == 6 ? 1000000 : INT64_MAX / 4))) ||
        (k == 8 && !json_is_boolean(v)) || (k == 4 && !json_is_array(v)))
      return px_api_error(c, 400, "INVALID", "%s: wrong type or out of range", key), PX_EINVAL;
  }
  json_t *nodes = json_object_get(b, "nodes"), *end = json_object_get(b, "end_s"),
         *dur = json_object_get(b, "duration_s"), *start = json_object_get(b, "start_s");
  size_t i;
  json_array_foreach(nodes, i, v) if (!json_is_string(v) || i >= RESV_MAX_NODES)
    return px_api_error(c, 400, "INVALID", "nodes: up to %d node names", RESV_MAX_NODES), PX_EINVAL;
  if (!json_object_get(b, "name"))
    return px_api_error(c, 400, "INVALID", "name: missing"), PX_EINVAL;
  if (!end == !dur)
    return px_api_error(c, 400, "INVALID", "end_s: give end_s or duration_s"), PX_EINVAL;
  if (!json_array_size(nodes) == !json_object_get(b, "ngpus"))
    return px_api_error(c, 400, "INVALID", "nodes: give nodes or ngpus (with partition)"), PX_EINVAL;
  if (json_object_get(b, "ngpus") && !json_object_get(b, "partition"))
    return px_api_error(c, 400, "INVALID", "partition: ngpus needs a partition"), PX_EINVAL;
  int64_t t0 = start ? json_integer_value(start) : (int64_t)time(NULL);
  int64_t t1 = end ? json_integer_value(end) : t0 + json_integer_value(dur);
  json_t *o = json_pack("{sO sI sI so sI sb}", "name", json_object_get(b, "name"), "start_s",
                        (json_int_t)t0, "end_s", (json_int_t)t1, "nodes",
                        nodes ? json_incref(nodes) : json_array(), "ngpus",
                        json_integer_value(json_object_get(b, "ngpus")), "maintenance",
                        json_is_true(json_object_get(b, "maintenance")));
  if (o && json_object_get(b, "partition"))
    json_object_set(o, "partition", json_object_get(b, "partition"));
  if (o && json_object_get(b, "account")) json_object_set(o, "account", json_object_get(b, "account"));
  *out = o;
  return o ? 0 : PX_ENOMEM;
}

void px_api_resv_create(struct px_api_call *c) {
  json_t *body = px_api_body_object(c), *o = NULL;
  if (!body) return;
  struct px_req r = {.kind = PX_REQ_RESV_ADD, .who = c->who};
  if (resv_canonical(c, body, &o) == 0 && (r.text = json_dumps(o, JSON_COMPACT)))
    px_api_call_main(c, &r);
  else if (!c->answer)
    px_api_error(c, 503, "UNAVAILABLE", "out of memory");
  px_req_fini(&r);
  json_decref(o);
  json_decref(body);
}

/* DELETE /v1/reservations/{name}: administrators; refused while a job asked
 * for it (handle.c, core's pxc_resv_remove). */
void px_api_resv_delete(struct px_api_call *c) {
  struct px_req r = {.kind = PX_REQ_RESV_DELETE, .who = c->who};
  snprintf(r.node, sizeof r.node, "%.63s", c->arg);
  px_api_call_main(c, &r);
  px_req_fini(&r);
}

void px_api_whoami(struct px_api_call *c) {
  static const char *const methods[] = {"none", "peercred", "munge", "jwt"};
  json_t *roles = json_array();
  json_array_append_new(roles, json_string("user"));
  if (c->who.roles & PX_ROLE_OPERATOR) json_array_append_new(roles, json_string("operator"));
  if (c->who.roles & PX_ROLE_ADMIN) json_array_append_new(roles, json_string("admin"));
  json_t *o = json_pack("{ss si si ss ss so}", "user", c->who.user, "uid", (int)c->who.uid, "gid",
                        (int)c->who.gid, "node", c->who.node, "method", methods[c->who.method],
                        "roles", roles);
  c->answer = json_dumps(o, JSON_COMPACT);
  c->status = 200;
  json_decref(o);
}

void px_api_metrics(struct px_api_call *c) {
  struct px_snap *snap = px_snap_acquire(&c->s->snaps);
  c->answer = px_metrics_render(c->s->metrics, snap->state_metrics->text);
  px_snap_release(snap);
  c->status = 200;
  c->ctype = "text/plain; version=0.0.4; charset=utf-8";
}

void px_api_openapi(struct px_api_call *c) {
  c->answer = strdup(px_openapi_json);
  c->status = 200;
}

struct token_body {
  char *user, *node;
  int64_t lifetime_s;
};

/* POST /v1/tokens {"user":U,"lifetime_s":S[,"node":N]} -> {"token":JWT}.
 * Users mint tokens for themselves (authenticated here by SO_PEERCRED or an
 * existing credential); administrators for anyone, and agent tokens. */
void px_api_token(struct px_api_call *c) {
  static const struct px_jfield fields[] = {
      PX_JF_S(struct token_body, user, 63, 0),
      PX_JF_S(struct token_body, node, 63, 0),
      PX_JF_NUM(struct token_body, lifetime_s, PX_JF_I64, 60, 30 * 86400),
  };
  json_t *body = px_api_body_object(c);
  if (!body) return;
  struct token_body t = {NULL, NULL, 86400};
  struct px_diag d;
  px_diag_clear(&d);
  int rc = px_jf_decode(body, fields, 3, &t, NULL, "", &d);
  json_decref(body);
  bool admin = c->who.roles & PX_ROLE_ADMIN;
  const char *user = t.user ? t.user : c->who.user;
  if (rc) {
    px_api_error_diag(c, rc, &d);
  } else if (!admin && (strcmp(user, c->who.user) || t.node)) {
    px_api_error(c, 403, "FORBIDDEN", "only administrators mint tokens for others or for agents "
                                      "(rule token-self)");
  } else if (!c->s->jwt_key_len) {
    px_api_error(c, 503, "UNAVAILABLE", "JWT is not enabled on this server");
  } else {
    uint32_t uid = c->who.uid;
    if (strcmp(user, c->who.user)) {
      struct passwd *pw = getpwnam(user); /* admin minting for someone else */
      uid = pw ? pw->pw_uid : UINT32_MAX - 1;
    }
    char *tok = px_auth_mint_jwt(c->s->jwt_key, c->s->jwt_key_len, user, uid, t.node,
                                 time(NULL), t.lifetime_s);
    json_t *o = tok ? json_pack("{ss}", "token", tok) : NULL;
    c->answer = o ? json_dumps(o, JSON_COMPACT) : NULL;
    c->status = 201;
    json_decref(o);
    free(tok);
  }
  free(t.user);
  free(t.node);
}
