/*
 * trace.c - the CSV trace reader (trace.h).
 *
 * One pass over the text: the RFC 4180 field scanner of csv.h (quotes, "" escapes,
 * LF or CRLF), the header mapped to column slots by name, then one job per
 * row. Numbers are parsed by hand from the field's bytes (they are not
 * NUL-terminated, and strtod would accept "inf", hex and locale forms a trace
 * must not contain). Every error names line, column and byte offset.
 */
#include "sim/trace.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum col {
  C_ID, C_SUBMIT, C_DURATION, C_GPUS, C_NODES, C_USER, C_QUEUE, C_STATUS, C_LIMIT,
  C_ELIGIBLE, C_START, C_END, C_QOS, C_PARTITION, C_ARRAY, C_SUBMIT_SEQ, C_START_SEQ, C_END_SEQ, C_TIME0, C_DEPENDENCY, C_NAME, C_ATTEMPT,
  C_NCOLS
};
static const char *const col_names[C_NCOLS] = {
    "job_id",       "submit_s",   "duration_s", "gpus",    "nodes", "user",      "queue",       "status",
    "time_limit_s", "eligible_s", "start_s",    "end_s",   "qos",   "partition", "array_job_id",
    "submit_seq",   "start_seq",  "end_seq",    "time0_unix_s", "dependency", "name",
    "attempt"};
#define C_REQUIRED C_LIMIT /* columns before this one must be in the header */

struct reader {
  struct px_csv csv;
  struct px_trace *t;    /* the trace being read */
  int slot[C_NCOLS];     /* column index of each known column, or -1 */
  struct px_smap seen;   /* with an attempt column: the job ids read so far (their rows come together) */
};

void px_trace_fini(struct px_trace *t) {
  px_trace_jobvec_fini(&t->jobs);
  px_trace_attemptvec_fini(&t->attempts);
  px_charvec_fini(&t->ids);
  px_strvec_free_all(&t->names);
  px_smap_fini(&t->name_index);
  memset(t, 0, sizeof *t);
}

const char *px_trace_name(const struct px_trace *t, uint32_t i) {
  return i == PX_TRACE_NONE || i >= t->names.len ? "" : t->names.v[i];
}

static const char *fbytes(const struct reader *r, const struct px_csv_field *f) { return px_csv_bytes(&r->csv, f); }

static int perr(struct reader *r, size_t pos, int err, const char *what, const char *msg) {
  return px_csv_err(&r->csv, pos, err, what, msg);
}

static int parse_milli(struct reader *r, const struct px_csv_field *f, int c, uint64_t *out, bool *empty) {
  return px_csv_milli(&r->csv, f, col_names[c], out, empty);
}

static int intern(struct px_trace *t, struct reader *r, const struct px_csv_field *f, uint32_t *out) {
  *out = PX_TRACE_NONE;
  if (f->len == 0) return 0;
  char small[128];
  char *key = f->len < sizeof small ? small : malloc(f->len + 1);
  if (!key) return PX_ENOMEM;
  memcpy(key, fbytes(r, f), f->len);
  key[f->len] = '\0';
  int rc = 0;
  uint64_t idx;
  if (px_smap_get(&t->name_index, key, &idx)) {
    *out = (uint32_t)idx;
  } else {
    char *copy = strdup(key);
    if (!copy || px_strvec_push(&t->names, copy)) {
      free(copy);
      rc = PX_ENOMEM;
    } else if (px_smap_put(&t->name_index, key, t->names.len - 1)) {
      rc = PX_ENOMEM; /* the name stays in names and is freed with the trace */
    } else {
      *out = (uint32_t)(t->names.len - 1);
    }
  }
  if (key != small) free(key);
  return rc;
}

static const struct px_csv_field empty_field;

static const struct px_csv_field *col(const struct reader *r, int c) {
  int s = r->slot[c];
  return s >= 0 && (size_t)s < r->csv.nfields ? &r->csv.fields[s] : &empty_field;
}

/* Seconds from thousandths, rounded to nearest. */
static int64_t secs(uint64_t milli) { return (int64_t)((milli + 500) / 1000); }

