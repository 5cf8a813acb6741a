/*
 * fuzz_container_spec.c - libFuzzer target for the --container-* checks
 * (proto/container_spec.h). The input is split at the first three NUL-free
 * '\n's into image, mounts, workdir and env. A mount list that parses
 * holds only absolute sources and destinations, never "/" as a
 * destination, and at most PX_CTR_MOUNTS_MAX entries; a spec the check
 * accepts has mounts that parse.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/container_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_mounts(const char *text) {
  struct px_ctr_mounts m;
  struct px_diag d;
  if (px_ctr_mounts_parse(text, &m, &d) != 0) return;
  if (m.n > PX_CTR_MOUNTS_MAX) abort();
  for (size_t i = 0; i < m.n; i++) {
    if (m.v[i].src[0] != '/' || m.v[i].dst[0] != '/' || !strcmp(m.v[i].dst, "/")) abort();
    if (!m.v[i].propagation) abort();
  }
  px_ctr_mounts_fini(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  char *part[4] = {s, NULL, NULL, NULL};
  for (int i = 1; i < 4 && part[i - 1]; i++) {
    char *nl = strchr(part[i - 1], '\n');
    if (nl) *nl = '\0', part[i] = nl + 1;
  }
  check_mounts(part[1] ? part[1] : part[0]);
  struct px_jobspec spec;
  px_jobspec_init(&spec);
  spec.container_image = part[0][0] ? part[0] : NULL;
  spec.container_mounts = part[1];
  spec.container_workdir = part[2];
  spec.container_env = part[3];
  struct px_diag d;
  if (px_container_spec_check(&spec, "jobs[0].", &d) == 0) {
    struct px_ctr_mounts m;
    if (px_ctr_mounts_parse(spec.container_mounts, &m, NULL) != 0) abort();
    px_ctr_mounts_fini(&m);
  }
  free(s);
  return 0;
}
