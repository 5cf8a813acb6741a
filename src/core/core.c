/*
 * core.c - building a core from a configuration (copying what it keeps into
 * dense arrays), tearing it down, and the small name tables.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"

static const char *const reason_names[] = {
#define PX_REASON_STR(name, str) str,
    PX_REASON_MAP(PX_REASON_STR)
#undef PX_REASON_STR
};

const char *px_reason_name(enum px_reason r) {
  return (unsigned)r < PX_REASON_COUNT ? reason_names[r] : "None";
}

const char *px_job_state_name(enum px_job_state s) {
  static const char *const names[] = {"PENDING",   "RUNNING", "COMPLETED",     "FAILED",
                                      "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL",
                                      "PREEMPTED"};
  return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "UNKNOWN";
}

static void *libc_realloc(void *ud, void *p, size_t old_n, size_t new_n) {
  (void)ud;
  (void)old_n;
  if (new_n == 0) {
    free(p);
    return NULL;
  }
  return realloc(p, new_n);
}

/* A node with several GPU types: each type's GPUs, in the conf's order
 * (its index ranges). */
static int copy_gpu_types(struct px_core *c, const struct px_conf_node *cn, struct pxc_node *n) {
  n->gtypes = pxc_calloc(c, cn->ngpu_types, sizeof *n->gtypes);
  if (!n->gtypes) return PX_ENOMEM;
  n->ngtypes = cn->ngpu_types;
  n->gpu_type = PXC_TYPE_MIXED;
  for (uint32_t k = 0, first = 0; k < cn->ngpu_types; k++) {
    if (pxc_intern(c, cn->gpu_types[k].type, &n->gtypes[k].type)) return PX_ENOMEM;
    n->gtypes[k].gpus = px_bits64_range((int)first, (int)cn->gpu_types[k].count);
    first += cn->gpu_types[k].count;
  }
  return 0;
}

static int copy_nodes(struct px_core *c, const struct px_conf *conf) {
  c->nnodes = conf->nnodes;
  c->nodes = pxc_calloc(c, conf->nnodes ? conf->nnodes : 1, sizeof *c->nodes);
  if (!c->nodes) return PX_ENOMEM;
  size_t words = 0;
  for (uint32_t i = 0; i < conf->nnodes; i++) {
    const struct px_conf_node *cn = &conf->nodes[i];
    struct pxc_node *n = &c->nodes[i];
    if (cn->ngpu > 64 || !cn->cpus) return PX_EINVAL;
    uint32_t groups = cn->gpu_groups ? cn->gpu_groups : 1;
    if (cn->ngpu && cn->ngpu % groups) groups = 1; /* uneven split: one group */
    if (pxc_intern(c, cn->name, &n->name) || pxc_map_put(c, &c->node_by_name, n->name, i))
      return PX_ENOMEM;
    n->gpu_type = PX_NONE;
    if (cn->gpu_type && pxc_intern(c, cn->gpu_type, &n->gpu_type)) return PX_ENOMEM;
    if (cn->ngpu_types > 1 && copy_gpu_types(c, cn, n)) return PX_ENOMEM;
    n->cpus = cn->cpus;
    n->ngpu = cn->ngpu;
    n->gpu_groups = cn->ngpu ? groups : 1;
    n->mem_mib = cn->mem_mib;
    n->weight = cn->weight;
    for (uint32_t f = 0; f < cn->nfeatures; f++) {
      uint32_t id, b;
      if (pxc_intern(c, cn->features[f], &id)) return PX_ENOMEM;
      for (b = 0; b < c->nfeatures && c->feature_ids[b] != id; b++) {
      }
      if (b == c->nfeatures) {
        if (b == 64) return PX_EINVAL;
        c->feature_ids[c->nfeatures++] = id;
      }
      n->features |= 1ULL << b;
    }
    n->cpu_word = (uint32_t)words;
    words += (cn->cpus + 63) / 64;
    n->gpu_free = px_bits64_range(0, (int)cn->ngpu);
    n->cpu_free = cn->cpus;
    n->mem_free = cn->mem_mib;
    n->tenant = PX_NONE;
    n->shares = cn->gpu_shares != PX_GPU_SHARES_NO && cn->ngpu;
    n->share_one_user = cn->gpu_shares == PX_GPU_SHARES_USER;
    n->down = cn->state == PX_NODE_CONF_DOWN || cn->state == PX_NODE_CONF_FUTURE;
    n->drain = cn->state == PX_NODE_CONF_DRAIN;
    c->total_cpus += cn->cpus;
  }
  c->total_nodes = conf->nnodes;
  c->cpu_bits = pxc_calloc(c, words ? words : 1, sizeof *c->cpu_bits);
  if (!c->cpu_bits) return PX_ENOMEM;
  for (uint32_t i = 0; i < conf->nnodes; i++)
    for (uint32_t b = 0; b < c->nodes[i].cpus; b++)
      c->cpu_bits[c->nodes[i].cpu_word + b / 64] |= 1ULL << (b % 64);
  return 0;
}

