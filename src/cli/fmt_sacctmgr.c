/*
 * fmt_sacctmgr.c - sacctmgr's tables in Slurm 22.05's layout: each entity
 * (associations, accounts, users, QoS) is flattened into rows of named
 * cells from the slurmdb documents (/slurmdb/v0.0.39/...), then printed
 * through one table printer: right-aligned columns of sacctmgr's widths
 * (a longer value is cut and ends in '+', a longer title is cut), a space
 * after each, a line of dashes; -p / -P print cells between '|' (-p with a
 * trailing one); -n leaves the header out; format= picks the columns, in
 * its order, with an optional %N width (%-N: left-aligned).
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"

struct col {
  const char *title;
  int width;
};

static const struct col assoc_cols[] = {
    {"Cluster", 10}, {"Account", 10}, {"User", 10}, {"Partition", 10}, {"Share", 9},
    {"Priority", 10}, {"GrpJobs", 7}, {"GrpTRES", 13}, {"GrpSubmit", 9}, {"GrpWall", 11},
    {"GrpTRESMins", 13}, {"MaxJobs", 7}, {"MaxTRES", 13}, {"MaxTRESPerNode", 14}, {"MaxSubmit", 9},
    {"MaxWall", 11}, {"MaxTRESMins", 13}, {"QOS", 20}, {"Def QOS", 9}, {"GrpTRESRunMins", 13},
    {NULL, 0}};
static const struct col account_cols[] = {{"Account", 10}, {"Descr", 20}, {"Org", 20}, {NULL, 0}};
static const struct col user_cols[] = {{"User", 10}, {"Def Acct", 10}, {"Admin", 9}, {NULL, 0}};
static const struct col qos_cols[] = {
    {"Name", 10}, {"Priority", 10}, {"GraceTime", 10}, {"Preempt", 10}, {"PreemptExemptTime", 19},
    {"PreemptMode", 11}, {"Flags", 40}, {"UsageThres", 10}, {"UsageFactor", 11}, {"GrpTRES", 13},
    {"GrpTRESMins", 13}, {"GrpTRESRunMins", 13}, {"GrpJobs", 7}, {"GrpSubmit", 9}, {"GrpWall", 11},
    {"MaxTRES", 13}, {"MaxTRESPerNode", 14}, {"MaxTRESMins", 13}, {"MaxWall", 11}, {"MaxTRESPU", 13},
    {"MaxJobsPU", 9}, {"MaxSubmitPU", 11}, {"MaxTRESPA", 13}, {"MaxJobsPA", 9}, {"MaxSubmitPA", 11},
    {"MinTRES", 13}, {NULL, 0}};

/* ---- cells from the documents ---- */

static const json_t *path(const json_t *o, const char *a, const char *b, const char *c) {
  o = json_object_get(o, a);
  if (b) o = json_object_get(o, b);
  if (c) o = json_object_get(o, c);
  return o;
}

/* A v0.0.39 number with a "no value": its digits, or "" when unset/infinite. */
static void noval(char *out, size_t n, const json_t *v) {
  out[0] = 0;
  if (json_is_integer(v)) snprintf(out, n, "%lld", (long long)json_integer_value(v));
  else if (json_is_true(json_object_get(v, "set")) && !json_is_true(json_object_get(v, "infinite")))
    snprintf(out, n, "%lld", (long long)json_integer_value(json_object_get(v, "number")));
}

/* A TRES list as "cpu=4,mem=100M,node=2,gres/gpu=8". */
static void tres(char *out, size_t n, const json_t *list) {
  size_t i, len = 0;
  json_t *t;
  out[0] = 0;
  json_array_foreach(list, i, t) {
    const char *type = json_string_value(json_object_get(t, "type")), *name = json_string_value(json_object_get(t, "name"));
    bool mem = type && !strcmp(type, "mem");
    int k = snprintf(out + len, n - len, "%s%s%s%s=%lld%s", i ? "," : "", type ? type : "",
                     name && *name ? "/" : "", name ? name : "", (long long)json_integer_value(json_object_get(t, "count")),
                     mem ? "M" : "");
    if (k < 0 || (size_t)k >= n - len) break;
    len += (size_t)k;
  }
}

/* Minutes as sacctmgr writes a time: [D-]HH:MM:SS. */
static void minutes(char *out, size_t n, long long m) {
  if (m >= 1440) snprintf(out, n, "%lld-%02lld:%02lld:00", m / 1440, m % 1440 / 60, m % 60);
  else snprintf(out, n, "%02lld:%02lld:00", m / 60, m % 60);
}

static void set(json_t *row, const char *title, const char *v) {
  json_object_set_new(row, title, json_string(v ? v : ""));
}

