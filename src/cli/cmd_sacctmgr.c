/*
 * cmd_sacctmgr.c - `sacctmgr show|list ENTITY [where] [COND=VALUES...]
 * [format=FIELDS]` for associations, accounts, users and QoS, read from the
 * server's slurmdb documents (GET /slurmdb/v0.0.39/..., the configured
 * accounts tree), and events (the nodes' down and drain periods:
 * cmd_sacctmgr_event.c), with -n, -p, -P (tables: fmt_sacctmgr.c); --json prints
 * the document's rows. Conditions
 * (account(s)=, user(s)=, name(s)=, cluster(s)=, comma lists) filter the
 * rows here. Changes (add, modify, delete) go to the server online
 * (cmd_sacctmgr_edit.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cmd_common.h"

static const struct {
  const char *word;
  enum px_sacctmgr_entity e;
  const char *path;
} entities[] = {
    {"association", PX_SACCTMGR_ASSOC, "/slurmdb/v0.0.39/associations"},
    {"associations", PX_SACCTMGR_ASSOC, "/slurmdb/v0.0.39/associations"},
    {"assoc", PX_SACCTMGR_ASSOC, "/slurmdb/v0.0.39/associations"},
    {"account", PX_SACCTMGR_ACCOUNT, "/slurmdb/v0.0.39/accounts"},
    {"accounts", PX_SACCTMGR_ACCOUNT, "/slurmdb/v0.0.39/accounts"},
    {"user", PX_SACCTMGR_USER, "/slurmdb/v0.0.39/users"},
    {"users", PX_SACCTMGR_USER, "/slurmdb/v0.0.39/users"},
    {"qos", PX_SACCTMGR_QOS, "/slurmdb/v0.0.39/qos"},
};

/* Conditions: comma lists of accepted values, NULL = any. */
struct conds {
  const char *accounts, *users, *names, *clusters;
};

static bool cond_word(const char *w, struct conds *c, const char **format) {
  static const struct {
    const char *key;
    size_t field;
  } keys[] = {{"account", 0}, {"accounts", 0}, {"acct", 0}, {"user", 1}, {"users", 1},
              {"name", 2},    {"names", 2},    {"cluster", 3}, {"clusters", 3}};
  const char *eq = strchr(w, '=');
  if (!eq) return false;
  size_t n = (size_t)(eq - w);
  if (n == 6 && !strncasecmp(w, "format", 6)) return *format = eq + 1, true;
  const char **dst[] = {&c->accounts, &c->users, &c->names, &c->clusters};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (strlen(keys[i].key) == n && !strncasecmp(w, keys[i].key, n)) return *dst[keys[i].field] = eq + 1, true;
  return false;
}

static bool keep(const struct conds *c, enum px_sacctmgr_entity e, const json_t *row) {
  const char *name = json_string_value(json_object_get(row, "name"));
  const char *account = e == PX_SACCTMGR_ASSOC ? json_string_value(json_object_get(row, "account")) : name;
  const char *user = e == PX_SACCTMGR_ASSOC ? json_string_value(json_object_get(row, "user")) : name;
  const char *cluster = json_string_value(json_object_get(row, "cluster"));
  if (c->accounts && (e == PX_SACCTMGR_ASSOC || e == PX_SACCTMGR_ACCOUNT) &&
      !px_cmd_list_has(c->accounts, account ? account : ""))
    return false;
  if (c->users && (e == PX_SACCTMGR_ASSOC || e == PX_SACCTMGR_USER) && !px_cmd_list_has(c->users, user ? user : ""))
    return false;
  if (c->names && e != PX_SACCTMGR_ASSOC && !px_cmd_list_has(c->names, name ? name : "")) return false;
  if (c->clusters && cluster && !px_cmd_list_has(c->clusters, cluster)) return false;
  return true;
}

static void filter(json_t *doc, enum px_sacctmgr_entity e, const char *key, const struct conds *c) {
  json_t *rows = json_object_get(doc, key);
  for (size_t i = json_array_size(rows); i-- > 0;)
    if (!keep(c, e, json_array_get(rows, i))) json_array_remove(rows, i);
}

static int no_entity(void) {
  fprintf(stderr, "No valid entity in list command\n"
                  "Input line must include \"Account\", \"Association\", \"Cluster\", \"Configuration\",\n"
                  "\"Event\", \"Federation\", \"Problem\", \"QOS\", \"Resource\", \"Reservation\",\n"
                  "\"RunAwayJobs\", \"Stats\", \"Transaction\", \"TRES\", \"User\", or \"WCKey\"\n");
  return 1;
}