/* Leaves of the topology: leaf switches, else blocks, else one virtual leaf;
 * nodes outside every leaf share one extra virtual leaf. */
static int copy_topology(struct px_core *c, const struct px_conf *conf) {
  uint32_t *leaf_of = NULL;
  size_t nsrc = conf->nswitches ? conf->nswitches : conf->nblocks;
  if (nsrc) {
    leaf_of = pxc_calloc(c, nsrc, sizeof *leaf_of);
    if (!leaf_of) return PX_ENOMEM;
  }
  c->nswitches = conf->nswitches;
  c->switches = pxc_calloc(c, conf->nswitches + 1, sizeof *c->switches);
  c->leaf_parent = pxc_calloc(c, nsrc + 1, sizeof *c->leaf_parent);
  if (!c->switches || !c->leaf_parent) goto fail;
  uint32_t nleaves = 0;
  for (size_t s = 0; s < nsrc; s++) {
    bool is_leaf = conf->nswitches ? conf->switches[s].nnodes > 0 : true;
    leaf_of[s] = is_leaf ? nleaves : PX_NONE;
    if (is_leaf) c->leaf_parent[nleaves++] = conf->nswitches ? conf->switches[s].parent : PX_NONE;
  }
  for (uint32_t s = 0; s < conf->nswitches; s++) {
    c->switches[s].parent = conf->switches[s].parent;
    c->switches[s].level = conf->switches[s].level;
    if (c->switches[s].level > c->max_level) c->max_level = c->switches[s].level;
  }
  uint32_t virt = nleaves;
  bool used_virt = false;
  for (uint32_t i = 0; i < conf->nnodes; i++) {
    uint32_t src = conf->nswitches ? conf->nodes[i].leaf_switch
                   : conf->nblocks ? conf->nodes[i].block : PX_NONE;
    uint32_t leaf = src != PX_NONE && src < nsrc ? leaf_of[src] : PX_NONE;
    if (leaf == PX_NONE) {
      leaf = virt;
      used_virt = true;
    }
    c->nodes[i].leaf = leaf;
  }
  if (used_virt) c->leaf_parent[nleaves++] = PX_NONE;
  c->nleaves = nleaves;
  pxc_free(c, leaf_of);
  return 0;
fail:
  pxc_free(c, leaf_of);
  return PX_ENOMEM;
}

static uint64_t *idx_set(struct px_core *c, const uint32_t *v, uint32_t n, uint32_t universe, int *rc) {
  if (!v) return NULL;
  uint64_t *s = pxc_calloc(c, universe / 64 + 1, sizeof *s);
  if (!s) {
    *rc = PX_ENOMEM;
    return NULL;
  }
  for (uint32_t i = 0; i < n; i++)
    if (v[i] < universe) s[v[i] / 64] |= 1ULL << (v[i] % 64);
  return s;
}