static json_t *assoc_row(const json_t *a) {
  json_t *r = json_object();
  char buf[256];
  set(r, "Cluster", json_string_value(json_object_get(a, "cluster")));
  set(r, "Account", json_string_value(json_object_get(a, "account")));
  set(r, "User", json_string_value(json_object_get(a, "user")));
  set(r, "Partition", json_string_value(json_object_get(a, "partition")));
  json_int_t shares = json_integer_value(json_object_get(a, "shares_raw"));
  if (shares == 0x7FFFFFFF) snprintf(buf, sizeof buf, "parent");
  else snprintf(buf, sizeof buf, "%lld", (long long)shares);
  set(r, "Share", buf);
  noval(buf, sizeof buf, path(a, "max", "jobs", "per") ? json_object_get(path(a, "max", "jobs", "per"), "count") : NULL);
  set(r, "GrpJobs", buf);
  tres(buf, sizeof buf, path(a, "max", "tres", "total"));
  set(r, "GrpTRES", buf);
  noval(buf, sizeof buf, path(a, "max", "jobs", "active"));
  set(r, "MaxJobs", buf);
  tres(buf, sizeof buf, json_object_get(path(a, "max", "tres", "per"), "job"));
  set(r, "MaxTRES", buf);
  noval(buf, sizeof buf, path(a, "max", "jobs", "total"));
  set(r, "MaxSubmit", buf);
  size_t i, len = 0;
  json_t *q;
  buf[0] = 0;
  json_array_foreach(json_object_get(a, "qos"), i, q) {
    int k = snprintf(buf + len, sizeof buf - len, "%s%s", i ? "," : "", json_string_value(q));
    if (k < 0 || (size_t)k >= sizeof buf - len) break;
    len += (size_t)k;
  }
  set(r, "QOS", buf);
  set(r, "Def QOS", json_string_value(path(a, "default", "qos", NULL)));
  return r;
}

static json_t *account_row(const json_t *a) {
  json_t *r = json_object();
  set(r, "Account", json_string_value(json_object_get(a, "name")));
  set(r, "Descr", json_string_value(json_object_get(a, "description")));
  set(r, "Org", json_string_value(json_object_get(a, "organization")));
  return r;
}

static json_t *user_row(const json_t *u) {
  json_t *r = json_object();
  set(r, "User", json_string_value(json_object_get(u, "name")));
  set(r, "Def Acct", json_string_value(path(u, "default", "account", NULL)));
  set(r, "Admin", json_string_value(json_array_get(json_object_get(u, "administrator_level"), 0)));
  return r;
}

static json_t *qos_row(const json_t *q) {
  json_t *r = json_object(), *x;
  char buf[256];
  size_t i, len = 0;
  set(r, "Name", json_string_value(json_object_get(q, "name")));
  noval(buf, sizeof buf, json_object_get(q, "priority"));
  set(r, "Priority", buf[0] ? buf : "0");
  json_int_t grace = json_integer_value(path(q, "limits", "grace_time", NULL));
  snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", (long long)grace / 3600, (long long)grace % 3600 / 60,
           (long long)grace % 60);
  set(r, "GraceTime", buf);
  buf[0] = 0;
  json_array_foreach(path(q, "preempt", "list", NULL), i, x) {
    int k = snprintf(buf + len, sizeof buf - len, "%s%s", i ? "," : "", json_string_value(x));
    if (k < 0 || (size_t)k >= sizeof buf - len) break;
    len += (size_t)k;
  }
  set(r, "Preempt", buf);
  noval(buf, sizeof buf, path(q, "preempt", "exempt_time", NULL));
  if (buf[0]) minutes(buf, sizeof buf, strtoll(buf, NULL, 10) / 60);
  set(r, "PreemptExemptTime", buf);
  const char *mode = json_string_value(json_array_get(path(q, "preempt", "mode", NULL), 0));
  snprintf(buf, sizeof buf, "%s", !mode || !strcmp(mode, "DISABLED") ? "cluster" : mode);
  for (char *p = buf; *p; p++) *p = (char)tolower((unsigned char)*p);
  set(r, "PreemptMode", buf);
  const json_t *uf = path(q, "usage_factor", "number", NULL);
  snprintf(buf, sizeof buf, "%f", json_is_number(uf) ? json_number_value(uf) : 1.0);
  set(r, "UsageFactor", buf);
  const json_t *max = path(q, "limits", "max", NULL);
  noval(buf, sizeof buf, path(max, "wall_clock", "per", "job"));
  if (buf[0]) minutes(buf, sizeof buf, strtoll(buf, NULL, 10));
  set(r, "MaxWall", buf);
  tres(buf, sizeof buf, path(max, "tres", "per", "user"));
  set(r, "MaxTRESPU", buf);
  noval(buf, sizeof buf, path(max, "jobs", "active_jobs", "per") ? json_object_get(path(max, "jobs", "active_jobs", "per"), "user") : NULL);
  set(r, "MaxJobsPU", buf);
  noval(buf, sizeof buf, path(max, "jobs", "per", "user"));
  set(r, "MaxSubmitPU", buf);
  return r;
}

/* ---- the table printer ---- */

struct pick {
  const char *title;
  int width;   /* negative: left-aligned */
};

