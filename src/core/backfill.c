/*
 * backfill.c - the backfill `reserve` stage (stage.h), EASY and conservative.
 *
 * The cycle tries pending jobs in priority order. When one cannot start now,
 * `blocked` finds in the plan (backfill_plan.c) the earliest slot where all its
 * nodes are free for its whole time limit, honouring its gang shape and the
 * leaf switches, and -- within the reservation depth -- records that as a
 * reservation: the plan's cells on those nodes are taken for that interval.
 * EASY makes one reservation per partition (its top blocked job);
 * conservative makes one for every blocked job up to sched.backfill_depth.
 * Jobs past the depth, or in EASY below the top, still get an estimate (the
 * same search without taking anything). A job that can be placed now starts
 * only if `may_start` finds its placement free in the plan for its whole time
 * limit, i.e. it ends before, or does not touch, every reservation made
 * ahead of it; failing that the plan may offer another node set that fits
 * now. The plan is rebuilt every cycle from running jobs' time limits, so a
 * job that ends early pulls reservations forward at the next cycle.
 *
 * Cost: once a job of a given (shape, time limit) finds no room in slot k,
 * no later job of the same kind can fit there this cycle (the plan only
 * loses capacity during a cycle), so a per-kind cursor makes the search of
 * the thousands of identical jobs of a deep queue start where the previous
 * one ended; jobs beyond the window cost a map lookup.
 */
#include <string.h>

#include "core/policy.h"
#include "util/map.h"

static uint64_t kind_key(const struct px_core *c, struct pxc_job *j) {
  uint64_t h;
  pxc_job_hashes(c, j, &h, NULL);
  return px_hash_u64(h ^ (uint64_t)j->time_limit_s) & (UINT64_MAX >> 1);
}

static void map_clear(struct pxc_map *m) {
  if (!m->len) return;
  for (size_t i = 0; i < m->cap; i++) m->keys[i] = UINT64_MAX;
  m->len = 0;
}

/* ---- gang frontiers ------------------------------------------------------ */

/* Jobs whose earliest slot only gets later with more nodes (fixed shapes:
 * a gang of n nodes, a single node being n = 1) or more units on one node
 * (flexible single-node jobs), and with a longer time limit. */
static bool fronted(const struct pxc_job *j) { return j->shape.per_node_max == 1 || j->shape.nmax == 1; }
static uint32_t front_n(const struct pxc_job *j) { return j->shape.per_node_max == 1 ? j->shape.nmin : j->shape.units; }

static uint64_t front_key(const struct px_core *c, struct pxc_job *j) {
  uint64_t h;
  pxc_job_hashes(c, j, NULL, &h);
  return h & (UINT64_MAX >> 1);
}

/* First slot not ruled out for gang j by smaller or shorter gangs; *at:
 * its frontier's index for front_put, PX_NONE when it has none yet. */
static uint32_t front_get(const struct px_core *c, struct pxc_job *j, uint32_t *at) {
  uint32_t i, f = 0;
  *at = PX_NONE;
  if (!fronted(j) || !pxc_map_get(&c->pol->front_idx, front_key(c, j), &i)) return 0;
  *at = i;
  const struct pxc_bf_front *fr = &c->pol->fronts[i];
  uint32_t n = front_n(j);
  for (uint32_t k = 0; k < fr->len; k++)
    if (fr->n[k] <= n && fr->d[k] <= j->time_limit_s && fr->f[k] > f) f = fr->f[k];
  return f;
}

/* Records that gang j found nothing before slot f (best effort: a cache);
 * i: its frontier's index as front_get found it (nothing else adds one
 * between the two), PX_NONE for a new one. */
