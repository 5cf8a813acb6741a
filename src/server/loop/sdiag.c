/*
 * sdiag.c - the statistics sdiag prints (Slurm 22.05's layout, cli/) and
 * GET /v1/diag and /slurm/v0.0.39/diag serve: scheduling cycles (count,
 * last, max, mean, depth, queue length), backfill (backfilled jobs, the
 * passes that could backfill, their depth), and RPCs (requests) by type
 * and by user with their count and time, and the jobs submitted, started,
 * completed, cancelled and failed since (counted as their live events are
 * journaled, as slurmctld counts them: a reset in the same second as a
 * submit must not count it; pending and running are the snapshot's,
 * api_diag.c).
 *
 * Phalanx runs one scheduling pass per cycle in which backfill is a stage
 * (core.h), not a second thread: each cycle with backfill enabled is also
 * counted as a backfill cycle, with the same duration and depth, and the
 * jobs it started out of priority order are its backfilled jobs.
 *
 * The main thread records cycles; API threads record requests; a reader
 * takes a copy as JSON. One mutex, held for a few additions: a request
 * costs microseconds, a cycle far more.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

#define MAX_ROWS 512 /* types and users kept; beyond, counted in the last row */

struct rpc_row {
  char key[64];     /* "METHOD /pattern" (Slurm's RPC name once renamed), or user name */
  uint32_t uid;     /* user id, or the RPC's number once renamed */
  uint64_t count, total_us;
  size_t seq;       /* first-seen order: ties keep it (sdiag's order) */
};

struct cycles {
  uint64_t count, last_us, max_us, total_us, depth_total, last_depth, queue_len;
};

struct px_sdiag {
  pthread_mutex_t lock;
  int64_t since;           /* when counting began (Unix s): start or reset */
  struct cycles main, bf;
  uint64_t backfilled, bf_last_backfilled;
  uint64_t bf_seen;        /* the core's backfilled count at the last cycle */
  int64_t bf_when_last;
  uint64_t jobs[PX_SDIAG_JOBS];  /* submitted, started, completed, cancelled, failed */
  struct rpc_row types[MAX_ROWS], users[MAX_ROWS];
  size_t ntypes, nusers;
};

struct px_sdiag *px_sdiag_new(int64_t now) {
  struct px_sdiag *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  pthread_mutex_init(&g->lock, NULL);
  g->since = now;
  return g;
}

void px_sdiag_free(struct px_sdiag *g) {
  if (!g) return;
  pthread_mutex_destroy(&g->lock);
  free(g);
}

static void cycle_add(struct cycles *c, uint64_t us, uint64_t depth, uint64_t queue_len) {
  c->count++;
  c->last_us = us;
  if (us > c->max_us) c->max_us = us;
  c->total_us += us;
  c->last_depth = depth;
  c->depth_total += depth;
  c->queue_len = queue_len;
}

void px_sdiag_cycle(struct px_sdiag *g, const struct px_sdiag_cycle *c) {
  if (!g) return;
  pthread_mutex_lock(&g->lock);
  cycle_add(&g->main, c->us, c->depth, c->queue_len);
  uint64_t seen = g->bf_seen;
  g->bf_seen = c->backfilled_total;
  if (c->backfill) {
    cycle_add(&g->bf, c->us, c->depth, c->queue_len);
    uint64_t delta = c->backfilled_total >= seen ? c->backfilled_total - seen : 0;
    g->backfilled += delta;
    g->bf_last_backfilled = delta;
    g->bf_when_last = c->now;
  }
  pthread_mutex_unlock(&g->lock);
}

static void rpc_add(struct rpc_row *rows, size_t *n, const char *key, uint32_t uid, uint64_t us) {
  size_t i = 0;
  while (i < *n && strcmp(rows[i].key, key)) i++;
  if (i == *n) {
    if (*n == MAX_ROWS) i = MAX_ROWS - 1; /* the last row takes the rest */
    else snprintf(rows[(*n)++].key, sizeof rows[0].key, "%s", key);
    rows[i].uid = uid;
  }
  rows[i].count++;
  rows[i].total_us += us;
}

void px_sdiag_rpc(struct px_sdiag *g, const char *method, const char *endpoint, const char *user,
                  uint32_t uid, double seconds) {
  if (!g) return;
  uint64_t us = seconds > 0 ? (uint64_t)(seconds * 1e6) : 0;
  char key[sizeof g->types[0].key];
  snprintf(key, sizeof key, "%s %s", method, endpoint);
  pthread_mutex_lock(&g->lock);
  rpc_add(g->types, &g->ntypes, key, 0, us);
  if (user && *user) rpc_add(g->users, &g->nusers, user, uid, us);
  pthread_mutex_unlock(&g->lock);
}

