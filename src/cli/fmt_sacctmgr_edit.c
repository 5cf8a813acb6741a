/*
 * fmt_sacctmgr_edit.c - what sacctmgr's changes print, in Slurm 22.05's
 * words as captured from the real sacctmgr on the reference harness:
 * " Adding Account(s)", " Modified account associations...", " Deleting
 * accounts...", and the refusals it words itself before any change
 * (" Nothing new added.", " Parent account 'x' doesn't exist on cluster
 * c", " Nothing modified", ...), found in the association listing.
 */
#include <string.h>

#include "cli/sacctmgr_edit.h"

/* Does the listing have the association (user "" for an account's own)? */
const json_t *px_sam_assoc_find(const struct px_sam *ch, const char *account, const char *user, size_t *from) {
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

static const struct { const char *field, *label; } labels[] = {
    {"fairshare", "Fairshare"},      {"grp_gpus", "GrpTRES gpu"},      {"grp_cpus", "GrpTRES cpu"},
    {"grp_mem_mib", "GrpTRES mem"},  {"grp_nodes", "GrpTRES node"},    {"grp_jobs", "GrpJobs"},
    {"max_jobs", "MaxJobs"},         {"max_submit_jobs", "MaxSubmitJobs"}, {"max_gpus_per_job", "MaxTRES gpu"},
    {"priority", "Priority"},        {"max_gpus_per_user", "MaxTRESPU gpu"}, {"max_jobs_per_user", "MaxJobsPU"},
    {"max_submit_per_user", "MaxSubmitPU"}, {"max_wall_s", "MaxWall"}};

static void say_settings(const struct px_sam *ch, FILE *o) {
  for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) {
    json_t *v = json_object_get(ch->set, labels[i].field);
    if (v && !i && json_integer_value(v) == 4294967295LL) fprintf(o, "  %-14s= parent\n", labels[i].label);
    else if (v) fprintf(o, "  %-14s= %lld\n", labels[i].label, (long long)json_integer_value(v));
  }
}

/* Calls fn for each name (and each account of a user, or NULL). */
int px_sam_each(const struct px_sam *ch, int (*fn)(const struct px_sam *, const char *, const char *, FILE *), FILE *o) {
  char names[1024], accts[1024];
  int n = 0;
  snprintf(names, sizeof names, "%s", ch->names);
  for (char *s1 = NULL, *x = strtok_r(names, ",", &s1); x; x = strtok_r(NULL, ",", &s1)) {
    if (ch->entity != PX_SAM_USER || !ch->accounts) {
      n += fn(ch, x, NULL, o);
      continue;
    }
    snprintf(accts, sizeof accts, "%s", ch->accounts);
    for (char *s2 = NULL, *a = strtok_r(accts, ",", &s2); a; a = strtok_r(NULL, ",", &s2)) n += fn(ch, x, a, o);
  }
  return n;
}

/* Each name once (a user with several accounts: at its first). */
static int name_line(const struct px_sam *ch, const char *n, const char *a, FILE *o) {
  size_t k = a ? strlen(a) : 0;
  if (a && (strncmp(ch->accounts, a, k) || (ch->accounts[k] && ch->accounts[k] != ','))) return 0;
  return fprintf(o, "  %s\n", n) > 0;
}

static int account_assoc_line(const struct px_sam *ch, const char *n, const char *a, FILE *o) {
  return fprintf(o, "  A = %-10.10s C = %-10.10s\n", n, ch->cluster) > 0;
}

static int user_assoc_line(const struct px_sam *ch, const char *n, const char *a, FILE *o) {
  return fprintf(o, "  U = %-9.9s A = %-10.10s C = %-10.10s\n", n, a, ch->cluster) > 0;
}

/* Existing associations of name (and account), printed (o) or counted. */
static int existing(const struct px_sam *ch, const char *n, const char *a, FILE *o) {
  bool user = ch->entity == PX_SAM_USER;
  int k = 0;
  size_t from = 0;
  for (const json_t *r; (r = px_sam_assoc_find(ch, user ? a : n, user ? n : "", &from)); k++) {
    const char *acct = json_string_value(json_object_get(r, "account")),
               *parent = json_string_value(json_object_get(r, "parent_account"));
    if (!o) continue;
    if (ch->op == PX_SAM_DELETE && !user) fprintf(o, "  %s\n", acct);
    else if (!user) fprintf(o, "  C = %-10.10s A = %s of %s\n", ch->cluster, acct, parent ? parent : "");
    else fprintf(o, "  C = %-10.10s A = %-*.*s U = %-9.9s\n", ch->cluster, ch->op == PX_SAM_DELETE ? 10 : 20,
                 ch->op == PX_SAM_DELETE ? 10 : 20, acct, n);
  }
  return k;
}

/* 1 (after Slurm's words) when user n has no association with the new default account. */
static int not_associated_with_default(const struct px_sam *ch, const char *n, const char *a, FILE *o) {
  if (px_sam_assoc_find(ch, ch->defacct, n, NULL)) return 0;
  printf(" Can't modify because these users aren't associated with new default account '%s'...\n"
         "  U = %s C = %s\n", ch->defacct, n, ch->cluster);
  return 1;
}

/* ---- QoS ---- */

/* Is QoS n in the listing? Printed (o) or counted. */
static int qos_exists(const struct px_sam *ch, const char *n, const char *a, FILE *o) {
  (void)a;
  for (size_t i = 0; i < json_array_size(ch->qos); i++) {
    const char *q = json_string_value(json_object_get(json_array_get(ch->qos, i), "name"));
    if (q && !strcmp(q, n)) return o ? fprintf(o, "  %s\n", n) > 0 : 1;
  }
  return 0;
}

