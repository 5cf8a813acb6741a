/*
 * bench_server.c - server benchmarks, and the load client of the durability
 * test. Talks raw HTTP/1.1 over the server's Unix socket (one keep-alive
 * connection per client thread, no library in between).
 *
 *   bench_server                     start a server in a temp dir and print
 *                                    api_submit_per_s, api_batch_submit_per_s,
 *                                    api_list_100k_ms, recovery_s_100k,
 *                                    api_read_storm_cycle_slowdown_pct (wall
 *                                    p50; _p99_ beside it; _cpu_ the CPU
 *                                    time per cycle, the former figure),
 *                                    api_submit_latency_p50_us (sbatch:
 *                                    one submit per connection, in turn)
 *   bench_server latency N           only N sequential submits, on new
 *                                    connections then on one kept alive
 *   bench_server submit N            only api_submit_per_s, N submits
 *   bench_server rest N              only rest_submit_per_s (slurmrestd's
 *                                    job/submit) beside the native rate,
 *                                    N submits of each (bench_rest.h)
 *   bench_server reads               only api_read_storm_cycle_slowdown_pct
 *   bench_server storm SOCK CLIENTS JOBS OUTDIR [TAG]
 *                                    CLIENTS threads submit JOBS single jobs
 *                                    in all; each acknowledged job is written
 *                                    as "ID MARKER" to OUTDIR/ack.K at once
 *                                    (MARKER: TAGcK-N, also in the job's
 *                                    comment, script and environment),
 *                                    so a kill -9 of the server loses nothing
 *                                    the client heard yes for.
 *
 * The server binary is $PHALANX (default build/phalanx next to this one);
 * PX_BENCH_STORE, when set, is its --store (bench_ha.sh: PostgreSQL).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- a minimal HTTP/1.1 client over the Unix socket ----
 * Keep-alive, Content-Length or chunked answers. Cheap on purpose: the
 * benchmark measures the server, and the client shares its two cores. */

struct buf {
  char *p;
  size_t len, cap;
};

static bool buf_reserve(struct buf *b, size_t more) {
  if (b->len + more + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 65536;
  while (cap < b->len + more + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) return false;
  b->p = p;
  b->cap = cap;
  return true;
}

struct hconn {
  const char *sock;
  int fd;
  char in[65536];   /* read-ahead */
  size_t pos, len;
};

static int hconn_connect(struct hconn *h) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", h->sock);
  h->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  h->pos = h->len = 0;
  if (h->fd >= 0 && connect(h->fd, (struct sockaddr *)&sa, sizeof sa) == 0) return 0;
  if (h->fd >= 0) close(h->fd);
  h->fd = -1;
  return -1;
}

static void hconn_close(struct hconn *h) {
  if (h->fd >= 0) close(h->fd);
  h->fd = -1;
}

static bool fill(struct hconn *h) {
  if (h->pos < h->len) return true;
  ssize_t n;
  do n = read(h->fd, h->in, sizeof h->in);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  h->pos = 0;
  h->len = (size_t)n;
  return true;
}

/* One line (CRLF stripped) into line; false at EOF or when too long. */
static bool read_line(struct hconn *h, char *line, size_t size) {
  size_t n = 0;
  for (;;) {
    if (!fill(h)) return false;
    char ch = h->in[h->pos++];
    if (ch == '\n') break;
    if (n + 1 >= size) return false;
    line[n++] = ch;
  }
  if (n && line[n - 1] == '\r') n--;
  line[n] = '\0';
  return true;
}

static bool read_n(struct hconn *h, struct buf *out, size_t n) {
  if (!buf_reserve(out, n)) return false;
  while (n) {
    if (!fill(h)) return false;
    size_t k = h->len - h->pos < n ? h->len - h->pos : n;
    memcpy(out->p + out->len, h->in + h->pos, k);
    out->len += k;
    h->pos += k;
    n -= k;
  }
  out->p[out->len] = '\0';
  return true;
}

static bool write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

static char extra_header[160]; /* rest: slurmrestd's X-SLURM-USER-NAME line */

