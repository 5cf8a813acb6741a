/*
 * bench_cli_fmt.c - the CLI's own share of `squeue` with 10,000 pending
 * jobs: decode the server's JSON reply (as it arrives on the wire), sort and
 * print Slurm's default layout. The network and the server are not in this
 * figure (bench_cli.sh measures the whole command).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cli_json.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void) {
  enum { N = 10000 };
  json_t *arr = json_array();
  for (int i = 0; i < N; i++) {
    struct px_job_info j;
    memset(&j, 0, sizeof j);
    px_jobspec_init(&j.spec);
    j.job_id = 100000 + (uint64_t)i;
    j.spec.name = "train";
    j.spec.user = "alice";
    j.spec.account = "llm";
    j.spec.partition = i % 3 ? "batch" : "urgent";
    j.spec.time_limit_s = 3600;
    j.spec.gpus_per_node = 8;
    snprintf(j.state, sizeof j.state, "PENDING");
    snprintf(j.reason, sizeof j.reason, "Priority");
    j.priority = (uint32_t)(i * 7919 % 10007);
    j.submit_time = 1796218730 - i;
    json_array_append_new(arr, px_cli_job_to_json(&j));
  }
  json_t *top = json_pack("{s:o}", "jobs", arr);
  char *wire = json_dumps(top, JSON_COMPACT);
  json_decref(top);
  double best = 1e9;
  for (int r = 0; r < 5; r++) {
    double t0 = now_ms();
    struct px_job_info *v;
    size_t n; /* the decoder squeue uses: straight from the text, no jansson tree */
    if (px_cli_jobs_from_text(wire, strlen(wire), &v, &n) || n != N) return 1;
    double t1 = now_ms();
    FILE *out = fopen("/dev/null", "w");
    struct px_squeue_opts o = {.now = 1796218730};
    struct px_diag d;
    if (px_fmt_squeue(out, v, n, &o, &d)) return 1;
    fclose(out);
    px_cli_jobs_free(v, n);
    double ms = now_ms() - t0;
    if (getenv("PX_BENCH_VERBOSE")) fprintf(stderr, "decode %.1f ms, format %.1f ms\n", t1 - t0, ms - (t1 - t0));
    if (ms < best) best = ms;
  }
  free(wire);
  printf("cli_squeue_10k_client_ms %.1f ms\n", best);
  return 0;
}
