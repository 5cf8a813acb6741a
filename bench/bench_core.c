/*
 * bench_core.c - the scheduling core's benchmark (issue 3). Builds the
 * standard cluster from a seed -- 10,000 nodes x 8 GPUs (64 CPUs, 1 TiB),
 * 32-node leaf switches under one spine, 4 partitions, accounts root -> 4
 * orgs -> 20 teams -> 500 users -- and the standard mix: 60% 1-GPU jobs, 25%
 * single-node 8-GPU jobs, 10% gangs of 2-4 whole nodes, 5% gangs of 8-64
 * whole nodes; 2% of jobs are 1,000-task arrays (of 1-GPU tasks). Prints
 * `name value unit` lines:
 *   cycle_full_ms / cycle_full_ms_max  median and max of 11 cycles over
 *                                      100,000 pending jobs (the mix without
 *                                      arrays: 1-GPU jobs, whole nodes, gangs)
 *                                      on a fragmented cluster: every node
 *                                      partly used by 1-7 GPU jobs, 2% of
 *                                      them ended, so each cycle really
 *                                      places the 1-GPU jobs that fit and
 *                                      fails the rest (cycle_full_started:
 *                                      jobs started per cycle, > 0 checked;
 *                                      they end again before the next cycle);
 *                                      1 in 25 of the pending jobs is a
 *                                      service's replica (1,000 services x 4:
 *                                      1 GPU, no time limit, 3 nodes excluded
 *                                      as spread does)
 *   place_rate_jobs_per_s              the mix without arrays placed into an
 *                                      empty cluster (jobs started per second)
 *   place_rate_arrays_jobs_per_s       the same with the mix's arrays (2% of
 *                                      jobs, 1,000 tasks each: most starts are
 *                                      array tasks, which are cheaper)
 *   place_rate_fractional30_jobs_per_s the mix without arrays where 30% of the
 *                                      jobs ask a fraction of one GPU (0.1,
 *                                      0.25, 0.5 or 0.75; every partition has
 *                                      GpuShares=YES), the rest drawn as
 *                                      before; _vs_plain_pct puts it beside
 *                                      place_rate of the same run, and
 *                                      _shared_gpus counts the GPUs carrying
 *                                      shares at the end (checked > 0)
 *   gang64_place_us                    one 64-node gang on a fragmented cluster
 *                                      with fewer than 5% of nodes free
 *                                      (gang64_free_nodes_pct says how many)
 *   core_bytes_per_pending_job         core memory per pending record
 * Options: --nodes N --pending P (cycle_full at other sizes, for scaling);
 * --only-place, --only-gang. Environment, for investigation only:
 * PX_BENCH_VERBOSE=1 prints each cycle and gang search to stderr,
 * PX_BENCH_CYCLES=n times only the first n full cycles.
 * Times are the thread's CPU time (the machine is shared); wall time of the
 * full cycles is printed as cycle_full_wall_ms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "core/event.h"
#include "core/testconf.h"
#include "util/units.h"

/* CPU time of this thread: the machine is shared with other builds, and a
 * descheduled benchmark would measure the neighbours. Wall time is printed
 * too for cycle_full (cycle_full_wall_ms). */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t rng_s = 42;
static uint32_t rnd(uint32_t n) {
  rng_s = rng_s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)((rng_s >> 33) % n);
}

static char user_names[500][8];
static const char *part_names[4] = {"p0", "p1", "p2", "p3"};

