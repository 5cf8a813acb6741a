/*
 * api_steps.c - the job steps' endpoints: each queues its request to the
 * main thread, where the steps' table lives (loop/steps.c, which says
 * who may run steps and what the server remembers of them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api.h"

/* ---- the endpoints ---- */

/* "/v1/jobs/J/steps[/N]": the route table keeps only the last {} segment. */
static bool parse_path(struct px_api_call *c, struct px_req *r, bool with_step) {
  unsigned long long job = 0;
  unsigned step = 0;
  int used = 0;
  bool ok = with_step ? sscanf(c->url, "/v1/jobs/%llu/steps/%u%n", &job, &step, &used) == 2
                      : sscanf(c->url, "/v1/jobs/%llu/steps%n", &job, &used) == 1;
  if (!ok || c->url[used]) {
    px_api_error(c, 400, "INVALID", "%s: must be a number", with_step ? "step id" : "job id");
    return false;
  }
  r->job_id = job;
  r->step_id = step;
  return true;
}

static void call(struct px_api_call *c, enum px_req_kind kind, bool with_step) {
  struct px_req r = {.kind = kind, .who = c->who};
  if (!parse_path(c, &r, with_step)) return;
  if (kind == PX_REQ_STEP_ADD) {
    if (!c->body || !c->body_len) return px_api_error(c, 400, "INVALID", "body: a step is required");
    if (!(r.text = strndup(c->body, c->body_len))) return px_api_error(c, 503, "NOMEM", "out of memory");
  }
  px_api_call_main(c, &r);
  px_req_fini(&r);
}

void px_api_step_create(struct px_api_call *c) { call(c, PX_REQ_STEP_ADD, false); }
void px_api_steps_list(struct px_api_call *c) { call(c, PX_REQ_STEP_LIST, false); }
void px_api_step_show(struct px_api_call *c) { call(c, PX_REQ_STEP_SHOW, true); }
void px_api_step_cancel(struct px_api_call *c) { call(c, PX_REQ_STEP_CANCEL, true); }
