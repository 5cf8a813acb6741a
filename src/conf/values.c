/*
 * values.c - typed values of Key=Value pairs. Each setter parses, checks and
 * stores at k->off inside the record, or reports "Key=value: expected ..."
 * and leaves the field alone. Keywords are case-insensitive, as in Slurm.
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/parse.h"
#include "util/units.h"

#define FIELD(obj, k, type) ((type *)((char *)(obj) + (k)->off))

bool px_parse_u64(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, uint64_t max,
                  uint64_t *out) {
  const char *s = kv->val;
  uint64_t v = 0;
  size_t i = 0;
  for (; s[i] >= '0' && s[i] <= '9'; i++) {
    if (v > (max - (uint64_t)(s[i] - '0')) / 10) {
      i = 0;
      break;
    }
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  if (i == 0 || s[i] != '\0') {
    char what[64];
    snprintf(what, sizeof what, "a whole number from 0 to %llu", (unsigned long long)max);
    px_cb_bad(b, w, kv, what);
    return false;
  }
  *out = v;
  return true;
}

void px_set_u32(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                const struct px_key *k) {
  uint64_t v;
  if (px_parse_u64(b, w, kv, UINT32_MAX - 1, &v)) *FIELD(obj, k, uint32_t) = (uint32_t)v;
}

void px_set_u64(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                const struct px_key *k) {
  uint64_t v;
  if (px_parse_u64(b, w, kv, UINT64_MAX - 1, &v)) *FIELD(obj, k, uint64_t) = v;
}

/* A limit: a number, or UNLIMITED / -1 / NONE for no limit (PX_NOLIMIT). */
void px_set_u64_limit(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                      const struct px_key *k) {
  if (!strcasecmp(kv->val, "UNLIMITED") || !strcmp(kv->val, "-1") || !strcasecmp(kv->val, "NONE")) {
    *FIELD(obj, k, uint64_t) = PX_NOLIMIT;
    return;
  }
  uint64_t v;
  if (px_parse_u64(b, w, kv, UINT64_MAX - 1, &v)) *FIELD(obj, k, uint64_t) = v;
}

/* The value's copy, or NULL (reported: empty, or out of memory). */
static char *str_value(struct px_cb *b, const struct px_where *w, const struct px_kv *kv) {
  if (!kv->val[0]) {
    px_cb_bad(b, w, kv, "a value");
    return NULL;
  }
  return px_cb_strdup(b, kv->val);
}

void px_set_str(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                const struct px_key *k) {
  const char *s = str_value(b, w, kv);
  if (s) *FIELD(obj, k, const char *) = s;
}

/* Names Slurm folds to lower case (ClusterName, accounts, QoS). Only a new
 * copy is folded: on an empty value the field keeps its default, which may
 * be a string constant. */
void px_set_lower(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                  const struct px_key *k) {
  char *s = str_value(b, w, kv);
  if (!s) return;
  *FIELD(obj, k, const char *) = s;
  for (; *s; s++) *s = (char)tolower((unsigned char)*s);
}

static const struct px_enum bools[] = {{"YES", 1}, {"NO", 0}, {"TRUE", 1}, {"FALSE", 0},
                                       {"1", 1},   {"0", 0},  {NULL, 0}};

bool px_parse_enum(struct px_cb *b, const struct px_where *w, const struct px_kv *kv,
                   const struct px_enum *e, int *out) {
  for (const struct px_enum *p = e; p->name; p++)
    if (strcasecmp(p->name, kv->val) == 0) {
      *out = p->value;
      return true;
    }
  char what[256];
  size_t n = 0;
  for (const struct px_enum *p = e; p->name && n < sizeof what; p++)
    n += (size_t)snprintf(what + n, sizeof what - n, "%s%s", p == e ? "one of " : (p[1].name ? ", " : " or "),
                          p->name);
  px_cb_bad(b, w, kv, what);
  return false;
}

void px_set_bool(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                 const struct px_key *k) {
  int v;
  if (px_parse_enum(b, w, kv, bools, &v)) *FIELD(obj, k, bool) = v != 0;
}

void px_set_enum(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                 const struct px_key *k) {
  int v;
  if (px_parse_enum(b, w, kv, k->arg, &v)) *FIELD(obj, k, int) = v;
}

void px_set_dur(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                const struct px_key *k) {
  int64_t v;
  struct px_diag d;
  px_diag_clear(&d);
  if (px_duration_parse(kv->val, &v, &d) == 0) *FIELD(obj, k, int64_t) = v;
  else px_cb_error(b, w, "%s=%s: %s", kv->key, kv->val, d.msg);
}

