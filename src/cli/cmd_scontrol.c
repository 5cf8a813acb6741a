/*
 * cmd_scontrol.c - `scontrol`: show job/node/partition records in Slurm's
 * layout, show hostnames/hostlist (pure, used by torchrun scripts to pick
 * the master node), hold, release, requeue, update of jobs (TimeLimit, Nice,
 * Priority) and nodes (State=DRAIN/RESUME with Reason), and ping.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cmd_common.h"

static int show_hostnames(struct px_cmd *c, const char *list) {
  if (!list) list = getenv("SLURM_JOB_NODELIST");
  char **names;
  size_t n;
  if (!list || px_cli_hostlist_expand(list, &names, &n)) {
    px_cmd_error(c, "Invalid hostlist: %s", list ? list : "(none; SLURM_JOB_NODELIST is unset)");
    return 1;
  }
  for (size_t i = 0; i < n; i++) printf("%s\n", names[i]);
  px_cli_strv_free(names, n);
  return 0;
}

static int show_hostlist(struct px_cmd *c, const char *list) {
  char **names;
  size_t n;
  if (!list || px_cli_hostlist_expand(list, &names, &n)) {
    px_cmd_error(c, "Invalid hostlist: %s", list ? list : "");
    return 1;
  }
  char *hl = px_cli_hostlist_compress(names, n);
  printf("%s\n", hl ? hl : "");
  free(hl);
  px_cli_strv_free(names, n);
  return 0;
}

static int show_jobs(struct px_cmd *c, const char *ids) {
  struct px_job_info *v = NULL;
  size_t n = 0;
  if (px_cmd_get_jobs(c, "/v1/jobs", &v, &n)) return 1;
  struct px_job_filter f = {.jobs = ids, .states = ids ? NULL : "all"};
  size_t shown = 0;
  for (size_t i = 0; i < n; i++) {
    if (!px_cmd_job_filter(&v[i], &f)) continue;
    if (c->json) {
      json_t *o = px_cli_job_to_json(&v[i]);
      px_cmd_print_json(o);
      json_decref(o);
    } else {
      px_fmt_scontrol_job(stdout, &v[i], c->now);
    }
    shown++;
  }
  px_cli_jobs_free(v, n);
  if (!shown && ids) {
    fprintf(stderr, "slurm_load_jobs error: Invalid job id specified\n");
    return 1;
  }
  if (!shown) printf("No jobs in the system\n");
  return 0;
}

static int show_nodes_or_parts(struct px_cmd *c, bool nodes, const char *names) {
  struct px_node_info *nd = NULL;
  struct px_partition_info *p = NULL;
  size_t nn = 0, np = 0, shown = 0;
  int rc = px_cmd_get_nodes(c, &nd, &nn) || (!nodes && px_cmd_get_partitions(c, &p, &np));
  for (size_t i = 0; !rc && nodes && i < nn; i++) {
    if (names && !px_cmd_list_has(names, nd[i].name)) continue;
    px_fmt_scontrol_node(stdout, &nd[i]);
    shown++;
  }
  for (size_t i = 0; !rc && !nodes && i < np; i++) {
    if (names && !px_cmd_list_has(names, p[i].name)) continue;
    px_fmt_scontrol_partition(stdout, &p[i], nd, nn);
    shown++;
  }
  if (!rc && !shown && names) {
    printf("%s %s not found\n", nodes ? "Node" : "Partition", names); /* on stdout, as Slurm */
    rc = 1;
  }
  px_cli_nodes_free(nd, nn);
  px_cli_partitions_free(p, np);
  return rc;
}

/* Whether the job has ended (GET /v1/jobs/{id}); false when it is unknown. */
static bool job_ended(struct px_cmd *c, const char *id) {
  char path[128];
  snprintf(path, sizeof path, "/v1/jobs/%s", id);
  long status = 0;
  json_t *resp = NULL;
  struct px_job_info j;
  bool ended = false;
  if (!px_cmd_call(c, "GET", path, NULL, &status, &resp) && status == 200 && !px_cli_job_from_json(resp, &j)) {
    ended = px_cli_state_is_finished(j.state);
    px_cli_job_fini(&j);
  }
  json_decref(resp);
  return ended;
}

/* Slurm's words for a refusal of job JOB it names, or NULL where it has
 * none (scontrol prints them bare). Checked on Slurm 22.05: an update of a
 * running job's field that changes only while it pends (Partition=,
 * Dependency=, StartTime=, ...) says "Job is no longer pending execution";
 * requeue's own: a job not running or finished is pending, a --no-requeue
 * job, another user's job. Hold and release of a running job have none:
 * Slurm succeeds (op_refused). */
