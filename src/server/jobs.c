/*
 * jobs.c - the server's job table (tables.h): records sorted by id with a
 * hash index, client views and accounting rows built from them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/views_json.h"
#include "server/tables.h"
#include "util/hostlist.h"

static const char *const state_names[] = {"PENDING",   "RUNNING", "COMPLETED",
                                          "FAILED",    "CANCELLED", "TIMEOUT",
                                          "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED"};

bool px_job_state_terminal(enum px_job_state st) { return st >= PX_JOB_COMPLETED; }

bool px_job_state_parse(const char *name, enum px_job_state *out) {
  for (size_t i = 0; name && i < sizeof state_names / sizeof state_names[0]; i++) {
    if (!strcmp(name, state_names[i])) {
      *out = (enum px_job_state)i;
      return true;
    }
  }
  return false;
}

struct px_sjob *px_jobs_find(struct px_server *s, uint64_t id) {
  uint64_t pos;
  return px_map_get(&s->index, id, &pos) ? s->jobs[pos] : NULL;
}

/*
 * Where a record with this id goes in the table (sorted by id, which the
 * snapshot's binary search and the listing's pages rely on). Ids mostly
 * grow, but an array task's record is born when the task starts, with an id
 * reserved when the array was submitted: jobs submitted since then have
 * higher ids, and the task's record goes before theirs (the records after
 * it move up one slot; tasks start soon after their array, so few do).
 * Refusing it instead left the core's allocation of a started task with no
 * record: never launched, never ended, its node "mix" for ever.
 */
