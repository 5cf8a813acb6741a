/* servers.c - the controllers an agent knows and the highest term heard (servers.h). */
#include "agent/servers.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/error.h"
#include "util/log.h"

/* The process-wide values (servers.h says why). */
static _Atomic uint64_t heard_term;
static atomic_int current;

int px_servers_parse(struct px_servers *l, const char *list, char *why, size_t size) {
  memset(l, 0, sizeof *l);
  for (const char *p = list ? list : ""; *p;) {
    size_t len = strcspn(p, ",");
    if (len && l->n == PX_SERVERS_MAX)
      return snprintf(why, size, "--server: more than %d addresses", PX_SERVERS_MAX), PX_EINVAL;
    if (len >= sizeof l->base[0])
      return snprintf(why, size, "--server: address '%.*s' is too long", (int)len, p), PX_EINVAL;
    if (len) snprintf(l->base[l->n++], sizeof l->base[0], "%.*s", (int)len, p);
    p += len + (p[len] == ',');
  }
  if (!l->n) return snprintf(why, size, "--server: no address"), PX_EINVAL;
  return 0;
}

int px_servers_cur(const struct px_servers *l) { return atomic_load(&current) % l->n; }

const char *px_servers_base(const struct px_servers *l) { return l->base[px_servers_cur(l)]; }

void px_servers_next(const struct px_servers *l, int from, const char *hint) {
  if (l->n < 2) return;
  int to = (from + 1) % l->n;
  for (int i = 0; hint && *hint && i < l->n; i++)
    if (!strcmp(l->base[i], hint)) to = i;
  int expect = from;
  if (to != from && atomic_compare_exchange_strong(&current, &expect, to))
    px_info("server %s: trying %s", l->base[from], l->base[to]);
}

bool px_servers_term_ok(uint64_t term) {
  uint64_t seen = atomic_load(&heard_term);
  while (term > seen && !atomic_compare_exchange_weak(&heard_term, &seen, term)) {}
  if (term >= seen || term == 0) return true;
  px_warn("refused an answer of term %llu: term %llu leads now (a deposed controller)",
          (unsigned long long)term, (unsigned long long)seen);
  return false;
}

uint64_t px_servers_term(void) { return atomic_load(&heard_term); }

size_t px_servers_header(char *data, size_t size, size_t n, void *hdr) {
  struct px_ha_hdr *h = hdr;
  size_t len = size * n;
  if (len > 15 && !strncasecmp(data, "X-Phalanx-Term:", 15)) {
    h->term = strtoull(data + 15, NULL, 10);
  } else if (len > 17 && !strncasecmp(data, "X-Phalanx-Leader:", 17)) {
    const char *v = data + 17;
    size_t k = len - 17;
    while (k && (*v == ' ' || *v == '\t')) v++, k--;
    while (k && (v[k - 1] == '\r' || v[k - 1] == '\n' || v[k - 1] == ' ')) k--;
    snprintf(h->leader, sizeof h->leader, "%.*s", (int)k, v);
  }
  return len;
}
