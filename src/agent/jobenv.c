/*
 * jobenv.c - a task's environment from its launch order (jobenv.h).
 *
 * Value forms follow the Slurm 22.05 capture in the research notes: per-node
 * lists compressed ("1(x2)"), hostlists compressed ("gpu[0001-0002]"), GPU
 * lists comma-separated, SLURM_NODE_ALIASES the literal "(null)". Variables
 * Slurm sets only when asked (SLURM_NTASKS, SLURM_CPUS_PER_TASK, the GPU
 * lists) follow the same conditions, judged from the order's fields.
 */
#include "agent/jobenv.h"


#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/hostnames.h"

static char *kv(const char *key, const char *value) {
  size_t n = strlen(key) + strlen(value) + 2;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s=%s", key, value);
  return s;
}

const char *px_jobenv_get(const struct px_strvec *env, const char *key) {
  size_t klen = strlen(key);
  for (size_t i = 0; i < env->len && env->v[i]; i++)
    if (strncmp(env->v[i], key, klen) == 0 && env->v[i][klen] == '=') return env->v[i] + klen + 1;
  return NULL;
}

int px_jobenv_set(struct px_strvec *env, const char *key, const char *value) {
  char *s = kv(key, value);
  if (!s) return PX_ENOMEM;
  size_t klen = strlen(key);
  for (size_t i = 0; i < env->len && env->v[i]; i++) {
    if (strncmp(env->v[i], key, klen) == 0 && env->v[i][klen] == '=') {
      free(env->v[i]);
      env->v[i] = s;
      return 0;
    }
  }
  /* Keep the terminating NULL last: s takes its slot, NULL moves up one. */
  size_t n = env->len;
  bool terminated = n && !env->v[n - 1];
  if (px_strvec_reserve(env, n + 2)) {
    free(s);
    return PX_ENOMEM;
  }
  if (terminated) n--;
  env->v[n] = s;
  env->v[n + 1] = NULL;
  env->len = n + 2;
  return 0;
}

/* Tasks dealt per round robin: 0 for block (-m block, or none), 1 for
 * cyclic, N for plane=N. */
static uint32_t plane_of(const char *dist) {
  if (!dist) return 0;
  if (!strncasecmp(dist, "cyclic", 6)) return 1;
  if (!strncasecmp(dist, "plane=", 6)) return (uint32_t)strtoul(dist + 6, NULL, 10);
  return 0;
}

/* Block: the nodes before this one hold the lower ranks. Cyclic and plane
 * (Slurm's -m): ranks are dealt in planes of P over the nodes in order,
 * skipping nodes that are full; this task's plane is round b = local/P, so
 * the ranks before it are every node's tasks of rounds < b plus the round-b
 * plane of the nodes before this one. */
uint32_t px_jobenv_proc_id(const struct px_launch *l, uint32_t local_id) {
  uint32_t plane = plane_of(l->distribution), base = 0;
  if (!plane) {
    for (uint32_t i = 0; i < l->node_rank && i < l->nnodes; i++) base += l->tasks_per_node[i];
    return base + local_id;
  }
  uint32_t earlier = local_id / plane * plane;
  for (uint32_t i = 0; i < l->nnodes; i++) {
    uint32_t c = l->tasks_per_node[i], left = c > earlier ? c - earlier : 0;
    base += c < earlier ? c : earlier;
    if (i < l->node_rank) base += left < plane ? left : plane;
  }
  return base + local_id % plane;
}

/* The job-wide SLURM_<name> is also PHALANX_<name>. */
static int set2(struct px_strvec *e, const char *name, const char *value) {
  char k1[64], k2[64];
  snprintf(k1, sizeof k1, "SLURM_%s", name);
  snprintf(k2, sizeof k2, "PHALANX_%s", name);
  int rc = px_jobenv_set(e, k1, value);
  return rc ? rc : px_jobenv_set(e, k2, value);
}

static int set2u(struct px_strvec *e, const char *name, unsigned long long v) {
  char b[24];
  snprintf(b, sizeof b, "%llu", v);
  return set2(e, name, b);
}

