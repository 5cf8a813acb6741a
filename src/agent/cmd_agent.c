/*
 * cmd_agent.c - `phalanx agent`: the node agent and its helper modes.
 *
 *   phalanx agent --server URL --node NAME [options]   the daemon
 *   phalanx agent --emulate-nodes HOSTLIST [options]   many emulated nodes (emulate.h)
 *   phalanx agent --discover [--emulate-gpus SPEC]     print this node's report
 *   phalanx agent --run-local LAUNCH.json [options]    run one order here, print its end
 *   phalanx agent --supervise JOBDIR                   (internal) a job's supervisor
 *   phalanx agent --zygote FD:PID [CGNAME [CGROOT]]    (internal) supervisor factory (zygote.h)
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/cgroup.h"
#include "agent/emulate.h"
#include "agent/gpu_watch.h"
#include "agent/launch.h"
#include "agent/supervise.h"
#include "agent/svc_port.h"
#include "agent/zygote.h"
#include "commands.h"
#include "util/log.h"
#include "util/map.h"

static void usage(void) {
  fprintf(stderr,
          "usage: phalanx agent --server URL[,URL...] --node NAME [options]   (every controller)\n"
          "       phalanx agent --server URL --emulate-nodes HOSTLIST [--emulate-jobs sim|real]\n"
          "                     [--token-dir DIR] [--emulate-gpus SPEC] [--emulate-cpus N] [--emulate-mem MIB]\n"
          "       phalanx agent --discover [--emulate-gpus N[:TYPE[:GROUPS]]]\n"
          "       phalanx agent --run-local LAUNCH.json [options]\n"
          "       phalanx agent --state-dir DIR --inject-gpu-fault 'GPU FAULT [CODE [DETAIL]]'\n"
          "                     tell the running agent of DIR (emulated GPUs) that GPU failed: FAULT is\n"
          "                     xid (CODE the XID), ecc (CODE new errors), remap, lost, throttle, nvlink\n"
          "options:\n"
          "  --addr ADDR          address other nodes reach this one at (MASTER_ADDR)\n"
          "  --state-dir DIR      job state (default /var/lib/phalanx/agent)\n"
          "  --token-file FILE    bearer token for the server;  --munge  use MUNGE instead\n"
          "  --ca-file FILE       the CA that signed an https:// server's certificate (PEM)\n"
          "  --emulate-gpus SPEC  emulated GPUs instead of NVML, e.g. 8:h100 or 8:h100:2 (2 NVLink groups)\n"
          "  --emulate-cpus N     report N CPUs (and pin nothing); --emulate-mem MIB likewise memory\n"
          "  --cluster NAME       SLURM_CLUSTER_NAME\n"
          "  --kill-wait S        seconds from SIGTERM to SIGKILL at the time limit (30)\n"
          "  --pids-max N         processes per job (default 16384; 0 = no limit)\n"
          "  --cgroup-root PATH   put job cgroups under PATH instead of the agent's own cgroup\n"
          "  --allow-root         allow jobs of root\n"
          "  --heartbeat S        heartbeat interval (10)\n"
          "  --kill-jobs-on-exit  stop this agent's jobs when it stops (phalanx dev)\n"
          "  --no-cgroup          no cgroups (testing only: no isolation)\n"
          "  --service-ports LO-HI  TCP ports handed to service replicas (" PX_SVC_PORTS_DEFAULT ")\n"
          "  --container-image-dir DIR  --container-image NAME is looked up here (NAME, NAME.tar, NAME:TAG)\n"
          "  --container-cache DIR      unpacked images, one directory per user (STATE/images)\n"
          "  --container-runtime PATH   the OCI runtime (crun)\n"
          "  --log-level L        debug, info, warn, error\n"
          "  --emulate-nodes HL   serve every node of the hostlist HL from this process (no isolation)\n"
          "  --emulate-jobs MODE  with --emulate-nodes: sim (no process; ends after its `sleep N`) or real\n"
          "  --token-dir DIR      with --emulate-nodes: DIR/<node>.token is each node's credential\n");
}

enum { O_SERVER = 256, O_NODE, O_ADDR, O_STATE, O_TOKEN, O_MUNGE, O_EMU, O_CLUSTER, O_KILLWAIT,
       O_PIDS, O_CGROOT, O_ROOT, O_HB, O_KILLEXIT, O_NOCG, O_LOG, O_SUPERVISE, O_ZYGOTE, O_RUNLOCAL, O_DISCOVER,
       O_ECPUS, O_EMEM, O_ENODES, O_EJOBS, O_TOKDIR, O_CAFILE, O_SVCPORTS, O_INJECT,
       O_CTRDIR, O_CTRCACHE, O_CTRRT };

static const struct option longopts[] = {
    {"server", 1, 0, O_SERVER},   {"node", 1, 0, O_NODE},          {"addr", 1, 0, O_ADDR},
    {"state-dir", 1, 0, O_STATE}, {"token-file", 1, 0, O_TOKEN},   {"munge", 0, 0, O_MUNGE},
    {"emulate-gpus", 1, 0, O_EMU}, {"cluster", 1, 0, O_CLUSTER},   {"kill-wait", 1, 0, O_KILLWAIT},
    {"pids-max", 1, 0, O_PIDS},   {"cgroup-root", 1, 0, O_CGROOT}, {"allow-root", 0, 0, O_ROOT},
    {"heartbeat", 1, 0, O_HB},    {"kill-jobs-on-exit", 0, 0, O_KILLEXIT},
    {"no-cgroup", 0, 0, O_NOCG},  {"log-level", 1, 0, O_LOG},      {"supervise", 1, 0, O_SUPERVISE}, {"zygote", 1, 0, O_ZYGOTE},
    {"run-local", 1, 0, O_RUNLOCAL}, {"discover", 0, 0, O_DISCOVER}, {"help", 0, 0, 'h'},
    {"emulate-cpus", 1, 0, O_ECPUS}, {"emulate-mem", 1, 0, O_EMEM}, {"emulate-nodes", 1, 0, O_ENODES},
    {"emulate-jobs", 1, 0, O_EJOBS}, {"token-dir", 1, 0, O_TOKDIR}, {"ca-file", 1, 0, O_CAFILE},
    {"service-ports", 1, 0, O_SVCPORTS}, {"inject-gpu-fault", 1, 0, O_INJECT},
    {"container-image-dir", 1, 0, O_CTRDIR}, {"container-cache", 1, 0, O_CTRCACHE},
    {"container-runtime", 1, 0, O_CTRRT},
    {0, 0, 0, 0}};

/* Creates dir and its parents, then makes the path absolute: job
 * directories are handed to other processes and must not depend on a cwd. */
