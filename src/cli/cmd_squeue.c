/*
 * cmd_squeue.c - `squeue` and `phalanx queue`: fetch jobs, filter them as
 * Slurm does (active jobs only unless -t says otherwise; -u/--me/-A/-p/-j/-n
 * lists), and print with fmt_squeue.c, or as JSON with --json.
 *
 * The server lists every job it holds (pending, running and recently
 * finished); the filters are applied here, which keeps one request per
 * command whatever the filters.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_common.h"
#include "cli/fmt_job.h"

/* The job fields some squeue column, sort key or filter reads (fmt_job.c). */
#define SQUEUE_FIELDS                                                                         \
  "job_id,array_job_id,array_task_id,array_pending,state,reason,priority,submit_time,"        \
  "start_time,end_time,expected_start,nodelist,nnodes,ncpus,ngpus,mem_mib,spec"

/* The states squeue shows by default (px_cli_state_is_active's). */
#define SQUEUE_ACTIVE "PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING,REQUEUED,REQUEUE_HOLD,RESIZING,STOPPED"

static bool job_id_matches(const struct px_job_info *j, const char *ids) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", ids);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *us = strchr(t, '_');
    unsigned long long id = strtoull(t, NULL, 10);
    if (us) {
      if (j->array_job_id == id && j->array_task_id == (uint32_t)strtoul(us + 1, NULL, 10)) return true;
    } else if (j->job_id == id || j->array_job_id == id) {
      return true;
    }
  }
  return false;
}

static bool state_matches(const struct px_job_info *j, const char *states) {
  if (!states) return px_cli_state_is_active(j->state);
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", states);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char name[32];
    if (!strcasecmp(t, "all")) return true;
    if (px_cli_state_normalise(t, name, sizeof name) && !strcmp(name, j->state)) return true;
  }
  return false;
}

bool px_cmd_job_filter(const struct px_job_info *j, const struct px_job_filter *f) {
  const struct px_jobspec *s = &j->spec;
  if (f->users && !px_cmd_list_has(f->users, s->user ? s->user : "")) return false;
  if (f->accounts && !px_cmd_list_has(f->accounts, s->account ? s->account : "")) return false;
  if (f->partitions && !px_cmd_list_has(f->partitions, s->partition ? s->partition : "")) return false;
  if (f->names && !px_cmd_list_has(f->names, s->name ? s->name : "")) return false;
  if (f->jobs && !job_id_matches(j, f->jobs)) return false;
  /* Jobs named by id pass whatever their state (scontrol show job, sacct,
   * scancel); squeue -j gives its active states itself, as Slurm 22.05. */
  if (f->jobs && !f->states) return true;
  return state_matches(j, f->states);
}

/* -t and -j are checked before anything is asked, in Slurm's words. */
static bool args_valid(struct px_cmd *c, const struct px_job_filter *f) {
  char buf[1024];
  const char *bad = px_cmd_bad_state(f->states, buf, sizeof buf);
  if (bad) {
    px_cmd_error(c, "Invalid job state specified: %s", bad);
    px_cmd_error(c, "Valid job states include: " PX_SLURM_JOB_STATES "\n");
    return false;
  }
  if ((bad = px_cmd_bad_job_id(f->jobs, false, buf, sizeof buf))) {
    px_cmd_error(c, "Invalid job id: %s", bad);
    return false;
  }
  return true;
}

/* squeue -j ONE of a job the server does not know: Slurm's load error (a
 * list of ids, or a known job that has ended, is just not shown). */
static bool single_id_unknown(const struct px_job_filter *f, const struct px_job_info *v, size_t n) {
  if (!f->jobs || strchr(f->jobs, ',')) return false;
  for (size_t i = 0; i < n; i++)
    if (job_id_matches(&v[i], f->jobs)) return false;
  return true;
}

/* -r: an array's pending record is one line per pending task, as Slurm
 * prints it (up to MAX_UNROLL tasks a record; past that, the record). */
