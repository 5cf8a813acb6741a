/*
 * conf.h - the parsed cluster configuration as plain structs.
 *
 * The parser (conf.c and friends) reads a slurm.conf-compatible subset, a
 * topology.conf, and Phalanx's accounts/QoS file (docs/config.md) into one
 * struct px_conf. Every string and array hangs off the conf's arena, so
 * px_conf_free() releases everything at once. Cross-references are dense
 * indexes into the arrays here (node 17, account 3), resolved by the parser,
 * so the core never looks names up on its hot path.
 *
 * Ordering: nodes in the order the files define them; the account tree in
 * depth-first pre-order (a parent's index is always below its children's,
 * children in file order, an account's user leaves before its sub-accounts);
 * QoS "normal" first, then the others in file order.
 *
 * Conventions: times in seconds (`_s`), PX_TIME_UNLIMITED for "UNLIMITED";
 * memory in MiB (`_mib`); counts are uint32_t; PX_NOLIMIT for an absent limit.
 */
#ifndef PX_CONF_CONF_H
#define PX_CONF_CONF_H

#include <stdbool.h>
#include <stdint.h>

#include "conf/gpu_policy.h"
#include "util/arena.h"
#include "util/error.h"
#include "util/units.h" /* PX_TIME_UNLIMITED */

#define PX_NOLIMIT UINT64_MAX
#define PX_NONE UINT32_MAX /* absent index */
#define PX_FAIRSHARE_PARENT UINT32_MAX /* px_conf_account.fairshare for FairShare=parent */

enum px_node_state { PX_NODE_CONF_UP, PX_NODE_CONF_DOWN, PX_NODE_CONF_DRAIN, PX_NODE_CONF_FUTURE };

/* GpuShares= (docs/gpus.md): NO; YES, fractional jobs of anyone share a
 * GPU; USER, a shared GPU carries one user's jobs at a time (CUDA MPS runs
 * one user's server per GPU at a time). */
enum px_gpu_shares { PX_GPU_SHARES_NO, PX_GPU_SHARES_YES, PX_GPU_SHARES_USER };

struct px_conf_gpu_type {
  const char *type;
  uint32_t count;
};

struct px_conf_node {
  const char *name;          /* "gpu0001" */
  const char *addr;          /* NodeAddr, or NULL (use name) */
  uint32_t cpus;             /* CPUs=, or sockets*cores*threads */
  uint32_t sockets, cores_per_socket, threads_per_core;
  uint64_t mem_mib;          /* RealMemory */
  uint32_t ngpu;             /* from Gres=gpu[:type]:N */
  const char *gpu_type;      /* NULL when untyped, or when the node has several types */
  /* Several types (Gres=gpu:1g.10gb:7,gpu:3g.40gb:1: MIG profiles side by
   * side), by type name: the node's GPU indices go through them in that
   * order (the first type's count, then the next's), which is also the
   * order the agent reports them in. NULL and 0 with one type or none. */
  const struct px_conf_gpu_type *gpu_types;
  uint32_t ngpu_types;
  uint32_t gpu_groups;       /* NVLink/NUMA groups the GPUs split into evenly (Phalanx: GpuGroups=, default 1) */
  enum px_gpu_shares gpu_shares; /* GpuShares=: its GPUs may be shared by fractional jobs (docs/gpus.md) */
  const char **features;     /* Features=a,b */
  uint32_t nfeatures;
  uint32_t weight;           /* Weight=, default 1; lower is preferred */
  enum px_node_state state;
  uint32_t leaf_switch;      /* index into switches, or PX_NONE */
  uint32_t block;            /* index into blocks, or PX_NONE */
};

enum px_oversubscribe { PX_OVERSUB_NO, PX_OVERSUB_YES, PX_OVERSUB_EXCLUSIVE, PX_OVERSUB_FORCE };
enum px_preempt_mode { PX_PREEMPT_OFF, PX_PREEMPT_CANCEL, PX_PREEMPT_REQUEUE, PX_PREEMPT_SUSPEND };

