/*
 * index.c - the free-capacity index. A pool is one partition's nodes of one
 * GPU type, ordered by (Weight, node index). A node with several types (MIG
 * profiles side by side) is in a partial pool per type, where it counts only
 * that type's GPUs (typed jobs search it beside the pool of the nodes wholly
 * of that type), and in the partition's PXC_TYPE_MIXED pool with all of them
 * (where untyped jobs find it). For each free-GPU count k a
 * bitmap over the pool's positions (with one summary bit per word, so empty
 * stretches are skipped 4096 nodes at a time) marks the usable nodes having
 * exactly k free GPUs; count[k] and a per-leaf histogram leaf_hist[leaf][k]
 * hold the same numbers aggregated. A node changes buckets in O(pools it is
 * in); the placer reads the index instead of scanning nodes.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"

bool pxc_node_usable(const struct pxc_node *n) { return !n->down && !n->drain; }

static void bk_set(struct pxc_bucket *b, uint32_t pos) {
  b->w[pos / 64] |= 1ULL << (pos % 64);
  b->sum[pos / 4096] |= 1ULL << ((pos / 64) % 64);
}

static void bk_clear(struct pxc_bucket *b, uint32_t pos) {
  b->w[pos / 64] &= ~(1ULL << (pos % 64));
  if (!b->w[pos / 64]) b->sum[pos / 4096] &= ~(1ULL << ((pos / 64) % 64));
}

static uint32_t bucket_next(const struct pxc_pool *p, const struct pxc_bucket *b, uint32_t from, uint32_t hi);

uint32_t pxc_bucket_next(const struct pxc_pool *p, uint32_t k, uint32_t from, uint32_t hi) {
  if (k > p->maxg || from >= hi) return hi;
  return bucket_next(p, &p->bk[k], from, hi);
}

uint32_t pxc_room_next(const struct pxc_pool *p, uint32_t r, uint32_t from, uint32_t hi) {
  if (!p->room || r >= PXC_SHARE_UNITS || from >= hi) return hi;
  return bucket_next(p, &p->room[r], from, hi);
}

static uint32_t bucket_next(const struct pxc_pool *p, const struct pxc_bucket *b, uint32_t from, uint32_t hi) {
  const uint64_t *w = b->w, *sum = b->sum;
  uint32_t wi = from / 64;
  uint64_t cur = w[wi] & (~0ULL << (from % 64));
  for (;;) {
    if (cur) {
      uint32_t pos = wi * 64 + (uint32_t)__builtin_ctzll(cur);
      return pos < hi ? pos : hi;
    }
    /* next non-empty word via the summary */
    uint32_t nw = wi + 1;
    if (nw >= p->nwords || nw * 64 >= hi) return hi;
    uint32_t si = nw / 64;
    uint64_t s = sum[si] & (~0ULL << (nw % 64));
    while (!s) {
      if (++si >= p->nsum) return hi;
      s = sum[si];
    }
    wi = si * 64 + (uint32_t)__builtin_ctzll(s);
    if (wi >= p->nwords) return hi;
    cur = w[wi];
  }
}

static void pool_add(struct px_core *c, const struct pxc_node_pool *np, const struct pxc_node *n, int sign) {
  struct pxc_pool *p = &c->pools[np->pool];
  px_bits64 types = pxc_type_gpus(n, p->gpu_type);
  uint32_t k = (uint32_t)px_bits64_count(n->gpu_free & types);
  if (sign > 0) {
    bk_set(&p->bk[k], np->pos);
    p->count[k]++;
    p->leaf_hist[np->lleaf * (p->maxg + 1) + k]++;
  } else {
    bk_clear(&p->bk[k], np->pos);
    p->count[k]--;
    p->leaf_hist[np->lleaf * (p->maxg + 1) + k]--;
  }
  /* shared GPUs in service, by their room (a GPU out of service takes no new share) */
  for (px_bits64 m = p->room ? n->gpu_shared & types & ~n->gpu_bad : 0; m; m &= m - 1) {
    uint32_t r = pxc_share_room(n, (uint32_t)__builtin_ctzll(m));
    if (sign > 0) bk_set(&p->room[r], np->pos);
    else bk_clear(&p->room[r], np->pos);
  }
}

void pxc_index_node_add(struct px_core *c, uint32_t node) {
  const struct pxc_node *n = &c->nodes[node];
  if (!pxc_node_usable(n)) return;
  for (uint32_t i = 0; i < n->npools; i++) pool_add(c, &c->node_pools[n->pool_first + i], n, +1);
}

void pxc_index_node_remove(struct px_core *c, uint32_t node) {
  const struct pxc_node *n = &c->nodes[node];
  if (!pxc_node_usable(n)) return;
  for (uint32_t i = 0; i < n->npools; i++) pool_add(c, &c->node_pools[n->pool_first + i], n, -1);
}

static int cmp_weight_idx(const void *a, const void *b, void *ctx) {
  const struct px_core *c = ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (c->nodes[x].weight != c->nodes[y].weight) return c->nodes[x].weight < c->nodes[y].weight ? -1 : 1;
  return x < y ? -1 : x > y;
}

