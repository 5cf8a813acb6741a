/* jfield.c - the one encoder and strict decoder behind every table of jfield.h. */
#include "proto/jfield.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD(base, f) ((char *)(base) + (f)->off)
#define DEFAULT_MAXLEN 4096

static json_t *encode_strv(char *const *v) {
  json_t *a = json_array();
  for (size_t i = 0; a && v && v[i]; i++) {
    if (json_array_append_new(a, json_string(v[i]))) {
      json_decref(a);
      return NULL;
    }
  }
  return a;
}

static json_t *encode_one(const struct px_jfield *f, const void *base) {
  const char *p = FIELD(base, f);
  switch (f->type) {
    case PX_JF_STR: return *(char *const *)p ? json_string(*(char *const *)p) : NULL;
    case PX_JF_STRV: return *(char **const *)p ? encode_strv(*(char **const *)p) : NULL;
    case PX_JF_CHARS: return json_stringn(p, strnlen(p, f->size));
    case PX_JF_BOOL: return json_boolean(*(const bool *)p);
    case PX_JF_U32: return json_integer(*(const uint32_t *)p);
    case PX_JF_U64: {
      uint64_t v = *(const uint64_t *)p; /* JSON integers are signed 64-bit: clamp */
      return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
    }
    case PX_JF_I32: return json_integer(*(const int32_t *)p);
    case PX_JF_I64: return json_integer(*(const int64_t *)p);
    case PX_JF_F64: return json_real(*(const double *)p);
  }
  return NULL;
}

/* Is the field at its default (left out of the encoding)? */
static bool is_default(const struct px_jfield *f, const void *base) {
  const char *p = FIELD(base, f);
  if (f->flags & PX_JF_KEEP) return false;
  switch (f->type) {
    case PX_JF_STR:
    case PX_JF_STRV: return !*(void *const *)p;
    case PX_JF_CHARS: return !*p;
    case PX_JF_BOOL: return !*(const bool *)p;
    case PX_JF_U32: return !*(const uint32_t *)p;
    case PX_JF_I32: return !*(const int32_t *)p;
    case PX_JF_U64: return !*(const uint64_t *)p;
    case PX_JF_I64: return !*(const int64_t *)p;
    case PX_JF_F64: return *(const double *)p == 0.0;
  }
  return false;
}

int px_jf_encode(json_t *obj, const struct px_jfield *f, size_t n, const void *base) {
  for (size_t i = 0; i < n; i++) {
    if (is_default(&f[i], base)) continue;
    json_t *v = encode_one(&f[i], base);
    if (!v) {
      bool absent = (f[i].type == PX_JF_STR || f[i].type == PX_JF_STRV) &&
                    !*(void *const *)FIELD(base, &f[i]);
      if (absent) continue;
      return PX_ENOMEM;
    }
    if (json_object_set_new(obj, f[i].name, v)) return PX_ENOMEM;
  }
  return 0;
}

/* Checks one string against the field's rules; 0 or PX_EINVAL/PX_ERANGE with d set. */
static int check_string(const struct px_jfield *f, const json_t *v, const char *prefix,
                        struct px_diag *d) {
  const char *s = json_string_value(v);
  size_t len = json_string_length(v), maxlen = f->size ? f->size : DEFAULT_MAXLEN;
  if (f->type == PX_JF_CHARS) maxlen = f->size - 1;
  if (len > maxlen)
    return px_diag_set(d, PX_ERANGE, -1, "%s%s: longer than %zu bytes", prefix, f->name, maxlen);
  if (strlen(s) != len)
    return px_diag_set(d, PX_EINVAL, -1, "%s%s: contains a NUL character", prefix, f->name);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    bool ws = c == '\n' || c == '\t' || c == '\r';
    if ((c < 0x20 || c == 0x7f) && !(ws && (f->flags & PX_JF_CTRL_OK)))
      return px_diag_set(d, PX_EINVAL, -1, "%s%s: contains a control character", prefix, f->name);
  }
  if ((f->flags & PX_JF_PATH) &&
      (strcmp(s, "..") == 0 || strncmp(s, "../", 3) == 0 || strstr(s, "/../") ||
       (len >= 3 && strcmp(s + len - 3, "/..") == 0)))
    return px_diag_set(d, PX_EINVAL, -1, "%s%s: must not contain a '..' path component", prefix,
                       f->name);
  if ((f->flags & PX_JF_ENV) && (!strchr(s, '=') || s[0] == '='))
    return px_diag_set(d, PX_EINVAL, -1, "%s%s: entries must be NAME=VALUE", prefix, f->name);
  return 0;
}

