/*
 * main.c - the entry point. Under a Slurm command's name (a symlink named
 * sbatch, squeue, ...) it behaves as that command; otherwise the first word
 * picks the daemon or verb: `phalanx server`, `phalanx submit job.sh`.
 *
 * Built twice. `phalanxd` links everything. `phalanx` (PX_FRONT_END), the
 * binary users and Slurm's names start, links only the CLI and execs
 * phalanxd for the daemons and tools: a short command then loads libc and
 * jansson instead of forty libraries (cli/exec_full.c says why).
 */
#include <jansson.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

#ifndef PX_VERSION
#define PX_VERSION "0.1.0"
#endif

struct daemon_cmd {
  const char *name;
  int (*run)(int argc, char **argv);
};

#ifdef PX_FRONT_END
static const struct daemon_cmd daemons[] = {
    {"server", px_exec_daemon}, {"agent", px_exec_daemon}, {"dev", px_exec_daemon},
    {"proxy", px_exec_daemon},  {"sim", px_exec_daemon},    {"config", px_exec_daemon},
};
#else
static const struct daemon_cmd daemons[] = {
    {"server", px_cmd_server}, {"agent", px_cmd_agent}, {"dev", px_cmd_dev},
    {"proxy", px_cmd_proxy},   {"sim", px_cmd_sim},       {"config", px_cmd_config},
    {"pty-host", px_cmd_pty_host}, /* a terminal step's task, started by the agent (agent/pty.h) */
    {"session-host", px_cmd_session_host}, /* a web session's task (agent/pty.h) */
};
#endif

static void usage(void) {
  printf("usage: phalanx COMMAND [ARGS]\n\n"
         "daemons and tools:\n"
         "  server     run the controller\n"
         "  agent      run a node agent\n"
         "  dev        run a whole local cluster with emulated GPUs\n"
         "  proxy      route HTTP traffic to services through HAProxy\n"
         "  sim        replay a trace through the scheduler\n"
         "  config     check a configuration (config check FILE...)\n\n");
  px_cli_usage();
  printf("\nUnder the names sbatch, squeue, scancel, sinfo, sacct, sshare, scontrol,\n"
         "sprio, srun, salloc, sdiag, sacctmgr and sstat the binary behaves as those Slurm commands.\n");
}

#ifdef PX_FRONT_END
/* jansson seeds its hash function from /dev/urandom on first use (an open,
 * a read and a close per command). That seed guards a parser of untrusted
 * input against colliding keys; the CLI parses only its server's answers, so
 * a cheap one that still differs between runs does. */
static void seed_json(void) {
  uintptr_t stack = (uintptr_t)&stack; /* ASLR varies it between runs */
  json_object_seed((size_t)((stack >> 4) ^ ((uintptr_t)getpid() * 2654435761u)) | 1);
}

/* Output to a file or a pipe goes out in 64 KiB writes: musl's stdout buffer
 * is 1 KiB (squeue's 10,000 jobs took 900 writes), glibc's 4 KiB. A terminal
 * keeps line buffering. */
static void buffer_stdout(void) {
  static char buf[1 << 16];
  if (!isatty(STDOUT_FILENO)) setvbuf(stdout, buf, _IOFBF, sizeof buf);
}
#endif

int main(int argc, char **argv) {
#ifdef PX_FRONT_END
  seed_json();
  buffer_stdout();
#endif
#ifdef PX_FRONT_END
  if (px_cli_wants_tls()) return px_exec_full(argv); /* TLS is phalanxd's (libcurl) */
#endif
  char self[256];
  snprintf(self, sizeof self, "%s", argv[0] ? argv[0] : "phalanx");
  const char *name = basename(self);

  if (strcmp(name, "phalanx") != 0 && strcmp(name, PX_DAEMON_BINARY) != 0) {
    argv[0] = (char *)name;
    int rc = px_slurm_main(argc, argv);
    if (rc != -1) return rc;
  }
  if (argc < 2 || (strcmp(argv[1], "help") == 0 && argc == 2) || strcmp(argv[1], "--help") == 0 ||
      strcmp(argv[1], "-h") == 0) {
    usage();
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
    printf("phalanx %s\n", PX_VERSION);
    return 0;
  }
  for (size_t i = 0; i < sizeof daemons / sizeof daemons[0]; i++) {
    if (strcmp(argv[1], daemons[i].name) == 0) return daemons[i].run(argc - 1, argv + 1);
  }
  int rc = px_cli_main(argc - 1, argv + 1);
  if (rc != -1) return rc;
  fprintf(stderr, "phalanx: unknown command '%s' (try 'phalanx help')\n", argv[1]);
  return 2;
}
