/*
 * agent_msg.h - the messages between the server and node agents, and their
 * JSON codecs (jansson). The protocol, over HTTP/1.1 on the server's TCP
 * listener, authenticated like any client (MUNGE credential or bearer token):
 *
 *   POST /v1/agent/register    body: px_node_report      -> {"heartbeat_s":N,"node":"n01"}
 *        on every agent start; lists what the agent still runs or has
 *        finished but not yet reported (after an agent or server restart).
 *        cpus, mem_mib and gpus are what the node really has ("gpus"
 *        absent is the same as [], no GPU: the agent always sends the list,
 *        empty when it found none): fewer than its NodeName= line says
 *        drains the node until a registration has them again.
 *   GET  /v1/agent/work?node=N&after=SEQ   long-poll (up to ~20 s) for
 *        orders with a sequence number > SEQ:
 *        {"seq":S,"launch":[px_launch...],"signal":[px_signal_order...],
 *         "step":[px_step_order...]}  ("step" absent when empty)
 *   POST /v1/agent/report      body: px_task_report      -> {}
 *        a job's state on this node changed (its end; RUNNING after a
 *        reattach); the agent retries until the server answers 2xx, so ends
 *        are never lost
 *                              body: {"reports":[px_task_report...]}
 *                                        -> {"status":[HTTP status...]}
 *        the same for up to PX_TASK_REPORTS_MAX reports at once, one status
 *        per report in order (each what the single form would answer); only
 *        sent to a server whose register answer says "report_batch":true
 *        (a server without it answers 400 to this body)
 *   POST /v1/agent/heartbeat   body: {"node":"n01"}      -> {}
 *
 * An agent may only register, poll and report for its own node; the server
 * checks the authenticated identity against the node name.
 *
 * Decoders are strict: unknown fields, wrong types and out-of-range values are
 * errors naming the field (struct px_diag), and nothing is half-filled. So a
 * field is added to a message only for a peer that says it knows it: the
 * server to the agent in its register answer ("report_batch"), the agent to
 * the server by its node report's "version" (PX_AGENT_VERSION): one agent
 * refusing one order refuses the whole work answer, and polls for it again
 * and again.
 */
#ifndef PX_PROTO_AGENT_MSG_H
#define PX_PROTO_AGENT_MSG_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

/* One GPU as discovered by an agent (NVML or emulated). */
struct px_gpu_info {
  uint32_t index;       /* the node-local index CUDA uses */
  char uuid[64];        /* "GPU-..." ; emulated: "GPU-EMU-<node>-<index>" */
  char type[32];        /* "h100" */
  uint64_t mem_mib;
  uint32_t group;       /* NVLink/NUMA group */
  /* MIG instances, agent-local (not on the wire; -1: unknown): the parent
   * GPU's /dev/nvidiaN minor and the instance's GPU and compute instance
   * ids, which name its capability devices (agent/mig_dev.h) */
  int32_t dev_minor, mig_gi, mig_ci;
};

/* A job the agent knows about when it (re)registers. */
struct px_known_job {
  uint64_t job_id;
  char state[24];       /* "RUNNING" or an end state not yet acknowledged */
  int32_t exit_code;
  int32_t term_signal;
};

/* The agent protocol's version, the node report's "version" (an older
 * server reads and ignores it; before this macro every agent sent "0.1.0"):
 *   0.1.0  refuses a signal order with "time_limit_s"
 *   0.2.0  takes it (a running job's new time limit)
 * The server leaves out of its work answers what the node's agent refuses
 * (server/nodes/outbox.c). */
#define PX_AGENT_VERSION "0.2.0"
/* Whether an agent of this version takes signal orders with "time_limit_s":
 * false for MAJOR.MINOR[...] below 0.2 (every agent before said "0.1.0"),
 * true for the rest (a test's stand-in that says "test"). */
bool px_agent_takes_time_limit(const char *version);

