/*
 * cmd_sacct.c - `sacct` (and the native `jobs`): accounting records of
 * finished jobs and the server's live jobs, filtered as Slurm does, printed
 * with fmt_sacct.c or as JSON.
 *
 * Accounting answers at most a page of rows a request, and a history can
 * hold hundreds of thousands (cli_sacct_100k_ms), so the rows are streamed:
 * each page is printed and freed as soon as it is merged with the live jobs,
 * while other threads fetch and decode the pages after it (stream_accounting).
 * The output is the same as if every row had been read first: rows in job
 * and attempt order, then the live jobs that have no row.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_common.h"

/* Midnight today, sacct's default start when no job ids are given. */
static int64_t today_midnight(int64_t now) {
  time_t t = (time_t)now;
  struct tm tm;
  localtime_r(&t, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_isdst = -1;
  return (int64_t)mktime(&tm);
}

struct sacct_args {
  struct px_sacct_opts o;
  struct px_job_filter f;
  int64_t since, until;
  bool all_users;
  bool duplicates; /* -D: every attempt of a requeued job, not only its latest */
};

static int sacct_parse(int argc, char **argv, struct sacct_args *a, struct px_cmd *c) {
  static const struct option longopts[] = {
      {"jobs", required_argument, 0, 'j'},     {"user", required_argument, 0, 'u'},
      {"accounts", required_argument, 0, 'A'}, {"starttime", required_argument, 0, 'S'},
      {"endtime", required_argument, 0, 'E'},  {"allocations", no_argument, 0, 'X'},
      {"format", required_argument, 0, 'o'},   {"parsable2", no_argument, 0, 'P'},
      {"parsable", no_argument, 0, 'p'},       {"noheader", no_argument, 0, 'n'},
      {"state", required_argument, 0, 's'},    {"allusers", no_argument, 0, 'a'},
      {"partition", required_argument, 0, 'r'}, {"name", required_argument, 0, 1000},
      {"duplicates", no_argument, 0, 'D'},     {"json", no_argument, 0, 'J'},
      {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "j:u:A:S:E:Xo:Ppns:ar:Dh", longopts, NULL)) != -1) {
    switch (opt) {
    case 'j': a->f.jobs = optarg; break;
    case 'u': a->f.users = optarg; break;
    case 'A': a->f.accounts = optarg; break;
    case 'S': case 'E':
      if (px_cli_time_parse(optarg, c->now, opt == 'S' ? &a->since : &a->until)) {
        fprintf(stderr, "Invalid time specification (pos=%d): %s\n", px_cli_time_error_pos(optarg), optarg);
        return 1;
      }
      break;
    case 'X': a->o.allocations = true; break;
    case 'o': a->o.format = optarg; break;
    case 'P': a->o.parsable2 = true; break;
    case 'p': a->o.parsable = true; break;
    case 'n': a->o.noheader = true; break;
    case 's': a->f.states = optarg; break;
    case 'a': a->all_users = true; break;
    case 'r': a->f.partitions = optarg; break;
    case 1000: a->f.names = optarg; break;
    case 'D': a->duplicates = true; break;
    case 'J': c->json = true; break;
    case 'h':
      printf("Usage: sacct [-j JOBS] [-u USERS | -a] [-A ACCOUNTS] [-S START] [-E END] [-s STATES]\n"
             "             [-X] [-D] [-o FIELDS] [-P | -p] [-n] [--json]\n");
      return -1;
    default: return 1;
    }
  }
  char buf[1024];
  const char *bad = px_cmd_bad_state(a->f.states, buf, sizeof buf);
  if (bad) { /* Slurm's sacct calls these fatal */
    fprintf(stderr, "%s: fatal: unrecognized job state value '%s'\n", c->prog, bad);
    return 1;
  }
  if ((bad = px_cmd_bad_job_id(a->f.jobs, true, buf, sizeof buf))) {
    fprintf(stderr, "%s: fatal: Bad job/step specified: %s\n", c->prog, bad);
    return 1;
  }
  if (!a->f.users && !a->all_users && getuid() != 0) a->f.users = px_cmd_user();
  if (!a->since && !a->f.jobs) a->since = today_midnight(c->now);
  if (!a->f.states) a->f.states = "all";
  return 0;
}

/* One value of a comma list that the server can filter on itself ("12",
 * "alice"), else NULL: the rest of the filter is applied here. */
