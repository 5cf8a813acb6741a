/*
 * report.c - the comparison table and the deterministic JSON (report.h).
 */
#include "sim/report.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

static uint64_t nskipped(const struct px_sim_setup *s) {
  uint64_t n = 0;
  for (int k = 1; k < PX_SIM_SKIP_COUNT; k++) n += s->nskipped[k];
  return n;
}

bool px_sim_report_conserved(const struct px_sim_report *rep) {
  for (size_t i = 0; i < rep->nresults; i++) {
    const struct px_sim_result *r = &rep->results[i];
    if (!r->conserved || r->submitted + nskipped(rep->setup) != rep->setup->njobs) return false;
  }
  return true;
}

/* ---- table ------------------------------------------------------------- */

#define COLW 14

static void row_label(FILE *f, const char *label) { fprintf(f, "%-30s", label); }

static void row_u64(FILE *f, const struct px_sim_report *rep, const char *label, size_t off) {
  row_label(f, label);
  for (size_t i = 0; i < rep->nresults; i++)
    fprintf(f, " %*" PRIu64, COLW, *(const uint64_t *)((const char *)&rep->results[i] + off));
  fputc('\n', f);
}

/* Hours with two decimals: the scale at which people read JCTs of training jobs.
 * stats: a mask of 1 avg, 2 p50, 4 p95, 8 p99. */
static void row_dist(FILE *f, const struct px_sim_report *rep, const char *what, bool wait, int cls, unsigned stats) {
  static const char *const stat[] = {"avg", "p50", "p95", "p99"};
  for (int k = 0; k < 4; k++) {
    if (!(stats & (1u << k))) continue;
    char label[64];
    if (cls == PX_SIM_SIZE_ALL) snprintf(label, sizeof label, "%s %s (h)", what, stat[k]);
    else snprintf(label, sizeof label, "%s %s (h), %s GPU", what, stat[k], px_sim_size_name(cls));
    row_label(f, label);
    for (size_t i = 0; i < rep->nresults; i++) {
      const struct px_sim_dist *d = wait ? &rep->results[i].wait[cls] : &rep->results[i].jct[cls];
      double v = k == 0 ? d->avg_s : (double)(k == 1 ? d->p50_s : k == 2 ? d->p95_s : d->p99_s);
      if (d->n) fprintf(f, " %*.2f", COLW, v / 3600.0);
      else fprintf(f, " %*s", COLW, "-");
    }
    fputc('\n', f);
  }
}

static void row_f(FILE *f, const struct px_sim_report *rep, const char *label, int which) {
  row_label(f, label);
  for (size_t i = 0; i < rep->nresults; i++) {
    const struct px_sim_result *r = &rep->results[i];
    double v = which == 0   ? r->makespan_s / 3600.0
               : which == 1 ? 100 * r->util_avg
               : which == 2 ? r->jain
               : which == 3 ? r->gpu_s_lost_fail / 3600.0
               : which == 4 ? r->gpu_s_down / 3600.0
               : which == 5 ? r->gpu_s_lost / 3600.0
               : which == 6 ? r->gpu_s_ckpt_kept / 3600.0
                            : r->gpu_s_restart / 3600.0;
    fprintf(f, " %*.*f", COLW, which == 2 ? 4 : 1, v);
  }
  fputc('\n', f);
}

static bool any_checkpoints(const struct px_sim_report *rep) {
  for (size_t i = 0; i < rep->nresults; i++)
    if (rep->results[i].ckpt_interval_s) return true;
  return false;
}

/* The preemption model of each column: requeue (from zero) or its checkpoints. */
static void row_ckpt(FILE *f, const struct px_sim_report *rep) {
  row_label(f, "preempted jobs resume");
  for (size_t i = 0; i < rep->nresults; i++) {
    const struct px_sim_result *r = &rep->results[i];
    char v[48];
    if (r->ckpt_interval_s)
      snprintf(v, sizeof v, "ckpt %lldm+%llds", (long long)(r->ckpt_interval_s / 60), (long long)r->ckpt_restart_s);
    else snprintf(v, sizeof v, "from zero");
    fprintf(f, " %*s", COLW, v);
  }
  fputc('\n', f);
}

static bool any_failures(const struct px_sim_report *rep) {
  for (size_t i = 0; i < rep->nresults; i++)
    if (rep->results[i].gpu_failures) return true;
  return false;
}

