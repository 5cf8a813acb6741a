/*
 * commit.c - group commit off the main thread (journal/journal.h).
 *
 * The main thread appends journal records to the open batch while it
 * handles a group of requests, then seals the batch and goes on: it does not
 * wait for the fsync. One of the batch's own API threads, already woken for
 * it, leads: it commits every batch sealed so far in one transaction (the
 * store under store_lock), answers the other requests of those batches, and
 * then writes its own answer. So a client hears yes only after its change is
 * durable, as before, with no more thread hand-offs than before (request
 * thread -> main thread -> request thread), while the main thread already
 * handles the next group or runs a scheduling cycle during the fsync; and
 * the requests that arrive during one commit go together in the next.
 *
 * A batch also carries the accounting rows of the jobs its records ended,
 * built when it is sealed (main thread, where the jobs are) and written in
 * the same transaction: one fsync, and a job's end and its row are durable
 * together. The row of an earlier attempt of a requeued job is built when
 * its requeue record is appended, before the requeue clears the run's
 * fields (px_commit_add_row), and goes with that record the same way.
 * Either is written only live: recovery replays records, never rows, and
 * the store's key (job, attempt) makes a row written twice one row.
 *
 * A node's events (sacctmgr show event: down, drained, back) ride a batch
 * the same way, live only, and are written after its records, in a
 * transaction of their own (rare: a node changes state seldom); a failed
 * write of them is logged and does not fail the batch, whose records are
 * durable already.
 *
 * Order is kept: batches are committed in the order they were sealed (a
 * leader takes the whole queue under store_lock), so a record never becomes
 * durable before an earlier one. Whatever needs a durable state first
 * (launch orders after a cycle, a snapshot for readers, accounting rows,
 * checkpoints) calls px_commit_sync(), which commits the rest on the main
 * thread and returns when everything sealed is durable.
 *
 * A commit that may succeed later (the store says PX_EAGAIN: disk full,
 * database locked; PX_ECONNECT: database server gone) is retried every
 * second, for as long as it takes, by whoever holds store_lock: the
 * requests of the batches in hand wait for their answer, new changes are
 * refused with 503 at the API's door (px_commit_stalled), and listings are
 * served from the last published snapshot. Any other failed commit (an I/O
 * error, a corrupt file) is fatal as before: its requests and every later
 * one are answered 503 (never yes), and the main loop stops
 * (px_commit_failed); a restart replays what is durable.
 * A thread that serves listings runs at a lower priority (http.c); it never
 * leads, so that a commit never waits for a low-priority thread: when no
 * request of a batch may lead, the main thread commits it.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/journal/journal.h"
#include "server/step_table.h"
#include "server/tables.h"
#include "util/log.h"

struct px_commit_batch {
  struct px_server *s;
  struct px_store_rec *recs;    /* owns each data and subject */
  size_t n, cap;
  struct px_acct_row *rows;     /* accounting rows of the jobs (attempts) these records ended */
  char **strs;                  /* the strings they own, ROW_STRS per row (NULL: points into a job) */
  size_t nrows, rows_cap;
  struct px_node_event_row *evs; /* node events (strings owned: EV_STRS each) */
  size_t nevs, evs_cap;
  struct px_req *reqs;          /* answered after the commit */
  struct px_req *leader;        /* the one of reqs that leads (its thread answers itself) */
  bool done;
  int rc;
  struct px_commit_batch *next;
};

/* Strings a row may own: an earlier attempt's row copies every one (the job
 * goes on and may change); an ending job's owns its node list and steps. */
enum { ROW_STRS = 9 };
enum { EV_STRS = 5 }; /* node, state, reason, cause, user */

static void events_clear(struct px_commit_batch *b) {
  for (size_t i = 0; i < b->nevs; i++) {
    struct px_node_event_row *e = &b->evs[i];
    const char *strs[EV_STRS] = {e->node, e->state, e->reason, e->cause, e->user};
    for (int k = 0; k < EV_STRS; k++) free((char *)strs[k]);
  }
  b->nevs = 0;
}

void px_commit_init(struct px_committer *c) {
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->store_lock, NULL);
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->done_cv, NULL);
}

