/*
 * ha.c - high availability (issue 16): several controllers on one
 * PostgreSQL store, one leading. docs/operations.md "High availability"
 * says how each failure is handled; in short:
 *
 *   - the lease is a row in the store with an expiry on the DATABASE's
 *     clock (store.h); a standby takes it only once it has expired, and
 *     the term goes up by one with every takeover;
 *   - the leader renews it every lease/6 from a thread of its own with a
 *     connection of its own (a long commit or cycle never delays it), and
 *     acts only until lease - lease/10 after it SENT the last renewal that
 *     succeeded (its own monotonic clock): the database gave the lease no
 *     earlier than that, so the leader stops before any standby may start;
 *   - every journal write checks the term inside its transaction
 *     (store.h, fencing) and agents refuse orders of a lower term than
 *     they have seen (X-Phalanx-Term), so a leader that was paused past
 *     its lease can neither write nor start a job when it wakes up;
 *   - a leader that loses its lease exits (PX_HA_EXIT_DEPOSED): its
 *     supervisor starts it again as a standby, with a fresh state, which
 *     is simpler than unwinding the state of a deposed leader;
 *   - a standby follows the journal every FOLLOW_NS (journal.c), so that a
 *     takeover replays only the records since; it reports the seq it has
 *     applied, and the leader's checkpoints keep newer records in the
 *     journal (px_ha_archive_floor), so no standby misses a job that
 *     finished and was archived in between.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/journal/journal.h"
#include "server/tables.h"
#include "util/log.h"

#define FOLLOW_NS 100000000LL /* a standby reads new journal records this often */

struct px_ha {
  struct px_server *s;
  struct px_store *store;       /* the lease's own connection (the thread's) */
  char name[64], addr[256];
  int64_t ttl_ms;
  pthread_t thread;
  bool started;
  atomic_bool stop;
  _Atomic int role;             /* enum px_ha_role */
  _Atomic uint64_t term;
  _Atomic int64_t deadline_ns;  /* leader: acts only before (CLOCK_MONOTONIC) */
  _Atomic uint64_t floor_seq;   /* leader: what every live standby has applied */
  int64_t reported_ns;          /* the thread's: when its last report that succeeded was sent */
  pthread_mutex_t lock;
  char leader_addr[256];        /* under lock */
};

/* A standby is waited for by the leader's checkpoints while it reported
 * within this long (database clock), and restarts itself when it could not
 * report for half of it: generous, so that a standby slowed by a loaded host
 * is not sent into a loop of restarts; the cost is only checkpoints held
 * back meanwhile. */
static int64_t grace_ms(const struct px_ha *h) { return h->ttl_ms * 5 > 10000 ? h->ttl_ms * 5 : 10000; }

