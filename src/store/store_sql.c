/* store_sql.c - the SQL text both store backends share (store_sql.h). */
#include "store/store_sql.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int px_sql_schema(char *buf, size_t size, const char *key, const char *blob, const char *real) {
  int n = snprintf(
      buf, size,
      "CREATE TABLE IF NOT EXISTS journal(seq %s PRIMARY KEY, time BIGINT NOT NULL,"
      " kind TEXT NOT NULL, job_id BIGINT NOT NULL, subject TEXT, data TEXT);"
      "CREATE TABLE IF NOT EXISTS snapshot(id INTEGER PRIMARY KEY, seq BIGINT NOT NULL,"
      " data %s NOT NULL);"
      "CREATE TABLE IF NOT EXISTS acct(job_id BIGINT NOT NULL, attempt INTEGER NOT NULL,"
      " array_job_id BIGINT, array_task_id BIGINT, name TEXT, usr TEXT, account TEXT,"
      " partition TEXT, qos TEXT, state TEXT, nodelist TEXT, uid BIGINT,"
      " submit_time BIGINT, eligible_time BIGINT, start_time BIGINT, end_time BIGINT,"
      " exit_code INTEGER, term_signal INTEGER, nnodes BIGINT, ngpus BIGINT, ncpus BIGINT,"
      " mem_mib BIGINT, billable_tres_s %s, gpu_share BIGINT DEFAULT 0, steps TEXT,"
      " time_limit_s BIGINT DEFAULT 0, submit_seq BIGINT DEFAULT 0, end_seq BIGINT DEFAULT 0,"
      " start_seq BIGINT DEFAULT 0, dependency TEXT,"
      " PRIMARY KEY(job_id, attempt));"
      "CREATE TABLE IF NOT EXISTS archive(job_id %s PRIMARY KEY, data TEXT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS node_event(node TEXT NOT NULL, time_start BIGINT NOT NULL,"
      " time_end BIGINT NOT NULL DEFAULT 0, state TEXT, reason TEXT, cause TEXT, usr TEXT,"
      " PRIMARY KEY(node, time_start, state));"
      "CREATE INDEX IF NOT EXISTS journal_job ON journal(job_id);"
      "CREATE INDEX IF NOT EXISTS acct_end ON acct(end_time);"
      "CREATE INDEX IF NOT EXISTS acct_user ON acct(usr);",
      key, blob, real, key);
  return n > 0 && (size_t)n < size ? 0 : PX_ERANGE;
}

static void add(struct px_sql *q, const char *fmt, ...) {
  size_t len = strlen(q->text);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(q->text + len, sizeof q->text - len, fmt, ap);
  va_end(ap);
}

/* Appends "<sep><col> <op> <placeholder>" and records the parameter. */
static void cond(struct px_sql *q, const char *col, const char *op, bool is_text, int64_t i,
                 const char *s) {
  add(q, "%s%s %s ", q->nparams ? " AND " : " WHERE ", col, op);
  if (q->dollar)
    add(q, "$%d", q->nparams + 1);
  else
    add(q, "?");
  q->params[q->nparams++] = (struct px_sql_param){is_text, i, s};
}

int px_sql_acct_query(struct px_sql *q, const struct px_acct_query *a) {
  bool dollar = q->dollar;
  memset(q, 0, sizeof *q);
  q->dollar = dollar;
  add(q, "SELECT " PX_ACCT_COLUMNS " FROM acct");
  if (a->user) cond(q, "usr", "=", true, 0, a->user);
  if (a->account) cond(q, "account", "=", true, 0, a->account);
  if (a->partition) cond(q, "partition", "=", true, 0, a->partition);
  if (a->job_id) cond(q, "job_id", "=", false, (int64_t)a->job_id, NULL);
  if (a->since) cond(q, "end_time", ">=", false, a->since, NULL);
  if (a->until) cond(q, "start_time", "<", false, a->until, NULL);
  if (a->after_job_id) cond(q, "job_id", ">", false, (int64_t)a->after_job_id, NULL);
  add(q, " ORDER BY job_id, attempt");
  if (a->limit) add(q, " LIMIT %u", a->limit);
  return 0;
}

