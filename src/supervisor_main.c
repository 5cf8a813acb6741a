/*
 * supervisor_main.c - phalanx-supervisor, the agent's job-side binary:
 *
 *   phalanx-supervisor --zygote FD:AGENTPID [CGNAME [CGROOT]]
 *   phalanx-supervisor --supervise JOBDIR
 *
 * Every job on a node costs a fork of the zygote (agent/zygote.h) and the
 * exit of that supervisor, and both scale with what the forked process maps.
 * phalanxd maps some 40 libraries (curl and its TLS stack, libpq, sqlite,
 * microhttpd), about 230 mappings and 9 MB resident; this binary links only
 * the supervisor's code, libc and jansson, so the fork copies a fraction of
 * the page tables and the exit unmaps a fraction (bench/bench_e2e.sh,
 * e2e_cpu_ms_per_job, docs/benchmarks.md).
 */
#include <stdio.h>
#include <string.h>

#include "agent/supervise.h"
#include "agent/zygote.h"
#include "util/log.h"

int main(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[1], "--zygote")) {
    px_log_set_tag("zygote");
    return px_zygote_main(argv[2], argc > 3 ? argv[3] : NULL, argc > 4 ? argv[4] : NULL);
  }
  if (argc == 3 && !strcmp(argv[1], "--supervise")) {
    px_log_set_tag("supervisor");
    return px_supervise_main(argv[2]);
  }
  fprintf(stderr, "phalanx-supervisor: started by the agent only (--zygote FD:PID or --supervise DIR)\n");
  return 2;
}
