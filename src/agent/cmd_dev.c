/*
 * cmd_dev.c - `phalanx dev`: a whole cluster on this machine. It writes a
 * configuration (devconf.c) into a fresh state directory, starts
 * `phalanx server` and one `phalanx agent` per node (separate processes,
 * emulated GPUs, jobs really run under cgroups as their users) — or, above
 * PX_DEV_EMULATE_ABOVE nodes or with --emulate, one `phalanx agent
 * --emulate-nodes` process serving every node (emulate.h: thousands of nodes
 * start in seconds; jobs are plain processes or simulated) — mints each node
 * a node-bound token, waits until every node has registered, prints how to
 * point the CLI at the cluster, and on Ctrl-C or SIGTERM stops the agents
 * (which end their jobs) and then the server.
 *
 * A server that dies is started again on the same state directory, as a
 * service manager would, while the agents keep running: the dev cluster is
 * where to try crash recovery by hand (kill -9 the pid in STATE/server.pid).
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/dev_proxy.h"
#include "agent/devcert.h"
#include "agent/devconf.h"
#include "agent/discover.h"
#include "agent/gpu_watch.h"
#include "commands.h"
#include "server/server.h"
#include "server/state.h"
#include "util/log.h"

#define MAX_DEV_NODES 20000
/* More nodes than this are served by one emulating agent: an agent and a
 * supervisor factory per node cost two processes each, and a 2-core machine
 * did not bring 1,024 of them up in a minute. */
#define PX_DEV_EMULATE_ABOVE 64
#define TOKEN_LIFETIME_S (30 * 86400)
/* A server that dies this many times within RESTART_WINDOW_S is not restarted again. */
#define RESTART_MAX 5
#define RESTART_WINDOW_S 30

struct dev {
  struct px_dev_shape shape;
  char dir[4096], self[4096], sock[4200];
  char tls_dir[4200], ca[4300]; /* the throwaway CA (devcert.h); ca "" with --no-tls */
  pid_t server;
  pid_t *agents;             /* one per node, or [0]: the emulating agent */
  uint32_t nagents;
  bool quiet, emulate, real_jobs, jobs_mode_set, no_tls, force_tls;
  int64_t restarts[RESTART_MAX];
  pid_t proxy;               /* `phalanx proxy` to services (dev_proxy.h), 0 when none */
  char proxy_addr[64];
};

static void usage(void) {
  fprintf(stderr,
          "usage: phalanx dev [--nodes N] [--gpus N[:TYPE]|N:PROFILE,N:PROFILE...] [--cpus N] [--mem-mib M]\n"
          "                   [--gpu-groups G]\n"
          "                   [--port P] [--state-dir DIR] [--users U1,U2] [--ready-file FILE] [--quiet]\n"
          "                   [--heartbeat S] [--emulate] [--emulate-jobs sim|real] [--tls|--no-tls]\n"
          "                   [--container-image-dir DIR]\n"
          "       phalanx dev --make-certs DIR   only write a throwaway CA and server certificate\n"
          "       phalanx dev inject DIR NODE GPU FAULT [CODE [DETAIL]]   a GPU fault on a node (xid, ecc, lost...)\n"
          "  a server and N agents (default 4 nodes x 8 emulated h100 GPUs) in a fresh state\n"
          "  directory; above %d nodes (or with --emulate) one agent process emulates every node,\n"
          "  running jobs as plain processes (real, the default) or not at all (sim: a job ends\n"
          "  after its `sleep N`). Agents reach the server over TLS (a throwaway CA in DIR/tls;\n"
          "  --no-tls: plain TCP on loopback), the emulating agent over plain loopback unless --tls.\n"
          "  A server that dies is restarted; Ctrl-C stops everything. --gpus 56:1g.10gb emulates MIG\n"
          "  instances of one profile, --gpus 7:1g.10gb,1:3g.40gb,2:2g.20gb several side by side\n"
          "  (packed onto GPUs of 7 slices in that order).\n",
          PX_DEV_EMULATE_ABOVE);
}

static unsigned free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  unsigned port = 0;
  if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

/* Starts `phalanx ARGS...` with stdout/stderr into log (stdout to out when given). */
static pid_t spawn(struct dev *d, char *const *args, const char *log, const char *out) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  int lf = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int of = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : lf;
  int nf = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (lf < 0 || of < 0 || nf < 0) _exit(127);
  dup2(nf, 0), dup2(of, 1), dup2(lf, 2);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  setpgid(0, 0); /* Ctrl-C reaches `phalanx dev` alone, which stops the rest in order */
  execv(d->self, args);
  _exit(127);
}

