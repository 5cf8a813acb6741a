/*
 * accounts.c - the accounts and QoS file (accounts.conf), Phalanx's stand-in
 * for what Slurm keeps in slurmdbd, written in slurm.conf's Key=Value style:
 *
 *   Account=vision Parent=research Fairshare=40 GrpTRES=gres/gpu=64 Users=alice,bob
 *   User=alice Account=vision Fairshare=2 DefaultAccount=vision
 *   QOS=high Priority=1000 Preempt=low,normal PreemptMode=requeue MaxWall=2-0
 *
 * Account and QoS names are folded to lower case as sacctmgr does; user
 * names are kept as written. The tree, users' leaves and references are
 * resolved in build_acct.c. docs/config.md documents every key.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/parse.h"

#define A(field) offsetof(struct px_acct_raw, field)
#define Q(field) offsetof(struct px_qos_raw, field)

/* Fairshare=N, or Fairshare=parent: the association's usage counts as its parent's (Slurm). */
static void set_fairshare(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                          const struct px_key *k) {
  struct px_conf_account *a = &((struct px_acct_raw *)obj)->a;
  uint64_t v;
  if (!strcasecmp(kv->val, "parent")) a->fairshare = PX_FAIRSHARE_PARENT;
  else if (px_parse_u64(b, w, kv, PX_FAIRSHARE_PARENT - 1, &v)) a->fairshare = (uint32_t)v;
}

static void set_grp_tres(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                         const struct px_key *k) {
  struct px_conf_account *a = &((struct px_acct_raw *)obj)->a;
  struct px_tres t = {a->grp_gpus, a->grp_cpus, a->grp_mem_mib, a->grp_nodes};
  if (!px_parse_tres(b, w, kv, &t)) return;
  a->grp_gpus = t.gpus, a->grp_cpus = t.cpus, a->grp_mem_mib = t.mem_mib, a->grp_nodes = t.nodes;
}

/* MaxTRES / MaxTRESPerUser: only a GPU count is enforced; k->off is the field. */
static void set_gpu_tres(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                         const struct px_key *k) {
  uint64_t *dst = (uint64_t *)((char *)obj + k->off);
  struct px_tres t = {*dst, PX_NOLIMIT, PX_NOLIMIT, PX_NOLIMIT};
  if (!px_parse_tres(b, w, kv, &t)) return;
  if (t.cpus != PX_NOLIMIT || t.mem_mib != PX_NOLIMIT || t.nodes != PX_NOLIMIT) {
    px_cb_bad(b, w, kv, "a GPU limit, gres/gpu=N (the only one enforced per job or user)");
    return;
  }
  *dst = t.gpus;
}

static void set_list(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                     const struct px_key *k) {
  struct px_conf_account *a = &((struct px_acct_raw *)obj)->a;
  const char **v;
  uint32_t n;
  if (px_split_list(b, w, kv, &v, &n)) a->coordinators = v, a->ncoordinators = n;
}

#define ACCT_LIMITS                                                   \
  {"Fairshare", set_fairshare, 0, NULL},                               \
  {"GrpTRES", set_grp_tres, 0, NULL},                                 \
  {"GrpJobs", px_set_u64_limit, A(a.grp_jobs), NULL},                 \
  {"MaxJobs", px_set_u64_limit, A(a.max_jobs), NULL},                 \
  {"MaxSubmitJobs", px_set_u64_limit, A(a.max_submit_jobs), NULL},    \
  {"MaxSubmit", px_set_u64_limit, A(a.max_submit_jobs), NULL},        \
  {"MaxTRES", set_gpu_tres, A(a.max_gpus_per_job), NULL},             \
  {"MaxTRESPerJob", set_gpu_tres, A(a.max_gpus_per_job), NULL},       \
  {"DefaultQOS", px_set_lower, A(a.default_qos), NULL}

