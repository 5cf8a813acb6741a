/*
 * cmd_sinfo.c - `sinfo`, `phalanx nodes` and `phalanx partitions`: fetch
 * partitions and nodes, filter (-p, -n hostlist, -t states), print with
 * fmt_sinfo.c or as JSON.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cmd_common.h"

/* Node state words sinfo -t accepts, to the view's upper-case names. */
static bool node_state_matches(const char *state, const char *list) {
  static const struct {
    const char *word, *state;
  } words[] = {{"idle", "IDLE"},        {"mix", "MIXED"},       {"mixed", "MIXED"},
               {"alloc", "ALLOCATED"},  {"allocated", "ALLOCATED"}, {"down", "DOWN"},
               {"drain", "DRAINED"},    {"drained", "DRAINED"}, {"drng", "DRAINING"},
               {"draining", "DRAINING"}, {"future", "FUTURE"},  {"comp", "COMPLETING"}};
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (!strcasecmp(t, "all") || !strcasecmp(t, state)) return true;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
      if (!strcasecmp(t, words[i].word) && !strcmp(state, words[i].state)) return true;
    if (!strcasecmp(t, "drain") && !strcmp(state, "DRAINING")) return true;
  }
  return false;
}

/* Slurm 22.05's -t words, as it lists them when it refuses one. */
#define SINFO_STATES                                                                           \
  "unknown,down,idle,allocated,?,mixed,future,drain,drained,draining,no_respond,reserved,"   \
  "perfctrs,cloud,completing,powering_down,powered_down,power_down,powering_up,fail,maint,"  \
  "reboot,reboot^,unknown"

/* A word -t knows: one of Slurm's, or the start of one (alloc, mix, drng). */
static bool state_word_known(const char *t) {
  size_t len = strlen(t);
  if (!strcasecmp(t, "all") || !strcasecmp(t, "drng") || !strcasecmp(t, "comp")) return true;
  for (const char *p = SINFO_STATES; *p;) {
    size_t l = strcspn(p, ",");
    if (len >= 2 && len <= l && !strncasecmp(p, t, len)) return true;
    p += l + (p[l] == ',');
  }
  return false;
}

static bool states_valid(const struct px_cmd *c, const char *list) {
  char buf[512], *save = NULL;
  snprintf(buf, sizeof buf, "%s", list ? list : "");
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (state_word_known(t)) continue;
    px_cmd_error(c, "Bad state string: \"%s\"", t);
    px_cmd_error(c, "valid states: " SINFO_STATES);
    return false;
  }
  return true;
}

static bool name_in(char **names, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(names[i], name)) return true;
  return false;
}

struct sinfo_args {
  struct px_sinfo_opts o;
  const char *parts, *nodes, *states;
};

static int sinfo_parse(int argc, char **argv, struct sinfo_args *a, struct px_cmd *c) {
  static const struct option longopts[] = {
      {"Node", no_argument, 0, 'N'},          {"long", no_argument, 0, 'l'},
      {"summarize", no_argument, 0, 's'},     {"list-reasons", no_argument, 0, 'R'},
      {"partition", required_argument, 0, 'p'}, {"nodes", required_argument, 0, 'n'},
      {"states", required_argument, 0, 't'},  {"noheader", no_argument, 0, 'h'},
      {"format", required_argument, 0, 'o'},  {"Format", required_argument, 0, 'O'},
      {"json", no_argument, 0, 'J'},          {"all", no_argument, 0, 'a'},
      {"exact", no_argument, 0, 'e'},         {"help", no_argument, 0, 'H'},
      {"version", no_argument, 0, 'V'},       {0, 0, 0, 0}};
  a->o.format = getenv("SINFO_FORMAT");
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "NlsRp:n:t:ho:O:aeV", longopts, NULL)) != -1) {
    switch (opt) {
    case 'N': a->o.node_list = true; break;
    case 'l': a->o.long_list = true; break;
    case 's': a->o.summarize = true; break;
    case 'R': a->o.reasons = true; break;
    case 'p': a->parts = optarg; break;
    case 'n': a->nodes = optarg; break;
    case 't': a->states = optarg; break;
    case 'h': a->o.noheader = true; break;
    case 'o': a->o.format = optarg; break;
    case 'O': a->o.long_format = optarg; break;
    case 'J': c->json = true; break;
    case 'a': case 'e': break;
    case 'V': printf("slurm 22.05.8 (phalanx)\n"); return -1;
    case 'H':
      printf("Usage: sinfo [-N] [-l] [-s] [-R] [-h] [-p PARTITIONS] [-n NODES] [-t STATES]\n"
             "             [-o FORMAT | -O FIELDS] [--json]\n");
      return -1;
    default: return 1;
    }
  }
  return states_valid(c, a->states) ? 0 : 1;
}