/* One exchange on an open connection: the status, or 0. */
static long exchange(struct hconn *h, const char *method, const char *path, const char *body,
                     struct buf *out) {
  char head[1024], line[1024];
  size_t blen = body ? strlen(body) : 0;
  int n = snprintf(head, sizeof head,
                   "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Length: %zu\r\n%s%s\r\n",
                   method, path, blen, body ? "Content-Type: application/json\r\n" : "", extra_header);
  if (!write_all(h->fd, head, (size_t)n) || (blen && !write_all(h->fd, body, blen))) return 0;
  long status = 0;
  if (!read_line(h, line, sizeof line) || sscanf(line, "HTTP/1.%*d %ld", &status) != 1) return 0;
  long long clen = -1;
  bool chunked = false, close_after = false;
  while (read_line(h, line, sizeof line) && line[0]) {
    if (!strncasecmp(line, "Content-Length:", 15)) clen = strtoll(line + 15, NULL, 10);
    if (!strncasecmp(line, "Transfer-Encoding:", 18) && strstr(line, "chunked")) chunked = true;
    if (!strncasecmp(line, "Connection:", 11) && strstr(line, "close")) close_after = true;
  }
  out->len = 0;
  if (!buf_reserve(out, 0)) return 0;
  out->p[0] = '\0';
  if (chunked) {
    for (;;) {
      if (!read_line(h, line, sizeof line)) return 0;
      size_t k = (size_t)strtoull(line, NULL, 16);
      if (k == 0) {
        while (read_line(h, line, sizeof line) && line[0]) { /* trailers */
        }
        break;
      }
      if (!read_n(h, out, k) || !read_line(h, line, sizeof line)) return 0;
    }
  } else if (clen >= 0) {
    if (!read_n(h, out, (size_t)clen)) return 0;
  } else {
    while (fill(h)) read_n(h, out, h->len - h->pos);
    close_after = true;
  }
  if (close_after) hconn_close(h);
  return status;
}

/* One request, reconnecting once when a kept-alive connection turned out
 * closed: the HTTP status, 0 when the server cannot be reached. */
static long http(struct hconn *h, const char *method, const char *path, const char *body,
                 struct buf *out) {
  bool reused = h->fd >= 0;
  if (!reused && hconn_connect(h)) return 0;
  long st = exchange(h, method, path, body, out);
  if (!st) hconn_close(h);
  if (st || !reused || hconn_connect(h)) return st;
  st = exchange(h, method, path, body, out);
  if (!st) hconn_close(h);
  return st;
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

/* The same job as slurmrestd's job/submit takes it (bench_rest.h). */
static bool rest_shape;
static void rest_json(char *out, size_t n, int client, long k) {
  snprintf(out, n,
           "{\"job\":{\"name\":\"storm\",\"comment\":\"%sc%d-%ld\",\"tres_per_node\":\"gres:gpu:1\","
           "\"time_limit\":10,\"environment\":[\"PX_MARK=%sc%d-%ld\"]},"
           "\"script\":\"#!/bin/sh\\n# marker %sc%d-%ld\\nsleep 1\\n\"}",
           tag, client, k, tag, client, k, tag, client, k);
}

/* ---- storm: concurrent single submits, acknowledgements recorded ---- */

struct storm {
  const char *sock, *outdir;
  int client;
  long jobs;
  long acked, refused;
};

static void *storm_client(void *arg) {
  struct storm *st = arg;
  char path[512], body[512], line[128];
  snprintf(path, sizeof path, "%s/ack.%d", st->outdir, st->client);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  struct hconn h = {.sock = st->sock, .fd = -1};
  struct buf out = {0};
  for (long k = 0; fd >= 0 && k < st->jobs; k++) {
    char spec[400];
    job_json(spec, sizeof spec, st->client, k);
    snprintf(body, sizeof body, "{\"job\":%s}", spec);
    if (rest_shape) rest_json(body, sizeof body, st->client, k);
    long code = http(&h, "POST", rest_shape ? "/slurm/v0.0.39/job/submit" : "/v1/jobs", body, &out);
    if (code == 0) break; /* the server died: stop */
    if (code != (rest_shape ? 200 : 201)) {
      st->refused++;
      continue;
    }
    const char *id = strstr(out.p, "\"job_id\":");
    int n = snprintf(line, sizeof line, "%lld %sc%d-%ld\n", id ? strtoll(id + 9, NULL, 10) : 0LL,
                     tag, st->client, k);
    if (write(fd, line, (size_t)n) != n) break;
    st->acked++;
  }
  free(out.p);
  hconn_close(&h);
  if (fd >= 0) close(fd);
  return NULL;
}

static long run_clients(const char *sock, int nclients, long jobs, const char *outdir) {
  pthread_t tid[64];
  struct storm st[64];
  if (nclients > 64) nclients = 64;
  for (int i = 0; i < nclients; i++) {
    st[i] = (struct storm){sock, outdir, i, jobs / nclients + (i < jobs % nclients), 0, 0};
    pthread_create(&tid[i], NULL, storm_client, &st[i]);
  }
  long acked = 0, refused = 0;
  for (int i = 0; i < nclients; i++) {
    pthread_join(tid[i], NULL);
    acked += st[i].acked;
    refused += st[i].refused;
  }
  if (refused) fprintf(stderr, "bench_server: %ld submits refused\n", refused);
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
    const char *store = getenv("PX_BENCH_STORE"); /* another backend (bench_ha.sh: PostgreSQL) */
    if (store)
      execl(phalanx, phalanx, "server", "--config", conf, "--state-dir", state, "--rate-limit", "0",
            "--log-level", "warn", "--store", store, (char *)NULL);
    else
      execl(phalanx, phalanx, "server", "--config", conf, "--state-dir", state, "--rate-limit", "0",
            "--log-level", "warn", (char *)NULL);
    _exit(127);
  }
  struct hconn h = {.sock = sock, .fd = -1};
  struct buf out = {0};
  double deadline = now_s() + 120;
  long code = 0;
  while (now_s() < deadline && (code = http(&h, "GET", "/v1/whoami", NULL, &out)) != 200)
    usleep(2000); /* waiting on a condition, with a deadline */
  free(out.p);
  hconn_close(&h);
  return code == 200 ? 0 : -1;
}

