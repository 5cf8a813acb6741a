/*
 * cycle.c - one scheduling cycle: gate -> order -> admit -> place -> start.
 *
 *   gate   holds, begin time, dependencies, partition state and time limit:
 *          jobs stopped here get their reason and are not sorted
 *   order  the order stage's key; one sort of the eligible jobs
 *   admit  limits (limits.c)
 *   place  placement (place.c); a failure is handed to the reserve stage,
 *          which by default holds back the rest of the partition (reason
 *          Priority), and to the victims stage (none by default)
 *
 * Work is bounded: the fair-share pass is O(account tree), the sort
 * O(p log p) for p eligible jobs, admission O(depth) per job, and placement
 * runs at most once per partition once it is full (the reserve stage), while
 * identical shapes that already failed this cycle are not tried again (a
 * cycle only ever takes resources, so a shape that did not fit still does
 * not).
 */
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "core/policy.h"
#include "util/map.h"

/* Updates the dependency list; returns the gate reason or NONE. */
static enum px_reason deps_gate(struct px_core *c, struct pxc_job *j) {
  struct pxc_deps *d = j->deps;
  if (!d) return PX_REASON_NONE;
  uint32_t sat = 0, never = 0;
  for (uint32_t i = 0; i < d->n; i++) {
    struct pxc_dep *x = &d->d[i];
    if (x->kind == PXC_DEP_SINGLETON) {
      x->done = j->name == PX_NONE ||
                !pxc_map_get(&c->singleton_running, (uint64_t)j->user << 32 | j->name, NULL);
    } else if (x->done == 0) {
      const struct pxc_job *t = pxc_job_find(c, x->job_id);
      const struct pxc_finished *f = t ? NULL : pxc_finished_get(c, x->job_id);
      if (t) {
        if (x->kind == PXC_DEP_AFTER && t->state == PX_JOB_RUNNING && !t->arr) x->done = 1;
      } else if (!f) {
        x->done = 1; /* forgotten long ago: nothing left to wait for */
      } else if (x->kind == PXC_DEP_AFTEROK) {
        x->done = f->ok ? 1 : 2;
      } else if (x->kind == PXC_DEP_AFTERNOTOK) {
        x->done = f->ok ? 2 : 1;
      } else {
        x->done = 1;
      }
    }
    sat += x->done == 1;
    never += x->done == 2;
  }
  if (d->any ? sat > 0 : sat == d->n) return PX_REASON_NONE;
  if (d->any ? never == d->n : never > 0) return PX_REASON_DEP_NEVER;
  return PX_REASON_DEPENDENCY;
}

enum px_reason pxc_gate(struct px_core *c, struct pxc_job *j, int64_t now) {
  if (j->flags & PXC_F_HELD_ADMIN) return PX_REASON_HELD_ADMIN;
  if (j->flags & PXC_F_HELD_USER) return PX_REASON_HELD_USER;
  if (j->begin_s > now) return PX_REASON_BEGIN_TIME;
  enum px_reason r = deps_gate(c, j);
  if (r != PX_REASON_NONE) return r;
  const struct pxc_part *p = &c->parts[j->part];
  if (!p->up) return PX_REASON_PARTITION_DOWN;
  if (j->time_limit_s > p->max_time_s && !(j->flags & PXC_F_SERVICE)) return PX_REASON_PARTITION_TIME_LIMIT;
  if (!j->eligible_s) {
    int64_t e = j->submit_s > j->begin_s ? j->submit_s : j->begin_s;
    j->eligible_s = j->deps || (j->flags & PXC_F_AGE_RESET) ? now : e;
  }
  return PX_REASON_NONE;
}

/* Heap order: pxc_sortent_before. */
static inline bool before(const struct pxc_sortent *x, const struct pxc_sortent *y) {
  return pxc_sortent_before(x, y);
}

