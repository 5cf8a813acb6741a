/*
 * jobs.c - job records and the events that change them: submit (validation
 * and the job's shape), cancel, hold, release, end, requeue, update.
 *
 * Records live in one slab (dense slots, reused through a free list) and are
 * found by id through a hash map. A pending job keeps only scheduling fields
 * (about 200 bytes); an array is one record whose tasks become records of
 * their own only when they start.
 */
#include <string.h>

#include "core/core_int.h"

struct pxc_job *pxc_job_find(struct px_core *c, uint64_t id) {
  uint32_t slot;
  return pxc_map_get(&c->job_by_id, id, &slot) ? &c->jobs[slot] : NULL;
}

int pxc_slot_new(struct px_core *c, uint32_t *slot) {
  if (c->nfree) {
    *slot = c->free_slots[--c->nfree];
    return 0;
  }
  if (PXC_GROW(c, c->jobs, &c->jobs_cap, c->njob_slots + 1)) return PX_ENOMEM;
  if (PXC_GROW(c, c->free_slots, &c->free_cap, c->njob_slots + 1)) return PX_ENOMEM;
  *slot = (uint32_t)c->njob_slots++;
  return 0;
}

/* The cycle's sort scratch grows with the queue, so a cycle never has to;
 * its new pages are touched here, at submit, not on the cycle's clock. */
static int pending_reserve(struct px_core *c) {
  if (PXC_GROW(c, c->pending, &c->pending_cap, c->npending + 1)) return PX_ENOMEM;
  size_t old = c->sort_cap;
  if (PXC_GROW(c, c->sort, &c->sort_cap, c->npending + 1)) return PX_ENOMEM;
  if (c->sort_cap > old) memset(c->sort + old, 0, (c->sort_cap - old) * sizeof *c->sort);
  return 0;
}

int pxc_pending_add(struct px_core *c, struct pxc_job *j) {
  if (pending_reserve(c)) return PX_ENOMEM;
  j->pend_pos = (uint32_t)c->npending;
  c->pending[c->npending++] = (uint32_t)(j - c->jobs);
  return 0;
}

void pxc_pending_remove(struct px_core *c, struct pxc_job *j) {
  uint32_t last = c->pending[--c->npending];
  c->pending[j->pend_pos] = last;
  c->jobs[last].pend_pos = j->pend_pos;
  j->pend_pos = PX_NONE;
}

/* Frees a record that is no longer pending or running. */
void pxc_job_drop(struct px_core *c, struct pxc_job *j) {
  pxc_map_del(&c->job_by_id, j->id);
  pxc_free(c, j->deps);
  pxc_free(c, j->arr);
  pxc_free(c, j->alloc);
  pxc_free(c, j->cpu_words);
  memset(j, 0, sizeof *j);
  j->state = 0xff; /* free */
  c->free_slots[c->nfree++] = (uint32_t)(j - c->jobs);
  c->nlive--;
}

/* ---- finished jobs (kept PXC_FINISHED_KEEP_S for dependencies) ---------- */

/* fin[fin_head, nfin) are live, oldest first; the map holds a sequence
 * number (fin_seq0 + index, in 32-bit wrapping arithmetic) so purging the
 * head never rewrites it, and the array is compacted only when half dead. */
int pxc_finished_add(struct px_core *c, uint64_t id, uint8_t state, bool ok, int64_t now) {
  if (PXC_GROW(c, c->fin, &c->fin_cap, c->nfin + 1) || pxc_map_reserve(c, &c->fin_by_id, 1))
    return PX_ENOMEM;
  c->fin[c->nfin] = (struct pxc_finished){id, now, state, ok};
  pxc_map_put(c, &c->fin_by_id, id, c->fin_seq0 + (uint32_t)c->nfin);
  c->nfin++;
  return 0;
}

const struct pxc_finished *pxc_finished_get(const struct px_core *c, uint64_t id) {
  uint32_t seq;
  return pxc_map_get(&c->fin_by_id, id, &seq) ? &c->fin[(uint32_t)(seq - c->fin_seq0)] : NULL;
}

