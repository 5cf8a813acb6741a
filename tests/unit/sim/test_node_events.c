/*
 * test_node_events.c - a record's node down and drain periods
 * (node_events.h): the reader's fields and its precise errors (line,
 * column, field), binding to the cluster, the timeline's order, and the
 * replay of an outage worked by hand: the job the record shows requeued by
 * NODE_FAIL is requeued by the replay at the outage's start and runs again
 * once the node is back, as on the cluster.
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cluster.h"
#include "sim/node_events.h"
#include "sim/policy.h"
#include "sim/run.h"

static const char HDR[] = "node,state,start_s,end_s,reason,cause,user,time0_unix_s\n";

static int parse(struct px_node_events *e, const char *rows, struct px_diag *d) {
  char text[1024];
  snprintf(text, sizeof text, "%s%s", HDR, rows);
  return px_node_events_parse(e, text, strlen(text), d);
}

static void test_fields(void **state) {
  (void)state;
  struct px_node_events e;
  struct px_diag d;
  assert_int_equal(parse(&e, "n01,DOWN,10,30,Not responding,,root,1700000000\n"
                             "\"n02\",DRAIN,30,,\"psu, fan\",operator,pxoper,1700000000\n\n",
                         &d),
                   0);
  assert_int_equal(e.spans.len, 2);
  const struct px_node_span *a = &e.spans.v[0], *b = &e.spans.v[1];
  assert_string_equal(e.names.v + a->name_off, "n01");
  assert_true(a->down);
  assert_int_equal(a->start_s, 10);
  assert_int_equal(a->end_s, 30);
  assert_int_equal(a->line, 2);
  assert_string_equal(e.names.v + b->name_off, "n02");
  assert_false(b->down);
  assert_int_equal(b->end_s, INT64_MAX); /* still open */
  assert_int_equal(e.time0_unix_s, 1700000000);
  px_node_events_fini(&e);
}