static void stop_server(int sig) {
  kill(server_pid, sig);
  waitpid(server_pid, NULL, 0);
}

/* Batches of per_batch jobs; the jobs acknowledged. */
static long batch_submit(struct hconn *h, int batches, int per_batch) {
  size_t cap = (size_t)per_batch * 420 + 64;
  char *body = malloc(cap), spec[400];
  struct buf out = {0};
  long ok = 0;
  for (int b = 0; body && b < batches; b++) {
    size_t len = (size_t)snprintf(body, cap, "{\"jobs\":[");
    for (int k = 0; k < per_batch; k++) {
      job_json(spec, sizeof spec, 100 + b, k);
      len += (size_t)snprintf(body + len, cap - len, "%s%s", k ? "," : "", spec);
    }
    snprintf(body + len, cap - len, "]}");
    long st = http(h, "POST", "/v1/jobs", body, &out);
    if (st == 201) ok += per_batch;
    else fprintf(stderr, "bench_server: batch refused (%ld): %.200s\n", st, out.p ? out.p : "");
  }
  free(body);
  free(out.p);
  return ok;
}

/* Main-thread CPU seconds in cycles and the cycle count, from /metrics. */
static int cycle_cpu(struct hconn *h, double *cpu, double *cycles) {
  struct buf out = {0};
  int rc = -1;
  if (http(h, "GET", "/metrics", NULL, &out) == 200) {
    char *p = strstr(out.p, "\nphalanx_scheduler_cycle_cpu_seconds_total ");
    char *q = strstr(out.p, "\nphalanx_scheduler_cycles_total ");
    if (p && q) {
      *cpu = strtod(strchr(p + 1, ' ') + 1, NULL);
      *cycles = strtod(strchr(q + 1, ' ') + 1, NULL);
      rc = 0;
    }
  }
  free(out.p);
  return rc;
}

/* A sample of /metrics by name (first match), or -1. */
static double metric(struct hconn *h, const char *name) {
  struct buf out = {0};
  double v = -1;
  char key[160];
  snprintf(key, sizeof key, "\n%s ", name);
  if (http(h, "GET", "/metrics", NULL, &out) == 200) {
    char *p = strstr(out.p, key);
    if (p) v = strtod(p + strlen(key), NULL);
  }
  free(out.p);
  return v;
}

