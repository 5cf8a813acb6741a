/*
 * acct.c - online changes of the accounts tree and of QoS limits (sacctmgr
 * add, modify, delete; PX_EV_ACCT, core/event.h): the core owns the tree it
 * schedules with, so a change is validated here, against the live tree and
 * the jobs, and takes effect at once (Fair Tree ranks with the new shares
 * at the next cycle; limits are read by the next admission).
 *
 * Indexes never move. An association added goes at the end of the array
 * (its parent's last child); one deleted leaves the tree but keeps its
 * slot, marked deleted, because jobs, partitions' account sets, the quota
 * table and the server's listings address associations by index, and the
 * server's copy of the configuration follows with the same indexes
 * (conf/acct_edit.c).
 *
 * A user's default association (where its jobs without --account go)
 * is the one marked at addition or by a modification with account and
 * default_account, else its first.
 *
 * Rules, each refusal naming the field: a new account needs a live parent
 * and a name not taken; a user association needs its account; a deletion
 * is refused while the association (or, for an account, any of its users)
 * has queued or running jobs, while an account has sub-accounts, or for an
 * account holding a quota of the accounts file (GuaranteedGPUs, Cohort).
 * A QoS added online preempts none and takes the cluster's PreemptMode; at
 * most PXC_QOS_ONLINE_MAX are added until the next start (the tables
 * indexed by QoS are sized once). A QoS is deleted only when no job,
 * association default, partition's AllowQos or other QoS's Preempt= names
 * it; its slot stays, nameless.
 *
 * Nothing changes on refusal or out of memory: everything that can fail
 * (growing arrays, map room, interned names) happens before the first
 * change of state.
 */
#include <string.h>

#include "core/core_int.h"
#include "core/policy.h"

static bool has(const struct px_acct_edit *e, enum px_acct_field f) { return e->set >> f & 1; }

/* A live account (not a user leaf) named name, or PX_NONE. */
static uint32_t find_account(const struct px_core *c, const char *name) {
  uint32_t id = name ? pxc_lookup(c, name) : PX_NONE;
  for (uint32_t i = 0; id != PX_NONE && i < c->nassoc; i++)
    if (!c->assoc[i].is_user && !c->assoc[i].deleted && c->assoc[i].name == id) return i;
  return PX_NONE;
}

/* Is i a live association of user (string id) under account (any: PX_NONE)? */
static bool user_leaf(const struct px_core *c, uint32_t i, uint32_t user, uint32_t account) {
  const struct pxc_assoc *a = &c->assoc[i];
  return a->is_user && !a->deleted && a->user == user && (account == PX_NONE || a->parent == account);
}

static int check_values(const struct px_acct_edit *e, struct px_diag *d) {
  bool qos = e->entity == PX_ACCT_QOS;
  for (unsigned f = 0; f < PX_ACCT_NFIELDS; f++) {
    if (!has(e, (enum px_acct_field)f)) continue;
    if (px_acct_field_is_assoc((enum px_acct_field)f) == qos)
      return px_diag_set(d, PX_EINVAL, -1, "%s: not a setting of %s", px_acct_field_name((enum px_acct_field)f),
                         qos ? "a QoS" : "an account or user association");
  }
  if (has(e, PX_ACCT_FAIRSHARE) && e->value[PX_ACCT_FAIRSHARE] > PX_FAIRSHARE_PARENT)
    return px_diag_set(d, PX_ERANGE, -1, "fairshare: %llu is over the largest share count (%u; %u: parent)",
                       (unsigned long long)e->value[PX_ACCT_FAIRSHARE], PX_FAIRSHARE_PARENT - 1,
                       PX_FAIRSHARE_PARENT);
  if (has(e, PX_ACCT_PRIORITY) && e->value[PX_ACCT_PRIORITY] >= UINT32_MAX)
    return px_diag_set(d, PX_ERANGE, -1, "priority: must be below %u", UINT32_MAX);
  if (has(e, PX_ACCT_MAX_WALL_S) && e->value[PX_ACCT_MAX_WALL_S] != PX_NOLIMIT &&
      e->value[PX_ACCT_MAX_WALL_S] > (uint64_t)PX_TIME_UNLIMITED)
    return px_diag_set(d, PX_ERANGE, -1, "max_wall_s: out of range");
  return 0;
}

