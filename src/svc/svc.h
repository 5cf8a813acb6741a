/*
 * svc.h - services: their state and the controller that keeps them running
 * (docs/services.md). Pure like the core: no I/O, no clock (time is an
 * argument), so the same code runs live, at recovery and in the unit tests.
 *
 * State (struct px_svcs) changes only through the fold functions below,
 * which the server calls for every journaled event that concerns a service
 * (its own kinds, svc_event.c, and the events of its replicas' jobs), live
 * and at recovery alike: the table after a restart is the fold of the same
 * records, so no service is lost and no replica is started twice.
 *
 * The controller (px_svc_plan) reads one service and says what to do now:
 * start a replica (a job), take one out of the endpoints (drain), stop one
 * (after drain_s), change the count (autoscaling) or roll back. The server
 * turns each action into an event on the one event path; its fold then
 * changes this state, so a decision survives a crash exactly when its event
 * was journaled.
 *
 * A replica is a job named NAME-r<index> running generation G of the spec.
 * Indices 0..replicas-1 are wanted; during a rolling update an index may
 * briefly have a replica of the old generation and one of the new.
 */
#ifndef PX_SVC_SVC_H
#define PX_SVC_SVC_H

#include "svc/spec.h"

#define PX_SVC_CRASHLOOP 3        /* failures in a row of one index: CrashLoop */
#define PX_SVC_RESET_S 60         /* a replica up this long starts its index's count over */
#define PX_SVC_DECISIONS 16       /* scaling decisions kept per service */
#define PX_SVC_RECS 512           /* autoscaler recommendations kept (one a second at most) */
#define PX_SVC_LOAD_STALE_S 30    /* a load sample older than this is no signal */

enum px_svc_rep_state { PX_SVC_REP_PENDING, PX_SVC_REP_STARTING, PX_SVC_REP_READY, PX_SVC_REP_UNHEALTHY };
const char *px_svc_rep_state_name(enum px_svc_rep_state st);

struct px_svc_replica {
  uint64_t job_id;
  uint32_t index;
  uint64_t generation;
  enum px_svc_rep_state state;
  bool terminating;             /* out of the endpoints; stopped at term_s + drain_s */
  bool stopping;                /* the stop was ordered (its job's end is awaited) */
  uint32_t node;                /* conf index while running, PX_NONE */
  int64_t submit_s, start_s, ready_s, term_s;
  char port_names[PX_SVC_MAX_PORTS][16];
  uint16_t ports[PX_SVC_MAX_PORTS];
  uint32_t nports;
  char reason[128];             /* the health check's last word, or why it is terminating */
};

/* One index's restart history (backoff, CrashLoop). */
struct px_svc_slot {
  uint32_t failures;            /* in a row */
  int64_t last_fail_s;
  uint64_t fail_gen;            /* generation of the last failure */
  char last_reason[128];
};

struct px_svc_decision {
  int64_t time_s;
  uint32_t from, to;
  char reason[192];
};

struct px_svc_rec {
  int64_t time_s;
  uint32_t want;
};

struct px_svc {
  struct px_svc_spec spec;      /* the current generation's */
  struct px_svc_spec prev;      /* the previous generation's (rollback target) when has_prev */
  bool has_prev;
  uint64_t generation;
  uint64_t prev_generation;     /* the generation prev was (valid when has_prev) */
  uint64_t same_as;             /* an older generation with this one's spec (a rollback's), or 0 */
  int64_t created_s, generation_s;
  uint32_t replicas;            /* wanted now */
  bool deleting;
  struct px_svc_replica *reps;  /* its jobs that have not ended, by job id */
  uint32_t nreps, reps_cap;
  struct px_svc_slot *slots;
  uint32_t nslots;
  struct px_svc_decision decisions[PX_SVC_DECISIONS]; /* a ring: the last ndecisions */
  uint32_t ndecisions;
  char rollback_reason[192];    /* the last automatic rollback, "" when none */
  char blocked[192];            /* why the last replica was refused (not journaled) */
  /* autoscaler input (not journaled: the proxy sends it every second) */
  double in_flight, rps;
  int64_t load_s;
  struct px_svc_rec recs[PX_SVC_RECS];
  uint32_t nrecs;               /* ring: the last ones */
};

struct px_svcs {
  struct px_svc **v;            /* sorted by name */
  size_t n, cap;
  uint64_t endpoints_seq;       /* set by the caller to the journal seq of a change */
  bool endpoints_changed;       /* a fold changed what the endpoints list */
  bool changed;                 /* a fold changed anything */
};