enum { M_REQ_SUM, M_REQ_N, M_COMMIT_SUM, M_COMMIT_N, M_CYCLE_SUM, M_CYCLE_N, M_COUNT };
static void phases(double *v);

/* Why the single-submit figure is what it is: with 4 clients each waiting
 * for its answer, a group commit holds at most 4 jobs, so jobs/s is bounded
 * by 4 / (commit latency + the rest of a round trip). */
static void commit_report(const double *m0, long jobs, double secs) {
  double m1[M_COUNT];
  phases(m1);
  double n = m1[M_COMMIT_N] - m0[M_COMMIT_N], sum = m1[M_COMMIT_SUM] - m0[M_COMMIT_SUM];
  double cycles = m1[M_CYCLE_SUM] - m0[M_CYCLE_SUM];
  if (n <= 0 || sum < 0) return;
  fprintf(stderr,
          "bench_server: %ld submits in %.0f group commits (%.2f jobs each), commit %.3f ms mean,"
          " %.0f%% of the time in commits, %.0f%% in %.0f scheduling cycles\n",
          jobs, n, (double)jobs / n, sum / n * 1000, sum / secs * 100, cycles / secs * 100,
          m1[M_CYCLE_N] - m0[M_CYCLE_N]);
}

/* ---- one durable submit, request in to answer out ----
 * As sbatch does it: a new connection per submit, one at a time. The
 * server's CPU per submit comes from its /proc stat (all threads), the main
 * loop's from its thread's schedstat (ns), so that other processes on the
 * two cores do not count. */

