/*
 * api_jobs.c - the job endpoints: submit (one or a batch), list with
 * filters and paging and watch (both from the snapshot, no lock held while
 * encoding), show, cancel, hold, release, requeue, update (queued to the main
 * thread).
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
#include "server/tables.h"

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
  const char *test = px_api_arg(c, "test_only");
  if (test && strcmp(test, "0") && strcmp(test, "1")) {
    json_decref(body);
    return px_api_error(c, 400, "INVALID", "test_only: must be 0 or 1");
  }
  r.test_only = test && !strcmp(test, "1");
  if (decode_batch(c, body, &r) == 0) px_api_call_main(c, &r);
  else if (!c->answer) px_api_error(c, 503, "UNAVAILABLE", "out of memory");
  px_req_fini(&r);
  json_decref(body);
}

/* ---- listing ---- */

struct filter {
  char *user, *account, *partition, *name; /* copies (the stream outlives the handler) */
  char states[8][24];
  int nstates;
  uint64_t ids[64];
  int nids;
  uint64_t after;
  size_t limit;
  uint64_t min_seq;
  bool watch;        /* watch: every change, also of records listings hide */
  bool all;          /* state=all: also jobs that ended long ago */
  int64_t ended_after;
  char fields[40][24]; /* fields=: the top-level job members wanted (none: all) */
  int nfields;
};

/* The top-level members of a job's JSON (proto/views_json.c), for fields=. */
static const char *const job_members[] = {
    "job_id", "array_job_id", "array_task_id", "array_pending", "state", "reason", "why",
    "priority", "submit_time", "eligible_time", "start_time", "end_time", "expected_start",
    "nodelist", "nnodes", "ncpus", "ngpus", "mem_mib", "gpus_by_node", "exit_code",
    "term_signal", "restarts", "cancelled_by", "billable_tres_s", "peak_mem_mib", "cpu_time_ms",
    "prio_age", "prio_fairshare", "prio_jobsize", "prio_partition", "prio_qos", "prio_site",
    "prio_assoc", "spec"};

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
  const char *v;
  char **dst[] = {&f->user, &f->account, &f->partition, &f->name};
  const char *keys[] = {"user", "account", "partition", "name"};
  for (int i = 0; i < 4; i++)
    if ((v = px_api_arg(c, keys[i])) && !(*dst[i] = strdup(v))) return PX_ENOMEM;
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
  if (!split(px_api_arg(c, "fields"), f->fields, 40, &f->nfields)) {
    px_api_error(c, 400, "INVALID", "fields: at most 40 names of 23 characters");
    return PX_EINVAL;
  }
  for (int i = 0; i < f->nfields; i++) {
    bool known = false;
    for (size_t k = 0; !known && k < sizeof job_members / sizeof job_members[0]; k++)
      known = !strcmp(f->fields[i], job_members[k]);
    if (!known) {
      px_api_error(c, 400, "INVALID", "fields: '%s' is not a job field", f->fields[i]);
      return PX_EINVAL;
    }
  }
  /* Private mode: users see only their own jobs (operators see all). */
  if (c->s->conf->phalanx.private_jobs && !(c->who.roles & PX_ROLE_OPERATOR)) {
    free(f->user);
    if (!(f->user = strdup(c->who.user))) return PX_ENOMEM;
  }
  return 0;
}

static void filter_fini(struct filter *f) {
  free(f->user);
  free(f->account);
  free(f->partition);
  free(f->name);
}

