/*
 * test_plan.c - the service controller (svc/plan.c) over the table's folds
 * (svc/svc.c), driven the way the server drives it: plan, turn each action
 * into the fold its event makes, plan again. Time is an argument.
 */
#include "px_test.h"

#include <string.h>

#include "svc/svc.h"

struct world {
  struct px_svcs t;
  uint64_t next_job;
  size_t submits, drains, stops, scales, rollbacks;
};

static void spec_of(struct px_svc_spec *s, const char *yaml) {
  struct px_diag d;
  if (px_svc_spec_parse(yaml, strlen(yaml), 0, s, &d)) fail_msg("spec: %s", d.msg);
}

static void apply(struct world *w, const char *yaml, int64_t now) {
  struct px_svc_spec s;
  spec_of(&s, yaml);
  assert_int_equal(px_svcs_apply(&w->t, &s, now), 0);
  px_svc_spec_fini(&s);
}

/* One round: plan and fold every action; returns the actions taken. */
static size_t step(struct world *w, const char *name, int64_t now) {
  struct px_svc *s = px_svcs_find(&w->t, name);
  if (!s) return 0;
  struct px_svc_act a[PX_SVC_MAX_ACTS];
  int64_t due;
  size_t n = px_svc_plan(s, now, a, PX_SVC_MAX_ACTS, &due);
  for (size_t i = 0; i < n; i++) {
    switch (a[i].kind) {
      case PX_SVC_ACT_SUBMIT:
        w->submits++;
        assert_int_equal(px_svcs_job_submitted(&w->t, name, a[i].index, a[i].generation, ++w->next_job, now), 0);
        break;
      case PX_SVC_ACT_DRAIN: {
        w->drains++;
        struct px_svc_rep_change c = {.drain = true, .failure = a[i].failure, .reason = a[i].reason};
        assert_int_equal(px_svcs_replica_change(&w->t, name, a[i].job_id, &c, now), 0);
        break;
      }
      case PX_SVC_ACT_STOP: /* the stop, and at once its job's end */
        w->stops++;
        px_svcs_job_stopping(&w->t, name, a[i].job_id);
        px_svcs_job_ended(&w->t, name, a[i].job_id, false, "cancelled", now);
        break;
      case PX_SVC_ACT_SCALE:
        w->scales++;
        assert_int_equal(px_svcs_scale(&w->t, name, a[i].count, a[i].reason, now), 0);
        break;
      case PX_SVC_ACT_ROLLBACK:
        w->rollbacks++;
        assert_int_equal(px_svcs_rollback(&w->t, name, a[i].reason, now), 0);
        break;
    }
  }
  return n;
}

static size_t settle(struct world *w, const char *name, int64_t now) {
  size_t total = 0, n;
  for (int k = 0; k < 20 && (n = step(w, name, now)); k++) total += n;
  return total;
}

/* Starts every pending replica on node 'node++', ready when ready is set. */
static void start_all(struct world *w, const char *name, bool ready, int64_t now) {
  struct px_svc *s = px_svcs_find(&w->t, name);
  for (uint32_t i = 0; i < s->nreps; i++) {
    if (s->reps[i].state != PX_SVC_REP_PENDING) continue;
    assert_int_equal(px_svcs_job_started(&w->t, name, s->reps[i].job_id, i, now), 0);
    if (ready) {
      struct px_svc_rep_change c = {.health = "ready"};
      px_svcs_replica_change(&w->t, name, s->reps[i].job_id, &c, now);
    }
  }
}

static uint32_t count_gen(const struct px_svc *s, uint64_t gen, bool live_only) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->nreps; i++)
    n += s->reps[i].generation == gen && (!live_only || !s->reps[i].terminating);
  return n;
}

static const char *web = "name: web\ncommand: [srv]\nreplicas: 3\ndrain_s: 2\n";

