/* cmd_config.c - entry point of config check (placeholder until its issue lands). */
#include <stdio.h>

#include "commands.h"

int px_cmd_config(int argc, char **argv) {
  (void)argc;
  fprintf(stderr, "phalanx %s: not built yet\n", argv[0]);
  return 2;
}
