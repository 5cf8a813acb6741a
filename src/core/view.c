/*
 * view.c - read access for the server's snapshot and the tools: jobs with
 * their reason, `why`, priority factors and placement; nodes; statistics.
 * The `why` text is formatted on demand from the reason and two numbers kept
 * in the job, so pending jobs carry no strings.
 */
#include <stdio.h>
#include <string.h>

#include "core/core_int.h"

static const char *why_text(struct px_core *c, const struct pxc_job *j) {
  char *w = c->why;
  size_t n = sizeof c->why;
  const char *part = pxc_str(c, c->parts[j->part].name);
  switch ((enum px_reason)j->reason) {
  case PX_REASON_RESOURCES:
    snprintf(w, n, "place: partition %s has no room now for %u x (%u GPU, %u CPU)%s; waits for running jobs to end",
             part, j->shape.units, j->shape.gpu, j->shape.cpu, j->shape.per_node_max == 1 ? " on separate nodes" : "");
    break;
  case PX_REASON_TOPOLOGY:
    snprintf(w, n, "place: a placement exists but spans more than %u leaf switches; waits until %lld for one within %u",
             j->why_b, (long long)(j->eligible_s + j->switches_wait_s), j->why_b);
    break;
  case PX_REASON_PRIORITY:
    snprintf(w, n, "order: higher-priority jobs of partition %s are waiting for resources first", part);
    break;
  case PX_REASON_REQ_NODE_NOT_AVAIL:
    snprintf(w, n, "place: enough nodes of partition %s exist but some are down or drained", part);
    break;
  case PX_REASON_ASSOC_GRP_GRES: case PX_REASON_ASSOC_GRP_CPU: case PX_REASON_ASSOC_GRP_MEM:
  case PX_REASON_ASSOC_GRP_NODE: case PX_REASON_ASSOC_GRP_JOBS:
    snprintf(w, n, "admit: account %s is at its group limit (%u); waits for its running jobs to end",
             pxc_str(c, c->assoc[j->why_a].name), j->why_b);
    break;
  case PX_REASON_ASSOC_MAX_JOBS:
    snprintf(w, n, "admit: user already runs MaxJobs=%u jobs in this account", j->why_b);
    break;
  case PX_REASON_QOS_MAX_GRES_PER_USER: case PX_REASON_QOS_MAX_JOBS_PER_USER:
    snprintf(w, n, "admit: QoS %s per-user limit (%u) reached", pxc_str(c, c->qos[j->why_a].name), j->why_b);
    break;
  case PX_REASON_DEPENDENCY: snprintf(w, n, "gate: waiting for its dependencies"); break;
  case PX_REASON_DEP_NEVER: snprintf(w, n, "gate: a dependency can never be satisfied; cancel the job"); break;
  case PX_REASON_BEGIN_TIME: snprintf(w, n, "gate: begin time %lld not reached", (long long)j->begin_s); break;
  case PX_REASON_HELD_USER: snprintf(w, n, "gate: held by its user; release it to schedule"); break;
  case PX_REASON_HELD_ADMIN: snprintf(w, n, "gate: held by an administrator"); break;
  case PX_REASON_PARTITION_DOWN: snprintf(w, n, "gate: partition %s is down", part); break;
  case PX_REASON_PARTITION_TIME_LIMIT:
    snprintf(w, n, "gate: time limit %lld s is over partition %s MaxTime", (long long)j->time_limit_s, part);
    break;
  case PX_REASON_ARRAY_TASK_LIMIT: snprintf(w, n, "admit: the array already runs its %%N tasks"); break;
  default: w[0] = 0; break;
  }
  pxc_policy_why(c, j, w, n); /* issue 4: quota/reservation reasons, plan, what would help */
  return w[0] ? w : NULL;
}

