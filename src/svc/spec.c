/*
 * spec.c - the service spec's parser (spec.h): libyaml's document API
 * loads the text into nodes that remember their line, and each mapping is
 * read through a table of its fields, so an unknown or repeated key, a
 * wrong type or a bad value is refused with the line and the field's path
 * ("line 9: resources.gpus: must be 0 to 1024, not 4096").
 */
#include "svc/spec.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util/units.h"

struct pctx {
  yaml_document_t *doc;
  struct px_svc_spec *s;
  struct px_diag *d;
  unsigned flags;
  int line_replicas, line_health_port, line_ports, line_autoscale, line_update, line_restart;
  bool has_replicas;
};

static int line_of(const yaml_node_t *n) { return (int)n->start_mark.line + 1; }

static int fail(struct pctx *p, const yaml_node_t *n, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(struct pctx *p, const yaml_node_t *n, const char *field, const char *fmt, ...) {
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int line = n ? line_of(n) : 1;
  px_diag_set(p->d, PX_EINVAL, -1, "line %d: %s: %s", line, field, msg);
  if (p->d) p->d->line = line;
  return PX_EINVAL;
}

/* ---- scalars ---- */

static int scalar(struct pctx *p, const yaml_node_t *n, const char *field, const char **out) {
  if (n->type != YAML_SCALAR_NODE) return fail(p, n, field, "must be a single value");
  *out = (const char *)n->data.scalar.value;
  if (strlen(*out) != n->data.scalar.length) return fail(p, n, field, "contains a NUL byte");
  return 0;
}

static int get_str(struct pctx *p, const yaml_node_t *n, const char *field, char *buf, size_t size) {
  const char *v = "";
  int rc = scalar(p, n, field, &v);
  if (rc) return rc;
  if (strlen(v) >= size) return fail(p, n, field, "longer than %zu bytes", size - 1);
  for (const char *c = v; *c; c++)
    if ((unsigned char)*c < 0x20) return fail(p, n, field, "contains a control character");
  snprintf(buf, size, "%s", v);
  return 0;
}

static int get_i64(struct pctx *p, const yaml_node_t *n, const char *field, int64_t lo, int64_t hi,
                   int64_t *out) {
  const char *v = "";
  int rc = scalar(p, n, field, &v);
  if (rc) return rc;
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (!*v || *end || errno || isspace((unsigned char)*v))
    return fail(p, n, field, "must be a whole number, not '%.40s'", v);
  if (x < lo && lo == 0) return fail(p, n, field, "must be 0 or more, not %lld", x);
  if (x < lo || x > hi)
    return fail(p, n, field, "must be %lld to %lld, not %lld", (long long)lo, (long long)hi, x);
  *out = x;
  return 0;
}

static int get_u32(struct pctx *p, const yaml_node_t *n, const char *field, uint32_t lo, uint32_t hi,
                   uint32_t *out) {
  int64_t x;
  int rc = get_i64(p, n, field, lo, hi, &x);
  if (!rc) *out = (uint32_t)x;
  return rc;
}

static int get_secs(struct pctx *p, const yaml_node_t *n, const char *field, int64_t *out) {
  return get_i64(p, n, field, 0, 366 * 86400, out);
}

static int get_bool(struct pctx *p, const yaml_node_t *n, const char *field, bool *out) {
  const char *v = "";
  int rc = scalar(p, n, field, &v);
  if (rc) return rc;
  if (!strcmp(v, "true") || !strcmp(v, "yes")) *out = true;
  else if (!strcmp(v, "false") || !strcmp(v, "no")) *out = false;
  else return fail(p, n, field, "must be true or false, not '%.40s'", v);
  return 0;
}

/* A sequence of strings as a NULL-terminated vector (malloc'd). */
static int get_strv(struct pctx *p, const yaml_node_t *n, const char *field, char ***out) {
  if (n->type != YAML_SEQUENCE_NODE) return fail(p, n, field, "must be a list");
  size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
  if (!cnt) return fail(p, n, field, "must not be empty");
  if (cnt > 4096) return fail(p, n, field, "over 4096 items");
  char **v = calloc(cnt + 1, sizeof *v);
  if (!v) return PX_ENOMEM;
  *out = v;
  for (size_t i = 0; i < cnt; i++) {
    yaml_node_t *it = yaml_document_get_node(p->doc, n->data.sequence.items.start[i]);
    char sub[64];
    snprintf(sub, sizeof sub, "%s[%zu]", field, i);
    const char *s;
    int rc = scalar(p, it, sub, &s);
    if (rc) return rc;
    if (strlen(s) > 65536) return fail(p, it, sub, "longer than 65536 bytes");
    if (!(v[i] = strdup(s))) return PX_ENOMEM;
  }
  return 0;
}

/* ---- mappings through a table of fields ---- */

typedef int (*field_fn)(struct pctx *p, yaml_node_t *n, const char *path);
struct field {
  const char *key;
  field_fn fn;
};

static int walk(struct pctx *p, yaml_node_t *map, const char *prefix, const struct field *tab,
                size_t ntab) {
  if (map->type != YAML_MAPPING_NODE)
    return fail(p, map, *prefix ? prefix : "spec", "must be a mapping of fields");
  uint64_t seen = 0;
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
    yaml_node_t *v = yaml_document_get_node(p->doc, pr->value);
    const char *key;
    int rc = scalar(p, k, *prefix ? prefix : "spec", &key);
    if (rc) return rc;
    char path[96];
    snprintf(path, sizeof path, "%s%s%.40s", prefix, *prefix ? "." : "", key);
    size_t i = 0;
    while (i < ntab && strcmp(tab[i].key, key)) i++;
    if (i == ntab) return fail(p, k, path, "unknown field");
    if (seen >> i & 1) return fail(p, k, path, "given twice");
    seen |= UINT64_C(1) << i;
    if ((rc = tab[i].fn(p, v, path))) return rc;
  }
  return 0;
}