struct px_conf_partition {
  const char *name;
  uint32_t *nodes;           /* node indexes, ascending */
  uint32_t nnodes;
  bool is_default;
  bool up;                   /* State=UP (default) */
  int64_t max_time_s;        /* MaxTime, PX_TIME_UNLIMITED by default */
  int64_t default_time_s;    /* DefaultTime, or max_time_s when absent */
  uint32_t max_nodes;        /* MaxNodes, UINT32_MAX when absent */
  uint32_t *allow_accounts;  /* account indexes; NULL = all */
  uint32_t nallow_accounts;
  uint32_t *deny_accounts;
  uint32_t ndeny_accounts;
  uint32_t *allow_qos;       /* qos indexes; NULL = all */
  uint32_t nallow_qos;
  uint32_t priority_tier;
  uint32_t priority_job_factor;
  enum px_oversubscribe oversubscribe;
  enum px_preempt_mode preempt_mode;
  bool exclusive_account;    /* Phalanx tenancy: a node runs jobs of one account at a time */
  enum px_gpu_shares gpu_shares; /* GpuShares=: every node of it offers GPU shares (docs/gpus.md) */
};

/* A switch of the topology tree (topology.conf SwitchName=). */
struct px_conf_switch {
  const char *name;
  uint32_t parent;           /* switch index or PX_NONE for a root */
  uint32_t level;            /* 0 for leaf switches (those with Nodes=) */
  uint32_t *nodes;           /* leaf switches: node indexes */
  uint32_t nnodes;
  uint32_t *children;        /* upper switches: switch indexes */
  uint32_t nchildren;
};

/* An NVLink-domain block (topology BlockName=). */
struct px_conf_block {
  const char *name;
  uint32_t *nodes;
  uint32_t nnodes;
};

/*
 * An account of the fair-share tree, or a user leaf under one (a Slurm
 * association). Users appear as leaves with is_user set, one per
 * (user, account) pair, so Fair Tree works over one tree.
 */
struct px_conf_account {
  const char *name;          /* account name, or the user name for a user leaf */
  uint32_t parent;           /* account index, PX_NONE for the root */
  bool is_user;
  uint32_t fairshare;        /* raw shares, default 1 */
  uint64_t grp_gpus, grp_cpus, grp_mem_mib, grp_nodes; /* GrpTRES, PX_NOLIMIT when absent */
  uint64_t grp_jobs, max_jobs, max_submit_jobs;        /* PX_NOLIMIT when absent */
  uint64_t max_gpus_per_job;                            /* MaxTRES=gres/gpu=N */
  /* Borrowable quota (Phalanx; the Kueue model): */
  uint64_t guaranteed_gpus;  /* GuaranteedGPUs=, 0 when none */
  const char *cohort;        /* Cohort=, NULL when none */
  uint64_t borrow_limit_gpus;/* BorrowingLimit=, PX_NOLIMIT = any idle capacity of the cohort */
  uint64_t lend_limit_gpus;  /* LendingLimit=, PX_NOLIMIT = all idle guarantee */
  const char *default_qos;   /* DefaultQOS=, else inherited from the parent ("normal" at root) */
  const char **coordinators; /* user names who may act on the account's jobs */
  uint32_t ncoordinators;
  bool is_default_account;   /* user leaves: this is the user's default account
                                (User= DefaultAccount=, else the first one listed) */
  /* Changed online (sacctmgr, an ACCT event; conf/acct_edit.c): */
  bool deleted;              /* removed: kept so that indexes stay stable, never listed */
  const char *description;   /* sacctmgr's Description=, NULL: the default (the name) */
  const char *organization;  /* Organization=, NULL: the default (the parent's name) */
};

