/*
 * cluster.c - builds the simulated cluster's struct px_conf (cluster.h).
 *
 * Everything is allocated in the conf's arena, exactly as the parser would,
 * so px_conf_free() releases it. The account tree is flat: root (index 0),
 * then for each trace queue an account (fairshare 1) followed by its one user
 * leaf (same name, fairshare 1). Equal shares is the documented default
 * mapping; a configuration file can say otherwise.
 */
#include "sim/cluster.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int px_sim_cluster_parse(const char *spec, uint32_t *nnodes, uint32_t *ngpu, struct px_diag *d) {
  char *end;
  errno = 0;
  unsigned long n = strtoul(spec, &end, 10);
  if (end == spec || *end != 'x' || errno || spec[0] == '-')
    return px_diag_set(d, PX_EINVAL, 0, "--cluster %s: expected NODESxGPUS, e.g. 64x8", spec);
  const char *g0 = end + 1;
  unsigned long g = strtoul(g0, &end, 10);
  if (end == g0 || *end || errno || g0[0] == '-')
    return px_diag_set(d, PX_EINVAL, (int)(g0 - spec), "--cluster %s: expected NODESxGPUS, e.g. 64x8", spec);
  if (n < 1 || n > 1000000)
    return px_diag_set(d, PX_EINVAL, 0, "--cluster %s: node count must be 1..1000000", spec);
  if (g > 64) return px_diag_set(d, PX_EINVAL, (int)(g0 - spec), "--cluster %s: at most 64 GPUs per node", spec);
  *nnodes = (uint32_t)n;
  *ngpu = (uint32_t)g;
  return 0;
}

void px_sim_sched_defaults(struct px_conf_sched *s) {
  memset(s, 0, sizeof *s);
  s->scheduler_type = "sched/builtin";
  s->priority_type = "priority/multifactor";
  s->select_type = "select/cons_tres";
  s->preempt_type = "preempt/none";
  s->preempt_mode = PX_PREEMPT_OFF;
  s->backfill = PX_BACKFILL_NONE;
  s->backfill_depth = UINT32_MAX;
  s->placement = PX_PLACE_PACK;
  s->order = PX_ORDER_MULTIFACTOR;
  s->decay_half_life_s = 7 * 86400;
  s->max_age_s = 7 * 86400;
  s->weight_age = 0;
  s->weight_fairshare = 0;
  s->billing_weight_gpu = 1.0;
}

static const char *fmt_name(struct px_arena *a, const char *prefix, uint32_t i, int width) {
  char buf[48];
  snprintf(buf, sizeof buf, "%s%0*" PRIu32, prefix, width, i);
  return px_arena_strdup(a, buf);
}

static int add_nodes(struct px_conf *c, uint32_t nnodes, uint32_t ngpu) {
  c->nodes = px_arena_calloc(&c->arena, nnodes * sizeof *c->nodes);
  if (!c->nodes) return PX_ENOMEM;
  c->nnodes = nnodes;
  for (uint32_t i = 0; i < nnodes; i++) {
    struct px_conf_node *n = &c->nodes[i];
    if (!(n->name = fmt_name(&c->arena, "sim", i + 1, 5))) return PX_ENOMEM;
    n->cpus = PX_SIM_NODE_CPUS;
    n->sockets = 2;
    n->cores_per_socket = PX_SIM_NODE_CPUS / 2;
    n->threads_per_core = 1;
    n->mem_mib = PX_SIM_NODE_MEM_MIB;
    n->ngpu = ngpu;
    n->gpu_groups = 1;
    n->weight = 1;
    n->state = PX_NODE_CONF_UP;
    n->leaf_switch = i / PX_SIM_LEAF_NODES;
    n->block = PX_NONE;
  }
  return 0;
}