static int state_dir_ready(char *dir, size_t size) {
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s", dir);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(tmp, 0755);
      *p = '/';
    }
  mkdir(tmp, 0755);
  char abs[PATH_MAX];
  if (!realpath(tmp, abs)) return -1;
  snprintf(dir, size, "%s", abs);
  return 0;
}

static void set_cgroup_name(struct px_agent_opts *o, const char *node) {
  snprintf(o->site.cgroup_name, sizeof o->site.cgroup_name, "phalanx_%.64s.%08x", node,
           (unsigned)(px_hash_str(o->state_dir) & 0xffffffffu));
}

static const char *opt_name(int val) {
  for (const struct option *o = longopts; o->name; o++)
    if (o->val == val) return o->name;
  return "?";
}

static bool parse_num(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

/* Runs one order on this node, in the foreground, and prints status.json. */
static int run_local(struct px_agent_opts *o, const char *file) {
  char *text = px_file_get(file[0] == '/' ? "" : ".", file);
  if (!text) {
    fprintf(stderr, "agent: cannot read %s\n", file);
    return 2;
  }
  struct px_launch l;
  struct px_diag d;
  int rc = px_launch_decode(text, &l, &d);
  free(text);
  if (rc) {
    fprintf(stderr, "agent: %s: %s\n", file, d.msg);
    return 2;
  }
  if (!o->site.node[0]) snprintf(o->site.node, sizeof o->site.node, "%s", l.nodes[l.node_rank]);
  set_cgroup_name(o, o->site.node);
  struct px_node_res res;
  char why[256];
  if (px_agent_discover(o, &res, why, sizeof why) == 0) {
    o->site.node_ngpus = res.ngpus;
    o->site.emulated_gpus = res.emulated;
  }
  o->site.emulated_cpus = o->emulate_cpus != 0;
  char jobdir[4096];
  pid_t pid;
  rc = px_job_start(o->state_dir, &l, &o->site, NULL, NULL, NULL, jobdir, sizeof jobdir, &pid);
  px_launch_fini(&l);
  if (rc) {
    fprintf(stderr, "agent: cannot start: %s\n", px_strerror(rc));
    return 2;
  }
  int ws;
  while (waitpid(pid, &ws, 0) < 0) {}
  struct px_cg_layout lay;
  if (!o->site.no_cgroup &&
      px_cg_probe(&lay, o->site.cgroup_root[0] ? o->site.cgroup_root : NULL, o->site.cgroup_name) == 0)
    px_cg_remove_base(&lay);
  char *st = px_file_get(jobdir, "status.json");
  if (!st) return 2;
  printf("%s\n", st);
  free(st);
  return 0;
}

static int discover_only(struct px_agent_opts *o) {
  struct px_node_res r;
  char why[256] = "";
  int rc = px_agent_discover(o, &r, why, sizeof why);
  if (why[0]) fprintf(stderr, "agent: %s\n", why);
  if (rc) return 1;
  struct px_node_report rep = {.cpus = r.cpus, .mem_mib = r.mem_mib, .gpus = r.gpus, .ngpus = r.ngpus};
  snprintf(rep.node, sizeof rep.node, "%s", o->site.node);
  snprintf(rep.addr, sizeof rep.addr, "%s", o->addr[0] ? o->addr : o->site.node);
  snprintf(rep.version, sizeof rep.version, "%s", PX_AGENT_VERSION);
  char *s = px_node_report_encode(&rep);
  if (!s) return 1;
  printf("%s\n", s);
  free(s);
  return 0;
}

/* --inject-gpu-fault 'GPU FAULT [CODE [DETAIL]]' to the agent of dir (gpu_watch.h). */
static int inject(const char *dir, const char *spec) {
  unsigned gpu;
  char fault[16], why[256];
  long long code = 0;
  int used = 0;
  int n = sscanf(spec, "%u %15s %n%lld %n", &gpu, fault, &used, &code, &used);
  if (n < 2) {
    fprintf(stderr, "agent: --inject-gpu-fault: want 'GPU FAULT [CODE [DETAIL]]', got '%s'\n", spec);
    return 2;
  }
  if (px_gpu_inject(dir, NULL, gpu, fault, code, spec + used, why, sizeof why)) {
    fprintf(stderr, "agent: --inject-gpu-fault: %s\n", why);
    return 1;
  }
  return 0;
}

static struct px_emu_opts emu;

static int set_emu_opt(int c, const char *arg) {
  switch (c) {
    case O_ENODES:
      if (strlen(arg) >= sizeof emu.nodes) return -1;
      snprintf(emu.nodes, sizeof emu.nodes, "%s", arg);
      return 0;
    case O_EJOBS:
      if (strcmp(arg, "sim") && strcmp(arg, "real")) return -1;
      emu.real_jobs = !strcmp(arg, "real");
      return 0;
    case O_TOKDIR: snprintf(emu.token_dir, sizeof emu.token_dir, "%s", arg); return 0;
    default: return -1;
  }
}

/* --emulate-nodes: the shared options carry over to every emulated node. */
static int run_emulated(const struct px_agent_opts *o) {
  snprintf(emu.server, sizeof emu.server, "%s", o->server);
  snprintf(emu.ca_file, sizeof emu.ca_file, "%s", o->ca_file);
  snprintf(emu.state_dir, sizeof emu.state_dir, "%s", o->state_dir);
  snprintf(emu.gpus, sizeof emu.gpus, "%s", o->emulate);
  emu.cpus = o->emulate_cpus ? o->emulate_cpus : 32;
  emu.mem_mib = o->emulate_mem_mib ? o->emulate_mem_mib : 131072;
  emu.heartbeat_s = o->heartbeat_s;
  emu.kill_jobs_on_exit = o->kill_jobs_on_exit;
  return px_emu_run(&emu);
}

static int set_opt(struct px_agent_opts *o, int c, const char *arg) {
  long long v;
  switch (c) {
    case O_ENODES:
    case O_EJOBS:
    case O_TOKDIR: return set_emu_opt(c, arg);
    case O_SERVER: snprintf(o->server, sizeof o->server, "%s", arg); break;
    case O_NODE: snprintf(o->site.node, sizeof o->site.node, "%s", arg); break;
    case O_ADDR: snprintf(o->addr, sizeof o->addr, "%s", arg); break;
    case O_STATE: snprintf(o->state_dir, sizeof o->state_dir, "%s", arg); break;
    case O_TOKEN: snprintf(o->token_file, sizeof o->token_file, "%s", arg); break;
    case O_CAFILE: snprintf(o->ca_file, sizeof o->ca_file, "%s", arg); break;
    case O_MUNGE: o->munge = true; break;
    case O_EMU: snprintf(o->emulate, sizeof o->emulate, "%s", arg); break;
    case O_CLUSTER: snprintf(o->site.cluster, sizeof o->site.cluster, "%s", arg); break;
    case O_CGROOT: snprintf(o->site.cgroup_root, sizeof o->site.cgroup_root, "%s", arg); break;
    case O_ROOT: o->site.allow_root = true; break;
    case O_KILLEXIT: o->kill_jobs_on_exit = true; break;
    case O_NOCG: o->site.no_cgroup = true; break;
    case O_SVCPORTS: return px_port_range_parse(arg, &o->service_ports) ? -1 : 0;
    case O_CTRDIR: snprintf(o->site.ctr_image_dir, sizeof o->site.ctr_image_dir, "%s", arg); break;
    case O_CTRCACHE: snprintf(o->site.ctr_cache_dir, sizeof o->site.ctr_cache_dir, "%s", arg); break;
    case O_CTRRT: snprintf(o->site.ctr_runtime, sizeof o->site.ctr_runtime, "%s", arg); break;
    case O_KILLWAIT:
      if (!parse_num(arg, 0, 86400, &v)) return -1;
      o->site.kill_wait_s = v;
      break;
    case O_PIDS:
      if (!parse_num(arg, 0, 1 << 30, &v)) return -1;
      o->site.pids_max = (uint64_t)v;
      break;
    case O_ECPUS:
      if (!parse_num(arg, 1, 1 << 20, &v)) return -1;
      o->emulate_cpus = (uint32_t)v;
      break;
    case O_EMEM:
      if (!parse_num(arg, 1, 1LL << 40, &v)) return -1;
      o->emulate_mem_mib = (uint64_t)v;
      break;
    case O_HB:
      if (!parse_num(arg, 1, 3600, &v)) return -1;
      o->heartbeat_s = (int)v;
      break;
    case O_LOG: {
      enum px_log_level lv;
      if (px_log_parse_level(arg, &lv)) return -1;
      px_log_set_level(lv);
      break;
    }
    default: return -1;
  }
  return 0;
}

int px_cmd_agent(int argc, char **argv) {
  static struct px_agent_opts o;
  memset(&o, 0, sizeof o);
  memset(&emu, 0, sizeof emu);
  snprintf(o.state_dir, sizeof o.state_dir, "/var/lib/phalanx/agent");
  o.site.kill_wait_s = 30;
  o.site.pids_max = 16384;
  o.heartbeat_s = 10;
  px_port_range_parse(PX_SVC_PORTS_DEFAULT, &o.service_ports);
  const char *supervise = NULL, *run = NULL, *zygote = NULL, *fault = NULL;
  bool discover = false;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    if (c == 'h') return usage(), 0;
    if (c == O_SUPERVISE) supervise = optarg;
    else if (c == O_ZYGOTE) zygote = optarg;
    else if (c == O_RUNLOCAL) run = optarg;
    else if (c == O_DISCOVER) discover = true;
    else if (c == O_INJECT) fault = optarg;
    else if (c == '?' || set_opt(&o, c, optarg)) {
      if (c != '?') fprintf(stderr, "agent: bad value for --%s: %s\n", opt_name(c), optarg);
      usage();
      return 2;
    }
  }
  if (fault) return inject(o.state_dir, fault);
  if (zygote) {
    px_log_set_tag("zygote");
    return px_zygote_main(zygote, optind < argc ? argv[optind] : NULL, optind + 1 < argc ? argv[optind + 1] : NULL);
  }
  if (supervise) {
    px_log_set_tag("supervisor");
    return px_supervise_main(supervise);
  }
  if (emu.nodes[0]) {
    if (!o.server[0] || run || discover) {
      fprintf(stderr, "agent: --emulate-nodes needs --server and excludes --run-local and --discover\n");
      return 2;
    }
    if (state_dir_ready(o.state_dir, sizeof o.state_dir)) {
      fprintf(stderr, "agent: cannot create the state directory %s\n", o.state_dir);
      return 2;
    }
    return run_emulated(&o);
  }
  if (!o.site.node[0] && !run) {
    char host[64];
    if (gethostname(host, sizeof host) == 0) snprintf(o.site.node, sizeof o.site.node, "%.*s", (int)strcspn(host, "."), host);
  }
  if (discover) return discover_only(&o);
  if (state_dir_ready(o.state_dir, sizeof o.state_dir)) {
    fprintf(stderr, "agent: cannot create the state directory %s\n", o.state_dir);
    return 2;
  }
  if (!run) set_cgroup_name(&o, o.site.node);
  if (!o.site.ctr_cache_dir[0]) snprintf(o.site.ctr_cache_dir, sizeof o.site.ctr_cache_dir, "%.4000s/images", o.state_dir);
  if (!o.site.no_cgroup && px_cg_v2_prepare(o.site.cgroup_root[0] ? o.site.cgroup_root : NULL))
    fprintf(stderr, "agent: cgroup v2: cannot move into a leaf group; job limits may fail\n");
  if (run) return run_local(&o, run);
  if (!o.server[0]) {
    fprintf(stderr, "agent: --server URL is required\n");
    usage();
    return 2;
  }
  return px_agent_run(&o);
}
