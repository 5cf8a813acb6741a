/*
 * Admit stage and priority order: account and QoS limits with Slurm's
 * reason names, partition state, and the multifactor formula on the worked
 * example of docs/scheduling.md.
 */
#include "px_test.h"

#include <math.h>

#include "core/coretest.h"

static void sub(struct tc_fx *f, uint64_t id, const char *user, uint32_t gpn) {
  struct px_jobspec s = tc_spec(user, 0, gpn);
  assert_int_equal(tc_submit(f->core, id, &s, 10), 0);
}

/* conf accounts: 0 root, 1 acct, 2 alice, 3 bob. */

/* GrpTRES gres/gpu=8 on acct: alice's 8-GPU job runs; bob's 1-GPU job would
 * make 9 -> AssocGrpGRES, though the cluster has room. */
static void grp_gpus_limit(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  f.conf->accounts[1].grp_gpus = 8;
  tc_open(&f);
  sub(&f, 1, "alice", 8);
  sub(&f, 2, "bob", 1);
  tc_cycle(&f, 20);
  assert_non_null(tc_started(&f.out, 1));
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_ASSOC_GRP_GRES);
  struct px_job_view v;
  px_core_job_get(f.core, 2, &v);
  assert_non_null(strstr(v.why, "acct"));
  assert_int_equal(pxc_job_ended(f.core, 1, PX_JOB_COMPLETED, 0, 30, NULL), 0);
  tc_cycle(&f, 40);
  assert_non_null(tc_started(&f.out, 2));
  /* A job over the group limit on its own can never run: rejected. */
  struct px_jobspec s = tc_spec("alice", 2, 8);
  enum px_reason r;
  assert_int_equal(pxc_submit(f.core, 3, &s, 50, &r, NULL), PX_ELIMIT);
  assert_int_equal(r, PX_REASON_ASSOC_GRP_GRES);
  tc_close(&f);
}

/* A job without an account goes to the user's DefaultAccount=, not to the
 * first association: alice is in acct (first) and in "other", whose
 * association the accounts file marked as her default; bob has only acct. */
static void default_account_is_honoured(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  uint32_t other = px_testconf_account(f.conf, "other", 0, 1);
  uint32_t alice_other = px_testconf_user(f.conf, "alice", other, 1);
  f.conf->accounts[alice_other].is_default_account = true;
  tc_open(&f);
  sub(&f, 1, "alice", 1);
  sub(&f, 2, "bob", 1);
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f.core, 1, &v), 0);
  assert_int_equal(v.assoc, alice_other);
  assert_int_equal(v.account, other);
  assert_int_equal(px_core_job_get(f.core, 2, &v), 0);
  assert_int_equal(v.account, 1);
  tc_close(&f);
}

/* MaxJobs=1 set on acct applies to each user association below it:
 * alice's second job waits (AssocMaxJobsLimit), bob's first runs. GrpJobs=2
 * on acct then stops bob's second (AssocGrpJobsLimit). */
static void max_jobs_and_grp_jobs(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  f.conf->accounts[1].max_jobs = 1;
  f.conf->accounts[3].max_jobs = 5;
  f.conf->accounts[1].grp_jobs = 2;
  tc_open(&f);
  sub(&f, 1, "alice", 1);
  sub(&f, 2, "alice", 1);
  sub(&f, 3, "bob", 1);
  sub(&f, 4, "bob", 1);
  tc_cycle(&f, 20);
  assert_non_null(tc_started(&f.out, 1));
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_ASSOC_MAX_JOBS);
  assert_non_null(tc_started(&f.out, 3));
  assert_int_equal(tc_reason(f.core, 4), PX_REASON_ASSOC_GRP_JOBS);
  tc_close(&f);
}

/* MaxSubmitJobs=2: the third submit is refused. */
static void max_submit_jobs(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(1, 8, 0, 0)};
  f.conf->accounts[2].max_submit_jobs = 2;
  tc_open(&f);
  sub(&f, 1, "alice", 1);
  sub(&f, 2, "alice", 1);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  enum px_reason r;
  assert_int_equal(pxc_submit(f.core, 3, &s, 10, &r, NULL), PX_ELIMIT);
  assert_int_equal(r, PX_REASON_ASSOC_MAX_SUBMIT);
  assert_int_equal(pxc_cancel(f.core, 2, 11, NULL), 0);
  assert_int_equal(pxc_submit(f.core, 3, &s, 12, &r, NULL), 0);
  tc_close(&f);
}

