/*
 * cli_units.c - the value parsers the CLI needs: Slurm durations, memory
 * sizes and hostlists.
 *
 * util/units and util/hostlist are being written on another branch; until
 * they land on main these small local versions keep the CLI self-contained.
 * When they land, these become thin wrappers (one call each) so the rest of
 * the CLI does not change.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"

/* Reads up to `max` unsigned decimal numbers separated by `sep`; returns the count. */
static int read_nums(const char *s, char sep, long *v, int max, const char **end) {
  int n = 0;
  while (n < max) {
    if (!isdigit((unsigned char)*s)) return -1;
    errno = 0;
    char *e;
    long x = strtol(s, &e, 10);
    if (errno || x > 100000000L) return -1;
    v[n++] = x;
    s = e;
    if (*s != sep) break;
    s++;
  }
  *end = s;
  return n;
}

int px_cli_duration_parse(const char *s, int64_t *out_s) {
  if (!s || !*s) return PX_EINVAL;
  if (!strcasecmp(s, "UNLIMITED") || !strcasecmp(s, "INFINITE")) {
    *out_s = PX_CLI_UNLIMITED;
    return 0;
  }
  long days = 0, v[3];
  const char *p = s, *end;
  const char *dash = strchr(s, '-');
  if (dash) {
    if (read_nums(p, '\0', &days, 1, &end) != 1 || end != dash) return PX_EINVAL;
    p = dash + 1;
  }
  int n = read_nums(p, ':', v, 3, &end);
  if (n < 1 || *end) return PX_EINVAL;
  int64_t secs;
  if (dash) { /* D-H, D-H:M, D-H:M:S */
    secs = v[0] * 3600L + (n > 1 ? v[1] * 60L : 0) + (n > 2 ? v[2] : 0);
  } else if (n == 1) { /* M */
    secs = v[0] * 60L;
  } else if (n == 2) { /* M:S */
    secs = v[0] * 60L + v[1];
  } else { /* H:M:S */
    secs = v[0] * 3600L + v[1] * 60L + v[2];
  }
  *out_s = secs + (int64_t)days * 86400;
  return 0;
}

int px_cli_size_parse_mib(const char *s, uint64_t *out_mib) {
  if (!s || !isdigit((unsigned char)*s)) return PX_EINVAL;
  errno = 0;
  char *e;
  double x = strtod(s, &e);
  if (errno || x < 0) return PX_EINVAL;
  double mult = 1;
  switch (toupper((unsigned char)*e)) {
  case '\0': break;
  case 'K': mult = 1.0 / 1024; break;
  case 'M': mult = 1; break;
  case 'G': mult = 1024; break;
  case 'T': mult = 1024.0 * 1024; break;
  default: return PX_EINVAL;
  }
  if (*e && e[1] && !(toupper((unsigned char)e[1]) == 'B' && !e[2])) return PX_EINVAL;
  double mib = x * mult;
  if (mib > 9.0e15) return PX_ERANGE;
  uint64_t r = (uint64_t)mib;
  if ((double)r < mib) r++; /* round a fraction of a MiB up: never grant less than asked */
  *out_mib = r;
  return 0;
}

void px_cli_strv_free(char **v, size_t n) {
  if (!v) return;
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

static int push_name(char ***v, size_t *n, size_t *cap, char *name) {
  if (!name) return PX_ENOMEM;
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 16;
    char **nv = realloc(*v, c * sizeof *nv);
    if (!nv) {
      free(name);
      return PX_ENOMEM;
    }
    *v = nv;
    *cap = c;
  }
  (*v)[(*n)++] = name;
  return 0;
}

