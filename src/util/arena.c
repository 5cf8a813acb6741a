/* arena.c - chunked bump allocation; see arena.h. */
#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct px_arena_chunk {
  struct px_arena_chunk *next;
  size_t size, used;
  _Alignas(16) unsigned char data[];
};

void px_arena_init(struct px_arena *a, size_t chunk_size) {
  a->head = NULL;
  a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
}

void *px_arena_alloc(struct px_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n == 0) n = 16;
  struct px_arena_chunk *c = a->head;
  if (!c || c->size - c->used < n) {
    size_t size = n > a->chunk_size ? n : a->chunk_size;
    if (size > SIZE_MAX - sizeof *c) return NULL;
    c = malloc(sizeof *c + size);
    if (!c) return NULL;
    c->size = size;
    c->used = 0;
    c->next = a->head;
    a->head = c;
  }
  void *p = c->data + c->used;
  c->used += n;
  return p;
}

void *px_arena_calloc(struct px_arena *a, size_t n) {
  void *p = px_arena_alloc(a, n);
  if (p) memset(p, 0, n);
  return p;
}

char *px_arena_strndup(struct px_arena *a, const char *s, size_t n) {
  char *p = px_arena_alloc(a, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *px_arena_strdup(struct px_arena *a, const char *s) { return px_arena_strndup(a, s, strlen(s)); }

void px_arena_reset(struct px_arena *a) {
  struct px_arena_chunk *c = a->head;
  if (!c) return;
  /* Keep the oldest chunk (usually the right size); free the rest. */
  while (c->next) {
    struct px_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  c->used = 0;
  a->head = c;
}

void px_arena_fini(struct px_arena *a) {
  struct px_arena_chunk *c = a->head;
  while (c) {
    struct px_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  a->head = NULL;
}
