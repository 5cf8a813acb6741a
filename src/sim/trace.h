/*
 * trace.h - a GPU-cluster job trace in the common CSV form, read into memory.
 *
 *   job_id,submit_s,duration_s,gpus,nodes,user,queue,status[,time_limit_s]
 *
 * (../shared/traces/PROVENANCE.md describes the public traces in this form.)
 * Columns are found by their header names, so their order is free and extra
 * columns are ignored; the eight above are required in the header, and
 * `time_limit_s` is optional. So are the columns of a trace exported from the
 * cluster's own accounting (`phalanx export`, docs/simulator.md):
 * `eligible_s`, `start_s`, `end_s` (the recorded run: start_s and end_s come
 * together, start_s >= submit_s, end_s - start_s = duration_s, eligible_s >=
 * submit_s), `qos`, `partition`, `array_job_id`, and `submit_seq`,
 * `start_seq`, `end_seq` (whole numbers: the order in which the server
 * handled the job's submit, start and end, the journal's sequence, finer
 * than the seconds; in that order when given), and `time0_unix_s` (the Unix
 * time of the trace's second 0, the same in every row that gives it), and
 * `dependency` (the job's -d as the user wrote it, "afterok:12:13",
 * "afterany:7?singleton": terms joined by ',' or '?', ids the trace's job
 * ids; anything else is refused), and `name` (the job's name, what
 * `singleton` keys on with the user: at most PX_TRACE_NAME_MAX bytes, no
 * control character, as the server takes it; commas and quotes need the
 * field quoted), and `attempt` (below). In the rows, submit_s, duration_s and gpus must
 * hold non-negative numbers; every other field may be empty. Fractional
 * values are accepted: seconds are rounded to the nearest second, and a
 * fractional GPU request (a GPU-sharing pod) is rounded UP to whole GPUs and
 * flagged, so reports can count it. Fields may be double-quoted (RFC 4180).
 *
 * A requeued job's attempts (an export of accounting, one row per attempt:
 * `attempt` is 0 for the first run, n after n requeues; empty reads 0) are
 * one job: its rows come one after the other, same job_id, attempts
 * ascending (a gap is a row accounting lacks), each a recorded run (start_s,
 * end_s) with the job's GPU count, each ending by the next one's start. The
 * job is its last row (the run that finished it: start_s, end_s, duration_s,
 * status, seqs) submitted at its first row's submit_s (eligible_s,
 * submit_seq): the replay runs it once. The earlier runs are kept in
 * `attempts` (in file order, each job's together: px_trace_earlier), where
 * the recorded run's figures find the GPU time the requeues threw away and
 * the fair share the cluster charged for it. A row out of that order (an
 * attempt below or equal to the one before it, an earlier one without its
 * run or ending after the next one's start, other GPUs) is refused.
 *
 * A job costs 144 bytes plus its id, an earlier attempt 48; user, queue,
 * status, dependency and job names are interned (one copy each): a million
 * jobs take 144 MB and their ids and distinct names.
 * Errors name the line, the column (field number and name) and the byte
 * offset; a failed parse leaves the trace empty.
 */
#ifndef PX_SIM_TRACE_H
#define PX_SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/csv.h"
#include "util/error.h"
#include "util/map.h"
#include "util/vec.h"

#define PX_TRACE_NONE UINT32_MAX /* an empty user/queue/status field */
#define PX_TRACE_NAME_MAX 256    /* bytes of a job name: the server's (proto/jobspec_fields.h) */

enum {
  PX_TRACE_FRACTIONAL = 1, /* gpus had a fraction and was rounded up */
  PX_TRACE_CPU_ONLY = 2,   /* gpus was 0 */
};