/* ---- limits ---- */

static void set_limits(struct pxc_assoc *a, const struct px_acct_edit *e) {
  uint64_t *grp[] = {[PX_ACCT_GRP_GPUS] = &a->grp_gpus, [PX_ACCT_GRP_CPUS] = &a->grp_cpus,
                     [PX_ACCT_GRP_MEM] = &a->grp_mem,   [PX_ACCT_GRP_NODES] = &a->grp_nodes,
                     [PX_ACCT_GRP_JOBS] = &a->grp_jobs};
  for (size_t f = 0; f < sizeof grp / sizeof grp[0]; f++)
    if (grp[f] && has(e, (enum px_acct_field)f)) *grp[f] = e->value[f];
  enum px_acct_field own[] = {PX_ACCT_MAX_JOBS, PX_ACCT_MAX_SUBMIT, PX_ACCT_MAX_GPUS_PER_JOB};
  for (size_t k = 0; k < 3; k++)
    if (has(e, own[k])) a->own_max[k] = e->value[own[k]];
  if (!has(e, PX_ACCT_FAIRSHARE)) return;
  a->use_parent = e->value[PX_ACCT_FAIRSHARE] == PX_FAIRSHARE_PARENT;
  a->shares = a->use_parent ? 0 : (uint32_t)e->value[PX_ACCT_FAIRSHARE];
}

/* FairShare=parent given or taken away (a share count given to a parent
 * association makes it a level member of its own): every fair-share parent
 * is found again. */
static void own_shares(struct px_core *c, const struct px_acct_edit *e) {
  if (!has(e, PX_ACCT_FAIRSHARE)) return;
  for (uint32_t i = 0; i < c->nassoc; i++) {
    uint32_t p = c->assoc[i].parent;
    while (p != PX_NONE && c->assoc[p].use_parent) p = c->assoc[p].parent;
    c->assoc[i].fs_parent = p;
  }
}

void pxc_acct_inherit(struct px_core *c, uint32_t a) {
  struct pxc_assoc *x = &c->assoc[a];
  const struct pxc_assoc *p = x->parent == PX_NONE ? NULL : &c->assoc[x->parent];
  uint64_t *eff[] = {&x->max_jobs, &x->max_submit, &x->max_gpus_per_job};
  uint64_t from_parent[] = {p ? p->max_jobs : PX_NOLIMIT, p ? p->max_submit : PX_NOLIMIT,
                            p ? p->max_gpus_per_job : PX_NOLIMIT};
  for (size_t k = 0; k < 3; k++) *eff[k] = x->own_max[k] != PX_NOLIMIT ? x->own_max[k] : from_parent[k];
  for (uint32_t k = x->first_child; k != PX_NONE; k = c->assoc[k].next_sibling) pxc_acct_inherit(c, k);
}

/* ---- add ---- */

/* Room for one more association; nothing visible changes. The arrays
 * indexed by association (cap + 1 entries) double, so a script adding
 * thousands of users one by one copies them a few times, not each time. */
static int reserve_one(struct px_core *c) {
  if (c->nassoc >= c->assoc_cap) {
    uint32_t cap = 2 * (c->nassoc + 1);
    struct pxc_assoc *v = pxc_realloc(c, c->assoc, ((size_t)cap + 1) * sizeof *v);
    if (!v) return PX_ENOMEM;
    c->assoc = v;
    if (pxc_fs_reserve(c, cap) || pxc_quota_grow(c, cap)) return PX_ENOMEM;
    c->assoc_cap = cap;
  }
  if (c->nassoc / 64 < c->part_acct_words) return 0;
  /* the partitions' account sets gain a word (the new account is in none) */
  for (uint32_t p = 0; p < c->nparts; p++) {
    uint64_t **sets[] = {&c->parts[p].allow_acct, &c->parts[p].deny_acct};
    for (size_t k = 0; k < 2; k++) {
      if (!*sets[k]) continue;
      uint64_t *s = pxc_realloc(c, *sets[k], ((size_t)c->part_acct_words + 1) * sizeof *s);
      if (!s) return PX_ENOMEM;
      s[c->part_acct_words] = 0;
      *sets[k] = s;
    }
  }
  c->part_acct_words++;
  return 0;
}

