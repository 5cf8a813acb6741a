/*
 * views_json.h - JSON codecs of the client views (proto/views.h): what the
 * server answers on GET /v1/jobs, /v1/nodes, /v1/partitions, /v1/shares and
 * what the CLI decodes. Keys are the struct member names; a job's spec is
 * nested under "spec" (proto/jobspec_json.h). Decoders are strict like every
 * proto/ decoder (unknown keys and wrong types are errors naming the field),
 * leave the output zeroed on error, and the caller releases a decoded struct
 * with the matching _fini from views.h.
 */
#ifndef PX_PROTO_VIEWS_JSON_H
#define PX_PROTO_VIEWS_JSON_H

#include <jansson.h>

#include "proto/views.h"
#include "util/error.h"

json_t *px_job_info_to_json(const struct px_job_info *j);
int px_job_info_from_json(const json_t *o, struct px_job_info *j, struct px_diag *d);
json_t *px_node_info_to_json(const struct px_node_info *n);
int px_node_info_from_json(const json_t *o, struct px_node_info *n, struct px_diag *d);
json_t *px_partition_info_to_json(const struct px_partition_info *p);
int px_partition_info_from_json(const json_t *o, struct px_partition_info *p, struct px_diag *d);
json_t *px_share_info_to_json(const struct px_share_info *s);
int px_share_info_from_json(const json_t *o, struct px_share_info *s, struct px_diag *d);

/* Text forms: malloc'd compact JSON; decode parses then calls _from_json. */
char *px_job_info_encode(const struct px_job_info *j);
int px_job_info_decode(const char *json, struct px_job_info *j, struct px_diag *d);

/* A zeroed px_job_info with its spec initialised and array_task_id unset. */
void px_job_info_init(struct px_job_info *j);

#endif