/* Leaf switches "leaf0001".. of 32 nodes, then one spine (when there are 2+ leaves). */
static int add_switches(struct px_conf *c) {
  uint32_t nleaf = (c->nnodes + PX_SIM_LEAF_NODES - 1) / PX_SIM_LEAF_NODES;
  uint32_t nsw = nleaf + (nleaf > 1);
  c->switches = px_arena_calloc(&c->arena, nsw * sizeof *c->switches);
  if (!c->switches) return PX_ENOMEM;
  c->nswitches = nsw;
  for (uint32_t s = 0; s < nleaf; s++) {
    struct px_conf_switch *sw = &c->switches[s];
    uint32_t first = s * PX_SIM_LEAF_NODES;
    sw->nnodes = c->nnodes - first < PX_SIM_LEAF_NODES ? c->nnodes - first : PX_SIM_LEAF_NODES;
    sw->nodes = px_arena_alloc(&c->arena, sw->nnodes * sizeof *sw->nodes);
    if (!sw->nodes || !(sw->name = fmt_name(&c->arena, "leaf", s + 1, 4))) return PX_ENOMEM;
    for (uint32_t k = 0; k < sw->nnodes; k++) sw->nodes[k] = first + k;
    sw->parent = nleaf > 1 ? nleaf : PX_NONE;
  }
  if (nleaf > 1) {
    struct px_conf_switch *sp = &c->switches[nleaf];
    sp->name = px_arena_strdup(&c->arena, "spine");
    sp->parent = PX_NONE;
    sp->level = 1;
    sp->children = px_arena_alloc(&c->arena, nleaf * sizeof *sp->children);
    if (!sp->name || !sp->children) return PX_ENOMEM;
    sp->nchildren = nleaf;
    for (uint32_t s = 0; s < nleaf; s++) sp->children[s] = s;
  }
  return 0;
}

static int add_partition(struct px_conf *c) {
  struct px_conf_partition *p = px_arena_calloc(&c->arena, sizeof *p);
  if (!p) return PX_ENOMEM;
  p->name = px_arena_strdup(&c->arena, "sim");
  p->nodes = px_arena_alloc(&c->arena, c->nnodes * sizeof *p->nodes);
  if (!p->name || !p->nodes) return PX_ENOMEM;
  for (uint32_t i = 0; i < c->nnodes; i++) p->nodes[i] = i;
  p->nnodes = c->nnodes;
  p->is_default = true;
  p->up = true;
  p->max_time_s = PX_TIME_UNLIMITED;
  p->default_time_s = PX_TIME_UNLIMITED;
  p->max_nodes = UINT32_MAX;
  p->priority_job_factor = 1;
  c->partitions = p;
  c->npartitions = 1;
  c->default_partition = 0;
  return 0;
}

static void account_init(struct px_conf_account *a, const char *name, uint32_t parent, bool is_user) {
  memset(a, 0, sizeof *a);
  a->name = name;
  a->parent = parent;
  a->is_user = is_user;
  a->fairshare = 1;
  a->grp_gpus = a->grp_cpus = a->grp_mem_mib = a->grp_nodes = PX_NOLIMIT;
  a->grp_jobs = a->max_jobs = a->max_submit_jobs = PX_NOLIMIT;
  a->max_gpus_per_job = PX_NOLIMIT;
  a->borrow_limit_gpus = a->lend_limit_gpus = PX_NOLIMIT;
}

static int add_accounts(struct px_conf *c, const char *const *names, uint32_t n) {
  c->accounts = px_arena_alloc(&c->arena, (1 + 2 * (size_t)n) * sizeof *c->accounts);
  if (!c->accounts) return PX_ENOMEM;
  account_init(&c->accounts[0], "root", PX_NONE, false);
  for (uint32_t i = 0; i < n; i++) {
    const char *name = px_arena_strdup(&c->arena, names[i]);
    if (!name) return PX_ENOMEM;
    account_init(&c->accounts[1 + 2 * i], name, 0, false);
    account_init(&c->accounts[2 + 2 * i], name, 1 + 2 * i, true);
  }
  c->naccounts = 1 + 2 * n;
  return 0;
}

static int add_qos(struct px_conf *c) {
  struct px_conf_qos *q = px_arena_calloc(&c->arena, sizeof *q);
  if (!q || !(q->name = px_arena_strdup(&c->arena, "normal"))) return PX_ENOMEM;
  q->preempt_mode = PX_PREEMPT_OFF;
  q->max_gpus_per_user = q->max_jobs_per_user = q->max_submit_per_user = PX_NOLIMIT;
  q->max_wall_s = PX_TIME_UNLIMITED;
  q->usage_factor = 1.0;
  c->qos = q;
  c->nqos = 1;
  return 0;
}

struct px_conf *px_sim_cluster_new(uint32_t nnodes, uint32_t ngpu, const char *const *accounts,
                                   uint32_t naccounts) {
  struct px_conf *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  px_arena_init(&c->arena, 256 * 1024);
  if (!(c->cluster_name = px_arena_strdup(&c->arena, "sim")) || add_nodes(c, nnodes, ngpu) ||
      add_switches(c) || add_partition(c) || add_accounts(c, accounts, naccounts) || add_qos(c))
    goto fail;
  px_sim_sched_defaults(&c->sched);
  return c;
fail:
  px_conf_free(c);
  return NULL;
}