static const char *single(const char *list, bool numeric) {
  if (!list || !*list || strchr(list, ',')) return NULL;
  for (const char *p = list; numeric && *p; p++)
    if (*p < '0' || *p > '9') return NULL;
  for (const char *p = list; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || strchr("._-", *p)))
      return NULL; /* not a plain name: no escaping in the query string */
  return list;
}

static int by_job_attempt(const void *a, const void *b) {
  const struct px_job_info *x = a, *y = b;
  if (x->job_id != y->job_id) return x->job_id < y->job_id ? -1 : 1;
  return x->restarts < y->restarts ? -1 : x->restarts > y->restarts;
}

/* The rows come sorted by job and attempt (the server's order); sorted here
 * only if they are not. */
static void sort_attempts(struct px_job_info *v, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (by_job_attempt(&v[i - 1], &v[i]) > 0) {
      qsort(v, n, sizeof *v, by_job_attempt);
      return;
    }
}

/* Accounting keeps one record per attempt of a requeued job; like Slurm's
 * sacct without -D, keep only the latest, where it was recorded: the last
 * of its job's run of rows, linear in the rows. */
static size_t latest_attempts(struct px_job_info *v, size_t n, void (*fini)(struct px_job_info *)) {
  sort_attempts(v, n);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (i + 1 < n && v[i + 1].job_id == v[i].job_id) fini(&v[i]);
    else if (k++ != i) v[k - 1] = v[i];
  }
  return k;
}

/* The server's live jobs, indexed by job id: Slurm's sacct lists pending
 * and running jobs too. A live job that has an accounting row lends it what
 * rows do not keep (live_lend); the others are printed after the rows. */
struct live_key {
  uint64_t job_id;
  size_t i; /* in v */
};
struct live {
  struct px_job_info *v;
  size_t n;
  struct live_key *by_id; /* in job id order (equal ids: in v's order) */
  bool *has_row;
};

static int by_live_key(const void *a, const void *b) {
  const struct live_key *x = a, *y = b;
  if (x->job_id != y->job_id) return x->job_id < y->job_id ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

static int live_fetch(struct px_cmd *c, struct live *l) {
  if (px_cmd_get_jobs(c, "/v1/jobs", &l->v, &l->n)) return 1;
  l->by_id = malloc((l->n + 1) * sizeof *l->by_id);
  l->has_row = calloc(l->n + 1, sizeof *l->has_row);
  if (!l->by_id || !l->has_row) return px_cmd_error(c, "out of memory"), 1;
  for (size_t i = 0; i < l->n; i++) {
    l->by_id[i] = (struct live_key){l->v[i].job_id, i};
    /* a requeued job waiting again is its new attempt, PENDING in Slurm's
     * sacct; REQUEUED is the state of the attempt that ended (its row) */
    if (!strcmp(l->v[i].state, "REQUEUED")) snprintf(l->v[i].state, sizeof l->v[i].state, "PENDING");
  }
  qsort(l->by_id, l->n, sizeof *l->by_id, by_live_key);
  return 0;
}

static void live_free(struct live *l) {
  px_cli_jobs_free(l->v, l->n);
  free(l->by_id);
  free(l->has_row);
}

/* A job still in the server's table lends the accounting row of its own
 * attempt who cancelled it and its end reason (until it leaves the table,
 * sacct's Reason is then None), and is then not printed on its own. A row
 * of an earlier attempt (the job was requeued and runs or waits again)
 * lends nothing: the live job is the latest attempt, printed after the rows.
 * row_owns: the row takes the name (it frees its strings); else it points
 * at the live job's (a row whose strings are in its page's text, printed
 * while the live jobs are kept). Returns whether the live job has a later
 * attempt than row. */
static bool live_lend(struct live *l, struct px_job_info *row, bool row_owns) {
  size_t lo = 0, hi = l->n;
  bool later = false;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (l->by_id[mid].job_id < row->job_id) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < l->n && l->by_id[lo].job_id == row->job_id; lo++) {
    struct px_job_info *j = &l->v[l->by_id[lo].i];
    if (j->restarts > row->restarts) {
      later = true;
      continue;
    }
    l->has_row[l->by_id[lo].i] = true;
    if (!row->cancelled_by) { /* an accounting row does not name who cancelled: the job does */
      row->cancelled_by = j->cancelled_by;
      if (row_owns) j->cancelled_by = NULL;
    }
    /* nor why a start failed ("ContainerImage: ..."): the live job's, for its own attempt */
    if (!strcmp(row->reason, "None") && row->restarts == j->restarts)
      snprintf(row->reason, sizeof row->reason, "%s", j->reason);
  }
  return later;
}

