/*
 * cmd_sim.c - `phalanx sim`: replay a trace through the scheduling core under
 * one or more policies and report them side by side (docs/simulator.md).
 *
 *   phalanx sim --trace FILE (--cluster NxG | --config FILE) [--policy FILE]...
 *               [--json] [--plots DIR] [--limit-factor F] [--seed N] [--qos-map RULES]
 *   phalanx sim --from-accounting FILE --config slurm.conf [--policy FILE]...
 *
 * --from-accounting reads a trace written by `phalanx export` (the cluster's
 * own finished jobs with their recorded runs): the report's first column is
 * what really happened, and each policy's replay is compared with it job by
 * job (fidelity: mean |replayed wait - recorded wait| over the mean wait).
 * The nodes' down and drain periods of the same record (FILE.nodes.csv
 * beside FILE.csv, as the export writes them, or --node-events FILE;
 * --no-node-events: none) take those nodes out of service in every replay
 * (node_events.h).
 *
 * Exit status: 0 when every run conserved jobs and GPU-seconds, 1 when a
 * run failed or conservation was violated, 2 for bad usage or input.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "sim/cluster.h"
#include "sim/node_events.h"
#include "sim/plot.h"
#include "sim/policy.h"
#include "sim/progress.h"
#include "sim/recorded.h"
#include "sim/report.h"
#include "sim/run.h"

#define MAX_POLICIES 16

struct opts {
  const char *trace, *cluster, *config, *plots, *qos_map;
  const char *fidelity_jobs; /* --fidelity-jobs: the cluster replay against the record, job by job (CSV) */
  const char *policies[MAX_POLICIES];
  int npolicies;
  bool json;
  bool from_accounting;    /* --from-accounting: the trace has recorded runs; report them first */
  double limit_factor;
  uint64_t seed;
  double gpu_failures;     /* --gpu-failures: per GPU per day */
  int64_t gpu_repair_s;    /* --gpu-repair */
  const char *node_events_path; /* --node-events FILE; NULL: beside the trace (--from-accounting) */
  bool no_node_events;     /* --no-node-events */
  const struct px_node_events *node_events; /* loaded and bound (NULL: none) */
};

static void usage(FILE *f) {
  fprintf(f, "usage: phalanx sim --trace FILE (--cluster NODESxGPUS | --config FILE)\n"
             "                   [--policy FILE]... [--json] [--plots DIR] [--limit-factor F] [--seed N]\n"
             "  --trace FILE        CSV: job_id,submit_s,duration_s,gpus,nodes,user,queue,status[,time_limit_s]\n"
             "  --cluster 64x8      64 nodes of 8 GPUs (64 CPUs, 1 TiB), 32-node leaf switches\n"
             "  --config FILE       the server's slurm.conf (nodes, topology, accounts); queues must be accounts\n"
             "  --policy FILE       scheduling keys (examples/policies/*.conf); repeat to compare\n"
             "  --json              machine-readable report on stdout (byte-identical for the same inputs)\n"
             "  --plots DIR         PNG/SVG pictures and their data into DIR (gnuplot)\n"
             "  --limit-factor F    time limit = duration x F when the trace has none (default %.1f)\n"
             "  --qos-map RULES     RULE:QOS,... (queue=NAME, gpus>=N, gpus<=N; first match) e.g. gpus>=9:high\n"
             "  --gpu-failures R    inject GPU failures, R per GPU per day (e.g. 0.01): the GPU is out of service,\n"
             "                      its job requeued whole; reports the GPU-hours lost\n"
             "  --gpu-repair S      seconds a failed GPU stays out of service (default 14400)\n"
             "  --from-accounting FILE  a trace from `phalanx export` (instead of --trace): the recorded\n"
             "                      run is the first column, each policy's waits compared with it\n"
             "  --fidelity-jobs FILE  with --from-accounting: each job's recorded and replayed wait under the\n"
             "                      cluster's own keys, as CSV (which jobs the replay gets wrong, and how)\n"
             "  --node-events FILE  with --from-accounting: the nodes' down and drain periods of the record\n"
             "                      (default: FILE.nodes.csv beside the trace, when there is one)\n"
             "  --no-node-events    replay without them (every node in service throughout)\n",
          PX_SIM_LIMIT_FACTOR);
}

