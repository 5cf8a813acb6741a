/*
 * cmd_scancel.c - `scancel` and `phalanx cancel`: cancel or signal jobs by id
 * (array tasks "10059_1", "10059_[1-3]"; a bare array id means the whole
 * array) or by filter (-u -A -n -p -t). Like Slurm, an unknown or finished
 * job is not an error: scancel prints nothing and exits 0, and with -v says
 * why in Slurm's words.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_common.h"
#include "cli/fmt_job.h"

struct cancel {
  struct px_cmd cmd;
  int signal;
  bool batch, verbose;
  int errors;
};

static void cancel_one(struct cancel *k, uint64_t id, const char *shown) {
  char path[128];
  if (k->signal)
    snprintf(path, sizeof path, "/v1/jobs/%llu?signal=%d%s", (unsigned long long)id, k->signal,
             k->batch ? "&batch=1" : "");
  else
    snprintf(path, sizeof path, "/v1/jobs/%llu", (unsigned long long)id);
  if (k->verbose && k->cmd.slurm)
    fprintf(stderr, "%s: %s job %s\n", k->cmd.prog, k->signal ? "Signal" : "Terminating", shown);
  long status = 0;
  json_t *resp = NULL;
  if (px_cmd_call(&k->cmd, "DELETE", path, NULL, &status, &resp)) {
    k->errors++;
    return;
  }
  if (status / 100 != 2) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    const char *why = status == 404 ? "Invalid job id specified"
                      : status == 409 ? "Job/step already completing or completed"
                                      : msg;
    /* Slurm is silent about an unknown or ended job, except when it signals
     * (-s, -b): then an unknown id is an error, exit 1 */
    bool quiet_miss = status == 409 || (status == 404 && !k->signal && !k->batch);
    if (!quiet_miss) k->errors++;
    if (k->verbose || !quiet_miss)
      px_cmd_error(&k->cmd, "Kill job error on job id %s: %s", shown, why);
  } else if (!k->cmd.slurm && !k->cmd.json) {
    printf("cancelled job %s\n", shown);
  }
  json_decref(resp);
}

/* Ids of the array tasks "A_T" or "A_[range]" named by spec, from the server's jobs. */
static void cancel_tasks(struct cancel *k, const char *spec, struct px_job_info *v, size_t n) {
  unsigned long long array = strtoull(spec, NULL, 10);
  const char *t = strchr(spec, '_') + 1;
  char range[512];
  /* "x[1-3]" or "x7": a hostlist with a one-letter prefix expands the range. */
  if (t[0] == '[')
    snprintf(range, sizeof range, "x[%.*s]", (int)strcspn(t + 1, "]%"), t + 1);
  else
    snprintf(range, sizeof range, "x%.*s", (int)strcspn(t, "%"), t);
  char **names;
  size_t cnt;
  if (px_cli_hostlist_expand(range, &names, &cnt)) {
    px_cmd_error(&k->cmd, "Invalid job id %s", spec);
    k->errors++;
    return;
  }
  for (size_t i = 0; i < cnt; i++) {
    uint32_t task = (uint32_t)strtoul(names[i] + 1, NULL, 10);
    char shown[64];
    snprintf(shown, sizeof shown, "%llu_%u", array, task);
    bool found = false;
    for (size_t j = 0; j < n && !found; j++) {
      if (v[j].array_job_id == array && v[j].array_task_id == task) {
        cancel_one(k, v[j].job_id, shown);
        found = true;
      }
    }
    if (!found && k->verbose) px_cmd_error(&k->cmd, "Kill job error on job id %s: Invalid job id specified", shown);
  }
  px_cli_strv_free(names, cnt);
}

/* --state: scancel acts on active jobs only, and says so (bare, as Slurm). */
static bool states_valid(const struct px_cmd *c, const char *list) {
  char buf[256], *save = NULL;
  snprintf(buf, sizeof buf, "%s", list ? list : "");
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char name[32];
    if (px_cli_state_normalise(t, name, sizeof name) &&
        (!strcmp(name, "PENDING") || !strcmp(name, "RUNNING") || !strcmp(name, "SUSPENDED")))
      continue;
    if (!c->slurm) fprintf(stderr, "%s: ", c->prog);
    fprintf(stderr, "Invalid job state specified: %s\n", t);
    fprintf(stderr, "Valid job states are PENDING, RUNNING, and SUSPENDED\n");
    return false;
  }
  return true;
}

