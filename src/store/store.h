/*
 * store.h - the server's durable state: an append-only journal of accepted
 * events, snapshots, and accounting rows, behind one function table with two
 * backends: SQLite (WAL, one file under the state directory; the default) and
 * PostgreSQL (libpq), chosen by the URL given to px_store_open():
 *
 *   "sqlite:/var/lib/phalanx/state.db"  or a plain path   -> SQLite
 *   "postgresql://..." / "postgres://..." / "host=... dbname=..." -> PostgreSQL
 *
 * The store does not interpret events: a record is (seq, time, kind, job id,
 * subject, data) where data is the server's JSON text (proto/ encodes it; the
 * store sits below proto/ and never parses it). Sequence numbers are assigned
 * by the caller, strictly increasing; the journal's fold is the server state.
 *
 * Durability contract: px_store_append() writes every record of the batch in
 * ONE transaction and returns only after the commit is durable (SQLite
 * synchronous=FULL in WAL mode: the WAL is fsynced; PostgreSQL
 * synchronous_commit=on). That is the group commit: the server batches all
 * requests that arrived while the previous commit ran and acknowledges them
 * together after this call returns. A failed call changes nothing.
 *
 * Not thread-safe: one thread at a time uses a store (the server's main
 * loop, or a request thread running a group commit: server/journal/commit.c
 * serialises them).
 */
#ifndef PX_STORE_STORE_H
#define PX_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct px_store_rec {
  uint64_t seq;         /* caller-assigned, > every earlier seq */
  int64_t time;         /* Unix seconds */
  const char *kind;     /* "submit", "start", "end", "cancel", ... (<= 31 chars) */
  uint64_t job_id;      /* 0 when about a node */
  const char *subject;  /* node name or user, or NULL */
  const char *data;     /* JSON text or NULL */
};

/* One accounting row: a job, an array task or one attempt of a requeued job. */
struct px_acct_row {
  uint64_t job_id;
  uint32_t attempt;     /* 0 for the first run, n after n requeues */
  uint64_t array_job_id;
  uint32_t array_task_id;
  const char *name, *user, *account, *partition, *qos, *state, *nodelist;
  uint32_t uid;
  int64_t submit_time, eligible_time, start_time, end_time; /* 0: not yet */
  int32_t exit_code, term_signal;
  uint32_t nnodes, ngpus, ncpus;
  uint64_t mem_mib;
  double billable_tres_s;
  uint32_t gpu_share;   /* a fractional job: hundredths of its one GPU (ngpus 1); 0: whole GPUs */
  const char *steps;    /* the attempt's job steps, a JSON array (NULL: none) */
  int64_t time_limit_s; /* the limit it ran under (sacct's Timelimit); 0 in an older server's rows */
  /* journal seqs of the job's submit and of the record that ended it: the
   * order in which the server handled them, finer than whole seconds (a
   * replay of the record, phalanx export), and of the START record its
   * scheduling cycle wrote (which events that cycle had seen); 0: unknown
   * (an older row) */
  uint64_t submit_seq, start_seq, end_seq;
  const char *dependency; /* the job's -d as the user wrote it ("afterok:12:13"; NULL: none) */
};

struct px_acct_query {
  const char *user, *account, *partition; /* NULL: any */
  uint64_t job_id;                        /* 0: any */
  int64_t since, until;                   /* end_time (or start) window; 0: open */
  uint64_t after_job_id;                  /* paging */
  uint32_t limit;                         /* 0: no limit */
};

/* One node event (sacctmgr show event, as Slurm's event table): a span a
 * node was out of service. A row opens when the node goes DOWN or is
 * drained (end 0: still open) and is ended when it comes back, is resumed
 * or changes state (the next state opens a row of its own). Keyed (node,
 * start, state): a repeat in the same second is one row (the latest
 * reason), while a node down and back drained within one second keeps
 * both rows. A close ends the node's open rows of state (NULL: of any) at
 * end. */
struct px_node_event_row {
  bool close;
  const char *node;
  const char *state;   /* "DOWN", "DRAIN" */
  const char *reason;
  const char *cause;   /* why, in the server's words (nodes.h: operator, health_check ... ; "" for DOWN) */
  const char *user;    /* who set it ("": not known) */
  int64_t start, end;  /* Unix s; end 0: open */
};

