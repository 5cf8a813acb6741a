/* csv.c - the simulator's CSV scanner (csv.h), shared by its readers. */
#include "sim/csv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void px_csv_init(struct px_csv *r, const char *buf, size_t len, struct px_diag *d) {
  memset(r, 0, sizeof *r);
  r->buf = buf;
  r->len = len;
  r->d = d;
}

void px_csv_fini(struct px_csv *r) {
  free(r->fields);
  px_charvec_fini(&r->scratch);
  r->fields = NULL;
  r->nfields = r->cap = 0;
}

const char *px_csv_bytes(const struct px_csv *r, const struct px_csv_field *f) {
  /* An empty quoted field ("") may come before anything was ever copied to
   * scratch, whose buffer is then still NULL: NULL + 0 is undefined. */
  if (f->scratch) return r->scratch.v ? r->scratch.v + f->off : "";
  return r->buf + f->off;
}

/* The line and column of pos itself: a quoted field may hold line breaks. */
int px_csv_err(struct px_csv *r, size_t pos, int err, const char *what, const char *msg) {
  uint32_t line = r->row_line;
  size_t start = r->line_start;
  for (size_t i = r->line_start; i < pos && i < r->len; i++)
    if (r->buf[i] == '\n') line++, start = i + 1;
  px_diag_set(r->d, err, (int)pos, "line %u, column %d%s%s%s: %s", line, (int)(pos - start) + 1,
              what ? " (" : "", what ? what : "", what ? ")" : "", msg);
  if (r->d) r->d->line = (int)line;
  return err;
}

static int push_field(struct px_csv *r, struct px_csv_field f) {
  if (r->nfields == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 16;
    struct px_csv_field *v = realloc(r->fields, cap * sizeof *v);
    if (!v) return PX_ENOMEM;
    r->fields = v;
    r->cap = cap;
  }
  r->fields[r->nfields++] = f;
  return 0;
}

/* Scans a quoted field starting at the opening quote into scratch. */
static int scan_quoted(struct px_csv *r, struct px_csv_field *f) {
  f->scratch = true;
  f->off = r->scratch.len;
  r->pos++;
  for (;;) {
    if (r->pos >= r->len) return px_csv_err(r, f->pos, PX_EPARSE, NULL, "unterminated quoted field");
    char c = r->buf[r->pos++];
    if (c == '"') {
      if (r->pos < r->len && r->buf[r->pos] == '"') {
        r->pos++;
      } else {
        break;
      }
    }
    if (c == '\n') r->line++; /* a quoted newline belongs to the field */
    if (px_charvec_push(&r->scratch, c)) return PX_ENOMEM;
  }
  f->len = r->scratch.len - f->off;
  if (r->pos < r->len && r->buf[r->pos] != ',' && r->buf[r->pos] != '\n' && r->buf[r->pos] != '\r')
    return px_csv_err(r, r->pos, PX_EPARSE, NULL, "unexpected character after a closing quote");
  return 0;
}

/* Reads one row into r->fields. Returns 1 at end of input, 0 for a row, or an error. */
static int read_row(struct px_csv *r) {
  r->nfields = 0;
  r->scratch.len = 0;
  r->line_start = r->pos;
  r->row_line = r->line;
  if (r->pos >= r->len) return 1;
  for (;;) {
    struct px_csv_field f = {.off = r->pos, .pos = r->pos};
    if (r->pos < r->len && r->buf[r->pos] == '"') {
      int rc = scan_quoted(r, &f);
      if (rc) return rc;
    } else {
      while (r->pos < r->len && r->buf[r->pos] != ',' && r->buf[r->pos] != '\n') {
        if (r->buf[r->pos] == '"') return px_csv_err(r, r->pos, PX_EPARSE, NULL, "quote inside an unquoted field");
        r->pos++;
      }
      f.len = r->pos - f.off;
      if (f.len && r->buf[r->pos - 1] == '\r' && (r->pos == r->len || r->buf[r->pos] == '\n')) f.len--;
    }
    if (r->pos < r->len && r->buf[r->pos] == '\r') r->pos++; /* CRLF after a quoted field */
    if (push_field(r, f)) return PX_ENOMEM;
    if (r->pos >= r->len) return 0;
    if (r->buf[r->pos++] == '\n') return 0;
  }
}

static bool row_blank(const struct px_csv *r) {
  return r->nfields == 1 && r->fields[0].len == 0 && !r->fields[0].scratch;
}

int px_csv_next_row(struct px_csv *r) {
  int rc;
  do {
    r->line++;
    rc = read_row(r);
  } while (rc == 0 && row_blank(r));
  return rc;
}

