/*
 * gpu_health.c - GPU faults and the policy that answers them (docs/gpus.md),
 * on the main thread.
 *
 * An agent reports a fault (POST /v1/agent/gpu: an XID, double-bit ECC
 * errors, rows pending retirement, a lost GPU, throttling, NVLink errors).
 * The site's GpuFaultPolicy= (conf/gpu_policy.h) says what the fault's class
 * does: take the one GPU out of service, drain the node, requeue the jobs
 * on that GPU (a gang whole: every node of it is told to stop, the job
 * keeps its id and its restart count goes up) or end them NODE_FAIL. The
 * GPU's N-th fault within the quarantine window quarantines it: it stays
 * out through a node resume until an operator clears it (px_gpu_resume).
 *
 * The GPU's state is a journal record (PX_EV_GPU) applied by the one road
 * (events.c), so the core stops placing on it and a restarted server
 * rebuilds the same table (px_gpu_fold counts the faults there too, with
 * the record's time). Faults whose actions are "none" are logged and
 * counted for /metrics only.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"
#include "util/log.h"

struct px_sgpu {
  char state[16];          /* "OK", "UNUSABLE", "QUARANTINED" */
  char reason[160];        /* the last fault that changed it */
  uint32_t faults;         /* counted faults since window_start */
  int64_t window_start;
  int64_t since;           /* when state last changed (sinfo -R's TIMESTAMP for a GPU out) */
};

static struct px_sgpu *gpu_get(struct px_server *s, uint32_t node, uint32_t gpu, bool create) {
  struct px_snode *n = &s->nodes[node];
  if (!n->gpus && create) {
    uint32_t ng = s->conf->nodes[node].ngpu;
    if (!(n->gpus = calloc(ng ? ng : 1, sizeof *n->gpus))) return NULL;
    for (uint32_t i = 0; i < ng; i++) snprintf(n->gpus[i].state, sizeof n->gpus[i].state, "OK");
  }
  return n->gpus && gpu < s->conf->nodes[node].ngpu ? &n->gpus[gpu] : NULL;
}

void px_gpu_free_all(struct px_server *s) {
  for (uint32_t i = 0; s->nodes && i < s->conf->nnodes; i++) {
    free(s->nodes[i].gpus);
    s->nodes[i].gpus = NULL;
  }
}

/* Faults that count within the window as of now, before a new one. */
static uint32_t window_faults(const struct px_server *s, const struct px_sgpu *g, int64_t now) {
  int64_t w = s->conf->phalanx.gpu.quarantine_window_s;
  return g && now - g->window_start <= w ? g->faults : 0;
}

/* The same for the node's GPUs together (flapping). */
static uint32_t node_faults(const struct px_server *s, const struct px_snode *n, int64_t now) {
  return now - n->gpu_window <= s->conf->phalanx.gpu.quarantine_window_s ? n->gpu_faults : 0;
}

void px_gpu_fold(struct px_server *s, const struct px_event *ev, int64_t now) {
  struct px_sgpu *g = gpu_get(s, ev->node, ev->gpu, true);
  if (!g) {
    px_error("node %s: no memory for the state of GPU %u", s->conf->nodes[ev->node].name, ev->gpu);
    return;
  }
  struct px_snode *n = &s->nodes[ev->node];
  if (ev->gpu_fault) {
    g->faults = window_faults(s, g, now) + 1;
    if (g->faults == 1) g->window_start = now;
    n->gpu_faults = node_faults(s, n, now) + 1;
    if (n->gpu_faults == 1) n->gpu_window = now;
  } else if (ev->gpu_usable) {
    g->faults = 0; /* an operator put it back: a clean slate */
  }
  const char *state = ev->gpu_state ? ev->gpu_state : "OK";
  if (strcmp(g->state, state)) g->since = now;
  snprintf(g->state, sizeof g->state, "%s", state);
  snprintf(g->reason, sizeof g->reason, "%s", ev->reason ? ev->reason : "");
  s->nodes[ev->node].gpu_gen++;
  s->nodes_dirty = s->dirty = true;
}

static int gpu_event(struct px_server *s, uint32_t node, uint32_t gpu, const char *state, bool fault,
                     const char *reason, int64_t now) {
  struct px_event ev = {.kind = PX_EV_GPU, .node = node, .gpu = gpu, .gpu_usable = !strcmp(state, "OK"),
                        .gpu_fault = fault, .gpu_state = state, .reason = reason};
  struct px_event_result res;
  s->need_cycle = true;
  return px_events_accept(s, &ev, now, &res);
}

