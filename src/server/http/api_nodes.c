/*
 * api_nodes.c - nodes, partitions and the fair-share tree (from the
 * snapshot), drain/resume (queued), and the agent endpoints: register,
 * report and heartbeat are queued to the main thread; the work long-poll
 * waits on the node's order queue (outbox.c) and never involves it: on the
 * TCP listener it parks without a thread (http.c), on the Unix socket its
 * connection's thread waits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/jfield.h"
#include "server/api.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"

static void blob_answer(struct px_api_call *c, struct px_blob *(*pick)(struct px_snap *)) {
  struct px_snap *snap = px_api_snap_fresh(c->s);
  struct px_blob *b = pick(snap);
  c->answer = b ? strdup(b->text) : NULL;
  c->status = 200;
  px_snap_release(snap);
}

static struct px_blob *pick_nodes(struct px_snap *s) { return s->nodes; }
static struct px_blob *pick_partitions(struct px_snap *s) { return s->partitions; }
static struct px_blob *pick_shares(struct px_snap *s) { return s->shares; }

void px_api_nodes_list(struct px_api_call *c) { blob_answer(c, pick_nodes); }
void px_api_partitions(struct px_api_call *c) { blob_answer(c, pick_partitions); }
void px_api_shares(struct px_api_call *c) { blob_answer(c, pick_shares); }

void px_api_node_show(struct px_api_call *c) {
  struct px_snap *snap = px_api_snap_fresh(c->s);
  json_t *all = json_loads(snap->nodes->text, 0, NULL), *n;
  size_t i;
  px_snap_release(snap);
  json_array_foreach(json_object_get(all, "nodes"), i, n) {
    if (!strcmp(json_string_value(json_object_get(n, "name")), c->arg)) {
      c->answer = json_dumps(n, JSON_COMPACT);
      c->status = 200;
      json_decref(all);
      return;
    }
  }
  json_decref(all);
  px_api_error(c, 404, "NOT_FOUND", "node %.64s: no such node", c->arg);
}

struct reason_body {
  char *reason;
};

/* A node's or a partition's (named in r.node) state, with an optional reason. */
static void state_change(struct px_api_call *c, enum px_req_kind kind, const char *what) {
  static const struct px_jfield fields[] = {PX_JF_S(struct reason_body, reason, 255, 0)};
  struct px_req r = {.kind = kind, .who = c->who};
  if (strlen(c->arg) >= sizeof r.node)
    return px_api_error(c, 404, "NOT_FOUND", "%s: no such %s", what, what);
  snprintf(r.node, sizeof r.node, "%.63s", c->arg);
  if (c->body_len) {
    json_t *body = px_api_body_object(c);
    if (!body) return;
    struct reason_body rb = {0};
    struct px_diag d;
    px_diag_clear(&d);
    int rc = px_jf_decode(body, fields, 1, &rb, NULL, "", &d);
    json_decref(body);
    if (rc) {
      free(rb.reason);
      return px_api_error_diag(c, rc, &d);
    }
    snprintf(r.reason, sizeof r.reason, "%s", rb.reason ? rb.reason : "");
    free(rb.reason);
  }
  px_api_call_main(c, &r);
}

void px_api_node_drain(struct px_api_call *c) { state_change(c, PX_REQ_NODE_DRAIN, "node"); }
void px_api_node_resume(struct px_api_call *c) { state_change(c, PX_REQ_NODE_RESUME, "node"); }
void px_api_partition_down(struct px_api_call *c) { state_change(c, PX_REQ_PART_DOWN, "partition"); }
void px_api_partition_up(struct px_api_call *c) { state_change(c, PX_REQ_PART_UP, "partition"); }

/* ---- agents ---- */

void px_api_agent_register(struct px_api_call *c) {
  struct px_req r = {.kind = PX_REQ_AGENT_REGISTER, .who = c->who};
  struct px_diag d;
  px_diag_clear(&d);
  int rc = px_node_report_decode(c->body, &r.report, &d);
  if (rc) return px_api_error_diag(c, rc, &d);
  px_api_call_main(c, &r);
  px_req_fini(&r);
}

