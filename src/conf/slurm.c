/*
 * slurm.c - slurm.conf lines: global keys, NodeName= and PartitionName=.
 *
 * A line whose first key is NodeName or PartitionName is one record; its
 * other pairs are that record's attributes. `NodeName=DEFAULT` and
 * `PartitionName=DEFAULT` set the defaults of the records that follow, as in
 * Slurm. Any other line is a list of global settings (the last one wins).
 * Nodes are created here, in file order; partition attributes that name other
 * objects (Nodes, AllowAccounts, ...) are kept as written and resolved in
 * build.c once every file is read.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/parse.h"
#include "util/hostlist.h"

#define G(field) offsetof(struct px_conf, field)

static const struct px_enum sched_types[] = {{"sched/backfill", 1}, {"sched/builtin", 0}, {NULL, 0}};
static const struct px_enum prio_types[] = {{"priority/multifactor", 1}, {"priority/basic", 0}, {NULL, 0}};
static const struct px_enum select_types[] = {
    {"select/cons_tres", 0}, {"select/cons_res", 1}, {"select/linear", 2}, {NULL, 0}};
static const struct px_enum preempt_types[] = {
    {"preempt/none", 0}, {"preempt/qos", 1}, {"preempt/partition_prio", 2}, {NULL, 0}};
static const struct px_enum topo_plugins[] = {{"topology/tree", 1},    {"topology/block", 1},
                                              {"topology/default", 1}, {"topology/none", 0},
                                              {NULL, 0}};
static const struct px_enum backfill_modes[] = {{"easy", PX_BACKFILL_EASY},
                                                {"conservative", PX_BACKFILL_CONSERVATIVE},
                                                {"none", PX_BACKFILL_NONE},
                                                {NULL, 0}};
static const struct px_enum placements[] = {{"pack", PX_PLACE_PACK}, {"spread", PX_PLACE_SPREAD}, {NULL, 0}};
static const struct px_enum orders[] = {
    {"multifactor", PX_ORDER_MULTIFACTOR}, {"fifo", PX_ORDER_FIFO}, {"las", PX_ORDER_LAS}, {NULL, 0}};

/* SchedulerType, PriorityType, ...: checked against a table, stored as written (lower case). */
static void set_plugin(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                       const struct px_key *k) {
  int v;
  if (!px_parse_enum(b, w, kv, k->arg, &v)) return;
  const struct px_enum *e = k->arg;
  while (strcasecmp(e->name, kv->val)) e++;
  if (k->arg == topo_plugins) {
    b->topology_none = v == 0; /* nothing to store: the topology file decides */
    return;
  }
  *(const char **)((char *)obj + k->off) = e->name;
  if (k->arg == sched_types) b->sched_w = *w;
  if (k->arg == prio_types) b->order_w = *w;
}

/* PreemptMode=REQUEUE, also "SUSPEND,GANG" and "GANG" (GANG alone is OFF here). */
void px_set_preempt_mode(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                             const struct px_key *k) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s", kv->val);
  char *gang = strchr(buf, ',');
  if (gang && strcasecmp(gang + 1, "GANG") == 0) *gang = '\0';
  struct px_kv one = {kv->key, buf};
  if (!strcasecmp(buf, "GANG")) one.val = "OFF";
  int v;
  if (strlen(kv->val) < sizeof buf && px_parse_enum(b, w, &one, px_preempt_modes, &v))
    *(enum px_preempt_mode *)((char *)obj + k->off) = (enum px_preempt_mode)v;
  else if (strlen(kv->val) >= sizeof buf)
    px_cb_bad(b, w, kv, "OFF, CANCEL, REQUEUE or SUSPEND");
  if (k->arg) ((struct px_part_raw *)obj)->preempt_mode_given = true;
}

static void set_global_enum(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                            const struct px_key *k) {
  px_set_enum(b, w, kv, obj, k);
  if (k->arg == backfill_modes) b->backfill_given = true, b->backfill_w = *w;
  if (k->arg == orders) b->order_given = true, b->order_w = *w;
}