struct px_conf_qos {
  const char *name;
  uint32_t priority;
  uint32_t *preempt;         /* qos indexes this QoS may preempt */
  uint32_t npreempt;
  enum px_preempt_mode preempt_mode;
  int64_t grace_time_s;      /* GraceTime */
  int64_t min_runtime_s;     /* Phalanx: PreemptExemptTime */
  int32_t grace_signal;      /* Phalanx: GraceSignal= sent at preemption; 0 = SIGTERM (15) */
  uint64_t max_gpus_per_user;/* MaxTRESPerUser=gres/gpu=N */
  uint64_t max_jobs_per_user;
  uint64_t max_submit_per_user;
  int64_t max_wall_s;        /* MaxWall, PX_TIME_UNLIMITED */
  double usage_factor;       /* UsageFactor, default 1.0 */
  bool deleted;              /* deleted online (acct_edit.c): not found, not listed, index kept */
};

/*
 * A change of the accounts tree or of a QoS made online (sacctmgr add,
 * modify, delete): the record of an ACCT event (core/event.h), applied by
 * the core (core/acct.c, which validates it) and then, once accepted, by
 * px_conf_acct_apply to the server's copy of the configuration, so that
 * both keep the same indexes. The configuration file stays the bootstrap.
 *
 * Settable values, one table: a value is PX_NOLIMIT to clear a limit;
 * which entity each applies to is the core's check.
 */
#define PX_ACCT_FIELDS(X)                                             \
  X(FAIRSHARE, "fairshare", true)                                    \
  X(GRP_GPUS, "grp_gpus", true)                                      \
  X(GRP_CPUS, "grp_cpus", true)                                      \
  X(GRP_MEM, "grp_mem_mib", true)                                    \
  X(GRP_NODES, "grp_nodes", true)                                    \
  X(GRP_JOBS, "grp_jobs", true)                                      \
  X(MAX_JOBS, "max_jobs", true)                                      \
  X(MAX_SUBMIT, "max_submit_jobs", true)                             \
  X(MAX_GPUS_PER_JOB, "max_gpus_per_job", true)                      \
  X(PRIORITY, "priority", false)                                     \
  X(MAX_GPUS_PER_USER, "max_gpus_per_user", false)                   \
  X(MAX_JOBS_PER_USER, "max_jobs_per_user", false)                   \
  X(MAX_SUBMIT_PER_USER, "max_submit_per_user", false)               \
  X(MAX_WALL_S, "max_wall_s", false)

enum px_acct_field {
#define PX_ACCT_FIELD_ENUM(k, name, assoc) PX_ACCT_##k,
  PX_ACCT_FIELDS(PX_ACCT_FIELD_ENUM)
#undef PX_ACCT_FIELD_ENUM
  PX_ACCT_NFIELDS
};
/* "fairshare", ...; NULL out of range. For an association (account or user)
 * or a QoS. */
const char *px_acct_field_name(enum px_acct_field f);
bool px_acct_field_is_assoc(enum px_acct_field f);

enum px_acct_op { PX_ACCT_ADD, PX_ACCT_MODIFY, PX_ACCT_DELETE };
enum px_acct_entity { PX_ACCT_ACCOUNT, PX_ACCT_USER, PX_ACCT_QOS };

struct px_acct_edit {
  enum px_acct_op op;
  enum px_acct_entity entity;
  const char *name;          /* the account, user or QoS */
  const char *account;       /* USER: the association's account (ADD: required;
                                MODIFY, DELETE: NULL = every association of the user) */
  const char *parent;        /* ADD ACCOUNT: NULL = root */
  bool default_account;      /* USER, ADD or MODIFY with account: it becomes the user's default */
  const char *description, *organization; /* ACCOUNT: listing only (NULL: unchanged) */
  uint32_t set;              /* bit per enum px_acct_field given */
  uint64_t value[PX_ACCT_NFIELDS];
};


enum px_backfill_mode { PX_BACKFILL_NONE, PX_BACKFILL_EASY, PX_BACKFILL_CONSERVATIVE };
enum px_placement_policy { PX_PLACE_PACK, PX_PLACE_SPREAD };
enum px_priority_order { PX_ORDER_MULTIFACTOR, PX_ORDER_FIFO, PX_ORDER_LAS };
#define PX_LAS_MAX_THRESHOLDS 7

