/*
 * place.c - gang placement: feasibility, then scoring, all or nothing.
 *
 * A job asks for `units` (per node totals for a fixed -N shape, tasks for a
 * flexible one). pxc_node_fit() says how many units a node can host now:
 * features, tenancy, exclusivity, GPUs within one NVLink group, CPUs and
 * memory. Single-node jobs walk the pool's free-GPU buckets from the best fit
 * upward (packing) or from the emptiest down (spreading), so they touch a
 * handful of nodes. Gangs work on leaves: per-leaf histograms give an upper
 * bound of the units each leaf can host; the lowest switch whose bound covers
 * the gang is chosen (a single leaf first, best fit), its leaves taken
 * largest first, and only the chosen leaves are checked node by node. A leaf
 * whose exact count falls short gets its exact bound and the choice is made
 * again, so each round fixes a leaf and the search ends within nleaves
 * rounds. Nothing is changed until pxc_place_commit().
 */
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "util/map.h"

int pxc_place_scratch_init(struct px_core *c) {
  size_t n = c->nnodes + 1, l = c->nleaves + 1, s = c->nswitches + 1;
  c->pl_bound = pxc_calloc(c, l, sizeof *c->pl_bound);
  c->pl_sum = pxc_calloc(c, s, sizeof *c->pl_sum);
  c->pl_exact = pxc_calloc(c, l, sizeof *c->pl_exact);
  c->pl_leaves = pxc_calloc(c, l, sizeof *c->pl_leaves);
  c->pl_nodes = pxc_calloc(c, n, sizeof *c->pl_nodes);
  c->pl_units = pxc_calloc(c, n, sizeof *c->pl_units);
  c->pl_cand = pxc_calloc(c, n, sizeof *c->pl_cand);
  if (!c->pl_bound || !c->pl_sum || !c->pl_exact || !c->pl_leaves || !c->pl_nodes ||
      !c->pl_units || !c->pl_cand)
    return PX_ENOMEM;
  return 0;
}

/* ---- one node --------------------------------------------------------- */

static uint32_t group_size(const struct pxc_node *n) { return n->ngpu / n->gpu_groups; }

static uint32_t group_free(const struct pxc_node *n, px_bits64 free, uint32_t g) {
  return (uint32_t)px_bits64_count(free & px_bits64_range((int)(g * group_size(n)), (int)group_size(n)));
}

/* Units of gu GPUs each that fit in `free`, each unit inside one group when
 * it fits a group, else across groups. */
static uint32_t gpu_units(const struct pxc_node *n, px_bits64 free, uint32_t gu) {
  if (!gu) return UINT32_MAX;
  uint32_t gs = group_size(n);
  if (gu > gs) return (uint32_t)px_bits64_count(free) / gu;
  uint32_t u = 0;
  for (uint32_t g = 0; g < n->gpu_groups; g++) u += group_free(n, free, g) / gu;
  return u;
}

uint64_t pxc_mem_for(const struct pxc_job *j, const struct pxc_node *n, uint32_t u) {
  const struct pxc_shape *s = &j->shape;
  if (!s->mem_prop) return (uint64_t)u * s->mem;
  uint64_t cpu = (uint64_t)u * s->cpu + s->base_cpu, gpu = (uint64_t)u * s->gpu;
  uint64_t by_cpu = cpu * n->mem_mib / n->cpus;
  uint64_t by_gpu = n->ngpu ? gpu * n->mem_mib / n->ngpu : 0;
  if (s->share && n->ngpu) by_gpu = (uint64_t)s->share * n->mem_mib / ((uint64_t)n->ngpu * PXC_SHARE_UNITS);
  return by_cpu > by_gpu ? by_cpu : by_gpu;
}

bool pxc_node_in_part(const struct px_core *c, uint32_t node, uint32_t part) {
  const struct pxc_node *n = &c->nodes[node];
  for (uint32_t i = 0; i < n->npools; i++)
    if (c->pools[c->node_pools[n->pool_first + i].pool].part == part) return true;
  return false;
}

static bool sorted_has(const uint32_t *v, uint32_t n, uint32_t node) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (v[mid] < node) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && v[lo] == node;
}

