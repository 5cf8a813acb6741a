/* testbuild.c - struct px_conf built in code (testconf.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testconf.h"

static char *fmt_name(struct px_arena *a, const char *prefix, uint32_t i) {
  char buf[32];
  snprintf(buf, sizeof buf, "%s%u", prefix, i);
  return px_arena_strdup(a, buf);
}

static int build_nodes(struct px_conf *c, const struct px_testconf_spec *s) {
  c->nnodes = s->nnodes;
  c->nodes = px_arena_calloc(&c->arena, (s->nnodes + 1) * sizeof *c->nodes);
  if (!c->nodes) return -1;
  for (uint32_t i = 0; i < s->nnodes; i++) {
    struct px_conf_node *n = &c->nodes[i];
    char buf[32];
    snprintf(buf, sizeof buf, "n%05u", i);
    n->name = px_arena_strdup(&c->arena, buf);
    if (!n->name) return -1;
    n->cpus = s->cpus_per_node ? s->cpus_per_node : 1;
    n->mem_mib = s->mem_mib;
    n->ngpu = s->gpus_per_node;
    n->gpu_type = s->gpu_type ? px_arena_strdup(&c->arena, s->gpu_type) : NULL;
    n->gpu_groups = s->gpu_groups ? s->gpu_groups : 1;
    n->weight = 1;
    n->state = PX_NODE_CONF_UP;
    n->leaf_switch = n->block = PX_NONE;
  }
  return 0;
}

/* Leaves of nodes_per_leaf nodes, spines over leaves_per_spine leaves, one root. */
static int build_switches(struct px_conf *c, const struct px_testconf_spec *s) {
  uint32_t nleaf = (s->nnodes + s->nodes_per_leaf - 1) / s->nodes_per_leaf;
  uint32_t per_spine = s->leaves_per_spine ? s->leaves_per_spine : nleaf;
  uint32_t nspine = (nleaf + per_spine - 1) / per_spine;
  bool root = nspine > 1;
  c->nswitches = nleaf + nspine + root;
  c->switches = px_arena_calloc(&c->arena, c->nswitches * sizeof *c->switches);
  if (!c->switches) return -1;
  for (uint32_t l = 0; l < nleaf; l++) {
    struct px_conf_switch *w = &c->switches[l];
    w->name = fmt_name(&c->arena, "leaf", l);
    w->parent = nleaf + l / per_spine;
    uint32_t first = l * s->nodes_per_leaf;
    w->nnodes = first + s->nodes_per_leaf > s->nnodes ? s->nnodes - first : s->nodes_per_leaf;
    w->nodes = px_arena_alloc(&c->arena, w->nnodes * sizeof *w->nodes);
    if (!w->name || !w->nodes) return -1;
    for (uint32_t k = 0; k < w->nnodes; k++) {
      w->nodes[k] = first + k;
      c->nodes[first + k].leaf_switch = l;
    }
  }
  for (uint32_t sp = 0; sp < nspine; sp++) {
    struct px_conf_switch *w = &c->switches[nleaf + sp];
    w->name = fmt_name(&c->arena, "spine", sp);
    w->level = 1;
    w->parent = root ? nleaf + nspine : PX_NONE;
    if (!w->name) return -1;
  }
  if (root) {
    struct px_conf_switch *w = &c->switches[nleaf + nspine];
    w->name = "root";
    w->level = 2;
    w->parent = PX_NONE;
  }
  return 0;
}

static int build_blocks(struct px_conf *c, const struct px_testconf_spec *s) {
  c->nblocks = (s->nnodes + s->nodes_per_block - 1) / s->nodes_per_block;
  c->blocks = px_arena_calloc(&c->arena, c->nblocks * sizeof *c->blocks);
  if (!c->blocks) return -1;
  for (uint32_t b = 0; b < c->nblocks; b++) {
    struct px_conf_block *k = &c->blocks[b];
    uint32_t first = b * s->nodes_per_block;
    k->name = fmt_name(&c->arena, "block", b);
    k->nnodes = first + s->nodes_per_block > s->nnodes ? s->nnodes - first : s->nodes_per_block;
    k->nodes = px_arena_alloc(&c->arena, k->nnodes * sizeof *k->nodes);
    if (!k->name || !k->nodes) return -1;
    for (uint32_t i = 0; i < k->nnodes; i++) {
      k->nodes[i] = first + i;
      c->nodes[first + i].block = b;
    }
  }
  return 0;
}

static void sched_defaults(struct px_conf_sched *s) {
  s->backfill = PX_BACKFILL_NONE;
  s->backfill_depth = UINT32_MAX;
  s->placement = PX_PLACE_PACK;
  s->order = PX_ORDER_MULTIFACTOR;
  s->decay_half_life_s = 7 * 86400;
  s->max_age_s = 7 * 86400;
  s->weight_age = 1000;
  s->weight_fairshare = 10000;
}

