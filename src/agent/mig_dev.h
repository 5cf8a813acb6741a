/*
 * mig_dev.h - the device nodes through which a MIG instance is reached, so
 * that a job's device cgroup lets it open its own instances and none of a
 * neighbour's (docs/gpus.md, "Shared GPUs: MIG instances").
 *
 * CUDA opens an instance through its parent GPU's /dev/nvidiaN (char
 * 195:N) and two capability devices, /dev/nvidia-caps/nvidia-cap<M>, one
 * for its GPU instance and one for its compute instance. The driver lists
 * the capabilities' minors in /proc/driver/nvidia-caps/mig-minors
 * ("gpu0/gi1/access 12", "gpu0/gi1/ci0/access 13", the GPU named by its
 * /dev/nvidiaN minor) and their major is the "nvidia-caps" line of
 * /proc/devices. $PHALANX_MIG_MINORS and $PHALANX_PROC_DEVICES name other
 * files in their place (tests, and an emulated driver).
 *
 * The agent writes STATE/gpu_devices at its start: line i lists the devices
 * ("MAJ:MIN" words) that instance i needs. A job's supervisor denies every
 * device of the file that none of its instances needs; everything else
 * (nvidiactl, nvidia-uvm, the rest of /dev) stays as it was.
 */
#ifndef PX_AGENT_MIG_DEV_H
#define PX_AGENT_MIG_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "agent/cgroup.h"
#include "agent/discover.h"

#define PX_MIG_DEVS_MAX (3 * PX_MAX_NODE_GPUS)

/* The major of "nvidia-caps" in text in /proc/devices' format, or -1. */
int px_mig_caps_major(const char *proc_devices);

/* The minor of gpu/gi/access (ci < 0) or gpu/gi/ci/access in text in
 * mig-minors' format, or -1. */
int px_mig_cap_minor(const char *minors, int gpu, int gi, int ci);

/* Writes path (see above) for r's instances. 0; PX_ENOENT with why filled
 * when a device cannot be named (no mig-minors, no nvidia-caps major, an
 * instance whose ids NVML did not give): nothing is written, and jobs then
 * run without device rules; PX_EIO. */
int px_mig_devices_write(const struct px_node_res *r, const char *path, char *why, size_t whylen);

/* Fills deny[0..*ndeny) (room for PX_MIG_DEVS_MAX) with the devices of
 * path that none of the instances gpus[0..ngpus) needs. 0 or PX_EIO. */
int px_mig_devices_deny(const char *path, const uint32_t *gpus, uint32_t ngpus, struct px_cg_dev *deny,
                        uint32_t *ndeny);

#endif
