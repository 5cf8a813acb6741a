/*
 * apply.c - px_core_apply(): the one entry point for changes of the core's
 * state (event.h). Each kind is a case that calls the handler of its module
 * (jobs.c, submit.c, restore.c, resv.c, part_state.c, acct.c); this file adds only
 * what an event means beyond one handler: what a submit decided, an END or
 * CANCEL of a job the core does not hold, a START the nodes cannot take back.
 */
#include <string.h>

#include "core/core_int.h"
#include "core/event.h"
#include "core/policy.h"

static const char *const kind_names[] = {
#define PX_EVENT_NAME(k, name) name,
    PX_EVENT_KINDS(PX_EVENT_NAME)
#undef PX_EVENT_NAME
};

const char *px_event_kind_name(enum px_event_kind k) {
  return (unsigned)k < PX_EV_COUNT ? kind_names[k] : NULL;
}

bool px_event_kind_parse(const char *name, enum px_event_kind *out) {
  for (unsigned k = 0; name && k < PX_EV_COUNT; k++)
    if (!strcmp(kind_names[k], name)) {
      *out = (enum px_event_kind)k;
      return true;
    }
  return false;
}

static int submit(struct px_core *c, const struct px_event *ev, int64_t now,
                  struct px_event_result *res) {
  if (!ev->spec) return px_diag_set(&res->diag, PX_EINVAL, -1, "spec: missing");
  int rc = pxc_submit(c, ev->job_id, ev->spec, now, &res->reason, &res->diag);
  if (rc) return rc;
  const struct pxc_job *j = pxc_job_find(c, ev->job_id);
  res->nids = j->arr ? 1 + (uint64_t)j->arr->ntasks : 1;
  res->account = j->account;
  return 0;
}

/* CANCEL and REJECT: a pending job leaves; a running one is the caller's
 * to stop; one the core does not hold changes nothing. */
static int cancel(struct px_core *c, const struct px_event *ev, int64_t now,
                  struct px_event_result *res) {
  const struct pxc_job *j = pxc_job_find(c, ev->job_id);
  if (!j) return 0;
  res->known = true;
  if (j->state == PX_JOB_RUNNING) { /* a job, or an array with no task left to start */
    res->running = true;
    return 0;
  }
  return pxc_cancel(c, ev->job_id, now, &res->diag);
}

static int end(struct px_core *c, const struct px_event *ev, int64_t now,
               struct px_event_result *res) {
  const struct pxc_job *j = pxc_job_find(c, ev->job_id);
  if (!j) return 0;
  res->known = true;
  if (j->state == PX_JOB_PENDING) return pxc_cancel(c, ev->job_id, now, &res->diag);
  return pxc_job_ended(c, ev->job_id, ev->state, ev->exit_code, now, &res->diag);
}

/* The job runs on ev->alloc again; when the nodes cannot hold it, outside
 * the scheduler (event.h). */
static int start(struct px_core *c, const struct px_event *ev, int64_t now,
                 struct px_event_result *res) {
  int rc = pxc_job_restore(c, ev->job_id, ev->array_job_id, ev->alloc, ev->nalloc, ev->time_limit_s,
                           now, &res->diag);
  if (rc == 0 || rc == PX_ENOMEM) {
    res->known = rc == 0;
    return rc;
  }
  /* A task's index stays used in its array, or a cycle would start the
   * same task id again while this one runs. */
  if (ev->array_job_id && pxc_array_skip(c, ev->array_job_id, ev->job_id, now, NULL) == 0) {
    res->known = res->outside = true;
    return 0;
  }
  const struct pxc_job *j = pxc_job_find(c, ev->job_id);
  if (j && j->state == PX_JOB_PENDING && !j->arr) {
    int crc = pxc_cancel(c, ev->job_id, now, NULL);
    if (crc) return crc;
  } else if (j) {
    return rc; /* running already, or an array record: a bad record */
  }
  res->outside = true;
  return 0;
}

static int requeue(struct px_core *c, const struct px_event *ev, int64_t now,
                   struct px_event_result *res) {
  if (pxc_job_find(c, ev->job_id) || !ev->spec)
    return pxc_job_requeue(c, ev->job_id, ev->hold, now, &res->diag);
  int rc = pxc_submit(c, ev->job_id, ev->spec, ev->submit_s, &res->reason, &res->diag);
  if (!rc && ev->hold && !ev->spec->hold) pxc_hold(c, ev->job_id, false, now, NULL);
  return rc;
}

/* UPDATE: a pending job's fields (jobs.c); of a running one only its time
 * limit (scontrol update TimeLimit=, the server checks who may), which
 * the backfill plan reads as the job's release time: rebuilt whole. */
