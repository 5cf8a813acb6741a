/* gpu_msg.c - the GPU fault report's codec (gpu_msg.h). */
#include "proto/gpu_msg.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/jfield.h"

/* The wire form: the class as a name, the rest as the struct. */
struct wire {
  char node[64];
  uint32_t gpu;
  char fault[16];
  int64_t code;
  char detail[128];
};

#define W struct wire
static const struct px_jfield fields[] = {
    PX_JF_C(W, node),
    {"gpu", PX_JF_U32, offsetof(W, gpu), 0, 0, 63, PX_JF_KEEP},
    PX_JF_C(W, fault),
    PX_JF_NUM(W, code, PX_JF_I64, 0, INT64_MAX),
    PX_JF_C(W, detail),
};
#undef W
#define NFIELDS (sizeof fields / sizeof fields[0])

char *px_gpu_fault_encode(const struct px_gpu_fault *f) {
  struct wire w = {.gpu = f->gpu, .code = f->code};
  memcpy(w.node, f->node, sizeof w.node);
  memcpy(w.detail, f->detail, sizeof w.detail);
  const char *name = px_gpu_fault_name(f->fault);
  snprintf(w.fault, sizeof w.fault, "%s", name ? name : "");
  json_t *o = json_object();
  if (!o || px_jf_encode(o, fields, NFIELDS, &w)) {
    json_decref(o);
    return NULL;
  }
  return px_jf_dump(o);
}

int px_gpu_fault_decode(const char *json, struct px_gpu_fault *f, struct px_diag *d) {
  memset(f, 0, sizeof *f);
  px_diag_clear(d);
  json_t *o;
  int rc = px_jf_parse_object(json, strlen(json), &o, d);
  if (rc) return rc;
  struct wire w = {0};
  rc = px_jf_decode(o, fields, NFIELDS, &w, NULL, "", d);
  json_decref(o);
  if (!rc && !w.node[0]) rc = px_diag_set(d, PX_EINVAL, -1, "node: required");
  if (!rc && !px_gpu_fault_parse(w.fault, &f->fault))
    rc = px_diag_set(d, PX_EINVAL, -1, "fault: '%.15s' is not one of xid ecc remap lost throttle nvlink healthcheck",
                     w.fault);
  if (rc) {
    memset(f, 0, sizeof *f);
    return rc;
  }
  memcpy(f->node, w.node, sizeof f->node);
  memcpy(f->detail, w.detail, sizeof f->detail);
  f->gpu = w.gpu;
  f->code = w.code;
  return 0;
}

#define H struct px_node_health
static const struct px_jfield health_fields[] = {
    PX_JF_C(H, node),
    {"ok", PX_JF_BOOL, offsetof(H, ok), 0, 0, 1, PX_JF_KEEP},
    PX_JF_C(H, message),
};
#undef H
#define NHEALTH (sizeof health_fields / sizeof health_fields[0])

char *px_node_health_encode(const struct px_node_health *h) {
  json_t *o = json_object();
  if (!o || px_jf_encode(o, health_fields, NHEALTH, h)) {
    json_decref(o);
    return NULL;
  }
  return px_jf_dump(o);
}

int px_node_health_decode(const char *json, struct px_node_health *h, struct px_diag *d) {
  memset(h, 0, sizeof *h);
  px_diag_clear(d);
  json_t *o;
  int rc = px_jf_parse_object(json, strlen(json), &o, d);
  if (rc) return rc;
  rc = px_jf_decode(o, health_fields, NHEALTH, h, NULL, "", d);
  json_decref(o);
  if (!rc && !h->node[0]) rc = px_diag_set(d, PX_EINVAL, -1, "node: required");
  if (rc) memset(h, 0, sizeof *h);
  return rc;
}