static int parse_args(int argc, char **argv, struct opts *o) {
  static const struct option longopts[] = {
      {"trace", required_argument, NULL, 't'}, {"cluster", required_argument, NULL, 'c'},
      {"config", required_argument, NULL, 'C'}, {"policy", required_argument, NULL, 'p'},
      {"json", no_argument, NULL, 'j'},        {"plots", required_argument, NULL, 'P'},
      {"limit-factor", required_argument, NULL, 'l'}, {"seed", required_argument, NULL, 's'},
      {"qos-map", required_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'},
      {"gpu-failures", required_argument, NULL, 'f'}, {"gpu-repair", required_argument, NULL, 'r'},
      {"from-accounting", required_argument, NULL, 'A'}, {"fidelity-jobs", required_argument, NULL, 'F'},
      {"node-events", required_argument, NULL, 'N'}, {"no-node-events", no_argument, NULL, 'n'},
      {NULL, 0, NULL, 0}};
  *o = (struct opts){.limit_factor = PX_SIM_LIMIT_FACTOR, .seed = 1};
  optind = 1;
  int ch;
  char *end;
  while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (ch) {
      case 't': o->trace = optarg; break;
      case 'A':
        o->trace = optarg;
        o->from_accounting = true;
        break;
      case 'F': o->fidelity_jobs = optarg; break;
      case 'N': o->node_events_path = optarg; break;
      case 'n': o->no_node_events = true; break;
      case 'c': o->cluster = optarg; break;
      case 'C': o->config = optarg; break;
      case 'P': o->plots = optarg; break;
      case 'q': o->qos_map = optarg; break;
      case 'j': o->json = true; break;
      case 'p':
        if (o->npolicies == MAX_POLICIES) {
          fprintf(stderr, "phalanx sim: at most %d policies\n", MAX_POLICIES);
          return 2;
        }
        o->policies[o->npolicies++] = optarg;
        break;
      case 'l':
        o->limit_factor = strtod(optarg, &end);
        if (*end || end == optarg) {
          fprintf(stderr, "phalanx sim: --limit-factor %s: not a number\n", optarg);
          return 2;
        }
        break;
      case 's':
        o->seed = strtoull(optarg, &end, 10);
        if (*end || end == optarg) {
          fprintf(stderr, "phalanx sim: --seed %s: not a number\n", optarg);
          return 2;
        }
        break;
      case 'f':
        o->gpu_failures = strtod(optarg, &end);
        if (*end || end == optarg || !(o->gpu_failures >= 0 && o->gpu_failures <= 1000)) {
          fprintf(stderr, "phalanx sim: --gpu-failures %s: a rate per GPU per day, 0 to 1000\n", optarg);
          return 2;
        }
        break;
      case 'r':
        o->gpu_repair_s = strtoll(optarg, &end, 10);
        if (*end || end == optarg || o->gpu_repair_s < 1) {
          fprintf(stderr, "phalanx sim: --gpu-repair %s: seconds, at least 1\n", optarg);
          return 2;
        }
        break;
      case 'h': usage(stdout); return 1;
      default: usage(stderr); return 2;
    }
  }
  if ((o->node_events_path || o->no_node_events) && !o->from_accounting) {
    fprintf(stderr, "phalanx sim: --node-events and --no-node-events need --from-accounting (a record)\n");
    return 2;
  }
  if (o->fidelity_jobs && !o->from_accounting) {
    fprintf(stderr, "phalanx sim: --fidelity-jobs needs --from-accounting (a record to compare with)\n");
    return 2;
  }
  if (optind < argc || !o->trace || !!o->cluster == !!o->config) {
    if (o->from_accounting && o->trace && !o->config && !o->cluster)
      fprintf(stderr, "phalanx sim: --from-accounting needs --config (the cluster's own slurm.conf)\n");
    usage(stderr);
    return 2;
  }
  return 0;
}

static struct px_conf *make_cluster(const struct opts *o, const struct px_trace *t) {
  struct px_diag d;
  uint32_t nnodes, ngpu;
  if (o->config) {
    struct px_conf *c = NULL;
    struct px_conf_diags diags = {0};
    int rc = px_conf_load(o->config, &c, &diags);
    for (size_t i = 0; i < diags.len; i++) {
      char line[512];
      px_conf_msg_format(&diags.v[i], line, sizeof line);
      fprintf(stderr, "phalanx sim: %s\n", line);
    }
    if (rc && !diags.len) fprintf(stderr, "phalanx sim: %s: %s\n", o->config, px_strerror(rc));
    px_conf_diags_fini(&diags);
    return rc ? NULL : c;
  }
  if (px_sim_cluster_parse(o->cluster, &nnodes, &ngpu, &d)) {
    fprintf(stderr, "phalanx sim: %s\n", d.msg);
    return NULL;
  }
  const char **names;
  uint32_t n;
  if (px_sim_trace_accounts(t, &names, &n)) return NULL;
  struct px_conf *c = px_sim_cluster_new(nnodes, ngpu, names, n, &d);
  free(names);
  if (!c) fprintf(stderr, "phalanx sim: %s\n", d.msg);
  return c;
}

