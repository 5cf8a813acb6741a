/*
 * report_accounts.c - per account, what each policy changes (report.h):
 * GPU-hours delivered and lost, waits (average and p95) and the Fair Tree
 * position, each with its change against the reference column, the first
 * one (the recorded run with --from-accounting; else the first policy).
 * Positions change against the first column that has one: the recorded
 * run's come from a core given its runs (fs_record.c), so a column without
 * them is a run that was not sampled.
 */
#include <inttypes.h>
#include <math.h>

#include "sim/report.h"

static const struct px_sim_result *fs_reference(const struct px_sim_report *rep) {
  for (size_t i = 0; i < rep->nresults; i++)
    if (rep->results[i].fs.sampled) return &rep->results[i];
  return NULL;
}

/* ---- table ------------------------------------------------------------- */

#define CELL 17

/* "v" in the reference column, "v (+d)" elsewhere; "-" when v is not a
 * number. The row's last cell is not padded (no trailing blanks). */
static void cell(FILE *f, double v, double ref, int prec, bool delta, bool last) {
  char s[64];
  if (isnan(v)) snprintf(s, sizeof s, "-");
  else if (isinf(v)) snprintf(s, sizeof s, "inf");
  else if (!delta || isnan(ref)) snprintf(s, sizeof s, "%.*f", prec, v);
  else {
    double d = v - ref;
    if (fabs(d) < 0.5 * pow(10, -prec)) d = 0; /* no "-0.0": a change that rounds away is none */
    snprintf(s, sizeof s, "%.*f (%+.*f)", prec, v, prec, d);
  }
  fprintf(f, " %-*s", last ? 0 : CELL, s);
}

enum fs_figure { FS_AVG, FS_END, FS_LEVEL };

/* NAN for a column without samples (or no column at all). */
static double fs_val(const struct px_sim_result *r, enum fs_figure k, uint32_t a) {
  if (!r || !r->fs.sampled) return NAN;
  return k == FS_AVG ? r->fs.factor_avg[a] : k == FS_END ? r->fs.factor_end[a] : r->fs.level_end[a];
}

/* The table's unit for waits or GPU time: chosen from the largest value, so
 * a record of minutes does not read as 0.00 h (the JSON keeps seconds). */
struct unit {
  const char *name;
  double div;
  int prec;
};

static struct unit wait_unit(const struct px_sim_report *rep) {
  int64_t max = 0;
  for (size_t i = 0; i < rep->nresults; i++)
    for (uint32_t a = 0; a < rep->setup->naccounts; a++)
      if (rep->results[i].acct_wait_p95_s[a] > max) max = rep->results[i].acct_wait_p95_s[a];
  return max >= 3600 ? (struct unit){"h", 3600, 2} : max >= 60 ? (struct unit){"min", 60, 1} : (struct unit){"s", 1, 0};
}

static struct unit gpu_unit(const struct px_sim_report *rep) {
  int64_t max = 0;
  for (size_t i = 0; i < rep->nresults; i++)
    for (uint32_t a = 0; a < rep->setup->naccounts; a++)
      if (rep->results[i].acct_gpu_s_held[a] > max) max = rep->results[i].acct_gpu_s_held[a];
  return max >= 36000  ? (struct unit){"GPU-h", 3600, 1}
         : max >= 3600 ? (struct unit){"GPU-h", 3600, 2}
                       : (struct unit){"GPU-min", 60, 1};
}

static void account_row(FILE *f, const struct px_sim_report *rep, uint32_t a, size_t i, struct unit g,
                        struct unit w) {
  const struct px_sim_result *r = &rep->results[i], *r0 = &rep->results[0], *rf = fs_reference(rep);
  bool d = i > 0;
  fprintf(f, "%-16.16s %-14.14s", i ? "" : rep->setup->accounts[a], r->policy);
  cell(f, r->acct_gpu_s_delivered[a] / g.div, r0->acct_gpu_s_delivered[a] / g.div, g.prec, d, false);
  cell(f, r->acct_gpu_s_lost[a] / g.div, r0->acct_gpu_s_lost[a] / g.div, g.prec, d, false);
  cell(f, r->acct_wait_avg_s[a] / w.div, r0->acct_wait_avg_s[a] / w.div, w.prec, d, false);
  cell(f, r->acct_wait_p95_s[a] / w.div, r0->acct_wait_p95_s[a] / w.div, w.prec, d, false);
  cell(f, fs_val(r, FS_AVG, a), fs_val(rf, FS_AVG, a), 3, r != rf, false);
  cell(f, fs_val(r, FS_END, a), fs_val(rf, FS_END, a), 3, r != rf, false);
  cell(f, fs_val(r, FS_LEVEL, a), NAN, 2, false, true);
  fputc('\n', f);
}

