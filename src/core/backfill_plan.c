/*
 * backfill_plan.c - the free-capacity plan over time that backfill reasons on
 * (policy.h explains the grid and the cells).
 *
 * Building it is O(nodes x slots + running allocations): cells are first
 * filled with what running jobs release in the slot they end in, then summed
 * along each node's row on top of the node's free resources now. Searching
 * for the earliest start of a job walks slots; in each slot the per-leaf
 * histograms bound what a leaf can hold (as the placer's do for now), a
 * single-node job takes the best-fitting node of the first leaf that has
 * one, and a gang takes one leaf when one suffices, else the fullest leaves,
 * checking only the chosen leaves node by node for its whole duration.
 * The plan models GPU counts (per type too on nodes of several types,
 * backfill_typed.c), CPU counts and memory; it ignores NVLink
 * groups and account tenancy, which the real placement checks at start.
 */
#include <string.h>

#include "core/policy.h"

int pxc_tl_init(struct px_core *c, struct pxc_tl *tl, int64_t window_s, int64_t res_s) {
  memset(tl, 0, sizeof *tl);
  if (res_s <= 0) res_s = 300;
  if (window_s <= 0) window_s = 86400;
  if (window_s / res_s > 4096) res_s = (window_s + 4095) / 4096; /* bound the plan's memory */
  tl->res_s = res_s;
  tl->nslots = (uint32_t)((window_s + res_s - 1) / res_s) + 1;
  size_t hist = 0, pcnt = 0;
  uint32_t maxleaf = 1;
  tl->hist_off = pxc_calloc(c, c->npools + 1, sizeof *tl->hist_off);
  tl->pcnt_off = pxc_calloc(c, c->npools + 1, sizeof *tl->pcnt_off);
  if (!tl->hist_off || !tl->pcnt_off) return PX_ENOMEM;
  for (uint32_t p = 0; p < c->npools; p++) {
    const struct pxc_pool *pl = &c->pools[p];
    tl->hist_off[p] = hist;
    tl->pcnt_off[p] = pcnt;
    hist += (size_t)tl->nslots * pl->nleaf * (pl->maxg + 1);
    pcnt += (size_t)tl->nslots * (pl->maxg + 1);
    if (pl->nleaf > maxleaf) maxleaf = pl->nleaf;
  }
  tl->pcnt = pxc_calloc(c, pcnt + 1, sizeof *tl->pcnt);
  tl->leaf_hint = pxc_calloc(c, pcnt + 1, sizeof *tl->leaf_hint);
  tl->hint_len = pcnt;
  if (!tl->pcnt || !tl->leaf_hint) return PX_ENOMEM;
  tl->stride = 2 * (size_t)tl->nslots; /* room to slide the window (build_shifted) */
  tl->cell = pxc_calloc(c, (size_t)c->nnodes * tl->stride + 1, sizeof *tl->cell);
  tl->hist = pxc_calloc(c, hist + 1, sizeof *tl->hist);
  tl->nodes = pxc_calloc(c, c->nnodes + 1, sizeof *tl->nodes);
  tl->units = pxc_calloc(c, c->nnodes + 1, sizeof *tl->units);
  tl->bound = pxc_calloc(c, maxleaf, sizeof *tl->bound);
  tl->exact = pxc_calloc(c, maxleaf, sizeof *tl->exact);
  tl->leaves = pxc_calloc(c, maxleaf, sizeof *tl->leaves);
  tl->seen = pxc_calloc(c, c->nnodes + 1, sizeof *tl->seen);
  tl->lkeys = pxc_calloc(c, maxleaf, sizeof *tl->lkeys);
  tl->dirty_bits = pxc_calloc(c, c->nnodes / 64 + 1, sizeof *tl->dirty_bits);
  tl->dirty = pxc_calloc(c, c->nnodes + 1, sizeof *tl->dirty);
  tl->dec_last = pxc_calloc(c, c->nnodes + 1, sizeof *tl->dec_last);
  tl->dec_epoch = pxc_calloc(c, c->nnodes + 1, sizeof *tl->dec_epoch);
  tl->stamp = pxc_calloc(c, c->nnodes + 1, sizeof *tl->stamp);
  tl->epoch_built = 1;
  if (pxc_tlt_init(c, tl)) return PX_ENOMEM;
  if (!tl->dec_last || !tl->dec_epoch || !tl->stamp) return PX_ENOMEM;
  if (!tl->cell || !tl->hist || !tl->nodes || !tl->units || !tl->bound || !tl->exact || !tl->leaves ||
      !tl->seen || !tl->lkeys || !tl->dirty_bits || !tl->dirty)
    return PX_ENOMEM;
  return 0;
}

void pxc_tl_fini(struct px_core *c, struct pxc_tl *tl) {
  void *v[] = {tl->hist_off, tl->pcnt_off, tl->pcnt, tl->leaf_hint, tl->cell, tl->hist, tl->nodes, tl->units, tl->bound, tl->exact, tl->leaves,
               tl->seen, tl->lkeys, tl->dirty_bits, tl->dirty, tl->undo,
               tl->dec_last, tl->dec_epoch, tl->stamp, tl->old_rows};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) pxc_free(c, v[i]);
  for (int i = 0; i < 2; i++) pxc_free(c, tl->log[i].rec), pxc_free(c, tl->log[i].cells);
  pxc_map_fini(c, &tl->share_end);
  pxc_tlt_fini(c, tl);
  memset(tl, 0, sizeof *tl);
}

int64_t pxc_tl_slot_time(const struct pxc_tl *tl, uint32_t k) {
  return k == 0 ? tl->now : tl->t0 + (int64_t)k * tl->res_s;
}

uint32_t pxc_tl_slot_ceil(const struct pxc_tl *tl, int64_t t) {
  if (t <= tl->now) return 0;
  int64_t d = t - tl->t0;
  if (d > (int64_t)tl->nslots * tl->res_s) return tl->nslots; /* also: no end (a service's replica) */
  int64_t k = (d + tl->res_s - 1) / tl->res_s;
  return k >= tl->nslots ? tl->nslots : (uint32_t)k;
}

uint32_t pxc_tl_end_slot(const struct pxc_tl *tl, uint32_t k, int64_t dur_s) {
  int64_t start = pxc_tl_slot_time(tl, k);
  if (dur_s >= INT64_MAX / 4) return tl->nslots;
  uint32_t e = pxc_tl_slot_ceil(tl, start + dur_s);
  return e <= k ? k + 1 : e;
}

static uint16_t *hist_at(struct pxc_tl *tl, const struct pxc_pool *p, uint32_t pool, uint32_t k,
                         uint32_t lleaf) {
  return &tl->hist[tl->hist_off[pool] + ((size_t)lleaf * tl->nslots + k) * (p->maxg + 1)];
}

/* Counts a node's cells [k0, k1) into (sign +1) or out of (-1) its pools'
 * histograms. */
static void hist_cells(struct px_core *c, struct pxc_tl *tl, uint32_t node, uint32_t k0, uint32_t k1, int sign) {
  const struct pxc_node *n = &c->nodes[node];
  const struct pxc_tl_cell *row = pxc_tl_row(tl, node);
  for (uint32_t i = 0; i < n->npools; i++) {
    const struct pxc_node_pool *np = &c->node_pools[n->pool_first + i];
    const struct pxc_pool *p = &c->pools[np->pool];
    size_t g1 = p->maxg + 1, hstride = g1;
    uint16_t *h = hist_at(tl, p, np->pool, k0, np->lleaf);
    uint32_t *pc = &tl->pcnt[tl->pcnt_off[np->pool] + k0 * g1];
    for (uint32_t k = k0; k < k1; k++, h += hstride, pc += g1)
      if (row[k].usable) h[row[k].gpu] = (uint16_t)(h[row[k].gpu] + sign), pc[row[k].gpu] += (uint32_t)sign;
  }
}

static void hist_row(struct px_core *c, struct pxc_tl *tl, uint32_t node, int sign) {
  hist_cells(c, tl, node, 0, tl->nslots, sign);
}

/* Running jobs release their resources from the slot their limit (or their
 * preemption kill time) ends in; a job past its limit from slot 1. */
static bool is_dirty(const struct pxc_tl *tl, uint32_t node) { return (tl->dirty_bits[node / 64] >> (node % 64)) & 1; }

/* Every node's releases (dirty_only false), or those of the dirty nodes and
 * of the others from slot clean_from on (the slots a shifted window adds). */
/* node's row may drop at slot k (policy.h, dec_last). */
static void note_drop(struct pxc_tl *tl, uint32_t node, uint32_t k) {
  if (k >= tl->nslots) return;
  if (tl->dec_epoch[node] != tl->epoch_built) tl->dec_epoch[node] = tl->epoch_built, tl->dec_last[node] = k;
  else if (k > tl->dec_last[node]) tl->dec_last[node] = k;
}

/* The first slot from which node's row is known not to drop. */
static uint32_t monotone_from(const struct pxc_tl *tl, uint32_t node) {
  return tl->dec_epoch[node] == tl->epoch_built ? tl->dec_last[node] : 0;
}