#define WALK(p, n, path, tab) walk(p, n, path, tab, sizeof tab / sizeof tab[0])

/* ---- the fields ---- */

static bool name_ok(const char *s) {
  size_t n = strlen(s);
  if (!n || !islower((unsigned char)s[0]) || s[n - 1] == '-') return false;
  for (; *s; s++)
    if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-') return false;
  return true;
}

static int f_name(struct pctx *p, yaml_node_t *n, const char *path) {
  int rc = get_str(p, n, path, p->s->name, sizeof p->s->name);
  if (rc) return rc;
  p->s->line_name = line_of(n);
  if (!name_ok(p->s->name))
    return fail(p, n, path, "'%s' must be lower-case letters, digits and '-', starting with a letter",
                p->s->name);
  return 0;
}
static int f_account(struct pctx *p, yaml_node_t *n, const char *path) {
  p->s->line_account = line_of(n);
  return get_str(p, n, path, p->s->account, sizeof p->s->account);
}
static int f_partition(struct pctx *p, yaml_node_t *n, const char *path) {
  p->s->line_partition = line_of(n);
  return get_str(p, n, path, p->s->partition, sizeof p->s->partition);
}
static int f_qos(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_str(p, n, path, p->s->qos, sizeof p->s->qos);
}
static int f_replicas(struct pctx *p, yaml_node_t *n, const char *path) {
  p->line_replicas = line_of(n);
  p->has_replicas = true;
  return get_u32(p, n, path, 0, PX_SVC_MAX_REPLICAS, &p->s->replicas);
}

static int f_as_min(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_u32(p, n, path, 0, PX_SVC_MAX_REPLICAS, &p->s->min);
}
static int f_as_max(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_u32(p, n, path, 1, PX_SVC_MAX_REPLICAS, &p->s->max);
}
static int f_as_target(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_u32(p, n, path, 1, 1000000, &p->s->target_in_flight);
}
static int f_as_up(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_secs(p, n, path, &p->s->scale_up_window_s);
}
static int f_as_down(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_secs(p, n, path, &p->s->scale_down_window_s);
}
static int f_autoscale(struct pctx *p, yaml_node_t *n, const char *path) {
  static const struct field tab[] = {{"min", f_as_min}, {"max", f_as_max},
                                     {"target_in_flight", f_as_target},
                                     {"scale_up_window_s", f_as_up},
                                     {"scale_down_window_s", f_as_down}};
  p->s->autoscale = true;
  p->line_autoscale = line_of(n);
  return WALK(p, n, path, tab);
}

