/*
 * spec_util.c - a service spec's life cycle, its canonical JSON (what the
 * journal keeps; spec.c reads it back), the comparison that tells a new
 * generation from a change of count, and the checks against the cluster's
 * configuration.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc/spec.h"

static const char *const health_names[] = {"none", "http", "tcp", "command"};

const char *px_svc_health_type_name(enum px_svc_health_type t) {
  return (unsigned)t < 4 ? health_names[t] : "none";
}

void px_svc_spec_init(struct px_svc_spec *s) { memset(s, 0, sizeof *s); }

static void free_strv(char **v) {
  for (char **p = v; p && *p; p++) free(*p);
  free(v);
}

void px_svc_spec_fini(struct px_svc_spec *s) {
  free_strv(s->argv);
  free_strv(s->env);
  free_strv(s->health.command);
  free(s->script);
  free(s->workdir);
  px_svc_spec_init(s);
}

static int dup_strv(char ***dst, char *const *src) {
  *dst = NULL;
  if (!src) return 0;
  size_t n = 0;
  while (src[n]) n++;
  char **v = calloc(n + 1, sizeof *v);
  if (!v) return PX_ENOMEM;
  *dst = v;
  for (size_t i = 0; i < n; i++)
    if (!(v[i] = strdup(src[i]))) return PX_ENOMEM;
  return 0;
}

int px_svc_spec_copy(struct px_svc_spec *dst, const struct px_svc_spec *src) {
  *dst = *src;
  dst->argv = dst->env = dst->health.command = NULL;
  dst->script = dst->workdir = NULL;
  int rc = dup_strv(&dst->argv, src->argv);
  rc |= dup_strv(&dst->env, src->env);
  rc |= dup_strv(&dst->health.command, src->health.command);
  if (src->script && !(dst->script = strdup(src->script))) rc = PX_ENOMEM;
  if (src->workdir && !(dst->workdir = strdup(src->workdir))) rc = PX_ENOMEM;
  if (rc) px_svc_spec_fini(dst);
  return rc ? PX_ENOMEM : 0;
}

/* ---- canonical JSON ---- */

static json_t *strv_json(char *const *v) {
  json_t *a = json_array();
  for (; a && v && *v; v++) json_array_append_new(a, json_string(*v));
  return a;
}

static json_t *env_json(char *const *v) {
  json_t *o = json_object();
  for (; o && v && *v; v++) {
    const char *eq = strchr(*v, '=');
    char key[260];
    snprintf(key, sizeof key, "%.*s", (int)(eq - *v), *v);
    json_object_set_new(o, key, json_string(eq + 1));
  }
  return o;
}

static json_t *health_json(const struct px_svc_health *h) {
  json_t *o = json_pack("{ss sI sI sI sI}", "type", px_svc_health_type_name(h->type), "interval_s",
                        (json_int_t)h->interval_s, "timeout_s", (json_int_t)h->timeout_s,
                        "failure_threshold", (json_int_t)h->failure_threshold, "startup_grace_s",
                        (json_int_t)h->startup_grace_s);
  if (!o) return NULL;
  if (h->type == PX_SVC_HEALTH_HTTP) json_object_set_new(o, "http", json_string(h->path));
  if (h->type == PX_SVC_HEALTH_COMMAND) json_object_set_new(o, "command", strv_json(h->command));
  if (h->port[0]) json_object_set_new(o, "port", json_string(h->port));
  return o;
}

/* Everything a replica runs with: the part whose change is a new generation. */
static json_t *template_json(const struct px_svc_spec *s) {
  json_t *o = json_object();
  if (!o) return NULL;
  const char *strs[][2] = {{"name", s->name}, {"account", s->account}, {"partition", s->partition},
                           {"qos", s->qos}, {"user", s->user}};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
    if (strs[i][1][0]) json_object_set_new(o, strs[i][0], json_string(strs[i][1]));
  json_object_set_new(o, "uid", json_integer(s->uid));
  json_object_set_new(o, "gid", json_integer(s->gid));
  json_t *r = json_pack("{sI sI}", "gpus", (json_int_t)s->gpus, "cpus", (json_int_t)s->cpus);
  if (r && s->mem_mib) json_object_set_new(r, "memory", json_integer((json_int_t)s->mem_mib));
  if (r && s->constraint[0]) json_object_set_new(r, "constraint", json_string(s->constraint));
  json_object_set_new(o, "resources", r);
  if (s->argv) json_object_set_new(o, "command", strv_json(s->argv));
  if (s->script) json_object_set_new(o, "script", json_string(s->script));
  if (s->env) json_object_set_new(o, "env", env_json(s->env));
  if (s->workdir) json_object_set_new(o, "workdir", json_string(s->workdir));
  json_t *ports = json_array();
  for (uint32_t i = 0; ports && i < s->nports; i++) json_array_append_new(ports, json_string(s->ports[i]));
  json_object_set_new(o, "ports", ports);
  json_object_set_new(o, "health", health_json(&s->health));
  json_object_set_new(o, "spread", json_boolean(s->spread));
  return o;
}

