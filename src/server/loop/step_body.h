/*
 * step_body.h - the bodies of the job steps' requests (step_body.c),
 * decoded and checked before the main thread acts on them (steps.c):
 *
 *   POST /v1/jobs/{id}/steps          a step: what runs, where, how many
 *   POST /v1/jobs/{id}/steps/{n}/end  how a step srun ran itself ended
 *
 * Errors name the field ("step.nodes: ..."); nothing is kept on refusal.
 */
#ifndef PX_SERVER_LOOP_STEP_BODY_H
#define PX_SERVER_LOOP_STEP_BODY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/jobspec.h"

struct px_step_body {
  char **argv, **env, *cwd, *out_dir, *distribution;
  struct px_jobspec ctr; /* only its container_* fields: srun --container-image and the rest */
  uint32_t nargv, nenv, nodes, ntasks, per_node, gpus_per_task;
  /* a terminal step: the relay session the HTTP layer opened (api_steps.c) */
  bool pty, raw;
  char *pty_session, *pty_secret;
  char *node; /* a terminal's (srun --pty -w) or a local step's node; NULL: the first */
  uint32_t rows, cols;
  /* "local":true: srun runs the tasks itself on its node (a one-node step
   * inside the batch script) and reports their end; no orders go out */
  bool local;
};

/* job_nodes: the job's node count (a step asks for at most that many). */
int px_step_body_decode(const char *text, struct px_step_body *b, uint32_t job_nodes, struct px_diag *d);
void px_step_body_fini(struct px_step_body *b);

/* {"exit_code":E,"term_signal":S,"peak_mem_mib":M,"cpu_time_ms":C}: a
 * local step's end, as its node's report (state from the code and signal). */
struct px_step_end {
  int32_t exit_code, term_signal;
  uint64_t peak_mem_mib, cpu_time_ms;
};
int px_step_end_decode(const char *text, struct px_step_end *e, struct px_diag *d);

#endif