bool pxc_excluded(const struct pxc_job *j, uint32_t node) { return sorted_has(j->excl, j->nexcl, node); }

/* --exclude, --nodelist and --reservation: may j use node at all? */
static bool names_ok(const struct px_core *c, const struct pxc_job *j, uint32_t node) {
  if (j->nexcl && pxc_excluded(j, node)) return false;
  if (j->nreq && !sorted_has(j->req, j->nreq, node)) return false;
  return j->resv == PX_NONE || pxc_resv_holds(c, j->resv, node);
}

static bool features_ok(const struct px_core *c, const struct pxc_job *j, const struct pxc_node *n) {
  if (j->constraint == PX_NONE) return true;
  const struct pxc_constraint *k = &c->cons[j->constraint];
  for (uint32_t t = 0; t < k->nterms; t++)
    if ((n->features & k->terms[t]) == k->terms[t]) return true;
  return false;
}

uint32_t pxc_node_fit(const struct px_core *c, const struct pxc_job *j, uint32_t node, bool idle) {
  const struct pxc_node *n = &c->nodes[node];
  const struct pxc_shape *s = &j->shape;
  if (!features_ok(c, j, n) || !names_ok(c, j, node)) return 0;
  px_bits64 types = pxc_type_gpus(n, j->gpu_type);
  if (!types && j->gpu_type != PX_NONE) return 0;
  px_bits64 free = (idle ? px_bits64_range(0, (int)n->ngpu) : n->gpu_free) & types;
  uint32_t cpu_free = idle ? n->cpus : n->cpu_free;
  uint64_t mem_free = idle ? n->mem_mib : n->mem_free;
  if (!idle) {
    if (c->claim_of && c->claim_of[node] && c->claim_of[node] != j->id) return 0; /* preempt.c */
    if (n->excl || (s->exclusive && n->njobs)) return 0;
    if (n->tenant != PX_NONE && n->tenant != j->account) return 0;
    if (c->parts[j->part].exclusive_account && n->tenant == PX_NONE && n->njobs) return 0;
  }
  uint32_t u = s->share ? pxc_share_fits(n, free, s->share, j->user, types) : gpu_units(n, free, s->gpu);
  if (cpu_free < s->base_cpu) return 0;
  if (s->cpu) {
    uint32_t uc = (cpu_free - s->base_cpu) / s->cpu;
    if (uc < u) u = uc;
  }
  if (u > s->per_node_max) u = s->per_node_max;
  if (u > s->units) u = s->units;
  if (u == UINT32_MAX) u = s->units;
  while (u && pxc_mem_for(j, n, u) > mem_free) u--;
  return u;
}

/* ---- candidates ------------------------------------------------------- */

bool pxc_pool_matches(const struct pxc_job *j, const struct pxc_pool *p) {
  return j->gpu_type == PX_NONE ? !p->partial : p->gpu_type == j->gpu_type;
}

/* Single node: the first fitting node in (weight class, bucket order, position). */
static bool place_single(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res) {
  const struct pxc_part *part = &c->parts[j->part];
  uint32_t need = j->shape.units * j->shape.gpu, best = PX_NONE;
  uint64_t best_key = UINT64_MAX;
  bool spread = c->place->spread;
  for (uint32_t pi = part->pool_first; pi < part->pool_first + part->npools; pi++) {
    const struct pxc_pool *p = &c->pools[pi];
    if (!pxc_pool_matches(j, p) || need > p->maxg) continue;
    for (uint32_t cl = 0; cl < p->nclass; cl++) {
      uint32_t lo = p->class_start[cl], hi = p->class_start[cl + 1];
      uint64_t w = c->nodes[p->nodes[lo]].weight;
      if (w > 0xffffff) w = 0xffffff; /* key: weight (24 bits), bucket order, node */
      if (best != PX_NONE && w > (best_key >> 40)) break;
      for (uint32_t i = 0; i <= p->maxg - need; i++) {
        uint32_t k = spread ? p->maxg - i : need + i;
        /* --exclusive needs an idle node: only buckets where idle nodes sit */
        if (j->shape.exclusive && !((p->idle_k[k / 64] >> (k % 64)) & 1)) continue;
        for (uint32_t pos = pxc_bucket_next(p, k, lo, hi); pos < hi;
             pos = pxc_bucket_next(p, k, pos + 1, hi)) {
          c->stats.place_attempts++;
          uint32_t node = p->nodes[pos];
          if (pxc_node_fit(c, j, node, false) < j->shape.units) continue;
          uint64_t key = w << 40 | (uint64_t)(spread ? 255 - k : k) << 32 | node;
          if (key < best_key) {
            best_key = key;
            best = node;
          }
          goto next_pool;
        }
      }
    }
  next_pool:;
  }
  if (best == PX_NONE) return false;
  res->nnodes = 1;
  res->nodes[0] = best;
  res->units[0] = j->shape.units;
  return true;
}