static void table_header(FILE *f, const struct px_sim_report *rep) {
  const struct px_sim_setup *s = rep->setup;
  fprintf(f, "trace %s: %" PRIu32 " jobs, %" PRIu64 " skipped, %" PRIu32 " fractional GPU requests rounded up, %" PRIu32
             " CPU-only\n",
          rep->trace_path, s->njobs, nskipped(s), s->trace->nfractional, s->trace->ncpu_only);
  for (int k = 1; k < PX_SIM_SKIP_COUNT; k++)
    if (s->nskipped[k]) fprintf(f, "  skipped, %s: %" PRIu64 "\n", px_sim_skip_name((enum px_sim_skip)k), s->nskipped[k]);
  if (s->trace->attempts.len) /* only a record with them: other reports stay as they were */
    fprintf(f, "  requeued in the record: %" PRIu32 " jobs, %zu earlier attempts"
               " (recorded column: preemptions, GPU-h lost)\n",
            s->trace->nrequeued, s->trace->attempts.len);
  fprintf(f, "cluster: %" PRIu32 " nodes, %" PRIu64 " GPUs; time limit = duration x %.2f unless the trace gives one\n\n",
          s->nnodes, s->total_gpus, s->limit_factor);
  for (uint32_t r = 0; r < s->nqos_rules; r++)
    fprintf(f, "%s%s: %" PRIu64 " jobs%s", r ? ", " : "QoS map (--qos-map, first match): ", s->qos_names[r],
            s->qos_jobs[r], r + 1 == s->nqos_rules ? "\n\n" : "");
  row_label(f, "policy");
  for (size_t i = 0; i < rep->nresults; i++) fprintf(f, " %*.*s", COLW, COLW, rep->results[i].policy);
  fputc('\n', f);
}

static void table_accounts(FILE *f, const struct px_sim_report *rep) {
  const struct px_sim_setup *s = rep->setup;
  const struct px_sim_result *r0 = &rep->results[0];
  fprintf(f, "\n%-16s %8s %10s %7s %7s", "account", "jobs", "GPU-h", "share", "fair");
  for (size_t i = 0; i < rep->nresults; i++) fprintf(f, " %*.*s", COLW, COLW, rep->results[i].policy);
  fprintf(f, "\n%-16s %8s %10s %7s %7s", "", "", "", "", "");
  for (size_t i = 0; i < rep->nresults; i++) fprintf(f, " %*s", COLW, "avg wait (h)");
  fputc('\n', f);
  int64_t total = 0;
  for (uint32_t a = 0; a < s->naccounts; a++) total += r0->acct_gpu_s[a];
  for (uint32_t a = 0; a < s->naccounts; a++) {
    fprintf(f, "%-16.16s %8" PRIu64 " %10.1f %6.1f%% %6.1f%%", s->accounts[a], r0->acct_jobs[a],
            r0->acct_gpu_s[a] / 3600.0, total ? 100.0 * r0->acct_gpu_s[a] / total : 0.0, 100 * r0->acct_fair[a]);
    for (size_t i = 0; i < rep->nresults; i++) fprintf(f, " %*.2f", COLW, rep->results[i].acct_wait_avg_s[a] / 3600);
    fputc('\n', f);
  }
  px_sim_report_accounts_table(f, rep);
}

void px_sim_report_table(FILE *f, const struct px_sim_report *rep) {
  table_header(f, rep);
  row_u64(f, rep, "jobs submitted", offsetof(struct px_sim_result, submitted));
  row_u64(f, rep, "jobs done", offsetof(struct px_sim_result, done));
  row_u64(f, rep, "jobs rejected by the core", offsetof(struct px_sim_result, rejected));
  row_f(f, rep, "makespan (h)", 0);
  row_f(f, rep, "GPU utilisation (%)", 1);
  row_dist(f, rep, "JCT", false, PX_SIM_SIZE_ALL, 15);
  row_dist(f, rep, "wait", true, PX_SIM_SIZE_ALL, 15);
  for (int c = PX_SIM_SIZE_1; c < PX_SIM_NSIZE; c++) {
    row_dist(f, rep, "JCT", false, c, 1 | 8);
    row_dist(f, rep, "wait", true, c, 1);
  }
  row_f(f, rep, "Jain index (accounts)", 2);
  row_u64(f, rep, "preemptions", offsetof(struct px_sim_result, preemptions));
  row_f(f, rep, "GPU-h lost to preemption", 5);
  if (any_checkpoints(rep)) {
    row_ckpt(f, rep);
    row_f(f, rep, "GPU-h kept by checkpoints", 6);
    row_f(f, rep, "GPU-h loading checkpoints", 7);
  }
  row_u64(f, rep, "LAS promotions", offsetof(struct px_sim_result, las_promotions));
  row_u64(f, rep, "backfilled jobs", offsetof(struct px_sim_result, backfilled));
  row_u64(f, rep, "waited for topology", offsetof(struct px_sim_result, topo_waited));
  row_u64(f, rep, "timed out", offsetof(struct px_sim_result, timed_out));
  if (any_failures(rep)) {
    row_u64(f, rep, "GPU failures", offsetof(struct px_sim_result, gpu_failures));
    row_u64(f, rep, "jobs requeued by them", offsetof(struct px_sim_result, gpu_fail_requeues));
    row_f(f, rep, "GPU-h lost (work)", 3);
    row_f(f, rep, "GPU-h out of service", 4);
  }
  row_u64(f, rep, "scheduling cycles", offsetof(struct px_sim_result, cycles));
  row_label(f, "conservation");
  /* (JSON has every statistic of every class; the table keeps the ones read most.) */
  for (size_t i = 0; i < rep->nresults; i++) fprintf(f, " %*s", COLW, rep->results[i].conserved ? "ok" : "VIOLATED");
  fputc('\n', f);
  table_accounts(f, rep);
}

