/*
 * fmt_cols.c - Slurm's column format strings, shared by squeue, sinfo and
 * sprio.
 *
 * "%[.][width]X": '.' right-justifies, otherwise the value is left-justified
 * and padded; a value longer than the width is cut to the width with no
 * marker; without a width the value is printed as is. Text between
 * specifiers is copied. The -O form ("Name[:[.]width],...") names fields
 * instead and puts no separator between them.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"

static int cols_push(struct px_cols *c, struct px_col col) {
  struct px_col *v = realloc(c->v, (c->len + 1) * sizeof *v);
  if (!v) {
    free(col.text);
    return PX_ENOMEM;
  }
  c->v = v;
  c->v[c->len++] = col;
  return 0;
}

void px_cols_fini(struct px_cols *c) {
  for (size_t i = 0; i < c->len; i++) free(c->v[i].text);
  free(c->v);
  c->v = NULL;
  c->len = 0;
}

int px_cols_parse(const char *fmt, struct px_cols *out, struct px_diag *d) {
  struct px_cols c = {0};
  const char *p = fmt;
  while (*p) {
    const char *lit = p;
    while (*p && !(p[0] == '%' && p[1] != '%')) p += (p[0] == '%') ? 2 : 1;
    if (p > lit) {
      /* Collapse "%%" to "%" in literal text. */
      char *t = malloc((size_t)(p - lit) + 1), *o = t;
      if (!t) goto nomem;
      for (const char *q = lit; q < p; q++) {
        *o++ = *q;
        if (q[0] == '%' && q[1] == '%') q++;
      }
      *o = '\0';
      if (cols_push(&c, (struct px_col){.text = t, .width = -1})) goto nomem;
    }
    if (!*p) break;
    p++; /* '%' */
    struct px_col col = {.width = -1};
    if (*p == '.') col.right = true, p++;
    if (isdigit((unsigned char)*p)) {
      col.width = (int)strtol(p, (char **)&p, 10);
      if (col.width > 1024) col.width = 1024;
    }
    if (!isalpha((unsigned char)*p)) {
      px_cols_fini(&c);
      return px_diag_set(d, PX_EINVAL, (int)(p - fmt), "Invalid format specification: %s", fmt);
    }
    col.key = *p++;
    if (cols_push(&c, col)) goto nomem;
  }
  *out = c;
  return 0;
nomem:
  px_cols_fini(&c);
  return PX_ENOMEM;
}

int px_cols_parse_long(const char *fmt, const struct px_col_name *names, int dflt_width,
                       struct px_cols *out, struct px_diag *d) {
  struct px_cols c = {0};
  const char *p = fmt;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *colon = memchr(p, ':', len);
    size_t nlen = colon ? (size_t)(colon - p) : len;
    struct px_col col = {.width = dflt_width};
    const struct px_col_name *nm = names;
    while (nm->name && (strlen(nm->name) != nlen || strncasecmp(nm->name, p, nlen))) nm++;
    if (!nm->name) {
      px_cols_fini(&c);
      return px_diag_set(d, PX_EINVAL, (int)(p - fmt), "Invalid job format specification: %.*s",
                         (int)nlen, p); /* Slurm's words, in sinfo -O too */
    }
    col.key = nm->key;
    if (colon) {
      const char *q = colon + 1;
      if (*q == '.') col.right = true, q++;
      if (isdigit((unsigned char)*q)) col.width = (int)strtol(q, NULL, 10);
    }
    if (cols_push(&c, col)) {
      px_cols_fini(&c);
      return PX_ENOMEM;
    }
    p += len + (end ? 1 : 0);
  }
  *out = c;
  return 0;
}

void px_cols_put(FILE *out, const struct px_col *c, const char *v) {
  if (c->width < 0) {
    fputs(v, out);
    return;
  }
  int len = (int)strlen(v);
  if (len > c->width) len = c->width;
  if (c->right)
    fprintf(out, "%*.*s", c->width, len, v);
  else
    fprintf(out, "%-*.*s", c->width, len, v);
}
