/*
 * Advance reservations: maintenance windows and account reservations on
 * nodes of 8 GPUs, FIFO order. Accounts: 1 acct (alice, bob), then ta (ua)
 * and tb (ub) under root.
 */
#include "px_test.h"

#include "core/policytest.h"

static struct px_conf *r_conf(uint32_t nnodes, enum px_backfill_mode bf) {
  struct px_conf *c = tc_conf(nnodes, 8, 0, 0);
  uint32_t ta = px_testconf_account(c, "ta", 0, 1), tb = px_testconf_account(c, "tb", 0, 1);
  px_testconf_user(c, "ua", ta, 1);
  px_testconf_user(c, "ub", tb, 1);
  c->sched.order = PX_ORDER_FIFO;
  c->sched.backfill = bf;
  c->sched.backfill_resolution_s = 100;
  c->sched.backfill_window_s = 10000;
  return c;
}

static int resv(struct px_core *c, const char *name, int64_t start, int64_t end, uint32_t node,
                uint32_t account) {
  uint32_t nodes[1] = {node};
  struct px_resv_spec s = {.name = name, .start_s = start, .end_s = end, .nodes = nodes, .nnodes = 1,
                           .partition = PX_NONE, .account = account, .maintenance = account == PX_NONE};
  struct px_diag d;
  return pxc_resv_add(c, &s, 0, &d);
}

/*
 * Node 0 is busy until 10000; node 1 has maintenance over [1000, 2000). At
 * 10, X (1500 s) would run into the window: it waits, and backfill plans it
 * after the window, at 2000. Y (900 s) ends at 910: it starts on node 1.
 */
static void maintenance_window(void **state) {
  (void)state;
  struct pf f = {.conf = r_conf(2, PX_BACKFILL_CONSERVATIVE)};
  pf_open(&f);
  assert_int_equal(resv(f.core, "maint", 1000, 2000, 1, PX_NONE), 0);
  pf_sub(&f, 1, "alice", 1, 8, 10000, 0);
  pf_cycle(&f, 0);
  assert_int_equal(pf_node(&f.out, 1), 0);
  pf_sub(&f, 2, "alice", 1, 8, 1500, 10);
  pf_sub(&f, 3, "bob", 1, 8, 900, 10);
  pf_cycle(&f, 10);
  assert_int_equal(pf_node(&f.out, 3), 1);
  struct px_job_view v = pf_view(f.core, 2);
  assert_string_equal(px_reason_name(v.reason), "ReqNodeNotAvail, Reserved for maintenance");
  assert_int_equal(v.expected_start_s, 2000);
  /* the window passes: X starts at 2000 (Y ended) */
  pf_end(&f, 3, 900);
  pf_cycle(&f, 1500);
  assert_null(tc_started(&f.out, 2));
  pf_cycle(&f, 2000);
  assert_int_equal(pf_node(&f.out, 2), 1);
  pf_close(&f);
}

/*
 * Node 1 reserved for tb over [0, 5000). The owner may use any node (ub's
 * first job lands on node 0, packing's first choice). With alice's 7 GPUs on
 * node 0, ua's 2-GPU job fits only node 1: it waits with the reservation's
 * reason. Then, on a fresh core: alice 5 GPUs on node 0 (3 left), ub 6 on
 * its node 1 (2 left), and ua's 2-GPU job, which packing would put on node 1
 * (the best fit), is placed again away from the reservation: node 0.
 */
