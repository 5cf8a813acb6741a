/*
 * units.h - durations and sizes as Slurm users write them.
 *
 * Durations, in seconds, accept every form Slurm's --time accepts:
 *   "M"  "M:S"  "H:M:S"  "D-H"  "D-H:M"  "D-H:M:S"  "UNLIMITED"  "INFINITE"  "-1"
 * The leading field may be any size ("90" minutes, "48:00:00"); the fields
 * after it must be in range (minutes and seconds 0-59, hours after days 0-23),
 * so that "1:75:00" is reported rather than guessed at. Keywords are
 * case-insensitive.
 *
 * Sizes are MiB with an optional K, M, G or T suffix (case-insensitive, powers
 * of 1024); a bare number is MiB, as with --mem. K rounds up to whole MiB.
 *
 * The formatters print Slurm's styles: px_duration_format as squeue and sinfo
 * do ("0:08", "30:00", "1:30:00", "1-02:00:00"), px_duration_format_hms as
 * scontrol and sacct do ("00:30:00", "1-02:00:00"); both print "UNLIMITED"
 * for PX_TIME_UNLIMITED and "INVALID" for a negative value.
 */
#ifndef PX_UTIL_UNITS_H
#define PX_UTIL_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* A duration with no limit ("UNLIMITED", "INFINITE"). */
#define PX_TIME_UNLIMITED INT64_MAX
/* Buffer size that always fits a formatted duration or size. */
#define PX_UNITS_BUF 32

/* 0, or PX_EPARSE / PX_ERANGE with `d` naming the position and problem. */
int px_duration_parse(const char *s, int64_t *out_s, struct px_diag *d);
/* snprintf-like: returns the length of the text (truncated to fit n). */
int px_duration_format(int64_t secs, char *buf, size_t n);
int px_duration_format_hms(int64_t secs, char *buf, size_t n);

/* 0, or PX_EPARSE / PX_ERANGE with `d` filled. */
int px_size_parse_mib(const char *s, uint64_t *out_mib, struct px_diag *d);
/*
 * As Slurm prints memory in TRES strings: scaled to the largest unit (M, G,
 * T, P) that keeps the value at least 1, no decimals when exact, else two
 * ("500M", "1000G", "62.50T").
 */
int px_size_format_mib(uint64_t mib, char *buf, size_t n);

#endif