/* ---- JSON ---------------------------------------------------------------- */

void px_sim_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

static void json_dist(FILE *f, const struct px_sim_dist *d) {
  fprintf(f, "{\"n\": %" PRIu64 ", \"avg\": %.3f, \"p50\": %" PRId64 ", \"p95\": %" PRId64 ", \"p99\": %" PRId64
             ", \"max\": %" PRId64 "}",
          d->n, d->avg_s, d->p50_s, d->p95_s, d->p99_s, d->max_s);
}

static void json_dists(FILE *f, const char *key, const struct px_sim_dist *d) {
  fprintf(f, "      \"%s\": {", key);
  for (int c = 0; c < PX_SIM_NSIZE; c++) {
    fprintf(f, "%s\n        \"%s\": ", c ? "," : "", px_sim_size_name(c));
    json_dist(f, &d[c]);
  }
  fprintf(f, "\n      },\n");
}

static void json_series(FILE *f, const struct px_sim_series *s, uint32_t ch, const char *key, bool last) {
  fprintf(f, "        \"%s\": [", key);
  for (uint32_t b = 0; b < s->used; b++)
    fprintf(f, "%s%.3f", b ? ", " : "", (double)s->v[(size_t)b * s->nchannels + ch] / (double)s->width_s);
  fprintf(f, "]%s\n", last ? "" : ",");
}

static void json_accounts(FILE *f, const struct px_sim_report *rep, const struct px_sim_result *r) {
  const struct px_sim_setup *s = rep->setup;
  int64_t total = 0;
  for (uint32_t a = 0; a < s->naccounts; a++) total += r->acct_gpu_s[a];
  fprintf(f, "      \"accounts\": [");
  for (uint32_t a = 0; a < s->naccounts; a++) {
    fprintf(f, "%s\n        {\"name\": ", a ? "," : "");
    px_sim_json_str(f, s->accounts[a]);
    fprintf(f, ", \"jobs\": %" PRIu64 ", \"gpu_s\": %" PRId64 ", \"share\": %.4f, \"fair_share\": %.4f, \"wait_avg_s\": %.3f",
            r->acct_jobs[a], r->acct_gpu_s[a], total ? (double)r->acct_gpu_s[a] / (double)total : 0.0, r->acct_fair[a],
            r->acct_wait_avg_s[a]);
    px_sim_report_account_json(f, rep, r, a);
    fputc('}', f);
  }
  fprintf(f, "\n      ],\n");
}