struct px_conf *px_testconf_new(const struct px_testconf_spec *s) {
  struct px_conf *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  px_arena_init(&c->arena, 0);
  c->cluster_name = "test";
  c->default_partition = PX_NONE;
  c->accounts = px_arena_calloc(&c->arena, PX_TESTCONF_MAX_ACCOUNTS * sizeof *c->accounts);
  c->qos = px_arena_calloc(&c->arena, PX_TESTCONF_MAX_QOS * sizeof *c->qos);
  c->partitions = px_arena_calloc(&c->arena, PX_TESTCONF_MAX_PARTITIONS * sizeof *c->partitions);
  if (!c->accounts || !c->qos || !c->partitions || build_nodes(c, s)) goto fail;
  if (s->nodes_per_leaf && build_switches(c, s)) goto fail;
  if (!s->nodes_per_leaf && s->nodes_per_block && build_blocks(c, s)) goto fail;
  sched_defaults(&c->sched);
  if (px_testconf_account(c, "root", PX_NONE, 1) == PX_NONE) goto fail;
  if (px_testconf_qos(c, "normal", 0) == PX_NONE) goto fail;
  uint32_t np = s->npartitions ? s->npartitions : 1, per = s->nnodes / np;
  for (uint32_t p = 0; p < np; p++) {
    char name[16];
    snprintf(name, sizeof name, "p%u", p);
    uint32_t n = p + 1 == np ? s->nnodes - p * per : per;
    if (px_testconf_partition(c, name, p * per, n) == PX_NONE) goto fail;
  }
  c->partitions[0].is_default = true;
  c->default_partition = 0;
  return c;
fail:
  px_conf_free(c);
  return NULL;
}

uint32_t px_testconf_account(struct px_conf *c, const char *name, uint32_t parent, uint32_t shares) {
  if (c->naccounts == PX_TESTCONF_MAX_ACCOUNTS) return PX_NONE;
  struct px_conf_account *a = &c->accounts[c->naccounts];
  memset(a, 0, sizeof *a);
  a->name = px_arena_strdup(&c->arena, name);
  if (!a->name) return PX_NONE;
  a->parent = parent;
  a->fairshare = shares;
  a->grp_gpus = a->grp_cpus = a->grp_mem_mib = a->grp_nodes = PX_NOLIMIT;
  a->grp_jobs = a->max_jobs = a->max_submit_jobs = a->max_gpus_per_job = PX_NOLIMIT;
  a->borrow_limit_gpus = a->lend_limit_gpus = PX_NOLIMIT;
  return c->naccounts++;
}

uint32_t px_testconf_user(struct px_conf *c, const char *user, uint32_t account, uint32_t shares) {
  uint32_t i = px_testconf_account(c, user, account, shares);
  if (i != PX_NONE) c->accounts[i].is_user = true;
  return i;
}

uint32_t px_testconf_qos(struct px_conf *c, const char *name, uint32_t priority) {
  if (c->nqos == PX_TESTCONF_MAX_QOS) return PX_NONE;
  struct px_conf_qos *q = &c->qos[c->nqos];
  memset(q, 0, sizeof *q);
  q->name = px_arena_strdup(&c->arena, name);
  if (!q->name) return PX_NONE;
  q->priority = priority;
  q->max_gpus_per_user = q->max_jobs_per_user = q->max_submit_per_user = PX_NOLIMIT;
  q->max_wall_s = PX_TIME_UNLIMITED;
  q->usage_factor = 1.0;
  return c->nqos++;
}

uint32_t px_testconf_partition(struct px_conf *c, const char *name, uint32_t first, uint32_t n) {
  if (c->npartitions == PX_TESTCONF_MAX_PARTITIONS || first + n > c->nnodes) return PX_NONE;
  struct px_conf_partition *p = &c->partitions[c->npartitions];
  memset(p, 0, sizeof *p);
  p->name = px_arena_strdup(&c->arena, name);
  p->nodes = px_arena_alloc(&c->arena, (n + 1) * sizeof *p->nodes);
  if (!p->name || !p->nodes) return PX_NONE;
  for (uint32_t i = 0; i < n; i++) p->nodes[i] = first + i;
  p->nnodes = n;
  p->up = true;
  p->max_time_s = p->default_time_s = PX_TIME_UNLIMITED;
  p->max_nodes = UINT32_MAX;
  p->priority_job_factor = 1;
  return c->npartitions++;
}

int px_testconf_features(struct px_conf *c, uint32_t node, const char *csv) {
  uint32_t n = 1;
  for (const char *p = csv; *p; p++) n += *p == ',';
  const char **f = px_arena_alloc(&c->arena, n * sizeof *f);
  if (!f) return PX_ENOMEM;
  uint32_t k = 0;
  for (const char *p = csv;;) {
    size_t len = strcspn(p, ",");
    if (!(f[k++] = px_arena_strndup(&c->arena, p, len))) return PX_ENOMEM;
    if (!p[len]) break;
    p += len + 1;
  }
  c->nodes[node].features = f;
  c->nodes[node].nfeatures = k;
  return 0;
}
