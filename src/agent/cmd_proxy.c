/*
 * cmd_proxy.c - `phalanx proxy`: traffic to services through HAProxy.
 *
 *   phalanx proxy [--server URL|SOCKET] [--listen ADDR:PORT] [--haproxy PATH]
 *                 [--run-dir DIR] [--token-file F | --munge] [--ready-file F]
 *
 * One HTTP frontend on the listen address routes /NAME/... (prefix
 * stripped) and Host NAME or NAME.anything to service NAME's backend. The
 * main thread follows GET /v1/services/endpoints?wait=SEQ (a long poll) and
 * applies each answer: slot changes through HAProxy's runtime API, a
 * graceful reload only when the set of services changes (proxy_conf.h). A
 * second thread reads HAProxy's statistics every second and POSTs each
 * service's load (sessions in flight, requests per second) to
 * /v1/services/NAME/load, the autoscaler's signal. When the server is away
 * HAProxy keeps serving the last endpoints it was given.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/http.h"
#include "agent/proxy_conf.h"
#include "agent/proxy_hap.h"
#include "commands.h"
#include "util/log.h"

#define POLL_TIMEOUT_MS 35000 /* the server holds a long poll up to 25 s */
#define LOAD_PERIOD_MS 1000
#define LOADS_MAX 512

struct proxy {
  struct px_hap hap;
  struct px_proxy_cfg cfg;
  struct px_pback *b;
  uint32_t nb;
  struct px_http *sync_http, *load_http;
  atomic_bool stop;
  bool warned_api;
};

static struct proxy *the_proxy; /* for the signal handler */

static void on_signal(int sig) {
  (void)sig;
  atomic_store(&the_proxy->stop, true);
  px_http_abort(the_proxy->sync_http);
  px_http_abort(the_proxy->load_http);
}

static void nap_ms(struct proxy *p, long ms) {
  for (long t = 0; t < ms && !atomic_load(&p->stop); t += 50) {
    struct timespec ts = {0, 50000000L};
    nanosleep(&ts, NULL);
  }
}

static void backs_free(struct px_pback *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) free(b[i].slot);
  free(b);
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const struct px_psvc *)a)->name, ((const struct px_psvc *)b)->name);
}

/* Services sorted by name (the server's order may change between answers:
 * the same set must not look like a new one, which would reload), endpoints'
 * hosts as addresses (the runtime API takes no names); a
 * service whose name cannot be a backend is left out, with a warning. */
static void normalise(struct px_pstate *st) {
  uint32_t keep = 0;
  for (uint32_t i = 0; i < st->nsvcs; i++) {
    struct px_psvc *s = &st->svcs[i];
    if (!px_proxy_name_ok(s->name)) {
      px_warn("service '%s': not a name for a path prefix or a backend; not routed", s->name);
      free(s->eps);
      continue;
    }
    uint32_t k = 0;
    for (uint32_t e = 0; e < s->neps; e++) {
      struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
      char addr[64];
      if (getaddrinfo(s->eps[e].host, NULL, &hints, &res) != 0 || !res ||
          getnameinfo(res->ai_addr, res->ai_addrlen, addr, sizeof addr, NULL, 0, NI_NUMERICHOST) != 0) {
        px_warn("service %s: cannot resolve endpoint host %s; left out", s->name, s->eps[e].host);
      } else {
        s->eps[k] = s->eps[e];
        snprintf(s->eps[k++].host, sizeof s->eps[0].host, "%s", addr);
      }
      if (res) freeaddrinfo(res);
    }
    s->neps = k;
    st->svcs[keep++] = *s;
  }
  st->nsvcs = keep;
  qsort(st->svcs, st->nsvcs, sizeof *st->svcs, by_name);
}

static bool same_services(const struct proxy *p, const struct px_pstate *st) {
  if (p->nb != st->nsvcs) return false;
  for (uint32_t i = 0; i < p->nb; i++)
    if (strcmp(p->b[i].name, st->svcs[i].name)) return false;
  return true;
}

