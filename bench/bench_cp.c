/*
 * bench_cp.c - the control plane at scale: `phalanx dev` with emulated nodes
 * (one `phalanx agent --emulate-nodes` process, src/agent/emulate.h), the
 * real server, every request through the agent protocol.
 *
 *   cp_register_10k_s     10,000 nodes from a cold start (server and agent
 *                         processes started) to all registered and IDLE
 *   cp_idle_cpu_pct_10k   the server's CPU (% of one core) with those 10,000
 *                         nodes idle, heartbeating at the default interval
 *                         (30 s) and long-polling, over 60 s after 60 s of
 *                         warm-up (so that polls have turned over); with the
 *                         request rates and the CPU per request beside it
 *   cp_burst_10k_ratio    20,000 simulated jobs of mixed sizes (1 GPU to
 *                         16-node gangs, run times 5-30 s) submitted at once
 *                         on 10,000 nodes x 8 GPUs: the time from the first
 *                         submit until the last job started, over the
 *                         capacity-bound ideal (printed: see ideal_s); beside
 *                         it, _vs_sim_ratio: the same time over the one the
 *                         same scheduling core reaches for the same jobs in
 *                         `phalanx sim` (no control plane at all), which
 *                         tells the control plane's delay from the policy's
 *                         packing (gangs wait for whole free nodes); and
 *                         _fluid_fifo_s, _vs_fluid_ratio: what perfect
 *                         packing reaches without knowing run times (see
 *                         fluid_fifo_s): the capacity bound assumes a
 *                         scheduler that knows them
 *   cp_burst_1k_ratio     the same mix scaled to 1,024 nodes (2,048 jobs),
 *                         jobs as real `sleep` processes
 * Every job must end COMPLETED (counted from the server's listing), else the
 * bench fails. Arguments pick parts: register idle burst10k burst1k (all by
 * default; idle and burst10k reuse the 10,000-node cluster).
 */
#include <curl/curl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char phalanx[4096], dir[256], sock[320];
static pid_t dev_pid;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void nap(double s) {
  struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&t, NULL);
}

struct buf {
  char *p;
  size_t len;
};

static size_t on_data(char *d, size_t sz, size_t n, void *ud) {
  struct buf *b = ud;
  char *p = realloc(b->p, b->len + sz * n + 1);
  if (!p) return 0;
  memcpy(p + b->len, d, sz * n);
  b->len += sz * n;
  p[b->len] = '\0';
  b->p = p;
  return sz * n;
}

/* One request on the server's Unix socket; the status (0: none) and the body. */
static long http(const char *method, const char *path, const char *body, char **out) {
  CURL *h = curl_easy_init();
  char url[512];
  struct buf b = {0};
  long status = 0;
  struct curl_slist *hl = curl_slist_append(NULL, "Content-Type: application/json");
  snprintf(url, sizeof url, "http://localhost%s", path);
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, sock);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
  if (body) curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
  (void)method;
  if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(hl);
  curl_easy_cleanup(h);
  if (out) *out = b.p;
  else free(b.p);
  return status;
}

/* ---- the cluster ---- */

static int start_dev(unsigned nodes, const char *jobs) {
  char n[16], ready[300];
  snprintf(dir, sizeof dir, "/tmp/bench_cp.XXXXXX");
  if (!mkdtemp(dir)) return -1;
  snprintf(sock, sizeof sock, "%s/c/server.sock", dir);
  snprintf(ready, sizeof ready, "%s/ready", dir);
  snprintf(n, sizeof n, "%u", nodes);
  if ((dev_pid = fork()) == 0) {
    char log[300], state[300];
    snprintf(log, sizeof log, "%s/dev.log", dir);
    snprintf(state, sizeof state, "%s/c", dir);
    if (!freopen(log, "w", stdout) || !freopen(log, "a", stderr)) _exit(127);
    execl(phalanx, phalanx, "dev", "--nodes", n, "--emulate-jobs", jobs, "--state-dir", state, "--ready-file",
          ready, "--quiet", (char *)NULL);
    _exit(127);
  }
  return dev_pid > 0 ? 0 : -1;
}

