/*
 * Preemption (the `victims` stage): nodes of 8 GPUs; QoS "low" (preemptable)
 * and "high" (Preempt=low) unless said otherwise; bob runs the victims,
 * alice the preemptors. The cost of a victim is GPUs x seconds run; the
 * expected victim sets below are worked out from those numbers.
 */
#include "px_test.h"

#include <math.h>

#include "core/event.h"
#include "core/policytest.h"

enum { Q_NORMAL, Q_LOW, Q_HIGH };

static struct px_conf *pre_conf(uint32_t nnodes) {
  struct px_conf *c = tc_conf(nnodes, 8, 0, 0);
  uint32_t low = px_testconf_qos(c, "low", 0), high = px_testconf_qos(c, "high", 100);
  assert_int_equal(low, Q_LOW);
  uint32_t *list = px_arena_alloc(&c->arena, sizeof *list);
  list[0] = low;
  c->qos[high].preempt = list;
  c->qos[high].npreempt = 1;
  c->sched.preempt_type = "preempt/qos";
  c->sched.preempt_mode = PX_PREEMPT_REQUEUE;
  c->sched.weight_qos = 100000; /* high first in the queue */
  return c;
}

/* pre_conf with conservative backfill: 100 s slots over window_s. */
static struct px_conf *cons_conf(uint32_t nnodes, int64_t window_s) {
  struct px_conf *c = pre_conf(nnodes);
  c->sched.backfill = PX_BACKFILL_CONSERVATIVE;
  c->sched.backfill_resolution_s = 100;
  c->sched.backfill_window_s = window_s;
  return c;
}

static void sub_q(struct pf *f, uint64_t id, const char *user, const char *qos, uint32_t nodes, uint32_t gpn,
                  int64_t now) {
  struct px_jobspec s = tc_spec(user, nodes, gpn);
  s.qos = (char *)qos;
  s.time_limit_s = 86400;
  pf_sub_spec(f, id, &s, now);
}

/*
 * L1 (8 GPUs, from 0) fills node 0; L2 (4 GPUs, from 100) and L3 (4, from
 * 200) share node 1. At 1000 H needs one whole node. Costs in GPU-seconds:
 * L1 8000, L2 3600, L3 3200. Taking L3 then L2 frees node 1 (6800 in all,
 * 1.89 GPU-hours) -- cheaper than L1 alone (2.22 GPU-hours); neither can be
 * dropped. Both are requeued and keep their ids and submit times.
 */
static void cheapest_victim_set(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(2)};
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 1, 8, 0);
  pf_cycle(&f, 0);
  sub_q(&f, 2, "bob", "low", 0, 4, 100);
  pf_cycle(&f, 100);
  sub_q(&f, 3, "bob", "low", 0, 4, 200);
  pf_cycle(&f, 200);
  assert_int_equal(pf_node(&f.out, 3), 1);
  sub_q(&f, 4, "alice", "high", 0, 8, 1000);
  pf_cycle(&f, 1000);
  assert_int_equal(pf_count(&f.out, PX_ACT_PREEMPT), 2);
  const struct px_action *a2 = pf_action(&f.out, PX_ACT_PREEMPT, 2), *a3 = pf_action(&f.out, PX_ACT_PREEMPT, 3);
  assert_non_null(a2);
  assert_non_null(a3);
  assert_int_equal(a2->preemptor_job_id, 4);
  assert_int_equal(a2->preempt_mode, PX_PREEMPT_REQUEUE);
  assert_int_equal(a2->preempt_cause, PX_PREEMPT_BY_QOS);
  assert_true(fabs(a2->gpu_hours_lost - 1.0) < 1e-9);     /* 4 x 900 s */
  assert_true(fabs(a3->gpu_hours_lost - 0.8 / 0.9) < 1e-9); /* 4 x 800 s */
  assert_int_equal(tc_reason(f.core, 4), PX_REASON_PREEMPTING);
  struct px_job_view v = pf_view(f.core, 4);
  assert_non_null(strstr(v.why, "victims:"));
  /* the accounting rows */
  size_t cur = 0, n = 0;
  struct px_preempt_record r;
  while (px_core_preempt_next(f.core, &cur, &r)) {
    assert_int_equal(r.preemptor_job_id, 4);
    assert_int_equal(r.cause, PX_PREEMPT_BY_QOS);
    assert_int_equal(r.time_s, 1000);
    n++;
  }
  assert_int_equal(n, 2);
  /* the server stops and requeues them; H then starts on node 1 */
  assert_int_equal(pxc_job_requeue(f.core, 2, false, 1001, NULL), 0);
  assert_int_equal(pxc_job_requeue(f.core, 3, false, 1001, NULL), 0);
  pf_cycle(&f, 1002);
  assert_int_equal(pf_node(&f.out, 4), 1);
  v = pf_view(f.core, 2);
  assert_int_equal(v.state, PX_JOB_PENDING);
  assert_int_equal(v.submit_s, 100);
  assert_int_equal(v.restarts, 1);
  pf_close(&f);
}

