/*
 * acct_text.h - GET /v1/accounting's answer written as text, row by row
 * (acct_text.c: why not a jansson tree).
 */
#ifndef PX_SERVER_HTTP_ACCT_TEXT_H
#define PX_SERVER_HTTP_ACCT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/jfield.h"
#include "store/store.h"

struct px_acct_text {
  struct px_jbuf b;             /* b.err: PX_ENOMEM once a write failed */
  size_t rows;
  uint64_t first_job_id, last_job_id;
  bool first;                   /* the next member is its object's first */
};

/* {"jobs":[ ... ]}: begin, one call per row, then end: the text (malloc'd;
 * NULL when out of memory). full: the page holds its limit of rows; the
 * text then ends with "next_after" (the next page's cursor, written last so
 * that a client can ask for that page before it decodes this one). */
void px_acct_text_begin(struct px_acct_text *t);
void px_acct_text_row(struct px_acct_text *t, const struct px_acct_row *r);
char *px_acct_text_end(struct px_acct_text *t, bool full);

#endif