static void stop_dev(void) {
  if (dev_pid <= 0) return;
  kill(dev_pid, SIGTERM);
  waitpid(dev_pid, NULL, 0);
  dev_pid = 0;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench_cp: cannot remove %s\n", dir);
}

static void on_signal(int sig) {
  if (dev_pid > 0) kill(dev_pid, SIGTERM);
  _exit(128 + sig);
}

static pid_t server_pid(void) {
  char path[320];
  snprintf(path, sizeof path, "%s/c/server.pid", dir);
  FILE *f = fopen(path, "re");
  int pid = 0;
  if (f && fscanf(f, "%d", &pid) != 1) pid = 0;
  if (f) fclose(f);
  return pid;
}

/* The emulating agent: the child of `phalanx dev` that is not the server. */
static pid_t agent_pid(void) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)dev_pid, (int)dev_pid);
  FILE *f = fopen(path, "re");
  int pid = 0, found = 0;
  while (f && fscanf(f, "%d", &pid) == 1)
    if (pid != server_pid()) found = pid;
  if (f) fclose(f);
  return found;
}

/* Nodes in state IDLE, or -1 when the server does not answer. */
static int nodes_idle(void) {
  char *body = NULL;
  if (http("GET", "/v1/nodes", NULL, &body) != 200) return free(body), -1;
  json_t *j = json_loads(body, 0, NULL), *n;
  free(body);
  size_t i;
  int idle = 0;
  json_array_foreach(json_object_get(j, "nodes"), i, n) {
    const char *st = json_string_value(json_object_get(n, "state"));
    idle += st && !strcmp(st, "IDLE");
  }
  json_decref(j);
  return idle;
}

/* Seconds until every node is IDLE, or -1 after limit_s. */
static double wait_idle(unsigned nodes, double t0, double limit_s) {
  while (now_s() - t0 < limit_s) {
    if (nodes_idle() == (int)nodes) return now_s() - t0;
    nap(0.25);
  }
  return -1;
}

static double proc_cpu_s(pid_t pid) {
  char path[64], line[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "re");
  unsigned long ut = 0, st = 0;
  if (f && fgets(line, sizeof line, f)) {
    char *p = strrchr(line, ')');
    if (p) sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
  }
  if (f) fclose(f);
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static long proc_status(pid_t pid, const char *key) {
  char path[64], line[256];
  long v = -1;
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "re");
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, key, strlen(key))) v = strtol(line + strlen(key) + 1, NULL, 10);
  if (f) fclose(f);
  return v;
}

/* Requests served on an endpoint so far (every status), from /metrics. */
static double requests(const char *endpoint) {
  char *body = NULL, key[160];
  double total = 0;
  snprintf(key, sizeof key, "phalanx_api_requests_total{endpoint=\"%s\",", endpoint);
  if (http("GET", "/metrics", NULL, &body) == 200)
    for (char *p = body; (p = strstr(p, key)); p++) total += strtod(strchr(p, '}') + 2, NULL);
  free(body);
  return total;
}

/* ---- the burst ---- */

struct bjob {
  unsigned nodes, gpn, run_s;
};

/* The mix: {GPUs per node, nodes, share in %}. */
static const unsigned mix[][3] = {{1, 1, 30}, {2, 1, 10}, {4, 1, 10}, {8, 1, 20},
                                  {8, 2, 15}, {8, 4, 8},  {8, 8, 5},  {8, 16, 2}};

static uint64_t rng = 42;
static unsigned next_rand(unsigned n) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)((rng >> 33) % n);
}

/* The same jobs for the same count, whichever parts ran before. */
static void make_jobs(struct bjob *v, unsigned n) {
  rng = 42;
  for (unsigned i = 0; i < n; i++) {
    unsigned pick = next_rand(100), k = 0, acc = mix[0][2];
    while (pick >= acc) acc += mix[++k][2];
    v[i] = (struct bjob){mix[k][1], mix[k][0], 5 + next_rand(26)};
  }
}

static int by_run_desc(const void *a, const void *b) {
  return (int)((const struct bjob *)b)->run_s - (int)((const struct bjob *)a)->run_s;
}

