/*
 * cmd_status.c - `phalanx server status --store URL`: every controller of
 * a highly available store (issue 16) with its role, term, the journal seq
 * it has applied, its lag behind the leader and how long ago it reported,
 * read from the store itself: it answers while no controller does.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "store/store.h"

struct rows {
  struct px_store_ctl v[64];
  char text[64][3][256];
  int n;
};

static int keep(void *ctx, const struct px_store_ctl *c) {
  struct rows *r = ctx;
  if (r->n == 64) return 0;
  const char *src[3] = {c->name, c->addr, c->role};
  for (int k = 0; k < 3; k++) snprintf(r->text[r->n][k], 256, "%s", src[k]);
  r->v[r->n] = *c;
  r->v[r->n].name = r->text[r->n][0];
  r->v[r->n].addr = r->text[r->n][1];
  r->v[r->n].role = r->text[r->n][2];
  r->n++;
  return 0;
}

static void print(const struct rows *r, const struct px_store_lease *l, bool json) {
  uint64_t top = 0;
  for (int i = 0; i < r->n; i++) top = r->v[i].seq > top ? r->v[i].seq : top;
  if (json) printf("{\"term\":%llu,\"leader\":\"%s\",\"controllers\":[", (unsigned long long)l->term,
                   l->live ? l->holder : "");
  else printf("%-24s %-8s %6s %10s %8s %8s %8s  %s\n", "NAME", "ROLE", "TERM", "SEQ", "LAG", "PID",
              "AGE_MS", "ADDR");
  for (int i = 0; i < r->n; i++) {
    const struct px_store_ctl *c = &r->v[i];
    bool lost = c->age_ms > 10000; /* not heard from: gone, or cut off from the store */
    const char *role = lost ? "gone" : c->role;
    if (json)
      printf("%s{\"name\":\"%s\",\"role\":\"%s\",\"term\":%llu,\"seq\":%llu,\"lag\":%llu,"
             "\"pid\":%lld,\"age_ms\":%lld,\"addr\":\"%s\"}",
             i ? "," : "", c->name, role, (unsigned long long)c->term, (unsigned long long)c->seq,
             (unsigned long long)(top - c->seq), (long long)c->pid, (long long)c->age_ms, c->addr);
    else
      printf("%-24s %-8s %6llu %10llu %8llu %8lld %8lld  %s\n", c->name, role,
             (unsigned long long)c->term, (unsigned long long)c->seq,
             (unsigned long long)(top - c->seq), (long long)c->pid, (long long)c->age_ms, c->addr);
  }
  if (json) printf("]}\n");
  else printf("lease: term %llu, %s\n", (unsigned long long)l->term,
              l->live ? l->holder : "expired (no leader)");
}

int px_cmd_server_status(int argc, char **argv) {
  static const struct option longopts[] = {
      {"store", required_argument, 0, 'u'}, {"json", no_argument, 0, 'j'}, {0, 0, 0, 0}};
  const char *url = NULL;
  bool json = false;
  int ch;
  optind = 1;
  while ((ch = getopt_long(argc, argv, "u:j", longopts, NULL)) != -1) {
    if (ch == 'u') url = optarg;
    else if (ch == 'j') json = true;
    else return fprintf(stderr, "usage: phalanx server status --store URL [--json]\n"), 2;
  }
  if (!url) return fprintf(stderr, "usage: phalanx server status --store URL [--json]\n"), 2;
  struct px_store *st = NULL;
  struct px_diag d;
  px_diag_clear(&d);
  if (px_store_open(url, &st, &d)) return fprintf(stderr, "phalanx server status: %s\n", d.msg), 1;
  static struct rows r;
  struct px_store_lease l = {0};
  int rc = px_store_ctl_list(st, keep, &r);
  if (!rc) rc = px_store_lease_peek(st, &l);
  if (rc == PX_EUNSUPPORTED) fprintf(stderr, "phalanx server status: %s has one controller (no --ha)\n", url);
  else if (rc) fprintf(stderr, "phalanx server status: %s\n", st->errmsg);
  else print(&r, &l, json);
  px_store_close(st);
  return rc ? 1 : 0;
}
