/*
 * build_acct.c - the QoS list and the account tree from the accounts file.
 *
 * QoS: "normal" first (configured or default), then the rest in file order;
 * Preempt lists become indexes. Accounts: the implicit "root" (an
 * Account=root line may set its attributes), every Account= under its Parent,
 * and one user leaf per (user, account) association, from Users= lists and
 * User= lines. The array is the tree in depth-first pre-order, so a parent's
 * index is below its children's; under an account, its user leaves come
 * first, then its sub-accounts, each in file order. DefaultQOS is inherited
 * down the tree (root's is "normal").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/parse.h"

static void build_qos(struct px_cb *b) {
  struct px_conf *c = b->c;
  uint32_t n = 1, normal_raw = PX_NONE;
  for (size_t i = 0; i < b->qos.len; i++) {
    for (size_t j = 0; j < i; j++)
      if (!strcmp(b->qos.v[j].q.name, b->qos.v[i].q.name)) {
        px_cb_error(b, &b->qos.v[i].w, "QOS %s is already defined at %s:%d", b->qos.v[i].q.name,
                    b->qos.v[j].w.file, b->qos.v[j].w.line);
        return;
      }
    if (!strcmp(b->qos.v[i].q.name, "normal")) normal_raw = (uint32_t)i;
    else n++;
  }
  struct px_qos_raw **src = calloc(n, sizeof *src);
  c->qos = px_cb_calloc(b, n, sizeof *c->qos);
  if (!src || !c->qos) {
    free(src);
    b->oom = true;
    return;
  }
  c->nqos = n;
  px_qos_defaults(&c->qos[0]);
  c->qos[0].name = "normal";
  if (normal_raw != PX_NONE) src[0] = &b->qos.v[normal_raw];
  for (size_t i = 0, k = 1; i < b->qos.len; i++)
    if (i != normal_raw) src[k++] = &b->qos.v[i];
  for (uint32_t i = 0; i < n; i++) {
    if (src[i]) c->qos[i] = src[i]->q;
    if (!src[i] || !src[i]->mode_given) c->qos[i].preempt_mode = c->sched.preempt_mode;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (!src[i] || !src[i]->preempt) continue;
    struct px_kv kv = {"Preempt", src[i]->preempt};
    const char **items;
    uint32_t count;
    if (!px_split_list(b, &src[i]->w, &kv, &items, &count)) continue;
    uint32_t *v = px_cb_calloc(b, count, sizeof *v);
    if (!v) break;
    for (uint32_t k = 0; k < count; k++) {
      v[k] = px_conf_find_qos(c, items[k]);
      if (v[k] == PX_NONE) px_cb_error(b, &src[i]->w, "Preempt=%s: no QOS named %s", src[i]->preempt, items[k]);
      else if (v[k] == i) px_cb_error(b, &src[i]->w, "QOS %s cannot preempt itself", c->qos[i].name);
    }
    c->qos[i].preempt = v;
    c->qos[i].npreempt = count;
    if (strcmp(c->sched.preempt_type, "preempt/qos") != 0)
      px_cb_warn(b, &src[i]->w, "QOS %s: Preempt= takes effect only with PreemptType=preempt/qos",
                 c->qos[i].name);
  }
  free(src);
}

/* A (user, account) association before the tree is laid out. */
struct assoc {
  struct px_conf_account a;        /* name = user; parent = raw account index */
  const struct px_where *w;
  bool from_line;
  uint32_t next;                   /* next association of the same account */
};
PX_VEC_DECLARE(assocvec, struct assoc)

struct tree {
  struct px_cb *b;
  struct px_acct_raw *acct;        /* raw accounts; [0] is root */
  uint32_t nacct;
  uint32_t *first_child, *next_sibling, *last_child, *first_user, *last_user;
  struct assocvec as;
  struct px_smap assoc_index;      /* "user\naccount-index" -> association */
  uint32_t out;                    /* next index in c->accounts */
};

static int assoc_key(char *buf, size_t n, const char *user, uint32_t acct) {
  return snprintf(buf, n, "%s\n%u", user, acct);
}

/* Finds or creates the association; NULL when the name is too long or out of memory. */
static struct assoc *assoc_get(struct tree *t, const char *user, uint32_t acct, const struct px_where *w,
                               bool *created) {
  char key[512];
  uint64_t idx;
  if (assoc_key(key, sizeof key, user, acct) >= (int)sizeof key) return NULL;
  *created = !px_smap_get(&t->assoc_index, key, &idx);
  if (!*created) return &t->as.v[idx];
  struct assoc s = {.w = w, .next = PX_NONE}; /* limits: none, not the account's */
  px_account_defaults(&s.a);
  s.a.name = user;
  s.a.parent = acct;
  s.a.is_user = true;
  if (px_smap_put(&t->assoc_index, key, t->as.len) || assocvec_push(&t->as, s)) {
    t->b->oom = true;
    return NULL;
  }
  uint32_t me = (uint32_t)t->as.len - 1;
  if (t->first_user[acct] == PX_NONE) t->first_user[acct] = me;
  else t->as.v[t->last_user[acct]].next = me;
  t->last_user[acct] = me;
  return &t->as.v[me];
}