/* Links a new association (index c->nassoc) as parent's last child. */
static uint32_t link_new(struct px_core *c, uint32_t name, uint32_t parent, bool is_user,
                         const struct px_acct_edit *e) {
  uint32_t i = c->nassoc++;
  struct pxc_assoc *a = &c->assoc[i], *p = &c->assoc[parent];
  *a = (struct pxc_assoc){.name = name, .parent = parent, .depth = p->depth + 1, .is_user = is_user,
                          .shares = 1, .first_child = PX_NONE, .next_sibling = PX_NONE,
                          .default_qos = p->default_qos, .fairshare = 1.0, .usage_t = INT64_MIN};
  a->grp_gpus = a->grp_cpus = a->grp_mem = a->grp_nodes = a->grp_jobs = PX_NOLIMIT;
  a->own_max[0] = a->own_max[1] = a->own_max[2] = PX_NOLIMIT;
  a->user = is_user ? name : 0;
  set_limits(a, e);
  a->fs_parent = parent;
  while (a->fs_parent != PX_NONE && c->assoc[a->fs_parent].use_parent) a->fs_parent = c->assoc[a->fs_parent].parent;
  uint32_t *link = &p->first_child;
  while (*link != PX_NONE) link = &c->assoc[*link].next_sibling;
  *link = i;
  pxc_quota_adopt(c, i);
  pxc_acct_inherit(c, i);
  pxc_fs_rows(c);
  return i;
}

static int add_account(struct px_core *c, const struct px_acct_edit *e, struct px_diag *d) {
  const char *pname = e->parent ? e->parent : "root";
  uint32_t parent = find_account(c, pname), name;
  if (find_account(c, e->name) != PX_NONE)
    return px_diag_set(d, PX_EEXIST, -1, "name: account %s already exists", e->name);
  if (parent == PX_NONE) return px_diag_set(d, PX_ENOENT, -1, "parent: no account named %s", pname);
  if (pxc_intern(c, e->name, &name) || reserve_one(c)) return PX_ENOMEM;
  link_new(c, name, parent, false, e);
  return 0;
}

static int add_user(struct px_core *c, const struct px_acct_edit *e, struct px_diag *d) {
  if (!e->account) return px_diag_set(d, PX_EINVAL, -1, "account: a user association needs an account");
  uint32_t acct = find_account(c, e->account), user;
  if (acct == PX_NONE) return px_diag_set(d, PX_ENOENT, -1, "account: no account named %s", e->account);
  if (pxc_intern(c, e->name, &user)) return PX_ENOMEM;
  uint64_t key = (uint64_t)user << 32 | c->assoc[acct].name;
  if (pxc_map_get(&c->assoc_by_user_acct, key, NULL))
    return px_diag_set(d, PX_EEXIST, -1, "name: user %s already has an association with account %s", e->name,
                       e->account);
  if (reserve_one(c) || pxc_map_reserve(c, &c->assoc_by_user_acct, 1) ||
      pxc_map_reserve(c, &c->default_assoc, 1))
    return PX_ENOMEM;
  bool first = !pxc_map_get(&c->default_assoc, user, NULL);
  uint32_t i = link_new(c, user, acct, true, e);
  c->nuser_assoc++;
  pxc_map_put(c, &c->assoc_by_user_acct, key, i); /* room reserved: cannot fail */
  if (first || e->default_account) pxc_map_put(c, &c->default_assoc, user, i);
  return 0;
}