static void front_put(struct px_core *c, struct pxc_job *j, uint32_t f, uint32_t i) {
  struct pxc_policy *pol = c->pol;
  if (!fronted(j) || f <= 1) return;
  if (i == PX_NONE) {
    if (PXC_GROW(c, pol->fronts, &pol->fronts_cap, pol->nfronts + 1) ||
        pxc_map_put(c, &pol->front_idx, front_key(c, j), (uint32_t)pol->nfronts))
      return;
    i = (uint32_t)pol->nfronts++;
    pol->fronts[i].len = 0;
  }
  struct pxc_bf_front *fr = &pol->fronts[i];
  uint32_t n = front_n(j), keep = 0, low = 0;
  for (uint32_t k = 0; k < fr->len; k++) { /* drop entries the new one makes redundant */
    if (fr->n[k] >= n && fr->d[k] >= j->time_limit_s && fr->f[k] <= f) continue;
    fr->n[keep] = fr->n[k], fr->d[keep] = fr->d[k], fr->f[keep] = fr->f[k];
    if (fr->f[keep] < fr->f[low]) low = keep;
    keep++;
  }
  fr->len = keep;
  if (keep == PXC_BF_FRONT) {
    if (fr->f[low] >= f) return;
    keep = low; /* replace the weakest */
  } else {
    fr->len++;
  }
  fr->n[keep] = n, fr->d[keep] = j->time_limit_s, fr->f[keep] = f;
}

/* ---- the last pass's searches --------------------------------------------- */

/* This pass's log opens at its first search, if the plan is still as built
 * (a start may have taken from it since: not the last pass's plan, and not
 * a plan the next pass starts from). */
static void log_start(struct pxc_tl *tl) {
  bool as_built = tl->ntakes == tl->built_takes;
  tl->log_started = true;
  tl->log_cur ^= 1;
  struct pxc_tl_log *cur = &tl->log[tl->log_cur];
  cur->n = cur->ncells = 0;
  cur->gen = tl->gen;
  cur->build = tl->nbuilds;
  cur->open = as_built && !tl->replay_off;
  tl->log_takes = tl->ntakes;
  const struct pxc_tl_log *last = &tl->log[tl->log_cur ^ 1];
  /* how far the plan changed since the log (policy.h, diff_to) */
  bool next = last->build + 1 == tl->nbuilds, again = last->build == tl->nbuilds;
  bool known = next || again || !tl->gen_shifted;
  tl->replay = as_built && last->gen == tl->gen && known ? 0 : SIZE_MAX;
  tl->pass_diff_to = again ? 0 : next ? tl->build_diff_to : tl->diff_to;
  tl->pass_gain_to = again ? 0 : next ? tl->build_gain_to : tl->gain_to;
  tl->pass_shift = next ? tl->build_shift : 0;
}

static bool log_put(struct px_core *c, struct pxc_tl_log *lg, const struct pxc_job *j, uint64_t h, uint32_t from,
                    bool found, const struct pxc_tl_fit *fit) {
  uint32_t n = found ? fit->nnodes : 0;
  if (PXC_GROW(c, lg->rec, &lg->cap, lg->n + 1) || PXC_GROW(c, lg->cells, &lg->cells_cap, lg->ncells + 2 * n + 1))
    return false;
  lg->rec[lg->n++] = (struct pxc_tl_rec){j->id, h, j->time_limit_s, from, found ? fit->slot : 0,
                                         found ? fit->end_slot : 0, n, lg->ncells, found};
  memcpy(lg->cells + lg->ncells, fit->nodes, n * sizeof *lg->cells);
  memcpy(lg->cells + lg->ncells + n, fit->units, n * sizeof *lg->cells);
  lg->ncells += 2 * n;
  return true;
}

/* The search found what record r of log lg did, its slots m on. */
static bool same_fit(const struct pxc_tl_log *lg, const struct pxc_tl_rec *r, uint32_t m, bool found,
                     const struct pxc_tl_fit *fit) {
  if (found != r->found) return false;
  if (!found) return true;
  return fit->slot + m == r->slot && fit->end_slot + m == r->end_slot && fit->nnodes == r->nnodes &&
         !memcmp(fit->nodes, lg->cells + r->off, r->nnodes * sizeof *fit->nodes) &&
         !memcmp(fit->units, lg->cells + r->off + r->nnodes, r->nnodes * sizeof *fit->units);
}

/* Record r's search, in this grid (its window m slots on). */
static bool rec_is(const struct pxc_tl *tl, const struct pxc_tl_rec *r, const struct pxc_job *j, uint64_t h,
                   uint32_t from) {
  uint32_t m = tl->pass_shift;
  return r->job_id == j->id && r->shape_h == h && r->limit == j->time_limit_s && (r->from > m ? r->from - m : 1) == from;
}

