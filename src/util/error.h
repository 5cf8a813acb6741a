/*
 * error.h - the one table of Phalanx error codes and their messages.
 *
 * Functions return 0 on success or a negative PX_E* code. The table below is
 * an X-macro (as in libuv): one line gives the name, the code and the message,
 * so the enum and px_strerror() can never disagree. Parsers that need to say
 * more (which field, which position) also fill a struct px_diag.
 */
#ifndef PX_UTIL_ERROR_H
#define PX_UTIL_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#define PX_ERRNO_MAP(X)                                              \
  X(NOMEM, 1, "out of memory")                                       \
  X(INVAL, 2, "invalid argument")                                    \
  X(RANGE, 3, "value out of range")                                  \
  X(NOENT, 4, "no such object")                                      \
  X(EXIST, 5, "object already exists")                               \
  X(PERM, 6, "permission denied")                                    \
  X(IO, 7, "input/output error")                                     \
  X(BUSY, 8, "resource busy")                                        \
  X(AGAIN, 9, "try again")                                           \
  X(PARSE, 10, "parse error")                                        \
  X(LIMIT, 11, "limit exceeded")                                     \
  X(STATE, 12, "operation not allowed in the current state")         \
  X(UNSUPPORTED, 13, "not supported")                                \
  X(AUTH, 14, "authentication failed")                               \
  X(TIMEOUT, 15, "timed out")                                        \
  X(CONNECT, 16, "cannot connect")                                   \
  X(PROTO, 17, "protocol error")

enum px_errno {
  PX_OK = 0,
#define PX_ERR_ENUM(name, code, msg) PX_E##name = -(code),
  PX_ERRNO_MAP(PX_ERR_ENUM)
#undef PX_ERR_ENUM
};

/* The message for a code; never NULL ("unknown error" for codes not in the table). */
const char *px_strerror(int err);
/* The symbolic name ("NOMEM") for a code, for stable machine-readable errors. */
const char *px_errname(int err);

/*
 * A precise diagnostic: the message names the field or position and the
 * problem. Fixed size so that filling it can never fail.
 */
struct px_diag {
  int pos;        /* byte offset in the input, or -1 */
  int line;       /* 1-based line, or 0 */
  char msg[256];
};

void px_diag_clear(struct px_diag *d);
/* printf-style; d may be NULL. Returns err so callers can `return px_diag_set(...)`. */
int px_diag_set(struct px_diag *d, int err, int pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same for a caller's own varargs: d's message from fmt and ap (its pos
 * and line untouched). */
void px_diag_vformat(struct px_diag *d, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

#endif
