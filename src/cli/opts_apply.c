/*
 * opts_apply.c - what each sbatch/srun/salloc option does to a px_jobspec.
 *
 * One small function per option family; the table in opts.c binds names to
 * them. Each either sets its fields or fills the diagnostic with Slurm's
 * wording (so wrappers that grep sbatch's errors keep working) and returns a
 * negative code, leaving the spec unchanged.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/opts_apply.h"

static int set_str(char **dst, const char *val) {
  char *c = strdup(val);
  if (!c) return PX_ENOMEM;
  free(*dst);
  *dst = c;
  return 0;
}

/* A strictly positive count (Slurm rejects 0 for these). */
static int parse_count(const char *val, const char *opt, uint32_t *out, struct px_diag *d) {
  errno = 0;
  char *e;
  long v = strtol(val, &e, 10);
  if (errno || e == val || *e || v <= 0 || v > 1000000)
    return px_diag_set(d, PX_EINVAL, -1, "Invalid numeric value \"%s\" for --%s.", val, opt);
  *out = (uint32_t)v;
  return 0;
}

#define STR_OPT(fn, field)                                                                      \
  int fn(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,            \
         struct px_diag *d) {                                                                   \
    return set_str(&s->field, val);                                                             \
  }
STR_OPT(px_opt_job_name, name)
STR_OPT(px_opt_account, account)
STR_OPT(px_opt_partition, partition)
STR_OPT(px_opt_qos, qos)
STR_OPT(px_opt_output, stdout_path)
STR_OPT(px_opt_error, stderr_path)
STR_OPT(px_opt_input, stdin_path)
STR_OPT(px_opt_dependency, dependency)
STR_OPT(px_opt_constraint, constraint)
STR_OPT(px_opt_chdir, workdir)
STR_OPT(px_opt_mail_user, mail_user)
STR_OPT(px_opt_comment, comment)
STR_OPT(px_opt_container_image, container_image)
STR_OPT(px_opt_container_mounts, container_mounts)
STR_OPT(px_opt_container_workdir, container_workdir)
STR_OPT(px_opt_container_env, container_env)

/* --array: the server reads the expression; "%0" is Slurm's "no throttle". */
int px_opt_array(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                 struct px_diag *d) {
  const char *pct = strrchr(val, '%');
  if (!pct || pct[strspn(pct + 1, "0") + 1] || !pct[1]) return set_str(&s->array, val);
  char *c = strndup(val, (size_t)(pct - val));
  if (!c) return PX_ENOMEM;
  free(s->array);
  s->array = c;
  return 0;
}

#define COUNT_OPT(fn, opt, field)                                                               \
  int fn(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,            \
         struct px_diag *d) {                                                                   \
    return parse_count(val, opt, &s->field, d);                                                 \
  }
COUNT_OPT(px_opt_ntasks, "ntasks", ntasks)
COUNT_OPT(px_opt_ntasks_per_node, "ntasks-per-node", ntasks_per_node)
COUNT_OPT(px_opt_cpus_per_task, "cpus-per-task", cpus_per_task)

/* -N MIN[-MAX], refused in Slurm's words: a word that is not a count, or a
 * maximum under the minimum, exit 255; a zero count as its server says it. */
int px_opt_nodes(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                 struct px_diag *d) {
  char *e;
  errno = 0;
  long lo = strtol(val, &e, 10), hi = lo;
  const char *bad = e == val || (*e && *e != '-') ? val : NULL;
  if (!bad && *e == '-') {
    const char *p = e + 1;
    hi = strtol(p, &e, 10);
    if (e == p || *e) bad = p;
  }
  x->exit_status = 255;
  if (bad) return px_diag_set(d, PX_EINVAL, -1, "\"%s\" is not a valid node count", bad);
  if (hi < lo && hi > 0)
    return px_diag_set(d, PX_EINVAL, -1, "Maximum node count %ld is less than minimum node count %ld", hi, lo);
  x->exit_status = 0;
  if (errno || lo <= 0 || hi <= 0 || hi > 1000000)
    return px_diag_set(d, PX_EINVAL, -1, "Batch job submission failed: Node count specification invalid");
  s->nodes_min = (uint32_t)lo;
  s->nodes_max = (uint32_t)hi;
  return 0;
}

/* "0.5", ".25", "1.0": hundredths of one GPU (docs/gpus.md); a whole
 * number written with a point ("2.0") is *whole GPUs instead. */
