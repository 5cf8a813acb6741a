/*
 * fairshare.c - usage accounting and Slurm's Fair Tree.
 *
 * Usage. Each association holds its subtree's decayed usage (billable
 * TRES-seconds) as a value at a time usage_t plus the rate at which its
 * running jobs add to it. Advancing to t decays the value by 2^(-dt/HL) and
 * adds the exact integral of the rate under the same decay, r*HL/ln2*(1-d).
 * A job start or end advances only the association's path to the root and
 * changes the path's rates (O(depth)); the cycle advances the whole tree
 * once (O(tree)), so no per-job full-tree work exists.
 *
 * Fair Tree (Slurm's fair_tree.html; notes in docs/scheduling.md). Per
 * association: S = shares / shares of its level (FairShare=parent accounts
 * are flattened into their parent's level, FairShare=parent users are left
 * out of the sum), U = usage / usage of its fair-share parent, LF = S/U with
 * S == 0 -> 0, then U == 0 -> infinity, FairShare=parent users -> infinity.
 * A depth-first pass sorts each level by LF (users before accounts on ties)
 * and ranks users from N down with standard competition ties; a user's
 * factor is rank/N. Tied sibling accounts: Slurm's documentation (and its
 * code's comments) merge their children into one level, but Slurm 22.05's
 * fair_tree.c counts the tied accounts that follow one only while they are
 * users, which after the sort (users first) is never, so it merges nothing:
 * each account's subtree is ranked on its own, and an account tied with the
 * sibling before it passes the tie to its first child (and that child's
 * first child...), whose first user shares the rank of the user ranked just
 * before. That is the default here, as Slurm sites see it;
 * FairTreeMergeTies=YES ranks the merged level instead. S is computed in double and U
 * in long double in that order, which reproduces Slurm's rounding (the
 * uD2/uD3 case of its test24.4, our unit test).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"

static void share_rows_dfs(struct px_core *c, uint32_t a, uint32_t *n) {
  c->share_rows[(*n)++] = a;
  for (uint32_t k = c->assoc[a].first_child; k != PX_NONE; k = c->assoc[k].next_sibling)
    if (c->assoc[k].is_user) c->share_rows[(*n)++] = k;
  for (uint32_t k = c->assoc[a].first_child; k != PX_NONE; k = c->assoc[k].next_sibling)
    if (!c->assoc[k].is_user) share_rows_dfs(c, k, n);
}

void pxc_fs_rows(struct px_core *c) {
  uint32_t n = 0;
  for (uint32_t a = 0; a < c->nassoc; a++)
    if (c->assoc[a].parent == PX_NONE && !c->assoc[a].deleted) share_rows_dfs(c, a, &n);
  c->nshare_rows = n;
}

/* Each array grows on its own: one that grew and one that did not are both
 * still valid, so a failure changes nothing that is read. n + 1 entries. */
int pxc_fs_reserve(struct px_core *c, uint32_t n) {
  void **v[] = {(void **)&c->share_rows, (void **)&c->fs_list, (void **)&c->fs_level_sum};
  size_t sz[] = {sizeof *c->share_rows, sizeof *c->fs_list, sizeof *c->fs_level_sum};
  for (size_t i = 0; i < 3; i++) {
    void *p = pxc_realloc(c, *v[i], ((size_t)n + 1) * sz[i]);
    if (!p) return PX_ENOMEM;
    *v[i] = p;
  }
  return 0;
}

int pxc_fs_build(struct px_core *c) {
  c->share_rows = pxc_calloc(c, c->nassoc + 1, sizeof *c->share_rows);
  c->fs_list = pxc_calloc(c, c->nassoc + 1, sizeof *c->fs_list);
  c->fs_level_sum = pxc_calloc(c, c->nassoc + 1, sizeof *c->fs_level_sum);
  if (!c->share_rows || !c->fs_list || !c->fs_level_sum) return PX_ENOMEM;
  pxc_fs_rows(c);
  for (uint32_t a = 0; a < c->nassoc; a++) {
    c->assoc[a].fairshare = 1.0;
    c->assoc[a].usage_t = INT64_MIN;
  }
  return 0;
}

static void advance_one(struct px_core *c, struct pxc_assoc *a, int64_t now) {
  if (a->usage_t == INT64_MIN || now <= a->usage_t) {
    if (a->usage_t == INT64_MIN) a->usage_t = now;
    return;
  }
  double dt = (double)(now - a->usage_t), hl = (double)c->sched.decay_half_life_s;
  if (hl > 0) {
    double d = exp2(-dt / hl);
    a->usage = a->usage * d + a->rate * hl / M_LN2 * (1 - d);
  } else {
    a->usage += a->rate * dt;
  }
  a->usage_t = now;
}

void pxc_fs_advance(struct px_core *c, uint32_t assoc, int64_t now) {
  for (uint32_t a = assoc; a != PX_NONE; a = c->assoc[a].parent) advance_one(c, &c->assoc[a], now);
}

void pxc_fs_charge(struct px_core *c, uint32_t assoc, double rate_delta, int64_t now) {
  for (uint32_t a = assoc; a != PX_NONE; a = c->assoc[a].parent) {
    advance_one(c, &c->assoc[a], now);
    c->assoc[a].rate += rate_delta;
    if (c->assoc[a].rate < 1e-9) c->assoc[a].rate = 0; /* no drift below zero */
  }
}

