/*
 * Several GPU types on one node (MIG profiles side by side, conf.h
 * gpu_types): a typed job lands only on GPUs of its type, on the node that
 * has them; the free GPUs of one type do not make room for another; an
 * untyped job takes any; a type no node has is refused; fractions stay on
 * their type. Node 0: 7 x 1g.10gb (GPUs 0-6), 2 x 2g.20gb (7-8), 1 x
 * 3g.40gb (9); node 1: 10 untyped-by-profile h100s.
 */
#include "px_test.h"

#include "core/coretest.h"
#include "core/event.h"

static const struct px_conf_gpu_type mig[] = {{"1g.10gb", 7}, {"2g.20gb", 2}, {"3g.40gb", 1}};

static void open_mixed(struct tc_fx *f, bool shares) {
  f->conf = tc_conf(2, 10, 0, 0);
  f->conf->nodes[0].gpu_types = mig;
  f->conf->nodes[0].ngpu_types = 3;
  f->conf->nodes[1].gpu_type = "h100";
  if (shares) f->conf->nodes[0].gpu_shares = PX_GPU_SHARES_YES;
  tc_open(f);
}

static px_bits64 alloc_of(struct tc_fx *f, uint64_t id, uint32_t *node) {
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f->core, id, &v), 0);
  if (v.state != PX_JOB_RUNNING) return 0;
  *node = v.alloc[0].node;
  return v.alloc[0].gpus;
}

static struct px_jobspec typed(const char *type, uint32_t n) {
  struct px_jobspec s = tc_spec("alice", 0, n);
  s.gpu_type = (char *)type;
  return s;
}

static void typed_jobs_take_their_type(void **state) {
  (void)state;
  struct tc_fx f;
  open_mixed(&f, false);
  struct px_jobspec a = typed("3g.40gb", 1), b = typed("2g.20gb", 2), c = typed("1g.10gb", 3),
                    d = typed("3g.40gb", 1), e = typed("h100", 4), x = typed("4g.40gb", 1);
  assert_int_equal(tc_submit(f.core, 1, &a, 10), 0);
  assert_int_equal(tc_submit(f.core, 2, &b, 10), 0);
  assert_int_equal(tc_submit(f.core, 3, &c, 10), 0);
  assert_int_equal(tc_submit(f.core, 4, &e, 10), 0);
  assert_int_equal(tc_submit(f.core, 5, &d, 10), 0); /* the one 3g.40gb is taken: waits */
  struct px_diag dg;
  enum px_reason r;
  assert_int_equal(pxc_submit(f.core, 6, &x, 10, &r, &dg), PX_EINVAL);
  assert_non_null(strstr(dg.msg, "4g.40gb"));
  tc_cycle(&f, 20);
  uint32_t node = 9;
  assert_true(alloc_of(&f, 1, &node) == 1ULL << 9 && node == 0);
  assert_true(alloc_of(&f, 2, &node) == (3ULL << 7) && node == 0);
  px_bits64 g = alloc_of(&f, 3, &node);
  assert_true(node == 0 && px_bits64_count(g) == 3 && !(g & ~0x7fULL));
  assert_true(px_bits64_count(alloc_of(&f, 4, &node)) == 4 && node == 1);
  assert_int_equal(alloc_of(&f, 5, &node), 0);
  struct px_event end = {.kind = PX_EV_END, .job_id = 1, .state = PX_JOB_COMPLETED};
  struct px_event_result res;
  assert_int_equal(px_core_apply(f.core, &end, 50, &res), 0);
  tc_cycle(&f, 60);
  assert_true(alloc_of(&f, 5, &node) == 1ULL << 9 && node == 0); /* the 3g.40gb again */
  tc_close(&f);
}

/* An untyped job finds room across a mixed node's types (its mixed pool). */
static void untyped_job_spans_types(void **state) {
  (void)state;
  struct tc_fx f;
  open_mixed(&f, false);
  /* free GPUs as the cycle counts them: each node once for an untyped job */
  struct pxc_job probe = {.part = 0, .gpu_type = PX_NONE};
  assert_int_equal(pxc_part_free_gpus(f.core, &probe), 20);
  probe.gpu_type = pxc_lookup(f.core, "2g.20gb");
  assert_int_equal(pxc_part_free_gpus(f.core, &probe), 2);
  struct px_jobspec a = typed("1g.10gb", 6), b = typed("h100", 10), u = tc_spec("bob", 0, 4);
  assert_int_equal(tc_submit(f.core, 1, &a, 10), 0);
  assert_int_equal(tc_submit(f.core, 2, &b, 10), 0);
  tc_cycle(&f, 20);
  assert_int_equal(tc_submit(f.core, 3, &u, 30), 0);
  tc_cycle(&f, 40);
  uint32_t node = 9;
  px_bits64 g = alloc_of(&f, 3, &node);
  assert_true(node == 0 && px_bits64_count(g) == 4); /* one 1g.10gb left, and the other types */
  tc_close(&f);
}