static void nap_ms(int64_t ms) {
  nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

static void set_leader_addr(struct px_ha *h, const char *addr) {
  pthread_mutex_lock(&h->lock);
  snprintf(h->leader_addr, sizeof h->leader_addr, "%s", addr);
  pthread_mutex_unlock(&h->lock);
}

static const char *role_name(int role) {
  return role == PX_HA_LEADER ? "leader" : role == PX_HA_TAKING ? "taking-over" : "standby";
}

static void report(struct px_ha *h) {
  int role = atomic_load(&h->role);
  struct px_store_ctl c = {h->name, h->addr, role_name(role), atomic_load(&h->term),
                           atomic_load(&h->s->committed_seq), (int64_t)getpid(), 0};
  int64_t sent = px_now_mono_ns();
  if (px_store_ctl_report(h->store, &c)) px_debug("ha: report: %s", h->store->errmsg);
  else h->reported_ns = sent;
}

/* The lease is ours: the main thread replays the last records, then leads. */
static void won(struct px_ha *h, const struct px_store_lease *l, int64_t sent_ns) {
  atomic_store(&h->term, l->term);
  atomic_store(&h->deadline_ns, sent_ns + (h->ttl_ms - h->ttl_ms / 10) * 1000000LL);
  set_leader_addr(h, h->addr);
  atomic_store(&h->role, PX_HA_TAKING);
  px_info("ha: lease taken, term %llu: taking over", (unsigned long long)l->term);
  px_queue_poke(&h->s->queue);
}

static void try_acquire(struct px_ha *h) {
  struct px_store_lease l;
  int64_t sent = px_now_mono_ns();
  if (px_store_lease_acquire(h->store, h->name, h->addr, h->ttl_ms, &l)) {
    px_debug("ha: lease: %s", h->store->errmsg);
    return;
  }
  if (l.held) return won(h, &l, sent);
  set_leader_addr(h, l.live ? l.addr : "");
  if (l.term > atomic_load(&h->term)) atomic_store(&h->term, l.term);
}

static void deposed(struct px_ha *h, const char *why) {
  if (atomic_exchange(&h->role, PX_HA_DEPOSED) == PX_HA_DEPOSED) return;
  px_error("ha: %s (term %llu): stopping; start again as a standby", why,
           (unsigned long long)atomic_load(&h->term));
  px_queue_poke(&h->s->queue);
}

struct floor {
  const struct px_ha *h;
  uint64_t seq;
};

/* A standby that has not reported within grace_ms is not waited for: it
 * recovers in full when it comes back (out_of_touch, below). */
static int floor_of(void *ctx, const struct px_store_ctl *c) {
  struct floor *f = ctx;
  if (!strcmp(c->role, "standby") && c->age_ms < grace_ms(f->h) && strcmp(c->name, f->h->name) &&
      c->seq < f->seq)
    f->seq = c->seq;
  return 0;
}

static void renew(struct px_ha *h) {
  bool held = false;
  int64_t sent = px_now_mono_ns();
  int rc = px_store_lease_renew(h->store, atomic_load(&h->term), h->ttl_ms, &held);
  if (!rc && held) {
    atomic_store(&h->deadline_ns, sent + (h->ttl_ms - h->ttl_ms / 10) * 1000000LL);
  } else if (!rc) {
    return deposed(h, "lost the lease: another controller holds it");
  } else {
    px_debug("ha: renew: %s", h->store->errmsg);
  }
  if (px_now_mono_ns() >= atomic_load(&h->deadline_ns))
    return deposed(h, "lost the lease: not renewed in time");
  struct floor f = {h, UINT64_MAX};
  if (px_store_ctl_list(h->store, floor_of, &f) == 0) atomic_store(&h->floor_seq, f.seq);
}

/* A standby that could not report for half of grace_ms may have been left
 * out of the leader's archive floor (which waits grace_ms on the database's
 * clock): records it has not read may be gone. It starts again and recovers
 * in full, rather than take over with a hole in its state. */
static bool out_of_touch(struct px_ha *h) {
  if (px_now_mono_ns() - h->reported_ns < grace_ms(h) * 500000LL) return false;
  deposed(h, "out of touch with the store for too long to trust its state");
  return true;
}

static void *lease_main(void *arg) {
  struct px_ha *h = arg;
  while (!atomic_load(&h->stop)) {
    int role = atomic_load(&h->role);
    if (role == PX_HA_DEPOSED) break;
    if (role == PX_HA_STANDBY && out_of_touch(h)) break;
    if (role == PX_HA_STANDBY) try_acquire(h);
    else renew(h);
    report(h);
    nap_ms(atomic_load(&h->role) == PX_HA_STANDBY ? h->ttl_ms / 15 : h->ttl_ms / 6);
  }
  return NULL;
}

/* name defaults to this host's name and the listening port, addr to
 * http(s)://<listen> (https with TLSCertFile=). */
static int ha_names(struct px_ha *h, const struct px_server *s, struct px_diag *d) {
  const struct px_server_opts *o = &s->opts;
  char host[64] = "";
  gethostname(host, sizeof host - 1);
  const char *port = o->listen ? strrchr(o->listen, ':') : NULL;
  const char *scheme = s->conf->phalanx.tls_cert_file ? "https" : "http";
  if (o->ha_addr) snprintf(h->addr, sizeof h->addr, "%s", o->ha_addr);
  else if (o->listen) snprintf(h->addr, sizeof h->addr, "%s://%s", scheme, o->listen);
  else return px_diag_set(d, PX_EINVAL, -1, "--ha needs --listen or --advertise (clients must reach every controller)");
  if (o->ha_name) snprintf(h->name, sizeof h->name, "%s", o->ha_name);
  else snprintf(h->name, sizeof h->name, "%s%s", host, port ? port : "");
  return 0;
}

int px_ha_start(struct px_server *s, struct px_diag *d) {
  if (!s->opts.ha) return 0;
  if (!px_store_has_lease(s->store))
    return px_diag_set(d, PX_EINVAL, -1, "--ha needs a PostgreSQL store (--store postgresql://...)");
  struct px_ha *h = calloc(1, sizeof *h);
  if (!h) return PX_ENOMEM;
  s->ha = h;
  h->s = s;
  h->ttl_ms = s->opts.lease_ms > 0 ? s->opts.lease_ms : PX_HA_LEASE_MS;
  pthread_mutex_init(&h->lock, NULL);
  atomic_store(&h->floor_seq, UINT64_MAX);
  int rc = ha_names(h, s, d);
  if (!rc) rc = px_store_open(s->opts.store_url, &h->store, d);
  if (rc) return rc;
  /* Known to the leader before recovery reads the store, so that its
   * checkpoints keep every record from now on (px_ha_archive_floor). */
  report(h);
  if (!h->reported_ns) return px_diag_set(d, PX_ECONNECT, -1, "ha: %s", h->store->errmsg);
  nap_ms(h->ttl_ms / 6 + h->ttl_ms / 10);
  if (pthread_create(&h->thread, NULL, lease_main, h)) return PX_EAGAIN;
  h->started = true;
  px_info("ha: controller %s (%s), lease %lld ms: standing by", h->name, h->addr,
          (long long)h->ttl_ms);
  return 0;
}

void px_ha_stop(struct px_server *s) {
  struct px_ha *h = s->ha;
  if (!h) return;
  atomic_store(&h->stop, true);
  if (h->started) pthread_join(h->thread, NULL);
  if (h->store && atomic_load(&h->role) == PX_HA_LEADER &&
      px_store_lease_release(h->store, atomic_load(&h->term)) == 0)
    px_info("ha: lease of term %llu given up", (unsigned long long)atomic_load(&h->term));
  px_store_close(h->store);
  pthread_mutex_destroy(&h->lock);
  free(h);
  s->ha = NULL;
}

bool px_ha_leading(const struct px_server *s) {
  const struct px_ha *h = s->ha;
  if (!h) return true;
  return atomic_load(&h->role) == PX_HA_LEADER && px_now_mono_ns() < atomic_load(&h->deadline_ns);
}

bool px_ha_deposed(const struct px_server *s) {
  return s->ha && (!px_ha_leading(s) || !strncmp(s->store->errmsg, "fenced", 6));
}

enum px_ha_role px_ha_role(const struct px_server *s) {
  return s->ha ? (enum px_ha_role)atomic_load(&s->ha->role) : PX_HA_LEADER;
}

uint64_t px_ha_term(const struct px_server *s) { return s->ha ? atomic_load(&s->ha->term) : 0; }

void px_ha_leader_addr(const struct px_server *s, char *buf, size_t size) {
  struct px_ha *h = s->ha;
  if (!h) {
    snprintf(buf, size, "%s", "");
    return;
  }
  pthread_mutex_lock(&h->lock);
  snprintf(buf, size, "%s", h->leader_addr);
  pthread_mutex_unlock(&h->lock);
}

uint64_t px_ha_archive_floor(const struct px_server *s) {
  return s->ha ? atomic_load(&s->ha->floor_seq) : UINT64_MAX;
}

/* The lease is ours and no writer of an older term is left (store.h): the
 * last records, then the store is fenced by our term and we lead, as a
 * server that has just recovered (running jobs wait for their agents). */
static int take_over(struct px_server *s) {
  struct px_ha *h = s->ha;
  int64_t t0 = px_now_mono_ns();
  int rc = px_journal_follow(s);
  if (rc) return rc;
  s->store->term = atomic_load(&h->term);
  px_server_hold_recovered(s, time(NULL));
  s->start_mono_ns = px_now_mono_ns(); /* agents get their timeout from now */
  s->need_cycle = s->dirty = s->nodes_dirty = true;
  atomic_store(&h->role, PX_HA_LEADER);
  px_info("ha: leading, term %llu, journal seq %llu (the tail took %.3f s)",
          (unsigned long long)atomic_load(&h->term), (unsigned long long)s->seq,
          (double)(px_now_mono_ns() - t0) / 1e9);
  return 0;
}

int px_ha_standby(struct px_server *s) {
  struct px_ha *h = s->ha;
  while (!atomic_load(&s->stop)) {
    int role = atomic_load(&h->role);
    if (role == PX_HA_DEPOSED) return PX_ESTATE;
    if (role == PX_HA_TAKING) {
      int rc = take_over(s);
      if (!rc) return 0;
      px_warn("ha: takeover: reading the journal failed (%s): retrying", s->store->errmsg);
    } else if (px_journal_follow(s)) {
      px_debug("ha: follow: %s", s->store->errmsg);
    }
    struct px_req *reqs = px_queue_take(&s->queue, px_now_mono_ns() + FOLLOW_NS);
    for (struct px_req *r = reqs, *next; r; r = next) { /* raced the HTTP gate */
      next = r->next;
      px_req_error(r, 503, "UNAVAILABLE", "this controller is a standby");
      px_req_done(r);
    }
  }
  return PX_EAGAIN;
}
