/*
 * emulate.c - many emulated nodes from one process (emulate.h): the epoll
 * loop, and each node's side of the agent protocol (proto/agent_msg.h):
 * register, long poll, heartbeat, reports in batches.
 *
 * Work per event is bounded by what the event concerns; the only scans of
 * every node are the 100 ms tick that starts registrations, polls and
 * heartbeats that are due (10,000 comparisons), and the once-a-second look
 * at real jobs of a previous run.
 */
#include "agent/emulate.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/discover.h"
#include "agent/emu_int.h"
#include "agent/gpu_watch.h"
#include "agent/servers.h"
#include "agent/since.h"
#include "util/hostlist.h"
#include "util/log.h"

#define TICK_MS 100
/* The long poll asks the server to hold it 55 s (the most it allows is 60)
 * rather than its default 20: at 10,000 nodes that is 180 polls a second
 * instead of 500 (docs/operations.md, Scale). */
#define POLL_HOLD_S 55
#define POLL_TIMEOUT_MS ((POLL_HOLD_S + 10) * 1000L)
#define REQ_TIMEOUT_MS 15000L
#define REPORT_BATCH 256

int64_t px_emu_mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t px_emu_wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A request's callback learns its node and its emulator through this. */
struct ctx {
  struct emu *e;
  uint32_t node;
};

static struct ctx *ctx_new(struct emu *e, uint32_t node) {
  struct ctx *c = malloc(sizeof *c);
  if (c) *c = (struct ctx){e, node};
  return c;
}

static int request(struct emu *e, uint32_t node, const char *method, const char *path, const char *body,
                   long timeout_ms, bool long_poll, px_emnet_done_fn done) {
  struct ctx *c = ctx_new(e, node);
  int rc = c ? px_emnet_request(e->net, node, method, path, e->nodes[node].auth, body, timeout_ms, long_poll, done, c)
             : PX_ENOMEM;
  if (rc) free(c);
  return rc;
}

/* ---- injected GPU faults ("NODE gpufault ...", emulate.h) ---- */

static void gpu_fault_done(void *ud, int rc, long status, char *body) {
  struct ctx *c = ud;
  if (rc || status / 100 != 2)
    px_warn("%s: GPU fault report not taken (%s, HTTP %ld)", c->e->nodes[c->node].name, px_strerror(rc), status);
  free(body);
  free(c);
}

static void gpu_faults_read(struct emu *e) {
  char msg[320], node[64];
  ssize_t len;
  while ((len = recv(e->gfd, msg, sizeof msg - 1, MSG_DONTWAIT)) > 0) {
    msg[len] = '\0';
    int used = 0;
    struct px_gpu_fault f;
    uint32_t i = 0;
    if (sscanf(msg, "%63s %n", node, &used) == 1)
      while (i < e->nnodes && strcmp(e->nodes[i].name, node)) i++;
    char *json = i < e->nnodes && used && !px_gpu_fault_parse_note(msg + used, node, &f) ? px_gpu_fault_encode(&f) : NULL;
    if (!json) {
      px_warn("bad GPU fault injection: %s", msg);
      continue;
    }
    if (request(e, i, "POST", "/v1/agent/gpu", json, REQ_TIMEOUT_MS, false, gpu_fault_done))
      px_warn("%s: cannot report its GPU fault", node);
    free(json);
  }
}

static void gpu_faults_open(struct emu *e) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  e->gfd = -1;
  if ((size_t)snprintf(addr.sun_path, sizeof addr.sun_path, "%s/agent.sock", e->o->state_dir) >= sizeof addr.sun_path)
    return;
  unlink(addr.sun_path);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)fd};
  if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) || epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev)) {
    px_warn("no GPU fault injection at %s: %s", addr.sun_path, strerror(errno));
    if (fd >= 0) close(fd);
    return;
  }
  e->gfd = fd;
}

static void backoff(struct enode *n, int64_t *at) {
  *at = px_emu_mono_ms() + n->backoff_ms;
  n->backoff_ms = n->backoff_ms < 2000 ? n->backoff_ms * 2 : 2000;
}

/* ---- reports ---- */

static void mark_dirty(struct emu *e, uint32_t node) {
  struct enode *n = &e->nodes[node];
  if (n->dirty) return;
  n->dirty = true;
  e->dirty[e->ndirty++] = node;
}

