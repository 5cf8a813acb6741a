/*
 * Placement stage: small clusters whose right placement is worked out by
 * hand in each test's comment. Nodes have 8 GPUs, 64 CPUs and 1 TiB unless
 * said otherwise; without --mem a job gets the node's memory in proportion
 * to the larger of its GPU and CPU share.
 */
#include "px_test.h"

#include "core/coretest.h"

static const struct px_action *run(struct tc_fx *f, int64_t now, uint64_t id) {
  assert_int_equal(px_core_cycle(f->core, now, &f->out), 0);
  assert_null(tc_invariants(f->core));
  return tc_started(&f->out, id);
}

static void sub(struct tc_fx *f, uint64_t id, const char *user, uint32_t nodes, uint32_t gpn) {
  struct px_jobspec s = tc_spec(user, nodes, gpn);
  assert_int_equal(tc_submit(f->core, id, &s, 10), 0);
}

/* One 1-GPU job on an empty cluster: node 0 (lowest index among equals),
 * GPU 0, one CPU (CPU 0), 1/8 of 1 TiB = 131072 MiB. */
static void single_gpu_job_takes_first_node(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(4, 8, 0, 0)};
  tc_open(&f);
  sub(&f, 1, "alice", 0, 1);
  const struct px_action *a = run(&f, 20, 1);
  assert_non_null(a);
  assert_int_equal(a->nalloc, 1);
  const struct px_alloc *al = &f.out.allocs[a->alloc_first];
  assert_int_equal(al->node, 0);
  assert_int_equal(al->gpus, 0x1);
  assert_int_equal(al->ncpu, 1);
  assert_int_equal(al->mem_mib, 131072);
  assert_int_equal(f.out.cpu_words[al->cpu_word], 0x1);
  tc_close(&f);
}

/* Packing: a 7-GPU job on node 0 leaves 1 GPU there; the next 1-GPU job
 * fills it (best fit) instead of opening node 1; a 2-GPU job then needs
 * node 1. */
static void packing_fills_partly_used_node(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(4, 8, 0, 0)};
  tc_open(&f);
  sub(&f, 1, "alice", 0, 7);
  assert_int_equal(f.out.len, 0);
  assert_non_null(run(&f, 20, 1));
  sub(&f, 2, "alice", 0, 1);
  sub(&f, 3, "alice", 0, 2);
  run(&f, 30, 2);
  const struct px_action *a2 = tc_started(&f.out, 2), *a3 = tc_started(&f.out, 3);
  assert_non_null(a2);
  assert_non_null(a3);
  assert_int_equal(f.out.allocs[a2->alloc_first].node, 0);
  assert_int_equal(f.out.allocs[a2->alloc_first].gpus, 0x80);
  assert_int_equal(f.out.allocs[a3->alloc_first].node, 1);
  tc_close(&f);
}

/* NVLink groups: 8 GPUs in 2 groups of 4 (0-3, 4-7), CPUs 0-31 near group 0.
 * A(3) -> node 0 GPUs 0-2 (groups tie, the first). B(2): node 0 has 5 free
 * but group 0 only 1, so group 1: GPUs 4,5, CPU 32 (its NUMA half). C(2):
 * group 1 has 6,7. D(2): node 0 has 1 free GPU left -> node 1 GPUs 0,1.
 * E(1): GPU 3 of node 0. */
static void gpus_come_from_one_nvlink_group(void **state) {
  (void)state;
  struct px_testconf_spec s = {.nnodes = 2, .gpus_per_node = 8, .cpus_per_node = 64,
                               .mem_mib = TC_MEM, .gpu_groups = 2};
  struct tc_fx f = {.conf = px_testconf_new(&s)};
  px_testconf_user(f.conf, "alice", px_testconf_account(f.conf, "acct", 0, 1), 1);
  tc_open(&f);
  const uint32_t want_gpn[] = {3, 2, 2, 2, 1};
  const uint32_t want_node[] = {0, 0, 0, 1, 0};
  const px_bits64 want_gpus[] = {0x7, 0x30, 0xc0, 0x3, 0x8};
  for (uint64_t id = 1; id <= 5; id++) {
    sub(&f, id, "alice", 0, want_gpn[id - 1]);
    const struct px_action *a = run(&f, 20 + (int64_t)id, id);
    assert_non_null(a);
    const struct px_alloc *al = &f.out.allocs[a->alloc_first];
    assert_int_equal(al->node, want_node[id - 1]);
    assert_int_equal(al->gpus, want_gpus[id - 1]);
    if (id == 2) assert_int_equal(f.out.cpu_words[al->cpu_word], 1ULL << 32);
  }
  tc_close(&f);
}

