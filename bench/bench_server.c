/*
 * bench_server.c - server benchmarks, and the load client of the durability
 * test. Talks HTTP over the server's Unix socket with libcurl (one easy
 * handle, i.e. one keep-alive connection, per client thread).
 *
 *   bench_server                     start a server in a temp dir and print
 *                                    api_submit_per_s, api_batch_submit_per_s,
 *                                    api_list_100k_ms, recovery_s_100k,
 *                                    api_read_storm_cycle_slowdown_pct
 *   bench_server storm SOCK CLIENTS JOBS OUTDIR [TAG]
 *                                    CLIENTS threads submit JOBS single jobs
 *                                    in all; each acknowledged job is written
 *                                    as "ID MARKER" to OUTDIR/ack.K at once
 *                                    (MARKER: TAGcK-N, also in the job's
 *                                    comment, script and environment),
 *                                    so a kill -9 of the server loses nothing
 *                                    the client heard yes for.
 *
 * The server binary is $PHALANX (default build/phalanx next to this one).
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct buf {
  char *p;
  size_t len;
};

static size_t on_data(char *d, size_t sz, size_t n, void *ctx) {
  struct buf *b = ctx;
  char *p = realloc(b->p, b->len + sz * n + 1);
  if (!p) return 0;
  memcpy(p + b->len, d, sz * n);
  b->p = p;
  b->len += sz * n;
  b->p[b->len] = '\0';
  return sz * n;
}

/* One request; returns the HTTP status (0 on transport error), body in out. */
static long http(CURL *c, const char *sock, const char *method, const char *path,
                 const char *body, struct buf *out) {
  char url[512];
  snprintf(url, sizeof url, "http://localhost%s", path);
  out->len = 0;
  if (out->p) out->p[0] = '\0';
  curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, body ? (long)strlen(body) : 0L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
  if (body) {
    static struct curl_slist *hdr;
    if (!hdr) hdr = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
  }
  if (curl_easy_perform(c) != CURLE_OK) return 0;
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  return code;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *tag = ""; /* storm: marks this run's jobs apart from earlier runs' */

static void job_json(char *out, size_t n, int client, long k) {
  snprintf(out, n,
           "{\"name\":\"storm\",\"comment\":\"%sc%d-%ld\",\"gpus_per_node\":1,\"time_limit_s\":600,"
           "\"script\":\"#!/bin/sh\\n# marker %sc%d-%ld\\nsleep 1\\n\",\"env\":[\"PX_MARK=%sc%d-%ld\"]}",
           tag, client, k, tag, client, k, tag, client, k);
}

/* ---- storm: concurrent single submits, acknowledgements recorded ---- */

struct storm {
  const char *sock, *outdir;
  int client;
  long jobs;
  long acked;
};

static void *storm_client(void *arg) {
  struct storm *st = arg;
  char path[512], body[512], line[128];
  snprintf(path, sizeof path, "%s/ack.%d", st->outdir, st->client);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  CURL *c = curl_easy_init();
  struct buf out = {0};
  for (long k = 0; fd >= 0 && c && k < st->jobs; k++) {
    char spec[400];
    job_json(spec, sizeof spec, st->client, k);
    snprintf(body, sizeof body, "{\"job\":%s}", spec);
    long code = http(c, st->sock, "POST", "/v1/jobs", body, &out);
    if (code == 0) break; /* the server died: stop */
    if (code != 201) continue;
    json_t *o = json_loads(out.p, 0, NULL);
    int n = snprintf(line, sizeof line, "%lld %sc%d-%ld\n",
                     (long long)json_integer_value(json_object_get(o, "job_id")), tag, st->client, k);
    json_decref(o);
    if (write(fd, line, (size_t)n) != n) break;
    st->acked++;
  }
  free(out.p);
  if (c) curl_easy_cleanup(c);
  if (fd >= 0) close(fd);
  return NULL;
}

static long run_clients(const char *sock, int nclients, long jobs, const char *outdir) {
  pthread_t tid[64];
  struct storm st[64];
  if (nclients > 64) nclients = 64;
  for (int i = 0; i < nclients; i++) {
    st[i] = (struct storm){sock, outdir, i, jobs / nclients + (i < jobs % nclients), 0};
    pthread_create(&tid[i], NULL, storm_client, &st[i]);
  }
  long acked = 0;
  for (int i = 0; i < nclients; i++) {
    pthread_join(tid[i], NULL);
    acked += st[i].acked;
  }
  return acked;
}

/* ---- the benchmark: a server of our own ---- */

static char dir[64], sock[128], phalanx[1024];
static pid_t server_pid;

static int start_server(void) {
  char conf[128], state[128];
  snprintf(conf, sizeof conf, "%s/slurm.conf", dir);
  snprintf(state, sizeof state, "%s/state", dir);
  server_pid = fork();
  if (server_pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    execl(phalanx, phalanx, "server", "--config", conf, "--state-dir", state, "--rate-limit", "0",
          "--log-level", "warn", (char *)NULL);
    _exit(127);
  }
  CURL *c = curl_easy_init();
  struct buf out = {0};
  double deadline = now_s() + 120;
  long code = 0;
  while (now_s() < deadline && (code = http(c, sock, "GET", "/v1/whoami", NULL, &out)) != 200)
    usleep(5000); /* waiting on a condition, with a deadline */
  free(out.p);
  curl_easy_cleanup(c);
  return code == 200 ? 0 : -1;
}

static void stop_server(int sig) {
  kill(server_pid, sig);
  waitpid(server_pid, NULL, 0);
}

static long batch_submit(CURL *c, int batches, int per_batch) {
  size_t cap = (size_t)per_batch * 420 + 64;
  char *body = malloc(cap), spec[400];
  struct buf out = {0};
  long ok = 0;
  for (int b = 0; b < batches; b++) {
    size_t len = (size_t)snprintf(body, cap, "{\"jobs\":[");
    for (int k = 0; k < per_batch; k++) {
      job_json(spec, sizeof spec, 100 + b, k);
      len += (size_t)snprintf(body + len, cap - len, "%s%s", k ? "," : "", spec);
    }
    snprintf(body + len, cap - len, "]}");
    if (http(c, sock, "POST", "/v1/jobs", body, &out) == 201) ok += per_batch;
  }
  free(body);
  free(out.p);
  return ok;
}

/* Main-thread CPU seconds in cycles and the cycle count, from /metrics. */
static int cycle_cpu(CURL *c, double *cpu, double *cycles) {
  struct buf out = {0};
  if (http(c, sock, "GET", "/metrics", NULL, &out) != 200) return -1;
  char *p = strstr(out.p, "\nphalanx_scheduler_cycle_cpu_seconds_total ");
  char *q = strstr(out.p, "\nphalanx_scheduler_cycles_total ");
  int rc = p && q ? 0 : -1;
  if (!rc) {
    *cpu = strtod(strchr(p + 1, ' ') + 1, NULL);
    *cycles = strtod(strchr(q + 1, ' ') + 1, NULL);
  }
  free(out.p);
  return rc;
}

static atomic_bool readers_stop;

static void *reader(void *arg) {
  (void)arg;
  CURL *c = curl_easy_init();
  struct buf out = {0};
  while (!atomic_load(&readers_stop)) http(c, sock, "GET", "/v1/jobs?state=RUNNING&limit=100", NULL, &out);
  free(out.p);
  curl_easy_cleanup(c);
  return NULL;
}

/* CPU per cycle while a trickle of submits keeps the scheduler cycling. */
static double cpu_per_cycle(CURL *c, double seconds) {
  double cpu0, cyc0, cpu1, cyc1;
  cycle_cpu(c, &cpu0, &cyc0);
  double end = now_s() + seconds;
  while (now_s() < end) batch_submit(c, 1, 5);
  cycle_cpu(c, &cpu1, &cyc1);
  return cyc1 > cyc0 ? (cpu1 - cpu0) / (cyc1 - cyc0) : 0;
}

static double read_storm(CURL *c) {
  double quiet = cpu_per_cycle(c, 3);
  pthread_t tid[200];
  atomic_store(&readers_stop, false);
  for (int i = 0; i < 200; i++) pthread_create(&tid[i], NULL, reader, NULL);
  double storm = cpu_per_cycle(c, 3);
  atomic_store(&readers_stop, true);
  for (int i = 0; i < 200; i++) pthread_join(tid[i], NULL);
  return quiet > 0 ? (storm - quiet) / quiet * 100.0 : 0;
}

static int bench(void) {
  snprintf(dir, sizeof dir, "/tmp/px-bench-XXXXXX");
  if (!mkdtemp(dir)) return 1;
  snprintf(sock, sizeof sock, "%s/state/phalanx.sock", dir);
  char path[128];
  snprintf(path, sizeof path, "%s/slurm.conf", dir);
  FILE *f = fopen(path, "w");
  fprintf(f, "ClusterName=bench\nAllowRootJobs=YES\n"
             "NodeName=b[001-064] CPUs=64 RealMemory=512G Gres=gpu:h100:8\n"
             "PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n");
  fclose(f);
  snprintf(path, sizeof path, "%s/accounts.conf", dir);
  f = fopen(path, "w");
  fprintf(f, "Account=bench Users=root\n");
  fclose(f);
  if (start_server()) return fprintf(stderr, "bench_server: server did not start\n"), 1;
  CURL *c = curl_easy_init();

  double t0 = now_s();
  long n = run_clients(sock, 4, 20000, dir);
  printf("api_submit_per_s %.0f jobs/s\n", (double)n / (now_s() - t0));
  fflush(stdout);

  t0 = now_s();
  n = batch_submit(c, 50, 1000);
  printf("api_batch_submit_per_s %.0f jobs/s\n", (double)n / (now_s() - t0));
  fflush(stdout);

  batch_submit(c, 30, 1000); /* 100,000 jobs in all */
  struct buf out = {0};
  double best = 1e9;
  for (int i = 0; i < 3; i++) {
    t0 = now_s();
    long code = http(c, sock, "GET", "/v1/jobs", NULL, &out);
    double ms = (now_s() - t0) * 1000;
    if (code == 200 && ms < best) best = ms;
  }
  json_t *o = json_loads(out.p, 0, NULL);
  fprintf(stderr, "bench_server: listed %zu jobs\n", json_array_size(json_object_get(o, "jobs")));
  json_decref(o);
  printf("api_list_100k_ms %.0f ms\n", best);
  fflush(stdout);

  printf("api_read_storm_cycle_slowdown_pct %.1f %%\n", read_storm(c));
  fflush(stdout);

  stop_server(SIGKILL);
  t0 = now_s();
  if (start_server()) return fprintf(stderr, "bench_server: restart failed\n"), 1;
  printf("recovery_s_100k %.2f s\n", now_s() - t0);
  stop_server(SIGTERM);
  free(out.p);
  curl_easy_cleanup(c);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  signal(SIGPIPE, SIG_IGN);
  if ((argc == 6 || argc == 7) && !strcmp(argv[1], "storm")) {
    if (argc == 7) tag = argv[6];
    long n = run_clients(argv[2], (int)strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10), argv[5]);
    printf("acknowledged %ld\n", n);
    return 0;
  }
  const char *env = getenv("PHALANX");
  if (env) {
    snprintf(phalanx, sizeof phalanx, "%s", env);
  } else {
    char self[900];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len < 0) return 1;
    self[len] = '\0';
    *strrchr(self, '/') = '\0';
    snprintf(phalanx, sizeof phalanx, "%s/../phalanx", self);
  }
  return bench();
}
