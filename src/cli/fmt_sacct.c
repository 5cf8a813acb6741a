/*
 * fmt_sacct.c - sacct's output as Slurm 22.05 prints it: fixed-width fields
 * (JobID left-justified, the rest right), each followed by one space, a
 * dashes line, and '+' marking a value cut to fit; or '|'-separated with
 * --parsable/--parsable2. A job that started also gets its ".batch" step
 * line unless -X.
 *
 * Phalanx's accounting keeps one record per job attempt with its srun steps
 * inside (".0", ".1": their own state, exit code, times, nodes, MaxRSS and
 * TotalCPU); the batch step's line is derived from the job's (its state
 * follows the rules Slurm applies: a job cancelled or timed out shows a
 * CANCELLED step with signal 15).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/fmt_job.h"

struct sacct_row {
  const struct px_job_info *j;  /* for an srun step: the job with the step's figures */
  bool step;                    /* the batch step, or st's */
  int64_t now;
  const struct px_step_info *st; /* an srun step, else NULL */
};

typedef void (*sacct_get)(const struct sacct_row *r, char *buf, size_t n);

static void step_state(const struct sacct_row *r, char *buf, size_t n, int *exit, int *sig) {
  if (r->st) { /* an srun step ended on its own terms */
    *exit = r->st->exit_code;
    *sig = r->st->term_signal;
    if (buf) snprintf(buf, n, "%s", r->st->state);
    return;
  }
  const char *s = r->j->state;
  *exit = r->j->exit_code;
  *sig = r->j->term_signal;
  if (!strcmp(s, "CANCELLED") || !strcmp(s, "TIMEOUT") || !strcmp(s, "PREEMPTED")) {
    s = "CANCELLED";
    *exit = 0;
    *sig = 15;
  } else if (!strcmp(s, "OUT_OF_MEMORY")) {
    *exit = 0;
    *sig = 125;
  } else if (!strcmp(s, "COMPLETING")) {
    s = "COMPLETED";
  }
  if (buf) snprintf(buf, n, "%s", s);
}

static void step_suffix(const struct sacct_row *r, char *buf, size_t n) {
  if (r->st) snprintf(buf, n, ".%u", r->st->step_id);
  else snprintf(buf, n, "%s", r->step ? ".batch" : "");
}
static void f_jobid(const struct sacct_row *r, char *buf, size_t n) {
  char id[64], sfx[16];
  px_fmt_job_id(id, sizeof id, r->j);
  step_suffix(r, sfx, sizeof sfx);
  snprintf(buf, n, "%s%s", id, sfx);
}
static void f_jobidraw(const struct sacct_row *r, char *buf, size_t n) {
  char sfx[16];
  step_suffix(r, sfx, sizeof sfx);
  snprintf(buf, n, "%" PRIu64 "%s", r->j->job_id, sfx);
}
static void f_jobname(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%s", r->st ? PX_STR(r->st->name) : r->step ? "batch" : PX_STR(r->j->spec.name));
}
static void f_partition(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%s", r->step ? "" : PX_STR(r->j->spec.partition));
}
static void f_account(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%s", PX_STR(r->j->spec.account));
}
static void f_alloccpus(const struct sacct_row *r, char *buf, size_t n) {
  uint32_t cpus = px_fmt_job_cpus(r->j), nodes = r->st ? r->st->nnodes : 1;
  if (r->step && r->j->nnodes > nodes) cpus = cpus / r->j->nnodes * nodes; /* the batch step: one node */
  snprintf(buf, n, "%u", cpus);
}
static void f_state(const struct sacct_row *r, char *buf, size_t n) {
  int e, s;
  if (r->step) step_state(r, buf, n, &e, &s);
  else if (!strcmp(r->j->state, "CANCELLED") && r->j->cancelled_by)
    snprintf(buf, n, "CANCELLED by %s", r->j->cancelled_by);
  else
    snprintf(buf, n, "%s", r->j->state);
}
static void f_exitcode(const struct sacct_row *r, char *buf, size_t n) {
  int e = r->j->exit_code, s = r->j->term_signal;
  if (r->step) step_state(r, NULL, 0, &e, &s);
  else if (strcmp(r->j->state, "FAILED") && strcmp(r->j->state, "COMPLETED")) s = 0;
  snprintf(buf, n, "%d:%d", e, s);
}
static void f_elapsed(const struct sacct_row *r, char *buf, size_t n) {
  px_cli_fmt_hms(buf, n, px_fmt_job_elapsed(r->j, r->now));
}
static void f_elapsedraw(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%" PRId64, px_fmt_job_elapsed(r->j, r->now));
}
static void f_alloctres(const struct sacct_row *r, char *buf, size_t n) {
  if (r->j->start_time <= 0 && !r->step) buf[0] = '\0';
  else px_fmt_job_tres(buf, n, r->j, true);
}
static void f_reqtres(const struct sacct_row *r, char *buf, size_t n) {
  px_fmt_job_tres(buf, n, r->j, true);
}
static void f_nnodes(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%u", r->st ? r->st->nnodes : r->step ? 1 : px_fmt_job_nodes(r->j));
}
static void f_nodelist(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%s", r->j->nodelist ? r->j->nodelist : "None assigned");
}
#define TIME_FIELD(fn, field)                                                                  \
  static void fn(const struct sacct_row *r, char *buf, size_t n) {                             \
    px_cli_fmt_iso(buf, n, r->j->field, "Unknown");                                            \
  }
