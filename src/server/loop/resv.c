/*
 * resv.c - the reservations' listing (GET /v1/reservations), a snapshot
 * text: the configured reservations, then those made through the API (a
 * RESV event, handle.c; the table follows it in events.c).
 */
#include <stdlib.h>
#include <string.h>

#include "proto/event_json.h"
#include "server/loop/loop.h"
#include "server/tables.h"

static bool deleted(const struct px_server *s, const char *name) {
  size_t i;
  json_t *v;
  json_array_foreach(s->resv_deleted, i, v) if (!strcmp(json_string_value(v), name)) return true;
  return false;
}

struct px_blob *px_resv_blob(struct px_server *s) {
  const struct px_conf *conf = s->conf;
  json_t *arr = json_array();
  for (uint32_t i = 0; arr && i < conf->nreservations; i++) {
    const struct px_conf_resv *r = &conf->reservations[i];
    if (deleted(s, r->name)) continue;
    struct px_resv_spec spec = {r->name, r->start_s, r->end_s, r->nodes, r->nnodes,
                                r->partition, r->ngpus, r->account, r->maintenance};
    json_array_append_new(arr, px_event_resv_json(conf, &spec));
  }
  if (arr && s->resv_created) json_array_extend(arr, s->resv_created);
  json_t *o = arr ? json_pack("{so}", "reservations", arr) : NULL;
  char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  struct px_blob *b = text ? px_blob_new(text) : NULL;
  free(text);
  return b;
}