static int show(struct px_cmd *c, int argc, char **argv, int first, const struct px_sacctmgr_opts *base) {
  size_t k = 0;
  const size_t nent = sizeof entities / sizeof entities[0];
  if (first < argc && (!strcasecmp(argv[first], "event") || !strcasecmp(argv[first], "events")))
    return px_sacctmgr_show_event(c, argc, argv, first + 1, base);
  while (first < argc && k < nent && strcasecmp(argv[first], entities[k].word)) k++;
  if (first >= argc || k == nent) return no_entity();
  struct conds conds = {0};
  struct px_sacctmgr_opts o = *base;
  for (int i = first + 1; i < argc; i++) {
    if (!strcasecmp(argv[i], "where") || !strcasecmp(argv[i], "set")) continue;
    if (!cond_word(argv[i], &conds, &o.format)) {
      fprintf(stderr, " Unknown condition: %s\n", argv[i]);
      return 1;
    }
  }
  long status = 0;
  json_t *doc = NULL;
  int rc = px_cmd_call(c, "GET", entities[k].path, NULL, &status, &doc);
  if (!rc && status != 200) {
    const char *msg = json_string_value(json_object_get(json_array_get(json_object_get(doc, "errors"), 0), "error"));
    px_cmd_error(c, "%s", msg ? msg : "the server refused the query");
    rc = 1;
  }
  if (!rc) {
    static const char *const keys[] = {"associations", "accounts", "users", "qos"};
    struct px_diag d;
    px_diag_clear(&d);
    filter(doc, entities[k].e, keys[entities[k].e], &conds);
    if (c->json) {
      px_cmd_print_json(json_object_get(doc, keys[entities[k].e]));
    } else if (px_fmt_sacctmgr(stdout, entities[k].e, doc, &o, &d)) {
      fprintf(stderr, "%s\n", d.msg);
      rc = 1;
    }
  }
  json_decref(doc);
  return rc;
}

static bool is_change(const char *verb) {
  static const char *const verbs[] = {"add", "create", "modify", "update", "delete", "remove"};
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
    if (!strcasecmp(verb, verbs[i])) return true;
  return false;
}

int px_cmd_sacctmgr(int argc, char **argv, bool native) {
  static const struct option longopts[] = {
      {"noheader", no_argument, 0, 'n'}, {"parsable", no_argument, 0, 'p'},
      {"parsable2", no_argument, 0, 'P'}, {"immediate", no_argument, 0, 'i'},
      {"quiet", no_argument, 0, 'Q'},    {"json", no_argument, 0, 'J'},
      {"help", no_argument, 0, 'h'},     {0, 0, 0, 0}};
  struct px_cmd c;
  px_cmd_init(&c, native ? "phalanx accounts" : "sacctmgr", !native);
  struct px_sacctmgr_opts o = {0};
  bool immediate = false, quiet = false;
  int opt, rc;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "npPiQh", longopts, NULL)) != -1) {
    switch (opt) {
    case 'n': o.noheader = true; break;
    case 'p': o.parsable = true; break;
    case 'P': o.parsable2 = true; break;
    case 'i': immediate = true; break;
    case 'Q': quiet = true; break;
    case 'J': c.json = true; break;
    case 'h':
      printf("Usage: sacctmgr [-n] [-p|-P] show|list association|account|user|qos [where] "
             "[account=A,...] [user=U,...] [name=N,...] [format=F,...]\n"
             "       sacctmgr [-n] [-p|-P] show event [Start=T] [End=T] [Nodes=LIST]\n"
             "       sacctmgr [-i] add|modify|delete account|user|qos [where] name=N [account=A] "
             "[set] [fairshare=N] [GrpTRES=gres/gpu=N] [MaxJobs=N] ...\n");
      px_cmd_fini(&c);
      return 0;
    default: px_cmd_fini(&c); return 1;
    }
  }
  const char *verb = optind < argc ? argv[optind] : "";
  if (!strcasecmp(verb, "show") || !strcasecmp(verb, "list")) {
    rc = show(&c, argc, argv, optind + 1, &o);
  } else if (is_change(verb)) {
    rc = px_sacctmgr_change(&c, argc, argv, optind + 1, verb, immediate, quiet);
  } else if (*verb) {
    fprintf(stderr, " Unknown command: %s\n", verb);
    rc = 1;
  } else {
    px_cmd_error(&c, "expected a command: show, list, add, modify or delete");
    rc = 1;
  }
  px_cmd_fini(&c);
  return rc;
}