static const char *slurm_refusal(struct px_cmd *c, const char *op, const char *id, long status, const char *code) {
  bool requeue = !strncasecmp(op, "requeue", 7), state = code && !strcmp(code, "STATE");
  if (status == 404 || (code && !strcmp(code, "INVALID"))) return "Invalid job id specified";
  if (state && job_ended(c, id)) return "Job has already finished";
  if (state && !strcmp(op, "update")) return "Job is no longer pending execution";
  if (!requeue) return NULL;
  if (state) return "Job is pending execution";
  if (code && !strcmp(code, "DISABLED")) return "Requested operation is presently disabled";
  return status == 403 ? "Access/permission denied" : NULL;
}

/* A job verb (hold, release, requeue, update) the server refused, in
 * Slurm's words, which scontrol prints bare (hold and release go through
 * its suspend call, which adds a line). Returns 0 where Slurm succeeds:
 * hold or release of a job that is not pending (running: nothing to do). */
static int op_refused(struct px_cmd *c, const char *op, const char *id, long status, const json_t *resp) {
  char msg[512];
  px_client_error_text(status, resp, msg, sizeof msg);
  const char *code = json_string_value(json_object_get(json_object_get(resp, "error"), "code"));
  bool suspend = !strcmp(op, "hold") || !strcmp(op, "release"), state = code && !strcmp(code, "STATE");
  if (status == 404 && strstr(msg, "no such endpoint")) { /* a server without this verb */
    px_cmd_error(c, "%s: this Phalanx server does not %s jobs", op, op);
    return 1;
  }
  const char *why = slurm_refusal(c, op, id, status, code);
  if (!why && state && suspend) return 0;
  if (!why || !c->slurm) {
    px_cmd_error(c, "%s job %s: %s", op, id, why ? why : msg);
    return 1;
  }
  fprintf(stderr, "%s for job %s\n", why, id);
  if (suspend) fprintf(stderr, "slurm_suspend error: %s\n", why);
  return 1;
}

/* POST /v1/jobs/{id}/{op} for each id of a comma list. */
int px_cmd_job_op(struct px_cmd *c, const char *op, const char *ids) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", ids);
  int errors = 0;
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char path[128];
    snprintf(path, sizeof path, "/v1/jobs/%s/%s", t, op);
    long status = 0;
    json_t *resp = NULL;
    if (px_cmd_call(c, "POST", path, NULL, &status, &resp)) return 1;
    if (status / 100 != 2) errors += op_refused(c, op, t, status, resp);
    json_decref(resp);
  }
  return errors ? 1 : 0;
}

/* TimeLimit=+T / -T: the job's limit now, plus or minus T (at least a
 * minute, as Slurm keeps it). Rewrites the patch's absolute limit. */
static int relative_limit(struct px_cmd *c, const char *id, int sign, json_t *patch) {
  char path[128];
  snprintf(path, sizeof path, "/v1/jobs/%s", id);
  long status = 0;
  json_t *resp = NULL;
  if (px_cmd_call(c, "GET", path, NULL, &status, &resp)) return 1;
  struct px_job_info j;
  if (status != 200 || px_cli_job_from_json(resp, &j)) {
    json_decref(resp);
    fprintf(stderr, "Invalid job id specified for job %s\n", id);
    return 1;
  }
  json_decref(resp);
  int64_t now = j.spec.time_limit_s, delta = json_integer_value(json_object_get(patch, "time_limit_s"));
  px_cli_job_fini(&j);
  if (now <= 0 || now == PX_CLI_UNLIMITED) {
    px_cmd_error(c, "job %s has no time limit to change by %lld s", id, (long long)delta);
    return 1;
  }
  int64_t limit = now + sign * delta;
  json_object_set_new(patch, "time_limit_s", json_integer(limit < 60 ? 60 : limit));
  return 0;
}

