/*
 * slurmrestd_jobs.c - /slurm/v0.0.39/jobs, job/{id} (GET, DELETE) and
 * job/submit. Listings and shows are read from the snapshot (as squeue's
 * native endpoint: jobs that ended more than MinJobAge ago are gone, an
 * array's own record only while tasks are left to start); cancel and
 * submit are the native requests to the main thread, their answers and
 * errors rewritten in slurmrestd's shape.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "server/http/slurmrestd.h"
#include "server/tables.h"

static json_t *count(uint32_t n) { return n ? px_sr_noval(n) : px_sr_noval_unset(); }

/* Minutes, as Slurm keeps limits; unlimited is infinite. */
static json_t *minutes(int64_t s) {
  if (s >= PX_TIME_UNLIMITED) return px_sr_noval_infinite();
  return s > 0 ? px_sr_noval((s + 59) / 60) : px_sr_noval_unset();
}

/* "cpu=4,mem=16G,node=1,billing=4,gres/gpu=2": what tools parse for GPUs. */
static json_t *tres_str(uint32_t ncpus, uint64_t mem_mib, uint32_t nnodes, uint32_t ngpus) {
  char buf[160];
  int n = snprintf(buf, sizeof buf, "cpu=%u,mem=%lluM,node=%u,billing=%u", ncpus,
                   (unsigned long long)mem_mib, nnodes ? nnodes : 1, ncpus);
  if (ngpus && n > 0 && (size_t)n < sizeof buf)
    snprintf(buf + n, sizeof buf - (size_t)n, ",gres/gpu=%u", ngpus);
  return json_string(buf);
}

static json_t *command(const struct px_jobspec *sp) {
  if (!sp->argv) return json_string(""); /* a batch script (the view leaves its text out) */
  char buf[1024] = "";
  for (size_t i = 0; sp->argv[i]; i++) {
    size_t len = strlen(buf);
    snprintf(buf + len, sizeof buf - len, "%s%s", i ? " " : "", sp->argv[i]);
  }
  return json_string(buf);
}

/* What the resources section says: its first node runs the batch script. */
static json_t *resources(const struct px_job_info *j, char *batch_host, size_t len) {
  batch_host[0] = 0;
  if (j->nodelist) {
    size_t n = strcspn(j->nodelist, ",[");
    if (j->nodelist[n] == '[') { /* "gpu[01-04]": gpu01 */
      size_t m = strcspn(j->nodelist + n + 1, ",-]");
      snprintf(batch_host, len, "%.*s%.*s", (int)n, j->nodelist, (int)m, j->nodelist + n + 1);
    } else {
      snprintf(batch_host, len, "%.*s", (int)n, j->nodelist);
    }
  }
  return json_pack("{ss si si si s[]}", "nodes", j->nodelist ? j->nodelist : "", "allocated_cores",
                   (int)j->ncpus, "allocated_cpus", (int)j->ncpus, "allocated_hosts", (int)j->nnodes,
                   "allocated_nodes");
}

/* The tres_per_node string of a request ("gres:gpu:2"). */
static json_t *tres_per_node(const struct px_jobspec *sp) {
  if (!sp->gpus_per_node) return json_string("");
  char buf[80];
  snprintf(buf, sizeof buf, "gres:gpu:%s%s%u", sp->gpu_type ? sp->gpu_type : "",
           sp->gpu_type ? ":" : "", sp->gpus_per_node);
  return json_string(buf);
}

static json_t *str(const char *s) { return json_string(s ? s : ""); }

static json_t *mib(uint64_t n) { return n ? px_sr_noval((int64_t)n) : px_sr_noval_unset(); }

/* slurmctld's exit_code: the job's wait status (exit code << 8 | signal),
 * unset while it runs. */
static json_t *wait_status(const struct px_job_info *j) {
  if (!j->end_time) return px_sr_noval_unset();
  return px_sr_noval(((int64_t)(j->exit_code & 0xff) << 8) | (j->term_signal & 0x7f));
}

