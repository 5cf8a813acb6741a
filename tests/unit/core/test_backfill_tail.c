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
 * been reached, in some passes after a group's few shortest limits all
 * left and its heap was built (groups_heap; a group keeps one of them with
 * some seeds).
 */
#include "px_test.h"

#include "core/pairtest.h"

/* a: lazy reasons (the tail on); b: full passes. */
static void replay(uint64_t seed, enum px_backfill_mode mode, bool fifo, uint32_t max_test, struct pair *p,
                   uint32_t *tails, uint32_t *heaped) {
  rs = seed * 2654435761u + 17;
  pair_open(p, mode, fifo, max_test);
  px_core_set_lazy_reasons(p->a.core, seed % 2 ? INT64_MAX : 1); /* 1 s: the full cycle every cycle */
  p->a.core->pol->tail_best = seed % 3 == 1 ? 1 : 0; /* one shortest limit a group: its heap is built often */
  for (int64_t t = 1000; t < 60000; t += 1 + rnd(400)) {
    pair_step(p, t, 4);
    *tails += p->a.core->pass_tail;
    *heaped += p->a.core->pass_tail && p->a.core->pol->lims_heaped && !p->a.core->pol->lims_pos;
  }
  pf_close(&p->a);
  pf_close(&p->b);
}

static void tail_changes_no_start(void **state) {
  (void)state;
  static struct pair p;
  uint32_t tails = 0, starts = 0, heaped = 0;
  for (uint64_t seed = 1; seed <= 24; seed++) {
    enum px_backfill_mode mode = seed % 3 ? PX_BACKFILL_CONSERVATIVE : PX_BACKFILL_EASY;
    replay(seed, mode, seed % 4 == 0, seed % 5 == 0 ? 6 : 0, &p, &tails, &heaped);
    assert_int_equal(p.starts >= PAIR_JOBS * 9 / 10, true); /* the workload runs through */
    starts += p.starts;
  }
  assert_true(tails > 200); /* the tail was reached, so it was tested */
  print_message("tails %u, of them after the groups' heaps were built %u\n", tails, heaped);
  assert_true(heaped > 20);
  (void)starts;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tail_changes_no_start),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
