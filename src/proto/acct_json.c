/*
 * acct_json.c - an online change of the accounts tree or of a QoS (struct
 * px_acct_edit, conf.h) as JSON: the body of POST /v1/accounts and, with
 * "v", the data of the journal's "acct" record (event_json.c), so the one
 * strict decoder below reads both.
 *
 *   {"op":"add"|"modify"|"delete", "entity":"account"|"user"|"qos",
 *    "name":N, "parent":P, "account":A, "default_account":bool,
 *    "description":D, "organization":O,
 *    "set":{"fairshare":10, "grp_gpus":8, "max_jobs":-1, ...}}
 *
 * Names: 1-63 characters of letters, digits and "_-.@"; account, parent
 * and QoS names are folded to lower case as sacctmgr (and the accounts
 * file) fold them, user names kept. A value of -1 clears a limit. Unknown
 * members, wrong types and numbers out of range are refused, naming the
 * member; the core judges the rest (conf.h lists which settings apply to
 * which entity).
 */
#include <ctype.h>
#include <string.h>

#include "proto/event_json.h"

#define NAME_MAX_LEN 63
#define TEXT_MAX_LEN 255

static const char *const ops[] = {"add", "modify", "delete"};
static const char *const entities[] = {"account", "user", "qos"};

static int word(const json_t *v, const char *const *words, size_t n, const char *key, struct px_diag *d) {
  const char *s = json_string_value(v);
  for (size_t i = 0; s && i < n; i++)
    if (!strcmp(s, words[i])) return (int)i;
  return px_diag_set(d, PX_EINVAL, -1, "%s: must be %s, %s or %s", key, words[0], words[1], words[2]);
}

/* A name member: checked, folded when fold, then pointed at (it lives in o). */
static int name(json_t *o, const char *key, bool fold, const char **out, struct px_diag *d) {
  json_t *v = json_object_get(o, key);
  if (!v || json_is_null(v)) return 0;
  const char *s = json_string_value(v);
  size_t n = s ? strlen(s) : 0;
  if (!s || !n || n > NAME_MAX_LEN || n != json_string_length(v))
    return px_diag_set(d, PX_EINVAL, -1, "%s: must be a name of 1 to %d characters", key, NAME_MAX_LEN);
  char low[NAME_MAX_LEN + 1];
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (!isalnum(ch) && !strchr("_-.@", ch))
      return px_diag_set(d, PX_EINVAL, -1, "%s: \"%c\" is not allowed in a name (letters, digits, _-.@)", key, ch);
    low[i] = fold ? (char)tolower(ch) : (char)ch;
  }
  low[n] = '\0';
  if (fold && strcmp(low, s) && json_string_set(v, low)) return PX_ENOMEM;
  *out = json_string_value(v);
  return 0;
}

static int text(json_t *o, const char *key, const char **out, struct px_diag *d) {
  json_t *v = json_object_get(o, key);
  if (!v || json_is_null(v)) return 0;
  const char *s = json_string_value(v);
  if (!s || json_string_length(v) > TEXT_MAX_LEN || strlen(s) != json_string_length(v))
    return px_diag_set(d, PX_EINVAL, -1, "%s: must be a text of up to %d characters", key, TEXT_MAX_LEN);
  for (const char *p = s; *p; p++)
    if ((unsigned char)*p < 0x20) return px_diag_set(d, PX_EINVAL, -1, "%s: control characters", key);
  *out = s;
  return 0;
}

static int settings(json_t *set, struct px_acct_edit *e, struct px_diag *d) {
  if (!set) return 0;
  if (!json_is_object(set)) return px_diag_set(d, PX_EINVAL, -1, "set: must be an object");
  const char *key;
  json_t *v;
  json_object_foreach(set, key, v) {
    unsigned f = 0;
    while (f < PX_ACCT_NFIELDS && strcmp(px_acct_field_name((enum px_acct_field)f), key)) f++;
    if (f == PX_ACCT_NFIELDS) return px_diag_set(d, PX_EINVAL, -1, "set.%.64s: unknown setting", key);
    json_int_t n = json_integer_value(v);
    if (!json_is_integer(v) || n < -1 || n > INT64_MAX / 4)
      return px_diag_set(d, PX_EINVAL, -1, "set.%s: must be a whole number >= 0 (or -1: no limit)", key);
    e->set |= 1u << f;
    e->value[f] = n < 0 ? PX_NOLIMIT : (uint64_t)n;
  }
  return 0;
}

int px_acct_edit_from_json(json_t *o, struct px_acct_edit *e, struct px_diag *d) {
  static const char *const keys[] = {"v",           "op",           "entity", "name", "parent", "account",
                                     "default_account", "description", "organization", "set"};
  memset(e, 0, sizeof *e);
  if (!json_is_object(o)) return px_diag_set(d, PX_EINVAL, -1, "body: must be a JSON object");
  const char *key;
  json_t *v;
  json_object_foreach(o, key, v) {
    size_t k = 0;
    while (k < sizeof keys / sizeof keys[0] && strcmp(keys[k], key)) k++;
    if (k == sizeof keys / sizeof keys[0]) return px_diag_set(d, PX_EINVAL, -1, "%.64s: unknown member", key);
  }
  int op = word(json_object_get(o, "op"), ops, 3, "op", d), ent;
  if (op < 0) return op;
  if ((ent = word(json_object_get(o, "entity"), entities, 3, "entity", d)) < 0) return ent;
  e->op = (enum px_acct_op)op;
  e->entity = (enum px_acct_entity)ent;
  json_t *def = json_object_get(o, "default_account");
  if (def && !json_is_boolean(def)) return px_diag_set(d, PX_EINVAL, -1, "default_account: must be true or false");
  e->default_account = json_is_true(def);
  int rc;
  if ((rc = name(o, "name", e->entity != PX_ACCT_USER, &e->name, d)) ||
      (rc = name(o, "parent", true, &e->parent, d)) || (rc = name(o, "account", true, &e->account, d)) ||
      (rc = text(o, "description", &e->description, d)) || (rc = text(o, "organization", &e->organization, d)))
    return rc;
  if (!e->name) return px_diag_set(d, PX_EINVAL, -1, "name: missing");
  return settings(json_object_get(o, "set"), e, d);
}

json_t *px_acct_edit_json(const struct px_acct_edit *e) {
  json_t *set = json_object();
  for (unsigned f = 0; set && f < PX_ACCT_NFIELDS; f++)
    if (e->set >> f & 1)
      json_object_set_new(set, px_acct_field_name((enum px_acct_field)f),
                          json_integer(e->value[f] == PX_NOLIMIT ? -1 : (json_int_t)e->value[f]));
  json_t *o = set ? json_pack("{ss ss ss so}", "op", ops[e->op], "entity", entities[e->entity], "name",
                              e->name ? e->name : "", "set", set)
                  : NULL;
  const char *opt[] = {e->parent, e->account, e->description, e->organization};
  const char *optk[] = {"parent", "account", "description", "organization"};
  for (size_t k = 0; o && k < 4; k++)
    if (opt[k]) json_object_set_new(o, optk[k], json_string(opt[k]));
  if (o && e->default_account) json_object_set_new(o, "default_account", json_true());
  return o;
}
