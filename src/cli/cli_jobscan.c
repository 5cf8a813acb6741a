/*
 * cli_jobscan.c - the job list ({"jobs":[...]} or a bare array) decoded
 * straight from the reply's bytes into px_job_info, without a jansson tree.
 *
 * Why: `squeue` with 10,000 jobs spent most of its time building and
 * freeing jansson's tree (an object, a hash table and a node per key, ~40
 * allocations a job) only to copy the values out again (issue 8,
 * cli_squeue_10k_ms). Here each value goes once from the text into its
 * field; the only allocations are the struct array and the strings the
 * struct owns. The schema is the tables of cli_fields.h, and the result is
 * the same as px_cli_jobs_from_json's (tests/unit/cli/test_jobscan.c feeds
 * both): unknown keys skipped, null as absent, wrong types PX_EPROTO,
 * accounting rows' flat spec fields, the array_task_id default.
 *
 * Keys come in the same order in every job, so the field lookup starts at
 * the row after the last match.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_fields.h"
#include "cli/cli_json.h"

#define MAX_DEPTH 64

struct scan {
  const char *p, *end;
  bool inplace; /* strings left in the text (px_cli_jobs_from_text_inplace) */
  struct px_job_info *room; /* inplace: the caller's array to decode into */
  size_t room_cap;
  char *sbuf; /* a string with escapes, decoded */
  size_t scap;
  size_t hint[3]; /* per table (job, spec, step): where the next key probably is */
};

static void ws(struct scan *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t')) s->p++;
}

/* Skips white space and takes c if it is next. */
static bool take(struct scan *s, char c) {
  ws(s);
  if (s->p < s->end && *s->p == c) return s->p++, true;
  return false;
}

static bool take_word(struct scan *s, const char *w, size_t n) {
  ws(s);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n)) return false;
  s->p += n;
  return true;
}

static int hex4(const char *p) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

