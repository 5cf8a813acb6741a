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
 * A real start now (slot 0, the nodes as they are: backfill's other node
 * set for a start that crosses a reservation) is ruled out by the same
 * count before any node is read: each job's must find what it finds
 * without the count.
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

/* A search's answer, kept past the next search (which reuses the scratch). */
struct kept_fit {
  uint32_t slot, end_slot, n, nodes[16], units[16];
};

static void keep_fit(struct kept_fit *k, bool ok, const struct pxc_tl_fit *fit) {
  *k = (struct kept_fit){.n = 0};
  if (!ok) return;
  k->slot = fit->slot, k->end_slot = fit->end_slot, k->n = fit->nnodes;
  memcpy(k->nodes, fit->nodes, k->n * sizeof *k->nodes);
  memcpy(k->units, fit->units, k->n * sizeof *k->units);
}

static void assert_fit_is(const struct pxc_tl_fit *got, const struct kept_fit *want) {
  assert_int_equal(got->slot, want->slot);
  assert_int_equal(got->end_slot, want->end_slot);
  assert_int_equal(got->nnodes, want->n);
  assert_memory_equal(got->nodes, want->nodes, want->n * sizeof *want->nodes);
  assert_memory_equal(got->units, want->units, want->n * sizeof *want->units);
}

/* Seed's plan: running jobs now and their releases, then random takes. */
static struct px_core *seeded_plan(struct pf *f, uint64_t seed, uint64_t *id) {
  rs = seed * 2654435761u + 7;
  struct px_conf *conf = tc_conf(16, 8, 4, 0);
  conf->sched.backfill = PX_BACKFILL_CONSERVATIVE;
  conf->sched.backfill_resolution_s = 60;
  conf->sched.backfill_window_s = 3600;
  *f = (struct pf){.conf = conf};
  pf_open(f);
  for (uint32_t i = rnd(10); i > 0; i--) pf_sub(f, ++*id, "alice", 0, 1 + rnd(8), 60 + rnd(3000), 0);
  pf_cycle(f, 0); /* running jobs: their releases are in the plan */
  pf_sub(f, ++*id, "bob", 0, 1, 60, 30);
  struct px_core *c = f->core;
  pxc_tl_build(c, &c->pol->tl, 30, true);
  take_some(c, &c->pol->tl, pxc_job_find(c, *id));
  return c;
}

/* A single-node job of 1-8 GPUs or a gang of 2-7 nodes of 2, 4 or 8, some exclusive. */
static const struct pxc_job *random_job(struct pf *f, uint64_t id, bool gang) {
  struct px_jobspec s = tc_spec("bob", gang ? 2 + rnd(6) : 0, gang ? 2u << rnd(3) : 1 + rnd(8));
  s.time_limit_s = 30 + rnd(4200);
  s.exclusive = rnd(8) == 0;
  pf_sub_spec(f, id, &s, 30);
  return pxc_job_find(f->core, id);
}

/* A real start now of j with fixed_next's count and without: the same
 * answer. Counts it in now[found]. */
static void real_now_check(struct px_core *c, struct pxc_tl *tl, const struct pxc_job *j, uint32_t now[2]) {
  struct pxc_tl_fit fit, got;
  struct kept_fit want;
  tl->now_count_off = true;
  bool ok = pxc_tl_find(c, tl, j, 0, 1, true, &fit);
  keep_fit(&want, ok, &fit);
  tl->now_count_off = false;
  assert_int_equal(pxc_tl_find(c, tl, j, 0, 1, true, &got), ok);
  now[ok]++;
  if (ok) assert_fit_is(&got, &want);
}

static void search_equals_walk(void **state) {
  (void)state;
  uint32_t found[2] = {0, 0}, jumped = 0, now[2] = {0, 0};
  for (uint64_t seed = 1; seed <= 30; seed++) {
    struct pf f;
    uint64_t id = 0;
    struct px_core *c = seeded_plan(&f, seed, &id);
    struct pxc_tl *tl = &c->pol->tl;
    for (uint32_t g = 0; g < NJOBS; g++) {
      bool gang = rnd(2);
      const struct pxc_job *j = random_job(&f, ++id, gang);
      real_now_check(c, tl, j, now);
      uint32_t from = 1 + rnd(tl->nslots / 2);
      struct pxc_tl_fit fit, got;
      struct kept_fit want;
      bool ok = walk(c, tl, j, from, &fit);
      keep_fit(&want, ok, &fit);
      assert_int_equal(pxc_tl_find(c, tl, j, from, tl->nslots, false, &got), ok);
      if (!ok) continue;
      found[gang]++;
      jumped += want.slot > from;
      assert_fit_is(&got, &want);
      if (rnd(2)) pxc_tl_commit(c, tl, j, &got); /* a reservation: later gangs search around it */
    }
    pf_close(&f);
  }
  assert_true(found[0] > 300 && found[1] > 300 && jumped > 200); /* starts past the first slot tried too */
  assert_true(now[0] > 100 && now[1] > 100);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(search_equals_walk),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