static int f_gpus(struct pctx *p, yaml_node_t *n, const char *path) {
  p->s->line_gpus = line_of(n);
  return get_u32(p, n, path, 0, 1024, &p->s->gpus);
}
static int f_cpus(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_u32(p, n, path, 1, 100000, &p->s->cpus);
}
static int f_memory(struct pctx *p, yaml_node_t *n, const char *path) {
  const char *v = "";
  int rc = scalar(p, n, path, &v);
  if (rc) return rc;
  struct px_diag sd;
  if (px_size_parse_mib(v, &p->s->mem_mib, &sd) || p->s->mem_mib > (UINT64_C(1) << 40))
    return fail(p, n, path, "'%.40s' is not a size (4096, 512M, 4G)", v);
  return 0;
}
static int f_constraint(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_str(p, n, path, p->s->constraint, sizeof p->s->constraint);
}
static int f_resources(struct pctx *p, yaml_node_t *n, const char *path) {
  static const struct field tab[] = {{"gpus", f_gpus}, {"cpus", f_cpus}, {"memory", f_memory},
                                     {"constraint", f_constraint}};
  return WALK(p, n, path, tab);
}

static int f_command(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_strv(p, n, path, &p->s->argv);
}
static int f_script(struct pctx *p, yaml_node_t *n, const char *path) {
  const char *v = "";
  int rc = scalar(p, n, path, &v);
  if (rc) return rc;
  if (!*v || strlen(v) > (4u << 20)) return fail(p, n, path, "must be 1 byte to 4 MiB");
  return (p->s->script = strdup(v)) ? 0 : PX_ENOMEM;
}
static int f_workdir(struct pctx *p, yaml_node_t *n, const char *path) {
  char buf[4096];
  int rc = get_str(p, n, path, buf, sizeof buf);
  if (rc) return rc;
  if (buf[0] != '/') return fail(p, n, path, "must be an absolute path");
  return (p->s->workdir = strdup(buf)) ? 0 : PX_ENOMEM;
}

static bool env_name_ok(const char *k) {
  if (!isalpha((unsigned char)*k) && *k != '_') return false;
  for (; *k; k++)
    if (!isalnum((unsigned char)*k) && *k != '_') return false;
  return true;
}
static int f_env(struct pctx *p, yaml_node_t *n, const char *path) {
  if (n->type != YAML_MAPPING_NODE) return fail(p, n, path, "must be a mapping NAME: value");
  size_t cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
  if (cnt > 1024) return fail(p, n, path, "over 1024 variables");
  if (!(p->s->env = calloc(cnt + 1, sizeof *p->s->env))) return PX_ENOMEM;
  for (size_t i = 0; i < cnt; i++) {
    yaml_node_pair_t *pr = &n->data.mapping.pairs.start[i];
    yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
    yaml_node_t *v = yaml_document_get_node(p->doc, pr->value);
    const char *ks, *vs;
    int rc = scalar(p, k, path, &ks);
    if (rc) return rc;
    char sub[96];
    snprintf(sub, sizeof sub, "%s.%.40s", path, ks);
    if (!env_name_ok(ks) || strlen(ks) > 256) return fail(p, k, sub, "not a variable name");
    if ((rc = scalar(p, v, sub, &vs))) return rc;
    if (strlen(vs) > 65536) return fail(p, v, sub, "longer than 65536 bytes");
    for (size_t j = 0; j < i; j++)
      if (!strncmp(p->s->env[j], ks, strlen(ks)) && p->s->env[j][strlen(ks)] == '=')
        return fail(p, k, sub, "given twice");
    size_t len = strlen(ks) + strlen(vs) + 2;
    if (!(p->s->env[i] = malloc(len))) return PX_ENOMEM;
    snprintf(p->s->env[i], len, "%s=%s", ks, vs);
  }
  return 0;
}

