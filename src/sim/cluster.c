/*
 * cluster.c - builds the simulated cluster's struct px_conf (cluster.h).
 *
 * The shorthand is turned into configuration text (slurm.conf, topology.conf
 * and the accounts file, as an administrator would write them) and read by
 * the configuration parser, so the simulated cluster gets exactly the
 * server's defaults and checks, and no second builder of px_conf exists.
 * Queue names become account and user names, so they must be plain words.
 */
#include "sim/cluster.h"
#include "sim/sim.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int px_sim_cluster_parse(const char *spec, uint32_t *nnodes, uint32_t *ngpu, struct px_diag *d) {
  char *end;
  errno = 0;
  unsigned long n = strtoul(spec, &end, 10);
  if (end == spec || *end != 'x' || errno || spec[0] == '-')
    return px_diag_set(d, PX_EINVAL, 0, "--cluster %s: expected NODESxGPUS, e.g. 64x8", spec);
  const char *g0 = end + 1;
  unsigned long g = strtoul(g0, &end, 10);
  if (end == g0 || *end || errno || g0[0] == '-')
    return px_diag_set(d, PX_EINVAL, (int)(g0 - spec), "--cluster %s: expected NODESxGPUS, e.g. 64x8", spec);
  if (n < 1 || n > 99999)
    return px_diag_set(d, PX_EINVAL, 0, "--cluster %s: node count must be 1..99999", spec);
  if (g > 64) return px_diag_set(d, PX_EINVAL, (int)(g0 - spec), "--cluster %s: at most 64 GPUs per node", spec);
  *nnodes = (uint32_t)n;
  *ngpu = (uint32_t)g;
  return 0;
}

static bool plain_word(const char *s) {
  if (!*s || strlen(s) > 64) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
          *s == '-' || *s == '.'))
      return false;
  return true;
}

static void write_slurm(FILE *f, uint32_t nnodes, uint32_t ngpu) {
  fprintf(f, "ClusterName=sim\n");
  fprintf(f, "NodeName=sim[00001-%05" PRIu32 "] CPUs=%u RealMemory=%u%s", nnodes, PX_SIM_NODE_CPUS,
          PX_SIM_NODE_MEM_MIB, ngpu ? " Gres=gpu:" : "");
  if (ngpu) fprintf(f, "%" PRIu32, ngpu);
  fprintf(f, "\nPartitionName=sim Nodes=sim[00001-%05" PRIu32 "] Default=YES MaxTime=UNLIMITED State=UP\n", nnodes);
}

/* Leaf switches of PX_SIM_LEAF_NODES nodes, under one spine when there are several. */
static void write_topology(FILE *f, uint32_t nnodes) {
  uint32_t nleaf = (nnodes + PX_SIM_LEAF_NODES - 1) / PX_SIM_LEAF_NODES;
  for (uint32_t s = 0; s < nleaf; s++) {
    uint32_t first = s * PX_SIM_LEAF_NODES + 1, last = first + PX_SIM_LEAF_NODES - 1;
    if (last > nnodes) last = nnodes;
    fprintf(f, "SwitchName=leaf%04" PRIu32 " Nodes=sim[%05" PRIu32 "-%05" PRIu32 "]\n", s + 1, first, last);
  }
  if (nleaf > 1) fprintf(f, "SwitchName=spine Switches=leaf[0001-%04" PRIu32 "]\n", nleaf);
}

/* Every account runs under QoS normal; high exists for --qos-map, and with
 * PreemptType=preempt/qos its jobs may preempt normal ones. It has no
 * Priority of its own, so a map changes nothing for policies that do not
 * preempt by QoS (PriorityWeightQOS would otherwise favour its jobs). */
static void write_accounts(FILE *f, const char *const *accounts, uint32_t n) {
  fprintf(f, "QOS=normal\nQOS=%s Preempt=normal\n", PX_SIM_HIGH_QOS);
  fprintf(f, "Account=root\n");
  for (uint32_t i = 0; i < n; i++) fprintf(f, "Account=%s Fairshare=1 Users=%s\n", accounts[i], accounts[i]);
}

/* The first error of the parser, as "file:line: error: text". */
static int first_error(const struct px_conf_diags *dg, int rc, struct px_diag *d) {
  for (size_t i = 0; i < dg->len; i++) {
    if (!dg->v[i].is_error) continue;
    char line[sizeof d->msg];
    px_conf_msg_format(&dg->v[i], line, sizeof line);
    return px_diag_set(d, rc, -1, "%s", line);
  }
  return px_diag_set(d, rc, -1, "cluster configuration: %s", px_strerror(rc));
}

struct px_conf *px_sim_cluster_new(uint32_t nnodes, uint32_t ngpu, const char *const *accounts,
                                   uint32_t naccounts, struct px_diag *d) {
  for (uint32_t i = 0; i < naccounts; i++) {
    if (!plain_word(accounts[i])) {
      px_diag_set(d, PX_EINVAL, -1, "queue '%.64s' cannot be an account name (letters, digits, _ - . only)",
                  accounts[i]);
      return NULL;
    }
  }
  char *text[3] = {NULL, NULL, NULL};
  size_t len[3];
  FILE *f[3];
  for (int k = 0; k < 3; k++) f[k] = open_memstream(&text[k], &len[k]);
  struct px_conf *c = NULL;
  if (f[0] && f[1] && f[2]) {
    write_slurm(f[0], nnodes, ngpu);
    write_topology(f[1], nnodes);
    write_accounts(f[2], accounts, naccounts);
  }
  for (int k = 0; k < 3; k++)
    if (f[k]) fclose(f[k]);
  if (!text[0] || !text[1] || !text[2]) {
    px_diag_set(d, PX_ENOMEM, -1, "out of memory");
  } else {
    struct px_conf_text t = {.slurm = text[0], .topology = text[1], .accounts = text[2], .name = "--cluster"};
    struct px_conf_diags dg = {0};
    int rc = px_conf_parse_text(&t, &c, &dg);
    if (rc) first_error(&dg, rc, d);
    px_conf_diags_fini(&dg);
  }
  for (int k = 0; k < 3; k++) free(text[k]);
  return c;
}
