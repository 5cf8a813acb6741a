/*
 * event.h - what happens to the cluster, as one record type, and the one
 * function that applies it to the core (apply.c).
 *
 * Every change of the core's state is a struct px_event given to
 * px_core_apply(): a submit, a cancel, a hold, a job that started or ended,
 * a node drained, a reservation made. The same record is what the server's
 * journal stores (proto/event_json.c encodes it, versioned), so a live
 * request, a recovery from the journal and the simulator's trace all reach
 * the core through the same function, and the state after a restart is the
 * fold of the same events:
 *
 *   live      the server authorises a request, builds the event, applies it
 *             and journals it only when the core accepted it;
 *   recovery  the server decodes each journal record and applies it;
 *   simulator the trace's arrivals and ends are applied as events.
 *
 * The scheduling cycle (px_core_cycle) is the core's own decision: its START
 * actions are already applied when it returns; the server journals them as
 * START events, which recovery applies (the job runs again on exactly that
 * allocation, see px_core_apply).
 *
 * A new kind is a row in PX_EVENT_KINDS (its journal name), the fields it
 * needs in struct px_event, a case in px_core_apply and, when the journal
 * keeps it, a case in proto/event_json.c.
 *
 * px_core_apply() validates, changes the core's state and fills a struct
 * px_event_result with what it decided (the ids a submit consumed, the
 * account it chose, the reason it refused). On refusal it returns the
 * negative PX_E* code, res->diag names the field, and nothing changed.
 */
#ifndef PX_CORE_EVENT_H
#define PX_CORE_EVENT_H

#include "core/core.h"

/* kind, journal name */
#define PX_EVENT_KINDS(X)          \
  X(SUBMIT, "submit")              \
  X(CANCEL, "cancel")              \
  X(HOLD, "hold")                  \
  X(RELEASE, "release")            \
  X(UPDATE, "update")              \
  X(START, "start")                \
  X(END, "end")                    \
  X(REQUEUE, "requeue")            \
  X(REJECT, "reject")              \
  X(NODE_DRAIN, "drain")           \
  X(NODE_RESUME, "resume")         \
  X(NODE_DOWN, "down")             \
  X(NODE_UP, "up")                 \
  X(PART_DOWN, "part_down")        \
  X(PART_UP, "part_up")            \
  X(RESV, "resv")                  \
  X(USAGE, "usage")                \
  X(SVC_APPLY, "svc_apply")        \
  X(SVC_SCALE, "svc_scale")        \
  X(SVC_DELETE, "svc_delete")      \
  X(SVC_ROLLBACK, "svc_rollback")  \
  X(SVC_REPLICA, "svc_replica")    \
  X(GPU, "gpu")                    \
  X(STEP, "step")                  \
  X(RESV_DELETE, "resv_delete")    \
  X(ACCT, "acct")

enum px_event_kind {
#define PX_EVENT_ENUM(k, name) PX_EV_##k,
  PX_EVENT_KINDS(PX_EVENT_ENUM)
#undef PX_EVENT_ENUM
  PX_EV_COUNT
};
const char *px_event_kind_name(enum px_event_kind k); /* "submit", ...; NULL when out of range */
/* "submit" -> PX_EV_SUBMIT; false when unknown. */
bool px_event_kind_parse(const char *name, enum px_event_kind *out);

/*
 * One event. Which fields matter depends on the kind; the rest are zero.
 * Pointers are borrowed: the core copies what it keeps.
 *
 *   SUBMIT    job_id (the first id; an array consumes 1 + its task count),
 *             spec; a job without an account goes to the user's default
 *             association (res->account says which)
 *   CANCEL    job_id. A pending job (or an array's pending remainder) is
 *             removed. A running one is not changed: res->running says the
 *             caller must stop it and report END. Unknown to the core:
 *             accepted, nothing changes (res->known false).
 *   REJECT    job_id: dropped as can never run (reason), as CANCEL
 *   HOLD / RELEASE  job_id, admin (a user cannot release an admin hold)
 *   UPDATE    job_id, update (pending jobs; of a running one only its
 *             time limit)
 *   START     job_id runs since now on alloc[0..nalloc) with time_limit_s
 *             (array_job_id: the next task of that array). When the nodes
 *             no longer hold that allocation (the configuration changed),
 *             the job runs outside the scheduler: res->outside is set, an
 *             array task keeps its index used and stays RUNNING without
 *             resources (res->known), any other job leaves the core.
 *   END       job_id ended with state (terminal) and exit_code: a running
 *             job frees its resources and charges fair share; a pending one
 *             is removed. Unknown to the core: accepted, nothing changes.
 *   REQUEUE   job_id goes back to pending (hold: held). A job the core does
 *             not hold (it ran outside the scheduler) is queued again from
 *             spec with submit time submit_s when spec is given.
 *   NODE_*    node (conf index), reason (may be NULL), by (who: the
 *             server's sinfo -R shows it; NULL: not known); a drain's cause
             (the server's vocabulary, nodes/nodes.h; the core ignores it)
 *   PART_*    part (conf index)
 *   RESV      resv
 *   USAGE     a job that ended before the journal's last checkpoint (the
 *             server's archive): what its run on alloc from start_s to end_s
 *             charged to the fair share of spec's user, account and QoS,
 *             decayed to now. PX_ENOENT when the association is gone.
 *   GPU       node's GPU gpu goes out of service (gpu_usable false: a fault
 *             or a quarantine; nothing new is placed on it, a job still
 *             holding it keeps it until it ends) or back in (true). reason
 *             and the fields below are the server's record (the core keeps
 *             only the bit): gpu_state ("UNUSABLE", "QUARANTINED", "OK") and
 *             gpu_fault (a fault report, counted towards quarantine).
 *   SVC_*     a service created or updated, scaled, deleted, rolled back, or
 *             one of its replicas changed (health, ports, drained): svc, the
 *             record as JSON text (svc/svc_event.c). The core keeps no
 *             service state (its replicas are ordinary jobs): it accepts the
 *             record and the server's service table folds it.
 *   STEP      a job step started on its nodes, ended on one of them, or was
 *             cancelled: job_id, step, the record as JSON text (the server's
 *             loop/steps.c). The core keeps no steps: it accepts the record
 *             and the server's step table folds it, so a restarted server
 *             knows the steps that run and accounting lists them.
 *   ACCT      acct: an account, user association or QoS added, modified
 *             or deleted online (sacctmgr; struct px_acct_edit, conf.h,
 *             core/acct.c): validated against the live tree and jobs,
 *             effective at once. The server's configuration copy follows
 *             (px_conf_acct_apply) once the core accepted it.
 */
