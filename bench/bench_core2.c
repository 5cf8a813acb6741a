/*
 * bench_core2.c - benchmark of the issue-4 policies on the standard cluster
 * (10,000 nodes x 8 GPUs in 2 NVLink groups, 64 CPUs, 1 TiB; 32-node leaf
 * switches; 4 partitions; accounts root -> 4 orgs -> 20 teams -> 500 users),
 * built from a fixed seed. Prints `name value unit` lines:
 *
 *   backfill_pass_ms         one conservative backfill cycle (depth: all)
 *                            over 100,000 pending jobs of the standard mix
 *                            (2% of them 1,000-task arrays) on the cluster
 *                            filled to 70% of its GPUs by jobs with time
 *                            limits from 30 min to 1 day; it plans every
 *                            job and starts those that fit
 *   backfill_pass_again_ms   the next cycle (nothing new to start)
 *   backfill_pass_wall_ms    the first pass in wall time (times are CPU
 *                            time of the thread otherwise: the machine is
 *                            shared)
 *   backfill_plan_bytes      memory of the plan, measured through the core's
 *                            allocator: a fresh core's bytes beyond those of
 *                            the same core without backfill (the timeline),
 *                            plus what the first pass added (until 2026-12-03
 *                            evening: computed as nodes x 8 x slots)
 *   preempt_decision_us      one cycle choosing the victims for a 32-node
 *                            gang of a preempting QoS on a full cluster of
 *                            5,000 running 2-node gangs (median of 9)
 *
 * Options: --pending N, --nodes N, --no-backfill (the same pass without
 * backfill, for comparison).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "core/event.h"
#include "core/testconf.h"
#include "core/policy.h"

/* CPU time of this thread: the build machine is shared by several builds, so
 * wall time measures the neighbours; the _wall figures are printed too. */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t rng = 7;
static uint32_t rnd(uint32_t n) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)((rng >> 33) % n);
}

static char users[500][8];
static const char *parts[4] = {"p0", "p1", "p2", "p3"};

static struct px_conf *cluster(uint32_t nnodes) {
  struct px_testconf_spec s = {.nnodes = nnodes, .gpus_per_node = 8, .cpus_per_node = 64,
                               .mem_mib = 1024 * 1024, .gpu_groups = 2, .nodes_per_leaf = 32,
                               .npartitions = 4};
  struct px_conf *c = px_testconf_new(&s);
  if (!c) return NULL;
  c->sched.weight_jobsize = 1000;
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
        snprintf(users[k], sizeof users[k], "u%u", k);
        px_testconf_user(c, users[k], team, 1);
      }
    }
  }
  return c;
}

static const int64_t limits[] = {1800, 3600, 7200, 14400, 43200, 86400};

/* One job of the standard mix; returns its GPU count (per task for arrays). */
static uint32_t mix(struct px_jobspec *s, bool arrays) {
  px_jobspec_init(s);
  s->user = users[rnd(500)];
  s->partition = (char *)parts[rnd(4)];
  s->time_limit_s = limits[rnd(6)];
  uint32_t x = rnd(100);
  if (arrays && rnd(50) == 0) {
    s->gpus_per_node = 1;
    s->array = (char *)"0-999";
    return 1;
  }
  if (x < 60) return s->gpus_per_node = 1;
  s->gpus_per_node = 8;
  if (x < 85) return 8;
  s->nodes_min = x < 95 ? 2 + rnd(3) : 8 + rnd(57);
  return 8 * s->nodes_min;
}

static uint64_t next_id = 1;
static int submit(struct px_core *c, const struct px_jobspec *s, int64_t now) {
  struct px_event ev = {.kind = PX_EV_SUBMIT, .job_id = next_id, .spec = (struct px_jobspec *)s};
  struct px_event_result res;
  int rc = px_core_apply(c, &ev, now, &res);
  next_id += rc ? 1 : res.nids;
  return rc;
}

/* Core memory of a fresh core under conf with backfill off: what a backfill
 * core has beyond it is its plan (the timeline, made with the policy). */
static size_t fresh_bytes_without_backfill(struct px_conf *conf) {
  enum px_backfill_mode mode = conf->sched.backfill;
  conf->sched.backfill = PX_BACKFILL_NONE;
  struct px_core *c = px_core_new(conf, 1, NULL);
  conf->sched.backfill = mode;
  struct px_core_stats st = {0};
  if (c) px_core_stats(c, &st);
  px_core_free(c);
  return st.bytes_in_use;
}