static void json_result(FILE *f, const struct px_sim_report *rep, const struct px_sim_result *r) {
  fprintf(f, "    {\n      \"policy\": ");
  px_sim_json_str(f, r->policy);
  fprintf(f, ",\n      \"submitted\": %" PRIu64 ", \"done\": %" PRIu64 ", \"rejected\": %" PRIu64
             ", \"stuck\": %" PRIu64 ", \"timed_out\": %" PRIu64 ",\n",
          r->submitted, r->done, r->rejected, r->stuck, r->timed_out);
  if (r->reject_example[0]) {
    fprintf(f, "      \"first_rejection\": ");
    px_sim_json_str(f, r->reject_example);
    fprintf(f, ",\n");
  }
  fprintf(f, "      \"makespan_s\": %" PRId64 ", \"utilisation\": %.4f, \"jain_index\": %.4f,\n", r->makespan_s,
          r->util_avg, r->jain);
  fprintf(f, "      \"preemptions\": %" PRIu64 ", \"backfilled\": %" PRIu64 ", \"topology_waited\": %" PRIu64
             ", \"cycles\": %" PRIu64 ", \"idle_cycles\": %" PRIu64 ", \"event_times\": %" PRIu64 ",\n",
          r->preemptions, r->backfilled, r->topo_waited, r->cycles, r->idle_cycles, r->events);
  fprintf(f, "      \"conservation\": {\"ok\": %s, \"gpu_s_busy\": %" PRId64 ", \"gpu_s_jobs\": %" PRId64
             ", \"gpu_s_lost_to_preemption\": %" PRId64 ", \"gpu_s_lost_to_failures\": %" PRId64 "},\n",
          r->conserved ? "true" : "false", r->gpu_s_busy, r->gpu_s_jobs, r->gpu_s_lost, r->gpu_s_lost_fail);
  fprintf(f, "      \"checkpoints\": {\"interval_s\": %" PRId64 ", \"restart_s\": %" PRId64
             ", \"gpu_s_kept\": %" PRId64 ", \"gpu_s_loading\": %" PRId64 "}, \"las_promotions\": %" PRIu64 ",\n",
          r->ckpt_interval_s, r->ckpt_restart_s, r->gpu_s_ckpt_kept, r->gpu_s_restart, r->las_promotions);
  fprintf(f, "      \"gpu_failures\": {\"failures\": %" PRIu64 ", \"jobs_requeued\": %" PRIu64
             ", \"gpu_h_lost\": %.2f, \"gpu_h_out_of_service\": %.2f},\n",
          r->gpu_failures, r->gpu_fail_requeues, (double)r->gpu_s_lost_fail / 3600.0, (double)r->gpu_s_down / 3600.0);
  json_dists(f, "jct_s", r->jct);
  json_dists(f, "wait_s", r->wait);
  json_accounts(f, rep, r);
  fprintf(f, "      \"series\": {\n        \"t0_s\": %" PRId64 ", \"bucket_s\": %" PRId64 ",\n", r->series.t0_s,
          r->series.width_s);
  json_series(f, &r->series, PX_SIM_CH_BUSY, "busy_gpus", false);
  json_series(f, &r->series, PX_SIM_CH_PENDING, "pending_jobs", true);
  fprintf(f, "      }\n    }");
}

void px_sim_report_json(FILE *f, const struct px_sim_report *rep) {
  const struct px_sim_setup *s = rep->setup;
  fprintf(f, "{\n  \"trace\": {\"path\": ");
  px_sim_json_str(f, rep->trace_path);
  fprintf(f, ", \"jobs\": %" PRIu32 ", \"fractional_gpus_rounded_up\": %" PRIu32 ", \"cpu_only\": %" PRIu32
             ", \"skipped\": {",
          s->njobs, s->trace->nfractional, s->trace->ncpu_only);
  bool first = true;
  for (int k = 1; k < PX_SIM_SKIP_COUNT; k++) {
    if (!s->nskipped[k]) continue;
    fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", px_sim_skip_name((enum px_sim_skip)k), s->nskipped[k]);
    first = false;
  }
  fprintf(f, "}},\n  \"cluster\": {\"nodes\": %" PRIu32 ", \"gpus\": %" PRIu64 ", \"gpus_per_node\": %" PRIu32
             "},\n  \"limit_factor\": %.3f,\n  \"conserved\": %s,\n",
          s->nnodes, s->total_gpus, s->node_gpus, s->limit_factor, px_sim_report_conserved(rep) ? "true" : "false");
  if (s->qos_map) { /* only with --qos-map: reports without one stay as they were */
    fprintf(f, "  \"qos_map\": {\"rules\": ");
    px_sim_json_str(f, s->qos_map);
    fprintf(f, ", \"jobs_per_rule\": [");
    for (uint32_t r = 0; r < s->nqos_rules; r++) fprintf(f, "%s%" PRIu64, r ? ", " : "", s->qos_jobs[r]);
    fprintf(f, "]},\n");
  }
  fprintf(f, "  \"policies\": [\n");
  for (size_t i = 0; i < rep->nresults; i++) {
    json_result(f, rep, &rep->results[i]);
    fprintf(f, "%s\n", i + 1 < rep->nresults ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
}