static bool port_name_ok(const char *s) {
  size_t n = strlen(s);
  if (!n || n > 15 || !islower((unsigned char)s[0])) return false;
  for (; *s; s++)
    if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-') return false;
  return true;
}
static int f_ports(struct pctx *p, yaml_node_t *n, const char *path) {
  if (n->type != YAML_SEQUENCE_NODE) return fail(p, n, path, "must be a list of port names");
  p->line_ports = line_of(n);
  size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
  if (cnt > PX_SVC_MAX_PORTS) return fail(p, n, path, "at most %d ports", PX_SVC_MAX_PORTS);
  for (size_t i = 0; i < cnt; i++) {
    yaml_node_t *it = yaml_document_get_node(p->doc, n->data.sequence.items.start[i]);
    char sub[64];
    snprintf(sub, sizeof sub, "%s[%zu]", path, i);
    char *name = p->s->ports[i];
    int rc = get_str(p, it, sub, name, sizeof p->s->ports[i]);
    if (rc) return rc;
    if (!port_name_ok(name))
      return fail(p, it, sub, "'%s' must be 1-15 lower-case letters, digits and '-'", name);
    for (size_t j = 0; j < i; j++)
      if (!strcmp(p->s->ports[j], name))
        return fail(p, it, sub, "port '%s' clashes with %s[%zu]: each port needs its own name", name,
                    path, j);
    p->s->nports++;
  }
  return 0;
}

static int f_h_type(struct pctx *p, yaml_node_t *n, const char *path) {
  char t[16];
  int rc = get_str(p, n, path, t, sizeof t);
  for (int k = PX_SVC_HEALTH_NONE; !rc && k <= PX_SVC_HEALTH_COMMAND; k++)
    if (!strcmp(t, px_svc_health_type_name((enum px_svc_health_type)k))) {
      if (p->s->health.type && p->s->health.type != (enum px_svc_health_type)k)
        return fail(p, n, path, "'%s' with another check given", t);
      p->s->health.type = (enum px_svc_health_type)k;
      return 0;
    }
  return rc ? rc : fail(p, n, path, "must be none, http, tcp or command");
}
static int set_type(struct pctx *p, yaml_node_t *n, const char *path, enum px_svc_health_type t) {
  if (p->s->health.type && p->s->health.type != t)
    return fail(p, n, path, "one check only (http, tcp or command)");
  p->s->health.type = t;
  return 0;
}
static int f_h_http(struct pctx *p, yaml_node_t *n, const char *path) {
  int rc = set_type(p, n, path, PX_SVC_HEALTH_HTTP);
  if (!rc) rc = get_str(p, n, path, p->s->health.path, sizeof p->s->health.path);
  if (!rc && p->s->health.path[0] != '/') return fail(p, n, path, "must be a path starting with '/'");
  return rc;
}
static int f_h_tcp(struct pctx *p, yaml_node_t *n, const char *path) {
  bool on = false;
  int rc = get_bool(p, n, path, &on);
  if (rc) return rc;
  return on ? set_type(p, n, path, PX_SVC_HEALTH_TCP) : 0;
}
static int f_h_command(struct pctx *p, yaml_node_t *n, const char *path) {
  int rc = set_type(p, n, path, PX_SVC_HEALTH_COMMAND);
  return rc ? rc : get_strv(p, n, path, &p->s->health.command);
}
static int f_h_port(struct pctx *p, yaml_node_t *n, const char *path) {
  p->line_health_port = line_of(n);
  return get_str(p, n, path, p->s->health.port, sizeof p->s->health.port);
}
static int f_h_interval(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_u32(p, n, path, 1, 3600, &p->s->health.interval_s);
}
static int f_h_timeout(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_u32(p, n, path, 1, 3600, &p->s->health.timeout_s);
}
static int f_h_threshold(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_u32(p, n, path, 1, 1000, &p->s->health.failure_threshold);
}
static int f_h_grace(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_u32(p, n, path, 0, 86400, &p->s->health.startup_grace_s);
}
static int f_health(struct pctx *p, yaml_node_t *n, const char *path) {
  static const struct field tab[] = {
      {"type", f_h_type},         {"http", f_h_http},         {"tcp", f_h_tcp},
      {"command", f_h_command},   {"port", f_h_port},         {"interval_s", f_h_interval},
      {"timeout_s", f_h_timeout}, {"failure_threshold", f_h_threshold},
      {"startup_grace_s", f_h_grace}};
  return WALK(p, n, path, tab);
}

