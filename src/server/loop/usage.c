/*
 * usage.c - what running jobs use now, for sstat (GET /v1/jobs/{id}/stat):
 * each real agent's heartbeat carries its running jobs' memory in use, peak
 * memory, CPU time and process count read from their cgroups (agent's
 * cg_usage.c); the server keeps the last figures per job and node, on the
 * main thread. Not journaled: a restarted server has figures again after
 * one heartbeat interval. A node's entry for a job goes when its heartbeat
 * no longer names the job.
 *
 *   s->usage = {"<job id>": {"<node>": {"mem_mib":M,"peak_mem_mib":P,
 *                                      "cpu_time_ms":C,"ntasks":N,"time":T}}}
 *   s->usage_nodes = {"<node>": ["<job id>", ...]}   (what it named last)
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/loop/loop.h"
#include "server/tables.h"

static void forget(struct px_server *s, const char *node, const json_t *old, const json_t *keep) {
  size_t i;
  json_t *id;
  json_array_foreach(old, i, id) {
    if (json_object_get(keep, json_string_value(id))) continue;
    json_t *per_job = json_object_get(s->usage, json_string_value(id));
    json_object_del(per_job, node);
    if (per_job && !json_object_size(per_job)) json_object_del(s->usage, json_string_value(id));
  }
}

void px_usage_note(struct px_server *s, const char *node, const char *jobs_text, int64_t now) {
  if (!s->usage && !(s->usage = json_object())) return;
  if (!s->usage_nodes && !(s->usage_nodes = json_object())) return;
  json_t *jobs = jobs_text ? json_loads(jobs_text, 0, NULL) : NULL, *named = json_object(), *ids = json_array();
  size_t i;
  json_t *o;
  json_array_foreach(jobs, i, o) {
    char id[32];
    snprintf(id, sizeof id, "%llu", (unsigned long long)json_integer_value(json_object_get(o, "job_id")));
    json_t *per_job = json_object_get(s->usage, id);
    if (!per_job) json_object_set_new(s->usage, id, per_job = json_object());
    json_t *fig = json_deep_copy(o);
    json_object_del(fig, "job_id");
    json_object_set_new(fig, "time", json_integer(now));
    json_object_set_new(per_job, node, fig);
    json_object_set_new(named, id, json_true());
    json_array_append_new(ids, json_string(id));
  }
  forget(s, node, json_object_get(s->usage_nodes, node), named);
  json_object_set_new(s->usage_nodes, node, ids);
  json_decref(named);
  json_decref(jobs);
}

/* GET /v1/jobs/{id}/stat: the job's figures per node, for its owner and
 * operators; 409 while it does not run. */
void px_usage_answer(struct px_server *s, struct px_req *r) {
  struct px_sjob *j = px_jobs_find(s, r->job_id);
  if (!j) return px_req_error(r, 404, "NOT_FOUND", "job %llu: no such job", (unsigned long long)r->job_id);
  if (r->who.uid != j->spec.uid && r->who.uid != 0 && !(r->who.roles & PX_ROLE_OPERATOR))
    return px_req_error(r, 403, "FORBIDDEN", "job %llu belongs to %s (rule own-job)", (unsigned long long)j->id,
                        j->spec.user ? j->spec.user : "another user");
  if (j->state != PX_JOB_RUNNING)
    return px_req_error(r, 409, "STATE", "job %llu is not running (%s)", (unsigned long long)j->id,
                        px_job_state_name(j->state));
  char id[32];
  snprintf(id, sizeof id, "%llu", (unsigned long long)j->id);
  json_t *nodes = json_array(), *fig;
  const char *node;
  json_object_foreach(json_object_get(s->usage, id), node, fig) {
    if (json_integer_value(json_object_get(fig, "restart")) != (json_int_t)j->restarts) continue;
    json_t *o = json_deep_copy(fig);
    json_object_set_new(o, "node", json_string(node));
    json_object_del(o, "restart");
    json_array_append_new(nodes, o);
  }
  json_t *ans = json_pack("{sI so}", "job_id", (json_int_t)j->id, "nodes", nodes);
  px_req_answer(r, 200, ans ? json_dumps(ans, JSON_COMPACT) : NULL);
  json_decref(ans);
}
