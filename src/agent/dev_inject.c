/*
 * dev_inject.c - `phalanx dev inject DIR NODE GPU FAULT [CODE [DETAIL]]`:
 * a GPU fault on one node of a running dev cluster (its state directory
 * DIR), sent to that node's agent as an emulated GPU would report it
 * (gpu_watch.h), or to the one agent emulating every node (emulate.h,
 * `phalanx dev --emulate`). The agent posts it to the server, whose policy
 * acts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/gpu_watch.h"

int px_dev_inject(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: phalanx dev inject STATE_DIR NODE GPU FAULT [CODE [DETAIL]]\n"
                    "  FAULT: xid (CODE the XID, e.g. 79), ecc (CODE new double-bit errors), remap, lost,\n"
                    "  throttle (CODE the reason mask), nvlink (CODE the link)\n");
    return 2;
  }
  char *end, dir[4400], why[256];
  unsigned long gpu = strtoul(argv[3], &end, 10);
  if (end == argv[3] || *end) return fprintf(stderr, "phalanx dev inject: GPU '%s' is not an index\n", argv[3]), 2;
  long long code = argc > 5 ? strtoll(argv[5], &end, 10) : 0;
  if (argc > 5 && (end == argv[5] || *end))
    return fprintf(stderr, "phalanx dev inject: CODE '%s' is not a number\n", argv[5]), 2;
  /* an agent per node, or one emulating every node (--emulate, or above 64 nodes) */
  snprintf(dir, sizeof dir, "%s/agents/%s", argv[1], argv[2]);
  struct stat st;
  bool emulated = stat(dir, &st) != 0;
  if (emulated) snprintf(dir, sizeof dir, "%s/agents/emulated", argv[1]);
  if (px_gpu_inject(dir, emulated ? argv[2] : NULL, (uint32_t)gpu, argv[4], code, argc > 6 ? argv[6] : "", why,
                    sizeof why)) {
    fprintf(stderr, "phalanx dev inject: %s\n", why);
    return 1;
  }
  return 0;
}
