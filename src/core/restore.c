/*
 * restore.c - recovery (issue 6): the server replays its journal through the
 * core, and a job whose "start" record it meets is put back RUNNING on the
 * exact allocation the record names, instead of being forgotten. The core
 * then holds those GPUs, CPUs and memory, counts the job in limits and fair
 * share as if a cycle had started it, and expects an END or REQUEUE
 * event for it like for any job it started; no START action is
 * emitted (the agents already run it).
 *
 * The allocation is checked against the nodes' free resources first; a
 * conflict (the configuration shrank, two records claim the same GPU) is
 * refused with nothing changed, and the server falls back to keeping the
 * job out of the core with its nodes drained.
 */
#include <math.h>
#include <string.h>

#include "core/core_int.h"

/* A fractional job's share of one GPU: offered, in service, free or shared
 * with room. Recovery takes back what ran, so GpuShares=USER is not asked
 * (the first share taken back names the GPU's user). */
static bool share_free(const struct pxc_node *n, const struct px_alloc *a) {
  if (!n->shares || px_bits64_count(a->gpus) != 1 || a->gpu_share >= PXC_SHARE_UNITS) return false;
  uint32_t g = (uint32_t)__builtin_ctzll(a->gpus);
  if (n->gpu_free & a->gpus) return true;
  return (n->gpu_shared & ~n->gpu_bad & a->gpus) && pxc_share_room(n, g) >= a->gpu_share;
}

/* Does every element of alloc fit its node's free resources (each node once)? */
static int check_alloc(const struct px_core *c, uint64_t id, const struct px_alloc *alloc,
                       uint32_t nalloc, struct px_diag *d) {
  if (nalloc == 0) return px_diag_set(d, PX_EINVAL, -1, "alloc: job %llu: empty allocation",
                                      (unsigned long long)id);
  for (uint32_t i = 0; i < nalloc; i++) {
    const struct px_alloc *a = &alloc[i];
    if (a->node >= c->nnodes)
      return px_diag_set(d, PX_EINVAL, -1, "alloc: job %llu: node %u not configured",
                         (unsigned long long)id, a->node);
    for (uint32_t k = 0; k < i; k++)
      if (alloc[k].node == a->node)
        return px_diag_set(d, PX_EINVAL, -1, "alloc: job %llu: node %s twice",
                           (unsigned long long)id, pxc_str(c, c->nodes[a->node].name));
    const struct pxc_node *n = &c->nodes[a->node];
    if (a->gpu_share && !share_free(n, a))
      return px_diag_set(d, PX_ESTATE, -1, "alloc: job %llu: node %s cannot take %u hundredths of GPU %d",
                         (unsigned long long)id, pxc_str(c, n->name), a->gpu_share, __builtin_ctzll(a->gpus | 1ULL << 63));
    if ((!a->gpu_share && (n->gpu_free & a->gpus) != a->gpus) || n->cpu_free < a->ncpu || n->mem_free < a->mem_mib)
      return px_diag_set(d, PX_ESTATE, -1, "alloc: job %llu: node %s has not that much free",
                         (unsigned long long)id, pxc_str(c, n->name));
  }
  return 0;
}

/* Takes alloc's resources for j, as pxc_place_commit does for a placement
 * (CPUs: the first free ones; the record does not name them). */