static int copy_partitions(struct px_core *c, const struct px_conf *conf) {
  c->nparts = conf->npartitions;
  c->default_part = conf->default_partition;
  c->parts = pxc_calloc(c, conf->npartitions + 1, sizeof *c->parts);
  c->part_blocked = pxc_calloc(c, conf->npartitions + 1, sizeof *c->part_blocked);
  c->part_left = pxc_calloc(c, conf->npartitions + 1, sizeof *c->part_left);
  c->part_passed = pxc_calloc(c, conf->npartitions + 1, sizeof *c->part_passed);
  if (!c->parts || !c->part_blocked || !c->part_left || !c->part_passed) return PX_ENOMEM;
  int rc = 0;
  for (uint32_t p = 0; p < conf->npartitions; p++) {
    const struct px_conf_partition *cp = &conf->partitions[p];
    struct pxc_part *q = &c->parts[p];
    if (pxc_intern(c, cp->name, &q->name)) return PX_ENOMEM;
    q->up = cp->up;
    q->exclusive_account = cp->exclusive_account;
    c->any_tenancy |= cp->exclusive_account;
    q->whole_nodes = cp->oversubscribe == PX_OVERSUB_EXCLUSIVE;
    q->max_time_s = cp->max_time_s ? cp->max_time_s : PX_TIME_UNLIMITED;
    q->default_time_s = cp->default_time_s ? cp->default_time_s : q->max_time_s;
    if (q->default_time_s > q->max_time_s) q->default_time_s = q->max_time_s;
    q->max_nodes = cp->max_nodes ? cp->max_nodes : UINT32_MAX;
    q->tier = cp->priority_tier;
    q->job_factor = cp->priority_job_factor;
    if (q->job_factor > c->max_part_factor) c->max_part_factor = q->job_factor;
    q->nnodes = cp->nnodes;
    for (uint32_t i = 0; i < cp->nnodes; i++) {
      if (cp->nodes[i] >= conf->nnodes) return PX_EINVAL;
      q->ngpu += conf->nodes[cp->nodes[i]].ngpu;
      c->nodes[cp->nodes[i]].shares |= cp->gpu_shares != PX_GPU_SHARES_NO && conf->nodes[cp->nodes[i]].ngpu;
      c->nodes[cp->nodes[i]].share_one_user |= cp->gpu_shares == PX_GPU_SHARES_USER;
    }
    c->part_acct_words = conf->naccounts / 64 + 1; /* idx_set's size */
    q->allow_acct = idx_set(c, cp->allow_accounts, cp->nallow_accounts, conf->naccounts, &rc);
    q->deny_acct = idx_set(c, cp->deny_accounts, cp->ndeny_accounts, conf->naccounts, &rc);
    q->allow_qos = idx_set(c, cp->allow_qos, cp->nallow_qos, c->qos_cap, &rc); /* copy_qos ran first */
    if (rc) return rc;
  }
  for (uint32_t i = 0; i < c->nnodes; i++) { /* per-GPU share counters where shares are offered */
    struct pxc_node *n = &c->nodes[i];
    if (!n->shares) continue;
    n->share_used = pxc_calloc(c, n->ngpu, sizeof *n->share_used);
    n->share_user = pxc_calloc(c, n->ngpu, sizeof *n->share_user);
    if (!n->share_used || !n->share_user) return PX_ENOMEM;
  }
  if (c->default_part == PX_NONE)
    for (uint32_t p = 0; p < conf->npartitions; p++)
      if (conf->partitions[p].is_default) c->default_part = p;
  return 0;
}

static int copy_qos(struct px_core *c, const struct px_conf *conf) {
  c->nqos = conf->nqos;
  c->qos_cap = conf->nqos + PXC_QOS_ONLINE_MAX;
  c->qos = pxc_calloc(c, c->qos_cap + 1, sizeof *c->qos);
  if (!c->qos) return PX_ENOMEM;
  for (uint32_t q = 0; q < conf->nqos; q++) {
    const struct px_conf_qos *cq = &conf->qos[q];
    struct pxc_qos *o = &c->qos[q];
    if (pxc_intern(c, cq->name, &o->name)) return PX_ENOMEM;
    o->priority = cq->priority;
    if (o->priority > c->max_qos_prio) c->max_qos_prio = o->priority;
    o->max_gpus_per_user = cq->max_gpus_per_user;
    o->max_jobs_per_user = cq->max_jobs_per_user;
    o->max_submit_per_user = cq->max_submit_per_user;
    o->max_wall_s = cq->max_wall_s ? cq->max_wall_s : PX_TIME_UNLIMITED;
    o->usage_factor = cq->usage_factor > 0 ? cq->usage_factor : 1.0;
  }
  return 0;
}

static uint64_t inherit(const struct px_conf *conf, uint32_t a, size_t off) {
  for (; a != PX_NONE; a = conf->accounts[a].parent) {
    uint64_t v = *(const uint64_t *)((const char *)&conf->accounts[a] + off);
    if (v != PX_NOLIMIT) return v;
  }
  return PX_NOLIMIT;
}

