/*
 * The backfill pass's log (backfill.c, search): a pass whose plan is the
 * last pass's -- the build changed nothing, and the pass has committed only
 * what the last one did -- answers the same searches from the last pass's
 * log instead of searching. Two cores replay the same seeded random
 * workload (single-node jobs of 1-8 GPUs, gangs of 2-6 nodes of 4 or 8
 * GPUs, now and then an exclusive job; limits from 1 minute to 2 hours,
 * runs ending before them), one with the log and one searching every time:
 * every cycle's actions and every pending job's expected start must be the
 * same, under conservative and EASY backfill, multifactor (priorities move
 * with age) and FIFO order, lazy reasons and full ones. Most steps only
 * submit (the plan stays), some end jobs (rows redone) or cross slots and
 * windows (the grid moves); and the log must have answered searches, many
 * of them on a plan that starts, ends or a moved window changed since the
 * log, or after the passes went apart (policy.h, diff_to: a pass searches
 * again the starts that may differ). Dropping one of the bounds (the
 * build's, a moved window's cut span, a reservation one pass made and the
 * other not) fails it.
 *
 * The reference core (b) also takes none of the pass's other shortcuts:
 * a blocked job whose kind already found no room this cycle is not cut
 * short at its cursor (backfill.c, bf_blocked), and a start now is not
 * counted before the placer's nodes are read (pxc_tl_now_short), nor is a
 * start that crosses a reservation refused for a key that found no other
 * node set this cycle (backfill.c, other_failed). A cursor cut that fires
 * with room left, a count that asks one node more, or a memo that holds
 * across cycles or for a shorter end, fails it.
 */
#include "px_test.h"

#include "core/pairtest.h"

/* Every pending job's expected start (the reservations' slots). */
static void same_promises(struct pair *p) {
  for (uint64_t i = 1; i <= p->nj; i++) {
    if (p->jobs[i].end != -1) continue;
    struct px_job_view a, b;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
    assert_int_equal(px_core_job_get(p->a.core, i, &a), 0);
    assert_int_equal(px_core_job_get(p->b.core, i, &b), 0);
    assert_int_equal(a.expected_start_s, b.expected_start_s);
  }
}

/* a: the log and the shortcuts on; b: every search made, every start read. */
static uint64_t replay(uint64_t seed, enum px_backfill_mode mode, bool fifo, struct pair *p, uint64_t *on_diff) {
  rs = seed * 2654435761u + 29;
  pair_open(p, mode, fifo, 0);
  p->b.core->pol->tl.replay_off = true;
  p->b.core->pol->tl.now_count_off = true;
  p->b.core->pol->tl.other_memo_off = true;
  if (seed % 2) { /* lazy reasons: estimates are not searched, the tail cuts passes short */
    px_core_set_lazy_reasons(p->a.core, INT64_MAX);
    px_core_set_lazy_reasons(p->b.core, INT64_MAX);
  }
  for (int64_t t = 1000; t < 40000; t += rnd(6) ? 1 + rnd(20) : 30 + rnd(900)) {
    pair_step(p, t, 3);
    same_promises(p);
  }
  uint64_t replayed = p->a.core->pol->tl.replayed;
  *on_diff += p->a.core->pol->tl.replayed_diff;
  assert_int_equal(p->b.core->pol->tl.replayed, 0);
  pf_close(&p->a);
  pf_close(&p->b);
  return replayed;
}

static void log_answers_as_searches(void **state) {
  (void)state;
  static struct pair p;
  uint64_t replayed = 0, on_diff = 0;
  for (uint64_t seed = 1; seed <= 16; seed++) {
    enum px_backfill_mode mode = seed % 4 == 3 ? PX_BACKFILL_EASY : PX_BACKFILL_CONSERVATIVE;
    replayed += replay(seed, mode, seed % 3 == 0, &p, &on_diff);
    assert_true(p.starts >= PAIR_JOBS * 9 / 10); /* the workload runs through */
  }
  print_message("replayed %llu, %llu on a changed plan\n", (unsigned long long)replayed, (unsigned long long)on_diff);
  assert_true(replayed > 2000); /* the log answered, so it was tested */
  assert_true(on_diff > 10000); /* also after starts, ends and moved windows */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(log_answers_as_searches),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