/* Upper bound of units leaf l of pool p can host, from its histogram. */
static uint64_t leaf_bound(const struct pxc_pool *p, uint32_t l, const struct pxc_job *j) {
  const struct pxc_shape *s = &j->shape;
  const uint16_t *h = &p->leaf_hist[(size_t)l * (p->maxg + 1)];
  uint64_t b = 0;
  uint32_t per_cpu = s->cpu ? (uint32_t)(p->static_cpus_max / s->cpu) : UINT32_MAX;
  for (uint32_t k = s->gpu; k <= p->maxg; k++) {
    if (!h[k]) continue;
    uint64_t u = s->gpu ? k / s->gpu : UINT32_MAX;
    if (u > per_cpu) u = per_cpu;
    if (u > s->per_node_max) u = s->per_node_max;
    b += h[k] * u;
  }
  return b;
}

/* Exact units of leaf l; fills pl_cand from *ncand with its usable nodes. */
static uint64_t leaf_exact(struct px_core *c, const struct pxc_pool *p, uint32_t l,
                           const struct pxc_job *j) {
  uint64_t total = 0;
  for (uint32_t i = p->leaf_start[l]; i < p->leaf_start[l + 1]; i++) {
    uint32_t node = p->leaf_nodes[i];
    if (!pxc_node_usable(&c->nodes[node])) continue;
    c->stats.place_attempts++;
    total += pxc_node_fit(c, j, node, false);
  }
  return total;
}

static int cmp_leaf_desc(const void *a, const void *b, void *ctx) {
  const uint64_t *bound = ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (bound[x] != bound[y]) return bound[x] > bound[y] ? -1 : 1;
  return x < y ? -1 : x > y;
}

static bool under(const struct px_core *c, uint32_t leaf, uint32_t sw) {
  for (uint32_t s = c->leaf_parent[leaf]; s != PX_NONE; s = c->switches[s].parent)
    if (s == sw) return true;
  return false;
}

/* Chooses leaves (local indexes into pl_leaves) by the current bounds;
 * returns how many, 0 when the bounds cannot cover the job. */
static uint32_t choose_leaves(struct px_core *c, const struct pxc_pool *p, uint64_t need) {
  uint64_t *b = c->pl_bound, total = 0;
  uint32_t single = PX_NONE;
  bool spread = c->place->spread;
  for (uint32_t l = 0; l < p->nleaf; l++) {
    total += b[l];
    if (b[l] >= need && (single == PX_NONE || (spread ? b[l] > b[single] : b[l] < b[single])))
      single = l;
  }
  if (total < need) return 0;
  if (single != PX_NONE) {
    c->pl_leaves[0] = single;
    return 1;
  }
  uint32_t sw = PX_NONE;
  if (c->nswitches) {
    memset(c->pl_sum, 0, c->nswitches * sizeof *c->pl_sum);
    for (uint32_t l = 0; l < p->nleaf; l++)
      for (uint32_t s = c->leaf_parent[p->leaf_id[l]]; b[l] && s != PX_NONE; s = c->switches[s].parent)
        c->pl_sum[s] += b[l];
    for (uint32_t level = 1; level <= c->max_level && sw == PX_NONE; level++)
      for (uint32_t s = 0; s < c->nswitches; s++)
        if (c->switches[s].level == level && c->pl_sum[s] >= need &&
            (sw == PX_NONE || c->pl_sum[s] < c->pl_sum[sw]))
          sw = s;
  }
  uint32_t n = 0;
  for (uint32_t l = 0; l < p->nleaf; l++)
    if (b[l] && (sw == PX_NONE || under(c, p->leaf_id[l], sw))) c->pl_leaves[n++] = l;
  qsort_r(c->pl_leaves, n, sizeof *c->pl_leaves, cmp_leaf_desc, b);
  uint64_t got = 0;
  uint32_t m = 0;
  while (m < n && got < need) got += b[c->pl_leaves[m++]];
  return got >= need ? m : 0;
}

