/*
 * nodes.h - the node links (src/server/nodes/): each agent's order queue
 * (outbox.c, shared with the HTTP threads that agents poll) and, on the
 * main thread, the nodes' registration, silence, and the orders that start,
 * signal and stop a job on its nodes (nodes.c). Used by the main loop and
 * the HTTP endpoints of agents; includes neither.
 */
#ifndef PX_SERVER_NODES_NODES_H
#define PX_SERVER_NODES_NODES_H

#include <stdbool.h>
#include <stdint.h>

#include "conf/conf.h"
#include "core/core.h"
#include "core/event.h"

struct px_server;
struct px_sjob;
struct px_req;

/* ---- agent order queues (outbox.c) ---- */

/* The kind of an order: the array of the work answer it goes in. */
enum px_order_kind { PX_ORDER_SIGNAL = 0, PX_ORDER_LAUNCH = 1, PX_ORDER_STEP = 2 };

struct px_order {
  uint64_t seq;
  char *json;                   /* a "launch", "signal" or "step" element */
  int kind;                     /* enum px_order_kind */
};

struct px_outbox;
struct px_outbox *px_outbox_new(const struct px_conf *conf);
void px_outbox_free(struct px_outbox *o);
/* A standby that takes over (journal/ha.c): its order seqs go on from the
 * wall clock now, above those of the leader before it (started after this
 * standby), so that agents do not take new orders for acknowledged ones. */
void px_outbox_renumber(struct px_outbox *o);
/* Main thread: queue an order for node (takes json); kind: enum
 * px_order_kind (true and false are a launch and a signal). */
int px_outbox_push(struct px_outbox *o, uint32_t node, int kind, char *json);
/* Agent thread: orders for node with seq > after, waiting up to deadline
 * (realtime ns). Drops acknowledged ones (seq <= after). malloc'd JSON
 * {"seq":S,"launch":[...],"signal":[...]} (and "step":[...] when any). */
char *px_outbox_wait(struct px_outbox *o, uint32_t node, uint64_t after, int64_t deadline_ns);
/* The same without a thread waiting (the event-driven TCP listener, http.c):
 * drops acknowledged orders; true when some wait to be taken (or the outbox
 * is stopping) — then nothing is parked; otherwise wake(ctx) is parked on
 * the node and runs once, from whichever thread, when an order comes, the
 * deadline passes (px_outbox_expire), another poll for the node parks, or
 * the outbox stops. Then px_outbox_take answers. */
bool px_outbox_park(struct px_outbox *o, uint32_t node, uint64_t after, int64_t deadline_ns,
                    void (*wake)(void *ctx), void *ctx);
/* Main thread, at each registration: what the node's agent takes, from its
 * node report's "version" (PX_AGENT_VERSION); until then, everything. */
void px_outbox_agent_version(struct px_outbox *o, uint32_t node, const char *version);
/* The answer now: orders with seq > after, possibly none. */
char *px_outbox_take(struct px_outbox *o, uint32_t node, uint64_t after);
/* Wakes parked polls whose deadline (realtime ns) is past. */
void px_outbox_expire(struct px_outbox *o, int64_t now_ns);
void px_outbox_stop(struct px_outbox *o);

/* ---- node links (nodes.c), main thread ---- */

struct px_snode;
/* Sets n's reason with who set it (NULL or "": not known) and when; an
 * empty reason clears all three (a resume). */
void px_node_set_reason(struct px_snode *n, const char *reason, const char *by, int64_t now);
/* Node silence and state. */
void px_nodes_check(struct px_server *s, int64_t now);
int px_nodes_register(struct px_server *s, struct px_req *r, int64_t now);
int px_node_index(const struct px_server *s, const char *name);
int px_partition_index(const struct px_server *s, const char *name); /* -1: none */
/* Sends the launch orders of a started job to its agents. */
void px_nodes_launch(struct px_server *s, const struct px_sjob *j);
/* Sends sig to j on every node of it (no stop). */
void px_nodes_signal(struct px_server *s, const struct px_sjob *j, int sig);
/* Tells every node of j to stop it (signal then kill after KillWait). */
void px_nodes_stop(struct px_server *s, const struct px_sjob *j, int sig, const char *reason);
/* Ends running job j (terminal state) everywhere: the END event and its accounting row. */
int px_jobs_end(struct px_server *s, struct px_sjob *j, enum px_job_state st, int32_t exit_code,
                int32_t term_signal, int64_t now);
/* The same with the job's end reason (NULL: "None"), e.g. why its start failed on a node. */
int px_jobs_end_why(struct px_server *s, struct px_sjob *j, enum px_job_state st, int32_t exit_code,
                    int32_t term_signal, const char *reason, int64_t now);

/* ---- drains and their causes (drain.c), main thread ---- */
/* Why a node is drained, kept on the node (px_snode.drain_cause) and in
 * the drain's journal record ("cause", by name): a check lifts only its
 * own drain, never an operator's worded like it. RECOVERY is never
 * journaled: the drain recovery holds for jobs running outside the
 * scheduler (px_node_hold_recovered); UNKNOWN: a record without a cause
 * this server knows (never lifted by a check). */