static void sift_down(struct pxc_sortent *h, size_t n, size_t i) {
  struct pxc_sortent x = h[i];
  for (;;) {
    size_t k = 2 * i + 1;
    if (k >= n) break;
    if (k + 1 < n && before(&h[k + 1], &h[k])) k++;
    if (!before(&h[k], &x)) break;
    h[i] = h[k];
    i = k;
  }
  h[i] = x;
}

static struct pxc_sortent heap_pop(struct pxc_sortent *h, size_t *n) {
  struct pxc_sortent top = h[0];
  h[0] = h[--*n];
  if (*n) sift_down(h, *n, 0);
  return top;
}

static double billing(const struct px_core *c, const struct pxc_job *j) {
  return pxc_alloc_billing(c, j->qos, j->alloc, j->nalloc);
}

/* Makes j RUNNING on res and appends its START action. */
static int start(struct px_core *c, struct pxc_job *j, const struct pxc_place_result *res,
                 int64_t now, struct px_actions *out) {
  uint32_t nwords = 0;
  for (uint32_t i = 0; i < res->nnodes; i++) nwords += (c->nodes[res->nodes[i]].cpus + 63) / 64;
  if (pxc_actions_reserve(out, 1, res->nnodes, nwords)) return PX_ENOMEM;
  if (j->name != PX_NONE && pxc_map_reserve(c, &c->singleton_running, 1)) return PX_ENOMEM;
  int rc = pxc_place_commit(c, j, res);
  if (rc) return rc;
  struct px_action *a = &out->v[out->len++];
  *a = (struct px_action){.kind = PX_ACT_START, .reason = PX_REASON_NONE, .job_id = j->id,
                          .array_job_id = j->task_id != PX_NONE ? j->array_id : 0,
                          .array_task_id = j->task_id, .alloc_first = (uint32_t)out->nallocs,
                          .nalloc = j->nalloc, .time_limit_s = j->time_limit_s,
                          .backfilled = c->part_passed[j->part],
                          .waited_topology = (j->flags & PXC_F_TOPO_WAIT) != 0};
  c->stats.backfilled += a->backfilled;
  for (uint32_t i = 0; i < j->nalloc; i++) {
    struct px_alloc x = j->alloc[i];
    x.cpu_word += (uint32_t)out->ncpu_words;
    out->allocs[out->nallocs++] = x;
  }
  memcpy(out->cpu_words + out->ncpu_words, j->cpu_words, j->ncpu_words * sizeof *j->cpu_words);
  out->ncpu_words += j->ncpu_words;
  j->state = PX_JOB_RUNNING;
  j->reason = PX_REASON_NONE;
  j->start_s = now;
  pxc_limits_count(c, j, +1);
  j->billing = billing(c, j);
  pxc_fs_charge(c, j->assoc, j->billing, now);
  if (j->name != PX_NONE) {
    uint64_t key = (uint64_t)j->user << 32 | j->name;
    uint32_t n = 0;
    pxc_map_get(&c->singleton_running, key, &n);
    pxc_map_put(c, &c->singleton_running, key, n + 1); /* reserved above */
  }
  c->stats.started++;
  pxc_running_started(c, (uint32_t)(j - c->jobs));
  if (c->claim_of) pxc_claim_end(c, j->task_id != PX_NONE ? j->array_id : j->id);
  return 0;
}

int pxc_task_new(struct px_core *c, uint32_t slot, uint32_t *ts) {
  uint64_t id = c->jobs[slot].id + 1 + c->jobs[slot].arr->next;
  if (pxc_job_find(c, id)) return PX_EEXIST;
  if (pxc_map_reserve(c, &c->job_by_id, 1) || pxc_slot_new(c, ts)) return PX_ENOMEM;
  const struct pxc_job *r = &c->jobs[slot]; /* the slab may have moved */
  struct pxc_job *t = &c->jobs[*ts];
  *t = *r;
  t->id = id;
  t->task_id = pxc_array_task_at(r->arr, r->arr->next);
  t->arr = NULL;
  t->deps = NULL;
  t->pend_pos = PX_NONE;
  return 0;
}

