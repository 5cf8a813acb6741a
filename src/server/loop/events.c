/*
 * events.c - the server's one road for changes of state (tables.h): every
 * change is a struct px_event (core/event.h), given to the core by
 * px_core_apply and then folded into the server's own tables (jobs: launch
 * fields, times, accounting figures; nodes: drains; reservations' listing).
 *
 *   live      a handler authorises, builds the event and calls
 *             px_events_accept: apply, journal (only when the core accepted
 *             it), fold;
 *   recovery  journal.c decodes each record (proto/event_json.c) and calls
 *             px_events_apply: apply, fold;
 *   cycle     the core's START and REJECT actions are events it has applied
 *             itself (loop.c): journal, fold.
 *
 * The fold takes what the core decided from the result (an account, a
 * start outside the scheduler) and never asks the core again; it runs the
 * same whether the event came from a request or from the journal.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/event_json.h"
#include "server/journal/journal.h"
#include "server/loop/loop.h"
#include "server/nodes/nodes.h"
#include "server/step_table.h"
#include "server/tables.h"
#include "server/svc/svc_server.h"
#include "util/log.h"

/* ---- folds: the server's tables follow an accepted event ---- */

static void set_reason(struct px_sjob *j, const char *reason, const char *dflt) {
  snprintf(j->reason, sizeof j->reason, "%s", reason && *reason ? reason : dflt);
}

/* Takes ev->spec. */
static int fold_submit(struct px_server *s, const struct px_event *ev,
                       const struct px_event_result *res, int64_t now) {
  struct px_sjob *j = px_jobs_add(s, ev->job_id, ev->spec);
  if (!j) return PX_ENOMEM;
  j->submit = now;
  j->eligible = j->spec.begin_s > now ? j->spec.begin_s : now;
  /* squeue right after sbatch --begin, as Slurm, before the first cycle */
  if (j->spec.begin_s > now && !strcmp(j->reason, "Priority")) set_reason(j, "BeginTime", NULL);
  if (px_sjob_is_array(j) && res->nids > 1) j->arr_ntasks = (uint32_t)(res->nids - 1);
  uint64_t next = ev->job_id + (res->nids ? res->nids : 1);
  if (next > s->next_job_id) s->next_job_id = next;
  return 0;
}

/* An array task's record is born at its start, from the array's spec. */
static struct px_sjob *task_born(struct px_server *s, const struct px_event *ev, int64_t now) {
  struct px_sjob *parent = px_jobs_find(s, ev->array_job_id);
  struct px_jobspec spec;
  if (!parent || px_jobspec_copy(&spec, &parent->spec)) return NULL;
  free(spec.array);
  spec.array = NULL;
  struct px_sjob *j = px_jobs_add(s, ev->job_id, &spec);
  if (!j) return NULL;
  j->array_job_id = ev->array_job_id;
  j->array_task_id = ev->array_task_id;
  j->submit = parent->submit;
  j->eligible = parent->eligible;
  if (!parent->arr_started++) parent->start = now;
  return j;
}

static int fold_start(struct px_server *s, struct px_sjob *j, const struct px_event *ev,
                      const struct px_event_result *res, int64_t now) {
  if (!j && ev->array_job_id && !(j = task_born(s, ev, now))) return PX_ENOMEM;
  if (!j) return PX_ENOENT;
  struct px_sjob_node *a = calloc(ev->nalloc ? ev->nalloc : 1, sizeof *a);
  if (!a) return PX_ENOMEM;
  for (uint32_t i = 0; i < ev->nalloc; i++)
    a[i] = (struct px_sjob_node){ev->alloc[i].node, ev->alloc[i].ncpu, ev->alloc[i].gpus,
                                 ev->alloc[i].mem_mib, ev->alloc[i].gpu_share};
  free(j->alloc);
  j->alloc = a;
  j->nalloc = ev->nalloc;
  j->state = PX_JOB_RUNNING;
  j->requeued = false;
  j->start = now;
  j->end = 0;
  j->time_limit_s = ev->time_limit_s;
  set_reason(j, NULL, "None");
  j->recovered = res->outside;
  j->skipped = res->outside && res->known;
  if (res->outside)
    px_warn("recovery: job %llu runs outside the scheduler, its nodes drained: %s",
            (unsigned long long)j->id, res->diag.msg[0] ? res->diag.msg : "allocation not free");
  return 0;
}

