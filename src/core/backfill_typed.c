/*
 * backfill_typed.c - the plan's per-type rows of nodes with several GPU
 * types (MIG profiles side by side, docs/gpus.md).
 *
 * The plan's cells count a node's free GPUs of every type together, which
 * is what an untyped job may take. A typed job may take only its type's:
 * on such a node each type also has a row of its free GPUs per slot, and a
 * typed job holds on the node where both its type's row and the total
 * hold it. Takes keep this exact: a typed take comes off its type's row
 * and the total, an untyped one off the total alone (it may take any
 * type), so a type's free GPUs are the smaller of its row and the total
 * (the untyped takes come, as far as can be, from other types). Nodes of
 * one type have no rows: untyped clusters pay one test per node or alloc.
 * The pools' histograms keep counting the total, a bound the search then
 * checks node by node (backfill_plan.c, fixed_block and pxc_tl_units).
 */
#include <string.h>

#include "core/policy.h"

int pxc_tlt_init(struct px_core *c, struct pxc_tl *tl) {
  tl->trow = pxc_calloc(c, c->nnodes + 1, sizeof *tl->trow);
  if (!tl->trow) return PX_ENOMEM;
  uint32_t rows = 0;
  for (uint32_t node = 0; node < c->nnodes; node++) {
    tl->trow[node] = c->nodes[node].ngtypes ? rows : PX_NONE;
    rows += c->nodes[node].ngtypes;
  }
  tl->ntrows = rows;
  tl->tcell = pxc_calloc(c, (size_t)rows * tl->stride + 1, sizeof *tl->tcell);
  return tl->tcell ? 0 : PX_ENOMEM;
}

void pxc_tlt_fini(struct px_core *c, struct pxc_tl *tl) {
  pxc_free(c, tl->trow);
  pxc_free(c, tl->tcell);
  tl->trow = NULL, tl->tcell = NULL, tl->ntrows = 0;
}

/* j's type among node's types (pxc_tlt_index has ruled out the rest). */
uint32_t pxc_tlt_find(const struct px_core *c, const struct pxc_job *j, uint32_t node) {
  const struct pxc_node *n = &c->nodes[node];
  for (uint32_t i = 0; i < n->ngtypes; i++)
    if (n->gtypes[i].type == j->gpu_type) return i;
  return PX_NONE; /* not its type: the node filter refuses it */
}

void pxc_tlt_release(const struct px_core *c, struct pxc_tl *tl, uint32_t node, px_bits64 gpus, bool whole,
                     uint32_t k) {
  const struct pxc_node *n = &c->nodes[node];
  for (uint32_t i = 0; i < n->ngtypes; i++) {
    px_bits64 of = n->gtypes[i].gpus & ~n->gpu_bad & (whole ? ~(px_bits64)0 : gpus);
    uint8_t *cl = &pxc_tlt_row(tl, node, i)[k];
    *cl = (uint8_t)(*cl + px_bits64_count(of));
  }
}

void pxc_tlt_fill(const struct px_core *c, struct pxc_tl *tl, uint32_t node, uint32_t k0, bool usable) {
  const struct pxc_node *n = &c->nodes[node];
  for (uint32_t i = 0; i < n->ngtypes; i++) {
    px_bits64 mine = n->gtypes[i].gpus;
    uint8_t *row = pxc_tlt_row(tl, node, i);
    uint32_t gmax = (uint32_t)px_bits64_count(mine & ~n->gpu_bad);
    uint32_t g = k0 ? row[k0 - 1] : n->excl ? 0 : (uint32_t)px_bits64_count(n->gpu_free & mine);
    for (uint32_t k = k0; k < tl->nslots; k++) {
      g += row[k];
      if (g > gmax) g = gmax; /* an exclusive job's release counts the whole type */
      row[k] = usable ? (uint8_t)g : 0;
    }
  }
}

void pxc_tlt_clear(const struct px_core *c, struct pxc_tl *tl, uint32_t node, uint32_t k0, uint32_t k1) {
  if (!pxc_tlt_has(tl, node)) return;
  if (k1 > tl->nslots) k1 = tl->nslots;
  for (uint32_t i = 0; i < c->nodes[node].ngtypes && k0 < k1; i++) memset(pxc_tlt_row(tl, node, i) + k0, 0, k1 - k0);
}

bool pxc_tlt_take(struct pxc_tl *tl, uint32_t node, uint32_t ti, uint32_t g, uint32_t k0, uint32_t k1, int sign) {
  uint8_t *row = pxc_tlt_row(tl, node, ti);
  bool clamped = false;
  if (k1 > tl->nslots) k1 = tl->nslots;
  for (uint32_t k = k0; k < k1; k++) {
    if (sign < 0) {
      row[k] = (uint8_t)(row[k] + g);
      continue;
    }
    clamped |= row[k] < g;
    row[k] = (uint8_t)(row[k] > g ? row[k] - g : 0);
  }
  return clamped;
}

/* As slide_rows: rows moved back to their storage's start when the window
 * runs out of it, then slot 0 copied m slots on and the slots before it
 * zeroed (tl->off then moves m on). */
void pxc_tlt_slide(struct pxc_tl *tl, uint32_t m, bool back) {
  uint32_t S = tl->nslots;
  for (uint32_t r = 0; r < tl->ntrows; r++) {
    uint8_t *base = &tl->tcell[(size_t)r * tl->stride];
    if (back) {
      memmove(base, base + tl->off, S);
      memset(base + S, 0, tl->stride - S);
    }
    uint8_t *row = base + (back ? 0 : tl->off);
    row[m] = row[0];
    memset(row, 0, m);
  }
}

void pxc_tlt_copy(const struct pxc_tl *tl, uint8_t *dst) {
  for (uint32_t r = 0; r < tl->ntrows; r++)
    memcpy(dst + (size_t)r * tl->nslots, &tl->tcell[(size_t)r * tl->stride + tl->off], tl->nslots);
}

int pxc_tlt_cmp(const struct pxc_tl *tl, const uint8_t *src) {
  for (uint32_t r = 0; r < tl->ntrows; r++)
    if (memcmp(src + (size_t)r * tl->nslots, &tl->tcell[(size_t)r * tl->stride + tl->off], tl->nslots)) return 1;
  return 0;
}

/* The takes above keep the plan exact only if an untyped job's GPUs come,
 * as far as can be, from types the plan does not hold for typed jobs: at
 * its start (place.c) it takes from spare first. A type's spare over the
 * job's window is its row's smallest cell (its free GPUs less the typed
 * takes: untyped takes leave the rows alone), at most its free GPUs now. */
px_bits64 pxc_tlt_spare(const struct px_core *c, uint32_t node, px_bits64 free, int64_t limit_s) {
  const struct pxc_policy *pol = c->pol;
  if (!pol || !pol->plan_built || !pxc_tlt_has(&pol->tl, node)) return free;
  const struct pxc_tl *tl = &pol->tl;
  const struct pxc_node *n = &c->nodes[node];
  uint32_t kend = pxc_tl_end_slot(tl, 0, limit_s);
  if (kend > tl->nslots) kend = tl->nslots;
  px_bits64 spare = 0;
  for (uint32_t i = 0; i < n->ngtypes; i++) {
    const uint8_t *row = pxc_tlt_row(tl, node, i);
    uint32_t left = UINT32_MAX;
    for (uint32_t k = 0; k < kend; k++)
      if (row[k] < left) left = row[k];
    px_bits64 m = free & n->gtypes[i].gpus;
    for (; m && left; left--, m &= m - 1) spare |= m & (~m + 1); /* its lowest free ones */
  }
  return spare;
}
