/*
 * store_sqlite.c - the SQLite backend of store.h: one database file in WAL
 * mode with synchronous=FULL, so a commit returns after the WAL is fsynced.
 * Statements used on hot paths are prepared once at open.
 *
 * Checkpoints (copying the WAL into the database file, with its own fsync)
 * run on a thread of the store with its own connection, twice a second,
 * PASSIVE (they never block a commit), instead of inside whichever commit
 * crosses SQLite's autocheckpoint size: a batch of 1,000 submits then does
 * not pay for copying the last eight. The autocheckpoint stays as a backstop
 * at CKPT_BACKSTOP_PAGES should that thread fall behind.
 *
 * The WAL file is kept at WAL_BYTES, written in full once (zeros past
 * SQLite's frames, which it never reads: a frame is valid only with the
 * header's salt and checksum): a commit then overwrites blocks the file
 * already has, so its fdatasync writes the data and flushes, where a
 * growing file also wrote its inode and allocation metadata on every commit
 * (a third to a half more fsync time on ext4). SQLite keeps the file at
 * close (PERSIST_WAL) and truncates it back to WAL_BYTES after a checkpoint
 * should it have grown (journal_size_limit); the checkpointer is woken
 * early when the WAL fills past half of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "store/store_sql.h"

#define CKPT_PERIOD_NS 500000000LL
#define CKPT_BACKSTOP_PAGES 16384
#define WAL_BYTES (16LL << 20)

struct sq_store {
  struct px_store base;
  sqlite3 *db;
  sqlite3_stmt *ins_journal, *ins_acct, *ins_arch, *del_job, *ins_node_ev, *end_node_ev;
  /* the checkpointer */
  sqlite3 *ckpt_db;
  pthread_t ckpt;
  pthread_mutex_t ckpt_lock;
  pthread_cond_t ckpt_wake;
  bool ckpt_started, ckpt_stop, ckpt_lock_ok, ckpt_due;
};

static void *checkpointer(void *arg) {
  struct sq_store *s = arg;
  pthread_mutex_lock(&s->ckpt_lock);
  while (!s->ckpt_stop) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = (int64_t)ts.tv_nsec + CKPT_PERIOD_NS;
    ts.tv_sec += ns / 1000000000LL;
    ts.tv_nsec = ns % 1000000000LL;
    if (!s->ckpt_due && pthread_cond_timedwait(&s->ckpt_wake, &s->ckpt_lock, &ts) != ETIMEDOUT)
      continue;
    s->ckpt_due = false;
    pthread_mutex_unlock(&s->ckpt_lock);
    sqlite3_wal_checkpoint_v2(s->ckpt_db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    pthread_mutex_lock(&s->ckpt_lock);
  }
  pthread_mutex_unlock(&s->ckpt_lock);
  return NULL;
}

/* After each commit (SQLite's WAL hook, replacing its autocheckpoint):
 * wakes the checkpointer once the WAL holds half of WAL_BYTES; checkpoints
 * right here past the backstop. */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int pages) {
  struct sq_store *s = arg;
  if ((int64_t)pages * 4096 >= WAL_BYTES / 2) {
    pthread_mutex_lock(&s->ckpt_lock);
    s->ckpt_due = true;
    pthread_cond_signal(&s->ckpt_wake);
    pthread_mutex_unlock(&s->ckpt_lock);
  }
  if (pages >= CKPT_BACKSTOP_PAGES)
    sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
  return SQLITE_OK;
}

/* Keeps the WAL (see the file comment) and writes it out to WAL_BYTES:
 * only past its end, never over a frame. Best effort. */