/* ---- modify ---- */

static void set_qos(struct px_core *c, struct pxc_qos *x, const struct px_acct_edit *e) {
  if (has(e, PX_ACCT_PRIORITY)) x->priority = (uint32_t)e->value[PX_ACCT_PRIORITY];
  if (has(e, PX_ACCT_MAX_GPUS_PER_USER)) x->max_gpus_per_user = e->value[PX_ACCT_MAX_GPUS_PER_USER];
  if (has(e, PX_ACCT_MAX_JOBS_PER_USER)) x->max_jobs_per_user = e->value[PX_ACCT_MAX_JOBS_PER_USER];
  if (has(e, PX_ACCT_MAX_SUBMIT_PER_USER)) x->max_submit_per_user = e->value[PX_ACCT_MAX_SUBMIT_PER_USER];
  if (has(e, PX_ACCT_MAX_WALL_S))
    x->max_wall_s = e->value[PX_ACCT_MAX_WALL_S] == PX_NOLIMIT ? PX_TIME_UNLIMITED
                                                              : (int64_t)e->value[PX_ACCT_MAX_WALL_S];
  c->max_qos_prio = 0; /* the QoS factor's denominator */
  for (uint32_t k = 0; k < c->nqos; k++)
    if (c->qos[k].priority > c->max_qos_prio) c->max_qos_prio = c->qos[k].priority;
}

static int modify_qos(struct px_core *c, const struct px_acct_edit *e, struct px_diag *d) {
  uint32_t q = pxc_qos_index(c, e->name);
  if (q == PX_NONE) return px_diag_set(d, PX_ENOENT, -1, "name: no QoS named %s", e->name);
  set_qos(c, &c->qos[q], e);
  return 0;
}

static int add_qos(struct px_core *c, const struct px_acct_edit *e, struct px_diag *d) {
  if (pxc_qos_index(c, e->name) != PX_NONE) return px_diag_set(d, PX_EEXIST, -1, "name: QoS %s already exists", e->name);
  if (c->nqos >= c->qos_cap)
    return px_diag_set(d, PX_ERANGE, -1, "name: no room for QoS %s: %u QoS can be added online until the server "
                       "restarts; add it to the accounts file", e->name, PXC_QOS_ONLINE_MAX);
  uint32_t name;
  if (pxc_intern(c, e->name, &name)) return PX_ENOMEM;
  uint32_t q = c->nqos++;
  c->qos[q] = (struct pxc_qos){.name = name, .max_gpus_per_user = PX_NOLIMIT, .max_jobs_per_user = PX_NOLIMIT,
                               .max_submit_per_user = PX_NOLIMIT, .max_wall_s = PX_TIME_UNLIMITED,
                               .usage_factor = 1.0};
  pxc_policy_qos_added(c, q);
  set_qos(c, &c->qos[q], e);
  return 0;
}

/* Why q cannot go (d filled), or 0. */
static int qos_in_use(const struct px_core *c, uint32_t q, const char *name, struct px_diag *d) {
  if (q == 0) /* where an association without a default QoS sends its jobs */
    return px_diag_set(d, PX_ESTATE, -1, "name: QoS %s is the default QoS (of every association without one)", name);
  for (uint32_t a = 0; a < c->nassoc; a++)
    if (!c->assoc[a].deleted && c->assoc[a].default_qos == q)
      return px_diag_set(d, PX_ESTATE, -1, "name: QoS %s is the default QoS of %s %s", name,
                         c->assoc[a].is_user ? "user" : "account", pxc_str(c, c->assoc[a].name));
  for (uint32_t p = 0; p < c->nparts; p++) {
    const uint64_t *allow = c->parts[p].allow_qos;
    if (allow && (allow[q / 64] >> (q % 64) & 1))
      return px_diag_set(d, PX_ESTATE, -1, "name: QoS %s is in partition %s's AllowQos (the configuration's)", name,
                         pxc_str(c, c->parts[p].name));
  }
  uint32_t by = pxc_policy_qos_preempted_by(c, q);
  if (by != PX_NONE)
    return px_diag_set(d, PX_ESTATE, -1, "name: QoS %s is in QoS %s's Preempt= (the configuration's)", name,
                       pxc_str(c, c->qos[by].name));
  uint64_t jobs = 0;
  for (size_t i = 0; i < c->njob_slots; i++) jobs += c->jobs[i].state != 0xff && c->jobs[i].qos == q;
  if (jobs)
    return px_diag_set(d, PX_ESTATE, -1, "name: QoS %s has %llu queued or running job(s): cancel them first", name,
                       (unsigned long long)jobs);
  return 0;
}

