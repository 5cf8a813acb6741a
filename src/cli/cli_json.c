/*
 * cli_json.c - JSON encoding of the job spec and decoding of the view
 * structs, for the CLI's requests and replies.
 *
 * proto/ is to own the wire codecs (another branch writes them); until they
 * land on main this table-driven stopgap lets the CLI work end to end. Keys
 * are the C field names of core/jobspec.h and proto/views.h, which is what
 * proto's codecs are expected to use; when they land, these functions become
 * one-line wrappers.
 */
#include "cli/cli_json.h"
#include "cli/cli_fields.h"
#include "proto/jobspec_fields.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define FS(T, name, type) {#name, type, offsetof(T, name), sizeof(((T *)0)->name)}

/* Generated from proto's table (jobspec_fields.h): the names and types only. */
#define CJ_S F_STR
#define CJ_SV F_STRV
#define CJ_U32 F_U32
#define CJ_U64 F_U64
#define CJ_I32 F_I32
#define CJ_I64 F_I64
#define CJ_B F_BOOL
#define CJ_B_TRUE F_BOOL
#define CJ_ROW(n, kind, a, b) FS(struct px_jobspec, n, CJ_##kind),
const struct px_cli_field px_cli_spec_fields[] = {PX_JOBSPEC_FIELDS(CJ_ROW){NULL, 0, 0, 0}};
#undef CJ_ROW

const struct px_cli_field px_cli_job_fields[] = {
#define J(n, t) FS(struct px_job_info, n, t)
    J(job_id, F_U64),        J(array_job_id, F_U64),  J(array_task_id, F_U32),
    J(array_pending, F_STR), J(state, F_CHARS),       J(reason, F_CHARS),
    J(why, F_STR),           J(priority, F_U32),      J(submit_time, F_I64),
    J(eligible_time, F_I64), J(start_time, F_I64),    J(end_time, F_I64),
    J(expected_start, F_I64), J(nodelist, F_STR),     J(nnodes, F_U32),
    J(ncpus, F_U32),         J(ngpus, F_U32),         J(mem_mib, F_U64),
    J(gpus_by_node, F_STR),  J(exit_code, F_I32),     J(term_signal, F_I32),
    J(restarts, F_U32),      J(submit_seq, F_U64),    J(start_seq, F_U64),     J(end_seq, F_U64),
    J(cancelled_by, F_STR),  J(billable_tres_s, F_DBL),
    J(peak_mem_mib, F_U64),  J(cpu_time_ms, F_U64),   J(prio_age, F_U32),
    J(prio_fairshare, F_U32), J(prio_jobsize, F_U32), J(prio_partition, F_U32),
    J(prio_qos, F_U32),      J(prio_site, F_U32),     J(prio_assoc, F_U32),
#undef J
    {NULL, 0, 0, 0}};

static const struct px_cli_field node_fields[] = {
#define J(n, t) FS(struct px_node_info, n, t)
    J(name, F_STR),          J(addr, F_STR),          J(partitions, F_STR),
    J(state, F_CHARS),       J(reason, F_STR),        J(cpus, F_U32),
    J(cpus_alloc, F_U32),    J(gpus, F_U32),          J(gpus_alloc, F_U32),
    J(gpu_type, F_STR),      J(features, F_STR),      J(mem_mib, F_U64),
    J(mem_alloc_mib, F_U64), J(last_heartbeat, F_I64), J(gpus_out, F_U32),
    J(gpu_health, F_STR),    J(reboot, F_STR),        J(gpus_shared, F_U32),
    J(gpu_share_used, F_U32), J(gres, F_STR),        J(gres_used, F_STR),
    J(reason_user, F_STR),   J(reason_time, F_I64),
#undef J
    {NULL, 0, 0, 0}};

