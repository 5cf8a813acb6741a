/*
 * Two core facilities the server's job verbs use (event.h): an UPDATE of a
 * running job's time limit, which the backfill plan reads as the job's
 * release time (so a waiting job's estimate moves with it), and
 * px_core_job_fits_now, sbatch --test-only's read-only placement. Two
 * 8-GPU nodes, conservative backfill, a plan resolution of 100 s.
 */
#include "px_test.h"

#include "core/event.h"
#include "core/policytest.h"

static void open_two(struct pf *f) {
  f->conf = tc_conf(2, 8, 0, 0);
  f->conf->sched.order = PX_ORDER_FIFO;
  f->conf->sched.backfill = PX_BACKFILL_CONSERVATIVE;
  f->conf->sched.backfill_resolution_s = 100;
  f->conf->sched.backfill_window_s = 10000;
  pf_open(f);
}

static int update(struct pf *f, uint64_t id, unsigned fields, int64_t limit_s, int64_t now) {
  struct px_event ev = {.kind = PX_EV_UPDATE, .job_id = id, .update = {.fields = fields, .nice = 3,
                                                                         .time_limit_s = limit_s}};
  struct px_event_result res;
  return px_core_apply(f->core, &ev, now, &res);
}

/* A (1000 s) and B (3000 s) fill both nodes; C (2 nodes) waits for both:
 * 3000. Raising A past B's end moves nothing; B's limit cut to 1500
 * moves C to 1500, and raised again to 4000, to 4000. */
static void running_limit_moves_the_plan(void **state) {
  (void)state;
  struct pf f;
  open_two(&f);
  pf_sub(&f, 1, "alice", 1, 8, 1000, 0);
  pf_sub(&f, 2, "alice", 1, 8, 3000, 0);
  pf_cycle(&f, 0);
  pf_sub(&f, 3, "bob", 2, 8, 500, 10);
  pf_cycle(&f, 10);
  assert_int_equal(pf_view(f.core, 3).expected_start_s, 3000);
  assert_int_equal(update(&f, 2, PX_UPD_TIME_LIMIT, 1500, 20), 0);
  assert_int_equal(pf_view(f.core, 2).time_limit_s, 1500);
  pf_cycle(&f, 20);
  assert_int_equal(pf_view(f.core, 3).expected_start_s, 1500);
  assert_int_equal(update(&f, 2, PX_UPD_TIME_LIMIT, 4000, 30), 0);
  pf_cycle(&f, 30);
  assert_int_equal(pf_view(f.core, 3).expected_start_s, 4000);
  /* of a running job only the limit changes; a limit must be positive */
  assert_int_equal(update(&f, 2, PX_UPD_NICE, 0, 40), PX_ESTATE);
  assert_int_equal(update(&f, 2, PX_UPD_TIME_LIMIT, 0, 40), PX_EINVAL);
  assert_int_equal(pf_view(f.core, 2).time_limit_s, 4000);
  pf_close(&f);
}

/* A pending job fits now where the free resources hold it, whatever the
 * queue ahead of it; nothing is taken. */
static void fits_now_reads_only(void **state) {
  (void)state;
  struct pf f;
  open_two(&f);
  pf_sub(&f, 1, "alice", 1, 8, 1000, 0);
  pf_cycle(&f, 0);
  uint32_t nodes[2], n = 9;
  pf_sub(&f, 2, "bob", 2, 8, 500, 10);  /* waits for node 0 */
  assert_int_equal(px_core_job_fits_now(f.core, 2, 10, nodes, 2, &n), 0);
  assert_int_equal(n, 0);
  pf_sub(&f, 3, "bob", 1, 8, 500, 10);  /* node 1 is free */
  assert_int_equal(px_core_job_fits_now(f.core, 3, 10, nodes, 2, &n), 0);
  assert_int_equal(n, 1);
  assert_int_equal(nodes[0], 1);
  struct px_node_view nv;
  assert_int_equal(px_core_node_get(f.core, 1, &nv), 0);
  assert_int_equal(nv.gpus_alloc, 0); /* nothing taken */
  assert_int_equal(px_core_job_fits_now(f.core, 1, 10, nodes, 2, &n), PX_ENOENT); /* running */
  assert_int_equal(px_core_job_fits_now(f.core, 99, 10, nodes, 2, &n), PX_ENOENT);
  pf_close(&f);
}

/* The dry run's undo leaves no trace: the withdrawn id (the next real
 * job's) is not a finished job a dependency could name, where a cancel's
 * would be. */
static void withdraw_leaves_no_record(void **state) {
  (void)state;
  struct pf f;
  open_two(&f);
  pf_sub(&f, 4, "bob", 1, 8, 500, 10);
  assert_int_equal(px_core_withdraw(f.core, 4, 10), 0);
  assert_int_equal(px_core_withdraw(f.core, 4, 10), PX_ENOENT);
  struct px_jobspec s = tc_spec("bob", 1, 8);
  s.dependency = (char *)"afterok:4";
  assert_int_equal(tc_submit(f.core, 5, &s, 20), PX_ENOENT); /* unknown job 4 */
  pf_sub(&f, 6, "bob", 1, 8, 500, 20);
  struct px_event cancel = {.kind = PX_EV_CANCEL, .job_id = 6};
  struct px_event_result res;
  assert_int_equal(px_core_apply(f.core, &cancel, 20, &res), 0);
  s.dependency = (char *)"afterok:6";
  assert_int_equal(tc_submit(f.core, 7, &s, 30), 0); /* a real cancel is remembered */
  pf_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(running_limit_moves_the_plan),
      cmocka_unit_test(fits_now_reads_only),
      cmocka_unit_test(withdraw_leaves_no_record),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
