/*
 * slurmrestd_submit.c - slurmrestd's job_submission body (v0.0.39:
 * {"script": "...", "job": {job_desc_msg}}) into a struct px_jobspec.
 *
 * Each field of Slurm's job description is one row: mapped onto the native
 * spec (a string, a count, a time in minutes, a TRES string), taken and
 * ignored with a warning (what Phalanx has no use for, such as
 * get_user_environment), or unknown: refused, naming the field, so that a
 * request Phalanx would run differently from Slurm is never accepted
 * quietly. The native JSON object built here then goes through the one
 * strict codec (proto/jobspec_json.c), which applies the same limits as to
 * every native submit. Pure: no server state, fuzzed (fuzz_slurmrestd.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/jobspec_json.h"
#include "server/http/slurmrestd.h"

enum kind {
  K_STR,      /* string -> same-typed native member */
  K_U32,      /* integer or {"set","number"} -> count */
  K_MINUTES,  /* integer minutes or no-val -> seconds (infinite: unlimited) */
  K_UNIX,     /* Unix time or no-val -> seconds */
  K_MIB,      /* MiB or no-val */
  K_BOOL,
  K_NICE,     /* signed */
  K_ENV,      /* ["K=V", ...] or {"K":"V"} */
  K_NODES,    /* "N", "N-M", N or [N, M] */
  K_TRES,     /* "gres:gpu:[type:]N" or "gres/gpu[:type]=N" */
  K_EXCLUSIVE,/* "user", "exclusive", "mcs", true -> exclusive; "oversubscribe", false -> not */
  K_LIST,     /* string or array of strings, joined with ',' */
  K_IGNORE,   /* taken, ignored with a warning */
};

struct field {
  const char *name;  /* Slurm's */
  enum kind kind;
  const char *to;    /* the native member ("" for K_IGNORE) */
  uint64_t max;      /* counts */
};

#define U32MAX 4294967294ULL
static const struct field fields[] = {
    {"name", K_STR, "name", 0},
    {"account", K_STR, "account", 0},
    {"partition", K_STR, "partition", 0},
    {"qos", K_STR, "qos", 0},
    {"reservation", K_STR, "reservation", 0},
    {"comment", K_STR, "comment", 0},
    {"dependency", K_STR, "dependency", 0},
    {"array", K_STR, "array", 0},
    {"constraints", K_STR, "constraint", 0},
    {"current_working_directory", K_STR, "workdir", 0},
    {"standard_output", K_STR, "stdout_path", 0},
    {"standard_error", K_STR, "stderr_path", 0},
    {"standard_input", K_STR, "stdin_path", 0},
    {"open_mode", K_STR, "open_mode", 0},
    {"distribution", K_STR, "distribution", 0},
    {"mail_user", K_STR, "mail_user", 0},
    {"mail_type", K_LIST, "mail_type", 0},
    {"excluded_nodes", K_LIST, "exclude", 0},
    {"required_nodes", K_LIST, "nodelist", 0},
    {"environment", K_ENV, "env", 0},
    {"time_limit", K_MINUTES, "time_limit_s", 0},
    {"time_minimum", K_MINUTES, "time_min_s", 0},
    {"begin_time", K_UNIX, "begin_s", 0},
    {"memory_per_node", K_MIB, "mem_per_node_mib", 0},
    {"memory_per_cpu", K_MIB, "mem_per_cpu_mib", 0},
    {"tasks", K_U32, "ntasks", U32MAX},
    {"tasks_per_node", K_U32, "ntasks_per_node", U32MAX},
    {"cpus_per_task", K_U32, "cpus_per_task", U32MAX},
    {"cpus_per_gpu", K_U32, "cpus_per_gpu", U32MAX},
    {"minimum_nodes", K_U32, "nodes_min", U32MAX},
    {"maximum_nodes", K_U32, "nodes_max", U32MAX},
    {"nodes", K_NODES, "", 0},
    {"tres_per_node", K_TRES, "gpus_per_node", 0},
    {"tres_per_job", K_TRES, "gpus", 0},
    {"tres_per_task", K_TRES, "gpus_per_task", 0},
    {"hold", K_BOOL, "hold", 0},
    {"requeue", K_BOOL, "requeue", 0},
    {"nice", K_NICE, "nice", 0},
    {"exclusive", K_EXCLUSIVE, "exclusive", 0},
    {"get_user_environment", K_IGNORE, "", 0},
    {"wckey", K_IGNORE, "", 0},
    {"cpu_frequency", K_IGNORE, "", 0},
    {"cpu_binding", K_IGNORE, "", 0},
    {"cpu_binding_flags", K_IGNORE, "", 0},
    {"kill_on_node_fail", K_IGNORE, "", 0},
    {"profile", K_IGNORE, "", 0},
    {"account_gather_frequency", K_IGNORE, "", 0},
};