/* QoS "capped": MaxTRESPerUser gres/gpu=4, MaxJobsPerUser=2, MaxWall 1 h. */
static void qos_per_user_limits(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  uint32_t q = px_testconf_qos(f.conf, "capped", 0);
  f.conf->qos[q].max_gpus_per_user = 4;
  f.conf->qos[q].max_jobs_per_user = 2;
  f.conf->qos[q].max_wall_s = 3600;
  tc_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 3);
  s.qos = (char *)"capped";
  assert_int_equal(tc_submit(f.core, 1, &s, 10), 0);
  s.gpus_per_node = 2;
  assert_int_equal(tc_submit(f.core, 2, &s, 10), 0); /* 3 + 2 > 4 */
  s.gpus_per_node = 1;
  assert_int_equal(tc_submit(f.core, 3, &s, 10), 0); /* 3 + 1 = 4 */
  s.gpus_per_node = 0;
  assert_int_equal(tc_submit(f.core, 4, &s, 10), 0); /* a third job, CPU only */
  tc_cycle(&f, 20);
  assert_non_null(tc_started(&f.out, 1));
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_QOS_MAX_GRES_PER_USER);
  assert_non_null(tc_started(&f.out, 3));
  assert_int_equal(tc_reason(f.core, 4), PX_REASON_QOS_MAX_JOBS_PER_USER);
  s.time_limit_s = 7200;
  enum px_reason r;
  assert_int_equal(pxc_submit(f.core, 5, &s, 10, &r, NULL), PX_ELIMIT);
  assert_int_equal(r, PX_REASON_QOS_MAX_WALL);
  /* an unlimited job is refused in words, not as INT64_MAX seconds */
  struct px_diag d;
  px_diag_clear(&d);
  s.time_limit_s = PX_TIME_UNLIMITED;
  assert_int_equal(pxc_submit(f.core, 5, &s, 10, &r, &d), PX_ELIMIT);
  assert_string_equal(d.msg, "time_limit: UNLIMITED over QoS capped MaxWall 3600 s");
  /* bob has his own per-user budget */
  struct px_jobspec b = tc_spec("bob", 0, 4);
  b.qos = (char *)"capped";
  assert_int_equal(tc_submit(f.core, 6, &b, 10), 0);
  tc_cycle(&f, 30);
  assert_non_null(tc_started(&f.out, 6));
  tc_close(&f);
}

/* Partition state: Down -> PartitionDown; a time limit raised over MaxTime
 * after submit -> PartitionTimeLimit; AllowQos refuses other QoS. */
static void partition_gates(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  f.conf->partitions[0].max_time_s = 3600;
  px_testconf_qos(f.conf, "other", 0);
  f.conf->partitions[0].allow_qos = (uint32_t[]){0};
  f.conf->partitions[0].nallow_qos = 1;
  px_testconf_partition(f.conf, "down", 0, 2);
  f.conf->partitions[1].up = false;
  tc_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.partition = (char *)"down";
  assert_int_equal(tc_submit(f.core, 1, &s, 10), 0);
  s.partition = NULL;
  s.hold = true;
  assert_int_equal(tc_submit(f.core, 2, &s, 10), 0);
  struct px_job_update u = {.fields = PX_UPD_TIME_LIMIT, .time_limit_s = 7200};
  assert_int_equal(pxc_update(f.core, 2, &u, 11, NULL), 0);
  assert_int_equal(pxc_release(f.core, 2, false, 12, NULL), 0);
  tc_cycle(&f, 20);
  assert_int_equal(tc_reason(f.core, 1), PX_REASON_PARTITION_DOWN);
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_PARTITION_TIME_LIMIT);
  s.hold = false;
  s.qos = (char *)"other";
  enum px_reason r;
  assert_int_equal(pxc_submit(f.core, 3, &s, 10, &r, NULL), PX_EPERM);
  assert_int_equal(r, PX_REASON_QOS_NOT_ALLOWED);
  tc_close(&f);
}

/*
 * The worked example of docs/scheduling.md. Weights: age 1000, fair share
 * 10000, job size 1000, partition 1000, QoS 2000; PriorityMaxAge 7 days.
 * Cluster: 4 nodes x 64 CPUs (256 CPUs); partitions "gpu" (PriorityJobFactor
 * 1) and "urgent" (2), both over all nodes; QoS "high" Priority 100 (the
 * largest). alice has used GPUs, bob not: Fair Tree gives bob 2/2, alice 1/2.
 * alice's 2-node job (1 CPU per node) in "gpu" with QoS high, eligible for
 * 3.5 days:
 *   age       0.5                          x 1000  =  500
 *   fairshare 0.5                          x 10000 = 5000
 *   job size  (2/4 + 2/256) / 2 = 0.25390625 x 1000 = 253.90625
 *   partition 1/2                          x 1000  =  500
 *   QoS       100/100                      x 2000  = 2000
 *   total 8253.90625 -> 8253 (truncated); nice 0.
 */
