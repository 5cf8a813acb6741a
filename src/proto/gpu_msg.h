/*
 * gpu_msg.h - a GPU fault as an agent reports it (POST /v1/agent/gpu), and
 * its strict JSON codec:
 *
 *   {"node":"n01","gpu":3,"fault":"xid","code":79,
 *    "detail":"GPU has fallen off the bus"}
 *
 * fault is one of the classes below; code is what the class counts (the
 * XID number, the new double-bit ECC errors, the throttle reason mask, 0
 * for the others); detail is free text for the operator (optional). The
 * server's policy (docs/gpus.md) decides what a class does.
 *
 * And the result of the site's node health check (HealthCheckProgram=) when
 * it changes (POST /v1/agent/health):
 *
 *   {"node":"n01","ok":false,"message":"check_fs_mount: /scratch not mounted"}
 */
#ifndef PX_PROTO_GPU_MSG_H
#define PX_PROTO_GPU_MSG_H

#include <stdbool.h>
#include <stdint.h>

#include "conf/gpu_policy.h" /* the fault classes */
#include "util/error.h"

struct px_gpu_fault {
  char node[64];
  uint32_t gpu;                 /* node-local index, 0..63 */
  enum px_gpu_fault_class fault;
  int64_t code;                 /* >= 0 */
  char detail[128];
};

char *px_gpu_fault_encode(const struct px_gpu_fault *f); /* malloc'd; NULL on ENOMEM */
/* 0, or PX_EPARSE / PX_EINVAL with d naming the field; f is then zeroed. */
int px_gpu_fault_decode(const char *json, struct px_gpu_fault *f, struct px_diag *d);

struct px_node_health {
  char node[64];
  bool ok;                      /* the program exited 0 */
  char message[256];            /* its first line of output, or how it failed */
};

char *px_node_health_encode(const struct px_node_health *h); /* malloc'd; NULL on ENOMEM */
int px_node_health_decode(const char *json, struct px_node_health *h, struct px_diag *d);

#endif
