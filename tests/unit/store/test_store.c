/*
 * The store contract (store/store.h), run once against SQLite and once
 * against a real PostgreSQL server that this test starts itself through
 * tests/integration/pg_ctl.sh (skipped with a message when the PostgreSQL
 * binaries are missing). Expected figures are worked out by hand in comments.
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <unistd.h>

#ifdef PX_HAVE_PQ
#include <libpq-fe.h>
#endif

#include "store/store.h"

static char url[512];
static char tmpdir[64];

struct collect {
  uint64_t seqs[16];
  char kinds[16][16];
  char data[16][64];
  int n;
};

static int collect_rec(void *ctx, const struct px_store_rec *r) {
  struct collect *c = ctx;
  c->seqs[c->n] = r->seq;
  snprintf(c->kinds[c->n], sizeof c->kinds[0], "%s", r->kind);
  snprintf(c->data[c->n], sizeof c->data[0], "%s", r->data ? r->data : "(null)");
  c->n++;
  return 0;
}

static struct px_store *open_store(void) {
  struct px_store *s = NULL;
  struct px_diag d;
  px_diag_clear(&d);
  if (px_store_open(url, &s, &d)) fail_msg("open %s: %s", url, d.msg);
  return s;
}

static void journal_append_replay(void **state) {
  (void)state;
  struct px_store *s = open_store();
  struct px_store_rec recs[] = {
      {1, 1000, "submit", 7, NULL, "{\"name\":\"a\"}"},
      {2, 1001, "start", 7, "n01", "{}"},
      {3, 1002, "drain", 0, "n02", NULL},
  };
  assert_int_equal(px_store_append(s, recs, 3), 0);
  /* A batch with a duplicate seq fails whole: record 4 must not appear. */
  struct px_store_rec bad[] = {{4, 1003, "end", 7, NULL, NULL}, {2, 1003, "end", 7, NULL, NULL}};
  assert_int_equal(px_store_append(s, bad, 2), PX_EIO);
  uint64_t last;
  assert_int_equal(px_store_last_seq(s, &last), 0);
  assert_int_equal(last, 3);
  px_store_close(s);

  s = open_store(); /* durable across close/open */
  struct collect c = {0};
  assert_int_equal(px_store_replay(s, 1, collect_rec, &c), 0);
  assert_int_equal(c.n, 2); /* seq > 1: records 2 and 3 */
  assert_int_equal(c.seqs[0], 2);
  assert_string_equal(c.kinds[0], "start");
  assert_string_equal(c.data[1], "(null)");
  px_store_close(s);
}

static void snapshot_put_get(void **state) {
  (void)state;
  struct px_store *s = open_store();
  uint64_t seq;
  char *data;
  size_t len;
  assert_int_equal(px_store_snapshot_get(s, &seq, &data, &len), 0);
  assert_null(data);
  assert_int_equal(px_store_snapshot_put(s, 10, "first", 5), 0);
  assert_int_equal(px_store_snapshot_put(s, 20, "second", 6), 0);
  assert_int_equal(px_store_snapshot_get(s, &seq, &data, &len), 0);
  assert_int_equal(seq, 20);
  assert_int_equal(len, 6);
  assert_string_equal(data, "second");
  free(data);
  px_store_close(s);
}

struct usage_seen {
  char key[8][16];
  double gpu_s[8], wait[8];
  uint64_t jobs[8];
  int n;
};

static int collect_usage(void *ctx, const struct px_usage_row *r) {
  struct usage_seen *u = ctx;
  snprintf(u->key[u->n], sizeof u->key[0], "%s", r->key);
  u->gpu_s[u->n] = r->gpu_s;
  u->wait[u->n] = r->wait_s_sum;
  u->jobs[u->n++] = r->jobs;
  return 0;
}

static int count_acct(void *ctx, const struct px_acct_row *r) {
  int *n = ctx;
  assert_string_equal(r->user, "alice");
  (*n)++;
  return 0;
}

