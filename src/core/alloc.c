/*
 * alloc.c - the core's only door to memory: every allocation goes through
 * the allocator given at px_core_new (so tests can fail the n-th one and the
 * benchmark can count bytes), plus the two containers the core needs on top
 * of it: a u64 -> u32 hash map and a string intern table. The action buffer,
 * which the caller owns and frees with libc, is grown here too.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "util/map.h"

/* Each block carries its size in a 16-byte header, so frees need no size
 * and the byte count is exact. */
#define HDR 16

void *pxc_realloc(struct px_core *c, void *p, size_t n) {
  if (!p) return pxc_alloc(c, n);
  if (n == 0) {
    pxc_free(c, p);
    return NULL;
  }
  char *base = (char *)p - HDR;
  size_t old;
  memcpy(&old, base, sizeof old);
  if (n > SIZE_MAX - HDR) return NULL;
  char *q = c->al.realloc(c->al.ud, base, old + HDR, n + HDR);
  if (!q) return NULL;
  memcpy(q, &n, sizeof n);
  c->bytes += n - old;
  return q + HDR;
}

void *pxc_alloc(struct px_core *c, size_t n) {
  if (n == 0) n = 1;
  if (n > SIZE_MAX - HDR) return NULL;
  char *q = c->al.realloc(c->al.ud, NULL, 0, n + HDR);
  if (!q) return NULL;
  memcpy(q, &n, sizeof n);
  c->bytes += n;
  return q + HDR;
}

void *pxc_calloc(struct px_core *c, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  void *p = pxc_alloc(c, n * size);
  if (p) memset(p, 0, n * size);
  return p;
}

void pxc_free(struct px_core *c, void *p) {
  if (!p) return;
  char *base = (char *)p - HDR;
  size_t old;
  memcpy(&old, base, sizeof old);
  c->bytes -= old;
  c->al.realloc(c->al.ud, base, old + HDR, 0);
}

int pxc_grow(struct px_core *c, void **v, size_t *cap, size_t want, size_t sz) {
  if (want <= *cap) return 0;
  size_t ncap = *cap ? *cap : 8;
  while (ncap < want) {
    if (ncap > SIZE_MAX / 2 / sz) return PX_ENOMEM;
    ncap *= 2;
  }
  void *p = pxc_realloc(c, *v, ncap * sz);
  if (!p) return PX_ENOMEM;
  *v = p;
  *cap = ncap;
  return 0;
}

/* ---- u64 -> u32 map ---------------------------------------------------- */

#define EMPTY UINT64_MAX