static int decode_strv(const struct px_jfield *f, const json_t *v, char ***out,
                       const char *prefix, struct px_diag *d) {
  if (!json_is_array(v))
    return px_diag_set(d, PX_EINVAL, -1, "%s%s: must be an array of strings", prefix, f->name);
  size_t n = json_array_size(v);
  if (n > 65536)
    return px_diag_set(d, PX_ERANGE, -1, "%s%s: more than 65536 entries", prefix, f->name);
  char **a = calloc(n + 1, sizeof *a);
  if (!a) return PX_ENOMEM;
  *out = a; /* freed by the caller's _fini on failure */
  for (size_t i = 0; i < n; i++) {
    const json_t *e = json_array_get(v, i);
    if (!json_is_string(e))
      return px_diag_set(d, PX_EINVAL, -1, "%s%s[%zu]: must be a string", prefix, f->name, i);
    int rc = check_string(f, e, prefix, d);
    if (rc) return rc;
    if (!(a[i] = strdup(json_string_value(e)))) return PX_ENOMEM;
  }
  return 0;
}

static int decode_int(const struct px_jfield *f, const json_t *v, char *p, const char *prefix,
                      struct px_diag *d) {
  if (!json_is_integer(v))
    return px_diag_set(d, PX_EINVAL, -1, "%s%s: must be an integer", prefix, f->name);
  json_int_t x = json_integer_value(v);
  if (x < f->min)
    return px_diag_set(d, PX_ERANGE, -1, "%s%s: must be >= %lld", prefix, f->name,
                       (long long)f->min);
  if (x > f->max)
    return px_diag_set(d, PX_ERANGE, -1, "%s%s: must be <= %lld", prefix, f->name,
                       (long long)f->max);
  switch (f->type) {
    case PX_JF_U32: *(uint32_t *)p = (uint32_t)x; break;
    case PX_JF_U64: *(uint64_t *)p = (uint64_t)x; break;
    case PX_JF_I32: *(int32_t *)p = (int32_t)x; break;
    default: *(int64_t *)p = (int64_t)x; break;
  }
  return 0;
}

static int decode_one(const struct px_jfield *f, const json_t *v, void *base, const char *prefix,
                      struct px_diag *d) {
  char *p = FIELD(base, f);
  switch (f->type) {
    case PX_JF_STR:
    case PX_JF_CHARS: {
      if (json_is_null(v) && f->type == PX_JF_STR) return 0;
      if (!json_is_string(v))
        return px_diag_set(d, PX_EINVAL, -1, "%s%s: must be a string", prefix, f->name);
      int rc = check_string(f, v, prefix, d);
      if (rc) return rc;
      if (f->type == PX_JF_CHARS) {
        memcpy(p, json_string_value(v), json_string_length(v) + 1);
        return 0;
      }
      free(*(char **)p);
      return (*(char **)p = strdup(json_string_value(v))) ? 0 : PX_ENOMEM;
    }
    case PX_JF_STRV:
      if (json_is_null(v)) return 0;
      return decode_strv(f, v, (char ***)p, prefix, d);
    case PX_JF_BOOL:
      if (!json_is_boolean(v))
        return px_diag_set(d, PX_EINVAL, -1, "%s%s: must be true or false", prefix, f->name);
      *(bool *)p = json_is_true(v);
      return 0;
    case PX_JF_F64:
      if (!json_is_number(v))
        return px_diag_set(d, PX_EINVAL, -1, "%s%s: must be a number", prefix, f->name);
      *(double *)p = json_number_value(v);
      return 0;
    default: return decode_int(f, v, p, prefix, d);
  }
}

static bool is_extra(const char *key, const char *const *extra) {
  for (; extra && *extra; extra++)
    if (strcmp(key, *extra) == 0) return true;
  return false;
}

int px_jf_decode(const json_t *obj, const struct px_jfield *f, size_t n, void *base,
                 const char *const *extra, const char *prefix, struct px_diag *d) {
  if (!json_is_object(obj))
    return px_diag_set(d, PX_EINVAL, -1, "%s: must be an object", *prefix ? prefix : "body");
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)obj, key, v) {
    size_t i = 0;
    while (i < n && strcmp(f[i].name, key) != 0) i++;
    if (i == n) {
      if (is_extra(key, extra)) continue;
      return px_diag_set(d, PX_EINVAL, -1, "%s%.64s: unknown field", prefix, key);
    }
    int rc = decode_one(&f[i], v, base, prefix, d);
    if (rc) return rc;
  }
  return 0;
}

void px_jf_free(const struct px_jfield *f, size_t n, void *base) {
  for (size_t i = 0; i < n; i++) {
    char *p = FIELD(base, &f[i]);
    if (f[i].type == PX_JF_STR) {
      free(*(char **)p);
      *(char **)p = NULL;
    } else if (f[i].type == PX_JF_STRV) {
      char **v = *(char ***)p;
      for (size_t k = 0; v && v[k]; k++) free(v[k]);
      free(v);
      *(char ***)p = NULL;
    }
  }
}