static void accounting_and_usage(void **state) {
  (void)state;
  struct px_store *s = open_store();
  struct px_acct_row rows[] = {
      /* alice/ml: 8 GPUs from 1000 to 2000 -> 8000 GPU-s; waited 1000-900 = 100 */
      {.job_id = 1, .user = "alice", .account = "ml", .partition = "gpu", .state = "COMPLETED",
       .submit_time = 900, .start_time = 1000, .end_time = 2000, .ngpus = 8},
      /* bob/ml: 2 GPUs, starts 500 (before the window at 1000) ends 1500: clipped to
       * 500 s -> 1000 GPU-s; waited 500-400 = 100 (eligible 400 wins over submit) */
      {.job_id = 2, .user = "bob", .account = "ml", .partition = "gpu", .state = "FAILED",
       .submit_time = 300, .eligible_time = 400, .start_time = 500, .end_time = 1500, .ngpus = 2},
      /* alice/physics: still running at now = 3000 from 2500: 4 GPUs x 500 s = 2000 */
      {.job_id = 3, .user = "alice", .account = "physics", .partition = "gpu",
       .state = "RUNNING", .submit_time = 2400, .start_time = 2500, .ngpus = 4},
      /* ended before the window: not counted */
      {.job_id = 4, .user = "alice", .account = "ml", .partition = "gpu", .state = "COMPLETED",
       .submit_time = 10, .start_time = 20, .end_time = 30, .ngpus = 8},
  };
  assert_int_equal(px_store_acct_put(s, rows, 4), 0);
  /* upsert: job 3 ends at 2800 -> 4 x 300 = 1200 GPU-s */
  rows[2].end_time = 2800;
  rows[2].state = "COMPLETED";
  assert_int_equal(px_store_acct_put(s, &rows[2], 1), 0);

  struct usage_seen u = {0};
  assert_int_equal(px_store_usage(s, 1000, 3000, PX_USAGE_ACCOUNT, collect_usage, &u), 0);
  assert_int_equal(u.n, 2);
  assert_string_equal(u.key[0], "ml");
  assert_true(u.gpu_s[0] == 9000.0); /* 8000 + 1000 */
  assert_int_equal(u.jobs[0], 2);
  assert_true(u.wait[0] == 200.0);
  assert_string_equal(u.key[1], "physics");
  assert_true(u.gpu_s[1] == 1200.0);

  int n = 0;
  struct px_acct_query q = {.user = "alice"};
  assert_int_equal(px_store_acct_query(s, &q, count_acct, &n), 0);
  assert_int_equal(n, 3); /* jobs 1, 3, 4 */
  n = 0;
  q.since = 1000; /* end_time >= 1000: jobs 1 and 3 */
  assert_int_equal(px_store_acct_query(s, &q, count_acct, &n), 0);
  assert_int_equal(n, 2);

  /* a reader's connection (px_store_open_serial, the server's API reads)
   * sees the same rows, and the writer's later ones */
  struct px_store *r = NULL;
  struct px_diag d;
  assert_int_equal(px_store_open_serial(url, &r, &d), 0);
  n = 0;
  assert_int_equal(px_store_acct_query(r, &q, count_acct, &n), 0);
  assert_int_equal(n, 2);
  rows[3].end_time = 2900; /* job 4 now ends inside the window */
  assert_int_equal(px_store_acct_put(s, &rows[3], 1), 0);
  n = 0;
  assert_int_equal(px_store_acct_query(r, &q, count_acct, &n), 0);
  assert_int_equal(n, 3);
  px_store_close(r);
  px_store_close(s);
}

/* Runs SQL on the store's database behind the store's back (the shape of
 * a store an older release made). */
static void exec_raw(const char *sql) {
  if (!strncmp(url, "sqlite:", 7)) {
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(url + 7, &db), SQLITE_OK);
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) fail_msg("%s: %s", sql, err);
    sqlite3_close(db);
    return;
  }
#ifdef PX_HAVE_PQ
  PGconn *c = PQconnectdb(url);
  PGresult *res = PQexec(c, sql);
  if (PQresultStatus(res) != PGRES_COMMAND_OK) fail_msg("%s: %s", sql, PQerrorMessage(c));
  PQclear(res);
  PQfinish(c);
#else
  fail_msg("no PostgreSQL client library");
#endif
}