static size_t put_utf8(char *o, uint32_t cp) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800) return o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3F)), 2;
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | cp >> 18), o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
  o[2] = (char)(0x80 | (cp >> 6 & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* One escape at *pp (after the backslash) into o; bytes written or 0. */
static size_t unescape(const char **pp, const char *end, char *o) {
  const char *p = *pp;
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  const char *k = p < end ? strchr(from, *p) : NULL;
  if (k && *p) return *pp = p + 1, o[0] = to[k - from], 1;
  if (p >= end || *p != 'u' || end - p < 5) return 0;
  int cp = hex4(p + 1);
  p += 5;
  if (cp < 0) return 0;
  if (cp >= 0xD800 && cp < 0xDC00) { /* a surrogate pair */
    if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return 0;
    int lo = hex4(p + 2);
    if (lo < 0xDC00 || lo > 0xDFFF) return 0;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    p += 6;
  } else if (cp >= 0xDC00 && cp < 0xE000) {
    return 0;
  }
  *pp = p;
  return put_utf8(o, (uint32_t)cp);
}

/* A string: *out points into the text when it has no escapes, else into
 * s->sbuf. Not NUL-terminated; *len bytes. */
static int str(struct scan *s, const char **out, size_t *len) {
  if (!take(s, '"')) return PX_EPROTO;
  const char *b = s->p;
  while (s->p < s->end && *s->p != '"' && *s->p != '\\' && (unsigned char)*s->p >= 0x20) s->p++;
  if (s->p < s->end && *s->p == '"') {
    *out = b, *len = (size_t)(s->p - b);
    s->p++;
    return 0;
  }
  size_t n = (size_t)(s->p - b); /* the plain prefix; the rest the slow way */
  for (bool first = true;; first = false) {
    if (s->scap < n + 8) {
      size_t cap = (n + 8) * 2;
      char *nb = realloc(s->sbuf, cap);
      if (!nb) return PX_ENOMEM;
      s->sbuf = nb, s->scap = cap;
    }
    if (first) memcpy(s->sbuf, b, n);
    if (s->p >= s->end || (unsigned char)*s->p < 0x20) return PX_EPROTO;
    char c = *s->p++;
    if (c == '"') break;
    if (c != '\\') {
      s->sbuf[n++] = c;
      continue;
    }
    size_t k = unescape(&s->p, s->end, s->sbuf + n);
    if (!k) return PX_EPROTO;
    n += k;
  }
  if (s->inplace) { /* decoded is never longer than the text it came from */
    memcpy((char *)b, s->sbuf, n);
    *out = b, *len = n;
    return 0;
  }
  *out = s->sbuf, *len = n;
  return 0;
}

/* A JSON number's extent; *is_int when it has no fraction or exponent. */
static int number(struct scan *s, const char **b, size_t *n, bool *is_int) {
  ws(s);
  const char *p = s->p;
  if (p < s->end && *p == '-') p++;
  const char *digits = p;
  while (p < s->end && *p >= '0' && *p <= '9') p++;
  if (p == digits) return PX_EPROTO;
  *is_int = true;
  if (p < s->end && *p == '.') {
    *is_int = false, p++;
    while (p < s->end && *p >= '0' && *p <= '9') p++;
  }
  if (p < s->end && (*p == 'e' || *p == 'E')) {
    *is_int = false, p++;
    if (p < s->end && (*p == '+' || *p == '-')) p++;
    while (p < s->end && *p >= '0' && *p <= '9') p++;
  }
  *b = s->p, *n = (size_t)(p - s->p);
  s->p = p;
  return 0;
}

static int integer(struct scan *s, int64_t *out) {
  const char *b;
  size_t n;
  bool is_int;
  if (number(s, &b, &n, &is_int) || !is_int) return PX_EPROTO;
  bool neg = *b == '-';
  uint64_t v = 0;
  for (size_t i = neg; i < n; i++) {
    if (v > (UINT64_MAX - 9) / 10) return PX_EPROTO;
    v = v * 10 + (uint64_t)(b[i] - '0');
  }
  if (v > (uint64_t)INT64_MAX + neg) return PX_EPROTO; /* as jansson: int64 range */
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 0;
}

static int skip_value(struct scan *s, int depth) {
  if (depth > MAX_DEPTH) return PX_EPROTO;
  ws(s);
  if (s->p >= s->end) return PX_EPROTO;
  const char *b;
  size_t n;
  bool is_int;
  switch (*s->p) {
  case '"': return str(s, &b, &n);
  case 't': return take_word(s, "true", 4) ? 0 : PX_EPROTO;
  case 'f': return take_word(s, "false", 5) ? 0 : PX_EPROTO;
  case 'n': return take_word(s, "null", 4) ? 0 : PX_EPROTO;
  case '[':
    s->p++;
    if (take(s, ']')) return 0;
    do {
      int rc = skip_value(s, depth + 1);
      if (rc) return rc;
    } while (take(s, ','));
    return take(s, ']') ? 0 : PX_EPROTO;
  case '{':
    s->p++;
    if (take(s, '}')) return 0;
    do {
      int rc = str(s, &b, &n);
      if (rc || !take(s, ':') || (rc = skip_value(s, depth + 1))) return rc ? rc : PX_EPROTO;
    } while (take(s, ','));
    return take(s, '}') ? 0 : PX_EPROTO;
  default: return number(s, &b, &n, &is_int);
  }
}

static char *dup_n(const char *b, size_t n) {
  char *o = malloc(n + 1);
  if (o) memcpy(o, b, n), o[n] = '\0';
  return o;
}

/* A string left where it is in the text, ended there (its closing quote, or
 * a byte of its escapes, becomes the NUL). */
static char *in_text(const char *b, size_t n) {
  char *o = (char *)b; /* the caller's text is writable (inplace) */
  o[n] = '\0';
  return o;
}

static int strv(struct scan *s, char ***out) {
  if (!take(s, '[')) return PX_EPROTO;
  size_t n = 0, cap = 8;
  char **v = calloc(cap + 1, sizeof *v);
  int rc = v ? 0 : PX_ENOMEM;
  if (!rc && !take(s, ']')) {
    do {
      const char *b;
      size_t len;
      if ((rc = str(s, &b, &len))) break;
      if (n == cap) {
        char **nv = realloc(v, (cap * 2 + 1) * sizeof *v);
        if (!nv) {
          rc = PX_ENOMEM;
          break;
        }
        v = nv, cap *= 2;
      }
      if (!(v[n] = s->inplace ? in_text(b, len) : dup_n(b, len))) {
        rc = PX_ENOMEM;
        break;
      }
      v[++n] = NULL;
    } while (take(s, ','));
    if (!rc && !take(s, ']')) rc = PX_EPROTO;
  }
  if (rc) {
    for (size_t i = 0; v && !s->inplace && i < n; i++) free(v[i]);
    free(v);
    return rc;
  }
  *out = v;
  return 0;
}

/* One value into its field (a null leaves the field as it is). */
static int value(struct scan *s, const struct px_cli_field *f, void *base) {
  char *p = (char *)base + f->off;
  if (take_word(s, "null", 4)) return 0;
  const char *b;
  size_t n;
  int64_t x;
  int rc;
  switch (f->type) {
  case F_STR:
    if ((rc = str(s, &b, &n))) return rc;
    if (s->inplace) return *(char **)p = in_text(b, n), 0;
    free(*(char **)p);
    return (*(char **)p = dup_n(b, n)) ? 0 : PX_ENOMEM;
  case F_CHARS:
    if ((rc = str(s, &b, &n))) return rc;
    if (n >= f->size) n = f->size - 1;
    memcpy(p, b, n), p[n] = '\0';
    return 0;
  case F_STRV: {
    char **v;
    if ((rc = strv(s, &v))) return rc;
    char **old = *(char ***)p;
    for (char **q = old; q && *q && !s->inplace; q++) free(*q);
    free(old);
    *(char ***)p = v;
    return 0;
  }
  case F_BOOL:
    if (take_word(s, "true", 4)) return *(bool *)p = true, 0;
    if (take_word(s, "false", 5)) return *(bool *)p = false, 0;
    return PX_EPROTO;
  case F_DBL: {
    bool is_int;
    if ((rc = number(s, &b, &n, &is_int))) return rc;
    char tmp[64];
    if (n >= sizeof tmp) return PX_EPROTO;
    memcpy(tmp, b, n), tmp[n] = '\0';
    *(double *)p = strtod(tmp, NULL);
    return 0;
  }
  default: break;
  }
  if ((rc = integer(s, &x))) return rc;
  switch (f->type) {
  case F_U32: *(uint32_t *)p = (uint32_t)x; break;
  case F_U64: *(uint64_t *)p = (uint64_t)x; break;
  case F_I32: *(int32_t *)p = (int32_t)x; break;
  default: *(int64_t *)p = x; break;
  }
  return 0;
}

/* name is key[0..len) (a key may hold a decoded NUL: it matches no name). */
static bool name_is(const char *name, const char *key, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (!name[i] || name[i] != key[i]) return false;
  return !name[len];
}

/* Members come in the table's order with some left out (zero, absent), so
 * the search starts where the last match left off and wraps around. */
static const struct px_cli_field *find(struct scan *s, int t, const struct px_cli_field *fs,
                                       const char *key, size_t len) {
  size_t h = s->hint[t];
  for (size_t i = h; fs[i].name; i++)
    if (name_is(fs[i].name, key, len)) return s->hint[t] = i + 1, &fs[i];
  for (size_t i = 0; i < h; i++)
    if (name_is(fs[i].name, key, len)) return s->hint[t] = i + 1, &fs[i];
  return NULL;
}

/* An object's key and its ':'. */
static int key(struct scan *s, const char **k, size_t *klen) {
  int rc = str(s, k, klen);
  return rc ? rc : take(s, ':') ? 0 : PX_EPROTO;
}

/* An object of table fs's fields (t: its hint) into base; null is absent. */
static int fields_obj(struct scan *s, int t, const struct px_cli_field *fs, void *base) {
  if (take_word(s, "null", 4)) return 0;
  if (!take(s, '{')) return PX_EPROTO;
  if (take(s, '}')) return 0;
  do {
    const char *k;
    size_t klen;
    int rc = key(s, &k, &klen);
    if (rc) return rc;
    const struct px_cli_field *f = find(s, t, fs, k, klen);
    if ((rc = f ? value(s, f, base) : skip_value(s, 1))) return rc;
  } while (take(s, ','));
  return take(s, '}') ? 0 : PX_EPROTO;
}

/* An accounting row's "steps": [{step fields}, ...] (cli_json.c's table). */
static int steps_arr(struct scan *s, struct px_job_info *j) {
  if (take_word(s, "null", 4)) return 0;
  if (!take(s, '[')) return PX_EPROTO;
  if (take(s, ']')) return 0;
  size_t cap = 0;
  do {
    if (j->nsteps == cap) {
      size_t ncap = cap ? cap * 2 : 4;
      struct px_step_info *nv = realloc(j->steps, ncap * sizeof *nv);
      if (!nv) return PX_ENOMEM;
      j->steps = nv, cap = ncap;
    }
    struct px_step_info *st = &j->steps[j->nsteps++];
    memset(st, 0, sizeof *st);
    int rc = fields_obj(s, 2, px_cli_step_fields, st);
    if (rc) return rc;
  } while (take(s, ','));
  return take(s, ']') ? 0 : PX_EPROTO;
}

static int job_obj(struct scan *s, struct px_job_info *j) {
  memset(j, 0, sizeof *j);
  px_jobspec_init(&j->spec);
  j->array_task_id = UINT32_MAX;
  memcpy(j->reason, "None", 5);
  bool task_given = false;
  if (!take(s, '{')) return PX_EPROTO;
  if (take(s, '}')) return 0;
  do {
    const char *k;
    size_t klen;
    int rc = key(s, &k, &klen);
    if (rc) return rc;
    const struct px_cli_field *f;
    if (klen == 4 && !memcmp(k, "spec", 4)) {
      rc = fields_obj(s, 1, px_cli_spec_fields, &j->spec);
    } else if (klen == 5 && !memcmp(k, "steps", 5)) {
      rc = steps_arr(s, j);
    } else if ((f = find(s, 0, px_cli_job_fields, k, klen))) {
      task_given |= f->off == offsetof(struct px_job_info, array_task_id);
      rc = value(s, f, j);
    } else if ((f = find(s, 1, px_cli_spec_fields, k, klen))) {
      rc = value(s, f, &j->spec); /* accounting rows are flat */
    } else {
      rc = skip_value(s, 1);
    }
    if (rc) return rc;
  } while (take(s, ','));
  if (!take(s, '}')) return PX_EPROTO;
  /* As px_cli_job_from_json: absent in an array job means task 0. */
  if (j->array_job_id && !task_given) j->array_task_id = 0;
  return 0;
}

static void jobs_release(const struct scan *s, struct px_job_info *v, size_t n) {
  if (s->inplace) px_cli_jobs_free_inplace(v, n);
  else px_cli_jobs_free(v, n);
}

static int job_array(struct scan *s, struct px_job_info **out, size_t *nout) {
  if (!take(s, '[')) return PX_EPROTO;
  size_t n = 0, cap = s->room_cap;
  struct px_job_info *v = s->room;
  s->room = NULL, s->room_cap = 0; /* taken */
  int rc = 0;
  if (!take(s, ']')) {
    do {
      if (n == cap) {
        /* a first guess from the text's size: ~250 bytes a job at least */
        size_t ncap = cap ? cap * 2 : 16 + (size_t)(s->end - s->p) / 256;
        struct px_job_info *nv = realloc(v, ncap * sizeof *v);
        if (!nv) {
          rc = PX_ENOMEM;
          break;
        }
        v = nv, cap = ncap;
      }
      rc = job_obj(s, &v[n]);
      n++; /* a half-decoded job is freed with the others */
      if (rc) break;
    } while (take(s, ','));
    if (!rc && !take(s, ']')) rc = PX_EPROTO;
  }
  if (rc) {
    jobs_release(s, v, n);
    return rc;
  }
  *out = v ? v : calloc(1, sizeof *v);
  *nout = n;
  s->room_cap = v ? cap : 1; /* what *out holds, for the caller's next page */
  return *out ? 0 : PX_ENOMEM;
}

static int jobs_from_text(struct scan s, struct px_job_info **out, size_t *n, size_t *cap) {
  int rc = PX_EPROTO;
  bool found = false;
  *out = NULL, *n = 0;
  ws(&s);
  if (s.p < s.end && *s.p == '[') {
    rc = job_array(&s, out, n);
    found = true;
  } else if (take(&s, '{') && !take(&s, '}')) {
    do {
      const char *k;
      size_t klen;
      if ((rc = str(&s, &k, &klen)) || !take(&s, ':')) {
        rc = rc ? rc : PX_EPROTO;
        break;
      }
      if (klen == 4 && !memcmp(k, "jobs", 4) && !found) {
        rc = job_array(&s, out, n);
        found = !rc;
      } else {
        rc = skip_value(&s, 1);
      }
    } while (!rc && take(&s, ','));
    if (!rc && !take(&s, '}')) rc = PX_EPROTO;
  }
  ws(&s);
  if (!rc && (!found || s.p != s.end)) rc = PX_EPROTO;
  free(s.sbuf);
  free(s.room); /* not taken (no job array in the text) */
  if (rc && found) {
    jobs_release(&s, *out, *n);
    *out = NULL, *n = 0;
  }
  *cap = rc ? 0 : s.room_cap;
  return rc;
}

int px_cli_jobs_from_text(const char *text, size_t len, struct px_job_info **out, size_t *n) {
  size_t cap;
  return jobs_from_text((struct scan){.p = text, .end = text + len}, out, n, &cap);
}

int px_cli_jobs_from_text_inplace(char *text, size_t len, struct px_job_info **out, size_t *cap, size_t *n) {
  struct scan s = {.p = text, .end = text + len, .inplace = true, .room = *out, .room_cap = *out ? *cap : 0};
  return jobs_from_text(s, out, n, cap);
}

void px_cli_job_fini_inplace(struct px_job_info *j) {
  for (const struct px_cli_field *f = px_cli_spec_fields; f->name; f++)
    if (f->type == F_STRV) {
      free(*(char ***)((char *)&j->spec + f->off));
      *(char ***)((char *)&j->spec + f->off) = NULL;
    }
  free(j->steps);
  j->steps = NULL, j->nsteps = 0;
}

void px_cli_jobs_free_inplace(struct px_job_info *v, size_t n) {
  for (size_t i = 0; v && i < n; i++) px_cli_job_fini_inplace(&v[i]);
  free(v);
}

bool px_cli_jobs_next_after(const char *text, size_t len, uint64_t *after) {
  static const char key[] = "\"next_after\":";
  const size_t klen = sizeof key - 1, tail = 48; /* the key, 19 digits, '}' and room */
  for (size_t i = len > tail ? len - tail : 0; i + klen < len; i++) {
    if (memcmp(text + i, key, klen)) continue;
    size_t d = i + klen, k = 0;
    uint64_t v = 0;
    for (; d + k < len && k < 20 && text[d + k] >= '0' && text[d + k] <= '9'; k++)
      v = v * 10 + (uint64_t)(text[d + k] - '0');
    if (k == 0 || k > 19) return false;
    *after = v;
    return true;
  }
  return false;
}
