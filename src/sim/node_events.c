/* node_events.c - the nodes' down and drain periods of a record (node_events.h). */
#include "sim/node_events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum col { C_NODE, C_STATE, C_START, C_END, C_TIME0, C_NCOLS };
static const char *const col_names[C_NCOLS] = {"node", "state", "start_s", "end_s", "time0_unix_s"};
#define C_REQUIRED C_TIME0 /* columns before this one must be in the header */

struct reader {
  struct px_csv csv;
  struct px_node_events *e; /* the set being read */
  int slot[C_NCOLS];
};

void px_node_events_fini(struct px_node_events *e) {
  px_node_spanvec_fini(&e->spans);
  px_charvec_fini(&e->names);
  memset(e, 0, sizeof *e);
}

static const struct px_csv_field empty_field;

static const struct px_csv_field *col(const struct reader *r, int c) {
  int s = r->slot[c];
  return s >= 0 && (size_t)s < r->csv.nfields ? &r->csv.fields[s] : &empty_field;
}

static int err(struct reader *r, int c, int code, const char *msg) {
  return px_csv_err(&r->csv, col(r, c)->pos, code, col_names[c], msg);
}

static bool field_is(const struct reader *r, int c, const char *word) {
  const struct px_csv_field *f = col(r, c);
  return f->len == strlen(word) && !memcmp(px_csv_bytes(&r->csv, f), word, f->len);
}

/* A whole number of seconds (*empty when the field is). */
static int whole(struct reader *r, int c, int64_t *out, bool *empty) {
  uint64_t v = 0;
  int rc = px_csv_milli(&r->csv, col(r, c), col_names[c], &v, empty);
  if (!rc && v % 1000) rc = err(r, c, PX_EPARSE, "not a whole number of seconds");
  *out = (int64_t)(v / 1000);
  return rc;
}

static int parse_times(struct reader *r, struct px_node_span *s) {
  bool empty;
  int rc = whole(r, C_START, &s->start_s, &empty);
  if (!rc && empty) rc = err(r, C_START, PX_EPARSE, "empty, but a period has a start");
  if (!rc) rc = whole(r, C_END, &s->end_s, &empty);
  if (rc) return rc;
  if (empty) s->end_s = INT64_MAX; /* still open */
  else if (s->end_s < s->start_s) return err(r, C_END, PX_EPARSE, "before start_s");
  return 0;
}

static int parse_time0(struct px_node_events *e, struct reader *r) {
  int64_t v;
  bool empty;
  int rc = whole(r, C_TIME0, &v, &empty);
  if (rc || empty) return rc;
  if (e->time0_unix_s && e->time0_unix_s != v) return err(r, C_TIME0, PX_EPARSE, "differs from an earlier row's");
  e->time0_unix_s = v;
  return 0;
}

static int parse_row(struct px_node_events *e, struct reader *r) {
  struct px_node_span s = {.line = r->csv.row_line, .node = UINT32_MAX};
  const struct px_csv_field *node = col(r, C_NODE);
  if (!node->len) return err(r, C_NODE, PX_EPARSE, "empty, but a period is a node's");
  if (memchr(px_csv_bytes(&r->csv, node), '\0', node->len)) return err(r, C_NODE, PX_EPARSE, "a NUL byte");
  if (field_is(r, C_STATE, "DOWN")) s.down = true;
  else if (!field_is(r, C_STATE, "DRAIN")) return err(r, C_STATE, PX_EPARSE, "expected DOWN or DRAIN");
  int rc = parse_times(r, &s);
  if (!rc) rc = parse_time0(e, r);
  if (rc) return rc;
  if (e->names.len + node->len + 1 > UINT32_MAX) return err(r, C_NODE, PX_ERANGE, "too many node names (4 GiB)");
  s.name_off = (uint32_t)e->names.len;
  if (px_charvec_reserve(&e->names, e->names.len + node->len + 1)) return PX_ENOMEM;
  memcpy(e->names.v + e->names.len, px_csv_bytes(&r->csv, node), node->len);
  e->names.len += node->len;
  e->names.v[e->names.len++] = '\0';
  return px_node_spanvec_push(&e->spans, s);
}

static int period_row(void *ctx) {
  struct reader *r = ctx;
  return parse_row(r->e, r);
}