struct px_trace_job {
  int64_t submit_s;     /* seconds from the trace start */
  int64_t duration_s;   /* run time */
  int64_t time_limit_s; /* from the trace's time_limit_s column; 0 = not given */
  uint32_t gpus;        /* total whole GPUs (rounded up) */
  uint32_t nodes;       /* 0 = not given */
  uint32_t user, queue, status; /* indexes into the name table, or PX_TRACE_NONE */
  uint32_t id_off;      /* offset of the NUL-terminated job id in ids */
  uint32_t line;        /* 1-based line in the file */
  uint32_t flags;       /* PX_TRACE_* */
  uint32_t qos, partition;                 /* names, or PX_TRACE_NONE */
  int64_t eligible_s, start_s, end_s;      /* the recorded run, -1 when not given */
  int64_t array_job_id;                    /* the array this job is a task of, -1 when none */
  uint64_t submit_seq, start_seq, end_seq; /* the server's order of its submit, start, end; 0: unknown */
  uint32_t dependency;                     /* its -d as written (a name), or PX_TRACE_NONE */
  uint32_t name;                           /* the job's name, or PX_TRACE_NONE */
  uint32_t attempt;                        /* the attempt column: 0, or n after n requeues */
  uint32_t earlier, nearlier;              /* its earlier attempts: attempts.v[earlier ..+ nearlier) */
};

/* An earlier attempt of a requeued job: its run, which the requeue ended. */
struct px_trace_attempt {
  int64_t start_s, end_s; /* the recorded run (end_s >= start_s) */
  uint64_t start_seq, end_seq; /* the journal seqs of its START and of the record that requeued it; 0: unknown */
  uint32_t attempt;       /* its attempt column */
  uint32_t status;        /* REQUEUED, NODE_FAIL, PREEMPTED ... (a name), or PX_TRACE_NONE */
  uint32_t line;          /* 1-based line in the file */
  uint32_t job;           /* index into jobs of the job it is an attempt of */
};

PX_VEC_DECLARE(px_trace_jobvec, struct px_trace_job)
PX_VEC_DECLARE(px_trace_attemptvec, struct px_trace_attempt)

struct px_trace {
  struct px_trace_jobvec jobs; /* in file order */
  struct px_charvec ids;       /* job ids, each NUL-terminated */
  struct px_strvec names;      /* interned user/queue/status names */
  struct px_smap name_index;   /* name -> index in names */
  uint32_t nfractional;        /* jobs whose GPU count was rounded up */
  uint32_t ncpu_only;          /* jobs with gpus = 0 */
  uint32_t nrecorded;          /* jobs with a recorded run (start_s, end_s) */
  uint32_t nseq;               /* jobs with submit_seq, start_seq or end_seq */
  int64_t time0_unix_s;        /* the time0_unix_s column: Unix time of second 0 (0: not given) */
  uint32_t ndependent;         /* jobs with a dependency */
  uint32_t nnamed;             /* jobs with a name */
  struct px_trace_attemptvec attempts; /* earlier attempts of requeued jobs, each job's together */
  uint32_t nrequeued;          /* jobs with an earlier attempt */
};

/* A zeroed struct is an empty trace. */
void px_trace_fini(struct px_trace *t);

/*
 * Parses a whole CSV text. 0, PX_EPARSE or PX_ERANGE (d says where and why),
 * or PX_ENOMEM. On failure t is left empty (as after px_trace_fini).
 */
int px_trace_parse(struct px_trace *t, const char *buf, size_t len, struct px_diag *d);
/* Reads and parses a file; PX_EIO (d names the file and errno) when unreadable. */
int px_trace_load(struct px_trace *t, const char *path, struct px_diag *d);

static inline const char *px_trace_id(const struct px_trace *t, const struct px_trace_job *j) {
  return t->ids.v + j->id_off;
}
/* The earlier attempts of j (j->nearlier of them, in order; NULL: none). */
static inline const struct px_trace_attempt *px_trace_earlier(const struct px_trace *t, const struct px_trace_job *j) {
  return j->nearlier ? &t->attempts.v[j->earlier] : NULL;
}
/* When j first started in the record: its first attempt's start (-1: no recorded run). */
static inline int64_t px_trace_first_start(const struct px_trace *t, const struct px_trace_job *j) {
  return j->nearlier ? t->attempts.v[j->earlier].start_s : j->start_s;
}
/* The interned name at index i, or "" for PX_TRACE_NONE. */
const char *px_trace_name(const struct px_trace *t, uint32_t i);

#endif
