/*
 * hostlist.c - expanding and compressing Slurm hostlist expressions; the
 * semantics are in hostlist.h.
 *
 * Expansion parses each top-level item twice: once to count (so a limit is
 * enforced before anything is allocated) and once to generate. An item is at
 * most HL_MAX_GROUPS bracket groups with literal text around them; each
 * group's values are flattened into an array and the cartesian product is
 * walked like an odometer, first group most significant.
 */
#include "util/hostlist.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HL_MAX_GROUPS 8
#define HL_MAX_DIGITS 18

struct hl_range {
  uint64_t lo, hi;
  int width; /* 0: unpadded; else the zero-padded width */
};
PX_VEC_DECLARE(hl_rangevec, struct hl_range)

struct hl_val {
  uint64_t v;
  int width;
};
PX_VEC_DECLARE(hl_valvec, struct hl_val)

struct hl_group {
  size_t r0, nr;  /* ranges[r0 .. r0+nr) of the item's range vector */
  uint64_t count; /* values in the group */
};

/* One top-level item: lit[0] group[0] lit[1] ... group[n-1] lit[n]. */
struct hl_item {
  size_t pos;
  size_t lit_off[HL_MAX_GROUPS + 1], lit_len[HL_MAX_GROUPS + 1];
  struct hl_group g[HL_MAX_GROUPS];
  int ngroups;
  uint64_t count;
  size_t name_len;
};

static int hl_err(struct px_diag *d, int err, size_t pos, const char *what) {
  return px_diag_set(d, err, (int)(pos > INT32_MAX ? INT32_MAX : pos), "position %zu: %s", pos + 1,
                     what);
}

static int ndigits(uint64_t v) {
  int n = 1;
  while (v >= 10) {
    v /= 10;
    n++;
  }
  return n;
}

/* Reads a run of digits at expr[*pos]; *len gets its length. */
static int parse_num(const char *expr, size_t *pos, uint64_t *v, size_t *len, struct px_diag *d) {
  size_t i = *pos;
  uint64_t x = 0;
  while (expr[i] >= '0' && expr[i] <= '9') {
    if (i - *pos >= HL_MAX_DIGITS) return hl_err(d, PX_EPARSE, *pos, "number longer than 18 digits");
    x = x * 10 + (uint64_t)(expr[i] - '0');
    i++;
  }
  if (i == *pos) {
    if (expr[i] == ']' || expr[i] == ',' || expr[i] == '-')
      return hl_err(d, PX_EPARSE, i, "empty range (a number was expected)");
    if (expr[i] == '\0') return hl_err(d, PX_EPARSE, i, "unclosed '['");
    return hl_err(d, PX_EPARSE, i, "a number was expected inside brackets");
  }
  *v = x;
  *len = i - *pos;
  *pos = i;
  return 0;
}

static int pad_width(const char *s, size_t len) { return (len > 1 && s[0] == '0') ? (int)len : 0; }

/* Parses "lo[-hi]" at expr[*pos] into r. */
static int parse_range(const char *expr, size_t *pos, struct hl_range *r, struct px_diag *d) {
  size_t start = *pos, lo_len, hi_len;
  int err = parse_num(expr, pos, &r->lo, &lo_len, d);
  if (err) return err;
  r->width = pad_width(expr + start, lo_len);
  r->hi = r->lo;
  if (expr[*pos] != '-') return 0;
  (*pos)++;
  size_t hi_start = *pos;
  if ((err = parse_num(expr, pos, &r->hi, &hi_len, d))) return err;
  int hi_width = pad_width(expr + hi_start, hi_len);
  if (hi_width && hi_width != (int)lo_len)
    return hl_err(d, PX_EPARSE, hi_start, "upper bound is zero-padded differently from the lower");
  if (r->hi < r->lo) return hl_err(d, PX_EPARSE, start, "range goes down (upper bound below lower)");
  return 0;
}

