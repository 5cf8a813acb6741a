/*
 * server.c - building and tearing down the server object (state.h): state
 * directory, JWT key, store (and a second connection for API reads), core,
 * recovery from the journal, then the HTTP listeners last, so that nobody is
 * answered before the state is whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/event.h"
#include "server/state.h"
#include "server/svc/svc_server.h"
#include "util/log.h"

#define JWT_KEY_BYTES 32

int px_server_jwt_key(const char *state_dir, bool create, unsigned char *key, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/jwt.key", state_dir);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && create) {
    unsigned char k[JWT_KEY_BYTES];
    if (getrandom(k, sizeof k, 0) != (ssize_t)sizeof k) return PX_EIO;
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, k, sizeof k) != (ssize_t)sizeof k || fsync(fd)) {
      if (fd >= 0) close(fd);
      return PX_EIO;
    }
    close(fd);
    fd = open(path, O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) return PX_ENOENT;
  ssize_t n = read(fd, key, *len);
  close(fd);
  if (n < 16) return PX_EINVAL; /* a short key is no key */
  *len = (size_t)n;
  return 0;
}

static char *path_in(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* Options default to the configuration, then to built-in values. */
static int resolve_opts(struct px_server *s, const struct px_server_opts *o, struct px_diag *d) {
  const struct px_conf_phalanx *p = &s->conf->phalanx;
  s->opts = *o;
  if (!s->opts.state_dir) s->opts.state_dir = p->state_dir ? p->state_dir : "/var/lib/phalanx";
  if (!s->opts.listen) s->opts.listen = p->listen;
  if (!s->opts.node_timeout_s)
    s->opts.node_timeout_s = p->node_down_timeout_s > 0 ? p->node_down_timeout_s : 300;
  if (!s->opts.max_body_bytes) s->opts.max_body_bytes = PX_SERVER_MAX_BODY;
  if (!s->opts.checkpoint_jobs) s->opts.checkpoint_jobs = 1000;
  /* 0711: users must reach the socket inside; the files stay private (umask). */
  if (mkdir(s->opts.state_dir, 0711) == 0) chmod(s->opts.state_dir, 0711);
  else if (errno != EEXIST)
    return px_diag_set(d, PX_EIO, -1, "state dir %s: %s", s->opts.state_dir, strerror(errno));
  s->owned_socket = NULL;
  s->owned_url = NULL;
  if (!s->opts.socket_path) {
    /* The parser derives SocketPath from StateDir; a --state-dir moves it along. */
    char derived[4096];
    snprintf(derived, sizeof derived, "%s/phalanx.sock", p->state_dir ? p->state_dir : "");
    s->opts.socket_path = p->socket_path;
    if (!s->opts.socket_path || (o->state_dir && !strcmp(p->socket_path, derived)))
      s->opts.socket_path = s->owned_socket = path_in(s->opts.state_dir, "phalanx.sock");
  }
  if (!s->opts.store_url) {
    s->opts.store_url = p->store_url;
    if (!s->opts.store_url) s->opts.store_url = s->owned_url = path_in(s->opts.state_dir, "state.db");
  }
  return s->opts.socket_path && s->opts.store_url ? 0 : PX_ENOMEM;
}

/* After replay: every running job waits for its agents to confirm it
 * (nodes.c: one its agent does not know is failed or requeued); those the
 * core could not take back (px_core_apply's START) hold their nodes drained
 * until they end (events.c). */
void px_server_hold_recovered(struct px_server *s, int64_t now) {
  for (size_t i = 0; i < s->njobs; i++) {
    struct px_sjob *j = s->jobs[i];
    if (j->state != PX_JOB_RUNNING) continue;
    j->unconfirmed = true;
    if (!j->recovered) continue;
    for (uint32_t k = 0; k < j->nalloc; k++) px_node_hold_recovered(s, j->alloc[k].node, now);
  }
}

/* A controller of several (--ha) waits for its database to come up: it
 * may be restarting too, and the supervisor would only start us again.
 * open_fn: px_store_open, or px_store_open_serial for a connection only used
 * under a lock (the API readers' rstore). */
static int open_store(struct px_server *s, int (*open_fn)(const char *, struct px_store **, struct px_diag *),
                      struct px_store **out, struct px_diag *d) {
  int rc;
  bool said = false;
  while ((rc = open_fn(s->opts.store_url, out, d)) == PX_ECONNECT && s->opts.ha &&
         !atomic_load(&s->stop)) {
    if (!said) px_warn("%s: retrying every second", d->msg);
    said = true;
    nanosleep(&(struct timespec){1, 0}, NULL);
  }
  return rc;
}

/* The name of the user the server runs as: sinfo -R shows it beside the
 * server's own drains, as Slurm shows its SlurmUser. */
static void self_user(char *out, size_t len) {
  struct passwd pw, *res = NULL;
  char buf[1024];
  uid_t uid = geteuid();
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res) snprintf(out, len, "%s", pw.pw_name);
  else snprintf(out, len, "%u", (unsigned)uid); /* no passwd entry: the number stands in */
}

