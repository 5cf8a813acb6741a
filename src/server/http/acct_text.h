/*
 * acct_text.h - GET /v1/accounting's answer written as text, row by row
 * (acct_text.c: why not a jansson tree).
 */
#ifndef PX_SERVER_HTTP_ACCT_TEXT_H
#define PX_SERVER_HTTP_ACCT_TEXT_H

#include <stddef.h>

#include "proto/jfield.h"
#include "store/store.h"

struct px_acct_text {
  struct px_jbuf b;             /* b.err: PX_ENOMEM once a write failed */
  size_t rows;
};

/* {"jobs":[ ... ]}: begin, one call per row, then end: the text (malloc'd;
 * NULL when out of memory). */
void px_acct_text_begin(struct px_acct_text *t);
void px_acct_text_row(struct px_acct_text *t, const struct px_acct_row *r);
char *px_acct_text_end(struct px_acct_text *t);

#endif