/* Who, where and what was asked. */
static void job_request_part(json_t *o, const struct px_api_call *c, const struct px_job_info *j) {
  const struct px_jobspec *sp = &j->spec;
  json_object_set_new(o, "account", str(sp->account));
  json_object_set_new(o, "batch_flag", json_boolean(sp->argv == NULL)); /* no command: a script */
  json_object_set_new(o, "cluster", json_string(px_sr_cluster(c)));
  json_object_set_new(o, "command", command(sp));
  json_object_set_new(o, "comment", str(sp->comment));
  json_object_set_new(o, "current_working_directory", str(sp->workdir));
  json_object_set_new(o, "cpus_per_task", count(sp->cpus_per_task));
  json_object_set_new(o, "dependency", str(sp->dependency));
  json_object_set_new(o, "excluded_nodes", str(sp->exclude));
  json_object_set_new(o, "features", str(sp->constraint));
  json_object_set_new(o, "flags", json_array());
  json_object_set_new(o, "group_id", json_integer(sp->gid));
  json_object_set_new(o, "memory_per_cpu", mib(sp->mem_per_cpu_mib));
  json_object_set_new(o, "memory_per_node", mib(sp->mem_per_node_mib));
  json_object_set_new(o, "name", str(sp->name));
  json_object_set_new(o, "nice", json_integer(sp->nice));
  json_object_set_new(o, "partition", str(sp->partition));
  json_object_set_new(o, "qos", str(sp->qos));
  json_object_set_new(o, "requeue", json_boolean(sp->requeue));
  json_object_set_new(o, "required_nodes", str(sp->nodelist));
  json_object_set_new(o, "resv_name", str(sp->reservation));
  json_object_set_new(o, "shared", json_array());
  json_object_set_new(o, "exclusive", sp->exclusive ? json_pack("[s]", "true") : json_array());
  json_object_set_new(o, "hold", json_boolean(j->priority == 0 && !strcmp(j->state, "PENDING")));
  json_object_set_new(o, "standard_error", str(sp->stderr_path));
  json_object_set_new(o, "standard_input", str(sp->stdin_path));
  json_object_set_new(o, "standard_output", str(sp->stdout_path));
  json_object_set_new(o, "tasks", count(sp->ntasks));
  json_object_set_new(o, "time_limit", minutes(sp->time_limit_s));
  json_object_set_new(o, "time_minimum", sp->time_min_s ? minutes(sp->time_min_s) : px_sr_noval_unset());
  json_object_set_new(o, "tres_per_job", json_string(""));
  json_object_set_new(o, "tres_per_node", tres_per_node(sp));
  json_object_set_new(o, "user_id", json_integer(sp->uid));
  json_object_set_new(o, "user_name", str(sp->user));
  json_object_set_new(o, "wckey", json_string(""));
}

/* Where the job stands: state, times, allocation, exit. */
static void job_state_part(json_t *o, const struct px_job_info *j) {
  const struct px_jobspec *sp = &j->spec;
  bool array_task = j->array_job_id && j->array_job_id != j->job_id;
  char host[64];
  json_object_set_new(o, "job_id", json_integer((json_int_t)j->job_id));
  json_object_set_new(o, "job_state", json_string(j->state));
  json_object_set_new(o, "state_reason", json_string(j->reason));
  json_object_set_new(o, "state_description", str(j->why));
  json_object_set_new(o, "array_job_id", px_sr_noval((int64_t)j->array_job_id));
  json_object_set_new(o, "array_task_id", array_task ? px_sr_noval(j->array_task_id) : px_sr_noval_unset());
  json_object_set_new(o, "array_task_string", str(j->array_pending));
  json_object_set_new(o, "priority", px_sr_noval(j->priority));
  json_object_set_new(o, "submit_time", json_integer(j->submit_time));
  json_object_set_new(o, "eligible_time", json_integer(j->eligible_time));
  json_object_set_new(o, "accrue_time", json_integer(j->eligible_time));
  json_object_set_new(o, "start_time", json_integer(j->start_time ? j->start_time : j->expected_start));
  json_object_set_new(o, "end_time", json_integer(j->end_time));
  json_object_set_new(o, "restart_cnt", json_integer(j->restarts));
  json_object_set_new(o, "nodes", str(j->nodelist));
  json_object_set_new(o, "job_resources", resources(j, host, sizeof host));
  json_object_set_new(o, "batch_host", json_string(host));
  json_object_set_new(o, "cpus", count(j->ncpus));
  json_object_set_new(o, "node_count", count(j->nnodes ? j->nnodes : sp->nodes_min));
  json_object_set_new(o, "tres_req_str",
                      tres_str(j->ncpus, j->mem_mib, j->nnodes, j->ngpus ? j->ngpus : sp->gpus));
  json_object_set_new(o, "tres_alloc_str",
                      j->nodelist ? tres_str(j->ncpus, j->mem_mib, j->nnodes, j->ngpus) : json_string(""));
  json_object_set_new(o, "exit_code", wait_status(j));
  json_object_set_new(o, "derived_exit_code", wait_status(j));
}

static json_t *job_json(const struct px_api_call *c, const struct px_job_info *j) {
  json_t *o = json_object();
  if (!o) return NULL;
  job_request_part(o, c, j);
  job_state_part(o, j);
  return o;
}

/* As the native listing (api_jobs.c): hidden once ended past MinJobAge,
 * an array's own record only while tasks are left to start. */
