/*
 * svc_replica.h - what the agent does for a service replica beyond a batch
 * job (svc_port.h, svc_health.h): ports and environment before the start,
 * the first RUNNING report and the health checks after it, and the same
 * again for a replica found running after an agent restart.
 */
#ifndef PX_AGENT_SVC_REPLICA_H
#define PX_AGENT_SVC_REPLICA_H

#include <stddef.h>
#include <stdint.h>

#include "agent/svc_health.h"
#include "agent/svc_port.h"
#include "proto/agent_msg.h"

/* Picks l->service's ports (none of taken) into ports and adds the
 * service's variables to l->env. 0, or an error with why filled. */
int px_replica_prepare(struct px_launch *l, const struct px_port_range *r, const uint16_t *taken, uint32_t ntaken,
                       uint16_t *ports, char *why, size_t size);

/* The replica runs (started, or reattached after an agent restart): starts
 * its checks and returns the report to send now (malloc'd JSON), or NULL
 * when the checks' first result will be the report (a reattached replica
 * with a check: "starting" would take a serving replica out of traffic). */
char *px_replica_running(struct px_health_mon *m, const char *node, const struct px_launch *l, const uint16_t *ports,
                         const char *jobdir, bool reattached);

/* A reattached job's order, read back from its directory (l->service NULL
 * for a batch job), and a replica's ports. 0, or an error (then l is
 * empty). */
int px_replica_recover(const char *jobdir, struct px_launch *l, uint16_t *ports);

#endif