static void multifactor_worked_example(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(4, 8, 0, 0)};
  struct px_conf_sched *w = &f.conf->sched;
  w->weight_age = 1000, w->weight_fairshare = 10000, w->weight_jobsize = 1000;
  w->weight_partition = 1000, w->weight_qos = 2000, w->max_age_s = 7 * 86400;
  f.conf->partitions[0].name = "gpu";
  uint32_t urgent = px_testconf_partition(f.conf, "urgent", 0, 4);
  f.conf->partitions[urgent].priority_job_factor = 2;
  px_testconf_qos(f.conf, "high", 100);
  tc_open(&f);
  f.core->assoc[2].usage = 1000; /* alice; bob has none */
  f.core->assoc[1].usage = f.core->assoc[0].usage = 1000;
  for (uint32_t n = 0; n < 4; n++) pxc_node_event(f.core, n, PX_NODE_EV_DOWN, NULL, 0, NULL);
  struct px_jobspec s = tc_spec("alice", 2, 8);
  s.qos = (char *)"high";
  const int64_t t0 = 1000000;
  assert_int_equal(tc_submit(f.core, 1, &s, t0), 0);
  tc_cycle(&f, t0 + 302400); /* 3.5 days */
  struct px_job_view v;
  px_core_job_get(f.core, 1, &v);
  assert_true(fabs(v.prio.age - 0.5) < 1e-12);
  assert_true(fabs(v.prio.fairshare - 0.5) < 1e-12);
  assert_true(fabs(v.prio.jobsize - 0.25390625) < 1e-12);
  assert_true(fabs(v.prio.partition - 0.5) < 1e-12);
  assert_true(fabs(v.prio.qos - 1.0) < 1e-12);
  assert_int_equal(v.prio.priority, 8253);
  assert_true(fabs(v.prio.w_jobsize - 253.90625) < 1e-9);
  assert_true(fabs(v.prio.w_fairshare - 5000) < 1e-9);
  /* nice 300 takes 300 off; an admin priority replaces the formula */
  struct px_job_update u = {.fields = PX_UPD_NICE, .nice = 300};
  pxc_update(f.core, 1, &u, t0 + 302400, NULL);
  px_core_job_get(f.core, 1, &v);
  assert_int_equal(v.prio.priority, 7953);
  u = (struct px_job_update){.fields = PX_UPD_PRIORITY, .priority = 42};
  pxc_update(f.core, 1, &u, t0 + 302400, NULL);
  px_core_job_get(f.core, 1, &v);
  assert_int_equal(v.prio.priority, 42);
  tc_close(&f);
}

/* Order: equal jobs go by fair share (bob, no usage, first) though alice
 * submitted first; a higher PriorityTier partition goes before both. One
 * node of 8 GPUs, each job wants all 8: only the first in order starts. */
static void order_follows_priority_then_tier(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(1, 8, 0, 0)};
  tc_open(&f);
  f.core->assoc[2].usage = f.core->assoc[1].usage = f.core->assoc[0].usage = 100;
  struct px_jobspec a = tc_spec("alice", 0, 8), b = tc_spec("bob", 0, 8);
  assert_int_equal(tc_submit(f.core, 1, &a, 10), 0);
  assert_int_equal(tc_submit(f.core, 2, &b, 11), 0);
  tc_cycle(&f, 20);
  assert_int_equal(f.out.len, 1);
  assert_non_null(tc_started(&f.out, 2));
  assert_int_equal(tc_reason(f.core, 1), PX_REASON_RESOURCES);
  px_actions_fini(&f.out);
  px_core_free(f.core);
  /* Same jobs with FIFO order: alice (submitted first) starts. */
  f.conf->sched.order = PX_ORDER_FIFO;
  tc_open(&f);
  assert_int_equal(tc_submit(f.core, 1, &a, 10), 0);
  assert_int_equal(tc_submit(f.core, 2, &b, 11), 0);
  tc_cycle(&f, 20);
  assert_non_null(tc_started(&f.out, 1));
  tc_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(grp_gpus_limit),
      cmocka_unit_test(default_account_is_honoured),
      cmocka_unit_test(max_jobs_and_grp_jobs),
      cmocka_unit_test(max_submit_jobs),
      cmocka_unit_test(qos_per_user_limits),
      cmocka_unit_test(partition_gates),
      cmocka_unit_test(multifactor_worked_example),
      cmocka_unit_test(order_follows_priority_then_tier),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
