/*
 * store_pg.c - the PostgreSQL backend of store.h (libpq), for sites that want
 * a shared, replicated database. synchronous_commit stays on, so COMMIT
 * returns after the WAL is flushed on the server. A batch is one
 * transaction; parameters are sent as text (libpq's simplest safe form).
 * Without libpq at build time the constructor reports PX_EUNSUPPORTED.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_sql.h"

#ifndef PX_HAVE_PQ
int px_store_pg_open(const char *conninfo, struct px_store **out, struct px_diag *d) {
  (void)conninfo;
  *out = NULL;
  return px_diag_set(d, PX_EUNSUPPORTED, -1, "store: built without PostgreSQL (libpq)");
}
#else
#include "store/store_pg.h"

int pg_fail(struct pg_store *s, PGresult *res, const char *what) {
  snprintf(s->base.errmsg, sizeof s->base.errmsg, "postgresql %s: %s", what,
           res ? PQresultErrorMessage(res) : PQerrorMessage(s->conn));
  const char *st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
  snprintf(s->sqlstate, sizeof s->sqlstate, "%s", st ? st : "");
  PQclear(res);
  s->lost = PQstatus(s->conn) == CONNECTION_BAD;
  if (s->lost) PQreset(s->conn);
  return PX_EIO;
}

/* What a failed write may become (store.h, append): a lost connection is
 * PX_ECONNECT (reset by pg_fail, so that the next try reconnects); a full disk or
 * another shortage of the server's resources (SQLSTATE class 53) may clear,
 * PX_EAGAIN; anything else is PX_EIO. */
int pg_write_error(struct pg_store *s) {
  if (s->lost) return PX_ECONNECT; /* reset already (pg_fail) */
  return strncmp(s->sqlstate, "53", 2) == 0 ? PX_EAGAIN : PX_EIO;
}

int pg_exec(struct pg_store *s, const char *sql) {
  PGresult *res = PQexec(s->conn, sql);
  if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
    return pg_fail(s, res, sql);
  PQclear(res);
  return 0;
}

/* Runs a parameterised statement; values as text, NULL for SQL NULL. */
PGresult *pg_params(struct pg_store *s, const char *sql, int n, const char *const *vals) {
  return PQexecParams(s->conn, sql, n, NULL, vals, NULL, NULL, 0);
}

int pg_rollback(struct pg_store *s, int rc) {
  pg_exec(s, "ROLLBACK");
  return rc;
}

static int journal_rows(struct pg_store *s, const struct px_store_rec *r, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char seq[24], t[24], job[24], term[24];
    snprintf(seq, sizeof seq, "%llu", (unsigned long long)r[i].seq);
    snprintf(t, sizeof t, "%lld", (long long)r[i].time);
    snprintf(job, sizeof job, "%llu", (unsigned long long)r[i].job_id);
    snprintf(term, sizeof term, "%llu", (unsigned long long)s->base.term);
    const char *vals[] = {seq, t, r[i].kind, job, r[i].subject, r[i].data, term};
    PGresult *res = pg_params(s,
                              "INSERT INTO journal(seq, time, kind, job_id, subject, data, term)"
                              " VALUES($1, $2, $3, $4, $5, $6, $7)",
                              7, vals);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) return pg_fail(s, res, "append");
    PQclear(res);
  }
  return 0;
}

static int acct_rows(struct pg_store *s, const struct px_acct_row *rows, size_t n);

/* BEGIN, the inserts, COMMIT; a failure rolls everything back. */
static int pg_append(struct px_store *ps, const struct px_store_rec *r, size_t n, const struct px_acct_row *rows,
                     size_t nrows) {
  struct pg_store *s = (struct pg_store *)ps;
  if (pg_exec(s, "BEGIN")) return pg_write_error(s);
  int rc = pg_fence(s);
  if (rc) return pg_rollback(s, rc);
  rc = journal_rows(s, r, n);
  if (!rc) rc = acct_rows(s, rows, nrows);
  if (!rc && pg_exec(s, "COMMIT")) rc = PX_EIO;
  if (!rc) return 0;
  rc = pg_write_error(s);
  return rc == PX_ECONNECT ? rc : pg_rollback(s, rc);
}