struct limit_seen {
  int64_t limit[4];
  uint64_t submit_seq[4], start_seq[4], end_seq[4];
  char dep[4][32]; /* "(null)": none */
  char name[4][32]; /* "(null)": none */
  int n;
};

static int collect_limit(void *ctx, const struct px_acct_row *r) {
  struct limit_seen *l = ctx;
  l->submit_seq[l->n] = r->submit_seq;
  l->end_seq[l->n] = r->end_seq;
  l->start_seq[l->n] = r->start_seq;
  snprintf(l->dep[l->n], sizeof l->dep[0], "%s", r->dependency ? r->dependency : "(null)");
  snprintf(l->name[l->n], sizeof l->name[0], "%s", r->name ? r->name : "(null)");
  l->limit[l->n++] = r->time_limit_s;
  return 0;
}

/* The job's time limit, the journal seqs of its submit and end, its
 * dependency as written and its name (what a replay's singleton keys on;
 * a column since the first release) travel in its accounting row; a store
 * made before the later columns existed gains them when opened, its old
 * rows reading 0. */
static void time_limit_and_old_store(void **state) {
  (void)state;
  struct px_store *s = open_store();
  /* as an older release made it */
  exec_raw("ALTER TABLE acct DROP COLUMN time_limit_s; ALTER TABLE acct DROP COLUMN submit_seq;"
           " ALTER TABLE acct DROP COLUMN end_seq; ALTER TABLE acct DROP COLUMN start_seq;"
           " ALTER TABLE acct DROP COLUMN dependency");
  px_store_close(s);
  exec_raw("INSERT INTO acct(job_id, attempt, usr, state, submit_time, start_time, end_time)"
           " VALUES(41, 0, 'dave', 'COMPLETED', 100, 110, 170)");
  s = open_store();
  struct px_acct_row row = {.job_id = 42, .user = "dave", .state = "COMPLETED", .submit_time = 100,
                            .start_time = 120, .end_time = 180, .time_limit_s = 300, .submit_seq = 7,
                            .start_seq = 12, .end_seq = 93, .dependency = "afterok:12:13?singleton",
                            .name = "train, \"v2\""};
  assert_int_equal(px_store_acct_put(s, &row, 1), 0);
  struct limit_seen l = {0};
  struct px_acct_query q = {.user = "dave"};
  assert_int_equal(px_store_acct_query(s, &q, collect_limit, &l), 0);
  assert_int_equal(l.n, 2);
  assert_int_equal(l.limit[0], 0);   /* the old row */
  assert_int_equal(l.limit[1], 300); /* the new one keeps its limit */
  assert_int_equal(l.submit_seq[0], 0);
  assert_int_equal(l.end_seq[0], 0);
  assert_int_equal(l.submit_seq[1], 7); /* and its order of events */
  assert_int_equal(l.end_seq[1], 93);
  assert_int_equal(l.start_seq[0], 0);
  assert_int_equal(l.start_seq[1], 12);
  assert_string_equal(l.dep[0], "(null)"); /* an old row has none */
  assert_string_equal(l.dep[1], "afterok:12:13?singleton");
  assert_string_equal(l.name[0], "(null)"); /* the old row was written without one */
  assert_string_equal(l.name[1], "train, \"v2\"");
  /* each seq in the column of its name (a reader of the table sees them so) */
  exec_raw("INSERT INTO acct(job_id, attempt, usr, state, submit_seq, start_seq, end_seq)"
           " VALUES(43, 0, 'erin', 'COMPLETED', 1, 2, 3)");
  struct limit_seen e = {0};
  q.user = "erin";
  assert_int_equal(px_store_acct_query(s, &q, collect_limit, &e), 0);
  assert_int_equal(e.n, 1);
  assert_int_equal(e.submit_seq[0], 1);
  assert_int_equal(e.start_seq[0], 2);
  assert_int_equal(e.end_seq[0], 3);
  px_store_close(s);
}

struct arch_list {
  uint64_t ids[8];
  char data[8][32];
  int n;
};

static int collect_arch(void *ctx, const struct px_store_arch *a) {
  struct arch_list *l = ctx;
  l->ids[l->n] = a->job_id;
  snprintf(l->data[l->n++], sizeof l->data[0], "%s", a->data);
  return 0;
}