int px_jf_parse_object(const char *text, size_t len, json_t **out, struct px_diag *d) {
  json_error_t err;
  /* JSON_REJECT_DUPLICATES: {"gpus":1,"gpus":99} is an attack, not a typo. */
  json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
  if (!o)
    return px_diag_set(d, PX_EPARSE, err.position, "body: invalid JSON at byte %d: %s",
                       err.position, err.text);
  if (!json_is_object(o)) {
    json_decref(o);
    return px_diag_set(d, PX_EINVAL, 0, "body: must be a JSON object");
  }
  *out = o;
  return 0;
}

char *px_jf_dump(json_t *obj) {
  if (!obj) return NULL;
  char *s = json_dumps(obj, JSON_COMPACT);
  json_decref(obj);
  return s;
}

/* ---- the direct writer ---- */

void px_jbuf_add(struct px_jbuf *b, const char *s, size_t n) {
  if (b->err) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap * 2 + n + 256;
    char *p = realloc(b->p, cap);
    if (!p) {
      b->err = PX_ENOMEM;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void px_jbuf_str(struct px_jbuf *b, const char *s, size_t len) {
  static const char hex[] = "0123456789abcdef";
  px_jbuf_add(b, "\"", 1);
  size_t run = 0; /* bytes that need no escaping are copied in runs */
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    px_jbuf_add(b, s + run, i - run);
    run = i + 1;
    char esc[7] = {'\\', (char)c, 0};
    size_t n = 2;
    if (c == '\n') esc[1] = 'n';
    else if (c == '\t') esc[1] = 't';
    else if (c == '\r') esc[1] = 'r';
    else if (c == '\b') esc[1] = 'b';
    else if (c == '\f') esc[1] = 'f';
    else if (c < 0x20) {
      memcpy(esc, "\\u00", 4);
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      n = 6;
    }
    px_jbuf_add(b, esc, n);
  }
  px_jbuf_add(b, s + run, len - run);
  px_jbuf_add(b, "\"", 1);
}

static void write_num(struct px_jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void write_num(struct px_jbuf *b, const char *fmt, ...) {
  char num[40];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(num, sizeof num, fmt, ap);
  va_end(ap);
  px_jbuf_add(b, num, (size_t)n);
}

static void write_real(struct px_jbuf *b, double v) {
  char num[40];
  int n = snprintf(num, sizeof num, "%.17g", v);
  char *e = strchr(num, 'e');
  if (!e && !strpbrk(num, ".n")) n += snprintf(num + n, sizeof num - (size_t)n, ".0");
  if (e) { /* as jansson: "1e+300" -> "1e300", "2.5e-07" -> "2.5e-7" */
    char *d = e + 1, *src = e + 1;
    if (*src == '+') src++;
    else if (*src == '-') *d++ = *src++;
    while (*src == '0' && src[1]) src++;
    memmove(d, src, strlen(src) + 1);
    n = (int)strlen(num);
  }
  px_jbuf_add(b, num, (size_t)n);
}

void px_jf_write(struct px_jbuf *b, const struct px_jfield *f, size_t n, const void *base) {
  bool first = true;
  for (size_t i = 0; i < n; i++) {
    const char *p = FIELD(base, &f[i]);
    if (is_default(&f[i], base)) continue;
    if (!first) px_jbuf_add(b, ",", 1);
    first = false;
    px_jbuf_str(b, f[i].name, strlen(f[i].name));
    px_jbuf_add(b, ":", 1);
    switch (f[i].type) {
      case PX_JF_STR: px_jbuf_str(b, *(char *const *)p, strlen(*(char *const *)p)); break;
      case PX_JF_CHARS: px_jbuf_str(b, p, strnlen(p, f[i].size)); break;
      case PX_JF_STRV: {
        char **v = *(char **const *)p;
        px_jbuf_add(b, "[", 1);
        for (size_t k = 0; v[k]; k++) {
          if (k) px_jbuf_add(b, ",", 1);
          px_jbuf_str(b, v[k], strlen(v[k]));
        }
        px_jbuf_add(b, "]", 1);
        break;
      }
      case PX_JF_BOOL: px_jbuf_add(b, *(const bool *)p ? "true" : "false", *(const bool *)p ? 4 : 5); break;
      case PX_JF_U32: write_num(b, "%u", *(const uint32_t *)p); break;
      case PX_JF_U64: {
        uint64_t v = *(const uint64_t *)p;
        write_num(b, "%llu", (unsigned long long)(v > INT64_MAX ? INT64_MAX : v));
        break;
      }
      case PX_JF_I32: write_num(b, "%d", *(const int32_t *)p); break;
      case PX_JF_I64: write_num(b, "%lld", (long long)*(const int64_t *)p); break;
      case PX_JF_F64: write_real(b, *(const double *)p); break;
    }
  }
}
