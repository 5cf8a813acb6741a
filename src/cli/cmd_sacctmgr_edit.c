/*
 * cmd_sacctmgr_edit.c - `sacctmgr add|create, modify|update, delete|remove`
 * of accounts, users (their associations) and QoS limits, online: each
 * change is one POST /v1/accounts (the server's core validates it, the
 * journal keeps it, it takes effect at once; docs/slurm-migration.md).
 *
 *   add account NAME[,..] [parent=P] [fairshare=N] [description=D] [organization=O] [limits]
 *   add user NAME[,..] account=A[,..] [defaultaccount=A] [fairshare=N] [limits]
 *   modify account|user|qos [where] name=N [account=A] set KEY=VALUE ...
 *   delete account|user [where] name=N [account=A]
 *
 * Limits: GrpTRES=gres/gpu=N,cpu=N,mem=N,node=N GrpJobs= MaxJobs=
 * MaxSubmitJobs= MaxTRES=gres/gpu=N (per job); QoS: Priority= MaxWall=
 * MaxTRESPerUser=gres/gpu=N MaxJobsPerUser= MaxSubmitJobsPerUser=; -1
 * clears one. Output is Slurm 22.05's (captured from real sacctmgr): the
 * summary, then, without -i, "Would you like to commit changes?" read from
 * stdin (a pipe's "y" commits as in Slurm; at end of input Slurm asks
 * forever, we discard). What the server would refuse for a missing name is
 * found first in the association listing and said as Slurm says it.
 */
#include <ctype.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cmd_common.h"
#include "util/units.h"

enum { ADD, MODIFY, DELETE };
enum { ACCOUNT, USER, QOS };

struct change {
  int op, entity;
  const char *names, *accounts, *parent, *defacct, *desc, *org;
  json_t *set;       /* settings, the API's names */
  json_t *assocs;    /* the association listing (cluster, what exists) */
  const char *cluster;
};

/* ---- values ---- */

static int bad(const char *key, const char *val, const char *want) {
  fprintf(stderr, " Bad value for %s: '%s' (%s)\n", key, val, want);
  return 1;
}

static int put(struct change *ch, const char *field, long long v) {
  return json_object_set_new(ch->set, field, json_integer(v)) ? 1 : 0;
}

static int number(struct change *ch, const char *key, const char *val, const char *field) {
  char *end;
  long long v = strtoll(val, &end, 10);
  if (!*val || *end || v < -1) return bad(key, val, "a whole number, or -1 for no limit");
  if (!strcmp(field, "fairshare") && v < 0) v = 1; /* sacctmgr: -1 restores the default share */
  return put(ch, field, v);
}

/* gres/gpu=N,cpu=N,mem=N[MGT],node=N; gpu_only: only gres/gpu (into field). */
static int tres(struct change *ch, const char *key, const char *val, const char *field) {
  static const struct { const char *name, *grp; } kinds[] = {
      {"gres/gpu", "grp_gpus"}, {"cpu", "grp_cpus"}, {"mem", "grp_mem_mib"}, {"node", "grp_nodes"}};
  char buf[256];
  snprintf(buf, sizeof buf, "%s", val);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(t, '=');
    size_t k = 0;
    if (eq) *eq = '\0';
    while (k < 4 && strcasecmp(kinds[k].name, t)) k++;
    if (!eq || k == 4 || (field && k != 0))
      return bad(key, val, field ? "gres/gpu=N, the one enforced" : "gres/gpu=N, cpu=N, mem=N or node=N");
    long long v;
    if (!strcmp(eq + 1, "-1")) {
      v = -1;
    } else if (k == 2) {
      uint64_t mib;
      struct px_diag d;
      if (px_size_parse_mib(eq + 1, &mib, &d)) return bad(key, val, "mem=N with M, G or T");
      v = (long long)mib;
    } else {
      char *end;
      v = strtoll(eq + 1, &end, 10);
      if (!eq[1] || *end || v < 0) return bad(key, val, "a whole count, or -1 for no limit");
    }
    if (put(ch, field ? field : kinds[k].grp, v)) return 1;
  }
  return 0;
}

static int wall(struct change *ch, const char *key, const char *val, const char *field) {
  int64_t s;
  struct px_diag d;
  if (!strcmp(val, "-1")) return put(ch, field, -1);
  if (px_duration_parse(val, &s, &d)) return bad(key, val, "a time such as 1-00:00:00, or -1");
  return put(ch, field, s);
}

