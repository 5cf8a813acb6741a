/*
 * sbatch --test-only's start estimate (estimate.c): the earliest time the
 * job fits as running jobs end at their limits, to the second; the jobs
 * ahead of it in the queue (not held, not behind it in priority) take
 * their fits first; now when it starts at the next cycle. And it is read
 * only: two cores given the same random events and cycles, one asked for
 * estimates of its pending jobs between them and put through the server's
 * whole dry run (submit, estimate, withdraw), give the same actions, the
 * same reasons, priorities and backfill estimates every cycle.
 */
#include "px_test.h"

#include "core/event.h"
#include "core/twintest.h"

/* 4 nodes x 8 GPUs, multifactor with fair share, conservative backfill,
 * a one-minute grid. */
static struct px_conf *est_conf(uint32_t nnodes) {
  struct px_conf *c = tc_conf(nnodes, 8, 0, 0);
  c->sched.order = PX_ORDER_MULTIFACTOR;
  c->sched.weight_age = 1000;
  c->sched.weight_fairshare = 10000;
  c->sched.max_age_s = 3000;
  c->sched.backfill = PX_BACKFILL_CONSERVATIVE;
  c->sched.backfill_resolution_s = 60;
  c->sched.backfill_window_s = 20000;
  return c;
}

static struct pf est_open(void) {
  struct pf f = {.conf = est_conf(4)};
  pf_open(&f);
  return f;
}

/* Job id on nodes x 8 GPUs (0: one node) for limit_s, nice as given. */
static void sub(struct pf *f, uint64_t id, uint32_t nodes, int64_t limit_s, int32_t nice, int64_t now) {
  struct px_jobspec s = tc_spec("alice", nodes, 8);
  s.time_limit_s = limit_s;
  s.nice = nice;
  pf_sub_spec(f, id, &s, now);
}

/* Jobs 1-4 fill the four nodes at t = 7, ending at 607, 1207, 1807, 2407
 * (not on the one-minute grid: the estimate is to the second). */
static void fill(struct pf *f) {
  for (uint64_t id = 1; id <= 4; id++) sub(f, id, 0, 600 * (int64_t)id, 0, 7);
  pf_cycle(f, 7);
  assert_int_equal(pf_count(&f->out, PX_ACT_START), 4);
}

static int64_t estimate(struct pf *f, uint64_t id, int64_t now, uint32_t *nnodes) {
  uint32_t nodes[8];
  int64_t t = -1;
  assert_int_equal(px_core_job_estimate(f->core, id, now, &t, nodes, 8, nnodes), 0);
  return t;
}

static void estimate_is_running_jobs_end(void **state) {
  (void)state;
  struct pf f = est_open();
  fill(&f);
  uint32_t n;
  sub(&f, 10, 0, 60, 0, 100);
  assert_int_equal(estimate(&f, 10, 100, &n), 607); /* the first node's job ends */
  assert_int_equal(n, 1);
  sub(&f, 11, 2, 60, 0, 100);
  assert_int_equal(estimate(&f, 11, 100, &n), 1207); /* two nodes: the second one's */
  assert_int_equal(n, 2);
  sub(&f, 12, 4, 60, 0, 100);
  assert_int_equal(estimate(&f, 12, 100, &n), 2407);
  assert_int_equal(px_core_job_estimate(f.core, 1, 100, &(int64_t){0}, NULL, 0, &n), PX_ENOENT); /* running */
  pf_close(&f);
}

/* A job ahead takes the first node that frees (607 .. 3607): the next one
 * goes on the second (1207), a job of every node after its end, to the
 * second. A held one, or one behind in priority, does not count. */
static void estimate_counts_jobs_ahead(void **state) {
  (void)state;
  struct pf f = est_open();
  fill(&f);
  sub(&f, 20, 0, 3000, 0, 50);
  pf_cycle(&f, 60);
  assert_int_equal(pf_view(f.core, 20).reason, PX_REASON_RESOURCES);
  uint32_t n;
  sub(&f, 21, 0, 60, 0, 100);
  assert_int_equal(estimate(&f, 21, 100, &n), 1207);
  sub(&f, 22, 0, 60, -100000, 100); /* nice -100000: ahead of job 20 */
  assert_int_equal(estimate(&f, 22, 100, &n), 607);
  assert_int_equal(pxc_cancel(f.core, 22, 100, NULL), 0);
  sub(&f, 23, 4, 60, 0, 100); /* every node: after job 20's estimated end, 607 + 3000 */
  assert_int_equal(estimate(&f, 23, 100, &n), 3607);
  assert_int_equal(n, 4);
  assert_int_equal(pxc_hold(f.core, 20, false, 100, NULL), 0);
  assert_int_equal(estimate(&f, 21, 100, &n), 607);
  pf_close(&f);
}

/* Only the first backfill_depth jobs ahead count, the first in queue
 * order: job 41 (higher priority) holds nodes 1-2 from 1207, which leaves
 * the first node free over [607, 1207) for a short job; job 40, had it been
 * kept instead, would have taken it. */
static void estimate_ahead_depth(void **state) {
  (void)state;
  struct pf f = {.conf = est_conf(4)};
  f.conf->sched.backfill_depth = 1;
  pf_open(&f);
  fill(&f);
  sub(&f, 40, 0, 3000, 0, 50);
  sub(&f, 41, 2, 3000, -500, 50);
  sub(&f, 39, 0, 3000, 10000, 50); /* the last in queue order */
  pf_cycle(&f, 60);
  uint32_t n;
  sub(&f, 42, 0, 60, 0, 100);
  assert_int_equal(estimate(&f, 42, 100, &n), 607);
  assert_int_equal(pxc_cancel(f.core, 41, 100, NULL), 0); /* now job 40 is the first */
  assert_int_equal(estimate(&f, 42, 100, &n), 1207);
  pf_close(&f);
}