/* Record r's start may read cells that changed: before diff_to, out of
 * this grid, or cut at the last grid's end (a span past it read less). */
static bool rec_near(const struct pxc_tl *tl, const struct pxc_tl_rec *r) {
  uint32_t m = tl->pass_shift;
  return r->found && (r->slot <= m || r->slot - m < tl->pass_diff_to || (m && r->end_slot >= tl->nslots));
}

/* A start that may fit since the log although record r's search did not
 * find it (not near): before gain_to, and, with the grid moved on m slots,
 * one the last grid did not have when r found nothing (from S - m on: any
 * other reads the cells its last start read, or more where the last grid's
 * end cut its span, so it fails if that failed). */
static bool changed_fit(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, const struct pxc_tl_rec *r,
                        uint32_t from, struct pxc_tl_fit *fit) {
  uint32_t gain = tl->pass_gain_to, m = tl->pass_shift;
  if (from < gain && pxc_tl_find(c, tl, j, from, gain, false, fit)) return true;
  if (!m || r->found) return false;
  uint32_t k = tl->nslots - m;
  if (k < from) k = from;
  if (k < gain) k = gain;
  return k < tl->nslots && pxc_tl_find(c, tl, j, k, tl->nslots, false, fit);
}

/* The plan differs from the last pass's where a reservation of one of
 * them ends before slot end: widens the pass's bounds (policy.h, diff_to). */
static void differs_to(struct pxc_tl *tl, uint32_t end, bool gain) {
  if (end > tl->pass_diff_to) tl->pass_diff_to = end;
  if (gain && end > tl->pass_gain_to) tl->pass_gain_to = end;
}

/* This pass's search of record r's job found fit (if found), not r's: the
 * plans differ where either's reservation lies (this one's is not in the
 * other; r's is missing here). */
static void went_apart(struct pxc_tl *tl, const struct pxc_tl_rec *r, bool found, const struct pxc_tl_fit *fit) {
  if (r->found && r->end_slot > tl->pass_shift) differs_to(tl, r->end_slot - tl->pass_shift, true);
  if (found) differs_to(tl, fit->end_slot, false);
}

/* Records looked at past the next one for the job searched (skip_to). */
#define PXC_LOG_LOOKAHEAD 8

/* Job j's record among the few after the last pass's next one, those
 * before it passed over (a job that started, or moved later in the queue):
 * their reservations are not in this pass's plan, which may have more
 * capacity there. NULL when none (j is new here, or moved earlier). */
static const struct pxc_tl_rec *skip_to(struct pxc_tl *tl, const struct pxc_tl_log *last, const struct pxc_job *j,
                                        uint64_t h, uint32_t from) {
  for (size_t i = tl->replay + 1; i < last->n && i <= tl->replay + PXC_LOG_LOOKAHEAD; i++) {
    if (!rec_is(tl, &last->rec[i], j, h, from)) continue;
    for (size_t x = tl->replay; x < i; x++) {
      const struct pxc_tl_rec *r = &last->rec[x];
      if (r->found && r->end_slot > tl->pass_shift) differs_to(tl, r->end_slot - tl->pass_shift, true);
    }
    tl->replay = i;
    return &last->rec[i];
  }
  return NULL;
}

/* The earliest fit of blocked job j from slot from on (pxc_tl_find). When
 * the plan is the last pass's at the same point -- the same gen, and both
 * passes committed the same reservations, nothing else (ntakes) -- and the
 * last pass's next search was this one (the same job, shape, limit and
 * first slot), its answer is this one's: the search depends on nothing
 * else. In consecutive passes of an overloaded queue most reservations
 * ahead of the first change come out the same. The pass's searches are
 * logged for the next one while the plan holds only their commits (and
 * starts: log_start_taken).
 * The plans may differ in slots [0, pass_diff_to), and this one have more
 * in [0, pass_gain_to) (policy.h: the builds since the log; then, as the
 * pass goes, the reservations one pass made and the other not). A start in
 * a slot k >= diff_to reads the same cells as before; one in [gain_to,
 * diff_to) fewer, so it fails if it failed. So a search that found slot
 * k >= diff_to, or nothing, finds the same unless a start before gain_to
 * now fits: only those are searched. One that found an earlier slot is
 * made again. A different answer widens the bounds (went_apart), and the
 * passes go on. */