static const struct {
  const char *key, *field;
  int (*parse)(struct change *, const char *, const char *, const char *);
} settings[] = {
    {"fairshare", "fairshare", number},        {"shares", "fairshare", number},
    {"grptres", NULL, tres},                   {"grpjobs", "grp_jobs", number},
    {"maxjobs", "max_jobs", number},           {"maxsubmitjobs", "max_submit_jobs", number},
    {"maxsubmit", "max_submit_jobs", number},  {"maxtres", "max_gpus_per_job", tres},
    {"maxtresperjob", "max_gpus_per_job", tres}, {"priority", "priority", number},
    {"maxtresperuser", "max_gpus_per_user", tres}, {"maxtrespu", "max_gpus_per_user", tres},
    {"maxjobsperuser", "max_jobs_per_user", number}, {"maxjobspu", "max_jobs_per_user", number},
    {"maxsubmitjobsperuser", "max_submit_per_user", number}, {"maxsubmitpu", "max_submit_per_user", number},
    {"maxwall", "max_wall_s", wall},           {"maxwalldurationperjob", "max_wall_s", wall},
};

/* ---- the command line ---- */

static bool cond(struct change *ch, const char *key, const char *val) {
  static const struct { const char *key; size_t off; } conds[] = {
      {"name", offsetof(struct change, names)},      {"names", offsetof(struct change, names)},
      {"user", offsetof(struct change, names)},      {"users", offsetof(struct change, names)},
      {"account", offsetof(struct change, accounts)}, {"accounts", offsetof(struct change, accounts)},
      {"parent", offsetof(struct change, parent)},   {"defaultaccount", offsetof(struct change, defacct)},
      {"description", offsetof(struct change, desc)}, {"organization", offsetof(struct change, org)}};
  if (!strcasecmp(key, "cluster") || !strcasecmp(key, "clusters")) return true; /* one cluster */
  for (size_t i = 0; i < sizeof conds / sizeof conds[0]; i++)
    if (!strcasecmp(key, conds[i].key)) {
      if (ch->entity != USER && i >= 2 && i < 4) return false; /* user= names users only */
      *(const char **)((char *)ch + conds[i].off) = val;
      return true;
    }
  return false;
}

static int word(struct change *ch, char *w) {
  char *eq = strchr(w, '=');
  if (!eq) {
    if (!strcasecmp(w, "where") || !strcasecmp(w, "set")) return 0;
    ch->names = w;
    return 0;
  }
  *eq = '\0';
  const char *key = w, *val = eq + 1;
  if (!strcasecmp(key, "adminlevel")) {
    if (strcasecmp(val, "none")) {
      fprintf(stderr, " AdminLevel: administrators and operators are the configuration's "
                      "(Administrators=, Operators= in slurm.conf's PhalanxParameters)\n");
      return 1;
    }
    return 0;
  }
  if (cond(ch, key, val)) return 0;
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
    if (!strcasecmp(key, settings[i].key)) return settings[i].parse(ch, key, val, settings[i].field);
  fprintf(stderr, " Unknown option: %s=%s\n Use keyword 'where' to modify condition\n", key, val);
  return 1;
}

static int parse(struct change *ch, int argc, char **argv, int first) {
  static const char *const words[][2] = {{"account", "accounts"}, {"user", "users"}, {"qos", "qos"}};
  if (first >= argc) goto none;
  for (ch->entity = 0; ch->entity < 3; ch->entity++)
    if (!strcasecmp(argv[first], words[ch->entity][0]) || !strcasecmp(argv[first], words[ch->entity][1])) break;
  if (ch->entity == 3) goto none;
  for (int i = first + 1; i < argc; i++)
    if (word(ch, argv[i])) return 1;
  if (!ch->names) {
    fprintf(stderr, " Need name of %s to %s.\n", words[ch->entity][0],
            ch->op == ADD ? "add" : ch->op == MODIFY ? "modify" : "delete");
    return 1;
  }
  if (ch->op == ADD && ch->entity == USER && !ch->accounts && !(ch->accounts = ch->defacct)) {
    fprintf(stderr, " Need name of account to add user to.\n");
    return 1;
  }
  /* account and QoS names are lower case (sacctmgr folds them) */
  char *fold[] = {ch->entity == USER ? NULL : (char *)ch->names, (char *)ch->accounts, (char *)ch->parent,
                  (char *)ch->defacct};
  for (size_t k = 0; k < 4; k++)
    for (char *p = fold[k]; p && *p; p++) *p = (char)tolower((unsigned char)*p);
  return 0;
none:
  fprintf(stderr, " No valid entity in %s command\n Input line must include \"Account\", \"User\" or \"QOS\"\n",
          ch->op == ADD ? "add" : ch->op == MODIFY ? "modify" : "delete");
  return 1;
}

