/*
 * bench_sim.c - simulator speed and memory, as `name value unit` lines.
 *
 *   sim_philly_s               wall seconds of `phalanx sim` over
 *                              ../shared/traces/philly_pollux.csv (82,247 jobs;
 *                              $PX_TRACES_DIR overrides the directory)
 *                              on 64x8 with multifactor + conservative backfill,
 *                              every cycle a full backfill pass, no bounds
 *                              (examples/policies/conservative.conf); skipped
 *                              with a message when the trace is absent
 *   sim_philly_peak_rss_mib    its peak resident memory
 *   sim_philly_bounded_s       the same replay under Slurm-style cycle bounds
 *                              (examples/policies/conservative-bounded.conf:
 *                              bf_interval=120, bf_max_job_test=1000,
 *                              default_queue_depth=100)
 *   sim_synthetic_1m_s         1,000,000 jobs of the standard mix (issue 3: 60%
 *                              1 GPU, 25% one 8-GPU node, 10% gangs of 2-4 whole
 *                              nodes, 5% gangs of 8-64 whole nodes; no arrays,
 *                              a trace has none) on 2,048 x 8 GPUs, unbounded:
 *                              every cycle a full conservative backfill pass
 *                              (examples/policies/conservative.conf, as
 *                              sim_philly_s); arrivals Poisson at ~90% offered
 *                              load, run times log-uniform in [1 min, 24 h],
 *                              20 accounts
 *   sim_synthetic_1m_peak_rss_mib  its peak resident memory (target < 4096)
 *   sim_synthetic_1m_bounded_s the same under conservative-bounded.conf
 *                              (bf_interval=120, bf_max_job_test=1000,
 *                              default_queue_depth=100)
 *   sim_synthetic_1m_slurm_defaults_s  the same under Slurm's default bounds
 *                              (bf_interval=30, bf_max_job_test=500,
 *                              default_queue_depth=100:
 *                              conservative-slurm-defaults.conf; what
 *                              sim_synthetic_1m_s measured from 2026-12-03
 *                              afternoon to evening)
 *   sim_las_philly_s           the Philly replay under las.conf (Tiresias'
 *                              2D-LAS with checkpointed preemption and
 *                              starvation promotion); next to it its ratio to
 *                              sim_philly_s of the same run, in CPU seconds
 *                              (target <= 2)
 *   sim_gangheavy_overload_s   20,000 jobs (PX_BENCH_GANG_JOBS), 40% gangs of
 *                              2-32 whole nodes, arriving ten times faster
 *                              than 128 x 8 GPUs serve (write_gangheavy), under
 *                              fifo, multifactor, easy, conservative, preempt
 *                              (as conservative: no QoS map), preempt_qosmap
 *                              (gangs of 9+ GPUs under QoS high, which
 *                              preempts), las, las-requeue:
 *                              each policy's time and the slowest's CPU
 *                              seconds (target <= 60), and the slowest over
 *                              EASY's (CPU; target <= 3)
 *   sim_*_cpu_s                the child's CPU seconds (user + system): on a
 *                              shared machine wall time also counts others' work
 *
 * Each run is a child process (fork, then the same entry point as the
 * binary), so wait4() gives its own peak RSS; the parent only times it. The
 * synthetic trace is written to a temporary CSV first (not timed), so the run
 * includes reading it like any trace. `bench_sim --write-trace FILE N` writes
 * the first N jobs of that trace and exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs `phalanx sim ARGS` in a child with stdout to /dev/null; wall and CPU seconds, peak RSS (MiB). */
static int run_sim(char **argv, int argc, double *wall_s, double *cpu_s, double *rss_mib) {
  fflush(NULL);
  double t0 = now_s();
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) dup2(fd, STDOUT_FILENO);
    _exit(px_cmd_sim(argc, argv));
  }
  int st;
  struct rusage ru;
  while (wait4(pid, &st, 0, &ru) < 0) {
    if (errno != EINTR) return -1;
  }
  *wall_s = now_s() - t0;
  *rss_mib = (double)ru.ru_maxrss / 1024.0;
  *cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rng(void) { /* xorshift64*: fixed seed, same trace every run */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ULL;
}
static double unif(void) { return (double)(rng() >> 11) / 9007199254740992.0; }