int px_sql_usage(struct px_sql *q, int64_t since, int64_t now, enum px_usage_by by,
                 const char *least, const char *greatest) {
  /* A replica's job is SERVICE-r<index> (svc/svc.h): the name less that
   * suffix, in SQL that SQLite and PostgreSQL both read. */
  static const char *const cols[] = {"account", "usr", "partition",
                                     ("substr(rtrim(name, '0123456789'), 1,"
                                      " length(rtrim(name, '0123456789')) - 2)")};
  if ((unsigned)by > PX_USAGE_SERVICE) return PX_EINVAL;
  bool dollar = q->dollar;
  memset(q, 0, sizeof *q);
  q->dollar = dollar;
  const char *col = cols[by];
  /* A running job (end_time 0) counts up to now; every run is clipped to the
   * window so that a week-long job contributes only its part of it. A
   * requeued job has a row per attempt (store.h): each run counts, the job
   * once, and its wait is its first attempt's (the later rows keep the
   * job's first eligible time). */
  add(q,
      "SELECT %s, SUM(CASE WHEN gpu_share > 0 THEN gpu_share / 100.0 ELSE ngpus END * (%s(CASE WHEN end_time = 0 THEN %lld ELSE end_time END, %lld)"
      " - %s(start_time, %lld))), SUM(billable_tres_s), COUNT(DISTINCT job_id),"
      " SUM(CASE WHEN attempt = 0 THEN start_time - CASE WHEN eligible_time > 0 THEN eligible_time"
      " ELSE submit_time END ELSE 0 END)"
      " FROM acct WHERE start_time > 0 AND (end_time = 0 OR end_time >= %lld)%s"
      " GROUP BY 1 ORDER BY 1",
      col, least, (long long)now, (long long)now, greatest, (long long)since, (long long)since,
      by == PX_USAGE_SERVICE ? " AND rtrim(name, '0123456789') LIKE '%-r'"
                               " AND name <> rtrim(name, '0123456789')" : "");
  return 0;
}

int px_sql_acct_upsert(char *buf, size_t size, bool dollar) {
  char vals[256] = "";
  for (int i = 1; i <= PX_ACCT_NCOLUMNS; i++) {
    size_t len = strlen(vals);
    if (dollar)
      snprintf(vals + len, sizeof vals - len, "%s$%d", i > 1 ? "," : "", i);
    else
      snprintf(vals + len, sizeof vals - len, "%s?", i > 1 ? "," : "");
  }
  int n = snprintf(buf, size,
                   "INSERT INTO acct(" PX_ACCT_COLUMNS ") VALUES(%s) ON CONFLICT(job_id, attempt)"
                   " DO UPDATE SET state=excluded.state, nodelist=excluded.nodelist,"
                   " eligible_time=excluded.eligible_time, start_time=excluded.start_time,"
                   " end_time=excluded.end_time, exit_code=excluded.exit_code,"
                   " term_signal=excluded.term_signal, nnodes=excluded.nnodes,"
                   " ngpus=excluded.ngpus, ncpus=excluded.ncpus, mem_mib=excluded.mem_mib,"
                   " billable_tres_s=excluded.billable_tres_s, partition=excluded.partition,"
                   " gpu_share=excluded.gpu_share, steps=excluded.steps,"
                   " time_limit_s=excluded.time_limit_s, submit_seq=excluded.submit_seq,"
                   " end_seq=excluded.end_seq, start_seq=excluded.start_seq, dependency=excluded.dependency",
                   vals);
  return n > 0 && (size_t)n < size ? 0 : PX_ERANGE;
}

int px_sql_node_event_upsert(char *buf, size_t size, bool dollar) {
  int n = snprintf(buf, size,
                   "INSERT INTO node_event(" PX_NODE_EVENT_COLUMNS ") VALUES(%s) ON CONFLICT(node, time_start, state)"
                   " DO UPDATE SET time_end=excluded.time_end, state=excluded.state, reason=excluded.reason,"
                   " cause=excluded.cause, usr=excluded.usr",
                   dollar ? "$1,$2,$3,$4,$5,$6,$7" : "?,?,?,?,?,?,?");
  return n > 0 && (size_t)n < size ? 0 : PX_ERANGE;
}

/* A row opened in this very second by a state now left keeps end == start. */
int px_sql_node_event_close(char *buf, size_t size, bool dollar) {
  int n = snprintf(buf, size, "UPDATE node_event SET time_end = %s WHERE node = %s AND time_end = 0 AND state LIKE %s",
                   dollar ? "$1" : "?", dollar ? "$2" : "?", dollar ? "$3" : "?");
  return n > 0 && (size_t)n < size ? 0 : PX_ERANGE;
}

int px_sql_node_event_query(struct px_sql *q, const struct px_node_event_query *e) {
  bool dollar = q->dollar;
  memset(q, 0, sizeof *q);
  q->dollar = dollar;
  add(q, "SELECT " PX_NODE_EVENT_COLUMNS " FROM node_event");
  if (e->start) {
    add(q, " WHERE (time_end = 0 OR time_end >= ");
    add(q, dollar ? "$%d)" : "?)", q->nparams + 1);
    q->params[q->nparams++] = (struct px_sql_param){false, e->start, NULL};
  }
  if (e->end) cond(q, "time_start", "<", false, e->end, NULL);
  add(q, " ORDER BY time_start, node, time_end = 0, time_end, state");
  return 0;
}
