/*
 * kept.c - the LAS order kept between cycles (policy.h, struct pxc_kept),
 * and the simulator's FIFO order (pxc_kept_wanted), a special case: the key
 * (partition tier, submit time, id) without queues or promotions.
 *
 * A pending job's LAS key (partition tier, queue, submit time, id) changes
 * only when it is queued (submit, requeue) or promoted (LasStarveLimit: at a
 * time computable from its fields), and its gate verdict only at events
 * (hold, release, update, partition state), unless it has dependencies or a
 * begin time still ahead. So the eligible jobs stay sorted between cycles:
 * jobs.c reports arrivals and departures, a min-heap holds the earliest
 * promotion time of each kept job, and a cycle merges the arrivals in and
 * copies the order instead of reading every pending record.
 *
 * Equality with the full pass (cycle.c, queue_eligible) is kept by refusing
 * what is not handled: a hold, a release or an update (jobs.c), a job whose
 * gate verdict can change with time or with other jobs (dependencies, begin
 * time), a change of the partitions' state, limits or tiers or of the
 * scheduler's configuration (a fingerprint read each cycle) all invalidate
 * the kept order, and the next cycle's full pass rebuilds it.
 */
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"
#include "util/map.h"

/* LAS; and FIFO where its key is all a cycle computes (fifo_key: lazy
 * reasons and no victims stage, the simulator's FIFO): a key that never
 * changes. Strict FIFO on Philly spent 90% of its replay gating, keying
 * and heapifying a queue of tens of thousands behind a blocked head
 * (27.1 s CPU; 3.3 s kept, the report byte-identical). */
bool pxc_kept_wanted(const struct px_core *c) {
  if (!c->pol || c->pol->kept.off) return false;
  return c->sched.order == PX_ORDER_LAS || (c->sched.order == PX_ORDER_FIFO && c->lazy_s && !c->victims->find);
}

static struct pxc_kept *kept(struct px_core *c) { return &c->pol->kept; }

void pxc_kept_invalidate(struct px_core *c) {
  if (c->pol) c->pol->kept.valid = false;
  c->gent_valid = false; /* the multifactor queue's gate verdicts too (gated.c) */
}

static bool nogpu(const struct pxc_job *j) { return pxc_job_ngpu(j) == 0 || j->shape.share; }

/* policy.h */
uint64_t pxc_kept_fingerprint(const struct px_core *c) {
  uint64_t h = px_hash_u64(c->nparts ^ (uint64_t)c->lazy_s << 20);
  for (uint32_t p = 0; p < c->nparts; p++) {
    const struct pxc_part *q = &c->parts[p];
    h = px_hash_u64(h ^ (uint64_t)q->max_time_s);
    h = px_hash_u64(h ^ ((uint64_t)q->tier << 1 | q->up));
  }
  const unsigned char *b = (const unsigned char *)&c->sched;
  for (size_t i = 0; i + 8 <= sizeof c->sched; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    h = px_hash_u64(h ^ w);
  }
  h = px_hash_u64(h ^ (uint64_t)(uintptr_t)c->victims->find ^ c->pol->victims_live);
  return px_hash_u64(h ^ (uint64_t)(uintptr_t)c->order);
}

/* ---- the order: descending, popped from the end --------------------------- */

/* The index of j's entry in v (its natural key kept in the job), or n. */
static size_t find(const struct pxc_kept *k, const struct pxc_job *j) {
  struct pxc_sortent key = {.k1 = j->kept_k1, .k2 = (uint64_t)j->submit_s ^ (1ULL << 63), .id = j->id};
  size_t lo = 0, hi = k->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (pxc_sortent_before(&k->v[mid], &key)) hi = mid;
    else if (pxc_sortent_before(&key, &k->v[mid])) lo = mid + 1;
    else return mid;
  }
  return k->n;
}

static int cmp_desc(const void *a, const void *b) {
  const struct pxc_sortent *x = a, *y = b;
  return pxc_sortent_before(y, x) ? -1 : pxc_sortent_before(x, y) ? 1 : 0;
}