void pxc_finished_purge(struct px_core *c, int64_t now) {
  while (c->fin_head < c->nfin && c->fin[c->fin_head].end_s + PXC_FINISHED_KEEP_S < now) {
    const struct pxc_finished *f = &c->fin[c->fin_head];
    uint32_t seq;
    /* a later entry for the same id (re-finished) keeps its own mapping */
    if (pxc_map_get(&c->fin_by_id, f->id, &seq) && seq == c->fin_seq0 + (uint32_t)c->fin_head)
      pxc_map_del(&c->fin_by_id, f->id);
    c->fin_head++;
  }
  if (c->fin_head * 2 < c->nfin || !c->fin_head) return;
  memmove(c->fin, c->fin + c->fin_head, (c->nfin - c->fin_head) * sizeof *c->fin);
  c->nfin -= c->fin_head;
  c->fin_seq0 += (uint32_t)c->fin_head;
  c->fin_head = 0;
}

/* ---- submit ------------------------------------------------------------- */

static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

static int shape_from_spec(const struct px_jobspec *s, struct pxc_shape *o, struct px_diag *d) {
  uint32_t cpt = s->cpus_per_task ? s->cpus_per_task : 1;
  memset(o, 0, sizeof *o);
  if (s->nodes_max && s->nodes_min && s->nodes_max < s->nodes_min)
    return px_diag_set(d, PX_EINVAL, -1, "nodes: max %u below min %u", s->nodes_max, s->nodes_min);
  if (s->nodes_min || s->ntasks_per_node || s->gpus_per_node) {
    uint32_t n = s->nodes_min;
    if (!n) n = s->ntasks_per_node && s->ntasks ? ceil_div(s->ntasks, s->ntasks_per_node) : 1;
    uint32_t tpn = s->ntasks_per_node ? s->ntasks_per_node : s->ntasks ? ceil_div(s->ntasks, n) : 1;
    uint32_t gpn = s->gpus_per_node;
    if (!gpn && s->gpus) {
      if (s->gpus % n)
        return px_diag_set(d, PX_EINVAL, -1, "gpus: %u GPUs do not split evenly over %u nodes", s->gpus, n);
      gpn = s->gpus / n;
    }
    if (!gpn) gpn = s->gpus_per_task * tpn;
    *o = (struct pxc_shape){.units = n, .per_node_max = 1, .nmin = n, .nmax = n, .gpu = gpn,
                            .cpu = tpn * cpt};
    o->mem = s->mem_per_node_mib   ? s->mem_per_node_mib
             : s->mem_per_cpu_mib ? s->mem_per_cpu_mib * o->cpu
             : s->mem_per_gpu_mib ? s->mem_per_gpu_mib * gpn
                                  : 0;
    o->mem_prop = o->mem == 0;
    return 0;
  }
  uint32_t t = s->ntasks ? s->ntasks : 1;
  if (t == 1 && !s->gpus_per_task && s->gpus > 1) {
    /* --gpus=G alone: G one-GPU units wherever they fit, one task's CPUs per node */
    *o = (struct pxc_shape){.units = s->gpus, .per_node_max = UINT32_MAX, .nmin = 1,
                            .nmax = s->nodes_max ? s->nodes_max : UINT32_MAX, .gpu = 1,
                            .base_cpu = cpt, .mem = s->mem_per_gpu_mib};
  } else {
    uint32_t gpt = s->gpus_per_task;
    if (!gpt && s->gpus) {
      if (s->gpus % t)
        return px_diag_set(d, PX_EINVAL, -1, "gpus: %u GPUs do not split evenly over %u tasks", s->gpus, t);
      gpt = s->gpus / t;
    }
    *o = (struct pxc_shape){.units = t, .per_node_max = UINT32_MAX, .nmin = 1,
                            .nmax = s->nodes_max ? s->nodes_max : UINT32_MAX, .gpu = gpt, .cpu = cpt};
    o->mem = s->mem_per_cpu_mib ? s->mem_per_cpu_mib * cpt : s->mem_per_gpu_mib * gpt;
  }
  if (t == 1 && o->units == 1) o->nmax = 1;
  if (o->nmax == 1 && s->mem_per_node_mib) o->mem = s->mem_per_node_mib;
  o->mem_prop = o->mem == 0;
  return 0;
}