static bool search(struct px_core *c, struct pxc_job *j, uint32_t from, struct pxc_tl_fit *fit) {
  struct pxc_tl *tl = &c->pol->tl;
  if (!tl->log_started) log_start(tl);
  struct pxc_tl_log *cur = &tl->log[tl->log_cur], *last = &tl->log[tl->log_cur ^ 1];
  uint64_t h;
  pxc_job_hashes(c, j, &h, NULL);
  bool same = tl->ntakes == tl->log_takes, found;
  for (; same && tl->replay < last->n && !last->rec[tl->replay].from; tl->replay++) /* starts (log_start_taken) */
    if (last->rec[tl->replay].end_slot > tl->pass_shift)
      differs_to(tl, last->rec[tl->replay].end_slot - tl->pass_shift, true);
  const struct pxc_tl_rec *r = same && tl->replay < last->n ? &last->rec[tl->replay] : NULL;
  bool insert = r && !rec_is(tl, r, j, h, from) && !(r = skip_to(tl, last, j, h, from));
  uint32_t m = tl->pass_shift;
  if (insert) { /* a search the last pass did not make: its reservation is more here */
    found = pxc_tl_find(c, tl, j, from, tl->nslots, false, fit);
    if (found) differs_to(tl, fit->end_slot, false);
  } else if (!r) {
    tl->replay = SIZE_MAX; /* the passes went apart: no later record holds */
    found = pxc_tl_find(c, tl, j, from, tl->nslots, false, fit);
  } else if (rec_near(tl, r)) { /* the record's start may differ */
    found = pxc_tl_find(c, tl, j, from, tl->nslots, false, fit);
    if (!(r->slot > m && same_fit(last, r, m, found, fit))) went_apart(tl, r, found, fit);
    tl->replay++;
  } else if ((found = changed_fit(c, tl, j, r, from, fit))) { /* an earlier start than the record's */
    went_apart(tl, r, found, fit);
    tl->replay++;
  } else {
    tl->replay++, tl->replayed++;
    tl->replayed_diff += tl->pass_diff_to > 0 || m;
    found = r->found;
    *fit = (struct pxc_tl_fit){r->found ? r->slot - m : 0, r->found ? r->end_slot - m : 0, r->nnodes, tl->nodes, tl->units};
    memcpy(fit->nodes, last->cells + r->off, r->nnodes * sizeof *fit->nodes);
    memcpy(fit->units, last->cells + r->off + r->nnodes, r->nnodes * sizeof *fit->units);
  }
  if (cur->open && (!same || !log_put(c, cur, j, h, from, found, fit))) cur->open = false;
  return found;
}

static void bf_begin(struct px_core *c, int64_t now) {
  struct pxc_policy *pol = c->pol;
  (void)now; /* the plan was built by pxc_policy_begin */
  pol->tl.log_started = false;
  map_clear(&pol->cursor);
  map_clear(&pol->front_idx);
  pol->nfronts = 0;
  pol->nresv = 0;
  pol->nhints = 0;
  pxc_bf_tail_begin(c);
  memset(pol->part_resv, 0, c->nparts * sizeof *pol->part_resv);
}

/* Is res free in the plan for j's time limit from now? */
static bool plan_allows(struct px_core *c, const struct pxc_job *j, const struct pxc_place_result *res) {
  struct pxc_tl *tl = &c->pol->tl;
  uint32_t kend = pxc_tl_end_slot(tl, 0, j->time_limit_s);
  for (uint32_t i = 0; i < res->nnodes; i++)
    if (pxc_tl_units(c, tl, j, res->nodes[i], 0, kend) < res->units[i]) return false;
  return true;
}

/* Largest value in [lo, hi] for which ok(v) holds, given ok monotone
 * decreasing; 0 when none. */
static int64_t largest(struct px_core *c, struct pxc_job *t, int64_t lo, int64_t hi,
                       bool (*ok)(struct px_core *, struct pxc_job *, int64_t)) {
  int64_t best = 0;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (ok(c, t, mid)) best = mid, lo = mid + 1;
    else hi = mid - 1;
  }
  return best;
}

