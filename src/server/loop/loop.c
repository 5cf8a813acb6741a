/*
 * loop.c - the main thread, in phases like libuv's uv_run:
 *
 *   1. take every queued request (waiting until one comes or a timer is due)
 *   2. handle them: authorise, build the event, apply it to the core and,
 *      when accepted, append its journal record (events.c)
 *   3. seal the records for the group commit (commit.c): one of the
 *      requests' threads commits them (one transaction + fsync for all that
 *      were sealed meanwhile) and answers them, only then: an acknowledged
 *      change is durable; this thread does not wait for it
 *   4. scheduling cycle when something changed: core actions, journaled
 *      and committed (waiting for it), THEN launch orders to agents; the
 *      pending jobs' reasons and priorities it decided go into the table
 *   5. timers: node silence, checkpoints
 *   6. publish a snapshot for readers (at most every PUBLISH_MIN_NS), once
 *      everything it shows is durable
 *
 * A failed commit is fatal: its requests and every later one are answered
 * 503 and the server exits, so no client hears yes for a change that is not
 * durable, and a restart recovers the journal's state.
 */
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/event.h"
#include "server/journal/journal.h"
#include "server/loop/loop.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"
#include "server/svc/svc_server.h"
#include "util/log.h"

#define CYCLE_MIN_NS 2000000LL       /* coalesce bursts of changes into one cycle */
#define CADENCE 4                    /* a cycle or a publish waits 4x its own cost */
#define CYCLE_PERIOD_NS 1000000000LL /* and cycle at least this often (begin times, age) */
#define NO_ROOM_GAP_NS 100000000LL   /* cycles that could start nothing: this far apart */
#define PUBLISH_MIN_NS 10000000LL
#define TIMER_NS 1000000000LL

int64_t px_now_mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int64_t px_now_real_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int64_t thread_cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* A START or REJECT action as the event the core made of it: applied by
 * the cycle already, journaled and folded into the tables here (events.c);
 * recovery applies the START again (the job runs on that allocation). */
static struct px_event action_event(const struct px_server *s, const struct px_action *a) {
  if (a->kind == PX_ACT_REJECT)
    return (struct px_event){.kind = PX_EV_REJECT, .job_id = a->job_id, .reason = px_reason_name(a->reason)};
  return (struct px_event){.kind = PX_EV_START, .job_id = a->job_id,
                           .alloc = &s->acts.allocs[a->alloc_first], .nalloc = a->nalloc,
                           .time_limit_s = a->time_limit_s, .array_job_id = a->array_job_id,
                           .array_task_id = a->array_task_id};
}

/*
 * Preemption (issue 4). A SIGNAL with a preemptor is the grace warning: the
 * job's processes get the signal and may checkpoint (a --signal before the
 * time limit, preemptor 0, is the agent's own timer: not sent twice). A
 * PREEMPT stops the whole gang (SIGTERM, SIGKILL after KillWait); the core
 * keeps the job RUNNING until the agents report its end, so the preemptor
 * never lands on GPUs still in use. task_ended() then requeues it (same id
 * and submit time) or ends it PREEMPTED. The decision itself is not
 * journaled: after a crash the end report alone decides, requeueing when the
 * job allows it.
 */
static void preempt_order(struct px_server *s, const struct px_action *a) {
  if (a->kind != PX_ACT_PREEMPT && a->kind != PX_ACT_SIGNAL) return;
  struct px_sjob *j = px_jobs_find(s, a->job_id);
  if (!j || j->state != PX_JOB_RUNNING || j->preempting) return;
  if (a->kind == PX_ACT_SIGNAL) {
    if (a->preemptor_job_id == 0 || a->signal <= 0) return;
    px_nodes_signal(s, j, a->signal);
    return;
  }
  j->preempting = true;
  j->preempt_cancel = a->preempt_mode == PX_PREEMPT_CANCEL || !j->spec.requeue;
  px_info("job %llu preempted by job %llu (%s, %.2f GPU-hours lost): %s",
          (unsigned long long)j->id, (unsigned long long)a->preemptor_job_id,
          px_preempt_cause_name(a->preempt_cause), a->gpu_hours_lost,
          j->preempt_cancel ? "cancel" : "requeue");
  px_nodes_stop(s, j, SIGTERM, "PREEMPTED");
}

