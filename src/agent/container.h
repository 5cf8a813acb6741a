/*
 * container.h - running a job's tasks inside its image (--container-image)
 * with an OCI runtime, crun by default (docs/containers.md says why).
 *
 * Per job (the supervisor, before the first task): the image is found and
 * unpacked into the node's cache (oci_image.h), its configuration read,
 * the mounts parsed. Per task: an OCI runtime configuration is written
 * into the job directory (ctr.<task>.json) and the task's child, instead
 * of exec'ing the command itself, execs `crun run` on it.
 *
 * What the configuration says, and why:
 *  - only a mount namespace: the tasks share the host's network (NCCL,
 *    MASTER_ADDR), process ids (the agent signals and waits for them, and
 *    SLURM_* pids stay true) and IPC, as pyxis/enroot containers do;
 *  - the process runs as the job's user and groups, no capabilities, no
 *    new privileges; the root filesystem is the cached image, read-only
 *    (shared by the user's jobs), with a private /tmp and /dev/shm;
 *  - cgroups: none of its own. The runtime runs with its cgroup manager
 *    disabled from inside the task's child, which has already joined the
 *    job's cgroups (task.c): the container is in the job's memory, cpuset,
 *    pids and devices groups, their limits hold, and the agent's OOM
 *    accounting, kill and wait work unchanged;
 *  - devices: /dev has only the standard nodes plus the job's GPUs
 *    (/dev/nvidiaN of its GPU indices, and nvidiactl / nvidia-uvm when the
 *    host has them), as the NVIDIA container toolkit exposes them, with the
 *    same CUDA_VISIBLE_DEVICES the job has outside an image;
 *  - environment: the job's (SLURM_*, torch's RANK/WORLD_SIZE/MASTER_*,
 *    CUDA_VISIBLE_DEVICES ...), except that a variable the image's
 *    configuration sets keeps the image's value unless --container-env
 *    names it (pyxis' rule);
 *  - working directory: --container-workdir, else the image's, else "/";
 *  - the batch script is bind-mounted read-only at PX_CTR_SCRIPT;
 *  - --container-mounts sources are opened as the job's user (O_PATH, in
 *    the task's child: px_ctr_child_setup) and bound onto a staging
 *    directory (JOBDIR/ctr.<tag>.mnt/<i>, on a tmpfs of the child's own
 *    mount namespace), which is what the runtime, root, then mounts: a user
 *    reaches through a mount only what they can reach on the host, and a
 *    symlink swapped in after the check changes nothing (the object opened
 *    is the object mounted).
 *
 * Hybrid cgroup hosts whose v2 hierarchy has a controller enabled: crun
 * refuses to start there even with its cgroup manager disabled. The
 * task's child then detaches /sys/fs/cgroup/unified in a mount namespace
 * of its own before exec'ing crun (the runtime manages no cgroup anyway).
 */
#ifndef PX_AGENT_CONTAINER_H
#define PX_AGENT_CONTAINER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/jobdir.h"
#include "agent/oci_image.h"
#include "proto/agent_msg.h"
#include "proto/container_spec.h"

#define PX_CTR_SCRIPT "/tmp/.phalanx/slurm_script"
#define PX_CTR_RUNTIME_DEFAULT "crun"

struct px_ctr {
  struct px_image img;
  char **img_env;            /* the image's Env ("K=V", NULL-terminated) */
  char workdir[PATH_MAX];
  struct px_ctr_mounts mounts;
  char jobdir[PATH_MAX];
  char tag[32];              /* "batch", or "s<id>" for a step: names its files and containers */
  char state_dir[PATH_MAX];  /* the runtime's --root: JOBDIR/crun.<tag> */
  char runtime[PATH_MAX];
  char stage_dir[PATH_MAX];  /* JOBDIR/ctr.<tag>.mnt: the mounts' sources, staged (see above) */
  char **stage;              /* stage_dir/<i>, one per mount */
  bool hide_cgroup2;
};

/* What the task's child execs (the strings live in the struct). */
struct px_ctr_task {
  char cfg[PATH_MAX + 32];
  char id[96];
  char *argv[12];
};

/* Prepares the container of the job (tag "batch") or of one of its steps
 * ("s<id>": l is the step's launch) on this node. 0, or -1 with err the
 * end reason ("ContainerImage: /x: no such image"). */
int px_ctr_prepare(struct px_ctr *c, const struct px_launch *l, const struct px_site *site, const char *jobdir,
                   const char *tag, char *err, size_t errlen);
/* Removes the runtime's state and the tasks' configurations; frees c. */
void px_ctr_fini(struct px_ctr *c);

/* In the task's child, root, before exec'ing the runtime: a mount
 * namespace of its own (the cgroup v2 hierarchy detached when crun would
 * refuse the host), and the mounts' sources opened with the user's
 * effective ids (groups: the user's) and staged. System calls only (the
 * child shares its parent's memory, task.h). 0, or -1 with errno set,
 * *what naming the step that failed and *arg its object (or NULL). */
int px_ctr_child_setup(const struct px_ctr *c, uid_t uid, gid_t gid, const gid_t *groups, int ngroups,
                       const char **what, const char **arg);

/* Writes task local_id's configuration, JOBDIR/ctr.<tag>.<local_id>.json (env: the task's environment; script:
 * the batch script on the host, or NULL for the job's argv) and fills t. */
int px_ctr_task(const struct px_ctr *c, const struct px_launch *l, char *const *env, const char *script,
                uint32_t local_id, struct px_ctr_task *t, char *err, size_t errlen);

#endif
