/*
 * agent_msg.c - JSON codecs of the server <-> agent messages (agent_msg.h).
 *
 * Field names on the wire are the struct's field names. Arrays carry their
 * own length (no separate "nnodes"/"ngpus" fields), optional strings are
 * left out when NULL, and decoders check the cross-field rules the launcher
 * relies on (node_rank inside nodes, one tasks_per_node entry per node), so
 * an agent never acts on a half-valid order. Each decoder works on a local
 * copy and only hands it over when everything passed.
 */
#include "proto/agent_msg.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/agent_msg_int.h"
#include "proto/json_rd.h"

/* ---- node report ------------------------------------------------------ */

static json_t *gpu_to_json(const struct px_gpu_info *g) {
  return json_pack("{sI sI sI ss ss}", "index", (json_int_t)g->index, "mem_mib",
                   (json_int_t)g->mem_mib, "group", (json_int_t)g->group, "uuid", g->uuid,
                   "type", g->type);
}

static json_t *known_job_to_json(const struct px_known_job *k) {
  return json_pack("{sI ss si si}", "job_id", (json_int_t)k->job_id, "state", k->state,
                   "exit_code", (int)k->exit_code, "term_signal", (int)k->term_signal);
}

bool px_agent_takes_time_limit(const char *version) {
  unsigned major = 0, minor = 0;
  if (sscanf(version, "%u.%u", &major, &minor) != 2) return true;
  return major > 0 || minor >= 2;
}

char *px_node_report_encode(const struct px_node_report *r) {
  json_t *o = json_pack("{ss ss sI sI ss}", "node", r->node, "addr", r->addr, "cpus",
                        (json_int_t)r->cpus, "mem_mib", (json_int_t)r->mem_mib, "version",
                        r->version);
  json_t *gpus = json_array(), *jobs = json_array();
  bool bad = !o || !gpus || !jobs;
  if (!bad && r->since > 0) bad = json_object_set_new(o, "since", json_integer((json_int_t)r->since));
  for (uint32_t i = 0; !bad && i < r->ngpus; i++) bad = json_array_append_new(gpus, gpu_to_json(&r->gpus[i]));
  for (uint32_t i = 0; !bad && i < r->njobs; i++) bad = json_array_append_new(jobs, known_job_to_json(&r->jobs[i]));
  if (!bad) bad = json_object_set(o, "gpus", gpus) || json_object_set(o, "jobs", jobs);
  json_decref(gpus);
  json_decref(jobs);
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return px_wr_finish(o);
}

static int gpu_from_json(json_t *j, uint32_t i, struct px_gpu_info *g, struct px_diag *d) {
  char ctx[48];
  snprintf(ctx, sizeof ctx, "node_report.gpus[%u]", i);
  struct px_rd r;
  px_rd_init(&r, j, ctx, d);
  px_rd_u32(&r, "index", true, &g->index);
  px_rd_buf(&r, "uuid", true, g->uuid, sizeof g->uuid);
  px_rd_buf(&r, "type", false, g->type, sizeof g->type);
  px_rd_u64(&r, "mem_mib", false, &g->mem_mib);
  px_rd_u32(&r, "group", false, &g->group);
  return px_rd_done(&r);
}

static int known_job_from_json(json_t *j, uint32_t i, struct px_known_job *k, struct px_diag *d) {
  char ctx[48];
  snprintf(ctx, sizeof ctx, "node_report.jobs[%u]", i);
  struct px_rd r;
  px_rd_init(&r, j, ctx, d);
  px_rd_u64(&r, "job_id", true, &k->job_id);
  px_rd_buf(&r, "state", true, k->state, sizeof k->state);
  px_rd_i32(&r, "exit_code", false, &k->exit_code);
  px_rd_i32(&r, "term_signal", false, &k->term_signal);
  return px_rd_done(&r);
}

/* Decodes an array field of objects with one element decoder. */
#define RD_OBJ_ARRAY(rd, key, out, n, fn)                                               \
  do {                                                                                  \
    json_t *a_ = px_rd_get(rd, key, false);                                             \
    if (!a_) break;                                                                     \
    if (!json_is_array(a_)) {                                                           \
      px_rd_fail(rd, key, "expected an array");                                         \
      break;                                                                            \
    }                                                                                   \
    size_t len_ = json_array_size(a_);                                                  \
    if (!((out) = calloc(len_ ? len_ : 1, sizeof *(out)))) {                            \
      (rd)->err = px_diag_set((rd)->d, PX_ENOMEM, -1, "out of memory");                 \
      break;                                                                            \
    }                                                                                   \
    (n) = (uint32_t)len_;                                                               \
    for (size_t i_ = 0; i_ < len_ && !(rd)->err; i_++)                                  \
      (rd)->err = fn(json_array_get(a_, i_), (uint32_t)i_, &(out)[i_], (rd)->d);        \
  } while (0)

