/*
 * devconf.h - the configuration `phalanx dev` writes for its local cluster:
 * N nodes of G emulated GPUs, two partitions (batch: every node, the
 * default; urgent: the last half, higher priority tier), a small account
 * tree with fair-share weights and a GPU limit, QoS, and a two-level
 * topology. The same shape as examples/cluster/, sized by the options.
 */
#ifndef PX_AGENT_DEVCONF_H
#define PX_AGENT_DEVCONF_H

#include <stdint.h>

struct px_dev_shape {
  uint32_t nodes, gpus, cpus, groups;
  uint64_t mem_mib;
  char gpu_type[32];
  char gpu_layout[64];       /* MIG profiles side by side ("7:1g.10gb,1:3g.40gb,2:2g.20gb"), or "" */
  unsigned port;
  const char *dir;           /* state directory; the files go here */
  const char *users;         /* extra users of every account ("alice,bob"), or NULL */
  uint32_t heartbeat_s;      /* HeartbeatInterval (SlurmdTimeout is five of them) */
  const char *tls_dir;       /* ca.pem, server.pem, server.key (devcert.h); NULL: plain TCP */
  const char *image_dir;     /* ContainerImageDir=, or NULL */
};

/* "dev1".."dev4", zero-padded to the width of the node count. */
void px_dev_node_name(const struct px_dev_shape *s, uint32_t i, char *buf, unsigned size);
/* Writes slurm.conf, accounts.conf and topology.conf into s->dir. 0 or PX_EIO. */
int px_dev_write_config(const struct px_dev_shape *s);

#endif