void px_sdiag_job(struct px_sdiag *g, enum px_sdiag_jobs what) {
  if (!g || what >= PX_SDIAG_JOBS) return;
  pthread_mutex_lock(&g->lock);
  g->jobs[what]++;
  pthread_mutex_unlock(&g->lock);
}

void px_sdiag_reset(struct px_sdiag *g, int64_t now) {
  pthread_mutex_lock(&g->lock);
  memset(&g->main, 0, sizeof g->main);
  memset(&g->bf, 0, sizeof g->bf);
  g->backfilled = g->bf_last_backfilled = 0;
  g->ntypes = g->nusers = 0;
  memset(g->jobs, 0, sizeof g->jobs);
  g->since = now;
  pthread_mutex_unlock(&g->lock);
}

/* The requests that do what one of Slurm's RPCs does, by its name and
 * number (slurm_protocol_defs.h), so that sdiag's readers (exporters,
 * dashboards) find the names they know. Others keep "METHOD /path". */
static const struct {
  const char *key, *name;
  uint32_t id;
} slurm_rpcs[] = {
    {"POST /v1/jobs", "REQUEST_SUBMIT_BATCH_JOB", 4003},
    {"POST /slurm/v0.0.39/job/submit", "REQUEST_SUBMIT_BATCH_JOB", 4003},
    {"GET /v1/jobs", "REQUEST_JOB_INFO", 2003},
    {"GET /slurm/v0.0.39/jobs", "REQUEST_JOB_INFO", 2003},
    {"GET /v1/jobs/{}", "REQUEST_JOB_INFO_SINGLE", 2021},
    {"GET /slurm/v0.0.39/job/{}", "REQUEST_JOB_INFO_SINGLE", 2021},
    {"DELETE /v1/jobs/{}", "REQUEST_KILL_JOB", 5032},
    {"DELETE /slurm/v0.0.39/job/{}", "REQUEST_KILL_JOB", 5032},
    {"PATCH /v1/jobs/{}", "REQUEST_UPDATE_JOB", 3001},
    {"POST /v1/jobs/{}/hold", "REQUEST_UPDATE_JOB", 3001},
    {"POST /v1/jobs/{}/release", "REQUEST_UPDATE_JOB", 3001},
    {"POST /v1/jobs/{}/steps", "REQUEST_JOB_STEP_CREATE", 5001},
    {"GET /v1/jobs/{}/steps", "REQUEST_JOB_STEP_INFO", 2005},
    {"DELETE /v1/jobs/{}/steps/{}", "REQUEST_CANCEL_JOB_STEP", 5005},
    {"POST /v1/jobs/{}/steps/{}/end", "REQUEST_STEP_COMPLETE", 5016},
    {"GET /v1/nodes", "REQUEST_NODE_INFO", 2007},
    {"GET /slurm/v0.0.39/nodes", "REQUEST_NODE_INFO", 2007},
    {"GET /v1/nodes/{}", "REQUEST_NODE_INFO_SINGLE", 2040},
    {"POST /v1/nodes/{}/drain", "REQUEST_UPDATE_NODE", 3002},
    {"POST /v1/nodes/{}/resume", "REQUEST_UPDATE_NODE", 3002},
    {"POST /v1/nodes/{}/reboot", "REQUEST_REBOOT_NODES", 1015},
    {"GET /v1/partitions", "REQUEST_PARTITION_INFO", 2009},
    {"GET /slurm/v0.0.39/partitions", "REQUEST_PARTITION_INFO", 2009},
    {"POST /v1/partitions/{}/down", "REQUEST_UPDATE_PARTITION", 3005},
    {"POST /v1/partitions/{}/up", "REQUEST_UPDATE_PARTITION", 3005},
    {"GET /v1/reservations", "REQUEST_RESERVATION_INFO", 2024},
    {"GET /slurm/v0.0.39/reservations", "REQUEST_RESERVATION_INFO", 2024},
    {"POST /v1/reservations", "REQUEST_CREATE_RESERVATION", 3006},
    {"GET /v1/shares", "REQUEST_SHARE_INFO", 2022},
    {"GET /v1/diag", "REQUEST_STATS_INFO", 2035},
    {"GET /slurm/v0.0.39/diag", "REQUEST_STATS_INFO", 2035},
    {"POST /v1/diag/reset", "REQUEST_STATS_INFO", 2035},
    {"GET /slurm/v0.0.39/ping", "REQUEST_PING", 1008},
    {"POST /v1/tokens", "REQUEST_AUTH_TOKEN", 5039},
    {"POST /v1/agent/register", "MESSAGE_NODE_REGISTRATION_STATUS", 1002},
    {"POST /v1/agent/report", "REQUEST_COMPLETE_BATCH_SCRIPT", 5018},
};