/* A job kept outside the scheduler at recovery (fold_start) holds its
 * nodes drained (server.c) until it ends or is requeued. */
static void release_recovered(struct px_server *s, struct px_sjob *j, int64_t now) {
  if (!j->recovered) return;
  j->recovered = j->skipped = false;
  for (uint32_t i = 0; i < j->nalloc; i++) px_node_release_recovered(s, j->alloc[i].node, now);
}

static void fold_end(struct px_server *s, struct px_sjob *j, const struct px_event *ev,
                     int64_t now) {
  release_recovered(s, j, now);
  j->state = ev->state;
  j->end = now;
  j->exit_code = ev->exit_code;
  j->term_signal = ev->term_signal;
  if (ev->peak_mem_mib) j->peak_mem_mib = ev->peak_mem_mib;
  if (ev->cpu_time_ms) j->cpu_time_ms = ev->cpu_time_ms;
  set_reason(j, ev->reason, "None");
}

static void fold_requeue(struct px_server *s, struct px_sjob *j, const struct px_event *ev,
                         int64_t now) {
  release_recovered(s, j, now);
  j->state = PX_JOB_PENDING;
  j->requeued = true;
  j->restarts++;
  j->start = j->end = 0;
  free(j->alloc);
  j->alloc = NULL;
  j->nalloc = 0;
  free(j->cancelled_by); /* a cancelled job requeued: its new attempt is not */
  j->cancelled_by = NULL;
  /* Until a cycle judges it, the reason of a job just queued (jobs.c), or
   * Slurm's for requeuehold. Not Slurm's BeginTime: that is its 121 s delay
   * of a requeued batch job (EligibleTime = requeue + 121 s, checked on
   * 22.05), which Phalanx does not add. */
  set_reason(j, ev->hold ? ev->reason : NULL, "Priority");
}

static int fold_cancel(struct px_server *s, struct px_sjob *j, const struct px_event *ev,
                       int64_t now) {
  free(j->cancelled_by);
  j->cancelled_by = NULL;
  if (ev->by && !(j->cancelled_by = strdup(ev->by))) return PX_ENOMEM;
  if (px_sjob_is_array(j)) { /* the remainder; its tasks have their own records */
    j->arr_cancelled = true;
    px_jobs_array_fold(s, j, now);
  } else if (j->state == PX_JOB_PENDING) {
    j->state = PX_JOB_CANCELLED;
    j->end = now;
  }
  return 0;
}

static int fold_job(struct px_server *s, struct px_sjob *j, const struct px_event *ev,
                    const struct px_event_result *res, int64_t now) {
  if (ev->kind == PX_EV_START) return fold_start(s, j, ev, res, now);
  if (!j) {
    px_warn("journal seq %llu (%s): unknown job %llu", (unsigned long long)s->seq,
            px_event_kind_name(ev->kind), (unsigned long long)ev->job_id);
    return 0;
  }
  switch (ev->kind) {
    case PX_EV_CANCEL:
      return fold_cancel(s, j, ev, now);
    case PX_EV_END:
      fold_end(s, j, ev, now);
      break;
    case PX_EV_REQUEUE:
      fold_requeue(s, j, ev, now);
      break;
    case PX_EV_HOLD:
      set_reason(j, NULL, ev->admin ? "JobHeldAdmin" : "JobHeldUser");
      break;
    case PX_EV_RELEASE:
      set_reason(j, NULL, "Priority");
      break;
    case PX_EV_UPDATE:
      if (ev->update.fields & PX_UPD_NICE) j->spec.nice = ev->update.nice;
      if (ev->update.fields & PX_UPD_TIME_LIMIT) j->spec.time_limit_s = ev->update.time_limit_s;
      /* a running job's (scontrol update TimeLimit=): the limit it runs under */
      if ((ev->update.fields & PX_UPD_TIME_LIMIT) && j->state == PX_JOB_RUNNING)
        j->time_limit_s = ev->update.time_limit_s;
      break;
    case PX_EV_REJECT:
      j->state = PX_JOB_FAILED;
      j->end = now;
      set_reason(j, ev->reason, "Rejected");
      break;
    default:
      break;
  }
  return 0;
}

