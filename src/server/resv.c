/*
 * resv.c - advance reservations made through the API (POST /v1/reservations,
 * administrators): the same thing as a ReservationName= line, journaled as a
 * "resv" record whose data is the request's canonical JSON, so that a
 * restart replays it into the core. The listing (GET /v1/reservations) is a
 * snapshot text: the configured reservations, then the created ones.
 */
#include <stdlib.h>
#include <string.h>

#include "server/state.h"

static uint32_t partition_index(const struct px_conf *c, const char *name) {
  for (uint32_t i = 0; name && i < c->npartitions; i++)
    if (!strcmp(c->partitions[i].name, name)) return i;
  return PX_NONE;
}

static uint32_t account_index(const struct px_conf *c, const char *name) {
  for (uint32_t i = 0; name && i < c->naccounts; i++)
    if (!c->accounts[i].is_user && !strcmp(c->accounts[i].name, name)) return i;
  return PX_NONE;
}

int px_resv_apply(struct px_server *s, json_t *o, int64_t now, struct px_diag *d) {
  const struct px_conf *c = s->conf;
  json_t *nodes = json_object_get(o, "nodes"), *v;
  size_t n = json_array_size(nodes), i;
  uint32_t *idx = calloc(n ? n : 1, sizeof *idx);
  if (!idx) return PX_ENOMEM;
  json_array_foreach(nodes, i, v) {
    int k = px_node_index(s, json_string_value(v));
    if (k < 0) {
      free(idx);
      return px_diag_set(d, PX_EINVAL, -1, "nodes: %.64s is not a configured node",
                         json_string_value(v));
    }
    idx[i] = (uint32_t)k;
  }
  const char *part = json_string_value(json_object_get(o, "partition"));
  const char *acct = json_string_value(json_object_get(o, "account"));
  struct px_resv_spec r = {
      .name = json_string_value(json_object_get(o, "name")),
      .start_s = json_integer_value(json_object_get(o, "start_s")),
      .end_s = json_integer_value(json_object_get(o, "end_s")),
      .nodes = n ? idx : NULL, .nnodes = (uint32_t)n,
      .partition = partition_index(c, part),
      .ngpus = (uint32_t)json_integer_value(json_object_get(o, "ngpus")),
      .account = account_index(c, acct),
      .maintenance = json_is_true(json_object_get(o, "maintenance"))};
  int rc = 0;
  if (part && r.partition == PX_NONE)
    rc = px_diag_set(d, PX_EINVAL, -1, "partition: %.64s is not a partition", part);
  else if (acct && r.account == PX_NONE)
    rc = px_diag_set(d, PX_EINVAL, -1, "account: %.64s is not an account", acct);
  else
    rc = px_core_resv_add(s->core, &r, now, d);
  free(idx);
  if (rc) return rc;
  if (!s->resv_created && !(s->resv_created = json_array())) return PX_ENOMEM;
  json_array_append(s->resv_created, o);
  s->resv_dirty = s->dirty = true;
  return 0;
}

struct px_blob *px_resv_blob(struct px_server *s) {
  const struct px_conf *conf = s->conf;
  json_t *arr = json_array();
  for (uint32_t i = 0; arr && i < conf->nreservations; i++) {
    const struct px_conf_resv *r = &conf->reservations[i];
    json_t *nodes = json_array();
    for (uint32_t k = 0; k < r->nnodes; k++)
      json_array_append_new(nodes, json_string(conf->nodes[r->nodes[k]].name));
    json_t *o = json_pack("{ss sI sI so sI sb}", "name", r->name, "start_s", (json_int_t)r->start_s,
                          "end_s", (json_int_t)r->end_s, "nodes", nodes, "ngpus",
                          (json_int_t)r->ngpus, "maintenance", r->maintenance);
    if (o && r->partition != PX_NONE)
      json_object_set_new(o, "partition", json_string(conf->partitions[r->partition].name));
    if (o && r->account != PX_NONE)
      json_object_set_new(o, "account", json_string(conf->accounts[r->account].name));
    json_array_append_new(arr, o);
  }
  if (arr && s->resv_created) json_array_extend(arr, s->resv_created);
  json_t *o = arr ? json_pack("{so}", "reservations", arr) : NULL;
  char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  struct px_blob *b = text ? px_blob_new(text) : NULL;
  free(text);
  return b;
}
