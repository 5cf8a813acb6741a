/*
 * cmd_srun.c - `srun` and `salloc`.
 *
 * Both need the server to launch job steps on the agents (the task fan-out)
 * or to hand out an interactive allocation. Until that lands they parse
 * their options (so mistakes are still reported precisely) and then say
 * plainly that the feature is not available, instead of half-working.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_common.h"

static int not_yet(const char *prog, enum px_cli_tool tool, int argc, char **argv, const char *what) {
  struct px_cmd c;
  px_cmd_init(&c, prog, true);
  struct px_cli_optlist l = {0};
  struct px_diag d;
  int first, rc = 1;
  if (px_cli_parse_argv(tool, argc, argv, &l, &first, &d))
    px_cmd_error(&c, "%s", d.msg);
  else
    px_cmd_error(&c, "%s needs job-step support in the Phalanx server, which this version lacks; "
                 "use sbatch (see docs/slurm-migration.md)", what);
  px_cli_optlist_fini(&l);
  px_cmd_fini(&c);
  return rc;
}

int px_cmd_srun(int argc, char **argv, bool native) {
  return not_yet("srun", PX_TOOL_SRUN, argc, argv,
                 getenv("SLURM_JOB_ID") ? "running a step inside an allocation" : "srun outside an allocation");
}

int px_cmd_salloc(int argc, char **argv, bool native) {
  return not_yet("salloc", PX_TOOL_SALLOC, argc, argv, "an interactive allocation");
}