enum { MAX_UNROLL = 4096 };
static int unroll_arrays(struct px_job_info **pv, size_t *pn) {
  struct px_job_info *v = *pv, *out = NULL;
  size_t n = *pn, k = 0, cap = 0, nt;
  uint32_t *tasks = malloc(MAX_UNROLL * sizeof *tasks);
  int rc = tasks ? 0 : PX_ENOMEM;
  for (size_t i = 0; i < n && !rc; i++) {
    bool record = v[i].array_job_id && v[i].array_task_id == UINT32_MAX;
    if (!record || !px_fmt_array_tasks(v[i].array_pending, tasks, MAX_UNROLL, &nt)) nt = 0;
    if (k + (nt ? nt : 1) > cap) {
      cap = (k + (nt ? nt : 1)) * 2;
      struct px_job_info *g = realloc(out, cap * sizeof *g);
      if (!g) { rc = PX_ENOMEM; break; }
      out = g;
    }
    json_t *one = nt ? px_cli_job_to_json(&v[i]) : NULL; /* each task a copy of the record */
    for (size_t t = 0; t < nt && !rc; t++) {
      if (!one || px_cli_job_from_json(one, &out[k])) rc = PX_ENOMEM;
      else out[k++].array_task_id = tasks[t];
    }
    json_decref(one);
    if (nt) px_cli_job_fini(&v[i]);
    else out[k++] = v[i];
    memset(&v[i], 0, sizeof v[i]); /* moved or freed */
  }
  free(tasks);
  px_cli_jobs_free(v, n);
  *pv = out;
  *pn = k;
  return rc;
}

/* Keeps the jobs that pass, freeing the others. */
static size_t filter_jobs(struct px_job_info *v, size_t n, const struct px_job_filter *f) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (px_cmd_job_filter(&v[i], f)) v[k++] = v[i];
    else px_cli_job_fini(&v[i]);
  }
  return k;
}

/* `phalanx queue` on a terminal: Slurm's columns, but the job name as wide
 * as the longest one that fits the terminal (Slurm cuts names at 8). */
static void native_format(char *buf, size_t n, const struct px_job_info *v, size_t nj, bool long_list) {
  size_t name_w = 8, fixed = long_list ? 90 : 70;
  for (size_t i = 0; i < nj; i++)
    if (v[i].spec.name && strlen(v[i].spec.name) > name_w) name_w = strlen(v[i].spec.name);
  int term = px_cmd_term_width();
  if (term > 0 && name_w + fixed > (size_t)term) name_w = (size_t)term > fixed + 8 ? (size_t)term - fixed : 8;
  if (name_w > 64) name_w = 64;
  snprintf(buf, n, long_list ? "%%.18i %%.9P %%.%zuj %%.8u %%.8T %%.10M %%.9l %%.6D %%R"
                             : "%%.18i %%.9P %%.%zuj %%.8u %%.2t %%.10M %%.6D %%R", name_w);
}

static void squeue_usage(void) {
  printf("Usage: squeue [-A accounts] [-j jobs] [-n names] [-p partitions] [-t states]\n"
         "              [-u users | --me] [-h] [-l] [--start] [-o FORMAT | -O FIELDS]\n"
         "              [-S SORT] [-i SECONDS] [--json]\n");
}

