/*
 * slurmrestd_steps.h - an accounting row's srun steps in slurmdbd's v0.0.39
 * shape, for /slurmdb/v0.0.39/jobs (slurmrestd_steps.c).
 */
#ifndef PX_SERVER_HTTP_SLURMRESTD_STEPS_H
#define PX_SERVER_HTTP_SLURMRESTD_STEPS_H

#include <jansson.h>
#include <stdint.h>

/* steps: the row's steps as the server stored them (a JSON array, or NULL);
 * job_id names them ("12.0"). A new array (empty for none); NULL when out
 * of memory. */
json_t *px_sr_db_steps(uint64_t job_id, const char *steps);

#endif
