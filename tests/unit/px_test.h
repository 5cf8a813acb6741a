/*
 * px_test.h - what every cmocka test file includes: cmocka's required headers
 * in the order it needs them, plus small helpers shared by the tests.
 */
#ifndef PX_TEST_H
#define PX_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

/* ctest's SKIP_RETURN_CODE (tests/CMakeLists.txt): "Skipped", not passed. */
#define PX_TEST_SKIP_RC 77

/* Counts the parts of this program skipped so far (add 0 to read it). */
static inline int px_test_skips(int add) {
  static int n;
  return n += add;
}

/* A part that cannot run on this machine: says why on stdout and records
 * "TEST NEED WHY" in $PX_SKIP_LOG, which .ci/run checks (a NEED the machine
 * has fails CI). NEED is one of tests/integration/lib_skip.sh's words. */
static inline void px_test_skip(const char *test, const char *need, const char *why) {
  printf("SKIP (%s): %s: %s\n", need, test, why);
  const char *log = getenv("PX_SKIP_LOG");
  FILE *f = log && *log ? fopen(log, "a") : NULL;
  if (f) {
    fprintf(f, "%s %s %s\n", test, need, why);
    fclose(f);
  }
  px_test_skips(1);
}

/* main's exit status: failures first, then "skipped" when a part was. */
static inline int px_test_exit(int failures) {
  if (failures) return failures;
  return px_test_skips(0) ? PX_TEST_SKIP_RC : 0;
}

#endif