/*
 * Whole gangs: M (4 GPUs, from 0) and gang G (2 nodes x 4 GPUs, from 500)
 * share node 0; G and L (4 GPUs, from 900) share node 1. H needs a whole
 * node at 1000. Costs: L 400, G 4000, M 4000 (G is younger: before M).
 * L alone frees 4; L + G frees node 1 (and half of node 0): the set {L, G},
 * 1.22 GPU-hours, against {M, G} 2.22. All of G is preempted, M is not.
 */
static void gang_victims_whole(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(2)};
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 0, 4, 0);
  pf_cycle(&f, 0);
  sub_q(&f, 2, "bob", "low", 2, 4, 500);
  pf_cycle(&f, 500);
  sub_q(&f, 3, "bob", "low", 0, 4, 900);
  pf_cycle(&f, 900);
  assert_int_equal(pf_node(&f.out, 3), 1);
  sub_q(&f, 4, "alice", "high", 0, 8, 1000);
  pf_cycle(&f, 1000);
  assert_int_equal(pf_count(&f.out, PX_ACT_PREEMPT), 2);
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 2));
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 3));
  assert_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  pf_close(&f);
}

/* H needs both nodes, but node 1 runs a normal-QoS job nobody may preempt:
 * the low job on node 0 is left alone. */
static void nobody_when_it_cannot_fit(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(2)};
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 1, 8, 0);
  sub_q(&f, 2, "bob", "normal", 1, 8, 0);
  pf_cycle(&f, 0);
  sub_q(&f, 3, "alice", "high", 2, 8, 100);
  pf_cycle(&f, 100);
  assert_int_equal(f.out.len, 0);
  assert_int_equal(tc_reason(f.core, 3), PX_REASON_RESOURCES);
  pf_close(&f);
}

/* PreemptExemptTime=600 on low: not at 300, at 700. */
static void min_run_time(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(1)};
  f.conf->qos[Q_LOW].min_runtime_s = 600;
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 1, 8, 0);
  pf_cycle(&f, 0);
  sub_q(&f, 2, "alice", "high", 1, 8, 300);
  pf_cycle(&f, 300);
  assert_int_equal(f.out.len, 0);
  pf_cycle(&f, 700);
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  pf_close(&f);
}

/* GraceTime=120: SIGTERM now, the kill at 1120; nothing in between. */
static void grace_signal_then_kill(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(1)};
  f.conf->qos[Q_LOW].grace_time_s = 120;
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 1, 8, 0);
  pf_cycle(&f, 0);
  sub_q(&f, 2, "alice", "high", 1, 8, 1000);
  pf_cycle(&f, 1000);
  const struct px_action *s = pf_action(&f.out, PX_ACT_SIGNAL, 1);
  assert_non_null(s);
  assert_int_equal(s->signal, 15);
  assert_int_equal(s->kill_at_s, 1120);
  assert_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  pf_cycle(&f, 1060);
  assert_int_equal(f.out.len, 0);
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_PREEMPTING);
  pf_cycle(&f, 1120);
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  assert_int_equal(pxc_job_requeue(f.core, 1, false, 1121, NULL), 0);
  pf_cycle(&f, 1121);
  assert_non_null(tc_started(&f.out, 2));
  pf_close(&f);
}

/* --signal=USR1@300 (no QoS grace): USR1 now, kill at 1300; the job
 * checkpoints and asks to be requeued at 1100: it keeps its id, nothing is
 * killed, and H starts. */