void px_emu_queue_report(struct emu *e, uint32_t node, char *json, struct ejob *j) {
  struct enode *n = &e->nodes[node];
  if (!json) return px_error("out of memory queueing a report for %s", n->name);
  if (n->nrq == n->caprq) {
    uint32_t cap = n->caprq ? n->caprq * 2 : 8;
    char **rq = realloc(n->rq, cap * sizeof *rq);
    struct ejob **rj = rq ? realloc(n->rq_job, cap * sizeof *rj) : NULL;
    if (rq) n->rq = rq;
    if (!rj) return free(json), px_error("out of memory queueing a report for %s", n->name);
    n->rq_job = rj, n->caprq = cap;
  }
  n->rq[n->nrq] = json;
  n->rq_job[n->nrq++] = j;
  mark_dirty(e, node);
}

/* 2xx, or a rejection that retrying cannot cure (as agent_link.c). */
static bool settled(long status) {
  return (status >= 200 && status < 300) ||
         (status >= 400 && status < 500 && status != 404 && status != 409 && status != 401);
}

static void drop_front(struct emu *e, struct enode *n, uint32_t i, long status) {
  if (status >= 300) px_error("%s: report rejected (HTTP %ld): %s", n->name, status, n->rq[i]);
  free(n->rq[i]);
  n->rq[i] = NULL;
  if (n->rq_job[i]) px_emu_acked(e, n->rq_job[i]);
}

static void reports_done(void *ud, int rc, long status, char *body) {
  struct ctx *c = ud;
  struct emu *e = c->e;
  struct enode *n = &e->nodes[c->node];
  json_t *j = !rc && status == 200 && body ? json_loads(body, 0, NULL) : NULL;
  json_t *st = json_object_get(j, "status");
  uint32_t sent = n->nsent, kept = 0;
  n->rep_busy = false;
  n->nsent = 0;
  if (json_is_array(st) && json_array_size(st) == sent) {
    for (uint32_t i = 0; i < sent; i++) {
      long s = (long)json_integer_value(json_array_get(st, i));
      if (settled(s)) drop_front(e, n, i, s);
      else n->rq[kept] = n->rq[i], n->rq_job[kept++] = n->rq_job[i], n->registered &= s != 404 && s != 409;
    }
    memmove(n->rq + kept, n->rq + sent, (n->nrq - sent) * sizeof *n->rq);
    memmove(n->rq_job + kept, n->rq_job + sent, (n->nrq - sent) * sizeof *n->rq_job);
    n->nrq -= sent - kept;
    n->backoff_ms = 100;
  } else {
    if (!rc) px_warn("%s: reports: HTTP %ld", n->name, status);
    kept = 1;
  }
  if (kept) backoff(n, &n->rep_at_ms);
  if (n->nrq) mark_dirty(e, c->node);
  json_decref(j);
  free(body);
  free(c);
}

static void send_reports(struct emu *e, uint32_t node, int64_t now) {
  struct enode *n = &e->nodes[node];
  if (!n->nrq || n->rep_busy || !n->registered || n->silent || now < n->rep_at_ms) return;
  uint32_t k = n->nrq < REPORT_BATCH ? n->nrq : REPORT_BATCH;
  char *body = px_task_reports_encode(n->rq, k);
  if (body && request(e, node, "POST", "/v1/agent/report", body, REQ_TIMEOUT_MS, false, reports_done) == 0)
    n->rep_busy = true, n->nsent = k;
  free(body);
}

/* Reports leave at the end of the loop's turn, so that ends found in one
 * turn go together; a node waiting for its retry time stays on the list. */
static void flush_dirty(struct emu *e, int64_t now) {
  uint32_t keep = 0;
  for (uint32_t i = 0; i < e->ndirty; i++) {
    uint32_t node = e->dirty[i];
    struct enode *n = &e->nodes[node];
    send_reports(e, node, now);
    if (n->nrq > n->nsent && !n->rep_busy) e->dirty[keep++] = node;
    else n->dirty = false;
  }
  e->ndirty = keep;
}

/* ---- registration, heartbeat, poll ---- */

