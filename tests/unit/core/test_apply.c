/*
 * px_core_apply, one test per event kind: what an accepted event changes
 * and what the result says the core decided; and for each kind a refusal,
 * which must leave the core exactly as it was (a fingerprint of every job
 * and node view, taken before and after, must not move).
 */
#include "px_test.h"

#include "core/coretest.h"
#include "core/event.h"

/* FNV-1a over everything a reader can see of jobs and nodes. */
static uint64_t mix(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; i++) h = (h ^ (v >> (8 * i) & 0xff)) * 1099511628211ull;
  return h;
}

static uint64_t fingerprint(struct px_core *c) {
  uint64_t h = 1469598103934665603ull;
  size_t cur = 0;
  struct px_job_view v;
  while (px_core_job_next(c, &cur, &v)) {
    h = mix(h, v.job_id), h = mix(h, v.state), h = mix(h, v.held_user), h = mix(h, v.held_admin);
    h = mix(h, (uint64_t)v.prio.nice), h = mix(h, (uint64_t)v.time_limit_s), h = mix(h, v.restarts);
    h = mix(h, v.nalloc), h = mix(h, v.array_tasks_pending);
  }
  for (uint32_t n = 0; n < px_core_nnodes(c); n++) {
    struct px_node_view nv;
    px_core_node_get(c, n, &nv);
    h = mix(h, nv.avail), h = mix(h, nv.gpus_alloc), h = mix(h, nv.njobs);
  }
  struct px_core_stats st;
  px_core_stats(c, &st);
  return mix(mix(h, st.pending_records), px_core_njobs(c));
}

static int apply(struct tc_fx *f, struct px_event ev, int64_t now, struct px_event_result *res) {
  return px_core_apply(f->core, &ev, now, res);
}

/* The refusal rc of ev, checking that nothing changed and diag says why. */
static void refused(struct tc_fx *f, struct px_event ev, int rc, const char *field) {
  uint64_t before = fingerprint(f->core);
  struct px_event_result res;
  assert_int_equal(px_core_apply(f->core, &ev, 50, &res), rc);
  assert_int_equal(res.rc, rc);
  assert_true(fingerprint(f->core) == before);
  if (field) assert_non_null(strstr(res.diag.msg, field));
}

static struct px_event submit_ev(uint64_t id, struct px_jobspec *s) {
  return (struct px_event){.kind = PX_EV_SUBMIT, .job_id = id, .spec = s};
}

static void open_fx(struct tc_fx *f) {
  f->conf = tc_conf(2, 8, 0, 0);
  tc_open(f);
}

/* Jobs 1..n of alice, each asking ngpu GPUs, accepted at time 10. */
static void submit_n(struct tc_fx *f, int n, uint32_t ngpu) {
  struct px_event_result res;
  for (int i = 1; i <= n; i++) {
    struct px_jobspec s = tc_spec("alice", 0, ngpu);
    assert_int_equal(apply(f, submit_ev((uint64_t)i, &s), 10, &res), 0);
  }
}

/* A submit says the ids it took and the account it chose. */
static void submit_decides_ids_and_account(void **state) {
  (void)state;
  struct tc_fx f;
  open_fx(&f);
  struct px_event_result res;
  struct px_jobspec s = tc_spec("alice", 0, 1);
  assert_int_equal(apply(&f, submit_ev(1, &s), 10, &res), 0);
  assert_int_equal(res.nids, 1);
  assert_int_equal(res.account, 1); /* "acct", the only account of alice */
  assert_string_equal(f.conf->accounts[res.account].name, "acct");
  struct px_jobspec a = tc_spec("bob", 0, 1);
  a.array = (char *)"0-4";
  assert_int_equal(apply(&f, submit_ev(2, &a), 10, &res), 0);
  assert_int_equal(res.nids, 6);
  struct px_jobspec bad = tc_spec("alice", 0, 1);
  bad.partition = (char *)"nosuch";
  refused(&f, submit_ev(10, &bad), PX_ENOENT, "partition");
  refused(&f, submit_ev(1, &s), PX_EEXIST, "job_id");
  refused(&f, (struct px_event){.kind = PX_EV_SUBMIT, .job_id = 11}, PX_EINVAL, "spec");
  tc_close(&f);
}

/* CANCEL: a pending job leaves; a running one is the caller's to stop; an
 * unknown one changes nothing and is not an error (recovery tracks jobs the
 * core does not hold). */
static void cancel_pending_running_unknown(void **state) {
  (void)state;
  struct tc_fx f;
  open_fx(&f);
  struct px_event_result res;
  submit_n(&f, 3, 8);
  tc_cycle(&f, 20); /* 1 and 2 run on the two nodes */
  assert_non_null(tc_started(&f.out, 1));
  struct px_event cancel = {.kind = PX_EV_CANCEL, .job_id = 3};
  assert_int_equal(apply(&f, cancel, 30, &res), 0);
  assert_true(res.known && !res.running);
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f.core, 3, &v), PX_ENOENT);
  cancel.job_id = 1;
  uint64_t before = fingerprint(f.core);
  assert_int_equal(apply(&f, cancel, 30, &res), 0);
  assert_true(res.known && res.running);
  assert_true(fingerprint(f.core) == before); /* still running until its END */
  cancel.job_id = 99;
  assert_int_equal(apply(&f, cancel, 30, &res), 0);
  assert_false(res.known);
  assert_true(fingerprint(f.core) == before);
  tc_close(&f);
}

