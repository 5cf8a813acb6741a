/*
 * cmd_verbs.c - the native verbs that have no Slurm twin or differ from it:
 * show, why (a pending job explained in plain words), hold/release, update,
 * drain/resume, usage, token (reserve: cmd_reserve.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cmd_common.h"
#include "cli/fmt_job.h"
#include "commands.h"

/* GET /v1/jobs/{id} into j; prints the error itself. */
static int get_job(struct px_cmd *c, const char *id, struct px_job_info *j) {
  char path[128];
  snprintf(path, sizeof path, "/v1/jobs/%s", id);
  long status = 0;
  json_t *resp = NULL;
  if (px_cmd_call(c, "GET", path, NULL, &status, &resp)) return 1;
  int rc = 0;
  if (status == 404) {
    px_cmd_error(c, "no job %s (finished jobs are in 'phalanx usage' / sacct)", id);
    rc = 1;
  } else if (status / 100 != 2) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    px_cmd_error(c, "%s", msg);
    rc = 1;
  } else if (px_cli_job_from_json(resp, j)) {
    px_cmd_error(c, "the server's reply could not be read");
    rc = 1;
  }
  json_decref(resp);
  return rc;
}

/* Parses "VERB [--json] ID"; returns the id or NULL after printing usage. */
static const char *one_arg(struct px_cmd *c, int argc, char **argv, const char *what) {
  const char *id = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) c->json = true;
    else if (!id && argv[i][0] != '-') id = argv[i];
    else {
      px_cmd_error(c, "unexpected argument '%s' (usage: phalanx %s [--json] %s)", argv[i], argv[0], what);
      return NULL;
    }
  }
  if (!id) px_cmd_error(c, "missing %s (usage: phalanx %s [--json] %s)", what, argv[0], what);
  return id;
}

int px_verb_show(int argc, char **argv) {
  struct px_cmd c;
  px_cmd_init(&c, "phalanx show", false);
  const char *id = one_arg(&c, argc, argv, "JOBID");
  struct px_job_info j;
  int rc = !id || get_job(&c, id, &j);
  if (!rc) {
    if (c.json) {
      json_t *o = px_cli_job_to_json(&j);
      px_cmd_print_json(o);
      json_decref(o);
    } else {
      px_fmt_scontrol_job(stdout, &j, c.now);
    }
    px_cli_job_fini(&j);
  }
  px_cmd_fini(&c);
  return rc;
}

/* Pending reasons in plain words, with what would let the job run. */
static const struct {
  const char *reason, *words;
} reasons[] = {
    {"Resources", "the nodes or GPUs it needs are busy; it starts when running jobs end"},
    {"Priority", "jobs with a higher priority are ahead of it in its partition"},
    {"Dependency", "it waits for the jobs it depends on (see Dependency)"},
    {"DependencyNeverSatisfied", "a job it depends on ended in a way that can never satisfy the dependency; cancel it"},
    {"JobHeldUser", "it is held; 'phalanx release JOBID' lets it run"},
    {"JobHeldAdmin", "an operator holds it; ask them to release it"},
    {"BeginTime", "it may not start before its --begin time"},
    {"PartitionNodeLimit", "it asks for more nodes than its partition allows; it can never run: cancel it and resubmit with fewer nodes"},
    {"PartitionTimeLimit", "its time limit exceeds the partition's; it can never run: cancel it and resubmit with a shorter --time"},
    {"PartitionDown", "its partition is down; it starts when an operator brings it up"},
    {"ReqNodeNotAvail", "nodes it needs are drained or down"},
    {"QOSGrpGRES", "its account or QoS is at its GPU quota; it starts when the account's other jobs end"},
    {"AssocGrpGRES", "its account is at its GPU quota; it starts when the account's other jobs end"},
    {"JobArrayTaskLimit", "its array already runs as many tasks as its %N limit allows"},
    {"AssocGrpCpuLimit", "its account is at its CPU quota; it starts when the account's other jobs end"},
    {"AssocGrpMemLimit", "its account is at its memory quota; it starts when the account's other jobs end"},
    {"AssocGrpNodeLimit", "its account is at its node quota; it starts when the account's other jobs end"},
    {"AssocGrpJobsLimit", "its account runs as many jobs as it may; it starts when one of them ends"},
    {"AssocMaxJobsLimit", "you run as many jobs in this account as you may; it starts when one of them ends"},
    {"QOSMaxGRESPerUser", "you use as many GPUs as its QoS allows one user; it starts when your other jobs end"},
    {"QOSMaxJobsPerUserLimit", "you run as many jobs as its QoS allows one user; it starts when one of them ends"},
    {"QOSMaxWallDurationPerJobLimit", "its time limit exceeds its QoS's; cancel it and resubmit with a shorter --time"},
    {"BadConstraints", "no node has the features it asks for; cancel it and fix --constraint"},
    {"InvalidAccount", "its account does not exist (any more); cancel it and resubmit with -A"},
    {"AccountNotAllowed", "its account may not use this partition; resubmit to another partition"},
    {"Reservation", "it waits for its reservation to start"},
    {"None", "it has just been submitted and not yet considered by the scheduler"},
};