static uint32_t raw_index(struct tree *t, const char *name) {
  for (uint32_t i = 0; i < t->nacct; i++)
    if (!strcmp(t->acct[i].a.name, name)) return i;
  return PX_NONE;
}

/* Parents, duplicates and cycles of the raw accounts. */
static void link_accounts(struct tree *t) {
  struct px_cb *b = t->b;
  uint32_t errors = b->nerrors;
  for (uint32_t i = 1; i < t->nacct; i++) {
    struct px_acct_raw *r = &t->acct[i];
    uint32_t dup = raw_index(t, r->a.name);
    if (dup != i) {
      px_cb_error(b, &r->w, "Account %s is already defined at %s:%d", r->a.name, t->acct[dup].w.file,
                  t->acct[dup].w.line);
      continue;
    }
    uint32_t p = r->parent ? raw_index(t, r->parent) : 0;
    if (p == PX_NONE) {
      px_cb_error(b, &r->w, "Account %s: Parent=%s is not an account", r->a.name, r->parent);
      continue;
    }
    r->a.parent = p;
  }
  for (uint32_t i = 1; i < t->nacct; i++) {
    uint32_t p = t->acct[i].a.parent, steps = 0;
    while (p != PX_NONE && p != 0 && steps++ <= t->nacct) p = t->acct[p].a.parent;
    if (p != PX_NONE && p != 0)
      px_cb_error(b, &t->acct[i].w, "Account %s: its Parent chain loops and never reaches root",
                  t->acct[i].a.name);
  }
  if (b->nerrors != errors) return; /* a broken tree is not laid out */
  for (uint32_t i = 1; i < t->nacct; i++) {
    uint32_t p = t->acct[i].a.parent;
    if (t->first_child[p] == PX_NONE) t->first_child[p] = i;
    else t->next_sibling[t->last_child[p]] = i;
    t->last_child[p] = i;
  }
}

/* Users= lists, then User= lines (which may also add associations). */
static void add_users(struct tree *t) {
  struct px_cb *b = t->b;
  for (uint32_t i = 0; i < t->nacct; i++) {
    struct px_acct_raw *r = &t->acct[i];
    if (!r->users) continue;
    struct px_kv kv = {"Users", r->users};
    const char **items;
    uint32_t n;
    if (!px_split_list(b, &r->w, &kv, &items, &n)) continue;
    for (uint32_t k = 0; k < n; k++) {
      bool created;
      if (!assoc_get(t, items[k], i, &r->w, &created)) px_cb_error(b, &r->w, "Users: name too long: %s", items[k]);
      else if (!created) px_cb_error(b, &r->w, "Users: %s is listed twice for account %s", items[k], r->a.name);
    }
  }
  for (size_t i = 0; i < b->users.len; i++) {
    struct px_acct_raw *u = &b->users.v[i];
    if (!u->parent) continue;
    uint32_t acct = raw_index(t, u->parent);
    bool created;
    struct assoc *s = acct == PX_NONE ? NULL : assoc_get(t, u->a.name, acct, &u->w, &created);
    if (acct == PX_NONE) {
      px_cb_error(b, &u->w, "User=%s: Account=%s is not an account", u->a.name, u->parent);
      continue;
    }
    if (!s) continue;
    if (s->from_line) {
      px_cb_error(b, &u->w, "User=%s Account=%s is already defined at %s:%d", u->a.name, u->parent,
                  s->w->file, s->w->line);
      continue;
    }
    s->a = u->a;
    s->a.parent = acct;
    s->a.is_user = true;
    s->from_line = true;
    s->w = &u->w;
  }
}

