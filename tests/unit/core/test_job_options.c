/*
 * Slurm job options the core acts on (issue 17): --nodelist (the job runs on
 * exactly the listed nodes), --reservation (only inside that reservation, and
 * only while its window is open), --cpus-per-gpu (CPUs follow the GPUs),
 * --time-min (backfill shortens the limit down to it rather than delaying a
 * reservation), and the launch options the core only validates (--open-mode,
 * --hint, --distribution). Nodes n00000.. of 8 GPUs and 64 CPUs; accounts
 * acct (alice, bob) and ta (ua).
 */
#include "px_test.h"

#include "core/policytest.h"

static struct px_conf *o_conf(uint32_t nnodes, enum px_backfill_mode bf) {
  struct px_conf *c = tc_conf(nnodes, 8, 0, 0);
  uint32_t ta = px_testconf_account(c, "ta", 0, 1);
  px_testconf_user(c, "ua", ta, 1);
  c->sched.order = PX_ORDER_FIFO;
  c->sched.backfill = bf;
  c->sched.backfill_resolution_s = 100;
  c->sched.backfill_window_s = 100000;
  return c;
}

static int submit_diag(struct pf *f, uint64_t id, const struct px_jobspec *s, const char *want) {
  struct px_diag d;
  enum px_reason r;
  int rc = pxc_submit(f->core, id, s, 0, &r, &d);
  if (rc && want && !strstr(d.msg, want)) fail_msg("job %llu: \"%s\" lacks \"%s\"", (unsigned long long)id, d.msg, want);
  return rc;
}

static uint32_t alloc_node(const struct pf *f, uint64_t id, uint32_t i) {
  const struct px_action *a = tc_started(&f->out, id);
  return a && i < a->nalloc ? f->out.allocs[a->alloc_first + i].node : PX_NONE;
}

/* 4 idle nodes; packing would choose n00000 first. A job listing n00002 and
 * n00003 gets exactly those (its node count is the list's); while n00003 is
 * busy the next such job waits although two other nodes are free. */
static void nodelist_places_on_listed_nodes(void **state) {
  (void)state;
  struct pf f = {.conf = o_conf(4, PX_BACKFILL_NONE)};
  pf_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 0);
  s.gpus_per_node = 2;
  s.time_limit_s = 100;
  s.nodelist = "n[00002-00003],n00003";
  pf_sub_spec(&f, 1, &s, 0);
  pf_cycle(&f, 0);
  const struct px_action *a = tc_started(&f.out, 1);
  assert_non_null(a);
  assert_int_equal(a->nalloc, 2);
  assert_int_equal(alloc_node(&f, 1, 0), 2);
  assert_int_equal(alloc_node(&f, 1, 1), 3);
  /* a one-node job on n00003 only: 6 GPUs left there, it asks 8 */
  s = tc_spec("alice", 0, 8);
  s.time_limit_s = 100;
  s.nodelist = "n00003";
  pf_sub_spec(&f, 2, &s, 1);
  pf_cycle(&f, 1);
  assert_null(tc_started(&f.out, 2));
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_RESOURCES);
  pf_end(&f, 1, 50);
  pf_cycle(&f, 50);
  assert_int_equal(alloc_node(&f, 2, 0), 3);
  pf_close(&f);
}

/* Slurm refuses what cannot mean "these nodes": unknown names, a node both
 * listed and excluded, a node count below the list's, too few tasks. A count
 * above the list's (Slurm would add nodes) is refused, saying so. */
static void nodelist_errors(void **state) {
  (void)state;
  struct pf f = {.conf = o_conf(4, PX_BACKFILL_NONE)};
  pf_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.nodelist = "n00009";
  assert_int_equal(submit_diag(&f, 1, &s, "nodelist: no node named n00009"), PX_EINVAL);
  s.nodelist = "n00001";
  s.exclude = "n00001";
  assert_int_equal(submit_diag(&f, 2, &s, "nodelist: node n00001 is also excluded"), PX_EINVAL);
  s.exclude = NULL;
  s.nodelist = "n[00000-00002]";
  s.nodes_min = s.nodes_max = 2;
  assert_int_equal(submit_diag(&f, 3, &s, "nodelist: names 3 node(s) and the job asks for 2"), PX_EINVAL);
  s.nodes_min = 4, s.nodes_max = 0;
  assert_int_equal(submit_diag(&f, 4, &s, "runs on exactly those nodes"), PX_EINVAL);
  s = tc_spec("alice", 0, 0);
  s.ntasks = 2;
  s.nodelist = "n[00000-00002]";
  assert_int_equal(submit_diag(&f, 5, &s, "2 task(s) cannot cover the 3 listed nodes"), PX_EINVAL);
  s.ntasks = 3; /* one task on each listed node */
  assert_int_equal(submit_diag(&f, 6, &s, NULL), 0);
  pf_cycle(&f, 0);
  assert_int_equal(tc_started(&f.out, 6)->nalloc, 3);
  pf_close(&f);
}

