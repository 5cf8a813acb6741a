/*
 * jobs.c - job records and the events that change them after submit
 * (submit.c): cancel, hold, release, end, requeue, update; and the memory of
 * ended jobs that dependencies look up.
 *
 * Records live in one slab (dense slots, reused through a free list) and are
 * found by id through a hash map. A pending job keeps only scheduling fields
 * (a 232-byte record); an array is one record whose tasks become records of
 * their own only when they start.
 */
#include <string.h>

#include "core/core_int.h"
#include "core/event.h"
#include "core/policy.h"

struct pxc_job *pxc_job_find(struct px_core *c, uint64_t id) {
  uint32_t slot;
  return pxc_map_get(&c->job_by_id, id, &slot) ? &c->jobs[slot] : NULL;
}

int pxc_slot_new(struct px_core *c, uint32_t *slot) {
  if (c->nfree) {
    *slot = c->free_slots[--c->nfree];
    return 0;
  }
  if (PXC_GROW(c, c->jobs, &c->jobs_cap, c->njob_slots + 1)) return PX_ENOMEM;
  if (PXC_GROW(c, c->free_slots, &c->free_cap, c->njob_slots + 1)) return PX_ENOMEM;
  *slot = (uint32_t)c->njob_slots++;
  return 0;
}

/* The cycle's sort scratch grows with the queue, so a cycle never has to;
 * its new pages are touched here, at submit, not on the cycle's clock. */
int pxc_pending_reserve(struct px_core *c) {
  if (PXC_GROW(c, c->pending, &c->pending_cap, c->npending + 1)) return PX_ENOMEM;
  size_t old = c->sort_cap;
  if (PXC_GROW(c, c->sort, &c->sort_cap, c->npending + 1)) return PX_ENOMEM;
  if (c->sort_cap > old) memset(c->sort + old, 0, (c->sort_cap - old) * sizeof *c->sort);
  pxc_gated_reserve(c);
  return 0;
}

int pxc_pending_add(struct px_core *c, struct pxc_job *j) {
  if (pxc_pending_reserve(c)) return PX_ENOMEM;
  j->pend_pos = (uint32_t)c->npending;
  c->pending[c->npending++] = (uint32_t)(j - c->jobs);
  pxc_gated_added(c, j->pend_pos);
  pxc_kept_added(c, j);
  return 0;
}

void pxc_pending_remove(struct px_core *c, struct pxc_job *j) {
  pxc_kept_removed(c, j);
  if (j->state == PX_JOB_PENDING && j->nalloc) pxc_running_unseen(c); /* restore.c: RUNNING next */
  uint32_t last = c->pending[--c->npending];
  pxc_gated_moved(c, j->pend_pos, c->npending);
  c->pending[j->pend_pos] = last;
  c->jobs[last].pend_pos = j->pend_pos;
  j->pend_pos = PX_NONE;
}

/* Frees a record that is no longer pending or running. */
void pxc_job_drop(struct px_core *c, struct pxc_job *j) {
  pxc_map_del(&c->job_by_id, j->id);
  pxc_free(c, j->deps);
  pxc_free(c, j->arr);
  pxc_free(c, j->excl);
  pxc_free(c, j->req);
  pxc_free(c, j->alloc);
  pxc_free(c, j->cpu_words);
  if (j->state == PX_JOB_RUNNING) pxc_running_left(c, (uint32_t)(j - c->jobs));
  memset(j, 0, sizeof *j);
  j->state = 0xff; /* free */
  c->free_slots[c->nfree++] = (uint32_t)(j - c->jobs);
  c->nlive--;
}

/* ---- finished jobs (kept PXC_FINISHED_KEEP_S for dependencies) ---------- */

/* fin[fin_head, nfin) are live, oldest first; the map holds a sequence
 * number (fin_seq0 + index, in 32-bit wrapping arithmetic) so purging the
 * head never rewrites it, and the array is compacted only when half dead. */