static int parse_numbers(struct reader *r, struct px_trace_job *j) {
  static const int required[] = {C_SUBMIT, C_DURATION, C_GPUS};
  uint64_t v[C_NCOLS] = {0};
  bool empty;
  for (size_t i = 0; i < 3; i++) {
    int c = required[i];
    int rc = parse_milli(r, col(r, c), c, &v[c], &empty);
    if (rc) return rc;
    if (empty) return perr(r, col(r, c)->pos, PX_EPARSE, col_names[c], "empty, but a number is required");
  }
  int rc = parse_milli(r, col(r, C_NODES), C_NODES, &v[C_NODES], &empty);
  if (!rc) rc = parse_milli(r, col(r, C_LIMIT), C_LIMIT, &v[C_LIMIT], &empty);
  if (rc) return rc;
  if (v[C_NODES] % 1000) return perr(r, col(r, C_NODES)->pos, PX_EPARSE, "nodes", "fractional node count");
  uint64_t gpus = (v[C_GPUS] + 999) / 1000;
  if (gpus > UINT32_MAX / 2 || v[C_NODES] / 1000 > UINT32_MAX / 2)
    return perr(r, col(r, v[C_NODES] / 1000 > UINT32_MAX / 2 ? C_NODES : C_GPUS)->pos, PX_ERANGE,
                v[C_NODES] / 1000 > UINT32_MAX / 2 ? "nodes" : "gpus", "count too large");
  j->submit_s = secs(v[C_SUBMIT]);
  j->duration_s = secs(v[C_DURATION]);
  j->time_limit_s = secs(v[C_LIMIT]);
  j->gpus = (uint32_t)gpus;
  j->nodes = (uint32_t)(v[C_NODES] / 1000);
  if (v[C_GPUS] % 1000) j->flags |= PX_TRACE_FRACTIONAL;
  if (v[C_GPUS] == 0) j->flags |= PX_TRACE_CPU_ONLY;
  return 0;
}

/* An optional time column: seconds, or -1 when empty. */
static int parse_opt_secs(struct reader *r, int c, int64_t *out) {
  uint64_t v = 0;
  bool empty;
  int rc = parse_milli(r, col(r, c), c, &v, &empty);
  *out = empty ? -1 : secs(v);
  return rc;
}

/*
 * The recorded run of an exported accounting row (eligible_s, start_s,
 * end_s): optional, but consistent when given, so that a replay's
 * "recorded" column is what really happened.
 */
static int parse_recorded(struct reader *r, struct px_trace_job *j) {
  int rc = parse_opt_secs(r, C_ELIGIBLE, &j->eligible_s);
  if (!rc) rc = parse_opt_secs(r, C_START, &j->start_s);
  if (!rc) rc = parse_opt_secs(r, C_END, &j->end_s);
  if (!rc) rc = parse_opt_secs(r, C_ARRAY, &j->array_job_id);
  if (rc) return rc;
  if ((j->start_s < 0) != (j->end_s < 0))
    return perr(r, col(r, j->start_s < 0 ? C_START : C_END)->pos, PX_EPARSE, j->start_s < 0 ? "start_s" : "end_s",
                "empty, but start_s and end_s come together");
  if (j->eligible_s >= 0 && j->eligible_s < j->submit_s)
    return perr(r, col(r, C_ELIGIBLE)->pos, PX_EPARSE, "eligible_s", "before submit_s");
  if (j->start_s < 0) return 0;
  if (j->start_s < j->submit_s) return perr(r, col(r, C_START)->pos, PX_EPARSE, "start_s", "before submit_s");
  if (j->end_s < j->start_s) return perr(r, col(r, C_END)->pos, PX_EPARSE, "end_s", "before start_s");
  if (j->end_s - j->start_s != j->duration_s)
    return perr(r, col(r, C_DURATION)->pos, PX_EPARSE, "duration_s", "differs from end_s - start_s");
  return 0;
}

/* An optional whole number (a journal seq), 0 when empty. */
static int parse_opt_count(struct reader *r, int c, uint64_t *out) {
  uint64_t v = 0;
  bool empty;
  int rc = parse_milli(r, col(r, c), c, &v, &empty);
  if (!rc && v % 1000) rc = perr(r, col(r, c)->pos, PX_EPARSE, col_names[c], "not a whole number");
  *out = rc ? 0 : v / 1000;
  return rc;
}

/*
 * The server's order of the job's submit, start and end (journal seqs of
 * an exported accounting row): optional; those given come in that order,
 * as they did on the server.
 */