static void wal_prealloc(sqlite3 *db) {
  int one = 1;
  sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
  sqlite3_exec(db, "PRAGMA journal_size_limit=16777216", NULL, NULL, NULL);
  const char *wal = sqlite3_filename_wal(sqlite3_db_filename(db, "main"));
  int fd = wal && *wal ? open(wal, O_WRONLY | O_CLOEXEC) : -1;
  off_t end = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
  if (end < 0 || end >= WAL_BYTES) {
    if (fd >= 0) close(fd);
    return;
  }
  static const char zeros[1 << 16];
  while (end < WAL_BYTES) {
    ssize_t n = pwrite(fd, zeros, sizeof zeros, end);
    if (n <= 0) break;
    end += n;
  }
  fdatasync(fd);
  close(fd);
}

/* Best effort: without the thread, SQLite's own autocheckpoint does it. */
static void start_checkpointer(struct sq_store *s, const char *path) {
  pthread_mutex_init(&s->ckpt_lock, NULL);
  pthread_cond_init(&s->ckpt_wake, NULL);
  s->ckpt_lock_ok = true;
  if (sqlite3_open_v2(path, &s->ckpt_db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) return;
  sqlite3_busy_timeout(s->ckpt_db, 1000);
  sqlite3_exec(s->ckpt_db, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
  int one = 1; /* whichever connection closes last keeps the WAL */
  sqlite3_file_control(s->ckpt_db, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
  if (pthread_create(&s->ckpt, NULL, checkpointer, s) != 0) return;
  s->ckpt_started = true;
  sqlite3_wal_hook(s->db, wal_hook, s);
}

static void stop_checkpointer(struct sq_store *s) {
  if (s->ckpt_started) {
    pthread_mutex_lock(&s->ckpt_lock);
    s->ckpt_stop = true;
    pthread_cond_signal(&s->ckpt_wake);
    pthread_mutex_unlock(&s->ckpt_lock);
    pthread_join(s->ckpt, NULL);
    s->ckpt_started = false;
  }
  sqlite3_close(s->ckpt_db);
  s->ckpt_db = NULL;
}

static int sq_fail(struct sq_store *s, const char *what) {
  snprintf(s->base.errmsg, sizeof s->base.errmsg, "sqlite %s: %s", what, sqlite3_errmsg(s->db));
  return PX_EIO;
}

static int sq_exec(struct sq_store *s, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(s->db, sql, NULL, NULL, &err) == SQLITE_OK) return 0;
  snprintf(s->base.errmsg, sizeof s->base.errmsg, "sqlite: %s", err ? err : "?");
  sqlite3_free(err);
  return PX_EIO;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v) {
  if (v)
    sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, i);
}

static int journal_rows(struct sq_store *s, const struct px_store_rec *r, size_t n) {
  for (size_t i = 0; i < n; i++) {
    sqlite3_stmt *st = s->ins_journal;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)r[i].seq);
    sqlite3_bind_int64(st, 2, r[i].time);
    bind_text(st, 3, r[i].kind);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)r[i].job_id);
    bind_text(st, 5, r[i].subject);
    bind_text(st, 6, r[i].data);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE) return sq_fail(s, "append");
  }
  return 0;
}

static int acct_rows(struct sq_store *s, const struct px_acct_row *rows, size_t n);

/* What a failed write may become (store.h, append): a full disk or a
 * locked database may clear (PX_EAGAIN); anything else, an I/O error or a
 * corrupt file, is PX_EIO. Read before the ROLLBACK, which resets it. */
static int sq_write_error(struct sq_store *s) {
  switch (sqlite3_errcode(s->db)) {
  case SQLITE_FULL:
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    return PX_EAGAIN;
  default:
    return PX_EIO;
  }
}

/* BEGIN IMMEDIATE, the inserts, COMMIT; a failure rolls everything back. */
static int sq_append(struct px_store *ps, const struct px_store_rec *r, size_t n, const struct px_acct_row *rows,
                     size_t nrows) {
  struct sq_store *s = (struct sq_store *)ps;
  if (sq_exec(s, "BEGIN IMMEDIATE")) return sq_write_error(s);
  if (journal_rows(s, r, n) || acct_rows(s, rows, nrows) || sq_exec(s, "COMMIT")) {
    int rc = sq_write_error(s);
    char why[sizeof s->base.errmsg]; /* SQLite may have rolled back already: */
    memcpy(why, s->base.errmsg, sizeof why); /* keep the cause, not that */
    sq_exec(s, "ROLLBACK");
    memcpy(s->base.errmsg, why, sizeof why);
    return rc;
  }
  return 0;
}