static void assert_nodes(const struct tc_fx *f, const struct px_action *a, const uint32_t *want, uint32_t n) {
  assert_non_null(a);
  assert_int_equal(a->nalloc, n);
  for (uint32_t i = 0; i < n; i++) {
    assert_int_equal(f->out.allocs[a->alloc_first + i].node, want[i]);
    assert_int_equal(f->out.allocs[a->alloc_first + i].gpus, 0xff);
  }
}

/* 16 nodes, leaves of 4 (leaf0 = n0-3 ... leaf3 = n12-15), spine0 over
 * leaves 0-1, spine1 over 2-3, a root. Two whole-node jobs take n0, n1.
 * Free whole nodes per leaf: 2,4,4,4.
 *  - 3-node gang: one leaf suffices; best fit among leaves with >= 3 is
 *    leaf1 (4; leaves 2,3 tie and come later) -> n4,n5,n6. Now 2,1,4,4.
 *  - 6-node gang: no leaf has 6; spine0 covers 3, spine1 8 -> spine1,
 *    largest leaves first: leaf2 (n8-11), then leaf3 (n12,n13). Now 2,1,0,2.
 *  - 3-node gang: spine0 covers 3 (leaf0 n2,n3 then leaf1 n7); spine1's 2
 *    do not suffice. */
static void gang_takes_lowest_switch_and_fewest_leaves(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(16, 8, 4, 2)};
  tc_open(&f);
  sub(&f, 1, "alice", 1, 8);
  sub(&f, 2, "alice", 1, 8);
  run(&f, 20, 1);
  assert_int_equal(f.out.len, 2);
  sub(&f, 3, "alice", 3, 8);
  assert_nodes(&f, run(&f, 30, 3), (const uint32_t[]){4, 5, 6}, 3);
  sub(&f, 4, "alice", 6, 8);
  assert_nodes(&f, run(&f, 40, 4), (const uint32_t[]){8, 9, 10, 11, 12, 13}, 6);
  sub(&f, 5, "alice", 3, 8);
  assert_nodes(&f, run(&f, 50, 5), (const uint32_t[]){2, 3, 7}, 3);
  /* Nothing partial: a 2-node gang with one whole node left (n14... no:
   * n14, n15 are free) fits; a 3-node gang does not and holds nothing. */
  sub(&f, 6, "alice", 3, 8);
  assert_null(run(&f, 60, 6));
  assert_int_equal(tc_reason(f.core, 6), PX_REASON_RESOURCES);
  struct px_node_view nv;
  px_core_node_get(f.core, 14, &nv);
  assert_int_equal(nv.gpus_alloc, 0);
  tc_close(&f);
}

/* Block topology: blocks of 4 nodes. One node of block 0 is used; a 4-node
 * gang goes whole into block 1 rather than spanning blocks 0 and 1. */
static void gang_stays_inside_one_block(void **state) {
  (void)state;
  struct px_testconf_spec s = {.nnodes = 12, .gpus_per_node = 8, .cpus_per_node = 64,
                               .mem_mib = TC_MEM, .nodes_per_block = 4};
  struct tc_fx f = {.conf = px_testconf_new(&s)};
  px_testconf_user(f.conf, "alice", px_testconf_account(f.conf, "acct", 0, 1), 1);
  tc_open(&f);
  sub(&f, 1, "alice", 1, 8);
  run(&f, 20, 1);
  sub(&f, 2, "alice", 4, 8);
  assert_nodes(&f, run(&f, 30, 2), (const uint32_t[]){4, 5, 6, 7}, 4);
  tc_close(&f);
}

/* --switches=1@100: leaves of 2 nodes, one free node in each (n1, n3). The
 * 2-node gang waits (reason Resources) until 100 s after it became eligible
 * (submit at 10), then takes what exists: n1 and n3. */