static struct px_conf *standard_conf(uint32_t nnodes) {
  struct px_testconf_spec s = {.nnodes = nnodes, .gpus_per_node = 8, .cpus_per_node = 64,
                               .mem_mib = 1024 * 1024, .gpu_groups = 2, .nodes_per_leaf = 32,
                               .npartitions = 4};
  struct px_conf *c = px_testconf_new(&s);
  if (!c) return NULL;
  c->sched.weight_jobsize = 1000;
  c->sched.weight_partition = 1000;
  c->sched.billing_weight_gpu = 1;
  for (uint32_t o = 0; o < 4; o++) {
    char name[16];
    snprintf(name, sizeof name, "org%u", o);
    uint32_t org = px_testconf_account(c, name, 0, 1 + o);
    for (uint32_t t = 0; t < 5; t++) {
      snprintf(name, sizeof name, "team%u", o * 5 + t);
      uint32_t team = px_testconf_account(c, name, org, 1 + t);
      for (uint32_t u = 0; u < 25; u++) {
        uint32_t k = (o * 5 + t) * 25 + u;
        snprintf(user_names[k], sizeof user_names[k], "u%u", k);
        px_testconf_user(c, user_names[k], team, 1);
      }
    }
  }
  return c;
}

/* One job of the standard mix. */
enum place_mix { MIX_PLAIN, MIX_ARRAYS, MIX_FRACTIONAL30 };

static void mix_spec(struct px_jobspec *s, enum place_mix mix) {
  static const uint32_t shares[] = {10, 25, 50, 75};
  px_jobspec_init(s);
  s->user = user_names[rnd(500)];
  s->partition = (char *)part_names[rnd(4)];
  s->time_limit_s = 3600;
  if (mix == MIX_FRACTIONAL30 && rnd(100) < 30) {
    s->gpu_share = shares[rnd(4)];
    return;
  }
  uint32_t x = rnd(100);
  if (mix == MIX_ARRAYS && rnd(50) == 0) {
    s->gpus_per_node = 1;
    s->array = (char *)"0-999";
  } else if (x < 60) {
    s->gpus_per_node = 1;
  } else if (x < 85) {
    s->gpus_per_node = 8;
  } else if (x < 95) {
    s->nodes_min = 2 + rnd(3);
    s->gpus_per_node = 8;
  } else {
    s->nodes_min = 8 + rnd(57);
    s->gpus_per_node = 8;
  }
}

static uint64_t next_id = 1;

static int submit(struct px_core *c, const struct px_jobspec *s, int64_t now) {
  struct px_event ev = {.kind = PX_EV_SUBMIT, .job_id = next_id, .spec = (struct px_jobspec *)s};
  struct px_event_result res;
  int rc = px_core_apply(c, &ev, now, &res);
  next_id += rc ? 1 : res.nids;
  return rc;
}

