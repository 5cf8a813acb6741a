/*
 * parse.c - the job spec's small expression languages, parsed at submit:
 *   arrays       "0-999%50", "1,3,5-7", "0-15:4" (ascending, non-overlapping;
 *                task ids < PXC_MAX_TASK_ID; %N caps running tasks)
 *   dependencies "afterok:12:13,afterany:14", "after:5?afternotok:6",
 *                "singleton" (',' = all must hold, '?' = any)
 *   constraints  "a&b|c", "(a|b)&c", "a,b" as an OR of AND terms (parse_cons.c)
 * Each names the offending position in the diag.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "util/hostlist.h"
#include "util/vec.h"

#define PXC_MAX_TASK_ID 4000000u

static bool parse_u32(const char **p, uint32_t *out) {
  const char *s = *p;
  if (*s < '0' || *s > '9') return false;
  uint64_t v = 0;
  while (*s >= '0' && *s <= '9') {
    v = v * 10 + (uint64_t)(*s - '0');
    if (v > UINT32_MAX) return false;
    s++;
  }
  *out = (uint32_t)v;
  *p = s;
  return true;
}

/* Walks the array expression; fills r (may be NULL) and returns the number of
 * ranges, or a negative error. */
static int array_walk(const char *s, struct pxc_range *r, uint32_t *ntasks, uint32_t *maxrun,
                      struct px_diag *d) {
  const char *p = s;
  int n = 0;
  uint64_t total = 0;
  int64_t prev_hi = -1;
  *maxrun = 0;
  for (;;) {
    struct pxc_range x = {0, 0, 1};
    const char *at = p;
    if (!parse_u32(&p, &x.lo)) goto bad;
    x.hi = x.lo;
    if (*p == '-') {
      p++;
      if (!parse_u32(&p, &x.hi) || x.hi < x.lo) goto bad;
      if (*p == ':') {
        p++;
        if (!parse_u32(&p, &x.step) || x.step == 0) goto bad;
      }
    }
    if (x.hi >= PXC_MAX_TASK_ID)
      return px_diag_set(d, PX_ERANGE, (int)(at - s), "array: task id %u over the maximum %u", x.hi,
                         PXC_MAX_TASK_ID - 1);
    if ((int64_t)x.lo <= prev_hi)
      return px_diag_set(d, PX_EINVAL, (int)(at - s),
                         "array: ranges must be ascending and not overlap");
    x.hi = x.lo + (x.hi - x.lo) / x.step * x.step;
    prev_hi = x.hi;
    total += (x.hi - x.lo) / x.step + 1;
    if (r) r[n] = x;
    n++;
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p == '%') {
      p++;
      if (!parse_u32(&p, maxrun) || *maxrun == 0) goto bad;
    }
    if (*p) goto bad;
    break;
  }
  *ntasks = (uint32_t)total;
  return n;
bad:
  return px_diag_set(d, PX_EINVAL, (int)(p - s), "array: bad expression \"%s\" at offset %d", s,
                     (int)(p - s));
}

uint32_t pxc_array_count(const char *s, int *err, struct px_diag *d) {
  uint32_t n, maxrun;
  int rc = array_walk(s, NULL, &n, &maxrun, d);
  *err = rc < 0 ? rc : 0;
  return rc < 0 ? 0 : n;
}

int pxc_parse_array(struct px_core *c, const char *s, struct pxc_array **out, struct px_diag *d) {
  uint32_t n, maxrun;
  int nr = array_walk(s, NULL, &n, &maxrun, d);
  if (nr < 0) return nr;
  struct pxc_array *a = pxc_calloc(c, 1, sizeof *a + (size_t)nr * sizeof a->r[0]);
  if (!a) return PX_ENOMEM;
  array_walk(s, a->r, &a->ntasks, &a->max_running, d);
  a->nranges = (uint32_t)nr;
  *out = a;
  return 0;
}

uint32_t pxc_array_task_at(const struct pxc_array *a, uint32_t pos) {
  for (uint32_t i = 0; i < a->nranges; i++) {
    uint32_t cnt = (a->r[i].hi - a->r[i].lo) / a->r[i].step + 1;
    if (pos < cnt) return a->r[i].lo + pos * a->r[i].step;
    pos -= cnt;
  }
  return PX_NONE;
}

static const struct {
  const char *name;
  uint8_t kind;
} dep_kinds[] = {{"afterok", PXC_DEP_AFTEROK},
                 {"afternotok", PXC_DEP_AFTERNOTOK},
                 {"afterany", PXC_DEP_AFTERANY},
                 {"after", PXC_DEP_AFTER}};

