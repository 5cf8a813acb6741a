/*
 * svc_port.h - TCP ports for service replicas, and the environment that
 * tells a replica which ones it got.
 *
 * Each port name of a service gets a port of this host from a range
 * (default 30000-32767: below Linux's ephemeral range, 32768-60999, so no
 * outgoing connection of the host ever sits on one). A port is taken only
 * when nothing on the host is bound to it (a bind test, without
 * SO_REUSEADDR) and this agent has not handed it to a replica that has not
 * bound it yet; the scan starts at a point drawn from a seed, so agents
 * sharing a host (`phalanx dev`) rarely race for one. A replica that still
 * loses such a race fails to bind, exits, and is replaced. Ports return to
 * the pool when the replica ends (the agent simply stops counting them).
 *
 * Environment: PORT (the first port), PX_PORT_<NAME> (name upper-cased,
 * '-' as '_'), PX_SERVICE, PX_REPLICA; added to the order's exported
 * environment, so launch.json keeps them and a restarted agent reads the
 * ports back from it (px_svc_env_ports).
 */
#ifndef PX_AGENT_SVC_PORT_H
#define PX_AGENT_SVC_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/agent_msg.h"

struct px_port_range {
  uint16_t lo, hi;
};

#define PX_SVC_PORTS_DEFAULT "30000-32767"

/* "LO-HI" (1024 <= LO <= HI <= 65535). 0 or PX_EINVAL. */
int px_port_range_parse(const char *s, struct px_port_range *r);

/* Whether nothing on the host holds port (TCP, any IPv4 or IPv6 address). */
bool px_port_free(uint16_t port);

/* Picks n distinct free ports of r, none in taken[ntaken], into out.
 * 0 or PX_ELIMIT (the range has too few free ports). */
int px_ports_pick(const struct px_port_range *r, const uint16_t *taken, uint32_t ntaken, uint32_t n,
                  uint32_t seed, uint16_t *out);

/* The name of PX_PORT_<NAME> for a port name, into buf. */
void px_svc_port_var(const char *name, char *buf, size_t size);

/* Adds the service's variables to *env (NULL-terminated, may be NULL;
 * reallocated). 0 or PX_ENOMEM. */
int px_svc_env_add(char ***env, const struct px_launch_service *s, const uint16_t *ports);

/* Reads the ports back from an environment px_svc_env_add filled; false
 * when one is missing or malformed. */
bool px_svc_env_ports(char *const *env, const struct px_launch_service *s, uint16_t *ports);

/* A RUNNING report of a replica: its ports and health ("starting",
 * "ready", "unhealthy") with reason; malloc'd JSON or NULL. */
char *px_svc_running_report(const char *node, uint64_t job_id, uint32_t restart, const struct px_launch_service *s,
                    const uint16_t *ports, const char *health, const char *reason);

/* The emulating agent's report for a simulated replica: ready, on ports
 * 30000 + (job id * 8 + i) % 2768 that nothing listens on. */
char *px_svc_emu_report(const char *node, const struct px_launch *l);

#endif