/* scontrol update JobId=N TimeLimit=.. Nice=.. Priority=.. */
static int update_job(struct px_cmd *c, int argc, char **argv) {
  const char *id = NULL;
  json_t *patch = json_object();
  int rc = 0, rel = 0;
  for (int i = 0; i < argc && !rc; i++) {
    char *eq = strchr(argv[i], '=');
    if (!eq) {
      px_cmd_error(c, "Invalid input: %s (expected Key=Value)", argv[i]);
      rc = 1;
      break;
    }
    size_t kl = (size_t)(eq - argv[i]);
    const char *val = eq + 1;
    int64_t secs;
    if (kl == 5 && !strncasecmp(argv[i], "JobId", 5)) {
      id = val;
    } else if (kl == 9 && !strncasecmp(argv[i], "TimeLimit", 9)) {
      if (px_cli_duration_parse(val + (*val == '+' || *val == '-'), &secs)) {
        px_cmd_error(c, "Invalid TimeLimit value");
        rc = 1;
      } else {
        rel = *val == '+' ? 1 : *val == '-' ? -1 : 0; /* Slurm's +T / -T: more or less than now */
        json_object_set_new(patch, "time_limit_s", json_integer(secs));
      }
    } else if ((kl == 4 && !strncasecmp(argv[i], "Nice", 4)) ||
               (kl == 8 && !strncasecmp(argv[i], "Priority", 8))) {
      char *e;
      long x = strtol(val, &e, 10);
      if (*e || e == val) {
        px_cmd_error(c, "Invalid %.*s value: %s", (int)kl, argv[i], val);
        rc = 1;
      } else {
        json_object_set_new(patch, kl == 4 ? "nice" : "priority", json_integer(x));
      }
    } else { /* Slurm's two bare lines, then what Phalanx can update */
      fprintf(stderr, "Update of this parameter is not supported: %s\nRequest aborted\n", argv[i]);
      px_cmd_error(c, "(phalanx: TimeLimit, Nice and Priority can be updated)");
      rc = 1;
    }
  }
  if (!rc && id && rel) rc = relative_limit(c, id, rel, patch);
  if (!rc && !id) {
    px_cmd_error(c, "No JobId given (scontrol update JobId=N Key=Value ...)");
    rc = 1;
  }
  if (!rc) {
    char path[128];
    snprintf(path, sizeof path, "/v1/jobs/%s", id);
    long status = 0;
    json_t *resp = NULL;
    rc = px_cmd_call(c, "PATCH", path, patch, &status, &resp);
    if (!rc && status / 100 != 2) rc = op_refused(c, "update", id, status, resp);
    json_decref(resp);
  }
  json_decref(patch);
  return rc;
}

/* Drain or resume nodes: POST /v1/nodes/{name}/drain|resume. */
int px_cmd_node_op(struct px_cmd *c, const char *op, const char *nodes, const char *reason) {
  json_t *body = reason ? json_pack("{s:s}", "reason", reason) : NULL;
  int rc = px_cmd_node_post(c, op, nodes, body);
  json_decref(body);
  return rc;
}

/* POST /v1/nodes/{name}/OP with body (borrowed; NULL: none) for every node of the hostlist. */
int px_cmd_node_post(struct px_cmd *c, const char *op, const char *nodes, json_t *body) {
  char **names;
  size_t n;
  if (px_cli_hostlist_expand(nodes, &names, &n)) {
    px_cmd_error(c, "Invalid node name specified: %s", nodes);
    return 1;
  }
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    char path[300];
    snprintf(path, sizeof path, "/v1/nodes/%s/%s", names[i], op);
    json_t *resp = NULL;
    long status = 0;
    rc = px_cmd_call(c, "POST", path, body, &status, &resp);
    if (!rc && status / 100 != 2) {
      char msg[512];
      px_client_error_text(status, resp, msg, sizeof msg);
      px_cmd_error(c, "%s %s: %s", op, names[i], msg);
      rc = 1;
    }
    json_decref(resp);
  }
  px_cli_strv_free(names, n);
  return rc;
}

/* GpuResume=INDEX|all: a faulty or quarantined GPU back in service (docs/gpus.md). */
static int gpu_resume(struct px_cmd *c, const char *nodes, const char *gpu) {
  json_t *body = json_pack("{s:s}", "gpu", gpu);
  int rc = px_cmd_node_post(c, "gpu_resume", nodes, body);
  json_decref(body);
  return rc;
}

static int update_node(struct px_cmd *c, int argc, char **argv) {
  const char *node = NULL, *state = NULL, *reason = NULL, *gpu = NULL;
  for (int i = 0; i < argc; i++) {
    if (!strncasecmp(argv[i], "NodeName=", 9)) node = argv[i] + 9;
    else if (!strncasecmp(argv[i], "State=", 6)) state = argv[i] + 6;
    else if (!strncasecmp(argv[i], "Reason=", 7)) reason = argv[i] + 7;
    else if (!strncasecmp(argv[i], "GpuResume=", 10)) gpu = argv[i] + 10;
    else {
      px_cmd_error(c, "Update of %s is not supported for nodes (State, Reason and GpuResume are)", argv[i]);
      return 1;
    }
  }
  if (node && gpu && !state) return gpu_resume(c, node, gpu);
  if (!node || !state || gpu) {
    px_cmd_error(c, "scontrol update NodeName=NODES State=DRAIN|RESUME [Reason=TEXT] | GpuResume=INDEX|all");
    return 1;
  }
  if (!strcasecmp(state, "DRAIN")) {
    if (!reason) {
      px_cmd_error(c, "You must specify a reason when DRAINING a node");
      return 1;
    }
    return px_cmd_node_op(c, "drain", node, reason);
  }
  if (!strcasecmp(state, "RESUME") || !strcasecmp(state, "IDLE") || !strcasecmp(state, "UNDRAIN"))
    return px_cmd_node_op(c, "resume", node, NULL);
  px_cmd_error(c, "State=%s is not supported by Phalanx (DRAIN and RESUME are)", state);
  return 1;
}

