/*
 * Hostlist expansion and compression. Expected lists are written out by hand
 * from Slurm's documented semantics (scontrol show hostnames / hostlist).
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hostlist.h"

/* Expands expr and checks it against the comma-joined `want`. */
static void expect_expand(const char *expr, const char *want) {
  struct px_strvec v = {0};
  struct px_diag d;
  px_diag_clear(&d);
  int err = px_hostlist_expand(expr, 0, &v, &d);
  if (err) fail_msg("expand '%s': %s", expr, d.msg);
  size_t len = 1;
  for (size_t i = 0; i < v.len; i++) len += strlen(v.v[i]) + 1;
  char *got = calloc(1, len);
  for (size_t i = 0; i < v.len; i++) {
    if (i) strcat(got, ",");
    strcat(got, v.v[i]);
  }
  if (strcmp(got, want) != 0) fail_msg("expand '%s': got '%s', want '%s'", expr, got, want);
  size_t count = 99;
  assert_int_equal(px_hostlist_count(expr, 0, &count, NULL), 0);
  assert_int_equal(count, v.len);
  free(got);
  px_strvec_free_all(&v);
}

static void expands_ranges_lists_and_padding(void **state) {
  (void)state;
  expect_expand("gpu[001-004,010],login[1-2]", "gpu001,gpu002,gpu003,gpu004,gpu010,login1,login2");
  expect_expand("n1", "n1");
  expect_expand("", "");
  expect_expand("a,b,a", "a,b,a"); /* order and duplicates kept, like scontrol show hostnames */
  expect_expand("n[8-11]", "n8,n9,n10,n11");
  expect_expand("n[08-11]", "n08,n09,n10,n11"); /* the lower bound's width pads the range */
  expect_expand("n[98-101]", "n98,n99,n100,n101");
  expect_expand("n[098-101]", "n098,n099,n100,n101");
  expect_expand("n[007]", "n007");
  expect_expand("n[0-2]", "n0,n1,n2");
  expect_expand("[1-3]", "1,2,3");
  expect_expand("n[1-2]-ib", "n1-ib,n2-ib");
  expect_expand("10.0.0.[1-3]", "10.0.0.1,10.0.0.2,10.0.0.3");
  expect_expand("n[3,1,2]", "n3,n1,n2");
}

static void several_groups_are_a_cartesian_product(void **state) {
  (void)state;
  /* First group outermost: all of rack1 before rack2. */
  expect_expand("rack[1-2]-n[01-03]", "rack1-n01,rack1-n02,rack1-n03,rack2-n01,rack2-n02,rack2-n03");
  expect_expand("a[1,3]b[5]c[7-8]", "a1b5c7,a1b5c8,a3b5c7,a3b5c8");
  expect_expand("x[1-2]y[1-2],z", "x1y1,x1y2,x2y1,x2y2,z");
}

/* Checks an error: code, 0-based position and a phrase of the message. */
static void expect_error(const char *expr, size_t max, int code, int pos, const char *phrase) {
  struct px_strvec v = {0};
  char *keep = strdup("keep");
  px_strvec_push(&v, keep);
  struct px_diag d;
  px_diag_clear(&d);
  int err = px_hostlist_expand(expr, max, &v, &d);
  if (err != code) fail_msg("'%s': got %d (%s), want %d", expr, err, d.msg, code);
  if (pos >= 0 && d.pos != pos) fail_msg("'%s': position %d, want %d (%s)", expr, d.pos, pos, d.msg);
  if (!strstr(d.msg, phrase)) fail_msg("'%s': message '%s' lacks '%s'", expr, d.msg, phrase);
  assert_int_equal(v.len, 1); /* nothing appended, nothing lost */
  assert_ptr_equal(v.v[0], keep);
  px_strvec_free_all(&v);
}

static void bad_input_names_the_position(void **state) {
  (void)state;
  expect_error("gpu[3-1]", 0, PX_EPARSE, 4, "position 5: range goes down");
  expect_error("gpu[1-4", 0, PX_EPARSE, 7, "unclosed '['");
  expect_error("gpu[1-4,", 0, PX_EPARSE, 8, "unclosed '['");
  expect_error("gpu[", 0, PX_EPARSE, 4, "unclosed '['");
  expect_error("gpu[]", 0, PX_EPARSE, 4, "empty range");
  expect_error("gpu[1-]", 0, PX_EPARSE, 6, "empty range");
  expect_error("gpu[-3]", 0, PX_EPARSE, 4, "empty range");
  expect_error("gpu[1,,2]", 0, PX_EPARSE, 6, "empty range");
  expect_error("gpu[a]", 0, PX_EPARSE, 4, "a number was expected");
  expect_error("gpu[1-2x]", 0, PX_EPARSE, 7, "expected ','");
  expect_error("gpu[[1]]", 0, PX_EPARSE, 4, "a number was expected");
  expect_error("gpu1]", 0, PX_EPARSE, 4, "']' without");
  expect_error("a,,b", 0, PX_EPARSE, 2, "empty host name");
  expect_error(",a", 0, PX_EPARSE, 0, "empty host name");
  expect_error("a,", 0, PX_EPARSE, 2, "empty host name");
  expect_error("a b", 0, PX_EPARSE, 1, "whitespace");
  expect_error("n[01-100]x[1-010]", 0, PX_EPARSE, 13, "zero-padded differently");
  expect_error("n[1234567890123456789]", 0, PX_EPARSE, 2, "longer than 18 digits");
}

