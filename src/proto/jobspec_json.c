/*
 * jobspec_json.c - the field table of struct px_jobspec and its strict codec.
 * Ranges are generous but finite: they exist so that a typo or a hostile
 * client cannot make the core reason about 2^63 GPUs.
 */
#include "proto/jobspec_json.h"

#include <stdint.h>
#include <string.h>

#include "conf/conf.h"
#include "proto/jfield.h"

#define S struct px_jobspec
#define MAX_MEM_MIB (INT64_C(1) << 40) /* 1 EiB per node: beyond any machine */
#define MAX_UNIX_S INT64_C(32503680000) /* year 3000 */

static const struct px_jfield spec_fields[] = {
    PX_JF_S(S, name, 256, 0),
    PX_JF_S(S, user, 64, 0),
    PX_JF_NUM(S, uid, PX_JF_U32, 0, UINT32_MAX - 1),
    PX_JF_NUM(S, gid, PX_JF_U32, 0, UINT32_MAX - 1),
    PX_JF_S(S, account, 64, 0),
    PX_JF_S(S, partition, 64, 0),
    PX_JF_S(S, qos, 64, 0),
    PX_JF_NUM(S, nodes_min, PX_JF_U32, 0, 100000),
    PX_JF_NUM(S, nodes_max, PX_JF_U32, 0, 100000),
    PX_JF_NUM(S, ntasks, PX_JF_U32, 0, 10000000),
    PX_JF_NUM(S, ntasks_per_node, PX_JF_U32, 0, 100000),
    PX_JF_NUM(S, cpus_per_task, PX_JF_U32, 0, 100000),
    PX_JF_NUM(S, gpus, PX_JF_U32, 0, 1000000),
    PX_JF_NUM(S, gpus_per_node, PX_JF_U32, 0, 1024),
    PX_JF_NUM(S, gpus_per_task, PX_JF_U32, 0, 1024),
    PX_JF_S(S, gpu_type, 32, 0),
    PX_JF_NUM(S, mem_per_node_mib, PX_JF_U64, 0, MAX_MEM_MIB),
    PX_JF_NUM(S, mem_per_cpu_mib, PX_JF_U64, 0, MAX_MEM_MIB),
    PX_JF_NUM(S, mem_per_gpu_mib, PX_JF_U64, 0, MAX_MEM_MIB),
    PX_JF_NUM(S, time_limit_s, PX_JF_I64, 0, PX_TIME_UNLIMITED),
    PX_JF_NUM(S, nice, PX_JF_I32, -2147483645, 2147483645),
    PX_JF_S(S, constraint, 1024, 0),
    PX_JF_B(S, exclusive),
    PX_JF_NUM(S, switches, PX_JF_U32, 0, 1024),
    PX_JF_NUM(S, switches_wait_s, PX_JF_I64, 0, 366 * 86400),
    PX_JF_B(S, hold),
    PX_JF_NUM(S, begin_s, PX_JF_I64, 0, MAX_UNIX_S),
    PX_JF_S(S, dependency, 4096, 0),
    PX_JF_S(S, array, 4096, 0),
    {"requeue", PX_JF_BOOL, offsetof(S, requeue), 0, 0, 1, PX_JF_KEEP}, /* default true */
    PX_JF_B(S, no_requeue_given),
    PX_JF_NUM(S, signal_num, PX_JF_I32, 0, 64),
    PX_JF_NUM(S, signal_time_s, PX_JF_I32, 0, 65535),
    PX_JF_B(S, signal_batch_only),
    PX_JF_S(S, script, 4 << 20, PX_JF_CTRL_OK),
    PX_JF_SV(S, argv, 65536, 0),
    PX_JF_S(S, workdir, 4096, 0),
    PX_JF_S(S, submit_dir, 4096, 0),
    PX_JF_S(S, stdout_path, 4096, PX_JF_PATH),
    PX_JF_S(S, stderr_path, 4096, PX_JF_PATH),
    PX_JF_S(S, stdin_path, 4096, PX_JF_PATH),
    PX_JF_SV(S, env, 131072, PX_JF_ENV),
    PX_JF_S(S, comment, 1024, 0),
    PX_JF_S(S, mail_type, 64, 0),
    PX_JF_S(S, mail_user, 256, 0),
};
#define NFIELDS (sizeof spec_fields / sizeof spec_fields[0])

json_t *px_jobspec_to_json(const struct px_jobspec *s) {
  json_t *o = json_object();
  if (o && px_jf_encode(o, spec_fields, NFIELDS, s)) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Rules that tie fields together. */
static int check_spec(const struct px_jobspec *s, const char *prefix, struct px_diag *d) {
  if (s->nodes_max && s->nodes_max < s->nodes_min)
    return px_diag_set(d, PX_EINVAL, -1, "%snodes_max: smaller than nodes_min", prefix);
  if (s->argv && !s->argv[0])
    return px_diag_set(d, PX_EINVAL, -1, "%sargv: must not be empty", prefix);
  return 0;
}

int px_jobspec_from_json(const json_t *obj, struct px_jobspec *s, const char *prefix,
                         struct px_diag *d) {
  struct px_jobspec tmp;
  px_jobspec_init(&tmp);
  int rc = px_jf_decode(obj, spec_fields, NFIELDS, &tmp, NULL, prefix, d);
  if (!rc) rc = check_spec(&tmp, prefix, d);
  if (rc) {
    px_jobspec_fini(&tmp);
    return rc;
  }
  *s = tmp;
  return 0;
}

void px_jobspec_write(struct px_jbuf *b, const struct px_jobspec *s) {
  px_jf_write(b, spec_fields, NFIELDS, s);
}

char *px_jobspec_encode(const struct px_jobspec *s) { return px_jf_dump(px_jobspec_to_json(s)); }

int px_jobspec_decode(const char *json, struct px_jobspec *s, struct px_diag *d) {
  json_t *o = NULL;
  px_jobspec_init(s); /* on any error the caller holds an empty spec, never stack garbage */
  int rc = px_jf_parse_object(json, strlen(json), &o, d);
  if (rc) return rc;
  rc = px_jobspec_from_json(o, s, "", d);
  json_decref(o);
  return rc;
}