static int bad(struct px_diag *d, const char *field, const char *what) {
  return px_diag_set(d, PX_EINVAL, -1, "job.%s: %s", field, what);
}

/* An integer, or v0.0.39's {"set":bool,"infinite":bool,"number":int}.
 * *set false: no value (left to the default); *inf: infinite. */
static int number(const json_t *v, const char *field, int64_t lo, int64_t hi, int64_t *out,
                  bool *set, bool *inf, struct px_diag *d) {
  *set = true, *inf = false;
  if (json_is_object(v)) {
    const json_t *s = json_object_get(v, "set"), *i = json_object_get(v, "infinite");
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) if (strcmp(k, "set") && strcmp(k, "infinite") && strcmp(k, "number"))
      return bad(d, field, "expected an integer or {\"set\",\"infinite\",\"number\"}");
    if ((s && !json_is_boolean(s)) || (i && !json_is_boolean(i)))
      return bad(d, field, "set and infinite must be true or false");
    if (json_is_true(i)) return *inf = true, *set = false, 0;
    if (s && !json_is_true(s)) return *set = false, 0;
    v = json_object_get(v, "number");
    if (!v) return bad(d, field, "set without a number");
  }
  if (!json_is_integer(v)) return bad(d, field, "expected an integer");
  json_int_t n = json_integer_value(v);
  if (n < lo || n > hi)
    return px_diag_set(d, PX_ERANGE, -1, "job.%s: %lld is out of range (%lld to %lld)", field,
                       (long long)n, (long long)lo, (long long)hi);
  *out = n;
  return 0;
}

static int put_int(json_t *o, const char *to, int64_t n) {
  return json_object_set_new(o, to, json_integer(n)) ? PX_ENOMEM : 0;
}

static int put_str(json_t *o, const char *to, const char *s) {
  return json_object_set_new(o, to, json_string(s)) ? PX_ENOMEM : 0;
}

/* "8" / "2-4" / 8 / [2, 4] into nodes_min, nodes_max. */
static int nodes_field(const json_t *v, json_t *o, struct px_diag *d) {
  long long lo, hi;
  if (json_is_integer(v)) {
    lo = hi = json_integer_value(v);
  } else if (json_is_array(v) && json_array_size(v) == 2 && json_is_integer(json_array_get(v, 0)) &&
             json_is_integer(json_array_get(v, 1))) {
    lo = json_integer_value(json_array_get(v, 0));
    hi = json_integer_value(json_array_get(v, 1));
  } else if (json_is_string(v)) {
    const char *s = json_string_value(v);
    char tail = 0;
    int n = sscanf(s, "%lld-%lld%c", &lo, &hi, &tail);
    if (n == 1 && strchr(s, '-') == NULL && sscanf(s, "%lld%c", &lo, &tail) == 1) hi = lo;
    else if (n != 2) return bad(d, "nodes", "expected a count such as \"2\" or a range \"2-4\"");
  } else {
    return bad(d, "nodes", "expected a count, a range \"2-4\" or [min, max]");
  }
  if (lo < 1 || hi < lo || hi > 100000)
    return bad(d, "nodes", "the range must be 1 <= min <= max <= 100000");
  int rc = put_int(o, "nodes_min", lo);
  return rc ? rc : lo == hi ? 0 : put_int(o, "nodes_max", hi);
}

