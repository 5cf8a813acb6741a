/*
 * Durations and sizes. Expected seconds are worked out by hand:
 * a day is 86400 s, an hour 3600 s, a minute 60 s.
 */
#include "px_test.h"

#include <string.h>

#include "util/units.h"

static void durations_in_every_slurm_form(void **state) {
  (void)state;
  static const struct {
    const char *in;
    int64_t want_s;
  } cases[] = {
      {"30", 1800},               /* minutes */
      {"0", 0},
      {"90", 5400},               /* the leading field may exceed 59 */
      {"30:00", 1800},            /* M:S */
      {"0:08", 8},
      {"1:30:00", 5400},          /* H:M:S */
      {"48:00:00", 172800},
      {"2-0", 172800},            /* D-H */
      {"2-12", 216000},           /* 2*86400 + 12*3600 */
      {"2-12:30", 217800},        /* + 30*60 */
      {"2-12:30:15", 217815},     /* + 15 */
      {"7-00:00:00", 604800},
      {"UNLIMITED", PX_TIME_UNLIMITED},
      {"unlimited", PX_TIME_UNLIMITED},
      {"INFINITE", PX_TIME_UNLIMITED},
      {"Infinite", PX_TIME_UNLIMITED},
      {"-1", PX_TIME_UNLIMITED},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int64_t got = -5;
    struct px_diag d;
    px_diag_clear(&d);
    if (px_duration_parse(cases[i].in, &got, &d)) fail_msg("'%s': %s", cases[i].in, d.msg);
    if (got != cases[i].want_s) fail_msg("'%s': got %lld", cases[i].in, (long long)got);
  }
}