static void replaces_exits_with_backoff_then_crashloop(void **state) {
  struct world w = {0};
  px_svcs_init(&w.t);
  apply(&w, web, 100);
  settle(&w, "web", 100);
  assert_int_equal(w.submits, 3);
  start_all(&w, "web", false, 100);
  struct px_svc *s = px_svcs_find(&w.t, "web");
  char why[256];
  assert_string_equal(px_svc_status(s, 100, why, sizeof why), "Running"); /* health none: ready */
  /* replica 1 exits: replaced at once (first failure waits backoff_s = 1) */
  uint64_t j = s->reps[1].job_id;
  uint32_t idx = s->reps[1].index;
  px_svcs_job_ended(&w.t, "web", j, true, "FAILED exit 1", 200);
  assert_int_equal(step(&w, "web", 200), 0); /* within the backoff */
  assert_int_equal(step(&w, "web", 201), 1);
  assert_int_equal(w.submits, 4);
  /* it keeps failing: 2 s, then 4 s, then CrashLoop with the reason */
  int64_t t = 201;
  for (int k = 0; k < 2; k++) {
    s = px_svcs_find(&w.t, "web");
    start_all(&w, "web", false, t);
    uint64_t jj = 0;
    for (uint32_t i = 0; i < s->nreps; i++)
      if (s->reps[i].index == idx) jj = s->reps[i].job_id;
    px_svcs_job_ended(&w.t, "web", jj, true, "FAILED exit 1", t + 1);
    t += 1;
    assert_int_equal(step(&w, "web", t + (2 << k) - 1), 0);
    assert_int_equal(step(&w, "web", t + (2 << k)), 1);
    t += 2 << k;
  }
  s = px_svcs_find(&w.t, "web");
  assert_string_equal(px_svc_status(s, t, why, sizeof why), "CrashLoop");
  assert_non_null(strstr(why, "failed 3 times in a row (FAILED exit 1)"));
  px_svcs_fini(&w.t);
}

static void unhealthy_replica_drained_then_replaced(void **state) {
  struct world w = {0};
  px_svcs_init(&w.t);
  apply(&w, "name: web\ncommand: [srv]\nreplicas: 2\nports: [http]\nhealth: {http: /h}\n", 0);
  settle(&w, "web", 0);
  start_all(&w, "web", true, 0);
  struct px_svc *s = px_svcs_find(&w.t, "web");
  assert_int_equal(px_svc_ready(s), 2);
  uint64_t j = s->reps[0].job_id;
  struct px_svc_rep_change c = {.health = "unhealthy", .reason = "GET /h: 503"};
  px_svcs_replica_change(&w.t, "web", j, &c, 10);
  assert_int_equal(step(&w, "web", 10), 1); /* drained (out of the endpoints), counted */
  assert_true(px_svc_replica_find(s, j)->terminating);
  assert_non_null(strstr(px_svc_replica_find(s, j)->reason, "503"));
  step(&w, "web", 11); /* its index waits for the backoff (1 s) */
  assert_int_equal(w.submits, 3);
  assert_int_equal(w.stops, 0);
  step(&w, "web", 12); /* drain_s (2) passed: stopped */
  assert_int_equal(w.stops, 1);
  assert_null(px_svc_replica_find(px_svcs_find(&w.t, "web"), j));
  px_svcs_fini(&w.t);
}

static void scale_up_and_down(void **state) {
  struct world w = {0};
  px_svcs_init(&w.t);
  apply(&w, web, 0);
  settle(&w, "web", 0);
  start_all(&w, "web", true, 0);
  px_svcs_scale(&w.t, "web", 5, "by alice", 1);
  settle(&w, "web", 1);
  assert_int_equal(w.submits, 5);
  start_all(&w, "web", true, 1);
  px_svcs_scale(&w.t, "web", 2, "by alice", 2);
  settle(&w, "web", 2);
  assert_int_equal(w.drains, 3); /* indices 2, 3 and 4 */
  settle(&w, "web", 4);
  assert_int_equal(w.stops, 3);
  struct px_svc *s = px_svcs_find(&w.t, "web");
  assert_int_equal(s->nreps, 2);
  for (uint32_t i = 0; i < s->nreps; i++) assert_true(s->reps[i].index < 2);
  assert_string_equal(s->decisions[(s->ndecisions - 1) % PX_SVC_DECISIONS].reason, "by alice");
  px_svcs_fini(&w.t);
}

