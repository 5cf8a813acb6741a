/*
 * loop.c - the discrete-event loop: one policy over one trace (run.h).
 *
 * The virtual clock jumps from event to event. Submits come from the
 * submit-sorted job array through a cursor; job ends sit in a binary min-heap
 * keyed (time, job), so ties break the same way every run. At each distinct
 * event time the loop
 *
 *   1. integrates the levels that held since the previous time into the
 *      series (busy GPUs, pending jobs, busy GPUs per account);
 *   2. reports every end due now to the core (PX_EV_END events), then
 *      submits every job arriving now (PX_EV_SUBMIT), both through px_core_apply;
 *   3. calls px_core_cycle() once, and again only while the cycle preempted
 *      (freed resources the preemptor now needs) or used its whole start
 *      budget, and applies the actions: START pushes the job's end
 *      (start + run time, cut at the limit the core gives), REJECT records
 *      the job as rejected, PREEMPT requeues it (Slurm's requeue: the run's
 *      work is lost and counted).
 *
 * Nothing else can change between events (no job ends, arrives or frees
 * resources), so no cycle is skipped that could have started a job, and the
 * number of cycles is at most twice the number of jobs. The end a run of a
 * job requeued since would have had is no event: nothing frees then (the
 * heap keeps it until it surfaces, and the loop drops it unseen). One more exact skip:
 * when fewer GPUs are free than the smallest pending request and no job may
 * preempt another (px_core_may_preempt), no START is possible, so the
 * cycle is not called (on a saturated cluster most submits are such events). With bf_interval a
 * cycle soon after a backfill pass is a main pass without backfill; when it
 * leaves a job waiting, the core owes a backfill pass (px_core_next_pass_s)
 * and the loop wakes then, as the server's periodic cycle would. Core time
 * is the epoch + trace seconds (PX_SIM_EPOCH_S, or the Unix time of the
 * trace's second 0 when it gives one: an export of the cluster's own
 * accounting), so the core sees ordinary Unix times, and a replay of the
 * record the same ones as the server did (backfill plans align their slots
 * to multiples of bf_resolution in Unix time).
 *
 * A replay of the cluster's own accounting (cycle_per_event) runs step 3
 * after each end and each submit instead, as the server's loop cycles after
 * each change: two ends in one second then free their GPUs one after the
 * other, as on the cluster, not as one larger hole. When the record keeps
 * the server's order of each job's submit and end (the journal seqs of
 * trace.h's submit_seq and end_seq), the ends and submits of one second
 * are handled in that order, as the server handled them, instead of all
 * ends (by job) before all submits: a second's order decides which job
 * takes a hole first, and on a deep queue the turns that follow. With the
 * seqs of the starts too (start_seq: the START records a server's cycle
 * wrote), the replay cycles where the server's cycles ran instead of after
 * each event: before the first event whose seq is past a recorded start
 * not yet passed, in that start's second (waking for it when no event
 * falls in it), and at the end of a second unless the server's next such
 * cycle ran in the next second. The server spaces its cycles by their cost, so on
 * a deep queue one cycle sees several ends and submits at once: a replay
 * that cycles after each fills every hole with the first small job that
 * fits, where the server saw larger holes. Once a job ends at another time
 * than in the record (leaves_record: a node failure the record does not
 * carry, another policy), the marks no longer describe the replay's
 * changes, and it cycles after each event from then on.
 */
#include "sim/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/event.h"
#include "sim/failures.h"
#include "sim/node_events.h"
#include "sim/progress.h"

struct mark {
  uint64_t seq; /* a START record's journal seq: a cycle of the server ran there */
  int64_t t_s;  /* and then (the recorded start) */
};

struct end_ev {
  int64_t t_s;
  uint64_t seq;          /* order within the second: the recorded end_seq (by_seq), else 0 */
  uint32_t job, attempt; /* attempt WAKE_ONLY: no end, only a cycle then */
};
#define WAKE_ONLY UINT32_MAX

