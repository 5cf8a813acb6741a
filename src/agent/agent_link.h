/*
 * agent_link.h - the agent's connection to the server: registration, the
 * long-poll thread for orders, and the outgoing report queue.
 *
 * Reports leave in the order they were queued and each is retried until
 * the server answers 2xx (4xx other than 404/409 drops it with an error:
 * retrying a request the server rejects would block every later report).
 * The poll thread decodes orders and hands them to the main thread through
 * a queue and a wake-up pipe, so the main thread never blocks on the poll.
 */
#ifndef PX_AGENT_AGENT_LINK_H
#define PX_AGENT_AGENT_LINK_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/http.h"
#include "proto/agent_msg.h"

#define PX_REPORT_HOLD_MS 10
#define PX_REPORT_BATCH 256

struct px_report_item {
  char *json;
  int64_t queued_ms;       /* monotonic */
  char jobdir[4096];       /* "" for RUNNING; for an end: marked reported on 2xx */
  struct px_report_item *next;
};

struct px_link {
  char node[64];
  struct px_http *main_http, *poll_http;
  /* orders from the poll thread */
  pthread_t thread;
  bool thread_started;
  pthread_mutex_t mu;
  struct px_agent_work *inbox;   /* decoded batches waiting for the main thread */
  uint32_t ninbox, capinbox;
  int wake[2];                   /* poll thread -> main loop */
  volatile int stop;
  uint64_t seq;
  /* reports */
  struct px_report_item *head, *tail;
  int64_t retry_at_ms;
  int backoff_ms;
  uint32_t nqueued;
  bool registered;
  long register_status;          /* of the last registration (503: a standby, a takeover under way) */
  bool batch;                    /* the server takes {"reports":[...]} */
  uint32_t gpu_interval_ms;      /* the server's GpuHealthIntervalMs (register answer), 0: not said */
  /* HealthCheck*= and RebootProgram= of the server's slurm.conf (register answer; "" when none) */
  char hc_program[PATH_MAX], reboot_program[PATH_MAX];
  int64_t hc_interval_s;
  unsigned hc_states;
};

/* ca_file: for an https:// server (http.h), NULL or "" for the system's CAs. */
int px_link_init(struct px_link *k, const char *server, const char *ca_file, const char *node,
                 const char *token_file, bool munge);
void px_link_fini(struct px_link *k);
/* One POST /v1/agent/register; 0 when the server accepted it.
 * *heartbeat_s gets the server's interval when it names one. */
int px_link_register(struct px_link *k, const struct px_node_report *r, int *heartbeat_s);
int px_link_start_poll(struct px_link *k);
/* Takes the batches the poll thread collected (caller frees each with
 * px_agent_work_fini and the array with free). */
struct px_agent_work *px_link_take(struct px_link *k, uint32_t *n);
/* Queues a report (takes ownership of json). */
void px_link_queue(struct px_link *k, char *json, const char *jobdir);
/* When the queued reports should leave (monotonic ms; INT64_MAX: none). */
int64_t px_link_due(const struct px_link *k);
/* Sends what is queued, in order, until one fails; on_acked runs for each
 * acknowledged end report. Returns the number still queued. */
int px_link_flush(struct px_link *k, int64_t now_ms, void (*on_acked)(const char *jobdir, void *ud), void *ud);
/* 0 when the server took it; *reboot: its answer orders a reboot (`scontrol reboot`). */
int px_link_heartbeat(struct px_link *k, const char *jobs_usage, bool *reboot);
/* One POST of body to path on the main connection; *status the HTTP status. */
int px_link_post(struct px_link *k, const char *path, const char *body, long *status);

#endif