/* Rows overlapping [start, end): ending at or after start (or open) and
 * starting before end; 0: open. Ordered by start, node. */
struct px_node_event_query {
  int64_t start, end;
};

/* SERVICE: the replicas' jobs (named SERVICE-r<index>) by service. */
enum px_usage_by { PX_USAGE_ACCOUNT, PX_USAGE_USER, PX_USAGE_PARTITION, PX_USAGE_SERVICE };

struct px_usage_row {
  const char *key;      /* account, user or partition */
  double gpu_s;         /* GPU-seconds inside [since, now] */
  double billable_s;
  uint64_t jobs;        /* jobs that ran inside the window */
  double wait_s_sum;    /* sum of start - eligible (or submit) */
};

/* A finished job moved out of the journal by a checkpoint (the server's
 * JSON text of it; the store does not read it). */
struct px_store_arch {
  uint64_t job_id;
  const char *data;
};

/*
 * High availability (issue 16, docs/operations.md "High availability"). One
 * row holds the leader's lease: its term, holder, advertised address and
 * expiry, all times on the DATABASE's clock, so that hosts' clocks do not
 * matter. acquire takes the lease only when it has expired (term + 1);
 * renew extends it only while the term is still the caller's. Every
 * controller also reports itself (role, term, journal seq it has applied)
 * in a table of controllers, which `phalanx server status` lists.
 */
struct px_store_lease {
  uint64_t term;        /* the lease's term now */
  bool held;            /* acquire: the caller took it */
  bool live;            /* someone holds it (not expired) */
  char holder[64];
  char addr[256];       /* the holder's advertised URL */
};

struct px_store_ctl {
  const char *name, *addr, *role; /* role: "leader", "standby" */
  uint64_t term;        /* the term it leads or last saw */
  uint64_t seq;         /* journal seq it has applied */
  int64_t pid;
  int64_t age_ms;       /* ctl_list: since its last report (database clock) */
};

struct px_store;

/* Called for each journal record in seq order; non-zero stops the replay
 * and is returned by px_store_replay. Strings live only during the call. */
typedef int (*px_store_rec_fn)(void *ctx, const struct px_store_rec *r);
typedef int (*px_store_acct_fn)(void *ctx, const struct px_acct_row *r);
typedef int (*px_store_usage_fn)(void *ctx, const struct px_usage_row *r);
typedef int (*px_store_arch_fn)(void *ctx, const struct px_store_arch *a);
typedef int (*px_store_ctl_fn)(void *ctx, const struct px_store_ctl *c);
typedef int (*px_store_node_event_fn)(void *ctx, const struct px_node_event_row *e);

/* The backend table; px_store_* below dispatch through it. */
struct px_store_ops {
  const char *name;
  /* recs, then the accounting rows (upserts; may be none), one transaction.
   * A failure changes nothing and says whether trying again may succeed:
   * PX_EAGAIN (disk full, database locked), PX_ECONNECT (the database
   * server is gone; the next call reconnects) or PX_EIO (an I/O error, a
   * corrupt file: do not trust the store further). */
  int (*append)(struct px_store *s, const struct px_store_rec *recs, size_t n,
                const struct px_acct_row *rows, size_t nrows);
  int (*replay)(struct px_store *s, uint64_t after_seq, px_store_rec_fn fn, void *ctx);
  int (*last_seq)(struct px_store *s, uint64_t *seq);
  int (*snapshot_put)(struct px_store *s, uint64_t seq, const char *data, size_t len);
  /* *data malloc'd (NULL and *seq 0 when there is none). */
  int (*snapshot_get)(struct px_store *s, uint64_t *seq, char **data, size_t *len);
  int (*acct_put)(struct px_store *s, const struct px_acct_row *rows, size_t n);
  int (*acct_query)(struct px_store *s, const struct px_acct_query *q, px_store_acct_fn fn,
                    void *ctx);
  int (*usage)(struct px_store *s, int64_t since, int64_t now, enum px_usage_by by,
               px_store_usage_fn fn, void *ctx);
  /* Checkpoint: in ONE transaction, writes the finished jobs to the archive
   * and deletes every journal record of those jobs, so that the journal
   * holds only the histories of live jobs and recovery reads the archive
   * plus that tail. A failed call changes nothing. */
  int (*archive)(struct px_store *s, const struct px_store_arch *rows, size_t n);
  /* The archive in job id order. */
  int (*archive_replay)(struct px_store *s, px_store_arch_fn fn, void *ctx);
  void (*close)(struct px_store *s);
  /* High availability (PostgreSQL only; NULL in SQLite): see below. */
  int (*lease_acquire)(struct px_store *s, const char *name, const char *addr, int64_t ttl_ms,
                       struct px_store_lease *out);
  int (*lease_renew)(struct px_store *s, uint64_t term, int64_t ttl_ms, bool *held);
  int (*lease_release)(struct px_store *s, uint64_t term);
  int (*lease_peek)(struct px_store *s, struct px_store_lease *out); /* read only */
  int (*ctl_report)(struct px_store *s, const struct px_store_ctl *c);
  int (*ctl_list)(struct px_store *s, px_store_ctl_fn fn, void *ctx);
  /* Node events (store.h px_node_event_row), in order, one transaction of
   * their own (rare: one more commit per batch that holds some). */
  int (*node_events_put)(struct px_store *s, const struct px_node_event_row *rows, size_t n);
  int (*node_events_query)(struct px_store *s, const struct px_node_event_query *q, px_store_node_event_fn fn,
                           void *ctx);
};