static int parse_fraction(const char *num, const char *opt, const char *val, struct px_jobspec *s,
                          uint32_t *whole, struct px_diag *d) {
  uint32_t ip = 0, frac = 0, nd = 0;
  const char *p = num;
  for (; isdigit((unsigned char)*p) && ip < 1000000; p++) ip = ip * 10 + (uint32_t)(*p - '0');
  if (*p++ != '.' || (p == num + 1 && !isdigit((unsigned char)*p)))
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --%s specification: %s (a GPU count, or a fraction of one GPU "
                       "from 0.01 to 0.99)", opt, val);
  for (; isdigit((unsigned char)*p); p++, nd++)
    if (nd >= 2 ? *p != '0' : (frac = frac * 10 + (uint32_t)(*p - '0'), false))
      return px_diag_set(d, PX_EINVAL, -1, "Invalid --%s specification: %s (GPU fractions are in hundredths: "
                         "0.01 to 0.99)", opt, val);
  if (*p)
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --%s specification: %s (a GPU count, or a fraction of one GPU "
                       "from 0.01 to 0.99)", opt, val);
  if (nd == 1) frac *= 10;
  if (!frac && ip) {
    *whole = ip;
    s->gpu_share = 0;
    return 0;
  }
  if (ip || !frac)
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --%s specification: %s (a fraction is part of one GPU, 0.01 to "
                       "0.99; more than one GPU takes whole GPUs)", opt, val);
  *whole = 0;
  s->gpu_share = frac;
  return 0;
}

/* "[type:]N" as --gpus, --gpus-per-node and --gpus-per-task take it;
 * --gpus also "[type:]0.5" (a fraction of one GPU). */
static int parse_gpu_count(const char *val, const char *opt, struct px_jobspec *s, uint32_t *out,
                           struct px_diag *d) {
  const char *colon = strrchr(val, ':');
  const char *num = colon ? colon + 1 : val;
  uint32_t n;
  /* 0 is no GPUs (Slurm skips a zero GRES count and runs the job without
   * GPUs; public scripts write --gpus-per-node=0 on CPU steps) */
  if (!strcmp(num, "0")) return *out = 0, 0;
  if (strchr(num, '.') && out != &s->gpus && out != &s->gpus_per_node)
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --%s specification: %s (fractions of a GPU only with --gpus "
                       "or --gres=gpu:0.5)", opt, val);
  if (strchr(num, '.') ? parse_fraction(num, opt, val, s, &n, d) : parse_count(num, opt, &n, d)) return PX_EINVAL;
  if (!strchr(num, '.') && out == &s->gpus) s->gpu_share = 0;
  if (colon) {
    if (strchr(val, ':') != colon || colon == val)
      return px_diag_set(d, PX_EINVAL, -1, "Invalid --%s specification: %s", opt, val);
    char *type = strndup(val, (size_t)(colon - val));
    if (!type) return PX_ENOMEM;
    free(s->gpu_type);
    s->gpu_type = type;
  }
  *out = n;
  return 0;
}

int px_opt_gpus(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                struct px_diag *d) {
  return parse_gpu_count(val, "gpus", s, &s->gpus, d);
}
int px_opt_gpus_per_node(const char *val, struct px_jobspec *s, struct px_cli_extra *x,
                         int64_t now, struct px_diag *d) {
  return parse_gpu_count(val, "gpus-per-node", s, &s->gpus_per_node, d);
}
int px_opt_gpus_per_task(const char *val, struct px_jobspec *s, struct px_cli_extra *x,
                         int64_t now, struct px_diag *d) {
  return parse_gpu_count(val, "gpus-per-task", s, &s->gpus_per_task, d);
}

