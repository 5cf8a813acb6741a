/* container_int.h - shared by container.c and container_oci.c. */
#ifndef PX_AGENT_CONTAINER_INT_H
#define PX_AGENT_CONTAINER_INT_H

#include <jansson.h>
#include <sys/types.h>

#include "agent/container.h"

/* The OCI runtime configuration of one task (container_oci.c), or NULL on ENOMEM. */
json_t *px_ctr_config(const struct px_ctr *c, const struct px_launch *l, char *const *env, const char *script,
                      const gid_t *groups, int ngroups);

#endif