struct loop {
  const struct px_sim_setup *s;
  struct px_sim_result *r;
  struct px_core *core;
  struct px_sim_jobrun *runs;
  struct end_ev *heap;
  size_t nheap, heap_cap;
  struct px_actions acts;
  int64_t now_s;
  uint32_t next;          /* next job to submit */
  int64_t busy_gpus, pending;
  int64_t *acct_busy;     /* per setup account */
  uint32_t *pend_by_gpus; /* pending jobs per GPU count (0..total GPUs) */
  uint32_t pend_min_gpus; /* smallest GPU count pending (UINT32_MAX: none) */
  uint32_t pend_max_gpus; /* an upper bound of the largest (bounds the scan for the next minimum) */
  bool may_preempt;       /* the policy can start jobs without free GPUs */
  bool preempting;        /* ... and some job could preempt since (cycle_can_start) */
  bool cycle_per_event;   /* px_sim_run_opts.cycle_per_event */
  bool by_seq;            /* ... and the trace has the server's order of events (submit_seq, end_seq) */
  struct mark *marks;     /* by_seq: the recorded starts by seq (where and when the server cycled) */
  size_t nmarks, mark;    /* how many; the first not yet passed */
  bool left_record;       /* a job ended where the record has no such end: the marks no longer apply */
  int64_t ckpt_s, restart_s; /* the checkpoint model: interval (0: none) and restart cost */
  int64_t epoch_s;        /* core time of trace second 0 */
  int64_t wake_s;         /* a backfill pass owed then (bf_interval); INT64_MAX: none */
  struct px_diag *d;
  struct px_sim_progress *progress;
  struct px_sim_failures fail;  /* injected GPU failures (failures.h) */
  struct px_node_timeline nodes; /* the record's node outages (node_events.h) */
};

static bool ev_less(const struct end_ev *a, const struct end_ev *b) {
  if (a->t_s != b->t_s) return a->t_s < b->t_s;
  return a->seq != b->seq ? a->seq < b->seq : a->job < b->job;
}

static int heap_push(struct loop *l, struct end_ev e) {
  if (l->nheap == l->heap_cap) {
    size_t cap = l->heap_cap ? l->heap_cap * 2 : 1024;
    struct end_ev *h = realloc(l->heap, cap * sizeof *h);
    if (!h) return PX_ENOMEM;
    l->heap = h;
    l->heap_cap = cap;
  }
  size_t i = l->nheap++;
  while (i > 0 && ev_less(&e, &l->heap[(i - 1) / 2])) {
    l->heap[i] = l->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  l->heap[i] = e;
  return 0;
}

static struct end_ev heap_pop(struct loop *l) {
  struct end_ev top = l->heap[0], last = l->heap[--l->nheap];
  size_t i = 0, n = l->nheap;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && ev_less(&l->heap[c + 1], &l->heap[c])) c++;
    if (!ev_less(&l->heap[c], &last)) break;
    l->heap[i] = l->heap[c];
    i = c;
  }
  if (n) l->heap[i] = last;
  return top;
}

/* Step 1: the levels held over [now, t). */
static void advance(struct loop *l, int64_t t_s) {
  struct px_sim_series *ser = &l->r->series;
  px_sim_series_add(ser, PX_SIM_CH_BUSY, l->now_s, t_s, l->busy_gpus);
  px_sim_series_add(ser, PX_SIM_CH_PENDING, l->now_s, t_s, l->pending);
  for (uint32_t a = 0; a < l->s->naccounts; a++)
    px_sim_series_add(ser, PX_SIM_CH_ACCOUNT + a, l->now_s, t_s, l->acct_busy[a]);
  l->now_s = t_s;
}

/*
 * Pending jobs by GPU count, so the loop knows the smallest request waiting.
 * A START needs at least that many free GPUs; when fewer are free (and the
 * policy cannot preempt) a cycle could not start anything, and is skipped.
 */
static void pend_add(struct loop *l, uint32_t job) {
  uint32_t g = l->s->jobs[job].gpus;
  l->pending++;
  l->pend_by_gpus[g]++;
  if (g < l->pend_min_gpus) l->pend_min_gpus = g;
  if (g > l->pend_max_gpus) l->pend_max_gpus = g;
}

static void pend_del(struct loop *l, uint32_t job) {
  uint32_t g = l->s->jobs[job].gpus;
  l->pending--;
  if (--l->pend_by_gpus[g] || g != l->pend_min_gpus) return;
  uint32_t m = g;
  while (m <= l->pend_max_gpus && !l->pend_by_gpus[m]) m++;
  l->pend_min_gpus = m <= l->pend_max_gpus ? m : UINT32_MAX;
}

/* A policy with a PreemptMode may start a job without free GPUs once the
 * core finds that some job may preempt another (px_core_may_preempt: a QoS
 * map gives pending jobs a QoS that preempts the others'; without one, no
 * cycle can preempt). From then on every event cycles, as it always did
 * with a PreemptMode: the idle cycles change the fair-share samples. */
static bool cycle_can_start(struct loop *l) {
  if (l->may_preempt && (l->preempting || (l->preempting = px_core_may_preempt(l->core)))) return true;
  return l->pend_min_gpus != UINT32_MAX && (int64_t)l->pend_min_gpus <= (int64_t)l->s->total_gpus - l->busy_gpus;
}

