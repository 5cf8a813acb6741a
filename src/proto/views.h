/*
 * views.h - what clients see of jobs, nodes, partitions and the fair-share
 * tree: the records the API returns and the CLI (squeue, sinfo, sacct,
 * sshare, scontrol) formats. The server fills them from the core's snapshot
 * and the accounting store; proto/views_json.c encodes and decodes them.
 *
 * API summary (HTTP/1.1 + JSON under /v1; docs/api/openapi.yaml is the
 * reference; errors are {"error":{"code":"INVALID","message":"...","field":"..."}}):
 *   POST   /v1/jobs                 {"job":px_jobspec} or {"jobs":[...]}   -> {"job_id":N} / {"job_ids":[...]}
 *   GET    /v1/jobs?user=&account=&partition=&state=&id=&name=&after=&limit=  -> {"jobs":[px_job_info...],"next":...}
 *   GET    /v1/jobs/{id}            -> px_job_info (with reason, expected start, placement)
 *   DELETE /v1/jobs/{id}?signal=    cancel
 *   POST   /v1/jobs/{id}/hold, /release, PATCH /v1/jobs/{id} {"nice":..,"time_limit_s":..,"priority":..}
 *   GET    /v1/nodes, /v1/nodes/{name}; POST /v1/nodes/{name}/drain {"reason":..}, /resume
 *   GET    /v1/partitions, /v1/shares (the account tree), /v1/usage?since=&by=
 *   GET    /v1/accounting?...       finished jobs, one px_job_info per attempt
 *   GET    /v1/watch?after=SEQ      long-poll for job changes
 *   GET    /metrics                 Prometheus text
 * Times are Unix seconds (0 = not yet / not applicable); memory in MiB.
 */
#ifndef PX_PROTO_VIEWS_H
#define PX_PROTO_VIEWS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/jobspec.h"

/* A job step in accounting (sacct's N.0, N.1 lines): srun's steps. */
struct px_step_info {
  uint32_t step_id;
  char *name, *nodelist;
  char state[24];
  int32_t exit_code, term_signal;
  int64_t start_time, end_time;
  uint32_t nnodes, ntasks;
  uint64_t peak_mem_mib, cpu_time_ms;
};

struct px_job_info {
  uint64_t job_id;
  uint64_t array_job_id;        /* 0 unless an array task (or the array's pending record) */
  uint32_t array_task_id;       /* UINT32_MAX for the array's pending record */
  char *array_pending;          /* the pending tasks of an array record, e.g. "3-999%50" */
  struct px_jobspec spec;       /* what was asked (defaults filled in by the server) */
  char state[24];               /* PENDING RUNNING COMPLETING COMPLETED FAILED CANCELLED TIMEOUT OUT_OF_MEMORY NODE_FAIL PREEMPTED REQUEUED */
  char reason[128];             /* Slurm pending reason name: Priority, Resources, Dependency, ... or "None" */
  char *why;                    /* the long explanation (phalanx why) or NULL */
  uint32_t priority;
  int64_t submit_time, eligible_time, start_time, end_time, expected_start;
  char *nodelist;               /* compressed hostlist, NULL while pending */
  uint32_t nnodes, ncpus, ngpus;
  uint64_t mem_mib;
  char *gpus_by_node;           /* "n01:0,1;n02:0,1" or NULL */
  int32_t exit_code, term_signal;
  uint32_t restarts;
  uint64_t submit_seq, start_seq, end_seq; /* accounting rows only: journal seqs (0: unknown) */
  char *cancelled_by;           /* user name when CANCELLED by someone */
  double billable_tres_s;
  uint64_t peak_mem_mib, cpu_time_ms;
  struct px_step_info *steps;   /* accounting rows only: the attempt's srun steps */
  uint32_t nsteps;
  /* the weighted multifactor components whose sum is priority (sprio) */
  uint32_t prio_age, prio_fairshare, prio_jobsize, prio_partition, prio_qos, prio_site,
      prio_assoc;
};

struct px_node_info {
  char *name, *addr, *partitions; /* partitions: comma list */
  char state[24];               /* IDLE MIXED ALLOCATED DOWN DRAINED DRAINING FUTURE */
  char *reason;                 /* drain/down reason */
  char *reason_user;            /* who set it (an operator, the server's user); NULL: not known */
  int64_t reason_time;          /* when (Unix s); 0: not known */
  char *drain_cause;            /* why drained: "operator", "health_check", "registration", "gpu_fault",
                                 * "reboot", "recovery", "unknown"; NULL when not drained */
  uint32_t cpus, cpus_alloc, gpus, gpus_alloc;
  char *gpu_type, *features;   /* gpu_type NULL with several types: */
  char *gres;                   /* several GPU types: "gpu:1g.10gb:7,gpu:3g.40gb:1" (NULL otherwise) */
  char *gres_used;              /* and those allocated: "gpu:1g.10gb:2,gpu:3g.40gb:0" */
  uint64_t mem_mib, mem_alloc_mib;
  int64_t last_heartbeat;
  uint32_t gpus_out;            /* GPUs out of service after a fault (docs/gpus.md) */
  char *gpu_health;             /* "3:UNUSABLE(GPU 3: xid 79),...": those GPUs, NULL when none */
  uint32_t gpus_shared;         /* GPUs carrying fractional jobs (counted in gpus_alloc) */
  uint32_t gpu_share_used;      /* hundredths those jobs hold together */
  char *reboot;                 /* "REBOOT_REQUESTED", "REBOOT_ISSUED" (scontrol reboot), NULL when none */
};

struct px_partition_info {
  char *name, *nodelist;
  bool is_default, up;
  int64_t max_time_s, default_time_s;
  uint32_t nnodes, ngpus, gpus_alloc, max_nodes, priority_tier;
  uint32_t nodes_idle, nodes_alloc, nodes_mixed, nodes_down, nodes_drained;
};

struct px_share_info {
  char *account, *user;         /* user NULL for an account row */
  uint32_t depth;               /* 0 for root */
  uint32_t raw_shares;
  double norm_shares, raw_usage, norm_usage, effective_usage, fairshare, level_fs;
};

void px_job_info_fini(struct px_job_info *j);
void px_step_infos_free(struct px_step_info *v, uint32_t n);
void px_node_info_fini(struct px_node_info *n);
void px_partition_info_fini(struct px_partition_info *p);
void px_share_info_fini(struct px_share_info *s);

#endif
