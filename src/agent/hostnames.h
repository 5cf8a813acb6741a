/*
 * hostnames.h - the two compressed list forms a job's environment uses:
 * hostlists ("gpu[0001-0002],login1") for SLURM_JOB_NODELIST, and counted
 * value lists ("64(x2),8") for SLURM_TASKS_PER_NODE / SLURM_JOB_CPUS_PER_NODE.
 *
 * The hostlist is util/hostlist's canonical compression, behind a
 * fixed-buffer call.
 */
#ifndef PX_AGENT_HOSTNAMES_H
#define PX_AGENT_HOSTNAMES_H

#include <stddef.h>
#include <stdint.h>

/* Compresses the set of names into buf. 0, or PX_ERANGE when buf is too
 * small (buf then holds a truncated, terminated string), or util/hostlist's
 * errors. */
int px_agent_hostlist(char *const *names, uint32_t n, char *buf, size_t size);

/* "v(xN)" runs joined by commas; a value seen once is written plain. */
int px_agent_count_list(const uint32_t *v, uint32_t n, char *buf, size_t size);

#endif
