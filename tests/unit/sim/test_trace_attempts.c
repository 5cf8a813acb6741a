/*
 * test_trace_attempts.c - a requeued job's attempts in an exported trace
 * (the attempt column, trace.h): grouped into one job submitted at its
 * first attempt's submit, the earlier runs kept in order; rows out of that
 * order refused naming their line and column, leaving the trace empty.
 */
#include "px_test.h"

#include <stdio.h>
#include <string.h>

#include "sim/trace.h"

static const char H[] = "job_id,submit_s,duration_s,gpus,nodes,user,queue,status,start_s,end_s,submit_seq,start_seq,"
                        "end_seq,attempt\n";

static int parse(struct px_trace *t, const char *text, struct px_diag *d) {
  return px_trace_parse(t, text, strlen(text), d);
}

/* Job 7 ran three times (a node failed, a preemption, then to its end);
 * job 8 once, its attempt empty. */
static void test_grouped(void **state) {
  (void)state;
  struct px_trace t;
  struct px_diag d;
  char text[512];
  snprintf(text, sizeof text, "%s%s%s%s%s", H, "7,0,10,2,1,a,ops,NODE_FAIL,5,15,3,4,9,0\n",
           "7,0,20,2,1,a,ops,PREEMPTED,30,50,,,,1\n", "7,2,8,2,1,a,ops,COMPLETED,60,68,3,20,30,2\n",
           "8,1,5,1,1,b,ops,COMPLETED,2,7,,,,\n");
  assert_int_equal(parse(&t, text, &d), 0);
  assert_int_equal(t.jobs.len, 2);
  assert_int_equal(t.attempts.len, 2);
  assert_int_equal(t.nrequeued, 1);
  assert_int_equal(t.nrecorded, 2);
  assert_int_equal(t.nseq, 1);
  const struct px_trace_job *j = &t.jobs.v[0];
  assert_string_equal(px_trace_id(&t, j), "7");
  assert_int_equal(j->submit_s, 0); /* the first attempt's, not the last row's 2 */
  assert_int_equal(j->start_s, 60);
  assert_int_equal(j->end_s, 68);
  assert_int_equal(j->duration_s, 8);
  assert_int_equal(j->attempt, 2);
  assert_int_equal(j->line, 4);
  assert_int_equal(j->submit_seq, 3);
  assert_int_equal(j->start_seq, 20);
  assert_string_equal(px_trace_name(&t, j->status), "COMPLETED");
  assert_int_equal(j->nearlier, 2);
  assert_int_equal(px_trace_first_start(&t, j), 5);
  const struct px_trace_attempt *a = px_trace_earlier(&t, j);
  assert_int_equal(a[0].start_s, 5);
  assert_int_equal(a[0].end_s, 15);
  assert_int_equal(a[0].attempt, 0);
  assert_int_equal(a[0].line, 2);
  assert_int_equal(a[0].start_seq, 4);
  assert_int_equal(a[0].end_seq, 9);
  assert_int_equal(a[0].job, 0);
  assert_string_equal(px_trace_name(&t, a[0].status), "NODE_FAIL");
  assert_int_equal(a[1].start_s, 30);
  assert_int_equal(a[1].end_s, 50);
  assert_int_equal(a[1].attempt, 1);
  assert_string_equal(px_trace_name(&t, a[1].status), "PREEMPTED");
  assert_int_equal(a[1].start_seq, 0); /* written without its seqs */
  const struct px_trace_job *k = &t.jobs.v[1];
  assert_string_equal(px_trace_id(&t, k), "8");
  assert_int_equal(k->nearlier, 0);
  assert_int_equal(k->attempt, 0);
  assert_null(px_trace_earlier(&t, k));
  assert_int_equal(px_trace_first_start(&t, k), 2);
  px_trace_fini(&t);
}

/* Accounting may lack an attempt's row: a job whose first row is attempt 2,
 * or attempts 0 and 2, still reads. Without the attempt column, rows of one
 * id are jobs of their own (a public trace, an older export). */
