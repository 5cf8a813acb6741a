/*
 * opts.c - the one table of sbatch/srun/salloc options, and the parsers of
 * command lines and #SBATCH / #PHX directive lines that look names up in it.
 *
 * The table is the single source for parsing, `phalanx help`, the man pages
 * and docs/slurm-migration.md. An entry without a handler is an option
 * Phalanx knows and refuses; its help text says why, and the error names
 * it: a job is never submitted with an option silently dropped.
 *
 * Precedence is Slurm's: the command's caller applies the script's
 * directives first and the command line after, so the command line wins.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts_apply.h"

#define SB (1u << PX_TOOL_SBATCH)
#define SR (1u << PX_TOOL_SRUN)
#define SA (1u << PX_TOOL_SALLOC)
#define SU (1u << PX_TOOL_SUBMIT)
#define JOB (SB | SR | SA | SU)
#define BATCH (SB | SU)
#define REQ PX_ARG_REQUIRED
#define NONE PX_ARG_NONE
#define OPT PX_ARG_OPTIONAL

const struct px_opt_def px_cli_opts[] = {
    {"job-name", 'J', REQ, JOB, px_opt_job_name, "name of the job (default: script name, or wrap)"},
    {"account", 'A', REQ, JOB, px_opt_account, "account to charge (default: your default account)"},
    {"partition", 'p', REQ, JOB, px_opt_partition, "partition (default: the default partition)"},
    {"qos", 'q', REQ, JOB, px_opt_qos, "quality of service"},
    {"nodes", 'N', REQ, JOB, px_opt_nodes, "number of nodes, N or MIN-MAX"},
    {"ntasks", 'n', REQ, JOB, px_opt_ntasks, "number of tasks"},
    {"ntasks-per-node", 0, REQ, JOB, px_opt_ntasks_per_node, "tasks on each node"},
    {"tasks-per-node", 0, REQ, JOB, px_opt_ntasks_per_node, "the same as --ntasks-per-node (Slurm's alias)"},
    {"wait-all-nodes", 0, REQ, BATCH | SA, px_opt_wait_all_nodes, "accepted (0 or 1): allocated nodes are always ready"},
    {"cpus-per-task", 'c', REQ, JOB, px_opt_cpus_per_task, "CPUs for each task"},
    {"gpus", 'G', REQ, JOB, px_opt_gpus, "GPUs for the whole job, [TYPE:]N, or [TYPE:]0.5: a fraction of one GPU (docs/gpus.md)"},
    {"gpus-per-node", 0, REQ, JOB, px_opt_gpus_per_node, "GPUs on each node, [TYPE:]N"},
    {"gpus-per-task", 0, REQ, JOB, px_opt_gpus_per_task, "GPUs for each task, [TYPE:]N"},
    {"gres", 0, REQ, JOB, px_opt_gres, "gpu[:TYPE][:N] on each node, or gpu:0.5 (a fraction of one GPU; only gpu exists)"},
    {"mem", 0, REQ, JOB, px_opt_mem, "memory per node (100G, 512M; 0: as much as the share of the node)"},
    {"mem-per-cpu", 0, REQ, JOB, px_opt_mem_per_cpu, "memory per allocated CPU"},
    {"mem-per-gpu", 0, REQ, JOB, px_opt_mem_per_gpu, "memory per allocated GPU"},
    {"time", 't', REQ, JOB, px_opt_time, "time limit: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S"},
    {"output", 'o', REQ, JOB, px_opt_output, "stdout file pattern (%j %A %a %x %u %N)"},
    {"error", 'e', REQ, JOB, px_opt_error, "stderr file pattern (default: with stdout)"},
    {"input", 'i', REQ, JOB, px_opt_input, "stdin file"},
    {"array", 'a', REQ, BATCH, px_opt_array, "job array indexes, e.g. 0-99%10 or 1,3,5"},
    {"dependency", 'd', REQ, JOB, px_opt_dependency, "after, afterok, afternotok, afterany, singleton"},
    {"exclusive", 0, OPT, JOB, px_opt_exclusive, "whole nodes, shared with no other job"},
    {"constraint", 'C', REQ, JOB, px_opt_constraint, "node features: a&b (or a,b), a|b, (a|b)&c, [a]"},
    {"requeue", 0, NONE, JOB, px_opt_requeue, "may be requeued after preemption or node failure"},
    {"no-requeue", 0, NONE, JOB, px_opt_no_requeue, "never requeue"},
    {"signal", 0, REQ, JOB, px_opt_signal, "[B:]SIG[@SECONDS] before the time limit"},
    {"nice", 0, OPT, JOB, px_opt_nice, "lower the priority by N (default 100)"},
    {"hold", 'H', NONE, BATCH | SA, px_opt_hold, "submit held (release with scontrol release)"},
    {"begin", 'b', REQ, BATCH | SA, px_opt_begin, "start no earlier than: now+1hour, 16:00, 2026-12-24T08:00"},
    {"chdir", 'D', REQ, JOB, px_opt_chdir, "working directory of the job"},
    {"export", 0, REQ, JOB, px_opt_export, "ALL (default), NONE, or [ALL,]VAR[=VALUE],..."},
    {"wrap", 0, REQ, BATCH, px_opt_wrap, "run this command line in a /bin/sh script"},
    {"parsable", 0, NONE, BATCH | SA, px_opt_parsable, "print only the job id"},
    {"test-only", 0, NONE, BATCH, px_opt_test_only, "check the job and estimate its start; submit nothing"},
    {"switches", 0, REQ, JOB, px_opt_switches, "N[@MAXWAIT]: at most N leaf switches"},
    {"mail-type", 0, REQ, JOB, px_opt_mail_type, "mail on these events: BEGIN, END, FAIL, REQUEUE, ALL, ... (repeated lines add up)"},
    {"mail-user", 0, REQ, JOB, px_opt_mail_user, "accepted and stored"},
    {"comment", 0, REQ, JOB, px_opt_comment, "free text kept with the job"},
    {"verbose", 'v', NONE, JOB, px_opt_verbose, "more messages"},
    {"quiet", 'Q', NONE, JOB, px_opt_quiet, "fewer messages"},
    {"wait", 'W', NONE, BATCH, px_opt_wait, "return only when the job ends, with its exit code"},
    {"pty", 0, NONE, SR, px_opt_pty, "run task zero in a pseudo-terminal"},
    {"label", 'l', NONE, SR, px_opt_label, "prefix each output line with its task id"},
    {"json", 0, NONE, SU, px_opt_json, "print the result as JSON"},
    {"nodelist", 'w', REQ, JOB, px_opt_nodelist, "run on exactly these nodes: a hostlist, or a file of names (a path with '/')"},
    {"exclude", 'x', REQ, JOB, px_opt_exclude, "never run on these nodes: a hostlist, or a file of names"},
    {"reservation", 0, REQ, JOB, px_opt_reservation, "run inside this reservation (phalanx reserve), when it opens"},
    {"cpus-per-gpu", 0, REQ, JOB, px_opt_cpus_per_gpu, "CPUs for each allocated GPU (not with --cpus-per-task)"},
    {"ntasks-per-gpu", 0, REQ, BATCH, px_opt_ntasks_per_gpu, "tasks for each allocated GPU: the task count is N times the job's GPUs"},
    {"distribution", 'm', REQ, JOB, px_opt_distribution, "task layout: block, cyclic, plane=N or arbitrary, then :socket:core levels, then ,Pack or ,NoPack"},
    {"hint", 0, REQ, JOB, px_opt_hint, "nomultithread, multithread, compute_bound, memory_bound (SLURM_HINT)"},
    {"open-mode", 0, REQ, JOB, px_opt_open_mode, "append or truncate: how output files are opened (default truncate)"},
    {"time-min", 0, REQ, JOB, px_opt_time_min, "backfill may start the job with a limit cut down to this"},
    {"mpi", 0, REQ, SR, px_opt_ignored, "accepted; tasks get PMI-free rank variables"},
    {"cpu-bind", 0, REQ, SR, px_opt_ignored, "accepted; binding follows the job's cgroup"},
    {"overlap", 0, NONE, SR, px_opt_ignored, "accepted; steps always share the allocation"},
    {"kill-on-bad-exit", 'K', OPT, SR, px_opt_ignored, "accepted; a failed task ends the step"},
    {"unbuffered", 'u', NONE, SR, px_opt_ignored, "accepted; output is always streamed"},
    {"overcommit", 'O', NONE, JOB, px_opt_ignored, "accepted; tasks still get the CPUs they ask (with --exclusive, as scripts use it, the job has every CPU anyway)"},
    {"container-image", 0, REQ, JOB, px_opt_container_image, "run the job's tasks in this OCI image (pyxis' spelling): an OCI layout directory, a docker-archive tar, or a name in the nodes' image directory (docs/containers.md)"},
    {"container-mounts", 0, REQ, JOB, px_opt_container_mounts, "SRC[:DST[:FLAGS]][,...] bind mounts into the container (FLAGS: ro, rw, ... joined with +)"},
    {"container-workdir", 0, REQ, JOB, px_opt_container_workdir, "working directory inside the container (default: the image's)"},
    {"container-env", 0, REQ, JOB, px_opt_container_env, "NAME[,NAME...]: these host variables win over the image's values"},
    /* Known and refused. */
    {"oversubscribe", 's', NONE, JOB, NULL, "GPUs and CPUs are never shared between jobs"},
    {"licenses", 'L', REQ, JOB, NULL, "licenses are not managed"},
    {"gpus-per-socket", 0, REQ, JOB, NULL, "GPUs are placed within one NVLink/NUMA group automatically"},
    {"sockets-per-node", 0, REQ, JOB, NULL, "socket/core layout requests are not supported"},
    {"cores-per-socket", 0, REQ, JOB, NULL, "socket/core layout requests are not supported"},
    {"threads-per-core", 0, REQ, JOB, NULL, "socket/core layout requests are not supported"},
    {"ntasks-per-socket", 0, REQ, JOB, NULL, "socket/core layout requests are not supported"},
    {"ntasks-per-core", 0, REQ, JOB, NULL, "socket/core layout requests are not supported"},
    {"mincpus", 0, REQ, JOB, NULL, "use --cpus-per-task"},
    {"deadline", 0, REQ, JOB, NULL, "deadlines are not supported"},
    {"tmp", 0, REQ, JOB, NULL, "local disk is not a scheduled resource"},
    {"clusters", 'M', REQ, JOB, NULL, "one Phalanx server manages one cluster"},
    {"uid", 0, REQ, JOB, NULL, "jobs run as the submitting user"},
    {"gid", 0, REQ, JOB, NULL, "jobs run as the submitting user"},
    {"priority", 0, REQ, JOB, NULL, "set priority with 'scontrol update' as an operator"},
    {"wckey", 0, REQ, JOB, NULL, "WCKeys are not supported; use --account"},
    {"tres-per-task", 0, REQ, JOB, NULL, "use --cpus-per-task and --gpus-per-task"},
    {"no-kill", 'k', OPT, JOB, NULL, "a job always ends when one of its nodes fails"},
    {"kill-on-invalid-dep", 0, REQ, JOB, NULL, "jobs with an impossible dependency always end"},
    {"batch", 0, REQ, JOB, NULL, "node features go in --constraint"},
    {"container", 0, REQ, JOB, NULL, "OCI bundles are not run as they are: use --container-image (pyxis' spelling)"},
    {"x11", 0, OPT, JOB, NULL, "X11 forwarding is not supported"},
    {"get-user-env", 0, OPT, JOB, NULL, "the submitting environment is exported (--export)"},
    {"export-file", 0, REQ, JOB, NULL, "use --export"},
    {"propagate", 0, OPT, JOB, NULL, "resource limits are set by the job's cgroup"},
    {"acctg-freq", 0, REQ, JOB, NULL, "accounting sampling is fixed by the agent"},
    {"profile", 0, REQ, JOB, NULL, "profiling is not supported"},
    {"gpu-bind", 0, REQ, JOB, NULL, "each task sees only its own GPUs already"},
    {"gpu-freq", 0, REQ, JOB, NULL, "GPU clocks are not managed"},
    {"cpu-freq", 0, REQ, JOB, NULL, "CPU frequency is not managed"},
    {"mem-bind", 0, REQ, JOB, NULL, "memory binding is not supported"},
    {"network", 0, REQ, JOB, NULL, "network resources are not managed"},
    {"reboot", 0, NONE, JOB, NULL, "nodes are not rebooted for jobs"},
    {"delay-boot", 0, REQ, JOB, NULL, "nodes are not rebooted for jobs"},
    {"spread-job", 0, NONE, JOB, NULL, "placement packs or spreads by partition policy"},
    {"use-min-nodes", 0, NONE, JOB, NULL, "node ranges always use the smallest count that fits"},
    {"bb", 0, REQ, JOB, NULL, "burst buffers are not supported"},
    {"bbf", 0, REQ, JOB, NULL, "burst buffers are not supported"},
    {"core-spec", 'S', REQ, JOB, NULL, "core specialisation is not supported"},
    {"thread-spec", 0, REQ, JOB, NULL, "core specialisation is not supported"},
    {"mcs-label", 0, REQ, JOB, NULL, "MCS labels are not supported"},
    {"ignore-pbs", 0, NONE, JOB, NULL, "#PBS lines are never read"},
    {"prefer", 0, REQ, JOB, NULL, "soft constraints are not supported; use --constraint"},
};
const size_t px_cli_nopts = sizeof px_cli_opts / sizeof px_cli_opts[0];