static int f_r_backoff(struct pctx *p, yaml_node_t *n, const char *path) {
  int rc = get_secs(p, n, path, &p->s->backoff_s);
  if (!rc && !p->s->backoff_s) return fail(p, n, path, "must be 1 or more");
  return rc;
}
static int f_r_max(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_secs(p, n, path, &p->s->max_backoff_s);
}
static int f_restart(struct pctx *p, yaml_node_t *n, const char *path) {
  static const struct field tab[] = {{"backoff_s", f_r_backoff}, {"max_backoff_s", f_r_max}};
  p->line_restart = line_of(n);
  return WALK(p, n, path, tab);
}
static int f_spread(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_bool(p, n, path, &p->s->spread);
}
static int f_u_surge(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_u32(p, n, path, 0, PX_SVC_MAX_REPLICAS, &p->s->max_surge);
}
static int f_u_unavail(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_u32(p, n, path, 0, PX_SVC_MAX_REPLICAS, &p->s->max_unavailable);
}
static int f_u_deadline(struct pctx *p, yaml_node_t *n, const char *path) {
  int rc = get_secs(p, n, path, &p->s->progress_deadline_s);
  if (!rc && !p->s->progress_deadline_s) return fail(p, n, path, "must be 1 or more");
  return rc;
}
static int f_update(struct pctx *p, yaml_node_t *n, const char *path) {
  static const struct field tab[] = {{"max_surge", f_u_surge}, {"max_unavailable", f_u_unavail},
                                     {"progress_deadline_s", f_u_deadline}};
  p->line_update = line_of(n);
  return WALK(p, n, path, tab);
}
static int f_drain(struct pctx *p, yaml_node_t *n, const char *path) {
  return get_i64(p, n, path, 0, 3600, &p->s->drain_s);
}
static int f_user(struct pctx *p, yaml_node_t *n, const char *path) {
  if (!(p->flags & PX_SVC_SPEC_INTERNAL)) return fail(p, n, path, "unknown field");
  return get_str(p, n, path, p->s->user, sizeof p->s->user);
}
static int f_uid(struct pctx *p, yaml_node_t *n, const char *path) {
  if (!(p->flags & PX_SVC_SPEC_INTERNAL)) return fail(p, n, path, "unknown field");
  return get_u32(p, n, path, 0, UINT32_MAX - 1, &p->s->uid);
}
static int f_gid(struct pctx *p, yaml_node_t *n, const char *path) {
  if (!(p->flags & PX_SVC_SPEC_INTERNAL)) return fail(p, n, path, "unknown field");
  return get_u32(p, n, path, 0, UINT32_MAX - 1, &p->s->gid);
}

static const struct field top[] = {
    {"name", f_name},       {"account", f_account},     {"partition", f_partition},
    {"qos", f_qos},         {"replicas", f_replicas},   {"autoscale", f_autoscale},
    {"resources", f_resources}, {"command", f_command}, {"script", f_script},
    {"env", f_env},         {"workdir", f_workdir},     {"ports", f_ports},
    {"health", f_health},   {"restart", f_restart},     {"spread", f_spread},
    {"update", f_update},   {"drain_s", f_drain},       {"user", f_user},
    {"uid", f_uid},         {"gid", f_gid}};

/* ---- what one field cannot say alone ---- */