static void set_depth(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                      const struct px_key *k) {
  uint64_t v;
  if (!strcasecmp(kv->val, "ALL") || !strcasecmp(kv->val, "UNLIMITED")) b->c->sched.backfill_depth = UINT32_MAX;
  else if (px_parse_u64(b, w, kv, UINT32_MAX - 1, &v)) b->c->sched.backfill_depth = (uint32_t)v;
}

/* LasThresholds=3600,36000 (PriorityOrder=las): attained-service thresholds
 * in GPU-seconds, whole numbers, positive, strictly ascending, at most
 * PX_LAS_MAX_THRESHOLDS. The error names the offending item and why. */
static void set_las_thresholds(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                               const struct px_key *k) {
  (void)obj, (void)k;
  int64_t t[PX_LAS_MAX_THRESHOLDS];
  uint32_t n = 0;
  char why[96];
  for (const char *p = kv->val;; n++) {
    char *end = NULL;
    if (n == PX_LAS_MAX_THRESHOLDS) {
      snprintf(why, sizeof why, "at most %d thresholds", PX_LAS_MAX_THRESHOLDS);
      break;
    }
    long long x = *p >= '0' && *p <= '9' ? strtoll(p, &end, 10) : -1;
    if (x <= 0 || x >= INT64_MAX / 4 || (*end != ',' && *end != '\0')) {
      snprintf(why, sizeof why, "item %u: a whole number of GPU-seconds, at least 1", n + 1);
      break;
    }
    if (n && x <= t[n - 1]) {
      snprintf(why, sizeof why, "item %u: %lld is not above the previous threshold %lld", n + 1, x,
               (long long)t[n - 1]);
      break;
    }
    t[n] = x;
    if (*end == '\0') {
      memcpy(b->c->sched.las_thresholds_gpu_s, t, (n + 1) * sizeof *t);
      b->c->sched.las_nthresholds = n + 1;
      return;
    }
    p = end + 1;
  }
  char exp[160];
  snprintf(exp, sizeof exp, "ascending GPU-second thresholds such as 3600,36000 (%s)", why);
  px_cb_bad(b, w, kv, exp);
}

/* GpuFaultPolicy=xid:gpu+requeue,... over the defaults (gpu_policy.h). */
static void set_gpu_policy(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                           const struct px_key *k) {
  (void)obj, (void)k;
  char why[160], exp[256];
  if (px_gpu_policy_parse(&b->c->phalanx.gpu, kv->val, why, sizeof why) == 0) return;
  snprintf(exp, sizeof exp, "CLASS:ACTIONS items such as xid:gpu+requeue,lost:gpu+drain+requeue (%s)", why);
  px_cb_bad(b, w, kv, exp);
}

/* HealthCheckNodeState=ANY|ALLOC|MIXED|IDLE|NONDRAINED_IDLE[,CYCLE], as Slurm's. */
static void set_hc_states(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                          const struct px_key *k) {
  (void)obj, (void)k;
  static const char *const names[] = {"ANY", "ALLOC", "MIXED", "IDLE", "NONDRAINED_IDLE", "CYCLE"};
  unsigned bits = 0;
  for (const char *s = kv->val; *s;) {
    size_t len = strcspn(s, ","), i = 0;
    while (i < 6 && !(strlen(names[i]) == len && !strncasecmp(names[i], s, len))) i++;
    if (i == 6) return px_cb_bad(b, w, kv, "a list of ANY ALLOC MIXED IDLE NONDRAINED_IDLE CYCLE");
    bits |= 1u << i;
    s += len + (s[len] == ',');
  }
  b->c->phalanx.health_check_states = bits;
}

