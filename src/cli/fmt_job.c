/*
 * fmt_job.c - the values of one job as Slurm's commands print them: every
 * squeue %-letter, TRES strings, memory with units. See fmt_job.h.
 */
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/fmt_job.h"
#include "util/units.h"

static const struct {
  char key;
  const char *header;
} headers[] = {
    {'i', "JOBID"},      {'A', "JOBID"},        {'F', "ARRAY_JOB_ID"}, {'K', "ARRAY_TASK_ID"},
    {'P', "PARTITION"},  {'j', "NAME"},         {'u', "USER"},         {'U', "UID"},
    {'t', "ST"},         {'T', "STATE"},        {'M', "TIME"},         {'l', "TIME_LIMIT"},
    {'L', "TIME_LEFT"},  {'D', "NODES"},        {'C', "CPUS"},         {'N', "NODELIST"},
    {'R', "NODELIST(REASON)"}, {'r', "REASON"}, {'S', "START_TIME"},   {'V', "SUBMIT_TIME"},
    {'e', "END_TIME"},   {'a', "ACCOUNT"},      {'q', "QOS"},          {'Q', "PRIORITY"},
    {'p', "PRIORITY"},   {'b', "TRES_PER_NODE"}, {'E', "DEPENDENCY"},  {'Z', "WORK_DIR"},
    {'o', "COMMAND"},    {'k', "COMMENT"},      {'y', "NICE"},         {'m', "MIN_MEMORY"},
    {'c', "MIN_CPUS"},   {'f', "FEATURES"},     {'Y', "SCHEDNODES"},   {'B', "EXEC_HOST"},
    {'v', "RESERVATION"}, {'h', "OVER_SUBSCRIBE"}, {'n', "REQ_NODES"},  {'x', "EXC_NODES"},
    {'g', "GROUP"},      {'G', "GROUP"},        {'w', "WCKEY"},        {'O', "CONTIGUOUS"},
};

const char *px_fmt_job_header(char key) {
  for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++)
    if (headers[i].key == key) return headers[i].header;
  return NULL;
}

int64_t px_fmt_job_elapsed(const struct px_job_info *j, int64_t now) {
  if (j->start_time <= 0 || !strcmp(j->state, "PENDING")) return 0; /* a requeued job restarts at 0 */
  int64_t end = j->end_time > 0 ? j->end_time : now;
  return end > j->start_time ? end - j->start_time : 0;
}

void px_fmt_mem(char *buf, size_t n, uint64_t mib) { px_size_format_mib(mib, buf, n); }

uint32_t px_fmt_job_nodes(const struct px_job_info *j) {
  if (j->nnodes) return j->nnodes;
  return j->spec.nodes_min ? j->spec.nodes_min : 1;
}

uint32_t px_fmt_job_cpus(const struct px_job_info *j) {
  if (j->ncpus) return j->ncpus;
  uint32_t tasks = j->spec.ntasks;
  if (!tasks) tasks = j->spec.ntasks_per_node ? j->spec.ntasks_per_node * px_fmt_job_nodes(j) : 1;
  return tasks * (j->spec.cpus_per_task ? j->spec.cpus_per_task : 1);
}

