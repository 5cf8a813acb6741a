/*
 * Regression tests for bugs the fuzz targets found in proto/ (see
 * tests/fuzz/fuzz_views_json.c, tests/fuzz/regressions/views_json/).
 *
 * px_job_info_encode's direct writer leaves default members out and then
 * appended ",\"spec\":{" unconditionally: a job view whose members are all
 * defaults (the input {} decodes to one) encoded as {,"spec":{...}}, which
 * is not JSON and which its own decoder refused.
 */
#include "px_test.h"

#include <stdlib.h>
#include <string.h>

#include "proto/views_json.h"

static void all_default_job_info_encodes_to_json(void **state) {
  (void)state;
  struct px_job_info j, back;
  struct px_diag d;
  px_job_info_init(&j);
  char *text = px_job_info_encode(&j);
  assert_non_null(text);
  /* By hand: no job member differs from its default; the spec keeps only
   * requeue, whose default (true) is not the zero value. */
  assert_string_equal(text, "{\"spec\":{\"requeue\":true}}");
  assert_int_equal(px_job_info_decode(text, &back, &d), 0);
  assert_true(back.spec.requeue);
  assert_int_equal(back.job_id, 0);
  free(text);
  px_job_info_fini(&back);
  px_job_info_fini(&j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(all_default_job_info_encodes_to_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