/* GET path on the server's Unix socket; the body (malloc'd) or NULL. */
static char *get_local(struct dev *d, const char *path) {
  CURL *h = curl_easy_init();
  if (!h) return NULL;
  char url[256];
  snprintf(url, sizeof url, "http://localhost%s", path);
  FILE *mem;
  char *body = NULL;
  size_t len = 0;
  if (!(mem = open_memstream(&body, &len))) return curl_easy_cleanup(h), NULL;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, d->sock);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, mem);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 2000L);
  long status = 0;
  CURLcode rc = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(h);
  fclose(mem);
  if (rc != CURLE_OK || status != 200) {
    free(body);
    return NULL;
  }
  return body;
}

/* Nodes of the cluster not DOWN (registered with the server), or -1. */
static int nodes_up(struct dev *d) {
  char *body = get_local(d, "/v1/nodes");
  json_t *j = body ? json_loads(body, 0, NULL) : NULL;
  free(body);
  json_t *nodes = json_is_array(j) ? j : json_object_get(j, "nodes");
  int up = json_is_array(nodes) ? 0 : -1;
  for (size_t i = 0; up >= 0 && i < json_array_size(nodes); i++) {
    const char *st = json_string_value(json_object_get(json_array_get(nodes, i), "state"));
    up += st && strncmp(st, "DOWN", 4) != 0 && strncmp(st, "FUTURE", 6) != 0;
  }
  json_decref(j);
  return up;
}

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Ctrl-C or SIGTERM while starting (they are blocked, for sigwaitinfo later). */
static bool stop_asked(void) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT), sigaddset(&stop, SIGTERM);
  struct timespec zero = {0, 0};
  return sigtimedwait(&stop, NULL, &zero) > 0;
}

/* Waits for cond up to limit_ms while the server lives; polled every 20 ms,
 * or every 250 ms on a large cluster (each look lists every node). */
static bool wait_until(struct dev *d, bool (*cond)(struct dev *), long limit_ms) {
  long step = d->shape.nodes > PX_DEV_EMULATE_ABOVE ? 250 : 20;
  for (long t = 0; t < limit_ms; t += step) {
    if (cond(d)) return true;
    if (stop_asked()) return false;
    if (waitpid(d->server, NULL, WNOHANG) == d->server) {
      d->server = 0;
      return false;
    }
    nap_ms(step);
  }
  return false;
}

static bool server_answers(struct dev *d) { return nodes_up(d) >= 0; }
static bool all_up(struct dev *d) { return nodes_up(d) >= (int)d->shape.nodes; }

/* STATE/server.pid: the server's pid now (it changes when it is restarted). */
static void write_server_pid(struct dev *d) {
  char path[4200];
  snprintf(path, sizeof path, "%s/server.pid", d->dir);
  FILE *f = fopen(path, "we");
  if (f) fprintf(f, "%d\n", (int)d->server), fclose(f);
}

static pid_t spawn_server(struct dev *d) {
  char conf[4200], state[4200], listen[64], log[4200];
  snprintf(conf, sizeof conf, "%s/slurm.conf", d->dir);
  snprintf(state, sizeof state, "%s/server", d->dir);
  snprintf(listen, sizeof listen, "127.0.0.1:%u", d->shape.port);
  snprintf(log, sizeof log, "%s/server.log", d->dir);
  mkdir(state, 0700);
  char *args[] = {d->self, "server", "--config", conf, "--state-dir", state, "--listen", listen,
                  "--socket", d->sock, NULL};
  d->server = spawn(d, args, log, NULL);
  write_server_pid(d);
  return d->server;
}

static int start_server(struct dev *d) {
  if (spawn_server(d) < 0) return -1;
  if (!wait_until(d, server_answers, 30000)) {
    fprintf(stderr, "phalanx dev: the server did not come up; see %s/server.log\n", d->dir);
    return -1;
  }
  return 0;
}

/* A node-bound token for each node, minted with the server's key (as
 * `phalanx server token --node` does) into DIR/agents/tokens/<node>.token. */