static void limits_are_enforced_before_allocating(void **state) {
  (void)state;
  /* A million names against the default cap (100,000). */
  expect_error("n[1-1000000]", 0, PX_ELIMIT, -1, "too many names");
  /* 1000 x 1000 = a million through the product of two small groups. */
  expect_error("r[1-1000]n[1-1000]", 0, PX_ELIMIT, -1, "too many names");
  /* The cap is a parameter: 10 names allowed, 11 refused, over several items. */
  expect_expand("n[1-10]", "n1,n2,n3,n4,n5,n6,n7,n8,n9,n10");
  expect_error("n[1-10],m", 10, PX_ELIMIT, -1, "more than 10 names");
  struct px_strvec v = {0};
  assert_int_equal(px_hostlist_expand("n[1-5],m[1-5]", 10, &v, NULL), 0);
  assert_int_equal(v.len, 10);
  px_strvec_free_all(&v);
  /* Huge ranges whose size would overflow a naive count. */
  expect_error("n[0-999999999999999999]", 0, PX_ELIMIT, -1, "too many names");
  expect_error("a[1][1][1][1][1][1][1][1][1]", 0, PX_ELIMIT, -1, "8 bracket groups");
  char longname[300];
  memset(longname, 'x', 256);
  longname[256] = '\0';
  expect_error(longname, 0, PX_ELIMIT, 0, "longer than 255");
  /* 250 letters + a 6-digit number = 256 characters. */
  memcpy(longname + 250, "[1-100000]", 11);
  expect_error(longname, 0, PX_ELIMIT, 0, "longer than 255");
}

static void expect_compress(const char *csv, const char *want) {
  struct px_strvec v = {0};
  assert_int_equal(px_hostlist_expand(csv, 0, &v, NULL), 0);
  char *got = NULL;
  assert_int_equal(px_hostlist_compress((const char *const *)v.v, v.len, &got), 0);
  if (strcmp(got, want) != 0) fail_msg("compress '%s': got '%s', want '%s'", csv, got, want);
  /* Round trip: the compressed form expands to the same set. */
  struct px_strvec back = {0};
  assert_int_equal(px_hostlist_expand(got, 0, &back, NULL), 0);
  char *again = NULL;
  assert_int_equal(px_hostlist_compress((const char *const *)back.v, back.len, &again), 0);
  assert_string_equal(again, got);
  free(again);
  free(got);
  px_strvec_free_all(&back);
  px_strvec_free_all(&v);
}

static void compresses_to_the_canonical_form(void **state) {
  (void)state;
  expect_compress("gpu0001,gpu0002,gpu0003,gpu0004", "gpu[0001-0004]");
  expect_compress("gpu0001", "gpu0001");
  expect_compress("", "");
  /* sorted naturally, deduplicated, consecutive runs joined */
  expect_compress("n10,n9,n1,n2,n3,n9,n5", "n[1-3,5,9-10]");
  expect_compress("login2,gpu010,gpu001,login1,gpu002", "gpu[001-002,010],login[1-2]");
  /* padding: 09 and 10 share width 2; 1 and 01 are different names */
  expect_compress("n09,n10", "n[09-10]");
  expect_compress("n99,n100,n098", "n[098,100],n99"); /* "99" is not "099" */
  expect_compress("n1,n01", "n1,n01");
  expect_compress("n01,n02,n1,n2", "n[1-2],n[01-02]"); /* n1 < n01 < n2 */
  /* text after the number */
  expect_compress("n1-ib,n2-ib,n3-ib,n1", "n1,n[1-3]-ib");
  /* several numbers: the rectangle merges, the odd one stays apart */
  expect_compress("rack1-n01,rack1-n02,rack2-n01,rack2-n02", "rack[1-2]-n[01-02]");
  expect_compress("a1b1,a1b2,a2b1", "a1b[1-2],a2b1");
  expect_compress("x,y,x", "x,y");
  expect_compress("10.0.0.1,10.0.0.2,10.0.1.1,10.0.1.2", "10.0.[0-1].[1-2]");
}

static void compress_rejects_bad_names(void **state) {
  (void)state;
  const char *bad[][2] = {{"ok", ""}, {"ok", "a,b"}, {"ok", "a[1]"}, {"ok", "a b"}, {"ok", "a]"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *out = (char *)"untouched";
    assert_int_equal(px_hostlist_compress(bad[i], 2, &out), PX_EINVAL);
    assert_string_equal(out, "untouched");
  }
}

static void compress_is_independent_of_input_order(void **state) {
  (void)state;
  /* 1,024 names in a scrambled order compress to the one range. */
  enum { N = 1024 };
  char *names[N];
  for (int i = 0; i < N; i++) {
    names[i] = malloc(16);
    snprintf(names[i], 16, "gpu%04d", (i * 389) % N + 1); /* 389 is coprime with 1024 */
  }
  char *out = NULL;
  assert_int_equal(px_hostlist_compress((const char *const *)names, N, &out), 0);
  assert_string_equal(out, "gpu[0001-1024]");
  free(out);
  for (int i = 0; i < N; i++) free(names[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(expands_ranges_lists_and_padding),
      cmocka_unit_test(several_groups_are_a_cartesian_product),
      cmocka_unit_test(bad_input_names_the_position),
      cmocka_unit_test(limits_are_enforced_before_allocating),
      cmocka_unit_test(compresses_to_the_canonical_form),
      cmocka_unit_test(compress_rejects_bad_names),
      cmocka_unit_test(compress_is_independent_of_input_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
