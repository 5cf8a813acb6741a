/*
 * Online changes of the accounts tree and QoS (acct.c, PX_EV_ACCT): an
 * account and a user added take jobs at once, Fair Tree ranks with new
 * shares at the next cycle, limits set on an account reach its users and
 * clearing them lets jobs start, a deleted default association hands the
 * user's jobs to the next one; every refusal names the field and changes
 * nothing; out of memory changes nothing; the server's configuration copy
 * (px_conf_acct_apply) keeps the core's indexes; QoS are added and deleted.
 */
#include "px_test.h"

#include "core/coretest.h"
#include "core/event.h"

static int edit(struct px_core *c, struct px_acct_edit e, struct px_diag *d) {
  struct px_event ev = {.kind = PX_EV_ACCT, .acct = &e};
  struct px_event_result res;
  int rc = px_core_apply(c, &ev, 100, &res);
  if (d) *d = res.diag;
  return rc;
}

static struct px_acct_edit add_account(const char *name, const char *parent) {
  return (struct px_acct_edit){.op = PX_ACCT_ADD, .entity = PX_ACCT_ACCOUNT, .name = name, .parent = parent};
}

static struct px_acct_edit add_user(const char *name, const char *account) {
  return (struct px_acct_edit){.op = PX_ACCT_ADD, .entity = PX_ACCT_USER, .name = name, .account = account};
}

static struct px_acct_edit set(struct px_acct_edit e, enum px_acct_field f, uint64_t v) {
  e.set |= 1u << f;
  e.value[f] = v;
  return e;
}

/* The share row of account (user NULL) or of user under account. */
static bool share_of(struct px_core *c, const struct px_conf *conf, const char *account, const char *user,
                     struct px_share_view *out) {
  for (size_t r = 0; r < px_core_nshares(c); r++) {
    assert_int_equal(px_core_share_get(c, r, out), 0);
    const struct px_conf_account *a = &conf->accounts[out->assoc];
    const char *acct = a->is_user ? conf->accounts[a->parent].name : a->name;
    if (!strcmp(acct, account) && a->is_user == (user != NULL) && (!user || !strcmp(a->name, user))) return true;
  }
  return false;
}

/* Applies e to the core and, once accepted, to the conf (the server's way). */
static int both(struct tc_fx *f, struct px_acct_edit e, struct px_diag *d) {
  int rc = edit(f->core, e, d);
  if (!rc) assert_int_equal(px_conf_acct_apply(f->conf, &e), 0);
  return rc;
}

static void added_account_takes_jobs_and_shares(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  struct px_diag d;
  assert_int_equal(both(&f, set(add_account("vision", NULL), PX_ACCT_FAIRSHARE, 3), &d), 0);
  assert_int_equal(both(&f, add_user("carol", "vision"), &d), 0);
  assert_int_equal(f.conf->naccounts, 6); /* root, acct, alice, bob + 2: the conf's indexes follow */
  struct px_jobspec s = tc_spec("carol", 0, 1);
  s.account = "vision";
  assert_int_equal(tc_submit(f.core, 1, &s, 100), 0);
  tc_cycle(&f, 101);
  assert_non_null(tc_started(&f.out, 1));
  /* root's level: acct 1 share, vision 3 */
  struct px_share_view v;
  assert_true(share_of(f.core, f.conf, "vision", NULL, &v));
  assert_int_equal(v.raw_shares, 3);
  assert_float_equal(v.norm_shares, 0.75, 1e-9);
  assert_true(share_of(f.core, f.conf, "vision", "carol", &v));
  /* new shares at the next cycle */
  assert_int_equal(both(&f, set((struct px_acct_edit){.op = PX_ACCT_MODIFY, .entity = PX_ACCT_ACCOUNT,
                                                      .name = "vision"}, PX_ACCT_FAIRSHARE, 1), &d), 0);
  tc_cycle(&f, 102);
  assert_true(share_of(f.core, f.conf, "vision", NULL, &v));
  assert_float_equal(v.norm_shares, 0.5, 1e-9);
  assert_int_equal(f.conf->accounts[v.assoc].fairshare, 1);
  tc_close(&f);
}

