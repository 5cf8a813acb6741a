/*
 * cmd_export.c - `phalanx export [--since 30d] [--output FILE]`: the
 * cluster's finished jobs from accounting (/v1/accounting) as a trace in the
 * simulator's CSV form (src/sim/trace.h), so that `phalanx sim
 * --from-accounting FILE --config slurm.conf` replays the cluster's own
 * history under other policies (docs/simulator.md, "What-if on your own
 * cluster").
 *
 * One row per attempt that ran, as accounting keeps them: a requeued job's
 * earlier attempts (its runs that a node failure, a preemption or a
 * requeue ended: state REQUEUED, NODE_FAIL, PREEMPTED, as the row says)
 * come right before its last, same job_id, with their own start, end and
 * state, attempt ascending (the attempt column: 0 for the first run, n
 * after n requeues; before the seqs, so that the header still ends in
 * submit_seq,...,dependency, as bench_sim_fidelity.sh checks it); the
 * simulator replays the job once and counts the earlier runs' GPU time as
 * lost (src/sim/trace.h). Times are seconds from the
 * earliest submit of the export; the recorded run (eligible_s, start_s,
 * end_s) travels with the job, and duration_s is end_s - start_s. Jobs that
 * never started (cancelled while pending) have no run to replay: they are
 * counted on stderr, not exported (a requeued job cancelled while it waited
 * again: its attempts that ran are, the last of them its run in a replay).
 * The accounting row keeps the job's time
 * limit; a row written before it did (time_limit_s 0) takes the limit of
 * the job from the server if it still holds it (/v1/jobs?state=all, which
 * lists those that ended past MinJobAge too), else leaves time_limit_s
 * empty (the simulator then estimates one, and a backfill replay's
 * decisions move with it: docs/simulator.md). submit_seq, start_seq and
 * end_seq are the journal seqs of the job's submit, start and end, the
 * order in which the server handled them, which whole seconds lose: the
 * replay handles the events of one second in that order, and cycles where
 * the server's cycles started jobs. dependency is the job's -d as the user
 * wrote it (its ids are this record's job ids; empty when none): the replay
 * holds the job until the jobs it names end. name is the job's name (-J;
 * quoted when it holds a comma, quote or line break): the replay submits
 * the job under it, so that a singleton waits for its namesakes.
 *
 * The nodes' down and drain periods of the same span (accounting's node
 * events, GET /v1/accounting/events: sacctmgr show event) go to a second
 * file beside the first, FILE.nodes.csv for --output FILE.csv (or
 * --nodes-output FILE), so that the jobs trace stays what every trace
 * reader takes (src/sim/node_events.h has its form): node, state (DOWN or
 * DRAIN), start_s and end_s in the jobs' seconds (a period begun before
 * the first submit starts at 0; end_s empty while still open), reason,
 * cause, user, time0_unix_s. Periods that ended before the first submit
 * are left out: they cannot touch the replay.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_common.h"
#include "util/units.h"

#define EXPORT_PAGE 100000 /* the server's largest accounting page */

static const char EXPORT_HEADER[] =
    "job_id,submit_s,eligible_s,start_s,end_s,duration_s,gpus,nodes,user,queue,qos,partition,status,"
    "time_limit_s,array_job_id,array_task_id,name,attempt,submit_seq,start_seq,end_seq,time0_unix_s,dependency\n";

/* By job id, then attempt: each job's rows together, its attempts in order. */
static int by_id_attempt(const void *a, const void *b) {
  const struct px_job_info *x = a, *y = b;
  if (x->job_id != y->job_id) return x->job_id < y->job_id ? -1 : 1;
  return (x->restarts > y->restarts) - (x->restarts < y->restarts);
}

/* Appends every accounting page since `since` to *v. */
static int fetch_all(struct px_cmd *c, int64_t since, struct px_job_info **v, size_t *n) {
  uint64_t after = 0;
  for (;;) {
    char path[160];
    int len = snprintf(path, sizeof path, "/v1/accounting?since=%lld&limit=%d", (long long)since, EXPORT_PAGE);
    if (after) snprintf(path + len, sizeof path - (size_t)len, "&after=%llu", (unsigned long long)after);
    struct px_job_info *page = NULL;
    size_t np = 0;
    if (px_cmd_get_jobs(c, path, &page, &np)) return 1;
    struct px_job_info *all = realloc(*v, (*n + np + 1) * sizeof *all);
    if (!all) {
      px_cli_jobs_free(page, np);
      return 1;
    }
    if (np) memcpy(all + *n, page, np * sizeof *page);
    *v = all;
    *n += np;
    free(page);
    if (np < EXPORT_PAGE) return 0;
    after = all[*n - 1].job_id;
  }
}