static int parse_seqs(struct reader *r, struct px_trace_job *j) {
  int rc = parse_opt_count(r, C_SUBMIT_SEQ, &j->submit_seq);
  if (!rc) rc = parse_opt_count(r, C_START_SEQ, &j->start_seq);
  if (!rc) rc = parse_opt_count(r, C_END_SEQ, &j->end_seq);
  if (rc) return rc;
  if (j->submit_seq && j->start_seq && j->start_seq <= j->submit_seq)
    return perr(r, col(r, C_START_SEQ)->pos, PX_EPARSE, "start_seq", "not after submit_seq");
  uint64_t before = j->start_seq ? j->start_seq : j->submit_seq;
  if (before && j->end_seq && j->end_seq <= before)
    return perr(r, col(r, C_END_SEQ)->pos, PX_EPARSE, "end_seq",
                j->start_seq ? "not after start_seq" : "not after submit_seq");
  return 0;
}

/* The Unix time of second 0: optional, the same in every row giving it. */
static int parse_time0(struct px_trace *t, struct reader *r) {
  uint64_t v;
  int rc = parse_opt_count(r, C_TIME0, &v);
  if (rc || !v) return rc;
  if (t->time0_unix_s && (uint64_t)t->time0_unix_s != v)
    return perr(r, col(r, C_TIME0)->pos, PX_EPARSE, "time0_unix_s", "differs from an earlier row's");
  t->time0_unix_s = (int64_t)v;
  return 0;
}

/* One dependency term's kind ("afterok" ...) at s: its length, 0 when none. */
static size_t dep_kind(const char *s, size_t n) {
  static const char *const kinds[] = {"afternotok", "afterany", "afterok", "after"};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    size_t len = strlen(kinds[k]);
    if (n > len && !memcmp(s, kinds[k], len) && s[len] == ':') return len;
  }
  return 0;
}

/*
 * Why the dependency s (n bytes) is malformed (*at: where), NULL when it is
 * well formed: terms "singleton" or KIND:ID[:ID...] (ids whole numbers from
 * 1) joined by ',' (all) or '?' (any), never both - what the scheduler takes.
 */
static const char *dep_error(const char *s, size_t n, size_t *at) {
  size_t i = 0;
  char sep = 0;
  for (;;) {
    size_t len = n - i >= 9 && !memcmp(s + i, "singleton", 9) ? 9 : dep_kind(s + i, n - i);
    *at = i;
    if (!len) return "expected singleton or after/afterok/afternotok/afterany:ID";
    i += len;
    while (len != 9 && i < n && s[i] == ':') {
      size_t d = ++i;
      while (i < n && s[i] >= '0' && s[i] <= '9') i++;
      *at = d;
      if (i == d || s[d] == '0') return "expected a job id (a whole number from 1)";
    }
    if (i == n) return NULL;
    *at = i;
    if (s[i] != ',' && s[i] != '?') return "unexpected character";
    if (sep && s[i] != sep) return "mixes ',' and '?'";
    sep = s[i++];
  }
}

/* The job's dependency as the user wrote it (optional), interned. */
static int parse_dependency(struct px_trace *t, struct reader *r, struct px_trace_job *j) {
  const struct px_csv_field *f = col(r, C_DEPENDENCY);
  size_t at = 0;
  const char *why = f->len ? dep_error(fbytes(r, f), f->len, &at) : NULL;
  if (why) {
    char msg[96];
    snprintf(msg, sizeof msg, "%s at offset %zu", why, at);
    return perr(r, f->pos + (f->scratch ? 0 : at), PX_EPARSE, "dependency", msg);
  }
  return intern(t, r, f, &j->dependency);
}

/*
 * The job's name (optional), interned: what the server accepts in a job's
 * name (at most PX_TRACE_NAME_MAX bytes, no control character), since the
 * replay submits the job under it.
 */
static int parse_name(struct px_trace *t, struct reader *r, struct px_trace_job *j) {
  const struct px_csv_field *f = col(r, C_NAME);
  char msg[64];
  if (f->len > PX_TRACE_NAME_MAX) {
    snprintf(msg, sizeof msg, "longer than %d bytes", PX_TRACE_NAME_MAX);
    return perr(r, f->pos, PX_ERANGE, "name", msg);
  }
  const unsigned char *p = (const unsigned char *)fbytes(r, f);
  for (size_t i = 0; i < f->len; i++) {
    if (p[i] >= 0x20 && p[i] != 0x7f) continue;
    snprintf(msg, sizeof msg, "a control character at offset %zu", i);
    return perr(r, f->pos + (f->scratch ? 0 : i), PX_EPARSE, "name", msg);
  }
  return intern(t, r, f, &j->name);
}

