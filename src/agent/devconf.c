/* devconf.c - the local cluster's configuration files (devconf.h). */
#include "agent/devconf.h"

#include <stdio.h>
#include <string.h>

#include "util/error.h"

static int width(uint32_t n) {
  int w = 1;
  while (n >= 10) n /= 10, w++;
  return w;
}

void px_dev_node_name(const struct px_dev_shape *s, uint32_t i, char *buf, unsigned size) {
  if (snprintf(buf, size, "dev%0*u", width(s->nodes), i + 1) >= (int)size) buf[0] = '\0';
}

static void range(const struct px_dev_shape *s, uint32_t lo, uint32_t hi, char *buf, unsigned size) {
  int w = width(s->nodes), n;
  if (lo == hi) n = snprintf(buf, size, "dev%0*u", w, lo);
  else n = snprintf(buf, size, "dev[%0*u-%0*u]", w, lo, w, hi);
  if (n < 0 || (unsigned)n >= size) buf[0] = '\0'; /* cannot happen: node counts are small */
}

/* Gres= of every node: gpu:TYPE:N, or a MIG layout's profiles
 * ("7:1g.10gb,1:3g.40gb" -> "gpu:1g.10gb:7,gpu:3g.40gb:1"). */
static void dev_gres(const struct px_dev_shape *s, char *buf, size_t size) {
  if (!s->gpu_layout[0]) {
    snprintf(buf, size, "gpu:%s:%u", s->gpu_type, s->gpus);
    return;
  }
  size_t len = 0;
  buf[0] = '\0';
  for (const char *p = s->gpu_layout; *p && len < size;) {
    size_t n = strcspn(p, ":"), t = strcspn(p + n, ",");
    int w = snprintf(buf + len, size - len, "%sgpu%.*s:%.*s", len ? "," : "", (int)t, p + n, (int)n, p);
    if (w < 0) break;
    len += (size_t)w;
    p += n + t + (p[n + t] == ',');
  }
}

static int write_slurm_conf(const struct px_dev_shape *s) {
  char path[4200], all[64], urgent[64];
  snprintf(path, sizeof path, "%s/slurm.conf", s->dir);
  FILE *f = fopen(path, "we");
  if (!f) return PX_EIO;
  range(s, 1, s->nodes, all, sizeof all);
  char gres[160];
  dev_gres(s, gres, sizeof gres);
  uint32_t half = s->nodes > 1 ? s->nodes / 2 + 1 : 1;
  range(s, half, s->nodes, urgent, sizeof urgent);
  fprintf(f,
          "# Written by `phalanx dev`: %u nodes x %u emulated %s GPUs on this machine.\n"
          "ClusterName=dev\nStateDir=%s/server\nListen=127.0.0.1:%u\nSocketPath=%s/server.sock\n"
          "HeartbeatInterval=%u\nSlurmdTimeout=%u\nKillWait=5\nAllowRootJobs=YES\n"
          "SchedulerType=sched/backfill\nBackfillMode=conservative\nSelectType=select/cons_tres\n"
          "PriorityType=priority/multifactor\nPriorityDecayHalfLife=1-0\nPriorityMaxAge=1-0\n"
          "PriorityWeightFairshare=10000\nPriorityWeightAge=1000\nPriorityWeightPartition=1000\n"
          "PriorityWeightQOS=2000\nPreemptType=preempt/qos\nPreemptMode=REQUEUE\n"
          "TRESBillingWeights=CPU=0.0,Mem=0G,GRES/gpu=1.0\nPlacement=pack\nGresTypes=gpu\n\n"
          "NodeName=DEFAULT CPUs=%u RealMemory=%llu Gres=%s GpuGroups=%u State=UNKNOWN\n"
          "NodeName=%s NodeAddr=127.0.0.1 Features=%s\n\n"
          "PartitionName=batch Nodes=ALL Default=YES MaxTime=1-0 DefaultTime=1:00:00 PriorityTier=1 GpuShares=YES State=UP\n"
          "PartitionName=urgent Nodes=%s MaxTime=2:00:00 DefaultTime=30 PriorityTier=2 State=UP\n",
          s->nodes, s->gpus, s->gpu_type, s->dir, s->port, s->dir, s->heartbeat_s, s->heartbeat_s * 5, s->cpus,
          (unsigned long long)s->mem_mib, gres, s->groups, all, s->gpu_type, urgent);
  if (s->image_dir) fprintf(f, "ContainerImageDir=%s\n", s->image_dir);
  if (s->tls_dir)
    fprintf(f, "\n# Listen= is TLS, with the throwaway CA of this cluster (agents: --ca-file)\n"
               "TLSCertFile=%s/server.pem\nTLSKeyFile=%s/server.key\nTLSCAFile=%s/ca.pem\n",
            s->tls_dir, s->tls_dir, s->tls_dir);
  return fclose(f) == 0 ? 0 : PX_EIO;
}

static int write_accounts(const struct px_dev_shape *s) {
  char path[4200];
  snprintf(path, sizeof path, "%s/accounts.conf", s->dir);
  FILE *f = fopen(path, "we");
  if (!f) return PX_EIO;
  /* vision may hold at most 2 nodes' worth of GPUs at once (its GrpTRES);
   * root (and --users) belong to every account so one local user can play
   * every team. */
  char users[512];
  snprintf(users, sizeof users, "root%s%.400s", s->users && *s->users ? "," : "", s->users ? s->users : "");
  fprintf(f,
          "# Written by `phalanx dev`: two teams under research, and ops.\n"
          "Account=research Fairshare=60\n"
          "Account=vision Parent=research Fairshare=40 GrpTRES=gres/gpu=%u Users=%s\n"
          "Account=speech Parent=research Fairshare=20 Users=%s\n"
          "Account=ops Fairshare=40 Users=%s DefaultQOS=normal\n"
          "User=root Account=ops DefaultAccount=ops\n\n"
          "QOS=normal Priority=100\nQOS=low Priority=0 UsageFactor=0.5\n"
          "QOS=high Priority=1000 Preempt=low PreemptMode=requeue GraceTime=10\n",
          s->gpus * (s->nodes > 1 ? 2 : 1), users, users, users);
  return fclose(f) == 0 ? 0 : PX_EIO;
}

static int write_topology(const struct px_dev_shape *s) {
  char path[4200], r[64];
  snprintf(path, sizeof path, "%s/topology.conf", s->dir);
  FILE *f = fopen(path, "we");
  if (!f) return PX_EIO;
  /* leaf switches of (up to) 8 nodes under one spine */
  uint32_t nleaf = (s->nodes + 7) / 8;
  for (uint32_t i = 0; i < nleaf; i++) {
    uint32_t lo = i * 8 + 1, hi = lo + 7 > s->nodes ? s->nodes : lo + 7;
    range(s, lo, hi, r, sizeof r);
    fprintf(f, "SwitchName=leaf%u Nodes=%s\n", i + 1, r);
  }
  fprintf(f, nleaf > 1 ? "SwitchName=spine Switches=leaf[1-%u]\n" : "SwitchName=spine Switches=leaf%u\n", nleaf);
  return fclose(f) == 0 ? 0 : PX_EIO;
}

int px_dev_write_config(const struct px_dev_shape *s) {
  int rc = write_slurm_conf(s);
  if (!rc) rc = write_accounts(s);
  if (!rc) rc = write_topology(s);
  return rc;
}