/* A QoS's settings as sacctmgr add qos prints them (by name). */
static void say_qos_settings(const struct px_sam *ch, FILE *o) {
  static const struct { const char *field, *label, *prefix; } qs[] = {
      {"max_jobs_per_user", "MaxJobsPerUser", ""}, {"max_submit_per_user", "MaxSubmitJobsPerUser", ""},
      {"max_gpus_per_user", "MaxTRESPerUser", "gres/gpu="}, {"max_wall_s", "MaxWall", NULL},
      {"priority", "Priority", ""}};
  for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
    json_t *v = json_object_get(ch->set, qs[i].field);
    if (!v) continue;
    long long n = json_integer_value(v);
    if (qs[i].prefix) {
      fprintf(o, "  %-25s= %s%lld\n", qs[i].label, qs[i].prefix, n);
    } else if (n >= 86400) {
      fprintf(o, "  %-25s= %lld-%02lld:%02lld:%02lld\n", qs[i].label, n / 86400, n / 3600 % 24, n / 60 % 60, n % 60);
    } else {
      fprintf(o, "  %-25s= %02lld:%02lld:%02lld\n", qs[i].label, n / 3600, n / 60 % 60, n % 60);
    }
  }
}

static void say_add_qos(const struct px_sam *ch, FILE *o) {
  fprintf(o, " Adding QOS(s)\n");
  px_sam_each(ch, name_line, o);
  fprintf(o, " Settings\n  %-15s= %s\n", "Description", ch->names);
  say_qos_settings(ch, o);
}

/* Nothing to do (1, after Slurm's words), or 0. */
static int qos_check(const struct px_sam *ch) {
  int known = px_sam_each(ch, qos_exists, NULL);
  if (ch->op == PX_SAM_ADD && known) return printf(" Nothing new added.\n"), 1;
  if (ch->op != PX_SAM_ADD && !known) return printf(" Nothing %s\n", ch->op == PX_SAM_MODIFY ? "modified" : "deleted"), 1;
  return 0;
}

static void say_add(const struct px_sam *ch, FILE *o) {
  if (ch->entity == PX_SAM_QOS) return say_add_qos(ch, o);
  if (ch->entity == PX_SAM_ACCOUNT) {
    fprintf(o, " Adding Account(s)\n");
    px_sam_each(ch, name_line, o);
    fprintf(o, " Settings\n  %-16s= %s\n  %-16s= %s\n Associations\n", "Description",
            ch->desc ? ch->desc : "Account Name", "Organization", ch->org ? ch->org : "Parent/Account Name");
    px_sam_each(ch, account_assoc_line, o);
    if (ch->parent || json_object_size(ch->set)) fprintf(o, " Settings\n");
    say_settings(ch, o);
    if (ch->parent) fprintf(o, "  %-14s= %s\n", "Parent", ch->parent);
    return;
  }
  fprintf(o, " Adding User(s)\n");
  px_sam_each(ch, name_line, o);
  if (ch->defacct) fprintf(o, " Settings =\n  Default Account = %s\n", ch->defacct);
  fprintf(o, " Associations =\n");
  px_sam_each(ch, user_assoc_line, o);
  fprintf(o, " Non Default Settings\n");
  say_settings(ch, o);
}

/* Refuses, as Slurm words it, what names nothing or exists already. */
static int add_check(const struct px_sam *ch) {
  if (ch->entity == PX_SAM_ACCOUNT) {
    const char *p = ch->parent ? ch->parent : "root";
    if (!px_sam_assoc_find(ch, p, "", NULL)) {
      printf(" Parent account '%s' doesn't exist on cluster %s\n        Contact your admin to add this account.\n"
             " No associations created.\n", p, ch->cluster);
      return 1;
    }
  } else {
    char accts[1024];
    snprintf(accts, sizeof accts, "%s", ch->accounts);
    for (char *s = NULL, *a = strtok_r(accts, ",", &s); a; a = strtok_r(NULL, ",", &s))
      if (!px_sam_assoc_find(ch, a, "", NULL)) {
        printf(" This account '%s' doesn't exist.\n        Contact your admin to add this account.\n"
               " No associations or wckeys created.\n", a);
        return 1;
      }
  }
  if (px_sam_each(ch, existing, NULL)) {
    printf(" Nothing new added.\n");
    return 1;
  }
  return 0;
}

/* out NULL: checks what the listing already says (1 after Slurm's words
 * when there is nothing to do); else prints the change. */
int px_sam_summary(const struct px_sam *ch, FILE *out) {
  if (ch->entity == PX_SAM_QOS && !out) return qos_check(ch);
  if (ch->op == PX_SAM_ADD) return out ? (say_add(ch, out), 0) : add_check(ch);
  if (ch->entity == PX_SAM_QOS) {
    fprintf(out, "%s\n", ch->op == PX_SAM_MODIFY ? " Modified qos..." : " Deleting QOS(s)...");
    px_sam_each(ch, qos_exists, out);
    return 0;
  }
  if (!out && px_sam_new_default(ch) && px_sam_each(ch, not_associated_with_default, NULL)) return 1;
  if (!out) {
    if (px_sam_each(ch, existing, NULL)) return 0;
    printf(" Nothing %s\n", ch->op == PX_SAM_MODIFY ? "modified" : "deleted");
    return 1;
  }
  if (px_sam_new_default(ch)) fprintf(out, " Modified users...\n"), px_sam_each(ch, name_line, out);
  static const char *const head[2][2] = {{" Modified account associations...", " Modified user associations..."},
                                         {" Deleting accounts...", " Deleting user associations..."}};
  fprintf(out, "%s\n", head[ch->op == PX_SAM_DELETE][ch->entity == PX_SAM_USER]);
  px_sam_each(ch, existing, out);
  return 0;
}

