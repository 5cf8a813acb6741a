/*
 * svc_event.h - a service's own events on the one event path: the record
 * each carries (px_event.svc, JSON text: svc_event.c lists the forms), and
 * the fold that applies a record to the table, live and at recovery.
 */
#ifndef PX_SVC_SVC_EVENT_H
#define PX_SVC_SVC_EVENT_H

#include "core/event.h"
#include "svc/svc.h"

/* The records (malloc'd, NULL on ENOMEM). */
char *px_svc_ev_apply(const struct px_svc_spec *spec);
char *px_svc_ev_scale(const char *name, uint32_t replicas, const char *reason);
char *px_svc_ev_delete(const char *name, const char *by);
char *px_svc_ev_rollback(const char *name, const char *reason);
char *px_svc_ev_replica(const char *name, uint64_t job_id, const struct px_svc_rep_change *c);

/* Folds the record of kind (a PX_EV_SVC_*) into t. 0, PX_ENOENT (no such
 * service), PX_EINVAL (a bad record) with d, or PX_ENOMEM. */
int px_svcs_fold_event(struct px_svcs *t, enum px_event_kind kind, const char *text, int64_t now,
                       struct px_diag *d);

#endif