static bool listed(const struct px_api_call *c, const struct px_job_info *j, int64_t ended_after,
                   int64_t update_time) {
  if (j->array_job_id == j->job_id && strcmp(j->state, "PENDING")) return false;
  if (j->end_time && j->end_time < ended_after) return false;
  int64_t changed = j->end_time > j->start_time ? j->end_time : j->start_time;
  if (j->submit_time > changed) changed = j->submit_time;
  if (update_time && changed < update_time) return false;
  return px_sr_may_see(c, j->spec.user);
}

void px_sr_jobs(struct px_api_call *c) {
  const char *v = px_api_arg(c, "update_time");
  char *end = NULL;
  long long update_time = 0;
  if (v && ((update_time = strtoll(v, &end, 10)) < 0 || end == v || *end))
    return px_sr_error(c, 400, PX_SR_EQUERY, "update_time: expected a Unix time, got '%.64s'", v);
  struct px_snap *snap = px_api_snap_fresh(c->s);
  json_t *o = px_sr_response(c, false), *jobs = json_array();
  int64_t ended_after = time(NULL) - PX_MIN_JOB_AGE_S;
  for (size_t i = 0; jobs && i < snap->njobs; i++) {
    const struct px_job_info *j = &snap->jobs[i]->info;
    if (listed(c, j, ended_after, update_time)) json_array_append_new(jobs, job_json(c, j));
  }
  px_snap_release(snap);
  if (o && jobs) json_object_set_new(o, "jobs", jobs);
  else json_decref(jobs);
  px_sr_answer(c, 200, o);
}

static bool job_id_arg(struct px_api_call *c, uint64_t *id) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(c->arg, &end, 10);
  if (c->arg[0] == '-' || errno || *end || !v) {
    px_sr_error(c, 400, PX_SR_EJOBID, "job_id: '%.64s' is not a job id", c->arg);
    return false;
  }
  *id = v;
  return true;
}

void px_sr_job_show(struct px_api_call *c) {
  uint64_t id;
  if (!job_id_arg(c, &id)) return;
  struct px_snap *snap = px_api_snap_fresh(c->s);
  size_t i = px_snap_lower_bound(snap, id);
  const struct px_job_info *j = i < snap->njobs ? &snap->jobs[i]->info : NULL;
  if (!j || j->job_id != id || !px_sr_may_see(c, j->spec.user)) {
    px_snap_release(snap);
    return px_sr_error(c, 404, PX_SR_EJOBID, "Invalid job id specified: %llu",
                       (unsigned long long)id);
  }
  json_t *o = px_sr_response(c, false);
  if (o) json_object_set_new(o, "jobs", json_pack("[o]", job_json(c, j)));
  px_snap_release(snap);
  px_sr_answer(c, 200, o);
}

/* Slurm's signal names (v0.0.39_signal) and numbers. */
static int signal_number(const char *s) {
  static const struct {
    const char *name;
    int num;
  } sigs[] = {{"HUP", 1},   {"INT", 2},   {"QUIT", 3},  {"ABRT", 6},  {"KILL", 9},
              {"USR1", 10}, {"USR2", 12}, {"ALRM", 14}, {"TERM", 15}, {"CONT", 18},
              {"STOP", 19}, {"TSTP", 20}, {"TTIN", 21}, {"TTOU", 22}, {"URG", 23}};
  if (!strncasecmp(s, "SIG", 3)) s += 3;
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    if (!strcasecmp(sigs[i].name, s)) return sigs[i].num;
  char *end;
  long n = strtol(s, &end, 10);
  return *s && !*end && n >= 1 && n <= 64 ? (int)n : -1;
}

/* DELETE job/{id}: without signal (or with KILL) the job is cancelled, as
 * scancel; another signal is sent to it (scancel -s). */
void px_sr_job_cancel(struct px_api_call *c) {
  struct px_req r = {.kind = PX_REQ_CANCEL, .who = c->who};
  if (!job_id_arg(c, &r.job_id)) return;
  const char *sig = px_api_arg(c, "signal");
  int n = sig ? signal_number(sig) : 0;
  if (n < 0)
    return px_sr_error(c, 400, PX_SR_EQUERY, "signal: unknown signal '%.32s' (HUP, INT, KILL, TERM, USR1 ...)", sig);
  r.signal = n == 9 ? 0 : n;
  px_api_call_main(c, &r);
  px_req_fini(&r);
  if (c->status >= 400) return px_sr_wrap_error(c, c->url);
  px_sr_answer(c, 200, px_sr_response(c, false));
}