void px_cli_optlist_fini(struct px_cli_optlist *l) {
  for (size_t i = 0; i < l->len; i++) free(l->v[i].val);
  free(l->v);
  l->v = NULL;
  l->len = l->cap = 0;
}

void px_cli_extra_fini(struct px_cli_extra *x) {
  free(x->wrap);
  free(x->export_spec);
  x->wrap = x->export_spec = NULL;
}

static int optlist_push(struct px_cli_optlist *l, const struct px_opt_def *def, const char *val,
                        int line) {
  if (l->len == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 16;
    struct px_cli_opt *v = realloc(l->v, cap * sizeof *v);
    if (!v) return PX_ENOMEM;
    l->v = v;
    l->cap = cap;
  }
  char *c = NULL;
  if (val && !(c = strdup(val))) return PX_ENOMEM;
  l->v[l->len++] = (struct px_cli_opt){def, c, line};
  return 0;
}

/* Slurm's long options that are not in the table: only for judging whether
 * an abbreviation is ambiguous, as Slurm's getopt would. */
static const char *const slurm_only[] = {"cluster-constraint", "contiguous", "extra-node-info", "gres-flags",
                                         "help", "nodefile", "power", "usage", "version"};

/* An exact name, else a unique abbreviation ("--err" for --error: Slurm
 * parses with getopt_long, which takes any unambiguous prefix, and 1.8% of
 * public job scripts use one). *ambiguous: the prefix names several. */