static const char *col_text(sqlite3_stmt *st, int i) {
  return (const char *)sqlite3_column_text(st, i);
}

static int sq_replay(struct px_store *ps, uint64_t after, px_store_rec_fn fn, void *ctx) {
  struct sq_store *s = (struct sq_store *)ps;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db,
                         "SELECT seq, time, kind, job_id, subject, data FROM journal"
                         " WHERE seq > ? ORDER BY seq",
                         -1, &st, NULL) != SQLITE_OK)
    return sq_fail(s, "replay");
  sqlite3_bind_int64(st, 1, (sqlite3_int64)after);
  int rc = 0, step;
  while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
    struct px_store_rec r = {(uint64_t)sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                             col_text(st, 2), (uint64_t)sqlite3_column_int64(st, 3),
                             col_text(st, 4), col_text(st, 5)};
    rc = fn(ctx, &r);
  }
  if (!rc && step != SQLITE_DONE) rc = sq_fail(s, "replay");
  sqlite3_finalize(st);
  return rc;
}

/* Runs a query that returns one integer (or none: *v = 0). */
static int sq_one_int(struct sq_store *s, const char *sql, int64_t *v) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return sq_fail(s, sql);
  int step = sqlite3_step(st);
  *v = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_finalize(st);
  return step == SQLITE_ROW || step == SQLITE_DONE ? 0 : sq_fail(s, sql);
}

static int sq_last_seq(struct px_store *ps, uint64_t *seq) {
  int64_t v;
  int rc = sq_one_int((struct sq_store *)ps, "SELECT COALESCE(MAX(seq), 0) FROM journal", &v);
  *seq = rc ? 0 : (uint64_t)v;
  return rc;
}

static int sq_snapshot_put(struct px_store *ps, uint64_t seq, const char *data, size_t len) {
  struct sq_store *s = (struct sq_store *)ps;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO snapshot(id, seq, data) VALUES(1, ?, ?)",
                         -1, &st, NULL) != SQLITE_OK)
    return sq_fail(s, "snapshot");
  sqlite3_bind_int64(st, 1, (sqlite3_int64)seq);
  sqlite3_bind_blob64(st, 2, data, len, SQLITE_STATIC);
  int step = sqlite3_step(st);
  sqlite3_finalize(st);
  return step == SQLITE_DONE ? 0 : sq_fail(s, "snapshot");
}

static int sq_snapshot_get(struct px_store *ps, uint64_t *seq, char **data, size_t *len) {
  struct sq_store *s = (struct sq_store *)ps;
  sqlite3_stmt *st;
  *seq = 0;
  *data = NULL;
  *len = 0;
  if (sqlite3_prepare_v2(s->db, "SELECT seq, data FROM snapshot WHERE id = 1", -1, &st, NULL) !=
      SQLITE_OK)
    return sq_fail(s, "snapshot");
  int rc = 0, step = sqlite3_step(st);
  if (step == SQLITE_ROW) {
    size_t n = (size_t)sqlite3_column_bytes(st, 1);
    *data = malloc(n + 1);
    if (!*data) {
      rc = PX_ENOMEM;
    } else {
      if (n) memcpy(*data, sqlite3_column_blob(st, 1), n);
      (*data)[n] = '\0';
      *len = n;
      *seq = (uint64_t)sqlite3_column_int64(st, 0);
    }
  } else if (step != SQLITE_DONE) {
    rc = sq_fail(s, "snapshot");
  }
  sqlite3_finalize(st);
  return rc;
}

