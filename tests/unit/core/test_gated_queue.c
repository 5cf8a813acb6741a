/*
 * The multifactor queue's gate verdicts and priority inputs kept between
 * cycles (gated.c) against the full pass: two cores get the same random
 * events (submits from users of two accounts, some held, some with a
 * begin time or a dependency, ends, requeues, holds, releases, cancels,
 * nice, priority and time-limit updates, partition down and up) under
 * multifactor with ageing and fair share, conservative backfill and QoS
 * preemption; one reads the entries, one gates every record every cycle
 * (px_core.gent_off). After every cycle their actions, the pending jobs'
 * reasons and the running jobs' priorities must be the same. The unit
 * cases below fail without a release's invalidation, the volatile entries
 * (a dependency met, a begin time reached) or a preemptor's key.
 */
#include "px_test.h"

#include "core/twintest.h"

enum { Q_NORMAL, Q_HIGH };

static struct px_conf *gq_conf(uint32_t nnodes, bool qos_weight) {
  struct px_conf *c = tc_conf(nnodes, 8, 0, 0);
  uint32_t other = px_testconf_account(c, "other", 0, 3);
  px_testconf_user(c, "carol", other, 1);
  uint32_t high = px_testconf_qos(c, "high", 10);
  assert_int_equal(high, Q_HIGH);
  uint32_t *list = px_arena_alloc(&c->arena, sizeof *list);
  list[0] = Q_NORMAL;
  c->qos[high].preempt = list;
  c->qos[high].npreempt = 1;
  c->sched.preempt_type = "preempt/qos";
  c->sched.preempt_mode = PX_PREEMPT_REQUEUE;
  c->sched.order = PX_ORDER_MULTIFACTOR;
  c->sched.weight_age = 1000;
  c->sched.weight_fairshare = 10000;
  c->sched.weight_qos = qos_weight ? 500 : 0;
  c->sched.max_age_s = 3000; /* ages cap within a run */
  c->sched.decay_half_life_s = 2000;
  c->sched.backfill = PX_BACKFILL_CONSERVATIVE;
  c->sched.backfill_resolution_s = 60;
  c->sched.backfill_window_s = 20000;
  return c;
}

static void twin_open(struct twin *t, uint64_t seed, bool lazy, uint32_t nnodes) {
  *t = (struct twin){.rng = seed, .next_id = 1, .njobs = 200, .submit_pct = 45, .nnodes = nnodes};
  t->conf = gq_conf(nnodes, seed % 2);
  twin_cores(t, lazy);
  t->c[1]->gent_off = true;
}

static void submit(struct twin *t) {
  static const char *const users[] = {"alice", "bob", "carol"};
  twin_random_submit(t, users, 3, "high");
}

static void event(struct twin *t) { twin_random_event(t, submit); }

static void same_jobs(struct twin *t) {
  for (uint64_t id = 1; id < t->next_id; id++) {
    const struct pxc_job *a = pxc_job_find(t->c[0], id), *b = pxc_job_find(t->c[1], id);
    assert_int_equal(a != NULL, b != NULL);
    if (!a) continue;
    assert_int_equal(a->state, b->state);
    if (a->state == PX_JOB_RUNNING) assert_int_equal(a->priority, b->priority); /* the preemption's tie-break */
    if (a->state == PX_JOB_PENDING) assert_int_equal(a->reason, b->reason);
    assert_int_equal(a->eligible_s, b->eligible_s);
    assert_int_equal(a->flags & PXC_F_TOPO_WAIT, b->flags & PXC_F_TOPO_WAIT);
  }
}

/* One cycle on both (twintest.h), then the jobs. */
static void cycle(struct twin *t) {
  twin_cycle(t);
  t->fast_cycles += t->c[0]->gent_live;
  assert_false(t->c[1]->gent_live);
  same_jobs(t);
}

static size_t run(uint64_t seed, bool lazy, uint32_t nnodes, uint32_t njobs) {
  struct twin t;
  twin_open(&t, seed, lazy, nnodes);
  t.deps = seed % 3 == 0;
  t.njobs = njobs;
  size_t preempts = 0;
  while (t.next_id <= t.njobs) {
    t.now += rnd(&t, 3) ? rnd(&t, 120) : 0;
    for (uint32_t k = rnd(&t, 4); k-- > 0;) event(&t);
    cycle(&t);
    preempts += pf_count(&t.out[0], PX_ACT_PREEMPT);
  }
  for (int k = 0; k < 200; k++) { /* drain: ends, ageing */
    t.now += 1 + rnd(&t, 300);
    uint64_t r = pick(&t, PX_JOB_RUNNING);
    if (r) BOTH(&t, pxc_job_ended(c_, r, PX_JOB_COMPLETED, 0, t.now, NULL));
    cycle(&t);
  }
  if (getenv("PX_TEST_VERBOSE"))
    fprintf(stderr, "seed %llu: %zu of %zu cycles gated, %zu preemptions\n", (unsigned long long)seed,
            t.fast_cycles, t.cycles, preempts);
  assert_true(t.fast_cycles * 3 > t.cycles); /* the entries ran many cycles */
  twin_close(&t);
  return preempts;
}