static void register_done(void *ud, int rc, long status, char *body) {
  struct ctx *c = ud;
  struct emu *e = c->e;
  struct enode *n = &e->nodes[c->node];
  n->reg_busy = false;
  if (!rc && status >= 200 && status < 300) {
    json_t *j = body ? json_loads(body, 0, NULL) : NULL;
    json_t *hb = json_object_get(j, "heartbeat_s");
    if (json_is_integer(hb) && json_integer_value(hb) > 0) e->heartbeat_s = (int)json_integer_value(hb);
    json_decref(j);
    n->registered = true;
    n->backoff_ms = 100;
    /* first heartbeats spread over the interval: 10,000 nodes must not beat together */
    n->next_hb_ms = px_emu_mono_ms() + (int64_t)e->heartbeat_s * 1000 * (c->node + 1) / e->nnodes;
    n->poll_at_ms = 0;
    if (n->nrq) mark_dirty(e, c->node);
  } else if ((!rc && status == 503) || (rc == PX_ECONNECT && strchr(e->o->server, ','))) {
    /* a standby (a takeover under way), or a controller gone while the list
     * holds others (a request tries one; the next goes to another): soon
     * again, not after a pause grown over the outage */
    n->reg_at_ms = px_emu_mono_ms() + PX_TAKEOVER_RETRY_MS;
  } else {
    if (!rc) px_warn("%s: register: HTTP %ld %s", n->name, status, body ? body : "");
    backoff(n, &n->reg_at_ms);
  }
  free(body);
  free(c);
}

static void send_register(struct emu *e, uint32_t node) {
  struct enode *n = &e->nodes[node];
  struct px_node_res res = {0};
  if (px_discover_gpus_emulated(&res, e->o->gpus[0] ? e->o->gpus : "0", n->name)) return;
  struct px_node_report r = {.cpus = e->o->cpus, .mem_mib = e->o->mem_mib, .gpus = res.gpus, .ngpus = res.ngpus};
  snprintf(r.node, sizeof r.node, "%s", n->name);
  snprintf(r.addr, sizeof r.addr, "127.0.0.1");
  snprintf(r.version, sizeof r.version, "%s", PX_AGENT_VERSION);
  r.since = e->since;
  r.jobs = calloc(n->njobs ? n->njobs : 1, sizeof *r.jobs);
  for (uint32_t i = 0; r.jobs && i < n->njobs; i++) {
    const struct ejob *j = n->jobs[i];
    struct px_known_job *k = &r.jobs[r.njobs++];
    k->job_id = j->job_id;
    snprintf(k->state, sizeof k->state, "%s", j->ended ? j->end.state : "RUNNING");
    k->exit_code = j->end.exit_code;
    k->term_signal = j->end.term_signal;
  }
  char *body = r.jobs ? px_node_report_encode(&r) : NULL;
  free(r.jobs);
  if (body && request(e, node, "POST", "/v1/agent/register", body, REQ_TIMEOUT_MS, false, register_done) == 0)
    n->reg_busy = true;
  free(body);
}

static void heartbeat_done(void *ud, int rc, long status, char *body) {
  struct ctx *c = ud;
  struct enode *n = &c->e->nodes[c->node];
  n->hb_busy = false;
  if (rc || status == 404 || status == 409) n->registered = false; /* the server lost us: register again */
  free(body);
  free(c);
}

static void send_heartbeat(struct emu *e, uint32_t node) {
  struct enode *n = &e->nodes[node];
  char body[128];
  snprintf(body, sizeof body, "{\"node\":\"%s\"}", n->name);
  if (request(e, node, "POST", "/v1/agent/heartbeat", body, REQ_TIMEOUT_MS, false, heartbeat_done) == 0)
    n->hb_busy = true;
}

static void take_orders(struct emu *e, uint32_t node, const struct px_agent_work *w) {
  for (uint32_t k = 0; k < w->nlaunch; k++) px_emu_launch(e, node, &w->launch[k]);
  for (uint32_t k = 0; k < w->nsignal; k++) px_emu_signal(e, node, &w->signal[k]);
  for (uint32_t k = 0; k < w->nstep; k++) { /* steps are not emulated: their share fails at once */
    struct px_task_report r = {.job_id = w->step[k].job_id, .restart_count = w->step[k].restart_count,
                               .is_step = true, .step_id = w->step[k].step_id, .exit_code = 1,
                               .end_time = time(NULL)};
    snprintf(r.node, sizeof r.node, "%s", e->nodes[node].name);
    snprintf(r.state, sizeof r.state, "FAILED");
    px_emu_queue_report(e, node, px_task_report_encode(&r), NULL);
  }
}

static void poll_done(void *ud, int rc, long status, char *body) {
  struct ctx *c = ud;
  struct emu *e = c->e;
  struct enode *n = &e->nodes[c->node];
  struct px_agent_work w;
  struct px_diag d;
  n->polling = false;
  if (n->silent) { /* a silent node hears nothing */
  } else if (!rc && status == 200 && body && px_agent_work_decode(body, &w, &d) == 0) {
    n->seq = w.seq; /* the server's numbering, even a lower one: another controller's (outbox.c) */
    take_orders(e, c->node, &w);
    px_agent_work_fini(&w);
    n->poll_at_ms = 0;
  } else if (rc != PX_ETIMEOUT) {
    if (!rc) px_warn("%s: work: HTTP %ld", n->name, status);
    if (!rc && (status == 404 || status == 409 || status == 401)) n->registered = false;
    if (!rc && status == 503) n->poll_at_ms = px_emu_mono_ms() + PX_TAKEOVER_RETRY_MS; /* a standby: soon again */
    else backoff(n, &n->poll_at_ms);
  }
  free(body);
  free(c);
}

