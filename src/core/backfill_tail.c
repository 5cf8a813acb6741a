/*
 * backfill_tail.c - where a backfill pass can stop reserving (backfill.c).
 *
 * With lazy reasons and no victims stage (c->starts_only: the simulator)
 * what anyone reads of a cycle is its starts and the topology flags. A job
 * left in the queue needs, on each of at least n nodes, g GPUs for its
 * whole time limit from now (g >= 1: GPUs per unit, or all of a single-node
 * job's; n its minimum node count), so n nodes whose plan rows hold g
 * usable GPUs over [0, K), K the end slot of its limit. Jobs are grouped by
 * (g, n rounded down to a bucket; a group needs its fewest nodes): per
 * group the shortest limit left gives the smallest K. Within a cycle the
 * plan only loses capacity and K only grows (jobs only leave the queue), so
 * once no group finds its nodes, none will again this cycle: no job left
 * can start, and their reservations would change nothing anyone reads (the
 * next build undoes them). The pass then goes on without them (cycle.c,
 * tail_rest).
 *
 * Cost: per group its few shortest limits (a min-heap of them all when
 * those run out) and a list of the nodes found; a
 * node found short is never read again this cycle (it stays short), one
 * found holding is read again only after a take on it or a larger K.
 * Exclusive jobs, jobs without GPUs and fractions turn the tail off for the cycle.
 */
#include <string.h>

#include "core/policy.h"

/* Lower bounds of the node-count buckets (a group needs the fewest nodes
 * any of its jobs needs). */
static const uint32_t nb_lo[PXC_BF_NB] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 257};

static uint32_t n_bucket(uint32_t n) {
  uint32_t b = 0;
  while (b + 1 < PXC_BF_NB && nb_lo[b + 1] <= n) b++;
  return b;
}

static bool lim_before(const struct pxc_bf_lim *a, const struct pxc_bf_lim *b) { return a->limit < b->limit; }

static void lim_down(struct pxc_bf_lim *h, size_t n, size_t i) {
  struct pxc_bf_lim x = h[i];
  for (;;) {
    size_t k = 2 * i + 1;
    if (k >= n) break;
    if (k + 1 < n && lim_before(&h[k + 1], &h[k])) k++;
    if (!lim_before(&h[k], &x)) break;
    h[i] = h[k];
    i = k;
  }
  h[i] = x;
}

/* j's group: g GPUs on each of n nodes; false when it may start without a
 * whole GPU on each node (exclusive, no GPU, a fraction of a shared GPU). */
static bool job_group(const struct pxc_job *j, uint32_t *g, uint32_t *n) {
  const struct pxc_shape *s = &j->shape;
  if (s->exclusive || !s->gpu || s->share) return false;
  *g = s->nmax == 1 ? s->units * s->gpu : s->gpu;
  *n = s->nmax == 1 || !s->nmin ? 1 : s->nmin;
  return true;
}

void pxc_bf_job_of(const struct pxc_job *j, struct pxc_bf_job *out) {
  out->limit = j->time_limit_s;
  if (!job_group(j, &out->g, &out->n)) out->g = PX_NONE;
}

static uint32_t max_gpus(const struct px_core *c) {
  uint32_t G = 0;
  for (uint32_t p = 0; p < c->npools; p++)
    if (c->pools[p].maxg > G) G = c->pools[p].maxg;
  return G;
}

static bool groups_alloc(struct px_core *c, uint32_t G) {
  struct pxc_policy *pol = c->pol;
  uint32_t ng = (G + 1) * PXC_BF_NB;
  if (PXC_GROW(c, pol->cls, &pol->cls_cap, ng) || PXC_GROW(c, pol->lims, &pol->lims_cap, c->sort_left + 1) ||
      PXC_GROW(c, pol->lims_in, &pol->lims_in_cap, c->sort_left + 1))
    return false;
  memset(pol->cls, 0, ng * sizeof *pol->cls);
  for (uint32_t i = 0; i < ng; i++) pol->cls[i].g = i / PXC_BF_NB, pol->cls[i].need = UINT32_MAX;
  pol->ncls = ng;
  return true;
}

/* Each group's heap and list of nodes found, once their sizes are known. */
static bool groups_place(struct px_core *c) {
  struct pxc_policy *pol = c->pol;
  size_t off = 0, nw = 0;
  for (uint32_t i = 0; i < pol->ncls; i++) {
    struct pxc_bf_class *k = &pol->cls[i];
    k->best_all = k->n <= (pol->tail_best ? pol->tail_best : PXC_BF_BEST);
    if (!k->n) k->need = 0;                                 /* no job: never open */
    else if (k->need > c->nnodes) k->need = c->nnodes + 1; /* more nodes than there are: never found */
    k->off = off, off += k->n, k->n = 0;
    k->wit_off = (uint32_t)nw, nw += k->need;
  }
  return !PXC_GROW(c, pol->wits, &pol->wits_cap, nw + 1);
}

