/*
 * fuzz_jobspec_json.c - libFuzzer target for the job spec's wire decoder
 * (px_jobspec_decode, what POST /v1/jobs and the journal read). The input is
 * the JSON text. Properties beyond "no crash, no leak, no UB":
 *   - a failed decode leaves the spec exactly as px_jobspec_init made it;
 *   - a spec that decodes re-encodes, decodes again to an equal spec (every
 *     field compared), and encodes to the same text (encoding is canonical);
 *   - px_jobspec_copy of it is equal too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_eq.h"
#include "proto/jobspec_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  struct px_jobspec a, b, c;
  struct px_diag d = {0};
  px_jobspec_init(&a);
  px_jobspec_init(&b);
  px_jobspec_init(&c);
  int rc = px_jobspec_decode(text, &a, &d);
  if (rc) {
    FUZZ_CHECK(rc < 0);
    FUZZ_CHECK(fuzz_spec_is_empty(&a));
    FUZZ_CHECK(d.msg[0] != '\0');
    free(text);
    return 0;
  }
  char *once = px_jobspec_encode(&a);
  FUZZ_CHECK(once != NULL);
  rc = px_jobspec_decode(once, &b, &d);
  if (rc) fprintf(stderr, "re-decode of %s failed: %s\n", once, d.msg);
  FUZZ_CHECK(rc == 0);
  FUZZ_CHECK(fuzz_spec_eq(&a, &b));
  char *twice = px_jobspec_encode(&b);
  FUZZ_CHECK(twice != NULL && strcmp(once, twice) == 0);
  FUZZ_CHECK(px_jobspec_copy(&c, &a) == 0);
  FUZZ_CHECK(fuzz_spec_eq(&a, &c));
  free(once);
  free(twice);
  px_jobspec_fini(&a);
  px_jobspec_fini(&b);
  px_jobspec_fini(&c);
  free(text);
  return 0;
}