int px_node_report_decode(const char *json, struct px_node_report *out, struct px_diag *d) {
  json_t *j;
  int rc = px_rd_parse(json, &j, d);
  if (rc) return rc;
  struct px_node_report r;
  memset(&r, 0, sizeof r);
  struct px_rd rd;
  px_rd_init(&rd, j, "node_report", d);
  px_rd_buf(&rd, "node", true, r.node, sizeof r.node);
  px_rd_buf(&rd, "addr", false, r.addr, sizeof r.addr);
  px_rd_u32(&rd, "cpus", true, &r.cpus);
  px_rd_u64(&rd, "mem_mib", true, &r.mem_mib);
  px_rd_buf(&rd, "version", false, r.version, sizeof r.version);
  px_rd_i64(&rd, "since", false, &r.since);
  RD_OBJ_ARRAY(&rd, "gpus", r.gpus, r.ngpus, gpu_from_json);
  RD_OBJ_ARRAY(&rd, "jobs", r.jobs, r.njobs, known_job_from_json);
  rc = px_rd_done(&rd);
  json_decref(j);
  if (rc) {
    px_node_report_fini(&r);
    return rc;
  }
  *out = r;
  return 0;
}

void px_node_report_fini(struct px_node_report *r) {
  free(r->gpus);
  free(r->jobs);
  r->gpus = NULL;
  r->jobs = NULL;
  r->ngpus = r->njobs = 0;
}

bool px_node_report_shortfall(const struct px_node_report *r, uint32_t cpus, uint64_t mem_mib,
                              uint32_t ngpu, const char *gpu_type, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  uint32_t have = 0;
  for (uint32_t i = 0; i < r->ngpus; i++)
    have += !gpu_type || !*gpu_type || strcasecmp(r->gpus[i].type, gpu_type) == 0;
  char part[3][160];
  int n = 0;
  if (r->cpus < cpus) snprintf(part[n++], sizeof part[0], "Low CPUs (reported:%u < configured:%u)", r->cpus, cpus);
  if (r->mem_mib < mem_mib)
    snprintf(part[n++], sizeof part[0], "Low RealMemory (reported:%llu < 100.00%% of configured:%llu)",
             (unsigned long long)r->mem_mib, (unsigned long long)mem_mib);
  bool other = have < r->ngpus; /* some are of another type: say which type counted */
  if (have < ngpu)
    snprintf(part[n++], sizeof part[0], "gres/gpu%s%s count reported lower than configured (%u < %u)",
             other ? ":" : "", other ? gpu_type : "", have, ngpu);
  for (int i = 0; i < n && len < size; i++) {
    int w = snprintf(buf + len, size - len, "%s%s", i ? "; " : "", part[i]);
    if (w < 0) break;
    len += (size_t)w;
  }
  return n > 0;
}

/* ---- launch ----------------------------------------------------------- */

