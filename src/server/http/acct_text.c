/*
 * acct_text.c - accounting rows written straight to JSON text for GET
 * /v1/accounting: the same keys and omissions as a job view
 * (px_job_info_to_json: zero and empty members left out), the spec's
 * accounting members, and the row's "steps" as the server stored them.
 *
 * Why not jansson here: `sacct` over 100,000 finished jobs spent most of
 * the server's 3 s in malloc and free, building a tree of ~40 nodes per row
 * only to print it once (cli_sacct_100k_ms). A row is a fixed shape of
 * numbers and a few strings, so it is written once into one growing buffer.
 */
#include "server/http/acct_text.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/jfield.h"

static void raw(struct px_acct_text *t, const char *s, size_t n) { px_jbuf_add(&t->b, s, n); }

static void fmt(struct px_acct_text *t, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void fmt(struct px_acct_text *t, const char *f, ...) {
  char b[64];
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(b, sizeof b, f, ap);
  va_end(ap);
  if (n > 0) raw(t, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

/* An integer in decimal (the rows are mostly integers: vsnprintf was a
 * fifth of the answer's time). */
static void unum(struct px_acct_text *t, uint64_t v) {
  char b[24];
  size_t k = sizeof b;
  do b[--k] = (char)('0' + v % 10); while (v /= 10);
  raw(t, b + k, sizeof b - k);
}
static void num(struct px_acct_text *t, int64_t v) {
  if (v < 0) raw(t, "-", 1);
  unum(t, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

/* The store's bytes came from validated UTF-8 input (proto/jfield.c escapes). */
static void str(struct px_acct_text *t, const char *s) { px_jbuf_str(&t->b, s, strlen(s)); }

/* ,"key": then the value (no comma for an object's first member); zero and
 * empty values are left out. */
static void key(struct px_acct_text *t, const char *k) {
  if (t->first) raw(t, "\"", 1), t->first = false;
  else raw(t, ",\"", 2);
  raw(t, k, strlen(k));
  raw(t, "\":", 2);
}
static void int_m(struct px_acct_text *t, const char *k, int64_t v) {
  if (!v) return;
  key(t, k);
  num(t, v);
}
static void str_m(struct px_acct_text *t, const char *k, const char *v) {
  if (!v || !*v) return;
  key(t, k);
  str(t, v);
}

void px_acct_text_begin(struct px_acct_text *t) {
  memset(t, 0, sizeof *t);
  raw(t, "{\"jobs\":[", 9);
}

void px_acct_text_row(struct px_acct_text *t, const struct px_acct_row *r) {
  if (!t->rows) t->first_job_id = r->job_id;
  t->last_job_id = r->job_id;
  if (t->rows++) raw(t, ",", 1);
  raw(t, "{", 1);
  raw(t, "\"job_id\":", 9);
  unum(t, r->job_id);
  int_m(t, "array_job_id", (int64_t)r->array_job_id);
  key(t, "array_task_id"); /* always: absent means task 0 of an array */
  unum(t, r->array_job_id ? r->array_task_id : UINT32_MAX);
  str_m(t, "state", r->state);
  raw(t, ",\"reason\":\"None\"", 16);
  int_m(t, "submit_time", r->submit_time);
  int_m(t, "eligible_time", r->eligible_time);
  int_m(t, "start_time", r->start_time);
  int_m(t, "end_time", r->end_time);
  str_m(t, "nodelist", r->nodelist);
  int_m(t, "nnodes", r->nnodes);
  int_m(t, "ncpus", r->ncpus);
  int_m(t, "ngpus", r->ngpus);
  int_m(t, "mem_mib", (int64_t)r->mem_mib);
  int_m(t, "exit_code", r->exit_code);
  int_m(t, "term_signal", r->term_signal);
  int_m(t, "restarts", r->attempt);
  int_m(t, "submit_seq", (int64_t)r->submit_seq); /* the server's order of its submit, start, end */
  int_m(t, "start_seq", (int64_t)r->start_seq);
  int_m(t, "end_seq", (int64_t)r->end_seq);
  if (r->billable_tres_s != 0) key(t, "billable_tres_s"), fmt(t, "%.17g", r->billable_tres_s);
  /* the spec's members in a job view's order (the jobspec table's) */
  raw(t, ",\"spec\":{", 9);
  t->first = true;
  str_m(t, "name", r->name);
  str_m(t, "user", r->user);
  int_m(t, "uid", r->uid);
  str_m(t, "account", r->account);
  str_m(t, "partition", r->partition);
  str_m(t, "qos", r->qos);
  int_m(t, "gpu_share", r->gpu_share); /* hundredths of one GPU (a fractional job) */
  int_m(t, "time_limit_s", r->time_limit_s);
  str_m(t, "dependency", r->dependency); /* as the user wrote it (phalanx export) */
  key(t, "requeue");                   /* as a job view's spec: requeue is the default */
  raw(t, "true}", 5);
  if (r->steps && r->steps[0] == '[') key(t, "steps"), raw(t, r->steps, strlen(r->steps));
  raw(t, "}", 1);
}

/* The next page starts before the last job, which may have more attempts
 * than this page holds: that page repeats its rows whole. A page of one job
 * only goes on after it (its remaining attempts, past any limit, are left). */
char *px_acct_text_end(struct px_acct_text *t, bool full) {
  raw(t, "]", 1);
  if (full && t->rows) {
    raw(t, ",\"next_after\":", 14);
    unum(t, t->first_job_id != t->last_job_id ? t->last_job_id - 1 : t->last_job_id);
  }
  raw(t, "}", 1);
  if (t->b.err) {
    free(t->b.p);
    t->b.p = NULL;
  }
  return t->b.p;
}
