/*
 * The interactive stream's framing (util/ptyframe.h): frames encode to the
 * bytes worked out by hand, decode back, arrive in pieces, and anything
 * that is not a frame is refused.
 */
#include "px_test.h"

#include <string.h>

#include "util/ptyframe.h"

static void frames_are_type_length_payload(void **state) {
  (void)state;
  unsigned char b[16];
  assert_int_equal(px_ptyframe_data(b, "hi", 2), 5);
  assert_memory_equal(b, "D\x00\x02hi", 5);
  assert_int_equal(px_ptyframe_winsize(b, 40, 120), 7);
  assert_memory_equal(b, "W\x00\x04\x00\x28\x00\x78", 7); /* 40 = 0x28, 120 = 0x78 */
  assert_int_equal(px_ptyframe_eof(b), 3);
  assert_memory_equal(b, "E\x00\x00", 3);
  assert_int_equal(px_ptyframe_exit(b, 130), 7);
  assert_memory_equal(b, "X\x00\x04\x00\x00\x00\x82", 7); /* 128 + SIGINT */
}

static void a_stream_decodes_frame_by_frame(void **state) {
  (void)state;
  unsigned char s[32];
  size_t n = px_ptyframe_data(s, "ls\r", 3);
  n += px_ptyframe_winsize(s + n, 24, 80);
  n += px_ptyframe_exit(s + n, 7);
  struct px_ptyframe f;
  long used = px_ptyframe_next(s, n, &f);
  assert_int_equal(used, 6);
  assert_int_equal(f.type, PX_PTYF_DATA);
  assert_int_equal(f.len, 3);
  assert_memory_equal(f.data, "ls\r", 3);
  assert_int_equal(px_ptyframe_next(s + 6, n - 6, &f), 7);
  assert_int_equal(f.type, PX_PTYF_WINSIZE);
  assert_int_equal(f.rows, 24);
  assert_int_equal(f.cols, 80);
  assert_int_equal(px_ptyframe_next(s + 13, n - 13, &f), 7);
  assert_int_equal(f.status, 7);
  for (size_t k = 0; k < 6; k++) assert_int_equal(px_ptyframe_next(s, k, &f), 0); /* cut short: more */
}

static void what_is_not_a_frame_is_refused(void **state) {
  (void)state;
  struct px_ptyframe f;
  assert_int_equal(px_ptyframe_next((const unsigned char *)"Q\x00\x00", 3, &f), -1);     /* no such type */
  assert_int_equal(px_ptyframe_next((const unsigned char *)"W\x00\x03" "abc", 6, &f), -1);  /* size 4 */
  assert_int_equal(px_ptyframe_next((const unsigned char *)"E\x00\x01x", 4, &f), -1);    /* no payload */
  assert_int_equal(px_ptyframe_next((const unsigned char *)"D\x40\x01", 3, &f), -1);     /* 16385 > max */
  assert_int_equal(px_ptyframe_next((const unsigned char *)"D\x40\x00", 3, &f), 0);      /* 16384: wait */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(frames_are_type_length_payload),
      cmocka_unit_test(a_stream_decodes_frame_by_frame),
      cmocka_unit_test(what_is_not_a_frame_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
