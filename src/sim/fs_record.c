/*
 * fs_record.c - the fair-share position of a recorded run (metrics.h).
 *
 * A replay's position is read from the core that scheduled it. The record
 * had no simulated core, so its runs are given to one built from the
 * cluster's own configuration the way the server's recovery gives it jobs
 * that already run: SUBMIT, then START on an allocation (restore.c: the
 * core charges fair share from that moment, as for a job it started), then
 * END, under the job's recorded user and in the replay's core time. Only
 * fair share is taken from this core; it decides nothing.
 *
 * A core ranks the Fair Tree only when it cycles, and a sample reads the
 * ranks of its last cycle, so positions depend on when the cycles ran, not
 * only on the usage. This core therefore cycles at the instants a replay's
 * core did (the clock: px_sim_fs.ranked_s, with that replay's first and
 * last sample) and is sampled there: when the replay ran every job when the
 * record did, both cores see the same charges at the same instants, rank
 * at the same instants, and give the same numbers. Without a clock it
 * cycles and is sampled at each instant a recorded run starts or ends.
 *
 * The record does not say which GPUs a job held, only how many on how many
 * nodes: the first nodes with enough free GPUs are named (fair share
 * charges by counts, not by which GPUs). A run that finds no room (the
 * record overlapped, or the configuration changed) is charged at its end
 * through the USAGE event instead, as the server charges archived jobs.
 *
 * A requeued job's earlier attempts (the record's, trace.h) were charged by
 * the cluster's core from their start to the requeue: each is given to this
 * core as a job of its own (a core id past the jobs'), started and ended at
 * its recorded times, the same user and GPUs as the job.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/event.h"
#include "sim/metrics.h"

/* At one instant: ends first (their GPUs free the starts'), then starts, the cycle, the sample. */
enum tick_kind { TICK_END, TICK_START, TICK_RANK, TICK_SAMPLE };

struct tick {
  int64_t t_s;
  uint32_t slot; /* a run: < njobs a job's (runs), else an earlier attempt (extra[slot - njobs]) */
  uint8_t kind;
};

static int cmp_tick(const void *x, const void *y) {
  const struct tick *a = x, *b = y;
  if (a->t_s != b->t_s) return a->t_s < b->t_s ? -1 : 1;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  return (a->slot > b->slot) - (a->slot < b->slot);
}

struct rec {
  const struct px_sim_setup *s;
  struct px_core *core;
  int64_t epoch_s; /* core time of trace second 0, as the replay's loop has it */
  bool *in_core;   /* per slot: started in the core (else charged at its end) */
  const struct px_sim_jobrun *runs;
  const struct px_sim_span *extra; /* earlier attempts, after the jobs' slots */
};

/* The run of a slot (its core job id: slot + 1). */
static struct px_sim_span slot_run(const struct rec *x, uint32_t slot) {
  if (slot >= x->s->njobs) return x->extra[slot - x->s->njobs];
  const struct px_sim_jobrun *u = &x->runs[slot];
  return (struct px_sim_span){.job = slot, .start_s = u->start_s, .end_s = u->end_s};
}

/* Node v can take a share of the job: up, a CPU and the job's memory per node free. */
static bool cpu_room(const struct px_node_view *v) {
  return v->avail == PX_NODE_UP && v->cpus_alloc < v->cpus && v->mem_mib >= v->mem_alloc_mib + PX_SIM_JOB_MEM_MIB;
}

/*
 * An allocation with the job's counts, whichever nodes: its GPUs the lowest
 * free ones of the first nodes that have any, one CPU and the job's memory
 * per node on as many nodes as it had (those with its GPUs first). Fair
 * share charges counts, so no placement the record cannot name may fail
 * where the cluster's did not. al: one entry per node; *nal how many used.
 */
static bool rec_place(const struct rec *x, const struct px_sim_job *j, struct px_alloc *al, uint32_t *nal) {
  uint32_t nn = px_core_nnodes(x->core), left = j->gpus, cpus = j->nodes, n0 = 0;
  *nal = 0;
  for (int pass = 0; pass < 2; pass++) { /* pass 0: the nodes with free GPUs; 1: more CPUs */
    for (uint32_t node = 0, p = 0; node < nn && (pass ? cpus : left); node++) {
      struct px_node_view v;
      while (p < n0 && al[p].node < node) p++;
      if ((p < n0 && al[p].node == node) || px_core_node_get(x->core, node, &v) || v.avail != PX_NODE_UP)
        continue; /* pass 1: taken in pass 0 */
      px_bits64 mask = 0, free = pass ? 0 : v.gpus_free;
      for (; free && left; left--, free &= free - 1) mask |= free & -free;
      bool cpu = cpus && cpu_room(&v) && (pass || mask);
      if (!mask && !cpu) continue;
      cpus -= cpu;
      al[(*nal)++] = (struct px_alloc){.node = node, .ncpu = cpu, .gpus = mask, .mem_mib = cpu ? PX_SIM_JOB_MEM_MIB : 0};
    }
    n0 = *nal;
  }
  return !left && !cpus;
}