static int cmp_cand(const void *a, const void *b) {
  const struct pxc_cand *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->node < y->node ? -1 : x->node > y->node;
}

/* Takes nodes from the chosen leaves, best first, until need units. */
static void collect(struct px_core *c, const struct pxc_pool *p, const struct pxc_job *j,
                    uint32_t nleaves, struct pxc_place_result *res) {
  uint64_t need = j->shape.units;
  bool spread = c->place->spread, flex = j->shape.per_node_max > 1;
  res->nnodes = 0;
  for (uint32_t i = 0; i < nleaves && need; i++) {
    uint32_t l = c->pl_leaves[i], nc = 0;
    for (uint32_t q = p->leaf_start[l]; q < p->leaf_start[l + 1]; q++) {
      uint32_t node = p->leaf_nodes[q];
      if (!pxc_node_usable(&c->nodes[node])) continue;
      uint32_t u = pxc_node_fit(c, j, node, false);
      if (!u) continue;
      uint64_t freeg = (uint64_t)px_bits64_count(c->nodes[node].gpu_free);
      uint64_t order = spread ? 64 - freeg : freeg;
      if (flex) order = (uint64_t)(UINT32_MAX - u) << 8 | order;
      c->pl_cand[nc++] = (struct pxc_cand){(uint64_t)c->nodes[node].weight << 48 | order, node, u};
    }
    qsort(c->pl_cand, nc, sizeof *c->pl_cand, cmp_cand);
    for (uint32_t k = 0; k < nc && need; k++) {
      uint32_t u = c->pl_cand[k].units < need ? c->pl_cand[k].units : (uint32_t)need;
      res->nodes[res->nnodes] = c->pl_cand[k].node;
      res->units[res->nnodes++] = u;
      need -= u;
    }
  }
}

static int place_gang_pool(struct px_core *c, struct pxc_job *j, const struct pxc_pool *p,
                           struct pxc_place_result *res) {
  uint64_t need = j->shape.units;
  if (j->shape.per_node_max == 1) { /* early out: fewer nodes with that many free GPUs */
    uint64_t nodes = 0;
    for (uint32_t k = j->shape.gpu; k <= p->maxg; k++) nodes += p->count[k];
    if (nodes < need) {
      c->stats.place_fast_fail++;
      return 1;
    }
  }
  for (uint32_t l = 0; l < p->nleaf; l++) {
    c->pl_bound[l] = leaf_bound(p, l, j);
    c->pl_exact[l] = 0;
  }
  for (;;) {
    uint32_t m = choose_leaves(c, p, need);
    if (!m) return 1;
    bool changed = false;
    for (uint32_t i = 0; i < m; i++) {
      uint32_t l = c->pl_leaves[i];
      if (c->pl_exact[l]) continue;
      uint64_t e = leaf_exact(c, p, l, j);
      c->pl_exact[l] = 1;
      if (e != c->pl_bound[l]) changed = true;
      c->pl_bound[l] = e;
    }
    if (changed) continue;
    if (j->switches && m > j->switches && c->now < j->eligible_s + j->switches_wait_s) {
      res->fail = PX_REASON_TOPOLOGY;
      res->nnodes = m;
      return 1;
    }
    collect(c, p, j, m, res);
    return 0;
  }
}