int px_verb_why(int argc, char **argv) {
  struct px_cmd c;
  px_cmd_init(&c, "phalanx why", false);
  const char *id = one_arg(&c, argc, argv, "JOBID");
  struct px_job_info j;
  int rc = !id || get_job(&c, id, &j);
  if (rc) {
    px_cmd_fini(&c);
    return 1;
  }
  char when[32];
  px_cli_fmt_iso(when, sizeof when, j.expected_start, "");
  if (c.json) {
    json_t *o = json_pack("{s:I,s:s,s:s,s:s?,s:I}", "job_id", (json_int_t)j.job_id, "state", j.state,
                          "reason", j.reason, "why", j.why, "expected_start", (json_int_t)j.expected_start);
    px_cmd_print_json(o);
    json_decref(o);
  } else if (strcmp(j.state, "PENDING")) {
    printf("Job %s (%s) is not pending: it is %s.\n", id, PX_STR(j.spec.name), j.state);
  } else {
    const char *words = NULL;
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0] && !words; i++)
      if (!strcmp(j.reason, reasons[i].reason)) words = reasons[i].words;
    printf("Job %s (%s) is pending: %s.\n", id, PX_STR(j.spec.name), j.reason);
    if (words) printf("  %s\n", words);
    if (j.why && *j.why) printf("  %s\n", j.why);
    if (!strcmp(j.reason, "Dependency") && j.spec.dependency) printf("  Dependency: %s\n", j.spec.dependency);
    if (*when) printf("  Expected to start at %s.\n", when);
    else printf("  No start estimate yet.\n");
  }
  px_cli_job_fini(&j);
  px_cmd_fini(&c);
  return 0;
}

int px_verb_jobop(int argc, char **argv) {
  struct px_cmd c;
  char prog[64];
  snprintf(prog, sizeof prog, "phalanx %s", argv[0]);
  px_cmd_init(&c, prog, false);
  const char *ids = one_arg(&c, argc, argv, "JOBID[,JOBID...]");
  int rc = !ids || px_cmd_job_op(&c, argv[0], ids);
  if (!rc && !c.json) printf("%s %s\n", !strcmp(argv[0], "hold") ? "held" : "released", ids);
  px_cmd_fini(&c);
  return rc;
}

int px_verb_update(int argc, char **argv) {
  /* phalanx update JOBID key=value ... : the same keys as scontrol update. */
  if (argc < 3) {
    fprintf(stderr, "phalanx update: usage: phalanx update JOBID TimeLimit=2:00:00|Nice=N|Priority=N ...\n");
    return 2;
  }
  char idarg[64];
  snprintf(idarg, sizeof idarg, "JobId=%s", argv[1]);
  char **args = calloc((size_t)argc + 2, sizeof *args);
  if (!args) return 1;
  args[0] = "scontrol";
  args[1] = "update";
  args[2] = idarg;
  for (int i = 2; i < argc; i++) args[i + 1] = argv[i];
  int rc = px_cmd_scontrol(argc + 1, args, true);
  free(args);
  return rc;
}