struct px_conf_sched {
  const char *scheduler_type;      /* "sched/backfill" or "sched/builtin" */
  const char *priority_type;       /* "priority/multifactor" or "priority/basic" */
  const char *select_type;
  const char *preempt_type;        /* "preempt/none", "preempt/qos", "preempt/partition_prio" */
  enum px_preempt_mode preempt_mode;
  enum px_backfill_mode backfill;  /* from SchedulerType plus Phalanx's BackfillMode= */
  uint32_t backfill_depth;         /* conservative reservations, UINT32_MAX = all */
  enum px_placement_policy placement;
  enum px_priority_order order;
  int64_t decay_half_life_s;       /* PriorityDecayHalfLife, default 7 days; 0 = no decay */
  int64_t max_age_s;               /* PriorityMaxAge, default 7 days */
  uint32_t weight_age, weight_fairshare, weight_jobsize, weight_partition, weight_qos, weight_tres;
  /* PriorityWeightTRES=CPU=a,Mem=b,GRES/gpu=c split by TRES; weight_tres is their sum. */
  uint32_t weight_tres_cpu, weight_tres_mem, weight_tres_gpu;
  bool favor_small;                /* PriorityFavorSmall */
  bool fair_tree_merge_ties;       /* FairTreeMergeTies: tied sibling accounts' children ranked together
                                      (Slurm's documentation); default off, as Slurm 22.05 computes */
  double billing_weight_gpu, billing_weight_cpu, billing_weight_mem_gib; /* TRESBillingWeights */
  /* issue 4 (0 = the default named): */
  int64_t backfill_window_s;       /* BackfillWindow= (Slurm bf_window), default 86400 */
  int64_t backfill_resolution_s;   /* BackfillResolution= (bf_resolution), default 300 */
  /* Bounds on a cycle's work (issue 5), Slurm's SchedulerParameters names;
   * 0 = unbounded, the default (Slurm's own defaults are 30, 500 and 100). */
  int64_t bf_interval_s;           /* bf_interval: a backfill pass at most once per this many seconds;
                                      cycles between are main passes (no backfill) */
  uint32_t bf_max_job_test;        /* bf_max_job_test: jobs a backfill pass tries */
  uint32_t default_queue_depth;    /* default_queue_depth: jobs a main pass tries (with bf_interval) */
  uint32_t preempt_max_per_hour;   /* PreemptMaxPerHour=, cluster-wide; 0 = no limit */
  uint32_t preempt_account_max_per_hour; /* PreemptAccountMaxPerHour=, per victim account */
  uint32_t preempt_exempt_after;   /* PreemptExemptAfter=N: a job preempted N times ... */
  int64_t preempt_exempt_s;        /* PreemptExemptPeriod=: ... is exempt this long; default 3600 */
  /* PriorityOrder=las (issue 5): attained-service queue thresholds in
   * GPU-seconds, ascending; las_nthresholds 0 = the core's default */
  int64_t las_thresholds_gpu_s[PX_LAS_MAX_THRESHOLDS];
  uint32_t las_nthresholds;
  /* LasStarveLimit=F (issue 21, Tiresias' STARVELIMIT): a pending job that
   * has waited F times its attained run time (GPU-s / GPUs) is promoted to
   * queue 0, its attained service forgotten; 0 = never */
  double las_starve_limit;
  /* The simulator's checkpoint model (issue 21; the server ignores them: a
   * real job checkpoints itself): a preempted run keeps its work up to its
   * last checkpoint (every ckpt_interval_s of progress; 0 = none, Slurm's
   * plain requeue restarts from zero) and a resumed run first spends
   * ckpt_restart_s loading it. */
  int64_t ckpt_interval_s;         /* CheckpointInterval= */
  int64_t ckpt_restart_s;          /* CheckpointRestartCost= (plain seconds) */
};

/* Phalanx's own keys (docs/config.md). */
#define PX_HC_ANY 1u
#define PX_HC_ALLOC 2u
#define PX_HC_MIXED 4u
#define PX_HC_IDLE 8u
#define PX_HC_NONDRAINED_IDLE 16u
#define PX_HC_CYCLE 32u