void pxc_array_task_began(struct px_core *c, struct pxc_job *r) {
  r->arr->next++;
  r->arr->running++;
  if (r->arr->next == r->arr->ntasks) {
    pxc_pending_remove(c, r);
    r->state = PX_JOB_RUNNING; /* bookkeeping record until its tasks end */
  }
}

void pxc_task_settle(struct px_core *c, uint32_t ts, bool started) {
  struct pxc_job *t = &c->jobs[ts];
  if (started && t->state != PX_JOB_RUNNING) pxc_running_unseen(c); /* restore.c: made RUNNING after */
  if (started) {
    pxc_map_put(c, &c->job_by_id, t->id, ts); /* reserved by pxc_task_new */
    c->nlive++;
    return;
  }
  memset(t, 0, sizeof *t);
  t->state = 0xff;
  c->free_slots[c->nfree++] = ts;
}

/* Starts the next task of array record at slot; the record leaves the queue
 * when its last task starts. */
static int start_task(struct px_core *c, uint32_t slot, const struct pxc_place_result *res,
                      int64_t now, struct px_actions *out) {
  uint32_t ts;
  int rc = pxc_task_new(c, slot, &ts);
  if (rc) return rc;
  rc = start(c, &c->jobs[ts], res, now, out);
  pxc_task_settle(c, ts, rc == 0);
  if (rc) return rc;
  struct pxc_job *r = &c->jobs[slot];
  pxc_array_task_began(c, r);
  return 0;
}

/* A singleton namesake may have started earlier in this cycle. Under '?'
 * (any one term suffices) another term the gate found met frees the job of
 * its singleton term, as it did at the gate. */
static bool singleton_busy(const struct px_core *c, const struct pxc_job *j) {
  const struct pxc_deps *d = j->deps;
  if (!d || j->name == PX_NONE) return false;
  bool singleton = false;
  for (uint32_t i = 0; i < d->n; i++) {
    if (d->d[i].kind == PXC_DEP_SINGLETON) singleton = true;
    else if (d->any && d->d[i].done == 1) return false;
  }
  return singleton && pxc_map_get(&c->singleton_running, (uint64_t)j->user << 32 | j->name, NULL);
}

static uint64_t fail_key(const struct px_core *c, const struct pxc_job *j) {
  uint64_t h = pxc_shape_hash(j); /* not memoised: the job's cold line would be one more miss */
  return (c->any_tenancy ? px_hash_u64(h ^ j->account) : h) & (UINT64_MAX >> 1);
}

/* Why j cannot even try to start now (singleton, limits, %N, its partition
 * held back, the start budget), or NONE. */
static enum px_reason held_back(struct px_core *c, struct pxc_job *j) {
  uint32_t wa = 0, wb = 0;
  enum px_reason r = singleton_busy(c, j) ? PX_REASON_DEPENDENCY : pxc_admit(c, j, &wa, &wb);
  if (r == PX_REASON_NONE) r = pxc_quota_admit(c, j, &wa, &wb); /* issue 4 */
  if (r == PX_REASON_NONE && j->arr && j->arr->max_running && j->arr->running >= j->arr->max_running)
    r = PX_REASON_ARRAY_TASK_LIMIT;
  if (r == PX_REASON_NONE && (c->part_blocked[j->part] || c->stats.started >= c->budget_end))
    r = PX_REASON_PRIORITY;
  if (r != PX_REASON_NONE) j->reason = r, j->why_a = wa, j->why_b = wb;
  return r;
}

