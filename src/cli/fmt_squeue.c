/*
 * fmt_squeue.c - squeue's output, byte-compatible with Slurm 22.05: the
 * default, -l and --start layouts, -o/-O format strings, and the default sort
 * (partition, then state name, then priority descending; ties newest start
 * first, then job id, so the order is always total).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/fmt_job.h"

#define SQUEUE_DEFAULT "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
#define SQUEUE_LONG "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
#define SQUEUE_START "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"

static const struct px_col_name squeue_long_names[] = {
    {"JobID", 'i'},        {"JobArrayID", 'i'},   {"ArrayJobID", 'F'},   {"ArrayTaskID", 'K'},
    {"Partition", 'P'},    {"Name", 'j'},         {"UserName", 'u'},     {"UserID", 'U'},
    {"StateCompact", 't'}, {"State", 'T'},        {"TimeUsed", 'M'},     {"TimeLimit", 'l'},
    {"TimeLeft", 'L'},     {"NumNodes", 'D'},     {"NumCPUs", 'C'},      {"NodeList", 'N'},
    {"ReasonList", 'R'},   {"Reason", 'r'},       {"StartTime", 'S'},    {"SubmitTime", 'V'},
    {"EndTime", 'e'},      {"Account", 'a'},      {"QOS", 'q'},          {"PriorityLong", 'Q'},
    {"Priority", 'p'},     {"tres-per-node", 'b'}, {"Dependency", 'E'},  {"WorkDir", 'Z'},
    {"Command", 'o'},      {"Comment", 'k'},      {"Nice", 'y'},         {"MinMemory", 'm'},
    {"MinCpus", 'c'},      {"Feature", 'f'},      {"SchedNodes", 'Y'},   {"BatchHost", 'B'},
    {"Reservation", 'v'},  {"OverSubscribe", 'h'}, {"ReqNodes", 'n'}, /* no -O name for %x in Slurm */
    {"GroupName", 'g'},    {"GroupID", 'G'},      {"WCKey", 'w'},        {"Contiguous", 'O'},
    {NULL, 0}};

/* The sort keys of --sort; default "P,t,-p". */
static int cmp_key(char key, const struct px_job_info *a, const struct px_job_info *b) {
#define CMP(x, y) (((x) > (y)) - ((x) < (y)))
#define SCMP(x, y) strcmp((x) ? (x) : "", (y) ? (y) : "")
  switch (key) {
  case 'i': case 'A': return CMP(a->job_id, b->job_id);
  case 'P': return SCMP(a->spec.partition, b->spec.partition);
  case 't': case 'T': return strcmp(a->state, b->state);
  case 'p': case 'Q': return CMP(a->priority, b->priority);
  case 'u': return SCMP(a->spec.user, b->spec.user);
  case 'a': return SCMP(a->spec.account, b->spec.account);
  case 'j': return SCMP(a->spec.name, b->spec.name);
  case 'r': return strcmp(a->reason, b->reason);
  case 'N': return SCMP(a->nodelist, b->nodelist);
  case 'D': return CMP(a->nnodes, b->nnodes);
  case 'S': return CMP(a->start_time, b->start_time);
  case 'V': return CMP(a->submit_time, b->submit_time);
  case 'e': return CMP(a->end_time, b->end_time);
  case 'l': return CMP(a->spec.time_limit_s, b->spec.time_limit_s);
  case 'M': return CMP(px_fmt_job_elapsed(a, 0), px_fmt_job_elapsed(b, 0));
  default: return 0;
  }
#undef CMP
#undef SCMP
}

static int cmp_jobs(const void *pa, const void *pb, void *arg) {
  const struct px_job_info *a = pa, *b = pb;
  for (const char *p = arg; *p;) {
    bool desc = false;
    while (*p == ',' || *p == '+' || *p == '-') desc = (*p++ == '-') ? true : desc;
    if (!*p) break;
    int c = cmp_key(*p++, a, b);
    if (c) return desc ? -c : c;
  }
  if (a->start_time != b->start_time) return a->start_time > b->start_time ? -1 : 1;
  return (a->job_id > b->job_id) - (a->job_id < b->job_id);
}

/* Jobs are sorted as pointers: a job is over a kilobyte, and musl's qsort
 * moves whole elements (10,000 jobs: most of squeue's time in memcpy). */
static int cmp_job_ptrs(const void *pa, const void *pb, void *arg) {
  return cmp_jobs(*(const struct px_job_info *const *)pa, *(const struct px_job_info *const *)pb, arg);
}

/* Validates --sort; returns the offending key or 0. */
static char bad_sort_key(const char *s) {
  for (; *s; s++)
    if (!strchr(",+-iAPtTpQuajrNDSVelM", *s)) return *s;
  return 0;
}

static void print_date_line(FILE *out, int64_t now) {
  time_t t = (time_t)now;
  struct tm tm;
  char buf[64];
  if (localtime_r(&t, &tm) && strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %Y", &tm))
    fprintf(out, "%s\n", buf);
}

static int check_keys(const struct px_cols *c, struct px_diag *d) {
  for (size_t i = 0; i < c->len; i++)
    if (c->v[i].key && !px_fmt_job_header(c->v[i].key))
      return px_diag_set(d, PX_EINVAL, -1, "Invalid job format specification: %%%c", c->v[i].key);
  return 0;
}

static void print_row(FILE *out, const struct px_cols *cols, const struct px_job_info *j,
                      const struct px_squeue_opts *o) {
  char buf[1024];
  for (size_t i = 0; i < cols->len; i++) {
    const struct px_col *c = &cols->v[i];
    if (!c->key) {
      fputs(c->text, out);
      continue;
    }
    if (j) {
      px_fmt_job_field(c->key, j, o->now, o->start, buf, sizeof buf);
      px_cols_put(out, c, buf);
    } else {
      px_cols_put(out, c, px_fmt_job_header(c->key));
    }
  }
  fputc('\n', out);
}

int px_fmt_squeue(FILE *out, const struct px_job_info *jobs, size_t n, const struct px_squeue_opts *o,
                  struct px_diag *d) {
  struct px_cols cols;
  int rc;
  if (o->long_format)
    rc = px_cols_parse_long(o->long_format, squeue_long_names, 20, &cols, d);
  else
    rc = px_cols_parse(o->format ? o->format
                       : o->start   ? SQUEUE_START
                       : o->long_list ? SQUEUE_LONG
                                      : SQUEUE_DEFAULT,
                       &cols, d);
  if (rc) return rc;
  if ((rc = check_keys(&cols, d))) goto done;
  const char *sort = o->sort ? o->sort : o->start ? "S" : "P,t,-p";
  char bad = bad_sort_key(sort);
  if (bad) {
    rc = px_diag_set(d, PX_EINVAL, -1, "Invalid sort specification: %c", bad);
    goto done;
  }
  const struct px_job_info **order = malloc((n ? n : 1) * sizeof *order);
  if (!order) {
    rc = PX_ENOMEM;
    goto done;
  }
  for (size_t i = 0; i < n; i++) order[i] = &jobs[i];
  qsort_r(order, n, sizeof *order, cmp_job_ptrs, (void *)sort);
  if (o->long_list) print_date_line(out, o->now);
  if (!o->noheader) print_row(out, &cols, NULL, o);
  for (size_t i = 0; i < n; i++) {
    if (o->start && strcmp(order[i]->state, "PENDING")) continue;
    print_row(out, &cols, order[i], o);
  }
  free(order);
done:
  px_cols_fini(&cols);
  return rc;
}