/* A page's rows as sacct shows them: every attempt (-D) or the latest of
 * each job, the live jobs lending theirs what they know (live_lend); without
 * -D a row whose job has started again (or waits again) since gives way to
 * the live job. Returns how many of v are left (the rest released). */
static size_t page_rows(struct live *l, const struct sacct_args *a, struct px_job_info *v, size_t n,
                        bool row_owns, void (*fini)(struct px_job_info *)) {
  if (a->duplicates) sort_attempts(v, n);
  else n = latest_attempts(v, n, fini);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (live_lend(l, &v[i], row_owns) && !a->duplicates) fini(&v[i]);
    else if (k++ != i) v[k - 1] = v[i];
  }
  return k;
}

/* Where the jobs that pass go: the printer, or (--json) one array printed
 * at the end. */
struct sink {
  const struct sacct_args *a;
  int64_t now;
  struct px_sacct_printer *p;
  struct px_job_info *all;
  size_t n;
  int rc;
};

static bool passes(const struct sink *s, const struct px_job_info *j) {
  int64_t end = j->end_time ? j->end_time : s->now;
  if (s->a->since && end < s->a->since) return false;
  if (s->a->until && j->submit_time > s->a->until) return false;
  return px_cmd_job_filter(j, &s->a->f);
}

/* Takes the jobs v[0..n) (not their array, left to the caller): keeps
 * those that pass (--json) or prints them; releases the rest with fini. */
static void sink_jobs(struct sink *s, struct px_job_info *v, size_t n, void (*fini)(struct px_job_info *)) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (!passes(s, &v[i])) fini(&v[i]);
    else if (k++ != i) v[k - 1] = v[i];
  }
  if (s->p) {
    px_sacct_print_jobs(s->p, v, k);
    for (size_t i = 0; i < k; i++) fini(&v[i]);
    return;
  }
  struct px_job_info *all = realloc(s->all, (s->n + k + 1) * sizeof *all);
  if (!all) {
    for (size_t i = 0; i < k; i++) fini(&v[i]);
    s->rc = 1;
    return;
  }
  memcpy(all + s->n, v, k * sizeof *v);
  s->all = all, s->n += k;
}

/* Accounting's pages, each fetched and decoded by a thread of its own: as
 * soon as page k's text is in, its thread starts page k+1's (on the other
 * of two connections, from the cursor at the text's end, "next_after") and
 * only then decodes page k, while the main thread prints page k-1: the
 * server prepares a page as this side decodes and prints the ones before.
 * A page starts only once the main thread is done with the page three
 * before it, so memory stays that of three pages. */
#define SACCT_PAGE 10000
struct pages {
  struct px_cmd *cmds[2];     /* page k goes over cmds[k % 2] */
  char base[256];             /* the query but its cursor */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  unsigned done;              /* pages the main thread is done with */
  bool stop;                  /* an error: start no more pages */
  bool inplace;               /* rows decoded in their page's text (printed at once; not --json) */
  void (*fini)(struct px_job_info *); /* a row's release, as decoded */
  struct px_job_info *spare[4]; /* inplace: printed pages' arrays, for the next pages */
  size_t spare_cap[4], nspare;
};

struct page {
  struct pages *ps;
  unsigned k;                 /* the page's number, from 0 */
  uint64_t after;             /* its cursor (the first page: none) */
  char *text;                 /* the answer, holding the rows' strings (inplace) */
  struct px_job_info *v;
  size_t n, cap;
  int rc;
  bool full;                  /* the server has more: from next_after */
  uint64_t next_after;
  struct page *next;          /* started by this page's thread, or NULL */
  pthread_t next_thread;
  bool threaded;              /* next runs in next_thread (else run it here) */
};

/* The query of every page but its cursor: the server filters what it can
 * (one job id, one user), the rest is done here. */
