/*
 * slurmrestd_common.c - what every slurmrestd endpoint shares: its routes,
 * the response envelope (meta, errors[], warnings[]), v0.0.39's numbers
 * with a "no value" ({"set","infinite","number"}), the translation of the
 * native API's errors into errors[] entries with Slurm's error numbers, and
 * the X-SLURM-USER-* headers (slurmrestd.h).
 */
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/http/slurmrestd.h"
#include "server/tables.h"

#define SR "/slurm/v0.0.39"
#define SRDB "/slurmdb/v0.0.39"

static const struct px_route sr_routes[] = {
    {"GET", SR "/ping", px_sr_ping, false, false},
    {"GET", SR "/diag", px_sr_diag, false, false},
    {"GET", SR "/jobs", px_sr_jobs, false, true},
    {"POST", SR "/job/submit", px_sr_job_submit, false, false},
    {"GET", SR "/job/{}", px_sr_job_show, false, false},
    {"DELETE", SR "/job/{}", px_sr_job_cancel, false, false},
    {"POST", SR "/job/{}", px_sr_job_update, false, false},
    {"GET", SR "/nodes", px_sr_nodes, false, true},
    {"GET", SR "/partitions", px_sr_partitions, false, true},
    {"GET", SR "/reservations", px_sr_reservations, false, true},
    {"GET", SR "/node/{}", px_sr_nodes, false, false},
    {"GET", SR "/partition/{}", px_sr_partitions, false, false},
    {"GET", SR "/reservation/{}", px_sr_reservations, false, false},
    {"GET", SRDB "/jobs", px_sr_db_jobs, false, false},
    {"GET", SRDB "/associations", px_sr_db_associations, false, false},
    {"GET", SRDB "/qos", px_sr_db_qos, false, false},
    {"GET", SRDB "/accounts", px_sr_db_accounts, false, false},
    {"GET", SRDB "/users", px_sr_db_users, false, false},
};

bool px_sr_path(const char *url) {
  return !strncmp(url, "/slurm/", 7) || !strncmp(url, "/slurmdb/", 9);
}

const struct px_route *px_sr_route(const char *method, const char *url, struct px_api_call *c) {
  if (!px_sr_path(url)) return NULL;
  char path[256]; /* longer than any route: matches none */
  size_t len = strlen(url);
  if (len > 1 && url[len - 1] == '/') len--; /* "/jobs/" as the OpenAPI document writes it */
  if (len >= sizeof path) return NULL;
  memcpy(path, url, len);
  path[len] = 0;
  /* job/submit before job/{}: the table lists it first */
  for (size_t i = 0; i < sizeof sr_routes / sizeof sr_routes[0]; i++) {
    if (!px_api_match(sr_routes[i].pattern, path, c->arg, sizeof c->arg)) continue;
    if (!strstr(sr_routes[i].pattern, "{}")) c->arg[0] = '\0'; /* none: the lists tell by it */
    if (!strcmp(sr_routes[i].method, method)) return &sr_routes[i];
    c->method_mismatch = true;
  }
  return NULL;
}

/* ---- numbers and envelope ---- */

json_t *px_sr_noval(int64_t n) {
  return json_pack("{sb sb sI}", "set", 1, "infinite", 0, "number", (json_int_t)n);
}

json_t *px_sr_noval_unset(void) { return json_pack("{sb sb si}", "set", 0, "infinite", 0, "number", 0); }

json_t *px_sr_noval_infinite(void) {
  return json_pack("{sb sb si}", "set", 0, "infinite", 1, "number", 0);
}

/* Phalanx speaks data_parser v0.0.39, which Slurm 23.02 introduced. */
static json_t *meta(const struct px_api_call *c, bool db) {
  return json_pack("{s{ss ss ss} s{ss ss ss} s{s{si si si} ss}}", "plugin", "type",
                   db ? "openapi/dbv0.0.39" : "openapi/v0.0.39", "name",
                   db ? "Slurm OpenAPI DB v0.0.39" : "Slurm OpenAPI v0.0.39", "data_parser",
                   "v0.0.39", "client", "source", "phalanx", "user", c->who.user, "group", "",
                   "Slurm", "version", "major", 23, "micro", 0, "minor", 2, "release", "23.02.0");
}

json_t *px_sr_response(const struct px_api_call *c, bool db) {
  return json_pack("{so so so}", "meta", meta(c, db), "errors", json_array(), "warnings",
                   json_array());
}

void px_sr_answer(struct px_api_call *c, int status, json_t *o) {
  free(c->answer);
  c->answer = o ? json_dumps(o, JSON_COMPACT) : NULL;
  c->status = c->answer ? status : 503;
  json_decref(o);
}