static int delete_qos(struct px_core *c, const struct px_acct_edit *e, struct px_diag *d) {
  uint32_t q = pxc_qos_index(c, e->name);
  if (q == PX_NONE) return px_diag_set(d, PX_ENOENT, -1, "name: no QoS named %s", e->name);
  int rc = qos_in_use(c, q, e->name, d);
  if (rc) return rc;
  c->qos[q].name = PX_NONE; /* its index stays: accounting rows name it by index */
  return 0;
}

static int modify_assoc(struct px_core *c, const struct px_acct_edit *e, struct px_diag *d) {
  if (e->entity == PX_ACCT_ACCOUNT) {
    uint32_t a = find_account(c, e->name);
    if (a == PX_NONE) return px_diag_set(d, PX_ENOENT, -1, "name: no account named %s", e->name);
    set_limits(&c->assoc[a], e);
    own_shares(c, e);
    pxc_acct_inherit(c, a);
    return 0;
  }
  uint32_t acct = e->account ? find_account(c, e->account) : PX_NONE, user = pxc_lookup(c, e->name), last = PX_NONE;
  if (e->account && acct == PX_NONE) return px_diag_set(d, PX_ENOENT, -1, "account: no account named %s", e->account);
  for (uint32_t i = 0; user != PX_NONE && i < c->nassoc; i++)
    if (user_leaf(c, i, user, acct)) last = i;
  if (last == PX_NONE)
    return px_diag_set(d, PX_ENOENT, -1, "name: user %s has no association%s%s", e->name,
                       e->account ? " with account " : "", e->account ? e->account : "");
  if (e->default_account && !e->account)
    return px_diag_set(d, PX_EINVAL, -1, "account: the new default account is named by account");
  if (e->default_account && pxc_map_reserve(c, &c->default_assoc, 1)) return PX_ENOMEM;
  for (uint32_t i = 0; i <= last; i++) {
    if (!user_leaf(c, i, user, acct)) continue;
    set_limits(&c->assoc[i], e);
    pxc_acct_inherit(c, i);
  }
  own_shares(c, e);
  if (e->default_account) pxc_map_put(c, &c->default_assoc, user, last); /* room reserved */
  return 0;
}

/* ---- delete ---- */

static void unlink_assoc(struct px_core *c, uint32_t i) {
  struct pxc_assoc *a = &c->assoc[i];
  uint32_t *link = &c->assoc[a->parent].first_child;
  while (*link != i) link = &c->assoc[*link].next_sibling;
  *link = a->next_sibling;
  a->next_sibling = PX_NONE;
  a->deleted = true;
  a->shares = 0; /* out of its level's sum */
  if (!a->is_user) return;
  c->nuser_assoc--;
  pxc_map_del(&c->assoc_by_user_acct, (uint64_t)a->user << 32 | c->assoc[a->parent].name);
  uint32_t d;
  if (!pxc_map_get(&c->default_assoc, a->user, &d) || d != i) return;
  /* its user's jobs without --account go to the first association left */
  pxc_map_del(&c->default_assoc, a->user);
  for (uint32_t k = 0; k < c->nassoc; k++)
    if (user_leaf(c, k, a->user, PX_NONE)) {
      pxc_map_put(c, &c->default_assoc, a->user, k); /* a key just freed: no growth */
      break;
    }
}

