/* failures.c - injected GPU failures of a simulated run (failures.h). */
#include "sim/failures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: the run's own stream, from its seed. */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Exponential inter-arrival time, at least a second (the clock's unit). */
static int64_t draw_gap(struct px_sim_failures *f) {
  double u = ((double)(next_u64(&f->rng) >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
  double gap = -log(u) / f->per_s;
  return gap < 1 ? 1 : gap > 1e15 ? (int64_t)1e15 : (int64_t)gap;
}

void px_sim_failures_init(struct px_sim_failures *f, const struct px_conf *conf, uint64_t total_gpus, double rate,
                          int64_t repair_s, uint64_t seed, int64_t t0_s) {
  memset(f, 0, sizeof *f);
  f->conf = conf;
  f->total_gpus = total_gpus;
  f->repair_s = repair_s > 0 ? repair_s : 1;
  f->rng = seed ^ 0x6a09e667f3bcc909ull;
  f->per_s = rate > 0 && total_gpus ? rate * (double)total_gpus / 86400.0 : 0;
  f->next_s = f->per_s > 0 ? t0_s + draw_gap(f) : INT64_MAX;
}

void px_sim_failures_fini(struct px_sim_failures *f) {
  free(f->q);
  f->q = NULL;
}

int64_t px_sim_failures_due(const struct px_sim_failures *f) {
  int64_t r = f->head < f->n ? f->q[f->head].t_s : INT64_MAX;
  return f->next_s < r ? f->next_s : r;
}

/* The k-th GPU of the cluster, counting node by node. */
static void gpu_at(const struct px_sim_failures *f, uint64_t k, uint32_t *node, uint32_t *gpu) {
  for (uint32_t i = 0; i < f->conf->nnodes; i++) {
    uint32_t ng = f->conf->nodes[i].ngpu;
    if (k < ng) {
      *node = i, *gpu = (uint32_t)k;
      return;
    }
    k -= ng;
  }
  *node = *gpu = 0;
}

static bool out_now(const struct px_sim_failures *f, uint32_t node, uint32_t gpu) {
  for (size_t i = f->head; i < f->n; i++)
    if (f->q[i].node == node && f->q[i].gpu == gpu) return true;
  return false;
}

bool px_sim_failure_take(struct px_sim_failures *f, int64_t now_s, uint32_t *node, uint32_t *gpu) {
  if (f->next_s > now_s) return false;
  f->next_s = now_s + draw_gap(f);
  gpu_at(f, next_u64(&f->rng) % f->total_gpus, node, gpu);
  return !out_now(f, *node, *gpu);
}

int px_sim_failure_repair_at(struct px_sim_failures *f, int64_t now_s, uint32_t node, uint32_t gpu) {
  if (f->head == f->n) f->head = f->n = 0;
  if (f->n == f->cap) {
    size_t cap = f->cap ? f->cap * 2 : 64;
    struct px_sim_repair *q = realloc(f->q, cap * sizeof *q);
    if (!q) return PX_ENOMEM;
    f->q = q, f->cap = cap;
  }
  f->q[f->n++] = (struct px_sim_repair){now_s + f->repair_s, now_s, node, gpu};
  return 0;
}

bool px_sim_repair_take(struct px_sim_failures *f, int64_t now_s, uint32_t *node, uint32_t *gpu, int64_t *down_s) {
  if (f->head == f->n || f->q[f->head].t_s > now_s) return false;
  const struct px_sim_repair *r = &f->q[f->head++];
  *node = r->node, *gpu = r->gpu, *down_s = now_s - r->failed_s;
  return true;
}

void px_sim_failures_stop(struct px_sim_failures *f) { f->next_s = INT64_MAX; }
