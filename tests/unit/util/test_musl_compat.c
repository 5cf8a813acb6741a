/*
 * The memcpy that replaces musl's in the musl-built front end
 * (src/util/musl_compat.c), checked here under glibc and the sanitizers:
 * every length up to 300 and a few past the string-instruction threshold, at
 * every misalignment of source and destination, leaves the bytes before and
 * after alone; and forward overlapping copies (dst below src, as musl's
 * memmove hands them over) give memmove's result.
 */
#include "px_test.h"

#include <string.h>

#define PX_MUSL_COMPAT_TEST 1
#include "util/musl_compat.c"

#define BUF 8400

static unsigned char src[BUF], dst[BUF], want[BUF];

static void fill(unsigned char *b, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 131u + seed * 7u + 1u);
}

static void check_copy(size_t n, size_t so, size_t dof) {
  fill(src, BUF, 1);
  memset(dst, 0xEE, BUF);
  memcpy(want, dst, BUF);
  for (size_t i = 0; i < n; i++) want[dof + i] = src[so + i];
  assert_ptr_equal(copy_forward(dst + dof, src + so, n), dst + dof);
  assert_memory_equal(dst, want, BUF);
}

static void copies_every_length_and_alignment(void **state) {
  for (size_t n = 0; n <= 300; n++)
    for (size_t so = 0; so < 8; so++)
      for (size_t dof = 0; dof < 8; dof++) check_copy(n, so, dof);
  const size_t longs[] = {4095, 4096, 4097, 8191};
  for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++) check_copy(longs[i], 3, 5);
}

static void forward_overlap_is_memmove(void **state) {
  const size_t lens[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 63, 64, 65, 200, 4100};
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
    for (size_t gap = 1; gap <= 17; gap++) {
      size_t n = lens[li];
      fill(dst, BUF, 2);
      memcpy(want, dst, BUF);
      memmove(want + 10, want + 10 + gap, n);
      copy_forward(dst + 10, dst + 10 + gap, n);
      assert_memory_equal(dst, want, BUF);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(copies_every_length_and_alignment),
      cmocka_unit_test(forward_overlap_is_memmove),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