static int map_rehash(struct px_core *c, struct pxc_map *m, size_t ncap) {
  uint64_t *keys = pxc_alloc(c, ncap * sizeof *keys);
  uint32_t *vals = pxc_alloc(c, ncap * sizeof *vals);
  if (!keys || !vals) {
    pxc_free(c, keys);
    pxc_free(c, vals);
    return PX_ENOMEM;
  }
  for (size_t i = 0; i < ncap; i++) keys[i] = EMPTY;
  for (size_t i = 0; i < m->cap; i++) {
    if (m->keys[i] == EMPTY) continue;
    size_t h = px_hash_u64(m->keys[i]) & (ncap - 1);
    while (keys[h] != EMPTY) h = (h + 1) & (ncap - 1);
    keys[h] = m->keys[i];
    vals[h] = m->vals[i];
  }
  pxc_free(c, m->keys);
  pxc_free(c, m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = ncap;
  return 0;
}

int pxc_map_reserve(struct px_core *c, struct pxc_map *m, size_t n) {
  size_t want = m->len + n;
  if (want * 10 < m->cap * 7) return 0;
  size_t ncap = m->cap ? m->cap : 16;
  while (want * 10 >= ncap * 7) ncap *= 2;
  return map_rehash(c, m, ncap);
}

int pxc_map_put(struct px_core *c, struct pxc_map *m, uint64_t k, uint32_t v) {
  int rc = pxc_map_reserve(c, m, 1);
  if (rc) return rc;
  size_t h = px_hash_u64(k) & (m->cap - 1);
  while (m->keys[h] != EMPTY && m->keys[h] != k) h = (h + 1) & (m->cap - 1);
  if (m->keys[h] == EMPTY) m->len++;
  m->keys[h] = k;
  m->vals[h] = v;
  return 0;
}

bool pxc_map_get(const struct pxc_map *m, uint64_t k, uint32_t *v) {
  if (!m->cap) return false;
  size_t h = px_hash_u64(k) & (m->cap - 1);
  while (m->keys[h] != EMPTY) {
    if (m->keys[h] == k) {
      if (v) *v = m->vals[h];
      return true;
    }
    h = (h + 1) & (m->cap - 1);
  }
  return false;
}

bool pxc_map_del(struct pxc_map *m, uint64_t k) {
  if (!m->cap) return false;
  size_t mask = m->cap - 1, h = px_hash_u64(k) & mask;
  while (m->keys[h] != k) {
    if (m->keys[h] == EMPTY) return false;
    h = (h + 1) & mask;
  }
  /* Backward-shift deletion: no tombstones. */
  size_t hole = h;
  for (size_t i = (hole + 1) & mask; m->keys[i] != EMPTY; i = (i + 1) & mask) {
    size_t home = px_hash_u64(m->keys[i]) & mask;
    if (((i - home) & mask) >= ((i - hole) & mask)) {
      m->keys[hole] = m->keys[i];
      m->vals[hole] = m->vals[i];
      hole = i;
    }
  }
  m->keys[hole] = EMPTY;
  m->len--;
  return true;
}

void pxc_map_fini(struct px_core *c, struct pxc_map *m) {
  pxc_free(c, m->keys);
  pxc_free(c, m->vals);
  memset(m, 0, sizeof *m);
}

/* ---- strings ------------------------------------------------------------ */

/* The index maps (hash + probe) to ids; a probe walks until the string matches. */
static uint32_t str_find(const struct px_core *c, const char *s, uint64_t *free_key) {
  uint64_t h = px_hash_str(s) & (UINT64_MAX >> 1);
  for (uint64_t i = 0;; i++) {
    uint32_t id;
    if (!pxc_map_get(&c->strs.idx, h + i, &id)) {
      if (free_key) *free_key = h + i;
      return PX_NONE;
    }
    if (strcmp(c->strs.str[id], s) == 0) return id;
  }
}

uint32_t pxc_lookup(const struct px_core *c, const char *s) { return s ? str_find(c, s, NULL) : PX_NONE; }

const char *pxc_str(const struct px_core *c, uint32_t id) {
  return id < c->strs.n ? c->strs.str[id] : NULL;
}

int pxc_intern(struct px_core *c, const char *s, uint32_t *id) {
  uint64_t key;
  uint32_t found = str_find(c, s, &key);
  if (found != PX_NONE) {
    *id = found;
    return 0;
  }
  size_t len = strlen(s) + 1;
  if (PXC_GROW(c, c->strs.str, &c->strs.cap, c->strs.n + 1)) return PX_ENOMEM;
  if (pxc_map_reserve(c, &c->strs.idx, 1)) return PX_ENOMEM;
  char *copy = pxc_alloc(c, len);
  if (!copy) return PX_ENOMEM;
  memcpy(copy, s, len);
  *id = (uint32_t)c->strs.n;
  c->strs.str[c->strs.n++] = copy;
  pxc_map_put(c, &c->strs.idx, key, *id); /* reserved: cannot fail */
  return 0;
}

/* ---- the caller's action buffer (libc memory, freed by px_actions_fini) ---- */

static int libc_grow(void **v, size_t *cap, size_t want, size_t sz) {
  if (want <= *cap) return 0;
  size_t ncap = *cap ? *cap * 2 : 64;
  while (ncap < want) ncap *= 2;
  void *p = realloc(*v, ncap * sz);
  if (!p) return PX_ENOMEM;
  *v = p;
  *cap = ncap;
  return 0;
}

int pxc_actions_reserve(struct px_actions *a, size_t nact, size_t nalloc, size_t nwords) {
  if (libc_grow((void **)&a->v, &a->cap, a->len + nact, sizeof *a->v)) return PX_ENOMEM;
  if (libc_grow((void **)&a->allocs, &a->allocs_cap, a->nallocs + nalloc, sizeof *a->allocs))
    return PX_ENOMEM;
  if (libc_grow((void **)&a->cpu_words, &a->cpu_words_cap, a->ncpu_words + nwords,
                sizeof *a->cpu_words))
    return PX_ENOMEM;
  return 0;
}

void px_actions_init(struct px_actions *a) { memset(a, 0, sizeof *a); }

void px_actions_clear(struct px_actions *a) { a->len = a->nallocs = a->ncpu_words = 0; }

void px_actions_fini(struct px_actions *a) {
  free(a->v);
  free(a->allocs);
  free(a->cpu_words);
  memset(a, 0, sizeof *a);
}
