/*
 * fuzz_slurmrestd.c - libFuzzer target for slurmrestd's job_submission
 * decoder (px_sr_submit_decode, what POST /slurm/v0.0.39/job/submit reads),
 * the job update's (px_sr_update_decode, POST job/{job_id}) and the route
 * matcher. The input is the JSON body; its text is also tried
 * as a path under /slurm/v0.0.39/. Properties beyond "no crash, no leak,
 * no UB":
 *   - a refused body leaves the spec as px_jobspec_init made it, with a
 *     message that names a field ("job.X: ...", "script: ...", ...);
 *   - an accepted one has the script it was given (it starts with "#!"),
 *     and the spec re-encodes and decodes through the native codec to an
 *     equal spec (the translation never builds what the strict codec
 *     refuses);
 *   - a route found is one of the table's, with an argument of one segment.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_eq.h"
#include "proto/jobspec_json.h"
#include "server/http/slurmrestd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_route(const char *text) {
  char url[512];
  snprintf(url, sizeof url, "/slurm/v0.0.39/%s", text);
  struct px_api_call c = {0};
  const struct px_route *r = px_sr_route("GET", url, &c);
  if (!r) return;
  FUZZ_CHECK(!strncmp(r->pattern, "/slurm", 6));
  FUZZ_CHECK(strchr(c.arg, '/') == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  check_route(text);
  json_t *body = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
  if (!body) {
    free(text);
    return 0;
  }
  struct px_jobspec a, b;
  struct px_diag d = {0};
  px_jobspec_init(&b);
  json_t *warnings = json_array();
  int rc = px_sr_submit_decode(body, &a, warnings, &d);
  if (rc) {
    FUZZ_CHECK(rc < 0);
    FUZZ_CHECK(fuzz_spec_is_empty(&a));
    FUZZ_CHECK(strchr(d.msg, ':') != NULL);
  } else {
    FUZZ_CHECK(a.script && !strncmp(a.script, "#!", 2));
    char *once = px_jobspec_encode(&a);
    FUZZ_CHECK(once != NULL);
    FUZZ_CHECK(px_jobspec_decode(once, &b, &d) == 0);
    FUZZ_CHECK(fuzz_spec_eq(&a, &b));
    free(once);
  }
  struct px_sr_update u;
  px_diag_clear(&d);
  rc = px_sr_update_decode(body, &u, warnings, &d);
  FUZZ_CHECK(rc ? (rc < 0 && strchr(d.msg, ':') != NULL) : u.fields != 0);
  px_jobspec_fini(&a);
  px_jobspec_fini(&b);
  json_decref(warnings);
  json_decref(body);
  free(text);
  return 0;
}
