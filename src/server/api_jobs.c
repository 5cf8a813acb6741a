/*
 * api_jobs.c - the job endpoints: submit (one or a batch), list with
 * filters and paging and watch (both from the snapshot, no lock held while
 * encoding), show, cancel, hold, release, update (queued to the main thread).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "proto/jfield.h"
#include "proto/jobspec_json.h"
#include "server/api.h"
#include "server/state.h"

#define MAX_BATCH 10000

/* ---- submit ---- */

static int decode_batch(struct px_api_call *c, json_t *body, struct px_req *r) {
  struct px_diag d;
  px_diag_clear(&d);
  json_t *one = json_object_get(body, "job"), *many = json_object_get(body, "jobs");
  const char *key;
  json_t *v;
  json_object_foreach(body, key, v) {
    if (strcmp(key, "job") && strcmp(key, "jobs")) {
      px_api_error(c, 400, "INVALID", "%.64s: unknown field", key);
      return PX_EINVAL;
    }
  }
  if (json_object_size(body) != 1) {
    px_api_error(c, 400, "INVALID", "body: expected exactly one of \"job\" or \"jobs\"");
    return PX_EINVAL;
  }
  size_t n = one ? 1 : json_array_size(many);
  if (many && !json_is_array(many)) {
    px_api_error(c, 400, "INVALID", "jobs: must be an array of job specs");
    return PX_EINVAL;
  }
  if (n == 0 || n > MAX_BATCH) {
    px_api_error(c, n ? 413 : 400, n ? "TOO_LARGE" : "INVALID",
                 "jobs: a batch holds 1 to %d jobs", MAX_BATCH);
    return PX_ERANGE;
  }
  if (!(r->specs = calloc(n, sizeof *r->specs))) return PX_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, one ? "job." : "jobs[%zu].", i);
    px_jobspec_init(&r->specs[i]);
    int rc = px_jobspec_from_json(one ? one : json_array_get(many, i), &r->specs[i], prefix, &d);
    if (rc) {
      px_api_error_diag(c, rc, &d);
      r->nspecs = i + 1;
      return rc;
    }
  }
  r->nspecs = n;
  r->batch = many != NULL;
  return 0;
}

void px_api_submit(struct px_api_call *c) {
  json_t *body = px_api_body_object(c);
  if (!body) return;
  struct px_req r = {.kind = PX_REQ_SUBMIT, .who = c->who};
  if (decode_batch(c, body, &r) == 0) px_api_call_main(c, &r);
  else if (!c->answer) px_api_error(c, 503, "UNAVAILABLE", "out of memory");
  px_req_fini(&r);
  json_decref(body);
}

/* ---- listing ---- */

struct filter {
  const char *user, *account, *partition, *name;
  char states[8][24];
  int nstates;
  uint64_t ids[64];
  int nids;
  uint64_t after;
  size_t limit;
  uint64_t min_seq;
  bool all;          /* state=all: also jobs that ended long ago */
  int64_t ended_after;
};

static bool parse_u64(const char *s, uint64_t *out) {
  char *end;
  if (!s || !*s || *s == '-') return false;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

/* Splits a comma list; false when it has too many items. */
static bool split(const char *s, char out[][24], int max, int *n) {
  *n = 0;
  while (s && *s) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    if (*n == max || len >= 24) return false;
    snprintf(out[(*n)++], 24, "%.*s", (int)len, s);
    s = comma ? comma + 1 : NULL;
  }
  return true;
}