static void bind_acct(sqlite3_stmt *st, const struct px_acct_row *r) {
  int i = 1;
  sqlite3_bind_int64(st, i++, (sqlite3_int64)r->job_id);
  sqlite3_bind_int64(st, i++, r->attempt);
  sqlite3_bind_int64(st, i++, (sqlite3_int64)r->array_job_id);
  sqlite3_bind_int64(st, i++, r->array_task_id);
  const char *texts[] = {r->name, r->user, r->account, r->partition, r->qos, r->state, r->nodelist};
  for (size_t k = 0; k < 7; k++) bind_text(st, i++, texts[k]);
  const int64_t ints[] = {r->uid,        r->submit_time, r->eligible_time, r->start_time,
                          r->end_time,   r->exit_code,   r->term_signal,   r->nnodes,
                          r->ngpus,      r->ncpus,       (int64_t)r->mem_mib};
  for (size_t k = 0; k < 11; k++) sqlite3_bind_int64(st, i++, ints[k]);
  sqlite3_bind_double(st, i++, r->billable_tres_s);
  sqlite3_bind_int64(st, i++, r->gpu_share);
  bind_text(st, i++, r->steps);
  sqlite3_bind_int64(st, i++, r->time_limit_s);
  sqlite3_bind_int64(st, i++, (sqlite3_int64)r->submit_seq);
  sqlite3_bind_int64(st, i++, (sqlite3_int64)r->end_seq);
  sqlite3_bind_int64(st, i++, (sqlite3_int64)r->start_seq);
  bind_text(st, i, r->dependency);
}

static int acct_rows(struct sq_store *s, const struct px_acct_row *rows, size_t n) {
  for (size_t i = 0; i < n; i++) {
    bind_acct(s->ins_acct, &rows[i]);
    int step = sqlite3_step(s->ins_acct);
    sqlite3_reset(s->ins_acct);
    sqlite3_clear_bindings(s->ins_acct);
    if (step != SQLITE_DONE) return sq_fail(s, "acct");
  }
  return 0;
}

/* A store made before a column was added gains it (SQLite has no ADD
 * COLUMN IF NOT EXISTS: the table's columns are looked up first). */
static int add_column(struct sq_store *s, const char *name, const char *alter_fmt) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM pragma_table_info('acct') WHERE name = ?", -1, &st, NULL) !=
      SQLITE_OK)
    return sq_fail(s, "schema");
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  bool has = sqlite3_step(st) == SQLITE_ROW;
  sqlite3_finalize(st);
  char sql[128];
  snprintf(sql, sizeof sql, alter_fmt, "");
  return has ? 0 : sq_exec(s, sql);
}

static int sq_acct_put(struct px_store *ps, const struct px_acct_row *rows, size_t n) {
  return sq_append(ps, NULL, 0, rows, n);
}

static int sq_prepare(struct sq_store *s, const struct px_sql *q, sqlite3_stmt **st) {
  if (sqlite3_prepare_v2(s->db, q->text, -1, st, NULL) != SQLITE_OK) return sq_fail(s, "query");
  for (int i = 0; i < q->nparams; i++) {
    if (q->params[i].is_text)
      sqlite3_bind_text(*st, i + 1, q->params[i].s, -1, SQLITE_STATIC);
    else
      sqlite3_bind_int64(*st, i + 1, q->params[i].i);
  }
  return 0;
}

