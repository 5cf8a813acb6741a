/* jfield.c - the one encoder and strict decoder behind every table of jfield.h. */
#include "proto/jfield.h"

#include <stdbool.h>
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

int px_jf_encode(json_t *obj, const struct px_jfield *f, size_t n, const void *base) {
  for (size_t i = 0; i < n; i++) {
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