static json_t *launch_to_json(const struct px_launch *l) {
  json_t *o = json_object();
  if (!o) return NULL;
  bool bad = false;
  bad |= px_wr_int(o, "job_id", (json_int_t)l->job_id) != 0;
  bad |= px_wr_int(o, "array_job_id", (json_int_t)l->array_job_id) != 0;
  bad |= px_wr_int(o, "array_task_id", l->array_task_id) != 0;
  bad |= px_wr_int(o, "restart_count", l->restart_count) != 0;
  const char *strs[][2] = {{"name", l->name},           {"user", l->user},
                           {"account", l->account},     {"partition", l->partition},
                           {"qos", l->qos},             {"workdir", l->workdir},
                           {"submit_dir", l->submit_dir}, {"script", l->script},
                           {"stdout_path", l->stdout_path}, {"stderr_path", l->stderr_path},
                           {"stdin_path", l->stdin_path}, {"open_mode", l->open_mode},
                           {"hint", l->hint},           {"distribution", l->distribution},
                           {"container_image", l->container_image}, {"container_mounts", l->container_mounts},
                           {"container_workdir", l->container_workdir}, {"container_env", l->container_env},
                           {"container_image_dir", l->container_image_dir}};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) bad |= px_wr_str(o, strs[i][0], strs[i][1]) != 0;
  bad |= px_wr_int(o, "uid", l->uid) != 0;
  bad |= px_wr_int(o, "gid", l->gid) != 0;
  bad |= px_wr_strv(o, "argv", l->argv) != 0;
  bad |= px_wr_strv(o, "env", l->env) != 0;
  bad |= px_wr_int(o, "time_limit_s", l->time_limit_s) != 0;
  bad |= px_wr_int(o, "start_time", l->start_time) != 0;
  bad |= px_wr_int(o, "signal_num", l->signal_num) != 0;
  bad |= px_wr_int(o, "signal_time_s", l->signal_time_s) != 0;
  bad |= px_wr_strv(o, "nodes", l->nodes) != 0;
  bad |= px_wr_strv(o, "node_addrs", l->node_addrs) != 0;
  bad |= px_wr_int(o, "node_rank", l->node_rank) != 0;
  bad |= px_wr_int(o, "ntasks", l->ntasks) != 0;
  bad |= px_wr_u32v(o, "tasks_per_node", l->tasks_per_node, l->tasks_per_node ? l->nnodes : 0) != 0;
  bad |= px_wr_int(o, "cpus_per_task", l->cpus_per_task) != 0;
  bad |= px_wr_u32v(o, "gpus", l->gpus, l->ngpus) != 0;
  if (l->gpus_per_node) bad |= px_wr_u32v(o, "gpus_per_node", l->gpus_per_node, l->nnodes) != 0;
  bad |= px_wr_u32v(o, "cpu_ids", l->cpu_ids, l->ncpu_ids) != 0;
  bad |= px_wr_int(o, "ncpus", l->ncpus) != 0;
  bad |= px_wr_int(o, "mem_mib", (json_int_t)l->mem_mib) != 0;
  bad |= px_wr_int(o, "master_port", l->master_port) != 0;
  if (l->cpus_per_gpu) bad |= px_wr_int(o, "cpus_per_gpu", l->cpus_per_gpu) != 0;
  if (l->gpu_share) bad |= px_wr_int(o, "gpu_share", l->gpu_share) != 0;
  if (l->service) bad |= json_object_set_new(o, "service", px_svc_launch_to_json(l->service)) != 0;
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

char *px_launch_encode(const struct px_launch *l) { return px_wr_finish(launch_to_json(l)); }

/* Cross-field rules, checked after the fields themselves. */
static int launch_check(struct px_rd *rd, const struct px_launch *l, uint32_t naddrs, uint32_t ntpn,
                        uint32_t ngpn) {
  if (rd->err) return rd->err;
  if (l->nnodes == 0) return px_rd_fail(rd, "nodes", "must name at least one node");
  if (l->node_rank >= l->nnodes)
    return px_rd_fail(rd, "node_rank", "%u is not below the %u nodes", l->node_rank, l->nnodes);
  if (l->node_addrs && naddrs != l->nnodes)
    return px_rd_fail(rd, "node_addrs", "has %u entries for %u nodes", naddrs, l->nnodes);
  if (ntpn != l->nnodes)
    return px_rd_fail(rd, "tasks_per_node", "has %u entries for %u nodes", ntpn, l->nnodes);
  if (l->gpus_per_node && ngpn != l->nnodes)
    return px_rd_fail(rd, "gpus_per_node", "has %u entries for %u nodes", ngpn, l->nnodes);
  uint64_t sum = 0;
  for (uint32_t i = 0; i < l->nnodes; i++) sum += l->tasks_per_node[i];
  if (sum != l->ntasks)
    return px_rd_fail(rd, "ntasks", "%u differs from the %llu tasks of tasks_per_node", l->ntasks,
                      (unsigned long long)sum);
  if (!l->script && !l->argv) return px_rd_fail(rd, "argv", "a launch needs a script or argv");
  if (l->argv && !l->argv[0]) return px_rd_fail(rd, "argv", "must not be empty");
  if (!l->user) return px_rd_fail(rd, "user", "required field missing");
  return 0;
}

