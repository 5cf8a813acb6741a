/* outpath.c - expansion of Slurm output file patterns (outpath.h). */
#include "agent/outpath.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

struct sink {
  char *buf;
  size_t size, len;
  bool full;
};

static void emit(struct sink *s, const char *text, size_t n) {
  if (s->full || s->len + n >= s->size) {
    s->full = true;
    return;
  }
  memcpy(s->buf + s->len, text, n);
  s->len += n;
  s->buf[s->len] = '\0';
}

static void emit_num(struct sink *s, unsigned long long v, int width) {
  char b[32];
  int n = snprintf(b, sizeof b, "%0*llu", width, v);
  emit(s, b, (size_t)n);
}

/* One specifier c with zero-pad width; false when c is not a specifier. */
static bool expand_one(struct sink *s, char c, int width, const struct px_launch *l,
                       const char *node, uint32_t task_id) {
  uint64_t master = l->array_job_id ? l->array_job_id : l->job_id;
  char b[64];
  switch (c) {
    case '%': emit(s, "%", 1); return true;
    case 'j': emit_num(s, l->job_id, width); return true;
    case 'A': emit_num(s, master, width); return true;
    case 'a': emit_num(s, l->array_job_id ? l->array_task_id : 0, width); return true;
    case 'n': emit_num(s, l->node_rank, width); return true;
    case 't': emit_num(s, task_id, width); return true;
    case 'x': emit(s, l->name ? l->name : "wrap", strlen(l->name ? l->name : "wrap")); return true;
    case 'u': emit(s, l->user, strlen(l->user)); return true;
    case 'N': emit(s, node, strlen(node)); return true;
    case 's': emit(s, "batch", 5); return true;
    case 'J':
      snprintf(b, sizeof b, "%llu.batch", (unsigned long long)l->job_id);
      emit(s, b, strlen(b));
      return true;
    default: return false;
  }
}

int px_outpath_expand(const char *pattern, const struct px_launch *l, const char *node,
                      uint32_t task_id, char *buf, size_t size) {
  struct sink s = {buf, size, 0, size == 0};
  if (size) buf[0] = '\0';
  if (!pattern || !*pattern) pattern = l->array_job_id ? "slurm-%A_%a.out" : "slurm-%j.out";
  if (pattern[0] != '/') {
    const char *dir = l->workdir ? l->workdir : l->submit_dir ? l->submit_dir : "/";
    emit(&s, dir, strlen(dir));
    if (s.len && buf[s.len - 1] != '/') emit(&s, "/", 1);
  }
  for (const char *p = pattern; *p;) {
    if (*p != '%') {
      emit(&s, p++, 1);
      continue;
    }
    const char *q = p + 1;
    int width = 0;
    while (isdigit((unsigned char)*q) && width < 10) width = width * 10 + (*q++ - '0');
    if (*q && expand_one(&s, *q, width, l, node, task_id)) {
      p = q + 1;
    } else {
      emit(&s, p++, 1); /* not a specifier: keep the % as written */
    }
  }
  return s.full ? PX_ERANGE : 0;
}