struct px_conf_phalanx {
  const char *state_dir;           /* StateDir=, default /var/lib/phalanx */
  const char *store_url;           /* StoreURL=, default sqlite under state_dir */
  const char *listen;              /* Listen=host:port for agents and remote clients */
  const char *socket_path;         /* SocketPath= for local clients */
  /* TLS on Listen= (docs/operations.md, Security): the server's certificate
   * and key (PEM), and the CA clients and agents verify it against. */
  const char *tls_cert_file;       /* TLSCertFile= */
  const char *tls_key_file;        /* TLSKeyFile= */
  const char *tls_ca_file;         /* TLSCAFile= */
  bool allow_plain_tcp;            /* AllowPlainTCP=YES: plain Listen= off loopback, open routes only */
  int64_t heartbeat_interval_s;
  int64_t node_down_timeout_s;     /* SlurmdTimeout */
  int64_t kill_wait_s;             /* KillWait */
  bool allow_root_jobs;
  bool private_jobs;               /* users list only their own jobs */
  /* Roles (server): Operators= drain nodes and set priorities;
   * Administrators= change anything. Root is always an administrator. */
  const char **operators;
  uint32_t noperators;
  const char **administrators;
  uint32_t nadministrators;
  struct px_gpu_policy gpu;        /* GpuFaultPolicy=, GpuQuarantineFaults=, ... (gpu_policy.h) */
  /* Node health (docs/gpus.md): the agents run HealthCheckProgram= every
   * HealthCheckInterval= seconds (0: only at start) on nodes in the states
   * of HealthCheckNodeState= (PX_HC_* bits; 0 is ANY); RebootProgram= is
   * what `scontrol reboot` runs on an emptied node. */
  const char *health_check_program;
  int64_t health_check_interval_s;
  unsigned health_check_states;
  const char *reboot_program;
  /* --mail-type: MailProg= runs as `MailProg -s SUBJECT USER` (default
   * /bin/mail); MailDomain= is added to bare user names. */
  const char *mail_prog, *mail_domain;
  const char *container_image_dir; /* ContainerImageDir=: where nodes look up image names (docs/containers.md) */
};

/* An advance reservation (scontrol create reservation; Phalanx reads
 * ReservationName= lines, docs/scheduling-policies.md). */
struct px_conf_resv {
  const char *name;
  int64_t start_s, end_s;    /* StartTime=, EndTime= or StartTime+Duration */
  uint32_t *nodes;           /* Nodes=, node indexes; NULL with ngpus */
  uint32_t nnodes;
  uint32_t partition;        /* PartitionName= with ngpus, else PX_NONE */
  uint32_t ngpus;            /* TRES=gres/gpu=N */
  uint32_t account;          /* Accounts=, account index, or PX_NONE */
  bool maintenance;          /* Flags=MAINT: nobody runs there */
};

struct px_conf {
  struct px_arena arena;           /* owns everything below */
  const char *cluster_name;
  struct px_conf_node *nodes;
  uint32_t nnodes;
  struct px_conf_partition *partitions;
  uint32_t npartitions;
  uint32_t default_partition;      /* index or PX_NONE */
  struct px_conf_switch *switches;
  uint32_t nswitches;
  struct px_conf_block *blocks;
  uint32_t nblocks;
  struct px_conf_account *accounts;/* index 0 is the root ("root") */
  uint32_t naccounts;
  uint32_t accounts_cap;           /* room in accounts once grown online (acct_edit.c); 0: naccounts */
  struct px_conf_qos *qos;         /* index 0 is "normal" (always present) */
  uint32_t nqos;
  uint32_t qos_cap;                /* room in qos once grown online (acct_edit.c); 0: nqos */
  struct px_conf_sched sched;
  struct px_conf_phalanx phalanx;
  const char **files;              /* every file read, in order (slurm.conf first) */
  uint32_t nfiles;
  struct px_conf_resv *reservations; /* issue 4: ReservationName= lines */
  uint32_t nreservations;
};

void px_conf_free(struct px_conf *c);

/*
 * Loading. Every error and warning is collected (not just the first), each
 * naming file and line; *out is set only when there was no error, so nothing
 * half-parsed is ever used. Returns 0, PX_EPARSE (errors are in diags),
 * PX_EIO (a file could not be read; also in diags) or PX_ENOMEM.
 */
