/*
 * Fractional GPUs (share.c): fractions pack onto shared GPUs best fit
 * before a fresh GPU opens; whole-GPU jobs and gangs never land on a GPU
 * with a share in use; a GPU is whole again when its last share ends;
 * fair share and limits charge the fraction; bad asks are refused naming
 * the field; recovery takes shares back.
 */
#include "px_test.h"

#include "core/coretest.h"
#include "core/event.h"

/* nnodes x gpn GPUs, every node offering shares, GPU-only billing, no decay. */
static struct tc_fx share_fx(uint32_t nnodes, uint32_t gpn) {
  struct tc_fx f = {.conf = tc_conf(nnodes, gpn, 0, 0)};
  for (uint32_t i = 0; i < nnodes; i++) f.conf->nodes[i].gpu_shares = true;
  f.conf->sched.billing_weight_gpu = 1;
  f.conf->sched.decay_half_life_s = 0;
  return f;
}

static struct px_jobspec frac(const char *user, uint32_t hundredths) {
  struct px_jobspec s = tc_spec(user, 0, 0);
  s.gpu_share = hundredths;
  return s;
}

static const struct px_alloc *alloc_of(struct tc_fx *f, uint64_t id) {
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f->core, id, &v), 0);
  assert_int_equal(v.state, PX_JOB_RUNNING);
  assert_int_equal(v.nalloc, 1);
  return v.alloc;
}

static void end_job(struct tc_fx *f, uint64_t id, int64_t now) {
  struct px_event end = {.kind = PX_EV_END, .job_id = id, .state = PX_JOB_COMPLETED};
  struct px_event_result res;
  assert_int_equal(px_core_apply(f->core, &end, now, &res), 0);
  assert_null(tc_invariants(f->core));
}

static struct px_node_view node(struct tc_fx *f, uint32_t n) {
  struct px_node_view nv;
  assert_int_equal(px_core_node_get(f->core, n, &nv), 0);
  return nv;
}

/* 0.5 opens a GPU; 0.3 joins it (room 50); a second 0.3 does not fit (room
 * 20) and opens another; 0.2 then goes to the fullest GPU that holds it
 * (room 20, an exact fit) and not to the one with room 70. */
static void fractions_pack_best_fit(void **state) {
  (void)state;
  struct tc_fx f = share_fx(1, 4);
  tc_open(&f);
  uint32_t ask[] = {50, 30, 30};
  for (uint64_t id = 1; id <= 3; id++) {
    struct px_jobspec s = frac("alice", ask[id - 1]);
    assert_int_equal(tc_submit(f.core, id, &s, 10), 0);
    tc_cycle(&f, 10 + (int64_t)id); /* one at a time: the order is the test */
  }
  px_bits64 a = alloc_of(&f, 1)->gpus, b = alloc_of(&f, 3)->gpus;
  assert_int_equal(alloc_of(&f, 1)->gpu_share, 50);
  assert_true(alloc_of(&f, 2)->gpus == a);
  assert_true(b != a);
  struct px_jobspec s = frac("bob", 20);
  assert_int_equal(tc_submit(f.core, 4, &s, 20), 0);
  tc_cycle(&f, 21);
  assert_true(alloc_of(&f, 4)->gpus == a);
  struct px_node_view nv = node(&f, 0);
  assert_true(nv.gpus_shared == (a | b));
  assert_int_equal(nv.gpu_share_used, 130);
  assert_int_equal(px_bits64_count(nv.gpus_free), 2);
  assert_int_equal(nv.gpus_alloc, 2);
  tc_close(&f);
}

/* A 1-GPU and a 2-GPU job never take the GPU a fraction is on; a gang
 * waits for it to be whole again. */