/* The request's body as JSON, or NULL with the error answered. */
static json_t *body_json(struct px_api_call *c) {
  json_error_t jerr;
  json_t *body = json_loadb(c->body, c->body_len, JSON_REJECT_DUPLICATES, &jerr);
  if (!body)
    px_sr_error(c, 400, PX_SR_EPARSE, "body: not JSON (%s at line %d, column %d)", jerr.text, jerr.line,
                jerr.column);
  return body;
}

void px_sr_job_submit(struct px_api_call *c) {
  json_t *body = body_json(c);
  if (!body) return;
  json_t *warnings = json_array();
  struct px_diag d;
  px_diag_clear(&d);
  struct px_req r = {.kind = PX_REQ_SUBMIT, .who = c->who, .nspecs = 1};
  r.specs = calloc(1, sizeof *r.specs);
  int rc = r.specs ? px_sr_submit_decode(body, r.specs, warnings, &d) : PX_ENOMEM;
  json_decref(body);
  if (rc) {
    json_decref(warnings);
    px_req_fini(&r);
    if (rc == PX_ENOMEM) return px_sr_error(c, 503, PX_SR_EGENERIC, "out of memory");
    return px_sr_error(c, 400, PX_SR_EJOBDESC, "%s", d.msg);
  }
  px_api_call_main(c, &r);
  px_req_fini(&r);
  json_t *ans = c->status < 300 && c->answer ? json_loads(c->answer, 0, NULL) : NULL;
  json_t *id = json_object_get(ans, "job_id");
  if (!json_is_integer(id)) {
    json_decref(ans);
    json_decref(warnings);
    if (c->status < 300) c->status = 503; /* an answer without an id: never expected */
    return px_sr_wrap_error(c, c->url);
  }
  json_t *o = px_sr_response(c, false);
  if (o) {
    json_object_set(o, "job_id", id);
    json_object_set_new(o, "step_id", json_string("batch"));
    json_object_set_new(o, "job_submit_user_msg", json_string(""));
    json_object_set(o, "warnings", warnings);
  }
  json_decref(warnings);
  json_decref(ans);
  px_sr_answer(c, 200, o);
}

/* One native request of an update; false (the answer an error in
 * slurmrestd's shape) when the server refused it. */
static bool update_step(struct px_api_call *c, struct px_req *r) {
  free(c->answer);
  c->answer = NULL;
  px_api_call_main(c, r);
  px_req_fini(r);
  if (c->status < 400) return true;
  px_sr_wrap_error(c, c->url);
  return false;
}

/* POST job/{job_id}: time_limit, nice, priority (PATCH /v1/jobs/{id}) and
 * hold (hold / release), each the native request, in that order. */
void px_sr_job_update(struct px_api_call *c) {
  uint64_t id;
  if (!job_id_arg(c, &id)) return;
  json_t *body = body_json(c);
  if (!body) return;
  json_t *warnings = json_array();
  struct px_sr_update u;
  struct px_diag d;
  px_diag_clear(&d);
  int rc = px_sr_update_decode(body, &u, warnings, &d);
  json_decref(body);
  if (rc) {
    json_decref(warnings);
    return px_sr_error(c, 400, PX_SR_EJOBDESC, "%s", d.msg);
  }
  bool ok = true;
  if (u.fields & (PX_SR_UPD_TIME | PX_SR_UPD_NICE | PX_SR_UPD_PRIORITY)) {
    struct px_req r = {.kind = PX_REQ_UPDATE, .who = c->who, .job_id = id,
                       .upd_nice = u.nice, .upd_time_limit_s = u.time_limit_s, .upd_priority = u.priority};
    r.upd_fields = (u.fields & PX_SR_UPD_TIME ? PX_UPD_TIME_LIMIT : 0u) |
                   (u.fields & PX_SR_UPD_NICE ? PX_UPD_NICE : 0u) |
                   (u.fields & PX_SR_UPD_PRIORITY ? PX_UPD_PRIORITY : 0u);
    ok = update_step(c, &r);
  }
  if (ok && (u.fields & (PX_SR_UPD_HOLD | PX_SR_UPD_RELEASE))) {
    struct px_req r = {.kind = u.fields & PX_SR_UPD_HOLD ? PX_REQ_HOLD : PX_REQ_RELEASE, .who = c->who,
                       .job_id = id};
    ok = update_step(c, &r);
  }
  if (!ok) {
    json_decref(warnings);
    return;
  }
  json_t *o = px_sr_response(c, false);
  if (o) {
    json_object_set_new(o, "results", json_pack("[{sI si ss ss}]", "job_id", (json_int_t)id,
                                                 "error_code", 0, "error", "", "why", ""));
    json_object_set(o, "warnings", warnings);
  }
  json_decref(warnings);
  px_sr_answer(c, 200, o);
}