static int launch_from_json(json_t *j, uint32_t idx, struct px_launch *out, struct px_diag *d) {
  struct px_launch l;
  memset(&l, 0, sizeof l);
  char ctx[32];
  snprintf(ctx, sizeof ctx, idx == UINT32_MAX ? "launch" : "launch[%u]", idx);
  struct px_rd rd;
  px_rd_init(&rd, j, ctx, d);
  uint32_t naddrs = 0, ntpn = 0, ngpn = 0, nenv = 0, nargv = 0;
  px_rd_u64(&rd, "job_id", true, &l.job_id);
  px_rd_u64(&rd, "array_job_id", false, &l.array_job_id);
  px_rd_u32(&rd, "array_task_id", false, &l.array_task_id);
  px_rd_u32(&rd, "restart_count", false, &l.restart_count);
  px_rd_str(&rd, "name", false, &l.name);
  px_rd_str(&rd, "user", true, &l.user);
  px_rd_str(&rd, "account", false, &l.account);
  px_rd_str(&rd, "partition", false, &l.partition);
  px_rd_str(&rd, "qos", false, &l.qos);
  px_rd_u32(&rd, "uid", true, &l.uid);
  px_rd_u32(&rd, "gid", true, &l.gid);
  px_rd_str(&rd, "workdir", false, &l.workdir);
  px_rd_str(&rd, "submit_dir", false, &l.submit_dir);
  px_rd_str(&rd, "script", false, &l.script);
  px_rd_strv(&rd, "argv", false, &l.argv, &nargv);
  px_rd_str(&rd, "stdout_path", false, &l.stdout_path);
  px_rd_str(&rd, "stderr_path", false, &l.stderr_path);
  px_rd_str(&rd, "stdin_path", false, &l.stdin_path);
  px_rd_str(&rd, "open_mode", false, &l.open_mode);
  px_rd_str(&rd, "hint", false, &l.hint);
  px_rd_str(&rd, "distribution", false, &l.distribution);
  px_rd_str(&rd, "container_image", false, &l.container_image);
  px_rd_str(&rd, "container_mounts", false, &l.container_mounts);
  px_rd_str(&rd, "container_workdir", false, &l.container_workdir);
  px_rd_str(&rd, "container_env", false, &l.container_env);
  px_rd_str(&rd, "container_image_dir", false, &l.container_image_dir);
  px_rd_u32(&rd, "cpus_per_gpu", false, &l.cpus_per_gpu);
  px_rd_strv(&rd, "env", false, &l.env, &nenv);
  px_rd_i64(&rd, "time_limit_s", false, &l.time_limit_s);
  px_rd_i64(&rd, "start_time", false, &l.start_time);
  px_rd_i32(&rd, "signal_num", false, &l.signal_num);
  px_rd_i32(&rd, "signal_time_s", false, &l.signal_time_s);
  px_rd_strv(&rd, "nodes", true, &l.nodes, &l.nnodes);
  px_rd_strv(&rd, "node_addrs", false, &l.node_addrs, &naddrs);
  px_rd_u32(&rd, "node_rank", true, &l.node_rank);
  px_rd_u32(&rd, "ntasks", true, &l.ntasks);
  px_rd_u32v(&rd, "tasks_per_node", true, &l.tasks_per_node, &ntpn);
  px_rd_u32(&rd, "cpus_per_task", false, &l.cpus_per_task);
  px_rd_u32v(&rd, "gpus", false, &l.gpus, &l.ngpus);
  px_rd_u32v(&rd, "gpus_per_node", false, &l.gpus_per_node, &ngpn);
  px_rd_u32v(&rd, "cpu_ids", false, &l.cpu_ids, &l.ncpu_ids);
  px_rd_u32(&rd, "ncpus", false, &l.ncpus);
  px_rd_u64(&rd, "mem_mib", false, &l.mem_mib);
  uint32_t port = 0;
  px_rd_u32(&rd, "master_port", false, &port);
  if (port > 65535) px_rd_fail(&rd, "master_port", "%u is not a TCP port", port);
  l.master_port = (uint16_t)port;
  px_rd_u32(&rd, "gpu_share", false, &l.gpu_share);
  if (!rd.err && (l.gpu_share >= 100 || (l.gpu_share && l.ngpus != 1)))
    px_rd_fail(&rd, "gpu_share", "%u hundredths of %u GPUs: a share is 1 to 99 hundredths of one GPU", l.gpu_share,
               l.ngpus);
  px_svc_launch_read(&rd, &l.service);
  int rc = launch_check(&rd, &l, naddrs, ntpn, ngpn);
  if (!rc) rc = px_rd_done(&rd);
  if (rc) {
    px_launch_fini(&l);
    return rc;
  }
  *out = l;
  return 0;
}

int px_launch_decode(const char *json, struct px_launch *l, struct px_diag *d) {
  json_t *j;
  int rc = px_rd_parse(json, &j, d);
  if (rc) return rc;
  rc = launch_from_json(j, UINT32_MAX, l, d);
  json_decref(j);
  return rc;
}