static const char *val(PGresult *res, int row, int col) {
  return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}
static int64_t ival(PGresult *res, int row, int col) {
  const char *v = val(res, row, col);
  return v ? strtoll(v, NULL, 10) : 0;
}

static int pg_replay(struct px_store *ps, uint64_t after, px_store_rec_fn fn, void *ctx) {
  struct pg_store *s = (struct pg_store *)ps;
  char a[24];
  snprintf(a, sizeof a, "%llu", (unsigned long long)after);
  const char *vals[] = {a};
  PGresult *res = pg_params(
      s, "SELECT seq, time, kind, job_id, subject, data FROM journal WHERE seq > $1 ORDER BY seq",
      1, vals);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return pg_fail(s, res, "replay");
  int rc = 0;
  for (int i = 0; !rc && i < PQntuples(res); i++) {
    struct px_store_rec r = {(uint64_t)ival(res, i, 0), ival(res, i, 1), val(res, i, 2),
                             (uint64_t)ival(res, i, 3), val(res, i, 4), val(res, i, 5)};
    rc = fn(ctx, &r);
  }
  PQclear(res);
  return rc;
}

static int pg_last_seq(struct px_store *ps, uint64_t *seq) {
  struct pg_store *s = (struct pg_store *)ps;
  PGresult *res = PQexec(s->conn, "SELECT COALESCE(MAX(seq), 0) FROM journal");
  *seq = 0;
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return pg_fail(s, res, "last_seq");
  *seq = (uint64_t)ival(res, 0, 0);
  PQclear(res);
  return 0;
}

static int pg_snapshot_put(struct px_store *ps, uint64_t seq, const char *data, size_t len) {
  struct pg_store *s = (struct pg_store *)ps;
  char sq[24];
  snprintf(sq, sizeof sq, "%llu", (unsigned long long)seq);
  const char *vals[] = {sq, data};
  const int lens[] = {0, (int)len}, fmts[] = {0, 1};
  PGresult *res = PQexecParams(s->conn,
                               "INSERT INTO snapshot(id, seq, data) VALUES(1, $1, $2)"
                               " ON CONFLICT(id) DO UPDATE SET seq = excluded.seq,"
                               " data = excluded.data",
                               2, NULL, vals, lens, fmts, 0);
  if (PQresultStatus(res) != PGRES_COMMAND_OK) return pg_fail(s, res, "snapshot");
  PQclear(res);
  return 0;
}

static int pg_snapshot_get(struct px_store *ps, uint64_t *seq, char **data, size_t *len) {
  struct pg_store *s = (struct pg_store *)ps;
  *seq = 0;
  *data = NULL;
  *len = 0;
  PGresult *res = PQexecParams(s->conn, "SELECT seq, data FROM snapshot WHERE id = 1", 0, NULL,
                               NULL, NULL, NULL, 1 /* binary results */);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return pg_fail(s, res, "snapshot");
  int rc = 0;
  if (PQntuples(res) == 1) {
    const unsigned char *p = (const unsigned char *)PQgetvalue(res, 0, 0);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i]; /* int8 in network order */
    size_t n = (size_t)PQgetlength(res, 0, 1);
    if (!(*data = malloc(n + 1))) {
      rc = PX_ENOMEM;
    } else {
      memcpy(*data, PQgetvalue(res, 0, 1), n);
      (*data)[n] = '\0';
      *len = n;
      *seq = v;
    }
  }
  PQclear(res);
  return rc;
}

