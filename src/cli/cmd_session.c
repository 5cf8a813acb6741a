/*
 * cmd_session.c - `phalanx session start [OPTIONS] [--idle D] -- CMD ARGS`:
 * a web application (a notebook, a dashboard, any server that listens on
 * $PORT) as a job, reached through the server (docs/interactive.md).
 *
 * The job is an ordinary one (salloc's options: --gpus, -t, -p, -A ...; it
 * shows in squeue and is charged to fair share) whose script runs CMD
 * behind the session host (`phalanxd session-host`, agent/session_host.c)
 * on a port chosen here at random, written in the job's comment
 * ("phalanx-session port=P") where the server's reverse proxy
 * (/sessions/{job}/, server/http/api_session.c) finds it. The job ends at
 * its time limit, when nobody has used it for --idle (default 1 hour), or
 * with `phalanx cancel`.
 *
 * Once the job runs and the application answers, the URL is printed, with a
 * token for the caller (from the dashboard's sign-in link, POST /v1/ui/link)
 * that the first visit turns into a cookie for this session's path.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_common.h"
#include "cli/step_files.h"
#include "commands.h"

#define READY_WAIT_S 120

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }

static unsigned random_port(void) {
  unsigned r = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (read(fd, &r, sizeof r) != (ssize_t)sizeof r) r ^= (unsigned)clock();
    close(fd);
  }
  return 30000 + r % 30000;
}

/* "#!/bin/sh ... exec PHALANXD session-host --port P --idle-s N -- CMD..." */
static char *session_script(const char *daemon, unsigned port, int64_t idle_s, char **cmd) {
  char *text = NULL, num[32];
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  fputs("#!/bin/sh\n# phalanx session: the application behind the session host (docs/interactive.md)\nexec ", f);
  px_step_put_quoted(f, daemon);
  fputs("session-host --port ", f);
  snprintf(num, sizeof num, "%u --idle-s %lld -- ", port, (long long)idle_s);
  fputs(num, f);
  for (char **a = cmd; *a; a++) px_step_put_quoted(f, *a);
  fputc('\n', f);
  fclose(f);
  return text;
}

static int fill_session(struct px_jobspec *s, const struct px_cli_extra *x, const char *daemon, unsigned port,
                        int64_t idle_s, char **cmd) {
  char cwd[4096], name[4096], note[64];
  if (!getcwd(cwd, sizeof cwd)) return PX_EIO;
  s->uid = (uint32_t)getuid();
  s->gid = (uint32_t)getgid();
  snprintf(name, sizeof name, "%s", cmd[0]);
  snprintf(note, sizeof note, "phalanx-session port=%u", port);
  free(s->comment);
  if ((!s->name && !(s->name = strdup(basename(name)))) || !(s->submit_dir = strdup(cwd)) ||
      (!s->workdir && !(s->workdir = strdup(cwd))) || !(s->comment = strdup(note)) ||
      !(s->script = session_script(daemon, port, idle_s, cmd)))
    return PX_ENOMEM;
  if (!s->env && (!x->export_spec || strcmp(x->export_spec, "NONE")) && px_step_copy_environ(&s->env))
    return PX_ENOMEM;
  return 0;
}

/* The session's address for the caller: the server's root, a token. */
static int session_url(struct px_cmd *c, uint64_t id, int64_t life_s, char *url, size_t n) {
  char path[64];
  snprintf(path, sizeof path, "/v1/ui/link?lifetime_s=%lld", (long long)(life_s < 60 ? 60 : life_s));
  long status = 0;
  json_t *resp = NULL;
  if (px_cmd_call(c, "POST", path, NULL, &status, &resp)) return 1;
  const char *base = json_string_value(json_object_get(resp, "base"));
  const char *link = json_string_value(json_object_get(resp, "url"));
  const char *tok = link ? strstr(link, "#token=") : NULL;
  int rc = 1;
  if (status / 100 != 2 || !base || !tok) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    px_cmd_error(c, "session %llu runs, but no address for it: %s", (unsigned long long)id, msg);
  } else {
    size_t root = strlen(base) >= 4 && !strcmp(base + strlen(base) - 4, "/ui/") ? strlen(base) - 4 : strlen(base);
    snprintf(url, n, "%.*s/sessions/%llu/?phalanx_token=%s", (int)root, base, (unsigned long long)id, tok + 7);
    rc = 0;
  }
  json_decref(resp);
  return rc;
}

/* Until the application answers through the server (not 502/503). */
static bool wait_ready(struct px_cmd *c, uint64_t id) {
  char path[64];
  snprintf(path, sizeof path, "/sessions/%llu/", (unsigned long long)id);
  for (int i = 0; i < READY_WAIT_S * 5; i++) {
    struct px_http_reply r = {0};
    struct px_diag d;
    bool ok = !px_client_request(&c->client, "GET", path, NULL, 0, &r, &d) && r.status != 502 && r.status != 503;
    free(r.body);
    if (ok) return true;
    char st[32];
    int ec;
    if (i % 5 == 0 && (px_step_job_state(c, id, st, sizeof st, &ec) || strcmp(st, "RUNNING"))) return false;
    struct timespec t = {0, 200 * 1000000L};
    nanosleep(&t, NULL);
  }
  return false;
}

