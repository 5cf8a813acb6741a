/*
 * A blocked head costs the same whatever the queue's depth (issue 21).
 * Two 8-GPU nodes, FIFO without backfill (the block stage), lazy reasons
 * as the simulator sets them. A (8 GPUs) runs on one node; B, the head, a
 * 2-node gang of 16, cannot start and holds back the partition, as Slurm's
 * main scheduler stops there; behind it wait `depth` 1-GPU jobs. A cycle
 * then tries B alone: the same placement work and a lazy stop, for 10 jobs
 * behind as for 2,000, and none of them starts although a node is free.
 */
#include "px_test.h"

#include "core/policytest.h"

static struct px_core_stats blocked_head_cycle(uint32_t depth) {
  struct pf f = {.conf = tc_conf(2, 8, 0, 0)};
  f.conf->sched.order = PX_ORDER_FIFO;
  pf_open(&f);
  px_core_set_lazy_reasons(f.core, 3600);
  struct px_jobspec a = tc_spec("alice", 1, 8), b = tc_spec("alice", 2, 8), one = tc_spec("bob", 1, 1);
  pf_sub_spec(&f, 1, &a, 0);
  pf_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 1));
  pf_sub_spec(&f, 2, &b, 10);
  for (uint32_t i = 0; i < depth; i++) pf_sub_spec(&f, 3 + i, &one, 10);
  pf_cycle(&f, 10); /* a full cycle: every job gets its reason */
  assert_int_equal(f.out.len, 0);
  struct px_core_stats before, after;
  px_core_stats(f.core, &before);
  pf_cycle(&f, 20);
  assert_int_equal(f.out.len, 0);
  px_core_stats(f.core, &after);
  pf_close(&f);
  after.place_attempts -= before.place_attempts;
  after.lazy_stops -= before.lazy_stops;
  return after;
}

static void blocked_head_cost_is_flat(void **state) {
  (void)state;
  struct px_core_stats shallow = blocked_head_cycle(10), deep = blocked_head_cycle(2000);
  assert_int_equal(shallow.place_attempts, deep.place_attempts);
  assert_int_equal(shallow.lazy_stops, 1);
  assert_int_equal(deep.lazy_stops, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(blocked_head_cost_is_flat)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
