/*
 * svc_server.h - services in the server (server/ only): the glue between
 * the pure service table and controller (src/svc/) and the server's one
 * event path, agents and API.
 *
 *   fold     every accepted event (events.c) that concerns a service or a
 *            replica's job changes the table (live and at recovery alike);
 *   tick     the main loop asks the controller what each service needs and
 *            turns every action into an event (a replica's SUBMIT, a
 *            svc_replica drain, a CANCEL, a svc_scale, a svc_rollback),
 *            journaled before any agent hears of it;
 *   launch   a replica's launch order carries its ports and health check;
 *   report   an agent's word on a replica's ports and health is journaled
 *            (svc_replica) when it changes something;
 *   readers  the listing and the endpoints are rendered by the main thread
 *            once durable and read by API threads under a mutex held only
 *            to take a reference (the endpoints' long poll parks on the
 *            snapshots, like a watch).
 */
#ifndef PX_SERVER_SVC_SVC_SERVER_H
#define PX_SERVER_SVC_SVC_SERVER_H

#include <pthread.h>

#include "server/api.h"
#include "server/state.h"
#include "svc/svc.h"
#include "util/vec.h"

struct px_svc_server {
  struct px_svcs t;             /* main thread only */
  int64_t due;                  /* the controller's next wake-up */
  bool render;                  /* the readers' blobs are stale */
  struct px_u64vec stops;       /* jobs to tell their agents to stop after the commit */
  pthread_mutex_t lock;         /* the readers' blobs below */
  struct px_blob *list;         /* {"services":[...]} */
  struct px_blob *endpoints;    /* {"seq":S,"services":[...]} */
  uint64_t endpoints_seq;       /* S of that blob */
};

struct px_svc_server *px_svc_server_new(void);
void px_svc_server_free(struct px_svc_server *v);

/* events.c: after the server's tables followed ev. */
int px_svc_fold(struct px_server *s, const struct px_event *ev, int64_t now);
/* loop.c: the controller, then the readers' blobs when they changed. */
int px_svc_tick(struct px_server *s, int64_t now);
/* handle.c: a RUNNING report of a replica (ports, health). */
int px_svc_replica_report(struct px_server *s, struct px_sjob *j, const struct px_task_report *t,
                  int64_t now);
/* nodes.c: the service part of a replica's launch order (NULL for batch). */
struct px_launch_service *px_svc_launch_of(struct px_server *s, const struct px_sjob *j);
void px_svc_launch_release(struct px_launch_service *l);
/* handle.c: PX_REQ_SVC_* on the main thread. */
void px_svc_handle(struct px_server *s, struct px_req *r, int64_t now);

/* render.c (main thread) */
json_t *px_svc_summary_json(const struct px_svc *v, int64_t now);
json_t *px_svc_show_json(struct px_server *s, const struct px_svc *v, int64_t now);
json_t *px_svc_endpoints_json(struct px_server *s, const struct px_svc *v);
void px_svc_render(struct px_server *s, int64_t now);

/* The replica's job spec for index of v's current generation (tick.c). */
int px_svc_replica_spec(struct px_server *s, const struct px_svc *v, uint32_t index,
                        struct px_jobspec *out);

/* API endpoints (api_svc.c) */
void px_api_svc_list(struct px_api_call *c);
void px_api_svc_apply(struct px_api_call *c);
void px_api_svc_show(struct px_api_call *c);
void px_api_svc_delete(struct px_api_call *c);
void px_api_svc_scale(struct px_api_call *c);
void px_api_svc_load(struct px_api_call *c);
void px_api_svc_endpoints(struct px_api_call *c);
void px_api_svc_endpoints_one(struct px_api_call *c);

#endif