static void u32_list(const uint32_t *v, uint32_t n, bool from_zero, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < n && len < size; i++) {
    int w = snprintf(buf + len, size - len, "%s%u", i ? "," : "", from_zero ? i : v[i]);
    if (w < 0) break;
    len += (size_t)w;
  }
}

/* The layout options, only when given (Slurm's batch environment: --open-mode
 * as its letter, SLURM_CPUS_PER_GPU, SLURM_HINT, SLURM_DISTRIBUTION). */
static int env_layout(struct px_strvec *e, const struct px_launch *l) {
  int rc = 0;
  if (l->open_mode) rc |= set2(e, "OPEN_MODE", strcmp(l->open_mode, "append") ? "t" : "a");
  if (l->cpus_per_gpu) rc |= set2u(e, "CPUS_PER_GPU", l->cpus_per_gpu);
  if (l->hint) rc |= set2(e, "HINT", l->hint);
  if (l->distribution) rc |= set2(e, "DISTRIBUTION", l->distribution);
  return rc ? PX_ENOMEM : 0;
}

/* Identity, shape and placement of the job: the same for every task. */
static int env_job(struct px_strvec *e, const struct px_launch *l, const struct px_jobenv_site *s) {
  int rc = 0;
  char buf[4096];
  rc |= set2u(e, "JOB_ID", l->job_id) | set2u(e, "JOBID", l->job_id);
  rc |= set2(e, "JOB_NAME", l->name ? l->name : "wrap");
  rc |= set2(e, "JOB_USER", l->user) | set2u(e, "JOB_UID", l->uid) | set2u(e, "JOB_GID", l->gid);
  if (l->account) rc |= set2(e, "JOB_ACCOUNT", l->account);
  if (l->partition) rc |= set2(e, "JOB_PARTITION", l->partition);
  if (l->qos) rc |= set2(e, "JOB_QOS", l->qos);
  if (s->cluster) rc |= set2(e, "CLUSTER_NAME", s->cluster);
  if (l->submit_dir) rc |= set2(e, "SUBMIT_DIR", l->submit_dir);
  px_agent_hostlist(l->nodes, l->nnodes, buf, sizeof buf);
  rc |= set2(e, "JOB_NODELIST", buf) | set2(e, "NODELIST", buf);
  rc |= set2u(e, "JOB_NUM_NODES", l->nnodes) | set2u(e, "NNODES", l->nnodes);
  px_agent_count_list(l->tasks_per_node, l->nnodes, buf, sizeof buf);
  rc |= set2(e, "TASKS_PER_NODE", buf);
  if (l->ntasks > 1) {
    rc |= set2u(e, "NTASKS", l->ntasks) | set2u(e, "NPROCS", l->ntasks);
    bool uniform = true;
    for (uint32_t i = 1; i < l->nnodes; i++) uniform &= l->tasks_per_node[i] == l->tasks_per_node[0];
    if (uniform) rc |= set2u(e, "NTASKS_PER_NODE", l->tasks_per_node[0]);
  }
  if (l->cpus_per_task) rc |= set2u(e, "CPUS_PER_TASK", l->cpus_per_task);
  /* The order carries this node's CPU count; the core places gangs evenly,
   * so the other nodes hold the same (or tasks x cpus_per_task when unset). */
  uint32_t *per = calloc(l->nnodes, sizeof *per);
  if (!per) return PX_ENOMEM;
  for (uint32_t i = 0; i < l->nnodes; i++)
    per[i] = l->ncpus ? l->ncpus : l->tasks_per_node[i] * (l->cpus_per_task ? l->cpus_per_task : 1);
  px_agent_count_list(per, l->nnodes, buf, sizeof buf);
  free(per);
  rc |= set2(e, "JOB_CPUS_PER_NODE", buf);
  rc |= set2u(e, "CPUS_ON_NODE", l->ncpus ? l->ncpus : l->tasks_per_node[l->node_rank]);
  rc |= set2(e, "NODE_ALIASES", "(null)") | set2(e, "PRIO_PROCESS", "0");
  rc |= set2(e, "TOPOLOGY_ADDR", s->node) | set2(e, "TOPOLOGY_ADDR_PATTERN", "node");
  rc |= px_jobenv_set(e, "SLURMD_NODENAME", s->node) | px_jobenv_set(e, "PHALANX_NODENAME", s->node);
  if (l->array_job_id) rc |= set2u(e, "ARRAY_JOB_ID", l->array_job_id) | set2u(e, "ARRAY_TASK_ID", l->array_task_id);
  if (l->restart_count) rc |= set2u(e, "RESTART_COUNT", l->restart_count);
  return rc ? PX_ENOMEM : env_layout(e, l);
}