/* New backends for st, each keeping its old slot count when that suffices. */
static struct px_pback *backs_for(const struct proxy *p, const struct px_pstate *st) {
  struct px_pback *b = calloc(st->nsvcs + 1, sizeof *b);
  struct px_slot_change *ch = malloc(sizeof *ch * 2 * (PX_PROXY_SLOTS_MAX + 1));
  if (!b || !ch) {
    free(b);
    free(ch);
    return NULL;
  }
  for (uint32_t i = 0; b && i < st->nsvcs; i++) {
    snprintf(b[i].name, sizeof b[i].name, "%s", st->svcs[i].name);
    b[i].nslots = px_proxy_slots_for(st->svcs[i].neps);
    for (uint32_t k = 0; k < p->nb; k++)
      if (!strcmp(p->b[k].name, b[i].name) && p->b[k].nslots > b[i].nslots) b[i].nslots = p->b[k].nslots;
    uint32_t nch = 0;
    if (!(b[i].slot = calloc(b[i].nslots, sizeof *b[i].slot)) ||
        !px_proxy_fit(&b[i], i, &st->svcs[i], ch, &nch)) {
      backs_free(b, i + 1);
      b = NULL;
    }
  }
  free(ch);
  return b;
}

static int reload(struct proxy *p, const struct px_pstate *st) {
  struct px_pback *b = backs_for(p, st);
  char *cfg = b ? px_proxy_config(&p->cfg, b, st->nsvcs) : NULL;
  char why[256] = "out of memory";
  int rc = cfg ? px_hap_reload(&p->hap, cfg, why, sizeof why) : PX_ENOMEM;
  free(cfg);
  if (rc) {
    px_error("reload: %s", why);
    backs_free(b, b ? st->nsvcs : 0);
    return rc;
  }
  backs_free(p->b, p->nb);
  p->b = b;
  p->nb = st->nsvcs;
  px_info("reloaded haproxy: %u services (worker %ld)", p->nb, p->hap.worker);
  return 0;
}

/* Runtime commands for the slot changes, in one request to the admin socket. */
static int runtime(struct proxy *p, const struct px_slot_change *ch, uint32_t n) {
  if (!n) return 0;
  size_t cap = (size_t)n * 200 + 1, len = 0;
  char *cmd = malloc(cap), *resp = NULL;
  if (!cmd) return PX_ENOMEM;
  for (uint32_t i = 0; i < n; i++) {
    const char *be = p->b[ch[i].backend].name;
    if (ch[i].used)
      len += (size_t)snprintf(cmd + len, cap - len, "%sset server svc_%s/s%u addr %s port %u; set server svc_%s/s%u state ready",
                              len ? "; " : "", be, ch[i].slot, ch[i].ep.host, ch[i].ep.port, be, ch[i].slot);
    else
      len += (size_t)snprintf(cmd + len, cap - len, "%sset server svc_%s/s%u state maint", len ? "; " : "", be, ch[i].slot);
  }
  int rc = px_hap_cmd(p->hap.admin, cmd, &resp);
  if (rc) px_error("haproxy's admin socket %s: %s", p->hap.admin, px_strerror(rc));
  else if (resp && (strstr(resp, "No such") || strstr(resp, "Require")))
    px_error("haproxy refused a change: %.200s", resp), rc = PX_EPROTO;
  px_debug("runtime: %s", cmd);
  free(cmd);
  free(resp);
  return rc;
}

/* Applies one endpoints answer; 0, or an error (the answer is asked for again). */
static int apply(struct proxy *p, struct px_pstate *st) {
  normalise(st);
  if (!same_services(p, st)) return reload(p, st);
  struct px_slot_change *ch = malloc(sizeof *ch * 2 * (PX_PROXY_SLOTS_MAX + 1) * (p->nb + 1));
  uint32_t nch = 0;
  bool fits = ch != NULL;
  for (uint32_t i = 0; fits && i < p->nb; i++) fits = px_proxy_fit(&p->b[i], i, &st->svcs[i], ch, &nch);
  /* slots too few: a new configuration with more (reload) */
  int rc = 0;
  if (!fits || runtime(p, ch, nch) != 0) rc = reload(p, st);
  else if (nch) px_info("endpoints: %u slot changes applied at run time", nch);
  free(ch);
  return rc;
}