static const struct px_opt_def *find_long(const char *name, size_t len, bool *ambiguous) {
  const struct px_opt_def *hit = NULL;
  size_t hits = 0;
  *ambiguous = false;
  for (size_t i = 0; i < px_cli_nopts; i++) {
    if (strncmp(px_cli_opts[i].name, name, len)) continue;
    if (!px_cli_opts[i].name[len]) return &px_cli_opts[i];
    bool alias = hit && hit->apply == px_cli_opts[i].apply && hit->apply && hit->apply != px_opt_ignored;
    if (!alias) hits++; /* --tasks-per-node and --ntasks-per-node are one option */
    hit = &px_cli_opts[i];
  }
  for (size_t i = 0; i < sizeof slurm_only / sizeof slurm_only[0]; i++)
    if (!strncmp(slurm_only[i], name, len)) hits++;
  *ambiguous = hits > 1;
  return hits == 1 ? hit : NULL;
}

static const struct px_opt_def *find_short(char c) {
  for (size_t i = 0; i < px_cli_nopts; i++)
    if (px_cli_opts[i].short_name == c) return &px_cli_opts[i];
  return NULL;
}

static int check_def(const struct px_opt_def *def, enum px_cli_tool tool, const char *shown,
                     struct px_diag *d) {
  if (!def) return px_diag_set(d, PX_EINVAL, -1, "unrecognized option '%s'", shown);
  if (!def->apply)
    return px_diag_set(d, PX_EUNSUPPORTED, -1,
                       "option --%s is not supported by Phalanx: %s (see docs/slurm-migration.md)",
                       def->name, def->help);
  if (!(def->tools & (1u << tool)))
    return px_diag_set(d, PX_EINVAL, -1, "option --%s does not apply to this command", def->name);
  return 0;
}