static int rec_start(struct rec *x, uint32_t slot) {
  struct px_sim_span u = slot_run(x, slot);
  const struct px_sim_job *j = &x->s->jobs[u.job];
  struct px_jobspec spec;
  px_sim_job_spec(x->s, u.job, j->assoc, &spec); /* its recorded user, as the replay submits it */
  struct px_event ev = {.kind = PX_EV_SUBMIT, .job_id = slot + 1, .spec = &spec};
  struct px_event_result res;
  int rc = px_core_apply(x->core, &ev, x->epoch_s + u.start_s, &res);
  if (rc) return rc == PX_ENOMEM ? rc : 0; /* refused by this configuration: not charged */
  struct px_alloc *al = calloc(px_core_nnodes(x->core) + 1, sizeof *al);
  uint32_t nal;
  if (!al) return PX_ENOMEM;
  if (rec_place(x, j, al, &nal)) {
    int64_t run = u.end_s - u.start_s + 60; /* no limit may end it before the record does */
    ev = (struct px_event){.kind = PX_EV_START, .job_id = slot + 1, .alloc = al, .nalloc = nal,
                           .time_limit_s = j->limit_s > run ? j->limit_s : run};
    rc = px_core_apply(x->core, &ev, x->epoch_s + u.start_s, &res);
    x->in_core[slot] = !rc && !res.outside;
  }
  if (!x->in_core[slot]) { /* leave the queue: charged at its end */
    ev = (struct px_event){.kind = PX_EV_CANCEL, .job_id = slot + 1};
    px_core_apply(x->core, &ev, x->epoch_s + u.start_s, &res);
  }
  free(al);
  return rc == PX_ENOMEM ? rc : 0;
}

static int rec_end(struct rec *x, uint32_t slot) {
  struct px_sim_span u = slot_run(x, slot);
  struct px_event_result res;
  if (x->in_core[slot]) {
    struct px_event ev = {.kind = PX_EV_END, .job_id = slot + 1, .state = PX_JOB_COMPLETED};
    return px_core_apply(x->core, &ev, x->epoch_s + u.end_s, &res) == PX_ENOMEM ? PX_ENOMEM : 0;
  }
  const struct px_sim_job *j = &x->s->jobs[u.job];
  struct px_jobspec spec;
  px_sim_job_spec(x->s, u.job, j->assoc, &spec);
  struct px_alloc al = {.node = 0, .ncpu = j->nodes, .gpus = j->gpus < 64 ? (1ULL << j->gpus) - 1 : ~0ULL,
                        .mem_mib = (uint64_t)j->nodes * PX_SIM_JOB_MEM_MIB};
  struct px_event ev = {.kind = PX_EV_USAGE, .spec = &spec, .alloc = &al, .nalloc = 1,
                        .start_s = x->epoch_s + u.start_s, .end_s = x->epoch_s + u.end_s};
  return px_core_apply(x->core, &ev, x->epoch_s + u.end_s, &res) == PX_ENOMEM ? PX_ENOMEM : 0;
}

/* Each instant's ends and starts, then a cycle if one ranks then, then the sample. */
static int rec_replay(struct rec *x, struct px_sim_result *r, const struct tick *tk, size_t n) {
  struct px_actions acts;
  px_actions_init(&acts);
  int rc = 0;
  for (size_t k = 0; k < n && !rc;) {
    int64_t t = tk[k].t_s;
    bool rank = false, sample = false;
    for (; k < n && tk[k].t_s == t && !rc; k++) {
      const struct tick *e = &tk[k];
      if (e->kind == TICK_END) rc = rec_end(x, e->slot);
      else if (e->kind == TICK_START) rc = rec_start(x, e->slot);
      else if (e->kind == TICK_RANK) rank = true;
      else sample = true;
    }
    if (!rc && rank) rc = px_core_cycle(x->core, x->epoch_s + t, &acts);
    if (!rc && (rank || sample)) rc = px_sim_fs_sample(r, x->s, x->core, t);
  }
  px_actions_fini(&acts);
  return rc;
}

/* A run's start and end (one of no time charges nothing: its end would
 * come first), and without a clock a rank at each. */
static size_t run_ticks(struct tick *tk, size_t n, uint32_t slot, struct px_sim_span u, bool rank) {
  if (u.end_s > u.start_s) {
    tk[n++] = (struct tick){u.start_s, slot, TICK_START};
    tk[n++] = (struct tick){u.end_s, slot, TICK_END};
  }
  if (rank) {
    tk[n++] = (struct tick){u.start_s, slot, TICK_RANK};
    tk[n++] = (struct tick){u.end_s, slot, TICK_RANK};
  }
  return n;
}

