/*
 * slurmrestd.h - Slurm's REST API (slurmrestd, data_parser v0.0.39) served
 * by the server itself, as a translation layer over the native endpoints:
 * /slurm/v0.0.39/{ping,diag,jobs,job/{id},job/submit,nodes,partitions,
 * reservations} and /slurmdb/v0.0.39/{jobs,associations,qos}. Tools written
 * against slurmrestd get its JSON shapes (meta, errors[], warnings[], the
 * {"set","infinite","number"} numbers of v0.0.39) and its headers
 * (X-SLURM-USER-NAME, X-SLURM-USER-TOKEN) mapped onto the server's own
 * authentication. Reads come from the snapshot; changes go through the same
 * requests to the main thread as the native API, so nothing here has a
 * road of its own into the cluster's state (docs/slurm-migration.md).
 *
 * Files: slurmrestd_common.c (routes, meta, errors, headers),
 * slurmrestd_submit.c (the job_submission decoder: pure, fuzzed),
 * slurmrestd_jobs.c, slurmrestd_cluster.c (ping, diag, nodes, partitions,
 * reservations), slurmrestd_db.c (slurmdb).
 */
#ifndef PX_SERVER_HTTP_SLURMRESTD_H
#define PX_SERVER_HTTP_SLURMRESTD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/api.h"

/* Slurm's error numbers that the answers use (slurm_errno.h's meanings). */
#define PX_SR_EGENERIC 1          /* SLURM_ERROR */
#define PX_SR_EAUTH 1007          /* SLURM_PROTOCOL_AUTHENTICATION_ERROR */
#define PX_SR_EACCESS 2002        /* ESLURM_ACCESS_DENIED */
#define PX_SR_EJOBID 2017         /* ESLURM_INVALID_JOB_ID */
#define PX_SR_EDONE 2021          /* ESLURM_ALREADY_DONE */
#define PX_SR_EPOLICY 2050        /* ESLURM_ACCOUNTING_POLICY */
#define PX_SR_EQUERY 9000         /* ESLURM_REST_INVALID_QUERY */
#define PX_SR_EPARSE 9001         /* ESLURM_REST_FAIL_PARSING */
#define PX_SR_EJOBDESC 9002       /* ESLURM_REST_INVALID_JOBS_DESC */
#define PX_SR_ENOTFOUND 9003      /* ESLURM_REST_EMPTY_RESULT */

/* The slurmrestd route for method and url, or NULL (fills c->arg and
 * c->method_mismatch as px_api_route does). A trailing '/' is optional,
 * as with slurmrestd. */
const struct px_route *px_sr_route(const char *method, const char *url, struct px_api_call *c);
/* Is url under /slurm/ or /slurmdb/ (answers in slurmrestd's shape)? */
bool px_sr_path(const char *url);
/* Rewrites a native error answer ({"error":{...}}) of a slurmrestd path
 * into slurmrestd's shape; other answers are left alone. */
void px_sr_wrap_error(struct px_api_call *c, const char *url);

/* The X-SLURM-USER-NAME / X-SLURM-USER-TOKEN headers (NULL when absent).
 * token: a JWT of the server's key (as Authorization: Bearer). name: who
 * the caller acts as; it must be the authenticated user, unless that user
 * is an administrator (slurmrestd's SlurmUser proxying for a user). who
 * holds the identity authenticated so far (a Unix socket's peer) or is
 * zeroed; 0 or PX_EAUTH with why filled. */
int px_sr_auth_headers(const struct px_auth *a, const char *name, const char *token,
                       struct px_ident *who, char *why, size_t whylen);

/* ---- helpers of the slurmrestd_*.c files ---- */

/* {"set":true,"infinite":false,"number":n} and its unset / infinite forms. */
json_t *px_sr_noval(int64_t n);
json_t *px_sr_noval_unset(void);
json_t *px_sr_noval_infinite(void);
/* A response object: meta (plugin db: the slurmdb one), empty errors and
 * warnings. */
json_t *px_sr_response(const struct px_api_call *c, bool db);
/* Answers o (taken) with status. */
void px_sr_answer(struct px_api_call *c, int status, json_t *o);
/* Answers an error in slurmrestd's shape. */
void px_sr_error(struct px_api_call *c, int status, int slurm_errno, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Is this job visible to the caller (private mode: only their own)? */
bool px_sr_may_see(const struct px_api_call *c, const char *user);
/* The cluster's name (ClusterName=, "phalanx" when unset). */
const char *px_sr_cluster(const struct px_api_call *c);

/* ---- the job_submission decoder (slurmrestd_submit.c): pure ---- */

/* Decodes slurmrestd's job_submission body ({"script":..., "job":{...}})
 * into spec, naming the field (job.time_limit, ...) and the problem on
 * error; fields Phalanx takes but ignores are named in warnings (an array,
 * may be NULL). 0, PX_EINVAL/PX_ERANGE (d filled, spec left empty) or
 * PX_ENOMEM. */
int px_sr_submit_decode(const json_t *body, struct px_jobspec *spec, json_t *warnings,
                        struct px_diag *d);

/* A job update's body (POST job/{job_id}: a job description): what of it
 * Phalanx changes after submission. Pure, fuzzed too. */
#define PX_SR_UPD_TIME 1u
#define PX_SR_UPD_NICE 2u
#define PX_SR_UPD_PRIORITY 4u
#define PX_SR_UPD_HOLD 8u
#define PX_SR_UPD_RELEASE 16u
struct px_sr_update {
  unsigned fields; /* PX_SR_UPD_* */
  int64_t time_limit_s;
  int32_t nice;
  uint32_t priority;
};
/* 0, or PX_EINVAL/PX_ERANGE with d naming the field (any other field of a
 * job description is refused, but environment and the ignored ones, which
 * go to warnings). */
int px_sr_update_decode(const json_t *body, struct px_sr_update *u, json_t *warnings,
                        struct px_diag *d);

/* ---- endpoints ---- */
void px_sr_ping(struct px_api_call *c);
void px_sr_diag(struct px_api_call *c);
void px_sr_jobs(struct px_api_call *c);
void px_sr_job_show(struct px_api_call *c);
void px_sr_job_cancel(struct px_api_call *c);
void px_sr_job_update(struct px_api_call *c);
void px_sr_job_submit(struct px_api_call *c);
void px_sr_nodes(struct px_api_call *c);
void px_sr_partitions(struct px_api_call *c);
void px_sr_reservations(struct px_api_call *c);
void px_sr_db_jobs(struct px_api_call *c);
void px_sr_db_associations(struct px_api_call *c);
void px_sr_db_qos(struct px_api_call *c);
void px_sr_db_accounts(struct px_api_call *c);
void px_sr_db_users(struct px_api_call *c);

#endif