/* One argument starting with "--": --name, --name=value, or --name value. */
static int parse_long(enum px_cli_tool tool, int argc, char **argv, int *i,
                      struct px_cli_optlist *out, int line, struct px_diag *d) {
  const char *arg = argv[*i] + 2, *eq = strchr(arg, '=');
  size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
  bool ambiguous;
  const struct px_opt_def *def = find_long(arg, len, &ambiguous);
  if (ambiguous) return px_diag_set(d, PX_EINVAL, -1, "option '--%.*s' is ambiguous", (int)len, arg);
  int rc = check_def(def, tool, argv[*i], d);
  if (rc) return rc;
  const char *val = eq ? eq + 1 : NULL;
  if (def->arg == PX_ARG_NONE && eq)
    return px_diag_set(d, PX_EINVAL, -1, "option '--%s' doesn't allow an argument", def->name);
  if (def->arg == PX_ARG_REQUIRED && !eq) {
    if (*i + 1 >= argc)
      return px_diag_set(d, PX_EINVAL, -1, "option '--%s' requires an argument", def->name);
    val = argv[++*i];
  }
  return optlist_push(out, def, val, line);
}

/* One argument starting with "-": flags may be grouped, a value may be attached. */
static int parse_short(enum px_cli_tool tool, int argc, char **argv, int *i,
                       struct px_cli_optlist *out, int line, struct px_diag *d) {
  for (const char *p = argv[*i] + 1; *p; p++) {
    const struct px_opt_def *def = find_short(*p);
    char shown[3] = {'-', *p, 0};
    int rc = check_def(def, tool, shown, d);
    if (rc) return rc;
    if (def->arg == PX_ARG_NONE) {
      if ((rc = optlist_push(out, def, NULL, line))) return rc;
      continue;
    }
    const char *val = p[1] ? p + 1 : NULL;
    if (!val && def->arg == PX_ARG_REQUIRED) {
      if (*i + 1 >= argc)
        return px_diag_set(d, PX_EINVAL, -1, "option requires an argument -- '%c'", *p);
      val = argv[++*i];
    }
    return optlist_push(out, def, val, line);
  }
  return 0;
}