static bool in_set(const uint64_t *set, uint32_t i) { return !set || (set[i / 64] >> (i % 64)) & 1; }

int64_t px_core_ids_needed(const struct px_jobspec *spec, struct px_diag *diag) {
  if (!spec->array) return 1;
  int err;
  uint32_t n = pxc_array_count(spec->array, &err, diag);
  return err ? err : (int64_t)n + 1;
}

static int reject(enum px_reason *out, enum px_reason r, int err) {
  if (out) *out = r;
  return err;
}

/* Resolves who/where: association, QoS, partition. */
static int resolve_identity(struct px_core *c, const struct px_jobspec *s, struct pxc_job *j,
                            enum px_reason *rj, struct px_diag *d) {
  if (!s->user || !*s->user) return px_diag_set(d, PX_EINVAL, -1, "user: missing");
  uint32_t part = c->default_part;
  if (s->partition) {
    uint32_t id = pxc_lookup(c, s->partition);
    for (part = 0; part < c->nparts && c->parts[part].name != id; part++) {
    }
    if (part == c->nparts || id == PX_NONE)
      return px_diag_set(d, PX_ENOENT, -1, "partition: unknown partition \"%s\"", s->partition);
  } else if (part == PX_NONE) {
    return px_diag_set(d, PX_EINVAL, -1, "partition: none given and no default partition");
  }
  uint32_t user = pxc_lookup(c, s->user), assoc = PX_NONE;
  if (user != PX_NONE && s->account) {
    uint32_t acct = pxc_lookup(c, s->account);
    if (acct != PX_NONE) pxc_map_get(&c->assoc_by_user_acct, (uint64_t)user << 32 | acct, &assoc);
  } else if (user != PX_NONE) {
    pxc_map_get(&c->default_assoc, user, &assoc);
  }
  if (assoc == PX_NONE) {
    reject(rj, PX_REASON_INVALID_ACCOUNT, 0);
    return px_diag_set(d, PX_EPERM, -1, "account: user \"%s\" has no association%s%s", s->user,
                       s->account ? " with account " : "", s->account ? s->account : "");
  }
  uint32_t qos = c->assoc[assoc].default_qos;
  if (s->qos) {
    uint32_t id = pxc_lookup(c, s->qos);
    for (qos = 0; qos < c->nqos && c->qos[qos].name != id; qos++) {
    }
    if (qos == c->nqos || id == PX_NONE) {
      reject(rj, PX_REASON_INVALID_QOS, 0);
      return px_diag_set(d, PX_ENOENT, -1, "qos: unknown QoS \"%s\"", s->qos);
    }
  }
  if (qos == PX_NONE) qos = 0;
  if (!c->nqos) return px_diag_set(d, PX_EINVAL, -1, "qos: the configuration has no QoS");
  const struct pxc_part *p = &c->parts[part];
  uint32_t account = c->assoc[assoc].parent;
  if (!in_set(p->allow_acct, account) || (p->deny_acct && in_set(p->deny_acct, account))) {
    reject(rj, PX_REASON_ACCOUNT_NOT_ALLOWED, 0);
    return px_diag_set(d, PX_EPERM, -1, "account: %s may not use partition %s",
                       pxc_str(c, c->assoc[account].name), pxc_str(c, p->name));
  }
  if (!in_set(p->allow_qos, qos)) {
    reject(rj, PX_REASON_QOS_NOT_ALLOWED, 0);
    return px_diag_set(d, PX_EPERM, -1, "qos: %s not allowed in partition %s",
                       pxc_str(c, c->qos[qos].name), pxc_str(c, p->name));
  }
  j->part = (uint16_t)part;
  j->qos = (uint16_t)qos;
  j->assoc = assoc;
  j->account = account;
  j->user = user;
  return 0;
}