int px_verb_nodeop(int argc, char **argv) {
  struct px_cmd c;
  char prog[64];
  snprintf(prog, sizeof prog, "phalanx %s", argv[0]);
  px_cmd_init(&c, prog, false);
  const char *nodes = NULL, *reason = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reason") && i + 1 < argc) reason = argv[++i];
    else if (!strncmp(argv[i], "--reason=", 9)) reason = argv[i] + 9;
    else if (!nodes && argv[i][0] != '-') nodes = argv[i];
  }
  int rc = 1;
  if (!nodes)
    px_cmd_error(&c, "missing NODES (usage: phalanx %s NODES%s)", argv[0], !strcmp(argv[0], "drain") ? " --reason TEXT" : "");
  else if (!strcmp(argv[0], "drain") && !reason)
    px_cmd_error(&c, "a drain needs a reason: phalanx drain %s --reason 'why'", nodes);
  else
    rc = px_cmd_node_op(&c, argv[0], nodes, reason);
  px_cmd_fini(&c);
  return rc;
}

/* Prints an array of flat objects as a table (columns: the first row's keys). */
static void print_table(const json_t *rows) {
  const json_t *first = json_array_get(rows, 0);
  if (!first) {
    printf("(no usage recorded)\n");
    return;
  }
  const char *key;
  const json_t *val;
  json_object_foreach((json_t *)first, key, val) printf("%-16s", key);
  printf("\n");
  size_t i;
  const json_t *row;
  json_array_foreach(rows, i, row) {
    json_object_foreach((json_t *)first, key, val) {
      const json_t *v = json_object_get(row, key);
      if (json_is_string(v)) printf("%-16s", json_string_value(v));
      else if (json_is_integer(v)) printf("%-16lld", (long long)json_integer_value(v));
      else if (json_is_real(v)) printf("%-16.2f", json_real_value(v));
      else printf("%-16s", "");
    }
    printf("\n");
  }
}

static void print_pct(const json_t *v) {
  if (json_is_number(v)) printf(" %9.1f%%", 100.0 * json_number_value(v));
  else printf(" %10s", "-");
}

/* GET /v1/usage as sreport would show it: one row per account, user or
 * partition, ordered as the server sent them (by GPU-hours). */
static void print_usage(const json_t *resp) {
  const char *by = json_string_value(json_object_get(resp, "by"));
  const json_t *rows = json_object_get(resp, "usage");
  char head[16];
  snprintf(head, sizeof head, "%s", by ? by : "key");
  for (char *p = head; *p; p++) *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
  printf("%-16s %10s %10s %7s %9s %10s %10s\n", head, "GPU-HOURS", "BILL-HOURS", "JOBS", "AVG-WAIT",
         "SHARE", "FAIRSHARE");
  size_t i;
  const json_t *row;
  json_array_foreach(rows, i, row) {
    char wait[32];
    px_cli_fmt_elapsed(wait, sizeof wait,
                       (int64_t)json_number_value(json_object_get(row, "avg_wait_s")));
    printf("%-16.16s %10.2f %10.2f %7lld %9s", json_string_value(json_object_get(row, "key")),
           json_number_value(json_object_get(row, "gpu_hours")),
           json_number_value(json_object_get(row, "billable_hours")),
           (long long)json_integer_value(json_object_get(row, "jobs")), wait);
    print_pct(json_object_get(row, "share"));
    print_pct(json_object_get(row, "fair_share"));
    printf("\n");
  }
  if (!json_array_size(rows)) printf("(no usage recorded in this period)\n");
}