/* Renames the rows by Slurm's RPC names and merges those that then share
 * one; returns the new count. */
static size_t slurm_names(struct rpc_row *rows, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    struct rpc_row r = rows[i];
    for (size_t m = 0; m < sizeof slurm_rpcs / sizeof slurm_rpcs[0]; m++) {
      if (strcmp(r.key, slurm_rpcs[m].key)) continue;
      snprintf(r.key, sizeof r.key, "%s", slurm_rpcs[m].name);
      r.uid = slurm_rpcs[m].id;
      break;
    }
    size_t j = 0;
    while (j < k && strcmp(rows[j].key, r.key)) j++;
    if (j < k) {
      rows[j].count += r.count;
      rows[j].total_us += r.total_us;
    } else {
      rows[k++] = r;
    }
  }
  return k;
}

/* Rows by count, most first; ties in the order first seen (sdiag's). */
static int by_count(const void *a, const void *b) {
  const struct rpc_row *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static json_t *rows_json(struct rpc_row *rows, size_t n, bool users) {
  if (!users) n = slurm_names(rows, n);
  for (size_t i = 0; i < n; i++) rows[i].seq = i; /* rows are kept in arrival order */
  qsort(rows, n, sizeof *rows, by_count);
  json_t *a = json_array();
  for (size_t i = 0; a && i < n; i++)
    json_array_append_new(a, json_pack("{ss sI sI sI sI}", users ? "user" : "type", rows[i].key,
                                       users ? "user_id" : "type_id", (json_int_t)rows[i].uid, "count",
                                       (json_int_t)rows[i].count, "total_time_us",
                                       (json_int_t)rows[i].total_us, "average_time_us",
                                       (json_int_t)(rows[i].total_us / rows[i].count)));
  return a;
}

static json_t *cycles_json(const struct cycles *c) {
  return json_pack("{sI sI sI sI sI sI sI}", "count", (json_int_t)c->count, "last_us",
                   (json_int_t)c->last_us, "max_us", (json_int_t)c->max_us, "mean_us",
                   (json_int_t)(c->count ? c->total_us / c->count : 0), "last_depth",
                   (json_int_t)c->last_depth, "mean_depth",
                   (json_int_t)(c->count ? c->depth_total / c->count : 0), "queue_length",
                   (json_int_t)c->queue_len);
}

json_t *px_sdiag_json(struct px_sdiag *g, int64_t now) {
  pthread_mutex_lock(&g->lock);
  struct px_sdiag *copy = malloc(sizeof *copy);
  if (copy) memcpy(copy, g, sizeof *copy); /* the mutex bytes are never used in the copy */
  pthread_mutex_unlock(&g->lock);
  if (!copy) return NULL;
  json_t *o = json_pack(
      "{sI sI so so s{sI sI sI sI} so so}", "time", (json_int_t)now,
      "since", (json_int_t)copy->since, "main", cycles_json(&copy->main), "backfill",
      cycles_json(&copy->bf), "backfill_jobs", "total", (json_int_t)copy->backfilled,
      "last_cycle", (json_int_t)copy->bf_last_backfilled, "when_last_cycle",
      (json_int_t)copy->bf_when_last, "active", (json_int_t)0, "rpcs_by_type", rows_json(copy->types, copy->ntypes, false),
      "rpcs_by_user", rows_json(copy->users, copy->nusers, true));
  if (o)
    json_object_set_new(o, "jobs", json_pack("{sI sI sI sI sI}", "submitted", (json_int_t)copy->jobs[0], "started",
                                             (json_int_t)copy->jobs[1], "completed", (json_int_t)copy->jobs[2],
                                             "cancelled", (json_int_t)copy->jobs[3], "failed",
                                             (json_int_t)copy->jobs[4]));
  free(copy);
  return o;
}
