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
 *
 * sacct prints hundreds of thousands of lines (cli_sacct_100k_ms), so the
 * hot path avoids printf: a field's getter returns its value (a string the
 * job already holds, or digits written into the caller's buffer), lines go
 * into one output buffer written in large pieces, and a printer prints a
 * page of jobs at a time (cmd_reports.c streams the pages).
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

/* A field's value: buf (n bytes) when written there, else a string the row holds. */
typedef const char *(*sacct_get)(const struct sacct_row *r, char *buf, size_t n);

/* v in decimal at buf (>= 21 bytes); returns buf. */
static char *dec(char *buf, uint64_t v) {
  char t[24];
  size_t k = 0;
  do t[k++] = (char)('0' + v % 10); while (v /= 10);
  for (size_t i = 0; i < k; i++) buf[i] = t[k - 1 - i];
  buf[k] = '\0';
  return buf;
}
static char *sdec(char *buf, int64_t v) {
  if (v >= 0) return dec(buf, (uint64_t)v);
  buf[0] = '-';
  dec(buf + 1, 0 - (uint64_t)v);
  return buf;
}

/* The batch step's (or an srun step's) state, exit code and signal. */
static const char *step_state(const struct sacct_row *r, int *exit, int *sig) {
  if (r->st) { /* an srun step ended on its own terms */
    *exit = r->st->exit_code;
    *sig = r->st->term_signal;
    return r->st->state;
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
  return s;
}

/* ".batch", ".N" or "" after the job id at buf (n bytes). */
static const char *add_suffix(const struct sacct_row *r, char *buf, size_t n) {
  size_t len = strlen(buf);
  if (n - len < 24) return buf; /* a job id of 4 KiB: not from this server */
  if (r->st) buf[len] = '.', dec(buf + len + 1, r->st->step_id);
  else if (r->step) memcpy(buf + len, ".batch", 7);
  return buf;
}
static const char *f_jobid(const struct sacct_row *r, char *buf, size_t n) {
  if (r->j->array_job_id) px_fmt_job_id(buf, n, r->j);
  else dec(buf, r->j->job_id);
  return add_suffix(r, buf, n);
}
static const char *f_jobidraw(const struct sacct_row *r, char *buf, size_t n) {
  return add_suffix(r, dec(buf, r->j->job_id), n);
}
static const char *f_jobname(const struct sacct_row *r, char *buf, size_t n) {
  (void)buf, (void)n;
  return r->st ? PX_STR(r->st->name) : r->step ? "batch" : PX_STR(r->j->spec.name);
}
static const char *f_partition(const struct sacct_row *r, char *buf, size_t n) {
  (void)buf, (void)n;
  return r->step ? "" : PX_STR(r->j->spec.partition);
}
static const char *f_account(const struct sacct_row *r, char *buf, size_t n) {
  (void)buf, (void)n;
  return PX_STR(r->j->spec.account);
}
static const char *f_alloccpus(const struct sacct_row *r, char *buf, size_t n) {
  (void)n;
  uint32_t cpus = px_fmt_job_cpus(r->j), nodes = r->st ? r->st->nnodes : 1;
  if (r->step && r->j->nnodes > nodes) cpus = cpus / r->j->nnodes * nodes; /* the batch step: one node */
  return dec(buf, cpus);
}
static const char *f_state(const struct sacct_row *r, char *buf, size_t n) {
  int e, s;
  if (r->step) return step_state(r, &e, &s);
  if (!strcmp(r->j->state, "CANCELLED") && r->j->cancelled_by) {
    snprintf(buf, n, "CANCELLED by %s", r->j->cancelled_by);
    return buf;
  }
  return r->j->state;
}
static const char *f_exitcode(const struct sacct_row *r, char *buf, size_t n) {
  (void)n;
  int e = r->j->exit_code, s = r->j->term_signal;
  if (r->step) step_state(r, &e, &s);
  else if (strcmp(r->j->state, "FAILED") && strcmp(r->j->state, "COMPLETED")) s = 0;
  sdec(buf, e);
  size_t len = strlen(buf);
  buf[len] = ':';
  sdec(buf + len + 1, s);
  return buf;
}
static const char *f_elapsed(const struct sacct_row *r, char *buf, size_t n) {
  px_cli_fmt_hms(buf, n, px_fmt_job_elapsed(r->j, r->now));
  return buf;
}
static const char *f_elapsedraw(const struct sacct_row *r, char *buf, size_t n) {
  (void)n;
  return sdec(buf, px_fmt_job_elapsed(r->j, r->now));
}
static const char *f_alloctres(const struct sacct_row *r, char *buf, size_t n) {
  if (r->j->start_time <= 0 && !r->step) return "";
  px_fmt_job_tres(buf, n, r->j, true);
  return buf;
}
static const char *f_reqtres(const struct sacct_row *r, char *buf, size_t n) {
  px_fmt_job_tres(buf, n, r->j, true);
  return buf;
}
static const char *f_nnodes(const struct sacct_row *r, char *buf, size_t n) {
  (void)n;
  return dec(buf, r->st ? r->st->nnodes : r->step ? 1 : px_fmt_job_nodes(r->j));
}
static const char *f_nodelist(const struct sacct_row *r, char *buf, size_t n) {
  (void)buf, (void)n;
  return r->j->nodelist ? r->j->nodelist : "None assigned";
}
#define TIME_FIELD(fn, field)                                                                  \
  static const char *fn(const struct sacct_row *r, char *buf, size_t n) {                      \
    px_cli_fmt_iso(buf, n, r->j->field, "Unknown");                                            \
    return buf;                                                                                \
  }
TIME_FIELD(f_start, start_time)
TIME_FIELD(f_end, end_time)
TIME_FIELD(f_submit, submit_time)
TIME_FIELD(f_eligible, eligible_time)
static const char *f_user(const struct sacct_row *r, char *buf, size_t n) {
  (void)buf, (void)n;
  return r->step ? "" : PX_STR(r->j->spec.user);
}
static const char *f_uid(const struct sacct_row *r, char *buf, size_t n) {
  (void)n;
  return r->step ? "" : dec(buf, r->j->spec.uid);
}
static const char *f_qos(const struct sacct_row *r, char *buf, size_t n) {
  (void)buf, (void)n;
  return r->step ? "" : PX_STR(r->j->spec.qos);
}
static const char *f_priority(const struct sacct_row *r, char *buf, size_t n) {
  (void)n;
  return dec(buf, r->j->priority);
}
static const char *f_timelimit(const struct sacct_row *r, char *buf, size_t n) {
  if (r->step) return "";
  px_cli_fmt_hms(buf, n, r->j->spec.time_limit_s);
  return buf;
}
static const char *f_workdir(const struct sacct_row *r, char *buf, size_t n) {
  (void)buf, (void)n;
  return PX_STR(r->j->spec.workdir);
}
static const char *f_reason(const struct sacct_row *r, char *buf, size_t n) {
  (void)buf, (void)n;
  return r->j->reason;
}
static const char *f_maxrss(const struct sacct_row *r, char *buf, size_t n) {
  (void)n;
  if (!r->step) return "";
  size_t len = strlen(dec(buf, r->j->peak_mem_mib * 1024));
  memcpy(buf + len, "K", 2);
  return buf;
}
/* Slurm's TotalCPU: MM:SS.mmm under an hour, then [D-]HH:MM:SS. */
static const char *f_totalcpu(const struct sacct_row *r, char *buf, size_t n) {
  uint64_t ms = r->j->cpu_time_ms;
  if (ms < 3600000)
    snprintf(buf, n, "%02u:%02u.%03u", (unsigned)(ms / 60000), (unsigned)(ms / 1000 % 60), (unsigned)(ms % 1000));
  else
    px_cli_fmt_hms(buf, n, (int64_t)(ms / 1000));
  return buf;
}
static const char *f_cputime(const struct sacct_row *r, char *buf, size_t n) {
  px_cli_fmt_hms(buf, n, px_fmt_job_elapsed(r->j, r->now) * px_fmt_job_cpus(r->j));
  return buf;
}
static const char *f_reqmem(const struct sacct_row *r, char *buf, size_t n) {
  const struct px_jobspec *s = &r->j->spec;
  if (s->mem_per_node_mib) px_fmt_mem(buf, n, s->mem_per_node_mib);
  else if (s->mem_per_cpu_mib) px_fmt_mem(buf, n, s->mem_per_cpu_mib);
  else if (s->mem_per_gpu_mib) px_fmt_mem(buf, n, s->mem_per_gpu_mib);
  else return "0";
  return buf;
}
static const char *f_restarts(const struct sacct_row *r, char *buf, size_t n) {
  (void)n;
  return dec(buf, r->j->restarts);
}
static const char *f_comment(const struct sacct_row *r, char *buf, size_t n) {
  (void)buf, (void)n;
  return r->j->spec.comment ? r->j->spec.comment : "";
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

#define SACCT_MAX_COLS 64
#define SACCT_VALUE_MAX 4095 /* a value's bytes at most (what a 4 KiB buffer held) */
#define SACCT_LINE_MAX 16383 /* a line's bytes at most, its newline aside */

struct sacct_col {
  const struct sacct_field *f;
  size_t width;
  bool left;
};

struct px_sacct_printer {
  FILE *out;
  struct px_sacct_opts o;
  struct sacct_col cols[SACCT_MAX_COLS];
  size_t ncols;
  char *buf; /* lines waiting to be written */
  size_t len, cap;
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
    cols[n] = (struct sacct_col){f, (size_t)(f->width < 0 ? -f->width : f->width), f->width < 0};
    if (pct) { /* %N, or %-N: left-justified, as Slurm takes it */
      long w = strtol(pct + 1, NULL, 10);
      cols[n].width = w > 0 ? (size_t)w : w < 0 && w > -10000 ? (size_t)-w : 0;
      if (w < 0) cols[n].left = true;
    }
    n++;
    p += len + (e ? 1 : 0);
  }
  *ncols = n;
  return 0;
}

/* The output buffer: written out when a line might not fit. */
static void flush(struct px_sacct_printer *p) {
  if (p->len) fwrite(p->buf, 1, p->len, p->out);
  p->len = 0;
}

/* A line is built at the end of the buffer, at most SACCT_LINE_MAX bytes
 * (longer ones are cut, as they always were). */
struct line {
  char *p;
  size_t len;
};

static void put(struct line *l, const char *s, size_t n) {
  if (n > SACCT_LINE_MAX - l->len) n = SACCT_LINE_MAX - l->len;
  memcpy(l->p + l->len, s, n);
  l->len += n;
}

static void pad(struct line *l, size_t n) {
  if (n > SACCT_LINE_MAX - l->len) n = SACCT_LINE_MAX - l->len;
  memset(l->p + l->len, ' ', n);
  l->len += n;
}

/* Fixed width; a value that does not fit is cut to width-1 plus '+'. */
static void put_fixed(struct line *l, const struct sacct_col *c, const char *v, size_t len, bool header) {
  size_t w = c->width;
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

static void print_line(struct px_sacct_printer *p, const struct sacct_row *r) {
  if (p->cap - p->len < SACCT_LINE_MAX + 1) flush(p);
  char buf[SACCT_VALUE_MAX + 1];
  struct line l = {p->buf + p->len, 0};
  bool parsable = p->o.parsable || p->o.parsable2;
  for (size_t i = 0; i < p->ncols; i++) {
    const char *v = r ? p->cols[i].f->get(r, buf, sizeof buf) : p->cols[i].f->name;
    size_t len = strlen(v);
    if (len > SACCT_VALUE_MAX) len = SACCT_VALUE_MAX;
    if (!parsable) {
      put_fixed(&l, &p->cols[i], v, len, !r);
      continue;
    }
    put(&l, v, len);
    if (i + 1 < p->ncols || p->o.parsable) put(&l, "|", 1);
  }
  l.p[l.len++] = '\n';
  p->len += l.len;
}

/* An srun step's line: the job's fields with the step's own figures. */
static void print_srun_step(struct px_sacct_printer *p, const struct px_job_info *j,
                            const struct px_step_info *st) {
  struct px_job_info v = *j;
  snprintf(v.state, sizeof v.state, "%s", st->state);
  v.exit_code = st->exit_code, v.term_signal = st->term_signal;
  v.start_time = st->start_time, v.end_time = st->end_time;
  v.nodelist = st->nodelist, v.nnodes = st->nnodes;
  v.peak_mem_mib = st->peak_mem_mib, v.cpu_time_ms = st->cpu_time_ms;
  struct sacct_row r = {&v, true, p->o.now, st};
  print_line(p, &r);
}

int px_sacct_printer_new(FILE *out, const struct px_sacct_opts *o, struct px_sacct_printer **pp,
                         struct px_diag *d) {
  struct px_sacct_printer *p = *pp = calloc(1, sizeof *p);
  if (!p) return px_diag_set(d, PX_ENOMEM, -1, "out of memory");
  p->out = out, p->o = *o;
  p->cap = 4 * (SACCT_LINE_MAX + 1);
  int rc = parse_fields(o->format ? o->format : "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode",
                        p->cols, SACCT_MAX_COLS, &p->ncols, d);
  if (!rc && !(p->buf = malloc(p->cap))) rc = px_diag_set(d, PX_ENOMEM, -1, "out of memory");
  if (rc) {
    free(p);
    *pp = NULL;
    return rc;
  }
  if (o->noheader) return 0;
  print_line(p, NULL);
  if (o->parsable || o->parsable2) return 0;
  struct line l = {p->buf + p->len, 0};
  for (size_t i = 0; i < p->ncols; i++) {
    for (size_t k = 0; k < p->cols[i].width && l.len < SACCT_LINE_MAX; k++) l.p[l.len++] = '-';
    put(&l, " ", 1);
  }
  l.p[l.len++] = '\n';
  p->len += l.len;
  return 0;
}

void px_sacct_print_jobs(struct px_sacct_printer *p, const struct px_job_info *jobs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    struct sacct_row r = {&jobs[i], false, p->o.now, NULL};
    print_line(p, &r);
    if (p->o.allocations || jobs[i].start_time <= 0) continue;
    r.step = true;
    print_line(p, &r);
    for (uint32_t k = 0; k < jobs[i].nsteps; k++) print_srun_step(p, &jobs[i], &jobs[i].steps[k]);
  }
}

void px_sacct_printer_free(struct px_sacct_printer *p) {
  if (!p) return;
  flush(p);
  free(p->buf);
  free(p);
}

int px_fmt_sacct(FILE *out, const struct px_job_info *jobs, size_t n,
                 const struct px_sacct_opts *o, struct px_diag *d) {
  struct px_sacct_printer *p;
  int rc = px_sacct_printer_new(out, o, &p, d);
  if (rc) return rc;
  px_sacct_print_jobs(p, jobs, n);
  px_sacct_printer_free(p);
  return 0;
}