/* Limits a job can never get past: reject at submit. */
static int check_static_limits(struct px_core *c, const struct pxc_job *j, uint32_t ntasks,
                               enum px_reason *rj, struct px_diag *d) {
  const struct pxc_part *p = &c->parts[j->part];
  const struct pxc_qos *q = &c->qos[j->qos];
  const struct pxc_assoc *u = &c->assoc[j->assoc];
  uint64_t g = pxc_job_ngpu(j);
  if (j->time_limit_s > p->max_time_s) {
    reject(rj, PX_REASON_PARTITION_TIME_LIMIT, 0);
    return px_diag_set(d, PX_ELIMIT, -1, "time_limit: %lld s over partition %s MaxTime %lld s",
                       (long long)j->time_limit_s, pxc_str(c, p->name), (long long)p->max_time_s);
  }
  if (j->time_limit_s > q->max_wall_s) {
    reject(rj, PX_REASON_QOS_MAX_WALL, 0);
    return px_diag_set(d, PX_ELIMIT, -1, "time_limit: %lld s over QoS %s MaxWall %lld s",
                       (long long)j->time_limit_s, pxc_str(c, q->name), (long long)q->max_wall_s);
  }
  if (j->shape.nmin > p->max_nodes || j->shape.nmin > p->nnodes) {
    reject(rj, PX_REASON_PARTITION_NODE_LIMIT, 0);
    return px_diag_set(d, PX_ELIMIT, -1, "nodes: %u over partition %s (MaxNodes %u, %u nodes)",
                       j->shape.nmin, pxc_str(c, p->name), p->max_nodes, p->nnodes);
  }
  if (u->max_gpus_per_job != PX_NOLIMIT && g > u->max_gpus_per_job) {
    reject(rj, PX_REASON_ASSOC_MAX_GRES_PER_JOB, 0);
    return px_diag_set(d, PX_ELIMIT, -1, "gpus: %llu over the association's MaxTRES gres/gpu=%llu",
                       (unsigned long long)g, (unsigned long long)u->max_gpus_per_job);
  }
  for (uint32_t a = j->assoc; a != PX_NONE; a = c->assoc[a].parent)
    if (c->assoc[a].grp_gpus != PX_NOLIMIT && g > c->assoc[a].grp_gpus) {
      reject(rj, PX_REASON_ASSOC_GRP_GRES, 0);
      return px_diag_set(d, PX_ELIMIT, -1, "gpus: %llu over GrpTRES gres/gpu=%llu of account %s",
                         (unsigned long long)g, (unsigned long long)c->assoc[a].grp_gpus,
                         pxc_str(c, c->assoc[a].name));
    }
  if (q->max_gpus_per_user != PX_NOLIMIT && g > q->max_gpus_per_user) {
    reject(rj, PX_REASON_QOS_MAX_GRES_PER_USER, 0);
    return px_diag_set(d, PX_ELIMIT, -1, "gpus: %llu over QoS %s MaxTRESPerUser gres/gpu=%llu",
                       (unsigned long long)g, pxc_str(c, q->name), (unsigned long long)q->max_gpus_per_user);
  }
  if (u->max_submit != PX_NOLIMIT && u->user_submit + ntasks > u->max_submit) {
    reject(rj, PX_REASON_ASSOC_MAX_SUBMIT, 0);
    return px_diag_set(d, PX_ELIMIT, -1, "jobs: MaxSubmitJobs %llu reached",
                       (unsigned long long)u->max_submit);
  }
  const struct pxc_quser *qu = pxc_quser_get(c, j->qos, j->user);
  if (q->max_submit_per_user != PX_NOLIMIT && (qu ? qu->submit : 0) + ntasks > q->max_submit_per_user) {
    reject(rj, PX_REASON_QOS_MAX_SUBMIT, 0);
    return px_diag_set(d, PX_ELIMIT, -1, "jobs: QoS %s MaxSubmitJobsPerUser %llu reached",
                       pxc_str(c, q->name), (unsigned long long)q->max_submit_per_user);
  }
  return 0;
}