static void switches_wait_then_take_what_exists(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(4, 8, 2, 0)};
  tc_open(&f);
  for (uint64_t id = 1; id <= 3; id++) sub(&f, id, "alice", 1, 8);
  run(&f, 20, 1);
  assert_int_equal(f.out.len, 3); /* n0, n1, n2 */
  assert_int_equal(pxc_job_ended(f.core, 2, PX_JOB_COMPLETED, 0, 25, NULL), 0);
  struct px_jobspec s = tc_spec("alice", 2, 8);
  s.switches = 1;
  s.switches_wait_s = 100;
  assert_int_equal(tc_submit(f.core, 4, &s, 10), 0);
  assert_null(run(&f, 30, 4));
  assert_int_equal(tc_reason(f.core, 4), PX_REASON_TOPOLOGY);
  assert_string_equal(px_reason_name(PX_REASON_TOPOLOGY), "Resources");
  assert_null(run(&f, 109, 4));
  assert_nodes(&f, run(&f, 111, 4), (const uint32_t[]){1, 3}, 2);
  tc_close(&f);
}

/* --exclusive takes a whole idle node (all GPUs, CPUs, memory) even for one
 * GPU; later jobs cannot share it. */
static void exclusive_job_gets_whole_node(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  sub(&f, 1, "alice", 0, 1);
  run(&f, 20, 1);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.exclusive = true;
  assert_int_equal(tc_submit(f.core, 2, &s, 10), 0);
  const struct px_action *a = run(&f, 30, 2);
  assert_non_null(a);
  const struct px_alloc *al = &f.out.allocs[a->alloc_first];
  assert_int_equal(al->node, 1);
  assert_int_equal(al->gpus, 0xff);
  assert_int_equal(al->ncpu, 64);
  assert_int_equal(al->mem_mib, TC_MEM);
  sub(&f, 3, "alice", 0, 1);
  a = run(&f, 40, 3);
  assert_non_null(a);
  assert_int_equal(f.out.allocs[a->alloc_first].node, 0);
  tc_close(&f);
}

/* exclusive_account: a node runs one account's jobs at a time. A's job on
 * n0; B's job avoids n0 though packing prefers it; A's next job joins n0. */
static void tenancy_keeps_accounts_apart(void **state) {
  (void)state;
  struct px_testconf_spec s = {.nnodes = 2, .gpus_per_node = 8, .cpus_per_node = 64, .mem_mib = TC_MEM};
  struct tc_fx f = {.conf = px_testconf_new(&s)};
  f.conf->partitions[0].exclusive_account = true;
  px_testconf_user(f.conf, "ua", px_testconf_account(f.conf, "A", 0, 1), 1);
  px_testconf_user(f.conf, "ub", px_testconf_account(f.conf, "B", 0, 1), 1);
  tc_open(&f);
  sub(&f, 1, "ua", 0, 1);
  sub(&f, 2, "ub", 0, 1);
  sub(&f, 3, "ua", 0, 1);
  run(&f, 20, 1);
  assert_int_equal(f.out.len, 3);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 1)->alloc_first].node, 0);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 2)->alloc_first].node, 1);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 3)->alloc_first].node, 0);
  tc_close(&f);
}

/* Features n0:a n1:a n2:b n3:a,b. "a&b" -> n3; "b" -> n3 too (packing
 * prefers the partly used node, and it has b); a 7-GPU "b" -> n2;
 * "b|x" where x exists nowhere is rejected (BadConstraints); "a&b" with 8
 * GPUs after n3 lost one waits. */