static int write_synthetic(const char *path, long njobs) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "job_id,submit_s,duration_s,gpus,nodes,user,queue,status\n");
  /* Mean GPUs 0.6x1 + 0.25x8 + 0.1x24 + 0.05x288 = 19.4; mean run time of
   * log-uniform [60, 86400] = 86340 / ln 1440 = 11,870 s; 90% of 16,384 GPUs
   * then needs a mean inter-arrival of 19.4 x 11870 / (0.9 x 16384) = 15.6 s. */
  double t = 0, mean_gap = 15.6;
  for (long i = 0; i < njobs; i++) {
    t += -mean_gap * log(1.0 - unif());
    double u = unif();
    long gpus;
    if (u < 0.60) gpus = 1;
    else if (u < 0.85) gpus = 8;
    else if (u < 0.95) gpus = 8 * (2 + (long)(rng() % 3));
    else gpus = 8 * (8 + (long)(rng() % 57));
    long dur = (long)(60.0 * exp(unif() * log(1440.0)));
    fprintf(f, "s%07ld,%ld,%ld,%ld,,,team%02d,\n", i, (long)t, dur, gpus, (int)(rng() % 20));
  }
  return fclose(f);
}

/* The gang-heavy overload mix (issue 21): 60% single-node jobs of 1, 2, 4
 * or 8 GPUs, 40% gangs of 2-32 whole 8-GPU nodes; run times log-uniform in
 * [5 min, 4 h] (mean 14100 / ln 48 = 3,642 s); 10 accounts. Mean GPUs
 * 0.6 x 3.75 + 0.4 x 8 x 17 = 56.65, so a job is 206,000 GPU-s on average
 * and 128 x 8 GPUs serve one every 201 s: arrivals every 20 s (Poisson)
 * offer ten times that, and the queue grows to thousands of jobs. */
static int write_gangheavy(const char *path, long njobs) {
  rng_state = 0x2545F4914F6CDD1DULL; /* its own sequence, whatever ran before */
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "job_id,submit_s,duration_s,gpus,nodes,user,queue,status\n");
  double t = 0, mean_gap = 20.0;
  for (long i = 0; i < njobs; i++) {
    t += -mean_gap * log(1.0 - unif());
    long gpus, nodes = 1;
    if (unif() < 0.6) gpus = 1L << (rng() % 4);
    else nodes = 2 + (long)(rng() % 31), gpus = 8 * nodes;
    long dur = (long)(300.0 * exp(unif() * log(48.0)));
    fprintf(f, "g%06ld,%ld,%ld,%ld,%ld,,team%d,\n", i, (long)t, dur, gpus, nodes, (int)(rng() % 10));
  }
  return fclose(f);
}

/* One replay under one policy file: NAME_s, NAME_cpu_s, NAME_peak_rss_mib;
 * its CPU seconds into *cpu_out when set (ratios compare CPU: on a shared
 * machine wall time also counts others' work). */
/* One replay; qos_map (or NULL): --qos-map's rules. */
static int sim_run_map(char *trace, const char *cluster, char *policy, const char *qos_map, const char *name,
                       double *cpu_out) {
  double wall = 0, cpu = 0, rss = 0;
  char *args[] = {"sim", "--trace", trace, "--cluster", (char *)cluster, "--policy", policy, "--json",
                  "--qos-map", (char *)qos_map, NULL};
  int st = run_sim(args, qos_map ? 10 : 8, &wall, &cpu, &rss);
  if (st != 0) fprintf(stderr, "bench_sim: %s run exited %d\n", name, st);
  printf("%s_s %.2f s\n%s_cpu_s %.2f s\n%s_peak_rss_mib %.0f MiB\n", name, wall, name, cpu, name, rss);
  if (cpu_out) *cpu_out = cpu;
  return st != 0;
}

static int sim_run_t(char *trace, const char *cluster, char *policy, const char *name, double *cpu_out) {
  return sim_run_map(trace, cluster, policy, NULL, name, cpu_out);
}

static int sim_run(char *trace, const char *cluster, char *policy, const char *name) {
  return sim_run_t(trace, cluster, policy, name, NULL);
}

static void policy_path(char *out, size_t n, const char *src, const char *file);

/* sim_gangheavy_overload_s (issue 21): every policy on the gang-heavy
 * overload mix on 128x8, preemption also with the multi-node gangs under
 * QoS high (docs/simulator.md's map: without it nobody is preempted); the
 * slowest policy's time, and its ratio to EASY backfill's (target <= 3). */