/*
 * An array task the core starts although its record already ended. At
 * recovery a task whose start the core could not take back (the
 * configuration changed under its allocation) ran outside the core, so the
 * core's array still counts it as not started and, once the queue allows,
 * starts the same id (tasks have fixed ids) again. The job table knows how
 * it ended: tell the core that (it frees the allocation and counts the
 * task's end for the array's %N and dependencies), journal nothing and
 * launch nothing, so no task runs twice.
 */
static bool already_ended(struct px_server *s, const struct px_action *a, int64_t now) {
  struct px_sjob *j = a->array_job_id ? px_jobs_find(s, a->job_id) : NULL;
  if (!j || !px_job_state_terminal(j->state)) return false;
  px_warn("recovery: array task %llu already ended %s: reconciled in the scheduler",
          (unsigned long long)j->id, px_job_state_name(j->state));
  struct px_event ev = {.kind = PX_EV_END, .job_id = j->id, .state = j->state, .exit_code = j->exit_code};
  struct px_event_result res;
  px_core_apply(s->core, &ev, now, &res); /* the core only: the table has it ended */
  return true;
}

/*
 * Pending reasons and priorities are the core's: a cycle decides them (a
 * job ahead started, a node went down, age grew), and the job table takes
 * them from the cycle, right after it, so that the next snapshot shows
 * them:
 *   - the jobs that an event changed since the last cycle (a submit, a
 *     hold, a release, a requeue: events.c lists them in s->follow) are
 *     read at once, one lookup each, so a new job shows Dependency or
 *     BeginTime in the first snapshot after its first cycle;
 *   - every pending job is read at most once per FOLLOW_ALL_NS, and only
 *     after a cycle (nothing moves between cycles); its view is rebuilt
 *     when its reason moved, or its priority moved and was last taken
 *     PRIO_REFRESH_S ago (px_jobs_follow), so that 100,000 pending jobs do
 *     not rebuild 100,000 views every second.
 * Why not lazily when a listing is rendered: a view is built once and
 * cached (its JSON is encoded by reader threads, which may not touch the
 * core), so a render-time read would have to check every pending job at
 * every publish (up to 100 a second with watchers) instead of once a
 * second. Cheaper still would be a cycle that returns the jobs whose
 * reason or priority it changed: the core does not say that today.
 */
#define FOLLOW_ALL_NS 1000000000LL
static void follow_cycle(struct px_server *s, int64_t now) {
  struct px_job_view v;
  int64_t mono = px_now_mono_ns();
  if (mono - s->follow_all_ns >= FOLLOW_ALL_NS) {
    size_t cursor = 0;
    while (px_core_job_next(s->core, &cursor, &v)) {
      struct px_sjob *j = v.state == PX_JOB_PENDING ? px_jobs_find(s, v.job_id) : NULL;
      if (j) px_jobs_follow(s, j, &v, now, false);
    }
    s->follow_all_ns = mono;
  } else {
    for (size_t i = 0; i < s->follow.len; i++) {
      struct px_sjob *j = px_jobs_find(s, s->follow.v[i]);
      if (j && px_core_job_get(s->core, j->id, &v) == 0) px_jobs_follow(s, j, &v, now, true);
    }
  }
  px_u64vec_clear(&s->follow);
}

/* sdiag's record of the cycle that began at t0 with queue_len pending jobs:
 * a full cycle visits each of them (core.h), so that is its depth. */
static void sdiag_cycle(struct px_server *s, int64_t now, int64_t t0, size_t queue_len) {
  struct px_core_stats st;
  px_core_stats(s->core, &st);
  struct px_sdiag_cycle c = {.now = now, .us = (uint64_t)(px_now_mono_ns() - t0) / 1000,
                             .depth = queue_len, .queue_len = queue_len,
                             .backfilled_total = st.backfilled,
                             .backfill = s->conf->sched.backfill != PX_BACKFILL_NONE};
  px_sdiag_cycle(s->sdiag, &c);
}