static void checkpoint_handshake_requeue(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(1)};
  pf_open(&f);
  struct px_jobspec s = tc_spec("bob", 1, 8);
  s.qos = (char *)"low";
  s.time_limit_s = 86400;
  s.signal_num = 10;
  s.signal_time_s = 300;
  pf_sub_spec(&f, 1, &s, 0);
  pf_cycle(&f, 0);
  sub_q(&f, 2, "alice", "high", 1, 8, 1000);
  pf_cycle(&f, 1000);
  const struct px_action *a = pf_action(&f.out, PX_ACT_SIGNAL, 1);
  assert_non_null(a);
  assert_int_equal(a->signal, 10);
  assert_int_equal(a->kill_at_s, 1300);
  assert_int_equal(pxc_job_requeue(f.core, 1, false, 1100, NULL), 0);
  pf_cycle(&f, 1100);
  assert_non_null(tc_started(&f.out, 2));
  assert_int_equal(pf_view(f.core, 1).restarts, 1);
  pf_cycle(&f, 1300);
  assert_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  pf_close(&f);
}

/* --signal=USR1@120 with a 1000 s limit: the warning comes once, at 880. */
static void signal_before_time_limit(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(1)};
  pf_open(&f);
  struct px_jobspec s = tc_spec("bob", 1, 8);
  s.time_limit_s = 1000;
  s.signal_num = 10;
  s.signal_time_s = 120;
  pf_sub_spec(&f, 1, &s, 0);
  pf_cycle(&f, 0);
  pf_cycle(&f, 879);
  assert_int_equal(f.out.len, 0);
  pf_cycle(&f, 880);
  const struct px_action *a = pf_action(&f.out, PX_ACT_SIGNAL, 1);
  assert_non_null(a);
  assert_int_equal(a->signal, 10);
  assert_int_equal(a->preemptor_job_id, 0);
  pf_cycle(&f, 900);
  assert_int_equal(f.out.len, 0);
  pf_close(&f);
}

/* preempt/partition_prio: "hi" (PriorityTier 2) and p0 (tier 0) share the
 * node; p0's PreemptMode=CANCEL. Also --no-requeue would give CANCEL. */
/* One node in partitions 0 and hi (of tier `tier`); bob's job 1 runs in 0
 * from 0, alice's job 2 (hi) comes at 100 and is cycled. Returns hi. */
static uint32_t tier_open(struct pf *f, uint32_t tier) {
  f->conf = tc_conf(1, 8, 0, 0);
  uint32_t hi = px_testconf_partition(f->conf, "hi", 0, 1);
  f->conf->partitions[hi].priority_tier = tier;
  f->conf->partitions[0].preempt_mode = PX_PREEMPT_CANCEL;
  f->conf->sched.preempt_type = "preempt/partition_prio";
  pf_open(f);
  pf_sub(f, 1, "bob", 1, 8, 3600, 0);
  pf_cycle(f, 0);
  struct px_jobspec s = tc_spec("alice", 1, 8);
  s.partition = (char *)"hi";
  pf_sub_spec(f, 2, &s, 100);
  pf_cycle(f, 100);
  return hi;
}

static void partition_tier_cancel(void **state) {
  (void)state;
  struct pf f = {0};
  tier_open(&f, 2);
  const struct px_action *a = pf_action(&f.out, PX_ACT_PREEMPT, 1);
  assert_non_null(a);
  assert_int_equal(a->preempt_mode, PX_PREEMPT_CANCEL);
  assert_int_equal(a->preempt_cause, PX_PREEMPT_BY_TIER);
  assert_int_equal(pxc_job_ended(f.core, 1, PX_JOB_PREEMPTED, 0, 101, NULL), 0);
  pf_cycle(&f, 101);
  assert_non_null(tc_started(&f.out, 2));
  pf_close(&f);
}

static void no_requeue_means_cancel(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(1)};
  pf_open(&f);
  struct px_jobspec s = tc_spec("bob", 1, 8);
  s.qos = (char *)"low";
  s.requeue = false;
  s.no_requeue_given = true;
  pf_sub_spec(&f, 1, &s, 0);
  pf_cycle(&f, 0);
  sub_q(&f, 2, "alice", "high", 1, 8, 100);
  pf_cycle(&f, 100);
  assert_int_equal(pf_action(&f.out, PX_ACT_PREEMPT, 1)->preempt_mode, PX_PREEMPT_CANCEL);
  pf_close(&f);
}