static int jobs_refusal(const struct px_core *c, uint32_t i, struct px_diag *d) {
  const struct pxc_assoc *a = &c->assoc[i];
  if (!a->user_submit) return 0;
  return px_diag_set(d, PX_ESTATE, -1, "name: user %s has %llu queued or running job(s) in account %s: "
                     "cancel them first", pxc_str(c, a->user), (unsigned long long)a->user_submit,
                     pxc_str(c, c->assoc[a->parent].name));
}

static int delete_user(struct px_core *c, const struct px_acct_edit *e, struct px_diag *d) {
  uint32_t acct = e->account ? find_account(c, e->account) : PX_NONE, user = pxc_lookup(c, e->name), n = 0;
  if (e->account && acct == PX_NONE) return px_diag_set(d, PX_ENOENT, -1, "account: no account named %s", e->account);
  for (uint32_t i = 0; user != PX_NONE && i < c->nassoc; i++) {
    if (!user_leaf(c, i, user, acct)) continue;
    int rc = jobs_refusal(c, i, d);
    if (rc) return rc;
    n++;
  }
  if (!n)
    return px_diag_set(d, PX_ENOENT, -1, "name: user %s has no association%s%s", e->name,
                       e->account ? " with account " : "", e->account ? e->account : "");
  for (uint32_t i = 0; i < c->nassoc; i++)
    if (user_leaf(c, i, user, acct)) unlink_assoc(c, i);
  pxc_fs_rows(c);
  return 0;
}

static int delete_account(struct px_core *c, const struct px_acct_edit *e, struct px_diag *d) {
  uint32_t a = find_account(c, e->name);
  if (a == PX_NONE) return px_diag_set(d, PX_ENOENT, -1, "name: no account named %s", e->name);
  if (c->assoc[a].parent == PX_NONE) return px_diag_set(d, PX_EPERM, -1, "name: the root account stays");
  const struct pxc_qacct *q = pxc_quota_of(c, a);
  if (q && q->assoc == a)
    return px_diag_set(d, PX_ESTATE, -1, "name: account %s holds a quota (GuaranteedGPUs or Cohort in the "
                       "accounts file): remove it there", e->name);
  for (uint32_t k = c->assoc[a].first_child; k != PX_NONE; k = c->assoc[k].next_sibling)
    if (!c->assoc[k].is_user)
      return px_diag_set(d, PX_ESTATE, -1, "name: account %s has sub-account %s: delete it first", e->name,
                         pxc_str(c, c->assoc[k].name));
  for (uint32_t k = c->assoc[a].first_child; k != PX_NONE; k = c->assoc[k].next_sibling) {
    int rc = jobs_refusal(c, k, d);
    if (rc) return rc;
  }
  while (c->assoc[a].first_child != PX_NONE) unlink_assoc(c, c->assoc[a].first_child);
  unlink_assoc(c, a);
  pxc_fs_rows(c);
  return 0;
}

int pxc_acct_edit(struct px_core *c, const struct px_acct_edit *e, struct px_diag *d) {
  if (!e || !e->name || !*e->name) return px_diag_set(d, PX_EINVAL, -1, "name: missing");
  int rc = check_values(e, d);
  if (rc) return rc;
  if (e->entity == PX_ACCT_QOS) {
    switch (e->op) {
      case PX_ACCT_ADD: return add_qos(c, e, d);
      case PX_ACCT_MODIFY: return modify_qos(c, e, d);
      case PX_ACCT_DELETE: return delete_qos(c, e, d);
    }
  }
  bool user = e->entity == PX_ACCT_USER;
  switch (e->op) {
    case PX_ACCT_ADD: return user ? add_user(c, e, d) : add_account(c, e, d);
    case PX_ACCT_MODIFY: return modify_assoc(c, e, d);
    case PX_ACCT_DELETE: return user ? delete_user(c, e, d) : delete_account(c, e, d);
  }
  return px_diag_set(d, PX_EINVAL, -1, "op: unknown");
}