/* "gres:gpu:2", "gres:gpu:a100:2", "gres/gpu=2", "gres/gpu:a100=2" (Slurm
 * writes both forms across versions): the GPU count, and its type. */
static int tres_field(const struct field *f, const json_t *v, json_t *o, struct px_diag *d) {
  if (!json_is_string(v)) return bad(d, f->name, "expected a TRES string such as \"gres:gpu:2\"");
  char buf[128], type[40] = "";
  const char *s = json_string_value(v);
  if (strlen(s) >= sizeof buf) return bad(d, f->name, "too long");
  snprintf(buf, sizeof buf, "%s", s);
  char *p = buf;
  if ((strncmp(p, "gres:gpu", 8) && strncmp(p, "gres/gpu", 8)) || (p[8] && p[8] != ':' && p[8] != '='))
    return bad(d, f->name, "only GPUs are supported (\"gres:gpu:N\" or \"gres/gpu=N\")");
  p += 8;
  /* the count follows the '=' ("gres/gpu:h100=2"), else the last ':' */
  char *count = strchr(p, '=') ? strchr(p, '=') : strrchr(p, ':');
  if (!*p || !count) return bad(d, f->name, "missing the GPU count (\"gres:gpu:2\")");
  if (p[0] == ':' && count > p + 1) { /* a type between */
    size_t n = (size_t)(count - p - 1);
    if (n >= sizeof type) return bad(d, f->name, "GPU type too long");
    memcpy(type, p + 1, n);
    type[n] = 0;
    for (char *t = type; *t; t++)
      if (!isalnum((unsigned char)*t) && *t != '_' && *t != '-' && *t != '.')
        return bad(d, f->name, "GPU type: letters, digits, '_', '-' and '.' only");
  }
  char *end;
  unsigned long long n = strtoull(count + 1, &end, 10);
  if (end == count + 1 || *end || n > 1000000) return bad(d, f->name, "the GPU count is not a number 0 to 1000000");
  int rc = put_int(o, f->to, (int64_t)n);
  if (!rc && type[0]) rc = put_str(o, "gpu_type", type);
  return rc;
}

/* ["K=V", ...] (v0.0.39) or {"K": "V"} (v0.0.38 and before). */
static int env_field(const json_t *v, json_t *o, struct px_diag *d) {
  json_t *env = json_array(), *x;
  size_t i;
  const char *k;
  if (!env) return PX_ENOMEM;
  if (json_is_array(v)) {
    json_array_foreach(v, i, x) {
      const char *s = json_string_value(x);
      if (!s || !strchr(s, '=') || s[0] == '=') {
        json_decref(env);
        return px_diag_set(d, PX_EINVAL, -1, "job.environment[%zu]: expected \"NAME=value\"", i);
      }
      json_array_append(env, x);
    }
  } else if (json_is_object(v)) {
    json_object_foreach((json_t *)v, k, x) {
      if (!json_is_string(x) || !*k || strchr(k, '=')) {
        json_decref(env);
        return px_diag_set(d, PX_EINVAL, -1, "job.environment.%.64s: expected a string value", k);
      }
      char *kv = malloc(strlen(k) + json_string_length(x) + 2);
      if (kv) snprintf(kv, strlen(k) + json_string_length(x) + 2, "%s=%s", k, json_string_value(x));
      if (!kv || json_array_append_new(env, json_string(kv))) {
        free(kv);
        json_decref(env);
        return PX_ENOMEM;
      }
      free(kv);
    }
  } else {
    json_decref(env);
    return bad(d, "environment", "expected an array of \"NAME=value\" strings");
  }
  return json_object_set_new(o, "env", env) ? PX_ENOMEM : 0;
}

