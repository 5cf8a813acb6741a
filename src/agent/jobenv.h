/*
 * jobenv.h - the environment a job's task sees, built from the launch order.
 *
 * It matches what a real Slurm 22.05 job shows (names and value forms, see
 * docs/agent.md): the user's exported environment, then the SLURM_* set
 * (each also as PHALANX_*), the GPU lists, and the PyTorch distributed
 * variables (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK,
 * LOCAL_WORLD_SIZE). Pure: no I/O, so it is tested line by line.
 */
#ifndef PX_AGENT_JOBENV_H
#define PX_AGENT_JOBENV_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/agent_msg.h"
#include "util/vec.h"

/* Which task of the job this environment is for. */
struct px_task_ident {
  uint32_t local_id;     /* rank on this node */
  uint32_t proc_id;      /* global rank */
  uint32_t local_tasks;  /* tasks of the job on this node */
  bool batch;            /* the batch script (rank 0 of node 0) rather than a task of a step */
};

/* Facts about the node and site, not the job. */
struct px_jobenv_site {
  const char *cluster;   /* SLURM_CLUSTER_NAME */
  const char *node;      /* this node's name (SLURMD_NODENAME) */
  bool renumber_gpus;    /* devices are constrained: CUDA sees the job's GPUs as 0..n-1 */
  const char *gpu_uuids; /* MIG: the node's UUID file (px_site.gpu_uuids); CUDA_VISIBLE_DEVICES names UUIDs */
  uint64_t gpu_mem_mib;  /* a fractional job: its GPU's memory (0: unknown, no memory limit named) */
  const char *mps_pipe;  /* a fractional job under MPS: its GPU daemon's pipe directory; NULL: no MPS */
};

/* The global rank of local task local_id on this node. */
uint32_t px_jobenv_proc_id(const struct px_launch *l, uint32_t local_id);

/* Fills out (cleared first) with "K=V" strings, NULL-terminated (the NULL
 * counts in out->len). 0 or PX_ENOMEM; the caller frees with px_strvec_free_all. */
int px_jobenv_build(const struct px_launch *l, const struct px_jobenv_site *site,
                    const struct px_task_ident *t, struct px_strvec *out);

/* Sets K=V in a NULL-terminated env vector (replacing K), keeping the NULL. */
int px_jobenv_set(struct px_strvec *env, const char *key, const char *value);
/* The value of key in env, or NULL. */
const char *px_jobenv_get(const struct px_strvec *env, const char *key);

#endif
