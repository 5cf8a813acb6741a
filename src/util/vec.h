/*
 * vec.h - typed growable arrays.
 *
 * PX_VEC_DECLARE(px_u32vec, uint32_t) declares `struct px_u32vec { uint32_t
 * *v; size_t len, cap; }` and static inline functions px_u32vec_push(),
 * _reserve(), _fini(), _clear(). Written by hand because C has no generic
 * container in Debian's well-kept libraries that is both typed and tiny; the
 * growth is geometric (x2) so pushes are amortised O(1).
 *
 * Push and reserve return 0 or PX_ENOMEM and leave the vector unchanged on
 * failure. A zeroed struct is an empty vector. The functions are marked
 * unused so that a .c file may declare a vector without using every
 * function (clang warns about unused static inline functions in .c files).
 */
#ifndef PX_UTIL_VEC_H
#define PX_UTIL_VEC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

#define PX_VEC_FN static inline __attribute__((unused))

#define PX_VEC_DECLARE(name, type)                                          \
  struct name {                                                             \
    type *v;                                                                \
    size_t len, cap;                                                        \
  };                                                                        \
  PX_VEC_FN int name##_reserve(struct name *a, size_t want) {           \
    if (want <= a->cap) return 0;                                           \
    size_t cap = a->cap ? a->cap : 8;                                       \
    while (cap < want) {                                                    \
      if (cap > SIZE_MAX / 2 / sizeof(type)) return PX_ENOMEM;              \
      cap *= 2;                                                             \
    }                                                                       \
    type *v = (type *)realloc(a->v, cap * sizeof(type));                    \
    if (!v) return PX_ENOMEM;                                               \
    a->v = v;                                                               \
    a->cap = cap;                                                           \
    return 0;                                                               \
  }                                                                         \
  PX_VEC_FN int name##_push(struct name *a, type x) {                   \
    if (a->len == a->cap && name##_reserve(a, a->len + 1)) return PX_ENOMEM; \
    a->v[a->len++] = x;                                                     \
    return 0;                                                               \
  }                                                                         \
  PX_VEC_FN void name##_clear(struct name *a) { a->len = 0; }           \
  PX_VEC_FN void name##_fini(struct name *a) {                          \
    free(a->v);                                                             \
    a->v = NULL;                                                            \
    a->len = a->cap = 0;                                                    \
  }

PX_VEC_DECLARE(px_u32vec, uint32_t)
PX_VEC_DECLARE(px_u64vec, uint64_t)
PX_VEC_DECLARE(px_strvec, char *)

/* Frees every string of a px_strvec, then the vector. */
static inline void px_strvec_free_all(struct px_strvec *a) {
  for (size_t i = 0; i < a->len; i++) free(a->v[i]);
  px_strvec_fini(a);
}

#endif
