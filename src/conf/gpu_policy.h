/*
 * gpu_policy.h - what a GPU fault does, as a site writes it in
 * slurm.conf (docs/gpus.md):
 *
 *   GpuFaultPolicy=xid:gpu+requeue,xid79:gpu+drain+requeue,ecc:gpu+fail
 *
 * Each item is CLASS:ACTIONS, CLASS a fault class below or xidN (one XID,
 * over the class xid), ACTIONS one or more of
 *   gpu      take the GPU out of service (the node's others stay in)
 *   drain    drain the node, the reason naming GPU and fault
 *   requeue  requeue the jobs on the GPU (a gang whole, same id, restart
 *            count up; a job that may not requeue ends NODE_FAIL)
 *   grace    with requeue: SIGTERM the jobs first and requeue them when
 *            they end (within KillWait), so they may checkpoint
 *   fail     end those jobs NODE_FAIL with the fault as the reason
 *   none     only count and log it
 * joined with '+'. Items override the defaults (px_gpu_policy_defaults)
 * one class at a time.
 */
#ifndef PX_CONF_GPU_POLICY_H
#define PX_CONF_GPU_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* class, wire and policy name */
#define PX_GPU_FAULTS(X)   \
  X(XID, "xid")            \
  X(ECC, "ecc")            \
  X(REMAP, "remap")        \
  X(LOST, "lost")          \
  X(THROTTLE, "throttle")  \
  X(NVLINK, "nvlink")

enum px_gpu_fault_class {
#define PX_GPU_FAULT_ENUM(k, name) PX_GPU_FAULT_##k,
  PX_GPU_FAULTS(PX_GPU_FAULT_ENUM)
#undef PX_GPU_FAULT_ENUM
  PX_GPU_FAULT_COUNT
};
const char *px_gpu_fault_name(enum px_gpu_fault_class c); /* NULL when out of range */
bool px_gpu_fault_parse(const char *name, enum px_gpu_fault_class *out);

#define PX_GPU_ACT_GPU 1u
#define PX_GPU_ACT_DRAIN 2u
#define PX_GPU_ACT_REQUEUE 4u
#define PX_GPU_ACT_FAIL 8u
#define PX_GPU_ACT_GRACE 16u

#define PX_GPU_POLICY_XIDS 32

struct px_gpu_policy {
  unsigned actions[PX_GPU_FAULT_COUNT];
  uint32_t xid[PX_GPU_POLICY_XIDS];   /* XIDs with their own actions */
  unsigned xid_actions[PX_GPU_POLICY_XIDS];
  uint32_t nxid;
  uint32_t quarantine_faults;         /* GpuQuarantineFaults= (default 3; 0: never) */
  uint32_t node_flap_faults;          /* GpuNodeFlapFaults=: counted faults of a node's GPUs within the
                                       * window that keep it drained (default 6; 0: never) */
  int64_t quarantine_window_s;        /* GpuQuarantineWindow= (default 1 day) */
  uint32_t health_interval_ms;        /* GpuHealthIntervalMs= (the agent's polled checks; default 500) */
};

/* xid:gpu+requeue ecc:gpu+requeue remap:gpu lost:gpu+drain+requeue
 * throttle:none nvlink:gpu+requeue; xid13, 31, 43 and 45 (errors of the
 * application, not the GPU, in NVIDIA's XID catalogue): none. */
void px_gpu_policy_defaults(struct px_gpu_policy *p);
/* Applies a GpuFaultPolicy= value over p. 0, or -1 with why naming the item
 * and the problem (p unchanged). */
int px_gpu_policy_parse(struct px_gpu_policy *p, const char *text, char *why, size_t whylen);
/* The actions of a fault of class c with code (the XID for xid). */
unsigned px_gpu_policy_actions(const struct px_gpu_policy *p, enum px_gpu_fault_class c, int64_t code);
/* "gpu+drain+requeue" or "none". */
void px_gpu_actions_text(unsigned actions, char *buf, size_t size);

#endif