/* Under the kept order the pass pops from c->sort's end, so the jobs left
 * are always c->sort[0 .. sort_left) and a group's shortest limit left is
 * a prefix minimum: each group chains the places where its prefix minimum
 * falls (lims[]: limit, place, the step before), from the last; group_min
 * drops the steps at or past sort_left. One pass over a dense cache of the
 * jobs (kept.c) instead of their records, two passes and the heaps. */
static bool kept_build(struct px_core *c, uint32_t G) {
  struct pxc_policy *pol = c->pol;
  uint32_t nsteps = 0;
  for (uint32_t i = 0; i < pol->ncls; i++) pol->cls[i].top = PX_NONE;
  for (size_t i = 0; i < c->sort_left; i++) {
    const struct pxc_bf_job *b = &pol->bf_jobs[c->sort[i].slot];
    if (b->g == PX_NONE) return false;
    if (b->g > G) continue;
    struct pxc_bf_class *k = &pol->cls[b->g * PXC_BF_NB + n_bucket(b->n)];
    k->n++;
    if (b->n < k->need) k->need = b->n;
    if (k->top != PX_NONE && pol->lims[k->top].limit <= b->limit) continue;
    pol->lims[nsteps] = (struct pxc_bf_lim){b->limit, (uint32_t)i, k->top};
    k->top = nsteps++;
  }
  return groups_place(c);
}

/* Jobs read ahead of the one groups_build reads. */
#define PXC_BF_AHEAD 24

/* Job x of group k among its PXC_BF_BEST first by (limit, place in lims_in):
 * x comes after every job already seen, so after those of its limit. */
static void best_put(struct pxc_bf_class *k, const struct pxc_bf_lim *x, uint32_t max) {
  uint32_t n = k->nbest;
  if (n == max) {
    if (k->best[n - 1].limit <= x->limit) return;
    n--; /* the last one drops out */
  } else {
    k->nbest++;
  }
  for (; n > 0 && k->best[n - 1].limit > x->limit; n--) k->best[n] = k->best[n - 1];
  k->best[n] = *x;
}

/* Every group's heap of its jobs (lims_in), once a group has seen all its
 * best[] leave: the copies, then the heaps. */
static void groups_heap(struct px_core *c) {
  struct pxc_policy *pol = c->pol;
  for (size_t i = 0; i < pol->lims_n; i++) {
    const struct pxc_bf_lim *x = &pol->lims_in[i];
    if (x->grp == UINT32_MAX) continue;
    struct pxc_bf_class *k = &pol->cls[x->grp];
    pol->lims[k->off + k->n++] = *x;
  }
  for (uint32_t i = 0; i < pol->ncls; i++)
    for (size_t h = pol->cls[i].n / 2; h-- > 0;) lim_down(pol->lims + pol->cls[i].off, pol->cls[i].n, h);
  pol->lims_heaped = true;
}

/* The jobs left in the queue (c->sort[0 .. sort_left)) into their groups;
 * false when one of them turns the tail off. Jobs needing more GPUs on a
 * node than any node has never start: left out. One pass reads the jobs'
 * records (a deep queue's cache misses) and keeps each group's few
 * shortest limits: a pass that reaches its tail has tried a few hundred of
 * thousands of jobs, few of them a group's shortest (on the gang-heavy
 * 10,000, 18 a cycle), so the groups' heaps, which took every job left,
 * are built only when a group runs out of them (groups_heap). */
static bool groups_build(struct px_core *c) {
  struct pxc_policy *pol = c->pol;
  uint32_t G = max_gpus(c), g = 0, n = 0, cyc = (uint32_t)c->stats.cycles;
  if (!groups_alloc(c, G)) return false;
  pol->lims_pos = pol->kept.used;
  pol->cls_last = 0;
  if (pol->lims_pos) return kept_build(c, G);
  for (size_t i = 0; i < c->sort_left; i++) {
    if (i + PXC_BF_AHEAD < c->sort_left) { /* the records are scattered: ask for both lines read ahead */
      const struct pxc_job *a = &c->jobs[c->sort[i + PXC_BF_AHEAD].slot];
      __builtin_prefetch(&a->time_limit_s);
      __builtin_prefetch(&a->shape);
    }
    struct pxc_job *j = &c->jobs[c->sort[i].slot];
    j->mark = cyc; /* not yet tried: the full pass marked it while gating, the gated entries did not (gated.c) */
    if (!job_group(j, &g, &n)) return false;
    uint32_t grp = g > G ? UINT32_MAX : g * PXC_BF_NB + n_bucket(n);
    pol->lims_in[i] = (struct pxc_bf_lim){j->time_limit_s, c->sort[i].slot, grp};
    if (grp == UINT32_MAX) continue;
    struct pxc_bf_class *k = &pol->cls[grp];
    k->n++;
    if (n < k->need) k->need = n;
    best_put(k, &pol->lims_in[i], pol->tail_best ? pol->tail_best : PXC_BF_BEST);
  }
  pol->lims_n = c->sort_left;
  pol->lims_heaped = false;
  return groups_place(c);
}

