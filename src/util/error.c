/* error.c - messages for the PX_E* table in error.h. */
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *px_strerror(int err) {
  switch (err) {
    case PX_OK: return "success";
#define PX_ERR_MSG(name, code, msg) case -(code): return msg;
    PX_ERRNO_MAP(PX_ERR_MSG)
#undef PX_ERR_MSG
    default: return "unknown error";
  }
}

const char *px_errname(int err) {
  switch (err) {
    case PX_OK: return "OK";
#define PX_ERR_NAME(name, code, msg) case -(code): return #name;
    PX_ERRNO_MAP(PX_ERR_NAME)
#undef PX_ERR_NAME
    default: return "UNKNOWN";
  }
}

void px_diag_clear(struct px_diag *d) {
  if (!d) return;
  d->pos = -1;
  d->line = 0;
  d->msg[0] = '\0';
}

void px_diag_vformat(struct px_diag *d, const char *fmt, va_list ap) {
  vsnprintf(d->msg, sizeof d->msg, fmt, ap);
}

int px_diag_set(struct px_diag *d, int err, int pos, const char *fmt, ...) {
  if (!d) return err;
  va_list ap;
  va_start(ap, fmt);
  px_diag_vformat(d, fmt, ap);
  va_end(ap);
  d->pos = pos;
  return err;
}
