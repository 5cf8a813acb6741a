/*
 * submit.c - pxc_submit (PX_EV_SUBMIT): from a job spec to a pending record. Resolves
 * who and where (association, QoS, partition), turns Slurm's request forms
 * into a shape (jobs.c's records keep only that), parses the expressions,
 * and rejects with a precise reason what can never run: partition and QoS
 * limits, submit limits, and shapes no set of the partition's nodes can
 * hold even when idle (cached per shape).
 */
#include <stdio.h>
#include <string.h>

#include "core/event.h"
#include "core/policy.h"

static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* CPUs of a unit holding g GPUs: --cpus-per-gpu's, else the tasks' (cpu_tasks). */
static uint32_t unit_cpus(const struct px_jobspec *s, uint32_t g, uint32_t cpu_tasks) {
  return s->cpus_per_gpu && g ? g * s->cpus_per_gpu : cpu_tasks;
}

/* --gpus=0.5: one unit of one GPU's share on one node, its tasks' CPUs
 * (docs/gpus.md). Whole GPUs besides, or more than one node, are refused. */
static int share_shape(const struct px_jobspec *s, uint32_t nreq, struct pxc_shape *o, struct px_diag *d) {
  uint32_t nodes = s->nodes_max > s->nodes_min ? s->nodes_max : s->nodes_min;
  if (s->gpu_share >= PXC_SHARE_UNITS)
    return px_diag_set(d, PX_EINVAL, -1, "gpu_share: %u hundredths is not a fraction of one GPU (1 to 99; "
                       "--gpus=0.01 to 0.99)", s->gpu_share);
  if (s->gpus || s->gpus_per_node || s->gpus_per_task)
    return px_diag_set(d, PX_EINVAL, -1, "gpu_share: a fraction of one GPU cannot be combined with whole GPUs "
                       "(gpus, gpus_per_node, gpus_per_task)");
  if (nodes > 1 || nreq > 1)
    return px_diag_set(d, PX_EINVAL, -1, "gpu_share: a fraction of one GPU runs on one node, the job asks for %u "
                       "(gangs take whole GPUs)", nodes > nreq ? nodes : nreq);
  uint32_t t = s->ntasks ? s->ntasks : 1, cpt = s->cpus_per_task ? s->cpus_per_task : 1;
  *o = (struct pxc_shape){.units = 1, .per_node_max = 1, .nmin = 1, .nmax = 1, .gpu = 1, .share = (uint8_t)s->gpu_share,
                          .cpu = s->cpus_per_gpu ? s->cpus_per_gpu : t * cpt};
  o->mem = s->mem_per_node_mib ? s->mem_per_node_mib
           : s->mem_per_cpu_mib ? s->mem_per_cpu_mib * o->cpu
                                : s->mem_per_gpu_mib; /* a fraction's --mem-per-gpu: its whole ask */
  o->mem_prop = o->mem == 0;
  return 0;
}

/* nreq: the --nodelist's node count, which is the job's node count (Slurm
 * raises -N to it; a smaller maximum is Slurm's "invalid number of nodes"). */
static int shape_from_spec(const struct px_jobspec *s, uint32_t nreq, struct pxc_shape *o, struct px_diag *d) {
  uint32_t cpt = s->cpus_per_task ? s->cpus_per_task : 1;
  memset(o, 0, sizeof *o);
  if (s->gpu_share) return share_shape(s, nreq, o, d);
  if (s->nodes_max && s->nodes_min && s->nodes_max < s->nodes_min)
    return px_diag_set(d, PX_EINVAL, -1, "nodes: max %u below min %u", s->nodes_max, s->nodes_min);
  if (s->cpus_per_gpu && s->cpus_per_task)
    return px_diag_set(d, PX_EINVAL, -1, "cpus_per_gpu: mutually exclusive with cpus_per_task");
  if (nreq && ((s->nodes_max ? s->nodes_max : s->nodes_min) > nreq || (s->nodes_max && s->nodes_max < nreq)))
    return px_diag_set(d, PX_EINVAL, -1,
                       "nodelist: names %u node(s) and the job asks for %u; a job with a node list runs on "
                       "exactly those nodes", nreq, s->nodes_max ? s->nodes_max : s->nodes_min);
  if (nreq && s->ntasks && s->ntasks < nreq)
    return px_diag_set(d, PX_EINVAL, -1, "nodelist: %u task(s) cannot cover the %u listed nodes", s->ntasks, nreq);
  if (s->nodes_min || nreq || s->ntasks_per_node || s->gpus_per_node) {
    uint32_t n = nreq ? nreq : s->nodes_min;
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
                            .cpu = unit_cpus(s, gpn, tpn * cpt)};
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
                            .cpu = unit_cpus(s, 1, 0), .base_cpu = s->cpus_per_gpu ? 0 : cpt,
                            .mem = s->mem_per_gpu_mib};
  } else {
    uint32_t gpt = s->gpus_per_task;
    if (!gpt && s->gpus) {
      if (s->gpus % t)
        return px_diag_set(d, PX_EINVAL, -1, "gpus: %u GPUs do not split evenly over %u tasks", s->gpus, t);
      gpt = s->gpus / t;
    }
    *o = (struct pxc_shape){.units = t, .per_node_max = UINT32_MAX, .nmin = 1,
                            .nmax = s->nodes_max ? s->nodes_max : UINT32_MAX, .gpu = gpt,
                            .cpu = unit_cpus(s, gpt, cpt)};
    o->mem = s->mem_per_cpu_mib ? s->mem_per_cpu_mib * o->cpu : s->mem_per_gpu_mib * gpt;
  }
  if (t == 1 && o->units == 1) o->nmax = 1;
  if (o->nmax == 1 && s->mem_per_node_mib) o->mem = s->mem_per_node_mib;
  o->mem_prop = o->mem == 0;
  return 0;
}

