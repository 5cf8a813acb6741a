/*
 * cmd_sstat.c - `sstat -j JOB[,JOB...]`: what running jobs use now, from
 * GET /v1/jobs/{id}/stat (the agents' heartbeats read each job's cgroup:
 * memory in use and its peak, CPU time of its processes). One line per job,
 * its whole cgroup on every node (Phalanx's steps share the job's group, so
 * there is no per-step split: `N.batch` and `N.0` name the same figures).
 * Slurm's fixed-width columns (or -p/-P), -n, -o/--format with the fields
 * below; the figures are as old as the last heartbeat (HeartbeatInterval).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cmd_common.h"

struct figs {
  char id[40], max_node[64], min_cpu_node[64];
  uint64_t max_rss_kib, ave_rss_kib, ave_cpu_ms, min_cpu_ms;
  uint32_t ntasks, nnodes;
};

static void cpu_str(char *b, size_t n, uint64_t ms) {
  if (ms < 3600000)
    snprintf(b, n, "%02u:%02u.%03u", (unsigned)(ms / 60000), (unsigned)(ms / 1000 % 60), (unsigned)(ms % 1000));
  else px_cli_fmt_hms(b, n, (int64_t)(ms / 1000));
}

static const char *field(const struct figs *f, const char *name, char *b, size_t n) {
  if (!strcasecmp(name, "JobID")) return f->id;
  if (!strcasecmp(name, "MaxRSS")) return snprintf(b, n, "%" PRIu64 "K", f->max_rss_kib), b;
  if (!strcasecmp(name, "MaxRSSNode")) return f->max_node;
  if (!strcasecmp(name, "AveRSS")) return snprintf(b, n, "%" PRIu64 "K", f->ave_rss_kib), b;
  if (!strcasecmp(name, "AveCPU")) return cpu_str(b, n, f->ave_cpu_ms), b;
  if (!strcasecmp(name, "MinCPU")) return cpu_str(b, n, f->min_cpu_ms), b;
  if (!strcasecmp(name, "MinCPUNode")) return f->min_cpu_node;
  if (!strcasecmp(name, "NTasks")) return snprintf(b, n, "%u", f->ntasks), b;
  return NULL;
}

/* Per node figures into the job's line: the largest peak and where, the
 * average in use per node, CPU per task (average, and the least node's). */
static void fold(const json_t *nodes, struct figs *f) {
  size_t i;
  json_t *o;
  uint64_t rss_sum = 0, cpu_sum = 0;
  f->min_cpu_ms = UINT64_MAX;
  json_array_foreach(nodes, i, o) {
    uint64_t peak = (uint64_t)json_integer_value(json_object_get(o, "peak_mem_mib")) * 1024;
    uint64_t cpu = (uint64_t)json_integer_value(json_object_get(o, "cpu_time_ms"));
    uint32_t tasks = (uint32_t)json_integer_value(json_object_get(o, "ntasks"));
    const char *node = json_string_value(json_object_get(o, "node"));
    if (peak >= f->max_rss_kib) f->max_rss_kib = peak, snprintf(f->max_node, sizeof f->max_node, "%s", node ? node : "");
    uint64_t per_task = tasks ? cpu / tasks : cpu;
    if (per_task < f->min_cpu_ms)
      f->min_cpu_ms = per_task, snprintf(f->min_cpu_node, sizeof f->min_cpu_node, "%s", node ? node : "");
    rss_sum += (uint64_t)json_integer_value(json_object_get(o, "mem_mib")) * 1024;
    cpu_sum += cpu;
    f->ntasks += tasks;
    f->nnodes++;
  }
  if (!f->nnodes) f->min_cpu_ms = 0;
  f->ave_rss_kib = f->nnodes ? rss_sum / f->nnodes : 0;
  f->ave_cpu_ms = f->ntasks ? cpu_sum / f->ntasks : cpu_sum;
}