struct px_store {
  const struct px_store_ops *ops;
  char errmsg[256]; /* the backend's last error, for logs */
  /* Fencing: when not 0, every journal write (append, archive) commits
   * only while the lease row still holds this term, checked under a lock
   * on that row inside the write's transaction; otherwise it fails with
   * PX_ESTATE and changes nothing (a deposed leader cannot write). */
  uint64_t term;
};

/* Opens (creating tables as needed). url as above. d says why on failure. */
int px_store_open(const char *url, struct px_store **out, struct px_diag *d);
/* The same, for a connection its owner never uses from two threads at once
 * (the server's API readers, under their lock): SQLite then takes no mutex
 * of its own in every call (a sixth of the server's time for a page of
 * accounting rows, cli_sacct_100k_ms). PostgreSQL's is the same either way. */
int px_store_open_serial(const char *url, struct px_store **out, struct px_diag *d);
void px_store_close(struct px_store *s); /* NULL is a no-op */

static inline int px_store_append(struct px_store *s, const struct px_store_rec *r, size_t n) {
  return s->ops->append(s, r, n, NULL, 0);
}
/* The group commit with the accounting rows of the jobs that ended in it:
 * one transaction, one fsync (the rows written in a second transaction of
 * their own cost a second fsync per batch that ended jobs). */
static inline int px_store_append_acct(struct px_store *s, const struct px_store_rec *r, size_t n,
                                       const struct px_acct_row *rows, size_t nrows) {
  return s->ops->append(s, r, n, rows, nrows);
}
static inline int px_store_replay(struct px_store *s, uint64_t after, px_store_rec_fn fn,
                                  void *ctx) {
  return s->ops->replay(s, after, fn, ctx);
}
static inline int px_store_last_seq(struct px_store *s, uint64_t *seq) {
  return s->ops->last_seq(s, seq);
}
static inline int px_store_snapshot_put(struct px_store *s, uint64_t seq, const char *data,
                                        size_t len) {
  return s->ops->snapshot_put(s, seq, data, len);
}
static inline int px_store_snapshot_get(struct px_store *s, uint64_t *seq, char **data,
                                        size_t *len) {
  return s->ops->snapshot_get(s, seq, data, len);
}
static inline int px_store_acct_put(struct px_store *s, const struct px_acct_row *r, size_t n) {
  return s->ops->acct_put(s, r, n);
}
static inline int px_store_acct_query(struct px_store *s, const struct px_acct_query *q,
                                      px_store_acct_fn fn, void *ctx) {
  return s->ops->acct_query(s, q, fn, ctx);
}
static inline int px_store_usage(struct px_store *s, int64_t since, int64_t now,
                                 enum px_usage_by by, px_store_usage_fn fn, void *ctx) {
  return s->ops->usage(s, since, now, by, fn, ctx);
}

static inline int px_store_archive(struct px_store *s, const struct px_store_arch *rows,
                                   size_t n) {
  return s->ops->archive(s, rows, n);
}
static inline int px_store_archive_replay(struct px_store *s, px_store_arch_fn fn, void *ctx) {
  return s->ops->archive_replay(s, fn, ctx);
}

