/*
 * Job life cycle and the gate stage: arrays, dependencies, holds, cancel,
 * requeue, begin time, submit-time rejection. Each test says what it expects
 * and why.
 */
#include "px_test.h"

#include "core/coretest.h"

static void sub_spec(struct tc_fx *f, uint64_t id, struct px_jobspec *s) {
  assert_int_equal(tc_submit(f->core, id, s, 10), 0);
}

static void sub(struct tc_fx *f, uint64_t id, uint32_t gpn) {
  struct px_jobspec s = tc_spec("alice", 0, gpn);
  sub_spec(f, id, &s);
}

/* "0-8:2%2" has tasks 0,2,4,6,8: the submit consumes ids 100..105; task k
 * starts as id 101 + its position. With %2 only two run: 101 (task 0) and
 * 102 (task 2); the record waits with JobArrayTaskLimit. When 101 ends, 103
 * (task 4) starts. After all five end, afterok:100 is satisfied. */
static void array_spawns_tasks_as_they_start(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.array = (char *)"0-8:2%2";
  assert_int_equal(px_core_ids_needed(&s, NULL), 6);
  sub_spec(&f, 100, &s);
  tc_cycle(&f, 20);
  assert_int_equal(f.out.len, 2);
  const struct px_action *a = tc_started(&f.out, 101);
  assert_non_null(a);
  assert_int_equal(a->array_job_id, 100);
  assert_int_equal(a->array_task_id, 0);
  assert_int_equal(tc_started(&f.out, 102)->array_task_id, 2);
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f.core, 100, &v), 0);
  assert_int_equal(v.reason, PX_REASON_ARRAY_TASK_LIMIT);
  assert_int_equal(v.array_tasks_pending, 3);
  struct px_jobspec d = tc_spec("alice", 0, 1);
  d.dependency = (char *)"afterok:100";
  sub_spec(&f, 200, &d);
  assert_int_equal(pxc_job_ended(f.core, 101, PX_JOB_COMPLETED, 0, 30, NULL), 0);
  tc_cycle(&f, 40);
  assert_int_equal(tc_started(&f.out, 103)->array_task_id, 4);
  assert_null(tc_started(&f.out, 200));
  for (uint64_t id = 102; id <= 105; id++) {
    if (id > 103) tc_cycle(&f, 40 + (int64_t)id);
    assert_int_equal(pxc_job_ended(f.core, id, PX_JOB_COMPLETED, 0, 50 + (int64_t)id, NULL), 0);
  }
  assert_int_equal(px_core_job_get(f.core, 100, &v), PX_ENOENT); /* the array is done */
  tc_cycle(&f, 300);
  assert_non_null(tc_started(&f.out, 200));
  tc_close(&f);
}

/* A 100,000-task array is one small record while pending. */
static void big_array_costs_one_record(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(1, 8, 0, 0)};
  tc_open(&f);
  size_t before = f.core->bytes;
  struct px_jobspec s = tc_spec("alice", 0, 8);
  s.array = (char *)"0-99999";
  sub_spec(&f, 1, &s);
  assert_true(f.core->bytes - before < 4096);
  tc_cycle(&f, 20);
  assert_int_equal(f.out.len, 1); /* one node: one task at a time */
  tc_close(&f);
}

/* afterok on a job that failed can never be met; afternotok on it runs;
 * after waits for the start only; syntax errors and unknown ids are
 * rejected at submit with the field named. */
static void dependencies_resolve(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  sub(&f, 1, 1);
  tc_cycle(&f, 20);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.dependency = (char *)"afterok:1";
  sub_spec(&f, 2, &s);
  s.dependency = (char *)"afternotok:1";
  sub_spec(&f, 3, &s);
  s.dependency = (char *)"after:1";
  sub_spec(&f, 4, &s);
  s.dependency = (char *)"afterany:1?afterok:2";
  sub_spec(&f, 5, &s);
  tc_cycle(&f, 30);
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_DEPENDENCY);
  assert_non_null(tc_started(&f.out, 4)); /* job 1 is running */
  assert_int_equal(pxc_job_ended(f.core, 1, PX_JOB_FAILED, 3, 40, NULL), 0);
  tc_cycle(&f, 50);
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_DEP_NEVER);
  assert_non_null(tc_started(&f.out, 3));
  assert_non_null(tc_started(&f.out, 5)); /* afterany:1 holds, '?' needs one */
  struct px_diag d;
  s.dependency = (char *)"afterok:77";
  assert_int_equal(pxc_submit(f.core, 9, &s, 60, NULL, &d), PX_ENOENT);
  assert_non_null(strstr(d.msg, "dependency"));
  s.dependency = (char *)"afterok:3,afterfoo:2";
  assert_int_equal(pxc_submit(f.core, 9, &s, 60, NULL, &d), PX_EINVAL);
  assert_int_equal(d.pos, 10);
  s.dependency = (char *)"afterok:3,afterany:2?after:4";
  assert_int_equal(pxc_submit(f.core, 9, &s, 60, NULL, &d), PX_EINVAL);
  tc_close(&f);
}