/* Plain seconds, as Slurm's timeouts (KillWait=30). */
void px_set_secs(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                 const struct px_key *k) {
  uint64_t v;
  if (px_parse_u64(b, w, kv, 100000000, &v)) *FIELD(obj, k, int64_t) = (int64_t)v;
}

void px_set_mem(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                const struct px_key *k) {
  uint64_t v;
  struct px_diag d;
  px_diag_clear(&d);
  if (px_size_parse_mib(kv->val, &v, &d) == 0) *FIELD(obj, k, uint64_t) = v;
  else px_cb_error(b, w, "%s=%s: %s", kv->key, kv->val, d.msg);
}

void px_set_double(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                   const struct px_key *k) {
  char *end;
  double v = strtod(kv->val, &end);
  if (!kv->val[0] || *end || !isfinite(v) || v < 0 || v > 1e9 || isspace((unsigned char)kv->val[0])) {
    px_cb_bad(b, w, kv, "a non-negative number such as 1.0");
    return;
  }
  *FIELD(obj, k, double) = v;
}

const struct px_enum px_preempt_modes[] = {
    {"OFF", PX_PREEMPT_OFF},         {"CANCEL", PX_PREEMPT_CANCEL}, {"REQUEUE", PX_PREEMPT_REQUEUE},
    {"SUSPEND", PX_PREEMPT_SUSPEND}, {NULL, 0},
};

bool px_split_list(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, const char ***out,
                   uint32_t *n) {
  uint32_t count = 1;
  for (const char *p = kv->val; *p; p++) count += *p == ',';
  const char **v = px_cb_calloc(b, count, sizeof *v);
  if (!v) return false;
  const char *s = kv->val;
  for (uint32_t i = 0; i < count; i++) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == 0) {
      px_cb_bad(b, w, kv, "a comma-separated list without empty items");
      return false;
    }
    if (!(v[i] = px_arena_strndup(&b->c->arena, s, len))) {
      b->oom = true;
      return false;
    }
    s += len + 1;
  }
  *out = v;
  *n = count;
  return true;
}

/* One "name=count" item of a TRES list. */
static bool tres_item(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, const char *item,
                      struct px_tres *t) {
  const char *eq = strchr(item, '=');
  char name[32];
  if (!eq || eq == item || (size_t)(eq - item) >= sizeof name) goto bad;
  memcpy(name, item, (size_t)(eq - item));
  name[eq - item] = '\0';
  struct px_kv one = {kv->key, eq + 1};
  uint64_t v;
  if (!strcasecmp(name, "mem")) {
    struct px_diag d;
    if (px_size_parse_mib(eq + 1, &t->mem_mib, &d) == 0) return true;
    px_cb_error(b, w, "%s=%s: mem=%s: %s", kv->key, kv->val, eq + 1, d.msg);
    return false;
  }
  uint64_t *dst = !strcasecmp(name, "gres/gpu") ? &t->gpus
                  : !strcasecmp(name, "cpu")    ? &t->cpus
                  : !strcasecmp(name, "node")   ? &t->nodes
                                                : NULL;
  if (!dst) {
    if (!strncasecmp(name, "gres/gpu:", 9))
      px_cb_error(b, w, "%s=%s: limits per GPU type (%s) are not supported; use gres/gpu", kv->key, kv->val, name);
    else goto bad;
    return false;
  }
  if (!strcasecmp(eq + 1, "UNLIMITED") || !strcmp(eq + 1, "-1")) {
    *dst = PX_NOLIMIT;
    return true;
  }
  struct px_where w2 = *w;
  if (!px_parse_u64(b, &w2, &one, UINT64_MAX - 1, &v)) return false;
  *dst = v;
  return true;
bad:
  px_cb_error(b, w, "%s=%s: expected TRES limits like gres/gpu=64,cpu=512,mem=100G,node=4 (got '%s')",
              kv->key, kv->val, item);
  return false;
}

bool px_parse_tres(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, struct px_tres *t) {
  char buf[512];
  if (strlen(kv->val) >= sizeof buf || !kv->val[0]) {
    px_cb_bad(b, w, kv, "TRES limits like gres/gpu=64,cpu=512");
    return false;
  }
  snprintf(buf, sizeof buf, "%s", kv->val);
  struct px_tres tmp = *t;
  char *save = NULL;
  bool ok = true;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save))
    ok = tres_item(b, w, kv, item, &tmp) && ok;
  if (ok) *t = tmp;
  return ok;
}
