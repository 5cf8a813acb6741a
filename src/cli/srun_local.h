/*
 * srun_local.h - the server's record of a step srun runs itself on the
 * batch node (srun_local.c): its id comes from the server, so it is one
 * sequence with the steps the agents run, and its end (exit status, peak
 * RSS, CPU time) is journaled, so sacct lists it as N.0, N.1, ...
 */
#ifndef PX_CLI_SRUN_LOCAL_H
#define PX_CLI_SRUN_LOCAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/cmd_common.h"

/* What the tasks used, summed as sacct shows it (wait4's rusage). */
struct px_local_usage {
  int32_t exit_code, term_signal;  /* the highest exit code, the first signal */
  uint64_t peak_rss_kib, cpu_time_ms;
};

/* The step's id from the server (*recorded true), or, when the server does
 * not answer, from a per-job counter file in $TMPDIR (*recorded false: the
 * step still runs, unrecorded, as it would without a server). */
uint32_t px_srun_local_start(struct px_cmd *c, const char *job, const char *node, char **argv,
                             uint32_t ntasks, bool *recorded);
/* The end, for the record; a failure is reported and changes nothing else. */
void px_srun_local_end(struct px_cmd *c, const char *job, uint32_t step, const struct px_local_usage *u);

#endif
