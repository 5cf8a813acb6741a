/*
 * jfield.h - table-driven JSON codecs for flat C structs (internal to proto/).
 *
 * Each wire type is described once by an array of struct px_jfield (JSON
 * name, C type, offset, allowed range, maximum string length). One encoder
 * and one strict decoder walk the table, so every type gets the same rules:
 * unknown keys, wrong types, out-of-range numbers, strings that are too long
 * or hold NUL/control characters are refused, and the diagnostic names the
 * field as a JSON path ("spec.gpus: must be <= 1000000"). The part before
 * the first ": " of a diagnostic is always the field path; the server copies
 * it into the "field" of its error answer.
 *
 * Strings are heap copies (free()); fixed char arrays (PX_JF_CHARS) are
 * copied in place. Encoders leave out what decodes to the default anyway: a
 * NULL string, a zero number, false, an empty fixed string (unless the field
 * is PX_JF_KEEP), which halves the size of a job listing. JSON null decodes
 * to NULL.
 */
#ifndef PX_PROTO_JFIELD_H
#define PX_PROTO_JFIELD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

enum px_jf_type {
  PX_JF_STR,   /* char * */
  PX_JF_STRV,  /* char ** NULL-terminated */
  PX_JF_CHARS, /* char[size] */
  PX_JF_BOOL,  /* bool */
  PX_JF_U32,
  PX_JF_U64,
  PX_JF_I32,
  PX_JF_I64,
  PX_JF_F64,
};

/* Flags. */
#define PX_JF_CTRL_OK 1u  /* string may contain newlines and tabs (scripts) */
#define PX_JF_PATH 2u     /* a file name pattern: no ".." component */
#define PX_JF_ENV 4u      /* each STRV entry must be "K=V" */
#define PX_JF_KEEP 8u     /* always encoded: zero is not this field's default */

struct px_jfield {
  const char *name;
  enum px_jf_type type;
  size_t off;
  size_t size;       /* CHARS: the array size; STR/STRV: maximum length (0: 4096) */
  int64_t min, max;  /* numeric range, inclusive */
  unsigned flags;
};

#define PX_JF_NUM(st, f, t, lo, hi) {#f, t, offsetof(st, f), 0, lo, hi, 0}
#define PX_JF_S(st, f, maxlen, fl) {#f, PX_JF_STR, offsetof(st, f), maxlen, 0, 0, fl}
#define PX_JF_SV(st, f, maxlen, fl) {#f, PX_JF_STRV, offsetof(st, f), maxlen, 0, 0, fl}
#define PX_JF_C(st, f) {#f, PX_JF_CHARS, offsetof(st, f), sizeof(((st *)0)->f), 0, 0, 0}
#define PX_JF_B(st, f) {#f, PX_JF_BOOL, offsetof(st, f), 0, 0, 1, 0}

/* Adds every field of base to obj. 0 or PX_ENOMEM. */
int px_jf_encode(json_t *obj, const struct px_jfield *f, size_t n, const void *base);

/*
 * Fills base from obj. Keys of obj not in the table are refused unless
 * `extra` names them (a NULL-terminated list the caller decodes itself).
 * prefix ("" or "spec.") is prepended to field names in diagnostics. On
 * failure base may hold some copies: the caller frees it with its _fini.
 */
int px_jf_decode(const json_t *obj, const struct px_jfield *f, size_t n, void *base,
                 const char *const *extra, const char *prefix, struct px_diag *d);

/* Frees the STR and STRV members named by the table and NULLs them. */
void px_jf_free(const struct px_jfield *f, size_t n, void *base);

/* Parses text into a new object in *out, refusing anything else: PX_EPARSE
 * (the diag names the byte position) or PX_EINVAL (not an object). */
int px_jf_parse_object(const char *text, size_t len, json_t **out, struct px_diag *d);

/* A growing text buffer for the direct writer below. */
struct px_jbuf {
  char *p;
  size_t len, cap;
  int err; /* PX_ENOMEM once an append failed; later appends do nothing */
};
void px_jbuf_add(struct px_jbuf *b, const char *s, size_t n);
/* s[0..len) as a JSON string: quoted, with '"', '\\' and control bytes escaped. */
void px_jbuf_str(struct px_jbuf *b, const char *s, size_t len);
/* Writes the table's members ("k":v pairs, comma-separated, no braces) of
 * base, exactly as px_jf_encode + json_dumps(JSON_COMPACT) would, without
 * building a jansson tree (ten times faster: listings of 100,000 jobs). */
void px_jf_write(struct px_jbuf *b, const struct px_jfield *f, size_t n, const void *base);

/* Encodes obj compactly into a malloc'd string and drops the reference. */
char *px_jf_dump(json_t *obj);

#endif