/* POST/GET a feature endpoint and print its answer; 404 means the server
 * does not offer the feature yet. */
static int simple_call(struct px_cmd *c, const char *method, const char *path, json_t *body,
                       const char *feature) {
  long status = 0;
  json_t *resp = NULL;
  if (px_cmd_call(c, method, path, body, &status, &resp)) return 1;
  int rc = 0;
  if (status == 404 || status == 405 || status == 501) {
    px_cmd_error(c, "this server does not offer %s yet", feature);
    rc = 1;
  } else if (status / 100 != 2) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    px_cmd_error(c, "%s", msg);
    rc = 1;
  } else if (!c->json && json_is_string(json_object_get(resp, "token"))) {
    printf("%s\n", json_string_value(json_object_get(resp, "token")));
  } else if (c->json || !json_is_object(resp)) {
    px_cmd_print_json(resp);
  } else if (json_is_array(json_object_get(resp, "usage"))) {
    print_usage(resp);
  } else if (json_is_array(json_object_get(resp, "rows"))) {
    print_table(json_object_get(resp, "rows"));
  } else {
    px_cmd_print_json(resp);
  }
  json_decref(resp);
  return rc;
}

int px_verb_usage(int argc, char **argv) {
  struct px_cmd c;
  px_cmd_init(&c, "phalanx usage", false);
  const char *since = "now-30days", *by = "account";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) c.json = true;
    else if (!strcmp(argv[i], "--since") && i + 1 < argc) since = argv[++i];
    else if (!strcmp(argv[i], "--by") && i + 1 < argc) by = argv[++i];
    else {
      px_cmd_error(&c, "unexpected argument '%s' (usage: phalanx usage [--since WHEN] [--by account|user|partition|service] [--json])", argv[i]);
      return 2;
    }
  }
  if (strcmp(by, "account") && strcmp(by, "user") && strcmp(by, "partition") && strcmp(by, "service")) {
    px_cmd_error(&c, "--by %s: must be account, user, partition or service", by);
    return 2;
  }
  int64_t t;
  if (px_cmd_parse_since(&c, since, &t)) return 2;
  char path[256];
  snprintf(path, sizeof path, "/v1/usage?since=%lld&by=%s", (long long)t, by);
  int rc = simple_call(&c, "GET", path, NULL, "usage reports");
  px_cmd_fini(&c);
  return rc;
}

/* `phalanx server token ...` in the daemons' binary (the minter needs the
 * server's key and libjwt, which the front end does not load). */
static int server_token(int argc, char **argv) {
  char **args = calloc((size_t)argc + 1, sizeof *args);
  if (!args) return 1;
  args[0] = "server";
  for (int i = 0; i < argc; i++) args[i + 1] = argv[i];
  int rc = px_exec_daemon(argc + 1, args);
  free(args);
  return rc;
}

/* POST /v1/tokens: a JWT for the calling user, for PHALANX_TOKEN on remote
 * machines. With --state-dir it is the operator's offline minter on the
 * server host (`phalanx server token`), to which it forwards. */
int px_verb_token(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--state-dir") || !strncmp(argv[i], "--state-dir=", 12) || !strcmp(argv[i], "-d"))
      return server_token(argc, argv);
  struct px_cmd c;
  px_cmd_init(&c, "phalanx token", false);
  int64_t life = 86400;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) c.json = true;
    else if (!strcmp(argv[i], "--lifetime") && i + 1 < argc && !px_cli_duration_parse(argv[i + 1], &life)) i++;
    else {
      px_cmd_error(&c, "usage: phalanx token [--lifetime D-HH:MM:SS] [--json]");
      return 2;
    }
  }
  json_t *body = json_pack("{s:s,s:I}", "user", px_cmd_user(), "lifetime_s", (json_int_t)life);
  int rc = simple_call(&c, "POST", "/v1/tokens", body, "API tokens");
  json_decref(body);
  px_cmd_fini(&c);
  return rc;
}
