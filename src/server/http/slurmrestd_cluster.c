/*
 * slurmrestd_cluster.c - /slurm/v0.0.39/ping, diag, nodes, partitions and
 * reservations: the snapshot's listings (the native views of proto/) and
 * sdiag's statistics rewritten in v0.0.39's shapes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/views_json.h"
#include "server/http/slurmrestd.h"
#include "server/journal/journal.h"
#include "server/tables.h"

void px_sr_ping(struct px_api_call *c) {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  json_t *o = px_sr_response(c, false);
  if (o)
    json_object_set_new(o, "pings",
                        json_pack("[{ss ss ss si si}]", "hostname", host, "ping", "UP", "pinged",
                                  "UP", "status", 0, "latency", 0));
  json_object_set_new(json_array_get(json_object_get(o, "pings"), 0), "mode",
                      json_string(px_ha_leading(c->s) ? "primary" : "backup"));
  px_sr_answer(c, 200, o);
}

/* ---- diag ---- */

static json_int_t num(const json_t *o, const char *a, const char *b) {
  return json_integer_value(json_object_get(b ? json_object_get(o, a) : o, b ? b : a));
}

static json_t *rpc_rows(const json_t *rows, bool users) {
  json_t *a = json_array(), *r;
  size_t i;
  json_array_foreach(rows, i, r) {
    json_t *x = json_pack("{sO sI sI sI}", users ? "user" : "message_type",
                          json_object_get(r, users ? "user" : "type"), "count", num(r, "count", NULL),
                          "average_time", num(r, "average_time_us", NULL), "total_time",
                          num(r, "total_time_us", NULL));
    if (x) json_object_set_new(x, users ? "user_id" : "type_id",
                               json_integer(num(r, users ? "user_id" : "type_id", NULL)));
    json_array_append_new(a, x);
  }
  return a;
}

static void main_stats(json_t *st, const json_t *d) {
  json_int_t minutes = (num(d, "time", NULL) - num(d, "since", NULL)) / 60;
  json_object_set_new(st, "schedule_cycle_max", json_integer(num(d, "main", "max_us")));
  json_object_set_new(st, "schedule_cycle_last", json_integer(num(d, "main", "last_us")));
  json_object_set_new(st, "schedule_cycle_total", json_integer(num(d, "main", "count")));
  json_object_set_new(st, "schedule_cycle_mean", json_integer(num(d, "main", "mean_us")));
  json_object_set_new(st, "schedule_cycle_mean_depth", json_integer(num(d, "main", "mean_depth")));
  json_object_set_new(st, "schedule_cycle_per_minute",
                      json_integer(minutes > 0 ? num(d, "main", "count") / minutes : num(d, "main", "count")));
  json_object_set_new(st, "schedule_queue_length", json_integer(num(d, "main", "queue_length")));
  static const char *const jobs[] = {"submitted", "started", "completed", "canceled", "failed",
                                     "pending", "running"};
  for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
    char key[32];
    snprintf(key, sizeof key, "jobs_%s", jobs[i]);
    json_object_set_new(st, key, json_integer(num(d, "jobs", i == 3 ? "cancelled" : jobs[i])));
  }
}

static void bf_stats(json_t *st, const json_t *d) {
  static const struct {
    const char *to, *a, *b;
  } m[] = {{"bf_backfilled_jobs", "backfill_jobs", "total"},
           {"bf_last_backfilled_jobs", "backfill_jobs", "last_cycle"},
           {"bf_cycle_counter", "backfill", "count"},
           {"bf_cycle_mean", "backfill", "mean_us"},
           {"bf_cycle_max", "backfill", "max_us"},
           {"bf_cycle_last", "backfill", "last_us"},
           {"bf_last_depth", "backfill", "last_depth"},
           {"bf_last_depth_try", "backfill", "last_depth"},
           {"bf_depth_mean", "backfill", "mean_depth"},
           {"bf_depth_mean_try", "backfill", "mean_depth"},
           {"bf_queue_len", "backfill", "queue_length"},
           {"bf_queue_len_mean", "backfill", "mean_depth"},
           {"bf_when_last_cycle", "backfill_jobs", "when_last_cycle"}};
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
    json_object_set_new(st, m[i].to, json_integer(num(d, m[i].a, m[i].b)));
  json_object_set_new(st, "bf_backfilled_het_jobs", json_integer(0));
  json_object_set_new(st, "bf_table_size", json_integer(0));
  json_object_set_new(st, "bf_table_size_mean", json_integer(0));
  json_object_set_new(st, "bf_active", json_false());
}

