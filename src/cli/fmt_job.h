/*
 * fmt_job.h - one job's fields as squeue, sacct and scontrol print them
 * (fmt_job.c): the %-letter values, their headers, and the small renderers
 * (memory with units, TRES strings) that several commands share.
 */
#ifndef PX_CLI_FMT_JOB_H
#define PX_CLI_FMT_JOB_H

#include "cli/cli.h"

/* The header of squeue's %key, or NULL when the key is unknown. */
const char *px_fmt_job_header(char key);
/* The value of squeue's %key for job j at time now; start: --start semantics. */
void px_fmt_job_field(char key, const struct px_job_info *j, int64_t now, bool start, char *buf,
                      size_t n);
/* Run time so far (running), final (finished) or 0 (never started). */
int64_t px_fmt_job_elapsed(const struct px_job_info *j, int64_t now);
/* 1024000 -> "1000G", 65536000 -> "62.50T", 512 -> "512M". */
void px_fmt_mem(char *buf, size_t n, uint64_t mib);
/* scontrol's TRES: "cpu=8,mem=1000G,node=1,billing=8,gres/gpu=1"; sorted: sacct's order. */
void px_fmt_job_tres(char *buf, size_t n, const struct px_job_info *j, bool sorted);
/* "10059_1", "10059_[3-9%2]", or "10127". */
void px_fmt_job_id(char *buf, size_t n, const struct px_job_info *j);
/* An array's pending tasks as Slurm shows them: steps written out
 * ("5-9:2%2" is "5,7,9%2"), other forms as they are. */
void px_fmt_array_pending(char *buf, size_t n, const char *pending);
/* The task ids of an array's pending tasks ("1-9:2%2": 1,3,5,7,9), sorted;
 * false when there are more than max or the form is not one of those. */
bool px_fmt_array_tasks(const char *pending, uint32_t *v, size_t max, size_t *nv);
/* Nodes the job has or asks for. */
uint32_t px_fmt_job_nodes(const struct px_job_info *j);
uint32_t px_fmt_job_cpus(const struct px_job_info *j);
/* Dependency as Slurm 22.05 shows it: each term of a job still waiting on it
 * with "(unfulfilled)" ("(failed)" once it can never be satisfied), and
 * "(null)" when it no longer holds the job. */
void px_fmt_job_dependency(char *buf, size_t n, const struct px_job_info *j);
#define PX_STR(s) ((s) ? (s) : "(null)")

#endif