/* PreemptMaxPerHour=1: of two high jobs each needing a node, only the first
 * preempts within the hour; the second (then the partition's top job: without
 * backfill only that one is tried) preempts an hour after the first. */
static void cluster_rate_limit(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(2)};
  f.conf->sched.preempt_max_per_hour = 1;
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 1, 8, 0);
  sub_q(&f, 2, "bob", "low", 1, 8, 0);
  pf_cycle(&f, 0);
  sub_q(&f, 3, "alice", "high", 1, 8, 100);
  sub_q(&f, 4, "alice", "high", 1, 8, 100);
  pf_cycle(&f, 100);
  assert_int_equal(pf_count(&f.out, PX_ACT_PREEMPT), 1);
  /* equal costs: the younger id goes first */
  assert_int_equal(pxc_job_requeue(f.core, 2, false, 101, NULL), 0);
  pf_cycle(&f, 101);
  assert_non_null(tc_started(&f.out, 3));
  pf_cycle(&f, 3000);
  assert_int_equal(pf_count(&f.out, PX_ACT_PREEMPT), 0);
  pf_cycle(&f, 3701);
  assert_int_equal(pf_count(&f.out, PX_ACT_PREEMPT), 1);
  pf_close(&f);
}

/* PreemptAccountMaxPerHour=1: H needs a node holding two 4-GPU jobs of bob:
 * one victim is all bob may lose this hour, so nobody is preempted. */
static void account_rate_limit(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(1)};
  f.conf->sched.preempt_account_max_per_hour = 1;
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 0, 4, 0);
  sub_q(&f, 2, "bob", "low", 0, 4, 0);
  pf_cycle(&f, 0);
  sub_q(&f, 3, "alice", "high", 1, 8, 100);
  pf_cycle(&f, 100);
  assert_int_equal(f.out.len, 0);
  pf_close(&f);
}

/* PreemptExemptAfter=1, PreemptExemptPeriod=1000: L, preempted at 100 and
 * restarted, cannot be preempted again before 1100. */
static void exempt_after_n_preemptions(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(1)};
  f.conf->sched.preempt_exempt_after = 1;
  f.conf->sched.preempt_exempt_s = 1000;
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 1, 8, 0);
  pf_cycle(&f, 0);
  sub_q(&f, 2, "alice", "high", 1, 8, 100);
  pf_cycle(&f, 100);
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  assert_int_equal(pxc_job_requeue(f.core, 1, false, 101, NULL), 0);
  pf_cycle(&f, 101);
  assert_non_null(tc_started(&f.out, 2));
  pf_end(&f, 2, 200);
  pf_cycle(&f, 200);
  assert_non_null(tc_started(&f.out, 1));
  sub_q(&f, 3, "alice", "high", 1, 8, 300);
  pf_cycle(&f, 300);
  assert_int_equal(f.out.len, 0);
  pf_cycle(&f, 1101);
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  pf_close(&f);
}

/* Two QoS listing each other would ping-pong: neither preempts. */
static void mutual_qos_never_preempt(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(1)};
  uint32_t *list = px_arena_alloc(&f.conf->arena, sizeof *list);
  list[0] = Q_HIGH;
  f.conf->qos[Q_LOW].preempt = list;
  f.conf->qos[Q_LOW].npreempt = 1;
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 1, 8, 0);
  pf_cycle(&f, 0);
  sub_q(&f, 2, "alice", "high", 1, 8, 100);
  for (int64_t t = 100; t < 1000; t += 100) {
    pf_cycle(&f, t);
    assert_int_equal(f.out.len, 0);
  }
  pf_close(&f);
}

/*
 * Only pending jobs whose QoS preempts another's make a cycle search for
 * victims (px_core_may_preempt, issue 21): with low jobs alone nothing may
 * preempt; a high job submitted later preempts at the next cycle.
 */
static void may_preempt_follows_pending_qos(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(1)};
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 1, 8, 0);
  pf_cycle(&f, 0);
  sub_q(&f, 2, "bob", "low", 1, 8, 10);
  pf_cycle(&f, 10);
  assert_false(px_core_may_preempt(f.core));
  assert_int_equal(f.out.len, 0);
  sub_q(&f, 3, "alice", "high", 1, 8, 100);
  assert_true(px_core_may_preempt(f.core));
  pf_cycle(&f, 100);
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  assert_int_equal(pxc_job_requeue(f.core, 1, false, 101, NULL), 0);
  pf_cycle(&f, 101);
  assert_non_null(tc_started(&f.out, 3));
  pf_close(&f);
}