static void read_acct(sqlite3_stmt *st, struct px_acct_row *r) {
  int i = 0;
  r->job_id = (uint64_t)sqlite3_column_int64(st, i++);
  r->attempt = (uint32_t)sqlite3_column_int64(st, i++);
  r->array_job_id = (uint64_t)sqlite3_column_int64(st, i++);
  r->array_task_id = (uint32_t)sqlite3_column_int64(st, i++);
  const char **texts[] = {&r->name,      &r->user,  &r->account, &r->partition,
                          &r->qos,       &r->state, &r->nodelist};
  for (size_t k = 0; k < 7; k++) *texts[k] = col_text(st, i++);
  r->uid = (uint32_t)sqlite3_column_int64(st, i++);
  r->submit_time = sqlite3_column_int64(st, i++);
  r->eligible_time = sqlite3_column_int64(st, i++);
  r->start_time = sqlite3_column_int64(st, i++);
  r->end_time = sqlite3_column_int64(st, i++);
  r->exit_code = (int32_t)sqlite3_column_int64(st, i++);
  r->term_signal = (int32_t)sqlite3_column_int64(st, i++);
  r->nnodes = (uint32_t)sqlite3_column_int64(st, i++);
  r->ngpus = (uint32_t)sqlite3_column_int64(st, i++);
  r->ncpus = (uint32_t)sqlite3_column_int64(st, i++);
  r->mem_mib = (uint64_t)sqlite3_column_int64(st, i++);
  r->billable_tres_s = sqlite3_column_double(st, i++);
  r->gpu_share = (uint32_t)sqlite3_column_int64(st, i++);
  r->steps = col_text(st, i++);
  r->time_limit_s = sqlite3_column_int64(st, i++);
  r->submit_seq = (uint64_t)sqlite3_column_int64(st, i++);
  r->end_seq = (uint64_t)sqlite3_column_int64(st, i++);
  r->start_seq = (uint64_t)sqlite3_column_int64(st, i++);
  r->dependency = col_text(st, i);
}

static int sq_acct_query(struct px_store *ps, const struct px_acct_query *a, px_store_acct_fn fn,
                         void *ctx) {
  struct sq_store *s = (struct sq_store *)ps;
  struct px_sql q = {.dollar = false};
  sqlite3_stmt *st;
  px_sql_acct_query(&q, a);
  int rc = sq_prepare(s, &q, &st), step = SQLITE_DONE;
  while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
    struct px_acct_row r;
    read_acct(st, &r);
    rc = fn(ctx, &r);
  }
  if (!rc && step != SQLITE_DONE) rc = sq_fail(s, "acct query");
  sqlite3_finalize(st);
  return rc;
}

static int sq_usage(struct px_store *ps, int64_t since, int64_t now, enum px_usage_by by,
                    px_store_usage_fn fn, void *ctx) {
  struct sq_store *s = (struct sq_store *)ps;
  struct px_sql q = {.dollar = false};
  sqlite3_stmt *st;
  int rc = px_sql_usage(&q, since, now, by, "MIN", "MAX");
  if (!rc) rc = sq_prepare(s, &q, &st);
  if (rc) return rc;
  int step = SQLITE_DONE;
  while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
    struct px_usage_row r = {col_text(st, 0), sqlite3_column_double(st, 1),
                             sqlite3_column_double(st, 2), (uint64_t)sqlite3_column_int64(st, 3),
                             sqlite3_column_double(st, 4)};
    if (!r.key) r.key = "";
    rc = fn(ctx, &r);
  }
  if (!rc && step != SQLITE_DONE) rc = sq_fail(s, "usage");
  sqlite3_finalize(st);
  return rc;
}

static int sq_archive(struct px_store *ps, const struct px_store_arch *a, size_t n) {
  struct sq_store *s = (struct sq_store *)ps;
  if (sq_exec(s, "BEGIN IMMEDIATE")) return PX_EIO;
  for (size_t i = 0; i < n; i++) {
    sqlite3_bind_int64(s->ins_arch, 1, (sqlite3_int64)a[i].job_id);
    bind_text(s->ins_arch, 2, a[i].data);
    sqlite3_bind_int64(s->del_job, 1, (sqlite3_int64)a[i].job_id);
    int st1 = sqlite3_step(s->ins_arch), st2 = st1 == SQLITE_DONE ? sqlite3_step(s->del_job) : st1;
    sqlite3_reset(s->ins_arch);
    sqlite3_reset(s->del_job);
    sqlite3_clear_bindings(s->ins_arch);
    if (st2 != SQLITE_DONE) {
      sq_fail(s, "archive");
      sq_exec(s, "ROLLBACK");
      return PX_EIO;
    }
  }
  return sq_exec(s, "COMMIT") ? (sq_exec(s, "ROLLBACK"), PX_EIO) : 0;
}