/* MIG instances are named by UUID ("MIG-..."), not by index: the job's
 * indices looked up in the node's UUID file, one UUID per line. */
static int mig_list(const char *file, const uint32_t *gpus, uint32_t n, char *buf, size_t size) {
  char uuids[64][96];
  uint32_t nu = 0;
  FILE *f = fopen(file, "re");
  if (!f) return PX_EIO;
  while (nu < 64 && fgets(uuids[nu], sizeof uuids[nu], f)) uuids[nu][strcspn(uuids[nu], "\n")] = 0, nu++;
  fclose(f);
  size_t len = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < n; i++) {
    if (gpus[i] >= nu) return PX_ENOENT;
    len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", i ? "," : "", uuids[gpus[i]]);
  }
  return len < size ? 0 : PX_EINVAL;
}

/* A fractional job (docs/gpus.md): its share, the MPS limits for it (the
 * one GPU it sees is the client's device 0), and plainly whether anything
 * enforces them. Under MPS the daemon was started with only this GPU
 * visible and renumbers it 0, so CUDA_VISIBLE_DEVICES must say 0 there. */
static int env_share(struct px_strvec *e, const struct px_launch *l, const struct px_jobenv_site *s) {
  if (!l->gpu_share) return 0;
  char b[256];
  snprintf(b, sizeof b, "0.%02u", l->gpu_share);
  int rc = px_jobenv_set(e, "PHALANX_GPU_SHARE", b);
  snprintf(b, sizeof b, "%u", l->gpu_share);
  rc |= px_jobenv_set(e, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", b);
  if (s->gpu_mem_mib) {
    snprintf(b, sizeof b, "0=%lluMB", (unsigned long long)(s->gpu_mem_mib * l->gpu_share / 100));
    rc |= px_jobenv_set(e, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", b);
  }
  if (s->mps_pipe) {
    char log[4200];
    snprintf(log, sizeof log, "%s/log", s->mps_pipe);
    rc |= px_jobenv_set(e, "CUDA_MPS_PIPE_DIRECTORY", s->mps_pipe) | px_jobenv_set(e, "CUDA_MPS_LOG_DIRECTORY", log);
    rc |= px_jobenv_set(e, "CUDA_VISIBLE_DEVICES", "0");
    rc |= px_jobenv_set(e, "PHALANX_GPU_SHARE_ENFORCED", "mps: device memory and SM share capped by CUDA MPS; no fault, "
                                        "bandwidth or cache isolation");
  } else {
    rc |= px_jobenv_set(e, "PHALANX_GPU_SHARE_ENFORCED", "none: no CUDA MPS on this node; the memory and SM limits are only "
                                        "visible (other jobs share this GPU unrestricted)");
  }
  return rc ? PX_ENOMEM : 0;
}

/* The GPU lists: absent when the job has no GPU on this node. */
static int env_gpus(struct px_strvec *e, const struct px_launch *l, const struct px_jobenv_site *s) {
  if (!l->ngpus) return 0;
  char phys[1024], vis[6400];
  u32_list(l->gpus, l->ngpus, false, phys, sizeof phys);
  if (!s->gpu_uuids || mig_list(s->gpu_uuids, l->gpus, l->ngpus, vis, sizeof vis))
    u32_list(l->gpus, l->ngpus, s->renumber_gpus, vis, sizeof vis);
  int rc = set2(e, "JOB_GPUS", phys) | set2u(e, "GPUS_ON_NODE", l->ngpus);
  rc |= px_jobenv_set(e, "CUDA_VISIBLE_DEVICES", vis) | px_jobenv_set(e, "GPU_DEVICE_ORDINAL", vis);
  rc |= px_jobenv_set(e, "ROCR_VISIBLE_DEVICES", vis);
  return rc ? PX_ENOMEM : env_share(e, l, s);
}

/* Ranks of this task, Slurm's and PyTorch's. */
static int env_task(struct px_strvec *e, const struct px_launch *l, const struct px_jobenv_site *s,
                    const struct px_task_ident *t) {
  char b[256];
  int rc = set2u(e, "PROCID", t->proc_id) | set2u(e, "LOCALID", t->local_id);
  rc |= set2u(e, "NODEID", t->batch ? 0 : l->node_rank);
  if (t->batch) {
    rc |= set2(e, "GTIDS", "0") | px_jobenv_set(e, "ENVIRONMENT", "BATCH");
    rc |= px_jobenv_set(e, "HOSTNAME", s->node);
  } else {
    size_t len = 0;
    b[0] = '\0';
    for (uint32_t i = 0; i < t->local_tasks && len < sizeof b; i++)
      len += (size_t)snprintf(b + len, sizeof b - len, "%s%u", i ? "," : "", px_jobenv_proc_id(l, i));
    rc |= set2(e, "GTIDS", b) | set2(e, "STEP_ID", "0") | set2(e, "STEPID", "0");
    rc |= set2u(e, "STEP_NUM_NODES", l->nnodes) | set2u(e, "STEP_NUM_TASKS", l->ntasks);
    rc |= set2(e, "STEP_NODELIST", px_jobenv_get(e, "SLURM_JOB_NODELIST"));
    rc |= set2(e, "STEP_TASKS_PER_NODE", px_jobenv_get(e, "SLURM_TASKS_PER_NODE"));
  }
  const char *master = l->node_addrs ? l->node_addrs[0] : l->nodes[0];
  /* A port per job, stable across its nodes, when the server chose none. */
  unsigned port = l->master_port ? l->master_port : 20000 + (unsigned)(l->job_id % 20000);
  rc |= px_jobenv_set(e, "MASTER_ADDR", master);
  snprintf(b, sizeof b, "%u", port);
  rc |= px_jobenv_set(e, "MASTER_PORT", b);
  snprintf(b, sizeof b, "%u", l->ntasks ? l->ntasks : 1);
  rc |= px_jobenv_set(e, "WORLD_SIZE", b);
  snprintf(b, sizeof b, "%u", t->proc_id);
  rc |= px_jobenv_set(e, "RANK", b);
  snprintf(b, sizeof b, "%u", t->local_id);
  rc |= px_jobenv_set(e, "LOCAL_RANK", b);
  snprintf(b, sizeof b, "%u", t->local_tasks ? t->local_tasks : 1);
  rc |= px_jobenv_set(e, "LOCAL_WORLD_SIZE", b);
  return rc ? PX_ENOMEM : 0;
}

int px_jobenv_build(const struct px_launch *l, const struct px_jobenv_site *site,
                    const struct px_task_ident *t, struct px_strvec *out) {
  px_strvec_free_all(out);
  int rc = px_strvec_push(out, NULL);
  for (size_t i = 0; !rc && l->env && l->env[i]; i++) {
    const char *eq = strchr(l->env[i], '=');
    if (!eq || eq == l->env[i]) continue; /* not K=V: skip rather than pass garbage */
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(eq - l->env[i]), l->env[i]);
    rc = px_jobenv_set(out, key, eq + 1);
  }
  if (!rc) rc = env_job(out, l, site);
  if (!rc) rc = env_gpus(out, l, site);
  if (!rc) rc = env_task(out, l, site, t);
  if (rc) px_strvec_free_all(out);
  return rc;
}