static void set_busy(struct loop *l, uint32_t job, int sign) {
  int64_t g = (int64_t)l->s->jobs[job].gpus * sign;
  l->busy_gpus += g;
  l->acct_busy[l->s->jobs[job].account] += g;
}

static int end_job(struct loop *l, uint32_t job) {
  struct px_sim_jobrun *u = &l->runs[job];
  enum px_job_state st = u->flags & PX_SIMJ_TIMEOUT ? PX_JOB_TIMEOUT : PX_JOB_COMPLETED;
  struct px_event ev = {.kind = PX_EV_END, .job_id = job + 1, .state = st};
  struct px_event_result res;
  int rc = px_core_apply(l->core, &ev, l->epoch_s + l->now_s, &res);
  if (rc) *l->d = res.diag;
  if (rc) return rc;
  u->state = PX_SIMJ_DONE;
  u->end_s = l->now_s;
  set_busy(l, job, -1);
  l->r->done++;
  return 0;
}

/* The job as the core sees it (mapping rules: map.c). Strings are borrowed: the core copies. */
/* The job's spec under its recorded user (px_sim_job_spec), requeued when
 * preempted, with its --begin. */
static void fill_spec(const struct loop *l, uint32_t job, struct px_jobspec *spec) {
  const struct px_sim_job *j = &l->s->jobs[job];
  px_sim_job_spec(l->s, job, j->assoc, spec);
  spec->requeue = true;
  /* eligible later than submitted: the job's --begin (the server's only
   * source of an eligible time) */
  const struct px_trace_job *tj = &l->s->trace->jobs.v[j->trace_index];
  if (tj->eligible_s > tj->submit_s) spec->begin_s = l->epoch_s + tj->eligible_s;
}

static int submit_job(struct loop *l, uint32_t job) {
  struct px_jobspec spec;
  struct px_event_result res;
  fill_spec(l, job, &spec);
  /* a recorded dependency, in the replay's ids: the core holds the job */
  int rc = px_sim_dependency(l->s, job, l->runs, &spec.dependency);
  if (rc) return rc;
  struct px_event ev = {.kind = PX_EV_SUBMIT, .job_id = job + 1, .spec = &spec};
  rc = px_core_apply(l->core, &ev, l->epoch_s + l->now_s, &res);
  free(spec.dependency);
  if (rc == PX_ENOMEM) return rc;
  l->r->submitted++;
  if (rc) {
    l->runs[job].state = PX_SIMJ_REJECTED;
    l->r->rejected++;
    if (!l->r->reject_example[0])
      snprintf(l->r->reject_example, sizeof l->r->reject_example, "job %.32s: %.150s",
               px_trace_id(l->s->trace, &l->s->trace->jobs.v[l->s->jobs[job].trace_index]), res.diag.msg);
    return 0;
  }
  pend_add(l, job);
  /* a wake at its begin time (an end event no run matches), as the
   * server's periodic cycle would find it eligible */
  return spec.begin_s ? heap_push(l, (struct end_ev){.t_s = spec.begin_s - l->epoch_s, .job = job,
                                                     .attempt = WAKE_ONLY})
                      : 0;
}

static int on_start(struct loop *l, const struct px_action *a) {
  uint32_t job = (uint32_t)(a->job_id - 1);
  struct px_sim_jobrun *u = &l->runs[job];
  const struct px_sim_job *j = &l->s->jobs[job];
  /* a run resumed from a checkpoint first loads it, then does what is left */
  int64_t run = j->duration_s - u->saved_s + (u->saved_s ? l->restart_s : 0);
  if (a->time_limit_s > 0 && a->time_limit_s < run) {
    run = a->time_limit_s;
    u->flags |= PX_SIMJ_TIMEOUT;
    l->r->timed_out++;
  }
  /* counted once per job, whichever of its runs they concern */
  if (a->backfilled && !(u->flags & PX_SIMJ_BACKFILLED)) u->flags |= PX_SIMJ_BACKFILLED, l->r->backfilled++;
  if (a->waited_topology && !(u->flags & PX_SIMJ_TOPO_WAIT)) u->flags |= PX_SIMJ_TOPO_WAIT, l->r->topo_waited++;
  u->state = PX_SIMJ_RUNNING;
  u->start_s = l->now_s;
  if (u->first_start_s < 0) u->first_start_s = l->now_s;
  if (u->saved_s) l->r->gpu_s_restart += (int64_t)j->gpus * (run < l->restart_s ? run : l->restart_s);
  pend_del(l, job);
  set_busy(l, job, +1);
  uint64_t seq = l->by_seq ? l->s->trace->jobs.v[j->trace_index].end_seq : 0;
  /* a job held by after:this is free from now: the server's next cycle
   * (a second on) starts it, not the next event */
  int rc = j->after_target ? heap_push(l, (struct end_ev){.t_s = l->now_s + 1, .job = job, .attempt = WAKE_ONLY}) : 0;
  if (rc) return rc;
  return heap_push(l, (struct end_ev){.t_s = l->now_s + run, .seq = seq, .job = job, .attempt = u->attempt});
}

