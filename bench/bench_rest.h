/*
 * bench_rest.h - rest_submit_per_s, part of bench_server.c (included there:
 * it drives that file's HTTP client and storm of submitting threads).
 *
 * 4 client threads submit single jobs through slurmrestd's
 * POST /slurm/v0.0.39/job/submit (its job_submission body, with
 * X-SLURM-USER-NAME), over the Unix socket, on the same server and in the
 * same run as the native POST /v1/jobs baseline: the two alternate in
 * halves (rest, native, rest, native) so that neither gets the emptier
 * queue. The jobs really accepted are counted from the server's own listing
 * (pending jobs before and after), not from the clients' answers. Prints
 *   rest_submit_per_s                      the slurmrestd-shaped rate
 *   rest_submit_baseline_api_submit_per_s  the native rate of the same run
 *   rest_submit_vs_api_pct                 the first as a share of the second
 *   rest_submit_server_cpu_us, rest_submit_baseline_server_cpu_us
 *                                          the server's CPU per submit of each
 */
#include <pwd.h>

/* Pending jobs the server lists. */
static long listed_pending(struct hconn *h) {
  struct buf out = {0};
  long code = http(h, "GET", "/v1/jobs?state=PENDING&fields=job_id", NULL, &out);
  long n = code == 200 ? (long)count(out.p, "\"job_id\":") : -1;
  free(out.p);
  return n;
}

struct rest_half {
  long acked;
  double secs, cpu_s;
};

static void rest_half(bool rest, long jobs, struct rest_half *acc) {
  rest_shape = rest;
  if (rest) {
    struct passwd *pw = getpwuid(getuid());
    snprintf(extra_header, sizeof extra_header, "X-SLURM-USER-NAME: %s\r\n", pw ? pw->pw_name : "root");
  }
  double t0 = now_s(), cpu0 = proc_cpu_s(server_pid);
  acc->acked += run_clients(sock, 4, jobs, dir);
  acc->secs += now_s() - t0;
  acc->cpu_s += proc_cpu_s(server_pid) - cpu0;
  rest_shape = false;
  extra_header[0] = '\0';
}

static void rest_storm(struct hconn *h, long jobs) {
  struct rest_half rest = {0}, api = {0};
  long before = listed_pending(h);
  for (int round = 0; round < 2; round++) {
    rest_half(true, jobs / 2, &rest);
    rest_half(false, jobs / 2, &api);
  }
  long after = listed_pending(h);
  bool all = before >= 0 && after - before == rest.acked + api.acked && rest.acked == jobs / 2 * 2;
  if (!all)
    fprintf(stderr, "bench_server: rest: %ld + %ld acknowledged, %ld more pending listed\n", rest.acked,
            api.acked, after - before);
  double r = all ? (double)rest.acked / rest.secs : 0, a = (double)api.acked / api.secs;
  printf("rest_submit_per_s %.0f jobs/s\n", r);
  printf("rest_submit_baseline_api_submit_per_s %.0f jobs/s\n", a);
  printf("rest_submit_vs_api_pct %.0f %%\n", a > 0 ? 100 * r / a : 0);
  printf("rest_submit_server_cpu_us %.1f us\n", rest.acked ? rest.cpu_s / (double)rest.acked * 1e6 : 0);
  printf("rest_submit_baseline_server_cpu_us %.1f us\n", api.acked ? api.cpu_s / (double)api.acked * 1e6 : 0);
  fflush(stdout);
}

/* bench_server rest N: only rest_submit_per_s, N submits of each kind. */
static int rest_only(long n) {
  if (setup()) return 1;
  struct hconn h = {.sock = sock, .fd = -1};
  rest_storm(&h, n);
  hconn_close(&h);
  stop_server(SIGTERM);
  return remove_dir();
}