static size_t slot_for(const struct px_server *s, uint64_t id) {
  size_t lo = 0, hi = s->njobs;
  if (!hi || s->jobs[hi - 1]->id < id) return hi; /* the usual case: a new highest id */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->jobs[mid]->id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

int px_jobs_insert(struct px_server *s, struct px_sjob *j) {
  if (s->njobs == s->jobs_cap) {
    size_t cap = s->jobs_cap ? s->jobs_cap * 2 : 1024;
    struct px_sjob **v = realloc(s->jobs, cap * sizeof *v);
    if (!v) return PX_ENOMEM;
    s->jobs = v;
    s->jobs_cap = cap;
  }
  size_t pos = slot_for(s, j->id);
  if (pos < s->njobs && s->jobs[pos]->id == j->id) return PX_EEXIST;
  if (px_map_put(&s->index, j->id, pos)) return PX_ENOMEM;
  /* Existing keys: overwritten in place, so these puts cannot fail. */
  for (size_t i = s->njobs; i > pos; i--) px_map_put(&s->index, s->jobs[i - 1]->id, i);
  memmove(&s->jobs[pos + 1], &s->jobs[pos], (s->njobs - pos) * sizeof *s->jobs);
  s->jobs[pos] = j;
  s->njobs++;
  return 0;
}

struct px_sjob *px_jobs_add(struct px_server *s, uint64_t id, struct px_jobspec *spec) {
  struct px_sjob *j = calloc(1, sizeof *j);
  if (!j) {
    px_jobspec_fini(spec);
    return NULL;
  }
  j->id = id;
  j->array_task_id = PX_NONE;
  j->spec = *spec; /* taken */
  px_jobspec_init(spec);
  j->part = PX_NONE;
  for (uint32_t k = 0; j->spec.partition && k < s->conf->npartitions; k++)
    if (!strcmp(s->conf->partitions[k].name, j->spec.partition)) j->part = k;
  j->state = PX_JOB_PENDING;
  /* the reason from the moment of submission, before the first cycle */
  snprintf(j->reason, sizeof j->reason, "%s",
           j->spec.hold ? "JobHeldUser" : j->spec.dependency && *j->spec.dependency ? "Dependency" : "Priority");
  if (px_jobs_insert(s, j)) { /* out of memory, or already there */
    px_jobspec_fini(&j->spec);
    free(j);
    return NULL;
  }
  return j;
}

void px_jobs_set_prio(struct px_server *s, struct px_sjob *j, const struct px_job_view *v) {
  const struct px_conf_sched *w = &s->conf->sched;
  const struct px_prio_factors *f = &v->prio;
  j->priority = f->priority;
  j->prio[0] = (uint32_t)(w->weight_age * f->age);
  j->prio[1] = (uint32_t)(w->weight_fairshare * f->fairshare);
  j->prio[2] = (uint32_t)(w->weight_jobsize * f->jobsize);
  j->prio[3] = (uint32_t)(w->weight_partition * f->partition);
  j->prio[4] = (uint32_t)(w->weight_qos * f->qos);
  j->prio[5] = j->prio[6] = 0; /* no site or association factors */
}

/* A pending job's priority is taken again, when only it moved, at most
 * this often: age moves every priority a little at every cycle. */
#define PRIO_REFRESH_S 30

void px_jobs_follow(struct px_server *s, struct px_sjob *j, const struct px_job_view *v,
                    int64_t now, bool prio_now) {
  if (v->state != PX_JOB_PENDING || j->state != PX_JOB_PENDING) return;
  const char *name = px_reason_name(v->reason);
  bool reason = strcmp(j->reason, name) != 0;
  bool prio = v->prio.priority != j->priority && (prio_now || now - j->prio_time >= PRIO_REFRESH_S);
  if (!reason && !prio) return;
  snprintf(j->reason, sizeof j->reason, "%s", name);
  px_jobs_set_prio(s, j, v);
  j->prio_time = now;
  px_jobs_touch(s, j);
}

/* Slurm shows an array as one line for its pending remainder and one per
 * started task, and forgets the array's own record once nothing is left to
 * start; sacct lists only the tasks. Here the record stays in the table
 * (dependencies, `show`, cancel of the whole array name it) and its state
 * is derived from its tasks' records, both live and at journal replay. */
void px_jobs_array_fold(struct px_server *s, struct px_sjob *a, int64_t now) {
  if (!px_sjob_is_array(a) || px_job_state_terminal(a->state)) return;
  enum px_job_state st = PX_JOB_PENDING;
  if (a->arr_cancelled || a->arr_started >= a->arr_ntasks)
    st = a->arr_ended < a->arr_started ? PX_JOB_RUNNING
         : a->arr_cancelled            ? PX_JOB_CANCELLED
         : a->arr_failed               ? PX_JOB_FAILED
                                       : PX_JOB_COMPLETED;
  if (st != PX_JOB_PENDING) snprintf(a->reason, sizeof a->reason, "None");
  if (px_job_state_terminal(st)) a->end = now;
  a->state = st;
  a->mseq = s->seq; /* the record being applied: watchers see the change */
  px_jobs_touch(s, a);
}

/* Walks "lo[-hi[:step]],...[%N]" (validated by the core at submit) and
 * writes the ranges left after the first arr_started tasks, then the %N. */
char *px_jobs_array_pending(const struct px_sjob *a) {
  const char *p = a->spec.array, *throttle = strchr(p, '%');
  size_t cap = 4 * strlen(p) + 32, len = 0; /* a clipped range is at most 2x + 2 longer */
  char *out = malloc(cap);
  if (!out) return NULL;
  out[0] = '\0';
  uint64_t skip = a->arr_started;
  while (!a->arr_cancelled && skip < a->arr_ntasks && *p >= '0' && *p <= '9') {
    char *end;
    unsigned long lo = strtoul(p, &end, 10), hi = lo, step = 1;
    if (*end == '-') hi = strtoul(end + 1, &end, 10);
    if (*end == ':') step = strtoul(end + 1, &end, 10);
    p = *end == ',' ? end + 1 : end;
    if (!step || hi < lo) break;
    uint64_t n = (hi - lo) / step + 1;
    hi = lo + (n - 1) * step;
    if (skip >= n) {
      skip -= n;
      continue;
    }
    lo += skip * step;
    skip = 0;
    int w = hi == lo     ? snprintf(out + len, cap - len, "%s%lu", len ? "," : "", lo)
            : step == 1 ? snprintf(out + len, cap - len, "%s%lu-%lu", len ? "," : "", lo, hi)
                        : snprintf(out + len, cap - len, "%s%lu-%lu:%lu", len ? "," : "", lo, hi, step);
    if (w > 0) len += (size_t)w < cap - len ? (size_t)w : cap - len - 1;
  }
  if (len && throttle) snprintf(out + len, cap - len, "%.16s", throttle);
  return out;
}

void px_jobs_touch(struct px_server *s, struct px_sjob *j) {
  px_jview_unref(j->view);
  j->view = NULL;
  s->dirty = true;
}

void px_jobs_free_all(struct px_server *s) {
  for (size_t i = 0; i < s->njobs; i++) {
    struct px_sjob *j = s->jobs[i];
    px_jobspec_fini(&j->spec);
    px_jview_unref(j->view);
    free(j->alloc);
    free(j->cancelled_by);
    free(j);
  }
  free(s->jobs);
  s->jobs = NULL;
  s->njobs = s->jobs_cap = 0;
  px_map_fini(&s->index);
  px_u64vec_fini(&s->follow);
}

/* Appends text to a growing malloc'd string; false on ENOMEM. */
static bool append(char **buf, size_t *len, size_t *cap, const char *text) {
  size_t n = strlen(text);
  if (*len + n + 1 > *cap) {
    size_t c = (*cap ? *cap * 2 : 64) + n;
    char *p = realloc(*buf, c);
    if (!p) return false;
    *buf = p;
    *cap = c;
  }
  memcpy(*buf + *len, text, n + 1);
  *len += n;
  return true;
}

char *px_jobs_nodelist(struct px_server *s, const struct px_sjob *j) {
  const char **names = calloc(j->nalloc ? j->nalloc : 1, sizeof *names);
  char *out = NULL;
  if (!names) return NULL;
  for (uint32_t i = 0; i < j->nalloc; i++) names[i] = s->conf->nodes[j->alloc[i].node].name;
  if (px_hostlist_compress(names, j->nalloc, &out)) out = NULL;
  free(names);
  return out;
}

/* "n01:0,1;n02:0,1" */
static char *gpus_by_node(struct px_server *s, const struct px_sjob *j) {
  char *buf = NULL, num[16];
  size_t len = 0, cap = 0;
  bool ok = true;
  for (uint32_t i = 0; ok && i < j->nalloc; i++) {
    ok = (!i || append(&buf, &len, &cap, ";")) &&
         append(&buf, &len, &cap, s->conf->nodes[j->alloc[i].node].name) &&
         append(&buf, &len, &cap, ":");
    bool first = true;
    for (int g = 0; ok && g < 64; g++) {
      if (!(j->alloc[i].gpus >> g & 1)) continue;
      snprintf(num, sizeof num, "%s%d", first ? "" : ",", g);
      ok = append(&buf, &len, &cap, num);
      first = false;
    }
  }
  if (!ok) free(buf);
  return ok ? buf : NULL;
}

static void totals(const struct px_sjob *j, uint32_t *ncpu, uint32_t *ngpu, uint64_t *mem) {
  *ncpu = *ngpu = 0;
  *mem = 0;
  for (uint32_t i = 0; i < j->nalloc; i++) {
    *ncpu += j->alloc[i].ncpu;
    *ngpu += (uint32_t)px_bits64_count(j->alloc[i].gpus);
    *mem += j->alloc[i].mem_mib;
  }
}

/* Copies the spec without the bulky launch fields (script, environment). */
static int view_spec(struct px_jobspec *dst, const struct px_jobspec *src) {
  struct px_jobspec tmp = *src;
  tmp.script = NULL;
  tmp.env = NULL;
  return px_jobspec_copy(dst, &tmp);
}

/* A fractional job's one GPU: its share (docs/gpus.md). */
static uint32_t gpu_share(const struct px_sjob *j) { return j->nalloc == 1 ? j->alloc[0].gpu_share : 0; }

static double billable_s(struct px_server *s, const struct px_sjob *j, int64_t end) {
  if (!j->start || end <= j->start) return 0;
  uint32_t ncpu, whole;
  uint64_t mem;
  totals(j, &ncpu, &whole, &mem);
  double ngpu = gpu_share(j) ? gpu_share(j) / 100.0 : whole; /* a fraction bills its part */
  const struct px_conf_sched *c = &s->conf->sched;
  double w = ngpu * c->billing_weight_gpu + ncpu * c->billing_weight_cpu +
             (double)mem / 1024.0 * c->billing_weight_mem_gib;
  if (w <= 0) w = ngpu ? ngpu : ncpu; /* no TRESBillingWeights: GPUs, else CPUs */
  return w * (double)(end - j->start);
}

int px_jobs_info(struct px_server *s, const struct px_sjob *j, struct px_job_info *out) {
  px_job_info_init(out);
  out->job_id = j->id;
  out->array_job_id = j->array_job_id;
  out->array_task_id = j->array_task_id;
  if (px_sjob_is_array(j)) { /* squeue's J_[pending] line (array_task_id stays PX_NONE) */
    out->array_job_id = j->id;
    if (j->state == PX_JOB_PENDING && !(out->array_pending = px_jobs_array_pending(j))) goto fail;
  }
  if (view_spec(&out->spec, &j->spec)) goto fail;
  /* a started job runs under the limit the scheduler gave it, which backfill
   * may have cut down to --time-min: scontrol shows that one, as Slurm */
  if (j->start && j->time_limit_s > 0) out->spec.time_limit_s = j->time_limit_s;
  /* a requeued job waiting again is PENDING with Restarts=N, as Slurm 22.05
   * shows it (REQUEUED is only the state of the attempt that ended: sacct) */
  snprintf(out->state, sizeof out->state, "%s", state_names[j->state]);
  snprintf(out->reason, sizeof out->reason, "%s", j->state == PX_JOB_RUNNING ? "None" : j->reason);
  /* Slurm holds a job by setting its priority to 0, and shows it so */
  bool held = j->state == PX_JOB_PENDING && !strncmp(j->reason, "JobHeld", 7);
  out->priority = held ? 0 : j->priority;
  out->prio_age = j->prio[0];
  out->prio_fairshare = j->prio[1];
  out->prio_jobsize = j->prio[2];
  out->prio_partition = j->prio[3];
  out->prio_qos = j->prio[4];
  out->prio_site = j->prio[5];
  out->prio_assoc = j->prio[6];
  out->submit_time = j->submit;
  out->eligible_time = j->eligible;
  out->start_time = j->start;
  out->end_time = j->end;
  out->exit_code = j->exit_code;
  out->term_signal = j->term_signal;
  out->restarts = j->restarts;
  out->peak_mem_mib = j->peak_mem_mib;
  out->cpu_time_ms = j->cpu_time_ms;
  out->nnodes = j->nalloc ? j->nalloc : (j->spec.nodes_min ? j->spec.nodes_min : 1);
  totals(j, &out->ncpus, &out->ngpus, &out->mem_mib);
  out->billable_tres_s = billable_s(s, j, j->end);
  if (j->nalloc && (!(out->nodelist = px_jobs_nodelist(s, j)) ||
                    !(out->gpus_by_node = gpus_by_node(s, j))))
    goto fail;
  if (j->cancelled_by && !(out->cancelled_by = strdup(j->cancelled_by))) goto fail;
  return 0;
fail:
  px_job_info_fini(out);
  px_job_info_init(out);
  return PX_ENOMEM;
}

void px_jobs_acct_row(struct px_server *s, const struct px_sjob *j, struct px_acct_row *r,
                      char *nodelist) {
  memset(r, 0, sizeof *r);
  r->job_id = j->id;
  r->attempt = j->restarts;
  r->array_job_id = j->array_job_id;
  r->array_task_id = j->array_task_id;
  r->name = j->spec.name;
  r->user = j->spec.user;
  r->uid = j->spec.uid;
  r->account = j->spec.account;
  r->partition = j->spec.partition;
  r->qos = j->spec.qos;
  r->state = state_names[j->state];
  r->nodelist = nodelist;
  r->submit_time = j->submit;
  r->eligible_time = j->eligible;
  r->start_time = j->start;
  r->end_time = j->end;
  r->exit_code = j->exit_code;
  r->term_signal = j->term_signal;
  r->nnodes = j->nalloc;
  totals(j, &r->ncpus, &r->ngpus, &r->mem_mib);
  r->gpu_share = gpu_share(j);
  r->billable_tres_s = billable_s(s, j, j->end);
  /* the limit it ran under, as the job view shows it: a replay of the
   * record needs it (phalanx export), and sacct shows it as Timelimit */
  r->time_limit_s = j->start && j->time_limit_s > 0 ? j->time_limit_s : j->spec.time_limit_s;
  r->submit_seq = j->submit_seq;
  r->start_seq = j->start_seq;
  r->dependency = j->spec.dependency; /* as written: a replay holds the job the same way */
  r->end_seq = j->end_seq;
}

void px_jobs_attempt_row(struct px_server *s, const struct px_sjob *j, struct px_acct_row *r,
                         char *nodelist, const char *state, int64_t end, uint64_t end_seq) {
  px_jobs_acct_row(s, j, r, nodelist);
  r->state = state;
  r->end_time = end;
  r->end_seq = end_seq;
  r->exit_code = r->term_signal = 0; /* Slurm's requeued attempt: ExitCode 0:0 */
  r->billable_tres_s = billable_s(s, j, end);
}
