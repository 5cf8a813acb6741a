/*
 * Property tests of the issue-4 policies over seeded random workloads, run
 * as discrete-event simulations (a cycle at every job end), checking after
 * every step the core's invariants (coretest.h) and:
 *
 *   backfill: no job starts later than the start it was promised while it
 *     was the top pending job (FIFO order, all jobs submitted at once, so
 *     nothing can overtake it; jobs end at or before their limits); with
 *     backfill off and on the same job starts first, and backfill only adds
 *     starts to the first cycle's.
 *   preemption and quotas: no quota account runs beyond its guarantee plus
 *     BorrowingLimit; no job is preempted before its QoS minimum run time;
 *     every start places all of a gang's nodes; after a reclaim, once its
 *     victims are requeued, the next cycle gives the reclaiming account more
 *     GPUs (or they go to an earlier preemptor still waiting) and the
 *     borrower borrows none back (the unit test reclaim_newest_borrower shows
 *     the guarantee restored exactly).
 */
#include "px_test.h"

#include "core/policytest.h"

static uint64_t rs;
static uint32_t rnd(uint32_t n) {
  rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)((rs >> 33) % n);
}

#define NJOBS 40

struct sim {
  int64_t limit[NJOBS + 1], run[NJOBS + 1], start[NJOBS + 1], promise[NJOBS + 1];
  uint32_t nodes[NJOBS + 1], gpn[NJOBS + 1];
  uint64_t first_start;
  uint64_t first_cycle[NJOBS + 1];
  size_t nfirst;
};

static void gen(struct sim *s, uint64_t seed) {
  rs = seed * 7919 + 1;
  for (uint32_t i = 1; i <= NJOBS; i++) {
    bool gang = rnd(2);
    s->nodes[i] = gang ? 2 + rnd(rnd(4) ? 3 : 7) : 0;
    s->gpn[i] = gang ? 4 : 1 + rnd(4);
    s->limit[i] = 100 + rnd(2900);
    s->run[i] = s->limit[i] / 4 + rnd((uint32_t)(s->limit[i] - s->limit[i] / 4) + 1);
  }
}

/* Runs the workload to the end; returns false if the core got stuck. */
static bool simulate(struct sim *s, enum px_backfill_mode mode, uint32_t depth) {
  struct px_conf *conf = tc_conf(8, 4, 4, 0);
  conf->sched.order = PX_ORDER_FIFO;
  conf->sched.backfill = mode;
  conf->sched.backfill_depth = depth;
  conf->sched.backfill_resolution_s = 60;
  conf->sched.backfill_window_s = 200000;
  struct pf f = {.conf = conf};
  pf_open(&f);
  for (uint32_t i = 1; i <= NJOBS; i++) {
    pf_sub(&f, i, i % 2 ? "alice" : "bob", s->nodes[i], s->gpn[i], s->limit[i], 0);
    s->start[i] = -1;
    s->promise[i] = INT64_MAX;
  }
  int64_t t = 0;
  uint32_t done = 0;
  bool first = true;
  for (int steps = 0; steps < 10 * NJOBS && done < NJOBS; steps++) {
    pf_cycle(&f, t);
    for (size_t a = 0; a < f.out.len; a++) {
      const struct px_action *x = &f.out.v[a];
      assert_int_equal(x->kind, PX_ACT_START);
      s->start[x->job_id] = t;
      assert_int_equal(x->nalloc, s->nodes[x->job_id] ? s->nodes[x->job_id] : 1);
      if (first) s->first_cycle[s->nfirst++] = x->job_id;
    }
    if (first) s->first_start = f.out.len ? f.out.v[0].job_id : 0;
    first = false;
    for (uint32_t i = 1; i <= NJOBS; i++) /* the top pending job's promise */
      if (s->start[i] < 0) {
        int64_t e = pf_view(f.core, i).expected_start_s;
        if (e && e < s->promise[i]) s->promise[i] = e;
        break;
      }
    int64_t next = INT64_MAX;
    for (uint32_t i = 1; i <= NJOBS; i++)
      if (s->start[i] >= 0 && s->start[i] + s->run[i] > t && s->start[i] + s->run[i] < next)
        next = s->start[i] + s->run[i];
    if (next == INT64_MAX) break;
    t = next;
    for (uint32_t i = 1; i <= NJOBS; i++)
      if (s->start[i] >= 0 && s->start[i] + s->run[i] == t) {
        pf_end(&f, i, t);
        done++;
      }
  }
  pf_close(&f);
  return done == NJOBS;
}

