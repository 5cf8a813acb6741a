/*
 * journal.c - the journal's two ends on the server: the commit of what the
 * live handlers added (group commit, commit.c), and recovery, which reads
 * every record back as the core's event (proto/event_json.c) and applies it
 * with px_events_apply, the function the live path uses (events.c). The
 * state after a restart is therefore the same fold of the same events.
 *
 * What recovery does besides: a record the core now refuses (the
 * configuration changed under it) is logged and skipped, except a submit,
 * whose job is kept, FAILED with reason InvalidOnRecovery, so that its id is
 * never given again and its user can see what became of it, and an accounts
 * change (sacctmgr), which is logged as a warning: the accounts file wins; a start whose
 * allocation the nodes no longer hold runs outside the scheduler, its nodes
 * held drained until it ends (px_core_apply's START, server.c,
 * docs/operations.md "Recovery"), and a drain recorded before its cause
 * was gets one inferred from its reason (below).
 */
#include <stdlib.h>
#include <string.h>

#include "proto/event_json.h"
#include "server/journal/journal.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"
#include "util/log.h"

/* The accounting rows of the jobs that ended go with the records (commit.c). */
int px_journal_sync(struct px_server *s) { return px_commit_sync(s); }

int px_journal_commit(struct px_server *s) {
  if (!px_commit_open(s) && !s->acct_pending.len) return 0;
  return px_journal_sync(s);
}

/* A submit the core no longer accepts: the job stays known, failed. */
static int submit_refused(struct px_server *s, struct px_event_rec *e, int64_t time,
                          const struct px_diag *d) {
  px_warn("recovery: job %llu no longer accepted: %s", (unsigned long long)e->ev.job_id, d->msg);
  struct px_event_result res = {.nids = e->ids ? e->ids : 1, .account = PX_NONE};
  int rc = px_events_fold(s, &e->ev, &res, time);
  struct px_sjob *j = rc ? NULL : px_jobs_find(s, e->ev.job_id);
  if (!j) return rc;
  j->state = PX_JOB_FAILED;
  j->end = time;
  snprintf(j->reason, sizeof j->reason, "%s", "InvalidOnRecovery");
  return 0;
}

/* ---- drain records from before the cause was kept ----
 *
 * A drain's record names its cause (nodes/drain.c). One written before
 * (a journal of an older server, or its leader's during an upgrade) has
 * none, and the cause is inferred here, for such records only, from the
 * reasons those servers wrote for their own drains (their texts, frozen
 * here: new wording never belongs in this table). A reason that none of
 * them starts is an operator's, and so is one signed ("by", kept before the
 * cause was) by someone other than the server's user, except a reboot
 * drain, which is signed by the operator who asked for it. Live, nothing
 * is ever decided by a reason's text. */
struct legacy_reason {
  const char *start;
  enum px_drain_cause cause;
};
static const struct legacy_reason legacy_reboot[] = {{"Reboot ASAP", PX_DRAIN_REBOOT},
                                                     {"Reboot complete: nextstate=DOWN", PX_DRAIN_REBOOT}};
static const struct legacy_reason legacy_server[] = {{"HealthCheck: ", PX_DRAIN_HEALTH_CHECK},
                                                     {"Low CPUs (reported:", PX_DRAIN_REGISTRATION},
                                                     {"Low RealMemory (reported:", PX_DRAIN_REGISTRATION},
                                                     {"gres/gpu layout: ", PX_DRAIN_REGISTRATION}};

static bool legacy_match(const struct legacy_reason *t, size_t n, const char *reason, enum px_drain_cause *out) {
  for (size_t i = 0; i < n; i++)
    if (!strncmp(reason, t[i].start, strlen(t[i].start))) return *out = t[i].cause, true;
  return false;
}