static void send_poll(struct emu *e, uint32_t node) {
  struct enode *n = &e->nodes[node];
  char path[256];
  snprintf(path, sizeof path, "/v1/agent/work?node=%s&after=%llu&timeout=%d", n->name, (unsigned long long)n->seq,
           POLL_HOLD_S);
  if (request(e, node, "GET", path, NULL, POLL_TIMEOUT_MS, true, poll_done) == 0) n->polling = true;
}

/* Starts what is due on every node (see the file's comment). */
static void tick(struct emu *e, int64_t now) {
  for (uint32_t i = 0; i < e->nnodes; i++) {
    struct enode *n = &e->nodes[i];
    if (n->silent) continue;
    if (!n->registered) {
      if (!n->reg_busy && now >= n->reg_at_ms) send_register(e, i);
      continue;
    }
    if (!n->polling && now >= n->poll_at_ms) send_poll(e, i);
    if (!n->hb_busy && now >= n->next_hb_ms) {
      send_heartbeat(e, i);
      n->next_hb_ms = now + (int64_t)e->heartbeat_s * 1000;
    }
  }
}

/* SIGUSR1: STATE_DIR/silent names the nodes that play dead (emulate.h). */
static void read_silent(struct emu *e) {
  char path[PATH_MAX + 16], line[128];
  snprintf(path, sizeof path, "%s/silent", e->o->state_dir);
  bool *want = calloc(e->nnodes, sizeof *want);
  FILE *f = fopen(path, "re");
  while (want && f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    for (uint32_t i = 0; i < e->nnodes; i++)
      if (!strcmp(e->nodes[i].name, line)) want[i] = true;
  }
  if (f) fclose(f);
  for (uint32_t i = 0; want && i < e->nnodes; i++) {
    struct enode *n = &e->nodes[i];
    if (want[i] != n->silent) px_info("%s: %s", n->name, want[i] ? "goes silent" : "speaks again");
    if (n->silent && !want[i]) n->registered = false, n->reg_at_ms = 0;
    n->silent = want[i];
  }
  free(want);
}

/* ---- setup and the loop ---- */

static char *auth_line(const struct px_emu_opts *o, const char *node) {
  if (!o->token_dir[0]) return NULL;
  char path[PATH_MAX + 80], tok[1024] = "", *line = NULL;
  snprintf(path, sizeof path, "%s/%s.token", o->token_dir, node);
  FILE *f = fopen(path, "re");
  if (f && fgets(tok, sizeof tok, f)) {
    tok[strcspn(tok, "\r\n")] = '\0';
    size_t len = strlen(tok) + 32;
    if ((line = malloc(len))) snprintf(line, len, "Authorization: Bearer %s", tok);
  }
  if (f) fclose(f);
  else px_warn("%s: no credential at %s", node, path);
  return line;
}

static int nodes_init(struct emu *e) {
  struct px_strvec names = {0};
  struct px_diag d;
  if (px_hostlist_expand(e->o->nodes, 0, &names, &d)) {
    px_error("--emulate-nodes: %s", d.msg);
    return PX_EINVAL;
  }
  e->nnodes = (uint32_t)names.len;
  e->nodes = calloc(e->nnodes ? e->nnodes : 1, sizeof *e->nodes);
  e->dirty = calloc(e->nnodes ? e->nnodes : 1, sizeof *e->dirty);
  for (uint32_t i = 0; e->nodes && i < e->nnodes; i++) {
    struct enode *n = &e->nodes[i];
    snprintf(n->name, sizeof n->name, "%s", names.v[i]);
    n->auth = auth_line(e->o, n->name);
    n->backoff_ms = 100;
  }
  px_strvec_free_all(&names);
  return e->nodes && e->dirty && e->nnodes ? 0 : PX_ENOMEM;
}

static void nodes_fini(struct emu *e) {
  for (uint32_t i = 0; e->nodes && i < e->nnodes; i++) {
    for (uint32_t k = 0; k < e->nodes[i].nrq; k++) free(e->nodes[i].rq[k]);
    free(e->nodes[i].rq);
    free(e->nodes[i].rq_job);
    free(e->nodes[i].auth);
  }
  free(e->nodes);
  free(e->dirty);
}

