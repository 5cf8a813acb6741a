/*
 * node_events.h - the nodes' down and drain periods of the cluster's record
 * (`phalanx export` writes them next to the jobs: FILE.nodes.csv beside
 * FILE.csv; docs/simulator.md), read and replayed by `phalanx sim
 * --from-accounting`: each period takes its node out of service, as on
 * the cluster, so that a job the record shows requeued by NODE_FAIL lines
 * up with the outage instead of running through it.
 *
 *   node,state,start_s,end_s,reason,cause,user,time0_unix_s
 *
 * Columns are found by their header names (order free, others ignored);
 * node, state, start_s and end_s are required in the header. In a row:
 * node names a node of the cluster (checked when bound to it); state is
 * DOWN (the node stopped: the jobs on it are requeued, as the server does
 * on a lost node) or DRAIN (no new jobs; those running go on); start_s
 * and end_s are seconds from the jobs trace's second 0, whole and
 * non-negative (an export clips a period begun before the trace to 0);
 * end_s empty is a period still open (to the end of the replay), else at
 * least start_s; reason, cause, user are free text; time0_unix_s, when
 * given, is the jobs trace's (the same in every row). Errors name the line,
 * the column (field number and name) and the byte offset; a failed parse
 * leaves the set empty.
 */
#ifndef PX_SIM_NODE_EVENTS_H
#define PX_SIM_NODE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "conf/conf.h"
#include "sim/csv.h"
#include "util/error.h"

struct px_node_span {
  int64_t start_s, end_s; /* end_s INT64_MAX: open */
  uint32_t name_off;      /* the node's name in names */
  uint32_t node;          /* its index in the cluster (px_node_events_bind) */
  uint32_t line;          /* 1-based line in the file */
  bool down;              /* DOWN (else DRAIN) */
};

PX_VEC_DECLARE(px_node_spanvec, struct px_node_span)

struct px_node_events {
  struct px_node_spanvec spans; /* in file order */
  struct px_charvec names;      /* node names, each NUL-terminated */
  int64_t time0_unix_s;         /* the time0_unix_s column (0: not given) */
};

/* A zeroed struct is an empty set. */
void px_node_events_fini(struct px_node_events *e);
/* 0, PX_EPARSE or PX_ERANGE (d says where and why), or PX_ENOMEM. */
int px_node_events_parse(struct px_node_events *e, const char *buf, size_t len, struct px_diag *d);
/* Reads and parses a file; PX_EIO (d names the file) when unreadable. */
int px_node_events_load(struct px_node_events *e, const char *path, struct px_diag *d);
/* Gives each span its node's index in conf; PX_ENOENT names the line of a
 * node the cluster lacks; PX_EINVAL when both give a time0_unix_s and
 * they differ (trace_time0: the jobs trace's, 0 when it gives none). */
int px_node_events_bind(struct px_node_events *e, const struct px_conf *conf, int64_t trace_time0, struct px_diag *d);

/* ---- replay: the spans as a timeline of changes (loop.c) ---- */

struct px_node_change {
  int64_t t_s;
  uint32_t node;
  bool out;   /* the span begins (else it ends) */
  bool down;  /* a DOWN span (else DRAIN) */
  bool empty; /* the end of a span that began at t_s too (it follows the beginning) */
};

struct px_node_timeline {
  struct px_node_change *v; /* by time; at one time the ends of earlier spans, the beginnings, then
                             * the ends of spans that began then (a node down and back within a second) */
  size_t n, next;
  uint32_t *down, *drain;   /* per node: spans in force (overlapping spans nest) */
  uint32_t nnodes;
};

/* 0 or PX_ENOMEM; e NULL or empty: no change ever due. */
int px_node_timeline_init(struct px_node_timeline *tl, const struct px_node_events *e, uint32_t nnodes);
void px_node_timeline_fini(struct px_node_timeline *tl);
/* When the next change is due (INT64_MAX: none). */
int64_t px_node_timeline_due(const struct px_node_timeline *tl);

#endif