static void account_reservation(void **state) {
  (void)state;
  struct pf f = {.conf = r_conf(2, PX_BACKFILL_NONE)};
  pf_open(&f);
  uint32_t tb = 5;
  assert_string_equal(f.conf->accounts[tb].name, "tb");
  assert_int_equal(resv(f.core, "tbres", 0, 5000, 1, tb), 0);
  pf_sub(&f, 1, "ub", 0, 1, 3600, 0);
  pf_cycle(&f, 0);
  assert_int_equal(pf_node(&f.out, 1), 0);
  pf_end(&f, 1, 5);
  /* node 0 partly used by alice, so packing prefers it for everyone */
  pf_sub(&f, 2, "alice", 0, 7, 3600, 10);
  pf_cycle(&f, 10);
  assert_int_equal(pf_node(&f.out, 2), 0);
  pf_sub(&f, 3, "ua", 0, 2, 3600, 20); /* node 0 has 1 free: only node 1 fits */
  pf_sub(&f, 4, "ub", 0, 2, 3600, 20);
  pf_cycle(&f, 20);
  assert_null(tc_started(&f.out, 3)); /* and job 4 waits behind it: no backfill */
  assert_int_equal(tc_reason(f.core, 3), PX_REASON_RESV_ACCOUNT);
  pf_close(&f);
  /* the owner gets the reserved node */
  f = (struct pf){.conf = r_conf(2, PX_BACKFILL_NONE)};
  pf_open(&f);
  assert_int_equal(resv(f.core, "tbres", 0, 5000, 1, tb), 0);
  pf_sub(&f, 1, "alice", 0, 5, 3600, 10);
  pf_sub(&f, 2, "ub", 0, 6, 3600, 10);
  pf_sub(&f, 3, "ua", 0, 2, 3600, 10);
  pf_cycle(&f, 10);
  assert_int_equal(pf_node(&f.out, 1), 0);
  assert_int_equal(pf_node(&f.out, 2), 1);
  assert_int_equal(pf_node(&f.out, 3), 0);
  pf_close(&f);
}

/* 16 GPUs of p0 (4 nodes) for maintenance over [0, 100000): the last two
 * nodes. A 3-node job waits; a 2-node job takes nodes 0-1. */
static void gpu_count_reservation(void **state) {
  (void)state;
  struct pf f = {.conf = r_conf(4, PX_BACKFILL_NONE)};
  pf_open(&f);
  struct px_resv_spec s = {.name = "m", .start_s = 0, .end_s = 100000, .partition = 0, .ngpus = 16,
                           .account = PX_NONE, .maintenance = true};
  assert_int_equal(pxc_resv_add(f.core, &s, 0, NULL), 0);
  pf_sub(&f, 1, "alice", 3, 8, 3600, 0);
  pf_cycle(&f, 0);
  assert_int_equal(f.out.len, 0);
  assert_int_equal(tc_reason(f.core, 1), PX_REASON_RESV_MAINT);
  assert_int_equal(pxc_cancel(f.core, 1, 1, NULL), 0);
  pf_sub(&f, 2, "alice", 2, 8, 3600, 1);
  pf_cycle(&f, 1);
  const struct px_action *a = tc_started(&f.out, 2);
  assert_non_null(a);
  assert_int_equal(f.out.allocs[a->alloc_first].node, 0);
  assert_int_equal(f.out.allocs[a->alloc_first + 1].node, 1);
  pf_close(&f);
}

static void errors_and_removal(void **state) {
  (void)state;
  struct pf f = {.conf = r_conf(2, PX_BACKFILL_NONE)};
  pf_open(&f);
  struct px_diag d;
  assert_int_equal(resv(f.core, "m", 0, 1000, 1, PX_NONE), 0);
  assert_int_equal(resv(f.core, "m", 0, 1000, 0, PX_NONE), PX_EEXIST);
  assert_int_equal(resv(f.core, "bad", 1000, 1000, 0, PX_NONE), PX_EINVAL);
  assert_int_equal(resv(f.core, "bad", 0, 1000, 7, PX_NONE), PX_ENOENT);
  struct px_resv_spec s = {.name = "big", .start_s = 0, .end_s = 10, .partition = 0, .ngpus = 100,
                           .account = PX_NONE, .maintenance = true};
  assert_int_equal(pxc_resv_add(f.core, &s, 0, &d), PX_ERANGE);
  assert_non_null(strstr(d.msg, "ngpus"));
  assert_int_equal(pxc_resv_remove(f.core, "nope", 0, &d), PX_ENOENT);
  pf_sub(&f, 1, "alice", 2, 8, 3600, 0);
  pf_cycle(&f, 0);
  assert_int_equal(f.out.len, 0);
  assert_int_equal(pxc_resv_remove(f.core, "m", 1, &d), 0);
  pf_cycle(&f, 1);
  assert_non_null(tc_started(&f.out, 1));
  pf_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(maintenance_window),
      cmocka_unit_test(account_reservation),
      cmocka_unit_test(gpu_count_reservation),
      cmocka_unit_test(errors_and_removal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