/* The runs' starts and ends, and when to rank and sample: the clock's
 * instants, or (none) each instant a run starts or ends. */
static size_t rec_ticks(struct tick *tk, const struct rec *x, size_t nextra, const struct px_sim_fs *clock) {
  size_t n = 0;
  for (uint32_t i = 0; i < x->s->njobs; i++)
    if (x->runs[i].state == PX_SIMJ_DONE) n = run_ticks(tk, n, i, slot_run(x, i), !clock);
  for (size_t k = 0; k < nextra; k++) {
    uint32_t slot = x->s->njobs + (uint32_t)k;
    n = run_ticks(tk, n, slot, slot_run(x, slot), !clock);
  }
  if (clock) {
    for (size_t k = 0; k < clock->ranked_s.len; k++) tk[n++] = (struct tick){clock->ranked_s.v[k], 0, TICK_RANK};
    tk[n++] = (struct tick){clock->t0_s, 0, TICK_SAMPLE};
    tk[n++] = (struct tick){clock->last_s, 0, TICK_SAMPLE};
  }
  return n;
}

int px_sim_fs_from_runs(struct px_sim_result *r, const struct px_sim_setup *s, const struct px_sim_jobrun *runs,
                        const struct px_sim_span *extra, size_t nextra, const struct px_sim_fs *clock) {
  if (clock && !clock->sampled) clock = NULL;
  size_t slots = (size_t)s->njobs + nextra;
  size_t cap = slots * 4 + (clock ? clock->ranked_s.len + 2 : 0) + 1;
  struct tick *tk = malloc(cap * sizeof *tk);
  struct rec x = {.s = s, .in_core = calloc(slots + 1, sizeof(bool)), .runs = runs, .extra = extra,
                  .epoch_s = s->trace->time0_unix_s ? s->trace->time0_unix_s : PX_SIM_EPOCH_S};
  int err = 0, rc = PX_ENOMEM;
  if (tk && x.in_core) x.core = px_core_new(s->conf, 1, &err);
  if (x.core) {
    size_t n = rec_ticks(tk, &x, nextra, clock);
    qsort(tk, n, sizeof *tk, cmp_tick);
    rc = rec_replay(&x, r, tk, n);
  } else if (err && err != PX_ENOMEM) {
    rc = err;
  }
  px_core_free(x.core);
  free(x.in_core);
  free(tk);
  return rc;
}

/* The earlier attempts of the jobs that ran (*n of them; NULL and 0 when
 * none): the runs the cluster charged before it requeued them. */
static int earlier_runs(const struct px_sim_setup *s, const struct px_sim_jobrun *runs, struct px_sim_span **out,
                        size_t *n) {
  *out = NULL;
  *n = 0;
  if (!s->trace->attempts.len) return 0;
  struct px_sim_span *v = malloc(s->trace->attempts.len * sizeof *v);
  if (!v) return PX_ENOMEM;
  for (uint32_t i = 0; i < s->njobs; i++) {
    const struct px_trace_job *t = &s->trace->jobs.v[s->jobs[i].trace_index];
    const struct px_trace_attempt *a = px_trace_earlier(s->trace, t);
    for (uint32_t k = 0; runs[i].state == PX_SIMJ_DONE && k < t->nearlier; k++)
      v[(*n)++] = (struct px_sim_span){.job = i, .start_s = a[k].start_s, .end_s = a[k].end_s};
  }
  *out = v;
  return 0;
}

int px_sim_fs_recorded(struct px_sim_result *rec, const struct px_sim_setup *s, const struct px_sim_result *replay) {
  struct px_sim_jobrun *runs = malloc(((size_t)s->njobs + 1) * sizeof *runs);
  if (!runs) return PX_ENOMEM;
  for (uint32_t i = 0; i < s->njobs; i++) {
    const struct px_trace_job *t = &s->trace->jobs.v[s->jobs[i].trace_index];
    bool ran = s->jobs[i].skip == PX_SIM_RUNS && t->start_s >= 0;
    runs[i] = (struct px_sim_jobrun){.first_start_s = ran ? t->start_s : -1, .start_s = ran ? t->start_s : -1,
                                     .end_s = ran ? t->end_s : -1, .state = ran ? PX_SIMJ_DONE : PX_SIMJ_SKIPPED};
  }
  px_sim_fs_fini(&rec->fs);
  struct px_sim_span *extra;
  size_t nextra;
  int rc = earlier_runs(s, runs, &extra, &nextra);
  if (!rc) rc = px_sim_fs_from_runs(rec, s, runs, extra, nextra, replay ? &replay->fs : NULL);
  if (!rc) px_sim_fs_finish(&rec->fs, s->naccounts);
  free(extra);
  free(runs);
  return rc;
}