struct px_node_report {
  char node[64];
  char addr[64];        /* address other nodes reach this one at (MASTER_ADDR) */
  uint32_t cpus;
  uint64_t mem_mib;
  struct px_gpu_info *gpus;
  uint32_t ngpus;
  struct px_known_job *jobs;
  uint32_t njobs;
  char version[32];
  int64_t since;        /* wall time (s) from which the agent holds every job it was
                           given until its end is acknowledged (agent/since.c); 0: not said */
};

/* A service replica's part of a launch order (absent for batch jobs; added
 * by the services issue). The agent picks a free TCP port per name, exports
 * PORT, PX_PORT_<NAME>, PX_SERVICE and PX_REPLICA, runs the health check and
 * reports ports and health in RUNNING task reports. On the wire:
 *   "service":{"name":"web","replica":0,"generation":3,"ports":["http"],
 *              "health":{"type":"http","port":"http","path":"/healthz",
 *                        "interval_s":2,"timeout_s":1,"failure_threshold":3,
 *                        "startup_grace_s":10}}
 * Port names: 1-31 characters of [a-z0-9_-], starting with a letter, unique
 * (PX_PORT_ upper-cases them, '-' becoming '_'). */
#define PX_SVC_PORTS_MAX 8
#define PX_SVC_PORT_NAME 32

enum px_health_type { PX_HEALTH_NONE, PX_HEALTH_HTTP, PX_HEALTH_TCP, PX_HEALTH_COMMAND };

struct px_health_check {
  enum px_health_type type;     /* "type" on the wire: none http tcp command */
  char port[PX_SVC_PORT_NAME];  /* http, tcp: one of the service's port names */
  char path[256];               /* http: starts with '/' */
  char **command;               /* command: argv, NULL-terminated, not empty */
  uint32_t interval_s;          /* 1..3600, default 10 */
  uint32_t timeout_s;           /* 1..3600, default 1 */
  uint32_t failure_threshold;   /* 1..1000, default 3 */
  uint32_t startup_grace_s;     /* 0..86400, default 0: failures during it don't count */
};

struct px_launch_service {
  char name[64];
  uint32_t replica;
  uint64_t generation;          /* the spec version the replica runs */
  char **ports;                 /* port names, NULL-terminated, 0..PX_SVC_PORTS_MAX */
  uint32_t nports;
  struct px_health_check health;
};

const char *px_health_type_name(enum px_health_type t);
void px_launch_service_free(struct px_launch_service *s);
/* Whether name is a valid port name (the rule above). */
bool px_svc_port_name_ok(const char *name);

/* What one node must run of a job: the job's whole allocation is included so
 * that the environment (SLURM_JOB_NODELIST, ranks, MASTER_ADDR) can be built. */
struct px_launch {
  uint64_t job_id;
  uint64_t array_job_id;        /* 0 when not an array task */
  uint32_t array_task_id;
  uint32_t restart_count;       /* attempts after requeue */
  char *name, *user, *account, *partition, *qos;
  uint32_t uid, gid;
  char *workdir, *submit_dir;
  char *script;                 /* batch script (runs on node_rank 0 only), or NULL */
  char **argv;                  /* task command when no script (NULL-terminated) */
  char *stdout_path, *stderr_path, *stdin_path; /* patterns, expanded by the agent */
  char **env;                   /* user's exported environment "K=V", NULL-terminated */
  int64_t time_limit_s;         /* 0 or PX_TIME_UNLIMITED-like INT64_MAX: none */
  int64_t start_time;           /* Unix seconds, for the time limit */
  int32_t signal_num, signal_time_s; /* --signal */
  char **nodes;                 /* every node of the allocation, in rank order */
  char **node_addrs;            /* their addresses, same order */
  uint32_t nnodes;
  uint32_t node_rank;           /* this node's position in nodes */
  uint32_t ntasks;              /* total tasks */
  uint32_t *tasks_per_node;     /* nnodes entries */
  uint32_t cpus_per_task;
  uint32_t *gpus;               /* this node's GPU indices */
  uint32_t ngpus;
  uint32_t *gpus_per_node;      /* nnodes entries (for SLURM_GPUS_ON_NODE etc.) */
  uint32_t *cpu_ids;            /* this node's CPU ids to pin to (may be empty: any) */
  uint32_t ncpu_ids;
  uint32_t ncpus;               /* CPUs allocated on this node */
  uint64_t mem_mib;             /* memory limit on this node */
  uint16_t master_port;         /* for MASTER_PORT */
  char *open_mode;              /* "append" or "truncate"/NULL (sbatch --open-mode) */
  char *hint, *distribution;    /* --hint, -m as the job gave them (SLURM_HINT, ranks) */
  uint32_t cpus_per_gpu;        /* --cpus-per-gpu, 0 when not given */
  uint32_t gpu_share;           /* a fractional job: hundredths of its one GPU (MPS limits); 0: whole GPUs */
  struct px_launch_service *service; /* "service", NULL for batch (freed by _fini) */
  char *container_image;        /* --container-image and the rest (proto/container_spec.h), */
  char *container_mounts;       /* as the job spec holds them; NULL: no container */
  char *container_workdir, *container_env;
  char *container_image_dir;    /* the cluster's ContainerImageDir= (image names; also for the steps), or NULL */
};

