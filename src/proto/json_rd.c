/* json_rd.c - strict JSON field readers and small writers (json_rd.h). */
#include "proto/json_rd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void px_rd_init(struct px_rd *r, json_t *obj, const char *ctx, struct px_diag *d) {
  memset(r, 0, sizeof *r);
  r->obj = obj;
  r->ctx = ctx;
  r->d = d;
  if (!json_is_object(obj)) r->err = px_diag_set(d, PX_EPARSE, -1, "%s: expected a JSON object", ctx);
}

int px_rd_fail(struct px_rd *r, const char *key, const char *fmt, ...) {
  if (r->err) return r->err;
  char detail[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  r->err = px_diag_set(r->d, PX_EINVAL, -1, "%s.%s: %s", r->ctx, key, detail);
  return r->err;
}

json_t *px_rd_get(struct px_rd *r, const char *key, bool required) {
  if (r->err) return NULL;
  if (r->nseen < PX_RD_MAXKEYS) r->seen[r->nseen++] = key;
  json_t *v = json_object_get(r->obj, key);
  if (v && json_is_null(v)) v = NULL;
  if (!v && required) px_rd_fail(r, key, "required field missing");
  return v;
}

static bool rd_int(struct px_rd *r, const char *key, bool required, json_int_t lo, json_int_t hi,
                   json_int_t *out) {
  json_t *v = px_rd_get(r, key, required);
  if (!v) return false;
  if (!json_is_integer(v)) {
    px_rd_fail(r, key, "expected an integer");
    return false;
  }
  json_int_t x = json_integer_value(v);
  if (x < lo || x > hi) {
    px_rd_fail(r, key, "%lld out of range [%lld, %lld]", (long long)x, (long long)lo, (long long)hi);
    return false;
  }
  *out = x;
  return true;
}

/* JSON integers are signed 64-bit in jansson; uint64 fields stay below 2^63. */
void px_rd_u64(struct px_rd *r, const char *key, bool required, uint64_t *out) {
  json_int_t x;
  if (rd_int(r, key, required, 0, INT64_MAX, &x)) *out = (uint64_t)x;
}

void px_rd_u32(struct px_rd *r, const char *key, bool required, uint32_t *out) {
  json_int_t x;
  if (rd_int(r, key, required, 0, UINT32_MAX, &x)) *out = (uint32_t)x;
}

void px_rd_i64(struct px_rd *r, const char *key, bool required, int64_t *out) {
  json_int_t x;
  if (rd_int(r, key, required, INT64_MIN, INT64_MAX, &x)) *out = (int64_t)x;
}

void px_rd_i32(struct px_rd *r, const char *key, bool required, int32_t *out) {
  json_int_t x;
  if (rd_int(r, key, required, INT32_MIN, INT32_MAX, &x)) *out = (int32_t)x;
}

void px_rd_bool(struct px_rd *r, const char *key, bool required, bool *out) {
  json_t *v = px_rd_get(r, key, required);
  if (!v) return;
  if (!json_is_boolean(v)) {
    px_rd_fail(r, key, "expected true or false");
    return;
  }
  *out = json_is_true(v);
}

static const char *rd_string(struct px_rd *r, const char *key, bool required) {
  json_t *v = px_rd_get(r, key, required);
  if (!v) return NULL;
  if (!json_is_string(v)) {
    px_rd_fail(r, key, "expected a string");
    return NULL;
  }
  return json_string_value(v);
}

void px_rd_buf(struct px_rd *r, const char *key, bool required, char *buf, size_t size) {
  const char *s = rd_string(r, key, required);
  if (!s) return;
  if (strlen(s) >= size) {
    px_rd_fail(r, key, "longer than %zu bytes", size - 1);
    return;
  }
  memcpy(buf, s, strlen(s) + 1);
}

void px_rd_str(struct px_rd *r, const char *key, bool required, char **out) {
  const char *s = rd_string(r, key, required);
  if (!s) return;
  if (!(*out = strdup(s))) r->err = px_diag_set(r->d, PX_ENOMEM, -1, "out of memory");
}

static json_t *rd_array(struct px_rd *r, const char *key, bool required) {
  json_t *v = px_rd_get(r, key, required);
  if (v && !json_is_array(v)) {
    px_rd_fail(r, key, "expected an array");
    return NULL;
  }
  return v;
}

void px_rd_strv(struct px_rd *r, const char *key, bool required, char ***out, uint32_t *n) {
  json_t *a = rd_array(r, key, required);
  if (!a) return;
  size_t len = json_array_size(a);
  char **v = calloc(len + 1, sizeof *v);
  if (!v) goto nomem;
  for (size_t i = 0; i < len; i++) {
    json_t *e = json_array_get(a, i);
    if (!json_is_string(e)) {
      px_strv_free(v);
      px_rd_fail(r, key, "element %zu: expected a string", i);
      return;
    }
    if (!(v[i] = strdup(json_string_value(e)))) {
      px_strv_free(v);
      goto nomem;
    }
  }
  *out = v;
  if (n) *n = (uint32_t)len;
  return;
nomem:
  r->err = px_diag_set(r->d, PX_ENOMEM, -1, "out of memory");
}

void px_rd_u32v(struct px_rd *r, const char *key, bool required, uint32_t **out, uint32_t *n) {
  json_t *a = rd_array(r, key, required);
  if (!a) return;
  size_t len = json_array_size(a);
  uint32_t *v = calloc(len ? len : 1, sizeof *v);
  if (!v) {
    r->err = px_diag_set(r->d, PX_ENOMEM, -1, "out of memory");
    return;
  }
  for (size_t i = 0; i < len; i++) {
    json_t *e = json_array_get(a, i);
    if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > UINT32_MAX) {
      free(v);
      px_rd_fail(r, key, "element %zu: expected an integer in [0, %u]", i, UINT32_MAX);
      return;
    }
    v[i] = (uint32_t)json_integer_value(e);
  }
  *out = v;
  *n = (uint32_t)len;
}

