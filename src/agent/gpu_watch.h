/*
 * gpu_watch.h - the agent's watch on its GPUs' health (docs/gpus.md).
 *
 * Real GPUs: a thread of its own loads NVML (dlopen, as discovery does),
 * registers every GPU for critical XID and double-bit ECC events and waits
 * on the event set; between events, every interval it reads each GPU's
 * volatile double-bit ECC count, retired pages / remapped rows pending,
 * clock throttle reasons (thermal, power brake) and NVLink recovery
 * errors. A call that answers "GPU is lost" is a lost GPU. Each finding is
 * reported once per change (a new XID, a count that grew, a condition that
 * began), not once per look.
 *
 * Emulated GPUs have no NVML: faults are injected (px_gpu_inject, from
 * `phalanx agent --inject-gpu-fault` or `phalanx dev inject`) as a datagram
 * on the agent's notify socket, which the main loop hands to
 * px_gpu_watch_add.
 *
 * Either way the main loop takes the faults (px_gpu_watch_take) and posts
 * each to the server (POST /v1/agent/gpu), whose policy decides.
 */
#ifndef PX_AGENT_GPU_WATCH_H
#define PX_AGENT_GPU_WATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/gpu_msg.h"

struct px_gpu_watch {
  char node[64];
  uint32_t ngpus;
  /* MIG instances: the GPU each of the node's ngpus instances is on (NVML
   * watches GPUs; a GPU's fault is its instances'); mig false: whole GPUs */
  bool mig;
  uint8_t parent[64];
  atomic_uint interval_ms;       /* the server's GpuHealthIntervalMs (register answer) */
  pthread_t thread;
  bool started;
  atomic_bool stop;
  pthread_mutex_t mu;
  struct px_gpu_fault *found;    /* found, not yet taken */
  uint32_t nfound, cap;
  int wake[2];                   /* a fault was found: readable */
  /* main thread: reports not yet acknowledged, oldest first */
  struct px_health_post {
    const char *path;            /* "/v1/agent/gpu" or "/v1/agent/health" (static) */
    char *json;
  } *out;
  uint32_t nout;
  int64_t retry_at_ms;           /* monotonic */
};
struct px_link;

int px_gpu_watch_init(struct px_gpu_watch *w, const char *node, uint32_t ngpus);
/* Starts the NVML thread (real GPUs only). 0, or PX_EUNSUPPORTED without NVML. */
int px_gpu_watch_start_nvml(struct px_gpu_watch *w);
void px_gpu_watch_fini(struct px_gpu_watch *w);
/* Queues a fault for the main loop (any thread). */
void px_gpu_watch_add(struct px_gpu_watch *w, const struct px_gpu_fault *f);
/* The faults found so far (malloc'd, caller frees); drains the wake pipe. */
struct px_gpu_fault *px_gpu_watch_take(struct px_gpu_watch *w, uint32_t *n);

/* Main thread: takes what was found and posts it (POST /v1/agent/gpu),
 * retrying what the server did not take (a 4xx drops it, logged). */
void px_gpu_watch_send(struct px_gpu_watch *w, struct px_link *k, int64_t now_ms);
/* Main thread: queues another health report (takes json; node_check.h's). */
void px_gpu_watch_post(struct px_gpu_watch *w, const char *path, char *json);
/* When px_gpu_watch_send should run again (INT64_MAX: nothing waits). */
int64_t px_gpu_watch_due(const struct px_gpu_watch *w);

/* "gpufault GPU CLASS CODE DETAIL" (the notify datagram) into f; 0 or PX_EINVAL. */
int px_gpu_fault_parse_note(const char *note, const char *node, struct px_gpu_fault *f);
/* Sends such a datagram to the agent whose state directory is state_dir;
 * with node, to an emulating agent (emulate.h), prefixed "NODE ". 0, or a
 * PX_E* code with why filled. */
int px_gpu_inject(const char *state_dir, const char *node, uint32_t gpu, const char *fault, int64_t code,
                  const char *detail, char *why, size_t whylen);

/* `phalanx dev inject DIR NODE GPU FAULT [CODE [DETAIL]]` (dev_inject.c). */
int px_dev_inject(int argc, char **argv);

#endif
