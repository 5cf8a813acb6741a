/*
 * hostnames.c - hostlist and counted-list compression for the job
 * environment (hostnames.h). Names keep their given (rank) order: a run of
 * names sharing a prefix and digit width becomes one bracket, and inside it
 * consecutive numbers become ranges, as Slurm prints them.
 */
#include "agent/hostnames.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

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

/* Splits "gpu0012" into prefix length 3, number 12, width 4; false when the
 * name has no numeric suffix (or one too long to be a number). */
static bool split(const char *name, size_t *plen, unsigned long *num, int *width) {
  size_t len = strlen(name), i = len;
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') i--;
  if (i == len || len - i > 9) return false;
  *plen = i;
  *width = (int)(len - i);
  *num = strtoul(name + i, NULL, 10);
  return true;
}

static bool same_group(const char *a, const char *b) {
  size_t pa, pb;
  unsigned long na, nb;
  int wa, wb;
  if (!split(a, &pa, &na, &wa) || !split(b, &pb, &nb, &wb)) return false;
  return pa == pb && wa == wb && strncmp(a, b, pa) == 0;
}

int px_agent_hostlist(char *const *names, uint32_t n, char *buf, size_t size) {
  struct out o = {buf, size, 0, size == 0};
  if (size) buf[0] = '\0';
  for (uint32_t i = 0; i < n;) {
    uint32_t end = i + 1;
    while (end < n && same_group(names[i], names[end])) end++;
    if (i) put(&o, ",");
    size_t plen;
    unsigned long num;
    int width;
    if (end == i + 1 || !split(names[i], &plen, &num, &width)) {
      put(&o, "%s", names[i]);
      i = end;
      continue;
    }
    put(&o, "%.*s[", (int)plen, names[i]);
    for (uint32_t k = i; k < end;) {
      uint32_t r = k + 1;
      unsigned long lo, prev, cur;
      size_t pl;
      int w;
      split(names[k], &pl, &lo, &w);
      prev = lo;
      while (r < end && split(names[r], &pl, &cur, &w) && cur == prev + 1) prev = cur, r++;
      put(&o, "%s%0*lu", k > i ? "," : "", width, lo);
      if (prev != lo) put(&o, "-%0*lu", width, prev);
      k = r;
    }
    put(&o, "]");
    i = end;
  }
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