/* A CSV field: quoted (RFC 4180) only when it must be. */
static void csv_field(FILE *f, const char *s) {
  if (!s) s = "";
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void write_row(FILE *f, const struct px_job_info *j, int64_t t0) {
  int64_t sub = j->submit_time - t0, start = j->start_time - t0, end = j->end_time - t0;
  fprintf(f, "%llu,%lld,", (unsigned long long)j->job_id, (long long)sub);
  if (j->eligible_time >= j->submit_time && j->eligible_time <= j->start_time)
    fprintf(f, "%lld", (long long)(j->eligible_time - t0));
  fprintf(f, ",%lld,%lld,%lld,%u,%u,", (long long)start, (long long)end, (long long)(end - start), j->ngpus,
          j->nnodes ? j->nnodes : 1);
  csv_field(f, j->spec.user);
  fputc(',', f);
  csv_field(f, j->spec.account);
  fputc(',', f);
  csv_field(f, j->spec.qos);
  fputc(',', f);
  csv_field(f, j->spec.partition);
  fputc(',', f);
  csv_field(f, j->state);
  fputc(',', f);
  if (j->spec.time_limit_s > 0 && j->spec.time_limit_s != PX_TIME_UNLIMITED) fprintf(f, "%lld", (long long)j->spec.time_limit_s);
  fputc(',', f);
  if (j->array_job_id) fprintf(f, "%llu,%u", (unsigned long long)j->array_job_id, j->array_task_id);
  else fputc(',', f);
  fputc(',', f);
  csv_field(f, j->spec.name); /* what a singleton keys on, with the user */
  fprintf(f, ",%u,", j->restarts); /* the attempt: accounting's row of it */
  /* the server's order of its submit and end within a second (empty from
   * a row written before accounting kept it) */
  if (j->submit_seq && j->start_seq && j->end_seq)
    fprintf(f, "%llu,%llu,%llu", (unsigned long long)j->submit_seq, (unsigned long long)j->start_seq,
            (unsigned long long)j->end_seq);
  else fputs(",,", f);
  fprintf(f, ",%lld,", (long long)t0);
  /* -d as the user wrote it; its ids are this record's job ids */
  csv_field(f, j->spec.dependency);
  fputc('\n', f);
}

static bool ran(const struct px_job_info *j) {
  return j->start_time > 0 && j->end_time >= j->start_time && j->start_time >= j->submit_time;
}

/* Keeps every attempt that ran, by job and attempt; returns how many jobs
 * never started (no attempt ran: cancelled while pending). */
static size_t keep_runs(struct px_job_info *v, size_t *n) {
  qsort(v, *n, sizeof *v, by_id_attempt);
  size_t k = 0, never = 0;
  bool job_ran = false; /* an attempt of v[i]'s job so far ran */
  for (size_t i = 0; i < *n; i++) {
    bool first = i == 0 || v[i - 1].job_id != v[i].job_id, last = i + 1 == *n || v[i + 1].job_id != v[i].job_id;
    job_ran = (!first && job_ran) || ran(&v[i]);
    if (last && !job_ran) never++;
    if (!ran(&v[i])) px_cli_job_fini(&v[i]);
    else v[k++] = v[i];
  }
  *n = k;
  return never;
}

static int cmp_id(const void *key, const void *elem) {
  uint64_t id = *(const uint64_t *)key, e = ((const struct px_job_info *)elem)->job_id;
  return (id > e) - (id < e);
}

/* Time limits of the jobs whose accounting row lacks one (written by an
 * older server) from the server, if it still holds them; v is sorted by id. */
static int add_limits(struct px_cmd *c, struct px_job_info *v, size_t n) {
  struct px_job_info *live = NULL;
  size_t nl = 0, lacking = 0;
  for (size_t i = 0; i < n; i++) lacking += v[i].spec.time_limit_s == 0;
  if (!lacking) return 0;
  /* state=all: also the jobs that ended past MinJobAge, which a plain
   * listing hides (squeue's view) */
  if (px_cmd_get_jobs(c, "/v1/jobs?state=all", &live, &nl)) return 1;
  for (size_t i = 0; i < nl; i++) {
    struct px_job_info *j = bsearch(&live[i].job_id, v, n, sizeof *v, cmp_id);
    if (!j) continue;
    while (j > v && j[-1].job_id == j->job_id) j--; /* its first attempt: each of them lacks it */
    for (; j < v + n && j->job_id == live[i].job_id; j++)
      if (!j->spec.time_limit_s) j->spec.time_limit_s = live[i].spec.time_limit_s;
  }
  px_cli_jobs_free(live, nl);
  return 0;
}

static int export_usage(struct px_cmd *c, const char *arg) {
  px_cmd_error(c,
               "unexpected argument '%s' (usage: phalanx export [--since 30d|WHEN] [--output FILE] "
               "[--nodes-output FILE])",
               arg);
  return 2;
}

/* ---- node events (FILE.nodes.csv) ---- */

static const char NODES_HEADER[] = "node,state,start_s,end_s,reason,cause,user,time0_unix_s\n";

/* FILE.nodes.csv for FILE.csv (FILE.nodes.csv for FILE too): heap string. */
static char *nodes_path(const char *out) {
  size_t n = strlen(out);
  if (n >= 4 && !strcmp(out + n - 4, ".csv")) n -= 4;
  char *p = malloc(n + sizeof ".nodes.csv");
  if (p) snprintf(p, n + sizeof ".nodes.csv", "%.*s.nodes.csv", (int)n, out);
  return p;
}

static const char *jstr(const json_t *o, const char *key) {
  const char *v = json_string_value(json_object_get(o, key));
  return v ? v : "";
}

/* One period in the jobs' seconds from t0; false when it ended before t0. */
static bool write_period(FILE *f, const json_t *e, int64_t t0) {
  int64_t start = json_integer_value(json_object_get(e, "start")), end = json_integer_value(json_object_get(e, "end"));
  if (end && end < t0) return false;
  csv_field(f, jstr(e, "node"));
  fputc(',', f);
  csv_field(f, jstr(e, "state"));
  fprintf(f, ",%lld,", (long long)(start > t0 ? start - t0 : 0));
  if (end) fprintf(f, "%lld", (long long)(end - t0));
  const char *texts[] = {jstr(e, "reason"), jstr(e, "cause"), jstr(e, "user")};
  for (size_t k = 0; k < 3; k++) fputc(',', f), csv_field(f, texts[k]);
  fprintf(f, ",%lld\n", (long long)t0);
  return true;
}

/* The node events since `since` into path; 0 or 1 (said why). */
static int export_nodes(struct px_cmd *c, const char *path, int64_t since, int64_t t0) {
  char url[96];
  snprintf(url, sizeof url, "/v1/accounting/events?start=%lld", (long long)(since > t0 ? since : t0));
  long status = 0;
  json_t *doc = NULL;
  if (px_cmd_call(c, "GET", url, NULL, &status, &doc) || status != 200) {
    px_cmd_error(c, "node events: the server answered %ld", status);
    json_decref(doc);
    return 1;
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    px_cmd_error(c, "--nodes-output %s: cannot write", path);
    json_decref(doc);
    return 1;
  }
  fputs(NODES_HEADER, f);
  size_t i, n = 0;
  json_t *e;
  json_array_foreach(json_object_get(doc, "events"), i, e) n += write_period(f, e, t0);
  json_decref(doc);
  fprintf(stderr, "phalanx export: %zu node periods to %s\n", n, path);
  return fclose(f) ? 1 : 0;
}

int px_verb_export(int argc, char **argv) {
  struct px_cmd c;
  px_cmd_init(&c, "phalanx export", false);
  const char *since = "30d", *out = NULL, *nodes_out = NULL;
  int rc = 0;
  for (int i = 1; i < argc && !rc; i++) {
    if (!strcmp(argv[i], "--since") && i + 1 < argc) since = argv[++i];
    else if (!strcmp(argv[i], "--output") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(argv[i], "--nodes-output") && i + 1 < argc) nodes_out = argv[++i];
    else rc = export_usage(&c, argv[i]);
  }
  int64_t t = 0;
  if (!rc && px_cmd_parse_since(&c, since, &t)) rc = 2;
  struct px_job_info *v = NULL;
  size_t n = 0;
  if (!rc && fetch_all(&c, t, &v, &n)) rc = 1;
  FILE *f = rc || !out ? stdout : fopen(out, "w");
  if (!rc && !f) {
    px_cmd_error(&c, "--output %s: cannot write", out);
    rc = 1;
  }
  if (!rc) {
    size_t never = keep_runs(v, &n);
    if (add_limits(&c, v, n)) rc = 1;
    int64_t t0 = n ? v[0].submit_time : 0;
    for (size_t i = 0; i < n; i++)
      if (v[i].submit_time < t0) t0 = v[i].submit_time;
    fputs(EXPORT_HEADER, f);
    for (size_t i = 0; i < n && !rc; i++) write_row(f, &v[i], t0);
    size_t jobs = 0, earlier = 0;
    for (size_t i = 0; i < n; i++) {
      bool later = i + 1 < n && v[i + 1].job_id == v[i].job_id;
      jobs += !later;
      earlier += later;
    }
    fprintf(stderr, "phalanx export: %zu jobs (times from %lld, Unix)", jobs, (long long)t0);
    if (earlier) fprintf(stderr, "; %zu earlier attempts of requeued jobs", earlier);
    if (never) fprintf(stderr, "; %zu never started (cancelled while pending), not exported", never);
    fputc('\n', stderr);
    if (f != stdout && fclose(f)) rc = 1;
    char *np = nodes_out ? strdup(nodes_out) : out ? nodes_path(out) : NULL;
    if (!rc && n && (nodes_out || out)) rc = np ? export_nodes(&c, np, t, t0) : 1;
    free(np);
  }
  px_cli_jobs_free(v, n);
  px_cmd_fini(&c);
  return rc;
}