/* GpuHealthIntervalMs=100..60000. */
static void set_gpu_interval(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                             const struct px_key *k) {
  (void)obj, (void)k;
  char *end;
  unsigned long v = kv->val[0] >= '0' && kv->val[0] <= '9' ? strtoul(kv->val, &end, 10) : 0;
  if (!v || *end || v < 100 || v > 60000) return px_cb_bad(b, w, kv, "milliseconds, 100 to 60000");
  b->c->phalanx.gpu.health_interval_ms = (uint32_t)v;
}

/* SchedulerParameters=bf_window=N (minutes),bf_resolution=N (seconds),
 * bf_max_job_test=N (jobs a backfill pass tries, and the reservation depth),
 * bf_interval=N (seconds between backfill passes), default_queue_depth=N
 * (jobs a main pass tries): the Slurm options that map onto Phalanx's
 * scheduling; every other option is ignored with one warning per line. */
static void set_sched_params(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                             const struct px_key *k) {
  const char **items;
  uint32_t n, nignored = 0;
  const char *first_ignored = NULL;
  char key[64];
  if (!px_split_list(b, w, kv, &items, &n)) return;
  for (uint32_t i = 0; i < n; i++) {
    const char *eq = strchr(items[i], '=');
    size_t klen = eq ? (size_t)(eq - items[i]) : strlen(items[i]);
    if (klen >= sizeof key) klen = sizeof key - 1;
    memcpy(key, items[i], klen);
    key[klen] = '\0';
    struct px_kv one = {key, eq ? eq + 1 : ""};
    uint64_t v;
    if (!strcasecmp(key, "bf_window")) {
      if (px_parse_u64(b, w, &one, 100000000, &v)) b->c->sched.backfill_window_s = (int64_t)v * 60;
    } else if (!strcasecmp(key, "bf_resolution")) {
      if (!px_parse_u64(b, w, &one, 100000000, &v)) continue;
      if (v == 0) px_cb_bad(b, w, &one, "a positive number of seconds");
      else b->c->sched.backfill_resolution_s = (int64_t)v;
    } else if (!strcasecmp(key, "bf_max_job_test")) {
      if (px_parse_u64(b, w, &one, UINT32_MAX - 1, &v))
        b->c->sched.backfill_depth = b->c->sched.bf_max_job_test = (uint32_t)v;
    } else if (!strcasecmp(key, "bf_interval")) {
      if (px_parse_u64(b, w, &one, 86400, &v)) b->c->sched.bf_interval_s = (int64_t)v;
    } else if (!strcasecmp(key, "default_queue_depth")) {
      if (px_parse_u64(b, w, &one, UINT32_MAX - 1, &v)) b->c->sched.default_queue_depth = (uint32_t)v;
    } else if (nignored++ == 0) {
      first_ignored = items[i];
    }
  }
  if (nignored)
    px_cb_warn(b, w, "SchedulerParameters: %u option(s) ignored (first: %s); Phalanx reads only "
               "bf_window, bf_resolution, bf_max_job_test, bf_interval, default_queue_depth", nignored, first_ignored);
}

/* PriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=3000 */
static void set_weight_tres(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                            const struct px_key *k) {
  struct px_tres t = {0, 0, 0, 0};
  struct px_conf_sched *s = &b->c->sched;
  if (!px_parse_tres(b, w, kv, &t)) return;
  if (t.nodes || t.gpus > UINT32_MAX || t.cpus > UINT32_MAX || t.mem_mib > UINT32_MAX) {
    px_cb_bad(b, w, kv, "weights for CPU, Mem and GRES/gpu up to 4294967295");
    return;
  }
  s->weight_tres_cpu = (uint32_t)t.cpus;
  s->weight_tres_mem = (uint32_t)t.mem_mib; /* a bare number: no unit applies to a weight */
  s->weight_tres_gpu = (uint32_t)t.gpus;
  uint64_t sum = t.cpus + t.mem_mib + t.gpus;
  s->weight_tres = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}

/* TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=2.0 (Mem per MiB, or per unit of its suffix). */
static void set_billing(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                        const struct px_key *k) {
  struct px_conf_sched *s = &b->c->sched;
  double cpu = 0, mem = 0, gpu = 0;
  char buf[256];
  if (strlen(kv->val) >= sizeof buf) goto bad;
  snprintf(buf, sizeof buf, "%s", kv->val);
  char *save = NULL;
  for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(it, '='), *end;
    if (!eq) goto bad;
    *eq = '\0';
    double v = strtod(eq + 1, &end);
    if (end == eq + 1 || !(v >= 0 && v <= 1e9)) goto bad; /* NaN fails too */
    double per_gib = 1024; /* no suffix: per MiB */
    if (*end == 'K' || *end == 'k') per_gib = 1024.0 * 1024;
    else if (*end == 'M' || *end == 'm') per_gib = 1024;
    else if (*end == 'G' || *end == 'g') per_gib = 1;
    else if (*end == 'T' || *end == 't') per_gib = 1.0 / 1024;
    else if (*end) goto bad;
    if (!strcasecmp(it, "CPU") && !*end) cpu = v;
    else if (!strcasecmp(it, "Mem")) mem = v * per_gib;
    else if (!strcasecmp(it, "GRES/gpu") && !*end) gpu = v;
    else goto bad;
  }
  s->billing_weight_cpu = cpu;
  s->billing_weight_mem_gib = mem;
  s->billing_weight_gpu = gpu;
  return;
bad:
  px_cb_bad(b, w, kv, "weights like CPU=1.0,Mem=0.25G,GRES/gpu=2.0");
}

/* PrivateData=jobs[,usage,...]: "jobs" makes job listings private. */
static void set_private(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                        const struct px_key *k) {
  static const char *const known[] = {"accounts", "cloud", "events", "jobs", "nodes", "partitions",
                                      "reservations", "usage", "users", NULL};
  const char **items;
  uint32_t n;
  if (!px_split_list(b, w, kv, &items, &n)) return;
  bool jobs = false;
  for (uint32_t i = 0; i < n; i++) {
    const char *const *p = known;
    while (*p && strcasecmp(*p, items[i])) p++;
    if (!*p) {
      px_cb_bad(b, w, kv, "a list of accounts, cloud, events, jobs, nodes, partitions, reservations, usage, users");
      return;
    }
    if (!strcasecmp(items[i], "jobs")) jobs = true;
    else px_cb_warn(b, w, "PrivateData=%s: only 'jobs' is enforced by Phalanx", items[i]);
  }
  b->c->phalanx.private_jobs = jobs;
}

static void set_listen(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                       const struct px_key *k) {
  const char *colon = strrchr(kv->val, ':');
  char *end;
  long port = colon ? strtol(colon + 1, &end, 10) : 0;
  if (!colon || colon == kv->val || !colon[1] || *end || port < 1 || port > 65535) {
    px_cb_bad(b, w, kv, "HOST:PORT with a port from 1 to 65535");
    return;
  }
  px_set_str(b, w, kv, obj, k);
}

static void set_positive_secs(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                              const struct px_key *k) {
  int64_t *f = (int64_t *)((char *)obj + k->off), old = *f;
  px_set_secs(b, w, kv, obj, k);
  if (*f == 0) {
    px_cb_bad(b, w, kv, "a whole number of seconds, at least 1");
    *f = old;
  }
}

static void set_file(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                     const struct px_key *k) {
  if (b->from_text) {
    px_cb_error(b, w, "%s: naming files needs a configuration read from files", kv->key);
    return;
  }
  const char **dst = k->arg ? &b->accounts_file : &b->topology_file;
  struct px_where *dw = k->arg ? &b->accounts_w : &b->topology_w;
  if (!kv->val[0]) {
    px_cb_bad(b, w, kv, "a file name");
    return;
  }
  /* Relative to slurm.conf's directory, like Include. */
  char path[4096];
  const char *slash = strrchr(w->file, '/');
  if (kv->val[0] == '/' || !slash) snprintf(path, sizeof path, "%s", kv->val);
  else snprintf(path, sizeof path, "%.*s/%s", (int)(slash - w->file), w->file, kv->val);
  *dst = px_cb_strdup(b, path);
  *dw = *w;
}