static void batch_clear(struct px_commit_batch *b) {
  for (size_t i = 0; i < b->n; i++) {
    free((char *)b->recs[i].data);
    free((char *)b->recs[i].subject);
  }
  for (size_t i = 0; b->strs && i < ROW_STRS * b->nrows; i++) free(b->strs[i]);
  free(b->strs);
  free(b->rows);
  events_clear(b);
  free(b->evs);
  b->evs = NULL;
  b->evs_cap = 0;
  b->strs = NULL;
  b->rows = NULL;
  b->nrows = b->rows_cap = 0;
  b->n = 0;
  b->reqs = b->leader = NULL;
  b->done = false;
  b->rc = 0;
}

static void batch_free(struct px_commit_batch *b) {
  if (!b) return;
  batch_clear(b);
  free(b->recs);
  free(b);
}

void px_commit_fini(struct px_committer *c) {
  for (struct px_commit_batch *b = c->free, *next; b; b = next) {
    next = b->next;
    batch_free(b);
  }
  batch_free(c->open);
  free(c->scratch);
  free(c->scratch_rows);
  pthread_cond_destroy(&c->done_cv);
  pthread_mutex_destroy(&c->lock);
  pthread_mutex_destroy(&c->store_lock);
}

/* A batch from the free list (its arrays kept), or a new one. */
static struct px_commit_batch *batch_get(struct px_server *s) {
  struct px_committer *c = &s->commit;
  pthread_mutex_lock(&c->lock);
  struct px_commit_batch *b = c->free;
  if (b) c->free = b->next;
  pthread_mutex_unlock(&c->lock);
  if (!b && !(b = calloc(1, sizeof *b))) return NULL;
  b->s = s;
  b->next = NULL;
  return b;
}

static void batch_put(struct px_committer *c, struct px_commit_batch *b) {
  batch_clear(b);
  pthread_mutex_lock(&c->lock);
  b->next = c->free;
  c->free = b;
  pthread_mutex_unlock(&c->lock);
}

int px_commit_append(struct px_server *s, struct px_store_rec *r) {
  struct px_committer *c = &s->commit;
  char *data = (char *)r->data, *subject = NULL;
  if (!c->open) c->open = batch_get(s);
  struct px_commit_batch *b = c->open;
  if (b && b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 64;
    struct px_store_rec *recs = realloc(b->recs, cap * sizeof *recs);
    if (recs) b->recs = recs, b->cap = cap;
  }
  if (!b || b->n == b->cap || (r->subject && !(subject = strdup(r->subject)))) {
    free(data);
    return PX_ENOMEM;
  }
  r->seq = ++s->seq;
  r->subject = subject;
  b->recs[b->n++] = *r;
  s->dirty = true;
  return 0;
}

/* The items of one batch: its records, or its accounting rows. */
typedef const void *(*items_fn)(const struct px_commit_batch *b, size_t *n);
static const void *recs_of(const struct px_commit_batch *b, size_t *n) { return *n = b->n, b->recs; }
static const void *rows_of(const struct px_commit_batch *b, size_t *n) { return *n = b->nrows, b->rows; }

/* The items of the batches of list as one array (of *n items of size
 * bytes): the batch's own when only one has any, else copied into *scratch
 * (*cap bytes, grown as needed). NULL when none, or out of memory. */
static const void *gather(struct px_commit_batch *list, items_fn items, size_t size, void **scratch, size_t *cap,
                          size_t *n) {
  const void *only = NULL;
  size_t nb = 0, k;
  *n = 0;
  for (struct px_commit_batch *b = list; b; b = b->next) {
    const void *p = items(b, &k);
    if (k) only = p, nb++, *n += k;
  }
  if (nb <= 1) return only;
  if (*n * size > *cap) {
    void *p = realloc(*scratch, *n * size);
    if (!p) return NULL;
    *scratch = p;
    *cap = *n * size;
  }
  size_t off = 0;
  for (struct px_commit_batch *b = list; b; b = b->next) {
    const void *p = items(b, &k);
    if (k == 0) continue; /* an empty batch may hold no array at all: memcpy wants non-NULL */
    memcpy((char *)*scratch + off, p, k * size);
    off += k * size;
  }
  return *scratch;
}