int px_loop_cycle(struct px_server *s, int64_t now) {
  int64_t t0 = px_now_mono_ns(), cpu0 = thread_cpu_ns();
  struct px_core_stats before;
  px_core_stats(s->core, &before);
  int rc = px_core_cycle(s->core, now, &s->acts);
  if (rc && rc != PX_ENOMEM) px_error("scheduling cycle failed: %s", px_strerror(rc));
  size_t nstart = 0;
  for (size_t i = 0; i < s->acts.len; i++) {
    const struct px_action *a = &s->acts.v[i];
    if (a->kind != PX_ACT_START && a->kind != PX_ACT_REJECT) continue;
    if (a->kind == PX_ACT_START && already_ended(s, a, now)) continue;
    nstart += a->kind == PX_ACT_START;
    struct px_event ev = action_event(s, a);
    struct px_event_result res = {.known = true, .account = PX_NONE};
    int jrc = px_events_journal(s, &ev, &res, now);
    if (!jrc) jrc = px_events_fold(s, &ev, &res, now);
    if (!jrc) jrc = px_events_account_unstarted(s, &ev);
    /* Fatal like a failed commit, and before any commit of this cycle: the
     * core has already applied the action (a START holds its allocation),
     * and no undo exists (a requeue is not one: it counts a restart, resets
     * the job's age and, for an array task, leaves a pending task the job
     * table never saw). Exiting now leaves the journal as it was before
     * the cycle; the restarted server replays it and cycles again. */
    if (jrc) {
      px_error("journal: %s record of job %llu not added (%s)", px_event_kind_name(ev.kind),
               (unsigned long long)a->job_id, px_strerror(jrc));
      return PX_EIO;
    }
  }
  if (px_journal_commit(s)) return PX_EIO; /* fatal: see the file comment */
  /* Journaled: now the agents may hear of it. */
  for (size_t i = 0; i < s->acts.len; i++) preempt_order(s, &s->acts.v[i]);
  for (size_t i = 0; nstart && i < s->acts.len; i++) {
    const struct px_action *a = &s->acts.v[i];
    struct px_sjob *j = px_jobs_find(s, a->job_id);
    if (!j || a->kind != PX_ACT_START || j->state != PX_JOB_RUNNING) continue; /* already_ended */
    px_nodes_launch(s, j);
    px_metrics_queue_wait(s->metrics, (double)(j->start - j->eligible));
  }
  s->need_cycle = false;
  s->last_cycle_ns = px_now_mono_ns();
  s->cycles++;
  /* The cadence (cycle_due) spaces cycles by this thread's own work: wall
   * time would also count the commit's fsync and the time others ran
   * (hundreds of jobs starting at once on a shared machine), and cycles
   * then came too rarely to keep the nodes busy. */
  s->cycle_cost_ns = thread_cpu_ns() - cpu0;
  s->cycle_cpu_ns += s->cycle_cost_ns;
  px_metrics_cycle(s->metrics, (double)(s->last_cycle_ns - t0) / 1e9);
  sdiag_cycle(s, now, t0, before.pending_records);
  follow_cycle(s, now); /* not in the cycle's cost: it paces the cycles, this is the readers' */
  return 0;
}

/* When the next cycle and the next publish may run: after changes, but
 * never sooner than CADENCE times their last cost, so that under a storm of
 * requests the main thread keeps most of its time for committing them. */
static int64_t cycle_due(const struct px_server *s) {
  int64_t gap = CADENCE * s->cycle_cost_ns;
  if (gap < CYCLE_MIN_NS) gap = CYCLE_MIN_NS;
  return s->last_cycle_ns + (s->need_cycle ? gap : CYCLE_PERIOD_NS);
}

