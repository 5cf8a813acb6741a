/*
 * jobspec_json.h - the JSON form of struct px_jobspec (core/jobspec.h), as
 * POSTed to /v1/jobs and stored in the journal.
 *
 * Keys are the struct's member names ("nodes_min", "gpus_per_node",
 * "time_limit_s", "argv", "env", ...); docs/api/openapi.yaml lists them with
 * their ranges. Decoding is strict: an unknown key, a wrong type, a number out
 * of range, a string too long or holding control characters, an output path
 * with a ".." component or an env entry without '=' is refused and the
 * diagnostic starts with the field's JSON path followed by ": ".
 */
#ifndef PX_PROTO_JOBSPEC_JSON_H
#define PX_PROTO_JOBSPEC_JSON_H

#include <jansson.h>

#include "core/jobspec.h"
#include "util/error.h"

/* New JSON object, or NULL on ENOMEM. */
json_t *px_jobspec_to_json(const struct px_jobspec *s);
/*
 * Fills *s (which the caller has px_jobspec_init'ed) from obj; prefix is put
 * before field names in diagnostics ("" or "jobs[3]."). On error *s is left
 * empty (init state) and d says why.
 */
int px_jobspec_from_json(const json_t *obj, struct px_jobspec *s, const char *prefix,
                         struct px_diag *d);

struct px_jbuf;
/* Appends the spec's members (no braces) to b: the direct writer (jfield.h). */
void px_jobspec_write(struct px_jbuf *b, const struct px_jobspec *s);

/* The same through text: malloc'd compact JSON / parse and decode. */
char *px_jobspec_encode(const struct px_jobspec *s);
int px_jobspec_decode(const char *json, struct px_jobspec *s, struct px_diag *d);

#endif
