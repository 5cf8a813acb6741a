/*
 * fuzz_event_json.c - libFuzzer target for the journal record decoder
 * (proto/event_json.h), which recovery runs on every record of a store that
 * may have been written by an older server or damaged. The first input
 * byte picks the record kind, the second the subject, the rest is the data
 * text. Properties: decoding never crashes or leaks, whatever it returns;
 * a record that decodes re-encodes to a text that decodes to an event that
 * encodes to the same text again (the journal is a fixed point).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/testconf.h"
#include "proto/event_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct px_conf *conf;
static struct px_smap nodes;

static void setup(void) {
  struct px_testconf_spec s = {
      .nnodes = 4, .gpus_per_node = 8, .cpus_per_node = 64, .mem_mib = 1 << 20};
  conf = px_testconf_new(&s);
  px_testconf_user(conf, "alice", px_testconf_account(conf, "ml", 0, 1), 1);
  for (uint32_t i = 0; i < conf->nnodes; i++) px_smap_put(&nodes, conf->nodes[i].name, i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!conf) setup();
  if (size < 2) return 0;
  static const char *const subjects[] = {NULL, "n00001", "p0", "alice", "zz9"};
  enum px_event_kind kind = (enum px_event_kind)(data[0] % PX_EV_COUNT);
  char *text = malloc(size - 1);
  if (!text) return 0;
  memcpy(text, data + 2, size - 2);
  text[size - 2] = '\0';
  struct px_event_names names = {conf, &nodes};
  struct px_store_rec r = {.seq = 1,
                           .kind = px_event_kind_name(kind),
                           .job_id = 3,
                           .subject = subjects[data[1] % 5],
                           .data = text};
  struct px_event_rec e, e2;
  struct px_diag d;
  if (px_event_decode(&names, &r, &e, &d) == 0) {
    struct px_event_result res = {.nids = e.ids ? e.ids : 1};
    struct px_store_rec out = {0}, out2 = {0};
    char *enc = px_event_encode(conf, &e.ev, &res, &out);
    if (enc) {
      out.data = enc;
      if (px_event_decode(&names, &out, &e2, &d)) abort(); /* our own record must read */
      char *enc2 = px_event_encode(conf, &e2.ev, &res, &out2);
      if (!enc2 || strcmp(enc, enc2)) abort();
      free(enc2);
      px_event_rec_fini(&e2);
      free(enc);
    }
  }
  px_event_rec_fini(&e);
  free(text);
  return 0;
}
