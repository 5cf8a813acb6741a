/*
 * publish.c - builds the snapshot readers use (server.h) from the main
 * thread's state: the job views (a job's view is rebuilt only after it
 * changed), the nodes, partitions and fair-share tree as JSON text, and the
 * cluster-state lines of /metrics. Cost per publish: one pointer and one
 * reference per job, a fingerprint per node and the texts of the nodes
 * that changed (pub_nodes.c); publishing is rate limited by the loop, so a
 * submit storm does not publish per request.
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/views_json.h"
#include "server/loop/loop.h"
#include "server/nodes/nodes.h"
#include "server/tables.h"

static struct px_blob *blob_of(json_t *o) {
  char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  struct px_blob *b = text ? px_blob_new(text) : NULL;
  free(text);
  return b;
}

static struct px_blob *partitions_blob(struct px_server *s) {
  json_t *arr = json_array();
  const struct px_conf *c = s->conf;
  for (uint32_t p = 0; p < c->npartitions; p++) {
    const struct px_conf_partition *cp = &c->partitions[p];
    struct px_partition_info pi = {0};
    pi.name = (char *)cp->name;
    pi.is_default = p == c->default_partition;
    pi.up = px_core_partition_up(s->core, p);
    pi.max_time_s = cp->max_time_s;
    pi.default_time_s = cp->default_time_s;
    pi.nnodes = cp->nnodes;
    pi.max_nodes = cp->max_nodes;
    pi.priority_tier = cp->priority_tier;
    char list[4096] = "";
    size_t len = 0;
    for (uint32_t k = 0; k < cp->nnodes; k++) {
      struct px_node_view v;
      uint32_t node = cp->nodes[k];
      if (len < sizeof list)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? "," : "",
                                c->nodes[node].name);
      if (px_core_node_get(s->core, node, &v)) continue;
      pi.ngpus += v.gpus;
      pi.gpus_alloc += v.gpus_alloc;
      const char *st = px_pub_node_state(s, node, &v);
      if (!strcmp(st, "IDLE")) pi.nodes_idle++;
      else if (!strcmp(st, "ALLOCATED")) pi.nodes_alloc++;
      else if (!strcmp(st, "MIXED")) pi.nodes_mixed++;
      else if (!strcmp(st, "DOWN")) pi.nodes_down++;
      else pi.nodes_drained++;
    }
    pi.nodelist = list;
    json_array_append_new(arr, px_partition_info_to_json(&pi));
  }
  return blob_of(json_pack("{so}", "partitions", arr));
}

static double finite_or(double v, double alt) { return isfinite(v) ? v : alt; }

static struct px_blob *shares_blob(struct px_server *s) {
  json_t *arr = json_array();
  size_t n = px_core_nshares(s->core);
  for (size_t i = 0; i < n; i++) {
    struct px_share_view v;
    if (px_core_share_get(s->core, i, &v)) continue;
    const struct px_conf_account *a = &s->conf->accounts[v.assoc];
    struct px_share_info si = {0};
    si.account = (char *)(v.is_user ? s->conf->accounts[a->parent].name : a->name);
    si.user = v.is_user ? (char *)a->name : NULL;
    si.depth = v.depth;
    si.raw_shares = v.raw_shares;
    si.norm_shares = finite_or(v.norm_shares, 0);
    si.raw_usage = finite_or(v.raw_usage, 0);
    si.norm_usage = finite_or(v.norm_usage, 0);
    si.effective_usage = finite_or(v.effective_usage, 0);
    si.fairshare = finite_or(v.fairshare, 0);
    si.level_fs = finite_or(v.level_fs, 0);
    json_array_append_new(arr, px_share_info_to_json(&si));
  }
  return blob_of(json_pack("{so}", "shares", arr));
}

/* ---- the cluster-state lines of /metrics ---- */

struct text {
  char *p;
  size_t len, cap;
};

static void tput(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tput(struct text *t, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n >= sizeof line) n = sizeof line - 1;
  if (t->len + (size_t)n + 1 > t->cap) {
    size_t cap = t->cap * 2 + (size_t)n + 4096;
    char *p = realloc(t->p, cap);
    if (!p) return;
    t->p = p;
    t->cap = cap;
  }
  memcpy(t->p + t->len, line, (size_t)n + 1);
  t->len += (size_t)n;
}

static const char *const states[] = {"PENDING",   "RUNNING",       "COMPLETED",
                                     "FAILED",    "CANCELLED",     "TIMEOUT",
                                     "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED"};
