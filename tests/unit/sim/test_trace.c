/*
 * test_trace.c - the CSV trace reader: fields, rounding, interning, and the
 * precise errors (line, column, field name) for malformed input.
 */
#include "px_test.h"

#include <stdio.h>
#include <string.h>

#include "sim/trace.h"

static const char HDR[] = "job_id,submit_s,duration_s,gpus,nodes,user,queue,status\n";

static int parse(struct px_trace *t, const char *text, struct px_diag *d) {
  return px_trace_parse(t, text, strlen(text), d);
}

static void test_basic_rows(void **state) {
  (void)state;
  struct px_trace t;
  struct px_diag d;
  char text[512];
  snprintf(text, sizeof text, "%s%s", HDR,
           "a,0,100,1,,,vc1,\n"
           "b,5,200,16,2,alice,vc2,Pass\n"
           "c,7,3,8,,,vc1,Killed\n");
  assert_int_equal(parse(&t, text, &d), 0);
  assert_int_equal(t.jobs.len, 3);
  const struct px_trace_job *b = &t.jobs.v[1];
  assert_string_equal(px_trace_id(&t, b), "b");
  assert_int_equal(b->submit_s, 5);
  assert_int_equal(b->duration_s, 200);
  assert_int_equal(b->gpus, 16);
  assert_int_equal(b->nodes, 2);
  assert_int_equal(b->line, 3);
  assert_string_equal(px_trace_name(&t, b->user), "alice");
  assert_string_equal(px_trace_name(&t, b->queue), "vc2");
  assert_string_equal(px_trace_name(&t, b->status), "Pass");
  /* Empty fields: no nodes, no user, no status; vc1 interned once. */
  assert_int_equal(t.jobs.v[0].nodes, 0);
  assert_int_equal(t.jobs.v[0].user, PX_TRACE_NONE);
  assert_int_equal(t.jobs.v[0].queue, t.jobs.v[2].queue);
  assert_int_equal(t.names.len, 5); /* vc1, alice, vc2, Pass, Killed */
  px_trace_fini(&t);
}

/* 0.46 GPUs -> 1 (rounded up, counted); 2.001 -> 3; 0 -> CPU-only. */
static void test_fractional_gpus(void **state) {
  (void)state;
  struct px_trace t;
  char text[512];
  snprintf(text, sizeof text, "%s%s", HDR, "p0,0,10,0.46,1,,LS,Running\np1,0,10,2.001,1,,BE,\np2,1,10,0,1,,BE,\n");
  assert_int_equal(parse(&t, text, NULL), 0);
  assert_int_equal(t.jobs.v[0].gpus, 1);
  assert_true(t.jobs.v[0].flags & PX_TRACE_FRACTIONAL);
  assert_int_equal(t.jobs.v[1].gpus, 3);
  assert_int_equal(t.jobs.v[2].gpus, 0);
  assert_true(t.jobs.v[2].flags & PX_TRACE_CPU_ONLY);
  assert_int_equal(t.nfractional, 2);
  assert_int_equal(t.ncpu_only, 1);
  px_trace_fini(&t);
}

/* Columns by name in any order, CRLF, BOM, quotes, blank lines, optional time limit. */
static void test_forms(void **state) {
  (void)state;
  struct px_trace t;
  const char *text =
      "\xEF\xBB\xBFstatus,queue,user,nodes,gpus,duration_s,submit_s,job_id,time_limit_s,extra\r\n"
      "\r\n"
      "done,\"v,c\",\"bo\"\"b\",1,4,60.5,3,\"j 1\",120,zzz\r\n";
  assert_int_equal(parse(&t, text, NULL), 0);
  assert_int_equal(t.jobs.len, 1);
  const struct px_trace_job *j = &t.jobs.v[0];
  assert_string_equal(px_trace_id(&t, j), "j 1");
  assert_string_equal(px_trace_name(&t, j->queue), "v,c");
  assert_string_equal(px_trace_name(&t, j->user), "bo\"b");
  assert_string_equal(px_trace_name(&t, j->status), "done");
  assert_int_equal(j->duration_s, 61); /* 60.5 rounds to nearest, half up */
  assert_int_equal(j->time_limit_s, 120);
  assert_int_equal(j->line, 3);
  px_trace_fini(&t);
}