static int acct_rows(struct pg_store *s, const struct px_acct_row *rows, size_t n) {
  char sql[2048], num[19][24], real[32], share[24], limit[24];
  if (n) px_sql_acct_upsert(sql, sizeof sql, true);
  for (size_t i = 0; i < n; i++) {
    const struct px_acct_row *r = &rows[i];
    const int64_t ints[] = {(int64_t)r->job_id, r->attempt, (int64_t)r->array_job_id,
                            r->array_task_id, r->uid, r->submit_time, r->eligible_time,
                            r->start_time, r->end_time, r->exit_code, r->term_signal, r->nnodes,
                            r->ngpus, r->ncpus, (int64_t)r->mem_mib, (int64_t)r->submit_seq,
                            (int64_t)r->end_seq, (int64_t)r->start_seq}; /* PX_ACCT_COLUMNS' order */
    for (size_t k = 0; k < 18; k++) snprintf(num[k], sizeof num[k], "%lld", (long long)ints[k]);
    snprintf(real, sizeof real, "%.17g", r->billable_tres_s);
    snprintf(share, sizeof share, "%u", r->gpu_share);
    snprintf(limit, sizeof limit, "%lld", (long long)r->time_limit_s);
    const char *vals[PX_ACCT_NCOLUMNS] = {
        num[0],  num[1],  num[2],  num[3],  r->name,  r->user,  r->account, r->partition,
        r->qos,  r->state, r->nodelist, num[4], num[5], num[6], num[7],  num[8],
        num[9],  num[10], num[11], num[12], num[13], num[14], real, share, r->steps, limit,
        num[15], num[16], num[17], r->dependency};
    PGresult *res = pg_params(s, sql, PX_ACCT_NCOLUMNS, vals);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) return pg_fail(s, res, "acct");
    PQclear(res);
  }
  return 0;
}

static int pg_acct_put(struct px_store *ps, const struct px_acct_row *rows, size_t n) {
  return pg_append(ps, NULL, 0, rows, n);
}

static PGresult *pg_query(struct pg_store *s, const struct px_sql *q) {
  char num[PX_SQL_MAXPARAMS][24];
  const char *vals[PX_SQL_MAXPARAMS];
  for (int i = 0; i < q->nparams; i++) {
    if (q->params[i].is_text) {
      vals[i] = q->params[i].s;
    } else {
      snprintf(num[i], sizeof num[i], "%lld", (long long)q->params[i].i);
      vals[i] = num[i];
    }
  }
  return pg_params(s, q->text, q->nparams, vals);
}

static int pg_acct_query(struct px_store *ps, const struct px_acct_query *a, px_store_acct_fn fn,
                         void *ctx) {
  struct pg_store *s = (struct pg_store *)ps;
  struct px_sql q = {.dollar = true};
  px_sql_acct_query(&q, a);
  PGresult *res = pg_query(s, &q);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return pg_fail(s, res, "acct query");
  int rc = 0;
  for (int i = 0; !rc && i < PQntuples(res); i++) {
    int c = 0;
    struct px_acct_row r = {0};
    r.job_id = (uint64_t)ival(res, i, c++);
    r.attempt = (uint32_t)ival(res, i, c++);
    r.array_job_id = (uint64_t)ival(res, i, c++);
    r.array_task_id = (uint32_t)ival(res, i, c++);
    const char **texts[] = {&r.name, &r.user, &r.account, &r.partition, &r.qos, &r.state,
                            &r.nodelist};
    for (size_t k = 0; k < 7; k++) *texts[k] = val(res, i, c++);
    r.uid = (uint32_t)ival(res, i, c++);
    int64_t *times[] = {&r.submit_time, &r.eligible_time, &r.start_time, &r.end_time};
    for (size_t k = 0; k < 4; k++) *times[k] = ival(res, i, c++);
    r.exit_code = (int32_t)ival(res, i, c++);
    r.term_signal = (int32_t)ival(res, i, c++);
    r.nnodes = (uint32_t)ival(res, i, c++);
    r.ngpus = (uint32_t)ival(res, i, c++);
    r.ncpus = (uint32_t)ival(res, i, c++);
    r.mem_mib = (uint64_t)ival(res, i, c++);
    r.billable_tres_s = strtod(PQgetvalue(res, i, c++), NULL);
    r.gpu_share = (uint32_t)ival(res, i, c++);
    r.steps = val(res, i, c++);
    r.time_limit_s = ival(res, i, c++);
    r.submit_seq = (uint64_t)ival(res, i, c++);
    r.end_seq = (uint64_t)ival(res, i, c++);
    r.start_seq = (uint64_t)ival(res, i, c++);
    r.dependency = val(res, i, c);
    rc = fn(ctx, &r);
  }
  PQclear(res);
  return rc;
}

