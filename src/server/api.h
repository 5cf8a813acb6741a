/*
 * api.h - the endpoints of the HTTP API (server/ only). http.c authenticates
 * and rate-limits, then calls the route's function with a px_api_call; the
 * function fills status and answer (malloc'd text). Reads are served from
 * the current snapshot; changes are queued to the main thread.
 * docs/api/openapi.yaml describes every route.
 */
#ifndef PX_SERVER_API_H
#define PX_SERVER_API_H

#include <jansson.h>
#include <microhttpd.h>

#include "server/server.h"

struct px_api_call {
  struct px_server *s;
  struct MHD_Connection *conn;
  const char *method, *url, *body;
  size_t body_len;
  struct px_ident who;
  char arg[128];          /* the {id} or {name} of the path */
  bool method_mismatch;   /* the path exists with another method */
  int status;
  char *answer;
  const char *ctype;      /* NULL: application/json */
  /* A streamed answer instead of `answer` (large listings): MHD calls fn
   * for each block of the body, then free_fn(cls). */
  MHD_ContentReaderCallback stream_fn;
  MHD_ContentReaderFreeCallback stream_free;
  void *stream_cls;
  struct MHD_Response *response; /* a ready answer with its own headers (api_ui.c) */
  /* A long poll on an event-driven listener (can_park) answers later: the
   * endpoint sets park and what to wait for instead of an answer, and http.c
   * parks the connection on the node's outbox (px_outbox_park). */
  bool can_park, park;
  bool park_snap;               /* park on the snapshots (a watch), not an outbox */
  bool resumed;                 /* run again after a parked watch: answer now */
  uint32_t park_node;
  uint64_t park_after;
  int64_t park_deadline_ns;
  int64_t t0_ns;                /* when the request came (monotonic): a long poll's start */
};

struct px_route {
  const char *method;
  const char *pattern;    /* "/v1/jobs/{}/hold": {} matches one segment */
  void (*fn)(struct px_api_call *c);
  bool open;              /* no authentication (metrics, the API document) */
  bool reader;            /* answered from the snapshot: served at a lower CPU
                           * priority than the main loop (http.c) */
};

/* The route for method and url (filling c->arg), or NULL (c->method_mismatch
 * tells 405 from 404). */
const struct px_route *px_api_route(const char *method, const char *url, struct px_api_call *c);

/* Does url match pattern ("{}" takes one non-empty segment into arg)? */
bool px_api_match(const char *pattern, const char *url, char *arg, size_t arglen);

/* Endpoint helpers shared by the api_*.c files. */
void px_api_error(struct px_api_call *c, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void px_api_error_diag(struct px_api_call *c, int err, const struct px_diag *d);
/* Query argument or NULL. */
const char *px_api_arg(struct px_api_call *c, const char *name);
/* Queues r to the main thread and takes its answer. */
void px_api_call_main(struct px_api_call *c, struct px_req *r);
/* The current snapshot once it holds every change acknowledged before the
 * call (waits briefly for the main thread to publish; api_jobs.c). */
struct px_snap *px_api_snap_fresh(struct px_server *s);
/* Parses the body as a JSON object (error answered when NULL). */
json_t *px_api_body_object(struct px_api_call *c);

/* Endpoints. */
void px_api_submit(struct px_api_call *c);
void px_api_jobs_list(struct px_api_call *c);
void px_api_job_show(struct px_api_call *c);
void px_api_job_stat(struct px_api_call *c);
void px_api_job_cancel(struct px_api_call *c);
void px_api_job_hold(struct px_api_call *c);
void px_api_job_requeue(struct px_api_call *c);      /* scontrol requeue */
void px_api_job_requeue_hold(struct px_api_call *c); /* scontrol requeuehold */
void px_api_job_release(struct px_api_call *c);
void px_api_job_update(struct px_api_call *c);
void px_api_watch(struct px_api_call *c);
void px_api_nodes_list(struct px_api_call *c);
void px_api_node_show(struct px_api_call *c);
void px_api_node_drain(struct px_api_call *c);
void px_api_node_resume(struct px_api_call *c);
void px_api_partition_down(struct px_api_call *c);
void px_api_partition_up(struct px_api_call *c);
void px_api_partitions(struct px_api_call *c);
void px_api_shares(struct px_api_call *c);
void px_api_usage(struct px_api_call *c);
void px_api_accounting(struct px_api_call *c);
void px_api_node_events(struct px_api_call *c); /* api_node_events.c */
void px_api_reservations(struct px_api_call *c);
void px_api_resv_create(struct px_api_call *c);
void px_api_acct_change(struct px_api_call *c); /* api_acct.c */
void px_api_resv_delete(struct px_api_call *c);
void px_api_whoami(struct px_api_call *c);
void px_api_controllers(struct px_api_call *c); /* api_ha.c */
void px_api_token(struct px_api_call *c);
void px_api_metrics(struct px_api_call *c);
void px_api_openapi(struct px_api_call *c);
void px_api_agent_register(struct px_api_call *c);
void px_api_agent_work(struct px_api_call *c);
void px_api_agent_report(struct px_api_call *c);
void px_api_agent_heartbeat(struct px_api_call *c);
void px_api_agent_gpu(struct px_api_call *c);
void px_api_node_gpu_resume(struct px_api_call *c);
void px_api_agent_health(struct px_api_call *c);
void px_api_node_reboot(struct px_api_call *c);
void px_api_step_create(struct px_api_call *c);
void px_api_steps_list(struct px_api_call *c);
void px_api_step_show(struct px_api_call *c);
void px_api_step_cancel(struct px_api_call *c);
void px_api_step_end(struct px_api_call *c);
void px_api_terminal(struct px_api_call *c);
void px_api_session(struct px_api_call *c);    /* api_session.c: /sessions/{job}/..., a reverse proxy */   /* relay.c: GET /v1/terminals/{id}, an upgrade */
void px_api_ui_file(struct px_api_call *c);
void px_api_ui_link(struct px_api_call *c);
void px_api_ui_output(struct px_api_call *c);
void px_api_ui_topology(struct px_api_call *c);
void px_api_diag(struct px_api_call *c);       /* api_diag.c */
void px_api_diag_reset(struct px_api_call *c);
/* GET /v1/diag's document (also slurmrestd's diag). NULL on ENOMEM. */
json_t *px_api_diag_json(struct px_server *s);

#endif