/* Free GPUs on usable nodes of j's partition (of its GPU type, if any). */
uint64_t pxc_part_free_gpus(const struct px_core *c, const struct pxc_job *j) {
  const struct pxc_part *part = &c->parts[j->part];
  uint64_t free = 0;
  for (uint32_t pi = part->pool_first; pi < part->pool_first + part->npools; pi++) {
    const struct pxc_pool *p = &c->pools[pi];
    if (!pxc_pool_matches(j, p)) continue;
    for (uint32_t k = 1; k <= p->maxg; k++) free += (uint64_t)k * p->count[k];
  }
  return free;
}

/* Is there a usable node with a free GPU anywhere? */
static bool any_free_gpu(const struct px_core *c) {
  for (uint32_t pi = 0; pi < c->npools; pi++)
    for (uint32_t k = 1; k <= c->pools[pi].maxg; k++)
      if (c->pools[pi].count[k]) return true;
  return false;
}

/* j found no room (fresh, or its shape failed earlier this cycle): its
 * reason, the fail cache, the topology flag, then the reserve and victims
 * stages. */
static int place_failed(struct px_core *c, struct pxc_job *j, enum px_reason why, uint64_t fk,
                        bool cached, int64_t now, struct px_actions *out) {
  if (cached) {
    uint32_t v;
    pxc_map_get(&c->fail_shapes, fk, &v);
    why = (enum px_reason)v;
    c->stats.shape_cache_hits++;
  } else if (why == PX_REASON_RESOURCES) {
    if (!pxc_fits_static(c, j, true)) why = PX_REASON_REQ_NODE_NOT_AVAIL;
    if (!j->switches) pxc_map_put(c, &c->fail_shapes, fk, why); /* best effort: a cache */
  }
  j->reason = why;
  j->why_a = j->shape.units;
  j->why_b = why == PX_REASON_TOPOLOGY ? j->switches : 0;
  if ((why == PX_REASON_RESOURCES || why == PX_REASON_TOPOLOGY) && !(j->flags & PXC_F_TOPO_WAIT) &&
      pxc_job_ngpu(j) && pxc_part_free_gpus(c, j) >= pxc_job_ngpu(j))
    j->flags |= PXC_F_TOPO_WAIT;
  if (why != PX_REASON_REQ_NODE_NOT_AVAIL) {
    if (c->reserve->blocked(c, j, now)) c->part_blocked[j->part] = true;
    else c->part_passed[j->part] = true; /* later jobs of the partition start past it */
  }
  return c->pol->victims_live ? c->victims->find(c, j, now, out) : 0;
}

/* Starts a job that is not an array record. */
static int start_job(struct px_core *c, struct pxc_job *j, const struct pxc_place_result *res,
                     int64_t now, struct px_actions *out) {
  int rc = start(c, j, res, now, out);
  if (rc) return rc;
  pxc_pending_remove(c, j);
  if (j->task_id != PX_NONE) { /* a requeued array task counts against %N again */
    struct pxc_job *rec = pxc_job_find(c, j->array_id);
    if (rec && rec->arr) rec->arr->running++;
  }
  return 0;
}

/* Within the pass's tail no job starts (backfill_tail.c): the nodes stay as
 * they are, so the placement found for one job is found again for the next
 * of the same shape (fail_key: what placement reads but a gang's --switches
 * wait and a shared GPU's user), which the reserve stage then holds back
 * (the plan's reservations). A deep queue under LAS tries millions of them
 * (free GPUs kept for a preemptor). Kept while nothing starts and no action
 * (a preemption) is added. */