uint32_t pxc_qos_index(const struct px_core *c, const char *name) {
  uint32_t id = pxc_lookup(c, name);
  for (uint32_t q = 0; id != PX_NONE && q < c->nqos; q++)
    if (c->qos[q].name == id) return q;
  return PX_NONE;
}

static int copy_accounts(struct px_core *c, const struct px_conf *conf) {
  c->nassoc = c->assoc_cap = conf->naccounts;
  c->assoc = pxc_calloc(c, conf->naccounts + 1, sizeof *c->assoc);
  if (!c->assoc) return PX_ENOMEM;
  for (uint32_t i = 0; i < conf->naccounts; i++) {
    c->assoc[i].first_child = c->assoc[i].next_sibling = PX_NONE;
  }
  for (uint32_t i = 0; i < conf->naccounts; i++) {
    const struct px_conf_account *ca = &conf->accounts[i];
    struct pxc_assoc *a = &c->assoc[i];
    if (pxc_intern(c, ca->name, &a->name)) return PX_ENOMEM;
    a->parent = ca->parent;
    if (a->parent != PX_NONE && a->parent >= i) return PX_EINVAL; /* parents first */
    a->depth = a->parent == PX_NONE ? 0 : c->assoc[a->parent].depth + 1;
    a->is_user = ca->is_user;
    a->use_parent = ca->fairshare == PX_FAIRSHARE_PARENT;
    a->shares = a->use_parent ? 0 : ca->fairshare;
    a->grp_gpus = ca->grp_gpus;
    a->grp_cpus = ca->grp_cpus;
    a->grp_mem = ca->grp_mem_mib;
    a->grp_nodes = ca->grp_nodes;
    a->grp_jobs = ca->grp_jobs;
    a->max_jobs = inherit(conf, i, offsetof(struct px_conf_account, max_jobs));
    a->max_submit = inherit(conf, i, offsetof(struct px_conf_account, max_submit_jobs));
    a->max_gpus_per_job = inherit(conf, i, offsetof(struct px_conf_account, max_gpus_per_job));
    a->own_max[0] = ca->max_jobs;
    a->own_max[1] = ca->max_submit_jobs;
    a->own_max[2] = ca->max_gpus_per_job;
    a->default_qos = PX_NONE;
    for (uint32_t p = i; p != PX_NONE && a->default_qos == PX_NONE; p = conf->accounts[p].parent)
      if (conf->accounts[p].default_qos) a->default_qos = pxc_qos_index(c, conf->accounts[p].default_qos);
    a->fairshare = 0;
    /* children in conf order: append */
    if (a->parent != PX_NONE) {
      uint32_t *link = &c->assoc[a->parent].first_child;
      while (*link != PX_NONE) link = &c->assoc[*link].next_sibling;
      *link = i;
    }
    if (a->is_user) {
      c->nuser_assoc++;
      if (a->parent == PX_NONE) return PX_EINVAL;
      a->user = a->name;
      uint64_t key = (uint64_t)a->user << 32 | c->assoc[a->parent].name;
      if (pxc_map_put(c, &c->assoc_by_user_acct, key, i)) return PX_ENOMEM;
      /* The user's DefaultAccount= (marked by the accounts file's reader),
       * else the first association: a job without --account goes there. */
      bool chosen = conf->accounts[i].is_default_account;
      if ((chosen || !pxc_map_get(&c->default_assoc, a->user, NULL)) &&
          pxc_map_put(c, &c->default_assoc, a->user, i))
        return PX_ENOMEM;
    }
  }
  for (uint32_t i = 0; i < conf->naccounts; i++) {
    uint32_t p = c->assoc[i].parent;
    while (p != PX_NONE && c->assoc[p].use_parent) p = c->assoc[p].parent;
    c->assoc[i].fs_parent = p;
  }
  return pxc_fs_build(c);
}

