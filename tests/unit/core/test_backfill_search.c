/*
 * The plan's searches (backfill_plan.c, pxc_tl_find) against a slot-by-slot
 * walk. A search for a fixed need per node (a single-node job, a -N gang)
 * jumps past slots where its partition has fewer nodes with its GPUs free
 * than it needs nodes (fixed_next), and a single-node job's goes node by
 * node after a while (find_single_later); a search of one slot at a time
 * does neither, so asking each slot in turn is the walk the search must
 * equal: the same slot, nodes and units. Seeded random plans: running
 * jobs' releases, then takes of random sizes and spans on random nodes
 * (some clamping), some searches committed as reservations; single-node
 * jobs of 1-8 GPUs and gangs of 2-7 nodes of 2, 4 or 8 GPUs, some
 * exclusive, limits from one slot to past the window.
 */
#include "px_test.h"

#include "core/policytest.h"

static uint64_t rs;
static uint32_t rnd(uint32_t n) {
  rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)((rs >> 33) % n);
}

#define NJOBS 60

/* The first slot in [from, nslots) where a search of that slot alone finds j. */
static bool walk(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, uint32_t from,
                 struct pxc_tl_fit *fit) {
  for (uint32_t k = from; k < tl->nslots; k++)
    if (pxc_tl_find(c, tl, j, k, k + 1, false, fit)) return true;
  return false;
}

/* Random takes on random nodes: the plan the searches run on. */
static void take_some(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *one_gpu) {
  for (uint32_t i = rnd(60); i > 0; i--) {
    uint32_t k0 = 1 + rnd(tl->nslots - 1), k1 = k0 + 1 + rnd(12);
    pxc_tl_take(c, tl, one_gpu, rnd(c->nnodes), 1 + rnd(8), k0, k1, +1);
  }
}

static void search_equals_walk(void **state) {
  (void)state;
  uint32_t found[2] = {0, 0}, jumped = 0;
  for (uint64_t seed = 1; seed <= 30; seed++) {
    rs = seed * 2654435761u + 7;
    struct px_conf *conf = tc_conf(16, 8, 4, 0);
    conf->sched.backfill = PX_BACKFILL_CONSERVATIVE;
    conf->sched.backfill_resolution_s = 60;
    conf->sched.backfill_window_s = 3600;
    struct pf f = {.conf = conf};
    pf_open(&f);
    uint64_t id = 0;
    for (uint32_t i = rnd(10); i > 0; i--) pf_sub(&f, ++id, "alice", 0, 1 + rnd(8), 60 + rnd(3000), 0);
    pf_cycle(&f, 0); /* running jobs: their releases are in the plan */
    pf_sub(&f, ++id, "bob", 0, 1, 60, 30);
    struct px_core *c = f.core;
    struct pxc_tl *tl = &c->pol->tl;
    pxc_tl_build(c, tl, 30, true);
    take_some(c, tl, pxc_job_find(c, id));
    for (uint32_t g = 0; g < NJOBS; g++) {
      bool gang = rnd(2);
      struct px_jobspec s = tc_spec("bob", gang ? 2 + rnd(6) : 0, gang ? 2u << rnd(3) : 1 + rnd(8));
      s.time_limit_s = 30 + rnd(4200);
      s.exclusive = rnd(8) == 0;
      pf_sub_spec(&f, ++id, &s, 30);
      const struct pxc_job *j = pxc_job_find(c, id);
      uint32_t from = 1 + rnd(tl->nslots / 2), want_n = 0, want_nodes[16], want_units[16];
      struct pxc_tl_fit want, got;
      bool ok = walk(c, tl, j, from, &want);
      if (ok) {
        want_n = want.nnodes;
        memcpy(want_nodes, want.nodes, want_n * sizeof *want_nodes);
        memcpy(want_units, want.units, want_n * sizeof *want_units);
      }
      assert_int_equal(pxc_tl_find(c, tl, j, from, tl->nslots, false, &got), ok);
      if (!ok) continue;
      found[gang]++;
      jumped += want.slot > from;
      assert_int_equal(got.slot, want.slot);
      assert_int_equal(got.end_slot, want.end_slot);
      assert_int_equal(got.nnodes, want_n);
      assert_memory_equal(got.nodes, want_nodes, want_n * sizeof *want_nodes);
      assert_memory_equal(got.units, want_units, want_n * sizeof *want_units);
      if (rnd(2)) pxc_tl_commit(c, tl, j, &got); /* a reservation: later gangs search around it */
    }
    pf_close(&f);
  }
  assert_true(found[0] > 300 && found[1] > 300 && jumped > 200); /* starts past the first slot tried too */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(search_equals_walk),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