/* Stop (cancel, preempt, time limit) or just signal a job on a node. */
struct px_signal_order {
  uint64_t job_id;
  int32_t signal;               /* e.g. SIGTERM, or the job's --signal */
  int32_t grace_s;              /* SIGKILL after this many seconds; -1: signal only */
  char reason[32];              /* "CANCELLED", "PREEMPTED", "TIMEOUT" */
  bool is_step;                 /* only step step_id of the job (a step cancel) */
  uint32_t step_id;             /* on the wire only when is_step */
  int64_t time_limit_s;         /* > 0: no signal but the job's new time limit (scontrol update
                                   TimeLimit= of a running job; signal 0, grace -1); on the wire only then */
};

struct px_task_report {
  char node[64];
  uint64_t job_id;
  char state[24];               /* RUNNING COMPLETED FAILED CANCELLED TIMEOUT OUT_OF_MEMORY PREEMPTED NODE_FAIL */
  int32_t exit_code;
  int32_t term_signal;
  bool requeue_requested;       /* the job asked to be requeued (checkpointed) */
  uint64_t peak_mem_mib;
  uint64_t cpu_time_ms;
  int64_t start_time, end_time; /* Unix seconds */
  uint32_t restart_count;       /* the attempt reported on (px_launch.restart_count), so a
                                 * late end of attempt N never ends attempt N+1 (added by
                                 * the agent's issue; absent on the wire means 0) */
  bool is_step;                 /* the end of a job step's tasks on this node, not the job's */
  uint32_t step_id;             /* on the wire only when is_step */
  /* A service replica's ports and health (state RUNNING only; absent for
   * batch). On the wire "ports":{"http":31234}, "health":"starting" |
   * "ready" | "unhealthy", "health_reason":"..." (optional). has_service is
   * true when "health" is present. */
  bool has_service;
  uint16_t ports[PX_SVC_PORTS_MAX];
  char port_names[PX_SVC_PORTS_MAX][PX_SVC_PORT_NAME];
  uint32_t nports;
  char health[16];
  char health_reason[128];
  char reason[128];             /* a failed start's reason ("ContainerImage: /x: no such image"),
                                 * shown as the job's reason; "" when none */
};

/* Encoders return a malloc'd JSON string (NULL on ENOMEM). Decoders fill the
 * struct (which the caller then releases with the matching _fini) or return
 * PX_EPARSE/PX_EINVAL with d naming the field. */
char *px_node_report_encode(const struct px_node_report *r);
int px_node_report_decode(const char *json, struct px_node_report *r, struct px_diag *d);
void px_node_report_fini(struct px_node_report *r);

char *px_launch_encode(const struct px_launch *l);
int px_launch_decode(const char *json, struct px_launch *l, struct px_diag *d);
void px_launch_fini(struct px_launch *l);

char *px_task_report_encode(const struct px_task_report *r);
int px_task_report_decode(const char *json, struct px_task_report *r, struct px_diag *d);

/* The batch form: *out (malloc'd, n entries) from {"reports":[...]};
 * errors name the entry ("reports[3].state: ..."). */