static bool fits_now_time(struct px_core *c, struct pxc_job *t, int64_t slots) {
  struct pxc_tl_fit fit;
  struct pxc_tl *tl = &c->pol->tl;
  t->time_limit_s = pxc_tl_slot_time(tl, (uint32_t)slots) - tl->now;
  return pxc_tl_find(c, tl, t, 0, 1, false, &fit);
}

/* Within a cycle the plan only loses room (commits; a victim's earlier
 * release waits for the next build), so a job whose placement key (what a
 * real search reads: its shape, partition, nodes asked or excluded, its
 * account where tenancy matters) found no node set free to end slot e
 * finds none to a later end either. Under LAS (EASY backfill) most starts
 * now cross the one reservation and search again: 10% of las-requeue on
 * Philly, mostly 1-GPU jobs of one key. Not for a job whose search reads
 * more than the key: a shared GPU's user, a --switches wait, an advance
 * reservation, a preemptor's claim (place.c). Returns its key, or 0. */
static uint64_t other_key(struct px_core *c, struct pxc_job *j) {
  struct pxc_tl *tl = &c->pol->tl;
  if (tl->other_memo_off || j->shape.share || j->switches || j->resv != PX_NONE ||
      pxc_may_claim(c, j))
    return 0;
  uint64_t h;
  pxc_job_hashes(c, j, &h, NULL);
  h = c->any_tenancy ? px_hash_u64(h ^ j->account) : h;
  return h ? h : 1;
}

static struct pxc_other_fail *other_slot(struct px_core *c, uint64_t key) {
  return &c->pol->tl.other_fail[key % (sizeof c->pol->tl.other_fail / sizeof c->pol->tl.other_fail[0])];
}

static bool other_failed(struct px_core *c, uint64_t key, uint32_t end) {
  const struct pxc_other_fail *f = other_slot(c, key);
  return key && f->key == key && f->cycle == c->stats.cycles && end >= f->end;
}

static void other_fails(struct px_core *c, uint64_t key, uint32_t end) {
  struct pxc_other_fail *f = other_slot(c, key);
  if (!key) return;
  if (f->key == key && f->cycle == c->stats.cycles && f->end <= end) return;
  *f = (struct pxc_other_fail){key, c->stats.cycles, end};
}

/* A node set free in the plan for j's whole limit from now, outside the
 * reservations j may not use: taken into res and the plan. */
static bool take_other_fit(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res, int64_t now) {
  struct pxc_tl *tl = &c->pol->tl;
  struct pxc_tl_fit fit;
  uint64_t key = other_key(c, j);
  uint32_t end = pxc_tl_end_slot(tl, 0, j->time_limit_s);
  if (other_failed(c, key, end)) return false;
  if (!pxc_tl_find(c, tl, j, 0, 1, true, &fit)) {
    other_fails(c, key, end);
    return false;
  }
  for (uint32_t i = 0; i < fit.nnodes; i++) {
    enum px_reason why;
    if (!pxc_resv_allows(c, j, fit.nodes[i], now, &why)) return false;
  }
  memcpy(res->nodes, fit.nodes, fit.nnodes * sizeof *fit.nodes);
  memcpy(res->units, fit.units, fit.nnodes * sizeof *fit.units);
  res->nnodes = fit.nnodes;
  pxc_tl_commit(c, tl, j, &fit);
  return true;
}

/* --time-min, as Slurm's backfill: a job that cannot run for its whole limit
 * without delaying a reservation ahead of it starts with the longest limit,
 * not below its TimeMin, that does not (rounded down to the plan's slots).
 * Not for an array record (its tasks would all inherit the cut). */
static bool shorten_to_fit(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res, int64_t now) {
  struct pxc_tl *tl = &c->pol->tl;
  if (!j->time_min_s || j->time_min_s >= j->time_limit_s || j->arr) return false;
  uint32_t kmin = pxc_tl_end_slot(tl, 0, j->time_min_s), kend = pxc_tl_end_slot(tl, 0, j->time_limit_s);
  if (kmin >= kend) return false;
  struct pxc_job t = *j;
  int64_t k = largest(c, &t, kmin, kend - 1, fits_now_time);
  if (!k) return false;
  int64_t limit = pxc_tl_slot_time(tl, (uint32_t)k) - tl->now, full = j->time_limit_s;
  if (limit < j->time_min_s) return false;
  j->time_limit_s = limit;
  if (take_other_fit(c, j, res, now)) return true;
  j->time_limit_s = full;
  return false;
}

