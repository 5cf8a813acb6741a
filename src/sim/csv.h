/*
 * csv.h - the RFC 4180 scanner the simulator's readers share (trace.c: the
 * jobs of a trace; node_events.c: the nodes' down and drain periods of an
 * export): quoted fields with "" escapes and line breaks, LF or CRLF, a
 * header mapped to column slots by name, non-negative decimals parsed by
 * hand from the field's bytes (fields are not NUL-terminated, and strtod
 * would take "inf", hex and locale forms). Every error names the line, the
 * column (field number and name) and the byte offset.
 */
#ifndef PX_SIM_CSV_H
#define PX_SIM_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/vec.h"

PX_VEC_DECLARE(px_charvec, char)

/* One field of the current row: bytes in the input, or (quoted) in scratch. */
struct px_csv_field {
  size_t off, len; /* offset in the input or in scratch */
  size_t pos;      /* byte offset of the field's start in the input */
  bool scratch;
};

struct px_csv {
  const char *buf;
  size_t len, pos;
  uint32_t line;         /* line the reader is at (quoted line breaks count) */
  uint32_t row_line;     /* line where the row being read starts */
  size_t line_start;     /* byte offset where that row starts */
  struct px_charvec scratch;
  struct px_csv_field *fields; /* the current row */
  size_t nfields, cap;
  struct px_diag *d;
};

/* A reader of buf (len bytes); errors go to d (may be NULL). */
void px_csv_init(struct px_csv *r, const char *buf, size_t len, struct px_diag *d);
void px_csv_fini(struct px_csv *r);
/* The next row that is not blank into r->fields: 0, 1 at the end of the
 * input, or an error. */
int px_csv_next_row(struct px_csv *r);
const char *px_csv_bytes(const struct px_csv *r, const struct px_csv_field *f);
/* "line 7, column 12 (gpus): not a non-negative number" at byte pos (what
 * may be NULL); returns err. */
int px_csv_err(struct px_csv *r, size_t pos, int err, const char *what, const char *msg);
/* Maps the header row to slot[c] (field index or -1) for names[0..n);
 * names[0..required) must be there (required_msg says which). */
int px_csv_map_header(struct px_csv *r, const char *const *names, int n, int *slot, int required,
                      const char *required_msg);
/* A whole text (buf, len; errors to d, cleared first) through r: the
 * header (px_csv_map_header; an empty text is refused, naming `what`),
 * then row(ctx) for each row that is not blank. 0 or the first error; the
 * reader is finished (px_csv_fini) either way. */
typedef int (*px_csv_row_fn)(void *ctx);
struct px_csv_header {
  const char *what;             /* "trace", "file" */
  const char *const *names;     /* the columns */
  int n, required;              /* how many; names[0..required) must be there */
  const char *required_msg;     /* which are, for the error */
};
int px_csv_parse(struct px_csv *r, const char *buf, size_t len, struct px_diag *d, const struct px_csv_header *h,
                 int *slot, px_csv_row_fn row, void *ctx);
/* A non-negative decimal "123" or "12.345" (spaces around allowed) into
 * thousandths (*empty: the field is); what names the column. */
int px_csv_milli(struct px_csv *r, const struct px_csv_field *f, const char *what, uint64_t *out, bool *empty);
/* Reads the file and parses it whole with parse(out, text, len, d); a
 * parse error's message is prefixed with the path, PX_EIO names the file. */
typedef int (*px_csv_text_fn)(void *out, const char *buf, size_t len, struct px_diag *d);
int px_csv_load(const char *path, px_csv_text_fn parse, void *out, struct px_diag *d);

#endif
