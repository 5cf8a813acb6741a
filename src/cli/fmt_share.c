/*
 * fmt_share.c - sshare and sprio as Slurm 22.05 prints them.
 *
 * sshare: fixed widths (Account 20 left, the rest right), each field
 * followed by one space, a dashes line; account names indented one space per
 * tree level; account rows leave User and FairShare blank, and the root row
 * its RawShares too. sprio -l: "%15i %-9r %8u %10Y ..." where, unlike squeue,
 * fields are right-justified unless '-' is given.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/fmt_job.h"

struct share_col {
  const char *name;
  int width;                  /* negative: left-justified */
};

static const struct share_col share_cols[] = {
    {"Account", -20},    {"User", 10},      {"RawShares", 10}, {"NormShares", 11},
    {"RawUsage", 11},    {"NormUsage", 11}, {"EffectvUsage", 13}, {"FairShare", 10},
    {"LevelFS", 10},
};
enum { C_ACCOUNT, C_USER, C_RAWSH, C_NORMSH, C_RAWUSE, C_NORMUSE, C_EFFUSE, C_FS, C_LEVELFS, C_N };

static bool share_col_shown(int c, const struct px_sshare_opts *o) {
  return o->long_list || (c != C_NORMUSE && c != C_LEVELFS);
}

static void share_value(int c, const struct px_share_info *r, char *buf, size_t n) {
  bool user = r->user != NULL, root = r->depth == 0 && !user;
  buf[0] = '\0';
  switch (c) {
  case C_ACCOUNT: snprintf(buf, n, "%*s%s", (int)r->depth, "", r->account); break;
  case C_USER: if (user) snprintf(buf, n, "%s", r->user); break;
  case C_RAWSH: if (!root) snprintf(buf, n, "%u", r->raw_shares); break;
  case C_NORMSH: snprintf(buf, n, "%.6f", r->norm_shares); break;
  case C_RAWUSE: snprintf(buf, n, "%" PRIu64, (uint64_t)(r->raw_usage > 0 ? r->raw_usage : 0)); break;
  case C_NORMUSE: snprintf(buf, n, "%.6f", r->norm_usage); break;
  case C_EFFUSE: snprintf(buf, n, "%.6f", r->effective_usage); break;
  case C_FS: if (user) snprintf(buf, n, "%.6f", r->fairshare); break;
  case C_LEVELFS: if (!root) snprintf(buf, n, "%.6f", r->level_fs); break;
  default: break;
  }
}

static void share_line(FILE *out, const struct px_share_info *r, const struct px_sshare_opts *o) {
  char buf[256];
  bool parsable = o->parsable || o->parsable2, first = true;
  for (int c = 0; c < C_N; c++) {
    if (!share_col_shown(c, o)) continue;
    const char *v = share_cols[c].name;
    if (r) {
      share_value(c, r, buf, sizeof buf);
      v = buf;
    }
    int w = share_cols[c].width < 0 ? -share_cols[c].width : share_cols[c].width;
    if (parsable)
      fprintf(out, "%s%s", first ? "" : "|", v);
    else
      fprintf(out, share_cols[c].width < 0 ? "%-*.*s " : "%*.*s ", w, w, v);
    first = false;
  }
  fputs(o->parsable ? "|\n" : "\n", out);
}

void px_fmt_sshare(FILE *out, const struct px_share_info *rows, size_t n,
                   const struct px_sshare_opts *o) {
  if (!o->noheader) {
    share_line(out, NULL, o);
    if (!o->parsable && !o->parsable2) {
      for (int c = 0; c < C_N; c++) {
        if (!share_col_shown(c, o)) continue;
        int w = share_cols[c].width < 0 ? -share_cols[c].width : share_cols[c].width;
        for (int k = 0; k < w; k++) fputc('-', out);
        fputc(' ', out);
      }
      fputc('\n', out);
    }
  }
  for (size_t i = 0; i < n; i++) share_line(out, &rows[i], o);
}

void px_fmt_sprio(FILE *out, const struct px_job_info *jobs, size_t n, bool long_list,
                  bool noheader) {
  if (!noheader) {
    fprintf(out, "%15s %-9s ", "JOBID", "PARTITION");
    if (long_list) fprintf(out, "%8s ", "USER");
    fprintf(out, "%10s %10s %10s ", "PRIORITY", "SITE", "AGE");
    if (long_list) fprintf(out, "%10s ", "ASSOC");
    fprintf(out, "%10s %10s %10s %10s %11s", "FAIRSHARE", "JOBSIZE", "PARTITION", "QOS", "NICE");
    fprintf(out, long_list ? " %20s\n" : "\n", "TRES");
  }
  for (size_t i = 0; i < n; i++) {
    const struct px_job_info *j = &jobs[i];
    if (strcmp(j->state, "PENDING")) continue; /* sprio lists pending jobs only */
    char id[64];
    px_fmt_job_id(id, sizeof id, j);
    fprintf(out, "%15s %-9.9s ", id, PX_STR(j->spec.partition));
    if (long_list) fprintf(out, "%8.8s ", PX_STR(j->spec.user));
    fprintf(out, "%10u %10u %10u ", j->priority, j->prio_site, j->prio_age);
    if (long_list) fprintf(out, "%10u ", j->prio_assoc);
    fprintf(out, "%10u %10u %10u %10u %11d", j->prio_fairshare, j->prio_jobsize,
            j->prio_partition, j->prio_qos, j->spec.nice);
    fprintf(out, long_list ? " %20s\n" : "\n", "");
  }
}