struct px_conf_msg {
  bool is_error;                   /* else a warning */
  char *file;                      /* "" when not tied to a file */
  int line;                        /* 0 when not tied to a line */
  char *text;
};

struct px_conf_diags {
  struct px_conf_msg *v;           /* the first PX_CONF_MAX_MSGS messages */
  size_t len, cap;
  uint32_t nerrors, nwarnings;     /* all of them, including those not kept */
};
#define PX_CONF_MAX_MSGS 500

/* A zeroed struct is empty. */
void px_conf_diags_fini(struct px_conf_diags *d);
/* "file:line: error: text" (snprintf semantics). */
int px_conf_msg_format(const struct px_conf_msg *m, char *buf, size_t n);

/*
 * Reads slurm.conf at `path` (and its Include files), then the topology
 * (TopologyFile=, else topology.conf beside slurm.conf when present) and the
 * accounts/QoS file (AccountsFile=, else accounts.conf beside it when
 * present). diags may be NULL.
 */
int px_conf_load(const char *path, struct px_conf **out, struct px_conf_diags *diags);

/* The same from memory (tests, fuzzing): Include, TopologyFile= and AccountsFile= are errors. */
struct px_conf_text {
  const char *slurm;               /* slurm.conf text */
  const char *topology;            /* topology.conf text, or NULL */
  const char *accounts;            /* accounts file text, or NULL */
  const char *name;                /* slurm.conf's name in messages; NULL: "slurm.conf" */
  size_t max_nodes;                /* cap on nodes and on any hostlist's names; 0: 100,000 */
};
int px_conf_parse_text(const struct px_conf_text *t, struct px_conf **out, struct px_conf_diags *diags);
/* slurm.conf text only. */
int px_conf_parse_string(const char *text, const char *name, struct px_conf **out,
                         struct px_conf_diags *diags);

/*
 * One scheduling key of slurm.conf (a global key that writes only struct
 * px_conf_sched: SchedulerType, BackfillMode, PriorityWeight*,
 * SchedulerParameters, ...) applied to s by slurm.conf's own parser, for
 * the simulator's policy files. 0; PX_ENOENT when key is not a scheduling
 * key; PX_EPARSE with d saying why (also for what the key would only warn
 * about in slurm.conf, such as an option of SchedulerParameters that
 * Phalanx does not read); s changes only on success.
 */
int px_conf_sched_set(struct px_conf_sched *s, const char *key, const char *val, struct px_diag *d);

/* Index of a node, partition, account (not a user leaf, not deleted) or QoS by name, or PX_NONE. Linear. */
uint32_t px_conf_find_node(const struct px_conf *c, const char *name);
uint32_t px_conf_find_partition(const struct px_conf *c, const char *name);
uint32_t px_conf_find_account(const struct px_conf *c, const char *name);
uint32_t px_conf_find_qos(const struct px_conf *c, const char *name);

/* Applies an edit the core accepted (struct px_acct_edit above) to c's
 * accounts and QoS (new entries at the end, deleted ones marked):
 * 0 or PX_ENOMEM (acct_edit.c). */
int px_conf_acct_apply(struct px_conf *c, const struct px_acct_edit *e);
/* The type of GPU index i of node n (NULL: untyped, or no such index). */
const char *px_conf_gpu_type_at(const struct px_conf_node *n, uint32_t i);
/* The node's GPUs as slurm.conf's Gres says them ("gpu:h100:8",
 * "gpu:1g.10gb:7,gpu:3g.40gb:1", "gpu:4"; "" without GPUs) into buf. */
void px_conf_gres_str(const struct px_conf_node *n, char *buf, size_t size);
/* The same with the counts of the GPUs whose bit is set in mask (bit i:
 * GPU index i): "gpu:1g.10gb:2,gpu:2g.20gb:0,gpu:3g.40gb:1". */
void px_conf_gres_count_str(const struct px_conf_node *n, uint64_t mask, char *buf, size_t size);

#endif