static int tail_find(struct px_core *c, struct pxc_job *j, uint64_t fk, const struct px_actions *out,
                     struct pxc_place_result *res) {
  struct pxc_policy *pol = c->pol;
  if (!pol->fits_on || pol->fits_off || j->switches || j->shape.share || pxc_may_claim(c, j))
    return pxc_place_find(c, j, res);
  if (pol->fits_started != c->stats.started || pol->fits_out != out->len)
    pol->nfits = pol->fit_len = 0, pol->fits_started = c->stats.started, pol->fits_out = out->len;
  for (size_t i = 0; i < pol->nfits; i++) {
    const struct pxc_fit_memo *m = &pol->fits[i];
    if (m->key != fk) continue;
    res->nodes = c->pl_nodes, res->units = c->pl_units, res->nnodes = m->nnodes;
    res->fail = PX_REASON_RESOURCES;
    memcpy(res->nodes, pol->fit_nu + m->off, m->nnodes * sizeof *res->nodes);
    memcpy(res->units, pol->fit_nu + m->off + m->nnodes, m->nnodes * sizeof *res->units);
    return 0;
  }
  int rc = pxc_place_find(c, j, res);
  if (rc || pol->nfits == PXC_FIT_MEMO || PXC_GROW(c, pol->fits, &pol->fits_cap, pol->nfits + 1) ||
      PXC_GROW(c, pol->fit_nu, &pol->fit_cap, pol->fit_len + 2 * res->nnodes + 1))
    return rc; /* not memoised: a cache */
  pol->fits[pol->nfits++] = (struct pxc_fit_memo){fk, res->nnodes, (uint32_t)pol->fit_len};
  memcpy(pol->fit_nu + pol->fit_len, res->nodes, res->nnodes * sizeof *res->nodes);
  memcpy(pol->fit_nu + pol->fit_len + res->nnodes, res->units, res->nnodes * sizeof *res->units);
  pol->fit_len += 2 * res->nnodes;
  return 0;
}

/* Tries to place and start the job at slot (an array record: task after
 * task); sets its reason when it cannot start. */
static int try_job(struct px_core *c, uint32_t slot, int64_t now, struct px_actions *out) {
  if (c->gent_live) c->jobs[slot].priority = c->gent[c->jobs[slot].pend_pos].prio; /* gated.c */
  for (;;) {
    struct pxc_job *j = &c->jobs[slot];
    if (held_back(c, j) != PX_REASON_NONE) return 0;
    uint64_t fk = fail_key(c, j);
    struct pxc_place_result res;
    bool cached = !j->switches && pxc_map_get(&c->fail_shapes, fk, NULL) && !pxc_may_claim(c, j);
    int rc = cached ? 1 : tail_find(c, j, fk, out, &res);
    if (rc < 0) return rc;
    if (rc) return place_failed(c, j, cached ? PX_REASON_RESOURCES : res.fail, fk, cached, now, out);
    enum px_reason r = pxc_resv_filter(c, j, &res, now); /* issue 4: advance reservations */
    if (r != PX_REASON_NONE) return place_failed(c, j, r, fk, false, now, out);
    uint32_t wa = 0, wb = 0;
    r = pxc_admit_placement(c, j, &res, &wa, &wb);
    if (r != PX_REASON_NONE) { /* e.g. --exclusive takes more than it asked */
      j->reason = r, j->why_a = wa, j->why_b = wb;
      return 0;
    }
    if (!c->reserve->may_start(c, j, &res, now)) return place_failed(c, j, PX_REASON_PRIORITY, fk, false, now, out);
    if (!j->arr) return start_job(c, j, &res, now, out);
    if ((rc = start_task(c, slot, &res, now, out))) return rc;
    if (c->jobs[slot].state != PX_JOB_PENDING) return 0;
  }
}

/* The hot 128 bytes of a job record (it may straddle three lines). */
static inline void prefetch_job(const struct pxc_job *j) {
  const char *p = (const char *)j;
  __builtin_prefetch(p);
  __builtin_prefetch(p + 64);
  __builtin_prefetch(p + 127);
}

/* Queue passes stream the records: fetch the record sixteen places ahead. */
static inline void prefetch_ahead(const struct px_core *c, size_t i) {
  if (i + 16 < c->npending) prefetch_job(&c->jobs[c->pending[i + 16]]);
}

