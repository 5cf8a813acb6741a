/*
 * Fair Tree and usage: Slurm's own Fair Tree regression (test24.4: the
 * expected sshare table is copied from the research notes, §1.6), the classic
 * page's tree ranked by Fair Tree (notes §1.7), and usage accrual with decay
 * worked out from the half-life formula.
 */
#include "px_test.h"

#include <math.h>

#include "core/coretest.h"

#define P PX_FAIRSHARE_PARENT

struct row {
  const char *name, *parent;
  int user;
  uint32_t shares;
  double usage;     /* users only */
  int rank;         /* expected FairShare x 21, users only */
};

/* test24.4: 21 user associations; "P" = FairShare=parent. */
static const struct row t244[] = {
    {"u1", "root", 1, 10, 0, 21},     {"u2", "root", 1, 10, 10, 14},
    {"aA", "root", 0, 40, 0, 0},      {"aAA", "aA", 0, 30, 0, 0},
    {"uAA1", "aAA", 1, 1, 20, 13},    {"aAB", "aA", 0, 10, 0, 0},
    {"uAB1", "aAB", 1, 1, 25, 11},    {"uAB2", "aAB", 1, 1, 0, 12},
    {"aB", "root", 0, 60, 0, 0},      {"aBA", "aB", 0, 25, 0, 0},
    {"uBA1", "aBA", 1, 1, 25, 15},    {"aBB", "aB", 0, 35, 0, 0},
    {"uBB1", "aBB", 1, 1, 0, 16},     {"aC", "root", 0, 0, 0, 0},
    {"uC1", "aC", 1, 0, 30, 1},       {"aD", "root", 0, 50, 0, 0},
    {"uD1", "aD", 1, P, 20, 10},      {"uD2", "aD", 1, 40, 20, 5},
    {"uD3", "aD", 1, 50, 25, 7},      {"aDA", "aD", 0, P, 0, 0},
    {"uDA1", "aDA", 1, P, 10, 10},    {"uDA2", "aDA", 1, 30, 10, 8},
    {"uDA3", "aDA", 1, 50, 25, 7},    {"aE", "root", 0, 10, 0, 0},
    {"aE1", "aE", 1, 10, 0, 21},      {"aE2", "aE", 1, 10, 0, 21},
    {"aF", "root", 0, 20, 0, 0},      {"uF1", "aF", 1, 10, 0, 21},
    {"uF2", "aF", 1, 20, 0, 21},      {"aG", "root", 0, 8, 0, 0},
    {"uG1", "aG", 1, 10, 10, 4},      {"aGA", "aG", 0, 10, 0, 0},
    {"uGA1", "aGA", 1, 20, 4, 4},     {"uGA2", "aGA", 1, 20, 6, 2},
};
#define NT244 (sizeof t244 / sizeof t244[0])

static uint32_t find(const struct px_conf *c, const char *name) {
  for (uint32_t i = 0; i < c->naccounts; i++)
    if (strcmp(c->accounts[i].name, name) == 0) return i;
  return PX_NONE;
}

/* Builds the tree, sets each user's raw usage (and its ancestors' sums, as
 * Slurm charges every level) and runs the Fair Tree pass at one instant. */
static struct px_core *tree_core_merge(struct px_conf **confp, const struct row *rows, size_t n, bool merge) {
  struct px_testconf_spec s = {.nnodes = 1, .gpus_per_node = 8, .cpus_per_node = 8, .mem_mib = 1024};
  struct px_conf *conf = px_testconf_new(&s);
  for (size_t i = 0; i < n; i++) {
    uint32_t parent = find(conf, rows[i].parent);
    assert_int_not_equal(parent, PX_NONE);
    uint32_t a = rows[i].user ? px_testconf_user(conf, rows[i].name, parent, rows[i].shares)
                              : px_testconf_account(conf, rows[i].name, parent, rows[i].shares);
    assert_int_not_equal(a, PX_NONE);
  }
  conf->sched.fair_tree_merge_ties = merge;
  struct px_core *c = tc_core(conf);
  assert_non_null(c);
  for (size_t i = 0; i < n; i++) {
    if (!rows[i].user) continue;
    for (uint32_t a = find(conf, rows[i].name); a != PX_NONE; a = c->assoc[a].parent)
      c->assoc[a].usage += rows[i].usage;
  }
  pxc_fs_update(c, 1000);
  *confp = conf;
  return c;
}

static struct px_core *tree_core(struct px_conf **confp, const struct row *rows, size_t n) {
  return tree_core_merge(confp, rows, n, false);
}

static const struct px_share_view *row_of(struct px_core *c, const struct px_conf *conf,
                                          const char *name, struct px_share_view *v) {
  uint32_t want = find(conf, name);
  for (size_t r = 0; r < px_core_nshares(c); r++) {
    assert_int_equal(px_core_share_get(c, r, v), 0);
    if (v->assoc == want) return v;
  }
  fail_msg("no row %s", name);
  return NULL;
}

