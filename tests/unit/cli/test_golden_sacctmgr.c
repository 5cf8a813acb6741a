/*
 * test_golden_sacctmgr.c - sacctmgr's show tables (px_fmt_sacctmgr) against
 * the real Slurm 22.05 sacctmgr captured on the reference harness
 * (tests/data/golden/harness/sacctmgr_*.txt; the README gives the
 * commands): the slurmdb documents the server would send for the harness'
 * accounts tree render byte for byte: associations (default, -P, format=
 * with widths, conditions), accounts, users (-p, -n) and QoS (default, -P).
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "golden.h"

static json_t *noval(long long n) { return json_pack("{sb sb sI}", "set", 1, "infinite", 0, "number", n); }
static json_t *inf(void) { return json_pack("{sb sb si}", "set", 0, "infinite", 1, "number", 0); }

/* One association of the harness (cluster bench, QoS normal). */
static json_t *assoc(const char *account, const char *user, int shares, bool llm_limits) {
  json_t *grp = json_array();
  if (llm_limits && !*user)
    json_array_append_new(grp, json_pack("{ss ss si si}", "type", "gres", "name", "gpu", "id", 1001, "count", 16));
  return json_pack("{ss ss ss ss si s{ss} s[s] s{s{so so s{so}} s{so s{s[]}}}}", "cluster", "bench",
                   "account", account, "user", user, "partition", "", "shares_raw", shares, "default",
                   "qos", "", "qos", "normal", "max", "jobs", "active", llm_limits ? noval(10) : inf(),
                   "total", llm_limits ? noval(20) : inf(), "per", "count", inf(), "tres", "total", grp,
                   "per", "job");
}

static json_t *assocs(void) {
  return json_pack("{s[o o o o o o o o o o]}", "associations", assoc("root", "", 1, false),
                   assoc("root", "root", 1, false), assoc("llm", "", 40, true), assoc("llm", "root", 1, true),
                   assoc("research", "", 10, false), assoc("research", "root", 1, false),
                   assoc("speech", "", 20, false), assoc("speech", "root", 1, false),
                   assoc("vision", "", 30, false), assoc("vision", "root", 1, false));
}

static json_t *account(const char *name, const char *descr, const char *org) {
  return json_pack("{ss ss ss}", "name", name, "description", descr, "organization", org);
}

static json_t *qos(const char *name, int prio, json_t *wall) {
  return json_pack("{ss so s{si s{s{s{so}}}} s{s[s] s[]} s{sb sb sf}}", "name", name, "priority",
                   noval(prio), "limits", "grace_time", 0, "max", "wall_clock", "per", "job", wall,
                   "preempt", "mode", "DISABLED", "list", "usage_factor", "set", 1, "infinite", 0,
                   "number", 1.0);
}

static void expect(const char *golden, enum px_sacctmgr_entity e, json_t *doc, struct px_sacctmgr_opts o) {
  FILE *out = tmpfile();
  struct px_diag d;
  px_diag_clear(&d);
  assert_int_equal(px_fmt_sacctmgr(out, e, doc, &o, &d), 0);
  long n = ftell(out);
  char *got = calloc(1, (size_t)n + 1), *want = golden_read(golden);
  rewind(out);
  assert_int_equal(fread(got, 1, (size_t)n, out), (size_t)n);
  fclose(out);
  assert_non_null(want);
  int diff = golden_diff(golden, want, got);
  free(want);
  free(got);
  json_decref(doc);
  assert_int_equal(diff, 0);
}

static void assoc_tables(void **state) {
  (void)state;
  expect("harness/sacctmgr_assoc.txt", PX_SACCTMGR_ASSOC, assocs(), (struct px_sacctmgr_opts){0});
  expect("harness/sacctmgr_assoc_P.txt", PX_SACCTMGR_ASSOC, assocs(), (struct px_sacctmgr_opts){.parsable2 = true});
  expect("harness/sacctmgr_assoc_format.txt", PX_SACCTMGR_ASSOC, assocs(),
         (struct px_sacctmgr_opts){.noheader = true, .format = "account%20,user%-8,share"});
  /* the conditions are the command's (cmd_sacctmgr.c): here the rows they keep */
  json_t *doc = json_pack("{s[o]}", "associations", assoc("llm", "root", 1, true));
  expect("harness/sacctmgr_assoc_where.txt", PX_SACCTMGR_ASSOC, doc,
         (struct px_sacctmgr_opts){.format = "account,user,maxjobs"});
}

static void account_user_tables(void **state) {
  (void)state;
  json_t *accts = json_pack("{s[o o o o o]}", "accounts", account("root", "default root account", "root"),
                            account("vision", "bench vision", "bench"), account("llm", "bench llm", "bench"),
                            account("speech", "bench speech", "bench"), account("research", "bench research", "bench"));
  expect("harness/sacctmgr_account.txt", PX_SACCTMGR_ACCOUNT, accts, (struct px_sacctmgr_opts){0});
  const char *users = "{\"users\":[{\"name\":\"root\",\"default\":{\"account\":\"llm\"},"
                      "\"administrator_level\":[\"Administrator\"]}]}";
  expect("harness/sacctmgr_user_p.txt", PX_SACCTMGR_USER, json_loads(users, 0, NULL),
         (struct px_sacctmgr_opts){.parsable = true});
  expect("harness/sacctmgr_user_n.txt", PX_SACCTMGR_USER, json_loads(users, 0, NULL),
         (struct px_sacctmgr_opts){.noheader = true});
}

static void qos_tables(void **state) {
  (void)state;
  expect("harness/sacctmgr_qos.txt", PX_SACCTMGR_QOS,
         json_pack("{s[o o]}", "qos", qos("normal", 0, inf()), qos("high", 100, noval(1440))),
         (struct px_sacctmgr_opts){0});
  expect("harness/sacctmgr_qos_P.txt", PX_SACCTMGR_QOS,
         json_pack("{s[o o]}", "qos", qos("normal", 0, inf()), qos("high", 100, noval(1440))),
         (struct px_sacctmgr_opts){.parsable2 = true});
}

static void unknown_field(void **state) {
  (void)state;
  struct px_diag d;
  px_diag_clear(&d);
  json_t *doc = assocs();
  FILE *out = tmpfile();
  struct px_sacctmgr_opts o = {.format = "account,foo"};
  assert_int_equal(px_fmt_sacctmgr(out, PX_SACCTMGR_ASSOC, doc, &o, &d), PX_EINVAL);
  assert_string_equal(d.msg, "Unknown field 'foo'");
  assert_int_equal(ftell(out), 0); /* nothing printed */
  fclose(out);
  json_decref(doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(assoc_tables),
      cmocka_unit_test(account_user_tables),
      cmocka_unit_test(qos_tables),
      cmocka_unit_test(unknown_field),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