static const struct px_cli_field part_fields[] = {
#define J(n, t) FS(struct px_partition_info, n, t)
    J(name, F_STR),          J(nodelist, F_STR),      J(is_default, F_BOOL),
    J(up, F_BOOL),           J(max_time_s, F_I64),    J(default_time_s, F_I64),
    J(nnodes, F_U32),        J(ngpus, F_U32),         J(gpus_alloc, F_U32),
    J(max_nodes, F_U32),     J(priority_tier, F_U32), J(nodes_idle, F_U32),
    J(nodes_alloc, F_U32),   J(nodes_mixed, F_U32),   J(nodes_down, F_U32),
    J(nodes_drained, F_U32),
#undef J
    {NULL, 0, 0, 0}};

static const struct px_cli_field share_fields[] = {
#define J(n, t) FS(struct px_share_info, n, t)
    J(account, F_STR),       J(user, F_STR),          J(depth, F_U32),
    J(raw_shares, F_U32),    J(norm_shares, F_DBL),   J(raw_usage, F_DBL),
    J(norm_usage, F_DBL),    J(effective_usage, F_DBL), J(fairshare, F_DBL),
    J(level_fs, F_DBL),
#undef J
    {NULL, 0, 0, 0}};

static int encode_field(json_t *o, const struct px_cli_field *f, const void *base) {
  const char *p = (const char *)base + f->off;
  json_t *v = NULL;
  switch (f->type) {
  /* JSON carries only UTF-8: a string that is not (json_string gives NULL)
   * fails the whole encoding with PX_EINVAL instead of silently vanishing. */
  case F_STR:
    if (*(char *const *)p && !(v = json_string(*(char *const *)p))) return PX_EINVAL;
    break;
  case F_CHARS:
    if (*p && !(v = json_string(p))) return PX_EINVAL;
    break;
  case F_STRV: {
    char *const *sv = *(char **const *)p;
    if (!sv) break;
    if (!(v = json_array())) return PX_ENOMEM;
    for (; *sv; sv++) {
      json_t *e = json_string(*sv);
      if (!e || json_array_append_new(v, e)) {
        json_decref(v);
        return e ? PX_ENOMEM : PX_EINVAL;
      }
    }
    break;
  }
  case F_U32: if (*(const uint32_t *)p) v = json_integer(*(const uint32_t *)p); break;
  case F_U64: if (*(const uint64_t *)p) v = json_integer((json_int_t) * (const uint64_t *)p); break;
  case F_I32: if (*(const int32_t *)p) v = json_integer(*(const int32_t *)p); break;
  case F_I64: if (*(const int64_t *)p) v = json_integer(*(const int64_t *)p); break;
  case F_BOOL: v = json_boolean(*(const bool *)p); break;
  case F_DBL: v = json_real(*(const double *)p); break;
  }
  if (!v) return 0;
  return json_object_set_new(o, f->name, v) ? PX_ENOMEM : 0;
}

static int decode_field(const json_t *v, const struct px_cli_field *f, void *base) {
  char *p = (char *)base + f->off;
  switch (f->type) {
  case F_STR:
    if (!json_is_string(v)) return PX_EPROTO;
    free(*(char **)p);
    return (*(char **)p = strdup(json_string_value(v))) ? 0 : PX_ENOMEM;
  case F_CHARS:
    if (!json_is_string(v)) return PX_EPROTO;
    snprintf(p, f->size, "%s", json_string_value(v));
    return 0;
  case F_STRV: {
    if (!json_is_array(v)) return PX_EPROTO;
    size_t n = json_array_size(v);
    char **sv = calloc(n + 1, sizeof *sv);
    if (!sv) return PX_ENOMEM;
    for (size_t i = 0; i < n; i++) {
      const char *s = json_string_value(json_array_get(v, i));
      if (!s || !(sv[i] = strdup(s))) {
        for (size_t k = 0; k < i; k++) free(sv[k]);
        free(sv);
        return s ? PX_ENOMEM : PX_EPROTO;
      }
    }
    *(char ***)p = sv;
    return 0;
  }
  case F_BOOL:
    if (!json_is_boolean(v)) return PX_EPROTO;
    *(bool *)p = json_is_true(v);
    return 0;
  case F_DBL:
    if (!json_is_number(v)) return PX_EPROTO;
    *(double *)p = json_number_value(v);
    return 0;
  default: break;
  }
  if (!json_is_integer(v)) return PX_EPROTO;
  json_int_t x = json_integer_value(v);
  switch (f->type) {
  case F_U32: *(uint32_t *)p = (uint32_t)x; break;
  case F_U64: *(uint64_t *)p = (uint64_t)x; break;
  case F_I32: *(int32_t *)p = (int32_t)x; break;
  default: *(int64_t *)p = (int64_t)x; break;
  }
  return 0;
}