static bool holds_gpu(const struct px_sjob *j, uint32_t node, uint32_t gpu) {
  for (uint32_t i = 0; i < j->nalloc; i++)
    if (j->alloc[i].node == node && (j->alloc[i].gpus >> gpu & 1)) return true;
  return false;
}

/* A job on the faulty GPU: every node of it stops it at once (a node-fail
 * stop, whose end the agents do not report), then it is requeued whole or
 * ends NODE_FAIL with the fault as its reason. */
static int stop_job(struct px_server *s, struct px_sjob *j, unsigned actions, const char *why, int64_t now) {
  if ((actions & PX_GPU_ACT_GRACE) && j->spec.requeue && !j->preempting) {
    /* grace: SIGTERM now, SIGKILL after KillWait; the job keeps its
     * resources until its end comes, then goes back whole (handle.c) */
    px_warn("job %llu: stopped with grace to be requeued: %s", (unsigned long long)j->id, why);
    j->preempting = j->fault_requeue = true;
    j->preempt_cancel = false;
    px_nodes_stop(s, j, SIGTERM, "PREEMPTED");
    return 0;
  }
  px_nodes_stop(s, j, SIGKILL, "NODE_FAIL");
  s->need_cycle = true;
  struct px_event_result res;
  if ((actions & PX_GPU_ACT_REQUEUE) && j->spec.requeue) {
    px_warn("job %llu: requeued whole: %s", (unsigned long long)j->id, why);
    struct px_event ev = {.kind = PX_EV_REQUEUE, .job_id = j->id, .reason = "GpuFault"};
    return px_events_accept(s, &ev, now, &res);
  }
  px_warn("job %llu: ends NODE_FAIL: %s", (unsigned long long)j->id, why);
  struct px_event ev = {.kind = PX_EV_END, .job_id = j->id, .state = PX_JOB_NODE_FAIL, .reason = why,
                        .peak_mem_mib = j->peak_mem_mib, .cpu_time_ms = j->cpu_time_ms};
  int rc = px_events_accept(s, &ev, now, &res);
  if (!rc) rc = px_u64vec_push(&s->acct_pending, j->id);
  return rc;
}

static int stop_jobs_on(struct px_server *s, uint32_t node, uint32_t gpu, unsigned actions, const char *why,
                        int64_t now) {
  int rc = 0;
  for (size_t i = 0; i < s->njobs && !rc; i++) {
    struct px_sjob *j = s->jobs[i];
    if (j->state == PX_JOB_RUNNING && holds_gpu(j, node, gpu)) rc = stop_job(s, j, actions, why, now);
  }
  return rc;
}

/* The state a fault leaves the GPU in: never better than it was. */
static const char *next_state(const struct px_sgpu *g, unsigned actions, bool quarantine) {
  if (quarantine || (g && !strcmp(g->state, "QUARANTINED"))) return "QUARANTINED";
  if ((actions & PX_GPU_ACT_GPU) || (g && !strcmp(g->state, "UNUSABLE"))) return "UNUSABLE";
  return "OK";
}

static void fault_text(const struct px_gpu_fault *f, char *buf, size_t size) {
  const char *name = px_gpu_fault_name(f->fault);
  if (f->fault == PX_GPU_FAULT_XID || f->fault == PX_GPU_FAULT_ECC || f->fault == PX_GPU_FAULT_NVLINK)
    snprintf(buf, size, "%s %lld%s%.100s", name, (long long)f->code, f->detail[0] ? ": " : "", f->detail);
  else
    snprintf(buf, size, "%s%s%.100s", name, f->detail[0] ? ": " : "", f->detail);
}

