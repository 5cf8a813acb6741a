/*
 * fuzz_step_body.c - libFuzzer target for the job steps' request bodies
 * (server/loop/step_body.h). The first byte is the job's node count (1 +
 * byte % 8), the rest is the body, decoded both as a step and as a local
 * step's end. A refusal names its field ("step." or "end." first, or the
 * JSON's own error); an accepted step has argv, at most the job's nodes,
 * one node and one task when it is a terminal, one node when local; an
 * accepted end has an exit code 0-255 and a signal 0-64.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/loop/step_body.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_step(const char *text, uint32_t job_nodes) {
  struct px_step_body b = {0};
  struct px_diag d;
  px_diag_clear(&d);
  if (px_step_body_decode(text, &b, job_nodes, &d) == 0) {
    if (!b.nargv || !b.argv || b.nodes > job_nodes) abort();
    if (b.pty && (b.nodes != 1 || b.ntasks != 1 || b.local)) abort();
    if (b.local && (b.nodes != 1 || b.ctr.container_image)) abort();
    if (!b.local && !b.out_dir) abort();
  } else if (!d.msg[0]) {
    abort();
  }
  px_step_body_fini(&b);
}

static void check_end(const char *text) {
  struct px_step_end e;
  struct px_diag d;
  px_diag_clear(&d);
  if (px_step_end_decode(text, &e, &d) == 0) {
    if (e.exit_code < 0 || e.exit_code > 255 || e.term_signal < 0 || e.term_signal > 64) abort();
  } else if (!d.msg[0]) {
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  char *s = malloc(size);
  if (!s) return 0;
  memcpy(s, data + 1, size - 1);
  s[size - 1] = '\0';
  check_step(s, 1 + data[0] % 8);
  check_end(s);
  free(s);
  return 0;
}