TIME_FIELD(f_start, start_time)
TIME_FIELD(f_end, end_time)
TIME_FIELD(f_submit, submit_time)
TIME_FIELD(f_eligible, eligible_time)
static void f_user(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%s", r->step ? "" : PX_STR(r->j->spec.user));
}
static void f_uid(const struct sacct_row *r, char *buf, size_t n) {
  if (r->step) buf[0] = '\0';
  else snprintf(buf, n, "%u", r->j->spec.uid);
}
static void f_qos(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%s", r->step ? "" : PX_STR(r->j->spec.qos));
}
static void f_priority(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%u", r->j->priority);
}
static void f_timelimit(const struct sacct_row *r, char *buf, size_t n) {
  if (r->step) buf[0] = '\0';
  else px_cli_fmt_hms(buf, n, r->j->spec.time_limit_s);
}
static void f_workdir(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%s", PX_STR(r->j->spec.workdir));
}
static void f_reason(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%s", r->j->reason);
}
static void f_maxrss(const struct sacct_row *r, char *buf, size_t n) {
  if (!r->step) buf[0] = '\0';
  else snprintf(buf, n, "%" PRIu64 "K", r->j->peak_mem_mib * 1024);
}
/* Slurm's TotalCPU: MM:SS.mmm under an hour, then [D-]HH:MM:SS. */
static void f_totalcpu(const struct sacct_row *r, char *buf, size_t n) {
  uint64_t ms = r->j->cpu_time_ms;
  if (ms < 3600000)
    snprintf(buf, n, "%02u:%02u.%03u", (unsigned)(ms / 60000), (unsigned)(ms / 1000 % 60), (unsigned)(ms % 1000));
  else
    px_cli_fmt_hms(buf, n, (int64_t)(ms / 1000));
}
static void f_cputime(const struct sacct_row *r, char *buf, size_t n) {
  px_cli_fmt_hms(buf, n, px_fmt_job_elapsed(r->j, r->now) * px_fmt_job_cpus(r->j));
}
static void f_reqmem(const struct sacct_row *r, char *buf, size_t n) {
  const struct px_jobspec *s = &r->j->spec;
  if (s->mem_per_node_mib) px_fmt_mem(buf, n, s->mem_per_node_mib);
  else if (s->mem_per_cpu_mib) px_fmt_mem(buf, n, s->mem_per_cpu_mib);
  else if (s->mem_per_gpu_mib) px_fmt_mem(buf, n, s->mem_per_gpu_mib);
  else snprintf(buf, n, "0");
}
static void f_restarts(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%u", r->j->restarts);
}
static void f_comment(const struct sacct_row *r, char *buf, size_t n) {
  snprintf(buf, n, "%s", r->j->spec.comment ? r->j->spec.comment : "");
}

static const struct sacct_field {
  const char *name;
  int width;                  /* negative: left-justified */
  sacct_get get;
} sacct_fields[] = {
    {"JobID", -12, f_jobid},         {"JobIDRaw", -12, f_jobidraw},  {"JobName", 10, f_jobname},
    {"Partition", 10, f_partition},  {"Account", 10, f_account},     {"AllocCPUS", 10, f_alloccpus},
    {"NCPUS", 10, f_alloccpus},      {"State", 10, f_state},         {"ExitCode", 8, f_exitcode},
    {"Elapsed", 10, f_elapsed},      {"ElapsedRaw", 10, f_elapsedraw}, {"AllocTRES", 10, f_alloctres},
    {"ReqTRES", 10, f_reqtres},      {"NNodes", 8, f_nnodes},        {"AllocNodes", 10, f_nnodes},
    {"NodeList", -15, f_nodelist},   {"Start", 19, f_start},         {"End", 19, f_end},
    {"Submit", 19, f_submit},        {"Eligible", 19, f_eligible},   {"User", 9, f_user},
    {"UID", 6, f_uid},               {"QOS", 10, f_qos},             {"Priority", 10, f_priority},
    {"Timelimit", 10, f_timelimit},  {"WorkDir", -15, f_workdir},    {"Reason", 20, f_reason},
    {"MaxRSS", 10, f_maxrss},        {"TotalCPU", 10, f_totalcpu},   {"CPUTime", 10, f_cputime},
    {"ReqMem", 10, f_reqmem},        {"Restarts", 8, f_restarts},    {"Comment", 15, f_comment},
};

struct sacct_col {
  const struct sacct_field *f;
  int width;
  bool left;
};