/* v (without the jobs that left) and add[0 .. m) (sorted) into w; swap. */
static int merge(struct px_core *c, size_t m) {
  struct pxc_kept *k = kept(c);
  if (PXC_GROW(c, k->w, &k->wcap, k->n - k->ndead + m + 1)) return PX_ENOMEM;
  size_t i = 0, a = 0, o = 0;
  while (i < k->n || a < m) {
    if (i < k->n && k->v[i].slot == PX_NONE) {
      i++;
      continue;
    }
    bool take_v = a == m || (i < k->n && pxc_sortent_before(&k->add[a], &k->v[i]));
    k->w[o++] = take_v ? k->v[i++] : k->add[a++];
  }
  struct pxc_sortent *t = k->v;
  size_t tc = k->cap;
  k->v = k->w, k->cap = k->wcap, k->n = o, k->ndead = 0;
  k->w = t, k->wcap = tc;
  return 0;
}

/* ---- promotion times -------------------------------------------------------- */

static void promo_down(struct pxc_kept_promo *h, size_t n, size_t i) {
  struct pxc_kept_promo x = h[i];
  for (;;) {
    size_t l = 2 * i + 1;
    if (l >= n) break;
    if (l + 1 < n && h[l + 1].t_s < h[l].t_s) l++;
    if (h[l].t_s >= x.t_s) break;
    h[i] = h[l];
    i = l;
  }
  h[i] = x;
}

