/*
 * opts_begin.c - sbatch --begin: the time forms Slurm accepts, resolved
 * against a given "now" (so tests are deterministic) in local time:
 *   now[+N[seconds|minutes|hours|days|weeks]]   (bare N is seconds)
 *   YYYY-MM-DD[THH:MM[:SS]]   HH:MM[:SS] (today, or tomorrow once past)
 *   midnight noon fika (15:00) teatime (16:00) today tomorrow
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/opts_apply.h"

#define MAX_OFFSET_S (INT64_C(1000) * 366 * 86400) /* now+N: at most 1000 years */

static int64_t relative_units(const char *u) {
  static const struct {
    const char *name;
    int64_t secs;
  } units[] = {{"", 1},       {"s", 1},        {"sec", 1},        {"second", 1},
               {"seconds", 1}, {"m", 60},       {"min", 60},       {"minute", 60},
               {"minutes", 60}, {"h", 3600},    {"hour", 3600},    {"hours", 3600},
               {"d", 86400},  {"day", 86400},  {"days", 86400},   {"w", 604800},
               {"week", 604800}, {"weeks", 604800}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (!strcasecmp(u, units[i].name)) return units[i].secs;
  return -1;
}

static int64_t at_local(const struct tm *base, int hour, int min, int sec, int add_days) {
  struct tm tm = *base;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  tm.tm_mday += add_days;
  tm.tm_isdst = -1;
  return (int64_t)mktime(&tm);
}

/* Returns the Unix time, or -1 when val is not a form above. */
static int64_t parse_begin(const char *val, int64_t now) {
  time_t tnow = (time_t)now;
  struct tm base;
  if (!localtime_r(&tnow, &base)) return -1;
  if (!strncasecmp(val, "now", 3)) {
    const char *p = val + 3;
    if (!*p) return now;
    if ((*p != '+' && *p != '-') || !isdigit((unsigned char)p[1])) return -1;
    char *e;
    long n = strtol(p + 1, &e, 10);
    int64_t unit = relative_units(e);
    /* Offsets beyond MAX_OFFSET_S are typos, and n * unit must not overflow. */
    if (unit < 0 || n > MAX_OFFSET_S / unit) return -1;
    if (*p == '-') n = -n; /* "now-1day": sacct -S */
    return now + n * unit;
  }
  static const struct {
    const char *word;
    int hour, days;
  } words[] = {{"midnight", 0, 1}, {"noon", 12, 0},  {"fika", 15, 0},
               {"teatime", 16, 0}, {"today", 0, 0},  {"tomorrow", 0, 1}};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    if (strcasecmp(val, words[i].word)) continue;
    int64_t t = at_local(&base, words[i].hour, 0, 0, words[i].days);
    if (t < now && words[i].hour) t = at_local(&base, words[i].hour, 0, 0, 1);
    return t;
  }
  int y, mo, d, h = 0, mi = 0, s = 0;
  char tail;
  int n = sscanf(val, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &tail);
  if (n >= 3 && n <= 6 && n != 4) {
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
                    .tm_hour = h, .tm_min = mi, .tm_sec = s, .tm_isdst = -1};
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return -1;
    if (n == 3 && strlen(val) != 10) return -1;
    return (int64_t)mktime(&tm);
  }
  n = sscanf(val, "%2d:%2d:%2d%c", &h, &mi, &s, &tail);
  if (n == 2) s = 0;
  if (n == 2 || n == 3) {
    if (h > 23 || mi > 59 || s > 59) return -1;
    int64_t t = at_local(&base, h, mi, s, 0);
    return t < now ? at_local(&base, h, mi, s, 1) : t;
  }
  return -1;
}

/* Where Slurm's message points in a time it cannot read: the offset after
 * "now+", the first date or clock field out of range, else the start. */
int px_cli_time_error_pos(const char *val) {
  if (!strncasecmp(val, "now", 3)) return val[3] == '+' || val[3] == '-' ? 4 : 3;
  int f[6] = {0}, n = sscanf(val, "%4d-%2d-%2dT%2d:%2d:%2d", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5]);
  static const int lo[6] = {0, 1, 1, 0, 0, 0}, hi[6] = {9999, 12, 31, 23, 59, 60};
  for (int i = 1; i < n; i++)
    if (f[i] < lo[i] || f[i] > hi[i]) return 5 + 3 * (i - 1);
  return 0;
}

int px_opt_begin(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                 struct px_diag *d) {
  int64_t t = parse_begin(val, now);
  if (t < 0) { /* Slurm's two lines: its time parser's, bare, then sbatch's; exit(-1) */
    x->exit_status = 255;
    x->bare_first = true;
    return px_diag_set(d, PX_EINVAL, -1, "Invalid time specification (pos=%d): %s\nInvalid --begin specification",
                       px_cli_time_error_pos(val), val);
  }
  s->begin_s = t;
  return 0;
}

int px_cli_time_parse(const char *val, int64_t now, int64_t *out) {
  int64_t t = parse_begin(val, now);
  if (t < 0) return PX_EINVAL;
  *out = t;
  return 0;
}
