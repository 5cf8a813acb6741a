/*
 * The backfill pass's tail (backfill_tail.c): with lazy reasons a pass stops
 * reserving once no job left in the queue can start. Two cores replay the
 * same seeded random workload (single-node jobs of 1-8 GPUs, gangs of 2-6
 * nodes of 4 or 8 GPUs, now and then an exclusive job, limits from 1 minute
 * to 2 hours, runs ending before them), one with lazy reasons (the tail on)
 * and one with full passes (every blocked job reserves): every cycle's
 * actions must be the same -- jobs, nodes, the backfilled and topology
 * flags -- under conservative and EASY backfill, multifactor and FIFO order,
 * with and without bf_max_job_test, with every cycle lazy or every cycle
 * the periodic full one (the tail holds there too); and the tail must have
 * been reached.
 */
#include "px_test.h"

#include "core/policytest.h"

static uint64_t rs;
static uint32_t rnd(uint32_t n) {
  rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)((rs >> 33) % n);
}

#define TJOBS 160

struct tjob { int64_t run, end; };

struct pair {
  struct pf lazy, full;
  struct tjob jobs[TJOBS + 1];
  uint64_t nj;
  uint32_t tails, starts;
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

static void submit_both(struct pair *p, int64_t t) {
  uint64_t id = ++p->nj;
  uint32_t kind = rnd(10);
  struct px_jobspec s = tc_spec(rnd(2) ? "alice" : "bob", kind < 3 ? 2 + rnd(5) : 0,
                                kind < 3 ? (rnd(2) ? 8 : 4) : 1 + rnd(8));
  s.exclusive = rnd(40) == 0;
  s.time_limit_s = 60 + rnd(7140);
  p->jobs[id] = (struct tjob){s.time_limit_s / 3 + rnd((uint32_t)s.time_limit_s * 2 / 3 + 1), -1};
  pf_sub_spec(&p->lazy, id, &s, t);
  pf_sub_spec(&p->full, id, &s, t);
}

static void same_actions(const struct px_actions *a, const struct px_actions *b) {
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

static void step(struct pair *p, int64_t t) {
  for (uint64_t i = 1; i <= p->nj; i++)
    if (p->jobs[i].end > 0 && p->jobs[i].end <= t) {
      pf_end(&p->lazy, i, t);
      pf_end(&p->full, i, t);
      p->jobs[i].end = 0;
    }
  for (uint32_t k = rnd(4); k > 0 && p->nj < TJOBS; k--) submit_both(p, t);
  pf_cycle(&p->lazy, t);
  pf_cycle(&p->full, t);
  same_actions(&p->lazy.out, &p->full.out);
  p->tails += p->lazy.core->pass_tail;
  for (size_t a = 0; a < p->lazy.out.len; a++) {
    const struct px_action *x = &p->lazy.out.v[a];
    if (x->kind == PX_ACT_START) p->jobs[x->job_id].end = t + p->jobs[x->job_id].run, p->starts++;
  }
}

static void replay(uint64_t seed, enum px_backfill_mode mode, bool fifo, uint32_t max_test, struct pair *p) {
  rs = seed * 2654435761u + 17;
  memset(p, 0, sizeof *p);
  p->lazy.conf = pair_conf(mode, fifo, max_test);
  p->full.conf = pair_conf(mode, fifo, max_test);
  pf_open(&p->lazy);
  pf_open(&p->full);
  px_core_set_lazy_reasons(p->lazy.core, seed % 2 ? INT64_MAX : 1); /* 1 s: the full cycle every cycle */
  for (int64_t t = 1000; t < 60000; t += 1 + rnd(400)) step(p, t);
  pf_close(&p->lazy);
  pf_close(&p->full);
}

static void tail_changes_no_start(void **state) {
  (void)state;
  static struct pair p;
  uint32_t tails = 0, starts = 0;
  for (uint64_t seed = 1; seed <= 24; seed++) {
    enum px_backfill_mode mode = seed % 3 ? PX_BACKFILL_CONSERVATIVE : PX_BACKFILL_EASY;
    replay(seed, mode, seed % 4 == 0, seed % 5 == 0 ? 6 : 0, &p);
    assert_int_equal(p.starts >= TJOBS * 9 / 10, true); /* the workload runs through */
    tails += p.tails;
    starts += p.starts;
  }
  assert_true(tails > 200); /* the tail was reached, so it was tested */
  (void)starts;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tail_changes_no_start),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