/* max_surge 1, max_unavailable 0: one new replica at a time, the old one
 * drained only once its successor is ready; never fewer than 3 ready. */
static void rolling_update_steps(void **state) {
  struct world w = {0};
  px_svcs_init(&w.t);
  apply(&w, "name: web\ncommand: [v1]\nreplicas: 3\nports: [http]\nhealth: {http: /h}\n", 0);
  settle(&w, "web", 0);
  start_all(&w, "web", true, 0);
  apply(&w, "name: web\ncommand: [v2]\nreplicas: 3\nports: [http]\nhealth: {http: /h}\n", 10);
  struct px_svc *s = px_svcs_find(&w.t, "web");
  assert_int_equal(s->generation, 2);
  int64_t t = 10;
  char why[256];
  for (int round = 0; round < 3; round++) {
    settle(&w, "web", t);
    assert_int_equal(count_gen(s, 2, true), (uint32_t)round + 1); /* one surge at a time */
    assert_string_equal(px_svc_status(s, t, why, sizeof why), "Updating");
    assert_true(px_svc_ready(s) >= 3);
    start_all(&w, "web", false, t); /* started, not ready: nothing more happens */
    assert_int_equal(settle(&w, "web", t + 1), 0);
    start_all(&w, "web", true, t + 1);
    for (uint32_t i = 0; i < s->nreps; i++) /* ready now */
      if (s->reps[i].generation == 2 && s->reps[i].state != PX_SVC_REP_READY) {
        struct px_svc_rep_change c = {.health = "ready"};
        px_svcs_replica_change(&w.t, "web", s->reps[i].job_id, &c, t + 1);
      }
    settle(&w, "web", t + 1); /* its predecessor drained */
    assert_true(px_svc_ready(s) >= 3);
    t += 5;
    settle(&w, "web", t); /* and stopped after drain_s */
  }
  settle(&w, "web", t);
  assert_int_equal(count_gen(s, 1, false), 0);
  assert_int_equal(count_gen(s, 2, true), 3);
  assert_string_equal(px_svc_status(s, t, why, sizeof why), "Running");
  px_svcs_fini(&w.t);
}

static void check_bounds(const struct px_svc *s, uint32_t want, uint32_t surge, uint32_t unavailable) {
  uint32_t live = 0;
  for (uint32_t i = 0; i < s->nreps; i++) live += !s->reps[i].terminating;
  assert_true(px_svc_ready(s) + unavailable >= want); /* in the endpoints */
  assert_true(live <= want + surge);
}

/* Each strategy keeps its bounds at every step of an update of 8 replicas
 * (at least replicas - max_unavailable in the endpoints, at most replicas +
 * max_surge live), and the update ends with 8 new ones. A replica becomes
 * ready a second after its start. */
static void rolling_update_bounds_of_8(void **state) {
  static const uint32_t strategies[][2] = {{1, 0}, {2, 0}, {0, 1}, {3, 2}};
  for (size_t k = 0; k < sizeof strategies / sizeof strategies[0]; k++) {
    uint32_t surge = strategies[k][0], unavailable = strategies[k][1];
    char v1[256], v2[256];
    const char *fmt = "name: web\ncommand: [%s]\nreplicas: 8\nports: [http]\nhealth: {http: /h}\n"
                      "update: {max_surge: %u, max_unavailable: %u}\ndrain_s: 1\n";
    snprintf(v1, sizeof v1, fmt, "v1", surge, unavailable);
    snprintf(v2, sizeof v2, fmt, "v2", surge, unavailable);
    struct world w = {0};
    px_svcs_init(&w.t);
    apply(&w, v1, 0);
    settle(&w, "web", 0);
    start_all(&w, "web", true, 0);
    apply(&w, v2, 10);
    struct px_svc *s = px_svcs_find(&w.t, "web");
    int64_t t = 10;
    for (; t < 200 && !(count_gen(s, 1, false) == 0 && count_gen(s, 2, true) == 8); t++) {
      settle(&w, "web", t);
      check_bounds(s, 8, surge, unavailable);
      for (uint32_t i = 0; i < s->nreps; i++)
        if (s->reps[i].state == PX_SVC_REP_STARTING && s->reps[i].start_s < t) {
          struct px_svc_rep_change c = {.health = "ready"};
          px_svcs_replica_change(&w.t, "web", s->reps[i].job_id, &c, t);
        }
      start_all(&w, "web", false, t);
      check_bounds(s, 8, surge, unavailable);
    }
    assert_true(t < 200);
    assert_int_equal(px_svc_ready(s), 8);
    px_svcs_fini(&w.t);
  }
}