/* The trace's counts of jobs with each optional part: d = 1 adds j, -1
 * takes it back (a row that turned out to be an earlier attempt). */
static void tally(struct px_trace *t, const struct px_trace_job *j, int d) {
  t->nrecorded += (uint32_t)(d * (j->start_s >= 0));
  t->nseq += (uint32_t)(d * (j->submit_seq || j->start_seq || j->end_seq));
  t->nfractional += (uint32_t)(d * !!(j->flags & PX_TRACE_FRACTIONAL));
  t->ncpu_only += (uint32_t)(d * !!(j->flags & PX_TRACE_CPU_ONLY));
  t->ndependent += (uint32_t)(d * (j->dependency != PX_TRACE_NONE));
  t->nnamed += (uint32_t)(d * (j->name != PX_TRACE_NONE));
}

/* The attempt column: a whole number (0 when empty). */
static int parse_attempt(struct reader *r, struct px_trace_job *j) {
  uint64_t v;
  int rc = parse_opt_count(r, C_ATTEMPT, &v);
  if (!rc && v >= UINT32_MAX) rc = perr(r, col(r, C_ATTEMPT)->pos, PX_ERANGE, "attempt", "number too large");
  j->attempt = (uint32_t)v;
  return rc;
}

/* Whether the row's job id is the one of job p. */
static bool same_id(const struct px_trace *t, const struct reader *r, const struct px_trace_job *p) {
  const struct px_csv_field *id = col(r, C_ID);
  const char *pid = px_trace_id(t, p);
  return strlen(pid) == id->len && memcmp(pid, fbytes(r, id), id->len) == 0;
}

/* Why row j cannot follow p as the same job's next attempt (*c: the column
 * to name), NULL when it can. */
static const char *attempt_error(const struct px_trace_job *p, const struct px_trace_job *j, int *c, char *msg,
                                 size_t n) {
  *c = C_ATTEMPT;
  if (j->attempt == p->attempt) snprintf(msg, n, "duplicate attempt %u (line %u has it)", j->attempt, p->line);
  else if (j->attempt < p->attempt)
    snprintf(msg, n, "attempt %u after attempt %u (line %u): a job's attempts come in order", j->attempt, p->attempt,
             p->line);
  else if (p->start_s < 0) snprintf(msg, n, "follows attempt %u (line %u), which has no recorded run", p->attempt, p->line);
  else if (j->start_s < 0) *c = C_START, snprintf(msg, n, "empty, but attempt %u follows a recorded one", j->attempt);
  else if (j->start_s < p->end_s)
    *c = C_START, snprintf(msg, n, "before the end of attempt %u (line %u, end_s %lld)", p->attempt, p->line,
                           (long long)p->end_s);
  else if (j->gpus != p->gpus)
    *c = C_GPUS, snprintf(msg, n, "differs from attempt %u's (line %u): a job's attempts hold the same GPUs",
                          p->attempt, p->line);
  else return NULL;
  return msg;
}

/*
 * Row j is the next attempt of the job before it (same id): that job's row
 * becomes an earlier attempt, j the job, submitted when its first attempt
 * was. 0, PX_EPARSE (the row is out of order) or PX_ENOMEM.
 */
static int fold_attempt(struct px_trace *t, struct reader *r, struct px_trace_job *j) {
  struct px_trace_job *p = &t->jobs.v[t->jobs.len - 1];
  char msg[160];
  int c;
  if (attempt_error(p, j, &c, msg, sizeof msg)) return perr(r, col(r, c)->pos, PX_EPARSE, col_names[c], msg);
  struct px_trace_attempt a = {.start_s = p->start_s, .end_s = p->end_s, .start_seq = p->start_seq,
                               .end_seq = p->end_seq, .attempt = p->attempt, .status = p->status, .line = p->line,
                               .job = (uint32_t)t->jobs.len - 1};
  if (px_trace_attemptvec_push(&t->attempts, a)) return PX_ENOMEM;
  j->earlier = p->nearlier ? p->earlier : (uint32_t)t->attempts.len - 1;
  j->nearlier = p->nearlier + 1;
  j->submit_s = p->submit_s, j->eligible_s = p->eligible_s;
  if (p->submit_seq) j->submit_seq = p->submit_seq; /* (an earlier row written without the seqs: the job's own) */
  j->id_off = p->id_off;
  t->nrequeued += !p->nearlier;
  tally(t, p, -1);
  tally(t, j, 1);
  *p = *j;
  return 0;
}

