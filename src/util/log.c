/*
 * log.c - leveled logging. One mutex around the write so that lines from API
 * threads never interleave; the level check is a plain read first so that a
 * disabled debug line costs a compare.
 */
#include "util/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util/error.h"

static enum px_log_level log_level = PX_LOG_INFO;
static FILE *log_file;
static char log_tag[64] = "phalanx";
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void px_log_set_level(enum px_log_level level) { log_level = level; }
void px_log_set_file(FILE *f) { log_file = f; }

void px_log_set_tag(const char *tag) {
  pthread_mutex_lock(&log_lock);
  snprintf(log_tag, sizeof log_tag, "%s", tag ? tag : "phalanx");
  pthread_mutex_unlock(&log_lock);
}

int px_log_parse_level(const char *s, enum px_log_level *out) {
  static const char *names[] = {"debug", "info", "warn", "error"};
  for (int i = 0; i < 4; i++) {
    if (strcasecmp(s, names[i]) == 0) {
      *out = (enum px_log_level)i;
      return 0;
    }
  }
  return PX_EINVAL;
}

void px_log(enum px_log_level level, const char *fmt, ...) {
  static const char *labels[] = {"debug", "info", "warn", "error"};
  if (level < log_level) return;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  pthread_mutex_lock(&log_lock);
  FILE *f = log_file ? log_file : stderr;
  /* not strftime: it loads the time zone (/etc/localtime) in every process
   * that logs once, such as each job's supervisor; UTC needs none */
  fprintf(f, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s: ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
          tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, log_tag, labels[level]);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fputc('\n', f);
  fflush(f);
  pthread_mutex_unlock(&log_lock);
}
