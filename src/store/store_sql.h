/*
 * store_sql.h - SQL shared by the SQLite and PostgreSQL backends (internal to
 * store/): the schema, and builders for the queries whose WHERE clause
 * depends on the request, so both backends answer the same question with the
 * same text. Placeholders are written "?" for SQLite and "$n" for PostgreSQL.
 */
#ifndef PX_STORE_SQL_H
#define PX_STORE_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define PX_SQL_MAXPARAMS 8

struct px_sql_param {
  bool is_text;
  int64_t i;
  const char *s;
};

struct px_sql {
  char text[1024];
  struct px_sql_param params[PX_SQL_MAXPARAMS];
  int nparams;
  bool dollar; /* PostgreSQL placeholders */
};

/* Schema statements, run in order at open; `key` is the type of the
 * journal's and the archive's integer keys (INTEGER in SQLite, where such a
 * key is the rowid; BIGINT in PostgreSQL), `blob` BLOB or BYTEA and `real`
 * REAL or DOUBLE PRECISION. */
int px_sql_schema(char *buf, size_t size, const char *key, const char *blob, const char *real);

/* SELECT PX_ACCT_COLUMNS FROM acct WHERE ... ORDER BY job_id, attempt LIMIT. */
int px_sql_acct_query(struct px_sql *q, const struct px_acct_query *a);

/* Usage aggregated by one column over [since, now]: key, gpu_s, billable_s,
 * jobs, wait_s_sum. least/greatest are the dialect's two-argument min/max. */
int px_sql_usage(struct px_sql *q, int64_t since, int64_t now, enum px_usage_by by,
                 const char *least, const char *greatest);

/* The INSERT ... ON CONFLICT DO UPDATE of one accounting row (both dialects
 * support the upsert syntax). */
int px_sql_acct_upsert(char *buf, size_t size, bool dollar);

/* Node events (store.h): the upsert of an opened row (PX_NODE_EVENT_COLUMNS'
 * order), the close of a node's open rows (end, node, state as a LIKE
 * pattern: "%" for any) and the query. */
int px_sql_node_event_upsert(char *buf, size_t size, bool dollar);
int px_sql_node_event_close(char *buf, size_t size, bool dollar);
int px_sql_node_event_query(struct px_sql *q, const struct px_node_event_query *e);

#endif