static const struct px_key account_keys[] = {
    {"Account", px_set_misplaced, 0, NULL},
    ACCT_LIMITS,
    {"Parent", px_set_lower, A(parent), NULL},
    {"Users", px_set_str, A(users), NULL},
    {"Coordinators", set_list, 0, NULL},
    {"GuaranteedGPUs", px_set_u64, A(a.guaranteed_gpus), NULL},
    {"Cohort", px_set_lower, A(a.cohort), NULL},
    {"BorrowingLimit", px_set_u64_limit, A(a.borrow_limit_gpus), NULL},
    {"LendingLimit", px_set_u64_limit, A(a.lend_limit_gpus), NULL},
};
static const char *const account_ignored[] = {"Description", "Organization", NULL};
const struct px_keytab px_tab_account = {"Account", account_keys, sizeof account_keys / sizeof account_keys[0],
                                         account_ignored};

static const struct px_key user_keys[] = {
    {"User", px_set_misplaced, 0, NULL},
    ACCT_LIMITS,
    {"Account", px_set_lower, A(parent), NULL},
    {"DefaultAccount", px_set_lower, A(default_account), NULL},
};
static const char *const user_ignored[] = {"AdminLevel", "WCKeys", "DefaultWCKey", NULL};
const struct px_keytab px_tab_user = {"User", user_keys, sizeof user_keys / sizeof user_keys[0], user_ignored};

static const struct px_enum qos_modes[] = {
    {"CLUSTER", -1},  {"OFF", PX_PREEMPT_OFF},         {"CANCEL", PX_PREEMPT_CANCEL},
    {"REQUEUE", PX_PREEMPT_REQUEUE}, {"SUSPEND", PX_PREEMPT_SUSPEND}, {NULL, 0}};

static void set_qos_mode(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                         const struct px_key *k) {
  struct px_qos_raw *r = obj;
  int v;
  if (!px_parse_enum(b, w, kv, qos_modes, &v)) return;
  r->mode_given = v >= 0;
  if (v >= 0) r->q.preempt_mode = (enum px_preempt_mode)v;
}

/* GraceSignal=USR1, SIGUSR1 or a number 1..64: the signal sent at preemption. */
static void set_grace_signal(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                             const struct px_key *k) {
  static const struct px_enum sigs[] = {{"HUP", 1},   {"INT", 2},   {"QUIT", 3},  {"KILL", 9},  {"USR1", 10},
                                        {"USR2", 12}, {"ALRM", 14}, {"TERM", 15}, {"CONT", 18}, {"STOP", 19},
                                        {"TSTP", 20}, {"URG", 23},  {"XCPU", 24}, {NULL, 0}};
  const char *name = kv->val;
  if (!strncasecmp(name, "SIG", 3)) name += 3;
  int32_t *out = (int32_t *)((char *)obj + k->off);
  for (const struct px_enum *e = sigs; e->name; e++)
    if (!strcasecmp(name, e->name)) { *out = e->value; return; }
  char *end = NULL;
  long v = (*name >= '0' && *name <= '9') ? strtol(name, &end, 10) : -1;
  if (v < 1 || v > 64 || *end) px_cb_bad(b, w, kv, "a signal name (USR1, SIGTERM, ...) or number 1..64");
  else *out = (int32_t)v;
}

static const struct px_key qos_keys[] = {
    {"QOS", px_set_misplaced, 0, NULL},
    {"Priority", px_set_u32, Q(q.priority), NULL},
    {"Preempt", px_set_lower, Q(preempt), NULL},
    {"PreemptMode", set_qos_mode, 0, NULL},
    {"GraceTime", px_set_secs, Q(q.grace_time_s), NULL},
    {"GraceSignal", set_grace_signal, Q(q.grace_signal), NULL},
    {"PreemptExemptTime", px_set_dur, Q(q.min_runtime_s), NULL},
    {"MaxTRESPerUser", set_gpu_tres, Q(q.max_gpus_per_user), NULL},
    {"MaxJobsPerUser", px_set_u64_limit, Q(q.max_jobs_per_user), NULL},
    {"MaxSubmitJobsPerUser", px_set_u64_limit, Q(q.max_submit_per_user), NULL},
    {"MaxWall", px_set_dur, Q(q.max_wall_s), NULL},
    {"UsageFactor", px_set_double, Q(q.usage_factor), NULL},
};
static const char *const qos_ignored[] = {"Description", "Flags", NULL};
const struct px_keytab px_tab_qos = {"QOS", qos_keys, sizeof qos_keys / sizeof qos_keys[0], qos_ignored};