static int mint_tokens(struct dev *d) {
  char state[4200], dir[4200], path[4300];
  unsigned char key[256];
  size_t len = sizeof key;
  snprintf(state, sizeof state, "%s/server", d->dir);
  snprintf(dir, sizeof dir, "%s/agents/tokens", d->dir);
  mkdir(dir, 0700);
  if (px_server_jwt_key(state, false, key, &len)) return -1;
  for (uint32_t i = 0; i < d->shape.nodes; i++) {
    char node[32];
    px_dev_node_name(&d->shape, i, node, sizeof node);
    char *tok = px_auth_mint_jwt(key, len, "root", 0, node, time(NULL), TOKEN_LIFETIME_S);
    snprintf(path, sizeof path, "%s/%s.token", dir, node);
    FILE *f = tok ? fopen(path, "we") : NULL;
    if (f) fprintf(f, "%s\n", tok), fclose(f);
    free(tok);
    if (!f) return -1;
  }
  return 0;
}

/* --gpus 7:1g.10gb,1:3g.40gb,2:2g.20gb: a mixed MIG layout on every node
 * (discover.h), one NVLink group; 0 or -1 when the agent would refuse it. */
static int mig_layout(struct px_dev_shape *s, const char *spec) {
  static struct px_node_res r;
  if (strlen(spec) >= sizeof s->gpu_layout || px_discover_gpus_emulated(&r, spec, "dev")) return -1;
  snprintf(s->gpu_layout, sizeof s->gpu_layout, "%s", spec);
  snprintf(s->gpu_type, sizeof s->gpu_type, "mig");
  s->gpus = r.ngpus;
  s->groups = 1;
  return 0;
}

static void shape_args(struct dev *d, char *gpus, char *cpus, char *mem, char *url) {
  if (d->shape.gpu_layout[0]) snprintf(gpus, 64, "%s", d->shape.gpu_layout);
  else snprintf(gpus, 64, "%u:%s:%u", d->shape.gpus, d->shape.gpu_type, d->shape.groups);
  snprintf(cpus, 16, "%u", d->shape.cpus);
  snprintf(mem, 32, "%llu", (unsigned long long)d->shape.mem_mib);
  snprintf(url, 64, "%s://127.0.0.1:%u", d->no_tls ? "http" : "https", d->shape.port);
}

/* One process for every node (emulate.h). */
static int start_emulator(struct dev *d) {
  char gpus[64], cpus[16], mem[32], url[64], hosts[128], first[32], last[32], state[4200], log[4200], tokens[4200];
  shape_args(d, gpus, cpus, mem, url);
  px_dev_node_name(&d->shape, 0, first, sizeof first);
  px_dev_node_name(&d->shape, d->shape.nodes - 1, last, sizeof last);
  if (d->shape.nodes == 1) snprintf(hosts, sizeof hosts, "%s", first);
  else snprintf(hosts, sizeof hosts, "dev[%s-%s]", first + 3, last + 3);
  snprintf(state, sizeof state, "%s/agents/emulated", d->dir);
  snprintf(log, sizeof log, "%s/agents/emulated.log", d->dir);
  snprintf(tokens, sizeof tokens, "%s/agents/tokens", d->dir);
  char *args[] = {d->self, "agent", "--server", url, "--emulate-nodes", hosts, "--state-dir", state,
                  "--token-dir", tokens, "--emulate-gpus", gpus, "--emulate-cpus", cpus, "--emulate-mem", mem,
                  "--emulate-jobs", d->real_jobs ? "real" : "sim", "--kill-jobs-on-exit", "--ca-file", d->ca,
                  NULL};
  d->nagents = 1;
  d->agents[0] = spawn(d, args, log, NULL);
  return d->agents[0] < 0 ? -1 : 0;
}