static void level_fs(struct px_core *c) {
  memset(c->fs_level_sum, 0, c->nassoc * sizeof *c->fs_level_sum);
  for (uint32_t i = 0; i < c->nassoc; i++) {
    const struct pxc_assoc *a = &c->assoc[i];
    if (a->fs_parent != PX_NONE && !a->use_parent) c->fs_level_sum[a->fs_parent] += a->shares;
  }
  for (uint32_t i = 0; i < c->nassoc; i++) {
    struct pxc_assoc *a = &c->assoc[i];
    if (a->fs_parent == PX_NONE) {
      a->norm_shares = 1.0;
      a->eff_usage = 1.0;
      a->level_fs = 1.0L;
      continue;
    }
    const struct pxc_assoc *p = &c->assoc[a->fs_parent];
    double sum = c->fs_level_sum[a->fs_parent];
    double s = a->use_parent ? 0 : (sum > 0 ? (double)a->shares / sum : 0);
    long double u = p->usage > 0 ? (long double)a->usage / (long double)p->usage : 0.0L;
    a->norm_shares = s;
    a->eff_usage = (double)u;
    if (a->use_parent) a->level_fs = a->is_user ? (long double)INFINITY : (long double)NAN;
    else if (s == 0) a->level_fs = 0.0L;
    else if (u == 0) a->level_fs = (long double)INFINITY;
    else a->level_fs = (long double)s / u;
  }
  /* FairShare=parent rows show their fair-share parent's normalised shares. */
  for (uint32_t i = 0; i < c->nassoc; i++)
    if (c->assoc[i].use_parent && c->assoc[i].fs_parent != PX_NONE)
      c->assoc[i].norm_shares = c->assoc[c->assoc[i].fs_parent].norm_shares;
}

/* Appends the level members of account x (FairShare=parent accounts flattened). */
static uint32_t flatten(struct px_core *c, uint32_t x, uint32_t *out) {
  uint32_t n = 0;
  for (uint32_t k = c->assoc[x].first_child; k != PX_NONE; k = c->assoc[k].next_sibling) {
    if (!c->assoc[k].is_user && c->assoc[k].use_parent) n += flatten(c, k, out + n);
    else out[n++] = k;
  }
  return n;
}

static int cmp_lf(const void *x, const void *y, void *ctx) {
  const struct px_core *c = ctx;
  const struct pxc_assoc *a = &c->assoc[*(const uint32_t *)x], *b = &c->assoc[*(const uint32_t *)y];
  if (a->level_fs != b->level_fs) return a->level_fs > b->level_fs ? -1 : 1;
  if (a->is_user != b->is_user) return a->is_user ? -1 : 1;
  return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

struct rank_state {
  uint32_t rank, rnt, n;
};

static void visit(struct px_core *c, uint32_t *list, uint32_t n, bool parent_tied, struct rank_state *r) {
  qsort_r(list, n, sizeof *list, cmp_lf, c);
  for (uint32_t i = 0; i < n; i++) {
    struct pxc_assoc *a = &c->assoc[list[i]];
    bool tied = i == 0 ? parent_tied : a->level_fs == c->assoc[list[i - 1]].level_fs;
    if (a->is_user) {
      if (!tied) r->rank = r->rnt;
      a->fairshare = r->n ? (double)r->rank / r->n : 1.0;
      r->rnt--;
      continue;
    }
    /* FairTreeMergeTies: with the run of following accounts tied with this one */
    uint32_t *kids = list + n, nk = flatten(c, list[i], kids), j = i + 1;
    while (c->sched.fair_tree_merge_ties && j < n && !c->assoc[list[j]].is_user &&
           c->assoc[list[j]].level_fs == a->level_fs)
      nk += flatten(c, list[j++], kids + nk);
    visit(c, kids, nk, tied, r);
    i = j - 1;
  }
}

void pxc_fs_update(struct px_core *c, int64_t now) {
  for (uint32_t i = 0; i < c->nassoc; i++) advance_one(c, &c->assoc[i], now);
  level_fs(c);
  struct rank_state r = {c->nuser_assoc, c->nuser_assoc, c->nuser_assoc};
  for (uint32_t root = 0; root < c->nassoc; root++) {
    if (c->assoc[root].parent != PX_NONE) continue;
    uint32_t n = flatten(c, root, c->fs_list);
    visit(c, c->fs_list, n, false, &r);
  }
  c->last_fs_s = now;
}

size_t px_core_nshares(const struct px_core *c) { return c->nshare_rows; }

int px_core_share_get(const struct px_core *c, size_t row, struct px_share_view *out) {
  if (row >= c->nshare_rows) return PX_ENOENT;
  uint32_t i = c->share_rows[row];
  const struct pxc_assoc *a = &c->assoc[i];
  uint32_t root = i;
  while (c->assoc[root].parent != PX_NONE) root = c->assoc[root].parent;
  double ru = c->assoc[root].usage;
  *out = (struct px_share_view){
      .assoc = i,
      .parent = a->parent,
      .depth = a->depth,
      .is_user = a->is_user,
      .shares_parent = a->use_parent,
      .raw_shares = a->shares,
      .norm_shares = a->norm_shares,
      .raw_usage = a->usage,
      .norm_usage = ru > 0 ? a->usage / ru : 0,
      .effective_usage = a->eff_usage,
      .level_fs = (double)a->level_fs,
      .fairshare = a->is_user ? a->fairshare : NAN,
  };
  return 0;
}