void px_launch_fini(struct px_launch *l) {
  char **strs[] = {&l->name,       &l->user,        &l->account,     &l->partition,
                   &l->qos,        &l->workdir,     &l->submit_dir,  &l->script,
                   &l->stdout_path, &l->stderr_path, &l->stdin_path, &l->open_mode,
                   &l->hint,       &l->distribution, &l->container_image, &l->container_mounts,
                   &l->container_workdir, &l->container_env, &l->container_image_dir};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) free(*strs[i]);
  px_strv_free(l->argv);
  px_strv_free(l->env);
  px_strv_free(l->nodes);
  px_strv_free(l->node_addrs);
  free(l->tasks_per_node);
  free(l->gpus);
  free(l->gpus_per_node);
  free(l->cpu_ids);
  px_launch_service_free(l->service);
  memset(l, 0, sizeof *l);
}

/* ---- task report ------------------------------------------------------ */

static const char *const task_states[] = {"RUNNING",       "COMPLETED", "FAILED",    "CANCELLED",
                                          "TIMEOUT",       "OUT_OF_MEMORY", "PREEMPTED", "NODE_FAIL"};

char *px_task_report_encode(const struct px_task_report *r) {
  json_t *o = json_pack("{ss sI ss si si sb sI sI sI sI sI}", "node", r->node, "job_id",
                                (json_int_t)r->job_id, "state", r->state, "exit_code",
                                (int)r->exit_code, "term_signal", (int)r->term_signal,
                                "requeue_requested", (int)r->requeue_requested, "peak_mem_mib",
                                (json_int_t)r->peak_mem_mib, "cpu_time_ms",
                                (json_int_t)r->cpu_time_ms, "start_time", (json_int_t)r->start_time,
                                "end_time", (json_int_t)r->end_time, "restart_count",
                                (json_int_t)r->restart_count);
  if (o && ((r->is_step && px_wr_int(o, "step_id", r->step_id)) || px_svc_report_write(o, r) ||
            (r->reason[0] && px_wr_str(o, "reason", r->reason)))) {
    json_decref(o);
    return NULL;
  }
  return px_wr_finish(o);
}

static int task_report_from_json(json_t *j, uint32_t idx, struct px_task_report *out, struct px_diag *d) {
  struct px_task_report r;
  memset(&r, 0, sizeof r);
  char ctx[40];
  snprintf(ctx, sizeof ctx, idx == UINT32_MAX ? "task_report" : "reports[%u]", idx);
  struct px_rd rd;
  px_rd_init(&rd, j, ctx, d);
  px_rd_buf(&rd, "node", true, r.node, sizeof r.node);
  px_rd_u64(&rd, "job_id", true, &r.job_id);
  px_rd_buf(&rd, "state", true, r.state, sizeof r.state);
  px_rd_i32(&rd, "exit_code", false, &r.exit_code);
  px_rd_i32(&rd, "term_signal", false, &r.term_signal);
  px_rd_bool(&rd, "requeue_requested", false, &r.requeue_requested);
  px_rd_u64(&rd, "peak_mem_mib", false, &r.peak_mem_mib);
  px_rd_u64(&rd, "cpu_time_ms", false, &r.cpu_time_ms);
  px_rd_i64(&rd, "start_time", false, &r.start_time);
  px_rd_i64(&rd, "end_time", false, &r.end_time);
  px_rd_u32(&rd, "restart_count", false, &r.restart_count);
  r.is_step = json_object_get(j, "step_id") != NULL;
  px_rd_u32(&rd, "step_id", false, &r.step_id);
  px_rd_buf(&rd, "reason", false, r.reason, sizeof r.reason);
  bool known = false;
  for (size_t i = 0; i < sizeof task_states / sizeof task_states[0]; i++)
    known |= strcmp(r.state, task_states[i]) == 0;
  if (!rd.err && !known) px_rd_fail(&rd, "state", "'%s' is not a task state", r.state);
  px_svc_report_read(&rd, &r);
  int rc = px_rd_done(&rd);
  if (!rc) *out = r;
  return rc;
}

int px_task_report_decode(const char *json, struct px_task_report *out, struct px_diag *d) {
  json_t *j;
  int rc = px_rd_parse(json, &j, d);
  if (rc) return rc;
  rc = task_report_from_json(j, UINT32_MAX, out, d);
  json_decref(j);
  return rc;
}

