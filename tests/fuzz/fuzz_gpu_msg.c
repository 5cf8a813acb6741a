/*
 * fuzz_gpu_msg.c - libFuzzer target for the node health decoders
 * (proto/gpu_msg.h): a GPU fault report and a health check result. The
 * first input byte picks the decoder, the rest is the JSON text.
 * Properties: a failed decode leaves the struct zeroed; a successful one
 * re-encodes and decodes to an equal message, and encodes to the same text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/gpu_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool zero(const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i]) return false;
  return true;
}

static void fault_round_trip(const char *text) {
  struct px_gpu_fault a, b;
  struct px_diag d;
  if (px_gpu_fault_decode(text, &a, &d)) {
    if (!zero(&a, sizeof a)) abort();
    return;
  }
  char *e1 = px_gpu_fault_encode(&a);
  if (!e1 || px_gpu_fault_decode(e1, &b, &d)) abort();
  if (memcmp(&a, &b, sizeof a)) abort(); /* fixed arrays, zeroed first: comparable whole */
  char *e2 = px_gpu_fault_encode(&b);
  if (!e2 || strcmp(e1, e2)) abort();
  free(e1), free(e2);
}

static void health_round_trip(const char *text) {
  struct px_node_health a, b;
  struct px_diag d;
  if (px_node_health_decode(text, &a, &d)) {
    if (!zero(&a, sizeof a)) abort();
    return;
  }
  char *e1 = px_node_health_encode(&a);
  if (!e1 || px_node_health_decode(e1, &b, &d)) abort();
  if (memcmp(&a, &b, sizeof a)) abort();
  char *e2 = px_node_health_encode(&b);
  if (!e2 || strcmp(e1, e2)) abort();
  free(e1), free(e2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  char *text = malloc(size);
  if (!text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  if (data[0] & 1) health_round_trip(text);
  else fault_round_trip(text);
  free(text);
  return 0;
}
