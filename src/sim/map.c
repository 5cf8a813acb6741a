/*
 * map.c - the mapping rules from a trace job to a job the core can run
 * (sim.h; docs/simulator.md states them for users):
 *
 *   account   the trace's queue (virtual cluster), or "default" when empty;
 *             the job runs as that account's one user association.
 *   limit     the trace's time_limit_s when given, else duration x factor
 *             (default 2: users over-estimate), rounded up to whole minutes,
 *             at least one minute.
 *   nodes     the trace's node count when given; else 1 when the GPUs fit on
 *             one node, else ceil(gpus / GPUs per node).
 *   skipped   more GPUs or nodes than the cluster has, or more GPUs per node
 *             than a node has: counted by reason, never submitted.
 *   name      the trace's (an exported trace's name column), qualified by
 *             the recorded user when the job runs as another (deps.c).
 *
 * Jobs are sorted by (submit_s, line) so that job ids follow arrival order.
 */
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/jobspec.h"

const char *px_sim_skip_name(enum px_sim_skip s) {
  static const char *const names[PX_SIM_SKIP_COUNT] = {
      "runs", "more GPUs than the cluster", "more nodes than the cluster",
      "more GPUs per node than a node has", "rejected by the scheduler"};
  return (unsigned)s < PX_SIM_SKIP_COUNT ? names[s] : "?";
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int px_sim_trace_accounts(const struct px_trace *t, const char ***names, uint32_t *n) {
  /* Mark the names used as a queue, then collect them: O(jobs + names). */
  bool *used = calloc(t->names.len + 1, sizeof *used);
  if (!used) return PX_ENOMEM;
  bool any_default = false;
  for (size_t i = 0; i < t->jobs.len; i++) {
    uint32_t q = t->jobs.v[i].queue;
    if (q == PX_TRACE_NONE) any_default = true;
    else used[q] = true;
  }
  uint32_t k = 0;
  const char **v = malloc((t->names.len + 1) * sizeof *v);
  if (!v) {
    free(used);
    return PX_ENOMEM;
  }
  for (size_t i = 0; i < t->names.len; i++) {
    if (used[i] && strcmp(t->names.v[i], PX_SIM_DEFAULT_ACCOUNT) == 0) any_default = true;
    else if (used[i]) v[k++] = t->names.v[i];
  }
  if (any_default) v[k++] = PX_SIM_DEFAULT_ACCOUNT;
  free(used);
  qsort(v, k, sizeof *v, cmp_str);
  *names = v;
  *n = k;
  return 0;
}

/*
 * The association a trace queue's jobs run under: the account named like the
 * queue (account names are case-insensitive, as in Slurm: the configuration
 * stores them in lower case), and under it the user leaf of the same name
 * (what px_sim_cluster_new builds), else its first user leaf (a
 * configuration file's accounts).
 */
static uint32_t find_assoc(const struct px_conf *c, const char *name) {
  uint32_t first = PX_NONE;
  for (uint32_t i = 0; i < c->naccounts; i++) {
    const struct px_conf_account *a = &c->accounts[i];
    if (!a->is_user || a->parent == PX_NONE || c->accounts[a->parent].is_user ||
        strcasecmp(c->accounts[a->parent].name, name) != 0)
      continue;
    if (strcmp(a->name, name) == 0) return i;
    if (first == PX_NONE) first = i;
  }
  return first;
}

/*
 * The association a job runs under: its recorded user's under its account
 * when the configuration has that user there (an exported trace names who
 * submitted each job), else the account's (find_assoc).
 */
static uint32_t user_assoc(const struct px_conf *c, uint32_t account_assoc, const char *user) {
  uint32_t parent = c->accounts[account_assoc].parent;
  for (uint32_t i = 0; *user && i < c->naccounts; i++) {
    const struct px_conf_account *a = &c->accounts[i];
    if (a->is_user && a->parent == parent && strcmp(a->name, user) == 0) return i;
  }
  return account_assoc;
}

/* user_assoc per trace user, remembered for the account it last came with
 * (a user mostly submits to one account: a long trace scans once each). */
struct assoc_memo {
  uint32_t *account, *assoc; /* per trace name index; account PX_NONE: not yet */
};

static uint32_t job_assoc(struct px_sim_setup *s, struct assoc_memo *m, const struct px_sim_job *j) {
  const struct px_trace *t = s->trace;
  uint32_t u = t->jobs.v[j->trace_index].user, a = s->account_assoc[j->account];
  if (u == PX_TRACE_NONE) return a;
  if (m->account[u] != j->account) {
    m->account[u] = j->account;
    m->assoc[u] = user_assoc(s->conf, a, t->names.v[u]);
  }
  return m->assoc[u];
}

static int64_t estimate_limit(int64_t duration_s, double factor) {
  double l = ceil((double)duration_s * factor / PX_SIM_LIMIT_ROUND_S) * PX_SIM_LIMIT_ROUND_S;
  if (l < PX_SIM_LIMIT_ROUND_S) l = PX_SIM_LIMIT_ROUND_S;
  return l > 1e15 ? (int64_t)1e15 : (int64_t)l;
}

static void map_job(const struct px_sim_setup *s, const struct px_trace_job *tj, struct px_sim_job *j) {
  j->submit_s = tj->submit_s;
  j->duration_s = tj->duration_s;
  j->limit_s = tj->time_limit_s > 0 ? tj->time_limit_s : estimate_limit(tj->duration_s, s->limit_factor);
  j->gpus = tj->gpus;
  if (tj->nodes) j->nodes = tj->nodes;
  else if (tj->gpus <= s->node_gpus || s->node_gpus == 0) j->nodes = 1;
  else j->nodes = (tj->gpus + s->node_gpus - 1) / s->node_gpus;
  j->skip = PX_SIM_RUNS;
  j->after_target = false; /* px_sim_deps_init */
  if (j->gpus > s->total_gpus) j->skip = PX_SIM_SKIP_TOO_MANY_GPUS;
  else if (j->nodes > s->nnodes) j->skip = PX_SIM_SKIP_TOO_MANY_NODES;
  else if ((j->gpus + j->nodes - 1) / j->nodes > s->node_gpus) j->skip = PX_SIM_SKIP_GPUS_PER_NODE;
}

static int cmp_job(const void *a, const void *b) {
  const struct px_sim_job *x = a, *y = b;
  if (x->submit_s != y->submit_s) return x->submit_s < y->submit_s ? -1 : 1;
  return x->trace_index < y->trace_index ? -1 : x->trace_index > y->trace_index;
}

static uint32_t account_of(const struct px_sim_setup *s, const struct px_trace *t, uint32_t queue) {
  const char *name = queue == PX_TRACE_NONE ? PX_SIM_DEFAULT_ACCOUNT : t->names.v[queue];
  const char **hit = bsearch(&name, s->accounts, s->naccounts, sizeof *s->accounts, cmp_str);
  return hit ? (uint32_t)(hit - s->accounts) : 0;
}

static void shape_cluster(struct px_sim_setup *s, const struct px_conf *conf) {
  s->nnodes = conf->nnodes;
  for (uint32_t i = 0; i < conf->nnodes; i++) {
    s->total_gpus += conf->nodes[i].ngpu;
    if (conf->nodes[i].ngpu > s->node_gpus) s->node_gpus = conf->nodes[i].ngpu;
  }
}

int px_sim_setup_init(struct px_sim_setup *s, const struct px_trace *t, const struct px_conf *conf,
                      double limit_factor, struct px_diag *d) {
  memset(s, 0, sizeof *s);
  if (!(limit_factor >= 1.0 && limit_factor <= 1000.0))
    return px_diag_set(d, PX_EINVAL, -1, "--limit-factor must be between 1 and 1000");
  s->trace = t;
  s->conf = conf;
  s->limit_factor = limit_factor;
  shape_cluster(s, conf);
  int rc = px_sim_trace_accounts(t, &s->accounts, &s->naccounts);
  if (rc) return rc;
  rc = PX_ENOMEM;
  if (!(s->account_assoc = malloc((s->naccounts + 1) * sizeof *s->account_assoc))) goto fail;
  for (uint32_t a = 0; a < s->naccounts; a++) {
    if ((s->account_assoc[a] = find_assoc(conf, s->accounts[a])) == PX_NONE) {
      rc = px_diag_set(d, PX_EINVAL, -1, "trace queue '%s' has no account of that name with a user in the cluster",
                       s->accounts[a]);
      goto fail;
    }
  }
  struct assoc_memo m = {malloc((t->names.len + 1) * sizeof *m.account),
                         malloc((t->names.len + 1) * sizeof *m.assoc)};
  if (!m.account || !m.assoc || !(s->jobs = malloc((t->jobs.len + 1) * sizeof *s->jobs))) {
    free(m.account), free(m.assoc);
    goto fail;
  }
  for (size_t i = 0; i < t->names.len; i++) m.account[i] = PX_NONE;
  s->njobs = (uint32_t)t->jobs.len;
  for (uint32_t i = 0; i < s->njobs; i++) {
    struct px_sim_job *j = &s->jobs[i];
    map_job(s, &t->jobs.v[i], j);
    j->trace_index = i;
    j->qos = 0;
    j->account = account_of(s, t, t->jobs.v[i].queue);
    j->assoc = job_assoc(s, &m, j);
    s->nskipped[j->skip]++;
  }
  free(m.account);
  free(m.assoc);
  qsort(s->jobs, s->njobs, sizeof *s->jobs, cmp_job);
  if (t->ndependent && (rc = px_sim_deps_init(s))) goto fail;
  if (t->nnamed && (rc = px_sim_names_init(s))) goto fail;
  return 0;
fail:
  px_sim_setup_fini(s);
  return rc;
}

/* ---- --qos-map ------------------------------------------------------------ */

enum rule_kind { RULE_QUEUE, RULE_GPUS_GE, RULE_GPUS_LE };

struct qos_rule {
  enum rule_kind kind;
  uint32_t account;  /* RULE_QUEUE: setup account index, PX_NONE when the trace has no such queue */
  uint64_t gpus;
};

static bool rule_matches(const struct qos_rule *r, const struct px_sim_job *j) {
  switch (r->kind) {
    case RULE_QUEUE: return j->account == r->account;
    case RULE_GPUS_GE: return j->gpus >= r->gpus;
    case RULE_GPUS_LE: return j->gpus <= r->gpus;
  }
  return false;
}

/* One "RULE:QOS" of len bytes at p into r and s->qos_names[i]. */
static int parse_rule(struct px_sim_setup *s, const char *p, size_t len, uint32_t i, struct qos_rule *r,
                      char *buf, size_t bufsz, struct px_diag *d) {
  if (len >= bufsz) return px_diag_set(d, PX_EINVAL, -1, "--qos-map rule %u: too long", i + 1);
  memcpy(buf, p, len);
  buf[len] = '\0';
  char *colon = strrchr(buf, ':');
  if (!colon || !colon[1])
    return px_diag_set(d, PX_EINVAL, -1, "--qos-map rule %u '%s': expected RULE:QOS, e.g. gpus>=9:high", i + 1, buf);
  *colon = '\0';
  const char *qos = colon + 1;
  if (px_conf_find_qos(s->conf, qos) == PX_NONE)
    return px_diag_set(d, PX_EINVAL, -1, "--qos-map rule %u '%s:%s': the cluster has no QoS '%s'", i + 1, buf,
                       qos, qos);
  if (strlen(qos) >= sizeof s->qos_names[i])
    return px_diag_set(d, PX_EINVAL, -1, "--qos-map rule %u: QoS name too long", i + 1);
  snprintf(s->qos_names[i], sizeof s->qos_names[i], "%s", qos);
  char *end;
  if (!strncasecmp(buf, "queue=", 6)) {
    const char *name = buf + 6;
    const char **hit = bsearch(&name, s->accounts, s->naccounts, sizeof *s->accounts, cmp_str);
    if (!*name) return px_diag_set(d, PX_EINVAL, -1, "--qos-map rule %u: queue= needs a queue name", i + 1);
    *r = (struct qos_rule){RULE_QUEUE, hit ? (uint32_t)(hit - s->accounts) : PX_NONE, 0};
    for (uint32_t a = 0; !hit && a < s->naccounts; a++) /* queue names are case-insensitive */
      if (!strcasecmp(s->accounts[a], name)) r->account = a, hit = &s->accounts[a];
    if (!hit) return px_diag_set(d, PX_EINVAL, -1, "--qos-map rule %u: the trace has no queue '%s'", i + 1, name);
    return 0;
  }
  bool ge = !strncmp(buf, "gpus>=", 6), le = !strncmp(buf, "gpus<=", 6);
  unsigned long long g = (ge || le) && buf[6] >= '0' && buf[6] <= '9' ? strtoull(buf + 6, &end, 10) : 0;
  if ((!ge && !le) || buf[6] < '0' || buf[6] > '9' || *end)
    return px_diag_set(d, PX_EINVAL, -1, "--qos-map rule %u '%s': expected queue=NAME, gpus>=N or gpus<=N", i + 1, buf);
  *r = (struct qos_rule){ge ? RULE_GPUS_GE : RULE_GPUS_LE, PX_NONE, g};
  return 0;
}

int px_sim_setup_qos(struct px_sim_setup *s, const char *spec, struct px_diag *d) {
  struct qos_rule rules[PX_SIM_QOS_RULES];
  char buf[256];
  uint32_t n = 0;
  for (const char *p = spec;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (n == PX_SIM_QOS_RULES) return px_diag_set(d, PX_EINVAL, -1, "--qos-map: at most %d rules", PX_SIM_QOS_RULES);
    int rc = parse_rule(s, p, len, n, &rules[n], buf, sizeof buf, d);
    if (rc) return rc;
    n++;
    if (!comma) break;
    p = comma + 1;
  }
  s->qos_map = spec;
  s->nqos_rules = n;
  memset(s->qos_jobs, 0, sizeof s->qos_jobs);
  for (uint32_t i = 0; i < s->njobs; i++) {
    struct px_sim_job *j = &s->jobs[i];
    j->qos = 0;
    for (uint32_t r = 0; r < n && !j->qos; r++)
      if (rule_matches(&rules[r], j)) j->qos = (uint8_t)(r + 1), s->qos_jobs[r] += j->skip == PX_SIM_RUNS;
  }
  return 0;
}

void px_sim_setup_fini(struct px_sim_setup *s) {
  free(s->jobs);
  free(s->accounts);
  free(s->account_assoc);
  px_smap_fini(&s->dep_ids);
  free(s->array_tasks);
  free(s->job_name);
  px_strvec_free_all(&s->job_names);
  px_smap_fini(&s->job_name_index);
  memset(s, 0, sizeof *s);
}

void px_sim_job_spec(const struct px_sim_setup *s, uint32_t job, uint32_t assoc, struct px_jobspec *spec) {
  const struct px_sim_job *j = &s->jobs[job];
  const struct px_conf_account *a = &s->conf->accounts[assoc];
  const struct px_trace_job *tj = &s->trace->jobs.v[j->trace_index];
  px_jobspec_init(spec);
  spec->name = (char *)px_sim_job_name(s, job); /* what singleton keys on, with the user */
  spec->user = (char *)a->name;
  spec->account = (char *)s->conf->accounts[a->parent].name;
  spec->nodes_min = spec->nodes_max = spec->ntasks = j->nodes;
  spec->ntasks_per_node = spec->cpus_per_task = 1;
  if (j->gpus % j->nodes == 0) spec->gpus_per_node = j->gpus / j->nodes;
  else spec->gpus = j->gpus;
  spec->mem_per_node_mib = PX_SIM_JOB_MEM_MIB;
  spec->time_limit_s = j->limit_s;
  /* an exported trace (`phalanx export`) names the job's partition and
   * QoS: the replay asks for them, as the job did */
  if (tj->partition != PX_TRACE_NONE) spec->partition = (char *)px_trace_name(s->trace, tj->partition);
  if (tj->qos != PX_TRACE_NONE) spec->qos = (char *)px_trace_name(s->trace, tj->qos);
  if (j->qos) spec->qos = (char *)s->qos_names[j->qos - 1]; /* --qos-map wins */
}