static void gated_queue_equals_full_pass(void **state) {
  (void)state;
  size_t preempts = 0;
  for (uint64_t seed = 1; seed <= 12; seed++) preempts += run(seed, seed % 2 == 0, 6, 200);
  assert_true(preempts > 100);
}

/* A deep queue on a small cluster (lazy reasons, as the simulator): the
 * pass reaches its tail, whose groups read the jobs left. */
static void gated_queue_deep(void **state) {
  (void)state;
  size_t preempts = 0;
  for (uint64_t seed = 21; seed <= 23; seed++) preempts += run(seed, true, 4, 900);
  assert_true(preempts > 100);
}

/* ---- unit cases: one core reading the entries ---------------------------- */

static struct pf gq_open(uint32_t nnodes) {
  struct pf f = {.conf = gq_conf(nnodes, false)};
  pf_open(&f);
  px_core_set_lazy_reasons(f.core, 60);
  return f;
}

static void sub(struct pf *f, uint64_t id, const char *user, const char *qos, uint32_t nodes, uint32_t gpn,
                int64_t now, bool hold, const char *dep) {
  struct px_jobspec s = tc_spec(user, nodes, gpn);
  s.qos = (char *)qos;
  s.time_limit_s = 1000;
  s.requeue = true;
  s.hold = hold;
  s.dependency = (char *)dep;
  pf_sub_spec(f, id, &s, now);
}

/* A job released from hold while the entries hold starts at the next cycle. */
static void gated_sees_release(void **state) {
  (void)state;
  struct pf f = gq_open(1);
  sub(&f, 1, "alice", NULL, 0, 8, 0, true, NULL);
  pf_cycle(&f, 0);
  pf_cycle(&f, 10);
  assert_true(f.core->gent_live); /* held: gated, the entries read */
  assert_int_equal(f.out.len, 0);
  assert_int_equal(pxc_release(f.core, 1, true, 20, NULL), 0);
  pf_cycle(&f, 20);
  assert_non_null(tc_started(&f.out, 1));
  struct px_prio_factors pr; /* written when it was tried (cycle.c, try_job) */
  pxc_prio_factors(f.core, pxc_job_find(f.core, 1), 20, &pr);
  assert_int_equal(pxc_job_find(f.core, 1)->priority, pr.priority);
  assert_true(pr.priority > 1);
  pf_close(&f);
}

/* A dependency met between cycles: the dependent job starts when its
 * target ends, though the entries held in the cycles between. */
static void gated_sees_dependency_met(void **state) {
  (void)state;
  struct pf f = gq_open(1);
  sub(&f, 1, "alice", NULL, 0, 4, 0, false, NULL);
  pf_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 1));
  sub(&f, 2, "bob", NULL, 0, 4, 5, false, "afterany:1");
  pf_cycle(&f, 5);
  pf_cycle(&f, 10);
  assert_true(f.core->gent_live);
  assert_null(tc_started(&f.out, 2));
  assert_int_equal(pxc_job_ended(f.core, 1, PX_JOB_COMPLETED, 0, 20, NULL), 0);
  pf_cycle(&f, 20);
  assert_non_null(tc_started(&f.out, 2));
  pf_close(&f);
}

/* A begin time reached with no event: the job starts at the first cycle after. */
static void gated_sees_begin_time(void **state) {
  (void)state;
  struct pf f = gq_open(1);
  struct px_jobspec s = tc_spec("alice", 0, 8);
  s.time_limit_s = 1000;
  s.begin_s = 100;
  pf_sub_spec(&f, 1, &s, 0);
  pf_cycle(&f, 0);
  pf_cycle(&f, 50);
  assert_true(f.core->gent_live);
  assert_int_equal(f.out.len, 0);
  pf_cycle(&f, 100);
  assert_non_null(tc_started(&f.out, 1));
  pf_close(&f);
}

/* A preemptor goes first once its victims stopped, whatever the others'
 * priorities: carol's job (higher fair share) waits behind it. */
static void gated_preemptor_starts_at_once(void **state) {
  (void)state;
  struct pf f = gq_open(2);
  sub(&f, 1, "bob", NULL, 2, 8, 0, false, NULL);
  pf_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 1));
  pf_cycle(&f, 100); /* the entries from here */
  sub(&f, 2, "carol", NULL, 0, 8, 200, false, NULL);
  sub(&f, 3, "alice", "high", 2, 8, 200, false, NULL);
  pf_cycle(&f, 300); /* the full pass: a job that may preempt came (the fingerprint) */
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  assert_int_equal(pxc_job_requeue(f.core, 1, false, 300, NULL), 0);
  pf_cycle(&f, 300);
  assert_true(f.core->gent_live);
  assert_non_null(tc_started(&f.out, 3));
  assert_null(tc_started(&f.out, 2));
  pf_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gated_queue_equals_full_pass),
      cmocka_unit_test(gated_queue_deep),
      cmocka_unit_test(gated_sees_release),
      cmocka_unit_test(gated_sees_dependency_met),
      cmocka_unit_test(gated_sees_begin_time),
      cmocka_unit_test(gated_preemptor_starts_at_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