/* The batch form ({"reports":[...]}, proto/agent_msg.h) is one request to
 * the main thread, so that a node's ends cost one journal commit. */
static bool is_batch(const char *body) {
  json_t *j = body ? json_loads(body, 0, NULL) : NULL;
  bool batch = json_is_object(j) && json_object_get(j, "reports");
  json_decref(j);
  return batch;
}

void px_api_agent_report(struct px_api_call *c) {
  struct px_req r = {.kind = PX_REQ_AGENT_REPORT, .who = c->who};
  struct px_diag d;
  px_diag_clear(&d);
  int rc = is_batch(c->body) ? px_task_reports_decode(c->body, &r.tasks, &r.ntasks, &d)
                             : px_task_report_decode(c->body, &r.task, &d);
  if (rc) return px_api_error_diag(c, rc, &d);
  px_api_call_main(c, &r);
  free(r.tasks);
}
struct node_body {
  char node[64];
};

void px_api_agent_heartbeat(struct px_api_call *c) {
  static const struct px_jfield fields[] = {PX_JF_C(struct node_body, node)};
  struct px_req r = {.kind = PX_REQ_AGENT_HEARTBEAT, .who = c->who};
  json_t *body = px_api_body_object(c);
  if (!body) return;
  struct node_body nb = {""};
  struct px_diag d;
  px_diag_clear(&d);
  json_t *jobs = json_object_get(body, "jobs"); /* the running jobs' use, for sstat (loop/usage.c) */
  int rc = jobs && !json_is_array(jobs) ? px_diag_set(&d, PX_EINVAL, -1, "jobs: not an array") : 0;
  if (!rc && jobs) r.text = json_dumps(jobs, JSON_COMPACT);
  json_object_del(body, "jobs");
  if (!rc) rc = px_jf_decode(body, fields, 1, &nb, NULL, "", &d);
  json_decref(body);
  if (!rc && !nb.node[0]) rc = px_diag_set(&d, PX_EINVAL, -1, "node: required");
  if (rc) {
    px_req_fini(&r);
    return px_api_error_diag(c, rc, &d);
  }
  memcpy(r.node, nb.node, sizeof r.node);
  px_api_call_main(c, &r);
  px_req_fini(&r);
}

/* POST /v1/agent/gpu: a GPU fault (proto/gpu_msg.h). */
void px_api_agent_gpu(struct px_api_call *c) {
  struct px_req r = {.kind = PX_REQ_AGENT_GPU, .who = c->who};
  struct px_diag d;
  int rc = px_gpu_fault_decode(c->body ? c->body : "", &r.gpu, &d);
  if (rc) return px_api_error_diag(c, rc, &d);
  px_api_call_main(c, &r);
}

/* POST /v1/agent/health: a health check result (proto/gpu_msg.h). */
void px_api_agent_health(struct px_api_call *c) {
  struct px_req r = {.kind = PX_REQ_AGENT_HEALTH, .who = c->who};
  struct px_diag d;
  int rc = px_node_health_decode(c->body ? c->body : "", &r.health, &d);
  if (rc) return px_api_error_diag(c, rc, &d);
  px_api_call_main(c, &r);
}

struct reboot_body {
  bool asap;
  char next_state[16]; /* "", "RESUME", "DOWN" */
  char *reason;
};