struct px_event {
  enum px_event_kind kind;
  uint64_t job_id;
  struct px_jobspec *spec;       /* SUBMIT, REQUEUE (outside), USAGE */
  bool admin;                    /* HOLD, RELEASE */
  bool hold;                     /* REQUEUE */
  struct px_job_update update;   /* UPDATE */
  const struct px_alloc *alloc;  /* START, USAGE */
  uint32_t nalloc;
  int64_t time_limit_s;          /* START */
  uint64_t array_job_id;         /* START */
  uint32_t array_task_id;        /* START (PX_NONE: not a task) */
  enum px_job_state state;       /* END */
  int32_t exit_code;             /* END */
  int32_t term_signal;           /* END: accounting figures the core ignores, */
  uint64_t peak_mem_mib, cpu_time_ms; /* carried for the journal */
  int64_t submit_s;              /* REQUEUE (outside) */
  int64_t start_s, end_s;        /* USAGE */
  uint32_t node, part;           /* NODE_*, PART_* */
  const char *reason;            /* NODE_*, PART_*, REQUEUE, REJECT, END */
  const char *by;                /* CANCEL, NODE_*: who (the journal keeps it; the core does not) */
  const char *cause;             /* NODE_DRAIN: why, by name (the server's; the journal keeps it, the core does not) */
  int32_t signal;                /* CANCEL: 0, or the signal sent instead */
  const struct px_resv_spec *resv; /* RESV */
  const char *svc;               /* SVC_*: the service record (JSON text) */
  uint32_t gpu;                  /* GPU: the node-local index */
  bool gpu_usable;               /* GPU */
  bool gpu_fault;                /* GPU: a fault report (vs. an operator's change) */
  const char *gpu_state;         /* GPU: the server's state name */
  const char *step;              /* STEP: the step record (JSON text) */
  const struct px_acct_edit *acct; /* ACCT */
};

struct px_event_result {
  int rc;                        /* as returned */
  enum px_reason reason;         /* SUBMIT refused: why (Slurm's name) */
  struct px_diag diag;           /* refused: the field and the problem */
  uint64_t nids;                 /* SUBMIT: ids consumed from job_id */
  uint32_t account;              /* SUBMIT: conf index of the account chosen */
  bool known;                    /* CANCEL, END, START: the core holds the job */
  bool running;                  /* CANCEL: it runs (stop it, then report END) */
  bool outside;                  /* START: runs outside the scheduler (see above) */
};

/* RESV_DELETE: reason names the reservation; refused while a live job
 * asked for it (PX_ESTATE) or when there is none (PX_ENOENT). */
/* Applies ev at time now; 0 or a negative PX_E* code (then nothing changed). */
int px_core_apply(struct px_core *c, const struct px_event *ev, int64_t now,
                  struct px_event_result *res);

/* sbatch --test-only (the server's dry run, between a SUBMIT and its
 * CANCEL): could pending job job_id start now, as Slurm's will-run test
 * asks, against the free resources and reservations, not behind the jobs
 * queued ahead of it; nothing is taken. *nnodes: its nodes (conf indexes,
 * at most max, written to nodes), 0 when it cannot start now. PX_ENOENT:
 * no such pending job (an array record is not placed whole). */
int px_core_job_fits_now(struct px_core *c, uint64_t job_id, int64_t now, uint32_t *nodes, uint32_t max,
                         uint32_t *nnodes);

/* Takes back pending job id that the dry run submitted (as a cancel, but
 * leaving no finished record: the id will be the next real job's). 0 or
 * PX_ENOENT / PX_ESTATE. */
int px_core_withdraw(struct px_core *c, uint64_t id, int64_t now);

#endif
