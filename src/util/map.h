/*
 * map.h - hash maps with open addressing and linear probing.
 *
 *   struct px_map  : uint64_t key -> uint64_t value (job id -> slot, ...)
 *   struct px_smap : string key (copied) -> uint64_t value (name -> index)
 *
 * Written by hand: glib's GHashTable would do, but it pulls in GLib for two
 * small maps and allocates per entry; these keep keys inline, delete by
 * backward shift (no tombstones, so long-lived maps with churn stay fast) and
 * grow at 70% load. Iteration order is the table's, so callers that emit
 * anything must sort first (determinism).
 */
#ifndef PX_UTIL_MAP_H
#define PX_UTIL_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct px_map_slot {
  uint64_t key, value;
  bool used;
};

struct px_map {
  struct px_map_slot *slots;
  size_t cap, len; /* cap is 0 or a power of two */
};

/* A zeroed struct is an empty map. */
void px_map_fini(struct px_map *m);
/* Insert or overwrite. 0 or PX_ENOMEM (map unchanged). */
int px_map_put(struct px_map *m, uint64_t key, uint64_t value);
/* true and *value set when found; value may be NULL. */
bool px_map_get(const struct px_map *m, uint64_t key, uint64_t *value);
/* true when the key was there. */
bool px_map_del(struct px_map *m, uint64_t key);

struct px_smap_slot {
  char *key;
  uint64_t value;
  uint64_t hash;
};

struct px_smap {
  struct px_smap_slot *slots;
  size_t cap, len;
};

void px_smap_fini(struct px_smap *m);
int px_smap_put(struct px_smap *m, const char *key, uint64_t value);
bool px_smap_get(const struct px_smap *m, const char *key, uint64_t *value);
bool px_smap_del(struct px_smap *m, const char *key);

/* splitmix64's finaliser: cheap and mixes low bits into the high ones.
 * Inline: the core's maps hash on every lookup (5% of a LAS replay's
 * profile was the call). */
static inline uint64_t px_hash_u64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}
uint64_t px_hash_str(const char *s);

#endif
