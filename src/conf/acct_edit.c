/*
 * acct_edit.c - the server's copy of the accounts tree and QoS follows an
 * online change (sacctmgr add, modify, delete) that the core accepted
 * (core/acct.c validated it and changed its own tables the same way).
 *
 * Indexes never move: the core and the listings address an account by its
 * index, so an added account or user association goes at the end and a
 * deleted one stays, marked deleted. The array grows by doubling into the
 * arena; the old copies stay there until the configuration is freed (all
 * of them together no larger than the last).
 */
#include <string.h>

#include "conf/conf.h"
#include "conf/parse.h"

static const struct {
  const char *name;
  bool assoc;
} fields[] = {
#define PX_ACCT_FIELD_ROW(k, name, assoc) {name, assoc},
    PX_ACCT_FIELDS(PX_ACCT_FIELD_ROW)
#undef PX_ACCT_FIELD_ROW
};

const char *px_acct_field_name(enum px_acct_field f) {
  return (unsigned)f < PX_ACCT_NFIELDS ? fields[f].name : NULL;
}

bool px_acct_field_is_assoc(enum px_acct_field f) { return (unsigned)f < PX_ACCT_NFIELDS && fields[f].assoc; }

static bool has(const struct px_acct_edit *e, enum px_acct_field f) { return e->set >> f & 1; }

/* Is account i the user leaf (name, under account named acct or any)? */
static bool user_leaf(const struct px_conf *c, uint32_t i, const char *name, const char *acct) {
  const struct px_conf_account *a = &c->accounts[i];
  return a->is_user && !a->deleted && !strcmp(a->name, name) &&
         (!acct || !strcmp(c->accounts[a->parent].name, acct));
}

static void set_assoc(struct px_conf_account *a, const struct px_acct_edit *e) {
  uint64_t *dst[] = {[PX_ACCT_GRP_GPUS] = &a->grp_gpus,   [PX_ACCT_GRP_CPUS] = &a->grp_cpus,
                     [PX_ACCT_GRP_MEM] = &a->grp_mem_mib, [PX_ACCT_GRP_NODES] = &a->grp_nodes,
                     [PX_ACCT_GRP_JOBS] = &a->grp_jobs,   [PX_ACCT_MAX_JOBS] = &a->max_jobs,
                     [PX_ACCT_MAX_SUBMIT] = &a->max_submit_jobs,
                     [PX_ACCT_MAX_GPUS_PER_JOB] = &a->max_gpus_per_job};
  for (size_t f = 0; f < sizeof dst / sizeof dst[0]; f++)
    if (dst[f] && has(e, (enum px_acct_field)f)) *dst[f] = e->value[f];
  if (has(e, PX_ACCT_FAIRSHARE)) a->fairshare = (uint32_t)e->value[PX_ACCT_FAIRSHARE];
}

static void set_qos(struct px_conf_qos *q, const struct px_acct_edit *e) {
  if (has(e, PX_ACCT_PRIORITY)) q->priority = (uint32_t)e->value[PX_ACCT_PRIORITY];
  if (has(e, PX_ACCT_MAX_GPUS_PER_USER)) q->max_gpus_per_user = e->value[PX_ACCT_MAX_GPUS_PER_USER];
  if (has(e, PX_ACCT_MAX_JOBS_PER_USER)) q->max_jobs_per_user = e->value[PX_ACCT_MAX_JOBS_PER_USER];
  if (has(e, PX_ACCT_MAX_SUBMIT_PER_USER)) q->max_submit_per_user = e->value[PX_ACCT_MAX_SUBMIT_PER_USER];
  if (has(e, PX_ACCT_MAX_WALL_S))
    q->max_wall_s = e->value[PX_ACCT_MAX_WALL_S] == PX_NOLIMIT ? PX_TIME_UNLIMITED
                                                              : (int64_t)e->value[PX_ACCT_MAX_WALL_S];
}

/* The texts an account keeps (copied into the arena). */
static int set_texts(struct px_conf *c, struct px_conf_account *a, const struct px_acct_edit *e) {
  const char *d = e->description ? px_arena_strdup(&c->arena, e->description) : a->description;
  const char *o = e->organization ? px_arena_strdup(&c->arena, e->organization) : a->organization;
  if ((e->description && !d) || (e->organization && !o)) return PX_ENOMEM;
  a->description = d;
  a->organization = o;
  return 0;
}

/* The user's default account: the one marked, else the first left. */
static void fix_default(struct px_conf *c, const char *user, uint32_t chosen) {
  uint32_t first = PX_NONE, marked = PX_NONE;
  for (uint32_t i = 0; i < c->naccounts; i++) {
    if (!user_leaf(c, i, user, NULL)) continue;
    if (first == PX_NONE) first = i;
    if (c->accounts[i].is_default_account && marked == PX_NONE) marked = i;
    c->accounts[i].is_default_account = false;
  }
  uint32_t d = chosen != PX_NONE ? chosen : marked != PX_NONE ? marked : first;
  if (d != PX_NONE) c->accounts[d].is_default_account = true;
}