static int pg_usage(struct px_store *ps, int64_t since, int64_t now, enum px_usage_by by,
                    px_store_usage_fn fn, void *ctx) {
  struct pg_store *s = (struct pg_store *)ps;
  struct px_sql q = {.dollar = true};
  int rc = px_sql_usage(&q, since, now, by, "LEAST", "GREATEST");
  if (rc) return rc;
  PGresult *res = pg_query(s, &q);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return pg_fail(s, res, "usage");
  for (int i = 0; !rc && i < PQntuples(res); i++) {
    const char *key = val(res, i, 0);
    struct px_usage_row r = {key ? key : "", strtod(PQgetvalue(res, i, 1), NULL),
                             strtod(PQgetvalue(res, i, 2), NULL), (uint64_t)ival(res, i, 3),
                             strtod(PQgetvalue(res, i, 4), NULL)};
    rc = fn(ctx, &r);
  }
  PQclear(res);
  return rc;
}

static void pg_close(struct px_store *ps) {
  struct pg_store *s = (struct pg_store *)ps;
  PQfinish(s->conn);
  free(s);
}

static int pg_archive(struct px_store *ps, const struct px_store_arch *a, size_t n) {
  struct pg_store *s = (struct pg_store *)ps;
  if (pg_exec(s, "BEGIN")) return PX_EIO;
  int rc = pg_fence(s);
  if (rc) return pg_rollback(s, rc);
  for (size_t i = 0; i < n; i++) {
    char job[24];
    snprintf(job, sizeof job, "%llu", (unsigned long long)a[i].job_id);
    const char *vals[] = {job, a[i].data};
    PGresult *res = pg_params(s,
                              "INSERT INTO archive(job_id, data) VALUES($1, $2)"
                              " ON CONFLICT(job_id) DO UPDATE SET data = excluded.data",
                              2, vals);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) return pg_rollback(s, pg_fail(s, res, "archive"));
    PQclear(res);
    res = pg_params(s, "DELETE FROM journal WHERE job_id = $1", 1, vals);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) return pg_rollback(s, pg_fail(s, res, "archive"));
    PQclear(res);
  }
  return pg_exec(s, "COMMIT") ? pg_rollback(s, PX_EIO) : 0;
}

static int pg_archive_replay(struct px_store *ps, px_store_arch_fn fn, void *ctx) {
  struct pg_store *s = (struct pg_store *)ps;
  PGresult *res = PQexec(s->conn, "SELECT job_id, data FROM archive ORDER BY job_id");
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return pg_fail(s, res, "archive");
  int rc = 0;
  for (int i = 0; !rc && i < PQntuples(res); i++) {
    struct px_store_arch a = {(uint64_t)ival(res, i, 0), val(res, i, 1)};
    rc = fn(ctx, &a);
  }
  PQclear(res);
  return rc;
}

/* ---- node events (store.h px_node_event_row) ---- */

static int node_event_row(struct pg_store *s, const struct px_node_event_row *e, const char *upsert,
                          const char *close) {
  char start[24], end[24];
  snprintf(start, sizeof start, "%lld", (long long)e->start);
  snprintf(end, sizeof end, "%lld", (long long)e->end);
  const char *open_vals[] = {e->node, start, end, e->state, e->reason, e->cause, e->user};
  const char *close_vals[] = {end, e->node, e->state ? e->state : "%"};
  PGresult *res = e->close ? pg_params(s, close, 3, close_vals) : pg_params(s, upsert, 7, open_vals);
  if (PQresultStatus(res) != PGRES_COMMAND_OK) return pg_fail(s, res, "node event");
  PQclear(res);
  return 0;
}

static int pg_node_events_put(struct px_store *ps, const struct px_node_event_row *rows, size_t n) {
  struct pg_store *s = (struct pg_store *)ps;
  char upsert[512], close[256];
  px_sql_node_event_upsert(upsert, sizeof upsert, true);
  px_sql_node_event_close(close, sizeof close, true);
  if (pg_exec(s, "BEGIN")) return pg_write_error(s);
  int rc = pg_fence(s); /* a deposed leader writes no more of the cluster's record */
  for (size_t i = 0; i < n && !rc; i++) rc = node_event_row(s, &rows[i], upsert, close);
  if (!rc && !pg_exec(s, "COMMIT")) return 0;
  if (rc != PX_ESTATE) rc = pg_write_error(s);
  return rc == PX_ECONNECT ? rc : pg_rollback(s, rc);
}

