/* svc_port.c - ports and environment of service replicas (svc_port.h). */
#include "agent/svc_port.h"

#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/error.h"

int px_port_range_parse(const char *s, struct px_port_range *r) {
  unsigned lo, hi;
  char tail;
  if (!s || sscanf(s, "%u-%u%c", &lo, &hi, &tail) != 2 || lo < 1024 || lo > hi || hi > 65535) return PX_EINVAL;
  r->lo = (uint16_t)lo;
  r->hi = (uint16_t)hi;
  return 0;
}

/* Binding the wildcard address of a family fails when any socket of the
 * host holds the port on an address of that family. */
static bool bind_ok(int family, uint16_t port) {
  int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return family == AF_INET6; /* a host without IPv6 */
  struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_ANY)};
  struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = in6addr_any};
  int one = 1;
  if (family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  int rc = family == AF_INET ? bind(fd, (struct sockaddr *)&a4, sizeof a4) : bind(fd, (struct sockaddr *)&a6, sizeof a6);
  bool ok = rc == 0 || (family == AF_INET6 && errno == EADDRNOTAVAIL);
  close(fd);
  return ok;
}

bool px_port_free(uint16_t port) { return bind_ok(AF_INET, port) && bind_ok(AF_INET6, port); }

static bool in(const uint16_t *v, uint32_t n, uint16_t p) {
  for (uint32_t i = 0; i < n; i++)
    if (v[i] == p) return true;
  return false;
}

int px_ports_pick(const struct px_port_range *r, const uint16_t *taken, uint32_t ntaken, uint32_t n,
                  uint32_t seed, uint16_t *out) {
  uint32_t span = (uint32_t)r->hi - r->lo + 1, got = 0;
  for (uint32_t k = 0; k < span && got < n; k++) {
    uint16_t p = (uint16_t)(r->lo + (seed + k) % span);
    if (in(taken, ntaken, p) || in(out, got, p) || !px_port_free(p)) continue;
    out[got++] = p;
  }
  return got == n ? 0 : PX_ELIMIT;
}

void px_svc_port_var(const char *name, char *buf, size_t size) {
  int w = snprintf(buf, size, "PX_PORT_");
  for (size_t i = 0; name[i] && (size_t)w + 1 < size; i++)
    buf[w++] = name[i] == '-' ? '_' : (char)toupper((unsigned char)name[i]);
  buf[w < (int)size ? w : (int)size - 1] = '\0';
}

static int env_push(char ***env, size_t *n, const char *key, const char *fmt, unsigned long long v, const char *s) {
  char val[96];
  if (s) snprintf(val, sizeof val, "%s", s);
  else snprintf(val, sizeof val, fmt, v);
  size_t len = strlen(key) + strlen(val) + 2;
  char *kv = malloc(len), **grown = realloc(*env, (*n + 2) * sizeof **env);
  if (grown) *env = grown;
  if (!kv || !grown) return free(kv), PX_ENOMEM;
  snprintf(kv, len, "%s=%s", key, val);
  (*env)[(*n)++] = kv;
  (*env)[*n] = NULL;
  return 0;
}

int px_svc_env_add(char ***env, const struct px_launch_service *s, const uint16_t *ports) {
  size_t n = 0;
  while (*env && (*env)[n]) n++;
  int rc = env_push(env, &n, "PX_SERVICE", NULL, 0, s->name);
  if (!rc) rc = env_push(env, &n, "PX_REPLICA", "%llu", s->replica, NULL);
  if (!rc && s->nports) rc = env_push(env, &n, "PORT", "%llu", ports[0], NULL);
  for (uint32_t i = 0; !rc && i < s->nports; i++) {
    char var[64];
    px_svc_port_var(s->ports[i], var, sizeof var);
    rc = env_push(env, &n, var, "%llu", ports[i], NULL);
  }
  return rc;
}

bool px_svc_env_ports(char *const *env, const struct px_launch_service *s, uint16_t *ports) {
  for (uint32_t i = 0; i < s->nports; i++) {
    char var[64];
    px_svc_port_var(s->ports[i], var, sizeof var);
    size_t vl = strlen(var);
    bool found = false;
    for (char *const *e = env; e && *e && !found; e++) {
      unsigned p;
      char tail;
      if (strncmp(*e, var, vl) || (*e)[vl] != '=') continue;
      if (sscanf(*e + vl + 1, "%u%c", &p, &tail) != 1 || p < 1 || p > 65535) return false;
      ports[i] = (uint16_t)p;
      found = true;
    }
    if (!found) return false;
  }
  return true;
}

char *px_svc_running_report(const char *node, uint64_t job_id, uint32_t restart, const struct px_launch_service *s,
                    const uint16_t *ports, const char *health, const char *reason) {
  struct px_task_report r = {.job_id = job_id, .restart_count = restart, .has_service = true};
  snprintf(r.node, sizeof r.node, "%s", node);
  snprintf(r.state, sizeof r.state, "RUNNING");
  snprintf(r.health, sizeof r.health, "%s", health);
  snprintf(r.health_reason, sizeof r.health_reason, "%s", reason ? reason : "");
  for (uint32_t i = 0; i < s->nports && i < PX_SVC_PORTS_MAX; i++) {
    snprintf(r.port_names[i], sizeof r.port_names[i], "%s", s->ports[i]);
    r.ports[r.nports++] = ports[i];
  }
  return px_task_report_encode(&r);
}

char *px_svc_emu_report(const char *node, const struct px_launch *l) {
  uint16_t ports[PX_SVC_PORTS_MAX];
  for (uint32_t i = 0; i < l->service->nports && i < PX_SVC_PORTS_MAX; i++)
    ports[i] = (uint16_t)(30000 + (l->job_id * PX_SVC_PORTS_MAX + i) % 2768);
  return px_svc_running_report(node, l->job_id, l->restart_count, l->service, ports, "ready", NULL);
}