static void test_gaps_and_old_traces(void **state) {
  (void)state;
  struct px_trace t;
  struct px_diag d;
  char text[512];
  snprintf(text, sizeof text, "%s%s%s%s", H, "5,0,10,1,1,a,ops,COMPLETED,40,50,,,,2\n",
           "6,0,10,1,1,a,ops,REQUEUED,0,10,,,,0\n", "6,0,5,1,1,a,ops,COMPLETED,12,17,,,,2\n");
  assert_int_equal(parse(&t, text, &d), 0);
  assert_int_equal(t.jobs.len, 2);
  assert_int_equal(t.jobs.v[0].attempt, 2);
  assert_int_equal(t.jobs.v[0].nearlier, 0);
  assert_int_equal(t.jobs.v[1].nearlier, 1);
  assert_int_equal(px_trace_earlier(&t, &t.jobs.v[1])->attempt, 0);
  px_trace_fini(&t);
  snprintf(text, sizeof text, "%s", "job_id,submit_s,duration_s,gpus,nodes,user,queue,status\n6,0,10,1,,,q,\n6,0,10,1,,,q,\n");
  assert_int_equal(parse(&t, text, &d), 0);
  assert_int_equal(t.jobs.len, 2);
  assert_int_equal(t.attempts.len, 0);
  px_trace_fini(&t);
}

struct bad {
  const char *rows;
  int line;
  const char *msg;
};

/* Each refused at its line and column; nothing kept. */
static void test_refused(void **state) {
  (void)state;
  static const struct bad cases[] = {
      {"7,0,10,2,1,a,ops,REQUEUED,5,15,,,,0\n7,0,5,2,1,a,ops,COMPLETED,20,25,,,,0\n", 3,
       "line 3, column 36 (attempt): duplicate attempt 0 (line 2 has it)"},
      {"7,0,10,2,1,a,ops,REQUEUED,5,15,,,,1\n7,0,5,2,1,a,ops,COMPLETED,20,25,,,,0\n", 3,
       "line 3, column 36 (attempt): attempt 0 after attempt 1 (line 2): a job's attempts come in order"},
      {"7,0,10,2,1,a,ops,REQUEUED,5,15,,,,0\n7,0,5,2,1,a,ops,COMPLETED,10,15,,,,1\n", 3,
       "line 3, column 27 (start_s): before the end of attempt 0 (line 2, end_s 15)"},
      {"7,0,10,2,1,a,ops,REQUEUED,,,,,,0\n7,0,5,2,1,a,ops,COMPLETED,20,25,,,,1\n", 3,
       "line 3, column 36 (attempt): follows attempt 0 (line 2), which has no recorded run"},
      {"7,0,10,2,1,a,ops,REQUEUED,5,15,,,,0\n7,0,5,2,1,a,ops,COMPLETED,,,,,,1\n", 3,
       "line 3, column 27 (start_s): empty, but attempt 1 follows a recorded one"},
      {"7,0,10,2,1,a,ops,REQUEUED,5,15,,,,0\n7,0,5,4,1,a,ops,COMPLETED,20,25,,,,1\n", 3,
       "line 3, column 7 (gpus): differs from attempt 0's (line 2): a job's attempts hold the same GPUs"},
      {"7,0,10,2,1,a,ops,REQUEUED,5,15,,,,0\n8,0,5,2,1,a,ops,COMPLETED,20,25,,,,0\n"
       "7,0,5,2,1,a,ops,COMPLETED,20,25,,,,1\n",
       4, "line 4, column 1 (job_id): job 7's rows are not together (line 2 has one; its attempts come in order)"},
      {"7,0,10,2,1,a,ops,COMPLETED,5,15,,,,1.5\n", 2, "line 2, column 36 (attempt): not a whole number"},
      {"7,0,10,2,1,a,ops,COMPLETED,5,15,,,,4294967295\n", 2, "line 2, column 36 (attempt): number too large"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[512];
    struct px_trace t;
    struct px_diag d;
    snprintf(text, sizeof text, "%s%s", H, cases[i].rows);
    assert_int_not_equal(parse(&t, text, &d), 0);
    assert_int_equal(d.line, cases[i].line);
    assert_string_equal(d.msg, cases[i].msg);
    assert_int_equal(t.jobs.len, 0);
    assert_int_equal(t.attempts.len, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grouped),
      cmocka_unit_test(test_gaps_and_old_traces),
      cmocka_unit_test(test_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