static void whole_jobs_avoid_shared_gpus(void **state) {
  (void)state;
  struct tc_fx f = share_fx(2, 2);
  tc_open(&f);
  struct px_jobspec s1 = frac("alice", 25), s2 = frac("alice", 25);
  assert_int_equal(tc_submit(f.core, 1, &s1, 10), 0);
  tc_cycle(&f, 11);
  uint32_t n1 = alloc_of(&f, 1)->node; /* open a GPU on the other node too */
  s2.nodelist = (char *)(n1 == 0 ? "n00001" : "n00000");
  assert_int_equal(tc_submit(f.core, 2, &s2, 12), 0);
  tc_cycle(&f, 13);
  assert_int_not_equal(alloc_of(&f, 2)->node, n1);
  struct px_jobspec gang = tc_spec("bob", 2, 2), one = tc_spec("bob", 0, 1);
  assert_int_equal(tc_submit(f.core, 4, &one, 20), 0);
  tc_cycle(&f, 21);
  const struct px_alloc *w = alloc_of(&f, 4);
  assert_true((w->gpus & node(&f, w->node).gpus_shared) == 0);
  assert_int_equal(w->gpu_share, 0);
  end_job(&f, 4, 22);
  assert_int_equal(tc_submit(f.core, 3, &gang, 23), 0);
  tc_cycle(&f, 24);
  assert_int_equal(tc_reason(f.core, 3), PX_REASON_RESOURCES); /* each node has one whole GPU */
  end_job(&f, 1, 30);
  end_job(&f, 2, 30);
  tc_cycle(&f, 31);
  struct px_job_view v; /* the gang runs once both nodes' GPUs are whole */
  assert_int_equal(px_core_job_get(f.core, 3, &v), 0);
  assert_int_equal(v.state, PX_JOB_RUNNING);
  tc_close(&f);
}

/* The GPU stays shared while one share runs and is free when the last ends. */
static void last_share_frees_the_gpu(void **state) {
  (void)state;
  struct tc_fx f = share_fx(1, 1);
  tc_open(&f);
  struct px_jobspec s = frac("alice", 50);
  assert_int_equal(tc_submit(f.core, 1, &s, 10), 0);
  assert_int_equal(tc_submit(f.core, 2, &s, 10), 0);
  assert_int_equal(tc_submit(f.core, 3, &s, 10), 0);
  tc_cycle(&f, 11);
  assert_true(alloc_of(&f, 1)->gpus == 1 && alloc_of(&f, 2)->gpus == 1);
  assert_int_equal(tc_reason(f.core, 3), PX_REASON_RESOURCES);
  end_job(&f, 1, 20);
  assert_true(node(&f, 0).gpus_shared == 1 && node(&f, 0).gpus_free == 0);
  end_job(&f, 2, 21);
  assert_true(node(&f, 0).gpus_shared == 0 && node(&f, 0).gpus_free == 1);
  struct px_event cancel = {.kind = PX_EV_CANCEL, .job_id = 3};
  struct px_event_result res;
  assert_int_equal(px_core_apply(f.core, &cancel, 21, &res), 0); /* pending: cancelled away */
  struct px_jobspec whole = tc_spec("bob", 0, 1);
  assert_int_equal(tc_submit(f.core, 4, &whole, 22), 0);
  tc_cycle(&f, 23);
  assert_int_equal(alloc_of(&f, 4)->gpu_share, 0);
  tc_close(&f);
}

/* Fair share charges 0.5 GPU per second for a 0.5 job (GPU billing only);
 * GrpTRES gres/gpu=1 lets two halves run and holds the third. */
static void fraction_is_charged_exactly(void **state) {
  (void)state;
  struct tc_fx f = share_fx(1, 4);
  f.conf->accounts[1].grp_gpus = 1;
  tc_open(&f);
  struct px_jobspec s = frac("alice", 50);
  for (uint64_t id = 1; id <= 3; id++) assert_int_equal(tc_submit(f.core, id, &s, 0), 0);
  tc_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 1));
  assert_non_null(tc_started(&f.out, 2));
  assert_int_equal(tc_reason(f.core, 3), PX_REASON_ASSOC_GRP_GRES);
  uint32_t acct = f.core->jobs[0].assoc;
  assert_true(f.core->assoc[acct].run_cgpus == 100);
  end_job(&f, 1, 100);
  end_job(&f, 2, 100);
  struct px_share_view sv;
  for (size_t r = 0; r < px_core_nshares(f.core); r++) {
    assert_int_equal(px_core_share_get(f.core, r, &sv), 0);
    if (sv.assoc == acct) assert_true(sv.raw_usage == 100.0); /* 2 x 0.5 GPU x 100 s */
  }
  assert_true(f.core->assoc[acct].run_cgpus == 0);
  tc_close(&f);
}

static void expect_reject(struct tc_fx *f, uint64_t id, const struct px_jobspec *s, const char *msg) {
  struct px_diag d;
  enum px_reason r;
  assert_int_not_equal(pxc_submit(f->core, id, s, 10, &r, &d), 0);
  if (!strstr(d.msg, msg)) fail_msg("\"%s\" lacks \"%s\"", d.msg, msg);
  assert_int_equal(px_core_njobs(f->core), 0);
}