/* --gres=gpu[:type][:N][,...]: only GPUs exist as generic resources here. */
int px_opt_gres(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                struct px_diag *d) {
  if (!strcasecmp(val, "none")) return 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", val);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (!strncmp(tok, "gres/", 5)) tok += 5;
    char *paren = strchr(tok, '(');
    if (paren) *paren = '\0'; /* socket bindings "(S:0-1)" are advisory in Slurm too */
    char *f[3] = {tok, NULL, NULL};
    int nf = 1;
    for (char *c = tok; *c && nf < 3; c++)
      if (*c == ':') *c = '\0', f[nf++] = c + 1;
    if (!strcmp(f[0], "shard") || !strcmp(f[0], "mps"))
      return px_diag_set(d, PX_EUNSUPPORTED, -1,
                         "Invalid generic resource (gres) specification\n(phalanx: %s: Phalanx shares a GPU by "
                         "fractions: --gpus=0.5 or --gres=gpu:0.5, docs/gpus.md)", val);
    if (strcmp(f[0], "gpu"))
      return px_diag_set(d, PX_EUNSUPPORTED, -1,
                         "Invalid generic resource (gres) specification\n(phalanx: %s: Phalanx schedules "
                         "only the gpu resource)", val);
    const char *type = nf == 3 ? f[1] : NULL, *num = nf == 3 ? f[2] : nf == 2 ? f[1] : "1";
    if (nf == 2 && !isdigit((unsigned char)*f[1])) type = f[1], num = "1";
    if (!strcmp(num, "0")) continue; /* gpu:0 asks for nothing: Slurm skips it */
    uint32_t n;
    if (strchr(num, '.') ? parse_fraction(num, "gres", val, s, &n, d) : parse_count(num, "gres", &n, d))
      return PX_EINVAL;
    if (!strchr(num, '.')) s->gpu_share = 0;
    if (type) {
      char *t = strdup(type);
      if (!t) return PX_ENOMEM;
      free(s->gpu_type);
      s->gpu_type = t;
    }
    s->gpus_per_node = n;
  }
  return 0;
}

enum { MEM_NODE = 1, MEM_CPU = 2, MEM_GPU = 4 };

/* Slurm's rule: a later source's memory option replaces the earlier one, and
 * two of them in one source are an error (checked by px_cli_apply). */
static int set_mem(const char *val, struct px_jobspec *s, struct px_cli_extra *x, unsigned which,
                   struct px_diag *d) {
  uint64_t mib;
  /* --mem=0 (Slurm: all of each node's memory) is sent as "not given":
   * Phalanx then gives memory in proportion to the CPUs and GPUs taken,
   * which for the whole-node jobs that use --mem=0 is all of it. */
  if (px_cli_size_parse_mib(val, &mib) || (mib == 0 && which != MEM_NODE)) {
    x->exit_status = 255; /* Slurm's exit(-1) for a bad size */
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --%s specification",
                       which == MEM_NODE ? "mem" : which == MEM_CPU ? "mem-per-cpu" : "mem-per-gpu");
  }
  s->mem_per_node_mib = which == MEM_NODE ? mib : 0;
  s->mem_per_cpu_mib = which == MEM_CPU ? mib : 0;
  s->mem_per_gpu_mib = which == MEM_GPU ? mib : 0;
  x->mem_set |= which;
  return 0;
}
int px_opt_mem(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
               struct px_diag *d) {
  return set_mem(val, s, x, MEM_NODE, d);
}
int px_opt_mem_per_cpu(const char *val, struct px_jobspec *s, struct px_cli_extra *x,
                       int64_t now, struct px_diag *d) {
  return set_mem(val, s, x, MEM_CPU, d);
}
int px_opt_mem_per_gpu(const char *val, struct px_jobspec *s, struct px_cli_extra *x,
                       int64_t now, struct px_diag *d) {
  return set_mem(val, s, x, MEM_GPU, d);
}

int px_opt_time(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                struct px_diag *d) {
  int64_t secs;
  if (px_cli_duration_parse(val, &secs)) {
    x->exit_status = 255; /* Slurm's exit(-1) for a bad --time */
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --time specification");
  }
  /* Slurm keeps whole minutes: 0:30 is one minute, 5:30 six; and 0 is
   * "no limit" (UNLIMITED), which the partition's MaxTime then judges. */
  if (secs == 0) secs = PX_CLI_UNLIMITED;
  else if (secs != PX_CLI_UNLIMITED && secs % 60) secs += 60 - secs % 60;
  s->time_limit_s = secs;
  return 0;
}

int px_opt_exclusive(const char *val, struct px_jobspec *s, struct px_cli_extra *x,
                     int64_t now, struct px_diag *d) {
  if (val && *val && (!strcasecmp(val, "user") || !strcasecmp(val, "mcs")))
    return px_diag_set(d, PX_EUNSUPPORTED, -1,
                       "--exclusive=%s is not supported by Phalanx (plain --exclusive is)", val);
  if (val && *val) {
    x->exit_status = 255; /* Slurm knows only user and mcs, and exits -1 */
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --exclusive specification");
  }
  s->exclusive = true;
  return 0;
}

