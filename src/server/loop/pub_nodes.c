/*
 * pub_nodes.c - the nodes' listing for the snapshot ({"nodes":[...]}),
 * rendered node by node (publish.c calls it).
 *
 * Each node's JSON text is kept with a fingerprint of everything it shows.
 * A publish hashes every node (cheap: a few words each), renders again only
 * the nodes whose fingerprint moved -- a heartbeat, an allocation, a drain
 * -- and joins the kept texts into the listing. At 10,000 nodes a burst of
 * job starts publishes every few tens of milliseconds while 333 heartbeats
 * a second arrive, so before this every publish rendered all 10,000 nodes
 * through jansson (10 % of the server's samples under the burst); now it
 * renders the few dozen that changed and copies 3 MB. A node's partition
 * list is built once: the configuration does not change while the server
 * runs.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/views_json.h"
#include "server/loop/loop.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"

struct px_pub_nodes {
  uint32_t n;
  uint64_t *fp_state; /* what the partitions' counts depend on */
  int64_t *heartbeat; /* with fp_state, the whole of what a node's text shows */
  char **text;        /* the node's JSON object (malloc'd), NULL until rendered */
  size_t *len;
  char **parts;       /* the node's partitions, comma-separated */
  size_t total;       /* sum of len */
};

static const char *node_state(const struct px_snode *sn, const struct px_node_view *v) {
  if (!sn->registered || sn->down || v->avail == PX_NODE_DOWN) return "DOWN";
  if (v->avail == PX_NODE_DRAIN) return v->njobs ? "DRAINING" : "DRAINED";
  if (!v->njobs) return "IDLE";
  bool full = v->cpus_alloc >= v->cpus || (v->gpus && v->gpus_alloc >= v->gpus);
  return full ? "ALLOCATED" : "MIXED";
}

const char *px_pub_node_state(const struct px_server *s, uint32_t node, const struct px_node_view *v) {
  return node_state(&s->nodes[node], v);
}

void px_pub_nodes_free(struct px_pub_nodes *p) {
  if (!p) return;
  for (uint32_t i = 0; i < p->n; i++) free(p->text[i]), free(p->parts[i]);
  free(p->fp_state);
  free(p->heartbeat);
  free(p->text);
  free(p->len);
  free(p->parts);
  free(p);
}

/* Every node's partition list, in one pass over the partitions (a search
 * per node was nodes x partition members: 10^8 steps at 10,000 nodes). */
static int build_parts(const struct px_conf *c, char **parts) {
  size_t *len = calloc(c->nnodes + 1, sizeof *len), *used = calloc(c->nnodes + 1, sizeof *used);
  int rc = len && used ? 0 : PX_ENOMEM;
  for (uint32_t p = 0; p < c->npartitions && !rc; p++)
    for (uint32_t k = 0; k < c->partitions[p].nnodes; k++)
      len[c->partitions[p].nodes[k]] += strlen(c->partitions[p].name) + 1;
  for (uint32_t i = 0; i < c->nnodes && !rc; i++)
    if (!(parts[i] = calloc(1, len[i] + 1))) rc = PX_ENOMEM;
  for (uint32_t p = 0; p < c->npartitions && !rc; p++)
    for (uint32_t k = 0; k < c->partitions[p].nnodes; k++) {
      uint32_t node = c->partitions[p].nodes[k];
      used[node] += (size_t)snprintf(parts[node] + used[node], len[node] + 1 - used[node], "%s%s",
                                     used[node] ? "," : "", c->partitions[p].name);
    }
  free(len);
  free(used);
  return rc;
}

static struct px_pub_nodes *cache_new(const struct px_conf *c) {
  struct px_pub_nodes *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  size_t n = c->nnodes + 1;
  p->n = c->nnodes;
  p->fp_state = calloc(n, sizeof *p->fp_state);
  p->heartbeat = calloc(n, sizeof *p->heartbeat);
  p->text = calloc(n, sizeof *p->text);
  p->len = calloc(n, sizeof *p->len);
  p->parts = calloc(n, sizeof *p->parts);
  if (!p->fp_state || !p->heartbeat || !p->text || !p->len || !p->parts || build_parts(c, p->parts)) {
    px_pub_nodes_free(p);
    return NULL;
  }
  return p;
}

/* Everything of node i's text but its heartbeat and its fixed fields. */
static uint64_t state_fp(const struct px_snode *sn, const struct px_node_view *v) {
  uint64_t parts[] = {v->avail,    v->cpus,      v->cpus_alloc,       v->gpus,
                      v->gpus_alloc, v->mem_mib, v->mem_alloc_mib,    v->njobs,
                      v->reason ? px_hash_str(v->reason) : 0,        sn->registered,
                      sn->down,    px_hash_str(sn->reason), px_hash_str(sn->addr), sn->gpu_gen, sn->reboot,
                      v->gpus_shared, v->gpu_share_used, px_hash_str(sn->reason_by), (uint64_t)sn->reason_time,
                      sn->admin_drain ? sn->drain_cause : 0, (uint64_t)sn->recovered_since};
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) h = px_hash_u64(h ^ parts[k]);
  return h | 1; /* 0: never rendered */
}

/* Who set the reason and when (sinfo -R's USER and TIMESTAMP): the folded
 * reason's own; the others (a recovery drain, GPUs out) are the server's,
 * GPUs out at the time the last of them went out (faults_since), a
 * recovery drain since recovery held the node (the core's reason is then
 * that drain's: every other is folded). A drained node says why. */
