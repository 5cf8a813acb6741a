/*
 * hostlist_compress.c - the canonical hostlist expression for a set of names.
 *
 * Works on entries (head, tail): head is the part still open to compression,
 * tail the part already fixed. At first head is a name and tail is empty.
 * Each pass splits every head at its rightmost digit run (p, num, s), groups
 * entries with equal p and equal s+tail, splits a group by zero-padding width
 * (a number "07" needs width 2; "10" fits width 2 or none; "7" fits none) and
 * renders each class as p[ranges]s+tail, or keeps a single member as it was.
 * The new head is p, so the next pass looks at the number to the left. Heads
 * lose a digit run per pass, so there are at most as many passes as a name
 * has numbers. Output order is the natural order of each entry's first name.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hostlist.h"

struct hc_ent {
  char *head, *tail;
  size_t order; /* rank of its first name in natural order */
  /* scratch for the current pass: */
  size_t p_len, num_len;
  uint64_t num;
  int width; /* padding class chosen for num */
  bool split;
};

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Natural order: digit runs compare by value, then by length (n1 < n01). */
static int natural_cmp(const char *a, const char *b) {
  while (*a && *b) {
    if (is_digit(*a) && is_digit(*b)) {
      const char *a0 = a, *b0 = b;
      while (*a0 == '0' && is_digit(a0[1])) a0++;
      while (*b0 == '0' && is_digit(b0[1])) b0++;
      const char *ae = a0, *be = b0;
      while (is_digit(*ae)) ae++;
      while (is_digit(*be)) be++;
      if (ae - a0 != be - b0) return (ae - a0) < (be - b0) ? -1 : 1;
      int c = strncmp(a0, b0, (size_t)(ae - a0));
      if (c) return c;
      if (ae - a != be - b) return (ae - a) < (be - b) ? -1 : 1;
      a = ae;
      b = be;
      continue;
    }
    if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
    a++;
    b++;
  }
  return *a ? 1 : (*b ? -1 : 0);
}

static int cmp_names(const void *x, const void *y) {
  return natural_cmp(*(const char *const *)x, *(const char *const *)y);
}

/* Next character of the text s followed by t, or 0 at the end of both. */
static unsigned char next_ch(const char **s, const char **t) {
  if (**s) return (unsigned char)*(*s)++;
  if (**t) return (unsigned char)*(*t)++;
  return 0;
}

/* Compares what follows the number: s then tail, as one string. */
static int cmp_after(const struct hc_ent *a, const struct hc_ent *b) {
  const char *as = a->head + a->p_len + a->num_len, *at = a->tail;
  const char *bs = b->head + b->p_len + b->num_len, *bt = b->tail;
  for (;;) {
    unsigned char ca = next_ch(&as, &at), cb = next_ch(&bs, &bt);
    if (ca != cb) return ca < cb ? -1 : 1;
    if (!ca) return 0;
  }
}

static int cmp_key(const struct hc_ent *a, const struct hc_ent *b) {
  size_t n = a->p_len < b->p_len ? a->p_len : b->p_len;
  int c = memcmp(a->head, b->head, n);
  if (c) return c;
  if (a->p_len != b->p_len) return a->p_len < b->p_len ? -1 : 1;
  return cmp_after(a, b);
}

static int cmp_ent(const void *x, const void *y) {
  const struct hc_ent *a = x, *b = y;
  if (a->split != b->split) return a->split ? -1 : 1;
  if (!a->split) return 0;
  int c = cmp_key(a, b);
  if (c) return c;
  if (a->width != b->width) return a->width < b->width ? -1 : 1;
  if (a->num != b->num) return a->num < b->num ? -1 : 1;
  return 0;
}

static int cmp_order(const void *x, const void *y) {
  const struct hc_ent *a = x, *b = y;
  return a->order < b->order ? -1 : a->order > b->order;
}

/* Splits e->head at its rightmost digit run; false when it has none. */
static bool split_head(struct hc_ent *e) {
  size_t len = strlen(e->head), j = len;
  while (j > 0 && !is_digit(e->head[j - 1])) j--;
  if (j == 0) return false;
  size_t i = j;
  while (i > 0 && is_digit(e->head[i - 1])) i--;
  if (j - i > 18) return false; /* too long to be a number: keep as text */
  e->p_len = i;
  e->num_len = j - i;
  e->num = 0;
  for (size_t k = i; k < j; k++) e->num = e->num * 10 + (uint64_t)(e->head[k] - '0');
  return true;
}

/* Chooses padding classes within one key group ents[0..n) (see the top). */
static void assign_widths(struct hc_ent *ents, size_t n) {
  bool padded[20] = {false};
  for (size_t k = 0; k < n; k++) {
    struct hc_ent *e = &ents[k];
    e->width = (e->num_len > 1 && e->head[e->p_len] == '0') ? (int)e->num_len : 0;
    if (e->width) padded[e->width] = true;
  }
  for (size_t k = 0; k < n; k++) {
    struct hc_ent *e = &ents[k];
    if (e->width) continue;
    for (int w = (int)e->num_len; w >= 2; w--)
      if (padded[w]) {
        e->width = w;
        break;
      }
  }
}