/* Partition tiers are read at every cycle: two partitions of one tier
 * preempt nothing until one's tier rises at run time. */
static void tier_raised_at_run_time(void **state) {
  (void)state;
  struct pf f = {0};
  uint32_t hi = tier_open(&f, 0);
  assert_int_equal(f.out.len, 0);
  assert_false(px_core_may_preempt(f.core));
  f.core->parts[hi].tier = 2;
  assert_true(px_core_may_preempt(f.core));
  pf_cycle(&f, 200);
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  pf_close(&f);
}

/*
 * With lazy reasons (the simulator) a conservative pass may stop reserving
 * once no job left can start, but victim searches are still owed in queue
 * order: on one full node, low jobs P2..P4 (older, so first in the queue)
 * cannot start; H behind them still preempts the running L.
 */
static void tail_still_searches_victims(void **state) {
  (void)state;
  struct pf f = {.conf = cons_conf(1, 100000)};
  f.conf->sched.weight_qos = 0;
  pf_open(&f);
  px_core_set_lazy_reasons(f.core, 3600);
  sub_q(&f, 1, "bob", "low", 1, 8, 0);
  pf_cycle(&f, 0);
  for (uint64_t id = 2; id <= 4; id++) sub_q(&f, id, "bob", "low", 1, 8, 10 * (int64_t)id);
  sub_q(&f, 5, "bob", "high", 1, 8, 100); /* bob's too: last in the queue */
  pf_cycle(&f, 100);
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  assert_int_equal(pf_count(&f.out, PX_ACT_PREEMPT), 1);
  pf_close(&f);
}

/* The plan built incrementally at now equals one built from scratch. */
static void plan_exact(struct pf *f, int64_t now) {
  pxc_tl_build(f->core, &f->core->pol->tl, now, false);
  assert_int_equal(pxc_tl_verify(f->core, &f->core->pol->tl), 0);
}

/*
 * With conservative backfill, victims no longer force full plan builds
 * (issue 21): the rows of their nodes are redone at each build. Two nodes;
 * L (low, a gang of both nodes) from 0; at 1000 H (high, one node) signals
 * L (grace 120: killed at 1120), whose release on both nodes moves from
 * 86,400 to 1120 although H takes only node 0 in the plan. B (low, one
 * node, 500 s) then waits for the earliest node in the plan. L is slow to
 * go: past its kill time it releases in slot 1. At every step until L is
 * requeued and H starts, an incremental build equals a full one.
 */
static void victims_keep_incremental_plan_exact(void **state) {
  (void)state;
  struct pf f = {.conf = cons_conf(2, 10000)};
  f.conf->qos[Q_LOW].grace_time_s = 120;
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 2, 8, 0);
  pf_cycle(&f, 0);
  assert_non_null(tc_started(&f.out, 1));
  plan_exact(&f, 0);
  sub_q(&f, 2, "alice", "high", 1, 8, 1000);
  pf_cycle(&f, 1000);
  assert_non_null(pf_action(&f.out, PX_ACT_SIGNAL, 1));
  plan_exact(&f, 1000);
  struct px_jobspec b = tc_spec("bob", 1, 8);
  b.qos = "low";
  b.time_limit_s = 500;
  pf_sub_spec(&f, 3, &b, 1010);
  for (int64_t t = 1010; t <= 1120; t += 55) {
    pf_cycle(&f, t);
    plan_exact(&f, t);
  }
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  pf_cycle(&f, 1350);
  plan_exact(&f, 1350);
  assert_int_equal(pxc_job_requeue(f.core, 1, false, 1360, NULL), 0);
  pf_cycle(&f, 1360);
  assert_non_null(tc_started(&f.out, 2));
  plan_exact(&f, 1360);
  pf_cycle(&f, 1500);
  plan_exact(&f, 1500);
  pf_close(&f);
}