static int cmp_leaf_weight_idx(const void *a, const void *b, void *ctx) {
  const struct px_core *c = ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (c->nodes[x].leaf != c->nodes[y].leaf) return c->nodes[x].leaf < c->nodes[y].leaf ? -1 : 1;
  return cmp_weight_idx(a, b, ctx);
}

/* Fills pool p (nodes already set) : classes, buckets, leaves. */
static int pool_build(struct px_core *c, struct pxc_pool *p, uint32_t *fill) {
  qsort_r(p->nodes, p->n, sizeof *p->nodes, cmp_weight_idx, c);
  p->class_start = pxc_calloc(c, p->n + 1, sizeof *p->class_start);
  p->leaf_nodes = pxc_calloc(c, p->n + 1, sizeof *p->leaf_nodes);
  if (!p->class_start || !p->leaf_nodes) return PX_ENOMEM;
  for (uint32_t i = 0; i < p->n; i++) {
    const struct pxc_node *n = &c->nodes[p->nodes[i]];
    uint32_t ngpu = (uint32_t)px_bits64_count(pxc_type_gpus(n, p->gpu_type));
    if (i == 0 || n->weight != c->nodes[p->nodes[i - 1]].weight) p->class_start[p->nclass++] = i;
    /* buckets up to the node's whole count, even in a partial pool: the
     * backfill plan files a node's cells in its pools' histograms by all
     * its free GPUs (backfill_plan.c) */
    if (n->ngpu > p->maxg) p->maxg = n->ngpu;
    p->idle_k[ngpu / 64] |= 1ULL << (ngpu % 64);
    if (n->cpus > p->static_cpus_max) p->static_cpus_max = n->cpus;
    if (n->mem_mib > p->static_mem_max) p->static_mem_max = n->mem_mib;
  }
  p->class_start[p->nclass] = p->n;
  p->nwords = (p->n + 63) / 64;
  p->nsum = (p->nwords + 63) / 64;
  uint32_t nb = p->maxg + 1;
  p->bk = pxc_calloc(c, nb, sizeof *p->bk);
  p->count = pxc_calloc(c, nb, sizeof *p->count);
  if (!p->bk || !p->count) return PX_ENOMEM;
  for (uint32_t k = 0; k < nb; k++) {
    p->bk[k].w = pxc_calloc(c, p->nwords + 1, sizeof(uint64_t));
    p->bk[k].sum = pxc_calloc(c, p->nsum + 1, sizeof(uint64_t));
    if (!p->bk[k].w || !p->bk[k].sum) return PX_ENOMEM;
  }
  bool shares = false;
  for (uint32_t i = 0; i < p->n; i++) shares |= c->nodes[p->nodes[i]].shares;
  if (shares && !(p->room = pxc_calloc(c, PXC_SHARE_UNITS, sizeof *p->room))) return PX_ENOMEM;
  for (uint32_t r = 0; shares && r < PXC_SHARE_UNITS; r++) {
    p->room[r].w = pxc_calloc(c, p->nwords + 1, sizeof(uint64_t));
    p->room[r].sum = pxc_calloc(c, p->nsum + 1, sizeof(uint64_t));
    if (!p->room[r].w || !p->room[r].sum) return PX_ENOMEM;
  }
  memcpy(p->leaf_nodes, p->nodes, p->n * sizeof *p->nodes);
  qsort_r(p->leaf_nodes, p->n, sizeof *p->leaf_nodes, cmp_leaf_weight_idx, c);
  for (uint32_t i = 0; i < p->n; i++)
    if (i == 0 || c->nodes[p->leaf_nodes[i]].leaf != c->nodes[p->leaf_nodes[i - 1]].leaf) p->nleaf++;
  p->leaf_id = pxc_calloc(c, p->nleaf + 1, sizeof *p->leaf_id);
  p->leaf_start = pxc_calloc(c, p->nleaf + 1, sizeof *p->leaf_start);
  p->leaf_hist = pxc_calloc(c, (size_t)(p->nleaf + 1) * nb, sizeof *p->leaf_hist);
  if (!p->leaf_id || !p->leaf_start || !p->leaf_hist) return PX_ENOMEM;
  uint32_t l = 0;
  for (uint32_t i = 0; i < p->n; i++) {
    uint32_t leaf = c->nodes[p->leaf_nodes[i]].leaf;
    if (i == 0 || leaf != c->nodes[p->leaf_nodes[i - 1]].leaf) {
      p->leaf_id[l] = leaf;
      p->leaf_start[l++] = i;
    }
  }
  p->leaf_start[p->nleaf] = p->n;
  /* node -> (pool, pos, lleaf) */
  uint32_t pool = (uint32_t)(p - c->pools);
  for (uint32_t i = 0, ll = 0; i < p->n; i++) {
    while (ll + 1 < p->nleaf && p->leaf_start[ll + 1] <= i) ll++;
    uint32_t node = p->leaf_nodes[i];
    uint32_t pos = 0;
    /* position in by-weight order: binary search would need the key; the
     * sort is by (weight, index) so search with that comparator */
    uint32_t lo = 0, hi = p->n;
    while (lo < hi) {
      uint32_t mid = (lo + hi) / 2;
      if (cmp_weight_idx(&p->nodes[mid], &node, c) < 0) lo = mid + 1;
      else hi = mid;
    }
    pos = lo;
    struct pxc_node_pool *np = &c->node_pools[c->nodes[node].pool_first + fill[node]++];
    np->pool = pool;
    np->pos = pos;
    np->lleaf = ll;
  }
  return 0;
}