int px_cmd_squeue(int argc, char **argv, bool native) {
  static const struct option longopts[] = {
      {"user", required_argument, 0, 'u'},    {"me", no_argument, 0, 'M'},
      {"account", required_argument, 0, 'A'}, {"partition", required_argument, 0, 'p'},
      {"states", required_argument, 0, 't'},  {"state", required_argument, 0, 't'},
      {"jobs", required_argument, 0, 'j'},    {"name", required_argument, 0, 'n'},
      {"noheader", no_argument, 0, 'h'},      {"long", no_argument, 0, 'l'},
      {"start", no_argument, 0, 'S' + 256},   {"format", required_argument, 0, 'o'},
      {"Format", required_argument, 0, 'O'},  {"sort", required_argument, 0, 'S'},
      {"iterate", required_argument, 0, 'i'}, {"json", no_argument, 0, 'J'},
      {"all", no_argument, 0, 'a'},           {"array", no_argument, 0, 'r'},
      {"verbose", no_argument, 0, 'v'},       {"help", no_argument, 0, 'H'},
      {"usage", no_argument, 0, 'H'},         {"version", no_argument, 0, 'V'},
      {0, 0, 0, 0}};
  struct px_cmd c;
  px_cmd_init(&c, native ? "phalanx queue" : "squeue", !native);
  struct px_job_filter f = {0};
  struct px_squeue_opts o = {.format = getenv("SQUEUE_FORMAT"),
                             .long_format = getenv("SQUEUE_FORMAT2"), .sort = getenv("SQUEUE_SORT")};
  long iterate = 0;
  bool o_array = false;
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "u:A:p:t:j::n:hlo:O:S:i:arvV", longopts, NULL)) != -1) {
    switch (opt) {
    case 'u': f.users = optarg; break;
    case 'M': f.users = px_cmd_user(); break;
    case 'A': f.accounts = optarg; break;
    case 'p': f.partitions = optarg; break;
    case 't': f.states = optarg; break;
    case 'j': f.jobs = optarg ? optarg : (optind < argc && argv[optind][0] != '-') ? argv[optind++] : NULL; break;
    case 'n': f.names = optarg; break;
    case 'h': o.noheader = true; break;
    case 'l': o.long_list = true; break;
    case 'S' + 256: o.start = true; break;
    case 'o': o.format = optarg; o.long_format = NULL; break;
    case 'O': o.long_format = optarg; o.format = NULL; break;
    case 'S': o.sort = optarg; break;
    case 'i': iterate = strtol(optarg, NULL, 10); break;
    case 'J': c.json = true; break;
    case 'r': o_array = true; break;
    case 'a': case 'v': break;
    case 'H': squeue_usage(); return 0;
    case 'V': printf("slurm 22.05.8 (phalanx)\n"); return 0;
    default: squeue_usage(); return 1;
    }
  }
  if (o.long_list && (o.format || o.long_format)) o.long_list = false;
  if (!args_valid(&c, &f)) {
    px_cmd_fini(&c);
    return 1;
  }
  /* -j without -t still shows only the active states, as Slurm 22.05 does
   * (a script's "while squeue -j ID | grep -q ID" ends with the job) */
  struct px_job_filter active = f;
  if (f.jobs && !f.states) active.states = SQUEUE_ACTIVE;
  int rc = 0;
  char fmt[128];
  bool user_format = o.format || o.long_format || o.start;
  do {
    struct px_job_info *v = NULL;
    size_t n = 0;
    c.now = (int64_t)time(NULL);
    o.now = c.now;
    /* filtered here: see the file's comment. fields= (a server that does
     * not know it sends everything) leaves out what no column shows. */
    if (px_cmd_get_jobs(&c, c.json ? "/v1/jobs" : "/v1/jobs?fields=" SQUEUE_FIELDS, &v, &n)) {
      rc = 1;
      break;
    }
    if (!c.slurm || !single_id_unknown(&f, v, n)) {
      n = filter_jobs(v, n, &active);
    } else {
      fprintf(stderr, "slurm_load_jobs error: Invalid job id specified\n");
      px_cli_jobs_free(v, n);
      rc = 1;
      break;
    }
    if (o_array && unroll_arrays(&v, &n)) {
      px_cmd_error(&c, "out of memory");
      px_cli_jobs_free(v, n);
      rc = 1;
      break;
    }
    if (native && !user_format) {
      native_format(fmt, sizeof fmt, v, n, o.long_list);
      o.format = fmt;
    }
    if (c.json) {
      json_t *arr = json_array();
      for (size_t i = 0; i < n; i++) json_array_append_new(arr, px_cli_job_to_json(&v[i]));
      json_t *top = json_pack("{s:o}", "jobs", arr);
      px_cmd_print_json(top);
      json_decref(top);
    } else {
      struct px_diag d;
      if (px_fmt_squeue(stdout, v, n, &o, &d)) {
        px_cmd_error(&c, "%s", d.msg);
        rc = 1;
      }
    }
    px_cli_jobs_free(v, n);
    fflush(stdout);
    if (iterate > 0 && !rc) {
      sleep((unsigned)iterate);
      printf("\n");
    }
  } while (iterate > 0 && !rc);
  px_cmd_fini(&c);
  return rc;
}