/* A share of GPU a->gpus of a->node ends in slot k: the GPU is whole again
 * from the latest such slot. Best effort: without room in the map the GPU
 * is left out of the plan (later than it could be, never earlier). */
static void note_share_end(struct px_core *c, struct pxc_tl *tl, const struct px_alloc *a, uint32_t k) {
  uint64_t key = (uint64_t)a->node << 8 | (uint64_t)__builtin_ctzll(a->gpus);
  uint32_t v;
  if (pxc_map_get(&tl->share_end, key, &v) && v >= k) return;
  (void)pxc_map_put(c, &tl->share_end, key, k);
}

/* Shared GPUs become whole when their last share ends (issue 19): one GPU
 * released in that slot, unless the GPU is out of service. The map's order
 * does not matter: releases are sums. */
static void add_share_releases(struct px_core *c, struct pxc_tl *tl, bool dirty_only, uint32_t clean_from) {
  struct pxc_map *m = &tl->share_end;
  for (size_t i = 0; i < m->cap; i++) {
    if (m->keys[i] == UINT64_MAX) continue;
    uint32_t node = (uint32_t)(m->keys[i] >> 8), g = (uint32_t)(m->keys[i] & 0xff), k = m->vals[i];
    m->keys[i] = UINT64_MAX; /* emptied for the next build as it is read */
    if (k >= tl->nslots || (dirty_only && k < clean_from && !is_dirty(tl, node))) continue;
    if (c->nodes[node].gpu_bad >> g & 1) continue;
    pxc_tl_row(tl, node)[k].gpu++;
    if (pxc_tlt_has(tl, node)) pxc_tlt_release(c, tl, node, 1ULL << g, false, k);
  }
  m->len = 0;
}

static void add_release(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, bool dirty_only,
                        uint32_t clean_from) {
  if (j->state != PX_JOB_RUNNING || !j->nalloc) return;
  int64_t end = j->time_limit_s >= INT64_MAX - j->start_s ? INT64_MAX : j->start_s + j->time_limit_s;
  int64_t kill = pxc_preempt_kill_at(c, j);
  if (kill && kill < end) end = kill;
  uint32_t k = end <= tl->now ? 1 : pxc_tl_slot_ceil(tl, end);
  if (j->shape.share)
    for (uint32_t i = 0; i < j->nalloc; i++)
      if (j->alloc[i].gpu_share && j->alloc[i].gpus) note_share_end(c, tl, &j->alloc[i], k);
  if (k >= tl->nslots) return;
  for (uint32_t i = 0; i < j->nalloc; i++) {
    const struct px_alloc *a = &j->alloc[i];
    if (dirty_only && k < clean_from && !is_dirty(tl, a->node)) continue;
    const struct pxc_node *n = &c->nodes[a->node];
    struct pxc_tl_cell *cl = &pxc_tl_row(tl, a->node)[k];
    /* an exclusive job holds the whole node, whatever its alloc says */
    bool whole = j->shape.exclusive;
    /* a fraction frees no GPU itself: its GPU is whole when its last share
     * ends (add_share_releases) */
    uint32_t g = a->gpu_share ? 0 : (uint32_t)px_bits64_count(a->gpus & ~n->gpu_bad);
    cl->gpu = (uint8_t)(cl->gpu + (whole ? n->ngpu : g));
    cl->cpu = (uint16_t)(cl->cpu + (whole ? n->cpus : a->ncpu));
    cl->mem_mib += (uint32_t)(whole ? n->mem_mib : a->mem_mib);
    if (pxc_tlt_has(tl, a->node)) pxc_tlt_release(c, tl, a->node, a->gpu_share ? 0 : a->gpus, whole, k);
  }
}

/* The running jobs' releases, in slot order: from the running jobs' index
 * (preempt.c) rather than every job slot, most of them pending on a deep
 * queue (a cache miss each, at every plan build). */
static void add_releases(struct px_core *c, struct pxc_tl *tl, bool dirty_only, uint32_t clean_from) {
  size_t n = 0;
  const uint32_t *run = pxc_running_slots(c, &n);
  if (run)
    for (size_t i = 0; i < n; i++) add_release(c, tl, &c->jobs[run[i]], dirty_only, clean_from);
  else
    for (size_t s = 0; s < c->njob_slots; s++) add_release(c, tl, &c->jobs[s], dirty_only, clean_from);
  add_share_releases(c, tl, dirty_only, clean_from);
}

/* A node's cells [k0, S): the resources free before k0 (its free resources
 * now when k0 = 0) plus the releases already in the cells, summed along the
 * slots. Clamping at every step equals clamping the sum (releases are never
 * negative), so a row summed in two parts equals one summed whole. */
static void fill_cells(const struct pxc_node *n, struct pxc_tl_cell *row, uint32_t k0, uint32_t S, bool usable,
                       uint32_t g, uint32_t cpu, uint64_t mem) {
  uint32_t gmax = n->ngpu - (uint32_t)px_bits64_count(n->gpu_bad);
  for (uint32_t k = k0; k < S; k++) {
    g += row[k].gpu, cpu += row[k].cpu, mem += row[k].mem_mib;
    if (g > gmax) g = gmax; /* an exclusive job's release counts the whole node (less GPUs out of service) */
    if (cpu > n->cpus) cpu = n->cpus;
    if (mem > n->mem_mib) mem = n->mem_mib;
    row[k] = (struct pxc_tl_cell){(uint32_t)mem, (uint16_t)cpu, (uint8_t)g, usable};
    if (!usable) row[k] = (struct pxc_tl_cell){0, 0, 0, 0};
  }
}

static void fill_row(struct px_core *c, struct pxc_tl *tl, uint32_t node) {
  const struct pxc_node *n = &c->nodes[node];
  fill_cells(n, pxc_tl_row(tl, node), 0, tl->nslots, pxc_node_usable(n), n->excl ? 0 : (uint32_t)px_bits64_count(n->gpu_free),
             n->excl ? 0 : n->cpu_free, n->excl ? 0 : n->mem_free);
  if (pxc_tlt_has(tl, node)) pxc_tlt_fill(c, tl, node, 0, pxc_node_usable(n));
}

/* Empties node's row (and typed rows) for a rebuild. */
static void clear_row(struct px_core *c, struct pxc_tl *tl, uint32_t node) {
  memset(pxc_tl_row(tl, node), 0, tl->nslots * sizeof *tl->cell);
  pxc_tlt_clear(c, tl, node, 0, tl->nslots);
}

static void clear_dirty(struct pxc_tl *tl) {
  for (uint32_t i = 0; i < tl->ndirty; i++) tl->dirty_bits[tl->dirty[i] / 64] = 0;
  tl->ndirty = 0;
  tl->nundo = 0;
  tl->dirty_clamped = false;
}

void pxc_tl_dirty(struct pxc_tl *tl, uint32_t node) {
  if (!tl->base_ok || is_dirty(tl, node)) return;
  tl->dirty_bits[node / 64] |= 1ULL << (node % 64);
  tl->dirty[tl->ndirty++] = node;
}

static bool take_amounts(struct px_core *c, struct pxc_tl *tl, uint32_t node, uint32_t g, uint32_t cpu,
                         uint64_t mem, uint32_t k0, uint32_t k1, int sign);
static void give_uniform(struct px_core *c, struct pxc_tl *tl, const struct pxc_tl_undo *u);
static void take_typed(struct pxc_tl *tl, uint32_t node, uint32_t ti, uint32_t g, uint32_t k0, uint32_t k1, int sign);
static void batch_flush(struct px_core *c, struct pxc_tl *tl);

/* Gives back the takes since the last build (the reservations and starts
 * of the last cycle), newest first; not on dirty rows, which are counted
 * out of the histograms as they are and rebuilt (every start's take is on
 * one). */
static void undo_takes(struct px_core *c, struct pxc_tl *tl) {
  for (size_t i = tl->nundo; i-- > 0;) {
    const struct pxc_tl_undo *u = &tl->undo[i];
    if (is_dirty(tl, u->node)) continue;
    if (u->uniform) give_uniform(c, tl, u);
    else take_amounts(c, tl, u->node, u->g, u->cpu, u->mem, u->k0, u->k1, -1);
    if (u->gtype != PX_NONE) take_typed(tl, u->node, u->gtype, u->g, u->k0, u->k1, -1);
  }
  batch_flush(c, tl);
}

/* Rows kept for the comparison (note_changes): a start redoes a few. */
#define PXC_TL_OLD_ROWS 64

/* The dirty rows as the last build made them, into old_rows: their cells
 * now with the cycle's takes on them given back (undo_takes skips them).
 * False when that is not exact (a take on them clamped), or not kept
 * (typed rows, too many rows, no memory). */
