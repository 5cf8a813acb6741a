/*
 * arena.h - a bump allocator for per-cycle scratch memory and for data freed
 * all at once (a parsed config). Allocation is a pointer bump inside a chunk;
 * px_arena_reset() keeps the first chunk for reuse so a steady-state
 * scheduling cycle does no malloc at all.
 */
#ifndef PX_UTIL_ARENA_H
#define PX_UTIL_ARENA_H

#include <stddef.h>

struct px_arena_chunk;

struct px_arena {
  struct px_arena_chunk *head;
  size_t chunk_size;
};

void px_arena_init(struct px_arena *a, size_t chunk_size);
/* 16-byte aligned; NULL when out of memory. */
void *px_arena_alloc(struct px_arena *a, size_t n);
void *px_arena_calloc(struct px_arena *a, size_t n);
char *px_arena_strdup(struct px_arena *a, const char *s);
char *px_arena_strndup(struct px_arena *a, const char *s, size_t n);
/* Frees everything allocated, keeping one chunk for reuse. */
void px_arena_reset(struct px_arena *a);
void px_arena_fini(struct px_arena *a);

#endif
