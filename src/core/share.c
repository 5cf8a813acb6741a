/*
 * share.c - fractional GPUs (docs/gpus.md). A job asking --gpus=0.5 holds
 * 50 hundredths of one GPU of a node that offers shares (GpuShares=). A GPU
 * with any share in use is in the node's gpu_shared and out of gpu_free, so
 * whole-GPU jobs and gangs, which only ever look at gpu_free, never land on
 * it; when its last share ends it is free again (place.c's release).
 *
 * Placement packs: a fractional job goes to the shared GPU with the least
 * room that still holds it (best fit), and a fresh GPU is opened only when
 * no shared GPU can take it. The pool keeps one bitmap per room value
 * (index.c), so the search is the free-GPU buckets' walk again: from the
 * job's share upward, first fitting node per weight class, a few nodes
 * touched. Counting in hundredths keeps the sums exact (no float drift: two
 * 0.5 jobs fill a GPU, and it empties when both are gone). With
 * GpuShares=USER a shared GPU takes only the jobs of the user of its first
 * share (CUDA MPS serves one user per GPU at a time): the walk then skips
 * nodes whose fitting room belongs to others.
 */
#include "core/core_int.h"

/* May user's job join shared GPU g of n? */
static bool user_ok(const struct pxc_node *n, uint32_t g, uint32_t user) {
  return !n->share_one_user || n->share_user[g] == user;
}

uint32_t pxc_share_pick(const struct pxc_node *n, px_bits64 free, uint32_t share, uint32_t user, px_bits64 types) {
  uint32_t best = PX_NONE, best_room = PXC_SHARE_UNITS + 1;
  for (px_bits64 m = n->gpu_shared & types & ~n->gpu_bad; m; m &= m - 1) {
    uint32_t g = (uint32_t)__builtin_ctzll(m), room = pxc_share_room(n, g);
    if (room >= share && room < best_room && user_ok(n, g, user)) best = g, best_room = room;
  }
  if (best != PX_NONE || !free) return best;
  return (uint32_t)__builtin_ctzll(free); /* a fresh GPU: the lowest free one */
}

bool pxc_share_fits(const struct pxc_node *n, px_bits64 free, uint32_t share, uint32_t user, px_bits64 types) {
  if (!n->shares) return false;
  if (free) return true;
  for (px_bits64 m = n->gpu_shared & types & ~n->gpu_bad; m; m &= m - 1) {
    uint32_t g = (uint32_t)__builtin_ctzll(m);
    if (pxc_share_room(n, g) >= share && user_ok(n, g, user)) return true;
  }
  return false;
}

void pxc_share_take(struct pxc_node *n, uint32_t g, uint32_t share, uint32_t user) {
  px_bits64 bit = 1ULL << g;
  if (!n->share_used[g]) n->share_user[g] = user; /* the first share names the GPU's user */
  n->gpu_free &= ~bit;
  n->gpu_shared |= bit;
  n->share_used[g] = (uint8_t)(n->share_used[g] + share);
}

void pxc_share_give(struct pxc_node *n, uint32_t g, uint32_t share) {
  px_bits64 bit = 1ULL << g;
  n->share_used[g] = (uint8_t)(n->share_used[g] - share);
  if (n->share_used[g]) return;
  /* the last share ended: whole again, unless out of service meanwhile */
  n->gpu_shared &= ~bit;
  if (!(n->gpu_bad & bit)) n->gpu_free |= bit;
  n->gpu_bad_held &= ~bit;
}

/* First fitting node of pool p on a shared GPU: room from the job's share
 * upward (best fit), lowest weight class first. *key: weight, room, node. */
static uint32_t pool_shared_fit(struct px_core *c, const struct pxc_job *j, const struct pxc_pool *p,
                                uint64_t *key) {
  for (uint32_t cl = 0; cl < p->nclass; cl++) {
    uint32_t lo = p->class_start[cl], hi = p->class_start[cl + 1];
    uint64_t w = c->nodes[p->nodes[lo]].weight;
    if (w > 0xffffff) w = 0xffffff;
    if ((w << 40) > *key) return PX_NONE;
    for (uint32_t r = j->shape.share; r < PXC_SHARE_UNITS; r++)
      for (uint32_t pos = pxc_room_next(p, r, lo, hi); pos < hi; pos = pxc_room_next(p, r, pos + 1, hi)) {
        c->stats.place_attempts++;
        uint32_t node = p->nodes[pos];
        if (!pxc_node_fit(c, j, node, false)) continue;
        *key = w << 40 | (uint64_t)r << 32 | node;
        return node;
      }
  }
  return PX_NONE;
}

bool pxc_place_share(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res) {
  const struct pxc_part *part = &c->parts[j->part];
  uint32_t best = PX_NONE;
  uint64_t best_key = UINT64_MAX;
  for (uint32_t pi = part->pool_first; pi < part->pool_first + part->npools; pi++) {
    const struct pxc_pool *p = &c->pools[pi];
    if (!p->room || !pxc_pool_matches(j, p)) continue;
    uint64_t key = best_key;
    uint32_t node = pool_shared_fit(c, j, p, &key);
    if (node != PX_NONE && key < best_key) best = node, best_key = key;
  }
  if (best == PX_NONE) return false;
  res->nnodes = 1;
  res->nodes[0] = best;
  res->units[0] = 1;
  return true;
}