static void hold_release_update(void **state) {
  (void)state;
  struct tc_fx f;
  open_fx(&f);
  struct px_event_result res;
  submit_n(&f, 1, 1);
  assert_int_equal(
      apply(&f, (struct px_event){.kind = PX_EV_HOLD, .job_id = 1, .admin = true}, 11, &res), 0);
  assert_int_equal(tc_reason(f.core, 1), PX_REASON_HELD_ADMIN);
  refused(&f, (struct px_event){.kind = PX_EV_RELEASE, .job_id = 1}, PX_EPERM, "administrator");
  assert_int_equal(
      apply(&f, (struct px_event){.kind = PX_EV_RELEASE, .job_id = 1, .admin = true}, 12, &res), 0);
  struct px_event upd = {
      .kind = PX_EV_UPDATE,
      .job_id = 1,
      .update = {.fields = PX_UPD_NICE | PX_UPD_TIME_LIMIT, .nice = 7, .time_limit_s = 60}};
  assert_int_equal(apply(&f, upd, 13, &res), 0);
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f.core, 1, &v), 0);
  assert_int_equal(v.prio.nice, 7);
  assert_int_equal(v.time_limit_s, 60);
  upd.update = (struct px_job_update){.fields = PX_UPD_TIME_LIMIT, .time_limit_s = -1};
  refused(&f, upd, PX_EINVAL, "time_limit");
  refused(&f, (struct px_event){.kind = PX_EV_HOLD, .job_id = 42}, PX_ENOENT, "job_id");
  tc_close(&f);
}

/* START (what recovery replays): the job runs on exactly that allocation;
 * when the nodes no longer hold it, outside the scheduler. */
static void start_restores_or_runs_outside(void **state) {
  (void)state;
  struct tc_fx f;
  open_fx(&f);
  struct px_event_result res;
  submit_n(&f, 2, 2);
  struct px_alloc a = {.node = 1, .ncpu = 1, .gpus = 0x3, .mem_mib = 1024};
  struct px_event start = {.kind = PX_EV_START,
                           .job_id = 1,
                           .alloc = &a,
                           .nalloc = 1,
                           .time_limit_s = 600,
                           .array_task_id = PX_NONE};
  assert_int_equal(apply(&f, start, 20, &res), 0);
  assert_true(res.known && !res.outside);
  struct px_node_view nv;
  px_core_node_get(f.core, 1, &nv);
  assert_int_equal(nv.gpus_alloc, 2);
  /* the same GPUs again: job 2 cannot have them, it runs outside */
  start.job_id = 2;
  assert_int_equal(apply(&f, start, 20, &res), 0);
  assert_true(res.outside && !res.known);
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f.core, 2, &v), PX_ENOENT);
  px_core_node_get(f.core, 1, &nv);
  assert_int_equal(nv.gpus_alloc, 2);
  /* a start of a running job is a bad record */
  start.job_id = 1;
  refused(&f, start, PX_ESTATE, NULL);
  tc_close(&f);
}

/* An array task whose allocation is gone keeps its index used. */
static void start_of_array_task_outside(void **state) {
  (void)state;
  struct tc_fx f;
  open_fx(&f);
  struct px_event_result res;
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.array = (char *)"0-1";
  assert_int_equal(apply(&f, submit_ev(10, &s), 10, &res), 0);
  struct px_alloc bad = {.node = 7, .ncpu = 1, .gpus = 1, .mem_mib = 1}; /* no node 7 */
  struct px_event start = {.kind = PX_EV_START,
                           .job_id = 11,
                           .alloc = &bad,
                           .nalloc = 1,
                           .array_job_id = 10,
                           .array_task_id = 0};
  assert_int_equal(apply(&f, start, 20, &res), 0);
  assert_true(res.outside && res.known);
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f.core, 10, &v), 0);
  assert_int_equal(v.array_tasks_pending, 1);
  assert_int_equal(
      apply(&f, (struct px_event){.kind = PX_EV_END, .job_id = 11, .state = PX_JOB_COMPLETED}, 30,
            &res),
      0);
  assert_true(res.known);
  tc_close(&f);
}

/* END frees the resources; REQUEUE puts the job back; both refuse what
 * does not fit and change nothing. */