/* Shortest time limit left in group k (INT64_MAX: none): jobs taken since
 * (tried: mark cleared, cycle.c; under the kept order, popped) leave it. */
static int64_t group_min(struct px_core *c, struct pxc_bf_class *k) {
  if (c->pol->lims_pos) {
    const struct pxc_bf_lim *s = c->pol->lims;
    while (k->top != PX_NONE && s[k->top].slot >= c->sort_left) k->top = s[k->top].grp;
    return k->top == PX_NONE ? INT64_MAX : s[k->top].limit;
  }
  uint32_t cyc = (uint32_t)c->stats.cycles;
  if (!c->pol->lims_heaped) { /* its first jobs by limit: the first one not taken */
    while (k->best_at < k->nbest && c->jobs[k->best[k->best_at].slot].mark != cyc) k->best_at++;
    if (k->best_at < k->nbest) return k->best[k->best_at].limit;
    if (k->best_all) return INT64_MAX;
    groups_heap(c);
  }
  struct pxc_bf_lim *h = c->pol->lims + k->off;
  while (k->n && c->jobs[h[0].slot].mark != cyc) {
    h[0] = h[--k->n];
    lim_down(h, k->n, 0);
  }
  return k->n ? h[0].limit : INT64_MAX;
}

static bool listed(const uint32_t *w, uint32_t n, uint32_t node) {
  for (uint32_t i = 0; i < n; i++)
    if (w[i] == node) return true;
  return false;
}

/* Keeps the nodes found that still hold g GPUs over [0, kend), then looks
 * for more from the cursor on until need are found; true when they are. */
static bool group_nodes(struct px_core *c, struct pxc_bf_class *k, uint32_t kend) {
  struct pxc_tl *tl = &c->pol->tl;
  uint32_t *w = c->pol->wits + k->wit_off, keep = 0;
  for (uint32_t i = 0; i < k->nwit; i++)
    if ((kend == k->wit_k && tl->stamp[w[i]] <= k->wit_takes) || pxc_tl_gpu_run_node(tl, w[i], k->g, kend))
      w[keep++] = w[i];
  k->nwit = keep;
  while (k->nwit < k->need && pxc_tl_gpu_run(c, tl, &k->wit, k->g, kend)) {
    uint32_t node = pxc_tl_cursor_node(c, &k->wit);
    if (!listed(w, k->nwit, node)) w[k->nwit++] = node; /* a node in two pools counts once */
    k->wit.q++;
  }
  k->wit_k = kend;
  k->wit_takes = tl->ntakes;
  return k->nwit >= k->need;
}

/* May a job of group k left in the queue still start? */
static bool group_open(struct px_core *c, struct pxc_bf_class *k) {
  int64_t lim = group_min(c, k);
  if (lim == INT64_MAX) return false;
  uint32_t kend = pxc_tl_end_slot(&c->pol->tl, 0, lim);
  if (kend == k->wit_k && c->pol->tl.ntakes == k->wit_takes) return k->nwit >= k->need; /* nothing moved */
  return group_nodes(c, k, kend);
}

void pxc_bf_tail_begin(struct px_core *c) {
  struct pxc_policy *pol = c->pol;
  pol->lims_built = pol->tail = pol->tail_off = false;
}

bool pxc_bf_tail_reached(struct px_core *c) {
  struct pxc_policy *pol = c->pol;
  if (pol->tail) return true;
  if (pol->tail_off || !c->starts_only) return false;
  if (!pol->lims_built) {
    pol->lims_built = true;
    if (!groups_build(c)) {
      pol->tail_off = true;
      return false;
    }
  }
  if (group_open(c, &pol->cls[pol->cls_last])) return false;
  for (uint32_t i = 0; i < pol->ncls; i++)
    if (i != pol->cls_last && group_open(c, &pol->cls[i])) {
      pol->cls_last = i;
      return false;
    }
  return pol->tail = c->pass_tail = true;
}
