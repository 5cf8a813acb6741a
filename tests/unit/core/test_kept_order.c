/*
 * The LAS order kept between cycles (kept.c) against the full pass (and the
 * simulator's FIFO order, kept_fifo_equals_full_pass): two
 * cores get the same random events (submits, some held, some with a begin
 * time or a dependency, ends, requeues, preemptions, holds, releases,
 * cancels, priority and time-limit updates, partition down and up, and
 * starvation promotions), one keeping the order, one rebuilding it every
 * cycle (pxc_kept.off). After every cycle their actions, and every job's
 * state, reason and priority, must be the same. Without an invalidation
 * rule (a release, an update, a partition change) or the promotion times,
 * the kept core starts a different job or leaves one waiting. The running
 * jobs' index (preempt.c) is checked against every job slot after each cycle.
 * The full-pass core also searches every placement in the pass's tail,
 * where the kept core reuses a shape's placement (cycle.c, tail_find), and
 * builds the tail's groups from the job records and marks, where the kept
 * core reads its cache and the jobs' places (backfill_tail.c).
 */
#include "px_test.h"

#include "core/twintest.h"

static bool fifo; /* the simulator's FIFO (lazy reasons, no preemption) instead of LAS */

static void twin_open(struct twin *t, uint64_t seed, bool lazy, uint32_t nnodes) {
  *t = (struct twin){.rng = seed, .next_id = 1, .njobs = 160, .submit_pct = 40, .nnodes = nnodes};
  t->conf = tc_conf(nnodes, 8, 0, 0);
  t->conf->sched.order = fifo ? PX_ORDER_FIFO : PX_ORDER_LAS;
  t->conf->sched.las_thresholds_gpu_s[0] = 2000;
  t->conf->sched.las_thresholds_gpu_s[1] = 20000;
  t->conf->sched.las_nthresholds = fifo ? 0 : 2;
  t->conf->sched.las_starve_limit = fifo ? 0 : 1.5;
  t->conf->sched.preempt_mode = fifo ? PX_PREEMPT_OFF : PX_PREEMPT_REQUEUE;
  t->conf->sched.backfill = fifo && seed % 2 ? PX_BACKFILL_NONE : PX_BACKFILL_EASY;
  twin_cores(t, lazy);
  t->c[1]->pol->kept.off = true;
  t->c[1]->pol->fits_off = true; /* and its tail searches every job's placement (cycle.c, tail_find) */
}


static void submit(struct twin *t) {
  static const uint32_t gpus[] = {1, 2, 4, 8};
  uint64_t id = t->next_id++;
  uint32_t kind = rnd(t, 20);
  struct px_jobspec s = tc_spec(rnd(t, 2) ? "alice" : "bob", kind < 4 ? 1 + rnd(t, t->nnodes) : 0, 0);
  s.gpus_per_node = kind < 4 ? 8 : gpus[rnd(t, 4)];
  s.time_limit_s = 200 + rnd(t, 3000);
  s.requeue = true;
  s.hold = kind == 5;
  s.begin_s = kind == 6 ? t->now + 1 + rnd(t, 400) : 0;
  twin_submit(t, id, &s, kind == 7);
}

static void event(struct twin *t) {
  struct px_job_update u = {.fields = rnd(t, 2) ? PX_UPD_PRIORITY : PX_UPD_TIME_LIMIT,
                            .priority = rnd(t, 3) ? 0 : 1 + rnd(t, 20), .time_limit_s = 100 + rnd(t, 5000)};
  twin_event(t, submit, &u);
}

static void same_reasons(const struct pxc_job *a, const struct pxc_job *b) {
  if (a->state == PX_JOB_PENDING) assert_int_equal(a->reason, b->reason);
  assert_int_equal(a->flags & PXC_F_TOPO_WAIT, b->flags & PXC_F_TOPO_WAIT); /* the tail's placements */
}

static void same_jobs(struct twin *t) { twin_same_jobs(t, same_reasons); }

/* The running jobs' index (preempt.c) holds every running job a victim
 * search may list, and only running jobs. */