/* A new generation that never becomes ready is rolled back, with the reason. */
static void rollback_when_never_ready(void **state) {
  struct world w = {0};
  px_svcs_init(&w.t);
  const char *v1 = "name: web\ncommand: [v1]\nreplicas: 2\nports: [http]\nhealth: {http: /h}\n"
                   "update: {progress_deadline_s: 30}\n";
  apply(&w, v1, 0);
  settle(&w, "web", 0);
  start_all(&w, "web", true, 0);
  apply(&w, "name: web\ncommand: [v2]\nreplicas: 2\nports: [http]\nhealth: {http: /h}\n"
            "update: {progress_deadline_s: 30}\n", 100);
  settle(&w, "web", 100);
  start_all(&w, "web", false, 101);
  struct px_svc *s = px_svcs_find(&w.t, "web");
  assert_int_equal(settle(&w, "web", 129), 0);
  assert_int_equal(w.rollbacks, 0);
  settle(&w, "web", 130);
  assert_int_equal(w.rollbacks, 1);
  assert_int_equal(s->generation, 3);
  assert_string_equal(s->spec.argv[0], "v1");
  assert_non_null(strstr(s->rollback_reason, "generation 2 not ready within 30s"));
  /* the v2 replica goes (its index has a v1 one, ready); the v1 replicas
   * run the spec rolled back to: they stay, and nothing new starts */
  size_t submits = w.submits;
  settle(&w, "web", 140);
  assert_int_equal(count_gen(s, 2, false), 0);
  assert_int_equal(count_gen(s, 1, true), 2);
  assert_int_equal(w.submits, submits);
  assert_int_equal(px_svc_ready(s), 2);
  char why[256];
  px_svc_status(s, 140, why, sizeof why);
  assert_non_null(strstr(why, "rolled back"));
  px_svcs_fini(&w.t);
}

/* A new generation that crashes 3 times in a row is rolled back; its
 * streak is then the reason shown, not the state (Running, not CrashLoop). */
static void rollback_after_crashloop_runs_again(void **state) {
  struct world w = {0};
  px_svcs_init(&w.t);
  apply(&w, "name: web\ncommand: [v1]\nreplicas: 2\n", 0);
  settle(&w, "web", 0);
  start_all(&w, "web", true, 0);
  apply(&w, "name: web\ncommand: [v2]\nreplicas: 2\n", 100);
  struct px_svc *s = px_svcs_find(&w.t, "web");
  int64_t t = 100;
  for (int k = 0; k < 3 && !w.rollbacks; k++) { /* each v2 replica exits at once */
    t += 10;
    settle(&w, "web", t);
    start_all(&w, "web", false, t);
    for (uint32_t i = s->nreps; i-- > 0;)
      if (s->reps[i].generation == 2) px_svcs_job_ended(&w.t, "web", s->reps[i].job_id, true, "FAILED exit 1", t);
    settle(&w, "web", t);
  }
  assert_int_equal(w.rollbacks, 1);
  assert_int_equal(s->generation, 3);
  assert_string_equal(s->spec.argv[0], "v1");
  settle(&w, "web", t + 60);
  start_all(&w, "web", true, t + 60);
  settle(&w, "web", t + 60);
  char why[256];
  assert_string_equal(px_svc_status(s, t + 60, why, sizeof why), "Running");
  assert_non_null(strstr(why, "rolled back: generation 2 failed 3 times in a row"));
  assert_int_equal(px_svc_ready(s), 2);
  px_svcs_fini(&w.t);
}

