/*
 * api_acct.c - POST /v1/accounts: an online change of the accounts tree or
 * of a QoS (sacctmgr add, modify, delete; proto/acct_json.c's shape). The
 * body's shape is checked here, so a malformed one is answered 400 naming
 * the member without reaching the main thread; the caller's role, the
 * names and the rules (an unknown parent, an account with jobs) are the
 * main thread's and the core's (loop/handle.c, core/acct.c). The answer is
 * the change as applied: 201 for an addition, 200 otherwise.
 */
#include <stdlib.h>

#include "proto/event_json.h"
#include "server/api.h"
#include "server/tables.h"

void px_api_acct_change(struct px_api_call *c) {
  json_t *body = px_api_body_object(c);
  if (!body) return;
  struct px_acct_edit e;
  struct px_diag d;
  px_diag_clear(&d);
  int rc = px_acct_edit_from_json(body, &e, &d);
  if (rc) {
    px_api_error_diag(c, rc, &d);
    json_decref(body);
    return;
  }
  json_t *canon = px_acct_edit_json(&e);
  struct px_req r = {.kind = PX_REQ_ACCT, .who = c->who};
  if (canon && (r.text = json_dumps(canon, JSON_COMPACT))) px_api_call_main(c, &r);
  else px_api_error(c, 503, "UNAVAILABLE", "out of memory");
  px_req_fini(&r);
  json_decref(canon);
  json_decref(body);
}
