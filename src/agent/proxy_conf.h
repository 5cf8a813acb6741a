/*
 * proxy_conf.h - the pure half of `phalanx proxy` (cmd_proxy.c): the
 * endpoints answer of the server, the slots each service's endpoints sit
 * in, and HAProxy's configuration. No I/O, unit-tested.
 *
 * Slots: every service is an HAProxy backend of nslots servers s1..sN. An
 * endpoint keeps its slot for as long as it is listed, so a change of
 * endpoints is a few runtime-API commands on the slots that changed (set
 * server addr/port, state ready or maint) and HAProxy's connections to the
 * others are never touched. Only a change of the set of services, or a
 * service outgrowing its slots, needs a new configuration (a graceful
 * reload); the configuration then carries every slot's current endpoint,
 * so the new worker serves the same endpoints from its first request.
 */
#ifndef PX_AGENT_PROXY_CONF_H
#define PX_AGENT_PROXY_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define PX_PROXY_SLOTS_MIN 8
#define PX_PROXY_SLOTS_MAX 1024

struct px_pep {                 /* one ready replica, on the service's first port */
  char host[64];
  uint16_t port;
};

struct px_psvc {
  char name[64];
  struct px_pep *eps;
  uint32_t neps;
};

/* GET /v1/services/endpoints: {"seq":S,"services":[{"name","ports":[...],
 * "endpoints":[{"host","ports":{NAME:PORT},...}]}]}. Unknown fields are
 * allowed (the server may add some); wrong types and bad values are errors
 * naming the field. A service with no ports is listed with no endpoints. */
struct px_pstate {
  uint64_t seq;
  struct px_psvc *svcs;
  uint32_t nsvcs;
};

int px_proxy_endpoints_decode(const char *json, struct px_pstate *st, struct px_diag *d);
void px_proxy_state_fini(struct px_pstate *st);

/* A service's backend: which endpoint each slot holds. */
struct px_slot {
  struct px_pep ep;
  bool used;
};

struct px_pback {
  char name[64];
  struct px_slot *slot;
  uint32_t nslots;
};

/* One runtime change: slot (1-based) of backend now holds ep, or is empty. */
struct px_slot_change {
  uint32_t backend, slot;
  bool used;
  struct px_pep ep;
};

/* Fits the endpoints of svc into b's slots: endpoints already placed stay,
 * gone ones free their slot, new ones take free slots. Appends the changes
 * (at most 2 * (b->nslots + svc->neps)) to ch (new endpoints first, then
 * the emptied slots, so a backend never has fewer servers than needed).
 * Returns false when the slots are too few (nothing is changed then). */
bool px_proxy_fit(struct px_pback *b, uint32_t bi, const struct px_psvc *svc, struct px_slot_change *ch, uint32_t *nch);

/* The number of slots for n endpoints: at least twice n, a power of two,
 * at least PX_PROXY_SLOTS_MIN. */
uint32_t px_proxy_slots_for(uint32_t n);

struct px_proxy_cfg {
  char listen[128];             /* "127.0.0.1:8080" */
  char admin_sock[300];         /* the runtime API (level admin) */
};

/* Whether a service name can be an HAProxy backend and a path prefix. */
bool px_proxy_name_ok(const char *name);

/* HAProxy's configuration for these backends (malloc'd). */
char *px_proxy_config(const struct px_proxy_cfg *c, const struct px_pback *b, uint32_t n);

#endif