static int add_resv(struct pf *f, const char *name, int64_t start, int64_t end, uint32_t node, uint32_t account) {
  uint32_t nodes[1] = {node};
  struct px_resv_spec r = {.name = name, .start_s = start, .end_s = end, .nodes = nodes, .nnodes = 1,
                           .partition = PX_NONE, .account = account, .maintenance = account == PX_NONE};
  return pxc_resv_add(f->core, &r, 0, NULL);
}

/* ta's reservation "tr" holds n00001 over [100, 5000). ua's job asking for it
 * waits (Reservation) until 100, then runs on n00001, not on the idle
 * n00000 that packing would choose, although backfill's plan (built for
 * alice's blocked two-node job ahead of it) blocks the window's nodes for
 * everyone. alice may not use it; a maintenance window nobody may; an
 * unknown name is refused. */
static void reservation_runs_inside_its_window(void **state) {
  (void)state;
  struct pf f = {.conf = o_conf(2, PX_BACKFILL_CONSERVATIVE)};
  pf_open(&f);
  uint32_t ta = 0;
  while (strcmp(f.conf->accounts[ta].name, "ta")) ta++;
  assert_int_equal(add_resv(&f, "tr", 100, 5000, 1, ta), 0);
  assert_int_equal(add_resv(&f, "mt", 100, 5000, 0, PX_NONE), 0);
  assert_true(pxc_resv_holds(f.core, pxc_lookup(f.core, "tr"), 1));
  pf_sub(&f, 9, "alice", 2, 8, 100000, 0);
  struct px_jobspec s = tc_spec("ua", 0, 1);
  s.time_limit_s = 50;
  s.reservation = "tr";
  pf_sub_spec(&f, 1, &s, 0);
  pf_cycle(&f, 10);
  assert_null(tc_started(&f.out, 1));
  assert_int_equal(tc_reason(f.core, 1), PX_REASON_RESERVATION);
  assert_string_equal(px_reason_name(PX_REASON_RESERVATION), "Reservation");
  pf_cycle(&f, 100);
  assert_int_equal(pf_node(&f.out, 1), 1);
  s.user = "alice";
  assert_int_equal(submit_diag(&f, 2, &s, "reservation: tr is another account's"), PX_EPERM);
  s.reservation = "mt";
  assert_int_equal(submit_diag(&f, 3, &s, "reservation: mt is for maintenance"), PX_EPERM);
  s.reservation = "nope";
  assert_int_equal(submit_diag(&f, 4, &s, "reservation: no reservation named nope"), PX_ENOENT);
  pf_close(&f);
}

static uint32_t started_cpus(const struct pf *f, uint64_t id) {
  const struct px_action *a = tc_started(&f->out, id);
  uint32_t n = 0;
  for (uint32_t i = 0; a && i < a->nalloc; i++) n += f->out.allocs[a->alloc_first + i].ncpu;
  return n;
}

/* --cpus-per-gpu: 2 GPUs x 8 = 16 CPUs per node; --gpus=1: 4 CPUs; --gpus=3
 * alone (one-GPU units wherever they fit): 3 x 2 CPUs; GPUs per task: 2 x 2
 * x 5 for 2 tasks. With --cpus-per-task it is refused (Slurm: mutually
 * exclusive); without GPUs a task keeps its one CPU (as Slurm). */
static void cpus_follow_gpus(void **state) {
  (void)state;
  struct pf f = {.conf = o_conf(2, PX_BACKFILL_NONE)};
  pf_open(&f);
  struct px_jobspec s = tc_spec("alice", 1, 2);
  s.cpus_per_gpu = 8;
  pf_sub_spec(&f, 1, &s, 0);
  s = tc_spec("alice", 0, 0);
  s.gpus = 1, s.cpus_per_gpu = 4;
  pf_sub_spec(&f, 2, &s, 0);
  s.gpus = 3, s.cpus_per_gpu = 2;
  pf_sub_spec(&f, 3, &s, 0);
  s.gpus = 0, s.ntasks = 2, s.gpus_per_task = 2, s.cpus_per_gpu = 5;
  pf_sub_spec(&f, 4, &s, 0);
  s = tc_spec("alice", 0, 0);
  s.cpus_per_gpu = 4;
  pf_sub_spec(&f, 5, &s, 0);
  pf_cycle(&f, 0);
  assert_int_equal(started_cpus(&f, 1), 16);
  assert_int_equal(started_cpus(&f, 2), 4);
  assert_int_equal(started_cpus(&f, 3), 6);
  assert_int_equal(started_cpus(&f, 4), 20);
  assert_int_equal(started_cpus(&f, 5), 1);
  s.gpus = 1, s.cpus_per_task = 2;
  assert_int_equal(submit_diag(&f, 6, &s, "cpus_per_gpu: mutually exclusive with cpus_per_task"), PX_EINVAL);
  pf_close(&f);
}