/* The checkpoint model: of a run stopped after elapsed seconds, the
 * progress past the restart cost, rounded down to whole checkpoint
 * intervals, is kept (0 without checkpoints: Slurm's requeue). */
static int64_t kept_by_checkpoints(const struct loop *l, const struct px_sim_jobrun *u, int64_t elapsed) {
  if (l->ckpt_s <= 0) return 0;
  int64_t progress = elapsed - (u->saved_s ? l->restart_s : 0);
  if (progress <= 0) return 0;
  int64_t kept = progress / l->ckpt_s * l->ckpt_s, left = l->s->jobs[u - l->runs].duration_s - u->saved_s;
  return kept < left ? kept : left;
}

/* A running job back to the queue (Slurm's requeue): its run's work since
 * its last checkpoint (all of it without checkpoints) is lost and counted
 * into *lost; the rest is kept and the next run resumes from it. */
static int requeue_run(struct loop *l, uint32_t job, const char *reason, int64_t *lost) {
  struct px_sim_jobrun *u = &l->runs[job];
  struct px_event ev = {.kind = PX_EV_REQUEUE, .job_id = job + 1, .reason = reason};
  struct px_event_result res;
  int rc = px_core_apply(l->core, &ev, l->epoch_s + l->now_s, &res);
  if (rc) {
    *l->d = res.diag;
    return rc;
  }
  int64_t elapsed = l->now_s - u->start_s, kept = kept_by_checkpoints(l, u, elapsed);
  int64_t gpus = (int64_t)l->s->jobs[job].gpus;
  *lost += gpus * (elapsed - kept);
  l->r->gpu_s_ckpt_kept += gpus * kept;
  u->saved_s += kept;
  set_busy(l, job, -1);
  u->state = PX_SIMJ_PENDING;
  u->attempt++; /* its end event is now stale */
  u->flags &= (uint8_t)~PX_SIMJ_TIMEOUT;
  pend_add(l, job);
  return 0;
}

static int on_preempt(struct loop *l, const struct px_action *a) {
  uint32_t job = (uint32_t)(a->job_id - 1);
  if (l->runs[job].state != PX_SIMJ_RUNNING) return 0;
  int rc = requeue_run(l, job, NULL, &l->r->gpu_s_lost);
  if (rc) return rc;
  l->runs[job].npreempt++;
  l->r->preemptions++;
  return 0;
}

static int apply(struct loop *l, bool *again) {
  size_t starts = 0;
  for (size_t i = 0; i < l->acts.len; i++) {
    const struct px_action *a = &l->acts.v[i];
    if (a->job_id == 0 || a->job_id > l->s->njobs) continue; /* not ours (no arrays are submitted) */
    int rc = 0;
    switch (a->kind) {
      case PX_ACT_START: rc = on_start(l, a); starts++; break;
      case PX_ACT_REJECT:
        l->runs[a->job_id - 1].state = PX_SIMJ_REJECTED;
        l->r->rejected++;
        pend_del(l, (uint32_t)(a->job_id - 1));
        break;
      case PX_ACT_PREEMPT: rc = on_preempt(l, a); *again = true; break;
      case PX_ACT_SIGNAL: break; /* the simulated job does not checkpoint early */
    }
    if (rc) return rc;
  }
  if (starts >= PX_CORE_CYCLE_MAX_STARTS) *again = true;
  return 0;
}

/* ---- injected GPU failures (failures.h) ---- */

static int gpu_event(struct loop *l, uint32_t node, uint32_t gpu, bool usable) {
  struct px_event ev = {.kind = PX_EV_GPU, .node = node, .gpu = gpu, .gpu_usable = usable,
                        .gpu_state = usable ? "OK" : "UNUSABLE"};
  struct px_event_result res;
  int rc = px_core_apply(l->core, &ev, l->epoch_s + l->now_s, &res);
  if (rc) *l->d = res.diag;
  return rc;
}

/* The running job holding GPU gpu of node, or UINT32_MAX. A failure is
 * rare: a walk of the running jobs costs less than keeping an owner table. */