static int check_fits(struct px_core *c, const struct pxc_job *j, enum px_reason *rj, struct px_diag *d) {
  uint64_t h = pxc_shape_hash(j);
  uint32_t ok;
  if (!pxc_map_get(&c->static_fit, h, &ok)) {
    ok = pxc_fits_static(c, j, false);
    if (pxc_map_put(c, &c->static_fit, h, ok)) return PX_ENOMEM;
  }
  if (ok) return 0;
  reject(rj, j->constraint != PX_NONE ? PX_REASON_BAD_CONSTRAINTS : PX_REASON_RESOURCES, 0);
  return px_diag_set(d, PX_ELIMIT, -1,
                     "gpus: partition %s has no %u node(s) that can hold %u GPU(s)%s%s, %u CPU(s) "
                     "each%s",
                     pxc_str(c, c->parts[j->part].name), j->shape.nmin,
                     j->shape.per_node_max == 1 ? j->shape.gpu : j->shape.units * j->shape.gpu,
                     j->gpu_type != PX_NONE ? " of type " : "",
                     j->gpu_type != PX_NONE ? pxc_str(c, j->gpu_type) : "",
                     j->shape.cpu ? j->shape.cpu : j->shape.base_cpu,
                     j->constraint != PX_NONE ? " with the constraint" : "");
}

static int check_deps(struct px_core *c, uint64_t self, const struct pxc_deps *deps, struct px_diag *d) {
  for (uint32_t i = 0; deps && i < deps->n; i++) {
    uint64_t id = deps->d[i].job_id;
    if (deps->d[i].kind == PXC_DEP_SINGLETON) continue;
    if (id == self) return px_diag_set(d, PX_EINVAL, -1, "dependency: job depends on itself");
    if (!pxc_job_find(c, id) && !pxc_finished_get(c, id))
      return px_diag_set(d, PX_ENOENT, -1, "dependency: unknown job %llu", (unsigned long long)id);
  }
  return 0;
}

static int parse_exprs(struct px_core *c, const struct px_jobspec *s, struct pxc_job *j,
                       enum px_reason *rj, struct px_diag *d) {
  int rc;
  j->gpu_type = j->constraint = j->name = PX_NONE;
  if (s->gpu_type) {
    j->gpu_type = pxc_lookup(c, s->gpu_type);
    bool any = false;
    for (uint32_t n = 0; n < c->nnodes && j->gpu_type != PX_NONE && !any; n++)
      any = c->nodes[n].gpu_type == j->gpu_type;
    if (!any) {
      reject(rj, PX_REASON_BAD_CONSTRAINTS, 0);
      return px_diag_set(d, PX_EINVAL, -1, "gpu_type: no node has GPUs of type \"%s\"", s->gpu_type);
    }
  }
  if (s->constraint && *s->constraint && (rc = pxc_parse_constraint(c, s->constraint, &j->constraint, d))) {
    reject(rj, PX_REASON_BAD_CONSTRAINTS, 0);
    return rc;
  }
  if (s->name && pxc_intern(c, s->name, &j->name)) return PX_ENOMEM;
  if (s->array && (rc = pxc_parse_array(c, s->array, &j->arr, d))) return rc;
  if (s->dependency && *s->dependency && (rc = pxc_parse_deps(c, s->dependency, &j->deps, d))) return rc;
  return 0;
}