static int promo_push(struct px_core *c, const struct pxc_job *j, int64_t t_s) {
  struct pxc_kept *k = kept(c);
  if (t_s == INT64_MAX) return 0;
  if (PXC_GROW(c, k->promo, &k->promo_cap, k->npromo + 1)) return PX_ENOMEM;
  size_t i = k->npromo++;
  while (i && k->promo[(i - 1) / 2].t_s > t_s) {
    k->promo[i] = k->promo[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  k->promo[i] = (struct pxc_kept_promo){t_s, j->id, (uint32_t)(j - c->jobs)};
  return 0;
}

/* ---- arrivals and departures (jobs.c) --------------------------------------- */

static int queue_job(struct px_core *c, struct pxc_job *j) {
  struct pxc_kept *k = kept(c);
  if (PXC_GROW(c, k->add, &k->add_cap, k->nadd + 1)) return PX_ENOMEM;
  k->add[k->nadd++] = (struct pxc_sortent){.id = j->id, .slot = (uint32_t)(j - c->jobs)};
  j->kept = PXC_KEPT_QUEUED;
  return 0;
}

void pxc_kept_added(struct px_core *c, struct pxc_job *j) {
  j->kept = PXC_KEPT_NONE;
  if (c->pol && c->pol->qos_pending) c->pol->qos_pending[j->qos]++; /* a job's QoS never changes */
  if (c->pol && kept(c)->valid && queue_job(c, j)) pxc_kept_invalidate(c);
}

/* A kept job leaves the order (its entry becomes a hole until the next merge). */
static void unkeep(struct px_core *c, struct pxc_job *j) {
  struct pxc_kept *k = kept(c);
  size_t i = find(k, j);
  if (i == k->n) { /* cannot be: trust nothing kept */
    pxc_kept_invalidate(c);
    return;
  }
  k->v[i].slot = PX_NONE;
  k->ndead++;
  k->part_n[j->part]--;
  k->nogpu -= nogpu(j);
}

void pxc_kept_removed(struct px_core *c, struct pxc_job *j) {
  if (c->pol && c->pol->qos_pending && c->pol->qos_pending[j->qos]) c->pol->qos_pending[j->qos]--;
  if (c->pol && kept(c)->valid && j->kept == PXC_KEPT_IN) unkeep(c, j);
  j->kept = PXC_KEPT_NONE;
}

/* ---- the full pass rebuilds it (cycle.c) ----------------------------------- */

static bool volatile_gate(const struct pxc_job *j, enum px_reason r) {
  return j->deps || r == PX_REASON_BEGIN_TIME || r == PX_REASON_DEPENDENCY || r == PX_REASON_DEP_NEVER;
}

void pxc_kept_rebuild_begin(struct px_core *c) {
  struct pxc_kept *k = kept(c);
  k->n = k->ndead = k->nadd = k->npromo = k->nogpu = 0;
  k->valid = pxc_kept_wanted(c) && !PXC_GROW(c, k->v, &k->cap, c->npending + 1) &&
             !PXC_GROW(c, k->part_n, &k->part_cap, c->nparts + 1);
  if (k->valid) memset(k->part_n, 0, c->nparts * sizeof *k->part_n);
}

/* Keeps an eligible job's entry: its part count, its promotion time. */
static int keep(struct px_core *c, struct pxc_job *j, const struct pxc_sortent *e) {
  struct pxc_kept *k = kept(c);
  struct pxc_policy *pol = c->pol;
  if (PXC_GROW(c, pol->bf_jobs, &pol->bf_jobs_cap, c->njob_slots + 1)) return PX_ENOMEM;
  pxc_bf_job_of(j, &pol->bf_jobs[j - c->jobs]);
  j->kept = PXC_KEPT_IN;
  j->kept_k1 = e->k1;
  k->part_n[j->part]++;
  k->nogpu += nogpu(j);
  return promo_push(c, j, pxc_las_promote_from(c, j));
}

void pxc_kept_rebuild_job(struct px_core *c, struct pxc_job *j, enum px_reason r, const struct pxc_sortent *e) {
  struct pxc_kept *k = kept(c);
  if (!k->valid) return;
  if (volatile_gate(j, r)) {
    k->valid = false;
    return;
  }
  j->kept = r == PX_REASON_NONE ? PXC_KEPT_IN : PXC_KEPT_GATED;
  if (r != PX_REASON_NONE) return;
  k->v[k->n++] = *e; /* sized by rebuild_begin */
  if (keep(c, j, e)) k->valid = false;
}

void pxc_kept_rebuild_end(struct px_core *c) {
  struct pxc_kept *k = kept(c);
  if (!k->valid) return;
  if (k->n > 1) qsort(k->v, k->n, sizeof *k->v, cmp_desc);
  k->fp = pxc_kept_fingerprint(c);
}

/* ---- a cycle from the kept order -------------------------------------------- */

/* The job a queued or promotion entry names, if it is still that job in that state. */
static struct pxc_job *live(struct px_core *c, uint32_t slot, uint64_t id, uint8_t want) {
  if (slot >= c->njob_slots) return NULL;
  struct pxc_job *j = &c->jobs[slot];
  return j->id == id && j->state == PX_JOB_PENDING && j->kept == want ? j : NULL;
}

/* Promotions due by now: a promoted job is queued again (its queue changed);
 * one not yet due goes back with the next second. */
static int promote_due(struct px_core *c, int64_t now) {
  struct pxc_kept *k = kept(c);
  while (k->npromo && k->promo[0].t_s <= now) {
    struct pxc_kept_promo p = k->promo[0];
    k->promo[0] = k->promo[--k->npromo];
    if (k->npromo) promo_down(k->promo, k->npromo, 0);
    struct pxc_job *j = live(c, p.slot, p.id, PXC_KEPT_IN);
    if (!j) continue;
    int rc = 0;
    if (pxc_las_promote(c, j, now)) {
      unkeep(c, j);
      rc = queue_job(c, j);
    } else {
      rc = promo_push(c, j, pxc_las_promote_from(c, j) == INT64_MAX ? INT64_MAX : now + 1);
    }
    if (rc) return rc;
  }
  return 0;
}

/* Gates and keys the queued jobs, as the full pass would; they end sorted
 * in add[0 .. *m). Returns false when one of them cannot be kept. */
static bool key_queued(struct px_core *c, int64_t now, size_t *m) {
  struct pxc_kept *k = kept(c);
  size_t o = 0;
  for (size_t i = 0; i < k->nadd; i++) {
    struct pxc_sortent e = k->add[i];
    struct pxc_job *j = live(c, e.slot, e.id, PXC_KEPT_QUEUED);
    if (!j) continue;
    enum px_reason r = pxc_gate(c, j, now);
    if (volatile_gate(j, r)) return false;
    if (r != PX_REASON_NONE) {
      j->reason = r;
      j->priority = 0;
      j->kept = PXC_KEPT_GATED;
      continue;
    }
    e.part = j->part;
    c->order->key(c, j, now, &e.k1, &e.k2);
    if (keep(c, j, &e)) return false;
    k->add[o++] = e;
  }
  if (o > 1) qsort(k->add, o, sizeof *k->add, cmp_desc);
  *m = o;
  return true;
}

/* Indexes (ascending) of the kept jobs that preempted: their key is 0
 * (pxc_policy_key); listed in idx, returns how many. */
static size_t preemptors(struct px_core *c, size_t *idx, size_t cap) {
  const struct pxc_map *m = &c->pol->preemptor_ids;
  size_t n = 0;
  for (size_t i = 0; m->len && i < m->cap && n < cap; i++) {
    if (m->keys[i] == UINT64_MAX) continue;
    const struct pxc_job *j = pxc_job_find(c, m->keys[i]);
    if (!j || j->state != PX_JOB_PENDING || j->kept != PXC_KEPT_IN) continue;
    size_t at = find(&c->pol->kept, j);
    if (at < c->pol->kept.n) idx[n++] = at;
  }
  for (size_t i = 1; i < n; i++) /* few: insertion */
    for (size_t h = i; h && idx[h - 1] > idx[h]; h--) {
      size_t t = idx[h];
      idx[h] = idx[h - 1], idx[h - 1] = t;
    }
  return n;
}

/* c->sort = the kept order with the preemptors' keys set to 0. */
static size_t copy_out(struct px_core *c) {
  struct pxc_kept *k = kept(c);
  size_t idx[64];
  size_t np = preemptors(c, idx, 64);
  if (np == 64) return SIZE_MAX; /* more than handled here: the full pass */
  size_t o = 0, from = 0;
  for (size_t p = 0; p < np; from = idx[p++] + 1) {
    memcpy(c->sort + o, k->v + from, (idx[p] - from) * sizeof *c->sort);
    o += idx[p] - from;
  }
  memcpy(c->sort + o, k->v + from, (k->n - from) * sizeof *c->sort);
  o += k->n - from;
  for (size_t p = 0; p < np; p++) { /* key 0: near the end; insertion from there */
    struct pxc_sortent e = k->v[idx[p]];
    e.k1 = 0;
    size_t h = o++;
    for (; h && !pxc_sortent_before(&e, &c->sort[h - 1]); h--) c->sort[h] = c->sort[h - 1];
    c->sort[h] = e;
  }
  return o;
}

size_t pxc_kept_fill(struct px_core *c, int64_t now) {
  struct pxc_kept *k = kept(c);
  if (!k->valid || !pxc_kept_wanted(c)) return SIZE_MAX;
  size_t m = 0;
  if (pxc_kept_fingerprint(c) != k->fp || promote_due(c, now) || !key_queued(c, now, &m) || merge(c, m)) {
    k->valid = false;
    return SIZE_MAX;
  }
  k->nadd = 0;
  if (PXC_GROW(c, k->snap, &k->snap_cap, c->npending + 1)) return SIZE_MAX;
  if (c->npending) memcpy(k->snap, c->pending, c->npending * sizeof *k->snap);
  k->nsnap = c->npending;
  size_t n = copy_out(c);
  if (n == SIZE_MAX) return SIZE_MAX; /* the full pass rebuilds it */
  memcpy(c->part_left, k->part_n, c->nparts * sizeof *c->part_left);
  c->nogpu_eligible = k->nogpu;
  return n;
}