int px_cmd_scancel(int argc, char **argv, bool native) {
  static const struct option longopts[] = {
      {"user", required_argument, 0, 'u'},    {"account", required_argument, 0, 'A'},
      {"name", required_argument, 0, 'n'},    {"partition", required_argument, 0, 'p'},
      {"state", required_argument, 0, 't'},   {"signal", required_argument, 0, 's'},
      {"batch", no_argument, 0, 'b'},         {"verbose", no_argument, 0, 'v'},
      {"quiet", no_argument, 0, 'Q'},         {"me", no_argument, 0, 'M'},
      {"json", no_argument, 0, 'J'},          {"help", no_argument, 0, 'H'},
      {0, 0, 0, 0}};
  struct cancel k = {0};
  px_cmd_init(&k.cmd, native ? "phalanx cancel" : "scancel", !native);
  struct px_job_filter f = {0};
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "u:A:n:p:t:s:bvQ", longopts, NULL)) != -1) {
    switch (opt) {
    case 'u': f.users = optarg; break;
    case 'M': f.users = px_cmd_user(); break;
    case 'A': f.accounts = optarg; break;
    case 'n': f.names = optarg; break;
    case 'p': f.partitions = optarg; break;
    case 't': f.states = optarg; break;
    case 's':
      if ((k.signal = px_cli_signal_number(optarg)) < 0) {
        if (k.cmd.slurm) fprintf(stderr, "Unknown job signal: %s\n", optarg);
        else px_cmd_error(&k.cmd, "Invalid signal name: %s", optarg);
        return 1;
      }
      break;
    case 'b': k.batch = true; break;
    case 'v': k.verbose = true; break;
    case 'Q': break;
    case 'J': k.cmd.json = true; break;
    case 'H': printf("Usage: scancel [-s SIGNAL] [-b] [-u USER] [-A ACCOUNT] [-n NAME] [-p PARTITION] [-t STATE] [-v] [JOBID...]\n"); return 0;
    default: return 1;
    }
  }
  if (!states_valid(&k.cmd, f.states)) return 1;
  bool filtered = f.users || f.accounts || f.names || f.partitions || f.states;
  if (optind >= argc && !filtered) {
    px_cmd_error(&k.cmd, "No job identification provided");
    px_cmd_fini(&k.cmd);
    return 1;
  }
  struct px_job_info *v = NULL;
  size_t n = 0;
  bool need_jobs = filtered;
  for (int i = optind; i < argc; i++) need_jobs |= strchr(argv[i], '_') != NULL;
  if (need_jobs && px_cmd_get_jobs(&k.cmd, "/v1/jobs", &v, &n)) {
    px_cmd_fini(&k.cmd);
    return 1;
  }
  for (int i = optind; i < argc; i++) {
    char *end;
    unsigned long long id = strtoull(argv[i], &end, 10);
    if (end == argv[i] || (*end && *end != '_')) {
      px_cmd_error(&k.cmd, "Invalid job id %s", argv[i]);
      k.errors++;
    } else if (*end == '_') {
      cancel_tasks(&k, argv[i], v, n);
    } else {
      cancel_one(&k, id, argv[i]);
    }
  }
  if (optind >= argc) {
    if (!f.states) f.states = "PENDING,RUNNING,SUSPENDED,REQUEUED";
    for (size_t i = 0; i < n; i++) {
      if (!px_cmd_job_filter(&v[i], &f)) continue;
      char shown[64];
      px_fmt_job_id(shown, sizeof shown, &v[i]);
      cancel_one(&k, v[i].job_id, shown);
    }
  }
  px_cli_jobs_free(v, n);
  px_cmd_fini(&k.cmd);
  return k.errors ? 1 : 0;
}