/* singleton: one job per (user, name) runs at a time. */
static void singleton_waits_for_namesake(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.name = (char *)"train";
  sub_spec(&f, 1, &s);
  tc_cycle(&f, 20);
  s.dependency = (char *)"singleton";
  sub_spec(&f, 2, &s);
  sub_spec(&f, 3, &s);
  tc_cycle(&f, 30);
  assert_int_equal(f.out.len, 0);
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_DEPENDENCY);
  assert_int_equal(pxc_job_ended(f.core, 1, PX_JOB_COMPLETED, 0, 40, NULL), 0);
  tc_cycle(&f, 50);
  assert_int_equal(f.out.len, 1); /* 2 starts, 3 still waits for it */
  assert_non_null(tc_started(&f.out, 2));
  assert_int_equal(tc_reason(f.core, 3), PX_REASON_DEPENDENCY);
  tc_close(&f);
}

/* "afterany:1?singleton": either term suffices. While namesake 1 runs and
 * job 9 (the afterany target) has not ended, job 2 waits; once 9 ends it
 * starts beside its running namesake, as sbatch's '?' says. */
static void singleton_in_any_of(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.name = (char *)"train";
  sub_spec(&f, 1, &s);
  struct px_jobspec other = tc_spec("alice", 0, 1);
  sub_spec(&f, 9, &other);
  tc_cycle(&f, 20);
  s.dependency = (char *)"afterany:9?singleton";
  sub_spec(&f, 2, &s);
  tc_cycle(&f, 30);
  assert_null(tc_started(&f.out, 2));
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_DEPENDENCY);
  assert_int_equal(pxc_job_ended(f.core, 9, PX_JOB_COMPLETED, 0, 40, NULL), 0);
  tc_cycle(&f, 50);
  assert_non_null(tc_started(&f.out, 2)); /* namesake 1 still runs */
  tc_close(&f);
}

/* Holds: user hold -> JobHeldUser, priority 0; an admin hold cannot be
 * released by the user; an admin release lets it run. */
static void holds_and_releases(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(1, 8, 0, 0)};
  tc_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.hold = true;
  sub_spec(&f, 1, &s);
  tc_cycle(&f, 20);
  struct px_job_view v;
  px_core_job_get(f.core, 1, &v);
  assert_int_equal(v.reason, PX_REASON_HELD_USER);
  assert_int_equal(v.prio.priority, 0);
  assert_non_null(strstr(v.why, "held"));
  assert_int_equal(pxc_hold(f.core, 1, true, 21, NULL), 0);
  assert_int_equal(pxc_release(f.core, 1, false, 22, NULL), PX_EPERM);
  tc_cycle(&f, 23);
  assert_int_equal(tc_reason(f.core, 1), PX_REASON_HELD_ADMIN);
  assert_int_equal(pxc_release(f.core, 1, true, 24, NULL), 0);
  tc_cycle(&f, 25);
  assert_non_null(tc_started(&f.out, 1));
  assert_int_equal(pxc_hold(f.core, 1, false, 26, NULL), PX_ESTATE);
  tc_close(&f);
}

/* Cancel removes a pending job; a running one must be stopped by the caller
 * (PX_ESTATE). Requeue returns a running job to pending with its id, submit
 * time and a restart count, freeing its GPUs. */
