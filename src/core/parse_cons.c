/*
 * parse_cons.c - a --constraint expression as the placer reads it: an OR of
 * AND terms, each term a bitmask of node features (parse.c interns it).
 *
 * Slurm's grammar, as its users write it: NAME, a&b (a,b: Slurm takes the
 * comma for &), a|b, parentheses for grouping ("(a100|h100)&nvme"), and
 * [NAME] (a bracket around one feature is that feature). & binds tighter
 * than |. A grouped expression is distributed into the OR-of-AND form:
 * "(a|b)&(c|d)" becomes a&c | a&d | b&c | b&d, up to CONS_TERMS_MAX terms.
 * Refused with the offset and why: Slurm's matching OR "[a|b]" (every node
 * the same choice) and counts "a*2", which the placer does not implement.
 */
#include <string.h>

#include "core/core_int.h"

struct cons_expr { /* a DNF: terms[i] is an AND of feature bits */
  uint64_t terms[CONS_TERMS_MAX];
  uint32_t n;
};

struct cons_parser {
  const struct px_core *c;
  const char *s, *p;
  struct px_diag *d;
  int depth;
};

static int fail(struct cons_parser *q, int err, const char *why) {
  int off = (int)(q->p - q->s);
  return px_diag_set(q->d, err, off, "constraint: %s at offset %d", why, off);
}

static int feature_bit(const struct px_core *c, const char *s, size_t len) {
  for (uint32_t b = 0; b < c->nfeatures; b++) {
    const char *f = pxc_str(c, c->feature_ids[b]);
    if (strlen(f) == len && strncmp(f, s, len) == 0) return (int)b;
  }
  return -1;
}

static int expr(struct cons_parser *q, struct cons_expr *out);

static int name(struct cons_parser *q, struct cons_expr *out) {
  size_t len = strcspn(q->p, "&|,()[]*!");
  if (!len) return fail(q, PX_EINVAL, "expected a feature name");
  int b = feature_bit(q->c, q->p, len);
  if (b < 0)
    return px_diag_set(q->d, PX_EINVAL, (int)(q->p - q->s), "constraint: no node has feature \"%.*s\"",
                       (int)len, q->p);
  q->p += len;
  if (*q->p == '*') return fail(q, PX_EUNSUPPORTED, "feature counts (NAME*N) are not supported");
  out->terms[0] = 1ULL << b;
  out->n = 1;
  return 0;
}

/* NAME, (expr) or [NAME]. */
static int factor(struct cons_parser *q, struct cons_expr *out) {
  char open = *q->p;
  if (open != '(' && open != '[') return name(q, out);
  if (++q->depth > 16) return fail(q, PX_ERANGE, "nested too deeply");
  q->p++;
  int rc = open == '(' ? expr(q, out) : name(q, out);
  if (!rc && open == '[' && *q->p == '|')
    rc = fail(q, PX_EUNSUPPORTED, "a matching OR [a|b] (every node the same choice) is not supported; a|b lets nodes differ");
  if (!rc && *q->p != (open == '(' ? ')' : ']')) rc = fail(q, PX_EINVAL, open == '(' ? "expected )" : "expected ]");
  if (rc) return rc;
  q->p++;
  q->depth--;
  return 0;
}

/* a & b: every pair of their terms. */
static int and_into(struct cons_parser *q, struct cons_expr *a, const struct cons_expr *b) {
  if ((uint64_t)a->n * b->n > CONS_TERMS_MAX)
    return fail(q, PX_ERANGE, "over 16 alternatives once the groups are multiplied out");
  struct cons_expr r = {.n = 0};
  for (uint32_t i = 0; i < a->n; i++)
    for (uint32_t k = 0; k < b->n; k++) r.terms[r.n++] = a->terms[i] | b->terms[k];
  *a = r;
  return 0;
}

static int term(struct cons_parser *q, struct cons_expr *out) {
  int rc = factor(q, out);
  while (!rc && (*q->p == '&' || *q->p == ',')) {
    q->p++;
    struct cons_expr f;
    if (!(rc = factor(q, &f))) rc = and_into(q, out, &f);
  }
  return rc;
}

static int expr(struct cons_parser *q, struct cons_expr *out) {
  int rc = term(q, out);
  while (!rc && *q->p == '|') {
    q->p++;
    struct cons_expr t;
    if ((rc = term(q, &t))) break;
    if (out->n + t.n > CONS_TERMS_MAX) return fail(q, PX_ERANGE, "over 16 | terms");
    memcpy(out->terms + out->n, t.terms, t.n * sizeof t.terms[0]);
    out->n += t.n;
  }
  return rc;
}

int pxc_cons_terms(const struct px_core *c, const char *s, uint64_t *terms, uint32_t *nterms, struct px_diag *d) {
  struct cons_parser q = {c, s, s, d, 0};
  struct cons_expr e = {.n = 0};
  int rc = expr(&q, &e);
  if (!rc && *q.p) rc = fail(&q, PX_EINVAL, "unexpected character");
  if (rc) return rc;
  memcpy(terms, e.terms, e.n * sizeof e.terms[0]);
  *nterms = e.n;
  return 0;
}