/* --nodelist: every node in the partition, and none also excluded (Slurm:
 * "Invalid node name specified"). */
static int check_node_lists(struct px_core *c, const struct pxc_job *j, struct px_diag *d) {
  for (uint32_t k = 0; k < j->nreq; k++) {
    if (j->nexcl && pxc_excluded(j, j->req[k]))
      return px_diag_set(d, PX_EINVAL, -1, "nodelist: node %s is also excluded", pxc_str(c, c->nodes[j->req[k]].name));
    if (!pxc_node_in_part(c, j->req[k], j->part))
      return px_diag_set(d, PX_EINVAL, -1, "nodelist: node %s is not in partition %s", pxc_str(c, c->nodes[j->req[k]].name),
                         pxc_str(c, c->parts[j->part].name));
  }
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

/* A time limit in a refusal: "N s", or UNLIMITED (not INT64_MAX seconds). */
static const char *limit_text(int64_t s, char *buf, size_t size) {
  if (s == PX_TIME_UNLIMITED) return "UNLIMITED";
  snprintf(buf, size, "%lld s", (long long)s);
  return buf;
}

/* Limits a job can never get past: reject at submit. */
static int check_static_limits(struct px_core *c, const struct pxc_job *j, uint32_t ntasks,
                               enum px_reason *rj, struct px_diag *d) {
  const struct pxc_part *p = &c->parts[j->part];
  const struct pxc_qos *q = &c->qos[j->qos];
  const struct pxc_assoc *u = &c->assoc[j->assoc];
  uint64_t g = pxc_job_ngpu(j);
  bool service = j->flags & PXC_F_SERVICE;
  char buf[32];
  if (j->time_limit_s > p->max_time_s && !service) {
    reject(rj, PX_REASON_PARTITION_TIME_LIMIT, 0);
    return px_diag_set(d, PX_ELIMIT, -1, "time_limit: %s over partition %s MaxTime %lld s",
                       limit_text(j->time_limit_s, buf, sizeof buf), pxc_str(c, p->name), (long long)p->max_time_s);
  }
  if (j->time_limit_s > q->max_wall_s && !service) {
    reject(rj, PX_REASON_QOS_MAX_WALL, 0);
    return px_diag_set(d, PX_ELIMIT, -1, "time_limit: %s over QoS %s MaxWall %lld s",
                       limit_text(j->time_limit_s, buf, sizeof buf), pxc_str(c, q->name), (long long)q->max_wall_s);
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
  if (j->shape.share) {
    reject(rj, PX_REASON_RESOURCES, 0);
    return px_diag_set(d, PX_ELIMIT, -1, "gpu_share: partition %s has no node offering GPU shares (GpuShares=YES) "
                       "with %u CPU(s)%s%s%s", pxc_str(c, c->parts[j->part].name), j->shape.cpu,
                       j->gpu_type != PX_NONE ? " and GPUs of type " : "",
                       j->gpu_type != PX_NONE ? pxc_str(c, j->gpu_type) : "",
                       j->constraint != PX_NONE ? " with the constraint" : "");
  }
  reject(rj, j->constraint != PX_NONE ? PX_REASON_BAD_CONSTRAINTS : PX_REASON_RESOURCES, 0);
  return px_diag_set(d, PX_ELIMIT, -1,
                     "gpus: partition %s has no %u node(s) that can hold %u GPU(s)%s%s, %u CPU(s) "
                     "each%s%s",
                     pxc_str(c, c->parts[j->part].name), j->shape.nmin,
                     j->shape.per_node_max == 1 ? j->shape.gpu : j->shape.units * j->shape.gpu,
                     j->gpu_type != PX_NONE ? " of type " : "",
                     j->gpu_type != PX_NONE ? pxc_str(c, j->gpu_type) : "",
                     j->shape.cpu ? j->shape.cpu : j->shape.base_cpu,
                     j->constraint != PX_NONE ? " with the constraint" : "",
                     j->nexcl || j->nreq || j->resv != PX_NONE ? " among the nodes its nodelist, exclude and "
                                                                 "reservation leave" : "");
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
  j->gpu_type = j->constraint = j->name = j->resv = PX_NONE;
  if (s->gpu_type) {
    j->gpu_type = pxc_lookup(c, s->gpu_type);
    bool any = false;
    for (uint32_t n = 0; n < c->nnodes && j->gpu_type != PX_NONE && !any; n++)
      any = pxc_type_gpus(&c->nodes[n], j->gpu_type) != 0;
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
  if (s->exclude && *s->exclude &&
      (rc = pxc_parse_nodes(c, "exclude", s->exclude, !!s->array, &j->excl, &j->nexcl, d)))
    return rc;
  if (s->nodelist && *s->nodelist &&
      ((rc = pxc_parse_nodes(c, "nodelist", s->nodelist, !!s->array, &j->req, &j->nreq, d)) ||
       (rc = check_node_lists(c, j, d))))
    return rc;
  if (s->reservation && *s->reservation) {
    if ((rc = pxc_resv_check_use(c, j, s->reservation, d))) return rc;
    j->resv = pxc_lookup(c, s->reservation);
  }
  if (s->array && (rc = pxc_parse_array(c, s->array, &j->arr, d))) return rc;
  if (s->dependency && *s->dependency && (rc = pxc_parse_deps(c, s->dependency, &j->deps, d))) return rc;
  return 0;
}

int pxc_submit(struct px_core *c, uint64_t job_id, const struct px_jobspec *s, int64_t now,
                   enum px_reason *rj, struct px_diag *d) {
  struct pxc_job j = {0};
  int rc;
  px_diag_clear(d);
  reject(rj, PX_REASON_NONE, 0);
  if (job_id == 0 || pxc_job_find(c, job_id))
    return px_diag_set(d, PX_EEXIST, -1, "job_id: %llu %s", (unsigned long long)job_id,
                       job_id ? "already in use" : "must be positive");
  if ((rc = resolve_identity(c, s, &j, rj, d)) || (rc = px_jobspec_check_launch(s, d))) return rc;
  if ((rc = parse_exprs(c, s, &j, rj, d)) || (rc = shape_from_spec(s, j.nreq, &j.shape, d))) goto fail;
  j.shape.exclusive = s->exclusive || c->parts[j.part].whole_nodes;
  if (j.shape.share && j.shape.exclusive) {
    rc = px_diag_set(d, PX_EINVAL, -1, "gpu_share: a fraction of one GPU shares it; --exclusive (or partition %s's "
                     "OverSubscribe=EXCLUSIVE) asks for whole nodes", pxc_str(c, c->parts[j.part].name));
    goto fail;
  }
  /* No --time: the partition's DefaultTime, capped by the QoS MaxWall as Slurm does. */
  j.time_limit_s = s->time_limit_s > 0 ? s->time_limit_s : c->parts[j.part].default_time_s;
  if (s->time_limit_s <= 0 && j.time_limit_s > c->qos[j.qos].max_wall_s)
    j.time_limit_s = c->qos[j.qos].max_wall_s;
  if (s->time_min_s > j.time_limit_s) {
    rc = px_diag_set(d, PX_EINVAL, -1, "time_min: %lld s over the job's time limit %lld s",
                     (long long)s->time_min_s, (long long)j.time_limit_s);
    goto fail;
  }
  j.time_min_s = s->time_min_s;
  if (s->service && *s->service) j.flags = PXC_F_SERVICE;
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
      (rc = pxc_pending_reserve(c)) || (rc = pxc_slot_new(c, &slot)))
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
  j.flags |= (uint8_t)((s->hold ? PXC_F_HELD_USER | PXC_F_AGE_RESET : 0) | (s->requeue ? PXC_F_REQUEUE : 0));
  j.signal_num = s->signal_num;
  j.signal_time_s = s->signal_time_s;
  c->jobs[slot] = j;
  pxc_map_put(c, &c->job_by_id, job_id, slot);
  pxc_pending_add(c, &c->jobs[slot]);
  c->nlive++;
  if (j.signal_num) c->pol->any_signal = true; /* from now on cycles look for --signal times */
  c->assoc[j.assoc].user_submit += ntasks;
  pxc_quser_get(c, j.qos, j.user)->submit += ntasks;
  return 0;
fail:
  pxc_free(c, j.arr);
  pxc_free(c, j.deps);
  pxc_free(c, j.excl);
  pxc_free(c, j.req);
  return rc;
}

/* A placement read only (place.c's scratch, nothing taken), and the
 * reservations' say on it, as the cycle asks before a start. */
int px_core_job_fits_now(struct px_core *c, uint64_t job_id, int64_t now, uint32_t *nodes, uint32_t max,
                         uint32_t *nnodes) {
  struct pxc_job *j = pxc_job_find(c, job_id);
  *nnodes = 0;
  if (!j || j->state != PX_JOB_PENDING || j->arr) return PX_ENOENT;
  struct pxc_place_result res;
  int rc = pxc_place_find(c, j, &res);
  if (rc) return rc < 0 ? rc : 0;
  if (pxc_resv_filter(c, j, &res, now) != PX_REASON_NONE) return 0;
  for (uint32_t i = 0; i < res.nnodes && i < max; i++) nodes[i] = res.nodes[i];
  *nnodes = res.nnodes < max ? res.nnodes : max;
  return 0;
}