#define PX_DRAIN_CAUSES(X)            \
  X(NONE, "")                         \
  X(OPERATOR, "operator")             \
  X(HEALTH_CHECK, "health_check")     \
  X(REGISTRATION, "registration")     \
  X(GPU_FAULT, "gpu_fault")           \
  X(REBOOT, "reboot")                 \
  X(RECOVERY, "recovery")             \
  X(UNKNOWN, "unknown")

enum px_drain_cause {
#define PX_DRAIN_CAUSE_ENUM(c, name) PX_DRAIN_##c,
  PX_DRAIN_CAUSES(PX_DRAIN_CAUSE_ENUM)
#undef PX_DRAIN_CAUSE_ENUM
};
/* "operator", ...; "" for NONE. */
const char *px_drain_cause_name(enum px_drain_cause c);
/* The cause a record names; UNKNOWN for NULL or a name this server lacks. */
enum px_drain_cause px_drain_cause_parse(const char *name);
/* A node event on the one road (px_events_accept): kind (DRAIN, RESUME,
 * ...) of node with reason, by (NULL: the server itself) and, for a
 * drain, its cause; asks for a cycle. 0 or the road's PX_E*. */
int px_node_event(struct px_server *s, enum px_event_kind kind, uint32_t node, const char *reason, const char *by,
                  enum px_drain_cause cause, int64_t now);
/* Is node drained, and for cause? */
bool px_node_drained_for(const struct px_server *s, uint32_t node, enum px_drain_cause cause);
/* Recovery: a job running outside the scheduler holds node drained (in the
 * core only; sinfo -R shows it as the server's since now) until the last
 * such job on it lets go, unless an operator's drain stays. */
void px_node_hold_recovered(struct px_server *s, uint32_t node, int64_t now);
void px_node_release_recovered(struct px_server *s, uint32_t node, int64_t now);

/* ---- accounting of node events (node_acct.c), main thread, live only ---- */
/* A node's DRAIN, RESUME, DOWN or UP just folded: its rows for sacctmgr
 * show event (the open row ended, the new state's opened), with the batch. */
void px_node_acct_event(struct px_server *s, const struct px_event *ev, int64_t now);

/* ---- registration against the configuration (node_shape.c), main thread ---- */
struct px_node_report;
/* Drains node when its agent reports fewer CPUs, memory or GPUs than
 * configured (or its GPU types in another order), with Slurm's reason;
 * resumes it when a later report matches and the drain was this check's.
 * 0, or PX_E* when the event could not be journaled. */
int px_node_shape_check(struct px_server *s, uint32_t node, const struct px_node_report *rep, int64_t now);

/* ---- GPU health (gpu_health.c), main thread ---- */
struct px_event;
struct px_gpu_fault;
/* An agent's fault report under the site's policy: the GPU's state record,
 * a drain, the jobs on it requeued or failed. 0, or PX_E* with msg. */
int px_gpu_fault(struct px_server *s, const struct px_gpu_fault *f, int64_t now, char *msg, size_t size);
/* GPU gpu of node (-1: every one) back in service; a quarantined one only
 * with quarantined_too (an operator's explicit clear). */
int px_gpu_resume(struct px_server *s, uint32_t node, int gpu, bool quarantined_too, int64_t now);
/* The table follows a PX_EV_GPU record (events.c, live and at recovery). */
void px_gpu_fold(struct px_server *s, const struct px_event *ev, int64_t now);
/* "3:UNUSABLE(GPU 3: xid 79),..." for the node's listing, and the faults
 * alone ("GPU 3: xid 79; ...") for its reason, *since the latest time one
 * of them went out (0: none); returns how many are out. */
uint32_t px_gpu_health_text(const struct px_server *s, uint32_t node, char *buf, size_t size, char *reason,
                            size_t rsize, int64_t *since);
/* phalanx_gpu_health and phalanx_gpu_faults_total through put(t, ...). */
void px_gpu_metrics(const struct px_server *s, void (*put)(void *t, const char *fmt, ...), void *t);
void px_gpu_free_all(struct px_server *s);

/* ---- node health check and reboot (node_health.c), main thread ---- */
struct px_node_health;
enum px_reboot_state { PX_REBOOT_NONE, PX_REBOOT_REQUESTED, PX_REBOOT_ORDERED };
enum px_reboot_next { PX_REBOOT_NEXT_KEEP, PX_REBOOT_NEXT_RESUME, PX_REBOOT_NEXT_DOWN };
/* A health check result: a failure drains the node with its message, a
 * success resumes a node the check drained. 0 or PX_E* with msg. */
int px_node_health_report(struct px_server *s, const struct px_node_health *h, int64_t now, char *msg, size_t size);
/* by: the operator asking (an ASAP drain is theirs in sinfo -R). */
int px_node_reboot_request(struct px_server *s, uint32_t node, bool asap, enum px_reboot_next next, const char *reason,
                           const char *by, int64_t now);
/* The node's heartbeat: true (once) when its reboot is due: requested and empty. */
bool px_node_reboot_due(struct px_server *s, uint32_t node);
/* The node registered: an ordered reboot is done, its next state applied. */
void px_node_reboot_done(struct px_server *s, uint32_t node, int64_t now);
/* "REBOOT_REQUESTED", "REBOOT_ISSUED" or NULL, for the listing. */
const char *px_node_reboot_state(const struct px_server *s, uint32_t node);

#endif