static void set_stall(struct px_committer *c, const char *why) {
  pthread_mutex_lock(&c->lock);
  snprintf(c->stall_why, sizeof c->stall_why, "%s", why ? why : "");
  pthread_mutex_unlock(&c->lock);
  atomic_store(&c->stalled, why != NULL);
}

/* The commit that may yet succeed, again every second until it does, the
 * store fails otherwise, or the server stops (store_lock held). */
static int retry_commit(struct px_server *s, const struct px_store_rec *recs, size_t n,
                        const struct px_acct_row *rows, size_t nrows) {
  struct px_committer *c = &s->commit;
  px_error("journal commit failed: %s: refusing changes, serving listings, retrying every second",
           s->store->errmsg);
  set_stall(c, s->store->errmsg);
  int rc = PX_EAGAIN;
  for (int tries = 1; (rc == PX_EAGAIN || rc == PX_ECONNECT) && !atomic_load(&s->stop); tries++) {
    nanosleep(&(struct timespec){1, 0}, NULL);
    rc = px_store_append_acct(s->store, recs, n, rows, nrows);
    if (rc && tries % 60 == 0) px_warn("journal commit still failing after %d s: %s", tries, s->store->errmsg);
  }
  atomic_fetch_add(&c->stalls, 1);
  set_stall(c, NULL);
  if (!rc) px_info("journal commit succeeded again: accepting changes");
  return rc;
}

/* One transaction for the batches of list; 0 or PX_EIO (logged). */
static int store_commit(struct px_server *s, struct px_commit_batch *list) {
  struct px_committer *c = &s->commit;
  if (atomic_load(&c->failed)) return PX_EIO; /* nothing after a failure becomes durable */
  size_t n, nrows;
  const struct px_store_rec *recs = gather(list, recs_of, sizeof *recs, &c->scratch, &c->scratch_cap, &n);
  const struct px_acct_row *rows =
      gather(list, rows_of, sizeof *rows, &c->scratch_rows, &c->scratch_rows_cap, &nrows);
  if (!n && !nrows) return 0;
  if ((n && !recs) || (nrows && !rows)) {
    px_error("journal commit of %zu records: out of memory", n);
    return PX_EIO;
  }
  int64_t t0 = px_now_mono_ns();
  int rc = px_store_append_acct(s->store, recs, n, rows, nrows);
  px_metrics_commit(s->metrics, (double)(px_now_mono_ns() - t0) / 1e9);
  if (rc == PX_EAGAIN || rc == PX_ECONNECT) rc = retry_commit(s, recs, n, rows, nrows);
  if (rc) px_error("journal commit of %zu records failed: %s", n, s->store->errmsg);
  return rc ? PX_EIO : 0;
}

/* The node events of the committed batches of list, batch by batch
 * (store_lock held). Not fatal: the records are durable. */
static void store_node_events(struct px_server *s, struct px_commit_batch *list) {
  for (struct px_commit_batch *b = list; b; b = b->next) {
    if (!b->nevs) continue;
    int rc = px_store_node_events_put(s->store, b->evs, b->nevs);
    if (rc) px_warn("accounting: %zu node events not written: %s", b->nevs, s->store->errmsg);
  }
}

/* Answers the requests of a committed batch, but its leader's (that thread
 * reads its batch's rc itself). A request is gone once answered. */
static void answer(struct px_commit_batch *b, int rc) {
  for (struct px_req *r = b->reqs, *next; r; r = next) {
    next = r->next;
    if (r == b->leader) continue;
    if (rc) px_req_error(r, 503, "UNAVAILABLE", "journal failure: the change was not recorded");
    px_req_done(r);
  }
}

