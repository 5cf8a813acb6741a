/*
 * journal.h - durability (src/server/journal/): the group commit of journal
 * records and accounting rows (commit.c), commit points and recovery
 * (journal.c), and checkpoints that move finished jobs to the archive
 * (archive.c). The main loop and the event road use it; it uses neither the
 * loop nor HTTP (recovery applies records through the road, tables.h).
 */
#ifndef PX_SERVER_JOURNAL_JOURNAL_H
#define PX_SERVER_JOURNAL_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct px_server;
struct px_committer;
struct px_store_rec;
struct px_acct_row;
struct px_node_event_row;
struct px_req;
struct px_sjob;
struct px_diag;

/* ---- journal (journal.c) ---- */
/* Commits the open batch (group commit) and waits for it, then writes the
 * accounting rows of jobs that ended in it; nothing to do without records.
 * Fatal on failure: the caller exits. */
int px_journal_commit(struct px_server *s);
/* The same, also when no record is open: returns when every record added
 * so far is durable (before a snapshot shows the state to readers). */
int px_journal_sync(struct px_server *s);

/* ---- group commit (commit.c) ---- */
void px_commit_init(struct px_committer *c);
void px_commit_fini(struct px_committer *c);
/* Appends r to the open batch (takes r->data, copies r->subject: r then
 * points at the batch's copies until it is sealed) and gives it its seq. */
int px_commit_append(struct px_server *s, struct px_store_rec *r);
/* Adds an accounting row to the open batch, written in the same transaction
 * as the records appended so far (an earlier attempt's row goes with the
 * requeue record that ended it); copies every string of row. */
int px_commit_add_row(struct px_server *s, const struct px_acct_row *row);
/* Adds a node event (store.h px_node_event_row) to the open batch, written
 * once its records are durable; copies every string of e. Live only. */
int px_commit_add_node_event(struct px_server *s, const struct px_node_event_row *e);
/* Does the open batch hold records (or node events)? */
bool px_commit_open(const struct px_server *s);
/* Seals the open batch with reqs (answered once it is durable) and wakes
 * the request that leads its commit; returns at once. false (nothing
 * sealed) when no request may lead: commit with px_commit_sync instead. */
bool px_commit_seal(struct px_server *s, struct px_req *reqs);
/* Seals the open batch and returns once everything sealed is durable. */
int px_commit_sync(struct px_server *s);
bool px_commit_failed(struct px_server *s);
/* Is a commit being retried (disk full, database gone)? Then writes are
 * refused; why (the store's error) is copied to why. */
bool px_commit_stalled(struct px_server *s, char *why, size_t size);
/* The store to the main thread alone (no commit runs meanwhile). */
void px_commit_lock(struct px_server *s);
void px_commit_unlock(struct px_server *s);
/* Rebuilds the state from the store at startup. */
int px_journal_recover(struct px_server *s, struct px_diag *d);

/* A standby's step: applies the journal's records after s->seq (those the
 * leader committed since the last call), as recovery does. */
int px_journal_follow(struct px_server *s);

/* ---- high availability (ha.c) ---- */
enum px_ha_role { PX_HA_STANDBY, PX_HA_TAKING, PX_HA_LEADER, PX_HA_DEPOSED };
/* Opens the lease's own connection and starts the thread that takes and
 * renews the lease and reports this controller (s->ha; nothing without
 * opts.ha). */
int px_ha_start(struct px_server *s, struct px_diag *d);
/* Stops the thread; a leader gives its lease up so that a standby takes
 * over at once. */
void px_ha_stop(struct px_server *s);
/* May this controller act (answer changes, send orders)? Always without
 * --ha; with it, only while it leads and its lease is certainly still its
 * own by this host's clock. */
bool px_ha_leading(const struct px_server *s);
enum px_ha_role px_ha_role(const struct px_server *s);
/* With --ha: no longer leading, or the store refused a write for a later
 * term (fencing): the controller must stop and come back as a standby. */
bool px_ha_deposed(const struct px_server *s);
uint64_t px_ha_term(const struct px_server *s);
/* The leader's advertised URL as last seen ("" when none is known). */
void px_ha_leader_addr(const struct px_server *s, char *buf, size_t size);
/* Main thread: follows the journal until the lease is won (then the last
 * records, and this controller leads: 0) or the server stops (PX_EAGAIN). */
int px_ha_standby(struct px_server *s);
/* The newest journal seq every live standby has applied (UINT64_MAX with
 * none): a checkpoint keeps newer records, or a standby would never see them. */
uint64_t px_ha_archive_floor(const struct px_server *s);

/* ---- checkpoints (archive.c) ---- */
/* A job just finished: the next checkpoint may move it to the archive. */
void px_archive_note(struct px_server *s, const struct px_sjob *j);
/* Main thread, right after a commit: archives the finished jobs when enough
 * wait (opts.checkpoint_jobs) or one waited long. Failure is logged; retried. */
int px_archive_checkpoint(struct px_server *s, int64_t now);
/* Recovery: reads the archive (before the journal), then merges it into the
 * job table (after the journal). */
int px_archive_load(struct px_server *s);
int px_archive_merge(struct px_server *s);
/* During recovery, before the journal's record of job_id is replayed: a job
 * found only in the archive was requeued after its checkpoint (scontrol
 * requeue of a finished job), so its history goes on in the journal; its
 * archived record joins the table now. 0 also when there is none. */
int px_archive_revive(struct px_server *s, uint64_t job_id);
void px_archive_free(struct px_server *s);

#endif