static void constraints_with_and_or(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(4, 8, 0, 0)};
  px_testconf_features(f.conf, 0, "a");
  px_testconf_features(f.conf, 1, "a");
  px_testconf_features(f.conf, 2, "b");
  px_testconf_features(f.conf, 3, "a,b");
  tc_open(&f);
  const char *cons[] = {"a&b", "b", "c|b&a"};
  for (uint64_t id = 1; id <= 2; id++) {
    struct px_jobspec s = tc_spec("alice", 0, 1);
    s.constraint = (char *)cons[id - 1];
    assert_int_equal(tc_submit(f.core, id, &s, 10), 0);
  }
  run(&f, 20, 1);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 1)->alloc_first].node, 3);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 2)->alloc_first].node, 3);
  struct px_jobspec s = tc_spec("alice", 0, 7);
  s.constraint = (char *)"b";
  assert_int_equal(tc_submit(f.core, 5, &s, 10), 0);
  const struct px_action *a5 = run(&f, 25, 5);
  assert_non_null(a5);
  assert_int_equal(f.out.allocs[a5->alloc_first].node, 2);
  s = tc_spec("alice", 0, 1);
  s.constraint = (char *)"b|x";
  enum px_reason r;
  struct px_diag d;
  assert_int_equal(pxc_submit(f.core, 3, &s, 10, &r, &d), PX_EINVAL);
  assert_int_equal(r, PX_REASON_BAD_CONSTRAINTS);
  assert_non_null(strstr(d.msg, "\"x\""));
  s = tc_spec("alice", 0, 8);
  s.constraint = (char *)"a&b";
  assert_int_equal(tc_submit(f.core, 4, &s, 10), 0);
  assert_null(run(&f, 30, 4));
  assert_int_equal(tc_reason(f.core, 4), PX_REASON_RESOURCES);
  tc_close(&f);
}

/* Slurm's constraint grammar: "a,b" is a&b; parentheses distribute into the
 * OR-of-AND form; [a] is a; matching OR, counts and too many alternatives
 * are refused naming the offset. */
static void constraint_grammar_as_slurm(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(4, 8, 0, 0)};
  px_testconf_features(f.conf, 0, "a");
  px_testconf_features(f.conf, 3, "a,b");
  tc_open(&f);
  uint64_t t[CONS_TERMS_MAX], u[CONS_TERMS_MAX];
  uint32_t n, m;
  struct px_diag d;
  assert_int_equal(pxc_cons_terms(f.core, "a&b", u, &m, &d), 0);
  assert_int_equal(pxc_cons_terms(f.core, "a,b", t, &n, &d), 0);
  assert_true(n == 1 && m == 1 && t[0] == u[0]);
  assert_int_equal(pxc_cons_terms(f.core, "(a|b)&[b]", t, &n, &d), 0);
  assert_int_equal(n, 2); /* a&b | b */
  assert_true(t[0] == u[0] && t[1] != u[0] && (t[1] & u[0]) == t[1]);
  const struct {
    const char *in, *phrase;
    int err;
  } bad[] = {
      {"[a|b]", "matching OR", PX_EUNSUPPORTED},
      {"a*2", "counts", PX_EUNSUPPORTED},
      {"(a|b)&(a|b)&(a|b)&(a|b)&(a|b)", "over 16", PX_ERANGE},
      {"(a|b", "expected ) at offset 4", PX_EINVAL},
      {"a&", "expected a feature name at offset 2", PX_EINVAL},
      {"a)", "unexpected character at offset 1", PX_EINVAL},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    px_diag_clear(&d);
    if (pxc_cons_terms(f.core, bad[i].in, t, &n, &d) != bad[i].err || !strstr(d.msg, bad[i].phrase))
      fail_msg("'%s': '%s'", bad[i].in, d.msg);
  }
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.constraint = (char *)"(a|b)&b";
  assert_int_equal(tc_submit(f.core, 1, &s, 10), 0);
  const struct px_action *a = run(&f, 20, 1);
  assert_non_null(a);
  assert_int_equal(f.out.allocs[a->alloc_first].node, 3);
  tc_close(&f);
}

/* Spreading: each 1-GPU job goes to the node with the most free GPUs:
 * n0, then n1 (8 free beats 7), then n0 again (7 vs 7: lowest index). */
static void spreading_stage_balances(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  f.conf->sched.placement = PX_PLACE_SPREAD;
  tc_open(&f);
  for (uint64_t id = 1; id <= 3; id++) sub(&f, id, "alice", 0, 1);
  run(&f, 20, 1);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 1)->alloc_first].node, 0);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 2)->alloc_first].node, 1);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 3)->alloc_first].node, 0);
  tc_close(&f);
}

/* Weight: n2 has Weight=0 (lower is preferred), so it is used first even
 * though n0 comes first by index. */
static void lower_weight_nodes_first(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(3, 8, 0, 0)};
  f.conf->nodes[2].weight = 0;
  tc_open(&f);
  sub(&f, 1, "alice", 0, 1);
  const struct px_action *a = run(&f, 20, 1);
  assert_non_null(a);
  assert_int_equal(f.out.allocs[a->alloc_first].node, 2);
  tc_close(&f);
}