static int encode(json_t *o, const struct px_cli_field *fs, const void *base) {
  for (const struct px_cli_field *f = fs; f->name; f++) {
    int rc = encode_field(o, f, base);
    if (rc) return rc;
  }
  return 0;
}

/* Unknown keys are skipped (a newer server may send more). */
static int decode(const json_t *o, const struct px_cli_field *fs, void *base) {
  if (!json_is_object(o)) return PX_EPROTO;
  for (const struct px_cli_field *f = fs; f->name; f++) {
    const json_t *v = json_object_get(o, f->name);
    if (!v || json_is_null(v)) continue;
    int rc = decode_field(v, f, base);
    if (rc) return rc;
  }
  return 0;
}

json_t *px_cli_jobspec_to_json(const struct px_jobspec *s) {
  json_t *o = json_object();
  if (o && encode(o, px_cli_spec_fields, s)) {
    json_decref(o);
    return NULL;
  }
  return o;
}

json_t *px_cli_job_to_json(const struct px_job_info *j) {
  json_t *o = json_object(), *spec = px_cli_jobspec_to_json(&j->spec);
  /* encode() leaves zeros out; these two are always written so that the
   * answer does not depend on the decoder's defaults ("None" is not empty). */
  bool bad = !o || !spec || encode(o, px_cli_job_fields, j) ||
             json_object_set_new(o, "array_task_id", json_integer(j->array_task_id)) ||
             json_object_set_new(o, "reason", json_string(j->reason));
  if (!bad) {
    bad = json_object_set_new(o, "spec", spec) != 0; /* takes spec even on failure */
    spec = NULL;
  }
  if (bad) {
    json_decref(spec);
    json_decref(o);
    return NULL;
  }
  return o;
}

/* An accounting row's "steps": srun's steps of the attempt (sacct N.0), in
 * the order the server writes them (cli_jobscan.c looks keys up in order). */
const struct px_cli_field px_cli_step_fields[] = {
#define J(n, t) FS(struct px_step_info, n, t)
    J(step_id, F_U32),       J(name, F_STR),          J(state, F_CHARS),
    J(exit_code, F_I32),     J(term_signal, F_I32),   J(start_time, F_I64),
    J(end_time, F_I64),      J(nnodes, F_U32),        J(ntasks, F_U32),
    J(nodelist, F_STR),      J(peak_mem_mib, F_U64),  J(cpu_time_ms, F_U64),
#undef J
    {NULL, 0, 0, 0}};

static void steps_free(struct px_job_info *j) {
  for (uint32_t i = 0; j->steps && i < j->nsteps; i++) free(j->steps[i].name), free(j->steps[i].nodelist);
  free(j->steps);
  j->steps = NULL, j->nsteps = 0;
}

static int steps_from_json(const json_t *arr, struct px_job_info *j) {
  size_t n = json_array_size(arr);
  if (!n) return 0;
  if (n > UINT32_MAX || !(j->steps = calloc(n, sizeof *j->steps))) return PX_ENOMEM;
  for (size_t i = 0; i < n; i++, j->nsteps++)
    if (decode(json_array_get(arr, i), px_cli_step_fields, &j->steps[i])) return PX_EPROTO;
  return 0;
}