int px_task_reports_decode(const char *json, struct px_task_report **out, uint32_t *n, struct px_diag *d) {
  json_t *j;
  int rc = px_rd_parse(json, &j, d);
  if (rc) return rc;
  struct px_task_report *v = NULL;
  uint32_t nv = 0;
  struct px_rd rd;
  px_rd_init(&rd, j, "reports", d);
  px_rd_get(&rd, "reports", true);
  RD_OBJ_ARRAY(&rd, "reports", v, nv, task_report_from_json);
  if (!rd.err && nv > PX_TASK_REPORTS_MAX) px_rd_fail(&rd, "reports", "at most %d in one batch", PX_TASK_REPORTS_MAX);
  rc = px_rd_done(&rd);
  json_decref(j);
  if (rc) {
    free(v);
    return rc;
  }
  *out = v;
  *n = nv;
  return 0;
}

char *px_task_reports_encode(char *const *reports, uint32_t n) {
  size_t len = 16;
  for (uint32_t i = 0; i < n; i++) len += strlen(reports[i]) + 1;
  char *s = malloc(len);
  if (!s) return NULL;
  size_t off = (size_t)snprintf(s, len, "{\"reports\":[");
  for (uint32_t i = 0; i < n; i++) off += (size_t)snprintf(s + off, len - off, "%s%s", i ? "," : "", reports[i]);
  snprintf(s + off, len - off, "]}");
  return s;
}

/* ---- signal order ----------------------------------------------------- */

static json_t *signal_to_json(const struct px_signal_order *s) {
  json_t *o = json_pack("{sI si si ss}", "job_id", (json_int_t)s->job_id, "signal", (int)s->signal,
                        "grace_s", (int)s->grace_s, "reason", s->reason);
  if (o && ((s->is_step && px_wr_int(o, "step_id", s->step_id)) ||
            (s->time_limit_s > 0 && px_wr_int(o, "time_limit_s", s->time_limit_s)))) {
    json_decref(o);
    return NULL;
  }
  return o;
}

char *px_signal_order_encode(const struct px_signal_order *s) {
  return px_wr_finish(signal_to_json(s));
}

static int signal_from_json(json_t *j, uint32_t idx, struct px_signal_order *out, struct px_diag *d) {
  struct px_signal_order s;
  memset(&s, 0, sizeof s);
  char ctx[32];
  snprintf(ctx, sizeof ctx, idx == UINT32_MAX ? "signal" : "signal[%u]", idx);
  struct px_rd rd;
  px_rd_init(&rd, j, ctx, d);
  px_rd_u64(&rd, "job_id", true, &s.job_id);
  px_rd_i32(&rd, "signal", true, &s.signal);
  px_rd_i32(&rd, "grace_s", false, &s.grace_s);
  px_rd_buf(&rd, "reason", false, s.reason, sizeof s.reason);
  s.is_step = json_object_get(j, "step_id") != NULL;
  px_rd_u32(&rd, "step_id", false, &s.step_id);
  px_rd_i64(&rd, "time_limit_s", false, &s.time_limit_s);
  if (!rd.err && s.time_limit_s < 0) px_rd_fail(&rd, "time_limit_s", "must be positive");
  if (!rd.err && (s.signal < 0 || s.signal > 64)) px_rd_fail(&rd, "signal", "%d is not a signal", s.signal);
  if (!rd.err && s.grace_s < -1) px_rd_fail(&rd, "grace_s", "must be -1 or more");
  int rc = px_rd_done(&rd);
  if (!rc) *out = s;
  return rc;
}

int px_signal_order_decode(const char *json, struct px_signal_order *s, struct px_diag *d) {
  json_t *j;
  int rc = px_rd_parse(json, &j, d);
  if (rc) return rc;
  rc = signal_from_json(j, UINT32_MAX, s, d);
  json_decref(j);
  return rc;
}

/* ---- step order ------------------------------------------------------- */

static int pty_to_json(json_t *j, const struct px_step_order *o) {
  if (!o->pty_session) return 0;
  int bad = px_wr_str(j, "pty_session", o->pty_session) | px_wr_str(j, "pty_secret", o->pty_secret) |
            px_wr_str(j, "pty_server", o->pty_server) | px_wr_str(j, "pty_ca", o->pty_ca);
  if (o->pty_rows) bad |= px_wr_int(j, "pty_rows", o->pty_rows);
  if (o->pty_cols) bad |= px_wr_int(j, "pty_cols", o->pty_cols);
  if (o->pty_raw) bad |= json_object_set_new(j, "pty_raw", json_true());
  return bad;
}