/* GPU types: n0,n1 a100; n2,n3 h100. h100 asked -> n2; an unknown type is
 * rejected; an untyped 2-GPU job may use either type and packs onto n2 (6
 * free) rather than opening n0 (8 free). */
static void gpu_type_is_honoured(void **state) {
  (void)state;
  struct px_testconf_spec s = {.nnodes = 4, .gpus_per_node = 8, .cpus_per_node = 64,
                               .mem_mib = TC_MEM, .gpu_type = "a100"};
  struct tc_fx f = {.conf = px_testconf_new(&s)};
  f.conf->nodes[2].gpu_type = f.conf->nodes[3].gpu_type = "h100";
  px_testconf_user(f.conf, "alice", px_testconf_account(f.conf, "acct", 0, 1), 1);
  tc_open(&f);
  struct px_jobspec j = tc_spec("alice", 0, 2);
  j.gpu_type = (char *)"h100";
  assert_int_equal(tc_submit(f.core, 1, &j, 10), 0);
  sub(&f, 2, "alice", 0, 2);
  run(&f, 20, 1);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 1)->alloc_first].node, 2);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 2)->alloc_first].node, 2);
  j.gpu_type = (char *)"v100";
  assert_int_equal(pxc_submit(f.core, 3, &j, 10, NULL, NULL), PX_EINVAL);
  tc_close(&f);
}

/* Node states: with n0 down the job goes to n1; a 2-node gang then cannot
 * run with one usable node (ReqNodeNotAvail, and it does not hold the
 * partition back). With n1 drained and n0 resumed, a new job goes to n0. */
static void down_and_drained_nodes_are_skipped(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  assert_int_equal(pxc_node_event(f.core, 0, PX_NODE_EV_DOWN, "dead", 5, NULL), 0);
  sub(&f, 1, "alice", 0, 1);
  sub(&f, 2, "alice", 2, 8);
  sub(&f, 3, "alice", 0, 1);
  run(&f, 20, 1);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 1)->alloc_first].node, 1);
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_REQ_NODE_NOT_AVAIL);
  assert_non_null(tc_started(&f.out, 3)); /* not blocked behind job 2 */
  struct px_node_view nv;
  px_core_node_get(f.core, 0, &nv);
  assert_int_equal(nv.avail, PX_NODE_DOWN);
  assert_string_equal(nv.reason, "dead");
  assert_int_equal(pxc_node_event(f.core, 1, PX_NODE_EV_DRAIN, "maint", 21, NULL), 0);
  assert_int_equal(pxc_node_event(f.core, 0, PX_NODE_EV_RESUME, NULL, 22, NULL), 0);
  sub(&f, 4, "alice", 0, 1);
  const struct px_action *a = run(&f, 30, 4);
  assert_non_null(a);
  assert_int_equal(f.out.allocs[a->alloc_first].node, 0);
  tc_close(&f);
}

/* A tasks-only job (-n N, no node count) on 2 empty nodes, started. */
static const struct px_action *tasks_job(struct tc_fx *f, uint32_t ntasks, uint32_t gpt, uint32_t cpt) {
  f->conf = tc_conf(2, 8, 0, 0);
  tc_open(f);
  struct px_jobspec s;
  px_jobspec_init(&s);
  s.user = (char *)"alice";
  s.ntasks = ntasks;
  s.gpus_per_task = gpt;
  s.cpus_per_task = cpt;
  assert_int_equal(tc_submit(f->core, 1, &s, 10), 0);
  const struct px_action *a = run(f, 20, 1);
  assert_non_null(a);
  return a;
}

/* -n 12 --gpus-per-task=1: tasks go where they fit, fewest nodes first: 8
 * on n0, 4 on n1. -n 4 -c 2 (CPU only) packs onto one node: 8 CPUs of n0. */
static void flexible_tasks_fill_fewest_nodes(void **state) {
  (void)state;
  struct tc_fx f;
  const struct px_action *a = tasks_job(&f, 12, 1, 0);
  assert_int_equal(a->nalloc, 2);
  assert_int_equal(f.out.allocs[a->alloc_first].gpus, 0xff);
  assert_int_equal(f.out.allocs[a->alloc_first].ncpu, 8);
  assert_int_equal(f.out.allocs[a->alloc_first + 1].gpus, 0x0f);
  tc_close(&f);
  a = tasks_job(&f, 4, 0, 2);
  assert_int_equal(a->nalloc, 1);
  assert_int_equal(f.out.allocs[a->alloc_first].ncpu, 8);
  assert_int_equal(f.out.allocs[a->alloc_first].gpus, 0);
  tc_close(&f);
}

