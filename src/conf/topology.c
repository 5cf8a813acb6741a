/*
 * topology.c - topology.conf lines, Slurm's form:
 *   SwitchName=leaf1 Nodes=gpu[001-032]      a leaf switch and its nodes
 *   SwitchName=spine Switches=leaf[1-4]      an upper switch and its children
 *   BlockName=nvl1 Nodes=gpu[001-018]        an NVLink-domain block
 * Slurm reads either the tree or the blocks (TopologyPlugin); Phalanx takes
 * both from one file, so placement can weigh switches and NVLink domains at
 * once. Names are resolved and levels derived in build_topo.c.
 */
#include <stddef.h>
#include <strings.h>

#include "conf/parse.h"

static const struct px_key switch_keys[] = {
    {"SwitchName", px_set_misplaced, 0, NULL},
    {"Nodes", px_set_str, offsetof(struct px_switch_raw, nodes), NULL},
    {"Switches", px_set_str, offsetof(struct px_switch_raw, switches), NULL},
};
static const char *const switch_ignored[] = {"LinkSpeed", NULL};
const struct px_keytab px_tab_switch = {"SwitchName", switch_keys, sizeof switch_keys / sizeof switch_keys[0],
                                        switch_ignored};

static const struct px_key block_keys[] = {
    {"BlockName", px_set_misplaced, 0, NULL},
    {"Nodes", px_set_str, offsetof(struct px_block_raw, nodes), NULL},
};
const struct px_keytab px_tab_block = {"BlockName", block_keys, sizeof block_keys / sizeof block_keys[0], NULL};

static const char *const topo_ignored[] = {"BlockSizes", NULL};
static const struct px_keytab tab_topo = {"topology.conf", NULL, 0, topo_ignored};

static bool check_name(struct px_cb *b, const struct px_where *w, const struct px_kv *kv) {
  for (const char *p = kv->val; *p; p++)
    if (*p == ',' || *p == '[' || *p == ']') goto bad;
  if (kv->val[0]) return true;
bad:
  px_cb_bad(b, w, kv, "one name (no commas or brackets)");
  return false;
}

void px_topology_line(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, size_t n) {
  uint32_t errors = b->nerrors;
  if (!strcasecmp(kv[0].key, "SwitchName")) {
    struct px_switch_raw r = {.w = *w};
    for (size_t i = 1; i < n; i++) px_cb_apply(b, w, &kv[i], &px_tab_switch, &r);
    if (!check_name(b, w, &kv[0]) || b->nerrors != errors) return;
    if (!r.nodes == !r.switches) {
      px_cb_error(b, w, "SwitchName=%s needs either Nodes= (a leaf switch) or Switches= (an upper one)",
                  kv[0].val);
      return;
    }
    r.name = px_cb_strdup(b, kv[0].val);
    if (!r.name || px_switchvec_push(&b->switches, r)) b->oom = true;
  } else if (!strcasecmp(kv[0].key, "BlockName")) {
    struct px_block_raw r = {.w = *w};
    for (size_t i = 1; i < n; i++) px_cb_apply(b, w, &kv[i], &px_tab_block, &r);
    if (!check_name(b, w, &kv[0]) || b->nerrors != errors) return;
    if (!r.nodes) {
      px_cb_error(b, w, "BlockName=%s needs Nodes=", kv[0].val);
      return;
    }
    r.name = px_cb_strdup(b, kv[0].val);
    if (!r.name || px_blockvec_push(&b->blocks, r)) b->oom = true;
  } else {
    for (size_t i = 0; i < n; i++) px_cb_apply(b, w, &kv[i], &tab_topo, b);
  }
}