/* Fractions of a typed request share only GPUs of that type. */
static void fractions_stay_on_their_type(void **state) {
  (void)state;
  struct tc_fx f;
  open_mixed(&f, true);
  struct px_jobspec a = typed("3g.40gb", 1), b = typed("3g.40gb", 1);
  a.gpu_share = b.gpu_share = 50;
  a.gpus_per_node = b.gpus_per_node = 0;
  assert_int_equal(tc_submit(f.core, 1, &a, 10), 0);
  assert_int_equal(tc_submit(f.core, 2, &b, 10), 0);
  tc_cycle(&f, 20);
  uint32_t n1 = 9, n2 = 9;
  assert_true(alloc_of(&f, 1, &n1) == 1ULL << 9 && alloc_of(&f, 2, &n2) == 1ULL << 9);
  struct px_jobspec c = typed("3g.40gb", 1);
  c.gpu_share = 30;
  c.gpus_per_node = 0;
  assert_int_equal(tc_submit(f.core, 3, &c, 30), 0);
  tc_cycle(&f, 40);
  assert_int_equal(alloc_of(&f, 3, &n1), 0); /* the one 3g.40gb is full; no other type serves */
  tc_close(&f);
}

/* Backfill of kind (conservative by default), 100 s slots, on nodes nodes
 * of 10 GPUs: node 0 mixed (GpuShares=YES with shares), node 1 (if any) h100s. */
static void open_backfill_kind(struct tc_fx *f, uint32_t nodes, enum px_backfill_mode kind, bool shares) {
  f->conf = tc_conf(nodes, 10, 0, 0);
  f->conf->nodes[0].gpu_types = mig;
  f->conf->nodes[0].ngpu_types = 3;
  if (shares) f->conf->nodes[0].gpu_shares = PX_GPU_SHARES_YES;
  if (nodes > 1) f->conf->nodes[1].gpu_type = "h100";
  f->conf->sched.order = PX_ORDER_FIFO;
  f->conf->sched.backfill = kind;
  f->conf->sched.backfill_resolution_s = 100;
  f->conf->sched.backfill_window_s = 10000;
  tc_open(f);
}

static void open_backfill(struct tc_fx *f, uint32_t nodes) { open_backfill_kind(f, nodes, PX_BACKFILL_CONSERVATIVE, false); }

/* Conservative backfill over a mixed node: its per-profile pools have
 * buckets for all of the node's GPUs (the plan files cells by the node's
 * total: fewer would be written past), a 3g.40gb job waits for the one
 * 3g.40gb, and a short 1g.10gb job and an untyped one start beside it. */
static void backfill_with_mixed_nodes(void **state) {
  (void)state;
  struct tc_fx f;
  open_backfill(&f, 2);
  for (uint32_t pi = 0; pi < f.core->npools; pi++)
    for (uint32_t i = 0; i < f.core->pools[pi].n; i++)
      assert_true(f.core->pools[pi].maxg >= f.core->nodes[f.core->pools[pi].nodes[i]].ngpu);
  struct px_jobspec a = typed("3g.40gb", 1), b = typed("3g.40gb", 1), c = typed("1g.10gb", 2), d = tc_spec("bob", 0, 4);
  a.time_limit_s = 1000, b.time_limit_s = 500, c.time_limit_s = 100, d.time_limit_s = 100;
  assert_int_equal(tc_submit(f.core, 1, &a, 0), 0);
  tc_cycle(&f, 0);
  assert_int_equal(tc_submit(f.core, 2, &b, 10), 0);
  assert_int_equal(tc_submit(f.core, 3, &c, 10), 0);
  assert_int_equal(tc_submit(f.core, 4, &d, 10), 0);
  tc_cycle(&f, 20);
  uint32_t node = 9;
  assert_int_equal(alloc_of(&f, 2, &node), 0);
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f.core, 2, &v), 0);
  assert_int_equal(v.reason, PX_REASON_RESOURCES);
  /* the plan counts node 0's 3g.40gb apart: free when job 1 ends (the
   * 1g.10gb instances free at 100 s make no room for it) */
  assert_int_equal(v.expected_start_s, 1000);
  assert_int_equal(px_bits64_count(alloc_of(&f, 3, &node)), 2);
  assert_int_equal(node, 0);
  assert_int_equal(px_bits64_count(alloc_of(&f, 4, &node)), 4);
  tc_close(&f);
}

