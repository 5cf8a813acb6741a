/*
 * fs_record.c - the fair-share position of a recorded run (metrics.h).
 *
 * A replay's position is read from the core that scheduled it. The record
 * had no simulated core, so its runs are given to one built from the
 * cluster's own configuration the way the server's recovery gives it jobs
 * that already run: SUBMIT, then START on an allocation (restore.c: the
 * core charges fair share from that moment, as for a job it started), then
 * END. After each instant an empty cycle ranks the Fair Tree, as the
 * server's cycle would, and px_sim_fs_sample reads it like a replay's. Only
 * fair share is taken from this core; it decides nothing.
 *
 * The record does not say which GPUs a job held, only how many on how many
 * nodes: the first nodes with enough free GPUs are named (fair share
 * charges by counts, not by which GPUs). A run that finds no room (the
 * record overlapped, or the configuration changed) is charged at its end
 * through the USAGE event instead, as the server charges archived jobs.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/event.h"
#include "sim/metrics.h"

struct rec_ev {
  int64_t t_s;
  uint32_t job;
  bool start;
};

/* Time order; at one instant ends first (their GPUs free the starts'), then job order. */
static int cmp_ev(const void *x, const void *y) {
  const struct rec_ev *a = x, *b = y;
  if (a->t_s != b->t_s) return a->t_s < b->t_s ? -1 : 1;
  if (a->start != b->start) return a->start ? 1 : -1;
  return (a->job > b->job) - (a->job < b->job);
}

struct rec {
  const struct px_sim_setup *s;
  struct px_core *core;
  bool *in_core; /* per job: started in the core (else charged at its end) */
};


/* The lowest free GPUs of the first nodes with room: j->gpus spread as evenly as the nodes allow. */
static bool rec_place(const struct rec *x, const struct px_sim_job *j, struct px_alloc *al) {
  uint32_t got = 0, nn = px_core_nnodes(x->core);
  for (uint32_t node = 0; node < nn && got < j->nodes; node++) {
    struct px_node_view v;
    uint32_t want = j->gpus / j->nodes + (got < j->gpus % j->nodes);
    if (px_core_node_get(x->core, node, &v) || v.avail != PX_NODE_UP || v.cpus_alloc >= v.cpus ||
        v.mem_mib < v.mem_alloc_mib + PX_SIM_JOB_MEM_MIB || (uint32_t)__builtin_popcountll(v.gpus_free) < want)
      continue;
    px_bits64 mask = 0, free = v.gpus_free;
    for (uint32_t k = 0; k < want; k++, free &= free - 1) mask |= free & -free;
    al[got++] = (struct px_alloc){.node = node, .ncpu = 1, .gpus = mask, .mem_mib = PX_SIM_JOB_MEM_MIB};
  }
  return got == j->nodes;
}

static int rec_start(struct rec *x, uint32_t i, const struct px_sim_jobrun *u) {
  const struct px_sim_job *j = &x->s->jobs[i];
  struct px_jobspec spec;
  px_sim_job_spec(x->s, i, x->s->account_assoc[j->account], &spec); /* the account's first user */
  struct px_event ev = {.kind = PX_EV_SUBMIT, .job_id = i + 1, .spec = &spec};
  struct px_event_result res;
  int rc = px_core_apply(x->core, &ev, PX_SIM_EPOCH_S + u->start_s, &res);
  if (rc) return rc == PX_ENOMEM ? rc : 0; /* refused by this configuration: not charged */
  struct px_alloc *al = calloc(j->nodes, sizeof *al);
  if (!al) return PX_ENOMEM;
  if (rec_place(x, j, al)) {
    int64_t run = u->end_s - u->start_s + 60; /* no limit may end it before the record does */
    ev = (struct px_event){.kind = PX_EV_START, .job_id = i + 1, .alloc = al, .nalloc = j->nodes,
                           .time_limit_s = j->limit_s > run ? j->limit_s : run};
    rc = px_core_apply(x->core, &ev, PX_SIM_EPOCH_S + u->start_s, &res);
    x->in_core[i] = !rc && !res.outside;
  }
  if (!x->in_core[i]) { /* leave the queue: charged at its end */
    ev = (struct px_event){.kind = PX_EV_CANCEL, .job_id = i + 1};
    px_core_apply(x->core, &ev, PX_SIM_EPOCH_S + u->start_s, &res);
  }
  free(al);
  return rc == PX_ENOMEM ? rc : 0;
}

