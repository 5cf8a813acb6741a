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
 *
 * And memcpy: musl's copies with `rep movsq`, whose start-up costs ~100 ns
 * in this VM, so squeue's ~300,000 short copies (strings of 10,000 jobs,
 * stdio) took a third of its time. In a static binary ours replaces it.
 */
#if defined(PX_MUSL_COMPAT) || defined(PX_MUSL_COMPAT_TEST)
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t __attribute__((__may_alias__, __aligned__(1))) u64_any;
typedef uint32_t __attribute__((__may_alias__, __aligned__(1))) u32_any;

/* Forward, loads before stores in every step: musl's memmove hands its
 * forward copies (dst below src, overlapping) to memcpy, and this is right
 * for them too. The attribute keeps GCC from turning the loops back into a
 * call to memcpy. No restrict, for the same reason as memmove's. */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void *copy_forward(void *dst, const void *src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  if (n >= 4096) { /* long: the string instruction's start-up no longer shows */
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    return dst;
  }
  if (n >= 8) {
    uint64_t last = *(const u64_any *)(s + n - 8);
    for (size_t i = 0; i + 8 <= n; i += 8) *(u64_any *)(d + i) = *(const u64_any *)(s + i);
    *(u64_any *)(d + n - 8) = last;
    return dst;
  }
  if (n >= 4) {
    uint32_t first = *(const u32_any *)s, last = *(const u32_any *)(s + n - 4);
    *(u32_any *)d = first;
    *(u32_any *)(d + n - 4) = last;
    return dst;
  }
  for (size_t i = 0; i < n; i++) d[i] = s[i];
  return dst;
}

#endif /* the copy: also compiled alone by tests/unit/util/test_musl_compat.c */

#ifdef PX_MUSL_COMPAT
void *memcpy(void *dst, const void *src, size_t n) { return copy_forward(dst, src, n); }

/* musl's memmove (x86_64) jumps to this name for forward copies; defining it
 * keeps musl's memcpy object, which defines both, out of the link. */
void *__memcpy_fwd(void *dst, const void *src, size_t n);
void *__memcpy_fwd(void *dst, const void *src, size_t n) { return copy_forward(dst, src, n); }

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