/* DefaultAccount= where given, else each user's first association. */
static void mark_defaults(struct tree *t) {
  struct px_cb *b = t->b;
  struct px_smap has_default = {0};
  for (size_t i = 0; i < b->users.len; i++) {
    struct px_acct_raw *u = &b->users.v[i];
    if (!u->default_account) continue;
    uint32_t acct = raw_index(t, u->default_account);
    char key[512];
    uint64_t idx, prev;
    assoc_key(key, sizeof key, u->a.name, acct);
    if (acct == PX_NONE || !px_smap_get(&t->assoc_index, key, &idx)) {
      px_cb_error(b, &u->w, "User=%s: DefaultAccount=%s is not one of the user's accounts", u->a.name,
                  u->default_account);
      continue;
    }
    if (px_smap_get(&has_default, u->a.name, &prev) && prev != idx) {
      px_cb_error(b, &u->w, "User=%s: a second DefaultAccount (%s)", u->a.name, u->default_account);
      continue;
    }
    t->as.v[idx].a.is_default_account = true;
    if (px_smap_put(&has_default, u->a.name, idx)) b->oom = true;
  }
  for (size_t i = 0; i < t->as.len; i++)
    if (!px_smap_get(&has_default, t->as.v[i].a.name, NULL)) {
      t->as.v[i].a.is_default_account = true;
      if (px_smap_put(&has_default, t->as.v[i].a.name, i)) b->oom = true;
    }
  px_smap_fini(&has_default);
}

static void check_qos(struct tree *t, const struct px_where *w, const char *who, const char *qos) {
  if (qos && px_conf_find_qos(t->b->c, qos) == PX_NONE)
    px_cb_error(t->b, w, "%s: DefaultQOS=%s is not a QOS of the accounts file", who, qos);
}

/* Lays out account `i` and its subtree from c->accounts[t->out]; returns its index. */
static uint32_t lay_out(struct tree *t, uint32_t i, uint32_t parent) {
  struct px_conf *c = t->b->c;
  uint32_t me = t->out++;
  struct px_conf_account *a = &c->accounts[me];
  *a = t->acct[i].a;
  a->parent = parent;
  check_qos(t, &t->acct[i].w, a->name, a->default_qos);
  if (!a->default_qos) a->default_qos = parent == PX_NONE ? "normal" : c->accounts[parent].default_qos;
  for (uint32_t u = t->first_user[i]; u != PX_NONE; u = t->as.v[u].next) {
    struct px_conf_account *l = &c->accounts[t->out++];
    *l = t->as.v[u].a;
    l->parent = me;
    check_qos(t, t->as.v[u].w, l->name, l->default_qos);
    if (!l->default_qos) l->default_qos = a->default_qos;
  }
  for (uint32_t k = t->first_child[i]; k != PX_NONE; k = t->next_sibling[k]) lay_out(t, k, me);
  return me;
}

static bool tree_init(struct tree *t, struct px_cb *b) {
  memset(t, 0, sizeof *t);
  t->b = b;
  uint32_t root = PX_NONE;
  for (size_t i = 0; i < b->accts.len && root == PX_NONE; i++)
    if (!strcmp(b->accts.v[i].a.name, "root")) root = (uint32_t)i;
  t->nacct = (uint32_t)b->accts.len + (root == PX_NONE);
  t->acct = calloc(t->nacct, sizeof *t->acct);
  uint32_t **arrays[] = {&t->first_child, &t->next_sibling, &t->last_child, &t->first_user, &t->last_user};
  bool ok = t->acct != NULL;
  for (size_t k = 0; k < 5; k++) {
    *arrays[k] = malloc(t->nacct * sizeof **arrays[k]);
    ok = ok && *arrays[k];
    for (uint32_t i = 0; *arrays[k] && i < t->nacct; i++) (*arrays[k])[i] = PX_NONE;
  }
  if (!ok) return false;
  if (root == PX_NONE) {
    px_account_defaults(&t->acct[0].a);
    t->acct[0].a.name = "root";
  } else {
    t->acct[0] = b->accts.v[root];
    if (t->acct[0].parent) px_cb_error(b, &t->acct[0].w, "Account root is the top of the tree: no Parent");
  }
  for (size_t i = 0, k = 1; i < b->accts.len; i++)
    if (i != root) t->acct[k++] = b->accts.v[i];
  t->acct[0].a.parent = PX_NONE;
  return true;
}

static void tree_fini(struct tree *t) {
  free(t->acct);
  free(t->first_child);
  free(t->next_sibling);
  free(t->last_child);
  free(t->first_user);
  free(t->last_user);
  assocvec_fini(&t->as);
  px_smap_fini(&t->assoc_index);
}

void px_build_accounts(struct px_cb *b) {
  struct tree t;
  build_qos(b);
  if (!tree_init(&t, b)) {
    b->oom = true;
    goto out;
  }
  uint32_t errors = b->nerrors;
  link_accounts(&t);
  if (b->nerrors != errors) goto out;
  add_users(&t);
  mark_defaults(&t);
  if (b->nerrors != errors || b->oom) goto out;
  b->c->naccounts = t.nacct + (uint32_t)t.as.len;
  b->c->accounts = px_cb_calloc(b, b->c->naccounts, sizeof *b->c->accounts);
  if (b->c->accounts) lay_out(&t, 0, PX_NONE);
out:
  tree_fini(&t);
}