/* A checkpoint moves a job from the journal to the archive in one go. */
static void archive_moves_jobs(void **state) {
  (void)state;
  struct px_store *s = open_store();
  struct px_store_rec recs[] = {
      {100, 2000, "submit", 20, NULL, "{}"},
      {101, 2001, "end", 20, NULL, "{}"},
      {102, 2002, "submit", 21, NULL, "{}"},
  };
  assert_int_equal(px_store_append(s, recs, 3), 0);
  struct px_store_arch rows[] = {{20, "{\"state\":\"COMPLETED\"}"}};
  assert_int_equal(px_store_archive(s, rows, 1), 0);
  px_store_close(s);

  s = open_store();
  struct collect c = {0};
  assert_int_equal(px_store_replay(s, 99, collect_rec, &c), 0);
  assert_int_equal(c.n, 1); /* only job 21's record is left after seq 99 */
  assert_int_equal(c.seqs[0], 102);
  struct arch_list l = {0};
  assert_int_equal(px_store_archive_replay(s, collect_arch, &l), 0);
  assert_int_equal(l.n, 1);
  assert_int_equal(l.ids[0], 20);
  assert_string_equal(l.data[0], "{\"state\":\"COMPLETED\"}");
  /* archiving again replaces the row; jobs come back in id order */
  struct px_store_arch again[] = {{21, "b"}, {20, "a"}};
  assert_int_equal(px_store_archive(s, again, 2), 0);
  memset(&l, 0, sizeof l);
  assert_int_equal(px_store_archive_replay(s, collect_arch, &l), 0);
  assert_int_equal(l.n, 2);
  assert_int_equal(l.ids[0], 20);
  assert_string_equal(l.data[0], "a");
  assert_int_equal(l.ids[1], 21);
  px_store_close(s);
}

static int count_any(void *ctx, const struct px_acct_row *r) {
  (void)r;
  (*(int *)ctx)++;
  return 0;
}

/* The group commit with accounting rows: both land, or (a record refused)
 * neither does. */
static void append_with_accounting(void **state) {
  (void)state;
  struct px_store *s = open_store();
  uint64_t last;
  assert_int_equal(px_store_last_seq(s, &last), 0);
  struct px_store_rec ok[] = {{last + 1, 1000, "end", 31, NULL, "{}"}};
  struct px_acct_row row = {.job_id = 31, .user = "carol", .account = "ml", .partition = "gpu",
                            .state = "COMPLETED", .submit_time = 900, .start_time = 950, .end_time = 1000};
  assert_int_equal(px_store_append_acct(s, ok, 1, &row, 1), 0);
  int n = 0;
  struct px_acct_query q = {.user = "carol"};
  assert_int_equal(px_store_acct_query(s, &q, count_any, &n), 0);
  assert_int_equal(n, 1);
  /* seq last + 1 again: refused, so job 32's row must not appear either */
  struct px_store_rec dup[] = {{last + 1, 1001, "end", 32, NULL, "{}"}};
  row.job_id = 32;
  assert_int_equal(px_store_append_acct(s, dup, 1, &row, 1), PX_EIO);
  n = 0;
  assert_int_equal(px_store_acct_query(s, &q, count_any, &n), 0);
  assert_int_equal(n, 1);
  px_store_close(s);
}

static int count_ctl(void *ctx, const struct px_store_ctl *c) {
  assert_string_equal(c->role, "standby");
  (*(int *)ctx)++;
  return 0;
}

/* High availability (issue 16): the lease is taken only once expired, each
 * takeover a term higher; a store fenced by an older term refuses journal
 * writes and changes nothing. SQLite has none of it. */
