/*
 * node.c - NodeName= and PartitionName= lines of slurm.conf.
 *
 * A NodeName line names one or more nodes by hostlist; each gets the line's
 * attributes over the NodeName=DEFAULT template. Nodes are checked here (CPU
 * layout, GPUs, duplicates) and appended in file order. A PartitionName line
 * is checked and kept with its references as written, for build.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/parse.h"
#include "util/hostlist.h"

#define N(field) offsetof(struct px_node_tmpl, field)
#define P(field) offsetof(struct px_part_raw, field)
#define MAX_NODE_GPUS 64 /* GPU sets are 64-bit masks (util/bitmap.h) */
#define MAX_NODE_CPUS 1048576

static void set_flagged_u32(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                            const struct px_key *k) {
  struct px_node_tmpl *t = obj;
  uint32_t old = *(uint32_t *)((char *)obj + k->off);
  px_set_u32(b, w, kv, obj, k);
  if (*(uint32_t *)((char *)obj + k->off) == 0) {
    px_cb_bad(b, w, kv, "a whole number, at least 1");
    *(uint32_t *)((char *)obj + k->off) = old;
    return;
  }
  if (k->off == N(n.cpus)) t->cpus_given = true;
  if (k->off == N(n.sockets)) t->sockets_given = true;
}

/* Adds count GPUs of type ty (NULL: untyped) to the node's list, kept in
 * type name order (a type given twice adds up). false: mixing untyped with
 * typed GPUs. */
static bool add_gpus(struct px_conf_gpu_type *v, uint32_t *n, const char *ty, uint32_t count) {
  uint32_t i = 0;
  for (; i < *n; i++) {
    if ((v[i].type == NULL) != (ty == NULL)) return false;
    int cmp = ty ? strcmp(v[i].type, ty) : 0;
    if (cmp == 0) {
      v[i].count += count;
      return true;
    }
    if (cmp > 0) break;
  }
  memmove(&v[i + 1], &v[i], (*n - i) * sizeof *v);
  v[i] = (struct px_conf_gpu_type){ty, count};
  (*n)++;
  return true;
}

/* Gres=gpu[:type]:N[(S:0-1)][,other:...]; several types on one node
 * (MIG profiles side by side) are indexed in type name order. */
static void set_gres(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                     const struct px_key *k) {
  struct px_node_tmpl *t = obj;
  const char **items;
  uint32_t n, ngpu = 0, ntypes = 0;
  if (!px_split_list(b, w, kv, &items, &n)) return;
  struct px_conf_gpu_type *types = px_cb_calloc(b, n + 1, sizeof *types);
  if (!types) return;
  for (uint32_t i = 0; i < n; i++) {
    char *it = (char *)items[i], *paren = strchr(it, '(');
    if (paren) *paren = '\0'; /* socket affinity: not used */
    char *f[3] = {it, NULL, NULL};
    int nf = 1;
    for (char *p = it; *p && nf < 3; p++)
      if (*p == ':') *p = '\0', f[nf++] = p + 1;
    if (strcasecmp(f[0], "gpu") != 0) {
      px_cb_warn(b, w, "Gres=%s: only gpu is scheduled by Phalanx; %s ignored", kv->val, f[0]);
      continue;
    }
    const char *count = nf == 1 ? "1" : f[nf - 1], *ty = nf == 3 ? f[1] : NULL;
    struct px_kv one = {kv->key, count};
    uint64_t c;
    if (nf == 2 && (count[0] < '0' || count[0] > '9')) {
      px_cb_bad(b, w, kv, "gpu:COUNT or gpu:TYPE:COUNT");
      return;
    }
    if (!px_parse_u64(b, w, &one, MAX_NODE_GPUS, &c)) return;
    if (!add_gpus(types, &ntypes, ty, (uint32_t)c)) {
      px_cb_error(b, w, "Gres=%s: untyped GPUs beside typed ones (give every gpu item a type)", kv->val);
      return;
    }
    ngpu += (uint32_t)c;
  }
  if (ngpu > MAX_NODE_GPUS) {
    px_cb_error(b, w, "Gres=%s: at most %d GPUs per node", kv->val, MAX_NODE_GPUS);
    return;
  }
  t->n.ngpu = ngpu;
  t->n.gpu_type = ntypes == 1 ? types[0].type : NULL;
  t->n.gpu_types = ntypes > 1 ? types : NULL;
  t->n.ngpu_types = ntypes > 1 ? ntypes : 0;
}

const char *px_conf_gpu_type_at(const struct px_conf_node *n, uint32_t i) {
  if (i >= n->ngpu) return NULL;
  for (uint32_t k = 0; k < n->ngpu_types; k++) {
    if (i < n->gpu_types[k].count) return n->gpu_types[k].type;
    i -= n->gpu_types[k].count;
  }
  return n->gpu_type;
}