/* Memory decides: job 1 takes 900,000 MiB of n0's 1,048,576; job 2 asks
 * 200,000 MiB, more than n0's 148,576 left, so it goes to n1 although
 * packing prefers the partly used n0. Job 3 (no --mem: 1/8 = 131,072 MiB)
 * still fits n0. */
static void memory_is_a_resource(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  const uint64_t mem[] = {900000, 200000, 0};
  const uint32_t want[] = {0, 1, 0};
  for (uint64_t id = 1; id <= 3; id++) {
    struct px_jobspec s = tc_spec("alice", 0, 1);
    s.mem_per_node_mib = mem[id - 1];
    assert_int_equal(tc_submit(f.core, id, &s, 10), 0);
  }
  run(&f, 20, 1);
  for (uint64_t id = 1; id <= 3; id++)
    assert_int_equal(f.out.allocs[tc_started(&f.out, id)->alloc_first].node, want[id - 1]);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 2)->alloc_first].mem_mib, 200000);
  tc_close(&f);
}

/* --gpus=40 alone on 8-GPU nodes, leaves of 2 nodes (16 GPUs), spines of 2
 * leaves (32), a root: no leaf or spine holds 40, so the root; its largest
 * leaves first (all equal: by index) -> leaves 0, 1, 2: n0-n3 whole and 8
 * GPUs of n4, one task's CPU on each. */
static void gpus_total_spread_over_fewest_leaves(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(8, 8, 2, 2)};
  tc_open(&f);
  struct px_jobspec s;
  px_jobspec_init(&s);
  s.user = (char *)"alice";
  s.gpus = 40;
  assert_int_equal(tc_submit(f.core, 1, &s, 10), 0);
  const struct px_action *a = run(&f, 20, 1);
  assert_nodes(&f, a, (const uint32_t[]){0, 1, 2, 3, 4}, 5);
  assert_int_equal(f.out.allocs[a->alloc_first].ncpu, 1);
  tc_close(&f);
}

/* OverSubscribe=EXCLUSIVE makes every job of the partition whole-node. */
static void partition_exclusive_makes_whole_node_jobs(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  f.conf->partitions[0].oversubscribe = PX_OVERSUB_EXCLUSIVE;
  tc_open(&f);
  sub(&f, 1, "alice", 0, 1);
  sub(&f, 2, "alice", 0, 1);
  sub(&f, 3, "alice", 0, 1);
  run(&f, 20, 1);
  assert_int_equal(f.out.len, 2);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 1)->alloc_first].gpus, 0xff);
  assert_int_equal(f.out.allocs[tc_started(&f.out, 2)->alloc_first].node, 1);
  assert_int_equal(tc_reason(f.core, 3), PX_REASON_RESOURCES);
  tc_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(single_gpu_job_takes_first_node),
      cmocka_unit_test(packing_fills_partly_used_node),
      cmocka_unit_test(gpus_come_from_one_nvlink_group),
      cmocka_unit_test(gang_takes_lowest_switch_and_fewest_leaves),
      cmocka_unit_test(gang_stays_inside_one_block),
      cmocka_unit_test(switches_wait_then_take_what_exists),
      cmocka_unit_test(exclusive_job_gets_whole_node),
      cmocka_unit_test(tenancy_keeps_accounts_apart),
      cmocka_unit_test(constraints_with_and_or),
      cmocka_unit_test(constraint_grammar_as_slurm),
      cmocka_unit_test(spreading_stage_balances),
      cmocka_unit_test(lower_weight_nodes_first),
      cmocka_unit_test(gpu_type_is_honoured),
      cmocka_unit_test(down_and_drained_nodes_are_skipped),
      cmocka_unit_test(flexible_tasks_fill_fewest_nodes),
      cmocka_unit_test(memory_is_a_resource),
      cmocka_unit_test(gpus_total_spread_over_fewest_leaves),
      cmocka_unit_test(partition_exclusive_makes_whole_node_jobs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