int px_core_submit(struct px_core *c, uint64_t job_id, const struct px_jobspec *s, int64_t now,
                   enum px_reason *rj, struct px_diag *d) {
  struct pxc_job j = {0};
  int rc;
  px_diag_clear(d);
  reject(rj, PX_REASON_NONE, 0);
  if (job_id == 0 || pxc_job_find(c, job_id))
    return px_diag_set(d, PX_EEXIST, -1, "job_id: %llu %s", (unsigned long long)job_id,
                       job_id ? "already in use" : "must be positive");
  if ((rc = resolve_identity(c, s, &j, rj, d)) || (rc = shape_from_spec(s, &j.shape, d))) return rc;
  j.shape.exclusive = s->exclusive || c->parts[j.part].whole_nodes;
  /* No --time: the partition's DefaultTime, capped by the QoS MaxWall as Slurm does. */
  j.time_limit_s = s->time_limit_s > 0 ? s->time_limit_s : c->parts[j.part].default_time_s;
  if (s->time_limit_s <= 0 && j.time_limit_s > c->qos[j.qos].max_wall_s)
    j.time_limit_s = c->qos[j.qos].max_wall_s;
  if ((rc = parse_exprs(c, s, &j, rj, d))) goto fail;
  uint32_t ntasks = j.arr ? j.arr->ntasks : 1;
  if (j.arr && ntasks == 0) {
    rc = px_diag_set(d, PX_EINVAL, -1, "array: no tasks");
    goto fail;
  }
  if ((rc = check_static_limits(c, &j, ntasks, rj, d)) || (rc = check_fits(c, &j, rj, d)) ||
      (rc = check_deps(c, job_id, j.deps, d)))
    goto fail;
  uint32_t slot;
  if ((rc = pxc_quser_ensure(c, j.qos, j.user)) || (rc = pxc_map_reserve(c, &c->job_by_id, 1)) ||
      (rc = pending_reserve(c)) || (rc = pxc_slot_new(c, &slot)))
    goto fail;
  j.id = job_id;
  j.array_id = j.arr ? job_id : 0;
  j.task_id = PX_NONE;
  j.state = PX_JOB_PENDING;
  j.reason = PX_REASON_NONE;
  j.submit_s = now;
  j.begin_s = s->begin_s;
  j.nice = s->nice;
  j.switches = s->switches;
  j.switches_wait_s = s->switches_wait_s;
  j.flags = (uint8_t)((s->hold ? PXC_F_HELD_USER | PXC_F_AGE_RESET : 0) | (s->requeue ? PXC_F_REQUEUE : 0));
  j.signal_num = s->signal_num;
  j.signal_time_s = s->signal_time_s;
  c->jobs[slot] = j;
  pxc_map_put(c, &c->job_by_id, job_id, slot);
  pxc_pending_add(c, &c->jobs[slot]);
  c->nlive++;
  c->assoc[j.assoc].user_submit += ntasks;
  pxc_quser_get(c, j.qos, j.user)->submit += ntasks;
  return 0;
fail:
  pxc_free(c, j.arr);
  pxc_free(c, j.deps);
  return rc;
}

/* ---- other job events ----------------------------------------------------- */

static struct pxc_job *find_or_diag(struct px_core *c, uint64_t id, struct px_diag *d) {
  px_diag_clear(d);
  struct pxc_job *j = pxc_job_find(c, id);
  if (!j) px_diag_set(d, PX_ENOENT, -1, "job_id: no job %llu", (unsigned long long)id);
  return j;
}

static void submit_count(struct px_core *c, const struct pxc_job *j, uint64_t n) {
  c->assoc[j->assoc].user_submit -= n;
  struct pxc_quser *q = pxc_quser_get(c, j->qos, j->user);
  if (q) q->submit -= n;
}