void px_conf_gres_count_str(const struct px_conf_node *n, uint64_t mask, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  if (!n->ngpu) return;
  if (n->ngpu < 64) mask &= (1ULL << n->ngpu) - 1;
  if (!n->ngpu_types) {
    snprintf(buf, size, "gpu:%s%s%u", n->gpu_type ? n->gpu_type : "", n->gpu_type ? ":" : "",
             (unsigned)__builtin_popcountll(mask));
    return;
  }
  for (uint32_t k = 0, first = 0; k < n->ngpu_types && len < size; k++) {
    uint32_t cnt = n->gpu_types[k].count;
    uint64_t range = cnt >= 64 ? ~0ULL : ((1ULL << cnt) - 1) << first;
    int w = snprintf(buf + len, size - len, "%sgpu:%s:%u", k ? "," : "", n->gpu_types[k].type,
                     (unsigned)__builtin_popcountll(mask & range));
    if (w < 0) break;
    len += (size_t)w;
    first += cnt;
  }
}

void px_conf_gres_str(const struct px_conf_node *n, char *buf, size_t size) {
  px_conf_gres_count_str(n, ~0ULL, buf, size);
}

static void set_features(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                         const struct px_key *k) {
  struct px_node_tmpl *t = obj;
  const char **v;
  uint32_t n;
  if (px_split_list(b, w, kv, &v, &n)) t->n.features = v, t->n.nfeatures = n;
}

static const struct px_enum node_states[] = {
    {"UNKNOWN", PX_NODE_CONF_UP}, {"IDLE", PX_NODE_CONF_UP},     {"UP", PX_NODE_CONF_UP},
    {"DOWN", PX_NODE_CONF_DOWN},  {"DRAIN", PX_NODE_CONF_DRAIN}, {"FUTURE", PX_NODE_CONF_FUTURE},
    {NULL, 0}};

static const struct px_enum gpu_shares[] = {{"NO", PX_GPU_SHARES_NO},     {"FALSE", PX_GPU_SHARES_NO},
                                            {"YES", PX_GPU_SHARES_YES},   {"TRUE", PX_GPU_SHARES_YES},
                                            {"USER", PX_GPU_SHARES_USER}, {NULL, 0}};

static const struct px_key node_keys[] = {
    {"NodeName", px_set_misplaced, 0, NULL},
    {"NodeAddr", px_set_str, N(n.addr), NULL},
    {"CPUs", set_flagged_u32, N(n.cpus), NULL},
    {"Procs", set_flagged_u32, N(n.cpus), NULL},
    {"Sockets", set_flagged_u32, N(n.sockets), NULL},
    {"Boards", set_flagged_u32, N(boards), NULL},
    {"SocketsPerBoard", set_flagged_u32, N(sockets_per_board), NULL},
    {"CoresPerSocket", set_flagged_u32, N(n.cores_per_socket), NULL},
    {"ThreadsPerCore", set_flagged_u32, N(n.threads_per_core), NULL},
    {"RealMemory", px_set_mem, N(n.mem_mib), NULL},
    {"Gres", set_gres, 0, NULL},
    {"Features", set_features, 0, NULL},
    {"Feature", set_features, 0, NULL},
    {"AvailableFeatures", set_features, 0, NULL},
    {"Weight", px_set_u32, N(n.weight), NULL},
    {"State", px_set_enum, N(n.state), node_states},
    {"GpuGroups", set_flagged_u32, N(n.gpu_groups), NULL},
    {"GpuShares", px_set_enum, N(n.gpu_shares), gpu_shares},
};
static const char *const node_ignored[] = {
    "NodeHostname", "Port", "TmpDisk", "CoreSpecCount", "CpuSpecList", "MemSpecLimit", "Reason",
    "ActiveFeatures", "CpuBind", "Bcast", "TRESWeights", "Parameters", "Topology", NULL};
const struct px_keytab px_tab_node = {"NodeName", node_keys, sizeof node_keys / sizeof node_keys[0],
                                      node_ignored};

