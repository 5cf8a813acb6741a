/*
 * fmt_sdiag.c - sdiag's report in Slurm 22.05's layout, from GET /v1/diag's
 * document: the header with the times, the job counts, the main and
 * backfill schedulers' cycles, and the RPCs by message type and by user.
 * Phalanx runs backfill as a stage of each scheduling cycle (docs/
 * slurm-migration.md), so the backfill section counts the cycles in which
 * it ran; the lines Slurm prints only once a backfill cycle has run are
 * printed under the same condition.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <time.h>

#include "cli/cli.h"

static json_int_t num(const json_t *o, const char *a, const char *b) {
  return json_integer_value(json_object_get(b ? json_object_get(o, a) : o, b ? b : a));
}

/* "Fri Dec 04 20:40:24 2026 (1796416824)", as sdiag writes a time. */
static void when(FILE *out, const char *label, int64_t t) {
  char buf[64];
  time_t tt = (time_t)t;
  struct tm tm;
  localtime_r(&tt, &tm);
  strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %Y", &tm);
  fprintf(out, "%s%s (%lld)\n", label, buf, (long long)t);
}

static void header(FILE *out, const json_t *d) {
  fprintf(out, "*******************************************************\n");
  when(out, "sdiag output at ", num(d, "time", NULL));
  when(out, "Data since      ", num(d, "since", NULL));
  fprintf(out, "*******************************************************\n");
  fprintf(out, "Server thread count:  %lld\n", (long long)num(d, "server_thread_count", NULL));
  fprintf(out, "Agent queue size:     %lld\n", (long long)num(d, "agent_queue_size", NULL));
  fprintf(out, "Agent count:          %lld\n", (long long)num(d, "agent_count", NULL));
  fprintf(out, "Agent thread count:   %lld\n", (long long)num(d, "agent_thread_count", NULL));
  fprintf(out, "DBD Agent queue size: %lld\n\n", (long long)num(d, "dbd_agent_queue_size", NULL));
  fprintf(out, "Jobs submitted: %lld\n", (long long)num(d, "jobs", "submitted"));
  fprintf(out, "Jobs started:   %lld\n", (long long)num(d, "jobs", "started"));
  fprintf(out, "Jobs completed: %lld\n", (long long)num(d, "jobs", "completed"));
  fprintf(out, "Jobs canceled:  %lld\n", (long long)num(d, "jobs", "cancelled"));
  fprintf(out, "Jobs failed:    %lld\n\n", (long long)num(d, "jobs", "failed"));
  when(out, "Job states ts:  ", num(d, "job_states_ts", NULL));
  fprintf(out, "Jobs pending:   %lld\n", (long long)num(d, "jobs", "pending"));
  fprintf(out, "Jobs running:   %lld\n\n", (long long)num(d, "jobs", "running"));
}

static void main_sched(FILE *out, const json_t *d) {
  const json_t *m = json_object_get(d, "main");
  json_int_t span = num(d, "time", NULL) - num(d, "since", NULL);
  fprintf(out, "Main schedule statistics (microseconds):\n");
  fprintf(out, "\tLast cycle:   %lld\n", (long long)num(m, "last_us", NULL));
  fprintf(out, "\tMax cycle:    %lld\n", (long long)num(m, "max_us", NULL));
  fprintf(out, "\tTotal cycles: %lld\n", (long long)num(m, "count", NULL));
  if (num(m, "count", NULL)) {
    fprintf(out, "\tMean cycle:   %lld\n", (long long)num(m, "mean_us", NULL));
    fprintf(out, "\tMean depth cycle:  %lld\n", (long long)num(m, "mean_depth", NULL));
  }
  if (span >= 60) /* as Slurm: only once a minute of data is there */
    fprintf(out, "\tCycles per minute: %lld\n", (long long)(num(m, "count", NULL) / (span / 60)));
  fprintf(out, "\tLast queue length: %lld\n\n", (long long)num(m, "queue_length", NULL));
}