static void follow(struct proxy *p) {
  uint64_t seq = 0;
  bool have = false;
  while (!atomic_load(&p->stop)) {
    char path[96];
    snprintf(path, sizeof path, have ? "/v1/services/endpoints?wait=%llu" : "/v1/services/endpoints",
             (unsigned long long)seq);
    long status = 0;
    char *body = NULL;
    int rc = px_http_do(p->sync_http, "GET", path, NULL, POLL_TIMEOUT_MS, &status, &body);
    struct px_pstate st;
    struct px_diag d = {0};
    if (!rc && status == 200 && px_proxy_endpoints_decode(body, &st, &d) == 0) {
      p->warned_api = false;
      have = apply(p, &st) == 0; /* a failed apply asks again, after a pause */
      seq = st.seq;
      px_proxy_state_fini(&st);
      if (!have) nap_ms(p, 1000);
    } else if (!atomic_load(&p->stop)) {
      if (!p->warned_api)
        px_warn("endpoints: %s (status %ld%s%s); keeping the last ones, retrying every second",
                rc ? px_strerror(rc) : d.msg[0] ? "bad answer" : "no answer", status, d.msg[0] ? ": " : "", d.msg);
      p->warned_api = true;
      have = false;
      nap_ms(p, 1000);
    }
    free(body);
    if (!atomic_load(&p->stop) && !px_hap_alive(&p->hap)) {
      px_error("haproxy exited; starting it again");
      break;
    }
  }
}

/* ---- load reports ---- */

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *load_main(void *arg) {
  struct proxy *p = arg;
  static struct px_hap_load now[LOADS_MAX], before[LOADS_MAX];
  uint32_t nbefore = 0;
  int64_t t_before = 0;
  while (!atomic_load(&p->stop)) {
    nap_ms(p, LOAD_PERIOD_MS);
    char *csv = NULL;
    if (px_hap_cmd(p->hap.admin, "show stat", &csv) != 0) {
      free(csv);
      continue;
    }
    int64_t t = mono_ms();
    uint32_t n = px_hap_stat_parse(csv, "svc_", now, LOADS_MAX);
    free(csv);
    for (uint32_t i = 0; i < n; i++) {
      double rps = 0;
      for (uint32_t k = 0; k < nbefore; k++)
        if (!strcmp(before[k].backend, now[i].backend) && now[i].req_tot >= before[k].req_tot && t > t_before)
          rps = (double)(now[i].req_tot - before[k].req_tot) * 1000.0 / (double)(t - t_before);
      char path[128], body[96];
      snprintf(path, sizeof path, "/v1/services/%s/load", now[i].backend + 4);
      snprintf(body, sizeof body, "{\"in_flight\":%llu,\"requests_per_s\":%.2f}", (unsigned long long)now[i].scur, rps);
      long status;
      if (px_http_do(p->load_http, "POST", path, body, 2000, &status, NULL) == 0 && status >= 300)
        px_debug("load of %s: status %ld", now[i].backend + 4, status);
    }
    memcpy(before, now, n * sizeof *now);
    nbefore = n, t_before = t;
  }
  return NULL;
}

/* ---- the command ---- */

static void usage(void) {
  fprintf(stderr,
          "usage: phalanx proxy [--server URL|SOCKET] [--listen ADDR:PORT] [--haproxy PATH]\n"
          "                     [--run-dir DIR] [--token-file F | --munge] [--ready-file F]\n"
          "  routes http://ADDR:PORT/NAME/... and Host: NAME[.domain] to service NAME's ready replicas\n"
          "  --server      the server (default $PHALANX_SERVER)\n"
          "  --listen      the frontend's address (default 127.0.0.1:8080)\n"
          "  --haproxy     the haproxy program (default haproxy)\n"
          "  --run-dir     haproxy.cfg, its sockets and log (default a new /tmp/phalanx-proxy.XXXXXX)\n"
          "  --ready-file  written with PROXY=http://ADDR:PORT once traffic flows\n");
}

struct proxy_opts {
  const char *server, *haproxy, *token, *ready;
  char run_dir[200];
  bool munge;
};