static void fair_tree_reproduces_slurm_test24_4(void **state) {
  (void)state;
  struct px_conf *conf;
  struct px_core *c = tree_core(&conf, t244, NT244);
  struct px_share_view v;
  for (size_t i = 0; i < NT244; i++) {
    if (!t244[i].user) continue;
    row_of(c, conf, t244[i].name, &v);
    if (fabs(v.fairshare - t244[i].rank / 21.0) > 1e-9)
      fail_msg("%s: fairshare %f, want %d/21", t244[i].name, v.fairshare, t244[i].rank);
  }
  /* Other sshare -l columns of the same table (6 decimals as printed). */
  struct { const char *name; double norm_shares, eff_usage, level_fs; } cols[] = {
      {"aA", 0.192308, 0.187500, 1.025641},  {"aAA", 0.750000, 0.444444, 1.687500},
      {"aAB", 0.250000, 0.555556, 0.450000}, {"aB", 0.288462, 0.104167, 2.769231},
      {"aD", 0.240385, 0.458333, 0.524476},  {"uD2", 0.235294, 0.181818, 1.294118},
      {"uDA2", 0.176471, 0.090909, 1.941176}, {"aDA", 0.240385, 0.409091, NAN},
      {"uD1", 0.240385, 0.181818, INFINITY}, {"aC", 0.0, 0.125, 0.0},
      {"uGA2", 0.5, 0.6, 0.833333},
  };
  for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
    row_of(c, conf, cols[i].name, &v);
    assert_true(fabs(v.norm_shares - cols[i].norm_shares) < 5e-7);
    assert_true(fabs(v.effective_usage - cols[i].eff_usage) < 5e-7);
    if (isnan(cols[i].level_fs)) assert_true(isnan(v.level_fs));
    else if (isinf(cols[i].level_fs)) assert_true(isinf(v.level_fs));
    else assert_true(fabs(v.level_fs - cols[i].level_fs) < 5e-7);
  }
  row_of(c, conf, "root", &v);
  assert_true(fabs(v.raw_usage - 240) < 1e-9);
  row_of(c, conf, "u2", &v);
  assert_true(fabs(v.norm_usage - 10.0 / 240) < 1e-12);
  /* sshare order: depth first, users before sub-accounts. */
  const char *order[] = {"root", "u1", "u2", "aA", "aAA", "uAA1", "aAB", "uAB1", "uAB2", "aB"};
  for (size_t r = 0; r < sizeof order / sizeof order[0]; r++) {
    px_core_share_get(c, r, &v);
    assert_string_equal(conf->accounts[v.assoc].name, order[r]);
  }
  px_core_free(c);
  px_conf_free(conf);
}

/* The classic page's tree (A 40 {B 30: User1; C 10: User2, User3},
 * D 60 {E 25: User4; F 35: User5}) with usage 20/25/0/25/0. Level FS at the
 * root: D 0.6/(25/70) = 1.68 > A 0.4/(45/70) = 0.62, so D's users first:
 * F (no usage, inf) -> User5 5/5, E -> User4 4/5; then A: B 0.75/(20/45) =
 * 1.69 > C 0.25/(25/45) = 0.45 -> User1 3/5; in C User3 (no usage) 2/5,
 * User2 1/5. */
static void fair_tree_ranks_classic_example(void **state) {
  (void)state;
  static const struct row rows[] = {
      {"A", "root", 0, 40, 0, 0},     {"D", "root", 0, 60, 0, 0},   {"B", "A", 0, 30, 0, 0},
      {"C", "A", 0, 10, 0, 0},        {"E", "D", 0, 25, 0, 0},      {"F", "D", 0, 35, 0, 0},
      {"User1", "B", 1, 1, 20, 3},    {"User2", "C", 1, 1, 25, 1},  {"User3", "C", 1, 1, 0, 2},
      {"User4", "E", 1, 1, 25, 4},    {"User5", "F", 1, 1, 0, 5},
  };
  struct px_conf *conf;
  struct px_core *c = tree_core(&conf, rows, sizeof rows / sizeof rows[0]);
  struct px_share_view v;
  for (size_t i = 6; i < sizeof rows / sizeof rows[0]; i++) {
    row_of(c, conf, rows[i].name, &v);
    assert_true(fabs(v.fairshare - rows[i].rank / 5.0) < 1e-12);
  }
  px_core_free(c);
  px_conf_free(conf);
}

/*
 * Tied sibling accounts, worked by hand. root: X (1 share, usage 10) and Y
 * (1 share, usage 10): S = 0.5 each, U = 10/20, Level FS 1 = 1, a tie (X
 * first, in file order). X: x1 (usage 2) 0.5/(2/10) = 2.5, x2 (usage 8)
 * 0.5/(8/10) = 0.625. Y: account YB (yb1, usage 4) 0.5/(4/10) = 1.25 and
 * user y1 (usage 6) 0.5/(6/10) = 0.8333, so Y's level sorts YB, y1; yb1 is
 * 1/(4/4) = 1. N = 4 users.
 *
 * Slurm 22.05 (fair_tree.c never merges, the tie passes down): X's subtree
 * first, x1 rank 4, x2 rank 3; Y is tied with X, so its first child YB
 * starts tied, and YB's first child yb1 too: yb1 keeps rank 3; y1 is not
 * tied with YB (0.8333 != 1.25): rank 1 (rnt counted down to 1). Factors
 * x1 4/4, x2 3/4, yb1 3/4, y1 1/4.
 *
 * FairTreeMergeTies=YES (the documented merge): X's and Y's children in one
 * level, x1 2.5 > YB 1.25 > y1 0.8333 > x2 0.625: x1 4/4, yb1 3/4 (YB's
 * only user), y1 2/4, x2 1/4.
 */
