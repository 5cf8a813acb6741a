/*
 * hostnames.c - hostlist and counted-list compression for the job
 * environment (hostnames.h). Hostlists are util/hostlist's canonical form
 * (sorted, as Slurm prints SLURM_JOB_NODELIST); counted lists keep order.
 */
#include "agent/hostnames.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/hostlist.h"

struct out {
  char *buf;
  size_t size, len;
  bool full;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...) {
  if (o->full) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= o->size - o->len) {
    o->full = true;
    return;
  }
  o->len += (size_t)n;
}

int px_agent_hostlist(char *const *names, uint32_t n, char *buf, size_t size) {
  char *s = NULL;
  if (size) buf[0] = '\0';
  int rc = px_hostlist_compress((const char *const *)names, n, &s);
  if (rc) return rc;
  struct out o = {buf, size, 0, size == 0};
  put(&o, "%s", s);
  free(s);
  return o.full ? PX_ERANGE : 0;
}

int px_agent_count_list(const uint32_t *v, uint32_t n, char *buf, size_t size) {
  struct out o = {buf, size, 0, size == 0};
  if (size) buf[0] = '\0';
  for (uint32_t i = 0; i < n;) {
    uint32_t r = i + 1;
    while (r < n && v[r] == v[i]) r++;
    put(&o, "%s%u", i ? "," : "", v[i]);
    if (r - i > 1) put(&o, "(x%u)", r - i);
    i = r;
  }
  return o.full ? PX_ERANGE : 0;
}