struct px_core *px_core_new_with_alloc(const struct px_conf *conf, uint64_t seed,
                                       const struct px_core_allocator *alloc, int *err) {
  struct px_core_allocator al = {libc_realloc, NULL};
  if (alloc) al = *alloc;
  struct px_core *c = al.realloc(al.ud, NULL, 0, sizeof *c);
  int rc = PX_ENOMEM;
  if (!c) goto out;
  memset(c, 0, sizeof *c);
  c->al = al;
  c->seed = seed;
  c->sched = conf->sched;
  c->sched.scheduler_type = c->sched.priority_type = c->sched.select_type = NULL;
  c->sched.preempt_type = NULL;
  c->last_fs_s = INT64_MIN;
  if ((rc = copy_nodes(c, conf)) || (rc = copy_topology(c, conf)) ||
      (rc = copy_qos(c, conf)) || (rc = copy_partitions(c, conf)) ||
      (rc = copy_accounts(c, conf)) || (rc = pxc_index_build(c, conf)) ||
      (rc = pxc_place_scratch_init(c)) ||
      (rc = pxc_stage_select(c)) || (rc = pxc_policy_load(c, conf)))
    goto out;
  if (err) *err = 0;
  return c;
out:
  px_core_free(c);
  if (err) *err = rc;
  return NULL;
}

struct px_core *px_core_new(const struct px_conf *conf, uint64_t seed, int *err) {
  return px_core_new_with_alloc(conf, seed, NULL, err);
}

static void free_pools(struct px_core *c) {
  for (uint32_t i = 0; c->pools && i < c->npools; i++) {
    struct pxc_pool *p = &c->pools[i];
    for (uint32_t k = 0; p->bk && k <= p->maxg; k++) {
      pxc_free(c, p->bk[k].w);
      pxc_free(c, p->bk[k].sum);
    }
    for (uint32_t r = 0; p->room && r < PXC_SHARE_UNITS; r++) {
      pxc_free(c, p->room[r].w);
      pxc_free(c, p->room[r].sum);
    }
    pxc_free(c, p->room);
    pxc_free(c, p->bk);
    pxc_free(c, p->count);
    pxc_free(c, p->nodes);
    pxc_free(c, p->class_start);
    pxc_free(c, p->leaf_id);
    pxc_free(c, p->leaf_start);
    pxc_free(c, p->leaf_nodes);
    pxc_free(c, p->leaf_hist);
  }
  pxc_free(c, c->pools);
}

void px_core_free(struct px_core *c) {
  if (!c) return;
  pxc_policy_free(c);
  for (size_t i = 0; i < c->njob_slots; i++) {
    struct pxc_job *j = &c->jobs[i];
    pxc_free(c, j->deps);
    pxc_free(c, j->arr);
    pxc_free(c, j->excl);
    pxc_free(c, j->req);
    pxc_free(c, j->alloc);
    pxc_free(c, j->cpu_words);
  }
  for (uint32_t i = 0; c->nodes && i < c->nnodes; i++) {
    pxc_free(c, c->nodes[i].reason);
    pxc_free(c, c->nodes[i].share_used);
    pxc_free(c, c->nodes[i].gtypes);
    pxc_free(c, c->nodes[i].share_user);
  }
  for (uint32_t i = 0; c->parts && i < c->nparts; i++) {
    pxc_free(c, c->parts[i].allow_acct);
    pxc_free(c, c->parts[i].deny_acct);
    pxc_free(c, c->parts[i].allow_qos);
  }
  for (size_t i = 0; i < c->ncons; i++) pxc_free(c, c->cons[i].terms);
  for (size_t i = 0; i < c->strs.n; i++) pxc_free(c, c->strs.str[i]);
  free_pools(c);
  void *arrays[] = {c->jobs, c->free_slots, c->pending, c->gent, c->gent_fs, c->gent_fs_gen, c->fin, c->sort, c->scratch_u32,
                    c->part_blocked, c->part_left, c->part_passed, c->nodes, c->cpu_bits, c->node_pools, c->parts,
                    c->leaf_parent, c->switches, c->assoc, c->share_rows, c->fs_list,
                    c->fs_level_sum, c->qos, c->quser, c->cons, c->strs.str, c->pl_bound,
                    c->pl_sum, c->pl_exact, c->pl_leaves, c->pl_nodes, c->pl_units, c->pl_cand};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) pxc_free(c, arrays[i]);
  struct pxc_map *maps[] = {&c->strs.idx, &c->assoc_by_user_acct, &c->default_assoc,
                            &c->quser_idx, &c->cons_by_str, &c->job_by_id, &c->fin_by_id,
                            &c->singleton_running, &c->static_fit, &c->fail_shapes,
                            &c->node_by_name};
  for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) pxc_map_fini(c, maps[i]);
  c->al.realloc(c->al.ud, c, sizeof *c, 0);
}