static bool keep_old_rows(struct px_core *c, struct pxc_tl *tl) {
  uint32_t S = tl->nslots;
  if (tl->dirty_clamped || tl->ntrows || tl->ndirty > PXC_TL_OLD_ROWS) return false;
  if (!tl->ndirty) return true;
  if (PXC_GROW(c, tl->old_rows, &tl->old_cap, (size_t)tl->ndirty * S)) return false;
  for (uint32_t i = 0; i < tl->ndirty; i++)
    memcpy(tl->old_rows + (size_t)i * S, pxc_tl_row(tl, tl->dirty[i]), S * sizeof *tl->old_rows);
  for (size_t i = 0; i < tl->nundo; i++) { /* no clamp: sums, in any order */
    const struct pxc_tl_undo *u = &tl->undo[i];
    if (!is_dirty(tl, u->node)) continue;
    uint32_t d = 0;
    while (tl->dirty[d] != u->node) d++;
    struct pxc_tl_cell *row = tl->old_rows + (size_t)d * S;
    for (uint32_t k = u->k0; k < u->k1; k++) {
      if (!row[k].usable) continue; /* takes skip them */
      row[k].gpu = (uint8_t)(row[k].gpu + u->g);
      row[k].cpu = (uint16_t)(row[k].cpu + u->cpu);
      row[k].mem_mib = (uint32_t)(row[k].mem_mib + u->mem);
    }
  }
  return true;
}

static bool cell_gains(const struct pxc_tl_cell *now, const struct pxc_tl_cell *was) {
  return now->usable > was->usable || now->gpu > was->gpu || now->cpu > was->cpu || now->mem_mib > was->mem_mib;
}

static bool cell_same(const struct pxc_tl_cell *a, const struct pxc_tl_cell *b) {
  return a->usable == b->usable && a->gpu == b->gpu && a->cpu == b->cpu && a->mem_mib == b->mem_mib;
}

/* A new plan for the log (policy.h, gen). */
static void new_gen(struct pxc_tl *tl) {
  tl->gen++;
  tl->diff_to = tl->gain_to = 0;
  tl->gen_shifted = false;
}

/* The redone rows against old_rows, the window moved on m slots (slot
 * k >= 1 was slot k + m; the slots from S - m on are new): the slots up to
 * which some cell changed (build_diff_to) and some cell gained anything
 * (build_gain_to); diff_to and gain_to widened to cover them (policy.h). */
static void note_changes(struct pxc_tl *tl, uint32_t m) {
  uint32_t S = tl->nslots, d = 0, g = 0;
  for (uint32_t i = 0; i < tl->ndirty; i++) {
    const struct pxc_tl_cell *was = tl->old_rows + (size_t)i * S, *now = pxc_tl_row(tl, tl->dirty[i]);
    for (uint32_t k = S - m; k-- > d;) /* from the end: the last change first */
      if (!cell_same(&now[k], &was[k ? k + m : 0])) {
        d = k + 1;
        break;
      }
    for (uint32_t k = d; k-- > g;)
      if (cell_gains(&now[k], &was[k ? k + m : 0])) {
        g = k + 1;
        break;
      }
  }
  tl->build_diff_to = d, tl->build_gain_to = g, tl->build_shift = m;
  if (d > tl->diff_to) tl->diff_to = d;
  if (g > tl->gain_to) tl->gain_to = g;
  if (m) tl->gen_shifted = true; /* diff_to and gain_to are not in this grid's slots */
}

/* Same grid as the last build: undo the takes since, then redo the rows of
 * the nodes that changed. The result equals a full build (the takes never
 * clamp a cell, else base_ok was cleared). The same gen when the redone
 * rows could be compared with their last build (policy.h, diff_to). */
static void build_incremental(struct px_core *c, struct pxc_tl *tl) {
  undo_takes(c, tl);
  bool kept = tl->ndirty && keep_old_rows(c, tl);
  tl->build_diff_to = tl->build_gain_to = tl->build_shift = 0;
  tl->epoch_built++; /* back to the built rows: no drops */
  for (uint32_t i = 0; i < tl->ndirty; i++) {
    hist_row(c, tl, tl->dirty[i], -1);
    clear_row(c, tl, tl->dirty[i]);
  }
  if (tl->ndirty) add_releases(c, tl, true, tl->nslots); /* none: every job slot read for nothing */
  for (uint32_t i = 0; i < tl->ndirty; i++) {
    fill_row(c, tl, tl->dirty[i]);
    hist_row(c, tl, tl->dirty[i], +1);
  }
  if (!tl->ndirty) return; /* the last build's plan again */
  if (kept) note_changes(tl, 0);
  else new_gen(tl);
}

/* Slides every row's window m slots on, in its storage (moved back to the
 * start when it runs out); slot 0 (free now) stays. Cells past the window
 * are kept zero, so the m slots it gains start empty. */
static void slide_rows(struct px_core *c, struct pxc_tl *tl, uint32_t m) {
  uint32_t S = tl->nslots;
  pxc_tlt_slide(tl, m, tl->off + m + S > tl->stride);
  if (tl->off + m + S > tl->stride) {
    for (uint32_t node = 0; node < c->nnodes; node++) {
      struct pxc_tl_cell *base = &tl->cell[(size_t)node * tl->stride];
      memmove(base, base + tl->off, S * sizeof *base);
      memset(base + S, 0, (tl->stride - S) * sizeof *base);
    }
    tl->off = 0;
  }
  for (uint32_t node = 0; node < c->nnodes; node++) {
    struct pxc_tl_cell *row = pxc_tl_row(tl, node);
    row[m] = row[0];
    memset(row, 0, m * sizeof *row); /* dead now; zero for the next move back */
  }
  tl->off += m;
}

/* Slides S slot records of unit bytes each m slots on: slot 0 stays, slots
 * 1 + m .. S move to 1 .. S - m, the last m start empty. */
static void slide_slots(void *base, size_t unit, uint32_t S, uint32_t m) {
  char *b = base;
  memmove(b + unit, b + (1 + m) * unit, (S - 1 - m) * unit);
  memset(b + (S - m) * unit, 0, m * unit);
}

/* The same m-slot slide of every pool's histograms (per leaf and pool-wide). */
static void slide_hists(struct px_core *c, struct pxc_tl *tl, uint32_t m) {
  uint32_t S = tl->nslots;
  for (uint32_t p = 0; p < c->npools; p++) {
    const struct pxc_pool *pl = &c->pools[p];
    size_t g1 = pl->maxg + 1;
    for (uint32_t l = 0; l < pl->nleaf; l++) slide_slots(hist_at(tl, pl, p, 0, l), g1 * sizeof *tl->hist, S, m);
    slide_slots(&tl->pcnt[tl->pcnt_off[p]], g1 * sizeof *tl->pcnt, S, m);
  }
}

/* The grid moved m slots on (t0 later, 1 <= m <= S - 2): a clean row's slot
 * k >= 1 now covers what its slot k + m covered (same releases, same free
 * resources now), so rows and histograms slide; only the m slots the window
 * gains are summed, from the releases that fall in them. Dirty rows are
 * rebuilt as in build_incremental. Equal to a full build, at the cost of
 * m slots per node instead of S. */
static void build_shifted(struct px_core *c, struct pxc_tl *tl, uint32_t m, int64_t now, int64_t t0) {
  uint32_t S = tl->nslots;
  undo_takes(c, tl);
  bool kept = keep_old_rows(c, tl);
  tl->epoch_built++; /* back to the built rows: no drops */
  for (uint32_t i = 0; i < tl->ndirty; i++) hist_row(c, tl, tl->dirty[i], -1);
  slide_rows(c, tl, m);
  slide_hists(c, tl, m);
  for (uint32_t i = 0; i < tl->ndirty; i++) clear_row(c, tl, tl->dirty[i]);
  tl->now = now; /* the releases fall in the new grid's slots */
  tl->t0 = t0;
  add_releases(c, tl, true, S - m);
  for (uint32_t node = 0; node < c->nnodes; node++) {
    if (is_dirty(tl, node)) continue;
    const struct pxc_node *n = &c->nodes[node];
    struct pxc_tl_cell *row = pxc_tl_row(tl, node), last = row[S - m - 1];
    fill_cells(n, row, S - m, S, last.usable, last.gpu, last.cpu, last.mem_mib);
    if (pxc_tlt_has(tl, node)) pxc_tlt_fill(c, tl, node, S - m, last.usable);
    hist_cells(c, tl, node, S - m, S, +1);
  }
  for (uint32_t i = 0; i < tl->ndirty; i++) {
    fill_row(c, tl, tl->dirty[i]);
    hist_row(c, tl, tl->dirty[i], +1);
  }
  if (kept) note_changes(tl, m);
  else new_gen(tl);
}

/* Sizes of the histogram arrays (all pools). */
static void hist_sizes(const struct px_core *c, const struct pxc_tl *tl, size_t *nhist, size_t *npcnt) {
  *nhist = *npcnt = 0;
  for (uint32_t p = 0; p < c->npools; p++) {
    *nhist += (size_t)tl->nslots * c->pools[p].nleaf * (c->pools[p].maxg + 1);
    *npcnt += (size_t)tl->nslots * (c->pools[p].maxg + 1);
  }
}

