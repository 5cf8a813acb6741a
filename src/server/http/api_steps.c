/*
 * api_steps.c - the job steps' endpoints: each queues its request to the
 * main thread, where the steps' table lives (loop/steps.c, which says
 * who may run steps and what the server remembers of them).
 *
 * A terminal step ("pty":true: srun --pty, phalanx exec) also opens a relay
 * session here (relay.c): the node's one-time credential goes into the step
 * (and so its order), the CLI's comes back in the answer as
 * "terminal":{"path":"/v1/terminals/ID","secret":"..."}. A refused step
 * drops the session.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api.h"
#include "server/http/http.h"

struct terminal {
  bool open;
  char id[PX_RELAY_ID_LEN + 1], client[PX_RELAY_SECRET_LEN + 1], node[PX_RELAY_SECRET_LEN + 1];
};

/* The body as the main thread gets it: with "pty":true the session's id and
 * the node's credential are added (whatever the client wrote there is
 * replaced: only the server makes credentials). NULL when answered. */
static char *step_text(struct px_api_call *c, struct terminal *t) {
  json_error_t e;
  json_t *b = json_loadb(c->body, c->body_len, 0, &e);
  if (!json_is_object(b)) { /* the main thread's decoder names the problem */
    json_decref(b);
    return strndup(c->body, c->body_len);
  }
  json_object_del(b, "pty_session");
  json_object_del(b, "pty_secret");
  char *text = NULL;
  if (json_is_true(json_object_get(b, "pty"))) {
    if (px_relay_open(t->id, t->client, t->node)) {
      json_decref(b);
      px_api_error(c, 503, "NOMEM", "cannot open a terminal session");
      return NULL;
    }
    t->open = true;
    json_object_set_new(b, "pty_session", json_string(t->id));
    json_object_set_new(b, "pty_secret", json_string(t->node));
  }
  text = json_dumps(b, JSON_COMPACT);
  json_decref(b);
  if (!text) px_api_error(c, 503, "NOMEM", "out of memory");
  return text;
}

/* 201: the CLI's half of the session goes into the answer; else it is dropped. */
static void terminal_answer(struct px_api_call *c, const struct terminal *t) {
  if (!t->open) return;
  json_error_t e;
  json_t *a = c->status == 201 && c->answer ? json_loads(c->answer, 0, &e) : NULL;
  char path[64];
  snprintf(path, sizeof path, "/v1/terminals/%s", t->id);
  if (!a || json_object_set_new(a, "terminal", json_pack("{ss ss}", "path", path, "secret", t->client))) {
    json_decref(a);
    px_relay_drop(t->id);
    return;
  }
  char *text = json_dumps(a, JSON_COMPACT);
  json_decref(a);
  if (!text) return px_relay_drop(t->id);
  free(c->answer);
  c->answer = text;
}

/* ---- the endpoints ---- */

/* "/v1/jobs/J/steps[/N]": the route table keeps only the last {} segment. */
static bool parse_path(struct px_api_call *c, struct px_req *r, bool with_step, const char *suffix) {
  unsigned long long job = 0;
  unsigned step = 0;
  int used = 0;
  bool ok = with_step ? sscanf(c->url, "/v1/jobs/%llu/steps/%u%n", &job, &step, &used) == 2
                      : sscanf(c->url, "/v1/jobs/%llu/steps%n", &job, &used) == 1;
  if (!ok || strcmp(c->url + used, suffix)) {
    px_api_error(c, 400, "INVALID", "%s: must be a number", with_step ? "step id" : "job id");
    return false;
  }
  r->job_id = job;
  r->step_id = step;
  return true;
}

static void call(struct px_api_call *c, enum px_req_kind kind, bool with_step) {
  struct px_req r = {.kind = kind, .who = c->who};
  struct terminal t = {0};
  bool end = kind == PX_REQ_STEP_END;
  if (!parse_path(c, &r, with_step, end ? "/end" : "")) return;
  if ((kind == PX_REQ_STEP_ADD || end) && (!c->body || !c->body_len))
    return px_api_error(c, 400, "INVALID", "body: %s is required", end ? "the step's end" : "a step");
  if (kind == PX_REQ_STEP_ADD && !(r.text = step_text(c, &t))) return;
  if (end && !(r.text = strndup(c->body, c->body_len))) return px_api_error(c, 503, "NOMEM", "out of memory");
  px_api_call_main(c, &r);
  terminal_answer(c, &t);
  px_req_fini(&r);
}

void px_api_step_create(struct px_api_call *c) { call(c, PX_REQ_STEP_ADD, false); }
void px_api_steps_list(struct px_api_call *c) { call(c, PX_REQ_STEP_LIST, false); }
void px_api_step_show(struct px_api_call *c) { call(c, PX_REQ_STEP_SHOW, true); }
void px_api_step_cancel(struct px_api_call *c) { call(c, PX_REQ_STEP_CANCEL, true); }
void px_api_step_end(struct px_api_call *c) { call(c, PX_REQ_STEP_END, true); }