static int take_alloc(struct px_core *c, struct pxc_job *j, const struct px_alloc *alloc,
                      uint32_t nalloc) {
  uint32_t nwords = 0;
  for (uint32_t i = 0; i < nalloc; i++) nwords += (c->nodes[alloc[i].node].cpus + 63) / 64;
  struct px_alloc *al;
  uint64_t *words;
  if (pxc_alloc_arrays(c, nalloc, nwords, &al, &words)) return PX_ENOMEM;
  uint32_t w = 0;
  for (uint32_t i = 0; i < nalloc; i++) {
    uint32_t node = alloc[i].node, left = alloc[i].ncpu, nw = (c->nodes[node].cpus + 63) / 64;
    struct pxc_node *n = &c->nodes[node];
    pxc_index_node_remove(c, node);
    uint64_t *bits = &c->cpu_bits[n->cpu_word];
    for (uint32_t cpu = 0; cpu < n->cpus && left; cpu++) {
      uint64_t bit = 1ULL << (cpu % 64);
      if (!(bits[cpu / 64] & bit)) continue;
      bits[cpu / 64] &= ~bit;
      words[w + cpu / 64] |= bit;
      left--;
    }
    al[i] = (struct px_alloc){node, alloc[i].ncpu, alloc[i].gpus, alloc[i].mem_mib, w, nw, alloc[i].gpu_share};
    w += nw;
    if (alloc[i].gpu_share) pxc_share_take(n, (uint32_t)__builtin_ctzll(alloc[i].gpus), alloc[i].gpu_share, j->user);
    n->gpu_free &= ~alloc[i].gpus;
    n->cpu_free -= alloc[i].ncpu;
    n->mem_free -= alloc[i].mem_mib;
    n->njobs++;
    if (j->shape.exclusive) n->excl = true;
    if (c->parts[j->part].exclusive_account || n->tenant != PX_NONE) {
      n->tenant = j->account;
      n->tenant_jobs++;
    }
    pxc_index_node_add(c, node);
    pxc_plan_node_changed(c, node, true); /* the backfill plan must see the job: rebuilt whole */
  }
  j->alloc = al;
  j->nalloc = nalloc;
  j->cpu_words = words;
  j->ncpu_words = nwords;
  return 0;
}

/* Makes j RUNNING since start_s, as a cycle's start would (without action). */
static void mark_running(struct px_core *c, struct pxc_job *j, int64_t time_limit_s,
                         int64_t start_s) {
  j->state = PX_JOB_RUNNING;
  j->reason = PX_REASON_NONE;
  j->start_s = start_s;
  if (time_limit_s > 0) j->time_limit_s = time_limit_s;
  pxc_limits_count(c, j, +1);
  j->billing = pxc_alloc_billing(c, j->qos, j->alloc, j->nalloc);
  pxc_fs_charge(c, j->assoc, j->billing, start_s);
  if (j->name != PX_NONE) {
    uint64_t key = (uint64_t)j->user << 32 | j->name;
    uint32_t n = 0;
    pxc_map_get(&c->singleton_running, key, &n);
    pxc_map_put(c, &c->singleton_running, key, n + 1); /* reserved by the caller */
  }
}

/* The next task of a pending array record, born running (cycle.c's
 * start_task without placement). */
static int restore_task(struct px_core *c, struct pxc_job *r, uint64_t id,
                        const struct px_alloc *alloc, uint32_t nalloc, int64_t time_limit_s,
                        int64_t start_s, struct px_diag *d) {
  if (!r->arr || r->state != PX_JOB_PENDING || r->id + 1 + r->arr->next != id)
    return px_diag_set(d, PX_ESTATE, -1, "job_id: %llu is not the next task of array %llu",
                       (unsigned long long)id, (unsigned long long)r->id);
  uint32_t slot = (uint32_t)(r - c->jobs), ts;
  int rc = pxc_task_new(c, slot, &ts);
  if (rc) return rc;
  struct pxc_job *t = &c->jobs[ts];
  rc = take_alloc(c, t, alloc, nalloc);
  pxc_task_settle(c, ts, rc == 0);
  if (rc) return rc;
  r = &c->jobs[slot]; /* the slab may have moved */
  mark_running(c, t, time_limit_s, start_s);
  pxc_array_task_began(c, r);
  return 0;
}

int pxc_job_restore(struct px_core *c, uint64_t job_id, uint64_t array_job_id,
                        const struct px_alloc *alloc, uint32_t nalloc, int64_t time_limit_s,
                        int64_t start_s, struct px_diag *diag) {
  int rc = check_alloc(c, job_id, alloc, nalloc, diag);
  if (rc) return rc;
  if (pxc_map_reserve(c, &c->singleton_running, 1)) return PX_ENOMEM;
  struct pxc_job *j = pxc_job_find(c, job_id);
  if (!j && array_job_id) {
    struct pxc_job *r = pxc_job_find(c, array_job_id);
    if (r) return restore_task(c, r, job_id, alloc, nalloc, time_limit_s, start_s, diag);
  }
  if (!j) return px_diag_set(diag, PX_ENOENT, -1, "job_id: %llu unknown", (unsigned long long)job_id);
  if (j->state != PX_JOB_PENDING || j->arr)
    return px_diag_set(diag, PX_ESTATE, -1, "job_id: %llu is not a pending job",
                       (unsigned long long)job_id);
  if ((rc = take_alloc(c, j, alloc, nalloc))) return rc;
  pxc_pending_remove(c, j);
  mark_running(c, j, time_limit_s, start_s);
  if (j->task_id != PX_NONE) { /* a requeued array task counts against %N again */
    struct pxc_job *rec = pxc_job_find(c, j->array_id);
    if (rec && rec->arr) rec->arr->running++;
  }
  return 0;
}