#define NSTATES 9

/* tput for a caller that takes any printf-like sink (px_gpu_metrics). */
static void tput_any(void *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tput_any(void *t, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  tput(t, "%s", line);
}

static void jobs_by_state(struct px_server *s, struct text *t) {
  uint32_t np = s->conf->npartitions;
  uint64_t *count = calloc((size_t)(np + 1) * NSTATES, sizeof *count);
  if (!count) return;
  for (size_t i = 0; i < s->njobs; i++) {
    const struct px_sjob *j = s->jobs[i];
    if (px_sjob_is_array(j) && j->state != PX_JOB_PENDING) continue; /* its tasks count */
    uint32_t p = j->part < np ? j->part : np; /* np: the "unknown" bucket */
    count[p * NSTATES + j->state]++;
  }
  tput(t, "# HELP phalanx_jobs Jobs known to the server by state and partition.\n"
          "# TYPE phalanx_jobs gauge\n");
  for (uint32_t p = 0; p < np; p++)
    for (int st = 0; st < NSTATES; st++)
      tput(t, "phalanx_jobs{partition=\"%s\",state=\"%s\"} %llu\n", s->conf->partitions[p].name,
           states[st], (unsigned long long)count[p * NSTATES + st]);
  free(count);
}

static void gpus_by_partition(struct px_server *s, struct text *t) {
  tput(t, "# HELP phalanx_gpus GPUs per partition by state (allocated, idle, down).\n"
          "# TYPE phalanx_gpus gauge\n");
  for (uint32_t p = 0; p < s->conf->npartitions; p++) {
    const struct px_conf_partition *cp = &s->conf->partitions[p];
    uint64_t alloc = 0, idle = 0, down = 0;
    for (uint32_t k = 0; k < cp->nnodes; k++) {
      struct px_node_view v;
      if (px_core_node_get(s->core, cp->nodes[k], &v)) continue;
      const struct px_snode *sn = &s->nodes[cp->nodes[k]];
      if (v.avail != PX_NODE_UP || sn->down || !sn->registered) {
        down += v.gpus - v.gpus_alloc;
        alloc += v.gpus_alloc;
      } else { /* GPUs out of service (gpus_bad) that no job holds are neither: down */
        uint32_t free = (uint32_t)px_bits64_count(v.gpus_free);
        alloc += v.gpus_alloc;
        idle += free;
        down += v.gpus - v.gpus_alloc - free;
      }
    }
    tput(t, "phalanx_gpus{partition=\"%s\",state=\"allocated\"} %llu\n", cp->name,
         (unsigned long long)alloc);
    tput(t, "phalanx_gpus{partition=\"%s\",state=\"idle\"} %llu\n", cp->name,
         (unsigned long long)idle);
    tput(t, "phalanx_gpus{partition=\"%s\",state=\"down\"} %llu\n", cp->name,
         (unsigned long long)down);
  }
}

static void fairshare(struct px_server *s, struct text *t) {
  tput(t, "# HELP phalanx_fairshare_factor Fair-share factor (level FS for accounts, "
          "Fair Tree factor for users).\n# TYPE phalanx_fairshare_factor gauge\n");
  size_t n = px_core_nshares(s->core);
  for (size_t i = 0; i < n; i++) {
    struct px_share_view v;
    if (px_core_share_get(s->core, i, &v)) continue;
    const struct px_conf_account *a = &s->conf->accounts[v.assoc];
    double f = v.is_user ? v.fairshare : v.level_fs;
    if (!isfinite(f)) continue; /* no usage yet: infinite level FS is not a sample */
    if (v.is_user)
      tput(t, "phalanx_fairshare_factor{account=\"%s\",user=\"%s\"} %g\n",
           s->conf->accounts[a->parent].name, a->name, f);
    else
      tput(t, "phalanx_fairshare_factor{account=\"%s\",user=\"\"} %g\n", a->name, f);
  }
}

static struct px_blob *state_metrics(struct px_server *s) {
  struct text t = {0};
  jobs_by_state(s, &t);
  gpus_by_partition(s, &t);
  fairshare(s, &t);
  px_gpu_metrics(s, tput_any, &t);
  tput(&t, "# HELP phalanx_scheduler_cycles_total Scheduling cycles run.\n"
           "# TYPE phalanx_scheduler_cycles_total counter\nphalanx_scheduler_cycles_total %llu\n",
       (unsigned long long)s->cycles);
  tput(&t, "# HELP phalanx_scheduler_cycle_cpu_seconds_total Main-thread CPU time in "
           "scheduling cycles.\n# TYPE phalanx_scheduler_cycle_cpu_seconds_total counter\n"
           "phalanx_scheduler_cycle_cpu_seconds_total %.9f\n",
       (double)s->cycle_cpu_ns / 1e9);
  tput(&t, "# HELP phalanx_journal_seq Last journal sequence number.\n"
           "# TYPE phalanx_journal_seq gauge\nphalanx_journal_seq %llu\n",
       (unsigned long long)s->seq);
  struct px_blob *b = px_blob_new(t.p ? t.p : "");
  free(t.p);
  return b;
}

/* Replaces *kept by fresh (NULL: out of memory, *kept stays). */
static int renew(struct px_blob **kept, struct px_blob *fresh) {
  if (!fresh) return PX_ENOMEM;
  px_blob_unref(*kept);
  *kept = fresh;
  return 0;
}

/* The node listing when a node changed (pub_nodes.c renders only those),
 * the partitions when a node's state or allocation did (not on a mere
 * heartbeat), the fair-share text at most once a second (usage accrues
 * continuously). */
static int cluster_blobs(struct px_server *s, struct px_snap *snap) {
  bool listing, node_states;
  if (px_pub_nodes_update(s, &listing, &node_states)) return PX_ENOMEM;
  if ((listing || !s->nodes_blob) && renew(&s->nodes_blob, px_pub_nodes_blob(s))) return PX_ENOMEM;
  if ((node_states || s->nodes_dirty || !s->parts_blob) && renew(&s->parts_blob, partitions_blob(s)))
    return PX_ENOMEM;
  int64_t mono = px_now_mono_ns();
  if (!s->shares_blob || mono - s->shares_ns >= 1000000000LL) {
    struct px_blob *b = shares_blob(s);
    if (!b) return PX_ENOMEM;
    px_blob_unref(s->shares_blob);
    s->shares_blob = b;
    s->shares_ns = mono;
    s->shares_stale = false;
  } else {
    s->shares_stale = true; /* the main loop publishes again when a second is up */
  }
  if (!s->resv_blob || s->resv_dirty) {
    struct px_blob *b = px_resv_blob(s);
    if (!b) return PX_ENOMEM;
    px_blob_unref(s->resv_blob);
    s->resv_blob = b;
    s->resv_dirty = false;
  }
  px_blob_ref(s->nodes_blob);
  px_blob_ref(s->parts_blob);
  px_blob_ref(s->shares_blob);
  px_blob_ref(s->resv_blob);
  snap->reservations = s->resv_blob;
  snap->nodes = s->nodes_blob;
  snap->partitions = s->parts_blob;
  snap->shares = s->shares_blob;
  return 0;
}

int px_publish(struct px_server *s, int64_t now) {
  struct px_snap *snap = calloc(1, sizeof *snap);
  if (!snap) return PX_ENOMEM;
  atomic_init(&snap->refs, 1);
  snap->seq = s->seq;
  snap->time = now;
  snap->jobs = malloc((s->njobs ? s->njobs : 1) * sizeof *snap->jobs);
  if (!snap->jobs) goto fail;
  for (size_t i = 0; i < s->njobs; i++) {
    struct px_sjob *j = s->jobs[i];
    if (!j->view) {
      struct px_job_info info;
      if (px_jobs_info(s, j, &info)) goto fail;
      if (!(j->view = px_jview_new(&info, j->mseq))) {
        px_job_info_fini(&info);
        goto fail;
      }
    }
    px_jview_ref(j->view);
    snap->jobs[snap->njobs++] = j->view;
  }
  if (cluster_blobs(s, snap)) goto fail;
  /* The state lines of /metrics walk every job: at most once a second. */
  int64_t mono = px_now_mono_ns();
  if (!s->state_metrics || mono - s->state_metrics_ns >= 1000000000LL) {
    struct px_blob *m = state_metrics(s);
    if (m) {
      px_blob_unref(s->state_metrics);
      s->state_metrics = m;
      s->state_metrics_ns = mono;
    }
  }
  px_blob_ref(s->state_metrics);
  snap->state_metrics = s->state_metrics;
  if (!snap->nodes || !snap->partitions || !snap->shares || !snap->state_metrics) goto fail;
  s->nodes_dirty = false;
  px_snapbox_publish(&s->snaps, snap);
  return 0;
fail:
  px_snap_release(snap);
  return PX_ENOMEM;
}
