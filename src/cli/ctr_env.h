/*
 * ctr_env.h - salloc's --container-* options handed to the sruns of its
 * shell through PHALANX_CONTAINER_* variables (ctr_env.c).
 */
#ifndef PX_CLI_CTR_ENV_H
#define PX_CLI_CTR_ENV_H

#include "cli/cli.h"

/* salloc: moves s's container_* fields into the environment (clearing them in s). 0 or PX_ENOMEM. */
int px_ctr_to_env(struct px_jobspec *s);
/* srun inside an allocation without --container-image: the shell's PHALANX_CONTAINER_*. 0 or PX_ENOMEM. */
int px_ctr_from_env(struct px_jobspec *s);

#endif
