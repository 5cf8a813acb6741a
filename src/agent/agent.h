/*
 * agent.h - the node agent's daemon: register with the server, long-poll
 * for orders, start and stop jobs through their supervisors, report every
 * job's RUNNING and end (retrying until the server answers 2xx, so an end
 * that happened while the server was down is reported when it returns),
 * heartbeat, and on restart find the jobs it was running in its state
 * directory (reattach, or report the end they reached meanwhile).
 */
#ifndef PX_AGENT_AGENT_H
#define PX_AGENT_AGENT_H

#include <limits.h>
#include <stdbool.h>

#include "agent/discover.h"
#include "agent/jobdir.h"
#include "agent/svc_port.h"

struct px_agent_opts {
  char server[256];          /* "http://10.77.0.1:43100" or "https://..." */
  char ca_file[PATH_MAX];    /* --ca-file: the CA of an https server's certificate ("" = system's) */
  char addr[64];             /* address peers use (MASTER_ADDR); default the node name */
  char state_dir[PATH_MAX];
  char token_file[PATH_MAX]; /* bearer token; "" with munge for MUNGE, or none */
  bool munge;
  char emulate[64];          /* --emulate-gpus spec, "" for NVML */
  uint32_t emulate_cpus;     /* report this many CPUs instead of the real ones (0: real) */
  uint64_t emulate_mem_mib;  /* likewise memory */
  int heartbeat_s;
  bool kill_jobs_on_exit;    /* `phalanx dev`: stopping the agent stops its jobs */
  struct px_port_range service_ports; /* ports for service replicas (--service-ports) */
  struct px_site site;       /* node name, cluster, cgroup root, kill wait, ... */
};

/* Fills r from discovery (emulated GPUs when opts->emulate is set). */
int px_agent_discover(const struct px_agent_opts *o, struct px_node_res *r, char *why, size_t whylen);

/* Runs until SIGTERM/SIGINT; returns the process exit status. */
int px_agent_run(const struct px_agent_opts *o);

#endif
