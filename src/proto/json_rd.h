/*
 * json_rd.h - strict field readers over jansson objects, shared by the wire
 * codecs of proto/. A reader walks one JSON object: each getter names the
 * field it wants and whether it is required; the first problem (missing
 * field, wrong type, out of range) is recorded once in the reader, with the
 * field's dotted path, and every later getter becomes a no-op. The caller
 * checks px_rd_done() at the end, which also rejects fields nobody asked for
 * (unknown fields are errors: a typo must not silently become a default).
 */
#ifndef PX_PROTO_JSON_RD_H
#define PX_PROTO_JSON_RD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

#define PX_RD_MAXKEYS 64

struct px_rd {
  json_t *obj;
  const char *ctx;         /* "launch", "report.gpus[2]", ... for messages */
  struct px_diag *d;
  int err;                 /* first error, 0 while fine */
  const char *seen[PX_RD_MAXKEYS];
  unsigned nseen;
};

/* Starts reading obj (which must be an object, else the reader fails). */
void px_rd_init(struct px_rd *r, json_t *obj, const char *ctx, struct px_diag *d);
/* Records an error for field key (printf-style detail) unless one is set. */
int px_rd_fail(struct px_rd *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The value of key, or NULL when absent (an error when required). */
json_t *px_rd_get(struct px_rd *r, const char *key, bool required);

void px_rd_u64(struct px_rd *r, const char *key, bool required, uint64_t *out);
void px_rd_u32(struct px_rd *r, const char *key, bool required, uint32_t *out);
void px_rd_i64(struct px_rd *r, const char *key, bool required, int64_t *out);
void px_rd_i32(struct px_rd *r, const char *key, bool required, int32_t *out);
void px_rd_bool(struct px_rd *r, const char *key, bool required, bool *out);
/* A string into a fixed buffer (too long is an error). */
void px_rd_buf(struct px_rd *r, const char *key, bool required, char *buf, size_t size);
/* A malloc'd copy; absent or null leaves *out NULL. */
void px_rd_str(struct px_rd *r, const char *key, bool required, char **out);
/* A NULL-terminated malloc'd array of malloc'd strings; *n gets the count. */
void px_rd_strv(struct px_rd *r, const char *key, bool required, char ***out, uint32_t *n);
/* A malloc'd array of uint32; *n gets the count (absent: NULL, 0). */
void px_rd_u32v(struct px_rd *r, const char *key, bool required, uint32_t **out, uint32_t *n);
/* Rejects unknown fields; returns the reader's error (0 when fine). */
int px_rd_done(struct px_rd *r);

/* Parses text into a JSON object, or fails with the parser's position. */
int px_rd_parse(const char *text, json_t **out, struct px_diag *d);

/* Writers: set only when the value is present (NULL strings are left out). */
int px_wr_str(json_t *o, const char *key, const char *s);
int px_wr_strv(json_t *o, const char *key, char *const *v);
int px_wr_u32v(json_t *o, const char *key, const uint32_t *v, uint32_t n);
int px_wr_int(json_t *o, const char *key, json_int_t v);
/* json_dumps with compact output; frees o. */
char *px_wr_finish(json_t *o);

void px_strv_free(char **v);

#endif
