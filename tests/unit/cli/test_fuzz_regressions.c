/*
 * Regression tests for bugs the fuzz targets found in cli/ (see
 * tests/fuzz/fuzz_views_json.c and fuzz_sbatch.c).
 *
 * 1. px_cli_job_to_json left out zero fields, but px_cli_job_from_json reads
 *    a missing array_task_id as UINT32_MAX (an array's pending record) and a
 *    missing reason as "None": task 0 of an array came back from the CLI's
 *    JSON (squeue/scontrol --json) as the pending record.
 * 2. An option value that is not UTF-8 (e.g. --job-name=caf\xe9 in Latin-1)
 *    was accepted, then silently dropped from the JSON request because
 *    jansson cannot encode it: the job ran under another name. It is now
 *    refused naming the option.
 * 3. --begin=now+N<unit> multiplied N (strtol's LONG_MAX on overflow) by the
 *    unit in signed 64-bit arithmetic: undefined behaviour (UBSan: signed
 *    integer overflow in opts_begin.c). Offsets are now capped at 1000 years
 *    (1000 * 366 * 86400 = 31622400000 s).
 */
#include "px_test.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_json.h"

static void array_task_zero_survives_cli_json(void **state) {
  (void)state;
  struct px_job_info j, back;
  memset(&j, 0, sizeof j);
  px_jobspec_init(&j.spec);
  j.job_id = 41;
  j.array_job_id = 40;
  j.array_task_id = 0; /* the first task: 0 is a real index here */
  json_t *o = px_cli_job_to_json(&j);
  assert_non_null(o);
  assert_int_equal(px_cli_job_from_json(o, &back), 0);
  assert_int_equal(back.array_job_id, 40);
  assert_int_equal(back.array_task_id, 0);
  assert_string_equal(back.reason, ""); /* as sent, not the decoder's "None" */
  json_decref(o);
  px_cli_job_fini(&back);
  px_cli_job_fini(&j);
}

static void non_utf8_option_value_is_refused(void **state) {
  (void)state;
  char *argv[] = {"sbatch", "--job-name=caf\xe9", "job.sh", NULL};
  struct px_cli_optlist l = {0};
  struct px_cli_extra x = {0};
  struct px_jobspec s;
  struct px_diag d = {0};
  int first;
  px_jobspec_init(&s);
  assert_int_equal(px_cli_parse_argv(PX_TOOL_SBATCH, 3, argv, &l, &first, &d), 0);
  assert_int_equal(first, 2);
  assert_int_equal(px_cli_apply(&l, &s, &x, 0, &d), PX_EINVAL);
  assert_string_equal(d.msg, "invalid value for --job-name: not valid UTF-8");
  assert_null(s.name);
  px_cli_optlist_fini(&l);
  /* The same name in UTF-8 (c3 a9 is U+00E9) is fine. */
  char *ok[] = {"sbatch", "--job-name=caf\xc3\xa9", NULL};
  assert_int_equal(px_cli_parse_argv(PX_TOOL_SBATCH, 2, ok, &l, &first, &d), 0);
  assert_int_equal(px_cli_apply(&l, &s, &x, 0, &d), 0);
  assert_string_equal(s.name, "caf\xc3\xa9");
  px_cli_optlist_fini(&l);
  px_cli_extra_fini(&x);
  px_jobspec_fini(&s);
}

static void begin_offset_cannot_overflow(void **state) {
  (void)state;
  const int64_t now = 1764676800; /* any time works: offsets are relative */
  int64_t t = 0;
  assert_int_equal(px_cli_time_parse("now+1weeks", now, &t), 0);
  assert_true(t == now + 604800); /* 7 * 86400 */
  assert_int_equal(px_cli_time_parse("now+31622400000", now, &t), 0);
  assert_true(t == now + INT64_C(31622400000));
  assert_int_equal(px_cli_time_parse("now+31622400001", now, &t), PX_EINVAL);
  assert_int_equal(px_cli_time_parse("now+99999999999999999999weeks", now, &t), PX_EINVAL);
  assert_int_equal(px_cli_time_parse("now+9223372036854775807s", now, &t), PX_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(array_task_zero_survives_cli_json),
      cmocka_unit_test(non_utf8_option_value_is_refused),
      cmocka_unit_test(begin_offset_cannot_overflow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