static void backfill(FILE *out, const json_t *d) {
  const json_t *b = json_object_get(d, "backfill"), *j = json_object_get(d, "backfill_jobs");
  json_int_t cycles = num(b, "count", NULL);
  fprintf(out, "Backfilling stats\n");
  fprintf(out, "\tTotal backfilled jobs (since last slurm start): %lld\n", (long long)num(j, "total", NULL));
  fprintf(out, "\tTotal backfilled jobs (since last stats cycle start): %lld\n",
          (long long)num(j, "total", NULL));
  fprintf(out, "\tTotal backfilled heterogeneous job components: 0\n");
  fprintf(out, "\tTotal cycles: %lld\n", (long long)cycles);
  if (cycles) when(out, "\tLast cycle when: ", num(j, "when_last_cycle", NULL));
  else fprintf(out, "\tLast cycle when: N/A\n");
  fprintf(out, "\tLast cycle: %lld\n", (long long)num(b, "last_us", NULL));
  fprintf(out, "\tMax cycle:  %lld\n", (long long)num(b, "max_us", NULL));
  if (cycles) fprintf(out, "\tMean cycle: %lld\n", (long long)num(b, "mean_us", NULL));
  fprintf(out, "\tLast depth cycle: %lld\n", (long long)num(b, "last_depth", NULL));
  fprintf(out, "\tLast depth cycle (try sched): %lld\n", (long long)num(b, "last_depth", NULL));
  if (cycles) {
    fprintf(out, "\tDepth Mean: %lld\n", (long long)num(b, "mean_depth", NULL));
    fprintf(out, "\tDepth Mean (try depth): %lld\n", (long long)num(b, "mean_depth", NULL));
  }
  fprintf(out, "\tLast queue length: %lld\n", (long long)num(b, "queue_length", NULL));
  if (cycles) fprintf(out, "\tQueue length mean: %lld\n", (long long)num(b, "mean_depth", NULL));
  fprintf(out, "\tLast table size: 0\n");
  if (cycles) fprintf(out, "\tMean table size: 0\n");
  fprintf(out, "\nLatency for 1000 calls to gettimeofday(): %lld microseconds\n\n",
          (long long)num(d, "gettimeofday_latency_us", NULL));
}

/* One RPC row with its sort key: descending key, ties in the server's
 * order (by count, ties as first seen: as sdiag's). */
struct rpc {
  const json_t *row;
  json_int_t key, id;
  const char *name;
  size_t seq;
};

static int rpc_order(const void *a, const void *b) {
  const struct rpc *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? 1 : -1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void rpcs(FILE *out, const json_t *rows, bool users, char sort_by) {
  const char *idk = users ? "user_id" : "type_id", *namek = users ? "user" : "type";
  const char *keyk = sort_by == 't' ? "total_time_us" : sort_by == 'T' ? "average_time_us" : "count";
  size_t n = json_array_size(rows), i;
  struct rpc *v = calloc(n ? n : 1, sizeof *v);
  json_t *r;
  if (!v) return;
  json_array_foreach(rows, i, r) {
    const char *name = json_string_value(json_object_get(r, namek));
    v[i] = (struct rpc){r, sort_by == 'i' ? -num(r, idk, NULL) : num(r, keyk, NULL), num(r, idk, NULL),
                        name ? name : "", i};
  }
  if (!users) qsort(v, n, sizeof *v, rpc_order); /* users: the server's order (by count) */
  for (i = 0; i < n; i++)
    fprintf(out, users ? "\t%-15s (%8lld) count:%-6lld ave_time:%-6lld total_time:%lld\n"
                       : "\t%-40s(%5lld) count:%-6lld ave_time:%-6lld total_time:%lld\n",
            v[i].name, (long long)v[i].id, (long long)num(v[i].row, "count", NULL),
            (long long)num(v[i].row, "average_time_us", NULL),
            (long long)num(v[i].row, "total_time_us", NULL));
  free(v);
}

/* The whole report, Slurm 22.05's sdiag layout. */
void px_fmt_sdiag(FILE *out, const json_t *d, char sort_by) {
  header(out, d);
  main_sched(out, d);
  backfill(out, d);
  fprintf(out, "Remote Procedure Call statistics by message type\n");
  rpcs(out, json_object_get(d, "rpcs_by_type"), false, sort_by);
  fprintf(out, "\nRemote Procedure Call statistics by user\n");
  rpcs(out, json_object_get(d, "rpcs_by_user"), true, sort_by);
  fprintf(out, "\nPending RPC statistics\n\tNo pending RPCs\n");
}