int px_cli_job_from_json(const json_t *o, struct px_job_info *j) {
  memset(j, 0, sizeof *j);
  px_jobspec_init(&j->spec);
  j->array_task_id = UINT32_MAX;
  snprintf(j->reason, sizeof j->reason, "None");
  int rc = decode(o, px_cli_job_fields, j);
  /* The server leaves fields at their default out of its answers, and an
   * array_task_id of 0 is such a default: in an array job, absent means task
   * 0 (an array's pending record always carries UINT32_MAX explicitly). */
  if (!rc && j->array_job_id && !json_object_get(o, "array_task_id")) j->array_task_id = 0;
  /* Accounting rows are flat: name, user, account, ... beside the job's fields. */
  const json_t *spec = json_object_get(o, "spec");
  if (!rc) rc = decode(spec ? spec : o, px_cli_spec_fields, &j->spec);
  if (!rc) rc = steps_from_json(json_object_get(o, "steps"), j);
  if (rc) px_cli_job_fini(j);
  return rc;
}

void px_cli_job_fini(struct px_job_info *j) {
  px_jobspec_fini(&j->spec);
  steps_free(j);
  char **strs[] = {&j->array_pending, &j->why, &j->nodelist, &j->gpus_by_node, &j->cancelled_by};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
    free(*strs[i]);
    *strs[i] = NULL;
  }
}

int px_cli_node_from_json(const json_t *o, struct px_node_info *n) {
  memset(n, 0, sizeof *n);
  int rc = decode(o, node_fields, n);
  if (rc) px_cli_node_fini(n);
  return rc;
}

void px_cli_node_fini(struct px_node_info *n) {
  char **strs[] = {&n->name, &n->addr, &n->partitions, &n->reason, &n->reason_user, &n->gpu_type, &n->features, &n->gpu_health, &n->reboot,
                   &n->gres, &n->gres_used};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
    free(*strs[i]);
    *strs[i] = NULL;
  }
}

int px_cli_partition_from_json(const json_t *o, struct px_partition_info *p) {
  memset(p, 0, sizeof *p);
  p->up = true;
  int rc = decode(o, part_fields, p);
  if (rc) px_cli_partition_fini(p);
  return rc;
}

void px_cli_partition_fini(struct px_partition_info *p) {
  free(p->name);
  free(p->nodelist);
  p->name = p->nodelist = NULL;
}

int px_cli_share_from_json(const json_t *o, struct px_share_info *s) {
  memset(s, 0, sizeof *s);
  int rc = decode(o, share_fields, s);
  if (rc) px_cli_share_fini(s);
  return rc;
}

void px_cli_share_fini(struct px_share_info *s) {
  free(s->account);
  free(s->user);
  s->account = s->user = NULL;
}

json_t *px_cli_node_to_json(const struct px_node_info *n) {
  json_t *o = json_object();
  if (o && encode(o, node_fields, n)) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Decodes each element with dec into an array of elements of `size` bytes. */
static int list_from_json(const json_t *arr, size_t size, int (*dec)(const json_t *, void *),
                          void (*fini)(void *), void **out, size_t *n) {
  if (!json_is_array(arr)) return PX_EPROTO;
  size_t len = json_array_size(arr);
  char *v = calloc(len ? len : 1, size);
  if (!v) return PX_ENOMEM;
  for (size_t i = 0; i < len; i++) {
    int rc = dec(json_array_get(arr, i), v + i * size);
    if (rc) {
      for (size_t k = 0; k < i; k++) fini(v + k * size);
      free(v);
      return rc;
    }
  }
  *out = v;
  *n = len;
  return 0;
}

#define LIST_CODEC(T, plural, single)                                                          \
  static int single##_dec(const json_t *o, void *p) { return px_cli_##single##_from_json(o, p); } \
  static void single##_fin(void *p) { px_cli_##single##_fini(p); }                             \
  int px_cli_##plural##_from_json(const json_t *arr, T **out, size_t *n) {                     \
    return list_from_json(arr, sizeof(T), single##_dec, single##_fin, (void **)out, n);        \
  }                                                                                            \
  void px_cli_##plural##_free(T *v, size_t n) {                                                \
    for (size_t i = 0; v && i < n; i++) px_cli_##single##_fini(&v[i]);                         \
    free(v);                                                                                   \
  }
LIST_CODEC(struct px_job_info, jobs, job)
LIST_CODEC(struct px_node_info, nodes, node)
LIST_CODEC(struct px_partition_info, partitions, partition)
LIST_CODEC(struct px_share_info, shares, share)