/* A string or an array of strings, joined by commas. */
static int list_field(const struct field *f, const json_t *v, json_t *o, struct px_diag *d) {
  if (json_is_string(v)) return put_str(o, f->to, json_string_value(v));
  if (!json_is_array(v)) return bad(d, f->name, "expected a string or an array of strings");
  size_t i, len = 1;
  json_t *x;
  json_array_foreach(v, i, x) {
    if (!json_is_string(x)) return bad(d, f->name, "expected an array of strings");
    len += json_string_length(x) + 1;
  }
  char *s = calloc(1, len);
  if (!s) return PX_ENOMEM;
  json_array_foreach(v, i, x) {
    if (i) strncat(s, ",", len - strlen(s) - 1);
    strncat(s, json_string_value(x), len - strlen(s) - 1);
  }
  int rc = put_str(o, f->to, s);
  free(s);
  return rc;
}

static int exclusive_field(const json_t *v, json_t *o, struct px_diag *d) {
  static const char *const yes[] = {"user", "exclusive", "mcs", "topo"};
  bool on;
  if (json_is_boolean(v)) {
    on = json_is_true(v);
  } else if (json_is_string(v)) {
    const char *s = json_string_value(v);
    on = false;
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) on = on || !strcmp(s, yes[i]);
    if (!on && strcmp(s, "oversubscribe"))
      return bad(d, "exclusive", "expected user, exclusive, mcs, topo or oversubscribe");
  } else {
    return bad(d, "exclusive", "expected a string or true/false");
  }
  return json_object_set_new(o, "exclusive", json_boolean(on)) ? PX_ENOMEM : 0;
}

/* Numbers with a "no value": counts, minutes, times, MiB, nice. */
static int number_field(const struct field *f, const json_t *v, json_t *o, struct px_diag *d) {
  int64_t n = 0, hi = f->kind == K_U32       ? (int64_t)f->max
                      : f->kind == K_NICE    ? 2147483645
                      : f->kind == K_UNIX    ? INT64_C(32503680000) /* year 3000 */
                                             : INT64_C(1) << 40;    /* minutes, MiB */
  bool set, inf;
  int rc = number(v, f->name, f->kind == K_NICE ? -2147483645 : 0, hi, &n, &set, &inf, d);
  if (rc || (!set && !inf)) return rc;
  if (inf && f->kind != K_MINUTES) return bad(d, f->name, "cannot be infinite");
  if (f->kind == K_MINUTES) n = inf ? PX_TIME_UNLIMITED : n * 60;
  return put_int(o, f->to, n);
}

static int one_field(const struct field *f, const json_t *v, json_t *o, json_t *warnings,
                     struct px_diag *d) {
  switch (f->kind) {
  case K_STR:
    return json_is_string(v) ? put_str(o, f->to, json_string_value(v))
                             : bad(d, f->name, "expected a string");
  case K_BOOL:
    if (!json_is_boolean(v)) return bad(d, f->name, "expected true or false");
    return json_object_set_new(o, f->to, json_boolean(json_is_true(v))) ? PX_ENOMEM : 0;
  case K_ENV: return env_field(v, o, d);
  case K_NODES: return nodes_field(v, o, d);
  case K_TRES: return tres_field(f, v, o, d);
  case K_LIST: return list_field(f, v, o, d);
  case K_EXCLUSIVE: return exclusive_field(v, o, d);
  case K_IGNORE:
    if (warnings)
      json_array_append_new(warnings, json_pack("{ss ss}", "description",
                                                "field taken but ignored by Phalanx", "source", f->name));
    return 0;
  default: return number_field(f, v, o, d);
  }
}

static const struct field *find_field(const char *name) {
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
    if (!strcmp(fields[i].name, name)) return &fields[i];
  return NULL;
}

/* The job object into the native spec's JSON members. */
static int job_members(const json_t *job, json_t *o, json_t *warnings, struct px_diag *d) {
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)job, k, v) {
    if (!strcmp(k, "script")) continue; /* v0.0.40's place for it: read by top_level */
    const struct field *f = find_field(k);
    if (!f) return px_diag_set(d, PX_EINVAL, -1, "job.%.64s: unknown or unsupported field", k);
    int rc = one_field(f, v, o, warnings, d);
    if (rc) return rc;
  }
  return 0;
}