static void build_full(struct px_core *c, struct pxc_tl *tl, int64_t now, int64_t t0, bool full) {
  clear_dirty(tl);
  new_gen(tl); /* not the last pass's plan (policy.h, log) */
  tl->epoch_built++; /* no drops but the advance reservations' windows (pxc_tl_block) */
  tl->now = now;
  tl->t0 = t0;
  tl->off = 0;
  memset(tl->cell, 0, (size_t)c->nnodes * tl->stride * sizeof *tl->cell);
  memset(tl->tcell, 0, (size_t)tl->ntrows * tl->stride);
  add_releases(c, tl, false, 0);
  for (uint32_t node = 0; node < c->nnodes; node++) fill_row(c, tl, node);
  pxc_resv_plan(c, tl);
  size_t nh, np;
  hist_sizes(c, tl, &nh, &np);
  memset(tl->hist, 0, nh * sizeof *tl->hist);
  memset(tl->pcnt, 0, np * sizeof *tl->pcnt);
  for (uint32_t node = 0; node < c->nnodes; node++) hist_row(c, tl, node, +1);
  tl->base_ok = !full; /* a forced full build (reservations, victims) is not a base */
}

int pxc_tl_verify(struct px_core *c, struct pxc_tl *tl) {
  uint32_t S = tl->nslots;
  size_t nh, np;
  hist_sizes(c, tl, &nh, &np);
  struct pxc_tl_cell *cells = pxc_alloc(c, (size_t)c->nnodes * S * sizeof *cells + 1);
  uint16_t *hist = pxc_alloc(c, nh * sizeof *hist + 1);
  uint32_t *pcnt = pxc_alloc(c, np * sizeof *pcnt + 1);
  uint8_t *typed = pxc_alloc(c, (size_t)tl->ntrows * S + 1);
  int rc = !cells || !hist || !pcnt || !typed ? PX_ENOMEM : 0;
  if (!rc) {
    pxc_tlt_copy(tl, typed);
    for (uint32_t node = 0; node < c->nnodes; node++) memcpy(cells + (size_t)node * S, pxc_tl_row(tl, node), S * sizeof *cells);
    memcpy(hist, tl->hist, nh * sizeof *hist);
    memcpy(pcnt, tl->pcnt, np * sizeof *pcnt);
    build_full(c, tl, tl->now, tl->t0, false);
    for (uint32_t node = 0; node < c->nnodes && !rc; node++)
      if (memcmp(cells + (size_t)node * S, pxc_tl_row(tl, node), S * sizeof *cells)) rc = 1;
    if (memcmp(hist, tl->hist, nh * sizeof *hist) || memcmp(pcnt, tl->pcnt, np * sizeof *pcnt)) rc = 1;
    if (pxc_tlt_cmp(tl, typed)) rc = 1;
  }
  pxc_free(c, typed);
  pxc_free(c, cells);
  pxc_free(c, hist);
  pxc_free(c, pcnt);
  return rc;
}

void pxc_tl_build(struct px_core *c, struct pxc_tl *tl, int64_t now, bool full) {
  tl->nbuilds++;
  int64_t t0 = now >= 0 ? now / tl->res_s * tl->res_s : -((-now + tl->res_s - 1) / tl->res_s) * tl->res_s;
  if (!tl->base_ok || full || t0 < tl->t0 || (t0 - tl->t0) / tl->res_s + 2 > tl->nslots) {
    build_full(c, tl, now, t0, full);
    tl->built_takes = tl->ntakes;
    return;
  }
  uint32_t m = (uint32_t)((t0 - tl->t0) / tl->res_s);
  if (m) build_shifted(c, tl, m, now, t0);
  else build_incremental(c, tl);
  tl->now = now;
  tl->t0 = t0;
  clear_dirty(tl);
  tl->built_takes = tl->ntakes;
}

/* Units j can hold in one cell (pxc_node_fit without NVLink groups). */
static uint32_t cell_units(const struct pxc_job *j, const struct pxc_node *n, const struct pxc_tl_cell *cl) {
  const struct pxc_shape *s = &j->shape;
  if (!cl->usable) return 0;
  if (s->exclusive) {
    if (cl->gpu != n->ngpu || cl->cpu != n->cpus || cl->mem_mib != n->mem_mib) return 0;
    return s->units < s->per_node_max ? s->units : s->per_node_max;
  }
  uint32_t u = s->gpu ? cl->gpu / s->gpu : UINT32_MAX;
  if (cl->cpu < s->base_cpu) return 0;
  if (s->cpu) {
    uint32_t uc = (cl->cpu - s->base_cpu) / s->cpu;
    if (uc < u) u = uc;
  }
  if (u > s->per_node_max) u = s->per_node_max;
  if (u > s->units) u = s->units;
  while (u && pxc_mem_for(j, n, u) > cl->mem_mib) u--;
  return u;
}

/* Units are a minimum of terms each monotone in one resource, so the units
 * of the interval are those of its per-resource minimum: one cell_units. */
uint32_t pxc_tl_units(const struct px_core *c, const struct pxc_tl *tl, const struct pxc_job *j,
                      uint32_t node, uint32_t k0, uint32_t k1) {
  if (pxc_job_node_filtered(j) && !pxc_node_fit(c, j, node, true))
    return 0; /* features, GPU type */
  const struct pxc_tl_cell *row = pxc_tl_row(tl, node);
  if (k0 >= k1) return 0;
  uint32_t mono = monotone_from(tl, node); /* from there on the minimum is the first cell */
  if (mono < k1) k1 = mono > k0 ? mono + 1 : k0 + 1;
  struct pxc_tl_cell m = row[k0];
  for (uint32_t k = k0 + 1; k < k1; k++) {
    const struct pxc_tl_cell *x = &row[k];
    if (x->gpu < m.gpu) m.gpu = x->gpu;
    if (x->cpu < m.cpu) m.cpu = x->cpu;
    if (x->mem_mib < m.mem_mib) m.mem_mib = x->mem_mib;
    m.usable &= x->usable;
  }
  uint32_t ti = pxc_tlt_index(c, tl, j, node);
  if (ti != PX_NONE) { /* a typed job: its type's GPUs, not the total */
    const uint8_t *tr = pxc_tlt_row(tl, node, ti);
    for (uint32_t k = k0; k < k1; k++)
      if (tr[k] < m.gpu) m.gpu = tr[k];
  }
  return cell_units(j, &c->nodes[node], &m);
}

/* Moves a node's cells [k0, k1) between the GPU buckets of one of its pools:
 * each from its GPUs now to after the take (sign +1) or give-back (-1). */
static void hist_move(struct px_core *c, struct pxc_tl *tl, const struct pxc_node_pool *np,
                      const struct pxc_tl_cell *row, uint32_t g, uint32_t k0, uint32_t k1, int sign) {
  const struct pxc_pool *p = &c->pools[np->pool];
  size_t g1 = p->maxg + 1;
  uint16_t *h = hist_at(tl, p, np->pool, k0, np->lleaf);
  uint32_t *pc = &tl->pcnt[tl->pcnt_off[np->pool] + (size_t)k0 * g1];
  for (uint32_t k = k0; k < k1; k++, h += g1, pc += g1) {
    if (!row[k].usable) continue;
    uint32_t from = row[k].gpu, to = sign > 0 ? (from > g ? from - g : 0) : from + g;
    h[from]--, pc[from]--, h[to]++, pc[to]++;
  }
}

/* Makes the batched histogram moves (before anything reads them). */
static void batch_flush(struct px_core *c, struct pxc_tl *tl) {
  struct pxc_tl_batch *b = &tl->batch;
  if (!b->count) return;
  const struct pxc_pool *p = &c->pools[b->pool];
  size_t g1 = p->maxg + 1;
  uint16_t *h = hist_at(tl, p, b->pool, b->k0, b->lleaf);
  uint32_t *pc = &tl->pcnt[tl->pcnt_off[b->pool] + (size_t)b->k0 * g1];
  for (uint32_t k = b->k0; k < b->k1; k++, h += g1, pc += g1) {
    h[b->from] = (uint16_t)(h[b->from] - b->count), pc[b->from] -= b->count;
    h[b->to] = (uint16_t)(h[b->to] + b->count), pc[b->to] += b->count;
  }
  b->count = 0;
}

/* A cell as one 64-bit word: a take or give-back that clamps or overflows
 * no field of it is a subtraction or an addition of the amounts' word
 * (whatever the byte order: no borrow or carry crosses a field). */
static inline uint64_t cell_word(const struct pxc_tl_cell *cl) {
  uint64_t w;
  memcpy(&w, cl, sizeof w);
  return w;
}

static inline void cell_set_word(struct pxc_tl_cell *cl, uint64_t w) { memcpy(cl, &w, sizeof w); }

_Static_assert(sizeof(struct pxc_tl_cell) == sizeof(uint64_t), "a plan cell is one 64-bit word");

/* Takes d (usable 0) from cells [k0, k1) when they are all usable with v
 * GPUs and hold d's CPUs and memory; false, the cells as they were, when
 * not. One pass that checks while it subtracts (the words give the cells
 * back exactly if one fails): takes are a sixth of a conservative pass. */