static void pty_from_json(struct px_rd *rd, struct px_step_order *o) {
  px_rd_str(rd, "pty_session", false, &o->pty_session);
  px_rd_str(rd, "pty_secret", o->pty_session != NULL, &o->pty_secret);
  px_rd_str(rd, "pty_server", false, &o->pty_server);
  px_rd_str(rd, "pty_ca", false, &o->pty_ca);
  px_rd_u32(rd, "pty_rows", false, &o->pty_rows);
  px_rd_u32(rd, "pty_cols", false, &o->pty_cols);
  px_rd_bool(rd, "pty_raw", false, &o->pty_raw);
  if (rd->err) return;
  if (o->pty_rows > 65535 || o->pty_cols > 65535) px_rd_fail(rd, o->pty_rows > 65535 ? "pty_rows" : "pty_cols", "more than 65535");
  else if (o->pty_session && o->ntasks != 1) px_rd_fail(rd, "ntasks", "a terminal step has one task, not %u", o->ntasks);
}

static json_t *step_to_json(const struct px_step_order *o) {
  json_t *j = json_object();
  if (!j) return NULL;
  bool bad = px_wr_int(j, "job_id", (json_int_t)o->job_id) != 0;
  bad |= px_wr_int(j, "step_id", o->step_id) != 0;
  bad |= px_wr_int(j, "restart_count", o->restart_count) != 0;
  bad |= px_wr_strv(j, "argv", o->argv) != 0;
  bad |= px_wr_strv(j, "env", o->env) != 0;
  bad |= px_wr_str(j, "cwd", o->cwd) != 0;
  bad |= px_wr_str(j, "out_dir", o->out_dir) != 0;
  bad |= px_wr_strv(j, "nodes", o->nodes) != 0;
  bad |= px_wr_u32v(j, "tasks_per_node", o->tasks_per_node, o->tasks_per_node ? o->nnodes : 0) != 0;
  bad |= px_wr_int(j, "ntasks", o->ntasks) != 0;
  if (o->gpus_per_task) bad |= px_wr_int(j, "gpus_per_task", o->gpus_per_task) != 0;
  bad |= px_wr_str(j, "distribution", o->distribution) != 0;
  bad |= px_wr_str(j, "container_image", o->container_image) != 0;
  bad |= px_wr_str(j, "container_mounts", o->container_mounts) != 0;
  bad |= px_wr_str(j, "container_workdir", o->container_workdir) != 0;
  bad |= px_wr_str(j, "container_env", o->container_env) != 0;
  bad |= pty_to_json(j, o) != 0;
  if (bad) {
    json_decref(j);
    return NULL;
  }
  return j;
}

char *px_step_order_encode(const struct px_step_order *o) { return px_wr_finish(step_to_json(o)); }

static int step_check(struct px_rd *rd, const struct px_step_order *o, uint32_t nargv, uint32_t ntpn) {
  if (rd->err) return rd->err;
  if (!nargv) return px_rd_fail(rd, "argv", "must not be empty");
  if (o->out_dir[0] != '/') return px_rd_fail(rd, "out_dir", "must be an absolute path");
  if (o->cwd && o->cwd[0] != '/') return px_rd_fail(rd, "cwd", "must be an absolute path");
  if (!o->nnodes) return px_rd_fail(rd, "nodes", "must name at least one node");
  if (ntpn != o->nnodes)
    return px_rd_fail(rd, "tasks_per_node", "has %u entries for %u nodes", ntpn, o->nnodes);
  uint64_t sum = 0;
  for (uint32_t i = 0; i < ntpn; i++) {
    if (!o->tasks_per_node[i]) return px_rd_fail(rd, "tasks_per_node", "entry %u is 0", i);
    sum += o->tasks_per_node[i];
  }
  if (sum != o->ntasks)
    return px_rd_fail(rd, "ntasks", "%u differs from the %llu tasks of tasks_per_node", o->ntasks,
                      (unsigned long long)sum);
  if (o->gpus_per_task > 64) return px_rd_fail(rd, "gpus_per_task", "%u is more than 64", o->gpus_per_task);
  return 0;
}

