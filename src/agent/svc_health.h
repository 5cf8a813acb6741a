/*
 * svc_health.h - health checks of service replicas, as a kubelet runs them.
 *
 * The rules (px_health_fsm, pure, unit-tested): a replica starts
 * "starting"; the first passing check makes it "ready"; failure_threshold
 * failures in a row make it "unhealthy" (it keeps being checked and is
 * "ready" again after a pass; replacing it is the controller's decision);
 * during startup_grace_s failures do not count. While starting, checks come
 * quickly (50 ms, doubling up to 200 ms or interval_s if shorter) so that a
 * replica that is up at once is ready within tens of milliseconds rather
 * than an interval later; a failure in that phase counts at most once per
 * interval_s, so fast probing never makes a replica unhealthy sooner than
 * interval_s * failure_threshold.
 *
 * The monitor runs one thread per watched replica. Why threads and not a
 * curl multi handle in the agent's loop: a check is one of three blocking
 * things (an HTTP GET, a TCP connect, a child process to wait for), each
 * with its own timeout, and a node runs a handful of replicas; a thread
 * each keeps a slow check of one replica from delaying another's and keeps
 * the agent's main loop (orders, reports, supervisors) free of all three.
 * Threads report transitions through a queue and a wake-up pipe
 * (px_health_take), which the main loop polls like its other descriptors.
 */
#ifndef PX_AGENT_SVC_HEALTH_H
#define PX_AGENT_SVC_HEALTH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/agent_msg.h"

enum px_health_state { PX_HS_STARTING, PX_HS_READY, PX_HS_UNHEALTHY };

struct px_health_fsm {
  uint32_t interval_ms, grace_ms, threshold;
  int64_t start_ms;
  int64_t counted_ms;     /* when the last failure counted (starting: at most one per interval) */
  uint32_t fails;         /* counted failures in a row */
  uint32_t probe_ms;      /* the delay before the next check while starting */
  enum px_health_state state;
};

const char *px_health_state_name(enum px_health_state s);
/* reattached: the replica ran before this agent started (no grace left). */
void px_health_fsm_init(struct px_health_fsm *f, const struct px_health_check *c, int64_t now_ms, bool reattached);
/* One check's outcome; true when the state changed. */
bool px_health_fsm_step(struct px_health_fsm *f, bool ok, int64_t now_ms);
/* Milliseconds until the next check. */
uint32_t px_health_fsm_delay(struct px_health_fsm *f);

/* A check of one replica, run by its thread (svc_check.c). The port is the
 * number of the check's port name; jobdir holds the cgroup (state.json) a
 * command check joins; user/uid/gid the identity it runs as. */
struct px_health_target {
  uint64_t job_id;
  uint32_t restart;
  struct px_health_check check;  /* command: owned (the watch frees it) */
  uint16_t port;
  char user[64];
  uid_t uid;
  gid_t gid;
  char jobdir[4096];
  bool reattached;
};
/* Runs one check: true when it passed; why says what failed. */
bool px_health_run(const struct px_health_target *t, char *why, size_t size);

struct px_health_event {
  uint64_t job_id;
  uint32_t restart;
  char health[16];
  char reason[128];
};

struct hwatch;
struct px_health_mon {
  pthread_mutex_t mu;
  pthread_cond_t cv;             /* watches sleep on it (monotonic clock); stops broadcast */
  int wake[2];                   /* threads -> main loop */
  struct px_health_event *ev;
  uint32_t nev, cap;
  struct hwatch *watches;
  uint32_t running;              /* threads not yet finished */
};

int px_health_init(struct px_health_mon *m);
/* Stops every watch and waits for their threads (at most one check's timeout). */
void px_health_fini(struct px_health_mon *m);
/* Starts checking t's replica (copies t; command is duplicated). A fresh
 * replica's "starting" is the caller's to report; a reattached one's first
 * result is always an event. 0 or PX_ENOMEM/PX_EAGAIN. */
int px_health_watch(struct px_health_mon *m, const struct px_health_target *t);
/* Stops checking a replica (its thread ends after the check in flight). */
void px_health_unwatch(struct px_health_mon *m, uint64_t job_id, uint32_t restart);
/* The transitions queued so far (malloc'd; the caller frees it). */
struct px_health_event *px_health_take(struct px_health_mon *m, uint32_t *n);

#endif
