/* cmd_agent.c - entry point of the agent (placeholder until its issue lands). */
#include <stdio.h>

#include "commands.h"

int px_cmd_agent(int argc, char **argv) {
  (void)argc;
  fprintf(stderr, "phalanx %s: not built yet\n", argv[0]);
  return 2;
}