/* CPU seconds of the server process, all threads (utime + stime). */
static double proc_cpu_s(pid_t pid) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  text[n] = '\0';
  char *p = strrchr(text, ')');
  unsigned long long ut = 0, st = 0;
  /* after ")": state(3) ... utime is field 14, stime 15 */
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
    return -1;
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* CPU seconds of the server's main thread (the main loop), in ns precision. */
static double main_thread_cpu_s(pid_t pid) {
  char path[64];
  unsigned long long ns = 0;
  snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  if (fscanf(f, "%llu", &ns) != 1) ns = 0;
  fclose(f);
  return (double)ns / 1e9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* n sequential submits, each on a new connection when fresh (sbatch) or on
 * one kept-alive connection: latencies in us, sorted, into lat. */
static long sequential_submits(int n, bool fresh, double *lat) {
  struct hconn h = {.sock = sock, .fd = -1};
  struct buf out = {0};
  char spec[400], body[512];
  long ok = 0;
  for (int k = 0; k < n; k++) {
    job_json(spec, sizeof spec, 900 + fresh, k);
    snprintf(body, sizeof body, "{\"job\":%s}", spec);
    double t0 = now_s();
    long code = http(&h, "POST", "/v1/jobs", body, &out);
    lat[k] = (now_s() - t0) * 1e6;
    ok += code == 201;
    if (fresh) hconn_close(&h);
  }
  hconn_close(&h);
  free(out.p);
  qsort(lat, (size_t)n, sizeof *lat, cmp_double);
  return ok;
}

/* Where a submit's time goes, from the server's own histograms: sums and
 * counts of request time (headers in to answer ready), commits and cycles. */
static const char *const phase_metrics[M_COUNT] = {
    "phalanx_api_request_duration_seconds_sum{endpoint=\"/v1/jobs\",status=\"201\"}",
    "phalanx_api_request_duration_seconds_count{endpoint=\"/v1/jobs\",status=\"201\"}",
    "phalanx_journal_commit_duration_seconds_sum", "phalanx_journal_commit_duration_seconds_count",
    "phalanx_scheduler_cycle_duration_seconds_sum", "phalanx_scheduler_cycle_duration_seconds_count"};

static void phases(double *v) {
  struct hconn h = {.sock = sock, .fd = -1};
  for (int i = 0; i < M_COUNT; i++) v[i] = metric(&h, phase_metrics[i]);
  hconn_close(&h);
}

static double per(const double *a, const double *b, int sum) {
  double n = b[sum + 1] - a[sum + 1];
  return n > 0 ? (b[sum] - a[sum]) / n * 1e6 : 0;
}

static void latency_report(const char *name, int n, bool fresh) {
  double *lat = calloc((size_t)n, sizeof *lat), m0[M_COUNT], m1[M_COUNT];
  if (!lat) return;
  phases(m0);
  double cpu0 = proc_cpu_s(server_pid), main0 = main_thread_cpu_s(server_pid);
  long ok = sequential_submits(n, fresh, lat);
  double cpu = proc_cpu_s(server_pid) - cpu0, main_cpu = main_thread_cpu_s(server_pid) - main0;
  phases(m1);
  if (ok != n) fprintf(stderr, "bench_server: %ld of %d sequential submits refused\n", n - ok, n);
  printf("%s_p50_us %.0f us\n", name, lat[n / 2]);
  fprintf(stderr, "bench_server: %s: p10 %.0f p90 %.0f p99 %.0f us; server CPU %.1f us per submit"
          " (main loop %.1f us); in the server %.0f us mean, commit %.0f us mean, %.0f cycles"
          " of %.0f us\n", name, lat[n / 10], lat[n * 9 / 10], lat[n * 99 / 100],
          cpu / n * 1e6, main_cpu / n * 1e6, per(m0, m1, M_REQ_SUM), per(m0, m1, M_COMMIT_SUM),
          m1[M_CYCLE_N] - m0[M_CYCLE_N], per(m0, m1, M_CYCLE_SUM));
  printf("%s_server_cpu_us %.1f us\n", name, cpu / n * 1e6);
  fflush(stdout);
  free(lat);
}

static atomic_bool readers_stop, trickle_stop;
static atomic_long reads_done;

static void *reader(void *arg) {
  (void)arg;
  struct hconn h = {.sock = sock, .fd = -1};
  struct buf out = {0};
  /* squeue in a loop: a page of the queue (the CLI pages through long ones) */
  while (!atomic_load(&readers_stop))
    if (http(&h, "GET", "/v1/jobs?limit=1000", NULL, &out) == 200) atomic_fetch_add(&reads_done, 1);
  free(out.p);
  hconn_close(&h);
  return NULL;
}

/* A trickle of small submits, so that every cycle has new work, quiet or not. */
static void *trickle(void *arg) {
  (void)arg;
  struct hconn h = {.sock = sock, .fd = -1};
  while (!atomic_load(&trickle_stop)) {
    batch_submit(&h, 1, 5);
    usleep(20000);
  }
  hconn_close(&h);
  return NULL;
}

/* The server's cycle-duration histogram (wall time, /metrics): cumulative
 * counts per bucket, +Inf last. */
enum { HBUCKETS = 16 };
struct cyc_hist {
  double le[HBUCKETS], n[HBUCKETS];
  int len;
};

static int cycle_hist(struct hconn *h, struct cyc_hist *o) {
  static const char key[] = "\nphalanx_scheduler_cycle_duration_seconds_bucket{le=\"";
  struct buf out = {0};
  o->len = 0;
  if (http(h, "GET", "/metrics", NULL, &out) == 200)
    for (char *p = out.p; (p = strstr(p, key)) && o->len < HBUCKETS; p++) {
      char *v = p + sizeof key - 1;
      o->le[o->len] = strncmp(v, "+Inf", 4) ? strtod(v, NULL) : INFINITY;
      o->n[o->len++] = strtod(strchr(v, ' ') + 1, NULL);
    }
  free(out.p);
  return o->len > 1 ? 0 : -1;
}

/* Quantile q of the cycles between snapshots a and b, interpolated linearly
 * inside its bucket (as Prometheus' histogram_quantile); seconds. */
static double hist_quantile(const struct cyc_hist *a, const struct cyc_hist *b, double q) {
  double total = b->n[b->len - 1] - a->n[a->len - 1], want = q * total, prev = 0;
  for (int i = 0; i < b->len && total > 0; i++) {
    double cum = b->n[i] - a->n[i], lo = i ? b->le[i - 1] : 0;
    if (cum >= want) {
      if (isinf(b->le[i])) return lo;
      return lo + (b->le[i] - lo) * (cum > prev ? (want - prev) / (cum - prev) : 1);
    }
    prev = cum;
  }
  return 0;
}

/* One phase of the read storm: scheduling-thread CPU per cycle (the
 * server's thread CPU clock, so other busy threads on the two cores do not
 * count) and the cycles' wall-clock p50 and p99, over the next `cycles`. */
struct phase {
  double cpu_s, p50_s, p99_s;
};

static struct phase measure_cycles(struct hconn *h, double cycles, const char *what) {
  struct phase ph = {0};
  double cpu0, cyc0, cpu1 = 0, cyc1 = 0;
  struct cyc_hist h0, h1;
  if (cycle_cpu(h, &cpu0, &cyc0) || cycle_hist(h, &h0)) return ph;
  double deadline = now_s() + 120;
  do {
    usleep(200000);
    if (cycle_cpu(h, &cpu1, &cyc1)) return ph;
  } while (cyc1 - cyc0 < cycles && now_s() < deadline);
  if (cycle_hist(h, &h1) || h1.len != h0.len) return ph;
  ph.cpu_s = cyc1 > cyc0 ? (cpu1 - cpu0) / (cyc1 - cyc0) : 0;
  ph.p50_s = hist_quantile(&h0, &h1, 0.50);
  ph.p99_s = hist_quantile(&h0, &h1, 0.99);
  fprintf(stderr, "bench_server: %s: %.0f cycles, %.3f ms CPU each, wall p50 %.3f ms p99 %.3f ms\n",
          what, cyc1 - cyc0, ph.cpu_s * 1000, ph.p50_s * 1000, ph.p99_s * 1000);
  return ph;
}

static double slowdown_pct(double quiet, double storm) {
  return quiet > 0 && storm > 0 ? (storm - quiet) / quiet * 100.0 : 1e9; /* 1e9: no cycles seen */
}

/* 200 clients listing in a loop: the cycles' wall-clock latency (p50, p99)
 * and CPU cost against quiet phases before and after (the queue is the
 * same, give or take the trickle). Prints the three lines. */
static void read_storm(struct hconn *h) {
  enum { READERS = 200, CYCLES = 100 }; /* p99 of 100 cycles: not merely the slowest of 30 */
  pthread_t tid[READERS], tt;
  atomic_store(&trickle_stop, false);
  pthread_create(&tt, NULL, trickle, NULL);
  struct phase q1 = measure_cycles(h, CYCLES, "quiet");
  atomic_store(&readers_stop, false);
  atomic_store(&reads_done, 0);
  for (int i = 0; i < READERS; i++) pthread_create(&tid[i], NULL, reader, NULL);
  double t0 = now_s();
  struct phase st = measure_cycles(h, CYCLES, "200 readers");
  long reads = atomic_load(&reads_done);
  fprintf(stderr, "bench_server: %.0f listings/s of 1000 jobs during the storm\n",
          (double)reads / (now_s() - t0));
  atomic_store(&readers_stop, true);
  for (int i = 0; i < READERS; i++) pthread_join(tid[i], NULL);
  struct phase q2 = measure_cycles(h, CYCLES, "quiet");
  atomic_store(&trickle_stop, true);
  pthread_join(tt, NULL);
  printf("api_read_storm_cycle_slowdown_pct %.1f %%\n", slowdown_pct((q1.p50_s + q2.p50_s) / 2, st.p50_s));
  printf("api_read_storm_cycle_p99_slowdown_pct %.1f %%\n", slowdown_pct((q1.p99_s + q2.p99_s) / 2, st.p99_s));
  printf("api_read_storm_cycle_cpu_slowdown_pct %.1f %%\n", slowdown_pct((q1.cpu_s + q2.cpu_s) / 2, st.cpu_s));
}

static size_t count(const char *text, const char *needle) {
  size_t n = 0, len = strlen(needle);
  for (const char *p = text; p && (p = strstr(p, needle)); p += len) n++;
  return n;
}

static void write_file(const char *name, const char *text) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* A temp dir with a configuration, and a server started on it. */
static int setup(void) {
  snprintf(dir, sizeof dir, "/tmp/px-bench-XXXXXX");
  if (!mkdtemp(dir)) return 1;
  snprintf(sock, sizeof sock, "%s/state/phalanx.sock", dir);
  write_file("slurm.conf", "ClusterName=bench\nAllowRootJobs=YES\n"
                           "NodeName=b[001-064] CPUs=64 RealMemory=512G Gres=gpu:h100:8\n"
                           "PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n");
  write_file("accounts.conf", "Account=bench Users=root\n");
  if (start_server()) return fprintf(stderr, "bench_server: server did not start\n"), 1;
  return 0;
}

static int remove_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : 1;
}

