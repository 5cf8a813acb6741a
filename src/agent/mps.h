/*
 * mps.h - CUDA MPS control daemons for fractional GPUs (docs/gpus.md).
 *
 * When a job holding a share of GPU g starts and the node has
 * nvidia-cuda-mps-control, its supervisor makes sure a control daemon runs
 * for g (pipe and log directories STATE/mps/gpu<g>/, CUDA_VISIBLE_DEVICES=g
 * so its servers touch that GPU only) and records the job there; the last
 * share's end tells that daemon to quit. The calls of all supervisors of the
 * node are serialised by a lock file per GPU. Without the program nothing
 * runs and the job's environment says that its limits are not enforced.
 */
#ifndef PX_AGENT_MPS_H
#define PX_AGENT_MPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The control program on PATH (or /usr/bin) into out; false when absent. */
bool px_mps_find(char *out, size_t size);

/* The pipe directory of GPU gpu's daemon under mps_dir into out. */
int px_mps_pipe_dir(const char *mps_dir, uint32_t gpu, char *out, size_t size);

/* Job job_id uses GPU gpu's daemon: started unless running. 0, or an error
 * (why in err) after which the job runs without MPS. */
int px_mps_join(const char *control, const char *mps_dir, uint32_t gpu, uint64_t job_id, char *err,
                size_t errsize);

/* Job job_id no longer does; the last one stops the daemon. */
void px_mps_leave(const char *control, const char *mps_dir, uint32_t gpu, uint64_t job_id);

#endif