static void bad_fractions_are_refused(void **state) {
  (void)state;
  struct tc_fx f = share_fx(2, 2);
  tc_open(&f);
  struct px_jobspec s = frac("alice", 100);
  expect_reject(&f, 1, &s, "gpu_share: 100 hundredths is not a fraction");
  s = frac("alice", 50);
  s.nodes_min = 2;
  expect_reject(&f, 1, &s, "gpu_share: a fraction of one GPU runs on one node");
  s = frac("alice", 50);
  s.gpus = 1;
  expect_reject(&f, 1, &s, "cannot be combined with whole GPUs");
  s = frac("alice", 50);
  s.exclusive = true;
  expect_reject(&f, 1, &s, "--exclusive");
  tc_close(&f);
  struct tc_fx g = {.conf = tc_conf(1, 2, 0, 0)}; /* no GpuShares */
  tc_open(&g);
  s = frac("alice", 50);
  expect_reject(&g, 1, &s, "has no node offering GPU shares");
  tc_close(&g);
}

/* A shared GPU that goes out of service takes no new share and is not
 * freed by its last share's end; recovery puts two shares back on one GPU. */
static void faults_and_recovery(void **state) {
  (void)state;
  struct tc_fx f = share_fx(1, 2);
  tc_open(&f);
  struct px_jobspec s = frac("alice", 40);
  assert_int_equal(tc_submit(f.core, 1, &s, 10), 0);
  tc_cycle(&f, 11);
  uint32_t g = (uint32_t)__builtin_ctzll(alloc_of(&f, 1)->gpus);
  struct px_event ev = {.kind = PX_EV_GPU, .node = 0, .gpu = g, .gpu_usable = false};
  struct px_event_result res;
  assert_int_equal(px_core_apply(f.core, &ev, 12, &res), 0);
  assert_int_equal(tc_submit(f.core, 2, &s, 13), 0);
  tc_cycle(&f, 14);
  assert_true(alloc_of(&f, 2)->gpus != alloc_of(&f, 1)->gpus); /* the other GPU */
  end_job(&f, 1, 20);
  assert_true((node(&f, 0).gpus_free >> g & 1) == 0);
  tc_close(&f);

  struct tc_fx r = share_fx(1, 2);
  tc_open(&r);
  struct px_alloc half = {.node = 0, .ncpu = 1, .gpus = 2, .mem_mib = 1024, .gpu_share = 50};
  struct px_diag d;
  for (uint64_t id = 1; id <= 3; id++) assert_int_equal(tc_submit(r.core, id, &s, 10), 0);
  assert_int_equal(pxc_job_restore(r.core, 1, 0, &half, 1, 3600, 5, &d), 0);
  assert_int_equal(pxc_job_restore(r.core, 2, 0, &half, 1, 3600, 5, &d), 0);
  assert_true(node(&r, 0).gpus_shared == 2 && node(&r, 0).gpus_free == 1);
  assert_int_equal(pxc_job_restore(r.core, 3, 0, &half, 1, 3600, 5, &d), PX_ESTATE); /* 150% */
  assert_non_null(strstr(d.msg, "cannot take 50 hundredths of GPU 1"));
  assert_null(tc_invariants(r.core));
  tc_close(&r);
}

/* Lazy reasons (the simulator): a cycle stops once no whole GPU is free,
 * but a fraction may still fit a shared GPU, so it is tried. */
static void lazy_cycles_still_pack_fractions(void **state) {
  (void)state;
  struct tc_fx f = share_fx(1, 2);
  tc_open(&f);
  px_core_set_lazy_reasons(f.core, 600);
  struct px_jobspec half = frac("alice", 50), whole = tc_spec("bob", 0, 1);
  assert_int_equal(tc_submit(f.core, 1, &half, 10), 0);
  assert_int_equal(tc_submit(f.core, 2, &whole, 10), 0);
  tc_cycle(&f, 11); /* the full cycle: the half opens GPU a, the whole job takes b */
  assert_int_equal(px_bits64_count(node(&f, 0).gpus_free), 0);
  assert_int_equal(tc_submit(f.core, 3, &half, 12), 0);
  tc_cycle(&f, 13); /* a lazy one: no GPU free, a fraction to go */
  assert_non_null(tc_started(&f.out, 3));
  assert_true(alloc_of(&f, 3)->gpus == alloc_of(&f, 1)->gpus);
  tc_close(&f);
}