static void fair_tree_ties_as_slurm_computes(void **state) {
  (void)state;
  static const struct row rows[] = {
      {"X", "root", 0, 1, 0, 0},   {"Y", "root", 0, 1, 0, 0},   {"x1", "X", 1, 1, 2, 0},
      {"x2", "X", 1, 1, 8, 0},     {"y1", "Y", 1, 1, 6, 0},     {"YB", "Y", 0, 1, 0, 0},
      {"yb1", "YB", 1, 1, 4, 0},
  };
  static const struct {
    const char *user;
    int slurm, merged; /* rank out of 4 */
  } want[] = {{"x1", 4, 4}, {"x2", 3, 1}, {"yb1", 3, 3}, {"y1", 1, 2}};
  for (int merge = 0; merge < 2; merge++) {
    struct px_conf *conf;
    struct px_core *c = tree_core_merge(&conf, rows, sizeof rows / sizeof rows[0], merge);
    struct px_share_view v;
    row_of(c, conf, "X", &v);
    double lx = v.level_fs;
    row_of(c, conf, "Y", &v);
    assert_true(lx == v.level_fs && fabs(lx - 1.0) < 1e-12); /* the tie */
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
      row_of(c, conf, want[i].user, &v);
      int rank = merge ? want[i].merged : want[i].slurm;
      if (fabs(v.fairshare - rank / 4.0) > 1e-12)
        fail_msg("%s (%s): fairshare %f, want %d/4", want[i].user, merge ? "merged" : "slurm", v.fairshare, rank);
    }
    px_core_free(c);
    px_conf_free(conf);
  }
}

/* alice's 8-GPU job started at t=1000, billed 1 per GPU (8/s). */
static void one_job(struct tc_fx *f, int64_t half_life_s) {
  f->conf = tc_conf(1, 8, 0, 0);
  f->conf->sched.decay_half_life_s = half_life_s;
  f->conf->sched.billing_weight_gpu = 1.0;
  tc_open(f);
  struct px_jobspec s = tc_spec("alice", 1, 8);
  assert_int_equal(tc_submit(f->core, 1, &s, 1000), 0);
  tc_cycle(f, 1000);
  assert_non_null(tc_started(&f->out, 1));
}

/* Usage accrues while a job runs and decays with the half-life. Half-life
 * 100 s: running from t=1000 to 1100 charges the integral of
 * 8 * 2^-(1100-s)/100 ds = 8 * 100/ln2 * (1 - 1/2) = 577.078...; by t=1200
 * it halves to 288.539... */
static void usage_accrues_and_decays(void **state) {
  (void)state;
  struct tc_fx f;
  one_job(&f, 100);
  tc_cycle(&f, 1100);
  struct px_share_view v;
  const double want = 8 * 100 / M_LN2 * 0.5;
  assert_true(fabs(row_of(f.core, f.conf, "alice", &v)->raw_usage - want) < 1e-6);
  assert_true(fabs(row_of(f.core, f.conf, "acct", &v)->raw_usage - want) < 1e-6);
  assert_int_equal(pxc_job_ended(f.core, 1, PX_JOB_COMPLETED, 0, 1100, NULL), 0);
  tc_cycle(&f, 1200);
  assert_true(fabs(row_of(f.core, f.conf, "alice", &v)->raw_usage - want / 2) < 1e-6);
  /* bob has no usage: under-served, so he ranks first (2/2), alice 1/2. */
  assert_true(fabs(row_of(f.core, f.conf, "bob", &v)->fairshare - 1.0) < 1e-12);
  assert_true(fabs(row_of(f.core, f.conf, "alice", &v)->fairshare - 0.5) < 1e-12);
  tc_close(&f);
}

/* Without decay usage is plain GPU-seconds: 8 GPUs x 100 s = 800. */
static void usage_without_decay_is_linear(void **state) {
  (void)state;
  struct tc_fx f;
  one_job(&f, 0);
  assert_int_equal(pxc_job_ended(f.core, 1, PX_JOB_COMPLETED, 0, 1100, NULL), 0);
  tc_cycle(&f, 5000);
  struct px_share_view v;
  assert_true(fabs(row_of(f.core, f.conf, "alice", &v)->raw_usage - 800) < 1e-9);
  tc_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fair_tree_reproduces_slurm_test24_4),
      cmocka_unit_test(fair_tree_ranks_classic_example),
      cmocka_unit_test(fair_tree_ties_as_slurm_computes),
      cmocka_unit_test(usage_accrues_and_decays),
      cmocka_unit_test(usage_without_decay_is_linear),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
