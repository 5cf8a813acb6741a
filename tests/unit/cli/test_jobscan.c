/*
 * The streaming job-list decoder (cli_jobscan.c) against the jansson one it
 * replaces for long lists: the same structs from the same text (compared
 * through px_cli_job_to_json), including escapes, non-ASCII text, nulls,
 * unknown nested keys, flat accounting rows and the array_task_id default,
 * also when decoded in place; and every malformed text refused, never
 * half-read.
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_json.h"

/* The same job, compared through its JSON. */
static void same_job(const struct px_job_info *a, const struct px_job_info *b) {
  json_t *ja = px_cli_job_to_json(a), *jb = px_cli_job_to_json(b);
  char *sa = json_dumps(ja, JSON_SORT_KEYS), *sb = json_dumps(jb, JSON_SORT_KEYS);
  assert_string_equal(sa, sb);
  free(sa), free(sb);
  json_decref(ja), json_decref(jb);
}

/* Decodes text both ways and checks the results are the same jobs. */
static void same_both_ways(const char *text, size_t want_n) {
  json_error_t je;
  json_t *doc = json_loads(text, 0, &je);
  assert_non_null(doc);
  const json_t *arr = json_is_array(doc) ? doc : json_object_get(doc, "jobs");
  struct px_job_info *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  assert_int_equal(px_cli_jobs_from_json(arr, &a, &na), 0);
  assert_int_equal(px_cli_jobs_from_text(text, strlen(text), &b, &nb), 0);
  assert_int_equal(na, want_n);
  assert_int_equal(nb, want_n);
  for (size_t i = 0; i < na; i++) same_job(&a[i], &b[i]);
  /* in place (sacct's pages): the same jobs, the strings left in the text */
  char *copy = strdup(text);
  struct px_job_info *c = NULL;
  size_t nc = 0, cap = 0;
  assert_int_equal(px_cli_jobs_from_text_inplace(copy, strlen(copy), &c, &cap, &nc), 0);
  assert_int_equal(nc, want_n);
  assert_true(cap >= nc);
  /* again into the same array (sacct's next page), from a fresh copy */
  for (size_t i = 0; i < nc; i++) px_cli_job_fini_inplace(&c[i]);
  free(copy);
  copy = strdup(text);
  assert_int_equal(px_cli_jobs_from_text_inplace(copy, strlen(copy), &c, &cap, &nc), 0);
  assert_int_equal(nc, want_n);
  for (size_t i = 0; i < na; i++) {
    same_job(&a[i], &c[i]);
    if (c[i].spec.name) assert_true(c[i].spec.name >= copy && c[i].spec.name < copy + strlen(text));
  }
  px_cli_jobs_free_inplace(c, nc);
  free(copy);
  px_cli_jobs_free(a, na);
  px_cli_jobs_free(b, nb);
  json_decref(doc);
}

static void decodes_as_the_tree_decoder(void **state) {
  same_both_ways("{\"jobs\":[]}", 0);
  same_both_ways(" [ ] ", 0);
  same_both_ways(
      "{\"next\":null,\"jobs\":[{\"job_id\":7,\"state\":\"RUNNING\",\"reason\":\"None\","
      "\"priority\":4294967295,\"start_time\":1700000000,\"nodelist\":\"gpu[0001-0002]\","
      "\"billable_tres_s\":12.5e2,\"exit_code\":-1,\"array_task_id\":4294967295,"
      "\"spec\":{\"name\":\"tr\\\"ain\\\\ \\u00e9\\ud83d\\ude80\\/x\",\"user\":\"al\\nice\","
      "\"exclusive\":true,\"requeue\":false,\"time_limit_s\":3600,\"env\":[\"A=1\",\"B=\\t2\"],"
      "\"argv\":[],\"future\":{\"deep\":[1,{\"x\":[true,false,null]}]},\"partition\":null}},"
      "{\"job_id\":8,\"array_job_id\":7,\"why\":\"waits\",\"unknown\":[1.5,-2e-3,\"s\"],"
      "\"state\":\"PENDING\",\"reason\":\"Priority\"}],\"extra\":{\"a\":[]}}",
      2);
  /* accounting rows: the spec's fields flat beside the job's */
  same_both_ways("[{\"job_id\":9,\"name\":\"flat\",\"account\":\"ops\",\"state\":\"COMPLETED\","
                 "\"exit_code\":0,\"array_job_id\":3,\"array_task_id\":null}]",
                 1);
  /* a state longer than its char array is cut, as snprintf does */
  same_both_ways("[{\"job_id\":1,\"state\":\"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\"}]", 1);
}

