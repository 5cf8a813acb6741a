/*
 * keys.c - applying a Key=Value pair through a key table, and what happens
 * to keys that are not in it: a Slurm key we knowingly ignore is reported
 * once as a warning; anything else is an error that suggests the closest
 * known key (edit distance) or names the line kind where the key belongs.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/parse.h"

extern const struct px_keytab px_tab_global, px_tab_node, px_tab_part, px_tab_switch, px_tab_block,
    px_tab_account, px_tab_user, px_tab_qos;

static const struct px_keytab *const all_tabs[] = {
    &px_tab_global, &px_tab_node,    &px_tab_part, &px_tab_switch,
    &px_tab_block,  &px_tab_account, &px_tab_user, &px_tab_qos,
};

/* Levenshtein distance over lower-cased characters, two rows. */
size_t px_edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return la > lb ? la : lb; /* keys are short; not worth the work */
  size_t prev[65], cur[65];
  for (size_t j = 0; j <= lb; j++) prev[j] = j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
      size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
      cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
    memcpy(prev, cur, (lb + 1) * sizeof *prev);
  }
  return prev[lb];
}

static const struct px_key *find(const struct px_keytab *tab, const char *key) {
  for (size_t i = 0; i < tab->nkeys; i++)
    if (strcasecmp(tab->keys[i].name, key) == 0) return &tab->keys[i];
  return NULL;
}

static bool is_ignored(const struct px_keytab *tab, const char *key) {
  for (const char *const *p = tab->ignored; p && *p; p++)
    if (strcasecmp(*p, key) == 0) return true;
  return false;
}

static void warn_ignored(struct px_cb *b, const struct px_where *w, const char *key) {
  char lower[128];
  size_t i = 0;
  for (; key[i] && i + 1 < sizeof lower; i++) lower[i] = (char)tolower((unsigned char)key[i]);
  lower[i] = '\0';
  if (px_smap_get(&b->warned, lower, NULL)) return;
  if (px_smap_put(&b->warned, lower, 1)) b->oom = true;
  px_cb_warn(b, w, "%s: a Slurm key that Phalanx does not use; ignored (reported once)", key);
}

/* The closest key of `tab`, or NULL when none is close enough to be a typo. */
static const char *closest(const struct px_keytab *tab, const char *key) {
  const char *best = NULL;
  size_t best_d = (size_t)-1;
  for (size_t i = 0; i < tab->nkeys; i++) {
    size_t d = px_edit_distance(key, tab->keys[i].name);
    if (d < best_d) {
      best_d = d;
      best = tab->keys[i].name;
    }
  }
  size_t len = strlen(key);
  return (best && (best_d <= 2 || best_d * 3 <= len)) ? best : NULL;
}

static void unknown(struct px_cb *b, const struct px_where *w, const struct px_kv *kv,
                    const struct px_keytab *tab) {
  for (size_t t = 0; t < sizeof all_tabs / sizeof all_tabs[0]; t++) {
    if (all_tabs[t] == tab) continue;
    const struct px_key *k = find(all_tabs[t], kv->key);
    if (k) {
      px_cb_error(b, w, "%s is a key of %s lines, not of %s lines", k->name, all_tabs[t]->what, tab->what);
      return;
    }
  }
  const char *s = closest(tab, kv->key);
  if (s) px_cb_error(b, w, "unknown key %s on a %s line; did you mean %s?", kv->key, tab->what, s);
  else px_cb_error(b, w, "unknown key %s on a %s line (see docs/config.md)", kv->key, tab->what);
}

void px_cb_apply(struct px_cb *b, const struct px_where *w, const struct px_kv *kv,
                 const struct px_keytab *tab, void *obj) {
  const struct px_key *k = find(tab, kv->key);
  if (k) k->set(b, w, kv, obj, k);
  else if (is_ignored(tab, kv->key)) warn_ignored(b, w, kv->key);
  else unknown(b, w, kv, tab);
}

void px_set_misplaced(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, void *obj,
                      const struct px_key *k) {
  px_cb_error(b, w, "%s must be the first key of its line, and only once", kv->key);
}

/* ---- one scheduling key on its own (the simulator's policy files) ---- */

static bool writes_sched(const struct px_key *k) {
  size_t lo = offsetof(struct px_conf, sched);
  return k->off >= lo && k->off < lo + sizeof(struct px_conf_sched);
}

int px_conf_sched_set(struct px_conf_sched *s, const char *key, const char *val, struct px_diag *d) {
  const struct px_key *k = find(&px_tab_global, key);
  if (!k || !writes_sched(k)) return PX_ENOENT;
  struct px_conf *c = calloc(1, sizeof *c);
  if (!c) return PX_ENOMEM;
  px_arena_init(&c->arena, 4096); /* what a setter reads into (list items) */
  c->sched = *s;
  struct px_conf_diags diags = {0};
  struct px_cb b = {.c = c, .diags = &diags};
  struct px_where w = {"policy", 0};
  struct px_kv kv = {key, val};
  k->set(&b, &w, &kv, c, k);
  /* a warning is a refusal too: the key cannot do all it was asked */
  int rc = b.oom ? PX_ENOMEM : b.nerrors || diags.nwarnings ? PX_EPARSE : 0;
  if (rc == PX_EPARSE)
    px_diag_set(d, rc, -1, "%s", diags.len ? diags.v[0].text : "bad value (out of memory for why)");
  if (!rc) *s = c->sched;
  px_conf_diags_fini(&diags);
  px_smap_fini(&b.warned);
  px_arena_fini(&c->arena);
  free(c);
  return rc;
}