/* A start took [0, its limit's end) from the plan during the pass, after
 * `before` takes (ntakes): if the pass was replaying, it goes on with that
 * noted in its bounds (another reservation, as search's), and its log
 * gets a start record (from 0, end_slot) that the next pass notes the same
 * way, both ways (its build has the job running, or not if it did not
 * start after all). */
static void log_start_taken(struct px_core *c, struct pxc_job *j, uint64_t before) {
  struct pxc_tl *tl = &c->pol->tl;
  if (!tl->log_started || before != tl->log_takes) return;
  uint32_t end = pxc_tl_end_slot(tl, 0, j->time_limit_s);
  if (end > tl->nslots) end = tl->nslots;
  differs_to(tl, end, false);
  tl->log_takes = tl->ntakes;
  struct pxc_tl_log *cur = &tl->log[tl->log_cur];
  struct pxc_tl_fit fit = {0, end, 0, tl->nodes, tl->units};
  uint64_t h;
  pxc_job_hashes(c, j, &h, NULL);
  if (cur->open && !log_put(c, cur, j, h, 0, true, &fit)) cur->open = false;
}

static bool may_start_taking(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res, int64_t now);

static bool bf_may_start(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res, int64_t now) {
  uint64_t before = c->pol->tl.ntakes;
  bool ok = may_start_taking(c, j, res, now);
  if (ok && c->pol->tl.ntakes != before) log_start_taken(c, j, before);
  return ok;
}

static bool may_start_taking(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res, int64_t now) {
  struct pxc_tl *tl = &c->pol->tl;
  if (!c->pol->plan_built) return true; /* no reservation yet (pxc_plan_ensure) */
  if (c->pol->tail) return false;  /* j was left in the queue when no job left could start */
  /* Inside its own reservation (resv.c opened it): the plan blocks the
   * window's nodes for every job, and no one else's plan can be on them. */
  if (j->resv != PX_NONE) return true;
  /* Under conservative backfill most starts now that the placer finds
   * cross a reservation, and no node set would do: counted first, neither
   * the placer's nodes nor another set is read. */
  if (c->sched.backfill == PX_BACKFILL_CONSERVATIVE && pxc_tl_now_short(c, tl, j))
    return shorten_to_fit(c, j, res, now);
  if (plan_allows(c, j, res)) {
    struct pxc_tl_fit fit = {0, pxc_tl_end_slot(tl, 0, j->time_limit_s), res->nnodes, res->nodes, res->units};
    pxc_tl_commit(c, tl, j, &fit);
    return true;
  }
  /* The placer's choice crosses a reservation: another node set, or a shorter limit, may not. */
  return take_other_fit(c, j, res, now) || shorten_to_fit(c, j, res, now);
}

static bool fits_now_nodes(struct px_core *c, struct pxc_job *t, int64_t n) {
  struct pxc_tl_fit fit;
  t->shape.units = t->shape.nmin = t->shape.nmax = (uint32_t)n;
  return pxc_tl_find(c, &c->pol->tl, t, 0, 1, false, &fit);
}

static bool in_bits(const uint64_t *set, uint32_t i) { return !set || (set[i / 64] >> (i % 64)) & 1; }