int pxc_place_find(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res) {
  res->nodes = c->pl_nodes;
  res->units = c->pl_units;
  res->nnodes = 0;
  res->fail = PX_REASON_RESOURCES;
  const struct pxc_part *part = &c->parts[j->part];
  if (j->shape.share && pxc_place_share(c, j, res)) return 0; /* packed onto a shared GPU */
  if (j->shape.nmax == 1) return place_single(c, j, res) ? 0 : 1;
  enum px_reason fail = PX_REASON_RESOURCES;
  for (uint32_t pi = part->pool_first; pi < part->pool_first + part->npools; pi++) {
    const struct pxc_pool *p = &c->pools[pi];
    if (!pxc_pool_matches(j, p)) continue;
    res->fail = PX_REASON_RESOURCES;
    if (place_gang_pool(c, j, p, res) == 0) return 0;
    if (res->fail == PX_REASON_TOPOLOGY) fail = PX_REASON_TOPOLOGY;
  }
  res->fail = fail;
  return 1;
}

/* Job j's shape hash with its units and node count as given: its own
 * (pxc_shape_hash), or 0 and 0 for its gang frontier's key, computed from
 * the fields rather than from a copy of the job (a blocked job's key each
 * cycle under conservative backfill). */
static uint64_t shape_hash_as(const struct pxc_job *j, uint32_t units, uint32_t nmax) {
  const struct pxc_shape *s = &j->shape;
  uint64_t h = px_hash_u64((uint64_t)j->part << 32 | j->gpu_type);
  h = px_hash_u64(h ^ ((uint64_t)j->constraint << 32 | units));
  h = px_hash_u64(h ^ ((uint64_t)s->per_node_max << 32 | nmax));
  h = px_hash_u64(h ^ ((uint64_t)s->gpu << 32 | s->cpu));
  if (s->share) h = px_hash_u64(h ^ (0x85ebca6bull << 32 | s->share)); /* a fraction */
  h = px_hash_u64(h ^ s->mem ^ ((uint64_t)s->base_cpu << 40) ^ ((uint64_t)s->mem_prop << 63) ^
                  ((uint64_t)s->exclusive << 62));
  for (uint32_t k = 0; k < j->nexcl; k++) h = px_hash_u64(h ^ (0x9e3779b9ull + j->excl[k])); /* --exclude */
  for (uint32_t k = 0; k < j->nreq; k++) h = px_hash_u64(h ^ (0x7f4a7c15ull + j->req[k]));  /* --nodelist */
  if (j->resv != PX_NONE) h = px_hash_u64(h ^ (0x3c6ef372ull << 32 | j->resv));             /* --reservation */
  return h;
}

uint64_t pxc_shape_hash(const struct pxc_job *j) { return shape_hash_as(j, j->shape.units, j->shape.nmax); }

void pxc_job_hashes(const struct px_core *c, struct pxc_job *j, uint64_t *shape_h, uint64_t *front_h) {
  uint32_t cyc = (uint32_t)c->stats.cycles;
  if (shape_h) {
    if (j->memo_cycle != cyc || !cyc) j->memo_shape_h = pxc_shape_hash(j), j->memo_cycle = cyc;
    *shape_h = j->memo_shape_h;
  }
  if (front_h) {
    if (j->memo_front_cycle != cyc || !cyc) j->memo_front_h = shape_hash_as(j, 0, 0), j->memo_front_cycle = cyc;
    *front_h = j->memo_front_h;
  }
}

bool pxc_fits_static(struct px_core *c, const struct pxc_job *j, bool avail_only) {
  const struct pxc_part *part = &c->parts[j->part];
  for (uint32_t pi = part->pool_first; pi < part->pool_first + part->npools; pi++) {
    const struct pxc_pool *p = &c->pools[pi];
    if (!pxc_pool_matches(j, p)) continue;
    uint64_t units = 0, nodes = 0;
    for (uint32_t i = 0; i < p->n; i++) {
      if (avail_only && !pxc_node_usable(&c->nodes[p->nodes[i]])) continue;
      uint32_t u = pxc_node_fit(c, j, p->nodes[i], true);
      if (j->shape.nmax == 1 && u < j->shape.units) continue;
      units += u;
      nodes += u > 0;
      /* both only grow: stop as soon as they suffice (a cycle asks this of
       * every failed shape; on 2,048 nodes the whole pool cost more than the
       * placement) */
      if (units >= j->shape.units && (j->shape.nmax == 1 ? nodes >= 1 : true)) return true;
    }
    if (units >= j->shape.units && (j->shape.nmax == 1 ? nodes >= 1 : true)) return true;
  }
  return false;
}