/* HPA's windows: up at once with a 0 s window; down only when the highest
 * recommendation of the last 60 s is lower. Every decision has its reason. */
static void autoscale_windows(void **state) {
  struct world w = {0};
  px_svcs_init(&w.t);
  apply(&w, "name: api\ncommand: [srv]\nautoscale: {min: 1, max: 4, target_in_flight: 10, "
            "scale_up_window_s: 0, scale_down_window_s: 60}\n", 0);
  settle(&w, "api", 0);
  struct px_svc *s = px_svcs_find(&w.t, "api");
  assert_int_equal(s->replicas, 1);
  px_svc_load(s, 35, 100, 10);
  settle(&w, "api", 10);
  assert_int_equal(s->replicas, 4);
  assert_non_null(strstr(s->decisions[(s->ndecisions - 1) % PX_SVC_DECISIONS].reason,
                         "35.0 in flight over 1 replicas, target 10 each: 4"));
  px_svc_load(s, 500, 100, 11); /* never over max */
  settle(&w, "api", 11);
  assert_int_equal(s->replicas, 4);
  for (int64_t t = 12; t < 71; t++) { /* load gone; the window holds 4 */
    px_svc_load(s, 0, 0, t);
    settle(&w, "api", t);
    assert_int_equal(s->replicas, 4);
  }
  px_svc_load(s, 0, 0, 72);
  settle(&w, "api", 72);
  assert_int_equal(s->replicas, 1);
  /* a stale signal decides nothing */
  px_svc_load(s, 40, 0, 100);
  settle(&w, "api", 100 + PX_SVC_LOAD_STALE_S + 1);
  assert_int_equal(s->replicas, 1);
  px_svcs_fini(&w.t);
}

/* Spread: one pending replica at a time, so each is placed knowing where
 * the others run. */
static void spread_submits_one_at_a_time(void **state) {
  struct world w = {0};
  px_svcs_init(&w.t);
  apply(&w, "name: web\ncommand: [srv]\nreplicas: 3\nspread: true\n", 0);
  settle(&w, "web", 0);
  assert_int_equal(w.submits, 1);
  for (int k = 2; k <= 3; k++) {
    start_all(&w, "web", true, k);
    settle(&w, "web", k);
    assert_int_equal(w.submits, (size_t)k);
  }
  px_svcs_fini(&w.t);
}

static void delete_drains_then_forgets(void **state) {
  struct world w = {0};
  px_svcs_init(&w.t);
  apply(&w, web, 0);
  settle(&w, "web", 0);
  start_all(&w, "web", true, 0);
  assert_int_equal(px_svcs_delete(&w.t, "web", 5), 0);
  settle(&w, "web", 5);
  assert_int_equal(w.drains, 3);
  assert_non_null(px_svcs_find(&w.t, "web"));
  settle(&w, "web", 7);
  assert_int_equal(w.stops, 3);
  assert_null(px_svcs_find(&w.t, "web"));
  px_svcs_fini(&w.t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(replaces_exits_with_backoff_then_crashloop),
      cmocka_unit_test(unhealthy_replica_drained_then_replaced),
      cmocka_unit_test(scale_up_and_down),
      cmocka_unit_test(rolling_update_steps),
      cmocka_unit_test(rolling_update_bounds_of_8),
      cmocka_unit_test(rollback_when_never_ready),
      cmocka_unit_test(rollback_after_crashloop_runs_again),
      cmocka_unit_test(autoscale_windows),
      cmocka_unit_test(spread_submits_one_at_a_time),
      cmocka_unit_test(delete_drains_then_forgets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
