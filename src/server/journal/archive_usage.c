/*
 * archive_usage.c - the fair-share usage of archived jobs (archive.c). A
 * checkpoint deletes a finished job's journal records, so recovery no
 * longer replays the starts, requeues and end through which each of its
 * attempts charged fair share: the merge charges them again instead (a
 * USAGE event each, core/event.h), every run from its own start to its own
 * end, so that with a decay half-life each decays from its own end, as it
 * did live. The sum is then the usage the jobs left before the restart.
 *
 * The last attempt is the archive row's own start, end and allocation. The
 * earlier ones of a requeued job are in its row too ("attempts": start, end
 * and what they held), read by the checkpoint from their accounting rows: a
 * requeue commits the row of the attempt it ends with its record
 * (commit.c), and the checkpoint syncs the commits first, so they are all
 * there. A row written by an older server has none: its earlier attempts
 * stay uncharged, as that server left them.
 */
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "server/journal/archive_usage.h"
#include "server/journal/journal.h"
#include "util/log.h"

/* One earlier attempt of an archived job, until the merge charges it. */
struct px_arch_run {
  uint64_t job_id;
  int64_t start, end;
  uint32_t ncpus, ngpus, gpu_share;
  uint64_t mem_mib;
};

/* ---- checkpoint: the attempts into the archive row ---- */

struct attempts {
  const struct px_sjob *j;
  json_t *list;
};

static int attempt_row(void *ctx, const struct px_acct_row *r) {
  struct attempts *a = ctx;
  /* the last attempt is the row's own run; one that never ran charged nothing */
  if (r->job_id != a->j->id || r->attempt >= a->j->restarts || r->start_time <= 0 ||
      r->end_time <= r->start_time)
    return 0;
  json_t *e = json_pack("{sI sI sI sI sI sI}", "start", (json_int_t)r->start_time, "end",
                        (json_int_t)r->end_time, "ncpus", (json_int_t)r->ncpus, "ngpus",
                        (json_int_t)r->ngpus, "mem_mib", (json_int_t)r->mem_mib, "gpu_share",
                        (json_int_t)r->gpu_share);
  return e && !json_array_append_new(a->list, e) ? 0 : PX_ENOMEM;
}

int px_archive_attempts_get(struct px_server *s, const struct px_sjob *j, json_t **out) {
  *out = NULL;
  if (!j->restarts) return 0;
  struct attempts a = {j, json_array()};
  if (!a.list) return PX_ENOMEM;
  int rc = px_store_acct_query(s->store, &(struct px_acct_query){.job_id = j->id}, attempt_row, &a);
  if (rc || !json_array_size(a.list)) {
    json_decref(a.list);
    return rc;
  }
  *out = a.list;
  return 0;
}

/* ---- recovery: kept from the load until the merge ---- */

static int run_push(struct px_server *s, const struct px_arch_run *r) {
  if (s->narch_runs == s->arch_runs_cap) {
    size_t cap = s->arch_runs_cap ? s->arch_runs_cap * 2 : 64;
    struct px_arch_run *v = realloc(s->arch_runs, cap * sizeof *v);
    if (!v) return PX_ENOMEM;
    s->arch_runs = v;
    s->arch_runs_cap = cap;
  }
  s->arch_runs[s->narch_runs++] = *r;
  return 0;
}

static int64_t geti(json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

int px_archive_attempts_load(struct px_server *s, uint64_t id, json_t *o) {
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(o, "attempts"), i, e) {
    struct px_arch_run r = {id, geti(e, "start"), geti(e, "end"), (uint32_t)geti(e, "ncpus"),
                            (uint32_t)geti(e, "ngpus"), (uint32_t)geti(e, "gpu_share"),
                            (uint64_t)geti(e, "mem_mib")};
    int rc = run_push(s, &r);
    if (rc) return rc;
  }
  return 0;
}

void px_archive_attempts_free(struct px_server *s) {
  free(s->arch_runs);
  s->arch_runs = NULL;
  s->narch_runs = s->arch_runs_cap = 0;
}

/* ---- merge: the charges ---- */

/* j's run on a from start to end, charged as the core charged it live. */
static void charge_run(struct px_server *s, const struct px_sjob *j, const struct px_alloc *a,
                       uint32_t n, int64_t start, int64_t end) {
  struct px_event ev = {.kind = PX_EV_USAGE, .job_id = j->id, .spec = (struct px_jobspec *)&j->spec,
                        .alloc = a, .nalloc = n, .start_s = start, .end_s = end};
  struct px_event_result res;
  if (px_core_apply(s->core, &ev, end, &res)) /* decayed from each association's own time */
    px_warn("recovery: usage of archived job %llu not charged: %s", (unsigned long long)j->id,
            res.diag.msg);
}

/* The last run: the row's own allocation. */
static void charge_last(struct px_server *s, const struct px_sjob *j) {
  if (!j->nalloc || j->start <= 0 || j->end <= j->start) return;
  struct px_alloc *a = calloc(j->nalloc, sizeof *a);
  if (!a) return;
  for (uint32_t i = 0; i < j->nalloc; i++)
    a[i] = (struct px_alloc){j->alloc[i].node, j->alloc[i].ncpu, j->alloc[i].gpus,
                             j->alloc[i].mem_mib, 0, 0, j->alloc[i].gpu_share};
  charge_run(s, j, a, j->nalloc, j->start, j->end);
  free(a);
}

/* An earlier run: billing adds up over the allocation's entries, so its
 * totals bill the same (64 GPUs an entry, the width of a node's GPU set). */
static void charge_earlier(struct px_server *s, const struct px_sjob *j, const struct px_arch_run *r) {
  uint32_t n = r->ngpus ? (r->ngpus + 63) / 64 : 1;
  struct px_alloc *a = calloc(n, sizeof *a);
  if (!a) return;
  a[0].ncpu = r->ncpus;
  a[0].mem_mib = r->mem_mib;
  a[0].gpu_share = r->gpu_share; /* a fractional job's one GPU */
  for (uint32_t i = 0, left = r->ngpus; i < n; i++, left -= left < 64 ? left : 64)
    a[i].gpus = left >= 64 ? ~0ull : (1ull << left) - 1;
  charge_run(s, j, a, n, r->start, r->end);
  free(a);
}

void px_archive_charge(struct px_server *s, const struct px_sjob *j, size_t *next) {
  /* the runs of a job dropped by the merge (its journal's record kept) are skipped */
  while (*next < s->narch_runs && s->arch_runs[*next].job_id < j->id) ++*next;
  for (; *next < s->narch_runs && s->arch_runs[*next].job_id == j->id; ++*next)
    charge_earlier(s, j, &s->arch_runs[*next]);
  charge_last(s, j);
}