struct bad {
  const char *rows;
  int err;
  int line;
  const char *msg;
};

static void test_errors(void **state) {
  (void)state;
  static const struct bad cases[] = {
      {"a,0,100,x,,,,\n", PX_EPARSE, 2, "line 2, column 9 (gpus): not a non-negative number"},
      {"a,0,-5,1,,,,\n", PX_EPARSE, 2, "line 2, column 5 (duration_s): negative number"},
      {"a,0,5,1,,,,\nb,,5,1,,,,\n", PX_EPARSE, 3, "line 3, column 3 (submit_s): empty, but a number is required"},
      {"a,0,5,1,1.5,,,\n", PX_EPARSE, 2, "line 2, column 9 (nodes): fractional node count"},
      {"a,0,5,1,,\"u,,\n", PX_EPARSE, 2, "line 2, column 10: unterminated quoted field"},
      {"a,0,5,1,,u\"x,,\n", PX_EPARSE, 2, "line 2, column 11: quote inside an unquoted field"},
      {"a,0,99999999999999999,1,,,,\n", PX_ERANGE, 2, "line 2, column 5 (duration_s): number too large"},
      {"a,0,5,1.2.3,,,,\n", PX_EPARSE, 2, "line 2, column 7 (gpus): not a non-negative number"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[512];
    snprintf(text, sizeof text, "%s%s", HDR, cases[i].rows);
    struct px_trace t;
    struct px_diag d;
    assert_int_equal(parse(&t, text, &d), cases[i].err);
    assert_int_equal(d.line, cases[i].line);
    assert_string_equal(d.msg, cases[i].msg);
    assert_int_equal(t.jobs.len, 0); /* a failed parse leaves the trace empty */
    assert_null(t.jobs.v);
  }
}

static void test_header_errors(void **state) {
  (void)state;
  struct px_trace t;
  struct px_diag d;
  assert_int_equal(parse(&t, "", &d), PX_EPARSE);
  assert_string_equal(d.msg, "line 1, column 1: empty trace: no header line");
  assert_int_equal(parse(&t, "job_id,submit_s,duration_s,nodes,user,queue,status\n", &d), PX_EPARSE);
  assert_non_null(strstr(d.msg, "(gpus): the header lacks this column"));
  assert_int_equal(parse(&t, "job_id,gpus,submit_s,duration_s,nodes,user,queue,status,gpus\n", &d), PX_EPARSE);
  assert_string_equal(d.msg, "line 1, column 57 (gpus): duplicate column");
}

static void test_load_missing_file(void **state) {
  (void)state;
  struct px_trace t;
  struct px_diag d;
  assert_int_equal(px_trace_load(&t, "/nonexistent/trace.csv", &d), PX_EIO);
  assert_non_null(strstr(d.msg, "/nonexistent/trace.csv"));
}

/* The columns of `phalanx export-trace`: the recorded run, QoS, partition, array. */
static const char XHDR[] = "job_id,submit_s,eligible_s,start_s,end_s,duration_s,gpus,nodes,user,queue,qos,"
                           "partition,status,time_limit_s,array_job_id\n";
static const char XGOOD[] = "7,10,10,15,75,60,2,1,alice,ops,normal,batch,COMPLETED,,\n";

static void test_recorded_columns(void **state) {
  (void)state;
  struct px_trace t;
  struct px_diag d;
  char text[512];
  snprintf(text, sizeof text, "%s%s%s%s", XHDR, XGOOD, "8_1,20,,25,30,5,1,1,bob,ops,high,gpu,FAILED,600,8\n",
           "9,30,,,,,1,,bob,ops,,,,,\n");
  assert_int_equal(parse(&t, text, &d), PX_EPARSE); /* 9 has no duration */
  snprintf(text, sizeof text, "%s%s%s", XHDR, XGOOD, "8_1,20,,25,30,5,1,1,bob,ops,high,gpu,FAILED,600,8\n");
  assert_int_equal(parse(&t, text, &d), 0);
  assert_int_equal(t.jobs.len, 2);
  assert_int_equal(t.nrecorded, 2);
  const struct px_trace_job *a = &t.jobs.v[0], *b = &t.jobs.v[1];
  assert_int_equal(a->eligible_s, 10);
  assert_int_equal(a->start_s, 15);
  assert_int_equal(a->end_s, 75);
  assert_int_equal(a->array_job_id, -1);
  assert_string_equal(px_trace_name(&t, a->qos), "normal");
  assert_string_equal(px_trace_name(&t, a->partition), "batch");
  assert_int_equal(b->eligible_s, -1);
  assert_int_equal(b->array_job_id, 8);
  assert_int_equal(b->time_limit_s, 600);
  assert_string_equal(px_trace_id(&t, b), "8_1");
  assert_string_equal(px_trace_name(&t, b->partition), "gpu");
  px_trace_fini(&t);
  /* a plain trace has no recorded run */
  snprintf(text, sizeof text, "%sa,0,100,1,,,vc1,\n", HDR);
  assert_int_equal(parse(&t, text, &d), 0);
  assert_int_equal(t.jobs.v[0].start_s, -1);
  assert_int_equal(t.nrecorded, 0);
  px_trace_fini(&t);
}

/* Rows that cannot be a finished job of this cluster: refused, the line and field named. */
static void test_recorded_errors(void **state) {
  (void)state;
  static const struct bad cases[] = {
      {"9,10,,,75,65,1,1,a,ops,,,COMPLETED,,\n", PX_EPARSE, 3,
       "line 3, column 7 (start_s): empty, but start_s and end_s come together"},
      {"9,10,,5,65,60,1,1,a,ops,,,COMPLETED,,\n", PX_EPARSE, 3, "line 3, column 7 (start_s): before submit_s"},
      {"9,10,,15,14,0,1,1,a,ops,,,COMPLETED,,\n", PX_EPARSE, 3, "line 3, column 10 (end_s): before start_s"},
      {"9,10,,15,75,50,1,1,a,ops,,,COMPLETED,,\n", PX_EPARSE, 3,
       "line 3, column 13 (duration_s): differs from end_s - start_s"},
      {"9,10,5,15,75,60,1,1,a,ops,,,COMPLETED,,\n", PX_EPARSE, 3, "line 3, column 6 (eligible_s): before submit_s"},
      {"9,10,,15,75,60,1,1,a,ops,,,COMPLETED,,x\n", PX_EPARSE, 3,
       "line 3, column 39 (array_job_id): not a non-negative number"},
      {"9,10,,-15,75,60,1,1,a,ops,,,COMPLETED,,\n", PX_EPARSE, 3, "line 3, column 7 (start_s): negative number"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[512];
    snprintf(text, sizeof text, "%s%s%s", XHDR, XGOOD, cases[i].rows);
    struct px_trace t;
    struct px_diag d;
    assert_int_equal(parse(&t, text, &d), cases[i].err);
    assert_int_equal(d.line, cases[i].line);
    assert_string_equal(d.msg, cases[i].msg);
    assert_int_equal(t.jobs.len, 0);
  }
}

/* The server's order of a job's submit and end (journal seqs): optional
 * whole numbers, the end after the submit; a trace without them reads 0. */
static void test_seq_columns(void **state) {
  (void)state;
  static const char H[] = "job_id,submit_s,duration_s,gpus,nodes,user,queue,status,start_s,end_s,submit_seq,end_seq,"
                          "start_seq\n";
  struct px_trace t;
  struct px_diag d;
  char text[512];
  snprintf(text, sizeof text, "%s%s%s", H, "a,0,10,1,,,q,,0,10,3,41,7\n", "b,0,10,1,,,q,,5,15,,,\n");
  assert_int_equal(parse(&t, text, &d), 0);
  assert_int_equal(t.jobs.v[0].submit_seq, 3);
  assert_int_equal(t.jobs.v[0].end_seq, 41);
  assert_int_equal(t.jobs.v[0].start_seq, 7);
  assert_int_equal(t.jobs.v[1].submit_seq, 0);
  assert_int_equal(t.jobs.v[1].end_seq, 0);
  assert_int_equal(t.nseq, 1);
  assert_int_equal(t.time0_unix_s, 0);
  px_trace_fini(&t);
  /* the Unix time of second 0: the same in every row that gives it */
  static const char T[] = "job_id,submit_s,duration_s,gpus,nodes,user,queue,status,time0_unix_s\n";
  snprintf(text, sizeof text, "%sa,0,1,1,,,q,,1796438413\nb,0,1,1,,,q,,\n", T);
  assert_int_equal(parse(&t, text, &d), 0);
  assert_int_equal(t.time0_unix_s, 1796438413);
  px_trace_fini(&t);
  snprintf(text, sizeof text, "%sa,0,1,1,,,q,,1796438413\nb,0,1,1,,,q,,1796438414\n", T);
  assert_int_equal(parse(&t, text, &d), PX_EPARSE);
  assert_string_equal(d.msg, "line 3, column 14 (time0_unix_s): differs from an earlier row's");
  static const struct bad cases[] = {
      {"c,0,10,1,,,q,,0,10,3,3\n", PX_EPARSE, 2, "line 2, column 22 (end_seq): not after submit_seq"},
      {"c,0,10,1,,,q,,0,10,3.5,9\n", PX_EPARSE, 2, "line 2, column 20 (submit_seq): not a whole number"},
      {"c,0,10,1,,,q,,0,10,3,-9\n", PX_EPARSE, 2, "line 2, column 22 (end_seq): negative number"},
      {"c,0,10,1,,,q,,0,10,3,9,3\n", PX_EPARSE, 2, "line 2, column 24 (start_seq): not after submit_seq"},
      {"c,0,10,1,,,q,,0,10,3,9,9\n", PX_EPARSE, 2, "line 2, column 22 (end_seq): not after start_seq"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(text, sizeof text, "%s%s", H, cases[i].rows);
    assert_int_equal(parse(&t, text, &d), cases[i].err);
    assert_int_equal(d.line, cases[i].line);
    assert_string_equal(d.msg, cases[i].msg);
  }
}

/* Each case's rows under header hdr: refused as the case says, nothing kept. */
static void expect_bad(const char *hdr, const struct bad *cases, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char text[512];
    struct px_trace t;
    struct px_diag d;
    snprintf(text, sizeof text, "%s%s", hdr, cases[i].rows);
    assert_int_equal(parse(&t, text, &d), cases[i].err);
    assert_int_equal(d.line, cases[i].line);
    assert_string_equal(d.msg, cases[i].msg);
    assert_int_equal(t.jobs.len, 0);
  }
}

/* A job's dependency as written: kept as a name; a malformed one is
 * refused at its line, column and offset; a trace without it reads none. */
static void test_dependency_column(void **state) {
  (void)state;
  static const char H[] = "job_id,submit_s,duration_s,gpus,nodes,user,queue,status,dependency\n";
  struct px_trace t;
  struct px_diag d;
  char text[512];
  snprintf(text, sizeof text, "%s%s", H, "a,0,1,1,,,q,,afterok:12:13\nb,0,1,1,,,q,,\"afterany:1?singleton\"\nc,0,1,1,,,q,,\n");
  assert_int_equal(parse(&t, text, &d), 0);
  assert_string_equal(px_trace_name(&t, t.jobs.v[0].dependency), "afterok:12:13");
  assert_string_equal(px_trace_name(&t, t.jobs.v[1].dependency), "afterany:1?singleton");
  assert_int_equal(t.jobs.v[2].dependency, PX_TRACE_NONE);
  assert_int_equal(t.ndependent, 2);
  px_trace_fini(&t);
  assert_int_equal(parse(&t, "job_id,submit_s,duration_s,gpus,nodes,user,queue,status\na,0,1,1,,,q,\n", &d), 0);
  assert_int_equal(t.jobs.v[0].dependency, PX_TRACE_NONE);
  px_trace_fini(&t);
  static const struct bad cases[] = {
      {"c,0,1,1,,,q,,afterok:12x\n", PX_EPARSE, 2,
       "line 2, column 24 (dependency): unexpected character at offset 10"},
      {"c,0,1,1,,,q,,afterok\n", PX_EPARSE, 2,
       "line 2, column 14 (dependency): expected singleton or after/afterok/afternotok/afterany:ID at offset 0"},
      {"c,0,1,1,,,q,,afterok:0\n", PX_EPARSE, 2,
       "line 2, column 22 (dependency): expected a job id (a whole number from 1) at offset 8"},
      {"c,0,1,1,,,q,,\"afterok:1,\"\n", PX_EPARSE, 2,
       "line 2, column 14 (dependency): expected singleton or after/afterok/afternotok/afterany:ID at offset 10"},
      {"c,0,1,1,,,q,,\"afterok:1,afterany:2?after:3\"\n", PX_EPARSE, 2,
       "line 2, column 14 (dependency): mixes ',' and '?' at offset 20"},
      {"c,0,1,1,,,q,,aftersome:1\n", PX_EPARSE, 2,
       "line 2, column 14 (dependency): expected singleton or after/afterok/afternotok/afterany:ID at offset 0"},
  };
  expect_bad(H, cases, sizeof cases / sizeof cases[0]);
}

/* A job's name (an export's name column): commas, quotes and spaces kept
 * as written, one copy per distinct name; a name the server would refuse
 * (a control character, over 256 bytes) is refused at its line, column and
 * offset; a trace without the column names no job. */
static void test_name_column(void **state) {
  (void)state;
  static const char H[] = "job_id,submit_s,duration_s,gpus,nodes,user,queue,status,dependency,name\n";
  struct px_trace t;
  struct px_diag d;
  char text[1024];
  snprintf(text, sizeof text, "%s%s", H,
           "a,0,1,1,,u,q,,singleton,\"train, \"\"v2\"\"\"\n"
           "b,0,1,1,,u,q,,singleton,\"train, \"\"v2\"\"\"\r\n"
           "c,0,1,1,,u,q,,, eval run\n"
           "d,0,1,1,,u,q,,,\n");
  assert_int_equal(parse(&t, text, &d), 0);
  assert_string_equal(px_trace_name(&t, t.jobs.v[0].name), "train, \"v2\"");
  assert_int_equal(t.jobs.v[1].name, t.jobs.v[0].name);
  assert_string_equal(px_trace_name(&t, t.jobs.v[2].name), " eval run");
  assert_int_equal(t.jobs.v[3].name, PX_TRACE_NONE);
  assert_int_equal(t.nnamed, 3);
  px_trace_fini(&t);
  assert_int_equal(parse(&t, "job_id,submit_s,duration_s,gpus,nodes,user,queue,status\na,0,1,1,,,q,\n", &d), 0);
  assert_int_equal(t.jobs.v[0].name, PX_TRACE_NONE);
  assert_int_equal(t.nnamed, 0);
  px_trace_fini(&t);
  static const struct bad cases[] = {
      {"c,0,1,1,,,q,,,ab\tc\n", PX_EPARSE, 2, "line 2, column 17 (name): a control character at offset 2"},
      {"c,0,1,1,,,q,,,\"a,\x7f\"\n", PX_EPARSE, 2, "line 2, column 15 (name): a control character at offset 2"},
      /* a quoted line break: the line of the field's start */
      {"a,0,1,1,,,q,,,ok\nc,0,1,1,,,q,,,\"x\ny\"\n", PX_EPARSE, 3,
       "line 3, column 15 (name): a control character at offset 1"},
  };
  expect_bad(H, cases, sizeof cases / sizeof cases[0]);
  char long_name[PX_TRACE_NAME_MAX + 2];
  memset(long_name, 'n', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  snprintf(text, sizeof text, "%sa,0,1,1,,,q,,,%.*s\nb,0,1,1,,,q,,,%s\n", H, PX_TRACE_NAME_MAX, long_name, long_name);
  assert_int_equal(parse(&t, text, &d), PX_ERANGE); /* 256 bytes read, 257 refused */
  assert_string_equal(d.msg, "line 3, column 15 (name): longer than 256 bytes");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_basic_rows),  cmocka_unit_test(test_fractional_gpus),
      cmocka_unit_test(test_forms),       cmocka_unit_test(test_errors),
      cmocka_unit_test(test_header_errors), cmocka_unit_test(test_load_missing_file),
      cmocka_unit_test(test_recorded_columns), cmocka_unit_test(test_recorded_errors),
      cmocka_unit_test(test_seq_columns),     cmocka_unit_test(test_dependency_column),
      cmocka_unit_test(test_name_column),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