/* A reader waiting for what it was acknowledged (read your writes) gets
 * its snapshot at once. Watchers and node changes get one at the cadence;
 * changes nobody is waiting for (a storm of submits) at most once per
 * PUBLISH_IDLE_NS: a reader that comes asks for a fresh one anyway. */
#define PUBLISH_IDLE_NS 1000000000LL
static int64_t publish_due(const struct px_server *s) {
  if (atomic_load(&s->snap_waiters) > 0) return 0;
  int64_t gap = CADENCE * s->publish_cost_ns;
  if (gap < PUBLISH_MIN_NS) gap = PUBLISH_MIN_NS;
  if (!s->nodes_dirty && atomic_load(&s->snap_watchers) == 0 && gap < PUBLISH_IDLE_NS)
    gap = PUBLISH_IDLE_NS;
  return s->last_publish_ns + gap;
}

/* Fair-share figures are rebuilt at most once a second; a publish that
 * reused older ones is followed by one when they may be rebuilt, so that
 * an idle server does not show stale usage for ever. */
static int64_t shares_due(const struct px_server *s) { return s->shares_ns + 1000000000LL; }

/* The same for the state lines of /metrics (rebuilt at most once a second,
 * publish.c): a publish that reused older ones, because a change came less
 * than a second after they were built, is followed by one when they may be
 * rebuilt, so that gauges catch up although nothing changes afterwards. */
static bool metrics_stale(const struct px_server *s) {
  return s->state_metrics && s->state_metrics_ns < s->publish_start_ns;
}
static int64_t metrics_due(const struct px_server *s) { return s->state_metrics_ns + 1000000000LL; }

/* A cycle is due but could start nothing (every node full, down or
 * drained, no preemption): a storm of submits to a full cluster would
 * otherwise cycle over the whole queue every few milliseconds for nothing.
 * It waits until NO_ROOM_GAP_NS after the last one; any request (a job's
 * end, a node's return) wakes the loop, which asks again. */
static bool no_room(struct px_server *s, int64_t mono) {
  if (mono - s->last_cycle_ns >= NO_ROOM_GAP_NS || px_core_has_room(s->core)) return false;
  s->no_room_until_ns = s->last_cycle_ns + NO_ROOM_GAP_NS;
  return true;
}

static int64_t next_deadline(const struct px_server *s, int64_t now_ns, int64_t timers_ns) {
  int64_t d = timers_ns, c = cycle_due(s), p = publish_due(s);
  if (s->no_room_until_ns > c) c = s->no_room_until_ns;
  if (c < d) d = c;
  if (s->dirty && p < d) d = p;
  if (s->shares_stale && shares_due(s) < d) d = shares_due(s);
  if (metrics_stale(s) && metrics_due(s) < d) d = metrics_due(s);
  return d < now_ns ? now_ns : d;
}

/*
 * Group commit, gathered: when fewer requests wait than recent groups held,
 * the clients of the last group are most likely writing their next request
 * right now (they just heard their answers), so wait for them a little (at
 * most GATHER_NS, far less than an fsync) and commit them together: with N
 * clients each waiting for its answer, a group then holds about N requests,
 * the clients stay in step and each waits for one fsync. Without it they
 * fall into a convoy, one request per commit, each client waiting for N.
 * The target follows the largest recent group; a gather that comes up
 * short (a client went away) lowers it to what came, but by half at most
 * per gather, so that a group split by a straggler joins up again while a
 * burst (100 agents at once) stops costing waits after a few requests.
 */
#define GATHER_NS 250000LL
static size_t count(const struct px_req *r) {
  size_t n = 0;
  for (; r; r = r->next) n++;
  return n;
}

static struct px_req *gather(struct px_server *s, struct px_req *reqs) {
  size_t n = count(reqs);
  if (n < s->gather_target) {
    reqs = px_queue_take_more(&s->queue, reqs, s->gather_target, px_now_mono_ns() + GATHER_NS);
    n = count(reqs);
    size_t half = s->gather_target / 2;
    if (n < s->gather_target) s->gather_target = n > half ? n : half;
  }
  if (n > s->gather_target) s->gather_target = n;
  return reqs;
}

