/*
 * store_pg.h - the PostgreSQL backend's connection and helpers, shared by
 * store_pg.c (journal, accounting, archive) and store_pg_ha.c (the leader's
 * lease, fencing, the controllers' table). Internal to store/.
 */
#ifndef PX_STORE_PG_H
#define PX_STORE_PG_H

#include <libpq-fe.h>

#include "store/store.h"

struct pg_store {
  struct px_store base;
  PGconn *conn;
  char sqlstate[6]; /* of the last failure ("" when none was given) */
  bool lost;        /* the last failure lost the connection (reset since) */
};

/* The tables of high availability (created at open, next to the schema).
 * The journal's term column is added only when missing: ALTER TABLE takes
 * the journal's strongest lock even when it would change nothing, and every
 * controller's start would then stall the leader's commits behind it. */
#define PG_HA_SCHEMA                                                                       \
  "CREATE TABLE IF NOT EXISTS px_leader(id INTEGER PRIMARY KEY, term BIGINT NOT NULL,"     \
  " holder TEXT NOT NULL, addr TEXT NOT NULL, expires TIMESTAMPTZ NOT NULL);"              \
  "INSERT INTO px_leader VALUES(1, 0, '', '', '-infinity') ON CONFLICT DO NOTHING;"        \
  "CREATE TABLE IF NOT EXISTS px_controllers(name TEXT PRIMARY KEY, addr TEXT NOT NULL,"   \
  " role TEXT NOT NULL, term BIGINT NOT NULL, seq BIGINT NOT NULL, pid BIGINT NOT NULL,"   \
  " seen TIMESTAMPTZ NOT NULL);"                                                           \
  "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM information_schema.columns"                    \
  " WHERE table_name = 'journal' AND column_name = 'term') THEN"                           \
  " ALTER TABLE journal ADD COLUMN term BIGINT NOT NULL DEFAULT 0; END IF; END $$;"

/* Fills errmsg and sqlstate from res (or the connection), clears res: PX_EIO.
 * A lost connection is reset, so that the next call reconnects (a reader's
 * too: the database may have restarted). */
int pg_fail(struct pg_store *s, PGresult *res, const char *what);
/* What a failed write may become: PX_ECONNECT (connection reset for the
 * next try), PX_EAGAIN (SQLSTATE class 53) or PX_EIO. */
int pg_write_error(struct pg_store *s);
int pg_exec(struct pg_store *s, const char *sql);
PGresult *pg_params(struct pg_store *s, const char *sql, int n, const char *const *vals);
int pg_rollback(struct pg_store *s, int rc);

/* Inside a write's transaction: 0 while the lease row holds s->base.term
 * (or when the store is not fenced), its row then locked until COMMIT so
 * that no takeover passes in between; PX_ESTATE when a later term leads. */
int pg_fence(struct pg_store *s);

int pg_lease_acquire(struct px_store *ps, const char *name, const char *addr, int64_t ttl_ms,
                     struct px_store_lease *out);
int pg_lease_renew(struct px_store *ps, uint64_t term, int64_t ttl_ms, bool *held);
int pg_lease_release(struct px_store *ps, uint64_t term);
int pg_lease_peek(struct px_store *ps, struct px_store_lease *out);
int pg_ctl_report(struct px_store *ps, const struct px_store_ctl *c);
int pg_ctl_list(struct px_store *ps, px_store_ctl_fn fn, void *ctx);

#endif