/* The capacity-bound ideal for "every job started": when the last job
 * starts, at most the capacity's worth of the longest jobs can still be
 * running, so the work done before then is at least the total work W minus
 * the work of the longest jobs that fit in the capacity C together (taken
 * fractionally); it cannot be done faster than C allows. Gang shapes and
 * fragmentation are ignored, so the bound is optimistic. */
static double ideal_s(const struct bjob *jobs, unsigned n, double cap) {
  struct bjob *v = malloc(n * sizeof *v);
  if (!v) return -1;
  memcpy(v, jobs, n * sizeof *v);
  qsort(v, n, sizeof *v, by_run_desc);
  double work = 0, tail = 0, room = cap;
  for (unsigned i = 0; i < n; i++) {
    double g = (double)v[i].nodes * v[i].gpn;
    work += g * v[i].run_s;
    double take = g < room ? g : room;
    tail += take * v[i].run_s;
    room -= take;
  }
  free(v);
  double s = (work - tail) / cap;
  return s > 0 ? s : 0;
}

/* A reference for a scheduler that does not know run times (every job
 * asks for 300 s): the jobs in submit order on the cluster's GPUs as one
 * pool -- no node boundaries, so no gang waits for whole nodes and no GPU
 * is stranded -- each started as soon as enough GPUs are free, later jobs
 * passing one that does not fit (greedy list scheduling); the time the last
 * one starts. The capacity bound above is met only by a schedule that
 * keeps the longest jobs for the end, which needs their run times; this
 * one is what perfect packing gives without them, so the policy's own
 * figure (sim) over it is what packing and node shapes cost. */
struct fend {
  double t;
  unsigned g;
};

static void fend_push(struct fend *h, unsigned *n, struct fend e) {
  unsigned i = (*n)++;
  while (i && h[(i - 1) / 2].t > e.t) h[i] = h[(i - 1) / 2], i = (i - 1) / 2;
  h[i] = e;
}

static struct fend fend_pop(struct fend *h, unsigned *n) {
  struct fend top = h[0], last = h[--*n];
  unsigned i = 0;
  for (;;) {
    unsigned c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && h[c + 1].t < h[c].t) c++;
    if (h[c].t >= last.t) break;
    h[i] = h[c], i = c;
  }
  if (*n) h[i] = last;
  return top;
}

static double fluid_fifo_s(const struct bjob *jobs, unsigned n, unsigned cap) {
  struct fend *h = malloc((n + 1) * sizeof *h);
  unsigned *left = malloc((n + 1) * sizeof *left), nleft = n, nh = 0, freeg = cap;
  if (!h || !left) return free(h), free(left), -1;
  for (unsigned i = 0; i < n; i++) left[i] = i;
  double t = 0, last = 0;
  while (nleft) {
    unsigned keep = 0;
    for (unsigned i = 0; i < nleft; i++) {
      const struct bjob *j = &jobs[left[i]];
      unsigned g = j->nodes * j->gpn;
      if (g <= freeg) freeg -= g, fend_push(h, &nh, (struct fend){t + j->run_s, g}), last = t;
      else left[keep++] = left[i];
    }
    nleft = keep;
    if (!nleft || !nh) break;
    t = h[0].t;
    while (nh && h[0].t == t) freeg += fend_pop(h, &nh).g;
  }
  free(h);
  free(left);
  return nleft ? -1 : last;
}

static int submit_all(const struct bjob *jobs, unsigned n) {
  enum { BATCH = 1000 };
  char *body = malloc(BATCH * 200 + 64);
  for (unsigned i = 0; body && i < n; i += BATCH) {
    size_t len = (size_t)snprintf(body, 16, "{\"jobs\":[");
    for (unsigned k = i; k < n && k < i + BATCH; k++)
      len += (size_t)snprintf(body + len, 200,
                              "%s{\"name\":\"cp\",\"nodes_min\":%u,\"nodes_max\":%u,\"gpus_per_node\":%u,"
                              "\"time_limit_s\":300,\"argv\":[\"sleep\",\"%u\"],\"workdir\":\"/tmp\"}",
                              k > i ? "," : "", jobs[k].nodes, jobs[k].nodes, jobs[k].gpn, jobs[k].run_s);
    memcpy(body + len, "]}", 3);
    char *out = NULL;
    long st = http("POST", "/v1/jobs", body, &out);
    if (st != 201) {
      fprintf(stderr, "bench_cp: batch refused (%ld): %.300s\n", st, out ? out : "");
      free(out);
      free(body);
      return -1;
    }
    free(out);
  }
  free(body);
  return body ? 0 : -1;
}

