/*
 * pairtest.h - two cores fed the same seeded random workload, cycle by
 * cycle, whose actions must be the same (test_backfill_tail.c,
 * test_backfill_replay.c): single-node jobs of 1-8 GPUs, gangs of 2-6
 * nodes of 4 or 8 GPUs, now and then an exclusive job, limits from 1 minute
 * to 2 hours, runs ending before them; 16 nodes of 8 GPUs, 4 per leaf, a
 * plan of one-minute slots over two hours.
 */
#ifndef PX_PAIRTEST_H
#define PX_PAIRTEST_H

#include "core/policytest.h"

static uint64_t rs;
static uint32_t rnd(uint32_t n) {
  rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)((rs >> 33) % n);
}

#define PAIR_JOBS 160

struct pair_job { int64_t run, end; }; /* end: -1 pending, 0 done, else when it ends */

struct pair {
  struct pf a, b;
  struct pair_job jobs[PAIR_JOBS + 1];
  uint64_t nj;
  uint32_t starts;
};

static struct px_conf *pair_conf(enum px_backfill_mode mode, bool fifo, uint32_t max_test) {
  struct px_conf *conf = tc_conf(16, 8, 4, 0);
  conf->sched.backfill = mode;
  conf->sched.order = fifo ? PX_ORDER_FIFO : PX_ORDER_MULTIFACTOR;
  conf->sched.weight_fairshare = 10000;
  conf->sched.weight_age = 1000;
  conf->sched.backfill_resolution_s = 60;
  conf->sched.backfill_window_s = 7200;
  conf->sched.bf_max_job_test = max_test;
  return conf;
}

static void pair_open(struct pair *p, enum px_backfill_mode mode, bool fifo, uint32_t max_test) {
  memset(p, 0, sizeof *p);
  p->a.conf = pair_conf(mode, fifo, max_test);
  p->b.conf = pair_conf(mode, fifo, max_test);
  pf_open(&p->a);
  pf_open(&p->b);
}

static void pair_submit(struct pair *p, int64_t t) {
  uint64_t id = ++p->nj;
  uint32_t kind = rnd(10);
  struct px_jobspec s = tc_spec(rnd(2) ? "alice" : "bob", kind < 3 ? 2 + rnd(5) : 0,
                                kind < 3 ? (rnd(2) ? 8 : 4) : 1 + rnd(8));
  s.exclusive = rnd(40) == 0;
  s.time_limit_s = 60 + rnd(7140);
  p->jobs[id] = (struct pair_job){s.time_limit_s / 3 + rnd((uint32_t)s.time_limit_s * 2 / 3 + 1), -1};
  pf_sub_spec(&p->a, id, &s, t);
  pf_sub_spec(&p->b, id, &s, t);
}

static void pair_same_actions(const struct px_actions *a, const struct px_actions *b) {
  assert_int_equal(a->len, b->len);
  for (size_t i = 0; i < a->len; i++) {
    const struct px_action *x = &a->v[i], *y = &b->v[i];
    assert_int_equal(x->kind, y->kind);
    assert_int_equal(x->job_id, y->job_id);
    assert_int_equal(x->nalloc, y->nalloc);
    assert_int_equal(x->backfilled, y->backfilled);
    assert_int_equal(x->waited_topology, y->waited_topology);
    for (uint32_t k = 0; k < x->nalloc; k++)
      assert_int_equal(a->allocs[x->alloc_first + k].node, b->allocs[y->alloc_first + k].node);
  }
}

/* At t: the jobs due end in both, up to max_submits - 1 new ones come, both
 * cores cycle with the same actions, and the jobs started get their ends. */
static void pair_step(struct pair *p, int64_t t, uint32_t max_submits) {
  for (uint64_t i = 1; i <= p->nj; i++)
    if (p->jobs[i].end > 0 && p->jobs[i].end <= t) {
      pf_end(&p->a, i, t);
      pf_end(&p->b, i, t);
      p->jobs[i].end = 0;
    }
  for (uint32_t k = rnd(max_submits); k > 0 && p->nj < PAIR_JOBS; k--) pair_submit(p, t);
  pf_cycle(&p->a, t);
  pf_cycle(&p->b, t);
  pair_same_actions(&p->a.out, &p->b.out);
  for (size_t a = 0; a < p->a.out.len; a++) {
    const struct px_action *x = &p->a.out.v[a];
    if (x->kind == PX_ACT_START) p->jobs[x->job_id].end = t + p->jobs[x->job_id].run, p->starts++;
  }
}

#endif