static bool cells_take(struct pxc_tl_cell *row, uint32_t k0, uint32_t k1, uint32_t v, struct pxc_tl_cell d) {
  uint64_t dw = cell_word(&d);
  bool ok = true;
  for (uint32_t k = k0; k < k1; k++) {
    struct pxc_tl_cell x = row[k];
    ok &= (x.usable != 0) & (x.gpu == v) & (x.cpu >= d.cpu) & (x.mem_mib >= d.mem_mib);
    cell_set_word(&row[k], cell_word(&x) - dw);
  }
  if (!ok)
    for (uint32_t k = k0; k < k1; k++) cell_set_word(&row[k], cell_word(&row[k]) + dw);
  return ok;
}

/* Gives d back to cells [k0, k1) when they are all usable with v GPUs and
 * no field overflows; false, the cells as they were, when not. */
static bool cells_give(struct pxc_tl_cell *row, uint32_t k0, uint32_t k1, uint32_t v, struct pxc_tl_cell d) {
  uint64_t dw = cell_word(&d);
  bool ok = true;
  for (uint32_t k = k0; k < k1; k++) {
    struct pxc_tl_cell x = row[k];
    ok &= (x.usable != 0) & (x.gpu == v) & (x.cpu <= UINT16_MAX - d.cpu) & (x.mem_mib <= UINT32_MAX - d.mem_mib);
    cell_set_word(&row[k], cell_word(&x) + dw);
  }
  if (!ok)
    for (uint32_t k = k0; k < k1; k++) cell_set_word(&row[k], cell_word(&row[k]) - dw);
  return ok;
}

/* The histogram move of cells [k0, k1) of node (of one pool) from GPU
 * bucket from to bucket to, batched with the same moves of its leaf. */
static void batch_move(struct px_core *c, struct pxc_tl *tl, uint32_t node, uint32_t from, uint32_t to, uint32_t k0,
                       uint32_t k1) {
  const struct pxc_node_pool *np = &c->node_pools[c->nodes[node].pool_first];
  struct pxc_tl_batch *b = &tl->batch;
  if (b->count && (b->pool != np->pool || b->lleaf != np->lleaf || b->from != from || b->to != to || b->k0 != k0 ||
                   b->k1 != k1))
    batch_flush(c, tl);
  if (!b->count) *b = (struct pxc_tl_batch){np->pool, np->lleaf, from, to, k0, k1, 0};
  b->count++;
}

/* A take or give-back on a node of one pool whose cells [k0, k1) are all
 * usable with the same GPUs (v) and that clamps nothing -- a gang's whole
 * node, most often -- moves every cell from bucket v to the same bucket:
 * the cells change here, the histograms once per leaf (batch_flush). False
 * when it is not such a take (nothing done). */
static bool take_uniform(struct px_core *c, struct pxc_tl *tl, uint32_t node, uint32_t g, uint32_t cpu,
                         uint64_t mem, uint32_t k0, uint32_t k1, int sign) {
  const struct pxc_node *n = &c->nodes[node];
  struct pxc_tl_cell *row = pxc_tl_row(tl, node);
  if (n->npools != 1 || k0 >= k1 || cpu > UINT16_MAX || mem > UINT32_MAX) return false;
  uint32_t v = row[k0].gpu;
  if (sign > 0 ? v < g : v + g > UINT8_MAX) return false;
  if (!(sign > 0 ? cells_take : cells_give)(row, k0, k1, v, (struct pxc_tl_cell){(uint32_t)mem, (uint16_t)cpu, (uint8_t)g, 0}))
    return false;
  batch_move(c, tl, node, v, sign > 0 ? v - g : v + g, k0, k1);
  return true;
}

/* Gives back a take that take_uniform made, its cells as it left them (the
 * takes on a clean row are given back newest first, and nothing else writes
 * a row between two builds but the takes): all usable with the same GPUs,
 * room for what comes back, so no check. Half of conservative backfill's
 * takes and give-backs. */
static void give_uniform(struct px_core *c, struct pxc_tl *tl, const struct pxc_tl_undo *u) {
  struct pxc_tl_cell *row = pxc_tl_row(tl, u->node);
  uint32_t v = row[u->k0].gpu;
  uint64_t dw = cell_word(&(struct pxc_tl_cell){(uint32_t)u->mem, (uint16_t)u->cpu, (uint8_t)u->g, 0});
  note_drop(tl, u->node, u->k1);
  for (uint32_t k = u->k0; k < u->k1; k++) cell_set_word(&row[k], cell_word(&row[k]) + dw);
  batch_move(c, tl, u->node, v, v + u->g, u->k0, u->k1);
}

static bool take_amounts(struct px_core *c, struct pxc_tl *tl, uint32_t node, uint32_t g, uint32_t cpu,
                         uint64_t mem, uint32_t k0, uint32_t k1, int sign) {
  const struct pxc_node *n = &c->nodes[node];
  if (k1 > tl->nslots) k1 = tl->nslots;
  if (k0 < k1) note_drop(tl, node, sign > 0 ? k0 : k1); /* a give-back drops where it ends */
  if (take_uniform(c, tl, node, g, cpu, mem, k0, k1, sign)) return true;
  struct pxc_tl_cell *row = pxc_tl_row(tl, node);
  for (uint32_t i = 1; i < n->npools; i++) /* the node's other pools first: they read the cells as they were */
    hist_move(c, tl, &c->node_pools[n->pool_first + i], row, g, k0, k1, sign);
  /* the first pool's buckets in the same pass as the cells (most nodes are in one pool) */
  const struct pxc_node_pool *np = n->npools ? &c->node_pools[n->pool_first] : NULL;
  size_t g1 = np ? c->pools[np->pool].maxg + 1 : 0;
  uint16_t *h = np ? hist_at(tl, &c->pools[np->pool], np->pool, k0, np->lleaf) : NULL;
  uint32_t *pc = np ? &tl->pcnt[tl->pcnt_off[np->pool] + (size_t)k0 * g1] : NULL;
  for (uint32_t k = k0; k < k1; k++) {
    struct pxc_tl_cell *cl = &row[k];
    if (!cl->usable) continue;
    if (np) {
      size_t at = (k - k0) * g1;
      uint32_t from = cl->gpu, to = sign > 0 ? (from > g ? from - g : 0) : from + g;
      h[at + from]--, pc[at + from]--, h[at + to]++, pc[at + to]++;
    }
    if (sign > 0) {
      /* clamps: no exact undo, unless the row is redone at the next build anyway */
      if (cl->gpu < g || cl->cpu < cpu || cl->mem_mib < mem) {
        if (is_dirty(tl, node)) tl->dirty_clamped = true; /* its old row is lost (keep_old_rows) */
        else tl->base_ok = false;
      }
      cl->gpu = (uint8_t)(cl->gpu > g ? cl->gpu - g : 0);
      cl->cpu = (uint16_t)(cl->cpu > cpu ? cl->cpu - cpu : 0);
      cl->mem_mib = (uint32_t)(cl->mem_mib > mem ? cl->mem_mib - mem : 0);
    } else {
      cl->gpu = (uint8_t)(cl->gpu + g);
      cl->cpu = (uint16_t)(cl->cpu + cpu);
      cl->mem_mib = (uint32_t)(cl->mem_mib + mem);
    }
  }
  return false;
}

/* A typed job's GPUs also come off (or back to) its type's row. */
static void take_typed(struct pxc_tl *tl, uint32_t node, uint32_t ti, uint32_t g, uint32_t k0, uint32_t k1, int sign) {
  if (pxc_tlt_take(tl, node, ti, g, k0, k1, sign)) { /* clamped */
    if (is_dirty(tl, node)) tl->dirty_clamped = true;
    else tl->base_ok = false;
  }
}

static void take(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, uint32_t node, uint32_t u,
                 uint32_t k0, uint32_t k1, int sign) {
  const struct pxc_node *n = &c->nodes[node];
  const struct pxc_shape *s = &j->shape;
  uint32_t g = s->exclusive ? n->ngpu : u * s->gpu;
  uint32_t cpu = s->exclusive ? n->cpus : u * s->cpu + s->base_cpu;
  uint64_t mem = s->exclusive ? n->mem_mib : pxc_mem_for(j, n, u);
  uint32_t ti = pxc_tlt_index(c, tl, j, node);
  if (k1 > tl->nslots) k1 = tl->nslots;
  if (sign > 0) tl->stamp[node] = ++tl->ntakes;
  struct pxc_tl_undo *rec = NULL;
  if (sign > 0 && tl->base_ok) { /* logged for the next build's undo */
    if (PXC_GROW(c, tl->undo, &tl->undo_cap, tl->nundo + 1)) tl->base_ok = false;
    else rec = &tl->undo[tl->nundo++];
  }
  bool uniform = take_amounts(c, tl, node, g, cpu, mem, k0, k1, sign);
  if (rec) *rec = (struct pxc_tl_undo){node, g, cpu, k0, k1, ti, mem, uniform};
  if (ti != PX_NONE) take_typed(tl, node, ti, g, k0, k1, sign);
}