/* The start of the reservation tests: job 1 (a) holds its GPUs from 0 s
 * with a 1,000 s limit; at 10 s job 2 (b, 500 s) comes wanting them and
 * job 3 (u) beside it. After the cycle at 10 s job 2 waits, reserved from
 * 1,000 s, when job 1's limit ends. */
static void reserve_beside(struct tc_fx *f, struct px_jobspec *a, struct px_jobspec *b, struct px_jobspec *u) {
  a->time_limit_s = 1000, b->time_limit_s = 500;
  assert_int_equal(tc_submit(f->core, 1, a, 0), 0);
  tc_cycle(f, 0);
  assert_int_equal(tc_submit(f->core, 2, b, 10), 0);
  assert_int_equal(tc_submit(f->core, 3, u, 10), 0);
  tc_cycle(f, 10);
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f->core, 2, &v), 0);
  assert_int_equal(v.state, PX_JOB_PENDING);
  assert_int_equal(v.expected_start_s, 1000);
}

/* One mixed node: a 3g.40gb job waits for the one 3g.40gb (held 1,000 s),
 * reserved from 1,000 s; an untyped job of the 9 other instances for 300 s
 * starts now beside that reservation. A plan counting the profiles together
 * put the reservation at 100 s on any instance (9 free less 1: 8 in
 * [100, 600)) and held the untyped job back. */
static void untyped_job_backfills_beside_typed_reservation(void **state) {
  (void)state;
  struct tc_fx f;
  open_backfill(&f, 1);
  struct px_jobspec a = typed("3g.40gb", 1), b = typed("3g.40gb", 1), e = tc_spec("bob", 0, 9);
  e.time_limit_s = 300;
  reserve_beside(&f, &a, &b, &e);
  uint32_t node = 9;
  assert_int_equal(alloc_of(&f, 3, &node), px_bits64_range(0, 9)); /* every instance but the 3g.40gb */
  tc_close(&f);
}

/* One mixed node: job 1 holds six of the seven 1g.10gb instances until
 * 1,000 s; a job of all seven waits, reserved from 1,000 s. An untyped job
 * of one GPU (or half of one, on a fresh GPU) for 2,000 s fits beside that
 * reservation (the plan counts the 2g.20gb and 3g.40gb instances for it),
 * but only if it takes one of them: picking by index gave it the free
 * 1g.10gb (GPU 6), and the reserved job waited until 2,010 s instead of
 * starting at 1,000 s. */
static void untyped_job_leaves_reserved_type(void **state) {
  (void)state;
  const enum px_backfill_mode kinds[] = {PX_BACKFILL_CONSERVATIVE, PX_BACKFILL_EASY};
  for (size_t i = 0; i < 2 * sizeof kinds / sizeof kinds[0]; i++) {
    struct tc_fx f;
    bool half = i & 1;
    open_backfill_kind(&f, 1, kinds[i / 2], half);
    struct px_jobspec a = typed("1g.10gb", 6), b = typed("1g.10gb", 7), u = tc_spec("bob", 0, 1);
    u.time_limit_s = 2000;
    if (half) u.gpu_share = 50, u.gpus_per_node = 0;
    reserve_beside(&f, &a, &b, &u);
    uint32_t node = 9;
    px_bits64 g = alloc_of(&f, 3, &node);
    assert_int_equal(px_bits64_count(g), 1);
    assert_true((g & px_bits64_range(0, 7)) == 0); /* not a 1g.10gb: those are job 2's at 1,000 s */
    struct px_event end = {.kind = PX_EV_END, .job_id = 1, .state = PX_JOB_COMPLETED};
    struct px_event_result res;
    assert_int_equal(px_core_apply(f.core, &end, 1000, &res), 0);
    tc_cycle(&f, 1000);
    assert_int_equal(alloc_of(&f, 2, &node), px_bits64_range(0, 7)); /* on time, on its seven */
    tc_close(&f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(typed_jobs_take_their_type),
      cmocka_unit_test(untyped_job_spans_types),
      cmocka_unit_test(fractions_stay_on_their_type),
      cmocka_unit_test(backfill_with_mixed_nodes),
      cmocka_unit_test(untyped_job_backfills_beside_typed_reservation),
      cmocka_unit_test(untyped_job_leaves_reserved_type),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