static void backfill_keeps_promises(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 40; seed++) {
    struct sim on = {0}, off = {0};
    gen(&on, seed);
    gen(&off, seed);
    enum px_backfill_mode mode = seed % 2 ? PX_BACKFILL_CONSERVATIVE : PX_BACKFILL_EASY;
    assert_true(simulate(&on, mode, seed % 3 ? UINT32_MAX : 3));
    assert_true(simulate(&off, PX_BACKFILL_NONE, 0));
    for (uint32_t i = 1; i <= NJOBS; i++) {
      if (on.start[i] > on.promise[i])
        fail_msg("seed %llu job %u started at %lld, promised %lld", (unsigned long long)seed, i,
                 (long long)on.start[i], (long long)on.promise[i]);
    }
    assert_int_equal(on.first_start, off.first_start);
    for (size_t k = 0; k < off.nfirst; k++) { /* backfill adds starts, removes none */
      bool found = false;
      for (size_t m = 0; m < on.nfirst; m++) found |= on.first_cycle[m] == off.first_cycle[k];
      assert_true(found);
    }
  }
}

/* ---- preemption and quotas --------------------------------------------- */

struct pjob { uint32_t nodes, gpn, acct; int64_t run, start; bool low, gone; };

static void check_quota(struct px_core *c, const uint32_t *acct, const uint64_t *cap) {
  for (int a = 0; a < 2; a++) {
    uint64_t used = c->assoc[acct[a]].run_cgpus / 100;
    if (used > cap[a]) fail_msg("account %d runs %llu GPUs over its cap %llu", a, (unsigned long long)used,
                                (unsigned long long)cap[a]);
  }
}

static void preempt_and_quota_invariants(void **state) {
  (void)state;
  uint32_t nreclaims = 0;
  for (uint64_t seed = 1; seed <= 30; seed++) {
    rs = seed * 104729 + 3;
    struct px_conf *conf = tc_conf(4, 8, 2, 0);
    uint32_t acct[2] = {px_testconf_account(conf, "ta", 0, 1), px_testconf_account(conf, "tb", 0, 1)};
    px_testconf_user(conf, "ua", acct[0], 1);
    px_testconf_user(conf, "ub", acct[1], 1);
    for (int a = 0; a < 2; a++) {
      conf->accounts[acct[a]].guaranteed_gpus = 16;
      conf->accounts[acct[a]].cohort = "c1";
    }
    conf->accounts[acct[1]].borrow_limit_gpus = 8;
    uint64_t cap[2] = {32, 24};
    uint32_t low = px_testconf_qos(conf, "low", 0), high = px_testconf_qos(conf, "high", 10);
    uint32_t *list = px_arena_alloc(&conf->arena, sizeof *list);
    list[0] = low;
    conf->qos[high].preempt = list;
    conf->qos[high].npreempt = 1;
    conf->qos[low].min_runtime_s = 300;
    conf->sched.preempt_type = "preempt/qos";
    conf->sched.preempt_mode = PX_PREEMPT_REQUEUE;
    conf->sched.backfill = seed % 2 ? PX_BACKFILL_CONSERVATIVE : PX_BACKFILL_NONE;
    struct pf f = {.conf = conf};
    pf_open(&f);
    struct pjob jobs[81] = {{0}};
    bool preemptor[81] = {0};
    uint64_t nj = 0;
    for (int64_t t = 0; t < 20000; t += 50 + rnd(200)) {
      for (uint32_t k = rnd(3); k > 0 && nj < 80; k--) { /* arrivals */
        struct pjob *j = &jobs[++nj];
        bool gang = rnd(4) == 0;
        *j = (struct pjob){gang ? 2 : 0, gang ? 8 : 1u << rnd(4), rnd(2), 200 + rnd(3000), -1, rnd(2), false};
        struct px_jobspec s = tc_spec(j->acct ? "ub" : "ua", j->nodes, j->gpn);
        s.qos = (char *)(j->low ? "low" : "high");
        s.time_limit_s = 4000;
        pf_sub_spec(&f, nj, &s, t);
      }
      for (uint64_t i = 1; i <= nj; i++) /* ends */
        if (jobs[i].start >= 0 && !jobs[i].gone && jobs[i].start + jobs[i].run <= t) {
          pf_end(&f, i, t);
          jobs[i].gone = true;
        }
      pf_cycle(&f, t);
      check_quota(f.core, acct, cap);
      uint64_t reclaimer = 0;
      for (size_t a = 0; a < f.out.len; a++) {
        const struct px_action *x = &f.out.v[a];
        struct pjob *j = &jobs[x->job_id];
        if (x->kind == PX_ACT_START) {
          assert_int_equal(x->nalloc, j->nodes ? j->nodes : 1);
          j->start = t;
        } else if (x->kind == PX_ACT_PREEMPT || (x->kind == PX_ACT_SIGNAL && x->preemptor_job_id)) {
          if (j->low && t - j->start < 300) fail_msg("job %llu preempted after %lld s",
                                                     (unsigned long long)x->job_id, (long long)(t - j->start));
          if (x->preempt_cause == PX_PREEMPT_BY_RECLAIM) reclaimer = x->preemptor_job_id;
          preemptor[x->preemptor_job_id] = true;
          assert_int_equal(pxc_job_requeue(f.core, x->job_id, false, t, NULL), 0);
          j->start = -1;
        }
      }
      if (reclaimer) { /* victims requeued: the borrower cannot borrow the GPUs back */
        uint32_t other = acct[!jobs[reclaimer].acct];
        uint64_t before = f.core->assoc[other].run_cgpus / 100, mine = f.core->assoc[acct[jobs[reclaimer].acct]].run_cgpus / 100;
        pf_cycle(&f, t);
        check_quota(f.core, acct, cap);
        for (size_t k = 0; k < f.out.len; k++)
          if (f.out.v[k].kind == PX_ACT_START) jobs[f.out.v[k].job_id].start = t;
        assert_true(f.core->assoc[other].run_cgpus / 100 <= (before > 16 ? before : 16)); /* no new borrowing */
        bool other_preemptor = false; /* the GPUs went to an earlier preemptor instead */
        for (size_t k = 0; k < f.out.len; k++)
          other_preemptor |= f.out.v[k].kind == PX_ACT_START && preemptor[f.out.v[k].job_id];
        assert_true(f.core->assoc[acct[jobs[reclaimer].acct]].run_cgpus / 100 > mine || other_preemptor);
        nreclaims++;
      }
    }
    pf_close(&f);
  }
  assert_true(nreclaims > 5); /* the workload does exercise reclaim */
}