/*
 * --time-min, worked by hand (plan slots of 100 s). Two nodes; A holds
 * n00000 until 1000. B (both nodes, 500 s) is blocked and reserved from 1000.
 * At 0, C (one node, 3000 s, TimeMin 600) cannot run its whole limit on
 * n00001 without delaying B, but the longest limit that ends by 1000 is
 * 1000 s >= 600: C starts now with TimeLimit 1000. D (3000 s, TimeMin 1200)
 * cannot: no limit >= 1200 ends by 1000; it waits, with its full limit.
 */
static void time_min_shortens_to_fit(void **state) {
  (void)state;
  struct pf f = {.conf = o_conf(2, PX_BACKFILL_CONSERVATIVE)};
  pf_open(&f);
  pf_sub(&f, 1, "alice", 1, 8, 1000, 0);
  pf_cycle(&f, 0);
  assert_int_equal(pf_node(&f.out, 1), 0);
  pf_sub(&f, 2, "alice", 2, 8, 500, 0);
  struct px_jobspec s = tc_spec("bob", 1, 8);
  s.time_limit_s = 3000;
  s.time_min_s = 1200;
  pf_sub_spec(&f, 4, &s, 0);
  s.time_min_s = 600;
  pf_sub_spec(&f, 3, &s, 0);
  pf_cycle(&f, 0);
  assert_null(tc_started(&f.out, 2));
  assert_null(tc_started(&f.out, 4));
  const struct px_action *c = tc_started(&f.out, 3);
  assert_non_null(c);
  assert_int_equal(c->time_limit_s, 1000);
  assert_int_equal(pf_view(f.core, 2).expected_start_s, 1000);
  assert_int_equal(pf_view(f.core, 4).time_limit_s, 3000);
  /* TimeMin above the limit is refused, as Slurm's "Invalid time-min" */
  s.time_limit_s = 100, s.time_min_s = 200;
  assert_int_equal(submit_diag(&f, 5, &s, "time_min: 200 s over the job's time limit 100 s"), PX_EINVAL);
  pf_close(&f);
}

/* The launch options the agent and srun act on: the core refuses values
 * Slurm refuses, naming the field. */
static void launch_options_validated(void **state) {
  (void)state;
  struct pf f = {.conf = o_conf(2, PX_BACKFILL_NONE)};
  pf_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  static const char *const good[] = {"block", "cyclic", "plane=4", "*", "block:cyclic", "cyclic:fcyclic:block,Pack",
                                     "block,NoPack"};
  uint64_t id = 1;
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    s.distribution = (char *)good[i];
    assert_int_equal(submit_diag(&f, id++, &s, NULL), 0);
  }
  static const struct {
    const char *v, *want;
  } bad[] = {{"bogus", "distribution: \"bogus\" is not a distribution"},
             {"cyclic:bogus", "distribution: \"bogus\" is not a distribution"},
             {"plane", "distribution: \"plane\" is not"},
             {"plane=0", "plane size must be a positive number"},
             {"block,tight", "is not Pack or NoPack"},
             {"arbitrary", "arbitrary needs a node list"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    s.distribution = (char *)bad[i].v;
    assert_int_equal(submit_diag(&f, id++, &s, bad[i].want), PX_EINVAL);
  }
  s.distribution = "arbitrary";
  s.nodelist = "n00001";
  assert_int_equal(submit_diag(&f, id++, &s, NULL), 0);
  s = tc_spec("alice", 0, 1);
  s.hint = "nomultithread,compute_bound";
  s.open_mode = "append";
  assert_int_equal(submit_diag(&f, id++, &s, NULL), 0);
  s.hint = "bogus";
  assert_int_equal(submit_diag(&f, id++, &s, "hint: \"bogus\" is not nomultithread"), PX_EINVAL);
  s.hint = NULL;
  s.open_mode = "a";
  assert_int_equal(submit_diag(&f, id++, &s, "open_mode: \"a\" is not append or truncate"), PX_EINVAL);
  pf_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(nodelist_places_on_listed_nodes),
      cmocka_unit_test(nodelist_errors),
      cmocka_unit_test(reservation_runs_inside_its_window),
      cmocka_unit_test(cpus_follow_gpus),
      cmocka_unit_test(time_min_shortens_to_fit),
      cmocka_unit_test(launch_options_validated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