/* Commits every sealed batch, in order, under store_lock (held by the caller). */
static void commit_sealed(struct px_server *s) {
  struct px_committer *c = &s->commit;
  pthread_mutex_lock(&c->lock);
  struct px_commit_batch *list = c->head;
  c->head = c->tail = NULL;
  pthread_mutex_unlock(&c->lock);
  if (!list) return;
  int rc = store_commit(s, list);
  if (!rc) store_node_events(s, list);
  uint64_t last = 0;
  for (struct px_commit_batch *b = list; b; b = b->next)
    if (b->n) last = b->recs[b->n - 1].seq;
  if (!rc && last) atomic_store(&s->committed_seq, last);
  for (struct px_commit_batch *b = list; b; b = b->next) answer(b, rc);
  if (rc && !atomic_exchange(&c->failed, true)) px_queue_poke(&s->queue); /* the loop stops */
  pthread_mutex_lock(&c->lock);
  for (struct px_commit_batch *b = list, *next; b; b = next) {
    next = b->next; /* an owner may take b back once done */
    b->rc = rc;
    b->done = true;
  }
  pthread_cond_broadcast(&c->done_cv);
  pthread_mutex_unlock(&c->lock);
}

/* Room for n more rows in b (their strings zeroed); false when out of memory. */
static bool rows_room(struct px_commit_batch *b, size_t n) {
  if (b->nrows + n <= b->rows_cap) return true;
  size_t cap = b->nrows + n > 2 * b->rows_cap ? b->nrows + n : 2 * b->rows_cap;
  struct px_acct_row *rows = realloc(b->rows, cap * sizeof *rows);
  if (rows) b->rows = rows;
  char **strs = rows ? realloc(b->strs, ROW_STRS * cap * sizeof *strs) : NULL;
  if (!strs) return false;
  b->strs = strs;
  memset(&strs[ROW_STRS * b->rows_cap], 0, ROW_STRS * (cap - b->rows_cap) * sizeof *strs);
  b->rows_cap = cap;
  return true;
}

/* Points *field at a copy of itself owned by *own; false when out of memory. */
static bool own_copy(const char **field, char **own) {
  if (!*field) return true;
  *field = *own = strdup(*field);
  return *own != NULL;
}

int px_commit_add_row(struct px_server *s, const struct px_acct_row *row) {
  struct px_committer *c = &s->commit;
  if (!c->open) c->open = batch_get(s);
  struct px_commit_batch *b = c->open;
  if (!b || !rows_room(b, 1)) return PX_ENOMEM;
  struct px_acct_row *r = &b->rows[b->nrows];
  char **own = &b->strs[ROW_STRS * b->nrows];
  *r = *row;
  const char **fields[ROW_STRS] = {&r->name,     &r->user,  &r->account, &r->partition, &r->qos,
                                   &r->state,    &r->nodelist, &r->steps, &r->dependency};
  bool ok = true;
  for (int i = 0; i < ROW_STRS; i++) ok = own_copy(fields[i], &own[i]) && ok;
  if (!ok) {
    for (int i = 0; i < ROW_STRS; i++) free(own[i]), own[i] = NULL;
    return PX_ENOMEM;
  }
  b->nrows++;
  return 0;
}

int px_commit_add_node_event(struct px_server *s, const struct px_node_event_row *e) {
  struct px_committer *c = &s->commit;
  if (!c->open) c->open = batch_get(s);
  struct px_commit_batch *b = c->open;
  if (b && b->nevs == b->evs_cap) {
    size_t cap = b->evs_cap ? 2 * b->evs_cap : 8;
    struct px_node_event_row *v = realloc(b->evs, cap * sizeof *v);
    if (v) b->evs = v, b->evs_cap = cap;
  }
  if (!b || b->nevs == b->evs_cap) return PX_ENOMEM;
  struct px_node_event_row *r = &b->evs[b->nevs];
  *r = *e;
  const char **strs[EV_STRS] = {&r->node, &r->state, &r->reason, &r->cause, &r->user};
  const char *orig[EV_STRS] = {e->node, e->state, e->reason, e->cause, e->user};
  bool ok = true; /* each string copied; after a failure the rest NULL, so that all can be freed */
  for (int k = 0; k < EV_STRS; k++) {
    *strs[k] = ok && orig[k] ? strdup(orig[k]) : NULL;
    ok = ok && (*strs[k] || !orig[k]);
  }
  if (!ok) {
    for (int k = 0; k < EV_STRS; k++) free((char *)*strs[k]);
    return PX_ENOMEM;
  }
  b->nevs++;
  return 0;
}