void px_svcs_init(struct px_svcs *t);
void px_svcs_fini(struct px_svcs *t);
struct px_svc *px_svcs_find(const struct px_svcs *t, const char *name);
struct px_svc_replica *px_svc_replica_find(const struct px_svc *s, uint64_t job_id);

/* ---- folds (each: 0, PX_ENOENT for an unknown service, or PX_ENOMEM) ---- */

/* Creates the service or updates it (a changed template is a new generation). */
int px_svcs_apply(struct px_svcs *t, const struct px_svc_spec *spec, int64_t now);
int px_svcs_scale(struct px_svcs *t, const char *name, uint32_t replicas, const char *reason,
                  int64_t now);
int px_svcs_delete(struct px_svcs *t, const char *name, int64_t now);
/* Back to the previous generation's spec (as a new generation). */
int px_svcs_rollback(struct px_svcs *t, const char *name, const char *reason, int64_t now);

/* What an agent said of a replica, or the controller decided: health
 * ("starting", "ready", "unhealthy", or NULL: unchanged), ports, drain. */
struct px_svc_rep_change {
  const char *health;
  const char *reason;
  uint32_t nports;
  char port_names[PX_SVC_MAX_PORTS][16];
  uint16_t ports[PX_SVC_MAX_PORTS];
  bool drain;                   /* out of the endpoints, stop after drain_s */
  bool failure;                 /* the drain counts as a failure of its index (unhealthy) */
};
int px_svcs_replica_change(struct px_svcs *t, const char *name, uint64_t job_id,
                           const struct px_svc_rep_change *c, int64_t now);

/* Its replicas' jobs, as the job table sees them. */
int px_svcs_job_submitted(struct px_svcs *t, const char *name, uint32_t index, uint64_t generation,
                          uint64_t job_id, int64_t now);
int px_svcs_job_started(struct px_svcs *t, const char *name, uint64_t job_id, uint32_t node,
                        int64_t now);
void px_svcs_job_stopping(struct px_svcs *t, const char *name, uint64_t job_id);
void px_svcs_job_requeued(struct px_svcs *t, const char *name, uint64_t job_id);
/* failed: the replica's own failure (exit, not a node's); why: for CrashLoop. */
void px_svcs_job_ended(struct px_svcs *t, const char *name, uint64_t job_id, bool failed,
                       const char *why, int64_t now);

/* Autoscaler input from the proxy (not journaled). */
void px_svc_load(struct px_svc *s, double in_flight, double rps, int64_t now);

/* ---- the controller ---- */

enum px_svc_act_kind {
  PX_SVC_ACT_SUBMIT,            /* start replica index of generation */
  PX_SVC_ACT_DRAIN,             /* take job_id out of the endpoints (failure: count it) */
  PX_SVC_ACT_STOP,              /* cancel job_id (drained, or not started yet) */
  PX_SVC_ACT_SCALE,             /* count: the autoscaler's decision */
  PX_SVC_ACT_ROLLBACK,          /* back to the previous generation */
};

struct px_svc_act {
  enum px_svc_act_kind kind;
  uint32_t index, count;
  uint64_t generation, job_id;
  bool failure;
  char reason[192];
};

#define PX_SVC_MAX_ACTS 64

/* What to do for s at now: up to cap actions in out (their count returned);
 * *due: the earliest time a plan may have more to do (INT64_MAX: none). */
size_t px_svc_plan(const struct px_svc *s, int64_t now, struct px_svc_act *out, size_t cap,
                   int64_t *due);

/* The service's state for people: "Running", "Starting", "Updating",
 * "Degraded", "CrashLoop", "Deleting", and why (reason, may be ""). */
const char *px_svc_status(const struct px_svc *s, int64_t now, char *reason, size_t size);
/* Does a replica of generation gen run the current spec? (A rollback's
 * generation keeps the replicas of the one it returns to.) */
static inline bool px_svc_is_current(const struct px_svc *s, uint64_t gen) {
  return gen == s->generation || (s->same_as && gen == s->same_as);
}
/* Replicas of s that are ready and not terminating. */
uint32_t px_svc_ready(const struct px_svc *s);
/* The earliest start of index i after its failures (now when none). */
int64_t px_svc_next_start(const struct px_svc *s, uint32_t index);

#endif