/* Counts the listing's jobs by end: completed, failed (any other end), and
 * the latest start time. */
static int census(unsigned *completed, unsigned *failed, long long *last_start) {
  char *body = NULL;
  if (http("GET", "/v1/jobs?state=all&fields=job_id,state,start_time&limit=1000000", NULL, &body) != 200)
    return free(body), -1;
  json_t *j = json_loads(body, 0, NULL), *o;
  free(body);
  size_t i;
  *completed = *failed = 0;
  *last_start = 0;
  json_array_foreach(json_object_get(j, "jobs"), i, o) {
    const char *st = json_string_value(json_object_get(o, "state"));
    if (!st) st = "";
    long long t = json_integer_value(json_object_get(o, "start_time"));
    if (t > *last_start) *last_start = t;
    if (!strcmp(st, "COMPLETED")) ++*completed;
    else if (strcmp(st, "PENDING") && strcmp(st, "RUNNING") && strcmp(st, "CONFIGURING")) ++*failed;
  }
  json_decref(j);
  return 0;
}

static double wall_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The same jobs through `phalanx sim` on the cluster's own configuration:
 * the time the scheduling core alone needs until the last start (every job
 * is submitted at 0, so that is the longest wait), or -1. */
static double sim_all_started(const struct bjob *jobs, unsigned n) {
  char trace[320], cmd[5000];
  snprintf(trace, sizeof trace, "%s/burst.csv", dir);
  FILE *f = fopen(trace, "we");
  if (!f) return -1;
  fprintf(f, "job_id,submit_s,duration_s,gpus,nodes,user,queue,status,time_limit_s\n");
  for (unsigned i = 0; i < n; i++)
    fprintf(f, "%u,0,%u,%u,%u,root,ops,COMPLETED,300\n", i + 1, jobs[i].run_s, jobs[i].nodes * jobs[i].gpn,
            jobs[i].nodes);
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s sim --trace %s --config %s/c/slurm.conf --json 2>/dev/null", phalanx, trace, dir);
  FILE *p = popen(cmd, "r");
  json_t *j = p ? json_loadf(p, 0, NULL) : NULL;
  if (p) pclose(p);
  json_t *pol = json_array_get(json_object_get(j, "policies"), 0);
  json_t *max = json_object_get(json_object_get(json_object_get(pol, "wait_s"), "all"), "max");
  double v = json_is_number(max) ? json_number_value(max) : -1;
  json_decref(j);
  return v;
}

/* One burst on the running cluster; prints its lines; 0 when every job completed. */
static int burst(const char *name, unsigned nodes, unsigned njobs) {
  struct bjob *jobs = malloc(njobs * sizeof *jobs);
  if (!jobs) return -1;
  make_jobs(jobs, njobs);
  double ideal = ideal_s(jobs, njobs, nodes * 8.0), fluid = fluid_fifo_s(jobs, njobs, nodes * 8);
  pid_t sp = server_pid(), ap = agent_pid();
  double cpu0 = proc_cpu_s(sp), acpu0 = proc_cpu_s(ap), t0 = wall_s(), m0 = now_s();
  int rc = submit_all(jobs, njobs);
  double submit = now_s() - m0;
  unsigned done = 0, bad = 0;
  long long last = 0;
  while (!rc && now_s() - m0 < 900) {
    nap(2);
    if (census(&done, &bad, &last) == 0 && done + bad >= njobs) break;
  }
  double acpu = proc_cpu_s(ap) - acpu0;
  double cpu = proc_cpu_s(sp) - cpu0, started = (double)last + 0.5 - t0; /* start times are whole seconds */
  printf("%s_ideal_s %.1f s\n%s_fluid_fifo_s %.1f s\n%s_submit_s %.2f s\n%s_all_started_s %.1f s\n%s_server_cpu_s %.1f s\n"
         "%s_server_cpu_ms_per_job %.2f ms\n%s_agent_cpu_s %.1f s\n%s_jobs_completed %u jobs\n",
         name, ideal, name, fluid, name, submit, name, started, name, cpu, name, 1e3 * cpu / njobs, name, acpu, name, done);
  double sim = sim_all_started(jobs, njobs);
  free(jobs);
  if (rc || done != njobs || bad) {
    fprintf(stderr, "bench_cp: %s: %u of %u jobs completed, %u ended otherwise\n", name, done, njobs, bad);
    return -1;
  }
  printf("%s_ratio %.2f x\n", name, started / ideal);
  if (fluid > 0) printf("%s_vs_fluid_ratio %.2f x\n", name, started / fluid);
  if (sim > 0) printf("%s_sim_all_started_s %.0f s\n%s_vs_sim_ratio %.2f x\n", name, sim, name, started / sim);
  return 0;
}