static void page_base(const struct sacct_args *a, char *base, size_t n) {
  int len = snprintf(base, n, "/v1/accounting?since=%lld&limit=%d", (long long)a->since, SACCT_PAGE);
  if (a->until) len += snprintf(base + len, n - (size_t)len, "&until=%lld", (long long)a->until);
  const char *id = single(a->f.jobs, true), *user = single(a->f.users, false);
  if (id) len += snprintf(base + len, n - (size_t)len, "&id=%s", id);
  if (user) snprintf(base + len, n - (size_t)len, "&user=%s", user);
}

static void *page_run(void *arg);

/* Starts page p->k + 1 from p->next_after, once the main thread is done
 * with page p->k - 2. */
static void page_start_next(struct page *p) {
  struct pages *ps = p->ps;
  pthread_mutex_lock(&ps->mu);
  while (!ps->stop && ps->done + 2 < p->k + 1) pthread_cond_wait(&ps->cv, &ps->mu);
  bool stop = ps->stop;
  pthread_mutex_unlock(&ps->mu);
  if (stop) return;
  struct page *n = calloc(1, sizeof *n);
  if (!n) {
    px_cmd_error(ps->cmds[0], "out of memory");
    p->rc = 1;
    return;
  }
  *n = (struct page){.ps = ps, .k = p->k + 1, .after = p->next_after};
  p->next = n;
  p->threaded = !pthread_create(&p->next_thread, NULL, page_run, n);
}

/* Decodes the answer's rows (in place: then p keeps the text). */
static int page_decode(struct page *p, struct px_cmd *c, const char *path, char *text, size_t len) {
  if (!p->ps->inplace) {
    int rc = px_cmd_jobs_from_text(c, path, text, len, &p->v, &p->n);
    free(text);
    return rc;
  }
  p->text = text;
  pthread_mutex_lock(&p->ps->mu);
  if (p->ps->nspare) { /* an array already touched: no page faults again */
    size_t i = --p->ps->nspare;
    p->v = p->ps->spare[i], p->cap = p->ps->spare_cap[i];
  }
  pthread_mutex_unlock(&p->ps->mu);
  int rc = px_cli_jobs_from_text_inplace(text, len, &p->v, &p->cap, &p->n);
  if (rc) px_cmd_error(c, "the server's reply to %s could not be read (%s)", path, px_strerror(rc));
  return rc ? 1 : 0;
}

/* Fetches page p, starts the next, decodes p. A server that does not say
 * next_after (an older one): the next page's cursor from the decoded rows. */
static void *page_run(void *arg) {
  struct page *p = arg;
  struct px_cmd *c = p->ps->cmds[p->k % 2];
  char path[320], *text;
  size_t len;
  if (p->after) snprintf(path, sizeof path, "%s&after=%llu", p->ps->base, (unsigned long long)p->after);
  else snprintf(path, sizeof path, "%s", p->ps->base);
  if ((p->rc = px_cmd_get_text(c, path, &text, &len))) return NULL;
  if ((p->full = px_cli_jobs_next_after(text, len, &p->next_after))) page_start_next(p);
  if (!p->rc) p->rc = page_decode(p, c, path, text, len);
  if (!p->rc && !p->full && p->n == SACCT_PAGE) {
    uint64_t last = p->v[p->n - 1].job_id;
    p->full = true;
    p->next_after = p->v[0].job_id != last ? last - 1 : last;
    page_start_next(p);
  }
  return NULL;
}

/* A full page's last job goes on in the next page when the cursor is
 * before it: its rows are left to that page, which holds them whole. */
static void page_trim(struct page *p) {
  if (!p->full || !p->n) return;
  uint64_t last = p->v[p->n - 1].job_id;
  if (p->next_after >= last) return;
  while (p->n > 0 && p->v[p->n - 1].job_id == last) p->ps->fini(&p->v[--p->n]);
}

/* The page after p, fetched and decoded (joined, or run here). */
static struct page *page_follow(struct page *p) {
  if (p->next && p->threaded) pthread_join(p->next_thread, NULL);
  else if (p->next) page_run(p->next);
  return p->next;
}

/* Page p done with: its text freed, its array kept for a page to come. */
static void page_recycle(struct pages *ps, struct page *p) {
  free(p->text);
  pthread_mutex_lock(&ps->mu);
  if (ps->inplace && p->v && ps->nspare < sizeof ps->spare / sizeof ps->spare[0]) {
    ps->spare[ps->nspare] = p->v, ps->spare_cap[ps->nspare++] = p->cap;
    p->v = NULL;
  }
  pthread_mutex_unlock(&ps->mu);
  free(p->v);
  p->v = NULL, p->n = 0, p->text = NULL;
}

