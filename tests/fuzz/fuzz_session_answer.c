/*
 * fuzz_session_answer.c - libFuzzer target for the web sessions' reverse
 * proxy's reading of an application's answer (px_session_answer_parse,
 * server/http/api_session.c): bytes from a user's program, so anything. An
 * answer it accepts has a 3-digit status, a body that starts inside the
 * input, and headers that are NUL-terminated, non-empty names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/http/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void header(void *ud, const char *k, const char *v) {
  size_t *count = ud;
  if (!*k || strlen(k) + strlen(v) > 1u << 20) abort();
  (*count)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *raw = malloc(size + 1);
  if (!raw) return 0;
  memcpy(raw, data, size);
  raw[size] = '\0';
  int status = 0;
  size_t body = 0, count = 0;
  if (px_session_answer_parse(raw, size, &status, &body, header, &count) == 0) {
    if (status < 100 || status > 599 || body > size || body < 16) abort();
  }
  free(raw);
  return 0;
}