static int start_agents(struct dev *d) {
  char gpus[64], cpus[16], mem[32], url[64], adir[4200];
  shape_args(d, gpus, cpus, mem, url);
  snprintf(adir, sizeof adir, "%s/agents", d->dir);
  mkdir(adir, 0755);
  if (mint_tokens(d)) {
    fprintf(stderr, "phalanx dev: cannot mint the agents' tokens in %s/tokens\n", adir);
    return -1;
  }
  if (!(d->agents = calloc(d->shape.nodes, sizeof *d->agents))) return -1;
  if (d->emulate) return start_emulator(d);
  for (uint32_t i = 0; i < d->shape.nodes; i++) {
    char node[32], state[4300], log[4300], token[4300];
    px_dev_node_name(&d->shape, i, node, sizeof node);
    snprintf(state, sizeof state, "%s/%s", adir, node);
    snprintf(log, sizeof log, "%s/%s.log", adir, node);
    snprintf(token, sizeof token, "%s/tokens/%s.token", adir, node);
    /* the config says AllowRootJobs=YES: one local user plays every team */
    char *args[] = {d->self, "agent", "--server", url, "--node", node, "--addr", "127.0.0.1",
                    "--state-dir", state, "--emulate-gpus", gpus, "--emulate-cpus", cpus,
                    "--emulate-mem", mem, "--cluster", "dev", "--kill-wait", "5",
                    "--kill-jobs-on-exit", "--allow-root", "--token-file", token, "--ca-file", d->ca, NULL};
    d->agents[d->nagents++] = spawn(d, args, log, NULL);
    if (d->agents[i] < 0) return -1;
  }
  return 0;
}

