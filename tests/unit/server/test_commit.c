/*
 * Group commit (server/journal/commit.c) against a fake store: request threads wait
 * in px_queue_call as the HTTP threads do, this test's main thread plays the
 * main loop (takes the requests, journals one record each, seals them), and
 * one request of each group leads its commit.
 *
 *   - every record reaches the store once, in seq order, whatever thread
 *     commits it and however groups are merged;
 *   - a client hears its answer only once its record is durable;
 *   - no request may lead (lowered readers): nothing is sealed, the caller
 *     commits itself;
 *   - a failed commit answers 503 (never the handler's yes), stops every
 *     later commit and says so to the main loop.
 */
#include "px_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/state.h"

#define NCLIENTS 4
#define ROUNDS 200

struct fake_store {
  struct px_store base;
  uint64_t seqs[NCLIENTS * ROUNDS + 16];
  size_t n;
  int appends, bad_rows;
  bool fail;
};

static int fake_append(struct px_store *ps, const struct px_store_rec *r, size_t n,
                       const struct px_acct_row *rows, size_t nrows) {
  struct fake_store *f = (struct fake_store *)ps;
  (void)rows;
  f->bad_rows += nrows != 0; /* no job ended here */
  f->appends++;
  if (f->fail) return PX_EIO;
  for (size_t i = 0; i < n; i++) {
    assert_non_null(r[i].data);
    assert_true(f->n < sizeof f->seqs / sizeof f->seqs[0]);
    f->seqs[f->n++] = r[i].seq;
  }
  return 0;
}

static const struct px_store_ops fake_ops = {.name = "fake", .append = fake_append};

static struct fake_store store;

static struct px_server *server_new(void) {
  memset(&store, 0, sizeof store);
  store.base.ops = &fake_ops;
  struct px_server *s = calloc(1, sizeof *s);
  assert_non_null(s);
  px_commit_init(&s->commit);
  px_queue_init(&s->queue);
  s->metrics = px_metrics_new();
  s->store = &store.base;
  return s;
}

static void server_free(struct px_server *s) {
  px_commit_fini(&s->commit);
  px_queue_fini(&s->queue);
  px_metrics_free(s->metrics);
  free(s);
}

/* A client: ROUNDS requests in turn, each checked when answered. */
struct client {
  struct px_server *s;
  bool may_lead;
  int ok, refused, bad; /* counted here, asserted by the test's thread */
};

static void *client_run(void *arg) {
  struct client *c = arg;
  for (int k = 0; k < ROUNDS; k++) {
    struct px_req r = {.kind = PX_REQ_SUBMIT, .may_lead = c->may_lead};
    if (px_queue_call(&c->s->queue, &r)) break;
    if (r.status == 201) {
      /* its record (seq in job_id) is durable before it hears yes */
      c->bad += atomic_load(&c->s->committed_seq) < r.job_id;
      c->ok++;
    } else {
      c->bad += r.status != 503;
      c->refused++;
    }
    free(r.body);
  }
  return NULL;
}

/* The main loop's part: one record per request, the answer, then seal. */
static void handle(struct px_server *s, struct px_req *reqs) {
  for (struct px_req *r = reqs; r; r = r->next) {
    struct px_store_rec rec = {0, 1, "submit", 7, NULL, strdup("{}")};
    assert_int_equal(px_commit_append(s, &rec), 0);
    r->job_id = rec.seq;
    px_req_answer(r, 201, strdup("{}"));
  }
  assert_true(px_commit_open(s));
  if (px_commit_seal(s, reqs)) return;
  assert_int_equal(px_commit_sync(s), 0); /* nobody may lead: commit here */
  for (struct px_req *r = reqs, *next; r; r = next) {
    next = r->next;
    px_req_done(r);
  }
}

static void run_clients(struct px_server *s, bool may_lead, struct client *c) {
  pthread_t tid[NCLIENTS];
  for (int i = 0; i < NCLIENTS; i++) {
    c[i] = (struct client){s, may_lead, 0, 0, 0};
    assert_int_equal(pthread_create(&tid[i], NULL, client_run, &c[i]), 0);
  }
  for (size_t answered = 0; answered < NCLIENTS * ROUNDS && !px_commit_failed(s);) {
    struct px_req *reqs = px_queue_take(&s->queue, px_now_mono_ns() + 1000000000LL);
    for (struct px_req *r = reqs; r; r = r->next) answered++;
    if (reqs) handle(s, reqs);
  }
  px_queue_stop(&s->queue); /* clients calling after a failure are refused */
  struct px_req *left = px_queue_take(&s->queue, 0);
  for (struct px_req *r = left, *next; r; r = next) { /* and those queued before, answered */
    next = r->next;
    px_req_error(r, 503, "UNAVAILABLE", "stopping");
    px_req_done(r);
  }
  for (int i = 0; i < NCLIENTS; i++) {
    pthread_join(tid[i], NULL);
    assert_int_equal(c[i].bad, 0);
  }
}

static void records_in_order(struct px_server *s) {
  assert_int_equal(store.bad_rows, 0);
  assert_int_equal(store.n, (size_t)NCLIENTS * ROUNDS);
  for (size_t i = 0; i < store.n; i++) assert_int_equal(store.seqs[i], i + 1);
  assert_int_equal(atomic_load(&s->committed_seq), s->seq);
}

static void leaders_commit_everything_in_order(void **state) {
  (void)state;
  struct px_server *s = server_new();
  struct client c[NCLIENTS];
  run_clients(s, true, c);
  for (int i = 0; i < NCLIENTS; i++) assert_int_equal(c[i].ok, ROUNDS);
  records_in_order(s);
  assert_true(store.appends <= (int)store.n); /* groups merged, never split */
  assert_int_equal(px_commit_sync(s), 0);     /* nothing left open: no empty append */
  assert_int_equal(store.n, (size_t)NCLIENTS * ROUNDS);
  server_free(s);
}

static void without_a_leader_the_caller_commits(void **state) {
  (void)state;
  struct px_server *s = server_new();
  struct client c[NCLIENTS];
  run_clients(s, false, c);
  for (int i = 0; i < NCLIENTS; i++) assert_int_equal(c[i].ok, ROUNDS);
  records_in_order(s);
  server_free(s);
}

static void a_failed_commit_never_says_yes(void **state) {
  (void)state;
  struct px_server *s = server_new();
  store.fail = true;
  struct client c[NCLIENTS];
  run_clients(s, true, c);
  assert_true(px_commit_failed(s));
  for (int i = 0; i < NCLIENTS; i++) assert_int_equal(c[i].ok, 0);
  int appends = store.appends;
  assert_int_equal(appends, 1); /* the first failure stops every later commit */
  struct px_store_rec rec = {0, 1, "cancel", 7, "root", strdup("{}")};
  assert_int_equal(px_commit_append(s, &rec), 0);
  assert_int_equal(px_commit_sync(s), PX_EIO);
  assert_int_equal(store.appends, appends);
  assert_int_equal(atomic_load(&s->committed_seq), 0);
  server_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(leaders_commit_everything_in_order),
      cmocka_unit_test(without_a_leader_the_caller_commits),
      cmocka_unit_test(a_failed_commit_never_says_yes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