static uint32_t holder(struct loop *l, uint32_t node, uint32_t gpu) {
  for (uint32_t job = 0; job < l->s->njobs; job++) {
    struct px_job_view v;
    if (l->runs[job].state != PX_SIMJ_RUNNING || px_core_job_get(l->core, job + 1, &v)) continue;
    for (uint32_t i = 0; i < v.nalloc; i++)
      if (v.alloc[i].node == node && (v.alloc[i].gpus >> gpu & 1)) return job;
  }
  return UINT32_MAX;
}

/* The job on a failed GPU is requeued whole; its run's work is lost. */
static int fail_job(struct loop *l, uint32_t job) {
  int rc = requeue_run(l, job, "GpuFault", &l->r->gpu_s_lost_fail);
  if (!rc) l->r->gpu_fail_requeues++;
  return rc;
}

static int failures_now(struct loop *l) {
  uint32_t node, gpu;
  int64_t down;
  int rc = 0;
  while (!rc && px_sim_repair_take(&l->fail, l->now_s, &node, &gpu, &down)) {
    l->r->gpu_s_down += down;
    rc = gpu_event(l, node, gpu, true);
  }
  if (!rc && px_sim_failure_take(&l->fail, l->now_s, &node, &gpu)) {
    l->r->gpu_failures++;
    uint32_t job = holder(l, node, gpu);
    rc = gpu_event(l, node, gpu, false);
    if (!rc && job != UINT32_MAX) rc = fail_job(l, job);
    if (!rc) rc = px_sim_failure_repair_at(&l->fail, l->now_s, node, gpu);
  }
  return rc;
}

/* ---- the record's node outages (node_events.h) ---- */

static int node_apply(struct loop *l, uint32_t node, enum px_event_kind kind) {
  struct px_event ev = {.kind = kind, .node = node, .reason = kind == PX_EV_NODE_DOWN ? "Not responding" : NULL};
  struct px_event_result res;
  int rc = px_core_apply(l->core, &ev, l->epoch_s + l->now_s, &res);
  if (rc) *l->d = res.diag;
  return rc;
}

static bool runs_on(struct loop *l, uint32_t job, uint32_t node) {
  struct px_job_view v;
  if (l->runs[job].state != PX_SIMJ_RUNNING || px_core_job_get(l->core, job + 1, &v)) return false;
  for (uint32_t i = 0; i < v.nalloc; i++)
    if (v.alloc[i].node == node) return true;
  return false;
}

/* The jobs on a node that went down are requeued whole, as the server
 * requeues a lost node's jobs (NODE_FAIL); their runs' work is lost. An
 * outage is rare: a walk of the jobs costs less than an owner table. */
static int requeue_on(struct loop *l, uint32_t node) {
  for (uint32_t job = 0; job < l->s->njobs; job++) {
    if (!runs_on(l, job, node)) continue;
    int rc = requeue_run(l, job, "NodeFail", &l->r->gpu_s_lost_fail);
    if (rc) return rc;
    l->r->node_fail_requeues++;
  }
  return 0;
}

/* One change of the timeline: the core hears of a node's state only when
 * it changes (spans of one kind may overlap); a resume lifts a down too
 * (core), so a node still down is taken down again. */
static int node_change(struct loop *l, const struct px_node_change *c) {
  struct px_node_timeline *tl = &l->nodes;
  uint32_t *count = c->down ? &tl->down[c->node] : &tl->drain[c->node];
  bool was = *count > 0;
  if (c->out) (*count)++;
  else if (*count) (*count)--;
  bool is = *count > 0;
  if (was == is) return 0;
  if (c->down && is) {
    l->r->node_outages++;
    int rc = requeue_on(l, c->node);
    return rc ? rc : node_apply(l, c->node, PX_EV_NODE_DOWN);
  }
  if (c->down) return node_apply(l, c->node, PX_EV_NODE_UP);
  if (is) return node_apply(l, c->node, PX_EV_NODE_DRAIN);
  int rc = node_apply(l, c->node, PX_EV_NODE_RESUME);
  return !rc && tl->down[c->node] ? node_apply(l, c->node, PX_EV_NODE_DOWN) : rc;
}

static int node_changes_now(struct loop *l) {
  int rc = 0;
  while (!rc && px_node_timeline_due(&l->nodes) <= l->now_s) rc = node_change(l, &l->nodes.v[l->nodes.next++]);
  return rc;
}