void px_sr_diag(struct px_api_call *c) {
  json_t *d = px_api_diag_json(c->s);
  json_t *o = px_sr_response(c, false), *st = json_object();
  if (!d || !o || !st) {
    json_decref(d), json_decref(o), json_decref(st);
    return px_sr_error(c, 503, PX_SR_EGENERIC, "out of memory");
  }
  json_object_set_new(st, "parts_packed", json_integer(1));
  json_object_set_new(st, "req_time", json_integer(num(d, "time", NULL)));
  json_object_set_new(st, "req_time_start", json_integer(num(d, "since", NULL)));
  json_object_set_new(st, "server_thread_count", json_integer(num(d, "server_thread_count", NULL)));
  json_object_set_new(st, "agent_queue_size", json_integer(num(d, "agent_queue_size", NULL)));
  static const char *const zero[] = {"agent_count", "agent_thread_count", "dbd_agent_queue_size"};
  for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
    json_object_set_new(st, zero[i], json_integer(0));
  json_object_set_new(st, "job_states_ts", json_integer(num(d, "job_states_ts", NULL)));
  json_object_set_new(st, "gettimeofday_latency", json_integer(num(d, "gettimeofday_latency_us", NULL)));
  main_stats(st, d);
  bf_stats(st, d);
  json_object_set_new(st, "rpcs_by_message_type", rpc_rows(json_object_get(d, "rpcs_by_type"), false));
  json_object_set_new(st, "rpcs_by_user", rpc_rows(json_object_get(d, "rpcs_by_user"), true));
  json_object_set_new(o, "statistics", st);
  json_decref(d);
  px_sr_answer(c, 200, o);
}

/* ---- nodes ---- */

/* A comma list ("a,b") as an array of strings. */
static json_t *csv(const char *s) {
  json_t *a = json_array();
  while (a && s && *s) {
    size_t n = strcspn(s, ",");
    if (n) json_array_append_new(a, json_stringn(s, n));
    s += n + (s[n] == ',');
  }
  return a;
}

/* Phalanx's node state as v0.0.39's flags, as slurmctld's: a base state,
 * then DRAIN for any node that carries a drain (/v1/nodes' drain_cause: a
 * drained node whose agent went silent is DOWN and still drained, as
 * Slurm's DOWN+DRAIN), then a reboot's REBOOT_REQUESTED or REBOOT_ISSUED
 * (scontrol reboot; scontrol show node's State=...+REBOOT_REQUESTED). */
static json_t *node_state(const struct px_node_info *n) {
  bool drained = !strcmp(n->state, "DRAINED"), draining = !strcmp(n->state, "DRAINING");
  json_t *a = json_pack("[s]", drained ? "IDLE" : draining ? "ALLOCATED" : n->state);
  if (a && (drained || draining || n->drain_cause)) json_array_append_new(a, json_string("DRAIN"));
  if (a && n->reboot) json_array_append_new(a, json_string(n->reboot));
  return a;
}

/* typed: a node of several GPU types says each (gres or gres_used) */
static json_t *gres(const struct px_node_info *n, uint32_t count, const char *typed) {
  if (!n->gpus) return json_string("");
  if (typed) return json_string(typed);
  char buf[96];
  snprintf(buf, sizeof buf, "gpu:%s%s%u", n->gpu_type ? n->gpu_type : "", n->gpu_type ? ":" : "",
           count);
  return json_string(buf);
}