/*
 * Usage of a job that ended before the last checkpoint (the server archives
 * finished jobs and does not replay their start and end): what its run
 * charged to fair share is added back, decayed as the running job's rate
 * would have been. A constant rate r over [s, e] is worth, at e,
 * r * hl/ln2 * (1 - 2^-((e-s)/hl)) with half-life hl (r * (e-s) without
 * decay), and 2^-((t-e)/hl) of that at a later time t. Each association
 * (the user's and its ancestors) gets it at its own usage time.
 */
double pxc_alloc_billing(const struct px_core *c, uint32_t qos, const struct px_alloc *alloc,
                         uint32_t nalloc) {
  const struct px_conf_sched *s = &c->sched;
  double g = 0, cpu = 0, mem = 0;
  for (uint32_t i = 0; i < nalloc; i++) {
    /* a fractional job is charged its fraction: 50 hundredths bill half a GPU */
    g += alloc[i].gpu_share ? alloc[i].gpu_share / (double)PXC_SHARE_UNITS : (double)__builtin_popcountll(alloc[i].gpus);
    cpu += (double)alloc[i].ncpu;
    mem += (double)alloc[i].mem_mib / 1024.0;
  }
  double b = s->billing_weight_gpu * g + s->billing_weight_cpu * cpu + s->billing_weight_mem_gib * mem;
  if (s->billing_weight_gpu == 0 && s->billing_weight_cpu == 0 && s->billing_weight_mem_gib == 0) b = cpu;
  return b * c->qos[qos].usage_factor;
}

static uint32_t qos_named(const struct px_core *c, const char *name, uint32_t dflt) {
  uint32_t id = name ? pxc_lookup(c, name) : PX_NONE;
  for (uint32_t q = 0; id != PX_NONE && q < c->nqos; q++)
    if (c->qos[q].name == id) return q;
  return dflt == PX_NONE || dflt >= c->nqos ? 0 : dflt;
}

int pxc_usage_replay(struct px_core *c, const char *user, const char *account,
                         const char *qos, const struct px_alloc *alloc, uint32_t nalloc,
                         int64_t start_s, int64_t end_s, struct px_diag *d) {
  uint32_t u = user ? pxc_lookup(c, user) : PX_NONE, assoc = PX_NONE;
  if (u != PX_NONE && account) {
    uint32_t a = pxc_lookup(c, account);
    if (a != PX_NONE) pxc_map_get(&c->assoc_by_user_acct, (uint64_t)u << 32 | a, &assoc);
  } else if (u != PX_NONE) {
    pxc_map_get(&c->default_assoc, u, &assoc);
  }
  if (assoc == PX_NONE) /* the account tree changed since: nobody to charge */
    return px_diag_set(d, PX_ENOENT, -1, "account: user \"%s\" has no association %s",
                       user ? user : "", account ? account : "");
  if (end_s <= start_s || !nalloc || !c->nqos) return 0;
  double r = pxc_alloc_billing(c, qos_named(c, qos, c->assoc[assoc].default_qos), alloc, nalloc);
  double hl = (double)c->sched.decay_half_life_s, dur = (double)(end_s - start_s);
  double at_end = hl > 0 ? r * hl / M_LN2 * (1 - exp2(-dur / hl)) : r * dur;
  pxc_fs_advance(c, assoc, end_s); /* usage times before end_s move up to it */
  for (uint32_t a = assoc; a != PX_NONE; a = c->assoc[a].parent) {
    struct pxc_assoc *x = &c->assoc[a];
    double later = (double)(x->usage_t - end_s);
    x->usage += hl > 0 && later > 0 ? at_end * exp2(-later / hl) : at_end;
  }
  return 0;
}
