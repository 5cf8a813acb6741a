/*
 * plot.c - pictures of a simulation with gnuplot (plot.h).
 *
 * Writes plain data files (one per policy, whitespace columns) and one
 * gnuplot script into the directory, then runs `gnuplot plots.gp` there.
 * The PNGs (pngcairo) and SVGs stand alone; the script and data stay next to
 * them so anyone can restyle a picture without the project. When gnuplot is
 * missing, the script and data are still written and the caller is told.
 */
#include "sim/plot.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Policy names become file names: keep [A-Za-z0-9_-], replace the rest. */
static void safe_name(char *out, size_t n, const char *name, size_t idx) {
  size_t k = (size_t)snprintf(out, n, "%02zu_", idx);
  for (const char *p = name; *p && k + 1 < n; p++)
    out[k++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                              *p == '-' || *p == '_'
                          ? *p
                          : '_');
  out[k] = '\0';
}

static FILE *open_in(const char *dir, const char *name, struct px_diag *d) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) px_diag_set(d, PX_EIO, -1, "%.200s: %s", path, strerror(errno));
  return f;
}

/* days, busy GPUs, pending jobs, then per account its cumulative share of busy GPUs (stacking). */
static int write_series(const char *dir, const char *fname, const struct px_sim_report *rep,
                        const struct px_sim_result *r, struct px_diag *d) {
  FILE *f = open_in(dir, fname, d);
  if (!f) return PX_EIO;
  const struct px_sim_series *s = &r->series;
  for (uint32_t b = 0; b < s->used; b++) {
    const int64_t *v = s->v + (size_t)b * s->nchannels;
    double mid = (double)(s->t0_s + (int64_t)b * s->width_s) + s->width_s / 2.0;
    fprintf(f, "%.4f %.3f %.3f", (mid - (double)s->t0_s) / 86400.0, (double)v[PX_SIM_CH_BUSY] / s->width_s,
            (double)v[PX_SIM_CH_PENDING] / s->width_s);
    double cum = 0;
    for (uint32_t a = 0; a < rep->setup->naccounts; a++) {
      cum += v[PX_SIM_CH_BUSY] ? (double)v[PX_SIM_CH_ACCOUNT + a] / (double)v[PX_SIM_CH_BUSY] : 0;
      fprintf(f, " %.4f", v[PX_SIM_CH_BUSY] ? cum : 0.0);
    }
    fputc('\n', f);
  }
  return fclose(f) ? px_diag_set(d, PX_EIO, -1, "%.200s: write failed", fname) : 0;
}

static int write_cdf(const char *dir, const char *fname, const struct px_sim_result *r, struct px_diag *d) {
  FILE *f = open_in(dir, fname, d);
  if (!f) return PX_EIO;
  for (int k = 0; k <= PX_SIM_CDF_POINTS && r->jct[0].n; k++)
    fprintf(f, "%.4f %.5f\n", (r->jct_cdf_s[k] > 0 ? r->jct_cdf_s[k] : 1) / 3600.0, (double)k / PX_SIM_CDF_POINTS);
  return fclose(f) ? px_diag_set(d, PX_EIO, -1, "%.200s: write failed", fname) : 0;
}

static void gp_multi(FILE *g, const struct px_sim_report *rep, const char *out, const char *title, const char *ylabel,
                     const char *xlabel, int col, bool cdf) {
  for (int t = 0; t < 2; t++) {
    fprintf(g, "set terminal %s\nset output '%s.%s'\n", t ? "svg size 960,540 dynamic" : "pngcairo size 1200,675",
            out, t ? "svg" : "png");
    fprintf(g, "set title '%s'\nset xlabel '%s'\nset ylabel '%s'\n", title, xlabel, ylabel);
    fprintf(g, cdf ? "set logscale x\nset yrange [0:1]\n" : "unset logscale\nset yrange [0:*]\n");
    fprintf(g, "plot ");
    for (size_t i = 0; i < rep->nresults; i++) {
      char name[80];
      safe_name(name, sizeof name, rep->results[i].policy, i);
      fprintf(g, "%s'%s.%s' using 1:%d with lines lw 2 title '%s'", i ? ", \\\n     " : "", name,
              cdf ? "cdf" : "dat", col, name + 3);
    }
    fprintf(g, "\n");
  }
}

static void gp_shares(FILE *g, const struct px_sim_report *rep, size_t i) {
  char name[80];
  safe_name(name, sizeof name, rep->results[i].policy, i);
  fprintf(g, "unset logscale\nset yrange [0:1]\nset key outside right\n");
  fprintf(g, "set terminal pngcairo size 1200,675\nset output 'shares_%s.png'\n", name);
  fprintf(g, "set title 'share of busy GPUs per account over time (%s)'\n", name + 3);
  fprintf(g, "set xlabel 'days'\nset ylabel 'share of busy GPUs'\nplot ");
  uint32_t na = rep->setup->naccounts;
  for (uint32_t a = na; a-- > 0;) {
    fprintf(g, "%s'%s.dat' using 1:%u with filledcurves x1 title '%s'", a + 1 < na ? ", \\\n     " : "", name, 4 + a,
            rep->setup->accounts[a]);
  }
  fprintf(g, "\nset key inside right top\n");
}