/* What would let j start now: a shorter limit, fewer nodes, another partition. */
static void make_hint(struct px_core *c, const struct pxc_job *j, bool reserved) {
  struct pxc_policy *pol = c->pol;
  struct pxc_tl *tl = &pol->tl;
  struct pxc_bf_hint *h = &pol->hints[pol->nhints++];
  *h = (struct pxc_bf_hint){.job_id = j->id, .other_part = PX_NONE, .reserved = reserved};
  struct pxc_job t = *j;
  uint32_t kend = pxc_tl_end_slot(tl, 0, j->time_limit_s);
  if (kend > 1) {
    int64_t k = largest(c, &t, 1, kend - 1, fits_now_time);
    if (k) h->max_time_s = pxc_tl_slot_time(tl, (uint32_t)k) - tl->now;
  }
  t = *j;
  if (j->shape.per_node_max == 1 && j->shape.nmin > 1)
    h->max_nodes = (uint32_t)largest(c, &t, 1, j->shape.nmin - 1, fits_now_nodes);
  for (uint32_t p = 0; p < c->nparts; p++) {
    const struct pxc_part *q = &c->parts[p];
    if (p == j->part || !q->up || j->time_limit_s > q->max_time_s || !in_bits(q->allow_acct, j->account) ||
        (q->deny_acct && in_bits(q->deny_acct, j->account)) || !in_bits(q->allow_qos, j->qos))
      continue;
    struct pxc_tl_fit fit;
    t = *j;
    t.part = (uint16_t)p;
    if (pxc_tl_find(c, tl, &t, 0, 1, true, &fit)) {
      h->other_part = p;
      break;
    }
  }
}

/* Blocked job j finds no room in the plan's window: its hint says so. */
static bool no_room(struct pxc_policy *pol, const struct pxc_job *j) {
  if (pol->nhints && pol->hints[pol->nhints - 1].job_id == j->id) pol->hints[pol->nhints - 1].reserved = false;
  return false;
}

static bool bf_blocked(struct px_core *c, struct pxc_job *j, int64_t now) {
  struct pxc_policy *pol = c->pol;
  struct pxc_tl *tl = &pol->tl;
  (void)now;
  pxc_plan_ensure(c);
  j->expected_start_s = 0;
  if (pxc_bf_tail_reached(c)) return false;
  bool reserve = c->sched.backfill == PX_BACKFILL_EASY ? !pol->part_resv[j->part]
                                                       : pol->nresv < c->sched.backfill_depth;
  /* the hint first: its searches reuse the fit scratch, and must not see j's own reservation.
   * Hints only explain (pxc_policy_why): with lazy reasons (the simulator) nobody reads them. */
  if (pol->nhints < PXC_BF_HINTS && !c->lazy_s) make_hint(c, j, reserve);
  /* An estimate only explains (squeue --start, why): with lazy reasons
   * nobody reads it, and a job that reserves nothing changes no start. */
  if (!reserve && c->lazy_s) return false;
  /* Its frontier first: when a smaller or shorter gang (or single-node job)
   * found no room this cycle, nor will j, and there is nothing to record
   * (front_put would add an entry that one already there covers; the
   * cursor, keyed by its own limit, is not read again: limits are most
   * often the job's own). Most blocked jobs of an overloaded queue end
   * here, each cycle. (replay_off: tests, the reference core goes on.) */
  uint32_t front_at, gf = front_get(c, j, &front_at), from = 1;
  if (gf >= tl->nslots && !tl->replay_off) return no_room(pol, j);
  uint64_t key = kind_key(c, j);
  pxc_map_get(&pol->cursor, key, &from);
  if (gf > from) from = gf;
  struct pxc_tl_fit fit;
  bool found = from < tl->nslots && search(c, j, from < 1 ? 1 : from, &fit);
  pxc_map_put(c, &pol->cursor, key, found ? fit.slot : tl->nslots); /* best effort: a cache */
  front_put(c, j, found ? fit.slot : tl->nslots, front_at);
  if (!found) return no_room(pol, j);
  j->expected_start_s = pxc_tl_slot_time(tl, fit.slot);
  if (reserve) {
    bool logged = tl->ntakes == tl->log_takes;
    pxc_tl_commit(c, tl, j, &fit);
    if (logged) tl->log_takes = tl->ntakes; /* the next search's plan: the log's commits only */
    pol->nresv++;
    pol->part_resv[j->part] = true;
  }
  return false;
}

const struct pxc_reserve_stage pxc_reserve_backfill = {"backfill", bf_begin, bf_blocked, bf_may_start};

const struct pxc_bf_hint *pxc_bf_hint_get(const struct px_core *c, uint64_t job_id) {
  const struct pxc_policy *pol = c->pol;
  for (uint32_t i = 0; pol && i < pol->nhints; i++)
    if (pol->hints[i].job_id == job_id) return &pol->hints[i];
  return NULL;
}