static json_t *node_tres(uint32_t cpus, uint64_t mem_mib, uint32_t gpus) {
  char buf[128];
  int k = snprintf(buf, sizeof buf, "cpu=%u,mem=%lluM,billing=%u", cpus, (unsigned long long)mem_mib, cpus);
  if (gpus && k > 0 && (size_t)k < sizeof buf) snprintf(buf + k, sizeof buf - (size_t)k, ",gres/gpu=%u", gpus);
  return json_string(buf);
}

static json_t *node_json(const struct px_node_info *n) {
  json_t *o = json_pack("{ss ss ss si si si si si si sI sI sI ss ss si si}", "name", n->name,
                        "hostname", n->name, "address", n->addr ? n->addr : n->name, "cpus",
                        (int)n->cpus, "effective_cpus", (int)n->cpus, "cores", (int)n->cpus,
                        "sockets", 1, "threads", 1, "boards", 1, "real_memory",
                        (json_int_t)n->mem_mib, "alloc_memory", (json_int_t)n->mem_alloc_mib,
                        "last_busy", (json_int_t)n->last_heartbeat, "reason",
                        n->reason ? n->reason : "", "architecture", "x86_64", "alloc_cpus",
                        (int)n->cpus_alloc, "alloc_idle_cpus", (int)(n->cpus - n->cpus_alloc));
  if (!o) return NULL;
  json_object_set_new(o, "state", node_state(n));
  json_object_set_new(o, "partitions", csv(n->partitions));
  json_object_set_new(o, "features", csv(n->features));
  json_object_set_new(o, "active_features", csv(n->features));
  json_object_set_new(o, "gres", gres(n, n->gpus, n->gres));
  json_object_set_new(o, "gres_used", gres(n, n->gpus_alloc, n->gres_used));
  json_object_set_new(o, "gres_drained", json_string(n->gpus_out ? "gpu" : "N/A"));
  json_object_set_new(o, "tres", node_tres(n->cpus, n->mem_mib, n->gpus));
  json_object_set_new(o, "tres_used", node_tres(n->cpus_alloc, n->mem_alloc_mib, n->gpus_alloc));
  json_object_set_new(o, "free_mem", px_sr_noval((int64_t)(n->mem_mib - n->mem_alloc_mib)));
  json_object_set_new(o, "weight", json_integer(1));
  /* who set the reason and when (0 and "": not known, or no reason) */
  json_object_set_new(o, "reason_changed_at", json_integer(n->reason_time));
  json_object_set_new(o, "reason_set_by_user", json_string(n->reason_user ? n->reason_user : ""));
  return o;
}

/* Rewrites the snapshot's listing blob {"key":[...]} item by item; only
 * the one named `name` when not NULL (node/{name}, partition/{name}: 404
 * naming it when there is none). */
static void from_blob(struct px_api_call *c, const char *blob, const char *key, const char *name,
                      json_t *(*one)(const json_t *native, struct px_diag *d)) {
  json_t *native = json_loads(blob, 0, NULL), *v, *out = json_array();
  struct px_diag d;
  size_t i;
  json_array_foreach(json_object_get(native, key), i, v) {
    const char *n = json_string_value(json_object_get(v, "name"));
    if (name && (!n || strcmp(n, name))) continue;
    px_diag_clear(&d);
    json_t *x = one(v, &d);
    if (x) json_array_append_new(out, x);
  }
  json_decref(native);
  if (name && !json_array_size(out)) {
    json_decref(out);
    const char *kind = key[0] == 'n' ? "node" : key[0] == 'p' ? "partition" : "reservation";
    return px_sr_error(c, 404, PX_SR_ENOTFOUND, "%s_name: no such %s '%s'", kind, kind, name);
  }
  json_t *o = px_sr_response(c, false);
  if (o && out) json_object_set_new(o, key, out);
  else json_decref(out);
  px_sr_answer(c, 200, o);
}

static json_t *node_from_native(const json_t *v, struct px_diag *d) {
  struct px_node_info n = {0};
  if (px_node_info_from_json(v, &n, d)) return NULL;
  json_t *o = node_json(&n);
  px_node_info_fini(&n);
  return o;
}

void px_sr_nodes(struct px_api_call *c) {
  struct px_snap *snap = px_api_snap_fresh(c->s);
  from_blob(c, snap->nodes->text, "nodes", c->arg[0] ? c->arg : NULL, node_from_native);
  px_snap_release(snap);
}

