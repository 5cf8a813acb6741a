/*
 * cmd_exec.c - `phalanx exec JOB -- CMD [ARGS]`: CMD inside a running job,
 * on its first node, in its cgroup, as its user, with its environment (what
 * `kubectl exec` gives a pod). It is a terminal step (cmd_pty.c): on a
 * terminal it is interactive (`phalanx exec 12 -- bash`); with stdin from a
 * pipe or a file it reads that input and prints the output as is. The job's
 * user and operators only (the server answers 403 to anyone else). The exit
 * status is CMD's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_common.h"

static int usage(const struct px_cmd *c) {
  px_cmd_error(c, "usage: phalanx exec JOBID -- COMMAND [ARGS...]");
  return 2;
}

int px_verb_exec(int argc, char **argv) {
  struct px_cmd c;
  px_cmd_init(&c, "phalanx exec", false);
  int rc = 2, i = 1;
  if (i < argc && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
    printf("usage: phalanx exec JOBID -- COMMAND [ARGS...]\n");
    px_cmd_fini(&c);
    return 0;
  }
  const char *job = i < argc ? argv[i++] : NULL;
  if (i < argc && !strcmp(argv[i], "--")) i++;
  char *end = NULL;
  if (!job || !*job || strtoull(job, &end, 10) == 0 || *end) {
    if (job) px_cmd_error(&c, "JOBID: '%s' is not a job id", job);
    rc = usage(&c);
  } else if (i >= argc) {
    px_cmd_error(&c, "COMMAND: nothing to run");
    rc = usage(&c);
  } else {
    rc = px_pty_step(&c, job, argv + i, false, NULL);
  }
  px_cmd_fini(&c);
  return rc;
}