/* CPU layout: Sockets or Boards*SocketsPerBoard; CPUs defaults to their product. */
static bool node_layout(struct px_cb *b, const struct px_where *w, struct px_node_tmpl *t) {
  struct px_conf_node *n = &t->n;
  if (t->sockets_per_board) {
    if (t->sockets_given) {
      px_cb_error(b, w, "give Sockets or SocketsPerBoard, not both");
      return false;
    }
    uint64_t sockets = (uint64_t)t->boards * t->sockets_per_board;
    n->sockets = sockets > MAX_NODE_CPUS ? MAX_NODE_CPUS + 1 : (uint32_t)sockets;
  }
  uint64_t cores = (uint64_t)n->sockets * n->cores_per_socket;
  uint64_t threads = cores > MAX_NODE_CPUS ? cores : cores * n->threads_per_core;
  if (threads > MAX_NODE_CPUS) {
    px_cb_error(b, w, "Sockets x CoresPerSocket x ThreadsPerCore is more than %d CPUs", MAX_NODE_CPUS);
    return false;
  }
  bool layout = t->sockets_given || t->sockets_per_board || n->cores_per_socket > 1 || n->threads_per_core > 1;
  if (!t->cpus_given) n->cpus = (uint32_t)threads;
  else if (layout && n->cpus != threads && n->cpus != cores) {
    px_cb_error(b, w, "CPUs=%u does not match the layout: %llu sockets x %u cores x %u threads = %llu",
                n->cpus, (unsigned long long)n->sockets, n->cores_per_socket, n->threads_per_core,
                (unsigned long long)threads);
    return false;
  }
  if (n->ngpu && n->ngpu % n->gpu_groups) {
    px_cb_error(b, w, "GpuGroups=%u does not divide the node's %u GPUs evenly", n->gpu_groups, n->ngpu);
    return false;
  }
  if (!n->ngpu && n->gpu_groups > 1) {
    px_cb_error(b, w, "GpuGroups=%u on a node without GPUs", n->gpu_groups);
    return false;
  }
  return true;
}

static void add_nodes(struct px_cb *b, const struct px_where *w, const char *names, struct px_node_tmpl *t) {
  struct px_strvec nv = {0}, av = {0};
  struct px_diag d;
  px_diag_clear(&d);
  if (px_hostlist_expand(names, b->max_names, &nv, &d)) {
    px_cb_error(b, w, "NodeName=%s: %s", names, d.msg);
    goto out;
  }
  if (t->n.addr && px_hostlist_expand(t->n.addr, b->max_names, &av, &d)) {
    px_cb_error(b, w, "NodeAddr=%s: %s", t->n.addr, d.msg);
    goto out;
  }
  if (t->n.addr && av.len != 1 && av.len != nv.len) {
    px_cb_error(b, w, "NodeAddr=%s names %zu addresses for %zu nodes (give one, or one per node)", t->n.addr,
                av.len, nv.len);
    goto out;
  }
  if (b->nodes.len + nv.len > b->max_names) {
    px_cb_error(b, w, "more than %zu nodes in the cluster", b->max_names);
    goto out;
  }
  for (size_t i = 0; i < nv.len; i++) {
    uint64_t prev;
    if (px_smap_get(&b->node_index, nv.v[i], &prev)) {
      const struct px_where *pw = &b->node_where.v[prev];
      px_cb_error(b, w, "node %s is already defined at %s:%d", nv.v[i], pw->file, pw->line);
      continue;
    }
    struct px_conf_node n = t->n;
    n.name = px_cb_strdup(b, nv.v[i]);
    if (t->n.addr) n.addr = px_cb_strdup(b, av.v[av.len == 1 ? 0 : i]);
    if (!n.name || (t->n.addr && !n.addr) || px_smap_put(&b->node_index, nv.v[i], b->nodes.len) ||
        px_nodevec_push(&b->nodes, n) || px_wherevec_push(&b->node_where, *w)) {
      b->oom = true;
      goto out;
    }
  }
out:
  px_strvec_free_all(&nv);
  px_strvec_free_all(&av);
}

void px_node_line(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, size_t n) {
  struct px_node_tmpl t = b->node_def;
  uint32_t errors = b->nerrors;
  for (size_t i = 1; i < n; i++) px_cb_apply(b, w, &kv[i], &px_tab_node, &t);
  if (!kv[0].val[0]) {
    px_cb_bad(b, w, &kv[0], "node names (a hostlist such as gpu[001-064]) or DEFAULT");
    return;
  }
  if (!strcasecmp(kv[0].val, "DEFAULT")) {
    b->node_def = t;
    return;
  }
  if (b->nerrors != errors || !node_layout(b, w, &t)) return;
  add_nodes(b, w, kv[0].val, &t);
}

/* ---- PartitionName= ---- */

static void set_max_nodes(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                          const struct px_key *k) {
  struct px_part_raw *r = obj;
  uint64_t v;
  if (!strcasecmp(kv->val, "UNLIMITED") || !strcasecmp(kv->val, "INFINITE")) r->p.max_nodes = UINT32_MAX;
  else if (px_parse_u64(b, w, kv, UINT32_MAX - 1, &v)) r->p.max_nodes = (uint32_t)v;
}