/* Operators=alice,bob / Administrators=carol: user names, as written. */
static void set_users(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                      const struct px_key *k) {
  struct px_conf_phalanx *p = &b->c->phalanx;
  const char **v;
  uint32_t n;
  if (!px_split_list(b, w, kv, &v, &n)) return;
  if (k->arg) p->administrators = v, p->nadministrators = n;
  else p->operators = v, p->noperators = n;
}

/* Slurm's DisableRootJobs=YES is the inverse of AllowRootJobs. */
static void set_disable_root(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                             const struct px_key *k) {
  bool disable = !b->c->phalanx.allow_root_jobs;
  struct px_key tmp = {kv->key, px_set_bool, 0, NULL};
  px_set_bool(b, w, kv, &disable, &tmp);
  b->c->phalanx.allow_root_jobs = !disable;
}

/* A key that writes only the scheduling section names a field of it as its
 * offset, also when its setter does not use it: that is how a policy file
 * (px_conf_sched_set) tells the scheduling keys from the others. */
static const struct px_key global_keys[] = {
    {"ClusterName", px_set_lower, G(cluster_name), NULL},
    {"SchedulerType", set_plugin, G(sched.scheduler_type), sched_types},
    {"PriorityType", set_plugin, G(sched.priority_type), prio_types},
    {"SelectType", set_plugin, G(sched.select_type), select_types},
    {"PreemptType", set_plugin, G(sched.preempt_type), preempt_types},
    {"PreemptMode", px_set_preempt_mode, G(sched.preempt_mode), NULL},
    {"PriorityDecayHalfLife", px_set_dur, G(sched.decay_half_life_s), NULL},
    {"PriorityMaxAge", px_set_dur, G(sched.max_age_s), NULL},
    {"PriorityWeightAge", px_set_u32, G(sched.weight_age), NULL},
    {"PriorityWeightFairshare", px_set_u32, G(sched.weight_fairshare), NULL},
    {"PriorityWeightJobSize", px_set_u32, G(sched.weight_jobsize), NULL},
    {"PriorityWeightPartition", px_set_u32, G(sched.weight_partition), NULL},
    {"PriorityWeightQOS", px_set_u32, G(sched.weight_qos), NULL},
    {"PriorityWeightTRES", set_weight_tres, G(sched.weight_tres), NULL},
    {"PriorityFavorSmall", px_set_bool, G(sched.favor_small), NULL},
    {"FairTreeMergeTies", px_set_bool, G(sched.fair_tree_merge_ties), NULL},
    {"TRESBillingWeights", set_billing, G(sched.billing_weight_gpu), NULL},
    {"TopologyPlugin", set_plugin, 0, topo_plugins},
    {"KillWait", px_set_secs, G(phalanx.kill_wait_s), NULL},
    {"SlurmdTimeout", set_positive_secs, G(phalanx.node_down_timeout_s), NULL},
    {"PrivateData", set_private, 0, NULL},
    {"DisableRootJobs", set_disable_root, 0, NULL},
    /* Phalanx's own */
    {"StateDir", px_set_str, G(phalanx.state_dir), NULL},
    {"StoreURL", px_set_str, G(phalanx.store_url), NULL},
    {"Listen", set_listen, G(phalanx.listen), NULL},
    {"SocketPath", px_set_str, G(phalanx.socket_path), NULL},
    {"TLSCertFile", px_set_str, G(phalanx.tls_cert_file), NULL},
    {"TLSKeyFile", px_set_str, G(phalanx.tls_key_file), NULL},
    {"TLSCAFile", px_set_str, G(phalanx.tls_ca_file), NULL},
    {"AllowPlainTCP", px_set_bool, G(phalanx.allow_plain_tcp), NULL},
    {"HeartbeatInterval", set_positive_secs, G(phalanx.heartbeat_interval_s), NULL},
    {"GpuFaultPolicy", set_gpu_policy, 0, NULL},
    {"HealthCheckProgram", px_set_str, G(phalanx.health_check_program), NULL},
    {"HealthCheckInterval", px_set_secs, G(phalanx.health_check_interval_s), NULL},
    {"HealthCheckNodeState", set_hc_states, 0, NULL},
    {"RebootProgram", px_set_str, G(phalanx.reboot_program), NULL},
    {"MailProg", px_set_str, G(phalanx.mail_prog), NULL},
    {"MailDomain", px_set_str, G(phalanx.mail_domain), NULL},
    {"ContainerImageDir", px_set_str, G(phalanx.container_image_dir), NULL},
    {"GpuQuarantineFaults", px_set_u32, G(phalanx.gpu.quarantine_faults), NULL},
    {"GpuNodeFlapFaults", px_set_u32, G(phalanx.gpu.node_flap_faults), NULL},
    {"GpuQuarantineWindow", px_set_dur, G(phalanx.gpu.quarantine_window_s), NULL},
    {"GpuHealthIntervalMs", set_gpu_interval, G(phalanx.gpu.health_interval_ms), NULL},
    {"AllowRootJobs", px_set_bool, G(phalanx.allow_root_jobs), NULL},
    {"Operators", set_users, 0, NULL},
    {"Administrators", set_users, 0, "admin"},
    {"BackfillMode", set_global_enum, G(sched.backfill), backfill_modes},
    {"BackfillDepth", set_depth, G(sched.backfill_depth), NULL},
    {"BackfillWindow", px_set_dur, G(sched.backfill_window_s), NULL},
    {"BackfillResolution", set_positive_secs, G(sched.backfill_resolution_s), NULL},
    {"SchedulerParameters", set_sched_params, G(sched.bf_interval_s), NULL},
    {"PreemptMaxPerHour", px_set_u32, G(sched.preempt_max_per_hour), NULL},
    {"PreemptAccountMaxPerHour", px_set_u32, G(sched.preempt_account_max_per_hour), NULL},
    {"PreemptExemptAfter", px_set_u32, G(sched.preempt_exempt_after), NULL},
    {"PreemptExemptPeriod", px_set_dur, G(sched.preempt_exempt_s), NULL},
    {"Placement", px_set_enum, G(sched.placement), placements},
    {"PriorityOrder", set_global_enum, G(sched.order), orders},
    {"LasThresholds", set_las_thresholds, G(sched.las_thresholds_gpu_s), NULL},
    {"LasStarveLimit", px_set_double, G(sched.las_starve_limit), NULL},
    {"CheckpointInterval", px_set_dur, G(sched.ckpt_interval_s), NULL},
    {"CheckpointRestartCost", px_set_secs, G(sched.ckpt_restart_s), NULL},
    {"TopologyFile", set_file, 0, NULL},
    {"AccountsFile", set_file, 0, "accounts"},
    {"NodeName", px_set_misplaced, 0, NULL},
    {"PartitionName", px_set_misplaced, 0, NULL},
};