static int parse_args(enum px_cli_tool tool, int argc, char **argv, int start,
                      struct px_cli_optlist *out, int *first_arg, int line, struct px_diag *d) {
  int i = start;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      i++;
      break;
    }
    if (a[0] != '-' || !a[1]) break;
    int rc = a[1] == '-' ? parse_long(tool, argc, argv, &i, out, line, d)
                         : parse_short(tool, argc, argv, &i, out, line, d);
    if (rc) return rc;
  }
  *first_arg = i;
  return 0;
}

int px_cli_parse_argv(enum px_cli_tool tool, int argc, char **argv, struct px_cli_optlist *out,
                      int *first_arg, struct px_diag *d) {
  return parse_args(tool, argc, argv, 1, out, first_arg, 0, d);
}

bool px_cli_script_has_shebang(const char *script) {
  return script && script[0] == '#' && script[1] == '!';
}

/* Splits a directive's text into words: quotes group, '#' starts a comment. */
static int split_words(char *text, char **words, int max) {
  int n = 0;
  char *p = text;
  while (*p) {
    while (isspace((unsigned char)*p)) p++;
    if (!*p || *p == '#') break;
    if (n == max) return -1;
    char *w = p, *o = p;
    char quote = 0;
    for (; *p && (quote || !isspace((unsigned char)*p)); p++) {
      if (!quote && (*p == '"' || *p == '\'')) quote = *p;
      else if (quote && *p == quote) quote = 0;
      else *o++ = *p;
    }
    if (*p) p++;
    *o = '\0';
    words[n++] = w;
  }
  return n;
}