static char *render_class(const struct hc_ent *ents, size_t n) {
  const struct hc_ent *e = &ents[0];
  const char *after = e->head + e->p_len + e->num_len;
  size_t cap = e->p_len + strlen(after) + strlen(e->tail) + 3 + n * 42, len = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  if (n == 1) {
    snprintf(s, cap, "%s%s", e->head + e->p_len, e->tail);
    return s;
  }
  s[len++] = '[';
  for (size_t k = 0; k < n;) {
    size_t m = k;
    while (m + 1 < n && ents[m + 1].num == ents[m].num + 1) m++;
    if (k) s[len++] = ',';
    len += (size_t)snprintf(s + len, cap - len, "%0*llu", e->width, (unsigned long long)ents[k].num);
    if (m > k)
      len += (size_t)snprintf(s + len, cap - len, "-%0*llu", e->width, (unsigned long long)ents[m].num);
    k = m + 1;
  }
  snprintf(s + len, cap - len, "]%s%s", after, e->tail);
  return s;
}

/* End of the class starting at k: same key and same padding width. */
static size_t class_end(const struct hc_ent *ents, size_t k, size_t nsplit) {
  size_t m = k + 1;
  while (m < nsplit && cmp_key(&ents[k], &ents[m]) == 0 && ents[m].width == ents[k].width) m++;
  return m;
}

/*
 * One pass over ents[0..*n). All new tails are rendered before anything is
 * changed, so that on PX_ENOMEM the entries are as they were.
 */
static int pass(struct hc_ent *ents, size_t *n, bool *progress) {
  size_t nsplit = 0, out = 0, ntails = 0;
  for (size_t k = 0; k < *n; k++)
    if ((ents[k].split = split_head(&ents[k]))) nsplit++;
  *progress = nsplit > 0;
  if (!nsplit) return 0;
  qsort(ents, *n, sizeof *ents, cmp_ent); /* split ones first, grouped by key */
  for (size_t k = 0; k < nsplit;) {
    size_t m = k + 1;
    while (m < nsplit && cmp_key(&ents[k], &ents[m]) == 0) m++;
    assign_widths(ents + k, m - k);
    qsort(ents + k, m - k, sizeof *ents, cmp_ent);
    k = m;
  }
  char **tails = malloc(nsplit * sizeof *tails);
  if (!tails) return PX_ENOMEM;
  for (size_t k = 0; k < nsplit; k = class_end(ents, k, nsplit)) {
    size_t m = class_end(ents, k, nsplit);
    if (!(tails[ntails++] = render_class(ents + k, m - k))) {
      while (ntails) free(tails[--ntails]);
      free(tails);
      return PX_ENOMEM;
    }
  }
  ntails = 0;
  for (size_t k = 0; k < nsplit;) {
    size_t m = class_end(ents, k, nsplit), order = ents[k].order;
    for (size_t q = k + 1; q < m; q++) {
      if (ents[q].order < order) order = ents[q].order;
      free(ents[q].head);
      free(ents[q].tail);
    }
    free(ents[k].tail);
    ents[k].tail = tails[ntails++];
    ents[k].head[ents[k].p_len] = '\0';
    ents[k].order = order;
    ents[out++] = ents[k];
    k = m;
  }
  for (size_t k = nsplit; k < *n; k++) ents[out++] = ents[k];
  *n = out;
  free(tails);
  return 0;
}

static int check_name(const char *s) {
  if (!*s) return PX_EINVAL;
  for (; *s; s++)
    if ((unsigned char)*s <= ' ' || *s == 0x7f || *s == '[' || *s == ']' || *s == ',')
      return PX_EINVAL;
  return 0;
}

static char *join(struct hc_ent *ents, size_t n) {
  size_t len = 1;
  for (size_t k = 0; k < n; k++) len += strlen(ents[k].head) + strlen(ents[k].tail) + 1;
  char *s = malloc(len), *p = s;
  if (!s) return NULL;
  *p = '\0';
  for (size_t k = 0; k < n; k++) {
    size_t hl = strlen(ents[k].head), tl = strlen(ents[k].tail);
    if (k) *p++ = ',';
    memcpy(p, ents[k].head, hl);
    memcpy(p + hl, ents[k].tail, tl + 1);
    p += hl + tl;
  }
  return s;
}

int px_hostlist_compress(const char *const *names, size_t n, char **out) {
  int err = PX_ENOMEM;
  size_t nent = 0;
  const char **sorted = malloc((n ? n : 1) * sizeof *sorted);
  struct hc_ent *ents = calloc(n ? n : 1, sizeof *ents);
  if (!sorted || !ents) goto fail;
  for (size_t k = 0; k < n; k++) {
    if ((err = check_name(names[k]))) goto fail;
    sorted[k] = names[k];
  }
  err = PX_ENOMEM;
  qsort(sorted, n, sizeof *sorted, cmp_names);
  for (size_t k = 0; k < n; k++) {
    if (nent && strcmp(sorted[k], ents[nent - 1].head) == 0) continue; /* duplicate */
    ents[nent].head = strdup(sorted[k]);
    ents[nent].tail = strdup("");
    ents[nent].order = nent;
    nent++;
    if (!ents[nent - 1].head || !ents[nent - 1].tail) goto fail;
  }
  for (bool progress = true; progress;)
    if (pass(ents, &nent, &progress)) goto fail;
  qsort(ents, nent, sizeof *ents, cmp_order);
  char *s = join(ents, nent);
  if (!s) goto fail;
  *out = s;
  err = 0;
fail:
  for (size_t k = 0; ents && k < nent; k++) {
    free(ents[k].head);
    free(ents[k].tail);
  }
  free(ents);
  free(sorted);
  return err;
}