/* bench_server latency N: only the sequential-submit figures. */
static int latency_only(int n) {
  if (setup()) return 1;
  latency_report("api_submit_latency", n, true);
  latency_report("api_submit_keepalive_latency", n, false);
  stop_server(SIGTERM);
  return remove_dir();
}

/* 4 clients, single submits: api_submit_per_s. */
static void submit_storm(long jobs) {
  double m0[M_COUNT];
  phases(m0);
  double t0 = now_s(), cpu0 = proc_cpu_s(server_pid);
  long n = run_clients(sock, 4, jobs, dir);
  double secs = now_s() - t0;
  printf("api_submit_per_s %.0f jobs/s\n", (double)n / secs);
  fflush(stdout);
  fprintf(stderr, "bench_server: server CPU %.1f us per submit\n",
          (proc_cpu_s(server_pid) - cpu0) / (double)n * 1e6);
  commit_report(m0, n, secs);
}

/* bench_server reads: only api_read_storm_cycle_slowdown_pct, on 100,000 jobs. */
static int reads_only(void) {
  if (setup()) return 1;
  struct hconn h = {.sock = sock, .fd = -1};
  batch_submit(&h, 100, 1000);
  read_storm(&h);
  hconn_close(&h);
  stop_server(SIGTERM);
  return remove_dir();
}