int px_rd_done(struct px_rd *r) {
  if (r->err) return r->err;
  const char *key;
  json_t *v;
  json_object_foreach(r->obj, key, v) {
    bool known = false;
    for (unsigned i = 0; i < r->nseen && !known; i++) known = strcmp(r->seen[i], key) == 0;
    if (!known) return px_rd_fail(r, key, "unknown field");
  }
  return 0;
}

int px_rd_parse(const char *text, json_t **out, struct px_diag *d) {
  json_error_t e;
  *out = NULL;
  if (!text) return px_diag_set(d, PX_EINVAL, -1, "no JSON text");
  json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &e);
  if (!j) return px_diag_set(d, PX_EPARSE, e.position, "JSON line %d column %d: %s", e.line, e.column, e.text);
  *out = j;
  return 0;
}

int px_wr_str(json_t *o, const char *key, const char *s) {
  if (!s) return 0;
  return json_object_set_new(o, key, json_string(s)) ? PX_ENOMEM : 0;
}

int px_wr_strv(json_t *o, const char *key, char *const *v) {
  if (!v) return 0;
  json_t *a = json_array();
  if (!a) return PX_ENOMEM;
  for (size_t i = 0; v[i]; i++) {
    if (json_array_append_new(a, json_string(v[i]))) {
      json_decref(a);
      return PX_ENOMEM;
    }
  }
  return json_object_set_new(o, key, a) ? PX_ENOMEM : 0;
}

int px_wr_u32v(json_t *o, const char *key, const uint32_t *v, uint32_t n) {
  if (!v && n) return PX_EINVAL;
  json_t *a = json_array();
  if (!a) return PX_ENOMEM;
  for (uint32_t i = 0; i < n; i++) {
    if (json_array_append_new(a, json_integer(v[i]))) {
      json_decref(a);
      return PX_ENOMEM;
    }
  }
  return json_object_set_new(o, key, a) ? PX_ENOMEM : 0;
}

int px_wr_int(json_t *o, const char *key, json_int_t v) {
  return json_object_set_new(o, key, json_integer(v)) ? PX_ENOMEM : 0;
}

char *px_wr_finish(json_t *o) {
  if (!o) return NULL;
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return s;
}

void px_strv_free(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) free(*p);
  free(v);
}