static bool matches(const struct filter *f, const struct px_job_info *j) {
  const struct px_jobspec *sp = &j->spec;
  /* An array's own record is its J_[pending] line: gone, as in squeue,
   * once no task is left to start (its tasks are listed; show finds it). */
  if (!f->watch && j->array_job_id == j->job_id && strcmp(j->state, "PENDING")) return false;
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

static bool wanted(const struct filter *f, const char *key, size_t len) {
  for (int i = 0; i < f->nfields; i++)
    if (strlen(f->fields[i]) == len && !memcmp(f->fields[i], key, len)) return true;
  return false;
}

/* The end of the JSON value starting at p (compact text, as the encoder
 * writes it): the first ',' or '}' outside strings and nested values. */
static const char *value_end(const char *p) {
  int depth = 0;
  bool str = false;
  for (; *p; p++) {
    if (str) {
      if (*p == '\\' && p[1]) p++;
      else if (*p == '"') str = false;
    } else if (*p == '"') {
      str = true;
    } else if (*p == '{' || *p == '[') {
      depth++;
    } else if (*p == '}' || *p == ']') {
      if (depth-- == 0) return p;
    } else if (*p == ',' && depth == 0) {
      return p;
    }
  }
  return p;
}

/* fields=: copies the members of a view's cached object that f wants, by
 * slicing the text (no decoding), as {"k":v,...}. */
static void select_members(const char *js, const struct filter *f, struct out *o) {
  size_t n = 0;
  out_add(o, "{", 1);
  const char *p = js + 1;
  while (*p == '"') {
    const char *key = p + 1, *kend = strchr(key, '"');
    if (!kend || kend[1] != ':') break;
    const char *end = value_end(kend + 2);
    if (wanted(f, key, (size_t)(kend - key))) {
      if (n++) out_add(o, ",", 1);
      out_add(o, p, (size_t)(end - p));
    }
    if (*end != ',') break;
    p = end + 1;
  }
  out_add(o, "}", 1);
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
    if (f->nfields) select_members(js, f, &o);
    else out_add(&o, js, strlen(js));
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

/* A listing streamed from the snapshot: {"jobs":[ then each matching
 * view's cached JSON, then ],"next":..,"seq":..}. The snapshot reference is
 * held until MHD has sent everything (or the client went away). */
struct list_stream {
  struct px_snap *snap;
  struct filter f;
  size_t i, n;             /* next view to look at, views written */
  const char *cur;         /* text being written */
  size_t cur_len, cur_off;
  int phase;               /* 0 head, 1 views, 2 done */
  bool sep;                /* the comma before the next view is written */
  uint64_t last_id;        /* last job written (the page cursor) */
  char tail[96];
  struct out sel;          /* fields=: the selected members of the current view */
};

/* Picks the next piece of text to write; false at the end. */
static bool stream_next(struct list_stream *ls) {
  static const char head[] = "{\"jobs\":[";
  if (ls->phase == 0) {
    ls->cur = head, ls->cur_len = sizeof head - 1, ls->phase = 1;
    return true;
  }
  if (ls->phase != 1) return false;
  bool full = false;
  while (ls->i < ls->snap->njobs) {
    struct px_jview *v = ls->snap->jobs[ls->i];
    if (!matches(&ls->f, &v->info)) {
      ls->i++;
      continue;
    }
    if (ls->f.limit && ls->n == ls->f.limit) {
      full = true; /* and there is a later match: the client pages on */
      break;
    }
    if (ls->n && !ls->sep) {
      ls->sep = true;
      ls->cur = ",", ls->cur_len = 1;
      return true;
    }
    const char *js = px_jview_json(v);
    if (!js) return false; /* out of memory: the answer is cut short */
    ls->sep = false;
    ls->last_id = v->info.job_id;
    ls->i++;
    ls->n++;
    ls->cur = js, ls->cur_len = strlen(js);
    if (ls->f.nfields) {
      ls->sel.len = 0;
      select_members(js, &ls->f, &ls->sel);
      if (ls->sel.oom) return false;
      ls->cur = ls->sel.p, ls->cur_len = ls->sel.len;
    }
    return true;
  }
  int len = snprintf(ls->tail, sizeof ls->tail, "],\"next\":%llu,\"seq\":%llu}",
                     (unsigned long long)(full ? ls->last_id : 0),
                     (unsigned long long)ls->snap->seq);
  ls->cur = ls->tail, ls->cur_len = (size_t)len, ls->phase = 2;
  return true;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
  struct list_stream *ls = cls;
  size_t out = 0;
  while (out < max) {
    if (ls->cur_off == ls->cur_len) {
      if (!stream_next(ls)) break;
      ls->cur_off = 0;
    }
    size_t n = ls->cur_len - ls->cur_off;
    if (n > max - out) n = max - out;
    memcpy(buf + out, ls->cur + ls->cur_off, n);
    ls->cur_off += n;
    out += n;
  }
  return out ? (ssize_t)out : MHD_CONTENT_READER_END_OF_STREAM;
}

static void stream_free(void *cls) {
  struct list_stream *ls = cls;
  px_snap_release(ls->snap);
  filter_fini(&ls->f);
  free(ls->sel.p);
  free(ls);
}

/* The current snapshot, once it holds every change acknowledged before this
 * call (a client that heard 201 and lists sees its job), waiting at most
 * READ_YOUR_WRITES_NS for the main thread to publish one. */
#define READ_YOUR_WRITES_NS 2000000000LL
struct px_snap *px_api_snap_fresh(struct px_server *s) {
  uint64_t want = atomic_load(&s->committed_seq);
  struct px_snap *snap = px_snap_acquire(&s->snaps);
  if (snap->seq >= want) return snap;
  px_snap_release(snap);
  atomic_fetch_add(&s->snap_waiters, 1);
  px_queue_poke(&s->queue);
  snap = px_snap_wait(&s->snaps, want - 1, px_now_real_ns() + READ_YOUR_WRITES_NS);
  atomic_fetch_sub(&s->snap_waiters, 1);
  return snap;
}

void px_api_jobs_list(struct px_api_call *c) {
  struct list_stream *ls = calloc(1, sizeof *ls);
  if (!ls) return px_api_error(c, 503, "UNAVAILABLE", "out of memory");
  if (parse_filter(c, &ls->f)) {
    filter_fini(&ls->f);
    free(ls);
    if (!c->answer) px_api_error(c, 503, "UNAVAILABLE", "out of memory");
    return;
  }
  ls->i = px_snap_lower_bound(ls->snap = px_api_snap_fresh(c->s), ls->f.after + 1);
  c->status = 200;
  c->stream_fn = stream_read;
  c->stream_free = stream_free;
  c->stream_cls = ls;
}

void px_api_watch(struct px_api_call *c) {
  struct filter f;
  uint64_t after = 0, timeout = 20;
  const char *v;
  if (parse_filter(c, &f)) {
    filter_fini(&f);
    if (!c->answer) px_api_error(c, 503, "UNAVAILABLE", "out of memory");
    return;
  }
  if ((v = px_api_arg(c, "after")) && !parse_u64(v, &after))
    return filter_fini(&f), px_api_error(c, 400, "INVALID", "after: must be a sequence number");
  if ((v = px_api_arg(c, "timeout")) && (!parse_u64(v, &timeout) || timeout > PX_SERVER_WATCH_MAX_S))
    return filter_fini(&f), px_api_error(c, 400, "RANGE", "timeout: 0 to %d seconds", PX_SERVER_WATCH_MAX_S);
  f.after = 0; /* here `after` is a sequence number, not a job id */
  f.watch = true;
  int64_t deadline = px_now_real_ns() + (int64_t)timeout * 1000000000LL;
  if (c->can_park && !c->resumed) { /* wait without holding a shared thread (http.c) */
    c->park = c->park_snap = true, c->park_after = after, c->park_deadline_ns = deadline;
    filter_fini(&f);
    return;
  }
  struct px_snap *snap;
  if (c->resumed) {
    snap = px_snap_acquire(&c->s->snaps);
  } else {
    atomic_fetch_add(&c->s->snap_watchers, 1); /* changes are published promptly meanwhile */
    px_queue_poke(&c->s->queue);
    snap = px_snap_wait(&c->s->snaps, after, deadline);
    atomic_fetch_sub(&c->s->snap_watchers, 1);
  }
  c->answer = render_jobs(snap, &f, after);
  c->status = 200;
  px_snap_release(snap);
  filter_fini(&f);
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
void px_api_job_stat(struct px_api_call *c) { job_request(c, PX_REQ_JOB_STAT); }
void px_api_job_cancel(struct px_api_call *c) { job_request(c, PX_REQ_CANCEL); }
void px_api_job_hold(struct px_api_call *c) { job_request(c, PX_REQ_HOLD); }
void px_api_job_release(struct px_api_call *c) { job_request(c, PX_REQ_RELEASE); }
void px_api_job_requeue(struct px_api_call *c) { job_request(c, PX_REQ_REQUEUE); }
void px_api_job_requeue_hold(struct px_api_call *c) { job_request(c, PX_REQ_REQUEUE_HOLD); }

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
