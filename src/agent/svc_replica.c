/* svc_replica.c - a service replica's start and restart on the agent (svc_replica.h). */
#include "agent/svc_replica.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/jobdir.h"
#include "util/error.h"
#include "util/log.h"

int px_replica_prepare(struct px_launch *l, const struct px_port_range *r, const uint16_t *taken, uint32_t ntaken,
                       uint16_t *ports, char *why, size_t size) {
  const struct px_launch_service *s = l->service;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint32_t seed = (uint32_t)(l->job_id * 2654435761u) ^ (uint32_t)ts.tv_nsec ^ (uint32_t)s->replica;
  int rc = px_ports_pick(r, taken, ntaken, s->nports, seed, ports);
  if (rc) {
    snprintf(why, size, "no %u free TCP ports in %u-%u", s->nports, r->lo, r->hi);
    return rc;
  }
  rc = px_svc_env_add(&l->env, s, ports);
  if (rc) snprintf(why, size, "out of memory");
  return rc;
}

static uint16_t check_port(const struct px_launch_service *s, const uint16_t *ports) {
  for (uint32_t i = 0; i < s->nports; i++)
    if (strcmp(s->ports[i], s->health.port) == 0) return ports[i];
  return 0;
}

char *px_replica_running(struct px_health_mon *m, const char *node, const struct px_launch *l, const uint16_t *ports,
                         const char *jobdir, bool reattached) {
  const struct px_launch_service *s = l->service;
  if (s->health.type == PX_HEALTH_NONE) return px_svc_running_report(node, l->job_id, l->restart_count, s, ports, "ready", NULL);
  struct px_health_target t = {.job_id = l->job_id, .restart = l->restart_count, .check = s->health,
                               .port = check_port(s, ports), .uid = l->uid, .gid = l->gid, .reattached = reattached};
  snprintf(t.user, sizeof t.user, "%s", l->user);
  snprintf(t.jobdir, sizeof t.jobdir, "%s", jobdir);
  if (px_health_watch(m, &t)) {
    px_error("job %llu: cannot start its health checks; reported unhealthy", (unsigned long long)l->job_id);
    return px_svc_running_report(node, l->job_id, l->restart_count, s, ports, "unhealthy", "the agent cannot run its checks");
  }
  return reattached ? NULL : px_svc_running_report(node, l->job_id, l->restart_count, s, ports, "starting", NULL);
}

int px_replica_recover(const char *jobdir, struct px_launch *l, uint16_t *ports) {
  char *json = px_file_get(jobdir, "launch.json");
  struct px_diag d;
  int rc = json ? px_launch_decode(json, l, &d) : PX_ENOENT;
  free(json);
  if (rc) return rc;
  if (l->service && !px_svc_env_ports(l->env, l->service, ports)) {
    px_launch_fini(l);
    return PX_EINVAL;
  }
  return 0;
}