/* Expands one "prefix[a-b,c]suffix" element (no nested brackets). */
static int expand_one(const char *el, size_t len, char ***v, size_t *n, size_t *cap) {
  const char *lb = memchr(el, '[', len);
  if (!lb) return push_name(v, n, cap, strndup(el, len));
  const char *rb = memchr(lb, ']', len - (size_t)(lb - el));
  if (!rb) return PX_EINVAL;
  int plen = (int)(lb - el);
  const char *suf = rb + 1;
  int slen = (int)(el + len - suf);
  const char *p = lb + 1;
  while (p < rb) {
    const char *q = p;
    while (q < rb && isdigit((unsigned char)*q)) q++;
    if (q == p) return PX_EINVAL;
    int width = (int)(q - p);
    long lo = strtol(p, NULL, 10), hi = lo;
    if (*q == '-') {
      const char *r = ++q;
      while (q < rb && isdigit((unsigned char)*q)) q++;
      if (q == r) return PX_EINVAL;
      hi = strtol(r, NULL, 10);
    }
    if (hi < lo || hi - lo > 1000000 || (q < rb && *q != ',')) return PX_EINVAL;
    for (long i = lo; i <= hi; i++) {
      char buf[512];
      if (snprintf(buf, sizeof buf, "%.*s%0*ld%.*s", plen, el, width, i, slen, suf) >=
          (int)sizeof buf)
        return PX_EINVAL;
      int rc = push_name(v, n, cap, strdup(buf));
      if (rc) return rc;
    }
    p = q < rb ? q + 1 : q;
  }
  return 0;
}

int px_cli_hostlist_expand(const char *s, char ***names, size_t *n) {
  char **v = NULL;
  size_t len = 0, cap = 0;
  const char *p = s;
  while (*p) {
    const char *q = p;
    int depth = 0;
    while (*q && (depth || *q != ',')) {
      if (*q == '[') depth++;
      if (*q == ']') depth--;
      q++;
    }
    if (q > p) {
      int rc = expand_one(p, (size_t)(q - p), &v, &len, &cap);
      if (rc) {
        px_cli_strv_free(v, len);
        return rc;
      }
    }
    p = *q ? q + 1 : q;
  }
  *names = v;
  *n = len;
  return 0;
}

/* Splits "gpu0012" into prefix length 3, number 12, digit width 4. */
struct hl_key {
  const char *name;
  int plen, width;
  long num;
};

static void hl_split(const char *name, struct hl_key *k) {
  size_t len = strlen(name), i = len;
  while (i > 0 && isdigit((unsigned char)name[i - 1])) i--;
  k->name = name;
  k->plen = (int)i;
  k->width = (int)(len - i);
  k->num = k->width && k->width < 18 ? strtol(name + i, NULL, 10) : -1;
  if (k->num < 0) k->plen = (int)len, k->width = 0;
}

static int hl_cmp(const void *a, const void *b) {
  const struct hl_key *x = a, *y = b;
  int c = strncmp(x->name, y->name, (size_t)(x->plen < y->plen ? x->plen : y->plen));
  if (c) return c;
  if (x->plen != y->plen) return x->plen - y->plen;
  if (x->width != y->width) return x->width - y->width;
  return (x->num > y->num) - (x->num < y->num);
}

static bool hl_same_group(const struct hl_key *a, const struct hl_key *b) {
  return a->width && b->width && a->plen == b->plen && a->width == b->width &&
         !strncmp(a->name, b->name, (size_t)a->plen);
}

/* Appends the group k[i..j) to out as "prefix[lo-hi,...]" or a plain name. */
static void hl_emit(FILE *out, const struct hl_key *k, size_t i, size_t j) {
  if (j - i == 1) {
    fputs(k[i].name, out);
    return;
  }
  fprintf(out, "%.*s[", k[i].plen, k[i].name);
  for (size_t r = i; r < j;) {
    size_t e = r;
    while (e + 1 < j && k[e + 1].num == k[e].num + 1) e++;
    while (e + 1 < j && k[e + 1].num == k[e].num) e++; /* duplicates collapse */
    fprintf(out, "%s%0*ld", r > i ? "," : "", k[r].width, k[r].num);
    if (k[e].num != k[r].num) fprintf(out, "-%0*ld", k[e].width, k[e].num);
    r = e + 1;
  }
  fputc(']', out);
}

char *px_cli_hostlist_compress(char *const *names, size_t n) {
  struct hl_key *k = calloc(n ? n : 1, sizeof *k);
  if (!k) return NULL;
  for (size_t i = 0; i < n; i++) hl_split(names[i], &k[i]);
  qsort(k, n, sizeof *k, hl_cmp);
  char *buf = NULL;
  size_t blen = 0;
  FILE *out = open_memstream(&buf, &blen);
  if (!out) {
    free(k);
    return NULL;
  }
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && hl_same_group(&k[i], &k[j])) j++;
    if (i) fputc(',', out);
    hl_emit(out, k, i, j);
    i = j;
  }
  fclose(out);
  free(k);
  return buf;
}
