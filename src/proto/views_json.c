/*
 * views_json.c - field tables of the client views and their life cycle
 * (the _fini functions declared in views.h).
 */
#include "proto/views_json.h"

#include <stdlib.h>
#include <string.h>

#include "proto/jfield.h"
#include "proto/jobspec_json.h"

#define BIG 1048576 /* long text fields: hostlists, explanations */

#define J struct px_job_info
static const struct px_jfield job_fields[] = {
    PX_JF_NUM(J, job_id, PX_JF_U64, 0, INT64_MAX),
    PX_JF_NUM(J, array_job_id, PX_JF_U64, 0, INT64_MAX),
    PX_JF_NUM(J, array_task_id, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_S(J, array_pending, BIG, 0),
    PX_JF_C(J, state),
    PX_JF_C(J, reason),
    PX_JF_S(J, why, BIG, PX_JF_CTRL_OK),
    PX_JF_NUM(J, priority, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(J, submit_time, PX_JF_I64, 0, INT64_MAX),
    PX_JF_NUM(J, eligible_time, PX_JF_I64, 0, INT64_MAX),
    PX_JF_NUM(J, start_time, PX_JF_I64, 0, INT64_MAX),
    PX_JF_NUM(J, end_time, PX_JF_I64, 0, INT64_MAX),
    PX_JF_NUM(J, expected_start, PX_JF_I64, 0, INT64_MAX),
    PX_JF_S(J, nodelist, BIG, 0),
    PX_JF_NUM(J, nnodes, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(J, ncpus, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(J, ngpus, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(J, mem_mib, PX_JF_U64, 0, INT64_MAX),
    PX_JF_S(J, gpus_by_node, BIG, 0),
    PX_JF_NUM(J, exit_code, PX_JF_I32, INT32_MIN, INT32_MAX),
    PX_JF_NUM(J, term_signal, PX_JF_I32, 0, 128),
    PX_JF_NUM(J, restarts, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(J, submit_seq, PX_JF_U64, 0, INT64_MAX),
    PX_JF_NUM(J, start_seq, PX_JF_U64, 0, INT64_MAX),
    PX_JF_NUM(J, end_seq, PX_JF_U64, 0, INT64_MAX),
    PX_JF_S(J, cancelled_by, 64, 0),
    {"billable_tres_s", PX_JF_F64, offsetof(J, billable_tres_s), 0, 0, 0, 0},
    PX_JF_NUM(J, peak_mem_mib, PX_JF_U64, 0, INT64_MAX),
    PX_JF_NUM(J, cpu_time_ms, PX_JF_U64, 0, INT64_MAX),
    PX_JF_NUM(J, prio_age, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(J, prio_fairshare, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(J, prio_jobsize, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(J, prio_partition, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(J, prio_qos, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(J, prio_site, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(J, prio_assoc, PX_JF_U32, 0, UINT32_MAX),
};
#undef J

#define N struct px_node_info
static const struct px_jfield node_fields[] = {
    PX_JF_S(N, name, 64, 0),
    PX_JF_S(N, addr, 256, 0),
    PX_JF_S(N, partitions, 4096, 0),
    PX_JF_C(N, state),
    PX_JF_S(N, reason, 1024, 0),
    PX_JF_S(N, reason_user, 64, 0),
    PX_JF_NUM(N, reason_time, PX_JF_I64, 0, INT64_MAX),
    PX_JF_S(N, drain_cause, 32, 0),
    PX_JF_NUM(N, cpus, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(N, cpus_alloc, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(N, gpus, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(N, gpus_alloc, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_S(N, gpu_type, 32, 0),
    PX_JF_S(N, gres, 2048, 0),
    PX_JF_S(N, gres_used, 2048, 0),
    PX_JF_S(N, features, 4096, 0),
    PX_JF_NUM(N, mem_mib, PX_JF_U64, 0, INT64_MAX),
    PX_JF_NUM(N, mem_alloc_mib, PX_JF_U64, 0, INT64_MAX),
    PX_JF_NUM(N, last_heartbeat, PX_JF_I64, 0, INT64_MAX),
    PX_JF_NUM(N, gpus_out, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_S(N, gpu_health, 16384, 0),
    PX_JF_NUM(N, gpus_shared, PX_JF_U32, 0, 64),
    PX_JF_NUM(N, gpu_share_used, PX_JF_U32, 0, 6400),
    PX_JF_S(N, reboot, 32, 0),
};
#undef N

#define P struct px_partition_info
static const struct px_jfield part_fields[] = {
    PX_JF_S(P, name, 64, 0),
    PX_JF_S(P, nodelist, BIG, 0),
    PX_JF_B(P, is_default),
    {"up", PX_JF_BOOL, offsetof(P, up), 0, 0, 1, PX_JF_KEEP}, /* false too: readers take a missing one for up */
    PX_JF_NUM(P, max_time_s, PX_JF_I64, 0, INT64_MAX),
    PX_JF_NUM(P, default_time_s, PX_JF_I64, 0, INT64_MAX),
    PX_JF_NUM(P, nnodes, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(P, ngpus, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(P, gpus_alloc, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(P, max_nodes, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(P, priority_tier, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(P, nodes_idle, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(P, nodes_alloc, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(P, nodes_mixed, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(P, nodes_down, PX_JF_U32, 0, UINT32_MAX),
    PX_JF_NUM(P, nodes_drained, PX_JF_U32, 0, UINT32_MAX),
};
#undef P

#define SH struct px_share_info
#define F64(f) {#f, PX_JF_F64, offsetof(SH, f), 0, 0, 0, 0}
static const struct px_jfield share_fields[] = {
    PX_JF_S(SH, account, 64, 0), PX_JF_S(SH, user, 64, 0),
    PX_JF_NUM(SH, depth, PX_JF_U32, 0, 1024), PX_JF_NUM(SH, raw_shares, PX_JF_U32, 0, UINT32_MAX),
    F64(norm_shares), F64(raw_usage), F64(norm_usage), F64(effective_usage), F64(fairshare),
    F64(level_fs),
};
#undef F64
#undef SH

#define COUNT(a) (sizeof a / sizeof a[0])

static json_t *to_json(const struct px_jfield *f, size_t n, const void *base) {
  json_t *o = json_object();
  if (o && px_jf_encode(o, f, n, base)) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* ---- jobs ---- */

void px_job_info_init(struct px_job_info *j) {
  memset(j, 0, sizeof *j);
  px_jobspec_init(&j->spec);
}

void px_step_infos_free(struct px_step_info *v, uint32_t n) {
  for (uint32_t i = 0; v && i < n; i++) free(v[i].name), free(v[i].nodelist);
  free(v);
}

void px_job_info_fini(struct px_job_info *j) {
  px_jf_free(job_fields, COUNT(job_fields), j);
  px_step_infos_free(j->steps, j->nsteps);
  j->steps = NULL, j->nsteps = 0;
  px_jobspec_fini(&j->spec);
}

json_t *px_job_info_to_json(const struct px_job_info *j) {
  json_t *o = to_json(job_fields, COUNT(job_fields), j);
  json_t *spec = o ? px_jobspec_to_json(&j->spec) : NULL;
  if (!spec || json_object_set_new(o, "spec", spec)) {
    json_decref(o);
    return NULL;
  }
  return o;
}

int px_job_info_from_json(const json_t *o, struct px_job_info *j, struct px_diag *d) {
  static const char *const extra[] = {"spec", NULL};
  px_job_info_init(j);
  int rc = px_jf_decode(o, job_fields, COUNT(job_fields), j, extra, "", d);
  json_t *spec = rc ? NULL : json_object_get(o, "spec");
  if (!rc && spec) rc = px_jobspec_from_json(spec, &j->spec, "spec.", d);
  if (rc) {
    px_job_info_fini(j);
    px_job_info_init(j);
  }
  return rc;
}

char *px_job_info_encode(const struct px_job_info *j) {
  struct px_jbuf b = {0};
  px_jbuf_add(&b, "{", 1);
  px_jf_write(&b, job_fields, COUNT(job_fields), j);
  /* Every member may be a default left out: no comma before "spec" then. */
  static const char spec_key[] = ",\"spec\":{";
  size_t skip = b.len == 1; /* 1: only the "{" so far */
  px_jbuf_add(&b, &spec_key[skip], sizeof spec_key - 1 - skip);
  px_jobspec_write(&b, &j->spec);
  px_jbuf_add(&b, "}}", 2);
  if (b.err) free(b.p);
  return b.err ? NULL : b.p;
}

int px_job_info_decode(const char *json, struct px_job_info *j, struct px_diag *d) {
  json_t *o = NULL;
  int rc = px_jf_parse_object(json, strlen(json), &o, d);
  if (rc) {
    px_job_info_init(j);
    return rc;
  }
  rc = px_job_info_from_json(o, j, d);
  json_decref(o);
  return rc;
}

/* ---- nodes, partitions, shares: flat tables ---- */

#define FLAT_CODEC(type, table)                                                            \
  void type##_fini(struct type *x) { px_jf_free(table, COUNT(table), x); }                 \
  json_t *type##_to_json(const struct type *x) { return to_json(table, COUNT(table), x); } \
  int type##_from_json(const json_t *o, struct type *x, struct px_diag *d) {               \
    memset(x, 0, sizeof *x);                                                               \
    int rc = px_jf_decode(o, table, COUNT(table), x, NULL, "", d);                         \
    if (rc) {                                                                              \
      type##_fini(x);                                                                      \
      memset(x, 0, sizeof *x);                                                             \
    }                                                                                      \
    return rc;                                                                             \
  }

FLAT_CODEC(px_node_info, node_fields)
FLAT_CODEC(px_partition_info, part_fields)
FLAT_CODEC(px_share_info, share_fields)