/* ---- the parts ---- */

static int part_register(void) {
  double t0 = now_s();
  if (start_dev(10000, "sim")) return -1;
  double s = wait_idle(10000, t0, 300);
  if (s < 0) return fprintf(stderr, "bench_cp: 10,000 nodes not all IDLE in 300 s (see %s)\n", dir), -1;
  printf("cp_register_10k_s %.1f s\n", s);
  return 0;
}

static int part_idle(void) {
  pid_t sp = server_pid();
  nap(60); /* every node's long poll turns over at least once (55 s) */
  double hb0 = requests("/v1/agent/heartbeat"), poll0 = requests("/v1/agent/work"), c0 = proc_cpu_s(sp);
  double t0 = now_s();
  nap(60);
  double secs = now_s() - t0, cpu = proc_cpu_s(sp) - c0;
  double hb = requests("/v1/agent/heartbeat") - hb0, polls = requests("/v1/agent/work") - poll0;
  if (hb <= 0 || polls <= 0) return fprintf(stderr, "bench_cp: no heartbeat or poll while idle\n"), -1;
  printf("cp_idle_cpu_pct_10k %.1f %%\ncp_idle_heartbeats_per_s %.0f /s\ncp_idle_polls_per_s %.0f /s\n"
         "cp_idle_cpu_us_per_request %.0f us\ncp_server_rss_10k_mib %.0f MiB\ncp_server_threads_10k %ld threads\n",
         100 * cpu / secs, hb / secs, polls / secs, 1e6 * cpu / (hb + polls),
         (double)proc_status(sp, "VmRSS:") / 1024, proc_status(sp, "Threads:"));
  return nodes_idle() == 10000 ? 0 : (fprintf(stderr, "bench_cp: nodes left IDLE while idle\n"), -1);
}

static bool want(int argc, char **argv, const char *part) {
  if (argc < 2) return true;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], part)) return true;
  return false;
}

int main(int argc, char **argv) {
  ssize_t n = readlink("/proc/self/exe", phalanx, sizeof phalanx - 32);
  if (n <= 0) return 1;
  phalanx[n] = '\0';
  char *slash = strrchr(phalanx, '/');
  snprintf(slash, phalanx + sizeof phalanx - slash, "/../phalanx");
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = 0;
  bool big = want(argc, argv, "register") || want(argc, argv, "idle") || want(argc, argv, "burst10k");
  if (big) {
    rc = part_register();
    if (!rc && want(argc, argv, "idle")) rc = part_idle();
    if (!rc && want(argc, argv, "burst10k")) rc = burst("cp_burst_10k", 10000, 20000);
    stop_dev();
  }
  if (!rc && want(argc, argv, "burst1k")) {
    double t0 = now_s();
    rc = start_dev(1024, "real") || wait_idle(1024, t0, 120) < 0 ? -1 : burst("cp_burst_1k", 1024, 2048);
    stop_dev();
  }
  if (!rc && argc > 1 && want(argc, argv, "burst1k-sim")) { /* the same without processes (not by default) */
    double t0 = now_s();
    rc = start_dev(1024, "sim") || wait_idle(1024, t0, 120) < 0 ? -1 : burst("cp_burst_1k_sim", 1024, 2048);
    stop_dev();
  }
  curl_global_cleanup();
  return rc ? 1 : 0;
}