static char *dump(json_t *o) {
  char *t = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  json_decref(o);
  return t;
}

char *px_svc_spec_json(const struct px_svc_spec *s) {
  json_t *o = template_json(s);
  if (!o) return NULL;
  json_object_set_new(o, "replicas", json_integer(s->replicas));
  if (s->autoscale)
    json_object_set_new(o, "autoscale",
                        json_pack("{sI sI sI sI sI}", "min", (json_int_t)s->min, "max",
                                  (json_int_t)s->max, "target_in_flight",
                                  (json_int_t)s->target_in_flight, "scale_up_window_s",
                                  (json_int_t)s->scale_up_window_s, "scale_down_window_s",
                                  (json_int_t)s->scale_down_window_s));
  json_object_set_new(o, "restart", json_pack("{sI sI}", "backoff_s", (json_int_t)s->backoff_s,
                                              "max_backoff_s", (json_int_t)s->max_backoff_s));
  json_object_set_new(o, "update", json_pack("{sI sI sI}", "max_surge", (json_int_t)s->max_surge,
                                             "max_unavailable", (json_int_t)s->max_unavailable,
                                             "progress_deadline_s",
                                             (json_int_t)s->progress_deadline_s));
  json_object_set_new(o, "drain_s", json_integer(s->drain_s));
  return dump(o);
}

bool px_svc_spec_same_template(const struct px_svc_spec *a, const struct px_svc_spec *b) {
  char *ta = dump(template_json(a)), *tb = dump(template_json(b));
  bool same = ta && tb && !strcmp(ta, tb);
  free(ta);
  free(tb);
  return same;
}

/* ---- against the configuration ---- */

static int conf_fail(struct px_diag *d, int line, const char *field, const char *msg, ...)
    __attribute__((format(printf, 4, 5)));
static int conf_fail(struct px_diag *d, int line, const char *field, const char *fmt, ...) {
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  px_diag_set(d, PX_EINVAL, -1, "line %d: %s: %s", line ? line : 1, field, msg);
  if (d) d->line = line ? line : 1;
  return PX_EINVAL;
}

int px_svc_spec_check_conf(const struct px_svc_spec *s, const struct px_conf *conf,
                           struct px_diag *d) {
  uint32_t part = conf->default_partition;
  if (s->partition[0]) {
    part = PX_NONE;
    for (uint32_t i = 0; i < conf->npartitions; i++)
      if (!strcmp(conf->partitions[i].name, s->partition)) part = i;
    if (part == PX_NONE)
      return conf_fail(d, s->line_partition, "partition", "no partition named '%s'", s->partition);
  }
  if (part == PX_NONE)
    return conf_fail(d, s->line_name, "partition", "none given and the cluster has no default");
  const struct px_conf_partition *p = &conf->partitions[part];
  uint32_t most_gpus = 0, most_cpus = 0;
  uint64_t most_mem = 0;
  for (uint32_t i = 0; i < p->nnodes; i++) {
    const struct px_conf_node *n = &conf->nodes[p->nodes[i]];
    if (n->ngpu > most_gpus) most_gpus = n->ngpu;
    if (n->cpus > most_cpus) most_cpus = n->cpus;
    if (n->mem_mib > most_mem) most_mem = n->mem_mib;
  }
  if (s->gpus > most_gpus)
    return conf_fail(d, s->line_gpus, "resources.gpus",
                     "%u GPUs per replica, but the nodes of partition %s have at most %u", s->gpus,
                     p->name, most_gpus);
  if (s->cpus > most_cpus)
    return conf_fail(d, s->line_gpus, "resources.cpus",
                     "%u CPUs per replica, but the nodes of partition %s have at most %u", s->cpus,
                     p->name, most_cpus);
  if (s->mem_mib > most_mem)
    return conf_fail(d, s->line_gpus, "resources.memory",
                     "%llu MiB per replica, but the nodes of partition %s have at most %llu",
                     (unsigned long long)s->mem_mib, p->name, (unsigned long long)most_mem);
  return 0;
}