/* bench_server submit N: only the 4-client storm of N submits. */
static int submit_only(long n) {
  if (setup()) return 1;
  submit_storm(n);
  stop_server(SIGTERM);
  return remove_dir();
}

#include "bench_rest.h"

static int bench(void) {
  if (setup()) return 1;
  struct hconn h = {.sock = sock, .fd = -1};
  latency_report("api_submit_latency", 2000, true);
  submit_storm(20000);

  double t0 = now_s();
  long n = batch_submit(&h, 50, 1000);
  printf("api_batch_submit_per_s %.0f jobs/s\n", (double)n / (now_s() - t0));
  fflush(stdout);

  batch_submit(&h, 30, 1000); /* 100,000 jobs in all */
  struct buf out = {0};
  double best = 1e9;
  size_t listed = 0;
  for (int i = 0; i < 3; i++) {
    t0 = now_s();
    long code = http(&h, "GET", "/v1/jobs", NULL, &out);
    double ms = (now_s() - t0) * 1000;
    if (code == 200 && ms < best) best = ms;
    listed = count(out.p, "{\"job_id\":");
  }
  fprintf(stderr, "bench_server: listed %zu jobs (%.1f MB)\n", listed, (double)out.len / 1e6);
  printf("api_list_100k_ms %.0f ms\n", listed >= 100000 ? best : 1e9);
  fflush(stdout);

  read_storm(&h);
  fflush(stdout);

  hconn_close(&h);
  stop_server(SIGKILL);
  t0 = now_s();
  if (start_server()) return fprintf(stderr, "bench_server: restart failed\n"), 1;
  printf("recovery_s_100k %.2f s\n", now_s() - t0);
  stop_server(SIGTERM);
  free(out.p);
  if (remove_dir()) return 1;
  return rest_only(20000); /* a server of its own: the 100k figures above keep their 100k */
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  if ((argc == 6 || argc == 7) && !strcmp(argv[1], "storm")) {
    if (argc == 7) tag = argv[6];
    long n = run_clients(argv[2], (int)strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10), argv[5]);
    printf("acknowledged %ld\n", n);
    return 0;
  }
  bool latency = argc == 3 && !strcmp(argv[1], "latency");
  bool submit = argc == 3 && !strcmp(argv[1], "submit");
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
  if (submit) return submit_only(strtol(argv[2], NULL, 10));
  if (argc == 3 && !strcmp(argv[1], "rest")) return rest_only(strtol(argv[2], NULL, 10));
  if (argc == 2 && !strcmp(argv[1], "reads")) return reads_only();
  return latency ? latency_only((int)strtol(argv[2], NULL, 10)) : bench();
}