/*
 * The --policy files, or the cluster's own keys ("default") when none is
 * given. A replay of accounting always starts with the cluster's own keys
 * ("cluster"): the fidelity figure is about that replay, and the policies
 * are read against it.
 */
static int load_policies(const struct opts *o, const struct px_conf *c, struct px_sim_policy *pol, int *npol) {
  struct px_diag d;
  int own = !o->npolicies || o->from_accounting;
  if (own) {
    snprintf(pol[0].name, sizeof pol[0].name, "%s", o->from_accounting ? "cluster" : "default");
    pol[0].sched = c->sched;
  }
  *npol = own + o->npolicies;
  for (int i = 0; i < o->npolicies; i++) {
    if (px_sim_policy_load(&pol[own + i], o->policies[i], &c->sched, &d)) {
      fprintf(stderr, "phalanx sim: policy %s\n", d.msg);
      return 2;
    }
  }
  return 0;
}

/* Each replay against the record, job by job (--from-accounting), after the table. */
static void print_fidelity(FILE *f, const struct px_sim_result *res, const struct px_sim_fidelity *fid, int n) {
  for (int i = 0; i < n; i++) {
    const struct px_sim_fidelity *fi = &fid[i];
    double pct = fi->mean_recorded_wait_s > 0 ? 100.0 * fi->mean_abs_diff_s / fi->mean_recorded_wait_s : 0;
    fprintf(f, "fidelity %s: %llu jobs, mean |replayed wait - recorded wait| %.1f s, mean recorded wait %.1f s, "
               "error %.1f%% of the mean wait\n",
            res[i].policy, (unsigned long long)fi->jobs, fi->mean_abs_diff_s, fi->mean_recorded_wait_s, pct);
  }
}

/* --fidelity-jobs: the first replay (the cluster's own keys) job by job. */
static int write_fidelity_jobs(const char *path, const struct px_sim_setup *s, const struct px_sim_jobrun *runs) {
  FILE *f = fopen(path, "we");
  int rc = f ? px_sim_fidelity_jobs(f, s, runs) : PX_EIO;
  if (f && fclose(f)) rc = PX_EIO;
  if (rc) fprintf(stderr, "phalanx sim: --fidelity-jobs %s: cannot write\n", path);
  return rc;
}

/* res[0] is the recorded run when o->from_accounting; *nres counts what was filled. */
static int run_all(const struct opts *o, const struct px_sim_setup *s, const struct px_sim_policy *pol, int npol,
                   struct px_sim_result *res, int *nres, struct px_sim_fidelity *fid) {
  struct px_diag d;
  *nres = 0;
  if (o->from_accounting) {
    int rc = px_sim_recorded(s, &res[0], &d);
    if (rc) {
      fprintf(stderr, "phalanx sim: %s: %s\n", o->trace, d.msg);
      return 2;
    }
    *nres = 1;
  }
  for (int i = 0; i < npol; i++) {
    struct px_sim_jobrun *runs = NULL;
    struct px_sim_run_opts ro = {.seed = o->seed, .progress = px_sim_progress_new(pol[i].name),
                                 .gpu_fail_per_day = o->gpu_failures, .gpu_repair_s = o->gpu_repair_s,
                                 .runs_out = o->from_accounting ? &runs : NULL,
                                 .cycle_per_event = o->from_accounting, .node_events = o->node_events};
    int rc = px_sim_run(s, &pol[i].sched, pol[i].name, &ro, &res[*nres], &d);
    px_sim_progress_free(ro.progress);
    if (rc) {
      fprintf(stderr, "phalanx sim: policy %s: %s (%s)\n", pol[i].name, d.msg, px_strerror(rc));
      return 1;
    }
    (*nres)++;
    /* the record's fair share, ranked when this replay's core ranked (fs_record.c) */
    rc = o->from_accounting && i == 0 ? px_sim_fs_recorded(&res[0], s, &res[1]) : 0;
    if (rc) {
      fprintf(stderr, "phalanx sim: the recorded run's fair share: %s\n", px_strerror(rc));
      free(runs);
      return 1;
    }
    if (runs) px_sim_fidelity(s, runs, &fid[i]);
    rc = runs && i == 0 && o->fidelity_jobs ? write_fidelity_jobs(o->fidelity_jobs, s, runs) : 0;
    free(runs);
    if (rc) return 2;
  }
  return 0;
}