/* OverSubscribe=NO|YES[:N]|EXCLUSIVE|FORCE[:N] (the job count per resource is not used). */
static void set_oversub(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                        const struct px_key *k) {
  static const struct px_enum modes[] = {{"NO", PX_OVERSUB_NO},
                                         {"YES", PX_OVERSUB_YES},
                                         {"EXCLUSIVE", PX_OVERSUB_EXCLUSIVE},
                                         {"FORCE", PX_OVERSUB_FORCE},
                                         {NULL, 0}};
  struct px_part_raw *r = obj;
  char buf[32];
  snprintf(buf, sizeof buf, "%s", kv->val);
  char *colon = strchr(buf, ':');
  struct px_kv one = {kv->key, buf};
  int v;
  if (colon) {
    *colon = '\0';
    struct px_kv cnt = {kv->key, colon + 1};
    uint64_t c;
    if (strcasecmp(buf, "YES") && strcasecmp(buf, "FORCE")) {
      px_cb_bad(b, w, kv, "NO, YES[:N], EXCLUSIVE or FORCE[:N]");
      return;
    }
    if (!px_parse_u64(b, w, &cnt, 1000, &c)) return;
  }
  if (strlen(kv->val) < sizeof buf && px_parse_enum(b, w, &one, modes, &v)) r->p.oversubscribe = v;
}

static void set_part_state(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                           const struct px_key *k) {
  static const struct px_enum states[] = {{"UP", 1}, {"DOWN", 0}, {"DRAIN", 0}, {"INACTIVE", 0}, {NULL, 0}};
  int v;
  if (px_parse_enum(b, w, kv, states, &v)) ((struct px_part_raw *)obj)->p.up = v != 0;
}

static const struct px_key part_keys[] = {
    {"PartitionName", px_set_misplaced, 0, NULL},
    {"Nodes", px_set_str, P(nodes), NULL},
    {"Default", px_set_bool, P(p.is_default), NULL},
    {"MaxTime", px_set_dur, P(p.max_time_s), NULL},
    {"DefaultTime", px_set_dur, P(p.default_time_s), NULL},
    {"MaxNodes", set_max_nodes, 0, NULL},
    {"AllowAccounts", px_set_str, P(allow_accounts), NULL},
    {"DenyAccounts", px_set_str, P(deny_accounts), NULL},
    {"AllowQos", px_set_str, P(allow_qos), NULL},
    {"PriorityTier", px_set_u32, P(p.priority_tier), NULL},
    {"PriorityJobFactor", px_set_u32, P(p.priority_job_factor), NULL},
    {"OverSubscribe", set_oversub, 0, NULL},
    {"Shared", set_oversub, 0, NULL},
    {"PreemptMode", px_set_preempt_mode, P(p.preempt_mode), "partition"},
    {"State", set_part_state, 0, NULL},
    {"ExclusiveAccount", px_set_bool, P(p.exclusive_account), NULL},
    {"GpuShares", px_set_enum, P(p.gpu_shares), gpu_shares},
};
static const char *const part_ignored[] = {
    "AllocNodes", "AllowGroups", "Alternate", "CpuBind", "DefCpuPerGPU", "DefMemPerCPU", "DefMemPerGPU",
    "DefMemPerNode", "DisableRootJobs", "ExclusiveUser", "GraceTime", "Hidden", "LLN", "MaxCPUsPerNode",
    "MaxMemPerCPU", "MaxMemPerNode", "MinNodes", "OverTimeLimit", "PowerDownOnIdle", "QOS", "ReqResv",
    "ResumeTimeout", "RootOnly", "SelectTypeParameters", "SuspendTime", "SuspendTimeout",
    "TRESBillingWeights", NULL};
const struct px_keytab px_tab_part = {"PartitionName", part_keys, sizeof part_keys / sizeof part_keys[0],
                                      part_ignored};

void px_part_line(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, size_t n) {
  struct px_part_raw r = b->part_def;
  uint32_t errors = b->nerrors;
  for (size_t i = 1; i < n; i++) px_cb_apply(b, w, &kv[i], &px_tab_part, &r);
  if (!kv[0].val[0] || strpbrk(kv[0].val, ",[]")) {
    px_cb_bad(b, w, &kv[0], "a partition name (no commas or brackets) or DEFAULT");
    return;
  }
  if (!strcasecmp(kv[0].val, "DEFAULT")) {
    b->part_def = r;
    return;
  }
  if (b->nerrors != errors) return;
  for (size_t i = 0; i < b->parts.len; i++)
    if (!strcmp(b->parts.v[i].p.name, kv[0].val)) {
      px_cb_error(b, w, "partition %s is already defined at %s:%d", kv[0].val, b->parts.v[i].w.file,
                  b->parts.v[i].w.line);
      return;
    }
  if (r.p.default_time_s < 0) r.p.default_time_s = r.p.max_time_s;
  if (r.p.default_time_s > r.p.max_time_s) {
    px_cb_error(b, w, "PartitionName=%s: DefaultTime is longer than MaxTime", kv[0].val);
    return;
  }
  r.p.name = px_cb_strdup(b, kv[0].val);
  r.w = *w;
  if (!r.p.name || px_partvec_push(&b->parts, r)) b->oom = true;
}