/* Frees p and the pages after it, waiting for their threads. */
static void pages_drop(struct pages *ps, struct page *p) {
  pthread_mutex_lock(&ps->mu);
  ps->stop = true;
  pthread_cond_broadcast(&ps->cv);
  pthread_mutex_unlock(&ps->mu);
  while (p) {
    if (p->next && p->threaded) pthread_join(p->next_thread, NULL);
    for (size_t i = 0; i < p->n; i++) ps->fini(&p->v[i]);
    free(p->v);
    free(p->text);
    struct page *next = p->next;
    free(p);
    p = next;
  }
}

static int stream_accounting(struct px_cmd *c, struct live *l, struct sink *s) {
  struct px_cmd c2;
  px_cmd_init(&c2, c->prog, c->slurm);
  struct pages ps = {.cmds = {c, &c2}, .inplace = s->p != NULL};
  ps.fini = ps.inplace ? px_cli_job_fini_inplace : px_cli_job_fini;
  pthread_mutex_init(&ps.mu, NULL);
  pthread_cond_init(&ps.cv, NULL);
  page_base(s->a, ps.base, sizeof ps.base);
  struct page *p = calloc(1, sizeof *p);
  int rc = p ? 0 : 1;
  if (p) *p = (struct page){.ps = &ps}, page_run(p);
  while (p && !(rc = p->rc)) {
    page_trim(p);
    size_t n = page_rows(l, s->a, p->v, p->n, !ps.inplace, ps.fini);
    sink_jobs(s, p->v, n, ps.fini);
    page_recycle(&ps, p);
    pthread_mutex_lock(&ps.mu);
    ps.done = p->k + 1;
    pthread_cond_broadcast(&ps.cv);
    pthread_mutex_unlock(&ps.mu);
    struct page *next = page_follow(p);
    free(p);
    p = next;
  }
  pages_drop(&ps, p);
  while (ps.nspare) free(ps.spare[--ps.nspare]);
  pthread_cond_destroy(&ps.cv);
  pthread_mutex_destroy(&ps.mu);
  px_cmd_fini(&c2);
  return rc ? 1 : 0;
}

/* The live jobs without a row, in the server's order (moved out of l; the
 * others stay there until the end: rows may point at their strings). */
static int sink_live(struct live *l, struct sink *s) {
  struct px_job_info *v = malloc((l->n + 1) * sizeof *v);
  if (!v) return 1;
  size_t k = 0;
  for (size_t i = 0; i < l->n; i++) {
    if (l->has_row[i]) continue;
    v[k++] = l->v[i];
    memset(&l->v[i], 0, sizeof l->v[i]); /* released once, by sink_jobs */
  }
  sink_jobs(s, v, k, px_cli_job_fini);
  free(v);
  return 0;
}

/* The live jobs come first: a server that cannot be reached is said before
 * any output (then a bad -o field; a page that fails later ends the output
 * where it is, with the error). */
static int sacct_run(struct px_cmd *c, struct sacct_args *a) {
  struct sink s = {.a = a, .now = c->now};
  struct live l = {0};
  a->o.now = c->now;
  struct px_diag d;
  int rc = live_fetch(c, &l);
  if (!rc && !c->json && px_sacct_printer_new(stdout, &a->o, &s.p, &d)) {
    px_cmd_error(c, "%s", d.msg);
    rc = 1;
  }
  if (!rc) rc = stream_accounting(c, &l, &s);
  if (!rc) rc = sink_live(&l, &s);
  rc |= s.rc;
  if (!rc && c->json) px_cmd_print_jobs_json(s.all, s.n, "jobs");
  px_cli_jobs_free(s.all, s.n);
  px_sacct_printer_free(s.p);
  live_free(&l);
  return rc;
}

int px_cmd_sacct(int argc, char **argv, bool native) {
  struct px_cmd c;
  px_cmd_init(&c, native ? "phalanx jobs" : "sacct", !native);
  struct sacct_args a = {0};
  int rc = sacct_parse(argc, argv, &a, &c);
  if (!rc) rc = sacct_run(&c, &a);
  px_cmd_fini(&c);
  return rc < 0 ? 0 : rc;
}

