/* units.c - parsing and formatting durations and sizes; see units.h. */
#include "util/units.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define DUR_FORMS "M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED"
#define MAX_FIELD_DIGITS 9

/* Reads up to 9 digits at s[*pos]. */
static int dur_field(const char *s, size_t *pos, int64_t *v, struct px_diag *d) {
  size_t i = *pos;
  int64_t x = 0;
  while (s[i] >= '0' && s[i] <= '9') {
    if (i - *pos == MAX_FIELD_DIGITS)
      return px_diag_set(d, PX_ERANGE, (int)*pos, "position %zu: number longer than %d digits",
                         *pos + 1, MAX_FIELD_DIGITS);
    x = x * 10 + (s[i] - '0');
    i++;
  }
  if (i == *pos) {
    if (s[i] == '\0' && i == 0) return px_diag_set(d, PX_EPARSE, 0, "empty duration (expected " DUR_FORMS ")");
    return px_diag_set(d, PX_EPARSE, (int)i, "position %zu: expected a digit (durations are " DUR_FORMS ")",
                       i + 1);
  }
  *v = x;
  *pos = i;
  return 0;
}

static int dur_check(int64_t v, int64_t max, const char *what, struct px_diag *d) {
  if (v <= max) return 0;
  return px_diag_set(d, PX_ERANGE, -1, "%s must be 0-%lld (got %lld)", what, (long long)max, (long long)v);
}

/* "D-H[:M[:S]]": days, then hours 0-23, minutes and seconds 0-59. */
static int dur_days(const char *s, size_t pos, int64_t days, int64_t *out, struct px_diag *d) {
  int64_t f[3] = {0, 0, 0};
  int n = 0, err;
  for (;;) {
    if ((err = dur_field(s, &pos, &f[n], d))) return err;
    n++;
    if (s[pos] == '\0') break;
    if (s[pos] != ':' || n == 3)
      return px_diag_set(d, PX_EPARSE, (int)pos, "position %zu: unexpected '%c' (durations are " DUR_FORMS ")",
                         pos + 1, s[pos]);
    pos++;
  }
  if ((err = dur_check(f[0], 23, "hours after days", d)) || (err = dur_check(f[1], 59, "minutes", d)) ||
      (err = dur_check(f[2], 59, "seconds", d)))
    return err;
  *out = days * 86400 + f[0] * 3600 + f[1] * 60 + f[2];
  return 0;
}

int px_duration_parse(const char *s, int64_t *out_s, struct px_diag *d) {
  if (!strcasecmp(s, "UNLIMITED") || !strcasecmp(s, "INFINITE") || !strcmp(s, "-1")) {
    *out_s = PX_TIME_UNLIMITED;
    return 0;
  }
  int64_t f[3] = {0, 0, 0};
  size_t pos = 0;
  int n = 0, err;
  for (;;) {
    if ((err = dur_field(s, &pos, &f[n], d))) return err;
    n++;
    if (s[pos] == '\0') break;
    if (s[pos] == '-' && n == 1) return dur_days(s, pos + 1, f[0], out_s, d);
    if (s[pos] != ':' || n == 3)
      return px_diag_set(d, PX_EPARSE, (int)pos, "position %zu: unexpected '%c' (durations are " DUR_FORMS ")",
                         pos + 1, s[pos]);
    pos++;
  }
  switch (n) {
    case 1: *out_s = f[0] * 60; return 0; /* minutes */
    case 2:
      if ((err = dur_check(f[1], 59, "seconds", d))) return err;
      *out_s = f[0] * 60 + f[1];
      return 0;
    default:
      if ((err = dur_check(f[1], 59, "minutes", d)) || (err = dur_check(f[2], 59, "seconds", d))) return err;
      *out_s = f[0] * 3600 + f[1] * 60 + f[2];
      return 0;
  }
}

/* Both styles print days as D-HH:MM:SS; below a day squeue drops leading zeros. */
static int fmt_duration(int64_t secs, char *buf, size_t n, bool squeue) {
  if (secs == PX_TIME_UNLIMITED) return snprintf(buf, n, "UNLIMITED");
  if (secs < 0) return snprintf(buf, n, "INVALID");
  long long dd = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;
  if (dd) return snprintf(buf, n, "%lld-%02lld:%02lld:%02lld", dd, h, m, s);
  if (!squeue) return snprintf(buf, n, "%02lld:%02lld:%02lld", h, m, s);
  if (h) return snprintf(buf, n, "%lld:%02lld:%02lld", h, m, s);
  return snprintf(buf, n, "%lld:%02lld", m, s);
}

int px_duration_format(int64_t secs, char *buf, size_t n) { return fmt_duration(secs, buf, n, true); }
int px_duration_format_hms(int64_t secs, char *buf, size_t n) { return fmt_duration(secs, buf, n, false); }

int px_size_parse_mib(const char *s, uint64_t *out_mib, struct px_diag *d) {
  uint64_t v = 0;
  size_t i = 0;
  while (s[i] >= '0' && s[i] <= '9') {
    if (v > (UINT64_MAX - 9) / 10) return px_diag_set(d, PX_ERANGE, 0, "size too large");
    v = v * 10 + (uint64_t)(s[i] - '0');
    i++;
  }
  if (i == 0)
    return px_diag_set(d, PX_EPARSE, 0, "expected a size: a whole number with an optional K, M, G or T suffix");
  int shift; /* log2 of the unit in MiB, -10 for K */
  switch (s[i]) {
    case '\0': shift = 0; break;
    case 'k': case 'K': shift = -10; break;
    case 'm': case 'M': shift = 0; break;
    case 'g': case 'G': shift = 10; break;
    case 't': case 'T': shift = 20; break;
    default:
      return px_diag_set(d, PX_EPARSE, (int)i, "position %zu: unknown size suffix '%c' (expected K, M, G or T)",
                         i + 1, s[i]);
  }
  /* "40GB", "512gb": one B after the unit letter, as Slurm's sizes (4.6% of
   * public job scripts write --mem that way); a bare "100B" stays an error. */
  size_t end = s[i] != '\0' && (s[i + 1] == 'b' || s[i + 1] == 'B') ? i + 2 : i + 1;
  if (s[i] != '\0' && s[end] != '\0')
    return px_diag_set(d, PX_EPARSE, (int)end, "position %zu: unexpected text after the size suffix", end + 1);
  if (shift < 0) {
    *out_mib = v / 1024 + (v % 1024 != 0);
    return 0;
  }
  if (shift && v > (UINT64_MAX >> shift)) return px_diag_set(d, PX_ERANGE, 0, "size too large");
  *out_mib = v << shift;
  return 0;
}

int px_size_format_mib(uint64_t mib, char *buf, size_t n) {
  static const char units[] = "MGTPE";
  int u = 0;
  uint64_t div = 1;
  while (u < 4 && mib / div >= 1024) {
    div *= 1024;
    u++;
  }
  if (mib % div == 0) return snprintf(buf, n, "%llu%c", (unsigned long long)(mib / div), units[u]);
  return snprintf(buf, n, "%.2f%c", (double)mib / (double)div, units[u]);
}