static int parse_fields(const char *spec, struct sacct_col *cols, size_t max, size_t *ncols,
                        struct px_diag *d) {
  size_t n = 0;
  for (const char *p = spec; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    const char *pct = memchr(p, '%', len);
    size_t nlen = pct ? (size_t)(pct - p) : len;
    const struct sacct_field *f = NULL;
    for (size_t i = 0; i < sizeof sacct_fields / sizeof sacct_fields[0] && !f; i++)
      if (strlen(sacct_fields[i].name) == nlen && !strncasecmp(sacct_fields[i].name, p, nlen))
        f = &sacct_fields[i];
    if (!f) return px_diag_set(d, PX_EINVAL, -1, "Invalid field requested: \"%.*s\"", (int)nlen, p);
    if (n == max) return px_diag_set(d, PX_EINVAL, -1, "too many fields requested");
    cols[n] = (struct sacct_col){f, f->width < 0 ? -f->width : f->width, f->width < 0};
    if (pct) cols[n].width = (int)strtol(pct + 1, NULL, 10);
    n++;
    p += len + (e ? 1 : 0);
  }
  *ncols = n;
  return 0;
}

/* A line is built in memory and written once: sacct prints hundreds of
 * thousands of lines (cli_sacct_100k_ms), and a printf per field was most
 * of its time. */
struct line {
  char buf[16384];
  size_t len;
};

static void put(struct line *l, const char *s, size_t n) {
  if (n > sizeof l->buf - 1 - l->len) n = sizeof l->buf - 1 - l->len;
  memcpy(l->buf + l->len, s, n);
  l->len += n;
}

static void pad(struct line *l, size_t n) {
  if (n > sizeof l->buf - 1 - l->len) n = sizeof l->buf - 1 - l->len;
  memset(l->buf + l->len, ' ', n);
  l->len += n;
}

/* Fixed width; a value that does not fit is cut to width-1 plus '+'. */
static void put_fixed(struct line *l, const struct sacct_col *c, const char *v, bool header) {
  size_t len = strlen(v), w = (size_t)c->width;
  if (len > w && !header) {
    put(l, v, w ? w - 1 : 0);
    put(l, "+ ", 2);
    return;
  }
  if (len > w) len = w;
  if (!c->left) pad(l, w - len);
  put(l, v, len);
  if (c->left) pad(l, w - len);
  put(l, " ", 1);
}

static void print_line(FILE *out, const struct sacct_col *cols, size_t ncols,
                       const struct sacct_row *r, const struct px_sacct_opts *o) {
  char buf[4096];
  struct line l = {.len = 0};
  bool parsable = o->parsable || o->parsable2;
  for (size_t i = 0; i < ncols; i++) {
    const char *v = cols[i].f->name;
    if (r) {
      cols[i].f->get(r, buf, sizeof buf);
      v = buf;
    }
    if (!parsable) {
      put_fixed(&l, &cols[i], v, !r);
      continue;
    }
    put(&l, v, strlen(v));
    if (i + 1 < ncols || o->parsable) put(&l, "|", 1);
  }
  put(&l, "\n", 1);
  fwrite(l.buf, 1, l.len, out);
}

/* An srun step's line: the job's fields with the step's own figures. */
static void print_srun_step(FILE *out, const struct sacct_col *cols, size_t ncols, const struct px_job_info *j,
                            const struct px_step_info *st, const struct px_sacct_opts *o) {
  struct px_job_info v = *j;
  snprintf(v.state, sizeof v.state, "%s", st->state);
  v.exit_code = st->exit_code, v.term_signal = st->term_signal;
  v.start_time = st->start_time, v.end_time = st->end_time;
  v.nodelist = st->nodelist, v.nnodes = st->nnodes;
  v.peak_mem_mib = st->peak_mem_mib, v.cpu_time_ms = st->cpu_time_ms;
  struct sacct_row r = {&v, true, o->now, st};
  print_line(out, cols, ncols, &r, o);
}

int px_fmt_sacct(FILE *out, const struct px_job_info *jobs, size_t n,
                 const struct px_sacct_opts *o, struct px_diag *d) {
  struct sacct_col cols[64];
  size_t ncols = 0;
  int rc = parse_fields(o->format ? o->format
                                  : "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode",
                        cols, 64, &ncols, d);
  if (rc) return rc;
  if (!o->noheader) {
    print_line(out, cols, ncols, NULL, o);
    if (!o->parsable && !o->parsable2) {
      for (size_t i = 0; i < ncols; i++) {
        for (int k = 0; k < cols[i].width; k++) fputc('-', out);
        fputc(' ', out);
      }
      fputc('\n', out);
    }
  }
  for (size_t i = 0; i < n; i++) {
    struct sacct_row r = {&jobs[i], false, o->now, NULL};
    print_line(out, cols, ncols, &r, o);
    if (!o->allocations && jobs[i].start_time > 0) {
      r.step = true;
      print_line(out, cols, ncols, &r, o);
      for (uint32_t k = 0; k < jobs[i].nsteps; k++) print_srun_step(out, cols, ncols, &jobs[i], &jobs[i].steps[k], o);
    }
  }
  return 0;
}