int pxc_finished_add(struct px_core *c, uint64_t id, uint8_t state, bool ok, int64_t now) {
  if (PXC_GROW(c, c->fin, &c->fin_cap, c->nfin + 1) || pxc_map_reserve(c, &c->fin_by_id, 1))
    return PX_ENOMEM;
  c->fin[c->nfin] = (struct pxc_finished){id, now, state, ok};
  pxc_map_put(c, &c->fin_by_id, id, c->fin_seq0 + (uint32_t)c->nfin);
  c->nfin++;
  return 0;
}

const struct pxc_finished *pxc_finished_get(const struct px_core *c, uint64_t id) {
  uint32_t seq;
  return pxc_map_get(&c->fin_by_id, id, &seq) ? &c->fin[(uint32_t)(seq - c->fin_seq0)] : NULL;
}

void pxc_finished_purge(struct px_core *c, int64_t now) {
  while (c->fin_head < c->nfin && c->fin[c->fin_head].end_s + PXC_FINISHED_KEEP_S < now) {
    const struct pxc_finished *f = &c->fin[c->fin_head];
    uint32_t seq;
    /* a later entry for the same id (re-finished) keeps its own mapping */
    if (pxc_map_get(&c->fin_by_id, f->id, &seq) && seq == c->fin_seq0 + (uint32_t)c->fin_head)
      pxc_map_del(&c->fin_by_id, f->id);
    c->fin_head++;
  }
  if (c->fin_head * 2 < c->nfin || !c->fin_head) return;
  memmove(c->fin, c->fin + c->fin_head, (c->nfin - c->fin_head) * sizeof *c->fin);
  c->nfin -= c->fin_head;
  c->fin_seq0 += (uint32_t)c->fin_head;
  c->fin_head = 0;
}

/* ---- other job events ----------------------------------------------------- */

static struct pxc_job *find_or_diag(struct px_core *c, uint64_t id, struct px_diag *d) {
  px_diag_clear(d);
  struct pxc_job *j = pxc_job_find(c, id);
  if (!j) px_diag_set(d, PX_ENOENT, -1, "job_id: no job %llu", (unsigned long long)id);
  return j;
}

static void submit_count(struct px_core *c, const struct pxc_job *j, uint64_t n) {
  c->assoc[j->assoc].user_submit -= n;
  struct pxc_quser *q = pxc_quser_get(c, j->qos, j->user);
  if (q) q->submit -= n;
}

int pxc_cancel(struct px_core *c, uint64_t id, int64_t now, struct px_diag *d) {
  struct pxc_job *j = find_or_diag(c, id, d);
  if (!j) return PX_ENOENT;
  if (j->state != PX_JOB_PENDING)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is running: stop it, then report its end",
                       (unsigned long long)id);
  struct pxc_array *a = j->arr;
  bool meta = a && a->next > a->ended; /* tasks still running: keep the record */
  if (!meta && pxc_finished_add(c, id, PX_JOB_CANCELLED, false, now)) return PX_ENOMEM;
  submit_count(c, j, a ? a->ntasks - a->next : 1);
  pxc_pending_remove(c, j);
  if (meta) {
    a->failed += a->ntasks - a->next; /* cancelled tasks: afterok can no longer hold */
    a->ntasks = a->next;
    j->state = PX_JOB_RUNNING;
    return 0;
  }
  pxc_job_drop(c, j);
  return 0;
}

/* The dry run's undo (sbatch --test-only): the job leaves as a cancel
 * would, and no finished record stays behind, so its id (the next real
 * job's) satisfies no dependency and the core holds nothing the journal
 * does not. */
int px_core_withdraw(struct px_core *c, uint64_t id, int64_t now) {
  struct px_diag d;
  int rc = pxc_cancel(c, id, now, &d);
  if (!rc) pxc_map_del(&c->fin_by_id, id); /* its fin[] entry is purged in time: unmapped, skipped */
  return rc;
}