/* ---- partitions ---- */

static json_t *part_minutes(int64_t s) {
  if (s <= 0 || s >= PX_TIME_UNLIMITED) return s ? px_sr_noval_infinite() : px_sr_noval_unset();
  return px_sr_noval(s / 60);
}

static json_t *part_json(const struct px_partition_info *p) {
  json_t *o = json_pack(
      "{ss s{ss ss si} s{s[s]} s{si ss} s{si si} s{so} s{so so} s{so}}", "name", p->name,
      "nodes", "configured", p->nodelist ? p->nodelist : "", "allowed_allocation", "", "total",
      (int)p->nnodes, "partition", "state", p->up ? "UP" : "DOWN", "cpus", "total", 0,
      "task_binding", "", "priority", "job_factor", 1, "tier", (int)p->priority_tier, "defaults",
      "time", part_minutes(p->default_time_s), "maximums", "time", part_minutes(p->max_time_s),
      "nodes", p->max_nodes ? px_sr_noval(p->max_nodes) : px_sr_noval_infinite(), "minimums",
      "nodes", px_sr_noval(0));
  if (!o) return NULL;
  char tres[64];
  snprintf(tres, sizeof tres, "gres/gpu=%u", p->ngpus);
  json_object_set_new(o, "tres", json_pack("{ss ss}", "configured", tres, "billing_weights", ""));
  json_object_set_new(o, "flags", p->is_default ? json_pack("[s]", "default") : json_array());
  return o;
}

static json_t *part_from_native(const json_t *v, struct px_diag *d) {
  struct px_partition_info p = {0};
  if (px_partition_info_from_json(v, &p, d)) return NULL;
  json_t *o = part_json(&p);
  px_partition_info_fini(&p);
  return o;
}

void px_sr_partitions(struct px_api_call *c) {
  struct px_snap *snap = px_api_snap_fresh(c->s);
  from_blob(c, snap->partitions->text, "partitions", c->arg[0] ? c->arg : NULL, part_from_native);
  px_snap_release(snap);
}

/* ---- reservations ---- */

static json_t *resv_from_native(const json_t *v, struct px_diag *d) {
  (void)d;
  json_t *nodes = json_object_get(v, "nodes"), *n;
  char list[4096] = "";
  size_t i, len = 0;
  json_array_foreach(nodes, i, n) {
    int k = snprintf(list + len, sizeof list - len, "%s%s", i ? "," : "", json_string_value(n));
    if (k < 0 || (size_t)k >= sizeof list - len) break;
    len += (size_t)k;
  }
  const char *part = json_string_value(json_object_get(v, "partition"));
  const char *acct = json_string_value(json_object_get(v, "account"));
  char tres[48] = "";
  if (json_integer_value(json_object_get(v, "ngpus")))
    snprintf(tres, sizeof tres, "gres/gpu=%lld", (long long)json_integer_value(json_object_get(v, "ngpus")));
  return json_pack("{sO ss si sI sI ss ss ss ss ss ss ss si si so s{so} so}", "name",
                   json_object_get(v, "name"), "node_list", list, "node_count", (int)json_array_size(nodes),
                   "start_time", json_integer_value(json_object_get(v, "start_s")), "end_time",
                   json_integer_value(json_object_get(v, "end_s")), "partition", part ? part : "",
                   "accounts", acct ? acct : "", "users", "", "groups", "", "features", "",
                   "licenses", "", "tres", tres, "core_count", 0, "max_start_delay", 0, "flags",
                   json_is_true(json_object_get(v, "maintenance")) ? json_pack("[s]", "MAINT") : json_array(),
                   "purge_completed", "time", px_sr_noval_unset(), "watts", px_sr_noval_unset());
}

void px_sr_reservations(struct px_api_call *c) {
  struct px_snap *snap = px_api_snap_fresh(c->s);
  from_blob(c, snap->reservations->text, "reservations", c->arg[0] ? c->arg : NULL, resv_from_native);
  px_snap_release(snap);
}