/* Slurm keys accepted and not used (docs/config.md lists them). */
static const char *const global_ignored[] = {
    "AccountingStorageEnforce", "AccountingStorageExternalHost", "AccountingStorageHost",
    "AccountingStorageLoc", "AccountingStorageParameters", "AccountingStoragePass", "AccountingStoragePort",
    "AccountingStorageTRES", "AccountingStorageType", "AccountingStorageUser", "AccountingStoreFlags",
    "AcctGatherEnergyType", "AcctGatherFilesystemType", "AcctGatherInterconnectType", "AcctGatherNodeFreq",
    "AcctGatherProfileType", "AuthAltParameters", "AuthAltTypes", "AuthInfo", "AuthType", "BackupAddr",
    "BackupController", "BatchStartTimeout", "BurstBufferType", "CliFilterPlugins", "CommunicationParameters",
    "CompleteWait", "ControlAddr", "ControlMachine", "CoreSpecPlugin", "CpuFreqDef", "CpuFreqGovernors",
    "CredType", "DebugFlags", "DefCpuPerGPU", "DefMemPerCPU", "DefMemPerGPU", "DefMemPerNode",
    "DependencyParameters", "EnforcePartLimits", "Epilog", "EpilogMsgTime",
    "EpilogSlurmctld", "FairShareDampeningFactor", "FederationParameters", "FirstJobId", "GetEnvTimeout",
    "GpuFreqDef", "GresTypes", "GroupUpdateForce", "GroupUpdateTime", "InactiveLimit", "JobAcctGatherFrequency",
    "JobAcctGatherParams", "JobAcctGatherType", "JobCompHost", "JobCompLoc", "JobCompParams", "JobCompPass",
    "JobCompPort", "JobCompType", "JobCompUser", "JobContainerType", "JobRequeue", "JobSubmitPlugins",
    "KillOnBadExit", "LaunchParameters", "LaunchType", "Licenses", "LogTimeFormat",
    "MaxArraySize", "MaxDBDMsgs", "MaxJobCount", "MaxJobId", "MaxMemPerCPU", "MaxMemPerNode", "MaxStepCount",
    "MaxTasksPerNode", "MCSParameters", "MCSPlugin", "MessageTimeout", "MinJobAge", "MpiDefault", "MpiParams",
    "NodeFeaturesPlugins", "OverTimeLimit", "PlugStackConfig", "PowerParameters", "PowerPlugin",
    "PreemptExemptTime", "PrEpParameters", "PrEpPlugins", "PriorityCalcPeriod", "PriorityFlags",
    "PriorityParameters", "PrioritySiteFactorParameters", "PrioritySiteFactorPlugin",
    "PriorityUsageResetPeriod", "PriorityWeightAssoc", "ProctrackType", "Prolog", "PrologEpilogTimeout",
    "PrologFlags", "PrologSlurmctld", "PropagatePrioProcess", "PropagateResourceLimits",
    "PropagateResourceLimitsExcept", "ReconfigFlags", "RequeueExit", "RequeueExitHold",
    "ResumeFailProgram", "ResumeProgram", "ResumeRate", "ResumeTimeout", "ResvEpilog", "ResvOverRun",
    "ResvProlog", "ReturnToService", "RoutePlugin", "SchedulerTimeSlice",
    "ScronParameters", "SelectTypeParameters", "SlurmctldAddr", "SlurmctldDebug", "SlurmctldHost",
    "SlurmctldLogFile", "SlurmctldParameters", "SlurmctldPidFile", "SlurmctldPort", "SlurmctldPrimaryOffProg",
    "SlurmctldPrimaryOnProg", "SlurmctldSyslogDebug", "SlurmctldTimeout", "SlurmdDebug", "SlurmdLogFile",
    "SlurmdParameters", "SlurmdPidFile", "SlurmdPort", "SlurmdSpoolDir", "SlurmdSyslogDebug", "SlurmdUser",
    "SlurmSchedLogFile", "SlurmSchedLogLevel", "SlurmUser", "SrunEpilog", "SrunPortRange", "SrunProlog",
    "StateSaveLocation", "SuspendExcNodes", "SuspendExcParts", "SuspendProgram", "SuspendRate",
    "SuspendTime", "SuspendTimeout", "SwitchType", "TaskEpilog", "TaskPlugin", "TaskPluginParam",
    "TaskProlog", "TCPTimeout", "TmpFS", "TopologyParam", "TrackWCKey", "TreeWidth", "UnkillableStepProgram",
    "UnkillableStepTimeout", "UsePAM", "VSizeFactor", "WaitTime", "X11Parameters", "DownNodes", "NodeSet",
    "FrontendName", NULL,
};