/* Step 3: cycle until nothing is left to do at this instant. */
static int cycle(struct loop *l) {
  for (int round = 0; round < 64; round++) {
    bool again = false;
    int rc = px_core_cycle(l->core, l->epoch_s + l->now_s, &l->acts);
    l->r->cycles++;
    size_t before = l->r->done + l->r->rejected;
    int rc2 = apply(l, &again);
    if (l->acts.len == 0 && before == l->r->done + l->r->rejected) l->r->idle_cycles++;
    if (rc) return px_diag_set(l->d, rc, -1, "scheduling cycle at t=%lld s failed", (long long)l->now_s);
    if (rc2) return rc2;
    if (!again) return 0;
  }
  return 0;
}

/* With cycle_per_event, the cycle the server runs after one change. */
static int event_cycle(struct loop *l) {
  return l->cycle_per_event && cycle_can_start(l) ? cycle(l) : 0;
}

static bool stale(const struct loop *l, const struct end_ev *e) {
  return e->attempt != l->runs[e->job].attempt || l->runs[e->job].state != PX_SIMJ_RUNNING;
}

/* The end of a run requeued since: nothing happens then (a preempted
 * job's first end; with --qos-map on the gang-heavy overload most event
 * times were such). A wake (WAKE_ONLY) is not one: it is there to cycle. */
static bool dead_end(const struct loop *l, const struct end_ev *e) {
  return e->attempt != WAKE_ONLY && stale(l, e);
}

static uint64_t submit_seq(const struct loop *l, uint32_t job) {
  return l->s->trace->jobs.v[l->s->jobs[job].trace_index].submit_seq;
}

/* Did the server cycle (and start a job) by second t before the event of
 * seq k (UINT64_MAX: none left at t)? The marks passed are consumed. */
static bool server_cycled_before(struct loop *l, int64_t t_s, uint64_t k) {
  size_t m = l->mark;
  while (l->mark < l->nmarks && l->marks[l->mark].seq < k && l->marks[l->mark].t_s <= t_s) l->mark++;
  return l->mark > m;
}

/* With marks, the cycle at the end of second t: the server cycles at least
 * once a second, so unless its next cycle that started something ran in
 * the next second (its cadence carried the cycle over the boundary), a
 * cycle here starts what the server's started nothing for. Without marks
 * left (another policy's replay outlasting the record) always. */
static bool second_ends_with_cycle(const struct loop *l, int64_t t_s) {
  return l->mark >= l->nmarks || l->marks[l->mark].t_s > t_s + 1;
}

/*
 * Did the replay leave the record with the end of job at t? The marks say
 * where the server cycled in answer to the recorded events; once a job
 * ends at another time than in the record (a node failure or a requeue
 * the record does not carry moved it, or another policy ran it), the
 * replay's changes are not the server's, the marks stop describing them,
 * and the replay cycles after each event from then on, as the server
 * cycles soon after each change. Following the marks further leaves the
 * GPUs of such an end idle until the next mark (bench_sim_fidelity.sh
 * with FID_FAULTS: 34% against 11% on 2,000 jobs). A replay that matches
 * the record never leaves it.
 */
static bool leaves_record(struct loop *l, uint32_t job, int64_t t_s) {
  if (l->nmarks && l->s->trace->jobs.v[l->s->jobs[job].trace_index].end_s != t_s) l->left_record = true;
  return l->left_record;
}

/*
 * Step 2 with by_seq: the ends and submits of second t in the server's
 * order (an unknown seq, 0, goes first; ends before submits on a tie, as
 * without seqs); a cycle after each, or with the recorded starts, where
 * and when the server cycled. *cycled: no cycle owed at the second's end.
 */
static int events_by_seq(struct loop *l, int64_t t_s, bool *cycled) {
  for (;;) {
    while (l->next < l->s->njobs && l->s->jobs[l->next].submit_s == t_s && l->s->jobs[l->next].skip != PX_SIM_RUNS)
      l->next++;
    bool sub = l->next < l->s->njobs && l->s->jobs[l->next].submit_s == t_s;
    bool end = l->nheap && l->heap[0].t_s == t_s;
    bool end_first = end && (!sub || l->heap[0].seq <= submit_seq(l, l->next));
    if (end_first && stale(l, &l->heap[0])) {
      heap_pop(l);
      continue;
    }
    uint64_t k = end_first ? l->heap[0].seq : sub ? submit_seq(l, l->next) : UINT64_MAX;
    bool marks = l->nmarks && !l->left_record;
    int rc = marks && server_cycled_before(l, t_s, k) && cycle_can_start(l) ? cycle(l) : 0;
    if (rc || (!sub && !end)) {
      if (marks) *cycled = !second_ends_with_cycle(l, t_s);
      return rc;
    }
    if (end_first && marks) marks = !leaves_record(l, l->heap[0].job, t_s);
    rc = end_first ? end_job(l, heap_pop(l).job) : submit_job(l, l->next++);
    if (rc) return rc;
    if (marks) continue; /* the server's next cycle: before a later event, or at its time */
    rc = event_cycle(l);
    *cycled = true;
    if (rc) return rc;
  }
}