/* The reason's user and time follow the reason (sinfo -R): who sent the
 * event (ev->by; NULL from a journal older than it: not known) and when.
 * A drained node keeps its drain's reason while down and up again (as
 * Slurm keeps a node's reason when it stops responding): its silence must
 * not erase why, by whom and since when it is drained. */
static void fold_node(struct px_server *s, const struct px_event *ev, int64_t now) {
  struct px_snode *n = &s->nodes[ev->node];
  const char *reason = ev->reason ? ev->reason : "";
  switch (ev->kind) {
    case PX_EV_NODE_DRAIN:
      n->admin_drain = true;
      n->drain_cause = (uint8_t)px_drain_cause_parse(ev->cause); /* the loader gave old records theirs */
      break;
    case PX_EV_NODE_RESUME:
      n->admin_drain = n->down = false;
      n->drain_cause = PX_DRAIN_NONE;
      break;
    case PX_EV_NODE_DOWN:
      n->down = true;
      if (n->admin_drain) reason = n->reason;
      break;
    default: /* UP */
      n->down = false;
      if (n->admin_drain) reason = n->reason;
      break;
  }
  if (reason != n->reason) px_node_set_reason(n, reason, ev->by, now);
  s->nodes_dirty = true;
}

static int fold_resv(struct px_server *s, const struct px_event *ev) {
  json_t *o = px_event_resv_json(s->conf, ev->resv);
  if (!o || (!s->resv_created && !(s->resv_created = json_array()))) {
    json_decref(o);
    return PX_ENOMEM;
  }
  json_array_append_new(s->resv_created, o);
  s->resv_dirty = s->dirty = true;
  return 0;
}

/* A deleted reservation leaves the listing: one made through the API from
 * the created list; a configured one is remembered as deleted (recovery
 * adds it from the configuration, then replays its deletion). */
static int fold_resv_delete(struct px_server *s, const struct px_event *ev) {
  size_t i;
  json_t *o;
  json_array_foreach(s->resv_created, i, o) {
    const char *name = json_string_value(json_object_get(o, "name"));
    if (!name || strcmp(name, ev->reason)) continue;
    json_array_remove(s->resv_created, i);
    s->resv_dirty = s->dirty = true;
    return 0;
  }
  if (!s->resv_deleted && !(s->resv_deleted = json_array())) return PX_ENOMEM;
  json_array_append_new(s->resv_deleted, json_string(ev->reason));
  s->resv_dirty = s->dirty = true;
  return 0;
}

/* The configuration's copy of the accounts tree follows the core's (the
 * same indexes: the listings and the journal name accounts through it). */
static int fold_acct(struct px_server *s, const struct px_event *ev) {
  pthread_rwlock_wrlock(&s->acct_lock);
  int rc = px_conf_acct_apply(s->conf, ev->acct);
  pthread_rwlock_unlock(&s->acct_lock);
  if (rc) px_error("accounts: the configuration's copy missed a change of %s (%s)", ev->acct->name, px_strerror(rc));
  s->dirty = true;
  return rc;
}

/* A task's record was born (started) or ended: its array's record follows. */
static void array_task_changed(struct px_server *s, const struct px_sjob *t, int64_t now) {
  struct px_sjob *a = px_jobs_find(s, t->array_job_id);
  if (!a) return;
  bool was_over = px_job_state_terminal(a->state);
  if (px_job_state_terminal(t->state)) {
    a->arr_ended++;
    a->arr_failed += t->state != PX_JOB_COMPLETED || t->exit_code != 0;
  }
  px_jobs_array_fold(s, a, now);
  if (!was_over && px_job_state_terminal(a->state)) px_archive_note(s, a); /* all its tasks ended */
}