static int report(const struct opts *o, const struct px_sim_setup *s, struct px_sim_result *res, int n) {
  struct px_sim_report rep = {.trace_path = o->trace, .setup = s, .results = res, .nresults = (size_t)n};
  if (o->json) px_sim_report_json(stdout, &rep);
  else px_sim_report_table(stdout, &rep);
  int rc = 0;
  if (o->plots) {
    struct px_diag d;
    if (px_sim_plot(o->plots, &rep, &d)) {
      fprintf(stderr, "phalanx sim: plots: %s\n", d.msg);
      rc = 1;
    }
  }
  if (!px_sim_report_conserved(&rep)) {
    fprintf(stderr, "phalanx sim: conservation check VIOLATED (see the report)\n");
    rc = 1;
  }
  return rc;
}

/* The record's node events (--from-accounting): --node-events FILE, or
 * FILE.nodes.csv beside the trace FILE.csv when it is there. 0 (e->spans
 * empty when there are none), or 2 after saying why. */
static int load_node_events(const struct opts *o, const struct px_trace *t, const struct px_conf *conf,
                            struct px_node_events *e) {
  memset(e, 0, sizeof *e);
  if (!o->from_accounting || o->no_node_events) return 0;
  char beside[4096];
  const char *path = o->node_events_path;
  if (!path) {
    size_t n = strlen(o->trace);
    if (n >= 4 && !strcmp(o->trace + n - 4, ".csv")) n -= 4;
    snprintf(beside, sizeof beside, "%.*s.nodes.csv", (int)n, o->trace);
    FILE *f = fopen(beside, "r");
    if (!f) return 0; /* an export without node events (or an older one) */
    fclose(f);
    path = beside;
  }
  struct px_diag d;
  int rc = px_node_events_load(e, path, &d);
  if (rc) fprintf(stderr, "phalanx sim: %s\n", d.msg); /* it names the file */
  if (!rc && (rc = px_node_events_bind(e, conf, t->time0_unix_s, &d))) fprintf(stderr, "phalanx sim: %s: %s\n", path, d.msg);
  if (rc) {
    px_node_events_fini(e);
    return 2;
  }
  size_t down = 0;
  for (size_t i = 0; i < e->spans.len; i++) down += e->spans.v[i].down;
  fprintf(stderr, "phalanx sim: %s: %zu node periods (%zu DOWN, %zu DRAIN) taken out of service\n", path,
          e->spans.len, down, e->spans.len - down);
  return 0;
}

int px_cmd_sim(int argc, char **argv) {
  struct opts o;
  int rc = parse_args(argc, argv, &o);
  if (rc) return rc == 1 ? 0 : rc;
  struct px_trace t;
  struct px_diag d;
  if (px_trace_load(&t, o.trace, &d)) {
    fprintf(stderr, "phalanx sim: %s\n", d.msg);
    return 2;
  }
  struct px_conf *conf = make_cluster(&o, &t);
  struct px_sim_setup s = {0};
  struct px_node_events nev = {0};
  struct px_sim_policy pol[MAX_POLICIES + 1];
  struct px_sim_result res[MAX_POLICIES + 2];
  struct px_sim_fidelity fid[MAX_POLICIES + 1];
  int npol = 0, nres = 0;
  rc = 2;
  if (!conf) goto out;
  if (px_sim_setup_init(&s, &t, conf, o.limit_factor, &d) || (o.qos_map && px_sim_setup_qos(&s, o.qos_map, &d))) {
    fprintf(stderr, "phalanx sim: %s\n", d.msg);
    goto out;
  }
  if ((rc = load_node_events(&o, &t, conf, &nev))) goto out;
  o.node_events = nev.spans.len ? &nev : NULL;
  if ((rc = load_policies(&o, conf, pol, &npol))) goto out;
  if (!(rc = run_all(&o, &s, pol, npol, res, &nres, fid))) {
    rc = report(&o, &s, res, nres);
    if (o.from_accounting) print_fidelity(o.json ? stderr : stdout, res + 1, fid, nres - 1);
    for (int i = 1; o.node_events && i < nres; i++)
      fprintf(o.json ? stderr : stdout, "node outages %s: %llu replayed, %llu jobs requeued by them\n", res[i].policy,
              (unsigned long long)res[i].node_outages, (unsigned long long)res[i].node_fail_requeues);
  }
  for (int i = 0; i < nres; i++) px_sim_result_fini(&res[i]);
out:
  px_node_events_fini(&nev);
  px_sim_setup_fini(&s);
  px_conf_free(conf);
  px_trace_fini(&t);
  return rc;
}