void pxc_tl_take(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, uint32_t node,
                 uint32_t u, uint32_t k0, uint32_t k1, int sign) {
  take(c, tl, j, node, u, k0, k1, sign);
  batch_flush(c, tl);
}

void pxc_tl_block(struct px_core *c, struct pxc_tl *tl, uint32_t node, uint32_t k0, uint32_t k1) {
  tl->stamp[node] = ++tl->ntakes;
  pxc_tlt_clear(c, tl, node, k0, k1);
  if (k0 < k1) note_drop(tl, node, k0);
  for (uint32_t k = k0; k < k1 && k < tl->nslots; k++)
    pxc_tl_row(tl, node)[k] = (struct pxc_tl_cell){0, 0, 0, 0};
}

/* ---- search ------------------------------------------------------------ */

/* Cell k of row short of the need; tr: the typed job's type row, or NULL. */
static bool cell_short(const struct pxc_tl_cell *row, const uint8_t *tr, uint32_t k, uint32_t g, uint32_t cpu,
                       uint64_t mem) {
  const struct pxc_tl_cell *x = &row[k];
  return !x->usable || x->gpu < g || x->cpu < cpu || x->mem_mib < mem || (tr && tr[k] < g);
}

/* For a fixed per-node need (single-node jobs, -N gangs): 0 when the node
 * holds it over [k0, k1), else the last slot where it does not + 1 (the
 * cells from there to k1 all hold it). Scanning backwards makes that jump as
 * long as it can be. */
static uint32_t fixed_block(const struct px_core *c, const struct pxc_tl *tl, const struct pxc_job *j,
                            uint32_t node, uint32_t k0, uint32_t k1) {
  const struct pxc_node *n = &c->nodes[node];
  const struct pxc_shape *s = &j->shape;
  uint32_t u = s->nmax == 1 ? s->units : 1;
  uint32_t g = s->exclusive ? n->ngpu : u * s->gpu, cpu = s->exclusive ? n->cpus : u * s->cpu + s->base_cpu;
  uint64_t mem = s->exclusive ? n->mem_mib : pxc_mem_for(j, n, u);
  const struct pxc_tl_cell *row = pxc_tl_row(tl, node);
  uint32_t ti = pxc_tlt_index(c, tl, j, node);
  const uint8_t *tr = ti == PX_NONE ? NULL : pxc_tlt_row(tl, node, ti);
  uint32_t k2 = monotone_from(tl, node);
  if (k2 < k0) k2 = k0;
  if (k2 < k1) { /* [k2, k1) never drops: the slots that fail it are a prefix */
    if (cell_short(row, tr, k1 - 1, g, cpu, mem)) return k1;
    if (cell_short(row, tr, k2, g, cpu, mem)) {
      uint32_t lo = k2 + 1, hi = k1 - 1; /* first cell that holds it: in (k2, k1 - 1] */
      while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cell_short(row, tr, mid, g, cpu, mem)) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    }
    k1 = k2;
  }
  for (uint32_t k = k1; k-- > k0;)
    if (cell_short(row, tr, k, g, cpu, mem)) return k + 1;
  return 0;
}

/* This search found node unable to hold its job before a slot past k. */
static inline bool ruled_out(const struct pxc_tl *tl, uint32_t node, uint32_t k) {
  return tl->seen[node].skip_epoch == tl->epoch && tl->seen[node].skip > k;
}

static uint32_t fit_units(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, uint32_t node,
                          uint32_t k0, uint32_t k1, bool real) {
  uint32_t u;
  if (j->shape.per_node_max == 1 || j->shape.nmax == 1) { /* fixed need: remember how far it fails */
    struct pxc_tl_seen *sn = &tl->seen[node];
    if (ruled_out(tl, node, k0)) return 0;
    if (pxc_job_node_filtered(j) && !pxc_node_fit(c, j, node, true)) return 0;
    /* What the node is known to hold in this search: a gang asks each node
     * of its leaves twice per slot (bound, then pick) and again at the next
     * slot, where only the cells past the known interval are new. One job,
     * one need per search, so a cell holds or not whatever the start. */
    uint32_t from = k0;
    if (sn->ok_epoch == tl->epoch && sn->ok_from <= k0 && sn->ok_to >= k0)
      from = sn->ok_to > k1 ? k1 : sn->ok_to;
    else
      sn->ok_epoch = tl->epoch, sn->ok_from = k0, sn->ok_to = k0;
    uint32_t b = from < k1 ? fixed_block(c, tl, j, node, from, k1) : 0;
    if (b) { /* the scan found the cells [b, k1) holding: the next start tried is b, whose check starts at k1 */
      sn->skip_epoch = tl->epoch;
      sn->skip = b;
      sn->ok_from = b, sn->ok_to = k1;
      return 0;
    }
    if (sn->ok_to < k1) sn->ok_to = k1;
    u = j->shape.nmax == 1 ? j->shape.units : 1;
  } else {
    u = pxc_tl_units(c, tl, j, node, k0, k1);
  }
  if (u && real) {
    uint32_t r = pxc_node_fit(c, j, node, false);
    if (r < u) u = r;
  }
  return u;
}

/* Rows are far apart: a leaf's walk asks for the cell of its q-th node
 * (slot k) a few nodes ahead. */
static inline void prefetch_cell(const struct pxc_tl *tl, const struct pxc_pool *p, uint32_t q, uint32_t l,
                                 uint32_t k) {
  if (q < p->leaf_start[l + 1]) __builtin_prefetch(&pxc_tl_row(tl, p->leaf_nodes[q])[k]);
}

/* The first leaf of pool that may hold a node with g GPUs or more free in
 * slot k. Searches of a deep queue read the same (slot, GPU count) over and
 * over, and once the first leaves are taken in a slot they kept reading
 * their histograms for nothing: one cache line per leaf, 1,250 leaves at
 * 10,000 nodes, the backfill's hottest loop in a burst. Between two builds
 * of the plan capacity only goes (takes, blocks), so a leaf found empty
 * stays empty and the hint only moves forward; a build resets it. */
static uint32_t first_leaf(struct pxc_tl *tl, const struct pxc_pool *p, uint32_t pool, uint32_t k, uint32_t g) {
  if (g > p->maxg) return p->nleaf; /* no node has that many */
  if (tl->hint_epoch != tl->epoch_built) {
    memset(tl->leaf_hint, 0, tl->hint_len * sizeof *tl->leaf_hint);
    tl->hint_epoch = tl->epoch_built;
  }
  uint32_t *at = &tl->leaf_hint[tl->pcnt_off[pool] + (size_t)k * (p->maxg + 1) + g], l = *at;
  for (; l < p->nleaf; l++) {
    const uint16_t *h = hist_at(tl, p, pool, k, l);
    uint32_t any = 0;
    for (uint32_t x = g; x <= p->maxg; x++) any |= h[x];
    if (any) break;
  }
  return *at = l;
}

/* Best fit: the node with the fewest free GPUs that suffice, first leaf,
 * then first node, that holds j for its whole limit. For each GPU count g
 * the pool has at slot k (ascending), the leaves whose histogram counts
 * nodes with g free are read in order, and in them the nodes with exactly
 * g, until the leaf's count of them is seen; nodes this search already
 * ruled out past k (skip) are not read at all. The first that holds j
 * wins: most searches end at the first GPU counts, having read a few
 * leaves rather than every node of the pool. */
static bool find_single(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, uint32_t pool,
                        uint32_t k, uint32_t kend, bool real, struct pxc_tl_fit *fit) {
  const struct pxc_pool *p = &c->pools[pool];
  uint32_t need = j->shape.exclusive ? 0 : j->shape.units * j->shape.gpu;
  const uint32_t *pc = &tl->pcnt[tl->pcnt_off[pool] + (size_t)k * (p->maxg + 1)];
  for (uint32_t g = need; g <= p->maxg; g++) {
    if (!pc[g]) continue; /* no node of the pool has g free */
    uint32_t unseen = pc[g]; /* nodes with g free in the leaves not read yet */
    for (uint32_t l = first_leaf(tl, p, pool, k, g); unseen && l < p->nleaf; l++) {
      uint32_t left = hist_at(tl, p, pool, k, l)[g];
      unseen -= left;
      for (uint32_t q = p->leaf_start[l]; left && q < p->leaf_start[l + 1]; q++) {
        uint32_t node = p->leaf_nodes[q];
        prefetch_cell(tl, p, q + 4, l, k);
        tl->walked++;
        if (ruled_out(tl, node, k)) continue;
        const struct pxc_tl_cell *cl = &pxc_tl_row(tl, node)[k];
        if (!cl->usable || cl->gpu != g) continue;
        left--;
        if (fit_units(c, tl, j, node, k, kend, real) < j->shape.units) continue;
        fit->nnodes = 1;
        fit->nodes[0] = node;
        fit->units[0] = j->shape.units;
        return true;
      }
    }
  }
  return false;
}