const struct px_keytab px_tab_global = {"slurm.conf", global_keys,
                                        sizeof global_keys / sizeof global_keys[0], global_ignored};

void px_slurm_defaults(struct px_cb *b) {
  struct px_conf *c = b->c;
  struct px_conf_sched *s = &c->sched;
  c->cluster_name = "cluster";
  s->scheduler_type = "sched/backfill";
  s->priority_type = "priority/multifactor";
  s->select_type = "select/cons_tres";
  s->preempt_type = "preempt/none";
  s->preempt_mode = PX_PREEMPT_OFF;
  s->backfill = PX_BACKFILL_CONSERVATIVE;
  s->backfill_depth = UINT32_MAX;
  s->placement = PX_PLACE_PACK;
  s->order = PX_ORDER_MULTIFACTOR;
  s->decay_half_life_s = 7 * 86400;
  s->backfill_window_s = 86400;
  s->backfill_resolution_s = 300;
  s->preempt_exempt_s = 3600;
  s->max_age_s = 7 * 86400;
  s->weight_age = 1000;
  s->weight_fairshare = 10000;
  s->weight_partition = 1000;
  s->weight_qos = 1000;
  s->billing_weight_gpu = 1.0;
  struct px_conf_phalanx *p = &c->phalanx;
  p->state_dir = "/var/lib/phalanx";
  p->heartbeat_interval_s = 30;
  p->node_down_timeout_s = 300;
  p->kill_wait_s = 30;
  px_gpu_policy_defaults(&p->gpu);

  struct px_conf_node *n = &b->node_def.n;
  n->cpus = n->sockets = n->cores_per_socket = n->threads_per_core = 1;
  n->mem_mib = 1;
  n->gpu_groups = 1;
  n->weight = 1;
  n->state = PX_NODE_CONF_UP;
  n->leaf_switch = n->block = PX_NONE;
  b->node_def.boards = 1;

  struct px_conf_partition *pt = &b->part_def.p;
  pt->up = true;
  pt->max_time_s = PX_TIME_UNLIMITED;
  pt->default_time_s = -1; /* "absent": MaxTime then */
  pt->max_nodes = UINT32_MAX;
  pt->priority_tier = 1;
  pt->priority_job_factor = 1;
}