/* Main thread: the accounting rows of the jobs that ended since the last
 * seal (their end records are in b) go with b. */
static void take_acct(struct px_server *s, struct px_commit_batch *b) {
  size_t n = s->acct_pending.len;
  if (!n) return;
  bool room = rows_room(b, n);
  for (size_t i = 0; room && i < n; i++) {
    struct px_sjob *j = px_jobs_find(s, s->acct_pending.v[i]);
    if (!j) continue;
    char **own = &b->strs[ROW_STRS * b->nrows];
    own[0] = px_jobs_nodelist(s, j);
    own[1] = px_steps_acct_text(s, j);
    px_jobs_acct_row(s, j, &b->rows[b->nrows], own[0]);
    b->rows[b->nrows].steps = own[1];
    b->nrows++;
  }
  if (!room) px_warn("accounting rows of %zu jobs not written: out of memory", n);
  px_u64vec_clear(&s->acct_pending);
}

/* Queues the open batch (even an empty one: it carries requests). */
static struct px_commit_batch *seal(struct px_server *s, struct px_req *reqs) {
  struct px_committer *c = &s->commit;
  struct px_commit_batch *b = c->open ? c->open : batch_get(s);
  if (!b) return NULL;
  c->open = NULL;
  take_acct(s, b);
  b->reqs = reqs;
  pthread_mutex_lock(&c->lock);
  if (c->tail) c->tail->next = b;
  else c->head = b;
  c->tail = b;
  pthread_mutex_unlock(&c->lock);
  return b;
}

static void wait_done(struct px_committer *c, struct px_commit_batch *b) {
  pthread_mutex_lock(&c->lock);
  while (!b->done) pthread_cond_wait(&c->done_cv, &c->lock);
  pthread_mutex_unlock(&c->lock);
}

int px_commit_sync(struct px_server *s) {
  struct px_committer *c = &s->commit;
  struct px_commit_batch *b = seal(s, NULL);
  pthread_mutex_lock(&c->store_lock);
  commit_sealed(s);
  pthread_mutex_unlock(&c->store_lock);
  if (!b) return PX_ENOMEM; /* the records stay open: the next seal takes them */
  wait_done(c, b); /* done already: committed above or by a leader before */
  int rc = b->rc;
  batch_put(c, b);
  return rc ? rc : atomic_load(&c->failed) ? PX_EIO : 0;
}

bool px_commit_seal(struct px_server *s, struct px_req *reqs) {
  struct px_req *leader = reqs;
  while (leader && !leader->may_lead) leader = leader->next;
  if (!leader) return false;
  struct px_commit_batch *b = seal(s, reqs);
  if (!b) return false;
  b->leader = leader;
  leader->lead = b;
  sem_post(&leader->done); /* its thread runs px_commit_lead */
  return true;
}

void px_commit_lead(struct px_req *r) {
  struct px_commit_batch *b = r->lead;
  struct px_committer *c = &b->s->commit;
  pthread_mutex_lock(&c->store_lock);
  commit_sealed(b->s); /* ours, unless an earlier leader took it along */
  pthread_mutex_unlock(&c->store_lock);
  wait_done(c, b);
  if (b->rc) px_req_error(r, 503, "UNAVAILABLE", "journal failure: the change was not recorded");
  r->lead = NULL;
  batch_put(c, b);
}

bool px_commit_open(const struct px_server *s) {
  return s->commit.open && (s->commit.open->n || s->commit.open->nevs);
}

bool px_commit_failed(struct px_server *s) { return atomic_load(&s->commit.failed); }

bool px_commit_stalled(struct px_server *s, char *why, size_t size) {
  struct px_committer *c = &s->commit;
  if (!atomic_load(&c->stalled)) return false;
  pthread_mutex_lock(&c->lock);
  snprintf(why, size, "%s", c->stall_why);
  pthread_mutex_unlock(&c->lock);
  return true;
}

void px_commit_lock(struct px_server *s) { pthread_mutex_lock(&s->commit.store_lock); }
void px_commit_unlock(struct px_server *s) { pthread_mutex_unlock(&s->commit.store_lock); }