static int rec_end(struct rec *x, uint32_t i, const struct px_sim_jobrun *u) {
  struct px_event_result res;
  if (x->in_core[i]) {
    struct px_event ev = {.kind = PX_EV_END, .job_id = i + 1, .state = PX_JOB_COMPLETED};
    return px_core_apply(x->core, &ev, PX_SIM_EPOCH_S + u->end_s, &res) == PX_ENOMEM ? PX_ENOMEM : 0;
  }
  const struct px_sim_job *j = &x->s->jobs[i];
  struct px_jobspec spec;
  px_sim_job_spec(x->s, i, x->s->account_assoc[j->account], &spec); /* the account's first user */
  struct px_alloc al = {.node = 0, .ncpu = j->nodes, .gpus = j->gpus < 64 ? (1ULL << j->gpus) - 1 : ~0ULL,
                        .mem_mib = (uint64_t)j->nodes * PX_SIM_JOB_MEM_MIB};
  struct px_event ev = {.kind = PX_EV_USAGE, .spec = &spec, .alloc = &al, .nalloc = 1,
                        .start_s = PX_SIM_EPOCH_S + u->start_s, .end_s = PX_SIM_EPOCH_S + u->end_s};
  return px_core_apply(x->core, &ev, PX_SIM_EPOCH_S + u->end_s, &res) == PX_ENOMEM ? PX_ENOMEM : 0;
}

/* Each instant's starts and ends, then the cycle that ranks, then the sample. */
static int rec_replay(struct rec *x, struct px_sim_result *r, const struct px_sim_jobrun *runs,
                      const struct rec_ev *ev, size_t n) {
  struct px_actions acts;
  px_actions_init(&acts);
  int rc = 0;
  for (size_t k = 0; k < n && !rc;) {
    int64_t t = ev[k].t_s;
    for (; k < n && ev[k].t_s == t && !rc; k++)
      rc = ev[k].start ? rec_start(x, ev[k].job, &runs[ev[k].job]) : rec_end(x, ev[k].job, &runs[ev[k].job]);
    if (!rc) rc = px_core_cycle(x->core, PX_SIM_EPOCH_S + t, &acts);
    if (!rc) rc = px_sim_fs_sample(r, x->s, x->core, t);
  }
  px_actions_fini(&acts);
  return rc;
}

int px_sim_fs_from_runs(struct px_sim_result *r, const struct px_sim_setup *s, const struct px_sim_jobrun *runs) {
  struct rec_ev *ev = malloc(((size_t)s->njobs * 2 + 1) * sizeof *ev);
  struct rec x = {.s = s, .in_core = calloc((size_t)s->njobs + 1, sizeof(bool))};
  size_t n = 0;
  int err = 0, rc = PX_ENOMEM;
  if (ev && x.in_core) x.core = px_core_new(s->conf, 1, &err);
  if (x.core) {
    for (uint32_t i = 0; i < s->njobs; i++) {
      if (runs[i].state != PX_SIMJ_DONE) continue;
      ev[n++] = (struct rec_ev){runs[i].start_s, i, true};
      ev[n++] = (struct rec_ev){runs[i].end_s, i, false};
    }
    qsort(ev, n, sizeof *ev, cmp_ev);
    rc = rec_replay(&x, r, runs, ev, n);
  } else if (err && err != PX_ENOMEM) {
    rc = err;
  }
  px_core_free(x.core);
  free(x.in_core);
  free(ev);
  return rc;
}
