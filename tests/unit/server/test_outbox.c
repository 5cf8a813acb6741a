/*
 * test_outbox.c - the agents' order queues (server/nodes/outbox.c) and the
 * protocol's versions: a running job's new time limit (a signal order with
 * "time_limit_s") reaches an agent that takes it, and is left out for one
 * that registered an older version (whose strict decoder would refuse the
 * whole answer, and every poll after it, with the cancel queued beside).
 * The answer's seq covers the order left out, so the agent acknowledges it.
 */
#include "px_test.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "proto/agent_msg.h"
#include "server/nodes/nodes.h"

static char *order(const struct px_signal_order *o) { return px_signal_order_encode(o); }

/* Queues a new time limit, then a cancel, for node 0; the answer's signals
 * (their count, the first's job) and seq as the node's agent would take it. */
static void answer(struct px_outbox *box, size_t *nsig, json_int_t *first_job, uint64_t *seq) {
  struct px_signal_order limit = {.job_id = 7, .grace_s = -1, .time_limit_s = 3600};
  struct px_signal_order cancel = {.job_id = 8, .signal = 15, .grace_s = 30, .reason = "CANCELLED"};
  assert_int_equal(px_outbox_push(box, 0, PX_ORDER_SIGNAL, order(&limit)), 0);
  assert_int_equal(px_outbox_push(box, 0, PX_ORDER_SIGNAL, order(&cancel)), 0);
  char *s = px_outbox_take(box, 0, 0);
  assert_non_null(s);
  struct px_agent_work w;
  struct px_diag d;
  assert_int_equal(px_agent_work_decode(s, &w, &d), 0);
  *nsig = w.nsignal;
  *first_job = w.nsignal ? (json_int_t)w.signal[0].job_id : 0;
  *seq = w.seq;
  px_agent_work_fini(&w);
  /* acknowledged: nothing is left after this seq */
  free(s);
  s = px_outbox_take(box, 0, *seq);
  json_t *j = json_loads(s, 0, NULL);
  assert_int_equal(json_array_size(json_object_get(j, "signal")), 0);
  json_decref(j);
  free(s);
}

static void time_limit_by_version(void **state) {
  (void)state;
  struct px_conf conf = {.nnodes = 2};
  struct px_outbox *box = px_outbox_new(&conf);
  assert_non_null(box);
  size_t n;
  json_int_t first;
  uint64_t seq, before;
  /* not registered yet (a server just restarted): sent as to a current agent */
  answer(box, &n, &first, &seq);
  assert_int_equal(n, 2);
  assert_int_equal(first, 7);
  px_outbox_agent_version(box, 0, "0.1.0");
  before = seq;
  answer(box, &n, &first, &seq);
  assert_int_equal(n, 1);
  assert_int_equal(first, 8);
  assert_int_equal(seq, before + 2); /* the limit's seq is acknowledged with the cancel's */
  px_outbox_agent_version(box, 0, PX_AGENT_VERSION);
  answer(box, &n, &first, &seq);
  assert_int_equal(n, 2);
  assert_int_equal(first, 7);
  px_outbox_free(box);
}

/* Only the new time limit queued for an old agent: the answer carries no
 * order but a seq past it, so the next poll waits instead of answering
 * the same empty list again at once. */
static void limit_alone_is_acknowledged(void **state) {
  (void)state;
  struct px_conf conf = {.nnodes = 1};
  struct px_outbox *box = px_outbox_new(&conf);
  px_outbox_agent_version(box, 0, "0.1.0");
  struct px_signal_order limit = {.job_id = 7, .grace_s = -1, .time_limit_s = 60};
  assert_int_equal(px_outbox_push(box, 0, PX_ORDER_SIGNAL, order(&limit)), 0);
  char *s = px_outbox_take(box, 0, 0);
  struct px_agent_work w;
  struct px_diag d;
  assert_int_equal(px_agent_work_decode(s, &w, &d), 0);
  assert_int_equal(w.nsignal, 0);
  assert_true(w.seq > 0);
  free(s);
  assert_false(px_outbox_park(box, 0, w.seq, 0, NULL, NULL)); /* nothing left to take */
  px_agent_work_fini(&w);
  px_outbox_stop(box);
  px_outbox_free(box);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(time_limit_by_version),
      cmocka_unit_test(limit_alone_is_acknowledged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
