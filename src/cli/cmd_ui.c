/*
 * cmd_ui.c - `phalanx ui`: prints the web dashboard's address with a
 * sign-in link for the caller. The server mints a token for whoever asks
 * (on the Unix socket, the kernel says who: no password) and puts it in the
 * address's fragment, which a browser keeps to itself (docs/dashboard.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_common.h"


int px_verb_ui(int argc, char **argv) {
  struct px_cmd c;
  px_cmd_init(&c, "phalanx ui", false);
  int64_t life = 12 * 3600;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) c.json = true;
    else if (!strcmp(argv[i], "--lifetime") && i + 1 < argc && !px_cli_duration_parse(argv[i + 1], &life)) i++;
    else {
      px_cmd_error(&c, "usage: phalanx ui [--lifetime D-HH:MM:SS] [--json]");
      px_cmd_fini(&c);
      return 2;
    }
  }
  char path[64];
  snprintf(path, sizeof path, "/v1/ui/link?lifetime_s=%lld", (long long)life);
  long status = 0;
  json_t *resp = NULL;
  int rc = 1;
  if (px_cmd_call(&c, "POST", path, NULL, &status, &resp) == 0) {
    const char *url = json_string_value(json_object_get(resp, "url"));
    if (status / 100 == 2 && url) {
      if (c.json) px_cmd_print_json(resp);
      else printf("%s\n", url);
      rc = 0;
    } else {
      char msg[512];
      if (status == 404) snprintf(msg, sizeof msg, "this server has no dashboard (an older version)");
      else px_client_error_text(status, resp, msg, sizeof msg);
      px_cmd_error(&c, "%s", msg);
    }
  }
  json_decref(resp);
  px_cmd_fini(&c);
  return rc;
}