/* scontrol reboot [ASAP] [nextstate=RESUME|DOWN] [reason=TEXT] NODES: POST
 * /v1/nodes/{name}/reboot for each node (docs/gpus.md). */
static int reboot_nodes(struct px_cmd *c, int argc, char **argv) {
  bool asap = false;
  const char *next = NULL, *reason = NULL, *nodes = NULL;
  for (int i = 0; i < argc; i++) {
    if (!strcasecmp(argv[i], "ASAP")) asap = true;
    else if (!strncasecmp(argv[i], "nextstate=", 10)) next = argv[i] + 10;
    else if (!strncasecmp(argv[i], "reason=", 7)) reason = argv[i] + 7;
    else if (!nodes) nodes = argv[i];
    else return px_cmd_error(c, "reboot: unexpected '%s' (one node list)", argv[i]), 1;
  }
  if (!nodes || !strcasecmp(nodes, "ALL")) {
    px_cmd_error(c, "scontrol reboot [ASAP] [nextstate=RESUME|DOWN] [reason=TEXT] NODES (ALL is not supported)");
    return 1;
  }
  json_t *body = json_pack("{s:b}", "asap", asap);
  if (next) json_object_set_new(body, "next_state", json_string(next));
  if (reason) json_object_set_new(body, "reason", json_string(reason));
  int rc = px_cmd_node_post(c, "reboot", nodes, body);
  json_decref(body);
  return rc;
}

/* scontrol update PartitionName=P State=UP|DOWN [Reason=TEXT]: POST
 * /v1/partitions/P/up|down. DOWN keeps the partition's jobs queued and
 * starts none (reason PartitionDown), as Slurm's. */
static int update_partition(struct px_cmd *c, int argc, char **argv) {
  const char *part = NULL, *state = NULL, *reason = NULL;
  for (int i = 0; i < argc; i++) {
    if (!strncasecmp(argv[i], "PartitionName=", 14)) part = argv[i] + 14;
    else if (!strncasecmp(argv[i], "State=", 6)) state = argv[i] + 6;
    else if (!strncasecmp(argv[i], "Reason=", 7)) reason = argv[i] + 7;
    else {
      px_cmd_error(c, "Update of %s is not supported for partitions (State is)", argv[i]);
      return 1;
    }
  }
  if (!part || !state) {
    px_cmd_error(c, "scontrol update PartitionName=NAME State=UP|DOWN");
    return 1;
  }
  const char *op = !strcasecmp(state, "UP") ? "up" : !strcasecmp(state, "DOWN") ? "down" : NULL;
  if (!op) {
    px_cmd_error(c, "State=%s is not supported for partitions by Phalanx (UP and DOWN are; DOWN keeps the jobs "
                 "queued and starts none)", state);
    return 1;
  }
  char path[300];
  snprintf(path, sizeof path, "/v1/partitions/%s/%s", part, op);
  json_t *body = reason ? json_pack("{s:s}", "reason", reason) : NULL, *resp = NULL;
  long status = 0;
  int rc = px_cmd_call(c, "POST", path, body, &status, &resp);
  if (!rc && status / 100 != 2) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    px_cmd_error(c, "slurm_update error: %s", msg);
    rc = 1;
  }
  json_decref(body);
  json_decref(resp);
  return rc;
}

static int scontrol_show(struct px_cmd *c, int argc, char **argv) {
  const char *what = argc > 0 ? argv[0] : "", *arg = argc > 1 ? argv[1] : NULL;
  if (!strncasecmp(what, "job", 3)) return show_jobs(c, arg);
  if (!strncasecmp(what, "node", 4)) return show_nodes_or_parts(c, true, arg);
  if (!strncasecmp(what, "partition", 4)) return show_nodes_or_parts(c, false, arg);
  if (!strcasecmp(what, "hostnames")) return show_hostnames(c, arg);
  if (!strcasecmp(what, "hostlist") || !strcasecmp(what, "hostlistsorted")) return show_hostlist(c, arg);
  px_cmd_error(c, "show %s is not supported by Phalanx (job, node, partition, hostnames, hostlist are;"
               " for the configuration use 'phalanx config check')", what);
  return 1;
}