void px_fmt_job_tres(char *buf, size_t n, const struct px_job_info *j, bool sorted) {
  uint32_t cpus = px_fmt_job_cpus(j), nodes = px_fmt_job_nodes(j);
  uint32_t gpus = j->ngpus;
  if (!gpus) {
    if (j->spec.gpus) gpus = j->spec.gpus;
    else if (j->spec.gpus_per_node) gpus = j->spec.gpus_per_node * nodes;
    else if (j->spec.gpus_per_task) gpus = j->spec.gpus_per_task * (j->spec.ntasks ? j->spec.ntasks : 1);
  }
  char mem[32] = "", gres[32] = "";
  if (j->mem_mib) {
    char m[24];
    px_fmt_mem(m, sizeof m, j->mem_mib);
    snprintf(mem, sizeof mem, "mem=%s,", m);
  }
  if (j->spec.gpu_share) snprintf(gres, sizeof gres, ",gres/gpu=0.%02u", j->spec.gpu_share);
  else if (gpus) snprintf(gres, sizeof gres, ",gres/gpu=%u", gpus);
  if (sorted) /* sacct: billing,cpu,gres/gpu,mem,node */
    snprintf(buf, n, "billing=%u,cpu=%u%s%s%snode=%u", cpus, cpus, gres, *gres ? "," : ",",
             mem, nodes);
  else /* scontrol: cpu,mem,node,billing,gres/gpu */
    snprintf(buf, n, "cpu=%u,%snode=%u,billing=%u%s", cpus, mem, nodes, cpus, gres);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Reads "1-9:2,12" into sorted task ids; false when it is not that form or
 * holds more than max (then it is shown as the server wrote it). */
static bool array_tasks(const char *spec, uint32_t *v, size_t max, size_t *nv) {
  *nv = 0;
  for (const char *p = spec; *p;) {
    char *e;
    unsigned long a = strtoul(p, &e, 10), b = a, step = 1;
    if (e == p) return false;
    if (*e == '-') b = strtoul(e + 1, &e, 10);
    if (*e == ':') step = strtoul(e + 1, &e, 10);
    if ((*e && *e != ',') || b < a || !step || b - a >= max * step) return false;
    for (unsigned long t = a; t <= b; t += step) {
      if (*nv >= max) return false;
      v[(*nv)++] = (uint32_t)t;
    }
    p = *e ? e + 1 : e;
  }
  qsort(v, *nv, sizeof *v, cmp_u32);
  return *nv > 0;
}

bool px_fmt_array_tasks(const char *pending, uint32_t *v, size_t max, size_t *nv) {
  char spec[256];
  snprintf(spec, sizeof spec, "%.*s", (int)strcspn(PX_STR(pending), "%"), PX_STR(pending));
  return array_tasks(spec, v, max, nv);
}

void px_fmt_array_pending(char *buf, size_t n, const char *pending) {
  char spec[256];
  const char *pct = strchr(PX_STR(pending), '%');
  snprintf(spec, sizeof spec, "%.*s", pct ? (int)(pct - pending) : (int)strlen(PX_STR(pending)), PX_STR(pending));
  enum { MAX_SHOWN = 4096 };
  uint32_t v[MAX_SHOWN];
  size_t nv, len = 0;
  if (!strchr(spec, ':') || !array_tasks(spec, v, MAX_SHOWN, &nv)) {
    snprintf(buf, n, "%s", PX_STR(pending));
    return;
  }
  /* Slurm prints the pending tasks as a bitmap does: runs as A-B, commas between */
  buf[0] = '\0';
  for (size_t i = 0; i < nv && len < n; ) {
    size_t k = i;
    while (k + 1 < nv && v[k + 1] <= v[k] + 1) k++;
    len += (size_t)snprintf(buf + len, n - len, k > i ? "%s%u-%u" : "%s%u", i ? "," : "", v[i], v[k]);
    i = k + 1;
  }
  if (pct && len < n) snprintf(buf + len, n - len, "%s", pct);
}

void px_fmt_job_id(char *buf, size_t n, const struct px_job_info *j) {
  char pending[256];
  if (!j->array_job_id)
    snprintf(buf, n, "%" PRIu64, j->job_id);
  else if (j->array_task_id == UINT32_MAX) {
    px_fmt_array_pending(pending, sizeof pending, j->array_pending);
    snprintf(buf, n, "%" PRIu64 "_[%s]", j->array_job_id, pending);
  } else {
    snprintf(buf, n, "%" PRIu64 "_%u", j->array_job_id, j->array_task_id);
  }
}

/* A node list in Slurm's compressed form ("dev1,dev2" -> "dev[1-2]"),
 * whatever form the server sent. */
static void node_list(char *buf, size_t n, const char *nl) {
  char **names, *hl = NULL;
  size_t cnt;
  if (nl && strchr(nl, ',') && !px_cli_hostlist_expand(nl, &names, &cnt)) {
    hl = px_cli_hostlist_compress(names, cnt);
    px_cli_strv_free(names, cnt);
  }
  snprintf(buf, n, "%s", hl ? hl : nl ? nl : "");
  free(hl);
}

/* %R: "(Reason)" while pending and for jobs that ended badly, else the nodes. */
static void reason_list(char *buf, size_t n, const struct px_job_info *j) {
  static const char *const with_reason[] = {"PENDING", "FAILED", "TIMEOUT", "OUT_OF_MEMORY",
                                            "DEADLINE"};
  for (size_t i = 0; i < sizeof with_reason / sizeof with_reason[0]; i++) {
    if (!strcmp(j->state, with_reason[i])) {
      snprintf(buf, n, "(%s)", j->reason);
      return;
    }
  }
  node_list(buf, n, j->nodelist);
}

static void first_node(char *buf, size_t n, const char *nodelist) {
  char **names;
  size_t cnt;
  if (!nodelist || px_cli_hostlist_expand(nodelist, &names, &cnt) || !cnt) {
    snprintf(buf, n, "n/a");
    return;
  }
  snprintf(buf, n, "%s", names[0]);
  px_cli_strv_free(names, cnt);
}

static void start_field(char *buf, size_t n, const struct px_job_info *j, bool start) {
  int64_t t = j->start_time > 0 ? j->start_time : j->expected_start;
  if (start && !strcmp(j->state, "PENDING")) t = j->expected_start;
  /* a job waiting for its --begin starts no earlier: Slurm shows that time */
  if (!t && !strcmp(j->state, "PENDING") && !strcmp(j->reason, "BeginTime")) t = j->spec.begin_s;
  px_cli_fmt_iso(buf, n, t, "N/A");
}

static void time_limit(char *buf, size_t n, const struct px_job_info *j, int64_t now, bool left) {
  int64_t lim = j->spec.time_limit_s;
  if (lim == 0) {
    snprintf(buf, n, "NOT_SET");
    return;
  }
  if (left && lim != PX_CLI_UNLIMITED) {
    lim -= px_fmt_job_elapsed(j, now);
    if (lim < 0) lim = 0;
  }
  px_cli_fmt_elapsed(buf, n, lim);
}

static void tres_per_node(char *buf, size_t n, const struct px_job_info *j) {
  const char *type = j->spec.gpu_type ? j->spec.gpu_type : "", *colon = j->spec.gpu_type ? ":" : "";
  if (j->spec.gpu_share) /* a fraction of one GPU (docs/gpus.md) */
    snprintf(buf, n, "gres:gpu:%s%s0.%02u", type, colon, j->spec.gpu_share);
  else if (!j->spec.gpus_per_node)
    snprintf(buf, n, "N/A");
  else if (j->spec.gpu_type)
    snprintf(buf, n, "gres:gpu:%s:%u", j->spec.gpu_type, j->spec.gpus_per_node);
  else
    snprintf(buf, n, "gres:gpu:%u", j->spec.gpus_per_node);
}

/* %g: the group's name where this host knows it, else its number. */
static void group_name(char *buf, size_t n, uint32_t gid) {
  struct group g, *found = NULL;
  char tmp[1024];
  if (getgrgid_r((gid_t)gid, &g, tmp, sizeof tmp, &found) == 0 && found) snprintf(buf, n, "%s", found->gr_name);
  else snprintf(buf, n, "%u", gid);
}

void px_fmt_job_dependency(char *buf, size_t n, const struct px_job_info *j) {
  const char *dep = j->spec.dependency, *mark = !strcmp(j->reason, "Dependency") ? "(unfulfilled)"
                                            : !strcmp(j->reason, "DependencyNeverSatisfied") ? "(failed)"
                                                                                             : NULL;
  if (!dep || !*dep || !mark || strcmp(j->state, "PENDING")) {
    snprintf(buf, n, "(null)");
    return;
  }
  /* Slurm writes one term per job: afterok:1:2 is afterok:1(..),afterok:2(..),
   * joined by the list's one separator (',' for all of, '?' for any of) */
  const char *sep = strchr(dep, '?') ? "?" : ",";
  size_t o = 0;
  buf[0] = '\0';
  for (const char *p = dep; *p && o + 1 < n;) { /* terms end at ',' or '?' */
    size_t len = strcspn(p, ",?"), type = strcspn(p, ":");
    if (type > len) type = len; /* singleton */
    for (const char *id = p + type; o + 1 < n;) {
      size_t idlen = id < p + len ? strcspn(id + 1, ":,?") : 0;
      int w = snprintf(buf + o, n - o, "%s%.*s%s%.*s%s", o ? sep : "", (int)type, p, idlen ? ":" : "",
                       (int)idlen, id + 1, mark);
      if (w < 0) break;
      o += (size_t)w < n - o ? (size_t)w : n - o - 1;
      id += idlen + 1;
      if (id >= p + len) break;
    }
    p += len + (p[len] ? 1 : 0);
  }
}

void px_fmt_job_field(char key, const struct px_job_info *j, int64_t now, bool start, char *buf,
                      size_t n) {
  const struct px_jobspec *s = &j->spec;
  switch (key) {
  case 'i': px_fmt_job_id(buf, n, j); break;
  case 'A': snprintf(buf, n, "%" PRIu64, j->job_id); break;
  case 'F': snprintf(buf, n, "%" PRIu64, j->array_job_id ? j->array_job_id : j->job_id); break;
  case 'K':
    if (!j->array_job_id) snprintf(buf, n, "N/A");
    else if (j->array_task_id == UINT32_MAX) {
      char pending[256];
      px_fmt_array_pending(pending, sizeof pending, j->array_pending);
      snprintf(buf, n, "[%s]", pending);
    } else {
      snprintf(buf, n, "%u", j->array_task_id);
    }
    break;
  case 'P': snprintf(buf, n, "%s", PX_STR(s->partition)); break;
  case 'j': snprintf(buf, n, "%s", PX_STR(s->name)); break;
  case 'u': snprintf(buf, n, "%s", PX_STR(s->user)); break;
  case 'U': snprintf(buf, n, "%u", s->uid); break;
  case 't': snprintf(buf, n, "%s", px_cli_state_compact(j->state)); break;
  case 'T': snprintf(buf, n, "%s", j->state); break;
  case 'M': px_cli_fmt_elapsed(buf, n, px_fmt_job_elapsed(j, now)); break;
  case 'l': time_limit(buf, n, j, now, false); break;
  case 'L': time_limit(buf, n, j, now, true); break;
  case 'D': snprintf(buf, n, "%u", px_fmt_job_nodes(j)); break;
  case 'C': snprintf(buf, n, "%u", px_fmt_job_cpus(j)); break;
  case 'N': node_list(buf, n, j->nodelist); break;
  case 'R': reason_list(buf, n, j); break;
  case 'r': snprintf(buf, n, "%s", j->reason); break;
  case 'S': start_field(buf, n, j, start); break;
  case 'V': px_cli_fmt_iso(buf, n, j->submit_time, "N/A"); break;
  case 'e': px_cli_fmt_iso(buf, n, j->end_time, "N/A"); break;
  case 'a': snprintf(buf, n, "%s", PX_STR(s->account)); break;
  case 'q': snprintf(buf, n, "%s", PX_STR(s->qos)); break;
  case 'Q': snprintf(buf, n, "%u", j->priority); break;
  case 'p': snprintf(buf, n, "%.14f", j->priority / 4294967295.0); break; /* Slurm: 0.00000070012175 */
  case 'b': tres_per_node(buf, n, j); break;
  case 'E': px_fmt_job_dependency(buf, n, j); break;
  case 'Z': snprintf(buf, n, "%s", PX_STR(s->workdir)); break;
  case 'o': snprintf(buf, n, "%s", s->argv && s->argv[0] ? s->argv[0] : "(null)"); break;
  case 'k': snprintf(buf, n, "%s", PX_STR(s->comment)); break;
  case 'y': snprintf(buf, n, "%d", s->nice); break;
  case 'm':
    if (s->mem_per_node_mib) px_fmt_mem(buf, n, s->mem_per_node_mib);
    else snprintf(buf, n, "0");
    break;
  case 'c': snprintf(buf, n, "%u", s->cpus_per_task ? s->cpus_per_task : 1); break;
  case 'f': snprintf(buf, n, "%s", PX_STR(s->constraint)); break;
  case 'Y': snprintf(buf, n, "(null)"); break;
  case 'v': snprintf(buf, n, "%s", s->reservation ? s->reservation : "(null)"); break;
  case 'h': snprintf(buf, n, "%s", s->exclusive ? "NO" : "OK"); break; /* Slurm's OverSubscribe */
  case 'n': snprintf(buf, n, "%s", s->nodelist ? s->nodelist : ""); break;
  case 'x': snprintf(buf, n, "%s", s->exclude ? s->exclude : ""); break;
  case 'g': group_name(buf, n, s->gid); break;
  case 'G': snprintf(buf, n, "%u", s->gid); break;
  case 'w': snprintf(buf, n, "(null)"); break; /* WCKeys are not kept */
  case 'O': snprintf(buf, n, "0"); break;      /* nor contiguous placement */
  case 'B': first_node(buf, n, j->nodelist); break;
  default: snprintf(buf, n, "?"); break;
  }
}