/* An array task ended: when every task has, the array record ends too (its
 * id then satisfies dependencies like a job's). */
void pxc_array_task_ended(struct px_core *c, uint64_t array_id, bool ok, int64_t now) {
  struct pxc_job *r = pxc_job_find(c, array_id);
  if (!r || !r->arr) return;
  r->arr->ended++;
  r->arr->failed += !ok;
  if (r->state == PX_JOB_PENDING || r->arr->ended < r->arr->ntasks) return;
  bool all_ok = r->arr->failed == 0;
  /* Reserved by the task's own finished_add just before: cannot fail now
   * except on growth; on failure the record stays (dependents keep waiting). */
  if (pxc_finished_add(c, array_id, all_ok ? PX_JOB_COMPLETED : PX_JOB_FAILED, all_ok, now)) return;
  pxc_job_drop(c, r);
}

int pxc_hold(struct px_core *c, uint64_t id, bool admin, int64_t now, struct px_diag *d) {
  (void)now;
  struct pxc_job *j = find_or_diag(c, id, d);
  if (!j) return PX_ENOENT;
  if (j->state != PX_JOB_PENDING)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is not pending", (unsigned long long)id);
  pxc_kept_invalidate(c); /* its gate verdict changes: the kept order is rebuilt */
  j->flags |= (uint8_t)((admin ? PXC_F_HELD_ADMIN : PXC_F_HELD_USER) | PXC_F_AGE_RESET);
  j->eligible_s = 0; /* no ageing while held */
  j->reason = admin ? PX_REASON_HELD_ADMIN : PX_REASON_HELD_USER;
  j->priority = 0;
  return 0;
}

int pxc_release(struct px_core *c, uint64_t id, bool admin, int64_t now, struct px_diag *d) {
  (void)now;
  struct pxc_job *j = find_or_diag(c, id, d);
  if (!j) return PX_ENOENT;
  if (j->state != PX_JOB_PENDING)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is not pending", (unsigned long long)id);
  if ((j->flags & PXC_F_HELD_ADMIN) && !admin)
    return px_diag_set(d, PX_EPERM, -1, "job %llu is held by an administrator", (unsigned long long)id);
  pxc_kept_invalidate(c);
  j->flags &= (uint8_t)~(PXC_F_HELD_ADMIN | PXC_F_HELD_USER);
  j->reason = PX_REASON_NONE;
  return 0;
}

/* Stops a running job's accounting: resources, limits, usage, singleton, array. */
static void stop_running(struct px_core *c, struct pxc_job *j, int64_t now) {
  pxc_limits_count(c, j, -1);
  pxc_fs_charge(c, j->assoc, -j->billing, now);
  j->billing = 0;
  pxc_place_release(c, j);
  if (j->name != PX_NONE) {
    uint64_t key = (uint64_t)j->user << 32 | j->name;
    uint32_t n;
    if (pxc_map_get(&c->singleton_running, key, &n)) {
      if (n <= 1) pxc_map_del(&c->singleton_running, key);
      else pxc_map_put(c, &c->singleton_running, key, n - 1); /* existing key: no growth */
    }
  }
  if (j->task_id != PX_NONE) {
    struct pxc_job *a = pxc_job_find(c, j->array_id);
    if (a && a->arr && a->arr->running) a->arr->running--;
  }
}