/* Stops a child: SIGTERM, then SIGKILL after limit_ms. */
static void stop_child(pid_t pid, long limit_ms) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  for (long t = 0; t < limit_ms; t += 10) {
    if (waitpid(pid, NULL, WNOHANG) == pid) return;
    nap_ms(10);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

static void stop_all(struct dev *d) {
  px_dev_proxy_stop(d->proxy);
  /* agents first (each ends its jobs and reports), so the server records the ends */
  for (uint32_t i = 0; i < d->nagents; i++) if (d->agents[i] > 0) kill(d->agents[i], SIGTERM);
  for (uint32_t i = 0; i < d->nagents; i++) stop_child(d->agents[i], 15000), d->agents[i] = 0;
  stop_child(d->server, 15000);
  d->server = 0;
  free(d->agents);
  d->agents = NULL;
}

static void banner(struct dev *d) {
  if (d->quiet) return;
  printf("phalanx dev: %u nodes x %u emulated %s GPUs%s, state in %s\n"
         "  point the CLI at it:\n"
         "    export PHALANX_SERVER=%s\n"
         "    export PHALANX_CONF=%s/slurm.conf\n"
         "  logs: %s/server.log, %s/agents/%s; Ctrl-C stops everything\n"
         "  the server's pid is in %s/server.pid: kill -9 it to try recovery (it is restarted)\n",
         d->shape.nodes, d->shape.gpus, d->shape.gpu_type,
         d->emulate ? d->real_jobs ? " (one emulating agent, jobs as plain processes)"
                                   : " (one emulating agent, simulated jobs)" : "",
         d->dir, d->sock, d->dir, d->dir, d->dir, d->emulate ? "emulated.log" : "<node>.log", d->dir);
  fflush(stdout);
}

/* The server died: start it again (the agents keep running and register
 * with it when it answers), unless it keeps dying. */
static int restart_server(struct dev *d, int ws) {
  int64_t now = (int64_t)time(NULL);
  memmove(d->restarts + 1, d->restarts, (RESTART_MAX - 1) * sizeof *d->restarts);
  d->restarts[0] = now;
  fprintf(stderr, "phalanx dev: the server exited (%s %d); ", WIFSIGNALED(ws) ? "signal" : "status",
          WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
  if (d->restarts[RESTART_MAX - 1] && now - d->restarts[RESTART_MAX - 1] < RESTART_WINDOW_S) {
    fprintf(stderr, "%d times in %d s: stopping; see %s/server.log\n", RESTART_MAX, RESTART_WINDOW_S, d->dir);
    return 1;
  }
  fprintf(stderr, "starting it again\n");
  return spawn_server(d) < 0 ? 1 : 0;
}

/* Until Ctrl-C/SIGTERM. Agents may die (tests kill them); the server is restarted. */
static int supervise(struct dev *d, const sigset_t *mask) {
  for (;;) {
    int sig = sigwaitinfo(mask, NULL), ws;
    if (sig == SIGINT || sig == SIGTERM) return 0;
    pid_t p;
    while ((p = waitpid(-1, &ws, WNOHANG)) > 0) {
      if (p == d->server) {
        d->server = 0;
        if (restart_server(d, ws)) return 1;
      }
      for (uint32_t i = 0; i < d->nagents; i++)
        if (d->agents[i] == p) {
          fprintf(stderr, "phalanx dev: agent %u exited\n", i + 1);
          d->agents[i] = 0;
        }
    }
  }
}

static int parse_opts(struct dev *d, int argc, char **argv, const char **ready) {
  static const struct option lo[] = {{"nodes", 1, 0, 'n'}, {"gpus", 1, 0, 'g'},     {"cpus", 1, 0, 'c'},
                                     {"mem-mib", 1, 0, 'm'}, {"gpu-groups", 1, 0, 'G'}, {"port", 1, 0, 'p'},
                                     {"state-dir", 1, 0, 'd'}, {"ready-file", 1, 0, 'r'}, {"quiet", 0, 0, 'q'},
                                     {"users", 1, 0, 'u'}, {"heartbeat", 1, 0, 'H'}, {"emulate", 0, 0, 'e'},
                                     {"emulate-jobs", 1, 0, 'j'}, {"no-tls", 0, 0, 'T'}, {"tls", 0, 0, 'S'},
                                     {"make-certs", 1, 0, 'C'}, {"container-image-dir", 1, 0, 'I'},
                                     {"help", 0, 0, 'h'},    {0, 0, 0, 0}};
  struct px_dev_shape *s = &d->shape;
  *s = (struct px_dev_shape){.nodes = 4, .gpus = 8, .cpus = 32, .groups = 2, .mem_mib = 131072, .gpu_type = "h100"};
  int c;
  char *end;
  optind = 1;
  d->real_jobs = true;
  while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
    unsigned long v = optarg ? strtoul(optarg, &end, 10) : 0;
    bool num_ok = optarg && end != optarg && (*end == '\0' || (c == 'g' && *end == ':'));
    switch (c) {
      case 'n': if (!num_ok || v < 1 || v > MAX_DEV_NODES) return -1; s->nodes = (uint32_t)v; break;
      case 'g':
        if (strchr(optarg, ',')) {
          if (mig_layout(s, optarg)) return -1;
          break;
        }
        if (!num_ok || v > 64) return -1;
        s->gpus = (uint32_t)v;
        if (*end == ':') snprintf(s->gpu_type, sizeof s->gpu_type, "%s", end + 1);
        break;
      case 'c': if (!num_ok || v < 1) return -1; s->cpus = (uint32_t)v; break;
      case 'm': if (!num_ok || v < 64) return -1; s->mem_mib = v; break;
      case 'G': if (!num_ok || v < 1) return -1; s->groups = (uint32_t)v; break;
      case 'p': if (!num_ok || v > 65535) return -1; s->port = (unsigned)v; break;
      case 'H': if (!num_ok || v < 1 || v > 3600) return -1; s->heartbeat_s = (uint32_t)v; break;
      case 'd': snprintf(d->dir, sizeof d->dir, "%s", optarg); break;
      case 'r': *ready = optarg; break;
      case 'q': d->quiet = true; break;
      case 'u': s->users = optarg; break;
      case 'e': d->emulate = true; break;
      case 'T': d->no_tls = true; break;
      case 'S': d->force_tls = true; break;
      case 'C': snprintf(d->tls_dir, sizeof d->tls_dir, "%s", optarg); break;
      case 'I': s->image_dir = optarg; break; /* ContainerImageDir= in the config */
      case 'j':
        if (strcmp(optarg, "sim") && strcmp(optarg, "real")) return -1;
        d->real_jobs = !strcmp(optarg, "real");
        d->jobs_mode_set = true;
        break;
      default: return -1;
    }
  }
  if (s->groups > s->gpus && s->gpus) s->groups = s->gpus;
  if (!s->gpus) s->groups = 1;
  if (!s->users) s->users = getenv("SUDO_USER"); /* the developer behind sudo */
  d->emulate |= s->nodes > PX_DEV_EMULATE_ABOVE || d->jobs_mode_set;
  /* One emulating process opening a TLS session per node is not what a
   * cluster pays (each host opens its own): 2,000 emulated nodes took 36 s
   * to register over TLS against 3.3 s plain (docs/agent.md). Plain
   * loopback for it unless asked; the agents of a small cluster use TLS. */
  if (d->force_tls && d->no_tls) return -1; /* --tls and --no-tls */
  if (d->emulate && !d->force_tls) d->no_tls = true;
  /* the server's default interval at scale: 10,000 nodes every 2 s would be
   * 5,000 heartbeats a second (docs/operations.md, Scale) */
  if (!s->heartbeat_s) s->heartbeat_s = s->nodes > PX_DEV_EMULATE_ABOVE ? 30 : 2;
  return 0;
}

/* DIR/tls: the cluster's own CA and the server's certificate (devcert.h). */
static int make_certs(struct dev *d) {
  char err[512];
  snprintf(d->tls_dir, sizeof d->tls_dir, "%s/tls", d->dir);
  snprintf(d->ca, sizeof d->ca, "%s/ca.pem", d->tls_dir);
  if (mkdir(d->tls_dir, 0755) != 0 && errno != EEXIST)
    return fprintf(stderr, "phalanx dev: %s: %s\n", d->tls_dir, strerror(errno)), -1;
  if (px_devcert_make(d->tls_dir, err, sizeof err))
    return fprintf(stderr, "phalanx dev: %s\n", err), -1;
  d->shape.tls_dir = d->tls_dir;
  return 0;
}

/* --make-certs DIR: the same files for a cluster set up by hand (and the tests). */
static int make_certs_only(const char *dir) {
  char err[512];
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) return fprintf(stderr, "phalanx dev: %s: %s\n", dir, strerror(errno)), 1;
  if (px_devcert_make(dir, err, sizeof err)) return fprintf(stderr, "phalanx dev: %s\n", err), 1;
  printf("%s/ca.pem %s/server.pem %s/server.key\n", dir, dir, dir);
  return 0;
}