/* Parses a bracket group; expr[*pos] is just after '['. */
static int parse_group(const char *expr, size_t *pos, struct hl_group *g, struct hl_rangevec *rv,
                       size_t max, struct px_diag *d) {
  g->r0 = rv->len;
  g->nr = 0;
  g->count = 0;
  for (;;) {
    struct hl_range r;
    int err = parse_range(expr, pos, &r, d);
    if (err) return err;
    if (hl_rangevec_push(rv, r)) return px_diag_set(d, PX_ENOMEM, -1, "out of memory");
    g->nr++;
    uint64_t n = r.hi - r.lo + 1; /* at most 10^18: no overflow */
    g->count = (g->count > UINT64_MAX - n) ? UINT64_MAX : g->count + n;
    if (g->count > max) return hl_err(d, PX_ELIMIT, *pos, "bracket group has too many names");
    if (expr[*pos] == ',') {
      (*pos)++;
      continue;
    }
    if (expr[*pos] == ']') {
      (*pos)++;
      return 0;
    }
    if (expr[*pos] == '\0') return hl_err(d, PX_EPARSE, *pos, "unclosed '['");
    return hl_err(d, PX_EPARSE, *pos, "expected ',', '-' or ']' inside brackets");
  }
}

static size_t group_width(const struct hl_group *g, const struct hl_rangevec *rv) {
  size_t w = 0;
  for (size_t i = g->r0; i < g->r0 + g->nr; i++) {
    size_t dw = (size_t)ndigits(rv->v[i].hi);
    if ((size_t)rv->v[i].width > dw) dw = (size_t)rv->v[i].width;
    if (dw > w) w = dw;
  }
  return w;
}

/* Parses one top-level item starting at expr[*pos]; leaves *pos after its comma. */
static int parse_item(const char *expr, size_t *pos, struct hl_item *it, struct hl_rangevec *rv,
                      size_t max, struct px_diag *d) {
  size_t i = *pos;
  memset(it, 0, sizeof *it);
  it->pos = i;
  it->lit_off[0] = i;
  it->count = 1;
  hl_rangevec_clear(rv);
  for (;;) {
    char c = expr[i];
    if (c == '\0' || c == ',') break;
    if (c == ']') return hl_err(d, PX_EPARSE, i, "']' without a matching '['");
    if (c == '[') {
      if (it->ngroups == HL_MAX_GROUPS)
        return hl_err(d, PX_ELIMIT, i, "more than 8 bracket groups in one name");
      it->lit_len[it->ngroups] = i - it->lit_off[it->ngroups];
      i++;
      struct hl_group *g = &it->g[it->ngroups];
      int err = parse_group(expr, &i, g, rv, max, d);
      if (err) return err;
      it->count = (it->count > max / g->count) ? max + 1 : it->count * g->count;
      if (it->count > max) return hl_err(d, PX_ELIMIT, it->pos, "expands to too many names");
      it->ngroups++;
      it->lit_off[it->ngroups] = i;
      continue;
    }
    if ((unsigned char)c <= ' ' || c == 0x7f)
      return hl_err(d, PX_EPARSE, i, "whitespace or control character in a host name");
    i++;
  }
  it->lit_len[it->ngroups] = i - it->lit_off[it->ngroups];
  if (i == it->pos) return hl_err(d, PX_EPARSE, i, "empty host name");
  size_t len = 0;
  for (int k = 0; k <= it->ngroups; k++) len += it->lit_len[k];
  for (int k = 0; k < it->ngroups; k++) len += group_width(&it->g[k], rv);
  if (len > PX_HOSTLIST_NAME_MAX) return hl_err(d, PX_ELIMIT, it->pos, "host name longer than 255 characters");
  it->name_len = len;
  *pos = expr[i] == ',' ? i + 1 : i;
  if (expr[i] == ',' && expr[i + 1] == '\0') return hl_err(d, PX_EPARSE, i + 1, "empty host name");
  return 0;
}

