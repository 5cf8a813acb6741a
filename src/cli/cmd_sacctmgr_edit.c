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
 * found first in the association listing and said as Slurm says it
 * (fmt_sacctmgr_edit.c).
 */
#include <ctype.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cmd_common.h"
#include "cli/sacctmgr_edit.h"
#include "util/units.h"

/* ---- values ---- */

static int bad(const char *key, const char *val, const char *want) {
  fprintf(stderr, " Bad value for %s: '%s' (%s)\n", key, val, want);
  return 1;
}

static int put(struct px_sam *ch, const char *field, long long v) {
  return json_object_set_new(ch->set, field, json_integer(v)) ? 1 : 0;
}

static int number(struct px_sam *ch, const char *key, const char *val, const char *field) {
  if (!strcmp(field, "fairshare") && !strcasecmp(val, "parent")) return put(ch, field, 4294967295LL); /* conf.h */
  char *end;
  long long v = strtoll(val, &end, 10);
  if (!*val || *end || v < -1) return bad(key, val, "a whole number, or -1 for no limit");
  if (!strcmp(field, "fairshare") && v < 0) v = 1; /* sacctmgr: -1 restores the default share */
  return put(ch, field, v);
}

/* gres/gpu=N,cpu=N,mem=N[MGT],node=N; gpu_only: only gres/gpu (into field). */
static int tres(struct px_sam *ch, const char *key, const char *val, const char *field) {
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

static int wall(struct px_sam *ch, const char *key, const char *val, const char *field) {
  int64_t s;
  struct px_diag d;
  if (!strcmp(val, "-1")) return put(ch, field, -1);
  if (px_duration_parse(val, &s, &d)) return bad(key, val, "a time such as 1-00:00:00, or -1");
  return put(ch, field, s);
}

static const struct {
  const char *key, *field;
  int (*parse)(struct px_sam *, const char *, const char *, const char *);
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

static bool cond(struct px_sam *ch, const char *key, const char *val) {
  static const struct { const char *key; size_t off; } conds[] = {
      {"name", offsetof(struct px_sam, names)},      {"names", offsetof(struct px_sam, names)},
      {"user", offsetof(struct px_sam, names)},      {"users", offsetof(struct px_sam, names)},
      {"account", offsetof(struct px_sam, accounts)}, {"accounts", offsetof(struct px_sam, accounts)},
      {"parent", offsetof(struct px_sam, parent)},   {"defaultaccount", offsetof(struct px_sam, defacct)},
      {"description", offsetof(struct px_sam, desc)}, {"organization", offsetof(struct px_sam, org)}};
  if (!strcasecmp(key, "cluster") || !strcasecmp(key, "clusters")) return true; /* one cluster */
  for (size_t i = 0; i < sizeof conds / sizeof conds[0]; i++)
    if (!strcasecmp(key, conds[i].key)) {
      if (ch->entity != PX_SAM_USER && i >= 2 && i < 4) return false; /* user= names users only */
      *(const char **)((char *)ch + conds[i].off) = val;
      return true;
    }
  return false;
}

static int word(struct px_sam *ch, char *w) {
  char *eq = strchr(w, '=');
  if (!eq) {
    if (!strcasecmp(w, "where") || !strcasecmp(w, "set")) return 0;
    if (ch->names) {
      fprintf(stderr, " Unknown option: %s (several names are one comma list: %s,%s)\n", w, ch->names, w);
      return 1;
    }
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

static int parse(struct px_sam *ch, int argc, char **argv, int first) {
  static const char *const words[][2] = {{"account", "accounts"}, {"user", "users"}, {"qos", "qos"}};
  if (first >= argc) goto none;
  for (ch->entity = 0; ch->entity < 3; ch->entity++)
    if (!strcasecmp(argv[first], words[ch->entity][0]) || !strcasecmp(argv[first], words[ch->entity][1])) break;
  if (ch->entity == 3) goto none;
  for (int i = first + 1; i < argc; i++)
    if (word(ch, argv[i])) return 1;
  if (!ch->names) {
    fprintf(stderr, " Need name of %s to %s.\n", words[ch->entity][0],
            ch->op == PX_SAM_ADD ? "add" : ch->op == PX_SAM_MODIFY ? "modify" : "delete");
    return 1;
  }
  if (ch->op == PX_SAM_ADD && ch->entity == PX_SAM_USER && !ch->accounts && !(ch->accounts = ch->defacct)) {
    fprintf(stderr, " Need name of account to add user to.\n");
    return 1;
  }
  /* account and QoS names are lower case (sacctmgr folds them) */
  char *fold[] = {ch->entity == PX_SAM_USER ? NULL : (char *)ch->names, (char *)ch->accounts, (char *)ch->parent,
                  (char *)ch->defacct};
  for (size_t k = 0; k < 4; k++)
    for (char *p = fold[k]; p && *p; p++) *p = (char)tolower((unsigned char)*p);
  return 0;
none:
  fprintf(stderr, " No valid entity in %s command\n Input line must include \"Account\", \"User\" or \"QOS\"\n",
          ch->op == PX_SAM_ADD ? "add" : ch->op == PX_SAM_MODIFY ? "modify" : "delete");
  return 1;
}

/* ---- what exists (the association listing) ---- */

static int get_doc(struct px_cmd *c, const char *path, json_t **doc) {
  long status = 0;
  if (px_cmd_call(c, "GET", path, NULL, &status, doc)) return 1;
  if (status == 200) return 0;
  char msg[512];
  px_client_error_text(status, *doc, msg, sizeof msg);
  px_cmd_error(c, "%s", msg);
  return 1;
}

static int load(struct px_cmd *c, struct px_sam *ch, json_t **doc, json_t **qos_doc) {
  if (get_doc(c, "/slurmdb/v0.0.39/associations", doc)) return 1;
  if (ch->entity == PX_SAM_QOS) {
    if (get_doc(c, "/slurmdb/v0.0.39/qos", qos_doc)) return 1;
    ch->qos = json_object_get(*qos_doc, "qos");
  }
  ch->assocs = json_object_get(*doc, "associations");
  const json_t *root = json_array_get(ch->assocs, 0);
  ch->cluster = root ? json_string_value(json_object_get(root, "cluster")) : NULL;
  if (!ch->cluster) ch->cluster = "cluster";
  return 0;
}

/* ---- the requests ---- */

static json_t *request(const struct px_sam *ch, const char *name, const char *account) {
  static const char *const ops[] = {"add", "modify", "delete"}, *const ents[] = {"account", "user", "qos"};
  json_t *o = json_pack("{ss ss ss sO}", "op", ops[ch->op], "entity", ents[ch->entity], "name", name, "set", ch->set);
  if (o && account) json_object_set_new(o, "account", json_string(account));
  if (o && ch->op == PX_SAM_ADD && ch->entity == PX_SAM_ACCOUNT && ch->parent) json_object_set_new(o, "parent", json_string(ch->parent));
  if (o && ch->entity == PX_SAM_ACCOUNT && ch->desc) json_object_set_new(o, "description", json_string(ch->desc));
  if (o && ch->entity == PX_SAM_ACCOUNT && ch->org) json_object_set_new(o, "organization", json_string(ch->org));
  if (o && ch->op == PX_SAM_ADD && ch->entity == PX_SAM_USER && ch->defacct && account && !strcasecmp(account, ch->defacct))
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

/* modify user set defaultaccount=A: the association with A becomes the default. */
static json_t *default_request(const char *name, const char *account) {
  return json_pack("{ss ss ss ss sb}", "op", "modify", "entity", "user", "name", name, "account", account,
                   "default_account", 1);
}

static int send_all(struct px_cmd *c, const struct px_sam *ch) {
  char names[1024], accts[1024];
  snprintf(names, sizeof names, "%s", ch->names);
  for (char *s1 = NULL, *n = strtok_r(names, ",", &s1); n; n = strtok_r(NULL, ",", &s1)) {
    if (px_sam_new_default(ch)) { /* then the settings, if any, to the associations named */
      if (send_one(c, default_request(n, ch->defacct))) return 1;
      if (!json_object_size(ch->set)) continue;
    }
    if (ch->entity != PX_SAM_USER || !ch->accounts) {
      if (send_one(c, request(ch, n, NULL))) return 1;
      continue;
    }
    snprintf(accts, sizeof accts, "%s", ch->accounts);
    for (char *s2 = NULL, *a = strtok_r(accts, ",", &s2); a; a = strtok_r(NULL, ",", &s2))
      if (send_one(c, request(ch, n, a))) return 1;
  }
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

int px_sacctmgr_change(struct px_cmd *c, int argc, char **argv, int first, const char *verb, bool immediate,
                       bool quiet) {
  struct px_sam ch = {.op = !strcasecmp(verb, "add") || !strcasecmp(verb, "create") ? PX_SAM_ADD
                            : !strcasecmp(verb, "modify") || !strcasecmp(verb, "update") ? PX_SAM_MODIFY : PX_SAM_DELETE,
                      .set = json_object()};
  json_t *doc = NULL, *qos_doc = NULL;
  int rc = !ch.set || parse(&ch, argc, argv, first) || load(c, &ch, &doc, &qos_doc);
  if (!rc) rc = px_sam_summary(&ch, NULL); /* nothing to do: said as Slurm says it */
  if (!rc && !immediate) {
    px_sam_summary(&ch, stdout);
    if (!confirm()) goto out;
  }
  if (!rc) rc = send_all(c, &ch);
  if (!rc && immediate && !quiet) px_sam_summary(&ch, stdout);
out:
  json_decref(ch.set);
  json_decref(doc);
  json_decref(qos_doc);
  return rc;
}