/* Counts (out NULL) or fills the dependency list. */
static int deps_walk(const char *s, struct pxc_deps *out, struct px_diag *d) {
  const char *p = s;
  int n = 0;
  char sep = 0;
  while (*p) {
    const char *at = p;
    if (strncmp(p, "singleton", 9) == 0 && (p[9] == 0 || p[9] == ',' || p[9] == '?')) {
      if (out) out->d[n] = (struct pxc_dep){0, PXC_DEP_SINGLETON, 0};
      n++;
      p += 9;
    } else {
      size_t k, len = 0;
      for (k = 0; k < sizeof dep_kinds / sizeof dep_kinds[0]; k++) {
        len = strlen(dep_kinds[k].name);
        if (strncmp(p, dep_kinds[k].name, len) == 0 && p[len] == ':') break;
      }
      if (k == sizeof dep_kinds / sizeof dep_kinds[0])
        return px_diag_set(d, PX_EINVAL, (int)(at - s),
                           "dependency: unknown type at offset %d (afterok, afternotok, afterany, "
                           "after, singleton)",
                           (int)(at - s));
      p += len;
      while (*p == ':') {
        p++;
        const char *num = p;
        char *end;
        errno = 0;
        unsigned long long id = strtoull(num, &end, 10);
        if (end == num || errno || id == 0)
          return px_diag_set(d, PX_EINVAL, (int)(num - s), "dependency: bad job id at offset %d",
                             (int)(num - s));
        if (*end == '_' || *end == '+')
          return px_diag_set(d, PX_EUNSUPPORTED, (int)(end - s),
                             "dependency: array task and +time forms are not supported");
        if (out) out->d[n] = (struct pxc_dep){id, dep_kinds[k].kind, 0};
        n++;
        p = end;
      }
    }
    if (*p == ',' || *p == '?') {
      if (sep && sep != *p)
        return px_diag_set(d, PX_EINVAL, (int)(p - s), "dependency: cannot mix ',' and '?'");
      sep = *p++;
      if (!*p) return px_diag_set(d, PX_EINVAL, (int)(p - s), "dependency: trailing separator");
    } else if (*p) {
      return px_diag_set(d, PX_EINVAL, (int)(p - s), "dependency: unexpected '%c' at offset %d", *p,
                         (int)(p - s));
    }
  }
  if (n == 0) return px_diag_set(d, PX_EINVAL, 0, "dependency: empty");
  if (out) out->any = sep == '?';
  return n;
}

int pxc_parse_deps(struct px_core *c, const char *s, struct pxc_deps **out, struct px_diag *d) {
  int n = deps_walk(s, NULL, d);
  if (n < 0) return n;
  struct pxc_deps *x = pxc_calloc(c, 1, sizeof *x + (size_t)n * sizeof x->d[0]);
  if (!x) return PX_ENOMEM;
  x->n = (uint32_t)n;
  deps_walk(s, x, d);
  *out = x;
  return 0;
}

int pxc_parse_constraint(struct px_core *c, const char *s, uint32_t *id, struct px_diag *d) {
  uint32_t sid;
  uint64_t terms[CONS_TERMS_MAX];
  uint32_t nterms = 0;
  int rc = pxc_cons_terms(c, s, terms, &nterms, d);
  if (rc) return rc;
  if (pxc_intern(c, s, &sid)) return PX_ENOMEM;
  uint32_t existing;
  if (pxc_map_get(&c->cons_by_str, sid, &existing)) {
    *id = existing;
    return 0;
  }
  if (PXC_GROW(c, c->cons, &c->cons_cap, c->ncons + 1) || pxc_map_reserve(c, &c->cons_by_str, 1))
    return PX_ENOMEM;
  uint64_t *t = pxc_alloc(c, nterms * sizeof *t);
  if (!t) return PX_ENOMEM;
  memcpy(t, terms, nterms * sizeof *t);
  c->cons[c->ncons] = (struct pxc_constraint){nterms, t};
  *id = (uint32_t)c->ncons++;
  pxc_map_put(c, &c->cons_by_str, sid, *id);
  return 0;
}

/* ---- --exclude, --nodelist ---- */

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Sorts v and drops repeats ("n1,n1" is one node, as in Slurm); the new length. */
static size_t sort_unique(uint32_t *v, size_t len) {
  if (!len) return 0;
  qsort(v, len, sizeof *v, cmp_u32);
  size_t k = 1;
  for (size_t i = 1; i < len; i++)
    if (v[i] != v[k - 1]) v[k++] = v[i];
  return k;
}

int pxc_parse_nodes(struct px_core *c, const char *field, const char *s, bool array, uint32_t **out, uint32_t *n,
                    struct px_diag *d) {
  if (array) return px_diag_set(d, PX_EINVAL, -1, "%s: not with an array", field);
  struct px_strvec names = {0};
  int rc = px_hostlist_expand(s, c->nnodes + 1, &names, d);
  if (rc) {
    char why[200];
    snprintf(why, sizeof why, "%.180s", d ? d->msg : "");
    return px_diag_set(d, rc, -1, "%s: not a list of nodes (%s)", field, why);
  }
  uint32_t *v = names.len ? pxc_alloc(c, names.len * sizeof *v) : NULL;
  if (names.len && !v) rc = PX_ENOMEM;
  for (size_t i = 0; !rc && i < names.len; i++)
    if ((v[i] = px_core_node_index(c, names.v[i])) == PX_NONE)
      rc = px_diag_set(d, PX_EINVAL, -1, "%s: no node named %.64s", field, names.v[i]);
  size_t len = names.len;
  px_strvec_free_all(&names);
  if (rc) {
    pxc_free(c, v);
    return rc;
  }
  *out = v;
  *n = (uint32_t)sort_unique(v, len);
  return 0;
}

