/*
 * cli_json.h - JSON for the CLI's requests and replies (cli_json.c): the job
 * spec out, the view structs in. A stopgap until proto/'s codecs land; the
 * keys are the C field names.
 */
#ifndef PX_CLI_CLI_JSON_H
#define PX_CLI_CLI_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "proto/views.h"
#include "util/error.h"

json_t *px_cli_jobspec_to_json(const struct px_jobspec *s);
json_t *px_cli_job_to_json(const struct px_job_info *j);
json_t *px_cli_node_to_json(const struct px_node_info *n);
/* Decoders: 0, PX_EPROTO (wrong type) or PX_ENOMEM; the struct is left empty on failure. */
int px_cli_job_from_json(const json_t *o, struct px_job_info *j);
int px_cli_node_from_json(const json_t *o, struct px_node_info *n);
int px_cli_partition_from_json(const json_t *o, struct px_partition_info *p);
int px_cli_share_from_json(const json_t *o, struct px_share_info *s);
void px_cli_job_fini(struct px_job_info *j);
void px_cli_node_fini(struct px_node_info *n);
void px_cli_partition_fini(struct px_partition_info *p);
void px_cli_share_fini(struct px_share_info *s);

/* A JSON array of records into a heap array of structs (all or nothing). */
int px_cli_jobs_from_json(const json_t *arr, struct px_job_info **out, size_t *n);
int px_cli_nodes_from_json(const json_t *arr, struct px_node_info **out, size_t *n);
int px_cli_partitions_from_json(const json_t *arr, struct px_partition_info **out, size_t *n);
int px_cli_shares_from_json(const json_t *arr, struct px_share_info **out, size_t *n);
/* The same from a reply's text ({"jobs":[...]} or a bare array), decoded
 * without a jansson tree (cli_jobscan.c: squeue with 10,000 jobs). */
int px_cli_jobs_from_text(const char *text, size_t len, struct px_job_info **out, size_t *n);
/* GET /v1/accounting's "next_after" (the next page's cursor, the last
 * member of a full page), read from the text's end without decoding the
 * rest (sacct asks for that page first). False when there is none, or no
 * plain number of at most 19 digits. */
bool px_cli_jobs_next_after(const char *text, size_t len, uint64_t *after);
void px_cli_jobs_free(struct px_job_info *v, size_t n);
/* The same decoding, its strings left in text (made writable for it: each
 * is ended with a NUL where it is, escapes decoded there), so that a long
 * listing costs no allocation per string (sacct's pages). The jobs are
 * valid while text is; released with the _inplace functions (arrays only).
 * *out, *cap: an array of *cap jobs to decode into (taken: grown as needed,
 * freed on failure), or NULL; then the jobs and their array's capacity, so
 * that the next page can reuse it (memory touched once, not per page). */
int px_cli_jobs_from_text_inplace(char *text, size_t len, struct px_job_info **out, size_t *cap,
                                  size_t *n);
void px_cli_job_fini_inplace(struct px_job_info *j);
void px_cli_jobs_free_inplace(struct px_job_info *v, size_t n);
void px_cli_nodes_free(struct px_node_info *v, size_t n);
void px_cli_partitions_free(struct px_partition_info *v, size_t n);
void px_cli_shares_free(struct px_share_info *v, size_t n);

#endif