/* Free room and no job ahead: now, on the placer's nodes. A job ahead
 * whose fit is later leaves room now for a job short enough. */
static void estimate_now(void **state) {
  (void)state;
  struct pf f = est_open();
  sub(&f, 1, 2, 600, 0, 0);
  pf_cycle(&f, 0);
  uint32_t n;
  sub(&f, 2, 0, 60, 0, 10);
  assert_int_equal(estimate(&f, 2, 10, &n), 10);
  assert_int_equal(n, 1);
  assert_int_equal(pxc_cancel(f.core, 2, 10, NULL), 0);
  sub(&f, 3, 4, 3000, 0, 20); /* waits for job 1: [600, 3600) on all four nodes */
  pf_cycle(&f, 20);
  assert_int_equal(pf_view(f.core, 3).reason, PX_REASON_RESOURCES);
  sub(&f, 4, 0, 60, 0, 30);
  assert_int_equal(estimate(&f, 4, 30, &n), 30); /* ends before job 3's start */
  sub(&f, 5, 0, 1000, 0, 30);
  assert_int_equal(estimate(&f, 5, 30, &n), 3600); /* crosses it: after job 3 */
  pf_close(&f);
}

/* ---- read only: twin cores, estimates on one ------------------------------ */

static void submit(struct twin *t) {
  static const char *const users[] = {"alice", "bob"};
  twin_random_submit(t, users, 2, NULL);
}

static void event(struct twin *t) { twin_random_event(t, submit); }

/* Core 0 only: estimates of a few pending jobs picked at random; counts
 * those later than now. */
static size_t estimates(struct twin *t) {
  size_t later = 0;
  uint32_t nodes[16], n;
  for (int k = 0; k < 3; k++) {
    uint64_t id = pick(t, PX_JOB_PENDING);
    int64_t at;
    if (id && !px_core_job_estimate(t->c[0], id, t->now, &at, nodes, 16, &n)) later += at > t->now;
  }
  return later;
}

/* Core 0 only: the server's dry run (handle.c, submit_test): a random job
 * submitted under the next id, estimated, withdrawn. */
static size_t dry_run(struct twin *t) {
  uint32_t nodes[16], n;
  int64_t at = 0;
  struct px_jobspec s = tc_spec("alice", rnd(t, 4) ? 0 : 1 + rnd(t, t->nnodes), 1 + rnd(t, 8) / 4 * 7);
  s.time_limit_s = 60 + rnd(t, 3000);
  if (tc_submit(t->c[0], t->next_id, &s, t->now)) return 0;
  assert_int_equal(px_core_job_estimate(t->c[0], t->next_id, t->now, &at, nodes, 16, &n), 0);
  assert_int_equal(px_core_withdraw(t->c[0], t->next_id, t->now), 0);
  return at > t->now;
}

static void same_estimates(const struct pxc_job *a, const struct pxc_job *b) {
  assert_int_equal(a->reason, b->reason);
  assert_int_equal(a->expected_start_s, b->expected_start_s);
}

static size_t run(uint64_t seed, bool lazy, uint32_t nnodes) {
  struct twin t = {.rng = seed, .next_id = 1, .njobs = 150, .submit_pct = 45, .nnodes = nnodes};
  t.conf = est_conf(nnodes);
  t.conf->sched.backfill = seed % 3 ? PX_BACKFILL_CONSERVATIVE : PX_BACKFILL_EASY;
  t.conf->sched.backfill_depth = seed % 2 ? 3 : 0; /* 3: the estimate keeps the first 3 jobs ahead */
  twin_cores(&t, lazy);
  t.deps = seed % 2 == 0;
  size_t later = 0;
  while (t.next_id <= t.njobs) {
    t.now += rnd(&t, 3) ? rnd(&t, 120) : 0;
    for (uint32_t k = rnd(&t, 4); k-- > 0;) event(&t);
    later += estimates(&t) + dry_run(&t);
    twin_cycle(&t);
    twin_same_jobs(&t, same_estimates);
    later += estimates(&t) + dry_run(&t);
  }
  for (int k = 0; k < 100; k++) { /* drain */
    t.now += 1 + rnd(&t, 300);
    uint64_t r = pick(&t, PX_JOB_RUNNING);
    if (r) BOTH(&t, pxc_job_ended(c_, r, PX_JOB_COMPLETED, 0, t.now, NULL));
    later += estimates(&t);
    twin_cycle(&t);
    twin_same_jobs(&t, same_estimates);
  }
  twin_close(&t);
  return later;
}

static void estimate_is_read_only(void **state) {
  (void)state;
  size_t later = 0;
  for (uint64_t seed = 1; seed <= 8; seed++) later += run(seed, seed % 4 == 0, 4 + (uint32_t)(seed % 3));
  assert_true(later > 100); /* the estimates did search the plan */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(estimate_is_running_jobs_end),
      cmocka_unit_test(estimate_counts_jobs_ahead),
      cmocka_unit_test(estimate_ahead_depth),
      cmocka_unit_test(estimate_now),
      cmocka_unit_test(estimate_is_read_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