/* ---- what exists (the association listing) ---- */

/* Does the listing have the association (user "" for an account's own)? */
static const json_t *assoc_find(const struct change *ch, const char *account, const char *user, size_t *from) {
  size_t i = from ? *from : 0;
  for (; i < json_array_size(ch->assocs); i++) {
    const json_t *r = json_array_get(ch->assocs, i);
    const char *a = json_string_value(json_object_get(r, "account")), *u = json_string_value(json_object_get(r, "user"));
    if ((!account || (a && !strcmp(a, account))) && u && !strcmp(u, user ? user : "")) {
      if (from) *from = i + 1;
      return r;
    }
  }
  return NULL;
}

static int load(struct px_cmd *c, struct change *ch, json_t **doc) {
  long status = 0;
  if (px_cmd_call(c, "GET", "/slurmdb/v0.0.39/associations", NULL, &status, doc)) return 1;
  if (status != 200) {
    char msg[512];
    px_client_error_text(status, *doc, msg, sizeof msg);
    px_cmd_error(c, "%s", msg);
    return 1;
  }
  ch->assocs = json_object_get(*doc, "associations");
  const json_t *root = json_array_get(ch->assocs, 0);
  ch->cluster = root ? json_string_value(json_object_get(root, "cluster")) : NULL;
  if (!ch->cluster) ch->cluster = "cluster";
  return 0;
}

/* ---- the requests ---- */

static json_t *request(const struct change *ch, const char *name, const char *account) {
  static const char *const ops[] = {"add", "modify", "delete"}, *const ents[] = {"account", "user", "qos"};
  json_t *o = json_pack("{ss ss ss sO}", "op", ops[ch->op], "entity", ents[ch->entity], "name", name, "set", ch->set);
  if (o && account) json_object_set_new(o, "account", json_string(account));
  if (o && ch->op == ADD && ch->entity == ACCOUNT && ch->parent) json_object_set_new(o, "parent", json_string(ch->parent));
  if (o && ch->entity == ACCOUNT && ch->desc) json_object_set_new(o, "description", json_string(ch->desc));
  if (o && ch->entity == ACCOUNT && ch->org) json_object_set_new(o, "organization", json_string(ch->org));
  if (o && ch->op == ADD && ch->entity == USER && ch->defacct && account && !strcasecmp(account, ch->defacct))
    json_object_set_new(o, "default_account", json_true());
  return o;
}

static int send_one(struct px_cmd *c, json_t *body) {
  long status = 0;
  json_t *resp = NULL;
  int rc = body ? px_cmd_call(c, "POST", "/v1/accounts", body, &status, &resp) : 1;
  if (!rc && status / 100 != 2) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    bool jobs = strstr(msg, "job(s)") != NULL;
    printf(" Error with request: %s\n", jobs ? "Job(s) active, cancel job(s) before remove" : msg);
    if (jobs) printf("  %s\n", msg);
    rc = 1;
  }
  json_decref(resp);
  json_decref(body);
  return rc;
}

/* One request per name (and per account of a user). */
static bool new_default(const struct change *ch) { return ch->op == MODIFY && ch->entity == USER && ch->defacct; }

/* modify user set defaultaccount=A: the association with A becomes the default. */
static json_t *default_request(const char *name, const char *account) {
  return json_pack("{ss ss ss ss sb}", "op", "modify", "entity", "user", "name", name, "account", account,
                   "default_account", 1);
}

static int send_all(struct px_cmd *c, const struct change *ch) {
  char names[1024], accts[1024];
  snprintf(names, sizeof names, "%s", ch->names);
  for (char *s1 = NULL, *n = strtok_r(names, ",", &s1); n; n = strtok_r(NULL, ",", &s1)) {
    if (new_default(ch)) { /* then the settings, if any, to the associations named */
      if (send_one(c, default_request(n, ch->defacct))) return 1;
      if (!json_object_size(ch->set)) continue;
    }
    if (ch->entity != USER || !ch->accounts) {
      if (send_one(c, request(ch, n, NULL))) return 1;
      continue;
    }
    snprintf(accts, sizeof accts, "%s", ch->accounts);
    for (char *s2 = NULL, *a = strtok_r(accts, ",", &s2); a; a = strtok_r(NULL, ",", &s2))
      if (send_one(c, request(ch, n, a))) return 1;
  }
  return 0;
}