int px_gpu_fault(struct px_server *s, const struct px_gpu_fault *f, int64_t now, char *msg, size_t size) {
  int idx = px_node_index(s, f->node);
  if (idx < 0) return snprintf(msg, size, "node: %.64s is not configured", f->node), PX_ENOENT;
  uint32_t node = (uint32_t)idx;
  if (f->gpu >= s->conf->nodes[node].ngpu)
    return snprintf(msg, size, "gpu: node %.64s has %u GPUs, no index %u", f->node, s->conf->nodes[node].ngpu,
                    f->gpu),
           PX_EINVAL;
  const struct px_gpu_policy *pol = &s->conf->phalanx.gpu;
  unsigned actions = px_gpu_policy_actions(pol, f->fault, f->code);
  char what[160], why[256], acts[48];
  fault_text(f, what, sizeof what);
  s->gpu_faults[f->fault]++;
  s->dirty = true; /* the counters in /metrics */
  px_gpu_actions_text(actions, acts, sizeof acts);
  px_warn("node %s GPU %u: %s (policy: %s)", f->node, f->gpu, what, acts);
  if (!actions) return 0;
  struct px_sgpu *g = gpu_get(s, node, f->gpu, false);
  bool quarantine = pol->quarantine_faults && window_faults(s, g, now) + 1 >= pol->quarantine_faults;
  if (quarantine) actions |= PX_GPU_ACT_GPU;
  /* a node whose GPUs keep failing (flapping) is drained, whatever the class says */
  bool flapping = pol->node_flap_faults && node_faults(s, &s->nodes[node], now) + 1 >= pol->node_flap_faults;
  if (flapping) actions |= PX_GPU_ACT_DRAIN;
  const char *state = next_state(g, actions, quarantine);
  snprintf(why, sizeof why, "GPU %u: %s%s%s", f->gpu, what, quarantine ? " (quarantined: repeated faults)" : "",
           flapping ? " (node flapping: repeated GPU faults)" : "");
  int rc = gpu_event(s, node, f->gpu, state, true, why, now);
  if (!rc && (actions & PX_GPU_ACT_DRAIN) && !s->nodes[node].admin_drain)
    rc = px_node_event(s, PX_EV_NODE_DRAIN, node, why, NULL, PX_DRAIN_GPU_FAULT, now);
  if (!rc && (actions & (PX_GPU_ACT_REQUEUE | PX_GPU_ACT_FAIL))) rc = stop_jobs_on(s, node, f->gpu, actions, why, now);
  if (rc) snprintf(msg, size, "the fault could not be recorded: %s", px_strerror(rc));
  return rc;
}

int px_gpu_resume(struct px_server *s, uint32_t node, int gpu, bool quarantined_too, int64_t now) {
  const struct px_snode *n = &s->nodes[node];
  int rc = 0;
  for (uint32_t i = 0; n->gpus && i < s->conf->nodes[node].ngpu && !rc; i++) {
    const char *st = n->gpus[i].state;
    if ((gpu >= 0 && (uint32_t)gpu != i) || !strcmp(st, "OK")) continue;
    if (!strcmp(st, "QUARANTINED") && !quarantined_too) continue;
    px_info("node %s GPU %u: back in service (was %s)", s->conf->nodes[node].name, i, st);
    rc = gpu_event(s, node, i, "OK", false, "", now);
  }
  return rc;
}

uint32_t px_gpu_health_text(const struct px_server *s, uint32_t node, char *buf, size_t size, char *reason,
                             size_t rsize, int64_t *since) {
  const struct px_snode *n = &s->nodes[node];
  size_t used = 0, rused = 0;
  uint32_t bad = 0;
  buf[0] = reason[0] = '\0';
  *since = 0;
  for (uint32_t i = 0; n->gpus && i < s->conf->nodes[node].ngpu; i++) {
    const struct px_sgpu *g = &n->gpus[i];
    if (!strcmp(g->state, "OK")) continue;
    bad++;
    if (g->since > *since) *since = g->since;
    if (used < size)
      used += (size_t)snprintf(buf + used, size - used, "%s%u:%s(%s)", used ? "," : "", i, g->state, g->reason);
    if (rused < rsize) rused += (size_t)snprintf(reason + rused, rsize - rused, "%s%s", rused ? "; " : "", g->reason);
  }
  return bad;
}

/* Appends f(fmt, ...) output through put; the caller's text buffer. */
void px_gpu_metrics(const struct px_server *s, void (*put)(void *t, const char *fmt, ...), void *t) {
  put(t, "# HELP phalanx_gpu_health GPUs out of service (1 per GPU, by state); healthy GPUs are not listed.\n"
         "# TYPE phalanx_gpu_health gauge\n");
  for (uint32_t node = 0; node < s->conf->nnodes; node++) {
    const struct px_snode *n = &s->nodes[node];
    for (uint32_t i = 0; n->gpus && i < s->conf->nodes[node].ngpu; i++)
      if (strcmp(n->gpus[i].state, "OK"))
        put(t, "phalanx_gpu_health{node=\"%s\",gpu=\"%u\",state=\"%s\"} 1\n", s->conf->nodes[node].name, i,
            n->gpus[i].state);
  }
  put(t, "# HELP phalanx_gpu_faults_total GPU faults reported by agents since the server started.\n"
         "# TYPE phalanx_gpu_faults_total counter\n");
  for (unsigned c = 0; c < PX_GPU_FAULT_COUNT; c++)
    put(t, "phalanx_gpu_faults_total{fault=\"%s\"} %llu\n", px_gpu_fault_name((enum px_gpu_fault_class)c),
        (unsigned long long)s->gpu_faults[c]);
}
