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

/* A random job for twin_event: from one of nusers users, a gang of 8-GPU
 * nodes (QoS gang_qos) one time in four, else 1 to 8 GPUs on one node;
 * some held, some with a begin time, a dependency or a nice value. */
static inline void twin_random_submit(struct twin *t, const char *const *users, uint32_t nusers,
                                      const char *gang_qos) {
  static const uint32_t gpus[] = {1, 2, 4, 8};
  uint64_t id = t->next_id++;
  uint32_t kind = rnd(t, 20);
  bool gang = kind < 5;
  struct px_jobspec s = tc_spec(users[rnd(t, nusers)], gang ? 1 + rnd(t, t->nnodes) : 0, 0);
  s.gpus_per_node = gang ? 8 : gpus[rnd(t, 4)];
  s.qos = gang ? (char *)gang_qos : NULL;
  s.time_limit_s = 200 + rnd(t, 3000);
  s.requeue = true;
  s.hold = kind == 5;
  s.begin_s = kind == 6 ? t->now + 1 + rnd(t, 400) : 0;
  s.nice = kind == 8 ? (int32_t)rnd(t, 300) : 0;
  twin_submit(t, id, &s, kind == 7);
}

/* twin_event with a random priority, time-limit or nice update. */
static inline void twin_random_event(struct twin *t, void (*submit)(struct twin *)) {
  static const unsigned fields[] = {PX_UPD_PRIORITY, PX_UPD_TIME_LIMIT, PX_UPD_NICE};
  struct px_job_update u = {.fields = fields[rnd(t, 3)], .priority = rnd(t, 3) ? 0 : 1 + rnd(t, 20000),
                            .time_limit_s = 100 + rnd(t, 5000), .nice = (int32_t)rnd(t, 2000) - 1000};
  twin_event(t, submit, &u);
}

/* Every job id either core holds: on both, in the same state, with the
 * same priority; then the caller's own comparison (more, or NULL). */
static inline void twin_same_jobs(struct twin *t, void (*more)(const struct pxc_job *a, const struct pxc_job *b)) {
  for (uint64_t id = 1; id < t->next_id; id++) {
    const struct pxc_job *a = pxc_job_find(t->c[0], id), *b = pxc_job_find(t->c[1], id);
    assert_int_equal(a != NULL, b != NULL);
    if (!a) continue;
    assert_int_equal(a->state, b->state);
    assert_int_equal(a->priority, b->priority);
    if (more) more(a, b);
  }
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