static void write_ready(struct dev *d, const char *ready) {
  FILE *f = fopen(ready, "we");
  if (f) fprintf(f, "PHALANX_SERVER=%s\nPHALANX_CONF=%s/slurm.conf\n", d->sock, d->dir);
  if (f && d->proxy) fprintf(f, "PHALANX_PROXY=http://%s\n", d->proxy_addr);
  if (f) fclose(f);
}

int px_cmd_dev(int argc, char **argv) {
  static struct dev d;
  memset(&d, 0, sizeof d);
  const char *ready = NULL;
  if (argc > 1 && !strcmp(argv[1], "inject")) return px_dev_inject(argc - 1, argv + 1);
  if (parse_opts(&d, argc, argv, &ready)) return usage(), 2;
  if (d.tls_dir[0]) return make_certs_only(d.tls_dir);
  if (!d.dir[0]) {
    snprintf(d.dir, sizeof d.dir, "/tmp/phalanx-dev.XXXXXX");
    if (!mkdtemp(d.dir)) return perror("phalanx dev: mkdtemp"), 1;
  } else if (mkdir(d.dir, 0755) != 0 && errno != EEXIST) {
    return perror("phalanx dev: state dir"), 1;
  }
  chmod(d.dir, 0755);
  ssize_t n = readlink("/proc/self/exe", d.self, sizeof d.self - 1);
  if (n <= 0) return perror("phalanx dev: /proc/self/exe"), 1;
  d.self[n] = '\0';
  snprintf(d.sock, sizeof d.sock, "%s/server.sock", d.dir);
  if (!d.shape.port && !(d.shape.port = free_port())) return fprintf(stderr, "phalanx dev: no free port\n"), 1;
  d.shape.dir = d.dir;
  if (!d.no_tls && make_certs(&d)) return 1;
  if (px_dev_write_config(&d.shape)) return fprintf(stderr, "phalanx dev: cannot write the configuration\n"), 1;
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT), sigaddset(&mask, SIGTERM), sigaddset(&mask, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  curl_global_init(CURL_GLOBAL_NOTHING);
  int rc = 1;
  if (start_server(&d) == 0 && start_agents(&d) == 0) {
    if (!wait_until(&d, all_up, d.shape.nodes > PX_DEV_EMULATE_ABOVE ? 180000 : 60000)) {
      fprintf(stderr, "phalanx dev: not every agent registered; see %s/agents/*.log\n", d.dir);
    } else {
      d.proxy = px_dev_proxy_start(d.self, d.dir, d.sock, d.proxy_addr, sizeof d.proxy_addr);
      banner(&d);
      if (d.proxy && !d.quiet) printf("  services: curl http://%s/NAME/ (phalanx proxy, HAProxy)\n", d.proxy_addr);
      if (ready) write_ready(&d, ready);
      rc = supervise(&d, &mask);
    }
  }
  stop_all(&d);
  curl_global_cleanup();
  if (!d.quiet) printf("phalanx dev: stopped (state kept in %s)\n", d.dir);
  return rc;
}