/* Checks that need all the global keys. */
void px_slurm_finish(struct px_cb *b) {
  struct px_conf_sched *s = &b->c->sched;
  bool builtin = strcmp(s->scheduler_type, "sched/builtin") == 0;
  if (builtin && !b->backfill_given) s->backfill = PX_BACKFILL_NONE;
  if (builtin && b->backfill_given && s->backfill != PX_BACKFILL_NONE)
    px_cb_error(b, &b->backfill_w, "BackfillMode asks for backfill but SchedulerType=sched/builtin (line %d) "
                "has none; use SchedulerType=sched/backfill", b->sched_w.line);
  bool basic = strcmp(s->priority_type, "priority/basic") == 0;
  if (basic && !b->order_given) s->order = PX_ORDER_FIFO;
  if (basic && b->order_given && s->order == PX_ORDER_MULTIFACTOR)
    px_cb_error(b, &b->order_w, "PriorityOrder=multifactor needs PriorityType=priority/multifactor");
  if (!b->c->phalanx.socket_path) {
    char path[4096];
    snprintf(path, sizeof path, "%s/phalanx.sock", b->c->phalanx.state_dir);
    b->c->phalanx.socket_path = px_cb_strdup(b, path);
  }
}

void px_slurm_line(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, size_t n) {
  if (!strcasecmp(kv[0].key, "NodeName")) px_node_line(b, w, kv, n);
  else if (!strcasecmp(kv[0].key, "PartitionName")) px_part_line(b, w, kv, n);
  else if (!strcasecmp(kv[0].key, "NodeSet") || !strcasecmp(kv[0].key, "DownNodes") ||
           !strcasecmp(kv[0].key, "FrontendName"))
    px_cb_apply(b, w, &kv[0], &px_tab_global, b); /* warns once; the rest of the line is theirs */
  else
    for (size_t i = 0; i < n; i++) px_cb_apply(b, w, &kv[i], &px_tab_global, b->c);
}