/* ---- per account: waits and GPU-hours by policy, fair-share position over time ---- */

/* A gnuplot single-quoted string: a quote is written twice. */
static void gp_quoted(FILE *g, const char *s) {
  fputc('\'', g);
  for (; *s; s++) fputs(*s == '\'' ? "''" : (char[2]){*s, 0}, g);
  fputc('\'', g);
}

/* Rows: the account (double-quoted, for xtic), then one column per result. */
static int write_acct_table(const char *dir, const char *fname, const struct px_sim_report *rep, bool wait,
                            struct px_diag *d) {
  FILE *f = open_in(dir, fname, d);
  if (!f) return PX_EIO;
  fprintf(f, "# account, then per policy: %s\n# policies:", wait ? "average wait (h)" : "GPU-h delivered, then GPU-h lost");
  for (size_t i = 0; i < rep->nresults; i++) fprintf(f, " %s", rep->results[i].policy);
  fputc('\n', f);
  for (uint32_t a = 0; a < rep->setup->naccounts; a++) {
    fputc('"', f);
    for (const char *p = rep->setup->accounts[a]; *p; p++) fputc(*p == '"' || *p < ' ' ? '_' : *p, f);
    fputc('"', f);
    for (size_t i = 0; i < rep->nresults; i++) {
      const struct px_sim_result *r = &rep->results[i];
      fprintf(f, " %.4f", (wait ? r->acct_wait_avg_s[a] : (double)r->acct_gpu_s_delivered[a]) / 3600.0);
    }
    for (size_t i = 0; i < rep->nresults && !wait; i++) fprintf(f, " %.4f", rep->results[i].acct_gpu_s_lost[a] / 3600.0);
    fputc('\n', f);
  }
  return fclose(f) ? px_diag_set(d, PX_EIO, -1, "%.200s: write failed", fname) : 0;
}

/* days, then each account's fair-share factor averaged over the bucket. */
static int write_fs(const char *dir, const char *fname, const struct px_sim_report *rep, const struct px_sim_fs *fs,
                    struct px_diag *d) {
  FILE *f = open_in(dir, fname, d);
  if (!f) return PX_EIO;
  const struct px_sim_series *s = &fs->series;
  for (uint32_t b = 0; b < s->used; b++) {
    /* the part of the bucket sampled: the first and last buckets are cut by the first and last samples */
    int64_t from = s->t0_s + (int64_t)b * s->width_s, to = from + s->width_s;
    if (from < fs->t0_s) from = fs->t0_s;
    if (to > fs->last_s) to = fs->last_s;
    if (to <= from) continue;
    fprintf(f, "%.6f", ((double)(from + to) / 2 - (double)s->t0_s) / 86400.0);
    for (uint32_t a = 0; a < rep->setup->naccounts; a++)
      fprintf(f, " %.4f", (double)s->v[(size_t)b * s->nchannels + a] / PX_SIM_FS_SCALE / (double)(to - from));
    fputc('\n', f);
  }
  return fclose(f) ? px_diag_set(d, PX_EIO, -1, "%.200s: write failed", fname) : 0;
}

static void gp_terminal(FILE *g, int t, const char *out) {
  fprintf(g, "set terminal %s\nset output '%s.%s'\n", t ? "svg size 960,540 dynamic" : "pngcairo size 1200,675", out,
          t ? "svg" : "png");
}

/* Grouped bars: one group per account, one bar per policy (columns 2.. of data). */
static void gp_bars(FILE *g, const struct px_sim_report *rep, const char *out, const char *data, const char *title,
                    const char *ylabel) {
  fprintf(g, "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
             "unset logscale\nset yrange [0:*]\nset xtics rotate by -30\nset key outside right\n");
  for (int t = 0; t < 2; t++) {
    gp_terminal(g, t, out);
    fprintf(g, "set title '%s'\nset xlabel 'account'\nset ylabel '%s'\nplot ", title, ylabel);
    for (size_t i = 0; i < rep->nresults; i++) {
      fprintf(g, "%s'%s' using %zu%s title ", i ? ", \\\n     " : "", data, i + 2, i ? "" : ":xtic(1)");
      gp_quoted(g, rep->results[i].policy);
    }
    fputc('\n', g);
  }
  fprintf(g, "set xtics norotate\nset key inside right top\nset style data points\n");
}

