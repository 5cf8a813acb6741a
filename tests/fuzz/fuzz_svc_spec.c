/*
 * fuzz_svc_spec.c - libFuzzer target for the service spec parser (YAML and
 * JSON). A spec that parses must encode to canonical JSON that parses back
 * (with the owner's fields allowed) to the same JSON; one that does not
 * must say on which line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "svc/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct px_svc_spec s, back;
  struct px_diag d;
  if (px_svc_spec_parse((const char *)data, size, 0, &s, &d) != 0) {
    if (d.line <= 0 || strncmp(d.msg, "line ", 5)) abort();
    return 0;
  }
  char *j = px_svc_spec_json(&s);
  if (!j) abort();
  if (px_svc_spec_parse(j, strlen(j), PX_SVC_SPEC_INTERNAL, &back, &d) != 0) abort();
  char *j2 = px_svc_spec_json(&back);
  if (!j2 || strcmp(j, j2)) abort();
  free(j);
  free(j2);
  px_svc_spec_fini(&s);
  px_svc_spec_fini(&back);
  return 0;
}