static int check_whole(struct pctx *p, yaml_node_t *root) {
  struct px_svc_spec *s = p->s;
  yaml_node_t at = *root;
  if (!s->name[0]) return fail(p, root, "name", "missing");
  if (!s->argv == !s->script) return fail(p, root, s->argv ? "script" : "command",
                                          s->argv ? "give command or script, not both"
                                                  : "missing (give command or script)");
  if (s->autoscale) {
    at.start_mark.line = (size_t)(p->line_autoscale - 1);
    if (!s->max) return fail(p, &at, "autoscale.max", "missing");
    if (!s->target_in_flight) return fail(p, &at, "autoscale.target_in_flight", "missing");
    if (s->min > s->max) return fail(p, &at, "autoscale.min", "%u is over max %u", s->min, s->max);
    if (!p->has_replicas) s->replicas = s->min;
    at.start_mark.line = (size_t)(p->line_replicas - 1);
    if (p->has_replicas && (s->replicas < s->min || s->replicas > s->max))
      return fail(p, &at, "replicas", "%u is outside autoscale's %u to %u", s->replicas, s->min, s->max);
  }
  struct px_svc_health *h = &s->health;
  if (h->type == PX_SVC_HEALTH_HTTP || h->type == PX_SVC_HEALTH_TCP) {
    at.start_mark.line = (size_t)((p->line_health_port ? p->line_health_port : line_of(root)) - 1);
    if (!s->nports) return fail(p, &at, "health.port", "a %s check needs a port: list it in ports",
                                px_svc_health_type_name(h->type));
    if (!h->port[0]) snprintf(h->port, sizeof h->port, "%s", s->ports[0]);
    bool found = false;
    for (uint32_t i = 0; i < s->nports; i++) found |= !strcmp(s->ports[i], h->port);
    if (!found) return fail(p, &at, "health.port", "no port named '%s' in ports", h->port);
  } else if (h->port[0]) {
    at.start_mark.line = (size_t)(p->line_health_port - 1);
    return fail(p, &at, "health.port", "only an http or tcp check has a port");
  }
  if (h->timeout_s > h->interval_s) h->timeout_s = h->interval_s;
  at.start_mark.line = (size_t)((p->line_update ? p->line_update : line_of(root)) - 1);
  if (!s->max_surge && !s->max_unavailable)
    return fail(p, &at, "update", "max_surge and max_unavailable may not both be 0");
  at.start_mark.line = (size_t)((p->line_restart ? p->line_restart : line_of(root)) - 1);
  if (s->max_backoff_s < s->backoff_s)
    return fail(p, &at, "restart.max_backoff_s", "%lld is under backoff_s %lld",
                (long long)s->max_backoff_s, (long long)s->backoff_s);
  return 0;
}

static void defaults(struct px_svc_spec *s) {
  s->replicas = 1;
  s->cpus = 1;
  s->scale_down_window_s = 60;
  s->health.interval_s = 2;
  s->health.timeout_s = 1;
  s->health.failure_threshold = 3;
  s->health.startup_grace_s = 10;
  s->backoff_s = 1;
  s->max_backoff_s = 300;
  s->max_surge = 1;
  s->progress_deadline_s = 120;
  s->drain_s = 2;
}

static int load(struct pctx *p, const char *text, size_t len) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return PX_ENOMEM;
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  int rc = 0;
  if (!yaml_parser_load(&parser, p->doc)) {
    int line = (int)parser.problem_mark.line + 1;
    px_diag_set(p->d, PX_EPARSE, -1, "line %d: spec: not YAML: %s", line,
                parser.problem ? parser.problem : "unreadable");
    if (p->d) p->d->line = line;
    rc = PX_EPARSE;
  }
  yaml_parser_delete(&parser);
  return rc;
}

int px_svc_spec_parse(const char *text, size_t len, unsigned flags, struct px_svc_spec *out,
                      struct px_diag *d) {
  px_svc_spec_init(out);
  defaults(out);
  yaml_document_t doc;
  struct pctx p = {.doc = &doc, .s = out, .d = d, .flags = flags};
  px_diag_clear(d);
  int rc = load(&p, text, len);
  if (rc) {
    px_svc_spec_fini(out);
    return rc;
  }
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root) rc = fail(&p, NULL, "spec", "empty");
  else if (!(rc = WALK(&p, root, "", top))) rc = check_whole(&p, root);
  yaml_document_delete(&doc);
  if (rc) px_svc_spec_fini(out);
  return rc;
}