static void cancel_and_requeue(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(1, 8, 0, 0)};
  tc_open(&f);
  sub(&f, 1, 8);
  sub(&f, 2, 8);
  tc_cycle(&f, 20);
  assert_non_null(tc_started(&f.out, 1));
  assert_int_equal(pxc_cancel(f.core, 1, 21, NULL), PX_ESTATE);
  assert_int_equal(pxc_cancel(f.core, 2, 21, NULL), 0);
  assert_int_equal(pxc_cancel(f.core, 2, 21, NULL), PX_ENOENT);
  assert_int_equal(pxc_job_requeue(f.core, 1, false, 30, NULL), 0);
  struct px_job_view v;
  px_core_job_get(f.core, 1, &v);
  assert_int_equal(v.state, PX_JOB_PENDING);
  assert_int_equal(v.restarts, 1);
  assert_int_equal(v.submit_s, 10);
  struct px_node_view nv;
  px_core_node_get(f.core, 0, &nv);
  assert_int_equal(nv.gpus_alloc, 0);
  tc_cycle(&f, 40);
  assert_non_null(tc_started(&f.out, 1));
  assert_int_equal(pxc_job_ended(f.core, 1, PX_JOB_COMPLETED, 0, 50, NULL), 0);
  assert_int_equal(px_core_njobs(f.core), 0);
  tc_close(&f);
}

/* --begin: BeginTime until the time, then it runs. */
static void begin_time_gates(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(1, 8, 0, 0)};
  tc_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.begin_s = 500;
  sub_spec(&f, 1, &s);
  tc_cycle(&f, 100);
  assert_int_equal(tc_reason(f.core, 1), PX_REASON_BEGIN_TIME);
  tc_cycle(&f, 500);
  assert_non_null(tc_started(&f.out, 1));
  tc_close(&f);
}

/* Submit rejects what can never run, naming the field. */
static void submit_rejects_impossible_jobs(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  f.conf->partitions[0].max_time_s = 3600;
  uint32_t other = px_testconf_account(f.conf, "other", 0, 1);
  px_testconf_user(f.conf, "carol", other, 1);
  f.conf->partitions[0].deny_accounts = (uint32_t[]){other};
  f.conf->partitions[0].ndeny_accounts = 1;
  tc_open(&f);
  struct px_diag d;
  enum px_reason r;
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.partition = (char *)"nope";
  assert_int_equal(pxc_submit(f.core, 1, &s, 10, &r, &d), PX_ENOENT);
  assert_non_null(strstr(d.msg, "partition"));
  s = tc_spec("alice", 0, 1);
  s.time_limit_s = 7200;
  assert_int_equal(pxc_submit(f.core, 1, &s, 10, &r, &d), PX_ELIMIT);
  assert_int_equal(r, PX_REASON_PARTITION_TIME_LIMIT);
  s = tc_spec("alice", 3, 8);
  assert_int_equal(pxc_submit(f.core, 1, &s, 10, &r, &d), PX_ELIMIT);
  assert_int_equal(r, PX_REASON_PARTITION_NODE_LIMIT);
  s = tc_spec("alice", 0, 9);
  assert_int_equal(pxc_submit(f.core, 1, &s, 10, &r, &d), PX_ELIMIT);
  assert_int_equal(r, PX_REASON_RESOURCES);
  assert_non_null(strstr(d.msg, "9 GPU"));
  s = tc_spec("mallory", 0, 1);
  assert_int_equal(pxc_submit(f.core, 1, &s, 10, &r, &d), PX_EPERM);
  assert_int_equal(r, PX_REASON_INVALID_ACCOUNT);
  s = tc_spec("carol", 0, 1);
  assert_int_equal(pxc_submit(f.core, 1, &s, 10, &r, &d), PX_EPERM);
  assert_int_equal(r, PX_REASON_ACCOUNT_NOT_ALLOWED);
  s = tc_spec("alice", 0, 1);
  s.array = (char *)"5-2";
  assert_int_equal(pxc_submit(f.core, 1, &s, 10, &r, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "array"));
  s.array = NULL;
  s.qos = (char *)"gold";
  assert_int_equal(pxc_submit(f.core, 1, &s, 10, &r, &d), PX_ENOENT);
  assert_int_equal(r, PX_REASON_INVALID_QOS);
  assert_int_equal(px_core_njobs(f.core), 0); /* nothing was kept */
  s = tc_spec("alice", 0, 1);
  sub_spec(&f, 1, &s);
  assert_int_equal(pxc_submit(f.core, 1, &s, 10, &r, &d), PX_EEXIST);
  tc_close(&f);
}

/* Slurm's builtin order: a blocked top job holds back its partition (the
 * jobs behind it wait with reason Priority), not another partition. */