/* ---- the plan's incremental builds ------------------------------------ */

/* A conservative-backfill workload on a window of 20 one-minute slots, with
 * clock steps from 1 s to past the window: every build the cycles make
 * (undoing the last cycle's reservations, recomputing the rows that changed,
 * sliding the window by 1 to 19 slots, moving the rows back to the start of
 * their storage) must equal a build from scratch. Nodes 1, 5 and 9 have two
 * MIG profiles, and some jobs ask one: their per-type rows too. */
static const struct px_conf_gpu_type mixed[] = {{"1g.10gb", 2}, {"3g.40gb", 2}};

static void plan_builds_equal_full_builds(void **state) {
  (void)state;
  uint32_t nslides = 0;
  for (uint64_t seed = 1; seed <= 12; seed++) {
    rs = seed * 15485863 + 11;
    struct px_conf *conf = tc_conf(12, 4, 4, 0);
    conf->sched.backfill = PX_BACKFILL_CONSERVATIVE;
    conf->sched.backfill_resolution_s = 60;
    conf->sched.backfill_window_s = 1200;
    for (uint32_t i = 0; i < 12; i += 2) conf->nodes[i].gpu_shares = true; /* shared GPUs' releases too */
    for (uint32_t i = 1; i < 12; i += 4) conf->nodes[i].gpu_types = mixed, conf->nodes[i].ngpu_types = 2;
    struct pf f = {.conf = conf};
    pf_open(&f);
    struct pxc_tl *tl = &f.core->pol->tl;
    int64_t end[121], t = 0;
    uint64_t nj = 0;
    for (int step = 0; step < 150; step++) {
      int64_t t0 = tl->t0;
      t += rnd(8) == 0 ? 1300 + rnd(600) : 1 + rnd(240);
      for (uint64_t i = 1; i <= nj; i++)
        if (end[i] > 0 && end[i] <= t) {
          pf_end(&f, i, t);
          end[i] = 0;
        }
      for (uint32_t k = rnd(3); k > 0 && nj < 120; k--) {
        bool gang = rnd(3) == 0;
        if (!gang && rnd(4) == 0) { /* a fraction of a shared GPU */
          struct px_jobspec s = tc_spec("alice", 0, 0);
          s.gpu_share = 10 + rnd(60);
          s.time_limit_s = 60 + rnd(2400);
          pf_sub_spec(&f, ++nj, &s, t);
        } else if (!gang && rnd(3) == 0) { /* one profile's instances */
          struct px_jobspec s = tc_spec("alice", 0, 1 + rnd(2));
          s.gpu_type = rnd(2) ? "1g.10gb" : "3g.40gb";
          s.time_limit_s = 60 + rnd(2400);
          pf_sub_spec(&f, ++nj, &s, t);
        } else {
          pf_sub(&f, ++nj, "alice", gang ? 2 + rnd(3) : 0, gang ? 4 : 1 + rnd(4), 60 + rnd(2400), t);
        }
        end[nj] = -1;
      }
      pxc_tl_build(f.core, tl, t, false);
      nslides += tl->t0 > t0 && tl->t0 - t0 < 19 * 60;
      assert_int_equal(pxc_tl_verify(f.core, tl), 0);
      pf_cycle(&f, t);
      for (size_t a = 0; a < f.out.len; a++) /* runs 1/2 to all of its limit */
        end[f.out.v[a].job_id] = t + f.out.v[a].time_limit_s / 2 + rnd((uint32_t)f.out.v[a].time_limit_s / 2 + 1);
    }
    pf_close(&f);
  }
  assert_true(nslides > 500); /* the windows did slide */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(backfill_keeps_promises),
      cmocka_unit_test(plan_builds_equal_full_builds),
      cmocka_unit_test(preempt_and_quota_invariants),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
