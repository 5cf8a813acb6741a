/*
 * jobspec_json.c - the strict codec of struct px_jobspec, its field table
 * generated from jobspec_fields.h (the CLI's is too).
 * Ranges are generous but finite: they exist so that a typo or a hostile
 * client cannot make the core reason about 2^63 GPUs.
 */
#include "proto/jobspec_json.h"

#include <stdint.h>
#include <string.h>

#include "conf/conf.h"
#include "proto/container_spec.h"
#include "proto/jfield.h"
#include "proto/jobspec_fields.h"

#define S struct px_jobspec

#define JS_S(n, a, b) PX_JF_S(S, n, a, b)
#define JS_SV(n, a, b) PX_JF_SV(S, n, a, b)
#define JS_U32(n, a, b) PX_JF_NUM(S, n, PX_JF_U32, a, b)
#define JS_U64(n, a, b) PX_JF_NUM(S, n, PX_JF_U64, a, b)
#define JS_I32(n, a, b) PX_JF_NUM(S, n, PX_JF_I32, a, b)
#define JS_I64(n, a, b) PX_JF_NUM(S, n, PX_JF_I64, a, b)
#define JS_B(n, a, b) PX_JF_B(S, n)
#define JS_B_TRUE(n, a, b) {#n, PX_JF_BOOL, offsetof(S, n), 0, 0, 1, PX_JF_KEEP}
#define JS_ROW(n, kind, a, b) JS_##kind(n, a, b),
static const struct px_jfield spec_fields[] = {PX_JOBSPEC_FIELDS(JS_ROW)};
#undef JS_ROW
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
  return px_container_spec_check(s, prefix, d);
}

int px_jobspec_from_json(const json_t *obj, struct px_jobspec *s, const char *prefix,
                         struct px_diag *d) {
  struct px_jobspec tmp;
  px_jobspec_init(&tmp);
  int rc = px_jf_decode(obj, spec_fields, NFIELDS, &tmp, NULL, prefix, d);
  if (!rc) rc = check_spec(&tmp, prefix, d);
  if (rc) {
    px_jobspec_fini(&tmp);
    px_jobspec_init(s); /* as documented: nothing half-filled */
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
  if (rc) {
    px_jobspec_init(s);
    return rc;
  }
  rc = px_jobspec_from_json(o, s, "", d);
  json_decref(o);
  return rc;
}
