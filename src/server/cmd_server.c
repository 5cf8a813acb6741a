/*
 * cmd_server.c - `phalanx server`: parse the options, load the
 * configuration, build the server and run its main loop until SIGTERM or
 * SIGINT. Signals are blocked in every thread and taken by one thread with
 * sigwait(), so stopping never runs inside an async signal handler.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "server/tables.h"
#include "util/log.h"

static void usage(void) {
  fprintf(stderr,
          "usage: phalanx server token --state-dir DIR --user NAME [--node N] [--lifetime S]\n"
          "       phalanx server --config FILE [--state-dir DIR] [--listen HOST:PORT]\n"
          "                      [--socket PATH] [--store URL] [--munge-socket PATH]\n"
          "                      [--rate-limit REQ_PER_S] [--node-timeout S] [--log-level L]\n"
          "                      [--operators U1,U2] [--administrators U1,U2]\n"
          "                      [--checkpoint-jobs N]\n"
          "                      [--ha [--name NAME] [--advertise URL] [--lease-ms MS]]\n"
          "       phalanx server status --store URL   (every controller: role, term, lag)\n");
}

struct sigctx {
  struct px_server *s;
  sigset_t set;
};

static void *signal_thread(void *arg) {
  struct sigctx *c = arg;
  int sig = 0;
  if (sigwait(&c->set, &sig) == 0 && sig != SIGUSR2) {
    px_info("signal %d: stopping", sig);
    px_server_stop(c->s);
  }
  return NULL;
}

static int parse_num(const char *s, double *out) {
  char *end;
  *out = strtod(s, &end);
  return *end || *out < 0 ? -1 : 0;
}

static int load_conf(const char *path, struct px_conf **conf) {
  struct px_conf_diags diags = {0};
  int rc = px_conf_load(path, conf, &diags);
  for (size_t i = 0; i < diags.len; i++) {
    char line[1024];
    px_conf_msg_format(&diags.v[i], line, sizeof line);
    fprintf(stderr, "%s\n", line);
  }
  px_conf_diags_fini(&diags);
  return rc;
}

/* "a,b,c" into an arena array of names (the command line overrides the
 * configuration's Operators=/Administrators=). */
/* --operators/--administrators: names added to the configuration's
 * Operators=/Administrators= lists (not replacing them). */
static int split_names(struct px_conf *conf, const char *list, const char ***out, uint32_t *n) {
  uint32_t count = 1 + *n;
  for (const char *p = list; *p; p++) count += *p == ',';
  const char **v = px_arena_calloc(&conf->arena, count * sizeof *v);
  if (!v) return PX_ENOMEM;
  for (uint32_t i = 0; i < *n; i++) v[i] = (*out)[i];
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    if (len && !(v[(*n)++] = px_arena_strndup(&conf->arena, p, len))) return PX_ENOMEM;
    p += len + (p[len] == ',');
  }
  *out = v;
  return 0;
}

