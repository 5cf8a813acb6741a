/*
 * fuzz_ha_headers.c - libFuzzer target for what clients read of a
 * controller's answer under high availability (issue 16): the CLI's
 * response head (px_http_head, with X-Phalanx-Term and X-Phalanx-Leader)
 * and the agents' header callback (px_servers_header), plus the agent's
 * --server list (px_servers_parse). Properties: the head parser never reads
 * past its input and a leader it keeps is NUL-terminated and shorter than
 * its buffer; the callback consumes exactly what it is given; a parsed list
 * holds 1 to PX_SERVERS_MAX non-empty addresses.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/servers.h"
#include "cli/client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  struct px_http_head h;
  if (px_http_head(text, size, &h) > 0 && strlen(h.leader) >= sizeof h.leader) abort();
  struct px_ha_hdr hdr = {0};
  if (px_servers_header(text, 1, size, &hdr) != size) abort();
  if (strlen(hdr.leader) >= sizeof hdr.leader) abort();
  struct px_servers l;
  char why[128];
  if (px_servers_parse(&l, text, why, sizeof why) == 0) {
    if (l.n < 1 || l.n > PX_SERVERS_MAX) abort();
    for (int i = 0; i < l.n; i++)
      if (!l.base[i][0]) abort();
  }
  free(text);
  return 0;
}