/* Gates and keys pending job i from its record: when eligible, its entry
 * c->sort[(*n)++]. keep: the LAS order's rebuild; gated: the multifactor
 * queue's entries (gated.c). */
static void gate_key(struct px_core *c, size_t i, size_t *n, int64_t now, bool keep, bool gated) {
  struct pxc_job *j = &c->jobs[c->pending[i]];
  enum px_reason r = pxc_gate(c, j, now);
  if (r != PX_REASON_NONE) {
    j->reason = r;
    j->priority = 0;
    if (keep) pxc_kept_rebuild_job(c, j, r, NULL);
    if (gated) pxc_gated_note(c, i, j, r);
    return;
  }
  struct pxc_sortent *e = &c->sort[(*n)++];
  j->mark = (uint32_t)c->stats.cycles;
  c->nogpu_eligible += pxc_job_ngpu(j) == 0 || j->shape.share; /* a fraction may fit a shared GPU */
  e->slot = c->pending[i];
  e->id = j->id;
  e->part = j->part;
  c->part_left[j->part]++;
  c->order->key(c, j, now, &e->k1, &e->k2);
  if (keep) pxc_kept_rebuild_job(c, j, r, e);
  if (gated) pxc_gated_note(c, i, j, r);
  pxc_policy_key(c, j->id, &e->k1); /* issue 4: jobs that preempted go first */
}

/* The cycle's queue from the gated entries (gated.c): the jobs and keys
 * gate_key would give, in the same order, reading no record but those
 * of jobs not yet gated or gated again every cycle. */
static size_t queue_gated(struct px_core *c, int64_t now) {
  size_t n = 0;
  c->gent_live = true;
  pxc_gated_fs(c);
  for (size_t i = 0; i < c->npending; i++) {
    struct pxc_gent *g = &c->gent[i];
    if (g->st == PXC_GATED_OUT) continue;
    if (g->st != PXC_GATED_IN) {
      gate_key(c, i, &n, now, false, true);
      continue;
    }
    struct pxc_sortent *e = &c->sort[n++];
    g->prio = pxc_gated_prio(c, g, now);
    c->nogpu_eligible += g->nogpu;
    e->slot = c->pending[i];
    e->id = g->id;
    e->part = g->in.part;
    c->part_left[g->in.part]++;
    e->k1 = pxc_tier_key(c, g->in.part) | (UINT32_MAX - g->prio);
    e->k2 = (uint64_t)g->submit_s ^ (1ULL << 63);
    if (c->pol->preemptor_ids.len) pxc_policy_key(c, g->id, &e->k1);
  }
  return n;
}

/* Gate every pending job; the eligible ones get their key in c->sort.
 * Returns how many. Under LAS it rebuilds the kept order (kept.c) too,
 * under multifactor the gated entries (gated.c), which the next cycles
 * read instead while they hold. */
static size_t queue_eligible(struct px_core *c, int64_t now) {
  size_t n = 0;
  c->nogpu_eligible = 0;
  memset(c->part_left, 0, c->nparts * sizeof *c->part_left);
  if (pxc_gated_usable(c)) return queue_gated(c, now);
  bool keep = pxc_kept_wanted(c), gated = pxc_gated_wanted(c);
  if (keep) pxc_kept_rebuild_begin(c);
  if (gated) pxc_gated_rebuild_begin(c);
  for (size_t i = 0; i < c->npending; i++) {
    prefetch_ahead(c, i);
    gate_key(c, i, &n, now, keep, gated);
  }
  if (keep) pxc_kept_rebuild_end(c);
  if (gated) pxc_gated_rebuild_end(c);
  return n;
}

/* The kept order skipped the marks (kept.c): the jobs left get theirs once
 * someone may read them, the queue-order walk. The pass's tail reads
 * their places in c->sort instead (backfill_tail.c, group_min). */