static enum px_drain_cause legacy_drain_cause(const struct px_server *s, const struct px_event *ev) {
  const char *r = ev->reason ? ev->reason : "";
  enum px_drain_cause c = PX_DRAIN_OPERATOR;
  if (legacy_match(legacy_reboot, sizeof legacy_reboot / sizeof legacy_reboot[0], r, &c)) return c;
  if (ev->by && strcmp(ev->by, s->self_user)) return PX_DRAIN_OPERATOR;
  if (legacy_match(legacy_server, sizeof legacy_server / sizeof legacy_server[0], r, &c)) return c;
  /* "gres/gpu count reported lower than configured (4 < 8)", or with a type */
  if (!strncmp(r, "gres/gpu", 8) && strstr(r, " count reported lower than configured (")) return PX_DRAIN_REGISTRATION;
  size_t digits = strncmp(r, "GPU ", 4) ? 0 : strspn(r + 4, "0123456789"); /* "GPU 3: xid 79" */
  return digits && r[4 + digits] == ':' ? PX_DRAIN_GPU_FAULT : c;
}

static int replay_one(void *ctx, const struct px_store_rec *r) {
  struct px_server *s = ctx;
  struct px_event_rec e;
  struct px_diag d;
  s->seq = r->seq;
  int rc = px_event_decode(&(struct px_event_names){s->conf, &s->node_names}, r, &e, &d);
  if (rc == PX_ENOMEM || rc == PX_EPROTO) {
    px_error("journal seq %llu (%s): %s", (unsigned long long)r->seq, r->kind, d.msg);
  } else if (rc) {
    px_warn("journal seq %llu (%s): skipped: %s", (unsigned long long)r->seq, r->kind, d.msg);
  } else if (e.ev.kind == PX_EV_REQUEUE && !px_jobs_find(s, e.ev.job_id) && /* revived, then replayed */
             (rc = px_archive_revive(s, e.ev.job_id))) {
    px_error("journal seq %llu (%s): %s", (unsigned long long)r->seq, r->kind, px_strerror(rc));
  } else {
    struct px_event_result res;
    if (e.ev.kind == PX_EV_NODE_DRAIN && !e.ev.cause)
      e.ev.cause = px_drain_cause_name(legacy_drain_cause(s, &e.ev));
    rc = px_events_apply(s, &e.ev, r->time, &res);
    if (rc && e.ev.kind == PX_EV_SUBMIT && rc != PX_ENOMEM)
      rc = submit_refused(s, &e, r->time, &res.diag);
    else if (rc && rc != PX_ENOMEM && e.ev.kind == PX_EV_ACCT) /* an administrator's change is lost */
      px_warn("journal seq %llu: the accounts change of %s is refused now (the accounts file changed?): %s",
              (unsigned long long)r->seq, e.acct.name, res.diag.msg);
    else if (rc && rc != PX_ENOMEM)
      px_debug("journal seq %llu (%s): the core refuses it now: %s", (unsigned long long)r->seq,
               r->kind, res.diag.msg);
  }
  px_event_rec_fini(&e);
  /* Out of memory or a record from a newer server stops recovery; a record
   * naming what the configuration no longer has is logged and skipped. */
  return rc == PX_ENOMEM || rc == PX_EPROTO ? rc : 0;
}

int px_journal_follow(struct px_server *s) {
  int rc = px_store_replay(s->store, s->seq, replay_one, s);
  atomic_store(&s->committed_seq, s->seq);
  return rc;
}

/* The archive of finished jobs (archive.c), then the journal of the live
 * ones, then both merged by id. */
int px_journal_recover(struct px_server *s, struct px_diag *d) {
  int rc = px_archive_load(s);
  uint64_t floor = s->seq; /* archived changes: seqs never go back */
  if (!rc) rc = px_store_replay(s->store, 0, replay_one, s);
  if (rc == PX_EPROTO)
    return px_diag_set(d, rc, -1, "recovery: journal seq %llu unreadable (see the log)",
                       (unsigned long long)s->seq);
  if (rc) return px_diag_set(d, rc, -1, "recovery: %s", s->store->errmsg);
  if ((rc = px_archive_merge(s))) return px_diag_set(d, rc, -1, "recovery: out of memory");
  /* Alone, the store's last seq is ours too (a tail archived away must not
   * be given again). With --ha a leader may commit between the replay and
   * this read: its records would be skipped, never applied; the standby
   * follows from what it applied (ha.c; the leader's checkpoints wait for it). */
  uint64_t last = 0;
  if (!s->opts.ha && !px_store_last_seq(s->store, &last) && last > s->seq) s->seq = last;
  if (floor > s->seq) s->seq = floor;
  atomic_store(&s->committed_seq, s->seq);
  return 0;
}