static int gangheavy(const char *src) {
  static const struct {
    const char *name, *file, *qos_map;
  } pols[] = {{"fifo", "fifo", NULL},
              {"multifactor", "multifactor", NULL},
              {"easy", "easy", NULL},
              {"conservative", "conservative", NULL},
              {"preempt", "preempt", NULL},
              {"preempt_qosmap", "preempt", "gpus>=9:high"},
              {"las", "las", NULL},
              {"las-requeue", "las-requeue", NULL}};
  char path[] = "/tmp/px_bench_gang_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  close(fd);
  long njobs = getenv("PX_BENCH_GANG_JOBS") ? strtol(getenv("PX_BENCH_GANG_JOBS"), NULL, 10) : 20000;
  int rc = write_gangheavy(path, njobs) != 0;
  double slowest = 0, easy = 0;
  const char *which = "-";
  for (size_t i = 0; !rc && i < sizeof pols / sizeof pols[0]; i++) {
    char pol[4096], name[96], file[64];
    snprintf(file, sizeof file, "%s.conf", pols[i].file);
    policy_path(pol, sizeof pol, src, file);
    snprintf(name, sizeof name, "sim_gangheavy_overload_%s", pols[i].name);
    double t = 0;
    rc |= sim_run_map(path, "128x8", pol, pols[i].qos_map, name, &t);
    if (strcmp(pols[i].name, "easy") == 0) easy = t;
    if (t > slowest) slowest = t, which = pols[i].name;
  }
  unlink(path);
  printf("sim_gangheavy_overload_s %.2f s (CPU of the slowest: %s; %ld jobs on 128x8; target <= 60)\n", slowest, which,
         njobs);
  printf("sim_gangheavy_overload_vs_easy %.2f x (CPU; easy %.2f s; target <= 3)\n", easy > 0 ? slowest / easy : 0, easy);
  return rc;
}

static void policy_path(char *out, size_t n, const char *src, const char *file) {
  snprintf(out, n, "%s/examples/policies/%s", src ? src : ".", file);
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--write-trace") == 0) /* the synthetic trace alone, for study */
    return write_synthetic(argv[2], strtol(argv[3], NULL, 10)) ? 1 : 0;
  if (argc == 4 && strcmp(argv[1], "--write-gangheavy") == 0)
    return write_gangheavy(argv[2], strtol(argv[3], NULL, 10)) ? 1 : 0;
  const char *src = getenv("PX_SRC");
  char philly[4096], bounded[4096], unbounded[4096], slurm[4096], las[4096];
  const char *traces = getenv("PX_TRACES_DIR");
  if (traces) snprintf(philly, sizeof philly, "%s/philly_pollux.csv", traces);
  else snprintf(philly, sizeof philly, "%s/../shared/traces/philly_pollux.csv", src ? src : ".");
  policy_path(bounded, sizeof bounded, src, "conservative-bounded.conf");
  policy_path(unbounded, sizeof unbounded, src, "conservative.conf");
  policy_path(slurm, sizeof slurm, src, "conservative-slurm-defaults.conf");
  policy_path(las, sizeof las, src, "las.conf");
  int rc = 0;
  if (access(philly, R_OK) != 0) {
    fprintf(stderr, "bench_sim: %s absent: sim_philly_s skipped (see ../shared/traces/PROVENANCE.md)\n", philly);
  } else {
    double base = 0, las_t = 0;
    rc |= sim_run_t(philly, "64x8", unbounded, "sim_philly", &base);
    rc |= sim_run(philly, "64x8", bounded, "sim_philly_bounded");
    rc |= sim_run_t(philly, "64x8", las, "sim_las_philly", &las_t); /* checkpointed LAS (las.conf) */
    printf("sim_las_philly_vs_philly %.2f x (CPU: sim_las_philly_cpu_s %.2f s, sim_philly_cpu_s %.2f s; target <= 2)\n",
           base > 0 ? las_t / base : 0, las_t, base);
  }
  rc |= gangheavy(src);
  char path[] = "/tmp/px_bench_sim_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  close(fd);
  long njobs = getenv("PX_BENCH_SIM_JOBS") ? strtol(getenv("PX_BENCH_SIM_JOBS"), NULL, 10) : 1000000;
  if (write_synthetic(path, njobs) != 0) {
    unlink(path);
    return 1;
  }
  rc |= sim_run(path, "2048x8", unbounded, "sim_synthetic_1m");
  rc |= sim_run(path, "2048x8", bounded, "sim_synthetic_1m_bounded");
  rc |= sim_run(path, "2048x8", slurm, "sim_synthetic_1m_slurm_defaults");
  unlink(path);
  return rc;
}