static void bad_durations_are_explained(void **state) {
  (void)state;
  static const struct {
    const char *in;
    int err;
    const char *phrase;
  } cases[] = {
      {"", PX_EPARSE, "empty duration"},
      {"abc", PX_EPARSE, "position 1: expected a digit"},
      {"1:", PX_EPARSE, "position 3: expected a digit"},
      {"1:2:3:4", PX_EPARSE, "position 6: unexpected ':'"},
      {"2-", PX_EPARSE, "position 3"},
      {"2-1:2:3:4", PX_EPARSE, "unexpected ':'"},
      {"1:30-2", PX_EPARSE, "unexpected '-'"},
      {"1h", PX_EPARSE, "position 2: unexpected 'h'"},
      {" 30", PX_EPARSE, "position 1"},
      {"30:75", PX_ERANGE, "seconds must be 0-59 (got 75)"},
      {"1:75:00", PX_ERANGE, "minutes must be 0-59 (got 75)"},
      {"2-24", PX_ERANGE, "hours after days must be 0-23 (got 24)"},
      {"2-1:60", PX_ERANGE, "minutes"},
      {"1234567890", PX_ERANGE, "longer than 9 digits"},
      {"UNLIMITEDX", PX_EPARSE, "position 1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int64_t got = 77;
    struct px_diag d;
    px_diag_clear(&d);
    int err = px_duration_parse(cases[i].in, &got, &d);
    if (err != cases[i].err) fail_msg("'%s': got %d (%s)", cases[i].in, err, d.msg);
    if (!strstr(d.msg, cases[i].phrase)) fail_msg("'%s': '%s' lacks '%s'", cases[i].in, d.msg, cases[i].phrase);
    assert_int_equal(got, 77); /* untouched on error */
  }
}

static void durations_format_as_slurm_prints_them(void **state) {
  (void)state;
  char buf[PX_UNITS_BUF];
  static const struct {
    int64_t s;
    const char *squeue, *scontrol;
  } cases[] = {
      {0, "0:00", "00:00:00"},
      {8, "0:08", "00:00:08"},
      {61, "1:01", "00:01:01"},
      {1800, "30:00", "00:30:00"},
      {5400, "1:30:00", "01:30:00"},
      {93600, "1-02:00:00", "1-02:00:00"},   /* 86400 + 2*3600 */
      {604800, "7-00:00:00", "7-00:00:00"},
      {PX_TIME_UNLIMITED, "UNLIMITED", "UNLIMITED"},
      {-3, "INVALID", "INVALID"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    px_duration_format(cases[i].s, buf, sizeof buf);
    assert_string_equal(buf, cases[i].squeue);
    px_duration_format_hms(cases[i].s, buf, sizeof buf);
    assert_string_equal(buf, cases[i].scontrol);
  }
  /* Round trip through the parser for the forms it reads back. */
  int64_t back;
  px_duration_format(217815, buf, sizeof buf);
  assert_string_equal(buf, "2-12:30:15");
  assert_int_equal(px_duration_parse(buf, &back, NULL), 0);
  assert_int_equal(back, 217815);
  /* Truncation is snprintf's: the full length is returned. */
  char small[4];
  assert_int_equal(px_duration_format(93600, small, sizeof small), 10);
  assert_string_equal(small, "1-0");
}

static void sizes_default_to_mib(void **state) {
  (void)state;
  static const struct {
    const char *in;
    uint64_t want_mib;
  } cases[] = {
      {"0", 0},           {"512", 512},         {"512M", 512},     {"512m", 512},
      {"80G", 81920},     {"80g", 81920},       {"2T", 2097152},   /* 2 * 1024 * 1024 */
      {"1024K", 1},       {"1K", 1},            {"1025k", 2},      /* K rounds up */
      {"0K", 0},          {"1000000", 1000000},
      {"40GB", 40960},    {"512gb", 524288},    {"100mb", 100},    {"2Kb", 1}, /* Slurm's trailing B */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint64_t got = 99;
    struct px_diag d;
    px_diag_clear(&d);
    if (px_size_parse_mib(cases[i].in, &got, &d)) fail_msg("'%s': %s", cases[i].in, d.msg);
    if (got != cases[i].want_mib) fail_msg("'%s': got %llu", cases[i].in, (unsigned long long)got);
  }
}

static void bad_sizes_are_explained(void **state) {
  (void)state;
  static const struct {
    const char *in;
    int err;
    const char *phrase;
  } cases[] = {
      {"", PX_EPARSE, "expected a size"},
      {"G", PX_EPARSE, "expected a size"},
      {"-5", PX_EPARSE, "expected a size"},
      {"1.5G", PX_EPARSE, "position 2: unknown size suffix '.'"},
      {"8X", PX_EPARSE, "unknown size suffix 'X'"},
      {"8GBB", PX_EPARSE, "position 4: unexpected text"},
      {"8GX", PX_EPARSE, "position 3: unexpected text"},
      {"100B", PX_EPARSE, "unknown size suffix 'B'"},
      {"99999999999999999999", PX_ERANGE, "too large"},
      {"17592186044416T", PX_ERANGE, "too large"}, /* 2^44 T = 2^64 MiB */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint64_t got = 99;
    struct px_diag d;
    px_diag_clear(&d);
    int err = px_size_parse_mib(cases[i].in, &got, &d);
    if (err != cases[i].err) fail_msg("'%s': got %d (%s)", cases[i].in, err, d.msg);
    if (!strstr(d.msg, cases[i].phrase)) fail_msg("'%s': '%s' lacks '%s'", cases[i].in, d.msg, cases[i].phrase);
    assert_int_equal(got, 99);
  }
}

static void sizes_format_as_slurm_tres(void **state) {
  (void)state;
  char buf[PX_UNITS_BUF];
  static const struct {
    uint64_t mib;
    const char *want;
  } cases[] = {
      {0, "0M"},
      {500, "500M"},
      {1024, "1G"},
      {1536, "1.50G"},
      {1024000, "1000G"},         /* a node of slurm-cli-reference.md: mem=1000G */
      {65536000, "62.50T"},       /* 64 such nodes: 64000G / 1024 */
      {1048576, "1T"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    px_size_format_mib(cases[i].mib, buf, sizeof buf);
    assert_string_equal(buf, cases[i].want);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(durations_in_every_slurm_form),
      cmocka_unit_test(bad_durations_are_explained),
      cmocka_unit_test(durations_format_as_slurm_prints_them),
      cmocka_unit_test(sizes_default_to_mib),
      cmocka_unit_test(bad_sizes_are_explained),
      cmocka_unit_test(sizes_format_as_slurm_tres),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
