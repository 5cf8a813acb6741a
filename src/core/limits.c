/*
 * limits.c - the admit stage: account (association) and QoS limits.
 *
 * Counters are kept on events, never recomputed: a start adds the job's
 * allocation to its association and every ancestor (GrpTRES, GrpJobs apply
 * to a subtree), to the user association's running count (MaxJobs, which
 * Slurm applies per user association and inherits down the tree) and to the
 * (QoS, user) pair (MaxTRESPerUser, MaxJobsPerUser); an end subtracts the
 * same numbers. Admission is then O(tree depth) per job.
 */
#include "core/core_int.h"

struct pxc_quser *pxc_quser_get(struct px_core *c, uint32_t qos, uint32_t user) {
  uint32_t slot;
  if (!pxc_map_get(&c->quser_idx, (uint64_t)qos << 32 | user, &slot)) return NULL;
  return &c->quser[slot];
}

int pxc_quser_ensure(struct px_core *c, uint32_t qos, uint32_t user) {
  uint64_t key = (uint64_t)qos << 32 | user;
  if (pxc_map_get(&c->quser_idx, key, NULL)) return 0;
  if (PXC_GROW(c, c->quser, &c->quser_cap, c->nquser + 1)) return PX_ENOMEM;
  if (pxc_map_put(c, &c->quser_idx, key, (uint32_t)c->nquser)) return PX_ENOMEM;
  c->quser[c->nquser++] = (struct pxc_quser){0};
  return 0;
}

uint64_t pxc_job_ngpu_alloc(const struct pxc_job *j) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < j->nalloc; i++) n += (uint64_t)px_bits64_count(j->alloc[i].gpus);
  return n;
}

uint64_t pxc_job_cgpu(const struct pxc_job *j) {
  if (j->nalloc) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < j->nalloc; i++)
      n += j->alloc[i].gpu_share ? j->alloc[i].gpu_share
                                 : (uint64_t)px_bits64_count(j->alloc[i].gpus) * PXC_SHARE_UNITS;
    return n;
  }
  return j->shape.share ? j->shape.share : (uint64_t)j->shape.units * j->shape.gpu * PXC_SHARE_UNITS;
}

uint64_t pxc_job_ncpu(const struct pxc_job *j) {
  if (j->nalloc) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < j->nalloc; i++) n += j->alloc[i].ncpu;
    return n;
  }
  return (uint64_t)j->shape.units * j->shape.cpu + (uint64_t)j->shape.base_cpu * j->shape.nmin;
}

static uint64_t job_mem(const struct pxc_job *j) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < j->nalloc; i++) n += j->alloc[i].mem_mib;
  return n;
}

void pxc_limits_count(struct px_core *c, const struct pxc_job *j, int sign) {
  uint64_t g = pxc_job_cgpu(j), cpu = pxc_job_ncpu(j), mem = job_mem(j), nodes = j->nalloc;
  for (uint32_t a = j->assoc; a != PX_NONE; a = c->assoc[a].parent) {
    struct pxc_assoc *x = &c->assoc[a];
    if (sign > 0) {
      x->run_cgpus += g, x->run_cpus += cpu, x->run_mem += mem, x->run_nodes += nodes, x->run_jobs++;
    } else {
      x->run_cgpus -= g, x->run_cpus -= cpu, x->run_mem -= mem, x->run_nodes -= nodes, x->run_jobs--;
    }
  }
  struct pxc_quser *q = pxc_quser_get(c, j->qos, j->user);
  if (sign > 0) {
    c->assoc[j->assoc].user_jobs++;
    if (q) q->cgpus += g, q->jobs++;
  } else {
    c->assoc[j->assoc].user_jobs--;
    if (q) q->cgpus -= g, q->jobs--;
  }
}

static bool over(uint64_t used, uint64_t add, uint64_t limit) {
  return limit != PX_NOLIMIT && used + add > limit;
}