static void mark_rest(struct px_core *c, size_t n) {
  for (size_t i = 0; i < n; i++) c->jobs[c->sort[i].slot].mark = (uint32_t)c->stats.cycles;
}

/* c->sort[0 .. left) as the full pass's heap holds it after total - left
 * pops: the tail tries the jobs left in the heap's order, and a victim
 * search there may preempt, so that order decides. The kept order's jobs
 * (c->sort[0 .. total), popped ones at the end) go back into the pending
 * list's order of the cycle's start, as the full pass gathered them; the
 * same heap then gives the same array. */
static int heap_as_full(struct px_core *c, size_t total, size_t left) {
  struct pxc_kept *k = &c->pol->kept;
  if (PXC_GROW(c, k->pos, &k->pos_cap, c->njob_slots + 1) || PXC_GROW(c, k->at, &k->at_cap, k->nsnap + 1) ||
      PXC_GROW(c, c->sort, &c->sort_cap, total + k->nsnap + 1))
    return PX_ENOMEM;
  for (size_t i = 0; i < k->nsnap; i++) k->pos[k->snap[i]] = (uint32_t)i, k->at[i] = PX_NONE;
  for (size_t i = 0; i < total; i++) k->at[k->pos[c->sort[i].slot]] = (uint32_t)i;
  struct pxc_sortent *h = c->sort + total; /* scratch past the entries */
  size_t n = 0;
  for (size_t i = 0; i < k->nsnap; i++)
    if (k->at[i] != PX_NONE) h[n++] = c->sort[k->at[i]];
  for (size_t i = n / 2; i-- > 0;) sift_down(h, n, i);
  while (n > left) heap_pop(h, &n);
  memmove(c->sort, h, left * sizeof *h);
  return 0;
}

/* The pass's tail (c->pass_tail, c->starts_only): no job left can start, so
 * order no longer matters -- the plan and the nodes stay as they are -- and
 * only the topology flag is still to be found (place_failed). A job has it
 * already, or cannot get it with fewer GPUs free in its partition than it
 * needs; the others are tried as before. */
static int tail_rest(struct px_core *c, size_t n, int64_t now, struct px_actions *out) {
  int rc = 0;
  struct pxc_policy *pol = c->pol;
  pol->fits_on = true, pol->nfits = pol->fit_len = 0;
  pol->fits_started = c->stats.started, pol->fits_out = out->len;
  for (size_t i = 0; i < n && rc == 0; i++) {
    if (i + 16 < n) prefetch_job(&c->jobs[c->sort[i + 16].slot]); /* heap order: random in memory */
    uint32_t slot = c->sort[i].slot;
    struct pxc_job *j = &c->jobs[slot];
    j->mark = 0;
    uint64_t g = pxc_job_ngpu(j);
    if ((j->flags & PXC_F_TOPO_WAIT) || pxc_part_free_gpus(c, j) < g) continue;
    rc = try_job(c, slot, now, out);
  }
  pol->fits_on = false;
  return rc;
}

/* A heap rather than a sort: jobs are taken in order only while some
 * partition can still start one; once every partition is held back (or
 * empty) no job can start, so the rest only need their reason and are
 * visited in queue order (memory order: no cache misses) -- a full cluster
 * costs O(n), not O(n log n). */
