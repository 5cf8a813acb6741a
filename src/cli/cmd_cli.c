/* cmd_cli.c - the native verbs and Slurm front ends (placeholder until the CLI issue lands). */
#include <stdio.h>

#include "commands.h"

int px_cli_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return -1;
}

int px_slurm_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  return -1;
}

void px_cli_usage(void) {}