static int update(struct px_core *c, const struct px_event *ev, int64_t now, struct px_diag *d) {
  struct pxc_job *j = pxc_job_find(c, ev->job_id);
  if (!j || j->state != PX_JOB_RUNNING || j->arr) return pxc_update(c, ev->job_id, &ev->update, now, d);
  if (ev->update.fields != PX_UPD_TIME_LIMIT)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is running: only its time limit changes",
                       (unsigned long long)ev->job_id);
  if (ev->update.time_limit_s <= 0) return px_diag_set(d, PX_EINVAL, -1, "time_limit: must be positive");
  pxc_kept_invalidate(c);
  j->time_limit_s = ev->update.time_limit_s;
  for (uint32_t i = 0; i < j->nalloc; i++) pxc_plan_node_changed(c, j->alloc[i].node, true);
  return 0;
}

static int node(struct px_core *c, const struct px_event *ev, int64_t now,
                struct px_event_result *res) {
  static const enum px_node_event map[] = {[PX_EV_NODE_DRAIN] = PX_NODE_EV_DRAIN,
                                           [PX_EV_NODE_RESUME] = PX_NODE_EV_RESUME,
                                           [PX_EV_NODE_DOWN] = PX_NODE_EV_DOWN,
                                           [PX_EV_NODE_UP] = PX_NODE_EV_UP};
  return pxc_node_event(c, ev->node, map[ev->kind], ev->reason, now, &res->diag);
}

int px_core_apply(struct px_core *c, const struct px_event *ev, int64_t now,
                  struct px_event_result *res) {
  memset(res, 0, sizeof *res);
  res->account = PX_NONE;
  struct px_diag *d = &res->diag;
  int rc;
  switch (ev->kind) {
    case PX_EV_SUBMIT:
      rc = submit(c, ev, now, res);
      break;
    case PX_EV_CANCEL:
    case PX_EV_REJECT:
      rc = cancel(c, ev, now, res);
      break;
    case PX_EV_HOLD:
      rc = pxc_hold(c, ev->job_id, ev->admin, now, d);
      break;
    case PX_EV_RELEASE:
      rc = pxc_release(c, ev->job_id, ev->admin, now, d);
      break;
    case PX_EV_UPDATE:
      rc = update(c, ev, now, d);
      break;
    case PX_EV_START:
      rc = start(c, ev, now, res);
      break;
    case PX_EV_END:
      rc = end(c, ev, now, res);
      break;
    case PX_EV_REQUEUE:
      rc = requeue(c, ev, now, res);
      break;
    case PX_EV_NODE_DRAIN:
    case PX_EV_NODE_RESUME:
    case PX_EV_NODE_DOWN:
    case PX_EV_NODE_UP:
      rc = node(c, ev, now, res);
      break;
    case PX_EV_PART_DOWN:
    case PX_EV_PART_UP:
      rc = pxc_partition_set_up(c, ev->part, ev->kind == PX_EV_PART_UP);
      if (rc) px_diag_set(d, rc, -1, "partition: no partition %u", ev->part);
      break;
    case PX_EV_RESV:
      rc = ev->resv ? pxc_resv_add(c, ev->resv, now, d)
                    : px_diag_set(d, PX_EINVAL, -1, "resv: missing");
      break;
    case PX_EV_USAGE:
      rc = ev->spec ? pxc_usage_replay(c, ev->spec->user, ev->spec->account, ev->spec->qos,
                                       ev->alloc, ev->nalloc, ev->start_s, ev->end_s, d)
                    : px_diag_set(d, PX_EINVAL, -1, "spec: missing");
      break;
    case PX_EV_SVC_APPLY:
    case PX_EV_SVC_SCALE:
    case PX_EV_SVC_DELETE:
    case PX_EV_SVC_ROLLBACK:
    case PX_EV_SVC_REPLICA: /* the server's service table folds it (event.h) */
      rc = ev->svc ? 0 : px_diag_set(d, PX_EINVAL, -1, "svc: missing");
      break;
    case PX_EV_GPU:
      rc = pxc_gpu_set(c, ev->node, ev->gpu, ev->gpu_usable, d);
      break;
    case PX_EV_RESV_DELETE:
      rc = pxc_resv_remove(c, ev->reason, now, d);
      break;
    case PX_EV_STEP: /* the server's step table folds it (event.h) */
      rc = ev->step ? 0 : px_diag_set(d, PX_EINVAL, -1, "step: missing");
      break;
    case PX_EV_ACCT:
      rc = pxc_acct_edit(c, ev->acct, d);
      break;
    default:
      rc = px_diag_set(d, PX_EINVAL, -1, "kind: unknown event kind %d", (int)ev->kind);
      break;
  }
  res->rc = rc;
  return rc;
}