void px_sim_report_accounts_table(FILE *f, const struct px_sim_report *rep) {
  const struct px_sim_result *rf = fs_reference(rep);
  struct unit g = gpu_unit(rep), w = wait_unit(rep);
  fprintf(f, "\nper account, each policy (in brackets: the change against %s", rep->results[0].policy);
  if (rf && rf != &rep->results[0]) fprintf(f, "; fair share against %s", rf->policy);
  fprintf(f, ")\n%-16s %-14s", "account", "policy");
  char head[4][32];
  snprintf(head[0], sizeof head[0], "%s delivered", g.name);
  snprintf(head[1], sizeof head[1], "%s lost", g.name);
  snprintf(head[2], sizeof head[2], "wait avg (%s)", w.name);
  snprintf(head[3], sizeof head[3], "wait p95 (%s)", w.name);
  for (int k = 0; k < 4; k++) fprintf(f, " %-*s", CELL, head[k]);
  fprintf(f, " %-*s %-*s %s\n", CELL, "fair-share avg", CELL, "fair-share end", "level FS end");
  for (uint32_t a = 0; a < rep->setup->naccounts; a++)
    for (size_t i = 0; i < rep->nresults; i++) account_row(f, rep, a, i, g, w);
}

/* ---- JSON ---------------------------------------------------------------- */

/* A number, or null when it is not finite (no usage yet: INFINITY; FairShare=parent: NAN). */
static void json_num(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.4f", v);
  else fputs("null", f);
}

static void json_position(FILE *f, const struct px_sim_result *r, uint32_t a) {
  fprintf(f, ", \"fair_share_position\": ");
  if (!r->fs.sampled) {
    fputs("null", f);
    return;
  }
  fprintf(f, "{\"factor_avg\": ");
  json_num(f, r->fs.factor_avg[a]);
  fprintf(f, ", \"factor_end\": ");
  json_num(f, r->fs.factor_end[a]);
  fprintf(f, ", \"level_fs_end\": ");
  json_num(f, r->fs.level_end[a]);
  fputc('}', f);
}

static void json_change(FILE *f, const struct px_sim_report *rep, const struct px_sim_result *r, uint32_t a) {
  const struct px_sim_result *r0 = &rep->results[0], *rf = fs_reference(rep);
  fprintf(f, ", \"change\": {\"against\": ");
  px_sim_json_str(f, r0->policy);
  fprintf(f, ", \"gpu_s_delivered\": %" PRId64 ", \"gpu_s_lost\": %" PRId64 ", \"wait_avg_s\": %.3f, \"wait_p95_s\": %" PRId64,
          r->acct_gpu_s_delivered[a] - r0->acct_gpu_s_delivered[a], r->acct_gpu_s_lost[a] - r0->acct_gpu_s_lost[a],
          r->acct_wait_avg_s[a] - r0->acct_wait_avg_s[a], r->acct_wait_p95_s[a] - r0->acct_wait_p95_s[a]);
  fprintf(f, ", \"fair_share_against\": ");
  if (rf) px_sim_json_str(f, rf->policy);
  else fputs("null", f);
  fprintf(f, ", \"factor_avg\": ");
  json_num(f, r->fs.sampled && rf ? r->fs.factor_avg[a] - rf->fs.factor_avg[a] : NAN);
  fputc('}', f);
}

void px_sim_report_account_json(FILE *f, const struct px_sim_report *rep, const struct px_sim_result *r, uint32_t a) {
  fprintf(f, ", \"wait_p95_s\": %" PRId64 ", \"gpu_s_held\": %" PRId64 ", \"gpu_s_delivered\": %" PRId64
             ", \"gpu_s_lost\": %" PRId64,
          r->acct_wait_p95_s[a], r->acct_gpu_s_held[a], r->acct_gpu_s_delivered[a], r->acct_gpu_s_lost[a]);
  json_position(f, r, a);
  json_change(f, rep, r, a);
}
