/*
 * twintest.h - two cores given the same random events, one taking a fast
 * path, one the full pass every cycle (test_kept_order.c: LAS's kept
 * order; test_gated_queue.c: the multifactor queue's gated entries): the
 * calls made on both must answer alike, and so must every cycle's actions.
 */
#ifndef PX_TWINTEST_H
#define PX_TWINTEST_H

#include "core/policytest.h"

struct twin {
  struct px_conf *conf;
  struct px_core *c[2]; /* [0] the fast path, [1] the full pass every cycle */
  struct px_actions out[2];
  uint64_t rng;
  uint64_t next_id;
  int64_t now;
  size_t fast_cycles, cycles;
  bool deps; /* some jobs wait on others */
  uint32_t njobs, submit_pct; /* jobs to submit; share of events that submit */
  uint32_t nnodes;
};

static inline uint32_t rnd(struct twin *t, uint32_t n) {
  t->rng = t->rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)(t->rng >> 33) % n;
}

/* Both cores on t->conf, with lazy reasons (the simulator's) or not. */
static inline void twin_cores(struct twin *t, bool lazy) {
  for (int i = 0; i < 2; i++) {
    t->c[i] = tc_core(t->conf);
    assert_non_null(t->c[i]);
    px_actions_init(&t->out[i]);
    if (lazy) px_core_set_lazy_reasons(t->c[i], 60);
  }
}

static inline void twin_close(struct twin *t) {
  for (int i = 0; i < 2; i++) {
    assert_null(tc_invariants(t->c[i]));
    px_actions_fini(&t->out[i]);
    px_core_free(t->c[i]);
  }
  px_conf_free(t->conf);
}

/* The same call on both cores must give the same answer. */
#define BOTH(t, call)                                  \
  do {                                                 \
    struct px_core *c_ = (t)->c[0];                    \
    int r0_ = (call);                                  \
    c_ = (t)->c[1];                                    \
    int r1_ = (call);                                  \
    assert_int_equal(r0_, r1_);                        \
  } while (0)

/* A live job picked at random (0: none). */
static inline uint64_t pick(struct twin *t, uint8_t state) {
  for (int tries = 0; tries < 8; tries++) {
    uint64_t id = 1 + rnd(t, (uint32_t)t->next_id);
    const struct pxc_job *j = pxc_job_find(t->c[0], id);
    if (j && j->state == state) return id;
  }
  return 0;
}

/* A random event on both: a submit (the caller's), an end, a requeue, a
 * hold, a release, a cancel, the update u, a partition down or up. */
/* Submits s as job id to both cores; with_dep (and the twin's deps on):
 * after a running job picked at random, which the cores must agree on. */
static inline void twin_submit(struct twin *t, uint64_t id, struct px_jobspec *s, bool with_dep) {
  char dep[32];
  uint64_t after = t->deps && with_dep ? pick(t, PX_JOB_RUNNING) : 0;
  if (after) {
    snprintf(dep, sizeof dep, "afterany:%llu", (unsigned long long)after);
    s->dependency = dep;
  }
  BOTH(t, tc_submit(c_, id, s, t->now));
}

static inline void twin_event(struct twin *t, void (*submit)(struct twin *), const struct px_job_update *u) {
  uint32_t e = rnd(t, 100);
  uint64_t p = pick(t, PX_JOB_PENDING), r = pick(t, PX_JOB_RUNNING);
  bool flip = rnd(t, 3) != 0; /* drawn once: the macro evaluates its call twice */
  if (e < t->submit_pct) submit(t);
  else if (e < 60 && r) BOTH(t, pxc_job_ended(c_, r, PX_JOB_COMPLETED, 0, t->now, NULL));
  else if (e < 66 && r) BOTH(t, pxc_job_requeue(c_, r, !flip, t->now, NULL));
  else if (e < 72 && p) BOTH(t, pxc_hold(c_, p, flip, t->now, NULL));
  else if (e < 80 && p) BOTH(t, pxc_release(c_, p, true, t->now, NULL));
  else if (e < 84 && p) BOTH(t, pxc_cancel(c_, p, t->now, NULL));
  else if (e < 88 && p) BOTH(t, pxc_update(c_, p, u, t->now, NULL));
  else if (e < 90) BOTH(t, pxc_partition_set_up(c_, 0, flip));
}

/* One cycle on both: the same actions; PREEMPT actions requeue their job
 * (PreemptMode=requeue). */
static inline void twin_cycle(struct twin *t) {
  for (int i = 0; i < 2; i++) {
    assert_int_equal(px_core_cycle(t->c[i], t->now, &t->out[i]), 0);
    assert_null(tc_invariants(t->c[i]));
  }
  t->cycles++;
  assert_int_equal(t->out[0].len, t->out[1].len);
  for (size_t i = 0; i < t->out[0].len; i++) {
    const struct px_action *a = &t->out[0].v[i], *b = &t->out[1].v[i];
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->job_id, b->job_id);
    assert_int_equal(a->nalloc, b->nalloc);
    if (a->kind == PX_ACT_PREEMPT) BOTH(t, pxc_job_requeue(c_, a->job_id, false, t->now, NULL));
  }
}

#endif
