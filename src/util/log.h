/*
 * log.h - a leveled logger with timestamps, writing one line per call to
 * stderr (or a file). Not used by src/core/, which has no I/O.
 */
#ifndef PX_UTIL_LOG_H
#define PX_UTIL_LOG_H

#include <stdio.h>

enum px_log_level { PX_LOG_DEBUG, PX_LOG_INFO, PX_LOG_WARN, PX_LOG_ERROR };

void px_log_set_level(enum px_log_level level);
/* Parses "debug", "info", "warn", "error"; returns 0 or PX_EINVAL. */
int px_log_parse_level(const char *s, enum px_log_level *out);
/* Where lines go; NULL means stderr. The logger does not close it. */
void px_log_set_file(FILE *f);
/* A short tag printed on every line, e.g. "server" or "agent n01". Copied. */
void px_log_set_tag(const char *tag);

void px_log(enum px_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define px_debug(...) px_log(PX_LOG_DEBUG, __VA_ARGS__)
#define px_info(...) px_log(PX_LOG_INFO, __VA_ARGS__)
#define px_warn(...) px_log(PX_LOG_WARN, __VA_ARGS__)
#define px_error(...) px_log(PX_LOG_ERROR, __VA_ARGS__)

#endif