/* Every controller (GET /v1/controllers, answered by standbys too), as
 * Slurm prints its primary and backups, with the term and the lag behind
 * the journal that high availability adds (issue 16). */
static int ping(struct px_cmd *c) {
  long status = 0;
  json_t *resp = NULL;
  int rc = px_cmd_call(c, "GET", "/v1/controllers", NULL, &status, &resp);
  json_t *list = json_object_get(resp, "controllers");
  if (rc || !json_array_size(list)) {
    printf("Slurmctld(primary) at %s is DOWN\n", c->connected ? c->client.where : "?");
    json_decref(resp);
    return 1;
  }
  size_t i, backups = 0;
  json_t *o;
  json_array_foreach(list, i, o) {
    const char *role = json_string_value(json_object_get(o, "role"));
    bool leader = role && !strcmp(role, "leader");
    bool fresh = json_integer_value(json_object_get(o, "age_ms")) < 10000;
    char kind[32];
    if (leader) snprintf(kind, sizeof kind, "primary");
    else snprintf(kind, sizeof kind, "backup%zu", ++backups);
    printf("Slurmctld(%s) at %s is %s (term %lld, lag %lld)\n", kind,
           json_string_value(json_object_get(o, "addr")), fresh ? "UP" : "DOWN",
           (long long)json_integer_value(json_object_get(o, "term")),
           (long long)json_integer_value(json_object_get(o, "lag")));
  }
  json_decref(resp);
  return 0;
}

int px_cmd_scontrol(int argc, char **argv, bool native) {
  struct px_cmd c;
  px_cmd_init(&c, "scontrol", true);
  int i = 1;
  while (i < argc && argv[i][0] == '-') {
    if (!strcmp(argv[i], "--json")) c.json = true;
    else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
      printf("slurm 22.05.8 (phalanx)\n");
      return 0;
    }
    i++;
  }
  const char *cmd = i < argc ? argv[i] : "";
  int rest = argc - i - 1;
  char **args = argv + i + 1;
  int rc;
  if (!strcasecmp(cmd, "requeuehold")) /* requeue, held: POST /v1/jobs/{id}/requeuehold */
    rc = rest > 0 ? px_cmd_job_op(&c, "requeuehold", args[0]) : (px_cmd_error(&c, "%s: no job id", cmd), 1);
  else if (!strcasecmp(cmd, "show")) rc = scontrol_show(&c, rest, args);
  else if (!strcasecmp(cmd, "hold") || !strcasecmp(cmd, "release") || !strcasecmp(cmd, "requeue"))
    rc = rest > 0 ? px_cmd_job_op(&c, cmd, args[0]) : (px_cmd_error(&c, "%s: no job id", cmd), 1);
  else if (!strcasecmp(cmd, "uhold")) /* a user's hold: the server tells user from admin by who asks */
    rc = rest > 0 ? px_cmd_job_op(&c, "hold", args[0]) : (px_cmd_error(&c, "%s: no job id", cmd), 1);
  else if (!strcasecmp(cmd, "update") && rest > 0 && !strncasecmp(args[0], "NodeName=", 9))
    rc = update_node(&c, rest, args);
  else if (!strcasecmp(cmd, "update") && rest > 0 && !strncasecmp(args[0], "PartitionName=", 14))
    rc = update_partition(&c, rest, args);
  else if (!strcasecmp(cmd, "update")) rc = update_job(&c, rest, args);
  else if (!strcasecmp(cmd, "reboot") || !strcasecmp(cmd, "reboot_nodes")) rc = reboot_nodes(&c, rest, args);
  else if (!strcasecmp(cmd, "ping")) rc = ping(&c);
  else if (!strcasecmp(cmd, "create") && rest > 0 && !strncasecmp(args[0], "reservation", 11))
    rc = px_scontrol_create_resv(&c, rest - 1, args + 1);
  else if (!strcasecmp(cmd, "delete")) rc = px_scontrol_delete_resv(&c, rest, args);
  else {
    px_cmd_error(&c, "unsupported command '%s' (show, hold, uhold, release, requeue, update, reboot, ping, create reservation, delete ReservationName=)", cmd);
    rc = 1;
  }
  px_cmd_fini(&c);
  return rc;
}