/* POST /v1/nodes/{name}/reboot {"asap":true,"next_state":"RESUME","reason":"..."}: operators. */
void px_api_node_reboot(struct px_api_call *c) {
  static const struct px_jfield fields[] = {PX_JF_B(struct reboot_body, asap), PX_JF_C(struct reboot_body, next_state),
                                            PX_JF_S(struct reboot_body, reason, 200, 0)};
  struct px_req r = {.kind = PX_REQ_NODE_REBOOT, .who = c->who};
  if (strlen(c->arg) >= sizeof r.node) return px_api_error(c, 404, "NOT_FOUND", "node: no such node");
  snprintf(r.node, sizeof r.node, "%.63s", c->arg);
  struct reboot_body rb = {0};
  struct px_diag d;
  px_diag_clear(&d);
  int rc = 0;
  if (c->body_len) {
    json_t *body = px_api_body_object(c);
    if (!body) return;
    rc = px_jf_decode(body, fields, 3, &rb, NULL, "", &d);
    json_decref(body);
  }
  const char *ns = rb.next_state;
  if (!rc && ns[0] && strcasecmp(ns, "RESUME") && strcasecmp(ns, "DOWN"))
    rc = px_diag_set(&d, PX_EINVAL, -1, "next_state: RESUME or DOWN, not '%s'", ns);
  if (!rc) {
    r.batch = rb.asap;
    r.signal = !ns[0] ? PX_REBOOT_NEXT_KEEP : !strcasecmp(ns, "RESUME") ? PX_REBOOT_NEXT_RESUME : PX_REBOOT_NEXT_DOWN;
    snprintf(r.reason, sizeof r.reason, "%s", rb.reason ? rb.reason : "");
  }
  free(rb.reason);
  if (rc) return px_api_error_diag(c, rc, &d);
  px_api_call_main(c, &r);
}

struct gpu_body {
  char gpu[8]; /* an index, or "all" */
};

/* POST /v1/nodes/{name}/gpu_resume {"gpu":"3"|"all"}: operators. */
void px_api_node_gpu_resume(struct px_api_call *c) {
  static const struct px_jfield fields[] = {PX_JF_C(struct gpu_body, gpu)};
  struct px_req r = {.kind = PX_REQ_GPU_RESUME, .who = c->who};
  if (strlen(c->arg) >= sizeof r.node) return px_api_error(c, 404, "NOT_FOUND", "node: no such node");
  snprintf(r.node, sizeof r.node, "%.63s", c->arg);
  json_t *body = px_api_body_object(c);
  if (!body) return;
  struct gpu_body gb = {""};
  struct px_diag d;
  px_diag_clear(&d);
  int rc = px_jf_decode(body, fields, 1, &gb, NULL, "", &d);
  json_decref(body);
  char *end = NULL;
  unsigned long v = gb.gpu[0] >= '0' && gb.gpu[0] <= '9' ? strtoul(gb.gpu, &end, 10) : 0;
  r.batch = !strcmp(gb.gpu, "all");
  if (!rc && !r.batch && (!end || *end || v > 63))
    rc = px_diag_set(&d, PX_EINVAL, -1, "gpu: a GPU index 0..63 or \"all\"");
  if (rc) return px_api_error_diag(c, rc, &d);
  r.gpu.gpu = (uint32_t)v;
  px_api_call_main(c, &r);
}

void px_api_agent_work(struct px_api_call *c) {
  const char *node = px_api_arg(c, "node"), *after = px_api_arg(c, "after");
  uint64_t idx, seq = 0;
  if (!node || !px_smap_get(&c->s->node_names, node, &idx))
    return px_api_error(c, 404, "NOT_FOUND", "node: %.64s is not configured", node ? node : "");
  if (c->who.node[0] ? strcmp(c->who.node, node) : !(c->who.roles & PX_ROLE_ADMIN))
    return px_api_error(c, 403, "FORBIDDEN",
                        "credential may not poll for node %.64s (rule agent-node)", node);
  char *end = NULL;
  if (after) seq = strtoull(after, &end, 10);
  if (after && (!*after || *end || *after == '-'))
    return px_api_error(c, 400, "INVALID", "after: must be a sequence number");
  int64_t deadline = px_now_real_ns() + PX_SERVER_POLL_MAX_S * 1000000000LL;
  const char *t = px_api_arg(c, "timeout");
  if (t) deadline = px_now_real_ns() + (int64_t)(strtoull(t, NULL, 10) % 61) * 1000000000LL;
  if (c->can_park) {
    c->park = true, c->park_node = (uint32_t)idx, c->park_after = seq, c->park_deadline_ns = deadline;
    return;
  }
  c->answer = px_outbox_wait(c->s->outbox, (uint32_t)idx, seq, deadline);
  c->status = 200;
}