/* With an attempt column, a job's rows come together: an id seen before
 * that is not the last row's is refused. 1: j is the last job's next
 * attempt; 0: a new job; or an error. */
static int attempt_of_last(struct px_trace *t, struct reader *r, const struct px_trace_job *j) {
  const struct px_csv_field *id = col(r, C_ID);
  if (r->slot[C_ATTEMPT] < 0 || !id->len) return 0; /* rows without an id are jobs of their own */
  if (t->jobs.len && same_id(t, r, &t->jobs.v[t->jobs.len - 1])) return 1;
  char *key = strndup(fbytes(r, id), id->len);
  if (!key) return PX_ENOMEM;
  uint64_t line;
  int rc = 0;
  if (px_smap_get(&r->seen, key, &line)) {
    char msg[128];
    snprintf(msg, sizeof msg, "job %.40s's rows are not together (line %u has one; its attempts come in order)",
             key, (unsigned)line);
    rc = perr(r, id->pos, PX_EPARSE, "job_id", msg);
  } else if (px_smap_put(&r->seen, key, j->line)) {
    rc = PX_ENOMEM;
  }
  free(key);
  return rc;
}

static int parse_job(struct px_trace *t, struct reader *r) {
  struct px_trace_job j = {.line = r->csv.row_line};
  int rc = parse_numbers(r, &j);
  if (!rc) rc = parse_recorded(r, &j);
  if (!rc) rc = parse_seqs(r, &j);
  if (!rc) rc = parse_time0(t, r);
  if (!rc) rc = parse_dependency(t, r, &j);
  if (!rc) rc = parse_name(t, r, &j);
  if (!rc) rc = parse_attempt(r, &j);
  if (rc) return rc;
  if ((rc = intern(t, r, col(r, C_USER), &j.user)) || (rc = intern(t, r, col(r, C_QUEUE), &j.queue)) ||
      (rc = intern(t, r, col(r, C_STATUS), &j.status)) || (rc = intern(t, r, col(r, C_QOS), &j.qos)) ||
      (rc = intern(t, r, col(r, C_PARTITION), &j.partition)))
    return rc;
  rc = attempt_of_last(t, r, &j);
  if (rc) return rc > 0 ? fold_attempt(t, r, &j) : rc;
  const struct px_csv_field *id = col(r, C_ID);
  if (t->ids.len + id->len + 1 > UINT32_MAX) return perr(r, id->pos, PX_ERANGE, "job_id", "trace too large (4 GiB of job ids)");
  j.id_off = (uint32_t)t->ids.len;
  if (px_charvec_reserve(&t->ids, t->ids.len + id->len + 1)) return PX_ENOMEM;
  memcpy(t->ids.v + t->ids.len, fbytes(r, id), id->len);
  t->ids.len += id->len;
  t->ids.v[t->ids.len++] = '\0';
  if (px_trace_jobvec_push(&t->jobs, j)) return PX_ENOMEM;
  tally(t, &j, 1);
  return 0;
}

static int job_row(void *ctx) {
  struct reader *r = ctx;
  return parse_job(r->t, r);
}

static const struct px_csv_header header = {
    "trace", col_names, C_NCOLS, C_REQUIRED,
    "the header lacks this column (job_id,submit_s,duration_s,gpus,nodes,user,queue,status are required)"};

int px_trace_parse(struct px_trace *t, const char *buf, size_t len, struct px_diag *d) {
  struct reader r = {.t = t};
  memset(t, 0, sizeof *t);
  int rc = px_csv_parse(&r.csv, buf, len, d, &header, r.slot, job_row, &r);
  px_smap_fini(&r.seen);
  if (rc) px_trace_fini(t);
  return rc;
}

static int parse_text(void *t, const char *buf, size_t len, struct px_diag *d) {
  return px_trace_parse(t, buf, len, d);
}

int px_trace_load(struct px_trace *t, const char *path, struct px_diag *d) {
  memset(t, 0, sizeof *t);
  return px_csv_load(path, parse_text, t, d);
}
