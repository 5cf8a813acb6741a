/*
 * exec_full.c - the way from the lean front end to the daemons' binary.
 *
 * `phalanx` (what users, scripts and Slurm's names start) links only the
 * CLI, so that a `sbatch` process does not load the server's libraries
 * (libcurl, libpq, libmicrohttpd, ...): loading and relocating them was most
 * of a short command's cost (issue 8). The daemons and tools (server, agent,
 * dev, sim, config, server token) live in `phalanxd`, installed next to it;
 * the front end replaces itself with it.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

/* PX_DAEMON_BINARY beside this binary, into path. */
static int daemon_path(char *path, size_t size) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    fprintf(stderr, "phalanx: cannot find my own binary (/proc/self/exe): %s\n", strerror(errno));
    return 1;
  }
  self[n] = '\0';
  snprintf(path, size, "%s/" PX_DAEMON_BINARY, dirname(self));
  return 0;
}

int px_exec_full(char **argv) {
  char path[4200];
  if (daemon_path(path, sizeof path)) return 1;
  execv(path, argv);
  fprintf(stderr, "phalanx: a server reached over TLS needs %s (libcurl), which should be "
          "installed next to phalanx: %s\n", path, strerror(errno));
  return 127;
}

int px_exec_daemon(int argc, char **argv) {
  char path[4200];
  if (daemon_path(path, sizeof path)) return 1;
  char **args = calloc((size_t)argc + 2, sizeof *args);
  if (!args) return fprintf(stderr, "phalanx: out of memory\n"), 1;
  args[0] = path;
  for (int i = 0; i < argc; i++) args[i + 1] = argv[i];
  args[argc + 1] = NULL;
  execv(path, args);
  fprintf(stderr, "phalanx: '%s' is run by %s, which should be installed next to phalanx: %s\n",
          argv[0], path, strerror(errno));
  free(args);
  return 127;
}
