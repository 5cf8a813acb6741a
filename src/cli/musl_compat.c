/*
 * musl_compat.c - what Debian's libjansson.a needs from glibc that musl does
 * not have, for the lean front end built against musl (CMakeLists.txt,
 * PX_MUSL_FRONT_END). Compiled to nothing elsewhere.
 *
 * Debian builds jansson with _FORTIFY_SOURCE, so its objects call glibc's
 * checked entry points (__snprintf_chk and two more) instead of snprintf and
 * strncpy. Everything else jansson calls (malloc, strtod, localeconv,
 * __errno_location, __assert_fail, __stack_chk_fail, ...) musl provides with
 * glibc's calling convention and layout, so these three are all the glue.
 * Each checks what glibc's would (the destination is as large as claimed)
 * and aborts otherwise, as glibc does.
 */
#ifdef PX_MUSL_COMPAT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int __vsnprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, va_list ap);
int __snprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, ...);
char *__strncpy_chk(char *dst, const char *src, size_t n, size_t dstlen);

int __vsnprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, va_list ap) {
  (void)flag;
  if (n > slen) abort();
  return vsnprintf(s, n, fmt, ap);
}

int __snprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = __vsnprintf_chk(s, n, flag, slen, fmt, ap);
  va_end(ap);
  return r;
}

char *__strncpy_chk(char *dst, const char *src, size_t n, size_t dstlen) {
  if (n > dstlen) abort();
  return strncpy(dst, src, n);
}
#endif