static int take_in_order(struct px_core *c, size_t n, bool kept, int64_t now, struct px_actions *out) {
  size_t total = n;
  if (!kept) /* the kept order comes sorted, descending: popped from the end */
    for (size_t i = n / 2; i-- > 0;) sift_down(c->sort, n, i);
  bool marked = !kept && !c->gent_live; /* the full pass marked them while gating */
  c->pol->kept.used = kept;
  uint32_t open = 0;
  for (uint32_t p = 0; p < c->nparts; p++) open += c->part_left[p] > 0;
  int rc = 0;
  /* Lazy reasons (px_core_set_lazy_reasons): with no free GPU left and only
   * GPU jobs to go (and no preemption), nothing more can start: stop. */
  bool lazy = c->lazy_s > 0 && now - c->last_full_s < c->lazy_s && !c->nogpu_eligible;
  /* preempt.c sets it once its searches are spent */
  c->starts_only = c->lazy_s > 0 && !c->pol->victims_live;
  c->sort_left = n;
  while (n && open && rc == 0) {
    if (lazy && c->starts_only && !any_free_gpu(c)) {
      c->stats.lazy_stops++;
      return 0;
    }
    if (c->pass_tail && c->tests_left >= n) { /* every job left is tried, none can start */
      if (kept && pxc_preempt_searches_left(c)) rc = heap_as_full(c, total, n);
      if (rc == 0) rc = tail_rest(c, n, now, out);
      n = 0;
      break;
    }
    struct pxc_sortent e = kept ? c->sort[--n] : heap_pop(c->sort, &n);
    c->sort_left = n;
    bool was = c->part_blocked[e.part];
    c->jobs[e.slot].mark = 0;
    rc = try_job(c, e.slot, now, out);
    if (c->stats.started >= c->budget_end) break;
    if (!was && (c->part_blocked[e.part] || --c->part_left[e.part] == 0)) open--;
    else if (was) c->part_left[e.part]--;
    if (!was && --c->tests_left == 0 && n) { /* bf_max_job_test / default_queue_depth */
      memset(c->part_blocked, 1, c->nparts * sizeof *c->part_blocked);
      c->sort_left = 0; /* the rest are held back: none is tried */
      c->pass_cut = true;
      if (lazy && c->starts_only) return 0;
      open = 0;
    }
  }
  /* Every partition is held back: the rest would only get their reason
   * (Priority). With lazy reasons nobody reads it before the next full
   * cycle, so a blocked head costs the same whatever the queue's depth. */
  if (n && lazy && !open && rc == 0) {
    c->stats.lazy_stops++;
    return 0;
  }
  if (!marked && n) mark_rest(c, n);
  for (size_t i = 0; n && i < c->npending && rc == 0; i++) {
    uint32_t slot = c->pending[i];
    prefetch_ahead(c, i);
    if (c->jobs[slot].mark != (uint32_t)c->stats.cycles) continue;
    c->jobs[slot].mark = 0;
    rc = try_job(c, slot, now, out);
  }
  c->last_full_s = now;
  return rc;
}

void px_core_set_lazy_reasons(struct px_core *c, int64_t interval_s) {
  c->lazy_s = interval_s > 0 ? interval_s : 0;
}

int px_core_cycle(struct px_core *c, int64_t now, struct px_actions *out) {
  px_actions_clear(out);
  c->now = now;
  c->stats.cycles++;
  c->budget_end = c->stats.started + PX_CORE_CYCLE_MAX_STARTS;
  int prc = pxc_policy_begin(c, now, out); /* issue 4: kills, signals, the plan */
  if (prc) return prc;
  c->order->prepare(c, now);
  c->reserve->begin(c, now);
  if (PXC_GROW(c, c->sort, &c->sort_cap, c->npending + 1)) return PX_ENOMEM;
  memset(c->part_blocked, 0, c->nparts * sizeof *c->part_blocked);
  memset(c->part_passed, 0, c->nparts * sizeof *c->part_passed);
  if (c->fail_shapes.len) {
    for (size_t i = 0; i < c->fail_shapes.cap; i++) c->fail_shapes.keys[i] = UINT64_MAX;
    c->fail_shapes.len = 0;
  }
  c->pass_cut = false;
  c->pass_tail = false;
  size_t n = pxc_kept_fill(c, now);
  bool kept = n != SIZE_MAX;
  int rc = take_in_order(c, kept ? n : queue_eligible(c, now), kept, now, out);
  if (c->main_pass) pxc_policy_main_pass_done(c);
  pxc_finished_purge(c, now);
  return rc;
}
