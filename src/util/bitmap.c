/* bitmap.c - the heap-backed bit set of bitmap.h. */
#include "util/bitmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static size_t nwords(size_t nbits) { return (nbits + 63) / 64; }

int px_bitmap_init(struct px_bitmap *b, size_t nbits) {
  b->nbits = nbits;
  b->w = calloc(nwords(nbits) ? nwords(nbits) : 1, sizeof(uint64_t));
  return b->w ? 0 : PX_ENOMEM;
}

void px_bitmap_fini(struct px_bitmap *b) {
  free(b->w);
  b->w = NULL;
  b->nbits = 0;
}

void px_bitmap_copy(struct px_bitmap *dst, const struct px_bitmap *src) {
  memcpy(dst->w, src->w, nwords(src->nbits) * sizeof(uint64_t));
}

size_t px_bitmap_count(const struct px_bitmap *b) {
  size_t n = 0;
  for (size_t i = 0; i < nwords(b->nbits); i++) n += (size_t)__builtin_popcountll(b->w[i]);
  return n;
}

size_t px_bitmap_next(const struct px_bitmap *b, size_t from) {
  if (from >= b->nbits) return b->nbits;
  size_t wi = from >> 6;
  uint64_t w = b->w[wi] & (~0ULL << (from & 63));
  for (;;) {
    if (w) {
      size_t i = (wi << 6) + (size_t)__builtin_ctzll(w);
      return i < b->nbits ? i : b->nbits;
    }
    if (++wi >= nwords(b->nbits)) return b->nbits;
    w = b->w[wi];
  }
}

void px_bitmap_clear_all(struct px_bitmap *b) { memset(b->w, 0, nwords(b->nbits) * sizeof(uint64_t)); }

void px_bitmap_and(struct px_bitmap *dst, const struct px_bitmap *src) {
  for (size_t i = 0; i < nwords(dst->nbits); i++) dst->w[i] &= src->w[i];
}

void px_bitmap_or(struct px_bitmap *dst, const struct px_bitmap *src) {
  for (size_t i = 0; i < nwords(dst->nbits); i++) dst->w[i] |= src->w[i];
}
