/*
 * bitmap.h - fixed-size bit sets for GPU, CPU and node sets.
 *
 * Two forms: px_bits64 (a plain uint64_t, for per-node GPU sets, where a node
 * has at most 64 GPUs) and struct px_bitmap, a heap-backed set of any size
 * (CPUs of a node, nodes of a partition). Word-at-a-time operations with the
 * compiler's popcount/ctz builtins.
 */
#ifndef PX_UTIL_BITMAP_H
#define PX_UTIL_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t px_bits64;

/* Without POPCNT (the x86-64 baseline Debian builds for) the builtin is a
 * call into libgcc, 4% of a LAS replay: counted here in a few shifts. */
static inline int px_bits64_count(px_bits64 b) {
#ifdef __POPCNT__
  return __builtin_popcountll(b);
#else
  b -= (b >> 1) & 0x5555555555555555ULL;
  b = (b & 0x3333333333333333ULL) + ((b >> 2) & 0x3333333333333333ULL);
  b = (b + (b >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return (int)((b * 0x0101010101010101ULL) >> 56);
#endif
}
/* Index of the lowest set bit, or -1. */
static inline int px_bits64_first(px_bits64 b) { return b ? __builtin_ctzll(b) : -1; }
static inline px_bits64 px_bits64_range(int lo, int n) {
  if (n <= 0) return 0;
  px_bits64 m = n >= 64 ? ~(px_bits64)0 : (((px_bits64)1 << n) - 1);
  return m << lo;
}

struct px_bitmap {
  uint64_t *w;
  size_t nbits;
};

/* Returns 0 or PX_ENOMEM. All bits clear. */
int px_bitmap_init(struct px_bitmap *b, size_t nbits);
void px_bitmap_fini(struct px_bitmap *b);
/* Copies src into dst (same nbits, already initialised). */
void px_bitmap_copy(struct px_bitmap *dst, const struct px_bitmap *src);

static inline void px_bitmap_set(struct px_bitmap *b, size_t i) { b->w[i >> 6] |= 1ULL << (i & 63); }
static inline void px_bitmap_clear(struct px_bitmap *b, size_t i) { b->w[i >> 6] &= ~(1ULL << (i & 63)); }
static inline bool px_bitmap_test(const struct px_bitmap *b, size_t i) {
  return (b->w[i >> 6] >> (i & 63)) & 1;
}
size_t px_bitmap_count(const struct px_bitmap *b);
/* First set bit at index >= from, or b->nbits when none. */
size_t px_bitmap_next(const struct px_bitmap *b, size_t from);
void px_bitmap_clear_all(struct px_bitmap *b);
void px_bitmap_and(struct px_bitmap *dst, const struct px_bitmap *src);
void px_bitmap_or(struct px_bitmap *dst, const struct px_bitmap *src);

#endif