static int parse_directive(const char *text, size_t len, int line, struct px_cli_optlist *out,
                           struct px_diag *d) {
  char buf[4096];
  if (len >= sizeof buf) return px_diag_set(d, PX_EINVAL, -1, "line %d: directive too long", line);
  memcpy(buf, text, len);
  buf[len] = '\0';
  char *words[65];
  words[0] = "sbatch";
  int n = split_words(buf, words + 1, 64);
  if (n < 0) return px_diag_set(d, PX_EINVAL, -1, "line %d: too many words in directive", line);
  int first;
  int rc = parse_args(PX_TOOL_SBATCH, n + 1, words, 1, out, &first, line, d);
  if (!rc && first < n + 1)
    rc = px_diag_set(d, PX_EINVAL, -1, "unexpected argument '%s' in a directive", words[first]);
  if (rc) {
    char msg[sizeof d->msg];
    snprintf(msg, sizeof msg, "%s", d->msg);
    px_diag_set(d, rc, -1, "batch script line %d: %s", line, msg);
    d->line = line;
  }
  return rc;
}

int px_cli_parse_directives(const char *script, struct px_cli_optlist *out, struct px_diag *d) {
  int line = 0;
  for (const char *p = script; p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    line++;
    const char *q = p;
    while (q < p + len && isspace((unsigned char)*q)) q++;
    if (q < p + len && *q != '#') break; /* the first command ends the directives */
    size_t plen = !strncmp(p, "#SBATCH", 7) ? 7 : !strncmp(p, "#PHX", 4) ? 4 : 0;
    if (plen && (len == plen || isspace((unsigned char)p[plen]))) {
      int rc = parse_directive(p + plen, len - plen, line, out, d);
      if (rc) return rc;
    }
    p = nl ? nl + 1 : NULL;
  }
  return 0;
}

/* The job travels as JSON, which carries only UTF-8: a value jansson cannot
 * encode would be dropped from the request without a word, so refuse it here
 * with the option's name (same test as the encoder's, by construction). */
static int check_utf8(const struct px_cli_opt *o, struct px_diag *d) {
  if (!o->val) return 0;
  json_t *s = json_string(o->val);
  if (s) {
    json_decref(s);
    return 0;
  }
  return px_diag_set(d, PX_EINVAL, -1, "invalid value for --%s: not valid UTF-8", o->def->name);
}

int px_cli_apply(const struct px_cli_optlist *l, struct px_jobspec *spec, struct px_cli_extra *x,
                 int64_t now, struct px_diag *d) {
  for (size_t i = 0; i < l->len; i++) {
    const struct px_cli_opt *o = &l->v[i];
    int rc = check_utf8(o, d);
    if (!rc) rc = o->def->apply(o->val, spec, x, now, d);
    if (rc) {
      if (o->line) {
        char msg[sizeof d->msg];
        snprintf(msg, sizeof msg, "%s", d->msg);
        px_diag_set(d, rc, -1, "batch script line %d: %s", o->line, msg);
        d->line = o->line;
      }
      return rc;
    }
  }
  /* Slurm counts the script's forms with the command line's: --mem-per-cpu
   * in #SBATCH and --mem-per-gpu on the command line is its fatal error too. */
  if (x->mem_set & (x->mem_set - 1)) {
    x->fatal = true;
    return px_diag_set(d, PX_EINVAL, -1,
                       "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
  }
  return px_cli_check_placement(spec, d);
}
