/*
 * cli_fields.h - the field tables behind the CLI's JSON codecs (cli_json.c):
 * one row per struct member, keyed by its C name, so the jansson codec and
 * the streaming job-list decoder (cli_jobscan.c) read the same schema.
 */
#ifndef PX_CLI_CLI_FIELDS_H
#define PX_CLI_CLI_FIELDS_H

#include <stddef.h>

enum px_cli_ftype { F_STR, F_STRV, F_U32, F_U64, F_I32, F_I64, F_BOOL, F_DBL, F_CHARS };

struct px_cli_field {
  const char *name;
  enum px_cli_ftype type;
  size_t off, size;           /* size: for F_CHARS arrays */
};

/* NULL-name terminated */
extern const struct px_cli_field px_cli_spec_fields[]; /* struct px_jobspec */
extern const struct px_cli_field px_cli_job_fields[];  /* struct px_job_info */
extern const struct px_cli_field px_cli_step_fields[]; /* struct px_step_info (accounting) */

#endif