/* Drops nodes and partitions outside the filters (in place). */
static int sinfo_filter(struct sinfo_args *a, struct px_cmd *c, struct px_partition_info *p,
                        size_t *np, struct px_node_info *nd, size_t *nn) {
  char **names = NULL;
  size_t cnt = 0;
  if (a->nodes && px_cli_hostlist_expand(a->nodes, &names, &cnt)) {
    px_cmd_error(c, "Invalid node name specified: %s", a->nodes);
    return 1;
  }
  size_t k = 0;
  for (size_t i = 0; i < *nn; i++) {
    bool keep = (!a->nodes || name_in(names, cnt, nd[i].name)) &&
                (!a->states || node_state_matches(nd[i].state, a->states));
    if (keep) nd[k++] = nd[i];
    else px_cli_node_fini(&nd[i]);
  }
  *nn = k;
  k = 0;
  for (size_t i = 0; i < *np; i++) {
    if (!a->parts || px_cmd_list_has(a->parts, p[i].name)) p[k++] = p[i];
    else px_cli_partition_fini(&p[i]);
  }
  *np = k;
  px_cli_strv_free(names, cnt);
  return 0;
}

static void print_json(const struct px_partition_info *p, size_t np, const struct px_node_info *nd,
                       size_t nn) {
  json_t *parts = json_array(), *nodes = json_array();
  for (size_t i = 0; i < np; i++)
    json_array_append_new(parts, json_pack("{s:s,s:s?,s:b,s:b,s:I,s:I,s:i}", "name", p[i].name,
                                           "nodelist", p[i].nodelist, "is_default", p[i].is_default,
                                           "up", p[i].up, "max_time_s", (json_int_t)p[i].max_time_s,
                                           "default_time_s", (json_int_t)p[i].default_time_s,
                                           "nnodes", (int)p[i].nnodes));
  for (size_t i = 0; i < nn; i++) json_array_append_new(nodes, px_cli_node_to_json(&nd[i]));
  json_t *top = json_pack("{s:o,s:o}", "partitions", parts, "nodes", nodes);
  px_cmd_print_json(top);
  json_decref(top);
}

static int sinfo_run(struct px_cmd *c, struct sinfo_args *a) {
  struct px_partition_info *p = NULL;
  struct px_node_info *nd = NULL;
  size_t np = 0, nn = 0;
  int rc = 1;
  if (px_cmd_get_partitions(c, &p, &np) || px_cmd_get_nodes(c, &nd, &nn)) goto done;
  if (sinfo_filter(a, c, p, &np, nd, &nn)) goto done;
  a->o.now = c->now;
  if (c->json) {
    print_json(p, np, nd, nn);
    rc = 0;
    goto done;
  }
  struct px_diag d;
  rc = px_fmt_sinfo(stdout, p, np, nd, nn, &a->o, &d) ? 1 : 0;
  if (rc) px_cmd_error(c, "%s", d.msg);
done:
  px_cli_partitions_free(p, np);
  px_cli_nodes_free(nd, nn);
  return rc;
}

int px_cmd_sinfo(int argc, char **argv, bool native) {
  struct px_cmd c;
  px_cmd_init(&c, native ? "phalanx nodes" : "sinfo", !native);
  struct sinfo_args a = {0};
  /* `phalanx nodes` lists nodes one per line by default. */
  if (native && !strcmp(argv[0], "nodes")) a.o.node_list = true;
  int rc = sinfo_parse(argc, argv, &a, &c);
  if (!rc) rc = sinfo_run(&c, &a);
  px_cmd_fini(&c);
  return rc < 0 ? 0 : rc;
}

int px_verb_partitions(int argc, char **argv) { return px_cmd_sinfo(argc, argv, true); }