static int bench_backfill(uint32_t nnodes, uint32_t npending, bool no_backfill) {
  struct px_conf *conf = cluster(nnodes);
  conf->sched.backfill = no_backfill ? PX_BACKFILL_NONE : PX_BACKFILL_CONSERVATIVE;
  size_t base = fresh_bytes_without_backfill(conf);
  struct px_core *c = px_core_new(conf, 1, NULL);
  struct px_core_stats fresh;
  if (c) px_core_stats(c, &fresh);
  struct px_actions out;
  px_actions_init(&out);
  if (!c) return 1;
  uint64_t want = (uint64_t)nnodes * 8 * 7 / 10, got = 0;
  while (got < want) { /* running jobs: 70% of the GPUs, mixed limits */
    struct px_jobspec s;
    uint32_t g = mix(&s, false);
    if (submit(c, &s, 0) == 0) got += g;
  }
  if (px_core_cycle(c, 0, &out)) return 1;
  size_t running = out.len;
  for (uint32_t i = 0; i < npending; i++) {
    struct px_jobspec s;
    mix(&s, true);
    submit(c, &s, 600);
  }
  struct px_core_stats st0, st1;
  px_core_stats(c, &st0);
  double t0 = now_ms(), w0 = wall_ms();
  if (px_core_cycle(c, 1200, &out)) return 1;
  double t1 = now_ms(), w1 = wall_ms();
  px_core_stats(c, &st1);
  size_t started = out.len;
  if (px_core_cycle(c, 1260, &out)) return 1;
  double t2 = now_ms();
  size_t expected = 0, cur = 0;
  struct px_job_view v;
  while (px_core_job_next(c, &cur, &v)) expected += v.state == PX_JOB_PENDING && v.expected_start_s;
  fprintf(stderr, "bench: %zu running, %zu started by the pass, %zu pending with an expected start\n",
          running, started, expected);
  printf("backfill_pass_ms %.1f ms\n", t1 - t0);
  printf("backfill_pass_wall_ms %.1f ms\n", w1 - w0);
  printf("backfill_pass_again_ms %.1f ms\n", t2 - t1);
  fprintf(stderr, "bench: computed plan size %zu bytes\n", (size_t)nnodes * 8 * (86400 / 300 + 1));
  /* the plan made with the policy, and what the first pass added to it */
  printf("backfill_plan_bytes %zu bytes\n", fresh.bytes_in_use - base + (st1.bytes_in_use - st0.bytes_in_use));
  px_actions_fini(&out);
  px_core_free(c);
  px_conf_free(conf);
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int bench_preempt(uint32_t nnodes) {
  double t[9];
  for (int round = 0; round < 9; round++) {
    struct px_conf *conf = cluster(nnodes);
    uint32_t low = px_testconf_qos(conf, "low", 0), high = px_testconf_qos(conf, "high", 100);
    uint32_t lowidx[1] = {low};
    conf->qos[high].preempt = lowidx;
    conf->qos[high].npreempt = 1;
    conf->sched.preempt_type = "preempt/qos";
    conf->sched.preempt_mode = PX_PREEMPT_REQUEUE;
    struct px_core *c = px_core_new(conf, 1, NULL);
    struct px_actions out;
    px_actions_init(&out);
    if (!c) return 1;
    next_id = 1;
    for (uint32_t i = 0; i < nnodes / 2; i++) { /* 5,000 running 2-node gangs, started over time */
      struct px_jobspec s;
      px_jobspec_init(&s);
      s.user = users[rnd(500)];
      s.partition = (char *)parts[i * 8 / nnodes];
      s.qos = (char *)"low";
      s.nodes_min = 2;
      s.gpus_per_node = 8;
      s.time_limit_s = 86400;
      submit(c, &s, 0);
    }
    if (px_core_cycle(c, 0, &out) || out.len != nnodes / 2) return 1;
    struct px_jobspec s;
    px_jobspec_init(&s);
    s.user = users[0];
    s.partition = (char *)"p1";
    s.qos = (char *)"high";
    s.nodes_min = 32;
    s.gpus_per_node = 8;
    s.time_limit_s = 3600;
    submit(c, &s, 3000);
    double a = now_ms();
    if (px_core_cycle(c, 3600, &out)) return 1;
    t[round] = (now_ms() - a) * 1e3;
    size_t np = 0;
    for (size_t i = 0; i < out.len; i++) np += out.v[i].kind == PX_ACT_PREEMPT;
    if (round == 0) fprintf(stderr, "bench: %zu victims for the 32-node gang\n", np);
    px_actions_fini(&out);
    px_core_free(c);
    px_conf_free(conf);
  }
  qsort(t, 9, sizeof *t, cmp_double);
  printf("preempt_decision_us %.0f us\n", t[4]);
  return 0;
}

int main(int argc, char **argv) {
  uint32_t nnodes = 10000, npending = 100000;
  bool no_backfill = argc > 1 && !strcmp(argv[argc - 1], "--no-backfill");
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--pending")) npending = (uint32_t)strtoul(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--nodes")) nnodes = (uint32_t)strtoul(argv[i + 1], NULL, 10);
  }
  if (bench_backfill(nnodes, npending, no_backfill)) {
    fprintf(stderr, "bench_core2: backfill setup failed\n");
    return 1;
  }
  if (bench_preempt(nnodes)) {
    fprintf(stderr, "bench_core2: preempt setup failed\n");
    return 1;
  }
  return 0;
}