static void running_index_exact(struct px_core *c) {
  const struct pxc_policy *pol = c->pol;
  if (!pol->run_idx_ok) return;
  size_t k = 0;
  for (size_t s = 0; s < c->njob_slots; s++) {
    const struct pxc_job *j = &c->jobs[s];
    bool in = k < pol->nrun_idx && pol->run_idx[k] == s;
    if (in) k++;
    if (in) assert_int_equal(j->state, PX_JOB_RUNNING);
    if (j->state == PX_JOB_RUNNING && j->nalloc && !j->arr) assert_true(in);
  }
  assert_int_equal(k, pol->nrun_idx);
}

/* One cycle on both (twintest.h), then the jobs and the running index. */
static void cycle(struct twin *t) {
  twin_cycle(t);
  for (int i = 0; i < 2; i++) running_index_exact(t->c[i]);
  t->fast_cycles += t->c[0]->pol->kept.valid;
  same_jobs(t);
}

static void run(uint64_t seed, bool lazy, uint32_t nnodes, uint32_t njobs) {
  struct twin t;
  twin_open(&t, seed, lazy, nnodes);
  t.deps = seed % 3 == 0;
  t.njobs = njobs;
  t.submit_pct = njobs > 160 ? 70 : 40;
  while (t.next_id <= t.njobs) {
    t.now += rnd(&t, 3) ? rnd(&t, 120) : 0;
    for (uint32_t k = rnd(&t, 4); k-- > 0;) event(&t);
    cycle(&t);
  }
  for (int k = 0; k < 200; k++) { /* drain: ends and promotions */
    t.now += 1 + rnd(&t, 300);
    uint64_t r = pick(&t, PX_JOB_RUNNING);
    if (r) BOTH(&t, pxc_job_ended(c_, r, PX_JOB_COMPLETED, 0, t.now, NULL));
    cycle(&t);
  }
  if (getenv("PX_TEST_VERBOSE"))
    fprintf(stderr, "seed %llu: %zu of %zu cycles kept, %llu promotions\n", (unsigned long long)seed,
            t.fast_cycles, t.cycles, (unsigned long long)t.c[0]->stats.las_promotions);
  /* the kept order ran most cycles, and LAS promoted (its time heap) */
  if (!t.deps) assert_true(t.fast_cycles * 2 > t.cycles);
  assert_true(fifo || t.c[0]->stats.las_promotions > 0);
  assert_int_equal(t.c[0]->stats.las_promotions, t.c[1]->stats.las_promotions);
  twin_close(&t);
}

static void kept_order_equals_full_pass(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 12; seed++) run(seed, seed % 2 == 0, 6, 160);
}

/* A deep queue on a small cluster, lazy reasons (the simulator): the pass
 * reaches its tail while victim searches are left, so the order in which
 * the tail tries the jobs left decides (cycle.c, heap_as_full). */
static void kept_order_deep_queue(void **state) {
  (void)state;
  for (uint64_t seed = 21; seed <= 24; seed++) run(seed, true, 4, 900);
}

/* The simulator's FIFO (kept.c, pxc_kept_wanted): with and without EASY
 * backfill, deep queues behind a blocked head. */
static void kept_fifo_equals_full_pass(void **state) {
  (void)state;
  fifo = true;
  for (uint64_t seed = 31; seed <= 38; seed++) run(seed, true, seed < 35 ? 6 : 4, seed < 35 ? 160 : 900);
  fifo = false;
}

/* Unit cases for the invalidation rules: a release must reach the order. */
static void kept_order_sees_release(void **state) {
  (void)state;
  struct twin t;
  twin_open(&t, 99, true, 6);
  struct px_jobspec s = tc_spec("alice", 0, 8);
  s.time_limit_s = 1000;
  s.hold = true;
  BOTH(&t, tc_submit(c_, 1, &s, 0));
  t.next_id = 2;
  cycle(&t);
  assert_int_equal(t.out[0].len, 0);
  assert_true(t.c[0]->pol->kept.valid); /* held: gated, kept */
  BOTH(&t, pxc_release(c_, 1, true, 10, NULL));
  t.now = 10;
  cycle(&t);
  assert_non_null(tc_started(&t.out[0], 1));
  twin_close(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kept_order_equals_full_pass),
      cmocka_unit_test(kept_order_deep_queue),
      cmocka_unit_test(kept_order_sees_release),
      cmocka_unit_test(kept_fifo_equals_full_pass),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