int px_core_cancel(struct px_core *c, uint64_t id, int64_t now, struct px_diag *d) {
  struct pxc_job *j = find_or_diag(c, id, d);
  if (!j) return PX_ENOENT;
  if (j->state != PX_JOB_PENDING)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is running: stop it, then report its end",
                       (unsigned long long)id);
  struct pxc_array *a = j->arr;
  bool meta = a && a->next > a->ended; /* tasks still running: keep the record */
  if (!meta && pxc_finished_add(c, id, PX_JOB_CANCELLED, false, now)) return PX_ENOMEM;
  submit_count(c, j, a ? a->ntasks - a->next : 1);
  pxc_pending_remove(c, j);
  if (meta) {
    a->failed += a->ntasks - a->next; /* cancelled tasks: afterok can no longer hold */
    a->ntasks = a->next;
    j->state = PX_JOB_RUNNING;
    return 0;
  }
  pxc_job_drop(c, j);
  return 0;
}

/* An array task ended: when every task has, the array record ends too (its
 * id then satisfies dependencies like a job's). */
void pxc_array_task_ended(struct px_core *c, uint64_t array_id, bool ok, int64_t now) {
  struct pxc_job *r = pxc_job_find(c, array_id);
  if (!r || !r->arr) return;
  r->arr->ended++;
  r->arr->failed += !ok;
  if (r->state == PX_JOB_PENDING || r->arr->ended < r->arr->ntasks) return;
  bool all_ok = r->arr->failed == 0;
  /* Reserved by the task's own finished_add just before: cannot fail now
   * except on growth; on failure the record stays (dependents keep waiting). */
  if (pxc_finished_add(c, array_id, all_ok ? PX_JOB_COMPLETED : PX_JOB_FAILED, all_ok, now)) return;
  pxc_job_drop(c, r);
}

int px_core_hold(struct px_core *c, uint64_t id, bool admin, int64_t now, struct px_diag *d) {
  (void)now;
  struct pxc_job *j = find_or_diag(c, id, d);
  if (!j) return PX_ENOENT;
  if (j->state != PX_JOB_PENDING)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is not pending", (unsigned long long)id);
  j->flags |= (uint8_t)((admin ? PXC_F_HELD_ADMIN : PXC_F_HELD_USER) | PXC_F_AGE_RESET);
  j->eligible_s = 0; /* no ageing while held */
  j->reason = admin ? PX_REASON_HELD_ADMIN : PX_REASON_HELD_USER;
  j->priority = 0;
  return 0;
}

int px_core_release(struct px_core *c, uint64_t id, bool admin, int64_t now, struct px_diag *d) {
  (void)now;
  struct pxc_job *j = find_or_diag(c, id, d);
  if (!j) return PX_ENOENT;
  if (j->state != PX_JOB_PENDING)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is not pending", (unsigned long long)id);
  if ((j->flags & PXC_F_HELD_ADMIN) && !admin)
    return px_diag_set(d, PX_EPERM, -1, "job %llu is held by an administrator", (unsigned long long)id);
  j->flags &= (uint8_t)~(PXC_F_HELD_ADMIN | PXC_F_HELD_USER);
  j->reason = PX_REASON_NONE;
  return 0;
}

/* Stops a running job's accounting: resources, limits, usage, singleton, array. */
static void stop_running(struct px_core *c, struct pxc_job *j, int64_t now) {
  pxc_limits_count(c, j, -1);
  pxc_fs_charge(c, j->assoc, -j->billing, now);
  j->billing = 0;
  pxc_place_release(c, j);
  if (j->name != PX_NONE) {
    uint64_t key = (uint64_t)j->user << 32 | j->name;
    uint32_t n;
    if (pxc_map_get(&c->singleton_running, key, &n)) {
      if (n <= 1) pxc_map_del(&c->singleton_running, key);
      else pxc_map_put(c, &c->singleton_running, key, n - 1); /* existing key: no growth */
    }
  }
  if (j->task_id != PX_NONE) {
    struct pxc_job *a = pxc_job_find(c, j->array_id);
    if (a && a->arr && a->arr->running) a->arr->running--;
  }
}

