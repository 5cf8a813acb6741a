/*
 * fuzz_mig_dev.c - libFuzzer target for the readers of the NVIDIA driver's
 * /proc/devices and mig-minors texts (agent/mig_dev.h), and for the
 * emulated GPU specs, mixed MIG layouts included (agent/discover.h).
 * Properties: no crash or overread on any text; a minor found is in range,
 * and is found again in the text made of its own line alone; an accepted
 * GPU spec gives at most 64 GPUs, indexed in order, MIG instances by type
 * name.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/discover.h"
#include "agent/mig_dev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  char *text = malloc(size);
  if (!text) return 0;
  memcpy(text, data + 3, size - 3);
  text[size - 3] = '\0';
  int major = px_mig_caps_major(text);
  if (major != -1 && (major <= 0 || major >= 4096)) abort();
  int gpu = data[0] % 8, gi = data[1] % 16, ci = data[2] % 9 - 1;
  int minor = px_mig_cap_minor(text, gpu, gi, ci);
  if (minor < -1 || minor >= (1 << 20)) abort();
  if (minor >= 0) {
    char line[96];
    if (ci < 0) snprintf(line, sizeof line, "gpu%d/gi%d/access %d", gpu, gi, minor);
    else snprintf(line, sizeof line, "gpu%d/gi%d/ci%d/access %d", gpu, gi, ci, minor);
    if (px_mig_cap_minor(line, gpu, gi, ci) != minor) abort();
  }
  static struct px_node_res r;
  if (px_discover_gpus_emulated(&r, text, "f") == 0) {
    if (r.ngpus > PX_MAX_NODE_GPUS) abort();
    for (uint32_t i = 0; i < r.ngpus; i++) {
      if (r.gpus[i].index != i) abort();
      if (i && px_gpus_are_mig(&r) && strcmp(r.gpus[i - 1].type, r.gpus[i].type) > 0) abort();
    }
  }
  free(text);
  return 0;
}