/* Preemption's search gives a fractional victim's share back, not its GPU:
 * a whole-GPU job of QoS high on a 1-GPU node shared by two low halves
 * preempts both at once (one alone would free nothing). */
static void preemption_frees_a_gpu_only_with_its_last_share(void **state) {
  (void)state;
  struct tc_fx f = share_fx(1, 1);
  uint32_t low = px_testconf_qos(f.conf, "low", 0), high = px_testconf_qos(f.conf, "high", 100);
  uint32_t *list = px_arena_alloc(&f.conf->arena, sizeof *list);
  list[0] = low;
  f.conf->qos[high].preempt = list;
  f.conf->qos[high].npreempt = 1;
  f.conf->sched.preempt_type = "preempt/qos";
  f.conf->sched.preempt_mode = PX_PREEMPT_REQUEUE;
  f.conf->sched.weight_qos = 100000;
  tc_open(&f);
  struct px_jobspec half = frac("bob", 50), whole = tc_spec("alice", 0, 1);
  half.qos = (char *)"low";
  whole.qos = (char *)"high";
  half.mem_per_node_mib = whole.mem_per_node_mib = 1024; /* memory is not what the victims free */
  assert_int_equal(tc_submit(f.core, 1, &half, 0), 0);
  assert_int_equal(tc_submit(f.core, 2, &half, 0), 0);
  tc_cycle(&f, 1);
  assert_int_equal(tc_submit(f.core, 3, &whole, 100), 0);
  tc_cycle(&f, 100);
  size_t preempted = 0;
  for (size_t i = 0; i < f.out.len; i++) preempted += f.out.v[i].kind == PX_ACT_PREEMPT;
  assert_int_equal(preempted, 2);
  assert_true(node(&f, 0).gpus_shared == 1); /* the search left the node as it was */
  assert_int_equal(node(&f, 0).gpu_share_used, 100);
  tc_close(&f);
}

/* GpuShares=USER (for CUDA MPS, which serves one user per GPU at a time):
 * a shared GPU takes only its first share's user's jobs. */
static void one_user_per_shared_gpu(void **state) {
  (void)state;
  struct tc_fx f = share_fx(1, 2);
  f.conf->nodes[0].gpu_shares = PX_GPU_SHARES_USER;
  tc_open(&f);
  const char *who[] = {"alice", "bob", "alice", "bob", "alice"};
  uint32_t ask[] = {50, 25, 50, 25, 30};
  for (uint64_t id = 1; id <= 5; id++) {
    struct px_jobspec s = frac(who[id - 1], ask[id - 1]);
    assert_int_equal(tc_submit(f.core, id, &s, 10), 0);
    tc_cycle(&f, 10 + (int64_t)id);
  }
  px_bits64 a = alloc_of(&f, 1)->gpus, b = alloc_of(&f, 2)->gpus;
  assert_true(a != b);                       /* bob opened the other GPU */
  assert_true(alloc_of(&f, 3)->gpus == a);   /* alice back on hers (now full) */
  assert_true(alloc_of(&f, 4)->gpus == b);   /* bob on his */
  assert_int_equal(tc_reason(f.core, 5), PX_REASON_RESOURCES); /* room 50 on bob's GPU only */
  struct px_event end = {.kind = PX_EV_END, .job_id = 2, .state = PX_JOB_COMPLETED};
  struct px_event_result res;
  assert_int_equal(px_core_apply(f.core, &end, 20, &res), 0);
  end.job_id = 4;
  assert_int_equal(px_core_apply(f.core, &end, 20, &res), 0);
  tc_cycle(&f, 21); /* bob's GPU is whole again: alice's 0.3 opens it */
  assert_true(alloc_of(&f, 5)->gpus == b);
  tc_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fractions_pack_best_fit),    cmocka_unit_test(whole_jobs_avoid_shared_gpus),
      cmocka_unit_test(last_share_frees_the_gpu),   cmocka_unit_test(fraction_is_charged_exactly),
      cmocka_unit_test(bad_fractions_are_refused),  cmocka_unit_test(faults_and_recovery),
      cmocka_unit_test(lazy_cycles_still_pack_fractions),
      cmocka_unit_test(preemption_frees_a_gpu_only_with_its_last_share),
      cmocka_unit_test(one_user_per_shared_gpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
