/* Unit tests of the hand-written containers: map, smap, bitmap, arena, vec. */
#include "px_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/bitmap.h"
#include "util/error.h"
#include "util/map.h"
#include "util/vec.h"

static void map_put_get_del_against_reference(void **state) {
  (void)state;
  /* A plain array is the reference: keys 0..N-1 with a shadow "present" flag. */
  enum { N = 5000 };
  static bool present[N];
  static uint64_t value[N];
  memset(present, 0, sizeof present);
  struct px_map m = {0};
  uint64_t x = 12345;
  for (int step = 0; step < 200000; step++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t k = (x >> 33) % N;
    if ((x >> 20) % 3 == 0) {
      assert_int_equal(px_map_del(&m, k), present[k]);
      present[k] = false;
    } else {
      assert_int_equal(px_map_put(&m, k, step), 0);
      present[k] = true;
      value[k] = (uint64_t)step;
    }
  }
  size_t count = 0;
  for (uint64_t k = 0; k < N; k++) {
    uint64_t v;
    assert_int_equal(px_map_get(&m, k, &v), present[k]);
    if (present[k]) {
      assert_int_equal(v, value[k]);
      count++;
    }
  }
  assert_int_equal(m.len, count);
  px_map_fini(&m);
}

static void smap_copies_keys_and_deletes(void **state) {
  (void)state;
  struct px_smap m = {0};
  char key[32];
  for (int i = 0; i < 1000; i++) {
    snprintf(key, sizeof key, "node%04d", i);
    assert_int_equal(px_smap_put(&m, key, (uint64_t)i), 0);
  }
  memcpy(key, "node0007", 9); /* the map must have copied, not kept, the buffer */
  for (int i = 0; i < 1000; i += 2) {
    snprintf(key, sizeof key, "node%04d", i);
    assert_true(px_smap_del(&m, key));
  }
  for (int i = 0; i < 1000; i++) {
    uint64_t v = 0;
    snprintf(key, sizeof key, "node%04d", i);
    assert_int_equal(px_smap_get(&m, key, &v), i % 2 == 1);
    if (i % 2) assert_int_equal(v, (uint64_t)i);
  }
  assert_false(px_smap_get(&m, "absent", NULL));
  assert_int_equal(m.len, 500);
  px_smap_fini(&m);
}

static void bitmap_next_count_and_ops(void **state) {
  (void)state;
  struct px_bitmap a, b;
  assert_int_equal(px_bitmap_init(&a, 130), 0);
  assert_int_equal(px_bitmap_init(&b, 130), 0);
  px_bitmap_set(&a, 0);
  px_bitmap_set(&a, 64);
  px_bitmap_set(&a, 129);
  assert_int_equal(px_bitmap_count(&a), 3);
  assert_int_equal(px_bitmap_next(&a, 0), 0);
  assert_int_equal(px_bitmap_next(&a, 1), 64);
  assert_int_equal(px_bitmap_next(&a, 65), 129);
  assert_int_equal(px_bitmap_next(&a, 130), 130);
  px_bitmap_set(&b, 64);
  px_bitmap_set(&b, 5);
  px_bitmap_and(&b, &a);
  assert_int_equal(px_bitmap_count(&b), 1);
  assert_true(px_bitmap_test(&b, 64));
  px_bitmap_clear(&a, 64);
  assert_false(px_bitmap_test(&a, 64));
  assert_int_equal(px_bits64_count(px_bits64_range(2, 4)), 4);
  assert_int_equal(px_bits64_first(px_bits64_range(2, 4)), 2);
  assert_int_equal(px_bits64_first(0), -1);
  px_bitmap_fini(&a);
  px_bitmap_fini(&b);
}

static void arena_aligns_and_resets(void **state) {
  (void)state;
  struct px_arena a;
  px_arena_init(&a, 256);
  char *big = px_arena_alloc(&a, 10000); /* larger than a chunk: its own chunk */
  assert_non_null(big);
  memset(big, 1, 10000);
  for (int i = 0; i < 100; i++) {
    void *p = px_arena_alloc(&a, (size_t)i + 1);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
  }
  assert_string_equal(px_arena_strndup(&a, "hello world", 5), "hello");
  px_arena_reset(&a);
  assert_non_null(px_arena_alloc(&a, 8));
  px_arena_fini(&a);
}

PX_VEC_DECLARE(test_vec, int)

static void vec_grows_and_keeps_order(void **state) {
  (void)state;
  struct test_vec v = {0};
  for (int i = 0; i < 1000; i++) assert_int_equal(test_vec_push(&v, i), 0);
  assert_int_equal(v.len, 1000);
  for (int i = 0; i < 1000; i++) assert_int_equal(v.v[i], i);
  test_vec_fini(&v);
  assert_null(v.v);
}

static void errors_have_names_and_messages(void **state) {
  (void)state;
  assert_string_equal(px_errname(PX_ENOMEM), "NOMEM");
  assert_string_equal(px_strerror(PX_ENOMEM), "out of memory");
  assert_string_equal(px_strerror(-9999), "unknown error");
  struct px_diag d;
  px_diag_clear(&d);
  assert_int_equal(px_diag_set(&d, PX_EPARSE, 7, "bad %s", "thing"), PX_EPARSE);
  assert_string_equal(d.msg, "bad thing");
  assert_int_equal(d.pos, 7);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(map_put_get_del_against_reference),
      cmocka_unit_test(smap_copies_keys_and_deletes),
      cmocka_unit_test(bitmap_next_count_and_ops),
      cmocka_unit_test(arena_aligns_and_resets),
      cmocka_unit_test(vec_grows_and_keeps_order),
      cmocka_unit_test(errors_have_names_and_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