/* Bound of the units leaf l can hold in slot k, from the histogram. */
static uint64_t leaf_bound(struct pxc_tl *tl, const struct pxc_pool *p, uint32_t pool, uint32_t k,
                           uint32_t l, const struct pxc_job *j) {
  const struct pxc_shape *s = &j->shape;
  const uint16_t *h = hist_at(tl, p, pool, k, l);
  uint64_t b = 0;
  for (uint32_t g = s->gpu; g <= p->maxg; g++) {
    if (!h[g]) continue;
    uint64_t u = s->gpu ? g / s->gpu : s->units;
    if (u > s->per_node_max) u = s->per_node_max;
    b += h[g] * u;
  }
  return b;
}

/* Bound of the units the whole pool can hold in slot k. */
static uint64_t pool_bound(const struct pxc_tl *tl, const struct pxc_pool *p, uint32_t pool, uint32_t k,
                           const struct pxc_job *j) {
  const struct pxc_shape *s = &j->shape;
  const uint32_t *h = &tl->pcnt[tl->pcnt_off[pool] + (size_t)k * (p->maxg + 1)];
  uint32_t g0 = s->exclusive ? 0 : s->nmax == 1 ? s->units * s->gpu : s->gpu;
  uint64_t b = 0;
  for (uint32_t g = g0; g <= p->maxg; g++) {
    if (!h[g]) continue;
    uint64_t u = s->nmax == 1 ? s->units : s->gpu ? g / s->gpu : s->units;
    if (u > s->per_node_max && s->nmax != 1) u = s->per_node_max;
    b += h[g] * u;
  }
  return b;
}

/* Sorts v[0..n) descending (unique keys; n is at most a pool's leaves, tens:
 * insertion beats qsort's calls through a pointer). */
static void sort_desc(uint64_t *v, uint32_t n) {
  for (uint32_t i = 1; i < n; i++) {
    uint64_t x = v[i];
    uint32_t k = i;
    for (; k > 0 && v[k - 1] < x; k--) v[k] = v[k - 1];
    v[k] = x;
  }
}

/* Leaves to take among [l0, nleaf): the best-fitting single leaf, else the
 * fullest first. */
static uint32_t choose(struct pxc_tl *tl, uint32_t l0, uint32_t nleaf, uint64_t need) {
  uint64_t total = 0;
  uint32_t single = PX_NONE;
  for (uint32_t l = l0; l < nleaf; l++) {
    total += tl->bound[l];
    if (tl->bound[l] >= need && (single == PX_NONE || tl->bound[l] < tl->bound[single])) single = l;
  }
  if (total < need) return 0;
  if (single != PX_NONE) {
    tl->leaves[0] = single;
    return 1;
  }
  /* The fullest leaves first, ties to the lower index: one sort rather than
   * a selection per leaf taken (a gang over fragmented leaves takes many). */
  uint32_t nk = 0;
  for (uint32_t l = l0; l < nleaf; l++)
    if (tl->bound[l])
      tl->lkeys[nk++] = (tl->bound[l] >= UINT32_MAX ? (uint64_t)UINT32_MAX << 32 : tl->bound[l] << 32) |
                        (UINT32_MAX - l);
  sort_desc(tl->lkeys, nk);
  uint32_t n = 0;
  uint64_t got = 0;
  while (got < need && n < nk) {
    uint32_t l = UINT32_MAX - (uint32_t)tl->lkeys[n];
    tl->leaves[n++] = l;
    got += tl->bound[l];
  }
  return got < need ? 0 : n;
}

static bool find_gang(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, uint32_t pool,
                      uint32_t k, uint32_t kend, bool real, struct pxc_tl_fit *fit) {
  const struct pxc_pool *p = &c->pools[pool];
  uint64_t need = j->shape.units;
  uint32_t l0 = first_leaf(tl, p, pool, k, j->shape.gpu); /* leaf_bound is 0 before it */
  for (uint32_t l = l0; l < p->nleaf; l++) {
    tl->bound[l] = leaf_bound(tl, p, pool, k, l, j);
    tl->exact[l] = 0;
  }
  for (;;) {
    uint32_t m = choose(tl, l0, p->nleaf, need);
    if (!m) return false;
    bool changed = false;
    for (uint32_t i = 0; i < m; i++) {
      uint32_t l = tl->leaves[i];
      if (tl->exact[l]) continue;
      uint64_t e = 0;
      for (uint32_t q = p->leaf_start[l]; q < p->leaf_start[l + 1]; q++) {
        prefetch_cell(tl, p, q + 2, l, kend - 1);
        if (ruled_out(tl, p->leaf_nodes[q], k)) continue; /* fit_units' first test, without the call */
        e += fit_units(c, tl, j, p->leaf_nodes[q], k, kend, real);
      }
      tl->exact[l] = 1;
      changed |= e != tl->bound[l];
      tl->bound[l] = e;
    }
    if (changed) continue;
    fit->nnodes = 0;
    for (uint32_t i = 0; i < m && need; i++) {
      uint32_t l = tl->leaves[i];
      for (uint32_t q = p->leaf_start[l]; q < p->leaf_start[l + 1] && need; q++) {
        if (ruled_out(tl, p->leaf_nodes[q], k)) continue;
        uint32_t node = p->leaf_nodes[q], u = fit_units(c, tl, j, node, k, kend, real);
        if (!u) continue;
        if (u > need) u = (uint32_t)need;
        fit->nodes[fit->nnodes] = node;
        fit->units[fit->nnodes++] = u;
        need -= u;
      }
    }
    return need == 0;
  }
}

/* A single-node search goes node by node once its slot-by-slot walk has
 * read this many times the partition's nodes (pxc_tl_find): 8 keeps the
 * 2,048-node synthetic mix's times, 2 cost it 10%. */
#define PXC_TL_WALK_NODES 8

/* The end slot of a start in slot k (pxc_tl_find: slots from 1 on are whole). */
static uint32_t span_end(const struct pxc_tl *tl, uint32_t k, int64_t dur, uint32_t span) {
  uint32_t kend = k == 0 ? pxc_tl_end_slot(tl, 0, dur) : k + span;
  return kend > tl->nslots ? tl->nslots : kend;
}

/* The earliest slot in [k, k_last] where node holds single-node job j for
 * its limit, or UINT32_MAX: each failure jumps past the cell that failed it
 * (fit_units' skip), so a node costs one check per obstacle, not per slot. */
static uint32_t node_earliest(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, uint32_t node,
                              uint32_t k, uint32_t k_last, int64_t dur, uint32_t span) {
  while (k <= k_last) {
    if (fit_units(c, tl, j, node, k, span_end(tl, k, dur, span), false) >= j->shape.units) return k;
    const struct pxc_tl_seen *sn = &tl->seen[node];
    if (sn->skip_epoch != tl->epoch || sn->skip <= k) return UINT32_MAX; /* filtered out: never */
    k = sn->skip;
  }
  return UINT32_MAX;
}

/* Single-node job j from slot k_from on, node by node rather than slot by
 * slot: the same answer as find_single at the earliest slot where any node
 * of a pool holds j -- the pools in order at a slot, then fewest free GPUs
 * in that slot, then leaf and position order -- without re-reading, slot
 * after slot, nodes that cannot start yet. A deep queue's searches that do
 * not fit in their first slot walked every node of every slot up to their
 * start or the window's end (a quarter of conservative backfill's time on
 * a gang-heavy overload). */
static bool find_single_later(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, uint32_t k_from,
                              uint32_t k_to, int64_t dur, uint32_t span, struct pxc_tl_fit *fit) {
  const struct pxc_part *part = &c->parts[j->part];
  uint32_t best_k = UINT32_MAX, best_node = 0;
  for (uint32_t pi = part->pool_first; pi < part->pool_first + part->npools; pi++) {
    const struct pxc_pool *p = &c->pools[pi];
    if (j->gpu_type != PX_NONE && p->gpu_type != j->gpu_type) continue;
    uint32_t pool_best = UINT32_MAX, g_best = 0, n_best = 0;
    /* a later pool wins only with an earlier slot */
    uint32_t last = best_k == UINT32_MAX ? k_to - 1 : best_k - 1;
    for (uint32_t q = 0; q < p->leaf_start[p->nleaf] && k_from <= last; q++) {
      uint32_t node = p->leaf_nodes[q];
      uint32_t lim = pool_best == UINT32_MAX ? last : pool_best;
      uint32_t k = node_earliest(c, tl, j, node, k_from, lim, dur, span);
      if (k == UINT32_MAX) continue;
      uint32_t g = pxc_tl_row(tl, node)[k].gpu;
      if (k < pool_best || g < g_best) pool_best = k, g_best = g, n_best = node;
    }
    if (pool_best != UINT32_MAX) best_k = pool_best, best_node = n_best;
  }
  if (best_k == UINT32_MAX) return false;
  fit->nnodes = 1;
  fit->nodes[0] = best_node;
  fit->units[0] = j->shape.units;
  fit->slot = best_k;
  fit->end_slot = span_end(tl, best_k, dur, span);
  return true;
}