int px_csv_map_header(struct px_csv *r, const char *const *names, int n, int *slot, int required,
                      const char *required_msg) {
  for (int c = 0; c < n; c++) slot[c] = -1;
  /* A UTF-8 byte-order mark is not part of the first column's name. */
  if (r->nfields && r->fields[0].len >= 3 && memcmp(px_csv_bytes(r, &r->fields[0]), "\xEF\xBB\xBF", 3) == 0) {
    r->fields[0].off += 3;
    r->fields[0].len -= 3;
  }
  for (size_t i = 0; i < r->nfields; i++) {
    const char *p = px_csv_bytes(r, &r->fields[i]);
    size_t len = r->fields[i].len;
    for (int c = 0; c < n; c++) {
      if (strlen(names[c]) != len || memcmp(p, names[c], len) != 0) continue;
      if (slot[c] >= 0) return px_csv_err(r, r->fields[i].pos, PX_EPARSE, names[c], "duplicate column");
      slot[c] = (int)i;
    }
  }
  for (int c = 0; c < required; c++)
    if (slot[c] < 0) return px_csv_err(r, r->line_start, PX_EPARSE, names[c], required_msg);
  return 0;
}

int px_csv_parse(struct px_csv *r, const char *buf, size_t len, struct px_diag *d, const struct px_csv_header *h,
                 int *slot, px_csv_row_fn row, void *ctx) {
  char empty[64];
  px_csv_init(r, buf, len, d);
  px_diag_clear(d);
  snprintf(empty, sizeof empty, "empty %s: no header line", h->what);
  int rc = px_csv_next_row(r);
  if (rc == 1) rc = px_csv_err(r, r->line_start, PX_EPARSE, NULL, empty);
  if (!rc) rc = px_csv_map_header(r, h->names, h->n, slot, h->required, h->required_msg);
  while (!rc && (rc = px_csv_next_row(r)) == 0) rc = row(ctx);
  px_csv_fini(r);
  return rc == 1 ? 0 : rc;
}

/* Limit: 2^53 / 1000. */
int px_csv_milli(struct px_csv *r, const struct px_csv_field *f, const char *what, uint64_t *out, bool *empty) {
  const char *p = px_csv_bytes(r, f), *e = p + f->len;
  while (p < e && *p == ' ') p++;
  while (e > p && e[-1] == ' ') e--;
  *empty = p == e;
  if (*empty) return 0;
  uint64_t v = 0, frac = 0;
  int fdig = 0;
  bool digits = false, dot = false;
  for (const char *q = p; q < e; q++) {
    if (*q == '.' && !dot) {
      dot = true;
    } else if (*q >= '0' && *q <= '9') {
      digits = true;
      if (!dot) {
        if (v > 9007199254740ULL) return px_csv_err(r, f->pos, PX_ERANGE, what, "number too large");
        v = v * 10 + (uint64_t)(*q - '0');
      } else if (fdig < 3) {
        frac = frac * 10 + (uint64_t)(*q - '0');
        fdig++;
      } else if (*q != '0' && fdig == 3) {
        frac++; /* any further non-zero digit: round the thousandths up */
        fdig = 4;
      }
    } else {
      return px_csv_err(r, f->pos, PX_EPARSE, what, *q == '-' ? "negative number" : "not a non-negative number");
    }
  }
  if (!digits) return px_csv_err(r, f->pos, PX_EPARSE, what, "not a non-negative number");
  for (int i = fdig < 3 ? fdig : 3; i < 3; i++) frac *= 10;
  *out = v * 1000 + frac;
  return 0;
}

static int read_file(const char *path, struct px_charvec *text, struct px_diag *d) {
  memset(text, 0, sizeof *text);
  FILE *f = fopen(path, "rb");
  if (!f) return px_diag_set(d, PX_EIO, -1, "%s: %s", path, strerror(errno));
  char chunk[65536];
  size_t n;
  int rc = 0;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (px_charvec_reserve(text, text->len + n)) {
      rc = PX_ENOMEM;
      break;
    }
    memcpy(text->v + text->len, chunk, n);
    text->len += n;
  }
  if (!rc && ferror(f)) rc = px_diag_set(d, PX_EIO, -1, "%s: read error", path);
  fclose(f);
  if (rc) px_charvec_fini(text);
  return rc;
}

static void name_file(struct px_diag *d, const char *path) {
  if (!d) return;
  char msg[sizeof d->msg + 1024];
  int w = snprintf(msg, sizeof msg, "%s: %s", path, d->msg);
  size_t keep = w < 0 ? 0 : (size_t)w < sizeof d->msg ? (size_t)w : sizeof d->msg - 1;
  memcpy(d->msg, msg, keep);
  d->msg[keep] = '\0';
}

int px_csv_load(const char *path, px_csv_text_fn parse, void *out, struct px_diag *d) {
  struct px_charvec text;
  int rc = read_file(path, &text, d);
  if (rc) return rc;
  rc = parse(out, text.v ? text.v : "", text.len, d);
  if (rc) name_file(d, path);
  px_charvec_fini(&text);
  return rc;
}