static int parse(int argc, char **argv, struct proxy *p, struct proxy_opts *o) {
  static const struct option lo[] = {{"server", 1, 0, 's'},     {"listen", 1, 0, 'l'}, {"haproxy", 1, 0, 'H'},
                                     {"run-dir", 1, 0, 'd'},    {"token-file", 1, 0, 't'}, {"munge", 0, 0, 'm'},
                                     {"ready-file", 1, 0, 'r'}, {"log-level", 1, 0, 'L'}, {"help", 0, 0, 'h'},
                                     {0, 0, 0, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
    enum px_log_level lv;
    switch (c) {
      case 's': o->server = optarg; break;
      case 'l': snprintf(p->cfg.listen, sizeof p->cfg.listen, "%s", optarg); break;
      case 'H': o->haproxy = optarg; break;
      case 'd': snprintf(o->run_dir, sizeof o->run_dir, "%s", optarg); break;
      case 't': o->token = optarg; break;
      case 'm': o->munge = true; break;
      case 'r': o->ready = optarg; break;
      case 'L':
        if (px_log_parse_level(optarg, &lv)) return -1;
        px_log_set_level(lv);
        break;
      default: return -1;
    }
  }
  if (!o->server || !*o->server) return fprintf(stderr, "proxy: --server or $PHALANX_SERVER is needed\n"), -1;
  if (!strchr(p->cfg.listen, ':')) return fprintf(stderr, "proxy: --listen wants ADDR:PORT\n"), -1;
  return 0;
}

static int run(struct proxy *p, const struct proxy_opts *o) {
  char why[256] = "out of memory";
  char *cfg = px_proxy_config(&p->cfg, NULL, 0);
  int rc = cfg ? px_hap_start(&p->hap, cfg, why, sizeof why) : PX_ENOMEM;
  free(cfg);
  if (rc) return px_error("%s", why), 1;
  printf("phalanx proxy: services at http://%s/NAME/ (haproxy %s, config %s)\n", p->cfg.listen, p->hap.bin,
         p->hap.cfg);
  fflush(stdout);
  if (o->ready) {
    FILE *f = fopen(o->ready, "we");
    if (f) fprintf(f, "PROXY=http://%s\n", p->cfg.listen), fclose(f);
  }
  pthread_t th;
  bool loads = pthread_create(&th, NULL, load_main, p) == 0;
  while (!atomic_load(&p->stop)) {
    follow(p);
    if (atomic_load(&p->stop)) break;
    backs_free(p->b, p->nb), p->b = NULL, p->nb = 0; /* haproxy died: start afresh */
    char *fresh = px_proxy_config(&p->cfg, NULL, 0);
    if (!fresh || px_hap_start(&p->hap, fresh, why, sizeof why)) px_error("%s", why), nap_ms(p, 1000);
    free(fresh);
  }
  if (loads) pthread_join(th, NULL);
  return 0;
}

int px_cmd_proxy(int argc, char **argv) {
  static struct proxy p;
  memset(&p, 0, sizeof p);
  struct proxy_opts o = {.server = getenv("PHALANX_SERVER"), .haproxy = "haproxy"};
  snprintf(p.cfg.listen, sizeof p.cfg.listen, "127.0.0.1:8080");
  if (parse(argc, argv, &p, &o)) return usage(), 2;
  px_log_set_tag("proxy");
  if (!o.run_dir[0]) {
    snprintf(o.run_dir, sizeof o.run_dir, "/tmp/phalanx-proxy.XXXXXX");
    if (!mkdtemp(o.run_dir)) return perror("proxy: mkdtemp"), 1;
  } else if (mkdir(o.run_dir, 0700) != 0 && errno != EEXIST) {
    return perror("proxy: --run-dir"), 1;
  }
  px_hap_init(&p.hap, o.haproxy, o.run_dir);
  snprintf(p.cfg.admin_sock, sizeof p.cfg.admin_sock, "%s", p.hap.admin);
  if (px_http_new(o.server, NULL, o.token, o.munge, "", &p.sync_http) || px_http_new(o.server, NULL, o.token, o.munge, "", &p.load_http)) {
    fprintf(stderr, "proxy: cannot set up the client for %s (token file?)\n", o.server);
    px_http_free(p.sync_http);
    return 1;
  }
  the_proxy = &p;
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  int rc = run(&p, &o);
  px_hap_stop(&p.hap);
  backs_free(p.b, p.nb);
  px_http_free(p.sync_http);
  px_http_free(p.load_http);
  return rc;
}