static int count_all(const char *expr, size_t max, size_t *count, struct hl_rangevec *rv,
                     struct px_diag *d) {
  size_t pos = 0, total = 0;
  while (expr[pos] != '\0') {
    struct hl_item it;
    int err = parse_item(expr, &pos, &it, rv, max, d);
    if (err) return err;
    if (it.count > max - total)
      return px_diag_set(d, PX_ELIMIT, -1, "expands to more than %zu names", max);
    total += (size_t)it.count;
  }
  *count = total;
  return 0;
}

int px_hostlist_count(const char *expr, size_t max_names, size_t *count, struct px_diag *d) {
  struct hl_rangevec rv = {0};
  if (!max_names) max_names = PX_HOSTLIST_MAX_NAMES;
  int err = count_all(expr, max_names, count, &rv, d);
  hl_rangevec_fini(&rv);
  return err;
}

/* Flattens every group of `it` into vals; off[k] is where group k starts. */
static int flatten(const struct hl_item *it, const struct hl_rangevec *rv, struct hl_valvec *vals,
                   size_t off[HL_MAX_GROUPS + 1]) {
  hl_valvec_clear(vals);
  for (int k = 0; k < it->ngroups; k++) {
    off[k] = vals->len;
    for (size_t r = it->g[k].r0; r < it->g[k].r0 + it->g[k].nr; r++)
      for (uint64_t v = rv->v[r].lo;; v++) {
        if (hl_valvec_push(vals, (struct hl_val){v, rv->v[r].width})) return PX_ENOMEM;
        if (v == rv->v[r].hi) break;
      }
  }
  off[it->ngroups] = vals->len;
  return 0;
}

static int emit_item(const char *expr, const struct hl_item *it, const struct hl_rangevec *rv,
                     struct hl_valvec *vals, struct px_strvec *out) {
  size_t off[HL_MAX_GROUPS + 1], idx[HL_MAX_GROUPS] = {0};
  char name[PX_HOSTLIST_NAME_MAX + 1];
  if (flatten(it, rv, vals, off)) return PX_ENOMEM;
  for (;;) {
    size_t n = 0;
    for (int k = 0;; k++) {
      memcpy(name + n, expr + it->lit_off[k], it->lit_len[k]);
      n += it->lit_len[k];
      if (k == it->ngroups) break;
      const struct hl_val *v = &vals->v[off[k] + idx[k]];
      n += (size_t)snprintf(name + n, sizeof name - n, "%0*llu", v->width, (unsigned long long)v->v);
    }
    char *s = malloc(n + 1);
    if (!s) return PX_ENOMEM;
    memcpy(s, name, n);
    s[n] = '\0';
    if (px_strvec_push(out, s)) {
      free(s);
      return PX_ENOMEM;
    }
    int k = it->ngroups - 1; /* odometer: last group fastest */
    while (k >= 0 && ++idx[k] == off[k + 1] - off[k]) idx[k--] = 0;
    if (k < 0) return 0;
  }
}

int px_hostlist_expand(const char *expr, size_t max_names, struct px_strvec *out,
                       struct px_diag *d) {
  struct hl_rangevec rv = {0};
  struct hl_valvec vals = {0};
  size_t len0 = out->len, total = 0, pos = 0;
  if (!max_names) max_names = PX_HOSTLIST_MAX_NAMES;
  int err = count_all(expr, max_names, &total, &rv, d);
  if (err) goto fail;
  if ((err = px_strvec_reserve(out, len0 + total))) goto nomem;
  while (expr[pos] != '\0') {
    struct hl_item it;
    if ((err = parse_item(expr, &pos, &it, &rv, max_names, d))) goto fail;
    if ((err = emit_item(expr, &it, &rv, &vals, out))) goto nomem;
  }
  hl_rangevec_fini(&rv);
  hl_valvec_fini(&vals);
  return 0;
nomem:
  err = px_diag_set(d, PX_ENOMEM, -1, "out of memory");
fail:
  while (out->len > len0) free(out->v[--out->len]);
  hl_rangevec_fini(&rv);
  hl_valvec_fini(&vals);
  return err;
}