static void error_with(struct px_api_call *c, int status, int slurm_errno, const char *msg) {
  bool db = !strncmp(c->url ? c->url : "", "/slurmdb/", 9);
  json_t *o = px_sr_response(c, db);
  json_t *e = json_pack("{ss si ss ss}", "error", msg, "error_number", slurm_errno, "description",
                        msg, "source", c->url ? c->url : "");
  if (o && e) json_array_append_new(json_object_get(o, "errors"), e);
  else json_decref(e);
  px_sr_answer(c, status, o);
}

void px_sr_error(struct px_api_call *c, int status, int slurm_errno, const char *fmt, ...) {
  struct px_diag d = {.pos = -1};
  va_list ap;
  va_start(ap, fmt);
  px_diag_vformat(&d, fmt, ap);
  va_end(ap);
  error_with(c, status, slurm_errno, d.msg);
}

/* The native error codes (http.c's table) as Slurm's error numbers. */
static int slurm_errno_of(const char *code, const char *url) {
  static const struct {
    const char *code;
    int err;
  } map[] = {{"UNAUTHENTICATED", PX_SR_EAUTH}, {"FORBIDDEN", PX_SR_EACCESS},
             {"LIMIT", PX_SR_EPOLICY},         {"STATE", PX_SR_EDONE},
             {"PARSE", PX_SR_EPARSE},          {"INVALID", PX_SR_EJOBDESC},
             {"RANGE", PX_SR_EJOBDESC},        {"TOO_LARGE", PX_SR_EPARSE}};
  if (!strcmp(code, "NOT_FOUND")) return strstr(url, "/job/") ? PX_SR_EJOBID : PX_SR_ENOTFOUND;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(map[i].code, code)) return map[i].err;
  return PX_SR_EGENERIC;
}

void px_sr_wrap_error(struct px_api_call *c, const char *url) {
  if (!px_sr_path(url) || !c->answer || c->status < 400) return;
  json_t *o = json_loads(c->answer, 0, NULL), *e = json_object_get(o, "error");
  if (json_is_object(e)) {
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    error_with(c, c->status, slurm_errno_of(code ? code : "", url), msg ? msg : "error");
  }
  json_decref(o);
}

bool px_sr_may_see(const struct px_api_call *c, const char *user) {
  if (!c->s->conf->phalanx.private_jobs || (c->who.roles & PX_ROLE_OPERATOR)) return true;
  return user && !strcmp(user, c->who.user);
}

const char *px_sr_cluster(const struct px_api_call *c) {
  const char *n = c->s->conf->cluster_name;
  return n && *n ? n : "phalanx";
}

/* ---- headers ---- */

/* An administrator acting as user name: the identity of that local user. */
static int act_as(const struct px_auth *a, const char *name, struct px_ident *who, char *why,
                  size_t whylen) {
  struct passwd pw, *res = NULL;
  char buf[4096];
  if (strlen(name) >= sizeof who->user || getpwnam_r(name, &pw, buf, sizeof buf, &res) || !res) {
    snprintf(why, whylen, "X-SLURM-USER-NAME: no such user '%.64s'", name);
    return PX_EAUTH;
  }
  struct px_ident as = {.method = who->method, .uid = (uint32_t)pw.pw_uid, .gid = (uint32_t)pw.pw_gid};
  snprintf(as.user, sizeof as.user, "%s", name);
  px_auth_roles(a, &as);
  *who = as;
  return 0;
}

int px_sr_auth_headers(const struct px_auth *a, const char *name, const char *token,
                       struct px_ident *who, char *why, size_t whylen) {
  if (token) {
    char header[8192];
    if (snprintf(header, sizeof header, "Bearer %s", token) >= (int)sizeof header) {
      snprintf(why, whylen, "X-SLURM-USER-TOKEN: token too long");
      return PX_EAUTH;
    }
    if (px_auth_header(a, header, who, why, whylen)) return PX_EAUTH;
  } else if (!who->user[0]) {
    snprintf(why, whylen, "authentication required (X-SLURM-USER-TOKEN, or Authorization)");
    return PX_EAUTH;
  }
  if (!name || !*name || !strcmp(name, who->user)) return 0;
  if (!(who->roles & PX_ROLE_ADMIN)) {
    snprintf(why, whylen, "X-SLURM-USER-NAME: '%.64s' is not the authenticated user '%s' "
             "(only an administrator may act as another user)", name, who->user);
    return PX_EAUTH;
  }
  return act_as(a, name, who, why, whylen);
}