/* One line per account: its fair-share factor over time under result i. */
static void gp_fs(FILE *g, const struct px_sim_report *rep, size_t i) {
  char name[80], out[96];
  safe_name(name, sizeof name, rep->results[i].policy, i);
  snprintf(out, sizeof out, "fairshare_%s", name);
  fprintf(g, "unset logscale\nset yrange [0:1.05]\nset key outside right\n");
  for (int t = 0; t < 2; t++) {
    gp_terminal(g, t, out);
    fprintf(g, "set title 'fair-share factor per account over time (%s): 1 = first in line'\n", name + 3);
    fprintf(g, "set xlabel 'days'\nset ylabel 'Fair Tree factor (rank/N)'\nplot ");
    for (uint32_t a = 0; a < rep->setup->naccounts; a++) {
      fprintf(g, "%s'%s.fs' using 1:%u with steps lw 2 title ", a ? ", \\\n     " : "", name, 2 + a);
      gp_quoted(g, rep->setup->accounts[a]);
    }
    fputc('\n', g);
  }
  fprintf(g, "set key inside right top\n");
}

static int write_acct_data(const char *dir, const struct px_sim_report *rep, struct px_diag *d) {
  int rc = write_acct_table(dir, "acct_wait.dat", rep, true, d);
  if (!rc) rc = write_acct_table(dir, "acct_gpu_h.dat", rep, false, d);
  for (size_t i = 0; i < rep->nresults && !rc; i++) {
    if (!rep->results[i].fs.sampled) continue;
    char name[80], fname[96];
    safe_name(name, sizeof name, rep->results[i].policy, i);
    snprintf(fname, sizeof fname, "%s.fs", name);
    rc = write_fs(dir, fname, rep, &rep->results[i].fs, d);
  }
  return rc;
}

static void gp_accounts(FILE *g, const struct px_sim_report *rep) {
  gp_bars(g, rep, "acct_wait", "acct_wait.dat", "average wait per account", "hours");
  gp_bars(g, rep, "acct_gpu_h", "acct_gpu_h.dat", "GPU-hours delivered per account", "GPU-hours");
  for (size_t i = 0; i < rep->nresults; i++)
    if (rep->results[i].fs.sampled) gp_fs(g, rep, i);
}

static int write_script(const char *dir, const struct px_sim_report *rep, struct px_diag *d) {
  FILE *g = open_in(dir, "plots.gp", d);
  if (!g) return PX_EIO;
  fprintf(g, "# Written by `phalanx sim --plots`; run `gnuplot plots.gp` in this directory.\n"
             "set grid\nset key inside right top\n");
  char title[160];
  snprintf(title, sizeof title, "busy GPUs (of %llu)", (unsigned long long)rep->setup->total_gpus);
  gp_multi(g, rep, "utilisation", title, "GPUs busy", "days", 2, false);
  gp_multi(g, rep, "queue", "pending jobs", "jobs pending", "days", 3, false);
  gp_multi(g, rep, "jct_cdf", "job completion time, CDF", "fraction of jobs", "JCT (hours, log scale)", 2, true);
  for (size_t i = 0; i < rep->nresults; i++) gp_shares(g, rep, i);
  gp_accounts(g, rep);
  return fclose(g) ? px_diag_set(d, PX_EIO, -1, "plots.gp: write failed") : 0;
}

static int run_gnuplot(const char *dir, struct px_diag *d) {
  pid_t pid = fork();
  if (pid < 0) return px_diag_set(d, PX_EIO, -1, "fork: %s", strerror(errno));
  if (pid == 0) {
    if (chdir(dir) != 0) _exit(126);
    execlp("gnuplot", "gnuplot", "plots.gp", (char *)NULL);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) return px_diag_set(d, PX_EIO, -1, "waitpid: %s", strerror(errno));
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
    return px_diag_set(d, PX_ENOENT, -1, "gnuplot not found; data and %s/plots.gp are written", dir);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return px_diag_set(d, PX_EIO, -1, "gnuplot failed on %s/plots.gp", dir);
  return 0;
}

int px_sim_plot(const char *dir, const struct px_sim_report *rep, struct px_diag *d) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) return px_diag_set(d, PX_EIO, -1, "%.200s: %s", dir, strerror(errno));
  for (size_t i = 0; i < rep->nresults; i++) {
    char name[80], fname[96];
    safe_name(name, sizeof name, rep->results[i].policy, i);
    snprintf(fname, sizeof fname, "%s.dat", name);
    int rc = write_series(dir, fname, rep, &rep->results[i], d);
    snprintf(fname, sizeof fname, "%s.cdf", name);
    if (!rc) rc = write_cdf(dir, fname, &rep->results[i], d);
    if (rc) return rc;
  }
  int rc = write_acct_data(dir, rep, d);
  if (!rc) rc = write_script(dir, rep, d);
  return rc ? rc : run_gnuplot(dir, d);
}