/* "account%20" into a column of cols; 0, or -1 when no column has that name. */
static int pick_one(const struct col *cols, const char *spec, struct pick *out) {
  char name[64];
  size_t n = strcspn(spec, "%");
  if (n >= sizeof name) return -1;
  memcpy(name, spec, n);
  name[n] = 0;
  for (const struct col *c = cols; c->title; c++) {
    char squeezed[64];
    size_t k = 0;
    for (const char *t = c->title; *t && k + 1 < sizeof squeezed; t++)
      if (*t != ' ') squeezed[k++] = *t;
    squeezed[k] = 0;
    if (strcasecmp(name, squeezed) && strcasecmp(name, c->title)) continue;
    out->title = c->title;
    out->width = spec[n] == '%' ? (int)strtol(spec + n + 1, NULL, 10) : c->width;
    return 0;
  }
  return -1;
}

static void cell(FILE *out, const char *v, int width, bool title) {
  int w = width < 0 ? -width : width, len = (int)strlen(v);
  if (len > w) {
    if (title) fprintf(out, "%.*s ", w, v);
    else fprintf(out, "%.*s+ ", w - 1, v);
  } else {
    fprintf(out, width < 0 ? "%-*s " : "%*s ", w, v);
  }
}

static void print_table(FILE *out, const struct pick *cols, size_t ncols, json_t *rows,
                        const struct px_sacctmgr_opts *o) {
  const char *sep = "|";
  bool parsable = o->parsable || o->parsable2;
  if (!o->noheader) {
    for (size_t i = 0; i < ncols; i++) {
      if (parsable) fprintf(out, "%s%s", cols[i].title, i + 1 < ncols || o->parsable ? sep : "");
      else cell(out, cols[i].title, cols[i].width, true);
    }
    fputc('\n', out);
    for (size_t i = 0; !parsable && i < ncols; i++) {
      int w = cols[i].width < 0 ? -cols[i].width : cols[i].width;
      for (int k = 0; k < w; k++) fputc('-', out);
      fputc(' ', out);
    }
    if (!parsable) fputc('\n', out);
  }
  size_t r;
  json_t *row;
  json_array_foreach(rows, r, row) {
    for (size_t i = 0; i < ncols; i++) {
      const char *v = json_string_value(json_object_get(row, cols[i].title));
      if (parsable) fprintf(out, "%s%s", v ? v : "", i + 1 < ncols || o->parsable ? sep : "");
      else cell(out, v ? v : "", cols[i].width, false);
    }
    fputc('\n', out);
  }
}

static int by_cell(const void *a, const void *b, const char *title) {
  const char *x = json_string_value(json_object_get(*(json_t *const *)a, title));
  const char *y = json_string_value(json_object_get(*(json_t *const *)b, title));
  return strcmp(x ? x : "", y ? y : "");
}
static int by_account(const void *a, const void *b) { return by_cell(a, b, "Account"); }
static int by_user(const void *a, const void *b) { return by_cell(a, b, "User"); }

int px_fmt_sacctmgr(FILE *out, enum px_sacctmgr_entity e, const json_t *doc,
                    const struct px_sacctmgr_opts *o, struct px_diag *d) {
  static const struct {
    const struct col *cols;
    const char *key;
    json_t *(*row)(const json_t *);
  } ents[] = {{assoc_cols, "associations", assoc_row}, {account_cols, "accounts", account_row},
              {user_cols, "users", user_row}, {qos_cols, "qos", qos_row}};
  const struct col *cols = ents[e].cols;
  struct pick picks[64];
  size_t n = 0;
  if (o->format && *o->format) {
    char spec[128];
    for (const char *p = o->format; *p && n < 64;) {
      size_t len = strcspn(p, ",");
      snprintf(spec, sizeof spec, "%.*s", (int)(len < sizeof spec ? len : sizeof spec - 1), p);
      if (pick_one(cols, spec, &picks[n]))
        return px_diag_set(d, PX_EINVAL, -1, "Unknown field '%s'", spec);
      n++;
      p += len + (p[len] == ',');
    }
  } else {
    for (; cols[n].title; n++) picks[n] = (struct pick){cols[n].title, cols[n].width};
  }
  const json_t *src = json_object_get(doc, ents[e].key);
  size_t i, nrows = json_array_size(src);
  json_t **v = calloc(nrows ? nrows : 1, sizeof *v), *rows = json_array();
  if (!v || !rows) {
    free(v);
    json_decref(rows);
    return PX_ENOMEM;
  }
  for (i = 0; i < nrows; i++) v[i] = ents[e].row(json_array_get(src, i));
  /* associations come in the tree's order; accounts, users by name as
   * sacctmgr lists them; QoS in the order they were defined */
  if (e == PX_SACCTMGR_ACCOUNT || e == PX_SACCTMGR_USER)
    qsort(v, nrows, sizeof *v, e == PX_SACCTMGR_ACCOUNT ? by_account : by_user);
  for (i = 0; i < nrows; i++) json_array_append_new(rows, v[i]);
  free(v);
  print_table(out, picks, n, rows, o);
  json_decref(rows);
  return 0;
}