static void array_task_zero_is_the_default(void **state) {
  const char *text = "{\"jobs\":[{\"job_id\":12,\"array_job_id\":11},{\"job_id\":11,"
                     "\"array_job_id\":11,\"array_task_id\":4294967295,\"array_pending\":\"1-3\"}]}";
  struct px_job_info *v;
  size_t n;
  assert_int_equal(px_cli_jobs_from_text(text, strlen(text), &v, &n), 0);
  assert_int_equal(n, 2);
  assert_int_equal(v[0].array_task_id, 0);
  assert_int_equal(v[1].array_task_id, UINT32_MAX);
  assert_string_equal(v[1].array_pending, "1-3");
  assert_string_equal(v[0].reason, "None");
  assert_true(v[0].spec.requeue); /* px_jobspec_init's default */
  px_cli_jobs_free(v, n);
}

static void malformed_text_is_refused(void **state) {
  static const char *bad[] = {
      "",
      "{}",                                       /* no jobs */
      "{\"jobs\":{}}",                            /* not an array */
      "{\"jobs\":[{\"job_id\":\"7\"}]}",          /* wrong type */
      "{\"jobs\":[{\"job_id\":7.5}]}",            /* not an integer */
      "{\"jobs\":[{\"job_id\":99999999999999999999}]}",
      "{\"jobs\":[{\"exclusive\":1}]}",
      "{\"jobs\":[{\"spec\":{\"env\":[\"a\",1]}}]}",
      "{\"jobs\":[{\"job_id\":7}",                 /* cut short */
      "{\"jobs\":[{\"job_id\":7}]} x",             /* trailing bytes */
      "{\"jobs\":[{\"state\":\"R\\x\"}]}",         /* bad escape */
      "{\"jobs\":[{\"state\":\"\\ud800\"}]}",      /* lone surrogate */
      "{\"jobs\":[{\"state\":\"a\nb\"}]}",         /* raw control character */
      "{\"jobs\":[{\"job_id\":7,}]}",
      "{\"jobs\":[{\"x\":tru}]}",
      "{\"jobs\":[{\"x\":-}]}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct px_job_info *v = (struct px_job_info *)1;
    size_t n = 99;
    int rc = px_cli_jobs_from_text(bad[i], strlen(bad[i]), &v, &n);
    if (rc != PX_EPROTO) fail_msg("accepted: %s", bad[i]);
    assert_null(v);
    assert_int_equal(n, 0);
  }
  /* nesting deeper than any reply: refused, not a stack overflow */
  char deep[4096] = "{\"jobs\":[{\"x\":";
  size_t k = strlen(deep);
  for (int i = 0; i < 1000; i++) deep[k++] = '[';
  deep[k] = '\0';
  struct px_job_info *v;
  size_t n;
  assert_int_equal(px_cli_jobs_from_text(deep, strlen(deep), &v, &n), PX_EPROTO);
}

static void many_jobs_grow_the_array(void **state) {
  size_t cap = 1 << 20, len = 0;
  char *text = malloc(cap);
  len += (size_t)snprintf(text + len, cap - len, "{\"jobs\":[");
  for (int i = 0; i < 2000; i++)
    len += (size_t)snprintf(text + len, cap - len, "%s{\"job_id\":%d,\"spec\":{\"name\":\"j%d\"}}",
                            i ? "," : "", i + 1, i);
  len += (size_t)snprintf(text + len, cap - len, "]}");
  struct px_job_info *v;
  size_t n;
  assert_int_equal(px_cli_jobs_from_text(text, len, &v, &n), 0);
  assert_int_equal(n, 2000);
  assert_int_equal(v[1999].job_id, 2000);
  assert_string_equal(v[1999].spec.name, "j1999");
  px_cli_jobs_free(v, n);
  free(text);
}

/* The cursor a full accounting page ends with, read from the text's end. */
static void next_after_from_the_end(void **state) {
  (void)state;
  uint64_t a = 0;
  const char *full = "{\"jobs\":[{\"job_id\":7},{\"job_id\":9}],\"next_after\":8}";
  assert_true(px_cli_jobs_next_after(full, strlen(full), &a));
  assert_int_equal(a, 8);
  const char *last = "{\"jobs\":[{\"job_id\":7}]}";
  assert_false(px_cli_jobs_next_after(last, strlen(last), &a));
  const char *big = "{\"jobs\":[],\"next_after\":18446744073709551615}"; /* 20 digits: refused */
  assert_false(px_cli_jobs_next_after(big, strlen(big), &a));
  const char *bad[] = {"{\"jobs\":[],\"next_after\":}", "{\"jobs\":[],\"next_after\":-3}",
                       "\"next_after\":", "", "{\"jobs\":[],\"next_after\":\"4\"}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_false(px_cli_jobs_next_after(bad[i], strlen(bad[i]), &a));
  /* a name holding the key's text is escaped in the rows: no match */
  const char *name = "{\"jobs\":[{\"job_id\":1,\"spec\":{\"name\":\"\\\"next_after\\\":5\"}}]}";
  assert_false(px_cli_jobs_next_after(name, strlen(name), &a));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decodes_as_the_tree_decoder),
      cmocka_unit_test(array_task_zero_is_the_default),
      cmocka_unit_test(malformed_text_is_refused),
      cmocka_unit_test(many_jobs_grow_the_array),
      cmocka_unit_test(next_after_from_the_end),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
