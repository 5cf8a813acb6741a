/*
 * fuzz_node_events.c - libFuzzer target for the reader of a record's node
 * down and drain periods (src/sim/node_events.h): any bytes must give
 * either periods that keep the reader's promises or an error with a
 * message, never a crash, leak or undefined behaviour; and the periods'
 * timeline (the replay's order of changes) must be sorted, each period's
 * beginning before its end.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/node_events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_timeline(struct px_node_events *e) {
  for (size_t i = 0; i < e->spans.len; i++) e->spans.v[i].node = (uint32_t)(i % 4); /* as bound to 4 nodes */
  struct px_node_timeline tl;
  if (px_node_timeline_init(&tl, e, 4)) return; /* out of memory */
  for (size_t i = 1; i < tl.n; i++)
    if (tl.v[i - 1].t_s > tl.v[i].t_s) abort();
  /* replayed in order, no node's count of periods in force goes below 0 */
  for (size_t i = 0; i < tl.n; i++) {
    uint32_t *c = tl.v[i].down ? &tl.down[tl.v[i].node] : &tl.drain[tl.v[i].node];
    if (tl.v[i].out) (*c)++;
    else if (!(*c)--) abort();
  }
  px_node_timeline_fini(&tl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct px_node_events e;
  struct px_diag d;
  int rc = px_node_events_parse(&e, (const char *)data, size, &d);
  if (rc) {
    if (rc != PX_ENOMEM && d.msg[0] == '\0') abort(); /* every error explains itself */
    if (e.spans.len || e.names.len) abort();           /* a failed parse leaves nothing */
    return 0;
  }
  for (size_t i = 0; i < e.spans.len; i++) {
    const struct px_node_span *s = &e.spans.v[i];
    if (s->start_s < 0 || s->end_s < s->start_s || s->line == 0 || s->name_off >= e.names.len) abort();
    const char *name = e.names.v + s->name_off;
    if (!*name || strlen(name) > size) abort();
  }
  check_timeline(&e);
  px_node_events_fini(&e);
  return 0;
}