/* Steps 2 and 3 at time t. */
static int step(struct loop *l, int64_t t_s) {
  advance(l, t_s);
  int rc = 0;
  bool cycled = false; /* a cycle per event ran after the last change */
  if (l->by_seq) rc = events_by_seq(l, t_s, &cycled);
  while (!rc && l->nheap && l->heap[0].t_s == t_s) {
    struct end_ev e = heap_pop(l);
    if (stale(l, &e)) continue;
    rc = end_job(l, e.job);
    if (!rc) rc = event_cycle(l), cycled = l->cycle_per_event;
  }
  if (!rc && px_sim_failures_due(&l->fail) <= t_s) rc = failures_now(l), cycled = false;
  if (!rc && px_node_timeline_due(&l->nodes) <= t_s) rc = node_changes_now(l), cycled = false;
  while (!rc && l->next < l->s->njobs && l->s->jobs[l->next].submit_s == t_s) {
    uint32_t job = l->next++;
    if (l->s->jobs[job].skip != PX_SIM_RUNS) continue;
    rc = submit_job(l, job);
    if (!rc) rc = event_cycle(l), cycled = l->cycle_per_event;
  }
  if (rc) return rc;
  l->r->events++;
  if (!cycled) {
    if (!cycle_can_start(l)) return 0;
    rc = cycle(l);
  }
  int64_t due = px_core_next_pass_s(l->core); /* bf_interval: a pass owed with no event */
  if (due > l->epoch_s + t_s) l->wake_s = due - l->epoch_s;
  return rc;
}

static int run_loop(struct loop *l) {
  const struct px_sim_setup *s = l->s;
  for (;;) {
    while (l->next < s->njobs && s->jobs[l->next].skip != PX_SIM_RUNS) {
      l->runs[l->next].state = PX_SIMJ_SKIPPED;
      l->next++;
    }
    while (l->nheap && dead_end(l, &l->heap[0])) heap_pop(l);
    int64_t t_sub = l->next < s->njobs ? s->jobs[l->next].submit_s : INT64_MAX;
    int64_t t_end = l->nheap ? l->heap[0].t_s : INT64_MAX;
    int64_t t = t_sub < t_end ? t_sub : t_end;
    if (l->wake_s < t) t = l->wake_s;
    /* a recorded cycle with no event in its second (by_seq, on the record) */
    if (!l->left_record && l->mark < l->nmarks && l->marks[l->mark].t_s < t) t = l->marks[l->mark].t_s > l->now_s ? l->marks[l->mark].t_s : l->now_s;
    if (t_sub == INT64_MAX && !l->nheap) px_sim_failures_stop(&l->fail); /* nothing runs or comes: none to hit */
    int64_t t_fail = px_sim_failures_due(&l->fail);
    if (t_fail < t) t = t_fail;
    if (t_sub == INT64_MAX && !l->nheap && !l->pending) l->nodes.next = l->nodes.n; /* none left to keep out */
    int64_t t_node = px_node_timeline_due(&l->nodes); /* one begun before the first submit: at it */
    if (t_node < t) t = t_node > l->now_s ? t_node : l->now_s;
    if (t == INT64_MAX) return 0;
    if (t == l->wake_s) l->wake_s = INT64_MAX;
    int rc = step(l, t);
    if (!rc) rc = px_sim_fs_sample(l->r, s, l->core, t);
    if (rc) return rc;
    if (l->progress) px_sim_progress_update(l->progress, l->next, s->njobs);
  }
}

static int cmp_mark(const void *a, const void *b) {
  uint64_t x = ((const struct mark *)a)->seq, y = ((const struct mark *)b)->seq;
  return (x > y) - (x < y);
}

static int collect_marks(struct loop *l) {
  const struct px_trace *t = l->s->trace;
  if (!(l->marks = malloc((t->jobs.len + 1) * sizeof *l->marks))) return PX_ENOMEM;
  for (size_t i = 0; i < t->jobs.len; i++)
    if (t->jobs.v[i].start_seq && t->jobs.v[i].start_s >= 0)
      l->marks[l->nmarks++] = (struct mark){t->jobs.v[i].start_seq, t->jobs.v[i].start_s};
  qsort(l->marks, l->nmarks, sizeof *l->marks, cmp_mark);
  return 0;
}

