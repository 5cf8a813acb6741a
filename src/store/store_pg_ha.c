/*
 * store_pg_ha.c - high availability on PostgreSQL (store.h): the leader's
 * lease as one row with an expiry on the database's clock, fencing of
 * writes by term, and the table where every controller reports its role
 * and how far it has applied the journal. Why a lease row rather than an
 * advisory lock is in docs/operations.md "High availability".
 */
#ifdef PX_HAVE_PQ
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_pg.h"

static void num(char *buf, size_t n, int64_t v) { snprintf(buf, n, "%lld", (long long)v); }

int pg_fence(struct pg_store *s) {
  if (!s->base.term) return 0;
  PGresult *res = PQexec(s->conn, "SELECT term FROM px_leader WHERE id = 1 FOR SHARE");
  if (PQresultStatus(res) != PGRES_TUPLES_OK) {
    pg_fail(s, res, "fence");
    return pg_write_error(s);
  }
  uint64_t now = PQntuples(res) == 1 ? strtoull(PQgetvalue(res, 0, 0), NULL, 10) : 0;
  PQclear(res);
  if (now == s->base.term) return 0;
  snprintf(s->base.errmsg, sizeof s->base.errmsg,
           "fenced: this controller's term %llu is no longer the leader's (term %llu leads)",
           (unsigned long long)s->base.term, (unsigned long long)now);
  return PX_ESTATE;
}

/* The current lease into out (not held by the caller). */
static int lease_read(struct pg_store *s, struct px_store_lease *out) {
  PGresult *res = PQexec(s->conn,
                         "SELECT term, holder, addr, expires > now() FROM px_leader WHERE id = 1");
  if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
    pg_fail(s, res, "lease");
    return pg_write_error(s);
  }
  out->term = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
  snprintf(out->holder, sizeof out->holder, "%s", PQgetvalue(res, 0, 1));
  snprintf(out->addr, sizeof out->addr, "%s", PQgetvalue(res, 0, 2));
  out->live = PQgetvalue(res, 0, 3)[0] == 't';
  out->held = false;
  PQclear(res);
  return 0;
}

int pg_lease_peek(struct px_store *ps, struct px_store_lease *out) {
  return lease_read((struct pg_store *)ps, out);
}

/* One statement, so atomic: the row changes only when the lease has
 * expired on the database's clock, and the term goes up by one. A writer
 * of the old term holds the row (pg_fence) until its commit ends, so the
 * takeover waits for it: nothing of the old term commits afterwards. */
int pg_lease_acquire(struct px_store *ps, const char *name, const char *addr, int64_t ttl_ms,
                     struct px_store_lease *out) {
  struct pg_store *s = (struct pg_store *)ps;
  char ttl[24];
  num(ttl, sizeof ttl, ttl_ms);
  const char *vals[] = {name, addr, ttl};
  memset(out, 0, sizeof *out);
  PGresult *res = pg_params(s,
                            "UPDATE px_leader SET term = term + 1, holder = $1, addr = $2,"
                            " expires = now() + $3 * interval '1 millisecond'"
                            " WHERE id = 1 AND expires < now() RETURNING term",
                            3, vals);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) {
    pg_fail(s, res, "lease");
    return pg_write_error(s);
  }
  if (PQntuples(res) == 0) {
    PQclear(res);
    return lease_read(s, out);
  }
  out->term = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
  out->held = out->live = true;
  snprintf(out->holder, sizeof out->holder, "%s", name);
  snprintf(out->addr, sizeof out->addr, "%s", addr);
  PQclear(res);
  return 0;
}

int pg_lease_renew(struct px_store *ps, uint64_t term, int64_t ttl_ms, bool *held) {
  struct pg_store *s = (struct pg_store *)ps;
  char t[24], ttl[24];
  num(t, sizeof t, (int64_t)term);
  num(ttl, sizeof ttl, ttl_ms);
  const char *vals[] = {t, ttl};
  *held = false;
  PGresult *res = pg_params(s,
                            "UPDATE px_leader SET expires = now() + $2 * interval '1 millisecond'"
                            " WHERE id = 1 AND term = $1 AND expires > now()",
                            2, vals);
  if (PQresultStatus(res) != PGRES_COMMAND_OK) {
    pg_fail(s, res, "lease renew");
    return pg_write_error(s);
  }
  *held = !strcmp(PQcmdTuples(res), "1");
  PQclear(res);
  return 0;
}

/* A leader that stops cleanly lets a standby take over at once. */
int pg_lease_release(struct px_store *ps, uint64_t term) {
  struct pg_store *s = (struct pg_store *)ps;
  char t[24];
  num(t, sizeof t, (int64_t)term);
  const char *vals[] = {t};
  PGresult *res =
      pg_params(s, "UPDATE px_leader SET expires = '-infinity' WHERE id = 1 AND term = $1", 1, vals);
  if (PQresultStatus(res) != PGRES_COMMAND_OK) return pg_fail(s, res, "lease release");
  PQclear(res);
  return 0;
}

int pg_ctl_report(struct px_store *ps, const struct px_store_ctl *c) {
  struct pg_store *s = (struct pg_store *)ps;
  char term[24], seq[24], pid[24];
  num(term, sizeof term, (int64_t)c->term);
  num(seq, sizeof seq, (int64_t)c->seq);
  num(pid, sizeof pid, c->pid);
  const char *vals[] = {c->name, c->addr, c->role, term, seq, pid};
  PGresult *res = pg_params(s,
                            "INSERT INTO px_controllers(name, addr, role, term, seq, pid, seen)"
                            " VALUES($1, $2, $3, $4, $5, $6, now()) ON CONFLICT(name) DO UPDATE"
                            " SET addr = excluded.addr, role = excluded.role, term = excluded.term,"
                            " seq = excluded.seq, pid = excluded.pid, seen = excluded.seen",
                            6, vals);
  if (PQresultStatus(res) != PGRES_COMMAND_OK) {
    pg_fail(s, res, "controllers");
    return pg_write_error(s);
  }
  PQclear(res);
  return 0;
}

int pg_ctl_list(struct px_store *ps, px_store_ctl_fn fn, void *ctx) {
  struct pg_store *s = (struct pg_store *)ps;
  PGresult *res = PQexec(s->conn,
                         "SELECT name, addr, role, term, seq, pid,"
                         " (extract(epoch FROM now() - seen) * 1000)::bigint"
                         " FROM px_controllers ORDER BY name");
  if (PQresultStatus(res) != PGRES_TUPLES_OK) {
    pg_fail(s, res, "controllers");
    return pg_write_error(s);
  }
  int rc = 0;
  for (int i = 0; !rc && i < PQntuples(res); i++) {
    struct px_store_ctl c = {PQgetvalue(res, i, 0), PQgetvalue(res, i, 1), PQgetvalue(res, i, 2),
                             strtoull(PQgetvalue(res, i, 3), NULL, 10),
                             strtoull(PQgetvalue(res, i, 4), NULL, 10),
                             strtoll(PQgetvalue(res, i, 5), NULL, 10),
                             strtoll(PQgetvalue(res, i, 6), NULL, 10)};
    rc = fn(ctx, &c);
  }
  PQclear(res);
  return rc;
}
#else
typedef int px_store_pg_ha_unused; /* ISO C: a translation unit is not empty */
#endif