/*
 * Handles a group of requests, then commits it. When this thread has other
 * work now (a cycle is due, or more requests wait), the group is sealed for
 * the group commit (commit.c): one of its own threads commits it and
 * answers the rest while this one goes on, the cycle or the next group
 * overlapping the fsync. Otherwise the commit runs here and this thread
 * answers, one thread hand-off less per request (a lone sbatch). With
 * accounting rows due (jobs ended) it runs here too, the rows right after.
 */
static int handle_batch(struct px_server *s, struct px_req *reqs) {
  reqs = gather(s, reqs);
  int64_t now = time(NULL);
  for (struct px_req *r = reqs; r; r = r->next) px_handle_request(s, r, now);
  /* a due cycle that waits for room (no_room) is no work for this thread */
  bool cycling = px_now_mono_ns() >= cycle_due(s) && !s->no_room_until_ns;
  bool busy = cycling || px_queue_pending(&s->queue);
  if (busy && px_commit_seal(s, reqs)) return 0;
  int rc = px_journal_sync(s);
  for (struct px_req *r = reqs, *next; r; r = next) {
    next = r->next; /* r is gone after px_req_done */
    if (rc) px_req_error(r, 503, "UNAVAILABLE", "journal failure: the change was not recorded");
    px_req_done(r);
  }
  return rc ? PX_EIO : 0;
}

/* With --ha, a standby first (journal/ha.c); a leader that stops leading
 * (its lease lost, or past its deadline after a pause) stops at once:
 * PX_ESTATE, and `phalanx server` exits PX_HA_EXIT_DEPOSED. */
int px_server_run(struct px_server *s) {
  if (s->ha) {
    int hrc = px_ha_standby(s);
    if (hrc) return hrc == PX_EAGAIN ? 0 : hrc;
    px_outbox_renumber(s->outbox);
  }
  int64_t timers_ns = px_now_mono_ns();
  int rc = 0;
  while (!atomic_load(&s->stop)) {
    if (!px_ha_leading(s)) {
      rc = PX_ESTATE;
      break;
    }
    int64_t mono = px_now_mono_ns();
    struct px_req *reqs = px_queue_take(&s->queue, next_deadline(s, mono, timers_ns));
    if (reqs && (rc = handle_batch(s, reqs))) break;
    if (px_commit_failed(s)) { /* a leader's commit failed (commit.c) */
      rc = PX_EIO;
      break;
    }
    mono = px_now_mono_ns();
    int64_t now = time(NULL);
    if ((rc = px_svc_tick(s, now))) break; /* services: their replicas as jobs (server/svc/) */
    if (mono >= cycle_due(s) && !no_room(s, mono)) {
      s->no_room_until_ns = 0;
      if ((rc = px_loop_cycle(s, now))) break;
    }
    if (mono >= timers_ns) {
      px_nodes_check(s, now);
      px_mail_reap(s);
      if ((rc = px_journal_commit(s))) break; /* node failures requeue jobs */
      px_archive_checkpoint(s, now);          /* after a commit: nothing pending */
      timers_ns = mono + TIMER_NS;
    }
    if ((s->dirty && mono >= publish_due(s)) || (s->shares_stale && mono >= shares_due(s)) ||
        (metrics_stale(s) && mono >= metrics_due(s))) {
      if ((rc = px_journal_sync(s))) break; /* readers see only what is durable */
      s->publish_start_ns = px_now_mono_ns();
      if (px_publish(s, now) == 0) s->dirty = false;
      s->last_publish_ns = px_now_mono_ns();
      s->publish_cost_ns = s->last_publish_ns - mono;
    }
  }
  if (rc && px_ha_deposed(s)) rc = PX_ESTATE; /* a fenced commit too: deposed, not broken */
  if (rc == PX_ESTATE) px_error("no longer the leader: stopping");
  else if (rc) px_error("journal failure: stopping without acknowledging the last batch");
  return rc;
}

void px_server_stop(struct px_server *s) {
  atomic_store(&s->stop, true);
  px_queue_stop(&s->queue);
}
