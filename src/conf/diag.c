/*
 * diag.c - collecting the errors and warnings of one load, and the arena
 * helpers that record running out of memory instead of failing silently.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/parse.h"

void px_conf_diags_fini(struct px_conf_diags *d) {
  if (!d) return;
  for (size_t i = 0; i < d->len; i++) {
    free(d->v[i].file);
    free(d->v[i].text);
  }
  free(d->v);
  memset(d, 0, sizeof *d);
}

int px_conf_msg_format(const struct px_conf_msg *m, char *buf, size_t n) {
  const char *sev = m->is_error ? "error" : "warning";
  if (m->file[0] && m->line) return snprintf(buf, n, "%s:%d: %s: %s", m->file, m->line, sev, m->text);
  if (m->file[0]) return snprintf(buf, n, "%s: %s: %s", m->file, sev, m->text);
  return snprintf(buf, n, "%s: %s", sev, m->text);
}

static void add(struct px_cb *b, bool is_error, const struct px_where *w, const char *fmt, va_list ap) {
  struct px_conf_diags *d = b->diags;
  if (is_error) b->nerrors++;
  if (!d) return;
  if (is_error) d->nerrors++;
  else d->nwarnings++;
  if (d->len == PX_CONF_MAX_MSGS) return;
  if (d->len == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 16;
    struct px_conf_msg *v = realloc(d->v, cap * sizeof *v);
    if (!v) {
      b->oom = true;
      return;
    }
    d->v = v;
    d->cap = cap;
  }
  char text[1024];
  vsnprintf(text, sizeof text, fmt, ap);
  struct px_conf_msg *m = &d->v[d->len];
  m->is_error = is_error;
  m->line = w ? w->line : 0;
  m->file = strdup(w && w->file ? w->file : "");
  m->text = strdup(text);
  if (!m->file || !m->text) {
    free(m->file);
    free(m->text);
    b->oom = true;
    return;
  }
  d->len++;
}

void px_cb_error(struct px_cb *b, const struct px_where *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add(b, true, w, fmt, ap);
  va_end(ap);
}

void px_cb_warn(struct px_cb *b, const struct px_where *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add(b, false, w, fmt, ap);
  va_end(ap);
}

void px_cb_bad(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, const char *expected) {
  px_cb_error(b, w, "%s=%s: expected %s", kv->key, kv->val, expected);
}

char *px_cb_strdup(struct px_cb *b, const char *s) {
  char *p = px_arena_strdup(&b->c->arena, s);
  if (!p) b->oom = true;
  return p;
}

void *px_cb_calloc(struct px_cb *b, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) {
    b->oom = true;
    return NULL;
  }
  void *p = px_arena_calloc(&b->c->arena, n * size);
  if (!p) b->oom = true;
  return p;
}