#define PX_TASK_REPORTS_MAX 1024
int px_task_reports_decode(const char *json, struct px_task_report **out, uint32_t *n, struct px_diag *d);
/* {"reports":[...]} of n already encoded reports. */
char *px_task_reports_encode(char *const *reports, uint32_t n);

char *px_signal_order_encode(const struct px_signal_order *s);
int px_signal_order_decode(const char *json, struct px_signal_order *s, struct px_diag *d);

/* Compares what an agent found with the node's configuration. Returns true
 * and writes a drain reason in Slurm's words to buf ("Low CPUs (reported:32
 * < configured:64); gres/gpu count reported lower than configured (4 < 8)")
 * when the node has less than configured; false (buf "") otherwise. GPUs of
 * another type than gpu_type (when given) do not count, and then the reason
 * names the type ("gres/gpu:h100 count ..."). The server drains with this
 * reason at registration (server/nodes/node_shape.c). */
bool px_node_report_shortfall(const struct px_node_report *r, uint32_t cpus, uint64_t mem_mib,
                              uint32_t ngpu, const char *gpu_type, char *buf, size_t size);

/* A job step (srun inside an allocation, POST /v1/jobs/{id}/steps): the
 * node runs its share of the step's tasks inside the job's cgroup, from the
 * job's launch order with these fields replacing the command, the task
 * layout and (when given) the environment and working directory. Each task
 * writes "<out_dir>/<rank>.out" and "<rank>.err". Not durable: a step dies
 * with its job and is forgotten by a restarted server. */
struct px_step_order {
  uint64_t job_id;
  uint32_t step_id;
  uint32_t restart_count;       /* the job's attempt this step belongs to */
  char **argv;                  /* NULL-terminated, not empty */
  char **env;                   /* "K=V", NULL-terminated: srun's environment, or NULL: the job's */
  char *cwd;                    /* NULL: the job's working directory */
  char *out_dir;                /* where the tasks' output files go (absolute) */
  char **nodes;                 /* the step's nodes, in rank order (a prefix of the job's) */
  uint32_t nnodes;
  uint32_t *tasks_per_node;     /* nnodes entries, each at least 1 */
  uint32_t ntasks;              /* their sum */
  uint32_t gpus_per_task;       /* 0: every task sees the node's GPUs of the job; else
                                 * local task i sees the i-th slice of that many */
  char *distribution;           /* srun -m for this step; NULL: the job's */
  char *container_image;        /* srun --container-image and the rest: the step's tasks run in */
  char *container_mounts;       /* this image (NULL: on the host, whatever the job's is) */
  char *container_workdir, *container_env;
  /* A terminal step (srun --pty, phalanx exec; docs/interactive.md): one
   * task, run by the pty host, which dials the server's relay session
   * pty_session with the one-time credential pty_secret. The server sends
   * those and the first window size; the agent adds where the server is
   * (pty_server: its own --server, pty_ca: its CA file) before the
   * supervisor reads the order. All absent for other steps. */
  char *pty_session, *pty_secret, *pty_server, *pty_ca;
  uint32_t pty_rows, pty_cols;  /* 0: not said */
  bool pty_raw;                 /* the CLI's input is not a terminal: no echo, no CR/LF mapping */
};

char *px_step_order_encode(const struct px_step_order *o);
int px_step_order_decode(const char *json, struct px_step_order *o, struct px_diag *d);
void px_step_order_fini(struct px_step_order *o);

/* The answer to GET /v1/agent/work: {"seq":S,"launch":[...],"signal":[...]}.
 * (Added by the agent's issue so both sides share one codec.) */
struct px_agent_work {
  uint64_t seq;
  struct px_launch *launch;
  uint32_t nlaunch;
  struct px_signal_order *signal;
  uint32_t nsignal;
  struct px_step_order *step;   /* "step":[...], absent when none */
  uint32_t nstep;
};

char *px_agent_work_encode(const struct px_agent_work *w);
int px_agent_work_decode(const char *json, struct px_agent_work *w, struct px_diag *d);
void px_agent_work_fini(struct px_agent_work *w);

#endif