static int top_level(const json_t *body, const json_t **job, const char **script, struct px_diag *d) {
  const char *k;
  json_t *v;
  if (!json_is_object(body)) return px_diag_set(d, PX_EINVAL, -1, "body: expected a JSON object");
  json_object_foreach((json_t *)body, k, v) {
    if (!strcmp(k, "jobs"))
      return px_diag_set(d, PX_EINVAL, -1, "jobs: heterogeneous jobs are not supported");
    if (strcmp(k, "job") && strcmp(k, "script"))
      return px_diag_set(d, PX_EINVAL, -1, "%.64s: unknown field (expected script and job)", k);
  }
  *job = json_object_get(body, "job");
  if (!json_is_object(*job)) return px_diag_set(d, PX_EINVAL, -1, "job: missing or not an object");
  const json_t *s = json_object_get(body, "script");
  if (!s) s = json_object_get(*job, "script"); /* v0.0.40 moved it into job */
  if (!json_is_string(s) || !json_string_length(s))
    return px_diag_set(d, PX_EINVAL, -1, "script: missing or empty (the batch script to run)");
  if (strncmp(json_string_value(s), "#!", 2))
    return px_diag_set(d, PX_EINVAL, -1, "script: must start with \"#!\" as sbatch requires");
  *script = json_string_value(s);
  return 0;
}

int px_sr_submit_decode(const json_t *body, struct px_jobspec *spec, json_t *warnings,
                        struct px_diag *d) {
  const json_t *job = NULL;
  const char *script = NULL;
  px_jobspec_init(spec);
  int rc = top_level(body, &job, &script, d);
  if (rc) return rc;
  json_t *o = json_pack("{ss}", "script", script);
  if (!o) return PX_ENOMEM;
  rc = job_members(job, o, warnings, d);
  if (!rc) rc = px_jobspec_from_json(o, spec, "job.", d);
  json_decref(o);
  if (rc) {
    px_jobspec_fini(spec);
    px_jobspec_init(spec);
  }
  return rc;
}

/* ---- job updates: POST job/{job_id} ---- */

int px_sr_update_decode(const json_t *body, struct px_sr_update *u, json_t *warnings,
                        struct px_diag *d) {
  memset(u, 0, sizeof *u);
  if (!json_is_object(body)) return px_diag_set(d, PX_EINVAL, -1, "body: expected a JSON object (a job description)");
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)body, k, v) {
    int64_t n = 0;
    bool set, inf;
    int rc = 0;
    if (!strcmp(k, "time_limit")) {
      rc = number(v, k, 1, INT64_C(1) << 40, &n, &set, &inf, d);
      if (!rc && (set || inf)) u->time_limit_s = inf ? PX_TIME_UNLIMITED : n * 60, u->fields |= PX_SR_UPD_TIME;
    } else if (!strcmp(k, "nice")) {
      rc = number(v, k, -2147483645, 2147483645, &n, &set, &inf, d);
      if (!rc && set) u->nice = (int32_t)n, u->fields |= PX_SR_UPD_NICE;
    } else if (!strcmp(k, "priority")) {
      rc = number(v, k, 0, UINT32_MAX - 1, &n, &set, &inf, d);
      if (!rc && set) u->priority = (uint32_t)n, u->fields |= PX_SR_UPD_PRIORITY;
    } else if (!strcmp(k, "hold")) {
      if (!json_is_boolean(v)) return bad(d, k, "expected true or false");
      u->fields |= json_is_true(v) ? PX_SR_UPD_HOLD : PX_SR_UPD_RELEASE;
    } else if (find_field(k) && (find_field(k)->kind == K_IGNORE || !strcmp(k, "environment"))) {
      if (warnings) /* clients send the environment with every job description */
        json_array_append_new(warnings, json_pack("{ss ss}", "description",
                                                  "field ignored in an update", "source", k));
    } else {
      return px_diag_set(d, PX_EINVAL, -1, "job.%.64s: cannot be changed (time_limit, nice, priority and hold can)", k);
    }
    if (rc) return rc;
  }
  if (!u->fields) return px_diag_set(d, PX_EINVAL, -1, "body: nothing to update");
  return 0;
}