int px_core_job_ended(struct px_core *c, uint64_t id, enum px_job_state state, int32_t exit_code,
                      int64_t now, struct px_diag *d) {
  struct pxc_job *j = find_or_diag(c, id, d);
  if (!j) return PX_ENOENT;
  if (j->state != PX_JOB_RUNNING)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is not running", (unsigned long long)id);
  if (state < PX_JOB_COMPLETED || state > PX_JOB_PREEMPTED)
    return px_diag_set(d, PX_EINVAL, -1, "state: not a terminal state");
  bool ok = state == PX_JOB_COMPLETED && exit_code == 0;
  if (pxc_finished_add(c, id, (uint8_t)state, ok, now)) return PX_ENOMEM;
  stop_running(c, j, now);
  submit_count(c, j, 1);
  uint64_t array_id = j->task_id != PX_NONE ? j->array_id : 0;
  pxc_job_drop(c, j);
  if (array_id) pxc_array_task_ended(c, array_id, ok, now);
  return 0;
}

int px_core_job_requeue(struct px_core *c, uint64_t id, bool hold, int64_t now, struct px_diag *d) {
  struct pxc_job *j = find_or_diag(c, id, d);
  if (!j) return PX_ENOENT;
  if (j->state != PX_JOB_RUNNING)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is not running", (unsigned long long)id);
  if (pending_reserve(c)) return PX_ENOMEM;
  stop_running(c, j, now);
  j->state = PX_JOB_PENDING;
  j->restarts++;
  j->flags |= PXC_F_AGE_RESET;
  j->flags &= (uint8_t)~PXC_F_SIGNALLED;
  j->start_s = 0;
  j->eligible_s = 0;
  j->reason = PX_REASON_NONE;
  if (hold) j->flags |= PXC_F_HELD_USER;
  pxc_pending_add(c, j);
  return 0;
}

int px_core_update(struct px_core *c, uint64_t id, const struct px_job_update *u, int64_t now,
                   struct px_diag *d) {
  (void)now;
  struct pxc_job *j = find_or_diag(c, id, d);
  if (!j) return PX_ENOENT;
  if (j->state != PX_JOB_PENDING)
    return px_diag_set(d, PX_ESTATE, -1, "job %llu is not pending", (unsigned long long)id);
  if ((u->fields & PX_UPD_TIME_LIMIT) && u->time_limit_s <= 0)
    return px_diag_set(d, PX_EINVAL, -1, "time_limit: must be positive");
  if (u->fields & PX_UPD_NICE) j->nice = u->nice;
  if (u->fields & PX_UPD_TIME_LIMIT) j->time_limit_s = u->time_limit_s;
  if (u->fields & PX_UPD_PRIORITY) {
    j->admin_priority = u->priority;
    if (u->priority) j->flags |= PXC_F_ADMIN_PRIO;
    else j->flags &= (uint8_t)~PXC_F_ADMIN_PRIO;
  }
  return 0;
}

int px_core_node_event(struct px_core *c, uint32_t node, enum px_node_event ev, const char *reason,
                       int64_t now, struct px_diag *d) {
  (void)now;
  px_diag_clear(d);
  if (node >= c->nnodes) return px_diag_set(d, PX_ENOENT, -1, "node: no node %u", node);
  struct pxc_node *n = &c->nodes[node];
  char *copy = NULL;
  if (reason) {
    size_t len = strlen(reason) + 1;
    if (!(copy = pxc_alloc(c, len))) return PX_ENOMEM;
    memcpy(copy, reason, len);
  }
  pxc_index_node_remove(c, node);
  switch (ev) {
  case PX_NODE_EV_UP: n->down = false; break;
  case PX_NODE_EV_DOWN: n->down = true; break;
  case PX_NODE_EV_DRAIN: n->drain = true; break;
  case PX_NODE_EV_RESUME: n->down = n->drain = false; break;
  }
  pxc_index_node_add(c, node);
  if (copy || (!n->down && !n->drain)) {
    pxc_free(c, n->reason);
    n->reason = copy;
  }
  return 0;
}
