/*
 * fuzz_jobspec.c - libFuzzer target for the API's JSON decoders (proto/):
 * any bytes given as a job spec or a job view must decode or fail with a
 * diagnostic naming a field, never crash, leak or leave a half-filled
 * struct; what decodes must re-encode and decode to the same text.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/jobspec_json.h"
#include "proto/views_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  struct px_jobspec s;
  struct px_diag d;
  px_diag_clear(&d);
  if (px_jobspec_decode(text, &s, &d) == 0) {
    /* the layout options' grammar (issue 17): a refusal names its field */
    if (px_jobspec_check_launch(&s, &d) && !strstr(d.msg, ": ")) abort();
    char *a = px_jobspec_encode(&s), *b = NULL;
    struct px_jobspec again;
    if (!a || px_jobspec_decode(a, &again, &d)) abort(); /* what we write, we read */
    b = px_jobspec_encode(&again);
    if (!b || strcmp(a, b)) abort();
    free(a);
    free(b);
    px_jobspec_fini(&again);
    px_jobspec_fini(&s);
  } else {
    if (!strstr(d.msg, ": ") || s.name || s.argv || s.env || s.script) abort();
  }
  struct px_job_info j;
  if (px_job_info_decode(text, &j, &d) == 0) {
    char *a = px_job_info_encode(&j);
    if (!a) abort();
    free(a);
  }
  px_job_info_fini(&j);
  free(text);
  return 0;
}