int px_opt_requeue(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                   struct px_diag *d) {
  s->requeue = true;
  s->no_requeue_given = false;
  return 0;
}
int px_opt_no_requeue(const char *val, struct px_jobspec *s, struct px_cli_extra *x,
                      int64_t now, struct px_diag *d) {
  s->requeue = false;
  s->no_requeue_given = true;
  return 0;
}
int px_opt_hold(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                struct px_diag *d) {
  s->hold = true;
  return 0;
}

int px_opt_nice(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                struct px_diag *d) {
  if (!val) {
    s->nice = 100; /* Slurm's default adjustment for a bare --nice */
    return 0;
  }
  errno = 0;
  char *e;
  long v = strtol(val, &e, 10);
  if (errno || e == val || *e || v < -2147483645L || v > 2147483645L)
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --nice value: %s", val);
  s->nice = (int32_t)v;
  return 0;
}

int px_cli_signal_number(const char *name) {
  static const struct {
    const char *n;
    int v;
  } sigs[] = {{"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"KILL", SIGKILL},
              {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"ALRM", SIGALRM}, {"TERM", SIGTERM},
              {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"URG", SIGURG},
              {"XCPU", SIGXCPU}};
  if (!strncasecmp(name, "SIG", 3)) name += 3;
  if (isdigit((unsigned char)*name)) {
    char *e;
    long v = strtol(name, &e, 10);
    return (*e || v <= 0 || v >= 65) ? -1 : (int)v;
  }
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    if (!strcasecmp(name, sigs[i].n)) return sigs[i].v;
  return -1;
}

/* --signal=[{R|B}:]SIG[@TIME], TIME in seconds, default 60. */
int px_opt_signal(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                  struct px_diag *d) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s", val);
  char *p = buf;
  bool batch = false;
  while (p[0] && p[1] == ':' && strchr("RrBb", p[0])) {
    if (toupper((unsigned char)p[0]) == 'B') batch = true;
    p += 2;
  }
  long secs = 60;
  char *at = strchr(p, '@');
  if (at) {
    *at = '\0';
    char *e;
    errno = 0;
    secs = strtol(at + 1, &e, 10);
    if (errno || e == at + 1 || *e || secs < 0 || secs > 65535) secs = -1;
  }
  int sig = px_cli_signal_number(p);
  if (sig < 0 || secs < 0) {
    x->exit_status = 255; /* Slurm's exit(-1), in its words: no value echoed */
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --signal specification");
  }
  s->signal_num = sig;
  s->signal_time_s = (int32_t)secs;
  s->signal_batch_only = batch;
  return 0;
}

int px_opt_switches(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                    struct px_diag *d) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s", val);
  int64_t wait_s = 0;
  char *at = strchr(buf, '@');
  if (at) {
    *at = '\0';
    if (px_cli_duration_parse(at + 1, &wait_s))
      return px_diag_set(d, PX_EINVAL, -1, "Invalid --switches specification: %s", val);
  }
  uint32_t n;
  if (parse_count(buf, "switches", &n, d)) return PX_EINVAL;
  s->switches = n;
  s->switches_wait_s = wait_s;
  return 0;
}

int px_opt_export(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                  struct px_diag *d) {
  return set_str(&x->export_spec, val);
}
int px_opt_wrap(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                struct px_diag *d) {
  return set_str(&x->wrap, val);
}

#define FLAG_OPT(fn, field)                                                                     \
  int fn(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,            \
         struct px_diag *d) {                                                                   \
    x->field = true;                                                                            \
    return 0;                                                                                   \
  }
FLAG_OPT(px_opt_parsable, parsable)
FLAG_OPT(px_opt_test_only, test_only)
FLAG_OPT(px_opt_quiet, quiet)
FLAG_OPT(px_opt_wait, wait)
FLAG_OPT(px_opt_pty, pty)
FLAG_OPT(px_opt_label, label)
FLAG_OPT(px_opt_json, json)

int px_opt_verbose(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                   struct px_diag *d) {
  x->verbose++;
  return 0;
}

/* Accepted by Slurm and harmless here: srun's --mpi, --cpu-bind, ... */
int px_opt_ignored(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                   struct px_diag *d) {
  return 0;
}