static const char *const file_ignored[] = {"Cluster", NULL};
static const struct px_keytab tab_file = {"accounts file", NULL, 0, file_ignored};

void px_account_defaults(struct px_conf_account *a) {
  memset(a, 0, sizeof *a);
  a->parent = PX_NONE;
  a->fairshare = 1;
  a->grp_gpus = a->grp_cpus = a->grp_mem_mib = a->grp_nodes = PX_NOLIMIT;
  a->grp_jobs = a->max_jobs = a->max_submit_jobs = a->max_gpus_per_job = PX_NOLIMIT;
  a->borrow_limit_gpus = a->lend_limit_gpus = PX_NOLIMIT;
}

void px_qos_defaults(struct px_conf_qos *q) {
  memset(q, 0, sizeof *q);
  q->max_gpus_per_user = q->max_jobs_per_user = q->max_submit_per_user = PX_NOLIMIT;
  q->max_wall_s = PX_TIME_UNLIMITED;
  q->usage_factor = 1.0;
}

static const char *name_of(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, bool lower) {
  if (!kv->val[0] || strpbrk(kv->val, ",[]=")) {
    px_cb_bad(b, w, kv, "one name (no commas, brackets or '=')");
    return NULL;
  }
  char *s = px_cb_strdup(b, kv->val);
  for (char *p = s; lower && p && *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
  return s;
}

static void account_line(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, size_t n,
                         bool user) {
  struct px_acct_raw r = {.w = *w};
  uint32_t errors = b->nerrors;
  px_account_defaults(&r.a);
  r.a.is_user = user;
  for (size_t i = 1; i < n; i++) px_cb_apply(b, w, &kv[i], user ? &px_tab_user : &px_tab_account, &r);
  if (!(r.a.name = name_of(b, w, &kv[0], !user)) || b->nerrors != errors) return;
  if (user && !r.parent && !r.default_account) {
    px_cb_error(b, w, "User=%s needs Account= (the association) or DefaultAccount=", r.a.name);
    return;
  }
  if (!user && r.a.borrow_limit_gpus != PX_NOLIMIT && !r.a.cohort) {
    px_cb_error(b, w, "Account=%s: BorrowingLimit needs a Cohort to borrow from", r.a.name);
    return;
  }
  if (!user && r.a.lend_limit_gpus != PX_NOLIMIT && r.a.lend_limit_gpus > r.a.guaranteed_gpus) {
    px_cb_error(b, w, "Account=%s: LendingLimit=%llu is more than GuaranteedGPUs=%llu", r.a.name,
                (unsigned long long)r.a.lend_limit_gpus, (unsigned long long)r.a.guaranteed_gpus);
    return;
  }
  r.user_order = (uint32_t)b->users.len;
  if (px_acctvec_push(user ? &b->users : &b->accts, r)) b->oom = true;
}

static void qos_line(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, size_t n) {
  struct px_qos_raw r = {.w = *w};
  uint32_t errors = b->nerrors;
  px_qos_defaults(&r.q);
  for (size_t i = 1; i < n; i++) px_cb_apply(b, w, &kv[i], &px_tab_qos, &r);
  if (!(r.q.name = name_of(b, w, &kv[0], true)) || b->nerrors != errors) return;
  if (px_qosvec_push(&b->qos, r)) b->oom = true;
}

void px_accounts_line(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, size_t n) {
  if (!strcasecmp(kv[0].key, "Account")) account_line(b, w, kv, n, false);
  else if (!strcasecmp(kv[0].key, "User")) account_line(b, w, kv, n, true);
  else if (!strcasecmp(kv[0].key, "QOS")) qos_line(b, w, kv, n);
  else
    for (size_t i = 0; i < n; i++) px_cb_apply(b, w, &kv[i], &tab_file, b);
}
