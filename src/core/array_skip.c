/*
 * array_skip.c - recovery of an array task the core cannot take back
 * (issue 6). Recovery applies a task's START event (px_core_apply, pxc_job_restore);
 * when that fails (the configuration shrank under its allocation) the task
 * runs on outside the scheduler, its nodes held drained. The array's record
 * must still count the task as started, or a cycle would start the same id
 * (tasks have fixed ids) a second time while the first still runs.
 *
 * So the task is born here as the restore would make it, RUNNING since
 * start_s, but holding no resources (the server keeps its nodes out of
 * scheduling instead): the array's next index moves past it, it counts
 * against the array's %N and the user's limits, and its end or requeue is
 * reported with END / REQUEUE events like any task's, so
 * that the array ends (and satisfies dependencies) only once it has.
 */
#include "core/core_int.h"

/* Makes the task at ts RUNNING since start_s without an allocation. */
static void run_outside(struct px_core *c, struct pxc_job *t, int64_t start_s) {
  t->state = PX_JOB_RUNNING;
  t->reason = PX_REASON_NONE;
  t->start_s = start_s;
  t->billing = 0; /* no resources here: nothing charged to fair share */
  pxc_limits_count(c, t, +1); /* undone by the end, as for any started job */
  if (t->name != PX_NONE) {
    uint64_t key = (uint64_t)t->user << 32 | t->name;
    uint32_t n = 0;
    pxc_map_get(&c->singleton_running, key, &n);
    pxc_map_put(c, &c->singleton_running, key, n + 1); /* reserved by the caller */
  }
}

int pxc_array_skip(struct px_core *c, uint64_t array_job_id, uint64_t task_job_id,
                       int64_t start_s, struct px_diag *d) {
  struct pxc_job *r = pxc_job_find(c, array_job_id);
  if (!r || !r->arr)
    return px_diag_set(d, PX_ENOENT, -1, "array_job_id: %llu is not a pending array",
                       (unsigned long long)array_job_id);
  if (r->state != PX_JOB_PENDING || r->id + 1 + r->arr->next != task_job_id)
    return px_diag_set(d, PX_ESTATE, -1, "job_id: %llu is not the next task of array %llu",
                       (unsigned long long)task_job_id, (unsigned long long)array_job_id);
  if (pxc_map_reserve(c, &c->singleton_running, 1)) return PX_ENOMEM;
  uint32_t slot = (uint32_t)(r - c->jobs), ts;
  int rc = pxc_task_new(c, slot, &ts);
  if (rc) return rc;
  pxc_task_settle(c, ts, true);
  r = &c->jobs[slot]; /* the slab may have moved */
  run_outside(c, &c->jobs[ts], start_s);
  pxc_array_task_began(c, r);
  return 0;
}
