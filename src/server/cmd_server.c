/* cmd_server.c - entry point of the server (placeholder until its issue lands). */
#include <stdio.h>

#include "commands.h"

int px_cmd_server(int argc, char **argv) {
  (void)argc;
  fprintf(stderr, "phalanx %s: not built yet\n", argv[0]);
  return 2;
}