static void reason_signature(const struct px_server *s, const struct px_snode *sn, struct px_node_info *n,
                             const char *faults, int64_t faults_since) {
  if (sn->admin_drain) n->drain_cause = (char *)px_drain_cause_name(sn->drain_cause);
  else if (sn->recovered_jobs) n->drain_cause = (char *)px_drain_cause_name(PX_DRAIN_RECOVERY);
  if (!n->reason || !n->reason[0]) return; /* none (a resume leaves the core an empty one) */
  bool folded = n->reason == sn->reason;
  n->reason_user = (char *)(folded ? sn->reason_by : s->self_user);
  if (!n->reason_user[0]) n->reason_user = NULL; /* a journal from before it was kept */
  n->reason_time = folded ? sn->reason_time : n->reason == faults ? faults_since : sn->recovered_since;
}

static char *render(struct px_server *s, struct px_pub_nodes *p, uint32_t i, const struct px_node_view *v) {
  const struct px_conf_node *cn = &s->conf->nodes[i];
  const struct px_snode *sn = &s->nodes[i];
  struct px_node_info n = {0};
  n.name = (char *)cn->name;
  n.addr = sn->addr[0] ? (char *)sn->addr : (char *)(cn->addr ? cn->addr : cn->name);
  n.partitions = p->parts[i];
  snprintf(n.state, sizeof n.state, "%s", node_state(sn, v));
  n.reason = (char *)(sn->reason[0] ? sn->reason : v->reason);
  if (!sn->registered && !n.reason) n.reason = "Not registered";
  n.cpus = v->cpus, n.cpus_alloc = v->cpus_alloc, n.gpus = v->gpus, n.gpus_alloc = v->gpus_alloc;
  n.gpu_type = (char *)cn->gpu_type;
  char gres[1024], used[1024];
  px_conf_gres_str(cn, gres, sizeof gres);
  /* allocated: not free, not out of service (shared GPUs count as allocated) */
  px_conf_gres_count_str(cn, ~v->gpus_free & ~v->gpus_bad, used, sizeof used);
  n.gres = cn->ngpu_types ? gres : NULL;
  n.gres_used = cn->ngpu_types ? used : NULL;
  n.mem_mib = v->mem_mib, n.mem_alloc_mib = v->mem_alloc_mib;
  n.last_heartbeat = sn->last_heartbeat;
  char health[2048], faults[1024];
  int64_t faults_since;
  n.gpus_out = px_gpu_health_text(s, i, health, sizeof health, faults, sizeof faults, &faults_since);
  n.gpu_health = n.gpus_out ? health : NULL;
  if (!n.reason && n.gpus_out) n.reason = faults; /* sinfo -R lists a node with GPUs out, drained or not */
  reason_signature(s, sn, &n, faults, faults_since);
  n.reboot = (char *)px_node_reboot_state(s, i);
  n.gpus_shared = (uint32_t)__builtin_popcountll(v->gpus_shared), n.gpu_share_used = v->gpu_share_used;
  json_t *o = px_node_info_to_json(&n);
  char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  return text;
}

/* Renders the nodes that changed since the last call. *listing: something
 * in the listing changed; *states: something the partitions' counts show. */
int px_pub_nodes_update(struct px_server *s, bool *listing, bool *states) {
  if (!s->pub_nodes && !(s->pub_nodes = cache_new(s->conf))) return PX_ENOMEM;
  struct px_pub_nodes *p = s->pub_nodes;
  *listing = *states = false;
  for (uint32_t i = 0; i < p->n; i++) {
    struct px_node_view v;
    if (px_core_node_get(s->core, i, &v)) { /* unknown to the core: not listed */
      *listing |= p->text[i] != NULL;
      p->total -= p->len[i];
      free(p->text[i]);
      p->text[i] = NULL, p->len[i] = 0, p->fp_state[i] = 0;
      continue;
    }
    const struct px_snode *sn = &s->nodes[i];
    uint64_t fp = state_fp(sn, &v);
    if (fp == p->fp_state[i] && sn->last_heartbeat == p->heartbeat[i] && p->text[i]) continue;
    char *text = render(s, p, i, &v);
    if (!text) return PX_ENOMEM;
    *states |= fp != p->fp_state[i];
    *listing = true;
    p->total += strlen(text) - p->len[i];
    free(p->text[i]);
    p->text[i] = text;
    p->len[i] = strlen(text);
    p->fp_state[i] = fp;
    p->heartbeat[i] = sn->last_heartbeat;
  }
  return 0;
}

/* {"nodes":[...]} from the kept texts. */
struct px_blob *px_pub_nodes_blob(struct px_server *s) {
  static const char head[] = "{\"nodes\":[", tail[] = "]}";
  const struct px_pub_nodes *p = s->pub_nodes;
  struct px_blob *b = px_blob_alloc(sizeof head - 1 + p->total + p->n + sizeof tail - 1);
  if (!b) return NULL;
  char *d = b->text;
  memcpy(d, head, sizeof head - 1), d += sizeof head - 1;
  bool first = true;
  for (uint32_t i = 0; i < p->n; i++) {
    if (!p->text[i]) continue; /* the core does not know the node */
    if (!first) *d++ = ',';
    memcpy(d, p->text[i], p->len[i]), d += p->len[i];
    first = false;
  }
  memcpy(d, tail, sizeof tail); /* with the terminator */
  b->len = (size_t)(d - b->text) + sizeof tail - 1;
  return b;
}