/*
 * Two preemptors in one cycle must not count on the same free node
 * (conservative backfill: H2 is tried after H1 failed to start). Three
 * nodes: L1 and L2 (low, a node each) from 0, one node idle. At 100 H1 and
 * H2 (high, two nodes each) arrive. H1 takes the idle node and preempts
 * one L: those two nodes are its claim. H2 would need the idle node too:
 * with it claimed, one L's node is not enough, so it preempts nobody (it
 * preempted the other L, and then could not start, before claims). When
 * the victim is requeued, H1 starts on its claim and the requeued L stays
 * pending.
 */
static void claims_do_not_overlap(void **state) {
  (void)state;
  struct pf f = {.conf = cons_conf(3, 100000)};
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 1, 8, 0);
  sub_q(&f, 2, "bob", "low", 1, 8, 0);
  pf_cycle(&f, 0);
  assert_int_equal(pf_count(&f.out, PX_ACT_START), 2);
  sub_q(&f, 3, "alice", "high", 2, 8, 100);
  sub_q(&f, 4, "alice", "high", 2, 8, 100);
  pf_cycle(&f, 100);
  assert_int_equal(pf_count(&f.out, PX_ACT_PREEMPT), 1);
  const struct px_action *a = &f.out.v[0];
  assert_int_equal(a->preemptor_job_id, 3);
  uint64_t victim = a->job_id;
  assert_int_equal(tc_reason(f.core, 4), PX_REASON_RESOURCES);
  assert_int_equal(pxc_job_requeue(f.core, victim, false, 101, NULL), 0);
  pf_cycle(&f, 101);
  assert_non_null(tc_started(&f.out, 3));
  assert_null(tc_started(&f.out, victim));
  assert_int_equal(pf_count(&f.out, PX_ACT_START), 1);
  pf_close(&f);
}

/*
 * A claim the preemptor cannot use ends after one cycle. Two nodes: L
 * (low, a node) from 0, the other idle; at 100 H (high, both nodes)
 * preempts L. L is requeued and the idle node drained before the next
 * cycle, so H cannot start: in that cycle L does not restart on H's claim
 * either; in the next the claim has ended and L runs again.
 */
static void claim_ends_when_unused(void **state) {
  (void)state;
  struct pf f = {.conf = pre_conf(2)};
  pf_open(&f);
  sub_q(&f, 1, "bob", "low", 1, 8, 0);
  pf_cycle(&f, 0);
  uint32_t node = pf_node(&f.out, 1);
  sub_q(&f, 2, "alice", "high", 2, 8, 100);
  pf_cycle(&f, 100);
  assert_non_null(pf_action(&f.out, PX_ACT_PREEMPT, 1));
  assert_int_equal(pxc_job_requeue(f.core, 1, false, 101, NULL), 0);
  struct px_event_result res;
  struct px_event drain = {.kind = PX_EV_NODE_DRAIN, .node = 1 - node, .reason = "fan"};
  assert_int_equal(px_core_apply(f.core, &drain, 101, &res), 0);
  pf_cycle(&f, 102);
  assert_int_equal(f.out.len, 0);
  pf_cycle(&f, 103);
  assert_int_equal(pf_node(&f.out, 1), node);
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_REQ_NODE_NOT_AVAIL); /* both nodes, one drained */
  pf_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cheapest_victim_set),
      cmocka_unit_test(gang_victims_whole),
      cmocka_unit_test(nobody_when_it_cannot_fit),
      cmocka_unit_test(min_run_time),
      cmocka_unit_test(grace_signal_then_kill),
      cmocka_unit_test(checkpoint_handshake_requeue),
      cmocka_unit_test(signal_before_time_limit),
      cmocka_unit_test(partition_tier_cancel),
      cmocka_unit_test(no_requeue_means_cancel),
      cmocka_unit_test(cluster_rate_limit),
      cmocka_unit_test(account_rate_limit),
      cmocka_unit_test(exempt_after_n_preemptions),
      cmocka_unit_test(mutual_qos_never_preempt),
      cmocka_unit_test(victims_keep_incremental_plan_exact),
      cmocka_unit_test(may_preempt_follows_pending_qos),
      cmocka_unit_test(tier_raised_at_run_time),
      cmocka_unit_test(tail_still_searches_victims),
      cmocka_unit_test(claims_do_not_overlap),
      cmocka_unit_test(claim_ends_when_unused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