static int sq_archive_replay(struct px_store *ps, px_store_arch_fn fn, void *ctx) {
  struct sq_store *s = (struct sq_store *)ps;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(s->db, "SELECT job_id, data FROM archive ORDER BY job_id", -1, &st,
                         NULL) != SQLITE_OK)
    return sq_fail(s, "archive");
  int rc = 0, step;
  while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
    struct px_store_arch a = {(uint64_t)sqlite3_column_int64(st, 0), col_text(st, 1)};
    rc = fn(ctx, &a);
  }
  if (!rc && step != SQLITE_DONE) rc = sq_fail(s, "archive");
  sqlite3_finalize(st);
  return rc;
}

/* ---- node events (store.h px_node_event_row) ---- */

static int node_event_row(struct sq_store *s, const struct px_node_event_row *e) {
  sqlite3_stmt *st = e->close ? s->end_node_ev : s->ins_node_ev;
  if (!e->close) {
    bind_text(st, 1, e->node);
    sqlite3_bind_int64(st, 2, e->start);
    sqlite3_bind_int64(st, 3, e->end);
    const char *texts[] = {e->state, e->reason, e->cause, e->user};
    for (int k = 0; k < 4; k++) bind_text(st, 4 + k, texts[k]);
  } else {
    sqlite3_bind_int64(st, 1, e->end);
    bind_text(st, 2, e->node);
    bind_text(st, 3, e->state ? e->state : "%");
  }
  int step = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return step == SQLITE_DONE ? 0 : sq_fail(s, "node event");
}

static int sq_node_events_put(struct px_store *ps, const struct px_node_event_row *rows, size_t n) {
  struct sq_store *s = (struct sq_store *)ps;
  if (sq_exec(s, "BEGIN IMMEDIATE")) return sq_write_error(s);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) rc = node_event_row(s, &rows[i]);
  if (!rc && !sq_exec(s, "COMMIT")) return 0;
  rc = sq_write_error(s);
  sq_exec(s, "ROLLBACK");
  return rc;
}

static int sq_node_events_query(struct px_store *ps, const struct px_node_event_query *e,
                                px_store_node_event_fn fn, void *ctx) {
  struct sq_store *s = (struct sq_store *)ps;
  struct px_sql q = {.dollar = false};
  sqlite3_stmt *st;
  px_sql_node_event_query(&q, e);
  int rc = sq_prepare(s, &q, &st), step = SQLITE_DONE;
  while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
    struct px_node_event_row r = {false,           col_text(st, 0), col_text(st, 3),
                                  col_text(st, 4), col_text(st, 5), col_text(st, 6),
                                  sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2)};
    rc = fn(ctx, &r);
  }
  if (!rc && step != SQLITE_DONE) rc = sq_fail(s, "node event query");
  sqlite3_finalize(st);
  return rc;
}

static void sq_close(struct px_store *ps) {
  struct sq_store *s = (struct sq_store *)ps;
  stop_checkpointer(s);
  if (s->ckpt_lock_ok) {
    pthread_mutex_destroy(&s->ckpt_lock);
    pthread_cond_destroy(&s->ckpt_wake);
  }
  sqlite3_finalize(s->ins_journal);
  sqlite3_finalize(s->ins_acct);
  sqlite3_finalize(s->ins_arch);
  sqlite3_finalize(s->del_job);
  sqlite3_finalize(s->ins_node_ev);
  sqlite3_finalize(s->end_node_ev);
  sqlite3_close(s->db);
  free(s);
}