/* ---- commit / release ------------------------------------------------- */

/* Picks gu GPUs from one group when they fit one (best fit when packing),
 * else from the groups with the most free. */
static px_bits64 pick_gpus(const struct px_core *c, const struct pxc_node *n, px_bits64 free, uint32_t gu) {
  uint32_t gs = group_size(n);
  px_bits64 take = 0;
  if (!gu) return 0;
  if (gu <= gs) {
    uint32_t best = PX_NONE, bestf = 0;
    for (uint32_t g = 0; g < n->gpu_groups; g++) {
      uint32_t f = group_free(n, free, g);
      if (f < gu) continue;
      if (best == PX_NONE || (c->place->spread ? f > bestf : f < bestf)) {
        best = g;
        bestf = f;
      }
    }
    px_bits64 m = free & px_bits64_range((int)(best * gs), (int)gs);
    for (uint32_t i = 0; i < gu; i++) {
      px_bits64 bit = m & (~m + 1);
      take |= bit;
      m &= m - 1;
    }
    return take;
  }
  while (gu) {
    uint32_t best = 0, bestf = 0;
    for (uint32_t g = 0; g < n->gpu_groups; g++) {
      uint32_t f = group_free(n, free & ~take, g);
      if (f > bestf) {
        best = g;
        bestf = f;
      }
    }
    px_bits64 m = free & ~take & px_bits64_range((int)(best * gs), (int)gs);
    while (m && gu) {
      take |= m & (~m + 1);
      m &= m - 1;
      gu--;
    }
  }
  return take;
}

/* gu GPUs of free, from spare (a subset) as far as it goes. */
static px_bits64 pick_spare_first(const struct px_core *c, const struct pxc_node *n, px_bits64 free, px_bits64 spare,
                                  uint32_t gu) {
  if ((uint32_t)px_bits64_count(spare) >= gu) return pick_gpus(c, n, spare, gu);
  return spare | pick_gpus(c, n, free & ~spare, gu - (uint32_t)px_bits64_count(spare));
}

/* CPUs: first from the NUMA domains of the chosen GPUs, then any. */
static void pick_cpus(struct px_core *c, const struct pxc_node *n, px_bits64 gpus, uint32_t ncpu,
                      uint64_t *out) {
  uint64_t *bits = &c->cpu_bits[n->cpu_word];
  uint32_t per = n->cpus / n->gpu_groups, gs = group_size(n);
  for (int pass = 0; pass < 2 && ncpu; pass++) {
    for (uint32_t cpu = 0; cpu < n->cpus && ncpu; cpu++) {
      uint64_t bit = 1ULL << (cpu % 64);
      if (!(bits[cpu / 64] & bit)) continue;
      uint32_t dom = per ? cpu / per : 0;
      bool pref = gs && dom < n->gpu_groups && (gpus & px_bits64_range((int)(dom * gs), (int)gs));
      if (pass == 0 && !pref && gpus) continue;
      bits[cpu / 64] &= ~bit;
      out[cpu / 64] |= bit;
      ncpu--;
    }
  }
}

int pxc_alloc_arrays(struct px_core *c, uint32_t nalloc, uint32_t nwords, struct px_alloc **al, uint64_t **words) {
  *al = pxc_calloc(c, nalloc, sizeof **al);
  *words = pxc_calloc(c, nwords ? nwords : 1, sizeof **words);
  if (*al && *words) return 0;
  pxc_free(c, *al);
  pxc_free(c, *words);
  return PX_ENOMEM;
}

