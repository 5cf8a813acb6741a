/*
 * slurmrestd_steps.c - the "steps" of a /slurmdb/v0.0.39/jobs record, from
 * the same step data sacct prints (the accounting row's "steps", written
 * when each srun step ended): for each step its id ("12.0") and name, state,
 * exit code, start/end/elapsed times, nodes and tasks, the CPU time it used
 * (time.total, all of it counted as user time: the agents measure the sum)
 * and its peak memory as slurmdbd reports MaxRSS: tres.requested.max (the
 * "usage in" figures), mem in bytes.
 *
 * Not here: the batch step (sacct derives its ".batch" line from the job's
 * record; slurmdbd would list it as a step), and the figures the agents do
 * not measure (energy, frequencies, min/average), given as empty lists.
 */
#include "server/http/slurmrestd_steps.h"

#include <stdio.h>
#include <string.h>

#include "server/http/slurmrestd.h"

static json_int_t int_of(const json_t *st, const char *key) {
  return json_integer_value(json_object_get(st, key));
}
static const char *str_of(const json_t *st, const char *key, const char *none) {
  const char *s = json_string_value(json_object_get(st, key));
  return s ? s : none;
}

static json_t *seconds(json_int_t ms) {
  return json_pack("{sI sI}", "seconds", ms / 1000, "microseconds", ms % 1000 * 1000);
}

static json_t *step_time(const json_t *st) {
  json_int_t start = int_of(st, "start_time"), end = int_of(st, "end_time"),
             cpu_ms = int_of(st, "cpu_time_ms");
  return json_pack("{sI sI sI si so so so}", "elapsed", start && end > start ? end - start : 0,
                   "start", start, "end", end, "suspended", 0, "system", seconds(0), "user",
                   seconds(cpu_ms), "total", seconds(cpu_ms));
}

/* slurmdbd's exit code of a step (as a job's, slurmrestd_db.c). */
static json_t *step_exit(const char *state, json_int_t code, json_int_t sig) {
  const char *status = !strcmp(state, "RUNNING") ? "PENDING"
                       : sig                     ? "SIGNALED"
                       : code                    ? "ERROR"
                                                 : "SUCCESS";
  return json_pack("{ss sI s{sI ss}}", "status", status, "return_code", code, "signal", "signal_id",
                   sig, "name", "");
}

/* {"max","min","average","total"}: the peak memory as max, the rest unmeasured. */
static json_t *usage(json_int_t peak_mib) {
  json_t *max = json_array();
  if (max && peak_mib)
    json_array_append_new(max, json_pack("{ss ss si sI}", "type", "mem", "name", "", "id", 2,
                                         "count", peak_mib * 1024 * 1024));
  return json_pack("{so s[] s[] s[]}", "max", max, "min", "average", "total");
}

static json_t *one_step(uint64_t job_id, const json_t *st) {
  char id[48];
  snprintf(id, sizeof id, "%llu.%lld", (unsigned long long)job_id,
           (long long)int_of(st, "step_id"));
  const char *state = str_of(st, "state", "COMPLETED"), *nodes = str_of(st, "nodelist", "");
  return json_pack(
      "{so so s{sI ss} s{sI} ss s{sI s{so} ss ss} s{so s{s[] s[] s[] s[]} s[]} ss s{}}", "time",
      step_time(st), "exit_code",
      step_exit(state, int_of(st, "exit_code"), int_of(st, "term_signal")), "nodes", "count",
      int_of(st, "nnodes"), "range", nodes, "tasks", "count", int_of(st, "ntasks"), "state", state,
      "step", "job_id", (json_int_t)job_id, "het", "component", px_sr_noval_unset(), "id", id,
      "name", str_of(st, "name", ""), "tres", "requested", usage(int_of(st, "peak_mem_mib")),
      "consumed", "max", "min", "average", "total", "allocated", "pid", "", "statistics");
}

json_t *px_sr_db_steps(uint64_t job_id, const char *steps) {
  json_t *out = json_array();
  json_t *in = steps && out ? json_loads(steps, 0, NULL) : NULL;
  size_t i;
  json_t *st;
  json_array_foreach(in, i, st) {
    json_t *o = json_is_object(st) ? one_step(job_id, st) : NULL;
    if (o) json_array_append_new(out, o);
  }
  json_decref(in);
  return out;
}
