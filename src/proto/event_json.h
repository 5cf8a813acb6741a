/*
 * event_json.h - the journal record of a struct px_event (core/event.h):
 * the core's event is what the journal stores, so recovery decodes each
 * record and gives it to px_core_apply like a live request.
 *
 * A record is (kind, job id, subject, data) in the store (store/store.h):
 * kind is the event's journal name, subject a node, partition, user or
 * reservation name, data a JSON object with the format's version, "v":1. Names, never conf indexes,
 * go to disk, so a journal survives a reordered configuration. Records written before the version
 * existed (version 0, issue 13) have the same members without "v" and are
 * read the same; a record of a newer version than this server's is refused
 * (PX_EPROTO naming "v"): a server never guesses at a format it predates.
 *
 *   submit  J  -     {"v":1,"spec":{...},"ids":N}     N ids from J (arrays)
 *   cancel  J  user  {"v":1,"signal":S}
 *   hold / release J {"v":1,"admin":bool}
 *   update  J  -     {"v":1,"nice":..,"time_limit_s":..,"priority":..}
 *   start   J  -     {"v":1,"alloc":[{"node":"n01","ncpu":4,"gpus":[0,1],
 *                     "mem_mib":M[,"gpu_share":H]}],"time_limit_s":T,"array_job_id":A,
 *                     "array_task_id":K}   (gpu_share: a fractional job's
 *                     hundredths of its one GPU, absent for whole GPUs)
 *   end     J  -     {"v":1,"state":"COMPLETED","exit_code":0,
 *                     "term_signal":0,"peak_mem_mib":M,"cpu_time_ms":C}
 *   requeue J  -     {"v":1,"hold":bool,"reason":"NodeFail"}
 *   reject  J  -     {"v":1,"reason":"..."}
 *   drain / resume / down / up  0  node  {"v":1,"reason":"...","by":"alice"[,"cause":"operator"]}
 *                    (by: who, an operator or the server's user; absent in older records:
 *                    not known. cause: a drain's, by name (server/nodes/nodes.h,
 *                    px_drain_cause); absent in older records: the server's loader infers it)
 *   part_down / part_up  0  partition  {"v":1,"reason":"..."}
 *   resv    0  name  {"v":1,"name":..,"start_s":..,"end_s":..,"nodes":[..],
 *                     "ngpus":..,"maintenance":..,"partition":..,"account":..}
 *   svc_apply / svc_scale / svc_delete / svc_rollback / svc_replica  J  -
 *                    {"v":1,"svc":{...}}  the service's record (svc/svc_event.c)
 *   acct    0  name  {"v":1,"op":"add","entity":"account","name":..,"set":{..}}
 *                    an online change of the accounts tree or a QoS (acct_json.c)
 */
#ifndef PX_PROTO_EVENT_JSON_H
#define PX_PROTO_EVENT_JSON_H

#include <jansson.h>

#include "core/event.h"
#include "store/store.h"
#include "util/map.h"

#define PX_EVENT_VERSION 1

/* What names in a record resolve against. */
struct px_event_names {
  const struct px_conf *conf;
  const struct px_smap *nodes; /* node name -> conf index */
};

/* A decoded record: the event and the storage its pointers point into. */
struct px_event_rec {
  struct px_event ev;
  unsigned version;         /* as read: 0 (before issue 13) or 1 */
  uint64_t ids;             /* submit: ids as recorded (0: not said) */
  struct px_jobspec spec;   /* submit */
  struct px_alloc *alloc;   /* start (malloc'd) */
  struct px_resv_spec resv; /* resv */
  uint32_t *resv_nodes;     /* resv (malloc'd) */
  json_t *data;             /* the parsed data; strings point into it */
  char *svc_text;           /* svc_*, step: the service's or step's record (malloc'd) */
  struct px_acct_edit acct; /* acct (strings point into data) */
};

/* Decodes r into out (px_event_rec_fini frees it, also after an error):
 * 0, PX_EPROTO (a newer version), PX_EINVAL (unreadable, an unknown kind, a
 * name the configuration lacks, a bad spec) with d naming the field, or
 * PX_ENOMEM. */
int px_event_decode(const struct px_event_names *n, const struct px_store_rec *r,
                    struct px_event_rec *out, struct px_diag *d);
void px_event_rec_fini(struct px_event_rec *e);

/* The record of ev as accepted (res: a submit's ids): out->kind, job_id and
 * subject (pointing into ev or conf) and the data text (malloc'd, returned;
 * NULL on ENOMEM). */
char *px_event_encode(const struct px_conf *conf, const struct px_event *ev,
                      const struct px_event_result *res, struct px_store_rec *out);

/* An accounts change from JSON (acct_json.c): the body of POST /v1/accounts
 * and the acct record's data. Strings point into o (names folded in it);
 * 0 or PX_EINVAL with d naming the member, or PX_ENOMEM. */
int px_acct_edit_from_json(json_t *o, struct px_acct_edit *e, struct px_diag *d);
/* Its canonical JSON (without "v"); NULL on ENOMEM. */
json_t *px_acct_edit_json(const struct px_acct_edit *e);

/* A reservation's canonical JSON (the listing's and the record's members). */
json_t *px_event_resv_json(const struct px_conf *conf, const struct px_resv_spec *r);

#endif