static int loop_init(struct loop *l, const struct px_sim_setup *s, const struct px_conf_sched *policy,
                     const struct px_sim_run_opts *o, struct px_sim_result *r) {
  l->s = s;
  l->r = r;
  px_actions_init(&l->acts);
  l->runs = malloc(((size_t)s->njobs + 1) * sizeof *l->runs);
  l->acct_busy = calloc(s->naccounts + 1, sizeof *l->acct_busy);
  l->pend_by_gpus = calloc(s->total_gpus + 1, sizeof *l->pend_by_gpus);
  if (!l->runs || !l->acct_busy || !l->pend_by_gpus) return PX_ENOMEM;
  l->pend_min_gpus = UINT32_MAX;
  l->wake_s = INT64_MAX;
  l->may_preempt = policy->preempt_mode != PX_PREEMPT_OFF;
  l->cycle_per_event = o && o->cycle_per_event;
  l->by_seq = l->cycle_per_event && s->trace->nseq > 0;
  l->epoch_s = s->trace->time0_unix_s ? s->trace->time0_unix_s : PX_SIM_EPOCH_S;
  if (l->by_seq && collect_marks(l)) return PX_ENOMEM;
  l->ckpt_s = r->ckpt_interval_s = policy->ckpt_interval_s < INT64_MAX / 4 ? policy->ckpt_interval_s : 0;
  l->restart_s = r->ckpt_restart_s = l->ckpt_s ? policy->ckpt_restart_s : 0;
  for (uint32_t i = 0; i < s->njobs; i++)
    l->runs[i] = (struct px_sim_jobrun){.first_start_s = -1, .start_s = -1, .end_s = -1, .state = PX_SIMJ_PENDING};
  int64_t t0 = s->njobs ? s->jobs[0].submit_s : 0, span = s->njobs ? s->jobs[s->njobs - 1].submit_s - t0 : 0;
  int64_t width = span / (PX_SIM_SERIES_BUCKETS / 2) + 1;
  if (px_sim_series_init(&r->series, PX_SIM_SERIES_BUCKETS, PX_SIM_CH_ACCOUNT + s->naccounts, t0, width))
    return PX_ENOMEM;
  r->first_submit_s = t0;
  l->now_s = t0;
  struct px_conf conf = *s->conf; /* shallow: the core copies what it keeps */
  conf.sched = *policy;
  int err = 0;
  l->core = px_core_new(&conf, o ? o->seed : 1, &err);
  if (!l->core) return px_diag_set(l->d, err ? err : PX_ENOMEM, -1, "the core refused the cluster/policy: %s",
                                   px_strerror(err));
  /* only actions matter here: a cycle may stop once nothing can start */
  px_core_set_lazy_reasons(l->core, PX_SIM_REASON_REFRESH_S);
  return 0;
}

int px_sim_run(const struct px_sim_setup *s, const struct px_conf_sched *policy, const char *name,
               const struct px_sim_run_opts *o, struct px_sim_result *r, struct px_diag *d) {
  memset(r, 0, sizeof *r);
  snprintf(r->policy, sizeof r->policy, "%.63s", name);
  struct loop l = {.d = d, .progress = o ? o->progress : NULL};
  px_diag_clear(d);
  int rc = loop_init(&l, s, policy, o, r);
  px_sim_failures_init(&l.fail, s->conf, s->total_gpus, o ? o->gpu_fail_per_day : 0,
                       o && o->gpu_repair_s ? o->gpu_repair_s : 4 * 3600, o ? o->seed : 1, l.now_s);
  if (!rc) rc = px_node_timeline_init(&l.nodes, o ? o->node_events : NULL, s->conf->nnodes);
  if (!rc) rc = run_loop(&l);
  if (!rc) {
    r->stuck = (uint64_t)l.pending;
    struct px_core_stats st;
    px_core_stats(l.core, &st);
    r->las_promotions = st.las_promotions;
    rc = px_sim_result_compute(r, s, l.runs);
  }
  if (!rc && o && o->runs_out) {
    *o->runs_out = l.runs; /* handed over to the caller */
    l.runs = NULL;
  }
  px_sim_failures_fini(&l.fail);
  px_node_timeline_fini(&l.nodes);
  px_core_free(l.core);
  px_actions_fini(&l.acts);
  free(l.runs);
  free(l.acct_busy);
  free(l.pend_by_gpus);
  free(l.heap);
  free(l.marks);
  if (rc) px_sim_result_fini(r);
  return rc;
}