static int parse_filter(struct px_api_call *c, struct filter *f) {
  memset(f, 0, sizeof *f);
  f->user = px_api_arg(c, "user");
  f->account = px_api_arg(c, "account");
  f->partition = px_api_arg(c, "partition");
  f->name = px_api_arg(c, "name");
  const char *v;
  if (!split(px_api_arg(c, "state"), f->states, 8, &f->nstates)) {
    px_api_error(c, 400, "INVALID", "state: at most 8 states");
    return PX_EINVAL;
  }
  if (f->nstates == 1 && !strcasecmp(f->states[0], "all")) {
    f->all = true;
    f->nstates = 0;
  }
  /* As squeue: jobs that ended more than MinJobAge (300 s) ago are gone
   * unless asked for by state or id; sacct has them. */
  f->ended_after = time(NULL) - PX_MIN_JOB_AGE_S;
  if ((v = px_api_arg(c, "id"))) {
    char ids[64][24];
    int n;
    if (!split(v, ids, 64, &n)) {
      px_api_error(c, 400, "INVALID", "id: at most 64 ids");
      return PX_EINVAL;
    }
    for (int i = 0; i < n; i++) {
      if (!parse_u64(ids[i], &f->ids[i])) {
        px_api_error(c, 400, "INVALID", "id: '%s' is not a job id", ids[i]);
        return PX_EINVAL;
      }
    }
    f->nids = n;
  }
  uint64_t lim = 0;
  if ((v = px_api_arg(c, "after")) && !parse_u64(v, &f->after)) {
    px_api_error(c, 400, "INVALID", "after: must be a job id");
    return PX_EINVAL;
  }
  if ((v = px_api_arg(c, "limit")) && (!parse_u64(v, &lim) || lim > 1000000)) {
    px_api_error(c, 400, "RANGE", "limit: must be 0 to 1000000");
    return PX_ERANGE;
  }
  f->limit = (size_t)lim;
  /* Private mode: users see only their own jobs (operators see all). */
  if (c->s->conf->phalanx.private_jobs && !(c->who.roles & PX_ROLE_OPERATOR)) f->user = c->who.user;
  return 0;
}

static bool matches(const struct filter *f, const struct px_job_info *j) {
  const struct px_jobspec *sp = &j->spec;
  if (!f->all && !f->nstates && !f->nids && j->end_time && j->end_time < f->ended_after)
    return false;
  if (f->user && (!sp->user || strcmp(f->user, sp->user))) return false;
  if (f->account && (!sp->account || strcmp(f->account, sp->account))) return false;
  if (f->partition && (!sp->partition || strcmp(f->partition, sp->partition))) return false;
  if (f->name && (!sp->name || strcmp(f->name, sp->name))) return false;
  if (f->nstates) {
    bool any = false;
    for (int i = 0; i < f->nstates && !any; i++) any = !strcasecmp(f->states[i], j->state);
    if (!any) return false;
  }
  if (f->nids) {
    bool any = false;
    for (int i = 0; i < f->nids && !any; i++)
      any = f->ids[i] == j->job_id || f->ids[i] == j->array_job_id;
    if (!any) return false;
  }
  return true;
}

struct out {
  char *p;
  size_t len, cap;
  bool oom;
};

static void out_add(struct out *o, const char *s, size_t n) {
  if (o->oom) return;
  if (o->len + n + 1 > o->cap) {
    size_t cap = o->cap * 2 + n + 65536;
    char *p = realloc(o->p, cap);
    if (!p) {
      o->oom = true;
      return;
    }
    o->p = p;
    o->cap = cap;
  }
  memcpy(o->p + o->len, s, n);
  o->len += n;
  o->p[o->len] = '\0';
}

/* Writes {"jobs":[...],"next":N,"seq":S} of the snapshot's jobs matching f
 * (and changed after min_seq for watch). */
static char *render_jobs(struct px_snap *snap, const struct filter *f, uint64_t changed_after) {
  struct out o = {0};
  char tail[96];
  out_add(&o, "{\"jobs\":[", 9);
  size_t n = 0, i = px_snap_lower_bound(snap, f->after + 1);
  uint64_t next = 0;
  for (; i < snap->njobs; i++) {
    struct px_jview *v = snap->jobs[i];
    if (v->mseq <= changed_after || !matches(f, &v->info)) continue;
    if (f->limit && n == f->limit) {
      next = snap->jobs[i - 1]->info.job_id;
      break;
    }
    const char *js = px_jview_json(v);
    if (!js) {
      o.oom = true;
      break;
    }
    if (n++) out_add(&o, ",", 1);
    out_add(&o, js, strlen(js));
  }
  int len = snprintf(tail, sizeof tail, "],\"next\":%llu,\"seq\":%llu}", (unsigned long long)next,
                     (unsigned long long)snap->seq);
  out_add(&o, tail, (size_t)len);
  if (o.oom) {
    free(o.p);
    return NULL;
  }
  return o.p;
}

void px_api_jobs_list(struct px_api_call *c) {
  struct filter f;
  if (parse_filter(c, &f)) return;
  struct px_snap *snap = px_snap_acquire(&c->s->snaps);
  c->answer = render_jobs(snap, &f, 0);
  c->status = 200;
  px_snap_release(snap);
}