static int open_state(struct px_server *s, struct px_diag *d) {
  int err = 0;
  if (!(s->core = px_core_new(s->conf, 1, &err)))
    return px_diag_set(d, err ? err : PX_ENOMEM, -1, "scheduling core: %s", px_strerror(err));
  int rc = open_store(s, px_store_open, &s->store, d);
  if (!rc) rc = open_store(s, px_store_open_serial, &s->rstore, d); /* used under rstore_lock only */
  if (!rc) rc = px_ha_start(s, d); /* before recovery reads the store (ha.c) */
  if (rc) return rc;
  s->nodes = calloc(s->conf->nnodes ? s->conf->nnodes : 1, sizeof *s->nodes);
  if (!s->nodes) return PX_ENOMEM;
  self_user(s->self_user, sizeof s->self_user);
  int64_t now = time(NULL);
  for (uint32_t i = 0; i < s->conf->nnodes; i++) {
    if (px_smap_put(&s->node_names, s->conf->nodes[i].name, i)) return PX_ENOMEM;
    struct px_event ev = {.kind = PX_EV_NODE_DOWN, .node = i, .reason = "Not registered", .by = s->self_user};
    struct px_event_result res;
    px_events_apply(s, &ev, now, &res); /* until its agent registers */
  }
  s->next_job_id = 1;
  int64_t t0 = px_now_mono_ns();
  if ((rc = px_journal_recover(s, d))) return rc;
  if (!s->ha) px_server_hold_recovered(s, now); /* with --ha: when it takes over (ha.c) */
  px_info("recovered %zu jobs, journal seq %llu, in %.3f s", s->njobs,
          (unsigned long long)s->seq, (double)(px_now_mono_ns() - t0) / 1e9);
  return 0;
}

int px_server_new(struct px_conf *conf, const struct px_server_opts *o, struct px_server **out,
                  struct px_diag *d) {
  struct px_server *s = calloc(1, sizeof *s);
  unsigned char key[256];
  size_t keylen = sizeof key;
  *out = NULL;
  if (!s) return PX_ENOMEM;
  s->conf = conf;
  px_queue_init(&s->queue);
  px_commit_init(&s->commit);
  px_snapbox_init(&s->snaps);
  pthread_mutex_init(&s->rstore_lock, NULL);
  pthread_rwlock_init(&s->acct_lock, NULL);
  px_actions_init(&s->acts);
  int rc = resolve_opts(s, o, d);
  if (!rc && px_server_jwt_key(s->opts.state_dir, true, key, &keylen)) keylen = 0;
  if (!rc && keylen) memcpy(s->jwt_key, key, s->jwt_key_len = keylen);
  if (!rc && !(s->svc = px_svc_server_new())) rc = PX_ENOMEM;
  if (!rc) rc = open_state(s, d);
  if (!rc && (px_auth_new(conf, keylen ? key : NULL, keylen, o->munge_socket, &s->auth) ||
              !(s->rl = px_ratelimit_new(o->rate_per_s, o->rate_burst)) ||
              !(s->metrics = px_metrics_new()) || !(s->sdiag = px_sdiag_new(time(NULL))) || !(s->outbox = px_outbox_new(conf))))
    rc = PX_ENOMEM;
  if (!rc && (rc = px_publish(s, time(NULL)))) px_diag_set(d, rc, -1, "first snapshot failed");
  if (!rc) rc = px_snapbox_start_warmer(&s->snaps);
  if (!rc) rc = px_http_start(s, d);
  if (rc) {
    px_server_free(s);
    return rc;
  }
  s->start_mono_ns = px_now_mono_ns();
  *out = s;
  return 0;
}

/* Answers what is still queued: the server is going away. */
static void drain_queue(struct px_server *s) {
  struct px_req *r = px_queue_take(&s->queue, 0);
  while (r) {
    struct px_req *next = r->next;
    px_req_error(r, 503, "UNAVAILABLE", "server is shutting down");
    px_req_done(r);
    r = next;
  }
}

void px_server_free(struct px_server *s) {
  if (!s) return;
  px_queue_stop(&s->queue);
  drain_queue(s);
  if (s->outbox) px_outbox_stop(s->outbox);
  px_snapbox_stop(&s->snaps);
  px_snapbox_join_warmer(&s->snaps);
  px_http_stop(s);
  drain_queue(s);
  px_jobs_free_all(s);
  px_smap_fini(&s->node_names);
  px_gpu_free_all(s);
  free(s->nodes);
  px_commit_fini(&s->commit); /* after the HTTP threads: no leader is left */
  px_ha_stop(s);
  px_u64vec_fini(&s->acct_pending);
  px_archive_free(s);
  px_actions_fini(&s->acts);
  px_core_free(s->core);
  px_store_close(s->store);
  px_store_close(s->rstore);
  px_auth_free(s->auth);
  px_ratelimit_free(s->rl);
  px_metrics_free(s->metrics);
  px_sdiag_free(s->sdiag);
  px_outbox_free(s->outbox);
  px_steps_free(s->steps);
  px_mail_free(s->mailer);
  json_decref(s->usage);
  json_decref(s->usage_nodes);
  px_svc_server_free(s->svc);
  px_blob_unref(s->state_metrics);
  px_blob_unref(s->nodes_blob);
  px_blob_unref(s->parts_blob);
  px_pub_nodes_free(s->pub_nodes);
  px_blob_unref(s->shares_blob);
  px_blob_unref(s->resv_blob);
  json_decref(s->resv_created);
  json_decref(s->resv_deleted);
  px_snapbox_fini(&s->snaps);
  px_queue_fini(&s->queue);
  pthread_mutex_destroy(&s->rstore_lock);
  pthread_rwlock_destroy(&s->acct_lock);
  free(s->owned_socket);
  free(s->owned_url);
  free(s);
}