/* Are there need nodes of j's partition's pools (of its GPU type) with g
 * GPUs or more free in slot k? Counted as a bound of the nodes that can
 * hold a fixed need of g GPUs there (a node of two pools counted twice),
 * up to need only: most slots answer at the first count read. */
static bool nodes_with(const struct px_core *c, const struct pxc_tl *tl, const struct pxc_job *j, uint32_t g,
                       uint32_t k, uint32_t need) {
  const struct pxc_part *part = &c->parts[j->part];
  uint32_t n = 0;
  if (need == 0) return true;
  for (uint32_t pi = part->pool_first; pi < part->pool_first + part->npools; pi++) {
    const struct pxc_pool *p = &c->pools[pi];
    if (j->gpu_type != PX_NONE && p->gpu_type != j->gpu_type) continue;
    const uint32_t *pc = &tl->pcnt[tl->pcnt_off[pi] + (size_t)k * (p->maxg + 1)];
    for (uint32_t x = g; x <= p->maxg; x++)
      if ((n += pc[x]) >= need) return true;
  }
  return false;
}

/* The first slot in [k, k_to) from which j's whole span has, in every
 * slot, as many nodes with its GPUs per node free as it needs nodes (a
 * fixed need: a single-node job, one node; a -N gang, n); k_to when none.
 * A slot short of them fails every start whose span covers it, so the
 * search jumps past it, and the slots known to suffice are not read again
 * (as in fixed_block). The slots skipped would all fail: a gang's walk went
 * through every leaf's histogram and the chosen leaves' nodes at each of
 * them, up to its start or the window's end (most of conservative
 * backfill's time on a gang-heavy overload, where blocked gangs' and
 * whole-node jobs' reservations reach far). */
static uint32_t fixed_next(const struct px_core *c, const struct pxc_tl *tl, const struct pxc_job *j, uint32_t k,
                           uint32_t k_to, int64_t dur, uint32_t span, uint32_t *good_to) {
  bool one = j->shape.nmax == 1;
  uint32_t g = j->shape.exclusive ? 0 : one ? j->shape.units * j->shape.gpu : j->shape.gpu;
  uint32_t need = one ? 1 : j->shape.units;
  while (k < k_to) {
    uint32_t kend = span_end(tl, k, dur, span), short_at = UINT32_MAX;
    for (uint32_t x = kend; x-- > (*good_to > k ? *good_to : k);)
      if (!nodes_with(c, tl, j, g, x, need)) {
        short_at = x;
        break;
      }
    if (*good_to < kend) *good_to = kend; /* [k or short_at + 1, kend) suffice */
    if (short_at == UINT32_MAX) return k;
    k = short_at + 1;
  }
  return k_to;
}

bool pxc_tl_find(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, uint32_t k_from,
                 uint32_t k_to, bool real, struct pxc_tl_fit *fit) {
  const struct pxc_part *part = &c->parts[j->part];
  fit->nodes = tl->nodes;
  fit->units = tl->units;
  if (k_to > tl->nslots) k_to = tl->nslots;
  tl->epoch++;
  /* From slot 1 on, slots are whole: a job starting in slot k ends in slot
   * k + ceil(limit / res) (at least k + 1), so the end slot needs no
   * division per slot (this loop is the backfill's hot path). */
  int64_t dur = j->time_limit_s, span = dur >= INT64_MAX / 4 ? (int64_t)tl->nslots : (dur + tl->res_s - 1) / tl->res_s;
  if (span < 1) span = 1;
  if (span > (int64_t)tl->nslots) span = tl->nslots;
  /* A single-node job's slot-by-slot walk is cheap while the histograms
   * point it at few nodes (a large cluster's searches mostly end in a few
   * slots); once it has read PXC_TL_WALK_NODES times the partition's nodes
   * the rest of the search goes node by node (find_single_later). Not for
   * a real placement (real: slot 0 only). */
  uint64_t walk_max = UINT64_MAX;
  tl->walked = 0;
  if (j->shape.nmax == 1 && !real) {
    walk_max = 0;
    for (uint32_t pi = part->pool_first; pi < part->pool_first + part->npools; pi++)
      walk_max += PXC_TL_WALK_NODES * (uint64_t)c->pools[pi].leaf_start[c->pools[pi].nleaf];
  }
  /* fixed_next's count of nodes per slot also rules out, without reading a
   * node, most real starts now: a job whose placement crosses a reservation
   * asks for another node set (backfill's take_other_fit), and in a
   * conservative plan that almost always fails (1.86 of 1.87 million on
   * the gang-heavy 10,000) for want of nodes free over its whole limit. */
  bool fixed = (j->shape.per_node_max == 1 || j->shape.nmax == 1) &&
               (real ? !tl->now_count_off : k_to - k_from > 1);
  uint32_t good_to = 0; /* fixed_next: the slots before it, from the last start it returned, suffice */
  for (uint32_t k = k_from; k < k_to; k++) {
    if (tl->walked > walk_max) return find_single_later(c, tl, j, k, k_to, dur, (uint32_t)span, fit);
    if (fixed && (k = fixed_next(c, tl, j, k, k_to, dur, (uint32_t)span, &good_to)) >= k_to) break;
    uint32_t kend = k == 0 ? pxc_tl_end_slot(tl, 0, dur) : k + (uint32_t)span;
    if (kend > tl->nslots) kend = tl->nslots;
    for (uint32_t pi = part->pool_first; pi < part->pool_first + part->npools; pi++) {
      const struct pxc_pool *p = &c->pools[pi];
      if (j->gpu_type != PX_NONE && p->gpu_type != j->gpu_type) continue;
      if (pool_bound(tl, p, pi, k, j) < j->shape.units) continue;
      bool ok = j->shape.nmax == 1 ? find_single(c, tl, j, pi, k, kend, real, fit)
                                   : find_gang(c, tl, j, pi, k, kend, real, fit);
      if (ok) {
        fit->slot = k;
        fit->end_slot = kend;
        return true;
      }
    }
  }
  return false;
}

/* Does a start now of j fail for want of nodes? For a fixed need per node,
 * fixed_next's count of the nodes with its GPUs free in each slot of its
 * span: short in one, no node set holds j now, the placer's (backfill.c,
 * plan_allows) nor another (pxc_tl_find, real, which counts the same first).
 * false when not counted (a flexible shape; tests: now_count_off). */
bool pxc_tl_now_short(const struct px_core *c, const struct pxc_tl *tl, const struct pxc_job *j) {
  if ((j->shape.per_node_max != 1 && j->shape.nmax != 1) || tl->now_count_off) return false;
  uint32_t good_to = 0;
  return fixed_next(c, tl, j, 0, 1, j->time_limit_s, 1, &good_to) != 0;
}

void pxc_tl_commit(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j,
                   const struct pxc_tl_fit *fit) {
  for (uint32_t i = 0; i < fit->nnodes; i++)
    take(c, tl, j, fit->nodes[i], fit->units[i], fit->slot, fit->end_slot, +1);
  batch_flush(c, tl);
}

/* ---- a GPU free from now (backfill's tail) ------------------------------ */

bool pxc_tl_gpu_run_node(const struct pxc_tl *tl, uint32_t node, uint32_t g, uint32_t k) {
  const struct pxc_tl_cell *row = pxc_tl_row(tl, node);
  for (uint32_t i = 0; i < k && i < tl->nslots; i++)
    if (!row[i].usable || row[i].gpu < g) return false;
  return true;
}

/* Usable nodes of leaf l with g GPUs (or more) free in slot 0. */
static uint32_t leaf_gpu_now(const struct pxc_tl *tl, const struct pxc_pool *p, uint32_t pool, uint32_t l, uint32_t g) {
  const uint16_t *h = &tl->hist[tl->hist_off[pool] + (size_t)l * tl->nslots * (p->maxg + 1)];
  uint32_t n = 0;
  for (; g <= p->maxg; g++) n += h[g];
  return n;
}

bool pxc_tl_gpu_run(const struct px_core *c, const struct pxc_tl *tl, struct pxc_tl_cursor *cur, uint32_t g,
                    uint32_t k) {
  for (; cur->pool < c->npools; cur->pool++, cur->leaf = 0, cur->q = 0) {
    const struct pxc_pool *p = &c->pools[cur->pool];
    for (; cur->leaf < p->nleaf; cur->leaf++) {
      if (cur->q <= p->leaf_start[cur->leaf]) { /* entering the leaf: skip it when full now */
        if (!leaf_gpu_now(tl, p, cur->pool, cur->leaf, g)) continue;
        cur->q = p->leaf_start[cur->leaf];
      }
      for (; cur->q < p->leaf_start[cur->leaf + 1]; cur->q++)
        if (pxc_tl_gpu_run_node(tl, p->leaf_nodes[cur->q], g, k)) return true;
    }
  }
  return false;
}

uint32_t pxc_tl_cursor_node(const struct px_core *c, const struct pxc_tl_cursor *cur) {
  return c->pools[cur->pool].leaf_nodes[cur->q];
}