void px_api_watch(struct px_api_call *c) {
  struct filter f;
  uint64_t after = 0, timeout = 20;
  const char *v;
  if (parse_filter(c, &f)) return;
  if ((v = px_api_arg(c, "after")) && !parse_u64(v, &after))
    return px_api_error(c, 400, "INVALID", "after: must be a sequence number");
  if ((v = px_api_arg(c, "timeout")) && (!parse_u64(v, &timeout) || timeout > PX_SERVER_WATCH_MAX_S))
    return px_api_error(c, 400, "RANGE", "timeout: 0 to %d seconds", PX_SERVER_WATCH_MAX_S);
  f.after = 0; /* here `after` is a sequence number, not a job id */
  int64_t deadline = px_now_real_ns() + (int64_t)timeout * 1000000000LL;
  struct px_snap *snap = px_snap_wait(&c->s->snaps, after, deadline);
  c->answer = render_jobs(snap, &f, after);
  c->status = 200;
  px_snap_release(snap);
}

/* ---- one job ---- */

static bool job_id_arg(struct px_api_call *c, uint64_t *id) {
  if (parse_u64(c->arg, id) && *id > 0) return true;
  px_api_error(c, 400, "INVALID", "id: '%.64s' is not a job id", c->arg);
  return false;
}

static void job_request(struct px_api_call *c, enum px_req_kind kind) {
  struct px_req r = {.kind = kind, .who = c->who};
  if (!job_id_arg(c, &r.job_id)) return;
  if (kind == PX_REQ_JOB_SHOW) {
    const char *spec = px_api_arg(c, "spec");
    if (spec && strcmp(spec, "full"))
      return px_api_error(c, 400, "INVALID", "spec: the only value is 'full'");
    r.full = spec != NULL;
  }
  if (kind == PX_REQ_CANCEL) {
    const char *sig = px_api_arg(c, "signal");
    uint64_t n = 0;
    if (sig && (!parse_u64(sig, &n) || n < 1 || n > 64))
      return px_api_error(c, 400, "RANGE", "signal: must be a signal number 1 to 64");
    r.signal = (int32_t)n;
  }
  px_api_call_main(c, &r);
}

void px_api_job_show(struct px_api_call *c) { job_request(c, PX_REQ_JOB_SHOW); }
void px_api_job_cancel(struct px_api_call *c) { job_request(c, PX_REQ_CANCEL); }
void px_api_job_hold(struct px_api_call *c) { job_request(c, PX_REQ_HOLD); }
void px_api_job_release(struct px_api_call *c) { job_request(c, PX_REQ_RELEASE); }

struct update_body {
  int32_t nice;
  int64_t time_limit_s;
  uint32_t priority;
};

void px_api_job_update(struct px_api_call *c) {
  static const struct px_jfield fields[] = {
      PX_JF_NUM(struct update_body, nice, PX_JF_I32, -2147483645, 2147483645),
      PX_JF_NUM(struct update_body, time_limit_s, PX_JF_I64, 1, INT64_MAX),
      PX_JF_NUM(struct update_body, priority, PX_JF_U32, 0, UINT32_MAX - 1),
  };
  struct px_req r = {.kind = PX_REQ_UPDATE, .who = c->who};
  if (!job_id_arg(c, &r.job_id)) return;
  json_t *body = px_api_body_object(c);
  if (!body) return;
  struct update_body u = {0};
  struct px_diag d;
  px_diag_clear(&d);
  int rc = px_jf_decode(body, fields, 3, &u, NULL, "", &d);
  if (!rc && !json_object_size(body)) rc = px_diag_set(&d, PX_EINVAL, -1, "body: nothing to update");
  if (rc) {
    json_decref(body);
    return px_api_error_diag(c, rc, &d);
  }
  if (json_object_get(body, "nice")) r.upd_fields |= PX_UPD_NICE;
  if (json_object_get(body, "time_limit_s")) r.upd_fields |= PX_UPD_TIME_LIMIT;
  if (json_object_get(body, "priority")) r.upd_fields |= PX_UPD_PRIORITY;
  r.upd_nice = u.nice;
  r.upd_time_limit_s = u.time_limit_s;
  r.upd_priority = u.priority;
  json_decref(body);
  px_api_call_main(c, &r);
}