static void refusals_name_the_field_and_change_nothing(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.hold = true;
  assert_int_equal(tc_submit(f.core, 1, &s, 100), 0);
  assert_int_equal(edit(f.core, add_account("sub", "acct"), NULL), 0);
  size_t rows = px_core_nshares(f.core);
  struct {
    struct px_acct_edit e;
    int rc;
    const char *msg;
  } cases[] = {
      {add_account("x", "nosuch"), PX_ENOENT, "parent: no account named nosuch"},
      {add_account("acct", NULL), PX_EEXIST, "name: account acct already exists"},
      {add_user("carol", NULL), PX_EINVAL, "account: a user association needs an account"},
      {add_user("carol", "nosuch"), PX_ENOENT, "account: no account named nosuch"},
      {add_user("alice", "acct"), PX_EEXIST, "name: user alice already has an association"},
      {set(add_account("y", NULL), PX_ACCT_FAIRSHARE, (uint64_t)PX_FAIRSHARE_PARENT + 1), PX_ERANGE, "fairshare:"},
      {set(add_account("y", NULL), PX_ACCT_PRIORITY, 3), PX_EINVAL, "priority: not a setting of an account"},
      {{.op = PX_ACCT_DELETE, .entity = PX_ACCT_ACCOUNT, .name = "root"}, PX_EPERM, "name: the root account"},
      {{.op = PX_ACCT_DELETE, .entity = PX_ACCT_ACCOUNT, .name = "acct"}, PX_ESTATE,
       "name: account acct has sub-account sub"},
      {{.op = PX_ACCT_DELETE, .entity = PX_ACCT_USER, .name = "alice"}, PX_ESTATE,
       "name: user alice has 1 queued or running job(s) in account acct"},
      {{.op = PX_ACCT_DELETE, .entity = PX_ACCT_USER, .name = "carol"}, PX_ENOENT, "name: user carol has no"},
      {{.op = PX_ACCT_MODIFY, .entity = PX_ACCT_ACCOUNT, .name = "nosuch"}, PX_ENOENT, "name: no account"},
      {{.op = PX_ACCT_ADD, .entity = PX_ACCT_QOS, .name = "normal"}, PX_EEXIST, "name: QoS normal already exists"},
      {set((struct px_acct_edit){.op = PX_ACCT_MODIFY, .entity = PX_ACCT_QOS, .name = "normal"},
           PX_ACCT_MAX_JOBS, 1), PX_EINVAL, "max_jobs: not a setting of a QoS"},
      {{.op = PX_ACCT_MODIFY, .entity = PX_ACCT_QOS, .name = "nosuch"}, PX_ENOENT, "name: no QoS named nosuch"},
      {{.op = PX_ACCT_ADD, .entity = PX_ACCT_ACCOUNT}, PX_EINVAL, "name: missing"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct px_diag d;
    assert_int_equal(edit(f.core, cases[i].e, &d), cases[i].rc);
    if (!strstr(d.msg, cases[i].msg)) fail_msg("case %zu: \"%s\" lacks \"%s\"", i, d.msg, cases[i].msg);
    assert_int_equal(px_core_nshares(f.core), rows);
  }
  tc_close(&f);
}

/* MaxJobs set on an account reaches its users; cleared, the job starts. */
static void account_limits_reach_users(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  struct px_acct_edit lim = {.op = PX_ACCT_MODIFY, .entity = PX_ACCT_ACCOUNT, .name = "acct"};
  assert_int_equal(edit(f.core, set(lim, PX_ACCT_MAX_JOBS, 1), NULL), 0);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  assert_int_equal(tc_submit(f.core, 1, &s, 100), 0);
  assert_int_equal(tc_submit(f.core, 2, &s, 100), 0);
  tc_cycle(&f, 101);
  assert_non_null(tc_started(&f.out, 1));
  assert_int_equal(tc_reason(f.core, 2), PX_REASON_ASSOC_MAX_JOBS);
  assert_int_equal(edit(f.core, set(lim, PX_ACCT_MAX_JOBS, PX_NOLIMIT), NULL), 0);
  tc_cycle(&f, 102);
  assert_non_null(tc_started(&f.out, 2));
  tc_close(&f);
}

/* Deleting the user's default association: jobs without --account go to
 * the next one; deleting an account takes its idle users along. */
static void deletions_move_the_default(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  assert_int_equal(both(&f, add_account("vision", NULL), NULL), 0);
  assert_int_equal(both(&f, add_user("alice", "vision"), NULL), 0);
  assert_int_equal(both(&f, (struct px_acct_edit){.op = PX_ACCT_DELETE, .entity = PX_ACCT_USER, .name = "alice",
                                                  .account = "acct"}, NULL), 0);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  struct px_event ev = {.kind = PX_EV_SUBMIT, .job_id = 1, .spec = &s};
  struct px_event_result res;
  assert_int_equal(px_core_apply(f.core, &ev, 100, &res), 0);
  assert_string_equal(f.conf->accounts[res.account].name, "vision");
  s.account = "acct";
  ev.job_id = 2;
  assert_int_equal(px_core_apply(f.core, &ev, 100, &res), PX_EPERM); /* no association any more */
  assert_int_equal(both(&f, (struct px_acct_edit){.op = PX_ACCT_DELETE, .entity = PX_ACCT_ACCOUNT, .name = "acct"},
                        NULL), 0);
  struct px_share_view v;
  assert_false(share_of(f.core, f.conf, "acct", NULL, &v));
  assert_false(share_of(f.core, f.conf, "acct", "bob", &v));
  assert_int_equal(px_conf_find_account(f.conf, "acct"), PX_NONE);
  /* a new account of the same name is a new association */
  assert_int_equal(both(&f, add_account("acct", NULL), NULL), 0);
  assert_true(share_of(f.core, f.conf, "acct", NULL, &v));
  assert_int_equal(px_core_nshares(f.core), 4); /* root, vision, alice, acct */
  tc_close(&f);
}

/* modify with account and default_account: jobs without --account go there. */
static void default_account_changes(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  assert_int_equal(both(&f, add_account("vision", NULL), NULL), 0);
  assert_int_equal(both(&f, add_user("alice", "vision"), NULL), 0);
  struct px_diag d;
  struct px_acct_edit m = {.op = PX_ACCT_MODIFY, .entity = PX_ACCT_USER, .name = "alice", .default_account = true};
  assert_int_equal(both(&f, m, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "account: the new default account"));
  m.account = "vision";
  assert_int_equal(both(&f, m, &d), 0);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  struct px_event ev = {.kind = PX_EV_SUBMIT, .job_id = 1, .spec = &s};
  struct px_event_result res;
  assert_int_equal(px_core_apply(f.core, &ev, 100, &res), 0);
  assert_string_equal(f.conf->accounts[res.account].name, "vision");
  uint32_t marked = 0;
  for (uint32_t i = 0; i < f.conf->naccounts; i++)
    if (f.conf->accounts[i].is_user && !strcmp(f.conf->accounts[i].name, "alice") &&
        f.conf->accounts[i].is_default_account)
      marked = f.conf->accounts[i].parent;
  assert_string_equal(f.conf->accounts[marked].name, "vision"); /* the listing agrees */
  tc_close(&f);
}

/* A share count given to a FairShare=parent account makes it a member of
 * its level: its share is normalised there at the next cycle. */
static void shares_replace_fairshare_parent(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  px_testconf_user(f.conf, "dave", px_testconf_account(f.conf, "pa", 0, PX_FAIRSHARE_PARENT), 1);
  tc_open(&f);
  tc_cycle(&f, 100);
  struct px_share_view v;
  assert_true(share_of(f.core, f.conf, "pa", NULL, &v));
  assert_true(v.shares_parent);
  struct px_acct_edit m = {.op = PX_ACCT_MODIFY, .entity = PX_ACCT_ACCOUNT, .name = "pa"};
  assert_int_equal(both(&f, set(m, PX_ACCT_FAIRSHARE, 3), NULL), 0);
  tc_cycle(&f, 101);
  assert_true(share_of(f.core, f.conf, "pa", NULL, &v));
  assert_false(v.shares_parent);
  assert_int_equal(v.raw_shares, 3);
  assert_float_equal(v.norm_shares, 0.75, 1e-9); /* acct 1, pa 3 */
  assert_true(share_of(f.core, f.conf, "pa", "dave", &v));
  assert_float_equal(v.norm_shares, 1.0, 1e-9); /* alone in pa's level now */
  /* and back: dave's usage counts as pa's (FairShare=parent) */
  struct px_acct_edit u = {.op = PX_ACCT_MODIFY, .entity = PX_ACCT_USER, .name = "dave"};
  assert_int_equal(both(&f, set(u, PX_ACCT_FAIRSHARE, PX_FAIRSHARE_PARENT), NULL), 0);
  tc_cycle(&f, 102);
  assert_true(share_of(f.core, f.conf, "pa", "dave", &v));
  assert_true(v.shares_parent);
  assert_int_equal(f.conf->accounts[v.assoc].fairshare, PX_FAIRSHARE_PARENT);
  tc_close(&f);
}

/* Past 64 accounts the partitions' account sets grow; a new account is
 * in none of them (AllowAccounts names the configuration's). */
static void many_accounts_and_allow_lists(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  uint32_t *allow = px_arena_alloc(&f.conf->arena, sizeof *allow);
  allow[0] = 1; /* acct */
  f.conf->partitions[0].allow_accounts = allow;
  f.conf->partitions[0].nallow_accounts = 1;
  tc_open(&f);
  char name[16];
  for (int i = 0; i < 130; i++) {
    snprintf(name, sizeof name, "a%d", i);
    assert_int_equal(edit(f.core, add_account(name, "acct"), NULL), 0);
  }
  assert_int_equal(edit(f.core, add_user("carol", "a129"), NULL), 0);
  struct px_jobspec s = tc_spec("carol", 0, 1);
  enum px_reason r;
  struct px_diag d;
  assert_int_equal(pxc_submit(f.core, 1, &s, 100, &r, &d), PX_EPERM);
  assert_int_equal(r, PX_REASON_ACCOUNT_NOT_ALLOWED);
  s = tc_spec("alice", 0, 1);
  assert_int_equal(tc_submit(f.core, 2, &s, 100), 0);
  tc_cycle(&f, 101);
  assert_non_null(tc_started(&f.out, 2));
  tc_close(&f);
}

/* Each allocation of an addition failed in turn: PX_ENOMEM, nothing changed. */
static struct px_acct_edit qos_edit(int op, const char *name) {
  return (struct px_acct_edit){.op = op, .entity = PX_ACCT_QOS, .name = name};
}

/* A QoS added online takes jobs at once; it is deleted only when nothing
 * uses it; a deleted name takes no job and may be added again; at most
 * PXC_QOS_ONLINE_MAX are added until the next start. */
static void qos_added_used_and_deleted(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  struct px_diag d;
  uint32_t nq = f.conf->nqos;
  assert_int_equal(both(&f, set(qos_edit(PX_ACCT_ADD, "gold"), PX_ACCT_PRIORITY, 5), &d), 0);
  assert_int_equal(both(&f, qos_edit(PX_ACCT_ADD, "gold"), &d), PX_EEXIST);
  assert_int_equal(f.conf->nqos, nq + 1);
  assert_int_equal(f.conf->qos[nq].priority, 5);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.qos = (char *)"gold";
  assert_int_equal(tc_submit(f.core, 1, &s, 100), 0);
  assert_int_equal(both(&f, qos_edit(PX_ACCT_DELETE, "gold"), &d), PX_ESTATE);
  assert_non_null(strstr(d.msg, "name: QoS gold has 1 queued or running job(s)"));
  assert_int_equal(both(&f, qos_edit(PX_ACCT_DELETE, "normal"), &d), PX_ESTATE);
  assert_non_null(strstr(d.msg, "is the default QoS (of every association without one)"));
  struct px_event cancel = {.kind = PX_EV_CANCEL, .job_id = 1};
  struct px_event_result res;
  assert_int_equal(px_core_apply(f.core, &cancel, 101, &res), 0);
  assert_int_equal(both(&f, qos_edit(PX_ACCT_DELETE, "gold"), &d), 0);
  assert_true(f.conf->qos[nq].deleted);
  assert_int_equal(px_conf_find_qos(f.conf, "gold"), PX_NONE);
  assert_int_not_equal(tc_submit(f.core, 2, &s, 102), 0);
  assert_int_equal(both(&f, qos_edit(PX_ACCT_ADD, "gold"), &d), 0); /* again, in a new slot */
  assert_int_equal(px_conf_find_qos(f.conf, "gold"), nq + 1);
  assert_int_equal(tc_submit(f.core, 3, &s, 103), 0);
  for (int i = 2; i < PXC_QOS_ONLINE_MAX; i++) {
    char name[16];
    snprintf(name, sizeof name, "q%d", i);
    assert_int_equal(both(&f, qos_edit(PX_ACCT_ADD, name), &d), 0);
  }
  assert_int_equal(both(&f, qos_edit(PX_ACCT_ADD, "onemore"), &d), PX_ERANGE);
  assert_non_null(strstr(d.msg, "no room for QoS onemore"));
  tc_cycle(&f, 104);
  assert_non_null(tc_started(&f.out, 3));
  assert_null(tc_invariants(f.core));
  tc_close(&f);
}

static void out_of_memory_changes_nothing(void **state) {
  (void)state;
  struct px_conf *conf = tc_conf(2, 8, 0, 0);
  long n = 1;
  for (;; n++) {
    struct tc_failer fl = {0, 0};
    struct px_core_allocator al = {tc_fail_realloc, &fl};
    struct px_core *c = px_core_new_with_alloc(conf, 1, &al, NULL);
    assert_non_null(c);
    for (int i = 0; i == 0 || c->nassoc < c->assoc_cap; i++) { /* full: the next addition grows the arrays */
      char name[16];
      snprintf(name, sizeof name, "pre%d", i);
      assert_int_equal(edit(c, add_account(name, NULL), NULL), 0);
    }
    size_t rows = px_core_nshares(c);
    fl.countdown = n;
    int rc = edit(c, add_account("vision", "acct"), NULL);
    if (!rc) rc = edit(c, add_user("carol", "vision"), NULL);
    bool failed = fl.countdown <= 0;
    fl.countdown = 0;
    if (failed) {
      assert_int_equal(rc, PX_ENOMEM);
      assert_true(px_core_nshares(c) == rows || px_core_nshares(c) == rows + 1);
    } else {
      assert_int_equal(rc, 0);
      assert_int_equal(px_core_nshares(c), rows + 2);
    }
    assert_null(tc_invariants(c));
    px_core_free(c);
    if (!failed) break;
  }
  assert_true(n > 5); /* the additions allocate: each allocation was failed once */
  px_conf_free(conf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(added_account_takes_jobs_and_shares),
      cmocka_unit_test(refusals_name_the_field_and_change_nothing),
      cmocka_unit_test(account_limits_reach_users),
      cmocka_unit_test(deletions_move_the_default),
      cmocka_unit_test(default_account_changes),
      cmocka_unit_test(shares_replace_fairshare_parent),
      cmocka_unit_test(many_accounts_and_allow_lists),
      cmocka_unit_test(qos_added_used_and_deleted),
      cmocka_unit_test(out_of_memory_changes_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