/* A task's record is born at its start: it was submitted with its array. */
static void array_task_born(struct px_server *s, struct px_sjob *t) {
  const struct px_sjob *a = px_jobs_find(s, t->array_job_id);
  if (a) t->submit_seq = a->submit_seq;
}

/* A pending job's reason and priority are the next cycle's decision: the
 * loop reads them from the core right after it (loop.c follow_cycle).
 * Without memory for the note the job waits for the cycle's walk of every
 * pending job instead (at most a second). */
static void follow(struct px_server *s, const struct px_sjob *j) {
  (void)px_u64vec_push(&s->follow, j->id);
}

static int fold_tables(struct px_server *s, const struct px_event *ev,
                       const struct px_event_result *res, int64_t now) {
  switch (ev->kind) {
    case PX_EV_SUBMIT: {
      int rc = fold_submit(s, ev, res, now);
      struct px_sjob *j = rc ? NULL : px_jobs_find(s, ev->job_id);
      if (j) j->mseq = j->submit_seq = s->seq;
      if (j) follow(s, j);
      return rc;
    }
    case PX_EV_NODE_DRAIN:
    case PX_EV_NODE_RESUME:
    case PX_EV_NODE_DOWN:
    case PX_EV_NODE_UP:
      fold_node(s, ev, now);
      return 0;
    case PX_EV_GPU:
      px_gpu_fold(s, ev, now);
      return 0;
    case PX_EV_STEP:
      return px_steps_fold(s, ev);
    case PX_EV_PART_DOWN:
    case PX_EV_PART_UP:
      s->nodes_dirty = true;
      return 0; /* the partitions' listing follows the nodes' */
    case PX_EV_RESV:
      return fold_resv(s, ev);
    case PX_EV_RESV_DELETE:
      return fold_resv_delete(s, ev);
    case PX_EV_ACCT:
      return fold_acct(s, ev);
    case PX_EV_USAGE:
    case PX_EV_SVC_APPLY:
    case PX_EV_SVC_SCALE:
    case PX_EV_SVC_DELETE:
    case PX_EV_SVC_ROLLBACK:
    case PX_EV_SVC_REPLICA:
      return 0; /* services: px_svc_fold */
    default:
      break;
  }
  struct px_sjob *j = px_jobs_find(s, ev->job_id);
  bool born = !j, was_over = j && px_job_state_terminal(j->state);
  int rc = fold_job(s, j, ev, res, now);
  if (!j) j = px_jobs_find(s, ev->job_id);
  if (!j) return rc;
  j->mseq = s->seq;
  px_jobs_touch(s, j);
  if (j->state == PX_JOB_PENDING) follow(s, j);
  bool ended = !was_over && px_job_state_terminal(j->state);
  if (born && j->array_job_id) array_task_born(s, j);
  if (ev->kind == PX_EV_START) j->start_seq = s->seq; /* the cycle that started it */
  if (ended) j->end_seq = s->seq; /* the order of its end among the server's events */
  if (ended) px_archive_note(s, j);
  if (j->array_job_id && (born || ended)) array_task_changed(s, j, now);
  return rc;
}

/* The job and node tables, then the services (their replicas are jobs). */
int px_events_fold(struct px_server *s, const struct px_event *ev,
                   const struct px_event_result *res, int64_t now) {
  int rc = fold_tables(s, ev, res, now);
  int src = px_svc_fold(s, ev, now);
  return rc ? rc : src;
}

/* ---- the road ---- */

/* A requeue of a job the core does not hold (it ran outside the scheduler
 * since recovery, or it has finished: scontrol requeue, loop/handle.c)
 * queues it again from its spec (core/event.h), live and at replay alike.
 * A finished one waits from the requeue on, as a running one's age restarts
 * at its requeue (Slurm 22.05 resets its SubmitTime there). */
static void fill_from_table(struct px_server *s, struct px_event *ev, int64_t now) {
  if (ev->kind != PX_EV_REQUEUE || ev->spec) return;
  struct px_sjob *j = px_jobs_find(s, ev->job_id);
  if (j && (!px_sjob_in_core(j) || px_job_state_terminal(j->state))) {
    ev->spec = &j->spec;
    ev->submit_s = px_job_state_terminal(j->state) ? now : j->submit;
  }
}