static int pg_node_events_query(struct px_store *ps, const struct px_node_event_query *e,
                                px_store_node_event_fn fn, void *ctx) {
  struct pg_store *s = (struct pg_store *)ps;
  struct px_sql q = {.dollar = true};
  px_sql_node_event_query(&q, e);
  PGresult *res = pg_query(s, &q);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) return pg_fail(s, res, "node event query");
  int rc = 0;
  for (int i = 0; !rc && i < PQntuples(res); i++) {
    struct px_node_event_row r = {false,          val(res, i, 0), val(res, i, 3), val(res, i, 4),
                                  val(res, i, 5), val(res, i, 6), ival(res, i, 1), ival(res, i, 2)};
    rc = fn(ctx, &r);
  }
  PQclear(res);
  return rc;
}

static const struct px_store_ops pg_ops = {
    "postgresql",     pg_append,        pg_replay,        pg_last_seq,   pg_snapshot_put,
    pg_snapshot_get,  pg_acct_put,      pg_acct_query,    pg_usage,      pg_archive,
    pg_archive_replay, pg_close,        pg_lease_acquire, pg_lease_renew, pg_lease_release,
    pg_lease_peek,    pg_ctl_report,    pg_ctl_list,      pg_node_events_put, pg_node_events_query,
};

int px_store_pg_open(const char *conninfo, struct px_store **out, struct px_diag *d) {
  struct pg_store *s = calloc(1, sizeof *s);
  char schema[2048];
  *out = NULL;
  if (!s) return PX_ENOMEM;
  s->base.ops = &pg_ops;
  s->conn = PQconnectdb(conninfo);
  if (PQstatus(s->conn) != CONNECTION_OK) {
    px_diag_set(d, PX_ECONNECT, -1, "store: cannot connect to PostgreSQL: %s",
                PQerrorMessage(s->conn));
    goto fail;
  }
  px_sql_schema(schema, sizeof schema, "BIGINT", "BYTEA", "DOUBLE PRECISION");
  char add_share[128], add_steps[128], add_limit[128], add_sseq[128], add_eseq[128], add_tseq[128], add_dep[128];
  snprintf(add_share, sizeof add_share, PX_ACCT_ADD_GPU_SHARE, "IF NOT EXISTS ");
  snprintf(add_steps, sizeof add_steps, PX_ACCT_ADD_STEPS, "IF NOT EXISTS ");
  snprintf(add_limit, sizeof add_limit, PX_ACCT_ADD_TIME_LIMIT, "IF NOT EXISTS ");
  snprintf(add_sseq, sizeof add_sseq, PX_ACCT_ADD_SUBMIT_SEQ, "IF NOT EXISTS ");
  snprintf(add_eseq, sizeof add_eseq, PX_ACCT_ADD_END_SEQ, "IF NOT EXISTS ");
  snprintf(add_tseq, sizeof add_tseq, PX_ACCT_ADD_START_SEQ, "IF NOT EXISTS ");
  snprintf(add_dep, sizeof add_dep, PX_ACCT_ADD_DEPENDENCY, "IF NOT EXISTS ");
  if (pg_exec(s, "SET client_min_messages = warning") || pg_exec(s, schema) || pg_exec(s, add_share) ||
      pg_exec(s, add_steps) || pg_exec(s, add_limit) ||
      pg_exec(s, add_sseq) || pg_exec(s, add_eseq) || pg_exec(s, add_tseq) || pg_exec(s, add_dep) ||
      pg_exec(s, PG_HA_SCHEMA)) {
    px_diag_set(d, PX_EIO, -1, "store: %s", s->base.errmsg);
    goto fail;
  }
  *out = &s->base;
  return 0;
fail:
  pg_close(&s->base);
  return d ? (strstr(d->msg, "connect") ? PX_ECONNECT : PX_EIO) : PX_EIO;
}
#endif
