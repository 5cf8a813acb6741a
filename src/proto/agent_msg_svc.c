/*
 * agent_msg_svc.c - the services part of the agent protocol (agent_msg.h):
 * a launch order's "service" object and a task report's ports and health.
 *
 * Kept apart from agent_msg.c because its rules are the service's own: port
 * names become environment variable names (PX_PORT_<NAME>), so their
 * alphabet is narrow; a health check names one of those ports; the numbers
 * have ranges a kubelet-like checker can live with (no 0 s interval). As in
 * the rest of proto/, the first broken rule is the error and names the field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/agent_msg_int.h"

static const char *const health_types[] = {"none", "http", "tcp", "command"};
static const char *const health_states[] = {"starting", "ready", "unhealthy"};

const char *px_health_type_name(enum px_health_type t) {
  return (unsigned)t < sizeof health_types / sizeof health_types[0] ? health_types[t] : "?";
}

bool px_svc_port_name_ok(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n >= PX_SVC_PORT_NAME || name[0] < 'a' || name[0] > 'z') return false;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  }
  return true;
}

/* ---- launch: "service" ----------------------------------------------- */

static json_t *health_to_json(const struct px_health_check *h) {
  json_t *o = json_pack("{ss sI sI sI sI}", "type", px_health_type_name(h->type), "interval_s",
                        (json_int_t)h->interval_s, "timeout_s", (json_int_t)h->timeout_s,
                        "failure_threshold", (json_int_t)h->failure_threshold, "startup_grace_s",
                        (json_int_t)h->startup_grace_s);
  if (!o) return NULL;
  bool bad = false;
  if (h->type == PX_HEALTH_HTTP || h->type == PX_HEALTH_TCP) bad |= px_wr_str(o, "port", h->port) != 0;
  if (h->type == PX_HEALTH_HTTP) bad |= px_wr_str(o, "path", h->path) != 0;
  if (h->type == PX_HEALTH_COMMAND) bad |= px_wr_strv(o, "command", h->command) != 0;
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

json_t *px_svc_launch_to_json(const struct px_launch_service *s) {
  json_t *o = json_pack("{ss sI sI}", "name", s->name, "replica", (json_int_t)s->replica,
                        "generation", (json_int_t)s->generation);
  if (!o) return NULL;
  bool bad = px_wr_strv(o, "ports", s->ports) != 0;
  bad |= json_object_set_new(o, "health", health_to_json(&s->health)) != 0;
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static void rd_u32_range(struct px_rd *rd, const char *key, uint32_t lo, uint32_t hi, uint32_t *out) {
  px_rd_u32(rd, key, false, out);
  if (!rd->err && (*out < lo || *out > hi)) px_rd_fail(rd, key, "%u out of range [%u, %u]", *out, lo, hi);
}

static bool has_port(const struct px_launch_service *s, const char *name) {
  for (uint32_t i = 0; i < s->nports; i++)
    if (strcmp(s->ports[i], name) == 0) return true;
  return false;
}

/* Which fields each type takes: a stray one is an error, not ignored. */
static void health_fields_check(struct px_rd *rd, const struct px_launch_service *s, uint32_t ncmd) {
  const struct px_health_check *h = &s->health;
  bool port = h->type == PX_HEALTH_HTTP || h->type == PX_HEALTH_TCP;
  if (port && !h->port[0]) px_rd_fail(rd, "port", "required for a %s check", px_health_type_name(h->type));
  if (port && h->port[0] && !has_port(s, h->port))
    px_rd_fail(rd, "port", "'%s' is not one of the service's ports", h->port);
  if (!port && json_object_get(rd->obj, "port")) px_rd_fail(rd, "port", "only for http and tcp checks");
  if (h->type == PX_HEALTH_HTTP && h->path[0] != '/') px_rd_fail(rd, "path", "must start with '/'");
  if (h->type != PX_HEALTH_HTTP && json_object_get(rd->obj, "path")) px_rd_fail(rd, "path", "only for http checks");
  if (h->type == PX_HEALTH_COMMAND && !ncmd) px_rd_fail(rd, "command", "must not be empty");
  if (h->type != PX_HEALTH_COMMAND && h->command) px_rd_fail(rd, "command", "only for command checks");
}

static void health_read(struct px_rd *parent, const char *ctx, struct px_launch_service *s) {
  struct px_health_check *h = &s->health;
  h->type = PX_HEALTH_NONE;
  h->interval_s = 10;
  h->timeout_s = 1;
  h->failure_threshold = 3;
  json_t *j = px_rd_get(parent, "health", false);
  if (!j) return;
  char hctx[96];
  snprintf(hctx, sizeof hctx, "%s.health", ctx);
  struct px_rd rd;
  px_rd_init(&rd, j, hctx, parent->d);
  char type[16] = "";
  px_rd_buf(&rd, "type", true, type, sizeof type);
  bool known = false;
  for (unsigned i = 0; !rd.err && !known && i < sizeof health_types / sizeof health_types[0]; i++)
    if ((known = strcmp(type, health_types[i]) == 0)) h->type = (enum px_health_type)i;
  if (!rd.err && !known) px_rd_fail(&rd, "type", "'%s' is not none, http, tcp or command", type);
  px_rd_buf(&rd, "port", false, h->port, sizeof h->port);
  px_rd_buf(&rd, "path", false, h->path, sizeof h->path);
  uint32_t ncmd = 0;
  px_rd_strv(&rd, "command", false, &h->command, &ncmd);
  rd_u32_range(&rd, "interval_s", 1, 3600, &h->interval_s);
  rd_u32_range(&rd, "timeout_s", 1, 3600, &h->timeout_s);
  rd_u32_range(&rd, "failure_threshold", 1, 1000, &h->failure_threshold);
  rd_u32_range(&rd, "startup_grace_s", 0, 86400, &h->startup_grace_s);
  health_fields_check(&rd, s, ncmd);
  parent->err = px_rd_done(&rd);
}

static void ports_check(struct px_rd *rd, const struct px_launch_service *s) {
  if (rd->err) return;
  if (s->nports > PX_SVC_PORTS_MAX) {
    px_rd_fail(rd, "ports", "%u names, at most %d", s->nports, PX_SVC_PORTS_MAX);
    return;
  }
  for (uint32_t i = 0; i < s->nports && !rd->err; i++) {
    if (!px_svc_port_name_ok(s->ports[i]))
      px_rd_fail(rd, "ports", "'%s' is not a port name (1-31 of a-z 0-9 _ -, a letter first)", s->ports[i]);
    for (uint32_t k = 0; k < i && !rd->err; k++)
      if (strcmp(s->ports[k], s->ports[i]) == 0) px_rd_fail(rd, "ports", "'%s' appears twice", s->ports[i]);
  }
}

void px_svc_launch_read(struct px_rd *parent, struct px_launch_service **out) {
  json_t *j = px_rd_get(parent, "service", false);
  if (!j) return;
  struct px_launch_service *s = calloc(1, sizeof *s);
  if (!s) {
    parent->err = px_diag_set(parent->d, PX_ENOMEM, -1, "out of memory");
    return;
  }
  char ctx[64];
  snprintf(ctx, sizeof ctx, "%s.service", parent->ctx);
  struct px_rd rd;
  px_rd_init(&rd, j, ctx, parent->d);
  px_rd_buf(&rd, "name", true, s->name, sizeof s->name);
  if (!rd.err && !s->name[0]) px_rd_fail(&rd, "name", "must not be empty");
  px_rd_u32(&rd, "replica", true, &s->replica);
  px_rd_u64(&rd, "generation", false, &s->generation);
  px_rd_strv(&rd, "ports", false, &s->ports, &s->nports);
  ports_check(&rd, s);
  if (!rd.err) health_read(&rd, ctx, s);
  int rc = px_rd_done(&rd);
  if (rc) {
    parent->err = rc;
    px_launch_service_free(s);
    return;
  }
  *out = s;
}

void px_launch_service_free(struct px_launch_service *s) {
  if (!s) return;
  px_strv_free(s->ports);
  px_strv_free(s->health.command);
  free(s);
}

/* ---- task report: ports and health ------------------------------------ */

int px_svc_report_write(json_t *o, const struct px_task_report *r) {
  if (!r->has_service) return 0;
  json_t *ports = json_object();
  if (!ports) return PX_ENOMEM;
  bool bad = false;
  for (uint32_t i = 0; i < r->nports && i < PX_SVC_PORTS_MAX; i++)
    bad |= json_object_set_new(ports, r->port_names[i], json_integer(r->ports[i])) != 0;
  bad |= json_object_set_new(o, "ports", ports) != 0;
  bad |= px_wr_str(o, "health", r->health) != 0;
  if (r->health_reason[0]) bad |= px_wr_str(o, "health_reason", r->health_reason) != 0;
  return bad ? PX_ENOMEM : 0;
}

static void report_ports_read(struct px_rd *rd, struct px_task_report *r) {
  json_t *p = px_rd_get(rd, "ports", false);
  if (!p) return;
  if (!json_is_object(p)) {
    px_rd_fail(rd, "ports", "expected an object of name: port");
    return;
  }
  if (json_object_size(p) > PX_SVC_PORTS_MAX) {
    px_rd_fail(rd, "ports", "%zu ports, at most %d", json_object_size(p), PX_SVC_PORTS_MAX);
    return;
  }
  const char *name;
  json_t *v;
  json_object_foreach(p, name, v) {
    if (!px_svc_port_name_ok(name)) {
      px_rd_fail(rd, "ports", "'%.40s' is not a port name", name);
      return;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65535) {
      px_rd_fail(rd, "ports", "%s: expected a TCP port (1-65535)", name);
      return;
    }
    snprintf(r->port_names[r->nports], sizeof r->port_names[0], "%s", name);
    r->ports[r->nports++] = (uint16_t)json_integer_value(v);
  }
}

void px_svc_report_read(struct px_rd *rd, struct px_task_report *r) {
  r->has_service = json_object_get(rd->obj, "health") != NULL;
  px_rd_buf(rd, "health", false, r->health, sizeof r->health);
  px_rd_buf(rd, "health_reason", false, r->health_reason, sizeof r->health_reason);
  report_ports_read(rd, r);
  if (rd->err) return;
  if (!r->has_service) {
    if (json_object_get(rd->obj, "ports")) px_rd_fail(rd, "ports", "only with health (a service replica's report)");
    else if (json_object_get(rd->obj, "health_reason")) px_rd_fail(rd, "health_reason", "only with health");
    return;
  }
  bool known = false;
  for (unsigned i = 0; i < sizeof health_states / sizeof health_states[0]; i++)
    known |= strcmp(r->health, health_states[i]) == 0;
  if (!known) px_rd_fail(rd, "health", "'%s' is not starting, ready or unhealthy", r->health);
  else if (strcmp(r->state, "RUNNING") != 0) px_rd_fail(rd, "health", "only in a RUNNING report");
}