/* The pools node n belongs to in a partition: one by its type; with
 * several types, one per type holding only that type's GPUs (partial: a
 * pool apart from the whole nodes of that type, so that untyped jobs, which
 * take any GPU, never see a node twice) and the mixed one, whole. */
struct pool_key {
  uint32_t type;
  bool partial;
};

static uint32_t node_npools(const struct pxc_node *n) { return n->ngtypes ? n->ngtypes + 1 : 1; }

static struct pool_key node_pool_key(const struct pxc_node *n, uint32_t i) {
  if (i < n->ngtypes) return (struct pool_key){n->gtypes[i].type, true};
  return (struct pool_key){n->gpu_type, false}; /* PXC_TYPE_MIXED with several */
}

static bool key_eq(struct pool_key a, struct pool_key b) { return a.type == b.type && a.partial == b.partial; }

static bool node_has_key(const struct pxc_node *n, struct pool_key k) {
  for (uint32_t i = 0; i < node_npools(n); i++)
    if (key_eq(node_pool_key(n, i), k)) return true;
  return false;
}

/* Distinct pool keys of partition cp into keys[]; their count. */
static uint32_t part_keys(const struct px_core *c, const struct px_conf_partition *cp, struct pool_key *keys) {
  uint32_t nkeys = 0;
  for (uint32_t i = 0; i < cp->nnodes; i++) {
    const struct pxc_node *n = &c->nodes[cp->nodes[i]];
    for (uint32_t t = 0; t < node_npools(n); t++) {
      struct pool_key key = node_pool_key(n, t);
      uint32_t k;
      for (k = 0; k < nkeys && !key_eq(keys[k], key); k++) {
      }
      if (k == nkeys) keys[nkeys++] = key;
    }
  }
  return nkeys;
}

int pxc_index_build(struct px_core *c, const struct px_conf *conf) {
  int rc = PX_ENOMEM;
  uint32_t *fill = pxc_calloc(c, c->nnodes + 1, sizeof *fill);
  size_t memberships = 0, ntypes_max = 1;
  for (uint32_t p = 0; p < conf->npartitions; p++) {
    for (uint32_t i = 0; i < conf->partitions[p].nnodes; i++) {
      uint32_t n = conf->partitions[p].nodes[i];
      if (n >= c->nnodes) { rc = PX_EINVAL; goto out; }
      c->nodes[n].npools += node_npools(&c->nodes[n]);
      memberships += node_npools(&c->nodes[n]);
    }
  }
  ntypes_max += memberships;
  struct pool_key *keys = pxc_calloc(c, ntypes_max, sizeof *keys);
  c->node_pools = pxc_calloc(c, memberships + 1, sizeof *c->node_pools);
  c->pools = pxc_calloc(c, memberships + 1, sizeof *c->pools);
  if (!fill || !keys || !c->node_pools || !c->pools) goto out_keys;
  for (uint32_t n = 0, off = 0; n < c->nnodes; n++) {
    c->nodes[n].pool_first = off;
    off += c->nodes[n].npools;
  }
  for (uint32_t pi = 0; pi < conf->npartitions; pi++) {
    const struct px_conf_partition *cp = &conf->partitions[pi];
    struct pxc_part *part = &c->parts[pi];
    part->pool_first = c->npools;
    uint32_t nkeys = part_keys(c, cp, keys);
    for (uint32_t k = 0; k < nkeys; k++) {
      struct pxc_pool *p = &c->pools[c->npools++];
      p->part = pi;
      p->gpu_type = keys[k].type;
      p->partial = keys[k].partial;
      p->nodes = pxc_calloc(c, cp->nnodes + 1, sizeof *p->nodes);
      if (!p->nodes) goto out_keys;
      for (uint32_t i = 0; i < cp->nnodes; i++)
        if (node_has_key(&c->nodes[cp->nodes[i]], keys[k])) p->nodes[p->n++] = cp->nodes[i];
      if ((rc = pool_build(c, p, fill))) goto out_keys;
      rc = PX_ENOMEM;
    }
    part->npools = c->npools - part->pool_first;
  }
  for (uint32_t n = 0; n < c->nnodes; n++) pxc_index_node_add(c, n);
  rc = 0;
out_keys:
  pxc_free(c, keys);
out:
  pxc_free(c, fill);
  return rc;
}
