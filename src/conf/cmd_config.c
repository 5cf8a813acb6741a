/*
 * cmd_config.c - `phalanx config check FILE...`: loads each slurm.conf (with
 * the topology and accounts files it names or that sit beside it), prints
 * every error and warning, then a summary of what was understood: nodes,
 * CPUs, GPUs by type, partitions, switches, blocks, accounts and QoS. Exit 1
 * on any error, 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "conf/conf.h"
#include "util/hostlist.h"
#include "util/units.h"

static void usage(FILE *f) {
  fprintf(f, "usage: phalanx config check FILE...\n"
             "  Validates each slurm.conf (with its Include files, topology.conf and\n"
             "  accounts.conf) and prints a summary, or the errors with file:line.\n");
}

/* A compressed hostlist of the given node indexes, shortened to `max` characters. */
static void nodelist(const struct px_conf *c, const uint32_t *idx, uint32_t n, char *buf, size_t max) {
  const char **names = malloc((n ? n : 1) * sizeof *names);
  char *s = NULL;
  buf[0] = '\0';
  if (!names) return;
  for (uint32_t i = 0; i < n; i++) names[i] = c->nodes[idx ? idx[i] : i].name;
  if (px_hostlist_compress(names, n, &s) == 0) {
    if (strlen(s) < max) snprintf(buf, max, "%s", s);
    else snprintf(buf, max, "%.*s...", (int)(max > 4 ? max - 4 : 0), s);
  }
  free(s);
  free(names);
}

static void summary_gpus(const struct px_conf *c) {
  uint64_t total = 0;
  printf("GPUs:       ");
  for (uint32_t i = 0; i < c->nnodes; i++) total += c->nodes[i].ngpu;
  printf("%llu", (unsigned long long)total);
  const char *sep = " (";
  for (uint32_t i = 0; i < c->nnodes; i++) { /* each type once, in order of first appearance */
    const char *t = c->nodes[i].gpu_type ? c->nodes[i].gpu_type : "untyped";
    bool seen = false;
    for (uint32_t j = 0; j < i && !seen; j++)
      seen = c->nodes[j].ngpu && !strcmp(c->nodes[j].gpu_type ? c->nodes[j].gpu_type : "untyped", t);
    if (seen || !c->nodes[i].ngpu) continue;
    uint64_t n = 0;
    for (uint32_t j = i; j < c->nnodes; j++)
      if (!strcmp(c->nodes[j].gpu_type ? c->nodes[j].gpu_type : "untyped", t)) n += c->nodes[j].ngpu;
    printf("%s%s: %llu", sep, t, (unsigned long long)n);
    sep = ", ";
  }
  printf("%s\n", strcmp(sep, ", ") == 0 ? ")" : "");
}

static void summary_partitions(const struct px_conf *c) {
  printf("partitions: %u\n", c->npartitions);
  for (uint32_t i = 0; i < c->npartitions; i++) {
    const struct px_conf_partition *p = &c->partitions[i];
    uint64_t ngpu = 0;
    for (uint32_t k = 0; k < p->nnodes; k++) ngpu += c->nodes[p->nodes[k]].ngpu;
    char maxt[PX_UNITS_BUF], list[64];
    px_duration_format_hms(p->max_time_s, maxt, sizeof maxt);
    nodelist(c, p->nodes, p->nnodes, list, sizeof list);
    printf("  %s%s: %u nodes, %llu GPUs, MaxTime=%s, PriorityTier=%u%s, %s  %s\n", p->name,
           p->is_default ? "*" : "", p->nnodes, (unsigned long long)ngpu, maxt, p->priority_tier,
           p->exclusive_account ? ", ExclusiveAccount" : "", p->up ? "up" : "down", list);
  }
}

static void summary_tree(const struct px_conf *c) {
  uint32_t levels = 0, leaves = 0, accounts = 0, users = 0;
  for (uint32_t i = 0; i < c->nswitches; i++) {
    if (c->switches[i].level + 1 > levels) levels = c->switches[i].level + 1;
    leaves += c->switches[i].level == 0;
  }
  printf("switches:   %u in %u level%s (%u leaf)\n", c->nswitches, levels, levels == 1 ? "" : "s", leaves);
  printf("blocks:     %u\n", c->nblocks);
  for (uint32_t i = 0; i < c->naccounts; i++) {
    users += c->accounts[i].is_user;
    accounts += !c->accounts[i].is_user;
  }
  printf("accounts:   %u (with root), %u user associations\n", accounts, users);
  printf("QoS:        ");
  for (uint32_t i = 0; i < c->nqos; i++) printf("%s%s", i ? ", " : "", c->qos[i].name);
  printf("\n");
}

static void summary(const struct px_conf *c) {
  uint64_t cpus = 0, mem = 0;
  for (uint32_t i = 0; i < c->nnodes; i++) {
    cpus += c->nodes[i].cpus;
    mem += c->nodes[i].mem_mib;
  }
  char list[64], memtxt[PX_UNITS_BUF];
  nodelist(c, NULL, c->nnodes, list, sizeof list);
  px_size_format_mib(mem, memtxt, sizeof memtxt);
  printf("cluster:    %s\n", c->cluster_name);
  printf("nodes:      %u  %s\n", c->nnodes, list);
  printf("CPUs:       %llu\n", (unsigned long long)cpus);
  printf("memory:     %s\n", memtxt);
  summary_gpus(c);
  summary_partitions(c);
  summary_tree(c);
}

static int check_one(const char *path) {
  struct px_conf *c = NULL;
  struct px_conf_diags d = {0};
  int rc = px_conf_load(path, &c, &d);
  char line[1400];
  for (size_t i = 0; i < d.len; i++) {
    px_conf_msg_format(&d.v[i], line, sizeof line);
    fprintf(stderr, "%s\n", line);
  }
  if (d.nerrors + d.nwarnings > d.len)
    fprintf(stderr, "(%u more messages not shown)\n", d.nerrors + d.nwarnings - (uint32_t)d.len);
  if (rc == 0) {
    printf("%s: OK (%u file%s read, %u warning%s)\n", path, c->nfiles, c->nfiles == 1 ? "" : "s", d.nwarnings,
           d.nwarnings == 1 ? "" : "s");
    summary(c);
  } else {
    printf("%s: %u error%s\n", path, d.nerrors ? d.nerrors : 1, d.nerrors == 1 ? "" : "s");
  }
  px_conf_free(c);
  px_conf_diags_fini(&d);
  return rc == 0 ? 0 : 1;
}

int px_cmd_config(int argc, char **argv) {
  if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))) {
    usage(stdout);
    return 0;
  }
  if (argc < 3 || strcmp(argv[1], "check") != 0) {
    usage(stderr);
    return 2;
  }
  int rc = 0;
  for (int i = 2; i < argc; i++) {
    if (i > 2) printf("\n");
    if (check_one(argv[i])) rc = 1;
  }
  return rc;
}