static const struct px_csv_header header = {
    "file", col_names, C_NCOLS, C_REQUIRED, "the header lacks this column (node,state,start_s,end_s are required)"};

int px_node_events_parse(struct px_node_events *e, const char *buf, size_t len, struct px_diag *d) {
  struct reader r = {.e = e};
  memset(e, 0, sizeof *e);
  int rc = px_csv_parse(&r.csv, buf, len, d, &header, r.slot, period_row, &r);
  if (rc) px_node_events_fini(e);
  return rc;
}

static int parse_text(void *e, const char *buf, size_t len, struct px_diag *d) {
  return px_node_events_parse(e, buf, len, d);
}

int px_node_events_load(struct px_node_events *e, const char *path, struct px_diag *d) {
  memset(e, 0, sizeof *e);
  return px_csv_load(path, parse_text, e, d);
}

int px_node_events_bind(struct px_node_events *e, const struct px_conf *conf, int64_t trace_time0, struct px_diag *d) {
  if (e->time0_unix_s && trace_time0 && e->time0_unix_s != trace_time0)
    return px_diag_set(d, PX_EINVAL, -1,
                       "time0_unix_s %lld is not the jobs trace's (%lld): the node events belong to another export",
                       (long long)e->time0_unix_s, (long long)trace_time0);
  for (size_t i = 0; i < e->spans.len; i++) {
    struct px_node_span *s = &e->spans.v[i];
    const char *name = e->names.v + s->name_off;
    s->node = UINT32_MAX;
    for (uint32_t k = 0; k < conf->nnodes && s->node == UINT32_MAX; k++)
      if (!strcmp(conf->nodes[k].name, name)) s->node = k;
    if (s->node == UINT32_MAX) {
      int rc = px_diag_set(d, PX_ENOENT, -1, "line %u, column 1 (node): %.64s is not a node of the cluster", s->line,
                           name);
      if (d) d->line = (int)s->line;
      return rc;
    }
  }
  return 0;
}

/* ---- the timeline ---- */

/* At one time: ends of earlier spans (a state that follows another), then
 * beginnings, then the ends of spans as long as nothing. */
static int rank(const struct px_node_change *c) { return c->out ? 1 : c->empty ? 2 : 0; }

static int cmp_change(const void *a, const void *b) {
  const struct px_node_change *x = a, *y = b;
  if (x->t_s != y->t_s) return x->t_s < y->t_s ? -1 : 1;
  if (rank(x) != rank(y)) return rank(x) - rank(y);
  if (x->node != y->node) return x->node < y->node ? -1 : 1;
  return (x->down > y->down) - (x->down < y->down);
}

int px_node_timeline_init(struct px_node_timeline *tl, const struct px_node_events *e, uint32_t nnodes) {
  memset(tl, 0, sizeof *tl);
  size_t n = e ? e->spans.len : 0;
  if (!n) return 0;
  tl->v = malloc(2 * n * sizeof *tl->v);
  tl->down = calloc(nnodes ? nnodes : 1, sizeof *tl->down);
  tl->drain = calloc(nnodes ? nnodes : 1, sizeof *tl->drain);
  if (!tl->v || !tl->down || !tl->drain) {
    px_node_timeline_fini(tl);
    return PX_ENOMEM;
  }
  tl->nnodes = nnodes;
  for (size_t i = 0; i < n; i++) {
    const struct px_node_span *s = &e->spans.v[i];
    if (s->node >= nnodes) continue; /* not bound: never replayed */
    tl->v[tl->n++] = (struct px_node_change){s->start_s, s->node, true, s->down, false};
    if (s->end_s != INT64_MAX)
      tl->v[tl->n++] = (struct px_node_change){s->end_s, s->node, false, s->down, s->end_s == s->start_s};
  }
  qsort(tl->v, tl->n, sizeof *tl->v, cmp_change);
  return 0;
}

void px_node_timeline_fini(struct px_node_timeline *tl) {
  free(tl->v);
  free(tl->down);
  free(tl->drain);
  memset(tl, 0, sizeof *tl);
}

int64_t px_node_timeline_due(const struct px_node_timeline *tl) {
  return tl->next < tl->n ? tl->v[tl->next].t_s : INT64_MAX;
}
