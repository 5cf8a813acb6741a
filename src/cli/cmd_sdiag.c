/*
 * cmd_sdiag.c - `sdiag` (and `phalanx diag`): the scheduler's statistics
 * from GET /v1/diag in Slurm 22.05's layout: the header with the times,
 * the job counts, the main and backfill schedulers' cycles, and the RPCs by
 * message type and by user. -r resets them (POST /v1/diag/reset,
 * operators); -i / -t / -T sort the RPCs by id / total time / (Slurm's -T)
 * average time; --json prints the server's document.
 *
 * The layout itself is fmt_sdiag.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_common.h"

static int reset(struct px_cmd *c) {
  long status = 0;
  json_t *resp = NULL;
  int rc = px_cmd_call(c, "POST", "/v1/diag/reset", NULL, &status, &resp);
  if (!rc && status != 200) {
    const char *msg = json_string_value(json_object_get(json_object_get(resp, "error"), "message"));
    px_cmd_error(c, "%s", msg ? msg : "reset refused");
    rc = 1;
  }
  if (!rc) printf("Reset scheduling statistics\n");
  json_decref(resp);
  return rc;
}

int px_cmd_sdiag(int argc, char **argv, bool native) {
  static const struct option longopts[] = {
      {"all", no_argument, 0, 'a'},         {"reset", no_argument, 0, 'r'},
      {"sort-by-id", no_argument, 0, 'i'},  {"sort-by-time", no_argument, 0, 't'},
      {"sort-by-time2", no_argument, 0, 'T'}, {"json", no_argument, 0, 'J'},
      {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
  struct px_cmd c;
  px_cmd_init(&c, native ? "phalanx diag" : "sdiag", !native);
  bool do_reset = false;
  char sort_by = 'c';
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "ariTth", longopts, NULL)) != -1) {
    switch (opt) {
    case 'a': break;
    case 'r': do_reset = true; break;
    case 'i': case 't': case 'T': sort_by = (char)opt; break;
    case 'J': c.json = true; break;
    case 'h': printf("Usage: sdiag [-a] [-r] [-i|-t|-T] [--json]\n"); px_cmd_fini(&c); return 0;
    default: px_cmd_fini(&c); return 1;
    }
  }
  long status = 0;
  json_t *d = NULL;
  int rc = do_reset ? reset(&c) : px_cmd_call(&c, "GET", "/v1/diag", NULL, &status, &d);
  if (!rc && !do_reset && status != 200) {
    px_cmd_error(&c, "slurm_get_statistics: the server answered %ld", status);
    rc = 1;
  } else if (!rc && !do_reset) {
    if (c.json) px_cmd_print_json(d);
    else px_fmt_sdiag(stdout, d, sort_by);
  }
  json_decref(d);
  px_cmd_fini(&c);
  return rc;
}