/* The partition, QoS and time limit the core chose for a submit that named
 * none: kept in the record, as Slurm fixes them at submission (scontrol show
 * job prints them: TimeLimit from the partition's DefaultTime, QOS=normal),
 * and so that `scontrol update TimeLimit=` can lower a default limit. */
static void take_defaults(struct px_server *s, struct px_jobspec *sp, uint64_t job_id) {
  struct px_job_view v;
  if (sp->service || px_core_job_get(s->core, job_id, &v)) return;
  if (!sp->partition && v.partition < s->conf->npartitions)
    sp->partition = strdup(s->conf->partitions[v.partition].name);
  if (!sp->qos && v.qos < s->conf->nqos) sp->qos = strdup(s->conf->qos[v.qos].name);
  if (!sp->time_limit_s && v.time_limit_s > 0) sp->time_limit_s = v.time_limit_s;
}

/* What the core decided that the record keeps: a submit without an account
 * names the one it got, so that a replay does not depend on the accounts
 * file. Without memory for the copy the replay chooses by the same rule. */
static void take_decisions(struct px_server *s, struct px_event *ev,
                           const struct px_event_result *res) {
  if (ev->kind != PX_EV_SUBMIT) return;
  if (!ev->spec->account && res->account != PX_NONE)
    ev->spec->account = strdup(s->conf->accounts[res->account].name);
  take_defaults(s, ev->spec, ev->job_id);
}

int px_events_core(struct px_server *s, struct px_event *ev, int64_t now,
                   struct px_event_result *res) {
  fill_from_table(s, ev, now);
  int rc = px_core_apply(s->core, ev, now, res);
  if (!rc) take_decisions(s, ev, res);
  return rc;
}

int px_events_apply(struct px_server *s, struct px_event *ev, int64_t now,
                    struct px_event_result *res) {
  int rc = px_events_core(s, ev, now, res);
  return rc ? rc : px_events_fold(s, ev, res, now);
}

/* sdiag's job counters follow the live events, as slurmctld's do. */
static void count_for_sdiag(struct px_server *s, const struct px_event *ev, const struct px_event_result *res) {
  switch (ev->kind) {
    case PX_EV_SUBMIT: return px_sdiag_job(s->sdiag, PX_SDIAG_SUBMITTED);
    case PX_EV_START: return px_sdiag_job(s->sdiag, PX_SDIAG_STARTED);
    case PX_EV_REJECT: return px_sdiag_job(s->sdiag, PX_SDIAG_FAILED);
    case PX_EV_CANCEL: /* a pending job leaves here; a running one reports its END */
      if (res && res->known && !res->running) px_sdiag_job(s->sdiag, PX_SDIAG_CANCELLED);
      return;
    case PX_EV_END:
      return px_sdiag_job(s->sdiag, ev->state == PX_JOB_COMPLETED   ? PX_SDIAG_COMPLETED
                                    : ev->state == PX_JOB_CANCELLED ? PX_SDIAG_CANCELLED
                                                                    : PX_SDIAG_FAILED);
    default: return;
  }
}

int px_events_journal(struct px_server *s, const struct px_event *ev,
                      const struct px_event_result *res, int64_t now) {
  struct px_store_rec r = {0};
  char *data = px_event_encode(s->conf, ev, res, &r);
  if (!data) return PX_ENOMEM;
  r.time = now;
  r.data = data;
  int rc = px_commit_append(s, &r);
  if (rc) return rc;
  px_mail_note(s, ev, now); /* live only: recovery does not journal */
  count_for_sdiag(s, ev, res);
  return 0;
}

static bool is_node_event(const struct px_event *ev) {
  return ev->kind == PX_EV_NODE_DRAIN || ev->kind == PX_EV_NODE_RESUME || ev->kind == PX_EV_NODE_DOWN ||
         ev->kind == PX_EV_NODE_UP;
}

