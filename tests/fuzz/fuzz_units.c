/*
 * fuzz_units.c - libFuzzer target for durations and sizes. A duration that
 * parses must format and parse back to the same seconds; a size that parses
 * must format without overflowing the documented buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  int64_t secs, back;
  char buf[PX_UNITS_BUF];
  struct px_diag d;
  if (px_duration_parse(s, &secs, &d) == 0) {
    if (secs < 0) abort();
    if (px_duration_format(secs, buf, sizeof buf) >= (int)sizeof buf) abort();
    if (px_duration_parse(buf, &back, NULL) != 0 || back != secs) abort();
    if (px_duration_format_hms(secs, buf, sizeof buf) >= (int)sizeof buf) abort();
    if (px_duration_parse(buf, &back, NULL) != 0 || back != secs) abort();
  }
  uint64_t mib;
  if (px_size_parse_mib(s, &mib, &d) == 0 && px_size_format_mib(mib, buf, sizeof buf) >= (int)sizeof buf) abort();
  free(s);
  return 0;
}