/* The options before "--" into o (o[0]: "start", the parser's argv[0]),
 * --idle taken out; *dashes: the index of "--". 0, or 2 after a message. */
static int split_options(struct px_cmd *c, int argc, char **argv, char **o, int *no, int64_t *idle_s, int *dashes) {
  *no = 0;
  o[(*no)++] = argv[1];
  int i = 2;
  for (; i < argc && strcmp(argv[i], "--"); i++) {
    const char *v = NULL;
    if (!strcmp(argv[i], "--idle") && i + 1 < argc) v = argv[++i];
    else if (!strncmp(argv[i], "--idle=", 7)) v = argv[i] + 7;
    else if (*no < 255) o[(*no)++] = argv[i];
    if (v && (px_cli_duration_parse(v, idle_s) || *idle_s <= 0))
      return px_cmd_error(c, "--idle=%s: a duration such as 30 (minutes), 1:00:00 or 2-0", v), 2;
  }
  o[*no] = NULL;
  *dashes = i;
  if (i + 1 >= argc) return px_cmd_error(c, "usage: phalanx session start [--gpus N] [-t TIME] [--idle TIME] "
                                            "[OPTIONS] -- COMMAND [ARGS...]"), 2;
  return 0;
}

static int start(struct px_cmd *c, struct px_jobspec *spec, const struct px_cli_extra *x, int64_t idle_s,
                 char **cmd) {
  char self[4096], daemon[4200];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1); /* phalanxd sits beside us */
  if (len <= 0) return px_cmd_error(c, "cannot find my own path: %s", strerror(errno)), 1;
  self[len] = '\0';
  snprintf(daemon, sizeof daemon, "%s/%s", dirname(self), PX_DAEMON_BINARY);
  unsigned port = random_port();
  int rc = fill_session(spec, x, daemon, port, idle_s, cmd);
  if (rc) return px_cmd_error(c, "%s", px_strerror(rc)), 1;
  uint64_t id;
  if (px_step_allocate(c, spec, &id)) return 1;
  printf("Submitted session job %llu\n", (unsigned long long)id);
  fflush(stdout);
  struct sigaction old[2];
  px_step_catch(on_signal, old); /* Ctrl-C while it waits: no session is left behind */
  rc = px_step_wait_running(c, id, &interrupted);
  px_step_uncatch(old);
  if (rc) return interrupted ? (px_step_cancel_job(c, id), 1) : 1;
  char url[4800];
  if (!wait_ready(c, id)) {
    px_cmd_error(c, "session %llu: the application did not answer within %d s (see the job's output)",
                 (unsigned long long)id, READY_WAIT_S);
    return 1;
  }
  int64_t life = spec->time_limit_s > 0 && spec->time_limit_s < 30 * 86400 ? spec->time_limit_s : 12 * 3600;
  if (session_url(c, id, life, url, sizeof url)) return 1;
  printf("Session %llu is ready: %s\n", (unsigned long long)id, url);
  char idle[32];
  px_cli_fmt_hms(idle, sizeof idle, idle_s); /* Slurm's [D-]HH:MM:SS: 30 s is not "0 minutes" */
  printf("It ends after %s unused, at its time limit, or with: phalanx cancel %llu\n", idle,
         (unsigned long long)id);
  return 0;
}

int px_verb_session(int argc, char **argv) {
  struct px_cmd c;
  px_cmd_init(&c, "phalanx session", false);
  int rc = 2, no = 0, dashes = 0;
  int64_t idle_s = 3600;
  char *o[256];
  if (argc < 2 || strcmp(argv[1], "start"))
    px_cmd_error(&c, "usage: phalanx session start [--gpus N] [-t TIME] [--idle TIME] [OPTIONS] -- COMMAND [ARGS...]");
  else if (!(rc = split_options(&c, argc, argv, o, &no, &idle_s, &dashes))) {
    struct px_jobspec spec;
    px_jobspec_init(&spec);
    struct px_cli_extra x = {0};
    struct px_cli_optlist l = {0};
    struct px_diag d;
    int first = 0;
    px_diag_clear(&d);
    if (px_cli_parse_argv(PX_TOOL_SALLOC, no, o, &l, &first, &d) || px_cli_apply(&l, &spec, &x, c.now, &d))
      rc = px_cmd_option_error(&c, &x, d.msg);
    else if (first < no)
      rc = 2, px_cmd_error(&c, "%s: put the command after --", o[first]);
    else
      rc = start(&c, &spec, &x, idle_s, argv + dashes + 1);
    px_cli_optlist_fini(&l);
    px_cli_extra_fini(&x);
    px_jobspec_fini(&spec);
  }
  px_cmd_fini(&c);
  return rc;
}