/* A node's drain, resume, down or up that nobody signed is the server's own
 * (a GPU fault, a short registration, a health check): journaled as by the
 * server's user. Live only: a replayed record says who, or nobody. */
static void sign_node_event(struct px_server *s, struct px_event *ev) {
  if (is_node_event(ev) && !ev->by) ev->by = s->self_user;
}

int px_events_accept(struct px_server *s, struct px_event *ev, int64_t now,
                     struct px_event_result *res) {
  sign_node_event(s, ev);
  int rc = px_events_core(s, ev, now, res);
  if (rc) return rc;
  return px_events_record(s, ev, res, now);
}

/* A job that ended without running (cancelled while pending, rejected) has
 * its accounting row too, as sacct shows it. Live only: the row is written
 * in the same transaction as the record (commit.c take_acct), so recovery
 * finds it in the store and must not queue it again. */
int px_events_account_unstarted(struct px_server *s, const struct px_event *ev) {
  if (ev->kind != PX_EV_CANCEL && ev->kind != PX_EV_REJECT) return 0;
  struct px_sjob *j = px_jobs_find(s, ev->job_id);
  if (!j || px_sjob_is_array(j) || j->start) return 0;
  if (j->state != PX_JOB_CANCELLED && j->state != PX_JOB_FAILED) return 0;
  return px_u64vec_push(&s->acct_pending, j->id);
}

/* The state the attempt a requeue ends shows in sacct -D, as Slurm 22.05's
 * (checked on the real one: a job preempted by a higher PriorityTier
 * partition shows PREEMPTED, `scontrol requeue` REQUEUED, a node set DOWN
 * under it NODE_FAIL; each with ExitCode 0:0 and End the requeue's time,
 * then a row of the new attempt). A GPU fault stops a job as a node
 * failure does (nodes/gpu_health.c). */
static const char *requeue_state(const char *reason) {
  if (!reason) return "REQUEUED";
  if (!strcmp(reason, "Preempted")) return "PREEMPTED";
  if (!strcmp(reason, "NodeFail") || !strcmp(reason, "GpuFault")) return "NODE_FAIL";
  return "REQUEUED";
}

/* Accounting keeps a row per attempt (store.h): a requeue of a running job
 * queues its attempt's row with the requeue record (commit.c), built now,
 * before the fold clears the run. Live only, like an end's row: recovery
 * finds it in the store. The record was just appended: s->seq is its seq. */
static int account_requeued(struct px_server *s, const struct px_event *ev, int64_t now) {
  if (ev->kind != PX_EV_REQUEUE) return 0;
  struct px_sjob *j = px_jobs_find(s, ev->job_id);
  if (!j || j->state != PX_JOB_RUNNING || !j->start) return 0;
  struct px_sjob ended = *j; /* its steps still running end with it, now */
  ended.end = now;
  char *nodelist = px_jobs_nodelist(s, j), *steps = px_steps_acct_text(s, &ended);
  struct px_acct_row r;
  px_jobs_attempt_row(s, j, &r, nodelist, requeue_state(ev->reason), now, s->seq);
  r.steps = steps;
  int rc = nodelist ? px_commit_add_row(s, &r) : PX_ENOMEM;
  free(nodelist);
  free(steps);
  if (rc)
    px_warn("accounting row of job %llu attempt %u not written: %s", (unsigned long long)j->id, r.attempt,
            px_strerror(rc));
  return 0; /* the record stands: its fold must follow */
}

int px_events_record(struct px_server *s, struct px_event *ev, const struct px_event_result *res,
                     int64_t now) {
  int rc;
  if ((rc = px_events_journal(s, ev, res, now))) {
    px_error("journal: %s record of job %llu not added (%s)", px_event_kind_name(ev->kind),
             (unsigned long long)ev->job_id, px_strerror(rc));
    return rc;
  }
  account_requeued(s, ev, now);
  if ((rc = px_events_fold(s, ev, res, now))) return rc;
  if (is_node_event(ev)) px_node_acct_event(s, ev, now); /* live only: sacctmgr show event */
  return px_events_account_unstarted(s, ev);
}