/* ---- what Slurm prints ---- */

static const struct { const char *field, *label; } labels[] = {
    {"fairshare", "Fairshare"},      {"grp_gpus", "GrpTRES gpu"},      {"grp_cpus", "GrpTRES cpu"},
    {"grp_mem_mib", "GrpTRES mem"},  {"grp_nodes", "GrpTRES node"},    {"grp_jobs", "GrpJobs"},
    {"max_jobs", "MaxJobs"},         {"max_submit_jobs", "MaxSubmitJobs"}, {"max_gpus_per_job", "MaxTRES gpu"},
    {"priority", "Priority"},        {"max_gpus_per_user", "MaxTRESPU gpu"}, {"max_jobs_per_user", "MaxJobsPU"},
    {"max_submit_per_user", "MaxSubmitPU"}, {"max_wall_s", "MaxWall"}};

static void say_settings(const struct change *ch, FILE *o) {
  for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) {
    json_t *v = json_object_get(ch->set, labels[i].field);
    if (v) fprintf(o, "  %-14s= %lld\n", labels[i].label, (long long)json_integer_value(v));
  }
}

/* Calls fn for each name (and each account of a user, or NULL). */
static int each(const struct change *ch, int (*fn)(const struct change *, const char *, const char *, FILE *), FILE *o) {
  char names[1024], accts[1024];
  int n = 0;
  snprintf(names, sizeof names, "%s", ch->names);
  for (char *s1 = NULL, *x = strtok_r(names, ",", &s1); x; x = strtok_r(NULL, ",", &s1)) {
    if (ch->entity != USER || !ch->accounts) {
      n += fn(ch, x, NULL, o);
      continue;
    }
    snprintf(accts, sizeof accts, "%s", ch->accounts);
    for (char *s2 = NULL, *a = strtok_r(accts, ",", &s2); a; a = strtok_r(NULL, ",", &s2)) n += fn(ch, x, a, o);
  }
  return n;
}

static int name_line(const struct change *ch, const char *n, const char *a, FILE *o) {
  return fprintf(o, "  %s\n", n) > 0;
}

static int account_assoc_line(const struct change *ch, const char *n, const char *a, FILE *o) {
  return fprintf(o, "  A = %-10.10s C = %-10.10s\n", n, ch->cluster) > 0;
}

static int user_assoc_line(const struct change *ch, const char *n, const char *a, FILE *o) {
  return fprintf(o, "  U = %-9.9s A = %-10.10s C = %-10.10s\n", n, a, ch->cluster) > 0;
}

/* Existing associations of name (and account), printed (o) or counted. */
static int existing(const struct change *ch, const char *n, const char *a, FILE *o) {
  bool user = ch->entity == USER;
  int k = 0;
  size_t from = 0;
  for (const json_t *r; (r = assoc_find(ch, user ? a : n, user ? n : "", &from)); k++) {
    const char *acct = json_string_value(json_object_get(r, "account")),
               *parent = json_string_value(json_object_get(r, "parent_account"));
    if (!o) continue;
    if (ch->op == DELETE && !user) fprintf(o, "  %s\n", acct);
    else if (!user) fprintf(o, "  C = %-10.10s A = %s of %s\n", ch->cluster, acct, parent ? parent : "");
    else fprintf(o, "  C = %-10.10s A = %-*.*s U = %-9.9s\n", ch->cluster, ch->op == DELETE ? 10 : 20,
                 ch->op == DELETE ? 10 : 20, acct, n);
  }
  return k;
}

/* 1 (after Slurm's words) when user n has no association with the new default account. */
static int not_associated_with_default(const struct change *ch, const char *n, const char *a, FILE *o) {
  if (assoc_find(ch, ch->defacct, n, NULL)) return 0;
  printf(" Can't modify because these users aren't associated with new default account '%s'...\n"
         "  U = %s C = %s\n", ch->defacct, n, ch->cluster);
  return 1;
}