/* One socket per node's long poll, and some: raise the soft limit to the hard one. */
static void raise_nofile(uint32_t want) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  if (rl.rlim_cur < rl.rlim_max) rl.rlim_cur = rl.rlim_max, setrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < want) px_warn("open files limited to %llu: fewer than the %u sockets wanted",
                                  (unsigned long long)rl.rlim_cur, want);
}

static bool on_signals(struct emu *e) {
  struct signalfd_siginfo si;
  bool quit = false;
  while (read(e->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
    quit |= si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT;
    if (si.ssi_signo == SIGUSR1) read_silent(e);
  }
  px_emu_reap(e);
  return quit;
}

static int timeout_until(int64_t now, int64_t a, int64_t b) {
  int64_t t = a < b ? a : b;
  return t <= now ? 0 : t - now > 1000 ? 1000 : (int)(t - now);
}

static void loop(struct emu *e) {
  struct epoll_event ev[256];
  int64_t next_tick = 0, next_scan = px_emu_mono_ms() + 1000, sim_due = 0;
  for (;;) {
    int64_t now = px_emu_mono_ms(), wall = px_emu_wall_ms();
    int64_t net = px_emnet_due_ms(e->net) < 0 ? INT64_MAX : px_emnet_due_ms(e->net);
    int64_t sim = sim_due == INT64_MAX ? INT64_MAX : now + (sim_due - wall);
    int n = epoll_wait(e->epfd, ev, 256, timeout_until(now, next_tick < net ? next_tick : net, sim));
    if (n < 0 && errno != EINTR) break;
    bool quit = false;
    for (int i = 0; i < n; i++) {
      if (ev[i].data.u64 == (uint64_t)e->sfd) quit |= on_signals(e);
      else if (e->gfd >= 0 && ev[i].data.u64 == (uint64_t)e->gfd) gpu_faults_read(e);
      else px_emnet_socket(e->net, ev[i].data.u64, ev[i].events);
    }
    if (quit) break;
    now = px_emu_mono_ms();
    px_emnet_timeout(e->net, now);
    sim_due = px_emu_sim_due(e, px_emu_wall_ms());
    if (now >= next_tick) tick(e, now), next_tick = now + TICK_MS;
    if (now >= next_scan) px_emu_check_foreign(e), next_scan = now + 1000;
    flush_dirty(e, now);
    if (e->log) fflush(e->log);
  }
}

static int setup_signals(struct emu *e) {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD), sigaddset(&mask, SIGTERM), sigaddset(&mask, SIGINT), sigaddset(&mask, SIGUSR1);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  signal(SIGPIPE, SIG_IGN);
  e->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)e->sfd};
  return e->sfd < 0 || epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->sfd, &ev) ? PX_EIO : 0;
}

int px_emu_run(const struct px_emu_opts *o) {
  static struct emu e;
  memset(&e, 0, sizeof e);
  e.o = o;
  e.heartbeat_s = o->heartbeat_s > 0 ? o->heartbeat_s : 10;
  e.sfd = e.gfd = -1;
  px_log_set_tag("agent (emulated nodes)");
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = nodes_init(&e);
  if (!rc) raise_nofile(e.nnodes + 256);
  if (!rc && (e.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) rc = PX_EIO;
  if (!rc) rc = setup_signals(&e);
  if (!rc) rc = px_emnet_new(o->server, o->ca_file, e.epfd, e.nnodes + 128, &e.net);
  if (!rc && (rc = px_emu_log_open(&e))) px_error("cannot write the state log in %s", o->state_dir);
  if (!rc) e.since = px_agent_since(o->state_dir);
  if (!rc) {
    px_info("%u emulated nodes, %s jobs, server %s", e.nnodes, o->real_jobs ? "real" : "simulated", o->server);
    read_silent(&e);
    gpu_faults_open(&e);
    loop(&e);
    if (o->kill_jobs_on_exit) px_emu_stop_jobs(&e);
    px_info("stopping: %llu jobs started, %llu ended", (unsigned long long)e.launched,
            (unsigned long long)e.ended);
  }
  px_emnet_free(e.net);
  px_emu_jobs_free(&e);
  nodes_fini(&e);
  if (e.sfd >= 0) close(e.sfd);
  if (e.gfd >= 0) {
    close(e.gfd);
    char sock[PATH_MAX + 16];
    snprintf(sock, sizeof sock, "%s/agent.sock", o->state_dir);
    unlink(sock);
  }
  if (e.epfd > 0) close(e.epfd);
  curl_global_cleanup();
  return rc ? 2 : 0;
}