static void end_and_requeue(void **state) {
  (void)state;
  struct tc_fx f;
  open_fx(&f);
  struct px_event_result res;
  submit_n(&f, 2, 8);
  tc_cycle(&f, 20);
  struct px_event rq = {.kind = PX_EV_REQUEUE, .job_id = 1};
  assert_int_equal(apply(&f, rq, 30, &res), 0);
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f.core, 1, &v), 0);
  assert_int_equal(v.state, PX_JOB_PENDING);
  assert_int_equal(v.restarts, 1);
  refused(&f, rq, PX_ESTATE, "not running");
  struct px_event end = {.kind = PX_EV_END, .job_id = 2, .state = PX_JOB_PENDING};
  refused(&f, end, PX_EINVAL, "state");
  end.state = PX_JOB_COMPLETED;
  assert_int_equal(apply(&f, end, 40, &res), 0);
  assert_int_equal(px_core_job_get(f.core, 2, &v), PX_ENOENT);
  uint64_t before = fingerprint(f.core);
  assert_int_equal(apply(&f, end, 41, &res), 0); /* a repeated end: nothing */
  assert_false(res.known);
  assert_true(fingerprint(f.core) == before);
  /* a job the core does not hold is queued again from its spec */
  struct px_jobspec again = tc_spec("bob", 0, 1);
  rq = (struct px_event){
      .kind = PX_EV_REQUEUE, .job_id = 5, .spec = &again, .submit_s = 3, .hold = true};
  assert_int_equal(apply(&f, rq, 50, &res), 0);
  assert_int_equal(px_core_job_get(f.core, 5, &v), 0);
  assert_int_equal(v.submit_s, 3);
  assert_true(v.held_user);
  tc_close(&f);
}

static void nodes_and_partitions(void **state) {
  (void)state;
  struct tc_fx f;
  open_fx(&f);
  struct px_event_result res;
  struct px_node_view nv;
  assert_int_equal(
      apply(&f, (struct px_event){.kind = PX_EV_NODE_DRAIN, .node = 0, .reason = "fan"}, 10, &res),
      0);
  px_core_node_get(f.core, 0, &nv);
  assert_int_equal(nv.avail, PX_NODE_DRAIN);
  assert_string_equal(nv.reason, "fan");
  assert_int_equal(apply(&f, (struct px_event){.kind = PX_EV_NODE_RESUME, .node = 0}, 11, &res), 0);
  assert_int_equal(apply(&f, (struct px_event){.kind = PX_EV_NODE_DOWN, .node = 1}, 11, &res), 0);
  px_core_node_get(f.core, 1, &nv);
  assert_int_equal(nv.avail, PX_NODE_DOWN);
  assert_int_equal(apply(&f, (struct px_event){.kind = PX_EV_NODE_UP, .node = 1}, 12, &res), 0);
  px_core_node_get(f.core, 1, &nv);
  assert_int_equal(nv.avail, PX_NODE_UP);
  refused(&f, (struct px_event){.kind = PX_EV_NODE_DRAIN, .node = 9}, PX_ENOENT, "node");
  assert_int_equal(apply(&f, (struct px_event){.kind = PX_EV_PART_DOWN, .part = 0}, 13, &res), 0);
  assert_false(px_core_partition_up(f.core, 0));
  assert_int_equal(apply(&f, (struct px_event){.kind = PX_EV_PART_UP, .part = 0}, 14, &res), 0);
  assert_true(px_core_partition_up(f.core, 0));
  refused(&f, (struct px_event){.kind = PX_EV_PART_DOWN, .part = 5}, PX_ENOENT, "partition");
  refused(&f, (struct px_event){.kind = PX_EV_COUNT}, PX_EINVAL, "kind");
  tc_close(&f);
}

static void reservations(void **state) {
  (void)state;
  struct tc_fx f;
  open_fx(&f);
  struct px_event_result res;
  uint32_t node = 1;
  struct px_resv_spec r = {.name = "maint",
                           .start_s = 100,
                           .end_s = 200,
                           .nodes = &node,
                           .nnodes = 1,
                           .partition = PX_NONE,
                           .account = PX_NONE,
                           .maintenance = true};
  assert_int_equal(apply(&f, (struct px_event){.kind = PX_EV_RESV, .resv = &r}, 10, &res), 0);
  refused(&f, (struct px_event){.kind = PX_EV_RESV, .resv = &r}, PX_EEXIST, NULL);
  refused(&f, (struct px_event){.kind = PX_EV_RESV}, PX_EINVAL, "resv");
  tc_close(&f);
}

static void kind_names_round_trip(void **state) {
  (void)state;
  for (int k = 0; k < PX_EV_COUNT; k++) {
    enum px_event_kind back;
    assert_true(px_event_kind_parse(px_event_kind_name((enum px_event_kind)k), &back));
    assert_int_equal(back, k);
  }
  enum px_event_kind x;
  assert_false(px_event_kind_parse("nosuch", &x));
  assert_null(px_event_kind_name(PX_EV_COUNT));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(submit_decides_ids_and_account),
      cmocka_unit_test(cancel_pending_running_unknown),
      cmocka_unit_test(hold_release_update),
      cmocka_unit_test(start_restores_or_runs_outside),
      cmocka_unit_test(start_of_array_task_outside),
      cmocka_unit_test(end_and_requeue),
      cmocka_unit_test(nodes_and_partitions),
      cmocka_unit_test(reservations),
      cmocka_unit_test(kind_names_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