static const struct px_store_ops sq_ops = {
    "sqlite",     sq_append,  sq_replay,     sq_last_seq, sq_snapshot_put, sq_snapshot_get,
    sq_acct_put,  sq_acct_query, sq_usage,   sq_archive,      sq_archive_replay,
    sq_close,
    NULL, NULL, NULL, NULL, NULL, NULL, /* no high availability: one controller (store.h) */
    sq_node_events_put, sq_node_events_query,
};

/* flags: SQLITE_OPEN_NOMUTEX for a connection used by one thread at a time. */
static int sq_open(const char *path, int flags, struct px_store **out, struct px_diag *d) {
  struct sq_store *s = calloc(1, sizeof *s);
  char schema[2048], upsert[2048], ev_upsert[512], ev_close[256];
  if (!s) return PX_ENOMEM;
  s->base.ops = &sq_ops;
  if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | flags, NULL) !=
      SQLITE_OK) {
    px_diag_set(d, PX_EIO, -1, "store: cannot open %s: %s", path,
                s->db ? sqlite3_errmsg(s->db) : "out of memory");
    goto fail;
  }
  sqlite3_busy_timeout(s->db, 5000);
  /* INTEGER PRIMARY KEY: the key is the rowid, so a commit writes the
   * table's page and the job_id index's, not a third for a separate key
   * index (a third less WAL to fsync per group commit). */
  px_sql_schema(schema, sizeof schema, "INTEGER", "BLOB", "REAL");
  px_sql_acct_upsert(upsert, sizeof upsert, false);
  px_sql_node_event_upsert(ev_upsert, sizeof ev_upsert, false);
  px_sql_node_event_close(ev_close, sizeof ev_close, false);
  if (sq_exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;") || sq_exec(s, schema) ||
      add_column(s, "gpu_share", PX_ACCT_ADD_GPU_SHARE) || add_column(s, "steps", PX_ACCT_ADD_STEPS) ||
      add_column(s, "time_limit_s", PX_ACCT_ADD_TIME_LIMIT) || add_column(s, "submit_seq", PX_ACCT_ADD_SUBMIT_SEQ) ||
      add_column(s, "end_seq", PX_ACCT_ADD_END_SEQ) || add_column(s, "start_seq", PX_ACCT_ADD_START_SEQ) ||
      add_column(s, "dependency", PX_ACCT_ADD_DEPENDENCY) ||
      sqlite3_prepare_v2(s->db,
                         "INSERT INTO journal(seq, time, kind, job_id, subject, data)"
                         " VALUES(?, ?, ?, ?, ?, ?)",
                         -1, &s->ins_journal, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(s->db, upsert, -1, &s->ins_acct, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO archive(job_id, data) VALUES(?, ?)", -1,
                         &s->ins_arch, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(s->db, "DELETE FROM journal WHERE job_id = ?", -1, &s->del_job,
                         NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(s->db, ev_upsert, -1, &s->ins_node_ev, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(s->db, ev_close, -1, &s->end_node_ev, NULL) != SQLITE_OK) {
    px_diag_set(d, PX_EIO, -1, "store: %s: %s", path,
                s->base.errmsg[0] ? s->base.errmsg : sqlite3_errmsg(s->db));
    goto fail;
  }
  wal_prealloc(s->db);
  start_checkpointer(s, path);
  *out = &s->base;
  return 0;
fail:
  sq_close(&s->base);
  return PX_EIO;
}

int px_store_sqlite_open(const char *path, struct px_store **out, struct px_diag *d) {
  return sq_open(path, 0, out, d);
}

/* A reader's: pages read through a memory map, not copied by read() (a
 * page of accounting rows reads megabytes of the file); best effort. */
int px_store_sqlite_open_serial(const char *path, struct px_store **out, struct px_diag *d) {
  int rc = sq_open(path, SQLITE_OPEN_NOMUTEX, out, d);
  if (!rc) sqlite3_exec(((struct sq_store *)*out)->db, "PRAGMA mmap_size=1073741824", NULL, NULL, NULL);
  return rc;
}