static void lease_and_fencing(void **state) {
  (void)state;
  struct px_store *a = open_store(), *b = open_store();
  struct px_store_lease l;
  if (!px_store_has_lease(a)) {
    assert_int_equal(px_store_lease_acquire(a, "a", "http://a", 1000, &l), PX_EUNSUPPORTED);
    px_store_close(a);
    px_store_close(b);
    return;
  }
  assert_int_equal(px_store_lease_acquire(a, "a", "http://a", 60000, &l), 0);
  assert_true(l.held);
  uint64_t t = l.term;
  assert_int_equal(px_store_lease_acquire(b, "b", "http://b", 60000, &l), 0);
  assert_false(l.held); /* live: b only learns who leads */
  assert_true(l.live);
  assert_string_equal(l.addr, "http://a");
  assert_int_equal((int)l.term, (int)t);
  bool held = false;
  assert_int_equal(px_store_lease_renew(a, t, 60000, &held), 0);
  assert_true(held);
  uint64_t last;
  px_store_last_seq(a, &last);
  a->term = t;
  struct px_store_rec r1[] = {{last + 1, 1, "submit", 90, NULL, "{}"}};
  assert_int_equal(px_store_append(a, r1, 1), 0);
  assert_int_equal(px_store_lease_release(a, t), 0); /* a stops: b at once */
  assert_int_equal(px_store_lease_acquire(b, "b", "http://b", 60000, &l), 0);
  assert_true(l.held);
  assert_int_equal((int)l.term, (int)t + 1);
  assert_int_equal(px_store_lease_renew(a, t, 60000, &held), 0);
  assert_false(held);
  struct px_store_rec r2[] = {{last + 2, 2, "submit", 91, NULL, "{}"}};
  assert_int_equal(px_store_append(a, r2, 1), PX_ESTATE); /* fenced */
  assert_non_null(strstr(a->errmsg, "fenced"));
  struct px_store_arch arch = {90, "{}"};
  assert_int_equal(px_store_archive(a, &arch, 1), PX_ESTATE);
  uint64_t now;
  px_store_last_seq(b, &now);
  assert_int_equal((int)now, (int)last + 1); /* nothing of a's after the takeover */
  b->term = l.term;
  assert_int_equal(px_store_append(b, r2, 1), 0);
  struct px_store_ctl c = {"b", "http://b", "standby", l.term, last + 2, 1, 0};
  assert_int_equal(px_store_ctl_report(b, &c), 0);
  int n = 0;
  assert_int_equal(px_store_ctl_list(a, count_ctl, &n), 0);
  assert_int_equal(n, 1);
  px_store_close(a);
  px_store_close(b);
}

static void run_suite(const char *name) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(journal_append_replay),
      cmocka_unit_test(snapshot_put_get),
      cmocka_unit_test(accounting_and_usage),
      cmocka_unit_test(archive_moves_jobs),
      cmocka_unit_test(append_with_accounting),
      cmocka_unit_test(lease_and_fencing),
      cmocka_unit_test(time_limit_and_old_store),
  };
  if (_cmocka_run_group_tests(name, tests, 7, NULL, NULL)) exit(1);
}

static int start_pg(char *conninfo, size_t size) {
  char cmd[512];
  const char *src = getenv("PX_SRC");
  snprintf(cmd, sizeof cmd, "bash %s/tests/integration/pg_ctl.sh start %s/pg",
           src ? src : ".", tmpdir);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  if (!fgets(conninfo, (int)size, p)) conninfo[0] = '\0';
  int st = pclose(p);
  conninfo[strcspn(conninfo, "\n")] = '\0';
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void stop_pg(void) {
  char cmd[512];
  const char *src = getenv("PX_SRC");
  snprintf(cmd, sizeof cmd, "bash %s/tests/integration/pg_ctl.sh stop %s/pg", src ? src : ".",
           tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "stopping PostgreSQL failed\n");
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/px-store-XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  snprintf(url, sizeof url, "sqlite:%s/state.db", tmpdir);
  run_suite("store/sqlite");

  char conninfo[400];
  int rc = start_pg(conninfo, sizeof conninfo);
  if (rc == 77) {
    px_test_skip("store/test_store", "postgresql",
                 "the PostgreSQL half: server binaries not installed (Debian package postgresql)");
  } else if (rc != 0) {
    fprintf(stderr, "cannot start PostgreSQL (rc %d)\n", rc);
    return 1;
  } else {
    snprintf(url, sizeof url, "%s", conninfo);
    run_suite("store/postgresql");
    stop_pg();
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  return px_test_exit(system(cmd) == 0 ? 0 : 1);
}
