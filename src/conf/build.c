/*
 * build.c - from the raw records to struct px_conf: nodes are copied into
 * the arena, partitions' references (Nodes, AllowAccounts, DenyAccounts,
 * AllowQos) resolved to sorted index arrays, the default partition chosen.
 * Accounts/QoS and the topology have files of their own (build_acct.c,
 * build_topo.c).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/parse.h"
#include "util/hostlist.h"

bool px_resolve_nodes(struct px_cb *b, const struct px_where *w, const char *key, const char *expr,
                      uint32_t **out, uint32_t *n) {
  uint32_t nn = (uint32_t)b->nodes.len, count = 0, unknown = 0;
  const char *first_unknown = NULL;
  struct px_strvec names = {0};
  bool ok = false, *in = calloc(nn ? nn : 1, sizeof *in);
  if (!in) {
    b->oom = true;
    return false;
  }
  if (!strcasecmp(expr, "ALL")) {
    for (uint32_t i = 0; i < nn; i++) in[i] = true;
  } else {
    struct px_diag d;
    px_diag_clear(&d);
    if (px_hostlist_expand(expr, b->max_names, &names, &d)) {
      px_cb_error(b, w, "%s=%s: %s", key, expr, d.msg);
      goto out;
    }
    for (size_t i = 0; i < names.len; i++) {
      uint64_t idx;
      if (px_smap_get(&b->node_index, names.v[i], &idx)) in[idx] = true;
      else if (!unknown++) first_unknown = names.v[i];
    }
    if (unknown) {
      px_cb_error(b, w, "%s=%s: node %s is not defined by any NodeName line%s", key, expr, first_unknown,
                  unknown > 1 ? " (nor are others)" : "");
      goto out;
    }
  }
  for (uint32_t i = 0; i < nn; i++) count += in[i];
  uint32_t *v = px_cb_calloc(b, count ? count : 1, sizeof *v);
  if (!v) goto out;
  for (uint32_t i = 0, k = 0; i < nn; i++)
    if (in[i]) v[k++] = i;
  *out = v;
  *n = count;
  ok = true;
out:
  free(in);
  px_strvec_free_all(&names);
  return ok;
}

/* A comma list of account or QoS names to sorted indexes; "ALL" gives NULL (everyone). */
static void resolve_names(struct px_cb *b, const struct px_where *w, const char *key, const char *list,
                          bool qos, uint32_t **out, uint32_t *n) {
  *out = NULL;
  *n = 0;
  if (!list || !strcasecmp(list, "ALL")) return;
  struct px_kv kv = {key, list};
  const char **items;
  uint32_t count;
  if (!px_split_list(b, w, &kv, &items, &count)) return;
  uint32_t *v = px_cb_calloc(b, count, sizeof *v), k = 0;
  if (!v) return;
  for (uint32_t i = 0; i < count; i++) {
    for (char *p = (char *)items[i]; *p; p++) /* account and QoS names are lower case */
      if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    uint32_t idx = qos ? px_conf_find_qos(b->c, items[i]) : px_conf_find_account(b->c, items[i]);
    if (idx == PX_NONE) {
      px_cb_error(b, w, "%s=%s: no %s named %s in the accounts file", key, list, qos ? "QoS" : "account",
                  items[i]);
      continue;
    }
    bool seen = false;
    for (uint32_t j = 0; j < k; j++) seen |= v[j] == idx;
    if (seen) continue;
    uint32_t j = k++; /* insertion keeps the array sorted */
    while (j && v[j - 1] > idx) v[j] = v[j - 1], j--;
    v[j] = idx;
  }
  *out = v;
  *n = k;
}

static void build_partitions(struct px_cb *b) {
  struct px_conf *c = b->c;
  c->npartitions = (uint32_t)b->parts.len;
  c->partitions = px_cb_calloc(b, c->npartitions ? c->npartitions : 1, sizeof *c->partitions);
  c->default_partition = PX_NONE;
  if (!c->partitions) return;
  for (uint32_t i = 0; i < c->npartitions; i++) {
    struct px_part_raw *r = &b->parts.v[i];
    struct px_conf_partition *p = &c->partitions[i];
    *p = r->p;
    if (r->nodes) px_resolve_nodes(b, &r->w, "Nodes", r->nodes, &p->nodes, &p->nnodes);
    resolve_names(b, &r->w, "AllowAccounts", r->allow_accounts, false, &p->allow_accounts, &p->nallow_accounts);
    resolve_names(b, &r->w, "DenyAccounts", r->deny_accounts, false, &p->deny_accounts, &p->ndeny_accounts);
    resolve_names(b, &r->w, "AllowQos", r->allow_qos, true, &p->allow_qos, &p->nallow_qos);
    if (!r->preempt_mode_given) p->preempt_mode = c->sched.preempt_mode;
    if (!p->is_default) continue;
    if (c->default_partition != PX_NONE)
      px_cb_warn(b, &r->w, "partitions %s and %s both say Default=YES; %s, the last, is the default",
                 c->partitions[c->default_partition].name, p->name, p->name);
    c->default_partition = i;
  }
  if (c->default_partition != PX_NONE)
    for (uint32_t i = 0; i < c->npartitions; i++) c->partitions[i].is_default = i == c->default_partition;
}

void px_build(struct px_cb *b) {
  struct px_conf *c = b->c;
  c->nnodes = (uint32_t)b->nodes.len;
  c->nodes = px_cb_calloc(b, c->nnodes ? c->nnodes : 1, sizeof *c->nodes);
  if (!c->nodes) return;
  if (c->nnodes) memcpy(c->nodes, b->nodes.v, c->nnodes * sizeof *c->nodes);
  px_build_accounts(b);
  build_partitions(b);
  px_build_topology(b);
}

static uint32_t find(const void *arr, size_t stride, uint32_t n, const char *name, size_t name_off) {
  for (uint32_t i = 0; i < n; i++) {
    const char *s = *(const char *const *)((const char *)arr + i * stride + name_off);
    if (s && !strcmp(s, name)) return i;
  }
  return PX_NONE;
}

uint32_t px_conf_find_node(const struct px_conf *c, const char *name) {
  return find(c->nodes, sizeof *c->nodes, c->nnodes, name, offsetof(struct px_conf_node, name));
}

uint32_t px_conf_find_partition(const struct px_conf *c, const char *name) {
  return find(c->partitions, sizeof *c->partitions, c->npartitions, name,
              offsetof(struct px_conf_partition, name));
}

uint32_t px_conf_find_account(const struct px_conf *c, const char *name) {
  for (uint32_t i = 0; i < c->naccounts; i++)
    if (!c->accounts[i].is_user && !c->accounts[i].deleted && !strcmp(c->accounts[i].name, name)) return i;
  return PX_NONE;
}

uint32_t px_conf_find_qos(const struct px_conf *c, const char *name) {
  uint32_t q = find(c->qos, sizeof *c->qos, c->nqos, name, offsetof(struct px_conf_qos, name));
  if (q == PX_NONE || !c->qos[q].deleted) return q;
  for (uint32_t k = q + 1; k < c->nqos; k++) /* added again after its deletion */
    if (!c->qos[k].deleted && !strcmp(c->qos[k].name, name)) return k;
  return PX_NONE;
}