/* A job ended or (pending) cancelled: one event through px_core_apply. */
static int end_job(struct px_core *c, uint64_t id, enum px_event_kind kind, int64_t now) {
  struct px_event ev = {.kind = kind, .job_id = id, .state = PX_JOB_COMPLETED};
  struct px_event_result res;
  return px_core_apply(c, &ev, now, &res);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Fills every node with a whole-node job, then queues `pending` mix jobs and
 * times cycles in which nothing fits. */
static struct px_core *new_core(const struct px_conf *conf) {
  int err = 0;
  struct px_core *c = conf ? px_core_new(conf, 1, &err) : NULL;
  if (!c) fprintf(stderr, "bench: px_core_new: %s\n", conf ? px_strerror(err) : "no conf");
  return c;
}

static int bench_cycle_full(uint32_t nnodes, uint32_t pending, bool report_bytes) {
  struct px_conf *conf = standard_conf(nnodes);
  struct px_core *c = new_core(conf);
  struct px_actions out;
  px_actions_init(&out);
  if (!c) return 1;
  /* fragmented: jobs of 1-7 GPUs until the cluster is full, then 2% end */
  for (uint64_t gpus = 0; gpus < (uint64_t)nnodes * 8;) {
    struct px_jobspec s;
    px_jobspec_init(&s);
    s.user = user_names[rnd(500)];
    s.partition = (char *)part_names[rnd(4)];
    s.gpus_per_node = 1 + rnd(7);
    s.time_limit_s = 7200;
    gpus += s.gpus_per_node;
    if (submit(c, &s, 1000)) return 1;
  }
  if (px_core_cycle(c, 1000, &out) || !out.len) return 1;
  for (size_t i = 0; i < out.len; i++)
    if (rnd(50) == 0 && end_job(c, out.v[i].job_id, PX_EV_END, 1000)) return 1;
  size_t cur = 0, ndrop = 0; /* the fill that did not fit leaves the queue */
  struct px_job_view v;
  uint64_t *drop = malloc(px_core_njobs(c) * sizeof *drop);
  if (!drop) return 1;
  while (px_core_job_next(c, &cur, &v))
    if (v.state == PX_JOB_PENDING) drop[ndrop++] = v.job_id;
  for (size_t i = 0; i < ndrop; i++) end_job(c, drop[i], PX_EV_CANCEL, 1000);
  free(drop);
  struct px_core_stats st;
  px_core_stats(c, &st);
  size_t before = st.bytes_in_use;
  uint32_t replicas = 0;
  for (uint32_t i = 0; i < pending; i++) {
    struct px_jobspec s;
    char svc[16], excl[48];
    mix_spec(&s, MIX_PLAIN);
    if (i % 25 == 0) { /* replica (i / 25) % 4 of service i / 100 */
      snprintf(svc, sizeof svc, "svc%u", i / 100);
      uint32_t n0 = (uint32_t)(i * 7919u) % nnodes; /* not rnd(): the mix's draws stay as they were */
      snprintf(excl, sizeof excl, "n%05u,n%05u,n%05u", n0, (n0 + 1) % nnodes, (n0 + 2) % nnodes);
      s.service = svc;
      s.replica = (i / 25) % 4;
      s.time_limit_s = PX_TIME_UNLIMITED;
      s.nodes_min = 0;
      s.gpus_per_node = 1;
      s.exclude = excl;
      replicas++;
    }
    if (submit(c, &s, 1001 + i / 1000)) return 1;
  }
  enum { N = 11 };
  double t[N], w[N];
  size_t started = 0;
  int ncycles = getenv("PX_BENCH_CYCLES") ? atoi(getenv("PX_BENCH_CYCLES")) : N;
  for (int i = 0; i < N; i++) {
    double t0 = now_ms(), w0 = wall_ms();
    if (i >= ncycles) {
      t[i] = w[i] = 0;
      continue;
    }
    if (px_core_cycle(c, 2000 + 60 * i, &out)) return 1;
    t[i] = now_ms() - t0;
    w[i] = wall_ms() - w0;
    if (getenv("PX_BENCH_VERBOSE")) fprintf(stderr, "cycle %d: %.2f ms, %zu actions\n", i, t[i], out.len);
    for (size_t k = 0; k < out.len; k++) /* the holes open again for the next cycle */
      if (out.v[k].kind == PX_ACT_START &&
          (started++, end_job(c, out.v[k].job_id, PX_EV_END, 2030 + 60 * i)))
        return 1;
  }
  if (!started) {
    fprintf(stderr, "bench: the full cycles started nothing: not the fragmented case\n");
    return 1;
  }
  px_core_stats(c, &st);
  qsort(t, N, sizeof t[0], cmp_double);
  qsort(w, N, sizeof w[0], cmp_double);
  if (report_bytes) {
    printf("cycle_full_ms %.2f ms\n", t[N / 2]);
    printf("cycle_full_ms_max %.2f ms\n", t[N - 1]);
    printf("cycle_full_wall_ms %.2f ms\n", w[N / 2]);
    printf("cycle_full_wall_ms_max %.2f ms\n", w[N - 1]);
    printf("cycle_full_started %.1f jobs\n", (double)started / N);
    printf("cycle_full_service_replicas %u jobs\n", replicas);
    printf("core_bytes_per_pending_job %.0f bytes\n", (double)(st.bytes_in_use - before) / pending);
  } else {
    printf("cycle_full_ms_%un_%up %.2f ms\n", nnodes, pending, t[N / 2]);
  }
  px_actions_fini(&out);
  px_core_free(c);
  px_conf_free(conf);
  return 0;
}

static double plain_rate; /* place_rate of this run: the baseline of the fractional mix */

/* The mix into an empty cluster, in submission order (FIFO), cycle after
 * cycle until one starts nothing. Jobs are queued until their GPUs add up to
 * the cluster's (an array counts its 1,000 GPUs, a fraction its part). */
static int bench_place_rate(enum place_mix mix) {
  struct px_conf *conf = standard_conf(10000);
  conf->sched.order = PX_ORDER_FIFO;
  for (uint32_t p = 0; mix == MIX_FRACTIONAL30 && p < conf->npartitions; p++) conf->partitions[p].gpu_shares = true;
  struct px_core *c = new_core(conf);
  struct px_actions out;
  px_actions_init(&out);
  if (!c) return 1;
  for (uint64_t cgpus = 0; cgpus < 80000 * 100;) {
    struct px_jobspec s;
    mix_spec(&s, mix);
    cgpus += s.gpu_share ? s.gpu_share
             : s.array   ? 1000 * 100
                         : (uint64_t)(s.nodes_min ? s.nodes_min : 1) * s.gpus_per_node * 100;
    if (submit(c, &s, 1000)) return 1;
  }
  double total_ms = 0;
  uint64_t started = 0;
  for (int64_t t = 1001;; t++) {
    double t0 = now_ms();
    if (px_core_cycle(c, t, &out)) return 1;
    total_ms += now_ms() - t0;
    started += out.len;
    if (!out.len) break;
  }
  uint32_t used = 0, shared = 0;
  for (uint32_t n = 0; n < px_core_nnodes(c); n++) {
    struct px_node_view v;
    px_core_node_get(c, n, &v);
    used += v.gpus_alloc;
    shared += (uint32_t)__builtin_popcountll(v.gpus_shared);
  }
  static const char *const names[] = {"place_rate", "place_rate_arrays", "place_rate_fractional30"};
  const char *name = names[mix];
  double rate = started / (total_ms / 1e3);
  printf("%s_jobs_per_s %.0f jobs/s\n", name, rate);
  if (mix == MIX_PLAIN) plain_rate = rate;
  if (mix == MIX_FRACTIONAL30) {
    if (!shared) {
      fprintf(stderr, "bench: no GPU carries shares: the fractional jobs did not run as such\n");
      return 1;
    }
    if (plain_rate > 0) printf("%s_vs_plain_pct %.1f %%\n", name, 100.0 * rate / plain_rate);
    printf("%s_shared_gpus %u gpus\n", name, shared);
  }
  if (getenv("PX_BENCH_VERBOSE"))
    fprintf(stderr, "place: %llu started in %.1f ms\n", (unsigned long long)started, total_ms);
  printf("%s_fill_gpus_pct %.1f %%\n", name, 100.0 * used / 80000);
  px_actions_fini(&out);
  px_core_free(c);
  px_conf_free(conf);
  return 0;
}

/* Nodes with no GPU allocated, in percent. */
static double free_nodes_pct(struct px_core *c) {
  uint32_t n = px_core_nnodes(c), nfree = 0;
  for (uint32_t i = 0; i < n; i++) {
    struct px_node_view v;
    px_core_node_get(c, i, &v);
    nfree += v.gpus_alloc == 0;
  }
  return 100.0 * nfree / n;
}

/* Nearly full and fragmented: random jobs (3 of 4 of 1-2 GPUs, 1 of 4 a
 * whole node) fill the cluster; half the small ones end, leaving holes, and
 * one whole-node job in 20, leaving under 5% of nodes free for the gang.
 * Then one 64-node gang is placed (and ended again), 21 times. */
static int bench_gang64(void) {
  struct px_conf *conf = standard_conf(10000);
  px_testconf_partition(conf, "all", 0, 10000); /* the gang sees the whole tree */
  struct px_core *c = new_core(conf);
  struct px_actions out;
  px_actions_init(&out);
  if (!c) return 1;
  enum { NFILL = 60000 };
  uint64_t first = next_id;
  uint8_t *gpn = malloc(NFILL);
  if (!gpn) return 1;
  for (uint32_t i = 0; i < NFILL; i++) {
    struct px_jobspec s;
    px_jobspec_init(&s);
    s.user = user_names[rnd(500)];
    s.gpus_per_node = gpn[i] = (uint8_t)(rnd(4) ? 1 + rnd(2) : 8);
    s.partition = (char *)"all";
    if (submit(c, &s, 1000)) return 1;
  }
  if (px_core_cycle(c, 1001, &out)) return 1;
  for (size_t i = 0; i < out.len; i++) {
    uint64_t k = out.v[i].job_id - first;
    bool whole = k < NFILL && gpn[k] == 8;
    if ((whole ? rnd(20) == 0 : rnd(2) == 0) &&
        end_job(c, out.v[i].job_id, PX_EV_END, 1002))
      return 1;
  }
  free(gpn);
  size_t cur = 0, ndrop = 0;
  struct px_job_view v;
  uint64_t *drop = malloc(px_core_njobs(c) * sizeof *drop);
  if (!drop) return 1;
  while (px_core_job_next(c, &cur, &v)) /* drop what is left pending */
    if (v.state == PX_JOB_PENDING) drop[ndrop++] = v.job_id;
  for (size_t i = 0; i < ndrop; i++) end_job(c, drop[i], PX_EV_CANCEL, 1003);
  free(drop);
  double free_pct = free_nodes_pct(c);
  printf("gang64_free_nodes_pct %.1f %%\n", free_pct);
  if (free_pct >= 5.0) {
    fprintf(stderr, "bench: %.1f%% of nodes free, the gang case wants fewer than 5%%\n", free_pct);
    return 1;
  }
  enum { N = 21 };
  double t[N];
  for (int i = 0; i < N; i++) {
    struct px_jobspec s;
    px_jobspec_init(&s);
    s.user = user_names[rnd(500)];
    s.nodes_min = 64;
    s.gpus_per_node = 8;
    s.partition = (char *)"all";
    uint64_t id = next_id;
    if (submit(c, &s, 1004)) return 1;
    struct px_core_stats a, b;
    px_core_stats(c, &a);
    double t0 = now_ms();
    if (px_core_cycle(c, 1005 + i, &out) || out.len != 1) return 1;
    t[i] = now_ms() - t0;
    px_core_stats(c, &b);
    if (getenv("PX_BENCH_VERBOSE"))
      fprintf(stderr, "gang: %llu node checks\n", (unsigned long long)(b.place_attempts - a.place_attempts));
    if (end_job(c, id, PX_EV_END, 1005 + i)) return 1;
  }
  qsort(t, N, sizeof t[0], cmp_double);
  printf("gang64_place_us %.0f us\n", t[N / 2] * 1e3);
  px_actions_fini(&out);
  px_core_free(c);
  px_conf_free(conf);
  return 0;
}

int main(int argc, char **argv) {
  uint32_t nodes = 0, pending = 0;
  for (int i = 1; i + 1 < argc; i++) {
    if (!strcmp(argv[i], "--nodes")) nodes = (uint32_t)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--pending")) pending = (uint32_t)strtoul(argv[++i], NULL, 10);
  }
  if (argc > 1 && !strcmp(argv[1], "--only-place"))
    return bench_place_rate(MIX_PLAIN) || bench_place_rate(MIX_ARRAYS) || bench_place_rate(MIX_FRACTIONAL30);
  if (argc > 1 && !strcmp(argv[1], "--only-gang")) return bench_gang64();
  if (nodes || pending) return bench_cycle_full(nodes ? nodes : 10000, pending ? pending : 100000, false);
  if (bench_cycle_full(10000, 100000, true) || bench_place_rate(MIX_PLAIN) || bench_place_rate(MIX_ARRAYS) ||
      bench_place_rate(MIX_FRACTIONAL30) ||
      bench_gang64()) {
    fprintf(stderr, "bench_core: failed\n");
    return 1;
  }
  return 0;
}
