/*
 * outpath.h - Slurm's output file name patterns (--output/--error):
 * %j job id, %A array master id, %a array index, %x job name, %u user,
 * %N node name, %n node id, %t task id, %s step ("batch"), %J job.step,
 * %% a percent sign; a number after % zero-pads (%4j). Unknown specifiers
 * are kept as written. Relative results are under the job's working
 * directory; the default is slurm-%j.out (slurm-%A_%a.out for arrays).
 */
#ifndef PX_AGENT_OUTPATH_H
#define PX_AGENT_OUTPATH_H

#include <stddef.h>
#include <stdint.h>

#include "proto/agent_msg.h"

/* pattern NULL means the default. 0, or PX_ERANGE when buf is too small. */
int px_outpath_expand(const char *pattern, const struct px_launch *l, const char *node,
                      uint32_t task_id, char *buf, size_t size);

#endif