/* GPU counters are in hundredths (a fraction charges its part), limits in GPUs. */
static bool over_gpus(uint64_t used_c, uint64_t add_c, uint64_t limit) {
  return limit != PX_NOLIMIT && used_c + add_c > limit * PXC_SHARE_UNITS;
}

/* Checks adding (g hundredths of GPUs, cpu CPUs, mem MiB, nodes) for j against every limit. */
static enum px_reason admit_amounts(struct px_core *c, const struct pxc_job *j, uint64_t g,
                                    uint64_t cpu, uint64_t mem, uint64_t nodes, uint32_t *wa,
                                    uint32_t *wb) {
  for (uint32_t a = j->assoc; a != PX_NONE; a = c->assoc[a].parent) {
    const struct pxc_assoc *x = &c->assoc[a];
    *wa = a;
    if (over_gpus(x->run_cgpus, g, x->grp_gpus)) return *wb = (uint32_t)x->grp_gpus, PX_REASON_ASSOC_GRP_GRES;
    if (over(x->run_cpus, cpu, x->grp_cpus)) return *wb = (uint32_t)x->grp_cpus, PX_REASON_ASSOC_GRP_CPU;
    if (over(x->run_nodes, nodes, x->grp_nodes)) return *wb = (uint32_t)x->grp_nodes, PX_REASON_ASSOC_GRP_NODE;
    if (over(x->run_jobs, 1, x->grp_jobs)) return *wb = (uint32_t)x->grp_jobs, PX_REASON_ASSOC_GRP_JOBS;
    if (over(x->run_mem, mem, x->grp_mem) || (x->grp_mem != PX_NOLIMIT && x->run_mem >= x->grp_mem))
      return *wb = (uint32_t)x->grp_mem, PX_REASON_ASSOC_GRP_MEM;
  }
  const struct pxc_assoc *u = &c->assoc[j->assoc];
  *wa = j->assoc;
  if (over(u->user_jobs, 1, u->max_jobs)) return *wb = (uint32_t)u->max_jobs, PX_REASON_ASSOC_MAX_JOBS;
  const struct pxc_qos *q = &c->qos[j->qos];
  const struct pxc_quser *qu = pxc_quser_get(c, j->qos, j->user);
  *wa = j->qos;
  if (qu && over_gpus(qu->cgpus, g, q->max_gpus_per_user))
    return *wb = (uint32_t)q->max_gpus_per_user, PX_REASON_QOS_MAX_GRES_PER_USER;
  if (qu && over(qu->jobs, 1, q->max_jobs_per_user))
    return *wb = (uint32_t)q->max_jobs_per_user, PX_REASON_QOS_MAX_JOBS_PER_USER;
  return PX_REASON_NONE;
}

enum px_reason pxc_admit(struct px_core *c, const struct pxc_job *j, uint32_t *wa, uint32_t *wb) {
  return admit_amounts(c, j, pxc_job_cgpu(j), pxc_job_ncpu(j), 0, j->shape.nmin, wa, wb);
}

/* The same with what a placement really takes: whole nodes for --exclusive,
 * the memory and node count chosen. */
enum px_reason pxc_admit_placement(struct px_core *c, const struct pxc_job *j,
                                   const struct pxc_place_result *res, uint32_t *wa, uint32_t *wb) {
  uint64_t g = 0, cpu = 0, mem = 0;
  for (uint32_t i = 0; i < res->nnodes; i++) {
    const struct pxc_node *n = &c->nodes[res->nodes[i]];
    if (j->shape.exclusive) {
      g += (uint64_t)px_bits64_count(n->gpu_free) * PXC_SHARE_UNITS, cpu += n->cpu_free, mem += n->mem_free;
      continue;
    }
    g += j->shape.share ? j->shape.share : (uint64_t)res->units[i] * j->shape.gpu * PXC_SHARE_UNITS;
    cpu += (uint64_t)res->units[i] * j->shape.cpu + j->shape.base_cpu;
    mem += pxc_mem_for(j, n, res->units[i]);
  }
  return admit_amounts(c, j, g, cpu, mem, res->nnodes, wa, wb);
}