static int step_from_json(json_t *j, uint32_t idx, struct px_step_order *out, struct px_diag *d) {
  struct px_step_order o;
  memset(&o, 0, sizeof o);
  char ctx[32];
  snprintf(ctx, sizeof ctx, idx == UINT32_MAX ? "step" : "step[%u]", idx);
  struct px_rd rd;
  px_rd_init(&rd, j, ctx, d);
  uint32_t nargv = 0, nenv = 0, ntpn = 0;
  px_rd_u64(&rd, "job_id", true, &o.job_id);
  px_rd_u32(&rd, "step_id", true, &o.step_id);
  px_rd_u32(&rd, "restart_count", false, &o.restart_count);
  px_rd_strv(&rd, "argv", true, &o.argv, &nargv);
  px_rd_strv(&rd, "env", false, &o.env, &nenv);
  px_rd_str(&rd, "cwd", false, &o.cwd);
  px_rd_str(&rd, "out_dir", true, &o.out_dir);
  px_rd_strv(&rd, "nodes", true, &o.nodes, &o.nnodes);
  px_rd_u32v(&rd, "tasks_per_node", true, &o.tasks_per_node, &ntpn);
  px_rd_u32(&rd, "ntasks", true, &o.ntasks);
  px_rd_u32(&rd, "gpus_per_task", false, &o.gpus_per_task);
  px_rd_str(&rd, "distribution", false, &o.distribution);
  px_rd_str(&rd, "container_image", false, &o.container_image);
  px_rd_str(&rd, "container_mounts", false, &o.container_mounts);
  px_rd_str(&rd, "container_workdir", false, &o.container_workdir);
  px_rd_str(&rd, "container_env", false, &o.container_env);
  int rc = step_check(&rd, &o, nargv, ntpn);
  if (!rc) pty_from_json(&rd, &o);
  rc = rd.err;
  if (!rc) rc = px_rd_done(&rd);
  if (rc) {
    px_step_order_fini(&o);
    return rc;
  }
  *out = o;
  return 0;
}

int px_step_order_decode(const char *json, struct px_step_order *o, struct px_diag *d) {
  json_t *j;
  int rc = px_rd_parse(json, &j, d);
  if (rc) return rc;
  rc = step_from_json(j, UINT32_MAX, o, d);
  json_decref(j);
  return rc;
}

void px_step_order_fini(struct px_step_order *o) {
  px_strv_free(o->argv);
  px_strv_free(o->env);
  px_strv_free(o->nodes);
  free(o->cwd);
  free(o->out_dir);
  free(o->distribution);
  free(o->container_image);
  free(o->container_mounts);
  free(o->container_workdir);
  free(o->container_env);
  free(o->tasks_per_node);
  free(o->pty_session);
  free(o->pty_secret);
  free(o->pty_server);
  free(o->pty_ca);
  memset(o, 0, sizeof *o);
}

/* ---- work (the long-poll answer) ------------------------------------- */

char *px_agent_work_encode(const struct px_agent_work *w) {
  json_t *o = json_object(), *la = json_array(), *sa = json_array();
  bool bad = !o || !la || !sa;
  for (uint32_t i = 0; !bad && i < w->nlaunch; i++) bad = json_array_append_new(la, launch_to_json(&w->launch[i]));
  for (uint32_t i = 0; !bad && i < w->nsignal; i++) bad = json_array_append_new(sa, signal_to_json(&w->signal[i]));
  if (!bad) bad = px_wr_int(o, "seq", (json_int_t)w->seq) || json_object_set(o, "launch", la) ||
                  json_object_set(o, "signal", sa);
  if (!bad && w->nstep) {
    json_t *st = json_array();
    bad = !st || json_object_set_new(o, "step", st);
    for (uint32_t i = 0; !bad && i < w->nstep; i++) bad = json_array_append_new(st, step_to_json(&w->step[i]));
  }
  json_decref(la);
  json_decref(sa);
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return px_wr_finish(o);
}

int px_agent_work_decode(const char *json, struct px_agent_work *out, struct px_diag *d) {
  json_t *j;
  int rc = px_rd_parse(json, &j, d);
  if (rc) return rc;
  struct px_agent_work w;
  memset(&w, 0, sizeof w);
  struct px_rd rd;
  px_rd_init(&rd, j, "work", d);
  px_rd_u64(&rd, "seq", true, &w.seq);
  RD_OBJ_ARRAY(&rd, "launch", w.launch, w.nlaunch, launch_from_json);
  RD_OBJ_ARRAY(&rd, "signal", w.signal, w.nsignal, signal_from_json);
  RD_OBJ_ARRAY(&rd, "step", w.step, w.nstep, step_from_json);
  rc = px_rd_done(&rd);
  json_decref(j);
  if (rc) {
    px_agent_work_fini(&w);
    return rc;
  }
  *out = w;
  return 0;
}

void px_agent_work_fini(struct px_agent_work *w) {
  for (uint32_t i = 0; w->launch && i < w->nlaunch; i++) px_launch_fini(&w->launch[i]);
  free(w->launch);
  free(w->signal);
  for (uint32_t i = 0; w->step && i < w->nstep; i++) px_step_order_fini(&w->step[i]);
  free(w->step);
  memset(w, 0, sizeof *w);
}