int px_cmd_server(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "token")) return px_cmd_token(argc - 1, argv + 1);
  if (argc > 1 && !strcmp(argv[1], "status")) return px_cmd_server_status(argc - 1, argv + 1);
  static const struct option longopts[] = {
      {"config", required_argument, 0, 'c'},       {"state-dir", required_argument, 0, 'd'},
      {"listen", required_argument, 0, 'l'},       {"socket", required_argument, 0, 's'},
      {"store", required_argument, 0, 'u'},        {"munge-socket", required_argument, 0, 'm'},
      {"rate-limit", required_argument, 0, 'r'},   {"node-timeout", required_argument, 0, 't'},
      {"log-level", required_argument, 0, 'v'},    {"help", no_argument, 0, 'h'},
      {"operators", required_argument, 0, 'O'},    {"administrators", required_argument, 0, 'A'},
      {"checkpoint-jobs", required_argument, 0, 'k'},
      {"ha", no_argument, 0, 'H'},                 {"name", required_argument, 0, 'N'},
      {"advertise", required_argument, 0, 'a'},    {"lease-ms", required_argument, 0, 'L'},
      {0, 0, 0, 0}};
  struct px_server_opts o = {.rate_per_s = 200, .rate_burst = 400};
  const char *operators = NULL, *admins = NULL;
  double num;
  int ch;
  optind = 1;
  while ((ch = getopt_long(argc, argv, "c:d:l:s:u:m:r:t:v:hO:A:k:HN:a:L:", longopts, NULL)) != -1) {
    enum px_log_level lvl;
    switch (ch) {
      case 'c': o.config_path = optarg; break;
      case 'd': o.state_dir = optarg; break;
      case 'l': o.listen = optarg; break;
      case 's': o.socket_path = optarg; break;
      case 'u': o.store_url = optarg; break;
      case 'm': o.munge_socket = optarg; break;
      case 'r':
        if (parse_num(optarg, &num)) return usage(), 2;
        o.rate_per_s = num;
        o.rate_burst = num * 2;
        break;
      case 't':
        if (parse_num(optarg, &num) || num < 1) return usage(), 2;
        o.node_timeout_s = (int64_t)num;
        break;
      case 'k':
        if (parse_num(optarg, &num) || num < 1) return usage(), 2;
        o.checkpoint_jobs = (size_t)num;
        break;
      case 'H': o.ha = true; break;
      case 'N': o.ha_name = optarg; break;
      case 'a': o.ha_addr = optarg; break;
      case 'L':
        if (parse_num(optarg, &num) || num < 100) return usage(), 2;
        o.lease_ms = (int64_t)num;
        break;
      case 'O': operators = optarg; break;
      case 'A': admins = optarg; break;
      case 'v':
        if (px_log_parse_level(optarg, &lvl)) return usage(), 2;
        px_log_set_level(lvl);
        break;
      default: usage(); return ch == 'h' ? 0 : 2;
    }
  }
  if (!o.config_path || optind != argc) return usage(), 2;
  px_log_set_tag("server");
  umask(077); /* the journal holds scripts and environments: owner only */
  struct px_conf *conf = NULL;
  if (load_conf(o.config_path, &conf)) return 1;
  if ((operators && split_names(conf, operators, &conf->phalanx.operators,
                                &conf->phalanx.noperators)) ||
      (admins && split_names(conf, admins, &conf->phalanx.administrators,
                             &conf->phalanx.nadministrators))) {
    px_conf_free(conf);
    return 1;
  }

  struct sigctx sc;
  sigemptyset(&sc.set);
  sigaddset(&sc.set, SIGTERM);
  sigaddset(&sc.set, SIGINT);
  sigaddset(&sc.set, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &sc.set, NULL); /* inherited by every thread from here on */
  signal(SIGPIPE, SIG_IGN);

  struct px_diag d;
  px_diag_clear(&d);
  int rc = px_server_new(conf, &o, &sc.s, &d);
  if (rc) {
    fprintf(stderr, "phalanx server: %s\n", d.msg[0] ? d.msg : px_strerror(rc));
    px_conf_free(conf);
    /* A controller of several that lost the database while starting (a
     * PostgreSQL restart under it) is as good as a deposed one: its
     * supervisor starts it again as a standby once the database is back. */
    return rc == PX_EIO && o.ha ? PX_HA_EXIT_DEPOSED : 1;
  }
  pthread_t sig_tid;
  pthread_create(&sig_tid, NULL, signal_thread, &sc);
  px_info("listening on %s%s%s", sc.s->opts.socket_path, sc.s->opts.listen ? " and " : "",
          sc.s->opts.listen ? sc.s->opts.listen : "");
  rc = px_server_run(sc.s);
  pthread_kill(sig_tid, SIGUSR2); /* let the signal thread return */
  pthread_join(sig_tid, NULL);
  px_server_free(sc.s);
  px_conf_free(conf);
  return rc == PX_ESTATE && o.ha ? PX_HA_EXIT_DEPOSED : rc ? 1 : 0;
}
