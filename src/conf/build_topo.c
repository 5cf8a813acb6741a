/*
 * build_topo.c - the switch tree and the blocks from topology.conf.
 *
 * Leaf switches (Nodes=) are level 0; an upper switch is one above its
 * highest child. Every node is under at most one leaf switch and in at most
 * one block; a switch has at most one parent; loops are errors. Nodes left
 * outside the tree when there is one are reported as a warning (Slurm does
 * the same): placement treats them as unconnected to the rest.
 */
#include <stdlib.h>
#include <string.h>

#include "conf/parse.h"
#include "util/hostlist.h"

static uint32_t switch_index(const struct px_conf *c, uint32_t n, const char *name) {
  for (uint32_t i = 0; i < n; i++)
    if (!strcmp(c->switches[i].name, name)) return i;
  return PX_NONE;
}

static void leaf_nodes(struct px_cb *b, uint32_t s, const struct px_switch_raw *r) {
  struct px_conf *c = b->c;
  struct px_conf_switch *sw = &c->switches[s];
  if (!px_resolve_nodes(b, &r->w, "Nodes", r->nodes, &sw->nodes, &sw->nnodes)) return;
  for (uint32_t k = 0; k < sw->nnodes; k++) {
    struct px_conf_node *n = &c->nodes[sw->nodes[k]];
    if (n->leaf_switch != PX_NONE)
      px_cb_error(b, &r->w, "node %s is under two leaf switches, %s and %s", n->name,
                  c->switches[n->leaf_switch].name, sw->name);
    else n->leaf_switch = s;
  }
}

static void child_switches(struct px_cb *b, uint32_t s, const struct px_switch_raw *r) {
  struct px_conf *c = b->c;
  struct px_conf_switch *sw = &c->switches[s];
  struct px_strvec names = {0};
  struct px_diag d;
  px_diag_clear(&d);
  if (px_hostlist_expand(r->switches, b->max_names, &names, &d)) {
    px_cb_error(b, &r->w, "Switches=%s: %s", r->switches, d.msg);
    goto out;
  }
  if (!(sw->children = px_cb_calloc(b, names.len, sizeof *sw->children))) goto out;
  for (size_t k = 0; k < names.len; k++) {
    uint32_t ch = switch_index(c, c->nswitches, names.v[k]);
    if (ch == PX_NONE) px_cb_error(b, &r->w, "Switches=%s: no switch named %s", r->switches, names.v[k]);
    else if (ch == s) px_cb_error(b, &r->w, "switch %s lists itself in Switches=", sw->name);
    else if (c->switches[ch].parent != PX_NONE)
      px_cb_error(b, &r->w, "switch %s has two parents, %s and %s", names.v[k],
                  c->switches[c->switches[ch].parent].name, sw->name);
    else {
      c->switches[ch].parent = s;
      sw->children[sw->nchildren++] = ch;
    }
  }
out:
  px_strvec_free_all(&names);
}

/* Levels by walking up from each leaf; a walk longer than the switch count is a loop. */
static void levels(struct px_cb *b) {
  struct px_conf *c = b->c;
  for (uint32_t s = 0; s < c->nswitches; s++) {
    if (!b->switches.v[s].nodes) continue; /* start from leaves */
    uint32_t level = 0, steps = 0;
    for (uint32_t p = c->switches[s].parent; p != PX_NONE; p = c->switches[p].parent) {
      if (++steps > c->nswitches) {
        px_cb_error(b, &b->switches.v[s].w, "the switches above %s form a loop", c->switches[s].name);
        return;
      }
      level++;
      if (c->switches[p].level < level) c->switches[p].level = level;
    }
  }
  for (uint32_t s = 0; s < c->nswitches; s++) /* a loop with no leaf under it */
    if (!b->switches.v[s].nodes && c->switches[s].level == 0) {
      px_cb_error(b, &b->switches.v[s].w, "switch %s has no leaf switch below it (a loop?)", c->switches[s].name);
      return;
    }
}

static void build_switches(struct px_cb *b) {
  struct px_conf *c = b->c;
  uint32_t n = (uint32_t)b->switches.len;
  if (!n || !(c->switches = px_cb_calloc(b, n, sizeof *c->switches))) return;
  c->nswitches = n;
  for (uint32_t s = 0; s < n; s++) {
    c->switches[s].name = b->switches.v[s].name;
    c->switches[s].parent = PX_NONE;
    uint32_t first = switch_index(c, s, c->switches[s].name);
    if (first != PX_NONE)
      px_cb_error(b, &b->switches.v[s].w, "switch %s is already defined at %s:%d", c->switches[s].name,
                  b->switches.v[first].w.file, b->switches.v[first].w.line);
  }
  uint32_t errors = b->nerrors;
  for (uint32_t s = 0; s < n; s++) {
    if (b->switches.v[s].nodes) leaf_nodes(b, s, &b->switches.v[s]);
    else child_switches(b, s, &b->switches.v[s]);
  }
  if (b->nerrors != errors) return;
  levels(b);
  uint32_t outside = 0, first = PX_NONE;
  for (uint32_t i = 0; i < c->nnodes; i++)
    if (c->nodes[i].leaf_switch == PX_NONE && !outside++) first = i;
  if (outside)
    px_cb_warn(b, &b->switches.v[0].w, "%u node%s (%s%s) under no leaf switch", outside, outside > 1 ? "s are" : " is",
               c->nodes[first].name, outside > 1 ? ", ..." : "");
}

static void build_blocks(struct px_cb *b) {
  struct px_conf *c = b->c;
  uint32_t n = (uint32_t)b->blocks.len;
  if (!n || !(c->blocks = px_cb_calloc(b, n, sizeof *c->blocks))) return;
  c->nblocks = n;
  for (uint32_t k = 0; k < n; k++) {
    struct px_block_raw *r = &b->blocks.v[k];
    struct px_conf_block *bl = &c->blocks[k];
    bl->name = r->name;
    for (uint32_t j = 0; j < k; j++)
      if (!strcmp(c->blocks[j].name, r->name))
        px_cb_error(b, &r->w, "block %s is already defined at %s:%d", r->name, b->blocks.v[j].w.file,
                    b->blocks.v[j].w.line);
    if (!px_resolve_nodes(b, &r->w, "Nodes", r->nodes, &bl->nodes, &bl->nnodes)) continue;
    for (uint32_t i = 0; i < bl->nnodes; i++) {
      struct px_conf_node *nd = &c->nodes[bl->nodes[i]];
      if (nd->block != PX_NONE)
        px_cb_error(b, &r->w, "node %s is in two blocks, %s and %s", nd->name, c->blocks[nd->block].name, r->name);
      else nd->block = k;
    }
  }
}

void px_build_topology(struct px_cb *b) {
  build_switches(b);
  build_blocks(b);
}