/* A QoS added online: no Preempt=, the cluster's PreemptMode (as the
 * core's, core/acct.c). */
static int add_qos(struct px_conf *c, const struct px_acct_edit *e) {
  const char *name = px_arena_strdup(&c->arena, e->name);
  if (!name) return PX_ENOMEM;
  if (c->nqos >= (c->qos_cap ? c->qos_cap : c->nqos)) {
    uint32_t cap = 2 * c->nqos + 8;
    struct px_conf_qos *v = px_arena_alloc(&c->arena, cap * sizeof *v);
    if (!v) return PX_ENOMEM;
    memcpy(v, c->qos, c->nqos * sizeof *v);
    c->qos = v;
    c->qos_cap = cap;
  }
  struct px_conf_qos *q = &c->qos[c->nqos++];
  px_qos_defaults(q);
  q->name = name;
  q->preempt_mode = c->sched.preempt_mode;
  set_qos(q, e);
  return 0;
}

static int add(struct px_conf *c, const struct px_acct_edit *e) {
  if (e->entity == PX_ACCT_QOS) return add_qos(c, e);
  bool user = e->entity == PX_ACCT_USER;
  uint32_t parent = px_conf_find_account(c, user ? e->account : e->parent ? e->parent : "root");
  if (parent == PX_NONE) return PX_ENOENT; /* the core checked it */
  const char *name = px_arena_strdup(&c->arena, e->name);
  if (!name) return PX_ENOMEM;
  if (c->naccounts >= c->accounts_cap) {
    uint32_t cap = 2 * c->naccounts + 16;
    struct px_conf_account *v = px_arena_alloc(&c->arena, cap * sizeof *v);
    if (!v) return PX_ENOMEM;
    memcpy(v, c->accounts, c->naccounts * sizeof *v);
    c->accounts = v;
    c->accounts_cap = cap;
  }
  struct px_conf_account *a = &c->accounts[c->naccounts];
  *a = (struct px_conf_account){.name = name, .parent = parent, .is_user = user, .fairshare = 1};
  a->grp_gpus = a->grp_cpus = a->grp_mem_mib = a->grp_nodes = PX_NOLIMIT;
  a->grp_jobs = a->max_jobs = a->max_submit_jobs = a->max_gpus_per_job = PX_NOLIMIT;
  a->borrow_limit_gpus = a->lend_limit_gpus = PX_NOLIMIT;
  set_assoc(a, e);
  if (!user && set_texts(c, a, e)) return PX_ENOMEM;
  uint32_t idx = c->naccounts++;
  if (user) fix_default(c, e->name, e->default_account ? idx : PX_NONE);
  return 0;
}

static int modify(struct px_conf *c, const struct px_acct_edit *e) {
  if (e->entity == PX_ACCT_QOS) {
    uint32_t q = px_conf_find_qos(c, e->name);
    if (q != PX_NONE) set_qos(&c->qos[q], e);
    return 0;
  }
  if (e->entity == PX_ACCT_ACCOUNT) {
    uint32_t a = px_conf_find_account(c, e->name);
    if (a == PX_NONE) return PX_ENOENT;
    set_assoc(&c->accounts[a], e);
    return set_texts(c, &c->accounts[a], e);
  }
  uint32_t last = PX_NONE;
  for (uint32_t i = 0; i < c->naccounts; i++)
    if (user_leaf(c, i, e->name, e->account)) set_assoc(&c->accounts[last = i], e);
  if (e->default_account && last != PX_NONE) fix_default(c, e->name, last);
  return 0;
}

static void del(struct px_conf *c, const struct px_acct_edit *e) {
  if (e->entity == PX_ACCT_QOS) {
    uint32_t q = px_conf_find_qos(c, e->name);
    if (q != PX_NONE) c->qos[q].deleted = true;
    return;
  }
  if (e->entity == PX_ACCT_USER) {
    for (uint32_t i = 0; i < c->naccounts; i++)
      if (user_leaf(c, i, e->name, e->account)) c->accounts[i].deleted = true;
    fix_default(c, e->name, PX_NONE);
    return;
  }
  uint32_t a = px_conf_find_account(c, e->name);
  if (a == PX_NONE) return;
  for (uint32_t i = 0; i < c->naccounts; i++) {
    struct px_conf_account *u = &c->accounts[i];
    if (u->is_user && u->parent == a && !u->deleted) {
      u->deleted = true;
      fix_default(c, u->name, PX_NONE);
    }
  }
  c->accounts[a].deleted = true;
}

int px_conf_acct_apply(struct px_conf *c, const struct px_acct_edit *e) {
  switch (e->op) {
    case PX_ACCT_ADD: return add(c, e);
    case PX_ACCT_MODIFY: return modify(c, e);
    case PX_ACCT_DELETE: del(c, e); return 0;
  }
  return PX_EINVAL;
}
