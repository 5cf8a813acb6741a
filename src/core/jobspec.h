/*
 * jobspec.h - what a user asks for: the job specification shared by the CLI
 * (#SBATCH / flags), the wire codec (proto/) and the core.
 *
 * The scheduling fields are read by the core; the launch fields (script,
 * working directory, output paths, environment) are carried for the agent and
 * ignored by the core. All strings are heap copies owned by the spec:
 * px_jobspec_fini() frees them. A zeroed spec (px_jobspec_init) means "not
 * given" everywhere, and the core fills defaults (partition default time,
 * default partition, 1 node, 1 task, 1 CPU per task).
 *
 * The dependency and array expressions stay as the user wrote them
 * ("afterok:12:13,singleton", "0-999:2%50"); the core parses and validates
 * them at submit (PX_EV_SUBMIT names the field on error).
 */
#ifndef PX_CORE_JOBSPEC_H
#define PX_CORE_JOBSPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

struct px_jobspec {
  /* identity */
  char *name;                 /* --job-name, default the script name or "wrap" */
  char *user;                 /* submitting user name */
  uint32_t uid, gid;
  char *account;              /* NULL: the user's default account */
  char *partition;            /* NULL: the default partition */
  char *qos;                  /* NULL: the account's default QoS */

  /* shape */
  uint32_t nodes_min, nodes_max;   /* -N min[-max]; 0 = not given */
  uint32_t ntasks;                 /* -n; 0 = not given */
  uint32_t ntasks_per_node;        /* 0 = not given */
  uint32_t cpus_per_task;          /* 0 = not given (1) */
  uint32_t gpus;                   /* --gpus total; 0 = not given */
  uint32_t gpus_per_node;          /* --gpus-per-node or --gres=gpu[:type]:N */
  uint32_t gpus_per_task;          /* --gpus-per-task */
  uint32_t gpu_share;              /* --gpus=0.5: hundredths of one GPU (1-99), shared with other
                                      fractional jobs (docs/gpus.md); 0 = whole GPUs. Not with gpus */
  char *gpu_type;                  /* "h100" from any of the forms, or NULL */
  uint64_t mem_per_node_mib;       /* --mem; 0 = not given */
  uint64_t mem_per_cpu_mib;        /* --mem-per-cpu */
  uint64_t mem_per_gpu_mib;        /* --mem-per-gpu */
  int64_t time_limit_s;            /* --time; 0 = partition default; PX_TIME_UNLIMITED */
  int64_t time_min_s;              /* --time-min: backfill may shorten the limit down to it; 0 = no */
  int32_t nice;                    /* --nice */
  char *constraint;                /* --constraint "a&b|c" */
  char *exclude;                   /* --exclude: nodes it may not run on ("n[01-02],n07") */
  char *nodelist;                  /* --nodelist: nodes it must run on, all of them */
  char *reservation;               /* --reservation: runs only inside this reservation */
  uint32_t cpus_per_gpu;           /* --cpus-per-gpu; 0 = not given (not with cpus_per_task) */
  bool exclusive;                  /* --exclusive */
  uint32_t switches;               /* --switches=N; 0 = not given */
  int64_t switches_wait_s;         /* the @maxwait part */

  /* when */
  bool hold;                       /* -H / --hold */
  int64_t begin_s;                 /* --begin as a Unix time; 0 = now */
  char *dependency;                /* -d as written */
  char *array;                     /* -a as written ("0-999%50") */

  /* behaviour on preemption / limits */
  bool requeue;                    /* --requeue (default) / --no-requeue */
  bool no_requeue_given;           /* true when --no-requeue was given */
  int32_t signal_num;              /* --signal=[B:]SIG@TIME; 0 = none */
  int32_t signal_time_s;
  bool signal_batch_only;          /* the B: prefix */

  /* launch (carried for the agent; the core ignores these) */
  char *script;                    /* the batch script text, or NULL with argv */
  char **argv;                     /* a command for srun-style jobs; NULL-terminated */
  char *workdir;                   /* --chdir, default the submit directory */
  char *submit_dir;
  char *stdout_path;               /* --output pattern (%j %A %a %x %u %N %t) */
  char *stderr_path;               /* --error pattern */
  char *stdin_path;
  char **env;                      /* "K=V" strings, NULL-terminated */
  char *comment;
  char *mail_type, *mail_user;     /* accepted and stored */
  char *open_mode;                 /* --open-mode: "append" or "truncate" (NULL: truncate) */
  char *hint;                      /* --hint: nomultithread, multithread, compute_bound, memory_bound */
  char *distribution;              /* -m: block|cyclic|plane=N|arbitrary[:...], as written */
  /* --container-* (pyxis' spelling; proto/container_spec.h checks them) */
  char *container_image;           /* an OCI layout directory, a docker-archive tar, or a name */
  char *container_mounts;          /* SRC:DST[:FLAGS][,...] */
  char *container_workdir;         /* absolute path inside the image */
  char *container_env;             /* NAME[,NAME...]: the host's value wins over the image's */

  /* a service's replica (svc/svc.h): NULL for a batch job */
  char *service;                   /* the service's name */
  uint32_t replica;                /* its index */
  uint64_t service_generation;     /* the spec version it runs */
};

void px_jobspec_init(struct px_jobspec *s);
void px_jobspec_fini(struct px_jobspec *s);
/* Deep copy; 0 or PX_ENOMEM (dst left initialised and empty). */
int px_jobspec_copy(struct px_jobspec *dst, const struct px_jobspec *src);
/* open_mode, hint, distribution and mail_type as Slurm accepts them (the agent and srun
 * act on them; this only refuses what they cannot mean, naming the field).
 * 0 or PX_EINVAL. Pure: the CLI asks it too. */
int px_jobspec_check_launch(const struct px_jobspec *s, struct px_diag *d);

#endif