static void print_row(const char *const *names, size_t n, const struct figs *f, bool parsable, bool header) {
  char b[128];
  for (size_t i = 0; i < n; i++) {
    const char *v = header ? names[i] : field(f, names[i], b, sizeof b);
    int w = !strcasecmp(names[i], "JobID") ? -12 : 10;
    if (parsable) printf("%s%s", v, i + 1 < n ? "|" : "\n");
    else if ((int)strlen(v) > abs(w) && !header) printf("%.*s+%s", abs(w) - 1, v, i + 1 < n ? " " : " \n");
    else printf(w < 0 ? "%-*.*s%s" : "%*.*s%s", abs(w), abs(w), v, i + 1 < n ? " " : " \n");
  }
  if (!parsable && header) {
    for (size_t i = 0; i < n; i++) printf("%.*s ", !strcasecmp(names[i], "JobID") ? 12 : 10, "------------");
    printf("\n");
  }
}

static int one_job(struct px_cmd *c, const char *arg, const char *const *names, size_t n, bool parsable) {
  char id[40], path[96];
  snprintf(id, sizeof id, "%s", arg);
  char *dot = strchr(id, '.');
  if (dot) *dot = '\0'; /* a step names its job's group (see above) */
  char *end;
  unsigned long long jid = strtoull(id, &end, 10);
  if (!jid || *end) return px_cmd_error(c, "Invalid job id: %s", arg), 1;
  snprintf(path, sizeof path, "/v1/jobs/%llu/stat", jid);
  long status = 0;
  json_t *resp = NULL;
  if (px_cmd_call(c, "GET", path, NULL, &status, &resp)) return 1;
  int rc = 0;
  if (status != 200) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    px_cmd_error(c, "couldn't get steps for job %llu: %s", jid, msg);
    rc = 1;
  } else {
    struct figs f = {0};
    snprintf(f.id, sizeof f.id, "%s", arg);
    fold(json_object_get(resp, "nodes"), &f);
    print_row(names, n, &f, parsable, false);
  }
  json_decref(resp);
  return rc;
}

int px_cmd_sstat(int argc, char **argv, bool native) {
  static const struct option longopts[] = {{"jobs", required_argument, 0, 'j'}, {"format", required_argument, 0, 'o'},
                                           {"fields", required_argument, 0, 'o'}, {"parsable", no_argument, 0, 'p'},
                                           {"parsable2", no_argument, 0, 'P'}, {"noheader", no_argument, 0, 'n'},
                                           {"allsteps", no_argument, 0, 'a'},  {0, 0, 0, 0}};
  struct px_cmd c;
  px_cmd_init(&c, native ? "phalanx stat" : "sstat", !native);
  const char *jobs = NULL, *format = "JobID,MaxRSS,MaxRSSNode,AveRSS,AveCPU,MinCPU,MinCPUNode,NTasks";
  bool parsable = false, header = true;
  int opt, rc = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "j:o:pPna", longopts, NULL)) != -1) {
    if (opt == 'j') jobs = optarg;
    else if (opt == 'o') format = optarg;
    else if (opt == 'p' || opt == 'P') parsable = true;
    else if (opt == 'n') header = false;
    else if (opt != 'a') rc = 1;
  }
  if (!rc && !jobs && optind < argc) jobs = argv[optind];
  if (rc || !jobs) {
    px_cmd_error(&c, "usage: sstat -j JOB[.STEP][,...] [-o FIELDS] [-p|-P] [-n]");
    px_cmd_fini(&c);
    return 1;
  }
  char fbuf[512], jbuf[512], *names[32], *save = NULL;
  size_t n = 0;
  snprintf(fbuf, sizeof fbuf, "%s", format);
  for (char *t = strtok_r(fbuf, ",", &save); t && n < 32; t = strtok_r(NULL, ",", &save)) {
    char b[8];
    if (!field(&(struct figs){0}, t, b, sizeof b)) {
      px_cmd_error(&c, "Invalid field requested: \"%s\" (JobID, MaxRSS, MaxRSSNode, AveRSS, AveCPU, MinCPU, "
                   "MinCPUNode, NTasks)", t);
      px_cmd_fini(&c);
      return 1;
    }
    names[n++] = t;
  }
  if (header) print_row((const char *const *)names, n, NULL, parsable, true);
  snprintf(jbuf, sizeof jbuf, "%s", jobs);
  save = NULL;
  for (char *t = strtok_r(jbuf, ",", &save); t; t = strtok_r(NULL, ",", &save))
    rc |= one_job(&c, t, (const char *const *)names, n, parsable);
  px_cmd_fini(&c);
  return rc;
}
