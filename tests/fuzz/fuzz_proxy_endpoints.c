/*
 * fuzz_proxy_endpoints.c - libFuzzer target for the endpoints answer that
 * `phalanx proxy` decodes (agent/proxy_conf.h). Properties: a decode
 * either fails with a message or yields services whose endpoints all have
 * a host and a port; slot fitting of what was decoded into a fresh backend
 * then into itself again changes nothing the second time, and the
 * configuration for it is generated.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/proxy_conf.h"
#include "fuzz_eq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  struct px_pstate st;
  struct px_diag d = {0};
  if (px_proxy_endpoints_decode(text, &st, &d) != 0) {
    FUZZ_CHECK(d.msg[0] != '\0');
    free(text);
    return 0;
  }
  struct px_slot_change *ch = malloc(sizeof *ch * 2 * (PX_PROXY_SLOTS_MAX + 1));
  for (uint32_t i = 0; i < st.nsvcs; i++) {
    const struct px_psvc *s = &st.svcs[i];
    for (uint32_t k = 0; k < s->neps; k++) FUZZ_CHECK(s->eps[k].host[0] && s->eps[k].port);
    struct px_pback b = {.nslots = px_proxy_slots_for(s->neps)};
    snprintf(b.name, sizeof b.name, "x");
    b.slot = calloc(b.nslots, sizeof *b.slot);
    uint32_t n = 0;
    bool fits = px_proxy_fit(&b, 0, s, ch, &n);
    FUZZ_CHECK(fits || s->neps > PX_PROXY_SLOTS_MAX / 2);
    n = 0;
    if (fits) FUZZ_CHECK(px_proxy_fit(&b, 0, s, ch, &n) && n == 0);
    struct px_proxy_cfg c = {.listen = "127.0.0.1:1", .admin_sock = "/a"};
    char *cfg = px_proxy_config(&c, &b, 1);
    FUZZ_CHECK(cfg != NULL);
    free(cfg);
    free(b.slot);
  }
  free(ch);
  px_proxy_state_fini(&st);
  free(text);
  return 0;
}