int pxc_place_commit(struct px_core *c, struct pxc_job *j, const struct pxc_place_result *res) {
  uint32_t nwords = 0;
  for (uint32_t i = 0; i < res->nnodes; i++) nwords += (c->nodes[res->nodes[i]].cpus + 63) / 64;
  struct px_alloc *al;
  uint64_t *words;
  if (pxc_alloc_arrays(c, res->nnodes, nwords, &al, &words)) return PX_ENOMEM;
  uint32_t w = 0;
  for (uint32_t i = 0; i < res->nnodes; i++) {
    uint32_t node = res->nodes[i], u = res->units[i];
    struct pxc_node *n = &c->nodes[node];
    pxc_index_node_remove(c, node);
    px_bits64 gpus = 0;
    uint32_t ncpu;
    uint64_t mem;
    uint32_t share = 0;
    px_bits64 types = pxc_type_gpus(n, j->gpu_type);
    if (j->shape.share) { /* a fresh GPU, if it needs one, of the spare ones first (below) */
      px_bits64 free = n->gpu_free & types;
      px_bits64 spare = j->gpu_type == PX_NONE ? pxc_tlt_spare(c, node, free, j->time_limit_s) : free;
      uint32_t g = pxc_share_pick(n, spare ? spare : free, j->shape.share, j->user, types);
      pxc_share_take(n, g, share = j->shape.share, j->user);
      gpus = 1ULL << g;
      ncpu = j->shape.cpu + j->shape.base_cpu;
      mem = pxc_mem_for(j, n, 1);
    } else if (j->shape.exclusive) {
      gpus = n->gpu_free;
      ncpu = n->cpu_free;
      mem = n->mem_free;
      n->excl = true;
    } else {
      /* an untyped job leaves the instances the plan holds for typed ones */
      px_bits64 spare = j->gpu_type == PX_NONE ? pxc_tlt_spare(c, node, n->gpu_free, j->time_limit_s) : n->gpu_free;
      for (uint32_t k = 0; k < (j->shape.per_node_max > 1 ? u : 1); k++) {
        px_bits64 free = n->gpu_free & types & ~gpus;
        gpus |= pick_spare_first(c, n, free, spare & free,
                                 j->shape.per_node_max > 1 ? j->shape.gpu : u * j->shape.gpu);
      }
      ncpu = u * j->shape.cpu + j->shape.base_cpu;
      mem = pxc_mem_for(j, n, u);
    }
    al[i] = (struct px_alloc){node, ncpu, gpus, mem, w, (n->cpus + 63) / 64, share};
    pick_cpus(c, n, gpus, ncpu, &words[w]);
    w += (n->cpus + 63) / 64;
    n->gpu_free &= ~gpus;
    pxc_plan_node_changed(c, node, false);
    n->cpu_free -= ncpu;
    n->mem_free -= mem;
    n->njobs++;
    if (c->parts[j->part].exclusive_account || n->tenant != PX_NONE) {
      n->tenant = j->account;
      n->tenant_jobs++;
    }
    pxc_index_node_add(c, node);
  }
  j->alloc = al;
  j->nalloc = res->nnodes;
  j->cpu_words = words;
  j->ncpu_words = nwords;
  return 0;
}

void pxc_place_release(struct px_core *c, struct pxc_job *j) {
  for (uint32_t i = 0; i < j->nalloc; i++) {
    const struct px_alloc *a = &j->alloc[i];
    struct pxc_node *n = &c->nodes[a->node];
    pxc_index_node_remove(c, a->node);
    if (a->gpu_share) {
      pxc_share_give(n, (uint32_t)__builtin_ctzll(a->gpus), a->gpu_share);
    } else {
      n->gpu_free |= a->gpus & ~n->gpu_bad; /* a GPU out of service stays out */
      n->gpu_bad_held &= ~a->gpus;
    }
    pxc_plan_node_changed(c, a->node, false);
    for (uint32_t k = 0; k < a->ncpu_words; k++) c->cpu_bits[n->cpu_word + k] |= j->cpu_words[a->cpu_word + k];
    n->cpu_free += a->ncpu;
    n->mem_free += a->mem_mib;
    n->njobs--;
    n->excl = false;
    if (n->tenant != PX_NONE && --n->tenant_jobs == 0) n->tenant = PX_NONE;
    pxc_index_node_add(c, a->node);
  }
  pxc_free(c, j->alloc);
  pxc_free(c, j->cpu_words);
  j->alloc = NULL;
  j->cpu_words = NULL;
  j->nalloc = j->ncpu_words = 0;
}