static void fill_view(struct px_core *c, const struct pxc_job *j, struct px_job_view *v) {
  memset(v, 0, sizeof *v);
  v->job_id = j->id;
  v->array_job_id = j->arr || j->task_id != PX_NONE ? j->array_id : 0;
  v->array_task_id = j->task_id;
  if (j->arr) {
    v->array_tasks_pending = j->arr->ntasks - j->arr->next;
    v->array_max_running = j->arr->max_running;
  }
  v->state = (enum px_job_state)j->state;
  v->reason = j->state == PX_JOB_PENDING ? (enum px_reason)j->reason : PX_REASON_NONE;
  v->why = j->state == PX_JOB_PENDING ? why_text(c, j) : NULL;
  v->user = pxc_str(c, j->user);
  v->assoc = j->assoc;
  v->account = j->account;
  v->partition = j->part;
  v->qos = j->qos;
  v->held_user = j->flags & PXC_F_HELD_USER;
  v->held_admin = j->flags & PXC_F_HELD_ADMIN;
  pxc_prio_factors(c, j, c->now, &v->prio);
  if (j->state == PX_JOB_RUNNING) v->prio.priority = j->priority;
  v->submit_s = j->submit_s;
  v->eligible_s = j->eligible_s;
  v->begin_s = j->begin_s;
  v->start_s = j->start_s;
  v->time_limit_s = j->time_limit_s;
  v->nnodes = j->nalloc ? j->nalloc : j->shape.nmin;
  v->ncpus = (uint32_t)pxc_job_ncpu(j);
  v->ngpus = (uint32_t)pxc_job_ngpu(j);
  v->gpu_share = j->shape.share;
  for (uint32_t i = 0; i < j->nalloc; i++) v->mem_mib += j->alloc[i].mem_mib;
  v->alloc = j->alloc;
  v->nalloc = j->nalloc;
  v->cpu_words = j->cpu_words;
  v->restarts = j->restarts;
  v->expected_start_s = j->state == PX_JOB_PENDING ? j->expected_start_s : 0;
}

size_t px_core_njobs(const struct px_core *c) { return c->nlive; }

bool px_core_job_next(struct px_core *c, size_t *cursor, struct px_job_view *out) {
  while (*cursor < c->njob_slots) {
    const struct pxc_job *j = &c->jobs[(*cursor)++];
    /* free slots, and array records whose tasks have all started (their
     * tasks are listed; px_core_job_get still finds the record) */
    if (j->state == 0xff || (j->arr && j->state != PX_JOB_PENDING)) continue;
    fill_view(c, j, out);
    return true;
  }
  return false;
}

int px_core_job_get(struct px_core *c, uint64_t id, struct px_job_view *out) {
  const struct pxc_job *j = pxc_job_find(c, id);
  if (!j) return PX_ENOENT;
  fill_view(c, j, out);
  return 0;
}

uint32_t px_core_nnodes(const struct px_core *c) { return c->nnodes; }

int px_core_node_get(const struct px_core *c, uint32_t node, struct px_node_view *out) {
  if (node >= c->nnodes) return PX_ENOENT;
  const struct pxc_node *n = &c->nodes[node];
  *out = (struct px_node_view){
      .node = node,
      .avail = n->down ? PX_NODE_DOWN : n->drain ? PX_NODE_DRAIN : PX_NODE_UP,
      .reason = n->reason,
      .cpus = n->cpus,
      .cpus_alloc = n->cpus - n->cpu_free,
      .gpus = n->ngpu,
      .gpus_alloc = n->ngpu - (uint32_t)px_bits64_count(n->gpu_free) -
                    (uint32_t)px_bits64_count(n->gpu_bad & ~n->gpu_bad_held),
      .gpus_free = n->gpu_free,
      .gpus_bad = n->gpu_bad,
      .mem_mib = n->mem_mib,
      .mem_alloc_mib = n->mem_mib - n->mem_free,
      .njobs = n->njobs,
      .tenant = n->tenant,
      .gpus_shared = n->gpu_shared,
      .gpu_shares = n->shares,
  };
  for (px_bits64 m = n->gpu_shared; m; m &= m - 1) out->gpu_share_used += n->share_used[__builtin_ctzll(m)];
  return 0;
}

uint32_t px_core_node_index(const struct px_core *c, const char *name) {
  uint32_t id = pxc_lookup(c, name), node;
  return id != PX_NONE && pxc_map_get(&c->node_by_name, id, &node) ? node : PX_NONE;
}

void px_core_stats(const struct px_core *c, struct px_core_stats *out) {
  *out = c->stats;
  out->bytes_in_use = c->bytes;
  out->pending_records = c->npending;
}