/* Each bad row: the error names its line, column and field; nothing is kept. */
static void test_errors(void **state) {
  (void)state;
  static const struct {
    const char *rows, *msg;
  } cases[] = {
      {"n01,UP,1,2,,,,\n", "line 2, column 5 (state): expected DOWN or DRAIN"},
      {"n01,DOWN,5,4,,,,\n", "line 2, column 12 (end_s): before start_s"},
      {"n01,DOWN,1.5,4,,,,\n", "line 2, column 10 (start_s): not a whole number of seconds"},
      {"n01,DOWN,-1,4,,,,\n", "line 2, column 10 (start_s): negative number"},
      {"n01,DOWN,,4,,,,\n", "line 2, column 10 (start_s): empty, but a period has a start"},
      {",DOWN,1,4,,,,\n", "line 2, column 1 (node): empty, but a period is a node's"},
      {"n01,DOWN,1,4,,,,1\nn01,DOWN,1,4,,,,2\n", "line 3, column 17 (time0_unix_s): differs from an earlier row's"},
      {"n01,DOWN,1,4,\"x,,,\n", "line 2, column 14: unterminated quoted field"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct px_node_events e;
    struct px_diag d;
    assert_int_equal(parse(&e, cases[i].rows, &d), PX_EPARSE);
    if (!strstr(d.msg, cases[i].msg)) fail_msg("case %zu: %s, want %s", i, d.msg, cases[i].msg);
    assert_int_equal(e.spans.len, 0);
  }
  struct px_node_events e;
  struct px_diag d;
  const char *no_end = "node,state,start_s\nn01,DOWN,1\n";
  assert_int_equal(px_node_events_parse(&e, no_end, strlen(no_end), &d), PX_EPARSE);
  assert_non_null(strstr(d.msg, "line 1, column 1 (end_s): the header lacks this column"));
  assert_int_equal(px_node_events_parse(&e, "", 0, &d), PX_EPARSE);
  assert_non_null(strstr(d.msg, "empty file: no header line"));
}

static void test_bind(void **state) {
  (void)state;
  const char *acc[] = {"qa"};
  struct px_conf *conf = px_sim_cluster_new(2, 8, acc, 1, NULL);
  assert_non_null(conf);
  struct px_node_events e;
  struct px_diag d;
  char rows[128];
  snprintf(rows, sizeof rows, "%s,DOWN,1,4,,,,7\n%s,DRAIN,2,,,,,7\n", conf->nodes[1].name, conf->nodes[0].name);
  assert_int_equal(parse(&e, rows, &d), 0);
  assert_int_equal(px_node_events_bind(&e, conf, 7, &d), 0);
  assert_int_equal(e.spans.v[0].node, 1);
  assert_int_equal(e.spans.v[1].node, 0);
  assert_int_equal(px_node_events_bind(&e, conf, 8, &d), PX_EINVAL); /* another export's */
  assert_non_null(strstr(d.msg, "time0_unix_s 7 is not the jobs trace's (8)"));
  px_node_events_fini(&e);
  snprintf(rows, sizeof rows, "%s,DOWN,1,4,,,,\nnowhere,DOWN,1,4,,,,\n", conf->nodes[0].name);
  assert_int_equal(parse(&e, rows, &d), 0);
  assert_int_equal(px_node_events_bind(&e, conf, 0, &d), PX_ENOENT);
  assert_non_null(strstr(d.msg, "line 3, column 1 (node): nowhere is not a node of the cluster"));
  px_node_events_fini(&e);
  px_conf_free(conf);
}

/* At one time: ends of earlier periods, beginnings, then the ends of
 * periods as long as nothing (down and back within a second). */
static void test_timeline_order(void **state) {
  (void)state;
  struct px_node_events e;
  struct px_diag d;
  assert_int_equal(parse(&e, "a,DRAIN,5,9,,,,\na,DOWN,0,5,,,,\nb,DOWN,5,5,,,,\nb,DRAIN,7,,,,,\n", &d), 0);
  for (size_t i = 0; i < e.spans.len; i++) e.spans.v[i].node = e.names.v[e.spans.v[i].name_off] == 'a' ? 0 : 1;
  struct px_node_timeline tl;
  assert_int_equal(px_node_timeline_init(&tl, &e, 2), 0);
  assert_int_equal(tl.n, 7); /* the open period has no end */
  static const struct {
    int64_t t;
    uint32_t node;
    bool out, down;
  } want[] = {{0, 0, true, true},  {5, 0, false, true}, {5, 0, true, false}, {5, 1, true, true},
              {5, 1, false, true}, {7, 1, true, false}, {9, 0, false, false}};
  for (size_t i = 0; i < tl.n; i++) {
    if (tl.v[i].t_s != want[i].t || tl.v[i].node != want[i].node || tl.v[i].out != want[i].out ||
        tl.v[i].down != want[i].down)
      fail_msg("change %zu: t %lld node %u out %d down %d", i, (long long)tl.v[i].t_s, tl.v[i].node, tl.v[i].out,
               tl.v[i].down);
  }
  assert_int_equal(px_node_timeline_due(&tl), 0);
  px_node_timeline_fini(&tl);
  px_node_events_fini(&e);
}

/*
 * One 8-GPU node. The record: a (8 GPUs, 100 s) ran 0-30 until its node
 * went DOWN at 30, was requeued (NODE_FAIL) and ran again 40-140 once the
 * node was back at 40; b (8 GPUs, submitted at 10) ran 140-240. Replayed
 * with the node's outage: a is requeued at 30 (8 x 30 GPU-s lost), the
 * node is out until 40, a runs 40-140, b 140-240, as recorded. Without
 * it: a runs through, 0-100, and b 100-200.
 */
static const char RECORD[] =
    "job_id,submit_s,start_s,end_s,duration_s,gpus,nodes,user,queue,status,time_limit_s,attempt,time0_unix_s\n"
    "a,0,0,30,30,8,1,root,qa,NODE_FAIL,240,0,1700000000\n"
    "a,0,40,140,100,8,1,root,qa,COMPLETED,240,1,1700000000\n"
    "b,10,140,240,100,8,1,root,qb,COMPLETED,240,0,1700000000\n";

static void replay(bool with_outage, const int64_t *starts, const int64_t *ends, struct px_sim_result *r) {
  struct px_trace t;
  struct px_diag d;
  if (px_trace_parse(&t, RECORD, strlen(RECORD), &d)) fail_msg("%s", d.msg);
  const char *acc[] = {"qa", "qb"};
  struct px_conf *conf = px_sim_cluster_new(1, 8, acc, 2, NULL);
  assert_non_null(conf);
  struct px_node_events e;
  char rows[128];
  snprintf(rows, sizeof rows, "%s,DOWN,30,40,Not responding,,root,1700000000\n", conf->nodes[0].name);
  if (parse(&e, rows, &d) || px_node_events_bind(&e, conf, t.time0_unix_s, &d)) fail_msg("%s", d.msg);
  struct px_sim_setup s;
  if (px_sim_setup_init(&s, &t, conf, 2.0, &d)) fail_msg("%s", d.msg);
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/policies/fifo.conf", getenv("PX_SRC"));
  struct px_sim_policy p;
  if (px_sim_policy_load(&p, path, &conf->sched, &d)) fail_msg("%s", d.msg);
  struct px_sim_jobrun *runs = NULL;
  struct px_sim_run_opts o = {.seed = 1, .runs_out = &runs, .cycle_per_event = true,
                              .node_events = with_outage ? &e : NULL};
  if (px_sim_run(&s, &p.sched, "cluster", &o, r, &d)) fail_msg("%s", d.msg);
  for (uint32_t i = 0; i < s.njobs; i++) {
    if (runs[i].start_s != starts[i] || runs[i].end_s != ends[i])
      fail_msg("job %u ran %lld-%lld, want %lld-%lld", i, (long long)runs[i].start_s, (long long)runs[i].end_s,
               (long long)starts[i], (long long)ends[i]);
  }
  assert_true(r->conserved);
  free(runs);
  px_sim_setup_fini(&s);
  px_node_events_fini(&e);
  px_conf_free(conf);
  px_trace_fini(&t);
}

static void test_outage_replayed(void **state) {
  (void)state;
  struct px_sim_result r;
  replay(true, (const int64_t[]){40, 140}, (const int64_t[]){140, 240}, &r);
  assert_int_equal(r.node_outages, 1);
  assert_int_equal(r.node_fail_requeues, 1);
  assert_int_equal(r.gpu_s_lost_fail, 8 * 30);
  px_sim_result_fini(&r);
  replay(false, (const int64_t[]){0, 100}, (const int64_t[]){100, 200}, &r);
  assert_int_equal(r.node_outages, 0);
  assert_int_equal(r.gpu_s_lost_fail, 0);
  px_sim_result_fini(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fields),          cmocka_unit_test(test_errors),
      cmocka_unit_test(test_bind),            cmocka_unit_test(test_timeline_order),
      cmocka_unit_test(test_outage_replayed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