static void blocked_job_holds_back_its_partition(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(4, 8, 0, 0)};
  f.conf->partitions[0].nnodes = 2;
  px_testconf_partition(f.conf, "p1", 2, 2);
  tc_open(&f);
  sub(&f, 1, 8);
  tc_cycle(&f, 20); /* job 1 on n0 */
  struct px_jobspec big = tc_spec("alice", 2, 8), small = tc_spec("alice", 0, 1), other = small;
  other.partition = (char *)"p1";
  sub_spec(&f, 2, &big);
  sub_spec(&f, 3, &small);
  sub_spec(&f, 4, &other);
  tc_cycle(&f, 30);
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_RESOURCES);
  assert_int_equal(tc_reason(f.core, 3), PX_REASON_PRIORITY);
  assert_non_null(tc_started(&f.out, 4));
  tc_close(&f);
}


/* Ended jobs are remembered PXC_FINISHED_KEEP_S (300 s) for dependencies:
 * job 1 ends at 100; afterok:1 is accepted (and runs) at 350; after a cycle
 * at 500 the core has forgotten it and refuses the dependency. */
static void finished_jobs_are_forgotten(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(1, 8, 0, 0)};
  tc_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  assert_int_equal(tc_submit(f.core, 1, &s, 10), 0);
  tc_cycle(&f, 20);
  assert_int_equal(pxc_job_ended(f.core, 1, PX_JOB_COMPLETED, 0, 100, NULL), 0);
  tc_cycle(&f, 200);
  s.dependency = (char *)"afterok:1";
  assert_int_equal(pxc_submit(f.core, 2, &s, 350, NULL, NULL), 0);
  tc_cycle(&f, 360);
  assert_non_null(tc_started(&f.out, 2));
  tc_cycle(&f, 500);
  assert_int_equal(pxc_submit(f.core, 3, &s, 500, NULL, NULL), PX_ENOENT);
  tc_close(&f);
}


/* What readers see: an array whose tasks all started is not listed (its
 * tasks are) but can still be fetched; a blocked job explains itself; node
 * views add up. */
static void views_for_readers(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(1, 8, 0, 0)};
  tc_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 2);
  s.array = (char *)"1-3";
  assert_int_equal(tc_submit(f.core, 10, &s, 5), 0);
  s = tc_spec("bob", 1, 8);
  assert_int_equal(tc_submit(f.core, 20, &s, 6), 0);
  tc_cycle(&f, 30);
  assert_int_equal(f.out.len, 3); /* tasks 11, 12, 13 */
  size_t cur = 0, n = 0;
  struct px_job_view v;
  while (px_core_job_next(f.core, &cur, &v)) {
    assert_int_not_equal(v.job_id, 10);
    n++;
  }
  assert_int_equal(n, 4);
  assert_int_equal(px_core_njobs(f.core), 5);
  assert_int_equal(px_core_job_get(f.core, 10, &v), 0);
  assert_int_equal(v.array_tasks_pending, 0);
  assert_int_equal(px_core_job_get(f.core, 20, &v), 0);
  assert_int_equal(v.reason, PX_REASON_RESOURCES);
  assert_non_null(strstr(v.why, "partition p0"));
  assert_int_equal(v.nnodes, 1);
  assert_int_equal(v.ngpus, 8);
  assert_int_equal(px_core_job_get(f.core, 12, &v), 0);
  assert_int_equal(v.state, PX_JOB_RUNNING);
  assert_int_equal(v.array_job_id, 10);
  assert_int_equal(v.array_task_id, 2);
  assert_int_equal(v.nalloc, 1);
  struct px_node_view nv;
  assert_int_equal(px_core_node_get(f.core, 0, &nv), 0);
  assert_int_equal(nv.gpus_alloc, 6);
  assert_int_equal(nv.njobs, 3);
  assert_int_equal(nv.gpus_free, 0xc0);
  assert_int_equal(px_core_node_get(f.core, 1, &nv), PX_ENOENT);
  tc_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(array_spawns_tasks_as_they_start),
      cmocka_unit_test(big_array_costs_one_record),
      cmocka_unit_test(dependencies_resolve),
      cmocka_unit_test(singleton_waits_for_namesake),
      cmocka_unit_test(singleton_in_any_of),
      cmocka_unit_test(holds_and_releases),
      cmocka_unit_test(cancel_and_requeue),
      cmocka_unit_test(begin_time_gates),
      cmocka_unit_test(submit_rejects_impossible_jobs),
      cmocka_unit_test(blocked_job_holds_back_its_partition),
      cmocka_unit_test(finished_jobs_are_forgotten),
      cmocka_unit_test(views_for_readers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
