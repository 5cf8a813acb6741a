/* map.c - the two open-addressing hash maps of map.h. */
#include "util/map.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

uint64_t px_hash_str(const char *s) {
  uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ULL;
  }
  return px_hash_u64(h);
}

/* ---- u64 map ---- */

void px_map_fini(struct px_map *m) {
  free(m->slots);
  m->slots = NULL;
  m->cap = m->len = 0;
}

static int map_grow(struct px_map *m) {
  size_t cap = m->cap ? m->cap * 2 : 16;
  struct px_map_slot *slots = calloc(cap, sizeof *slots);
  if (!slots) return PX_ENOMEM;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->slots[i].used) continue;
    size_t j = px_hash_u64(m->slots[i].key) & (cap - 1);
    while (slots[j].used) j = (j + 1) & (cap - 1);
    slots[j] = m->slots[i];
  }
  free(m->slots);
  m->slots = slots;
  m->cap = cap;
  return 0;
}

int px_map_put(struct px_map *m, uint64_t key, uint64_t value) {
  if ((m->len + 1) * 10 > m->cap * 7 && map_grow(m)) return PX_ENOMEM;
  size_t j = px_hash_u64(key) & (m->cap - 1);
  while (m->slots[j].used) {
    if (m->slots[j].key == key) {
      m->slots[j].value = value;
      return 0;
    }
    j = (j + 1) & (m->cap - 1);
  }
  m->slots[j] = (struct px_map_slot){key, value, true};
  m->len++;
  return 0;
}

static size_t map_find(const struct px_map *m, uint64_t key) {
  if (!m->cap) return SIZE_MAX;
  size_t j = px_hash_u64(key) & (m->cap - 1);
  while (m->slots[j].used) {
    if (m->slots[j].key == key) return j;
    j = (j + 1) & (m->cap - 1);
  }
  return SIZE_MAX;
}

bool px_map_get(const struct px_map *m, uint64_t key, uint64_t *value) {
  size_t j = map_find(m, key);
  if (j == SIZE_MAX) return false;
  if (value) *value = m->slots[j].value;
  return true;
}

bool px_map_del(struct px_map *m, uint64_t key) {
  size_t j = map_find(m, key);
  if (j == SIZE_MAX) return false;
  size_t mask = m->cap - 1;
  /* Backward-shift deletion: pull later members of the probe run into the hole. */
  size_t hole = j;
  for (size_t k = (j + 1) & mask; m->slots[k].used; k = (k + 1) & mask) {
    size_t home = px_hash_u64(m->slots[k].key) & mask;
    if (((k - home) & mask) >= ((k - hole) & mask)) {
      m->slots[hole] = m->slots[k];
      hole = k;
    }
  }
  m->slots[hole].used = false;
  m->len--;
  return true;
}

/* ---- string map ---- */

void px_smap_fini(struct px_smap *m) {
  for (size_t i = 0; i < m->cap; i++) free(m->slots[i].key);
  free(m->slots);
  m->slots = NULL;
  m->cap = m->len = 0;
}

static int smap_grow(struct px_smap *m) {
  size_t cap = m->cap ? m->cap * 2 : 16;
  struct px_smap_slot *slots = calloc(cap, sizeof *slots);
  if (!slots) return PX_ENOMEM;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->slots[i].key) continue;
    size_t j = m->slots[i].hash & (cap - 1);
    while (slots[j].key) j = (j + 1) & (cap - 1);
    slots[j] = m->slots[i];
  }
  free(m->slots);
  m->slots = slots;
  m->cap = cap;
  return 0;
}

static size_t smap_find(const struct px_smap *m, const char *key, uint64_t h) {
  if (!m->cap) return SIZE_MAX;
  size_t j = h & (m->cap - 1);
  while (m->slots[j].key) {
    if (m->slots[j].hash == h && strcmp(m->slots[j].key, key) == 0) return j;
    j = (j + 1) & (m->cap - 1);
  }
  return SIZE_MAX;
}

int px_smap_put(struct px_smap *m, const char *key, uint64_t value) {
  uint64_t h = px_hash_str(key);
  size_t j = smap_find(m, key, h);
  if (j != SIZE_MAX) {
    m->slots[j].value = value;
    return 0;
  }
  if ((m->len + 1) * 10 > m->cap * 7 && smap_grow(m)) return PX_ENOMEM;
  char *copy = strdup(key);
  if (!copy) return PX_ENOMEM;
  j = h & (m->cap - 1);
  while (m->slots[j].key) j = (j + 1) & (m->cap - 1);
  m->slots[j] = (struct px_smap_slot){copy, value, h};
  m->len++;
  return 0;
}

bool px_smap_get(const struct px_smap *m, const char *key, uint64_t *value) {
  size_t j = smap_find(m, key, px_hash_str(key));
  if (j == SIZE_MAX) return false;
  if (value) *value = m->slots[j].value;
  return true;
}

bool px_smap_del(struct px_smap *m, const char *key) {
  size_t j = smap_find(m, key, px_hash_str(key));
  if (j == SIZE_MAX) return false;
  free(m->slots[j].key);
  size_t mask = m->cap - 1, hole = j;
  for (size_t k = (j + 1) & mask; m->slots[k].key; k = (k + 1) & mask) {
    size_t home = m->slots[k].hash & mask;
    if (((k - home) & mask) >= ((k - hole) & mask)) {
      m->slots[hole] = m->slots[k];
      hole = k;
    }
  }
  m->slots[hole].key = NULL;
  m->len--;
  return true;
}