/* High availability: PX_EUNSUPPORTED where the backend has none (SQLite). */
static inline bool px_store_has_lease(const struct px_store *s) { return s->ops->lease_acquire; }
static inline int px_store_lease_acquire(struct px_store *s, const char *name, const char *addr,
                                         int64_t ttl_ms, struct px_store_lease *out) {
  return s->ops->lease_acquire ? s->ops->lease_acquire(s, name, addr, ttl_ms, out)
                               : PX_EUNSUPPORTED;
}
static inline int px_store_lease_renew(struct px_store *s, uint64_t term, int64_t ttl_ms,
                                       bool *held) {
  return s->ops->lease_renew ? s->ops->lease_renew(s, term, ttl_ms, held) : PX_EUNSUPPORTED;
}
static inline int px_store_lease_release(struct px_store *s, uint64_t term) {
  return s->ops->lease_release ? s->ops->lease_release(s, term) : PX_EUNSUPPORTED;
}
static inline int px_store_lease_peek(struct px_store *s, struct px_store_lease *out) {
  return s->ops->lease_peek ? s->ops->lease_peek(s, out) : PX_EUNSUPPORTED;
}
static inline int px_store_ctl_report(struct px_store *s, const struct px_store_ctl *c) {
  return s->ops->ctl_report ? s->ops->ctl_report(s, c) : PX_EUNSUPPORTED;
}
static inline int px_store_ctl_list(struct px_store *s, px_store_ctl_fn fn, void *ctx) {
  return s->ops->ctl_list ? s->ops->ctl_list(s, fn, ctx) : PX_EUNSUPPORTED;
}

static inline int px_store_node_events_put(struct px_store *s, const struct px_node_event_row *r, size_t n) {
  return s->ops->node_events_put ? s->ops->node_events_put(s, r, n) : PX_EUNSUPPORTED;
}
static inline int px_store_node_events_query(struct px_store *s, const struct px_node_event_query *q,
                                             px_store_node_event_fn fn, void *ctx) {
  return s->ops->node_events_query ? s->ops->node_events_query(s, q, fn, ctx) : PX_EUNSUPPORTED;
}

/* Backend constructors (store_sqlite.c, store_pg.c). */
int px_store_sqlite_open(const char *path, struct px_store **out, struct px_diag *d);
int px_store_sqlite_open_serial(const char *path, struct px_store **out, struct px_diag *d);
int px_store_pg_open(const char *conninfo, struct px_store **out, struct px_diag *d);

/* The SQL column list shared by both backends' accounting queries. */
#define PX_ACCT_COLUMNS                                                                     \
  "job_id, attempt, array_job_id, array_task_id, name, usr, account, partition, qos, state, " \
  "nodelist, uid, submit_time, eligible_time, start_time, end_time, exit_code, term_signal, " \
  "nnodes, ngpus, ncpus, mem_mib, billable_tres_s, gpu_share, steps, time_limit_s, submit_seq, end_seq, start_seq, dependency"
#define PX_ACCT_NCOLUMNS 30
/* Columns added after the first release: stores made before them gain them
 * when opened (ALTER TABLE; old rows read 0 and NULL). */
#define PX_ACCT_ADD_GPU_SHARE "ALTER TABLE acct ADD COLUMN %sgpu_share BIGINT DEFAULT 0"
#define PX_ACCT_ADD_STEPS "ALTER TABLE acct ADD COLUMN %ssteps TEXT"
#define PX_ACCT_ADD_TIME_LIMIT "ALTER TABLE acct ADD COLUMN %stime_limit_s BIGINT DEFAULT 0"
#define PX_ACCT_ADD_SUBMIT_SEQ "ALTER TABLE acct ADD COLUMN %ssubmit_seq BIGINT DEFAULT 0"
#define PX_ACCT_ADD_END_SEQ "ALTER TABLE acct ADD COLUMN %send_seq BIGINT DEFAULT 0"
#define PX_ACCT_ADD_START_SEQ "ALTER TABLE acct ADD COLUMN %sstart_seq BIGINT DEFAULT 0"
#define PX_NODE_EVENT_COLUMNS "node, time_start, time_end, state, reason, cause, usr"
#define PX_ACCT_ADD_DEPENDENCY "ALTER TABLE acct ADD COLUMN %sdependency TEXT"

#endif