static void say_add(const struct change *ch, FILE *o) {
  if (ch->entity == ACCOUNT) {
    fprintf(o, " Adding Account(s)\n");
    each(ch, name_line, o);
    fprintf(o, " Settings\n  %-16s= %s\n  %-16s= %s\n Associations\n", "Description",
            ch->desc ? ch->desc : "Account Name", "Organization", ch->org ? ch->org : "Parent/Account Name");
    each(ch, account_assoc_line, o);
    if (ch->parent || json_object_size(ch->set)) fprintf(o, " Settings\n");
    say_settings(ch, o);
    if (ch->parent) fprintf(o, "  %-14s= %s\n", "Parent", ch->parent);
    return;
  }
  fprintf(o, " Adding User(s)\n");
  each(ch, name_line, o);
  if (ch->defacct) fprintf(o, " Settings =\n  Default Account = %s\n", ch->defacct);
  fprintf(o, " Associations =\n");
  each(ch, user_assoc_line, o);
  fprintf(o, " Non Default Settings\n");
  say_settings(ch, o);
}

/* Refuses, as Slurm words it, what names nothing or exists already. */
static int add_check(const struct change *ch) {
  if (ch->entity == QOS) {
    printf(" Nothing new added.\n");
    fprintf(stderr, " QoS are added in the accounts file; sacctmgr modifies their limits\n");
    return 1;
  }
  if (ch->entity == ACCOUNT) {
    const char *p = ch->parent ? ch->parent : "root";
    if (!assoc_find(ch, p, "", NULL)) {
      printf(" Parent account '%s' doesn't exist on cluster %s\n        Contact your admin to add this account.\n"
             " No associations created.\n", p, ch->cluster);
      return 1;
    }
  } else {
    char accts[1024];
    snprintf(accts, sizeof accts, "%s", ch->accounts);
    for (char *s = NULL, *a = strtok_r(accts, ",", &s); a; a = strtok_r(NULL, ",", &s))
      if (!assoc_find(ch, a, "", NULL)) {
        printf(" This account '%s' doesn't exist.\n        Contact your admin to add this account.\n"
               " No associations or wckeys created.\n", a);
        return 1;
      }
  }
  if (each(ch, existing, NULL)) {
    printf(" Nothing new added.\n");
    return 1;
  }
  return 0;
}

/* out NULL: checks what the listing already says (1 after Slurm's words
 * when there is nothing to do); else prints the change. */
static int summary(const struct change *ch, FILE *out) {
  if (ch->op == ADD) return out ? (say_add(ch, out), 0) : add_check(ch);
  if (ch->entity == QOS) {
    if (out) fprintf(out, "%s\n  %s\n", ch->op == MODIFY ? " Modified qos..." : " Deleting QOS(s)...", ch->names);
    return 0;
  }
  if (!out && new_default(ch) && each(ch, not_associated_with_default, NULL)) return 1;
  if (!out) {
    if (each(ch, existing, NULL)) return 0;
    printf(" Nothing %s\n", ch->op == MODIFY ? "modified" : "deleted");
    return 1;
  }
  if (new_default(ch)) fprintf(out, " Modified users...\n"), each(ch, name_line, out);
  static const char *const head[2][2] = {{" Modified account associations...", " Modified user associations..."},
                                         {" Deleting accounts...", " Deleting user associations..."}};
  fprintf(out, "%s\n", head[ch->op == DELETE][ch->entity == USER]);
  each(ch, existing, out);
  return 0;
}

/* Slurm's question; true to go on. A pipe's answer is read as Slurm reads
 * it; at the end of input (Slurm asks again forever) or after 30 s, no. */
static bool confirm(void) {
  printf("Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): ");
  fflush(stdout);
  struct pollfd p = {.fd = 0, .events = POLLIN};
  char line[64] = "";
  bool got = poll(&p, 1, 30000) == 1 && fgets(line, sizeof line, stdin);
  if (!isatty(0)) printf("\n");
  if (got && (line[0] == 'y' || line[0] == 'Y')) return true;
  printf(" Changes Discarded\n");
  return false;
}

int px_sacctmgr_change(struct px_cmd *c, int argc, char **argv, int first, const char *verb, bool immediate) {
  struct change ch = {.op = !strcasecmp(verb, "add") || !strcasecmp(verb, "create") ? ADD
                            : !strcasecmp(verb, "modify") || !strcasecmp(verb, "update") ? MODIFY : DELETE,
                      .set = json_object()};
  json_t *doc = NULL;
  int rc = !ch.set || parse(&ch, argc, argv, first) || load(c, &ch, &doc);
  if (!rc) rc = summary(&ch, NULL); /* nothing to do: said as Slurm says it */
  if (!rc && !immediate) {
    summary(&ch, stdout);
    if (!confirm()) goto out;
  }
  if (!rc) rc = send_all(c, &ch);
  if (!rc && immediate) summary(&ch, stdout);
out:
  json_decref(ch.set);
  json_decref(doc);
  return rc;
}
