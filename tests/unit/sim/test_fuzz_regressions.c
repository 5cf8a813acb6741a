/*
 * Regression tests for bugs the fuzz targets found in sim/ (see
 * tests/fuzz/fuzz_trace.c, tests/fuzz/regressions/trace/).
 *
 * A header column written as an empty quoted field ("") made trace.c:fbytes
 * compute NULL + 0 (nothing had been copied to the reader's scratch buffer
 * yet), which is undefined: clang's UBSan reports "applying zero offset to
 * null pointer" (the fuzz build stops on it; GCC's UBSan, used by the
 * sanitizer build of this test, does not check this case). The column must
 * read as an empty name, i.e. an unknown column that is ignored.
 */
#include "px_test.h"

#include <string.h>

#include "sim/trace.h"

static void empty_quoted_header_column_is_ignored(void **state) {
  (void)state;
  /* A ninth column named "": the first quoted field of the text. */
  static const char text[] = "job_id,submit_s,duration_s,gpus,nodes,user,queue,status,\"\"\n"
                             "a,0,100,1,,,vc1,,x\n";
  struct px_trace t;
  struct px_diag d;
  assert_int_equal(px_trace_parse(&t, text, strlen(text), &d), 0);
  assert_int_equal(t.jobs.len, 1);
  assert_string_equal(px_trace_id(&t, &t.jobs.v[0]), "a");
  assert_int_equal(t.jobs.v[0].duration_s, 100);
  assert_int_equal(t.jobs.v[0].user, PX_TRACE_NONE);
  assert_string_equal(px_trace_name(&t, t.jobs.v[0].queue), "vc1");
  px_trace_fini(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(empty_quoted_header_column_is_ignored),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