int pxc_job_ended(struct px_core *c, uint64_t id, enum px_job_state state, int32_t exit_code,
                      int64_t now, struct px_diag *d) {
  struct pxc_job *j = find_or_diag(c, id, d);
  if (!j) return PX_ENOENT;
  if (j->state != PX_JOB_RUNNING)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is not running", (unsigned long long)id);
  if (state < PX_JOB_COMPLETED || state > PX_JOB_PREEMPTED)
    return px_diag_set(d, PX_EINVAL, -1, "state: not a terminal state");
  bool ok = state == PX_JOB_COMPLETED && exit_code == 0;
  if (pxc_finished_add(c, id, (uint8_t)state, ok, now)) return PX_ENOMEM;
  stop_running(c, j, now);
  submit_count(c, j, 1);
  uint64_t array_id = j->task_id != PX_NONE ? j->array_id : 0;
  pxc_job_drop(c, j);
  if (array_id) pxc_array_task_ended(c, array_id, ok, now);
  return 0;
}

int pxc_job_requeue(struct px_core *c, uint64_t id, bool hold, int64_t now, struct px_diag *d) {
  struct pxc_job *j = find_or_diag(c, id, d);
  if (!j) return PX_ENOENT;
  if (j->state != PX_JOB_RUNNING)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is not running", (unsigned long long)id);
  if (pxc_pending_reserve(c)) return PX_ENOMEM;
  if (now > j->start_s) j->attained_gpu_s += pxc_las_gpus(j) * (double)(now - j->start_s); /* LAS */
  j->las_served = j->attained_gpu_s > 0;
  stop_running(c, j, now);
  pxc_running_left(c, (uint32_t)(j - c->jobs));
  j->state = PX_JOB_PENDING;
  j->restarts++;
  j->flags |= PXC_F_AGE_RESET;
  j->flags &= (uint8_t)~PXC_F_SIGNALLED;
  j->start_s = 0;
  j->eligible_s = 0;
  j->reason = PX_REASON_NONE;
  if (hold) j->flags |= PXC_F_HELD_USER;
  pxc_pending_add(c, j);
  return 0;
}

int pxc_update(struct px_core *c, uint64_t id, const struct px_job_update *u, int64_t now,
                   struct px_diag *d) {
  (void)now;
  struct pxc_job *j = find_or_diag(c, id, d);
  if (!j) return PX_ENOENT;
  if (j->state != PX_JOB_PENDING)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is not pending", (unsigned long long)id);
  if ((u->fields & PX_UPD_TIME_LIMIT) && u->time_limit_s <= 0)
    return px_diag_set(d, PX_EINVAL, -1, "time_limit: must be positive");
  pxc_kept_invalidate(c); /* its key or gate verdict may change */
  if (u->fields & PX_UPD_NICE) j->nice = u->nice;
  if (u->fields & PX_UPD_TIME_LIMIT) j->time_limit_s = u->time_limit_s;
  if (u->fields & PX_UPD_PRIORITY) {
    j->admin_priority = u->priority;
    if (u->priority) j->flags |= PXC_F_ADMIN_PRIO;
    else j->flags &= (uint8_t)~PXC_F_ADMIN_PRIO;
  }
  return 0;
}

int pxc_node_event(struct px_core *c, uint32_t node, enum px_node_event ev, const char *reason,
                       int64_t now, struct px_diag *d) {
  (void)now;
  px_diag_clear(d);
  if (node >= c->nnodes) return px_diag_set(d, PX_ENOENT, -1, "node: no node %u", node);
  struct pxc_node *n = &c->nodes[node];
  char *copy = NULL;
  if (reason) {
    size_t len = strlen(reason) + 1;
    if (!(copy = pxc_alloc(c, len))) return PX_ENOMEM;
    memcpy(copy, reason, len);
  }
  pxc_index_node_remove(c, node);
  switch (ev) {
  case PX_NODE_EV_UP: n->down = false; break;
  case PX_NODE_EV_DOWN: n->down = true; break;
  case PX_NODE_EV_DRAIN: n->drain = true; break;
  case PX_NODE_EV_RESUME: n->down = n->drain = false; break;
  }
  pxc_index_node_add(c, node);
  pxc_plan_node_changed(c, node, true);
  if (copy || (!n->down && !n->drain)) {
    pxc_free(c, n->reason);
    n->reason = copy;
  }
  return 0;
}
