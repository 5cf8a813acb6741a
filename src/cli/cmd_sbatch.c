/*
 * cmd_sbatch.c - `sbatch` and `phalanx submit`: read the script (file,
 * stdin or --wrap), apply its #SBATCH/#PHX directives, then SBATCH_*
 * variables, then the command line (Slurm's precedence), fill in who and
 * where, and POST the job. Messages and exit codes are Slurm's, so wrappers
 * that parse "Submitted batch job N" or grep sbatch's errors keep working.
 *
 * Startup is kept cheap (no config parsing, one HTTP request): workflow
 * tools run sbatch once per job.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cmd_common.h"

extern char **environ;

struct submit {
  struct px_cmd cmd;
  struct px_jobspec spec;
  struct px_cli_extra x;
  struct px_cli_optlist cli, file, env;
  char *script;
  const char *script_path;    /* NULL: stdin or --wrap */
  char **script_args;
  int nscript_args;
};

static char *read_all(FILE *f) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return NULL;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, n, m);
  fclose(m);
  return buf;
}

static const char *find_opt(const struct px_cli_optlist *l, const char *name) {
  const char *v = NULL;
  for (size_t i = 0; i < l->len; i++)
    if (!strcmp(l->v[i].def->name, name)) v = l->v[i].val ? l->v[i].val : "";
  return v;
}

static int load_script(struct submit *s) {
  const char *wrap = find_opt(&s->cli, "wrap");
  if (wrap && s->script_path) {
    px_cmd_error(&s->cmd, "Script arguments not permitted with --wrap option");
    return 1;
  }
  if (wrap) {
    size_t n = strlen(wrap) + 64;
    s->script = malloc(n);
    if (!s->script) return 1;
    snprintf(s->script, n, "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n%s\n", wrap);
    return 0;
  }
  FILE *f = s->script_path ? fopen(s->script_path, "r") : stdin;
  if (!f) {
    px_cmd_error(&s->cmd, "Unable to open file %s", s->script_path);
    return 1;
  }
  s->script = read_all(f);
  if (f != stdin) fclose(f);
  if (!s->script || !*s->script) {
    px_cmd_error(&s->cmd, "Batch script is empty!");
    return 1;
  }
  if (!px_cli_script_has_shebang(s->script)) {
    px_cmd_error(&s->cmd, "This does not look like a batch script.  The first");
    px_cmd_error(&s->cmd, "line must start with #! followed by the path to an interpreter.");
    px_cmd_error(&s->cmd, "For instance: #!/bin/sh");
    return 1;
  }
  return 0;
}

/* SBATCH_* input variables: between the script and the command line. */
static int env_options(struct submit *s, struct px_diag *d) {
  static const struct {
    const char *var, *opt;
  } vars[] = {{"SBATCH_ACCOUNT", "--account"},     {"SBATCH_PARTITION", "--partition"},
              {"SBATCH_QOS", "--qos"},             {"SBATCH_TIMELIMIT", "--time"},
              {"SBATCH_JOB_NAME", "--job-name"},   {"SBATCH_GPUS", "--gpus"},
              {"SBATCH_EXPORT", "--export"},       {"SBATCH_CONSTRAINT", "--constraint"}};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i].var);
    if (!v || !*v) continue;
    char *argv[] = {"sbatch", (char *)vars[i].opt, (char *)v, NULL};
    int first;
    int rc = px_cli_parse_argv(PX_TOOL_SBATCH, 3, argv, &s->env, &first, d);
    if (rc) return rc;
  }
  return 0;
}

static int strv_push(char ***v, size_t *n, const char *s) {
  char **nv = realloc(*v, (*n + 2) * sizeof *nv);
  if (!nv) return PX_ENOMEM;
  *v = nv;
  if (!(nv[*n] = strdup(s))) return PX_ENOMEM;
  nv[++*n] = NULL;
  return 0;
}

/* The value of an option as it wins (command line, SBATCH_*, #SBATCH), or NULL. */
static const char *given(const struct submit *s, const char *name) {
  const char *v = find_opt(&s->cli, name);
  if (!v) v = find_opt(&s->env, name);
  return v ? v : find_opt(&s->file, name);
}

/* NAME=VALUE into the job's environment, replacing one the submitter had
 * (sbatch run inside a job carries that job's). */
static int env_put(struct submit *s, size_t *n, const char *name, const char *value) {
  char kv[512];
  size_t len = strlen(name);
  snprintf(kv, sizeof kv, "%s=%s", name, value);
  for (size_t i = 0; i < *n; i++) {
    if (strncmp(s->spec.env[i], name, len) || s->spec.env[i][len] != '=') continue;
    char *c = strdup(kv);
    if (!c) return PX_ENOMEM;
    free(s->spec.env[i]);
    s->spec.env[i] = c;
    return 0;
  }
  return strv_push(&s->spec.env, n, kv);
}

/* What Slurm's sbatch puts in the job's environment from the options it
 * was given (the GPU ones as written, memory in MiB). */
static int option_env(struct submit *s, size_t n) {
  static const char *const as_written[][2] = {
      {"gpus", "SLURM_GPUS"}, {"gpus-per-node", "SLURM_GPUS_PER_NODE"}, {"gpus-per-task", "SLURM_GPUS_PER_TASK"}};
  int rc = 0;
  char num[24];
  for (size_t i = 0; i < 3 && !rc; i++)
    if (given(s, as_written[i][0])) rc = env_put(s, &n, as_written[i][1], given(s, as_written[i][0]));
  const struct px_jobspec *j = &s->spec;
  const struct { uint64_t v; const char *name; } mem[] = {
      {j->mem_per_node_mib, "SLURM_MEM_PER_NODE"}, {j->mem_per_cpu_mib, "SLURM_MEM_PER_CPU"},
      {j->mem_per_gpu_mib, "SLURM_MEM_PER_GPU"}, {s->x.ntasks_per_gpu, "SLURM_NTASKS_PER_GPU"}};
  for (size_t i = 0; i < 4 && !rc; i++) {
    if (!mem[i].v) continue;
    snprintf(num, sizeof num, "%llu", (unsigned long long)mem[i].v);
    rc = env_put(s, &n, mem[i].name, num);
  }
  return rc;
}

/* --export: ALL (default) copies our environment; NONE sends none; a list
 * "[ALL,]NAME[=VALUE],..." adds or (without ALL) limits to those names. */
static int build_env(struct submit *s) {
  const char *spec = s->x.export_spec ? s->x.export_spec : "ALL";
  size_t n = 0;
  char **v = calloc(1, sizeof *v); /* NONE still sends an (empty) environment */
  int rc = v ? 0 : PX_ENOMEM;
  bool all = !strcasecmp(spec, "ALL") || !strncasecmp(spec, "ALL,", 4);
  if (all)
    for (char **e = environ; *e && !rc; e++) rc = strv_push(&v, &n, *e);
  if (strcasecmp(spec, "NONE") && strcasecmp(spec, "ALL")) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
      if (!strcasecmp(t, "ALL") || !strcasecmp(t, "NONE")) continue;
      if (strchr(t, '=')) {
        rc = strv_push(&v, &n, t);
      } else if (!all && getenv(t)) {
        char kv[8192];
        snprintf(kv, sizeof kv, "%s=%s", t, getenv(t));
        rc = strv_push(&v, &n, kv);
      }
    }
  }
  s->spec.env = v;
  return rc ? rc : option_env(s, n);
}

static int fill_identity(struct submit *s) {
  struct px_jobspec *j = &s->spec;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) {
    px_cmd_error(&s->cmd, "cannot read the current directory: %s", strerror(errno));
    return 1;
  }
  /* No user name: the server takes the submitter from the connection's
   * credentials (SO_PEERCRED, a token) when the job names none, and that saves
   * sbatch a passwd lookup through NSS on every job. */
  j->uid = (uint32_t)getuid();
  j->gid = (uint32_t)getgid();
  if (!(j->submit_dir = strdup(cwd))) return 1;
  if (!j->workdir && !(j->workdir = strdup(cwd))) return 1;
  if (!j->name) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", s->script_path ? s->script_path : "");
    const char *nm = s->x.wrap ? "wrap" : s->script_path ? basename(tmp) : "sbatch";
    if (!(j->name = strdup(nm))) return 1;
  }
  j->script = s->script;
  s->script = NULL;
  if (s->script_path) {
    size_t n = 0;
    char path[8200];
    if (s->script_path[0] == '/') snprintf(path, sizeof path, "%s", s->script_path);
    else snprintf(path, sizeof path, "%s/%s", cwd, s->script_path);
    if (strv_push(&j->argv, &n, path)) return 1;
    for (int i = 0; i < s->nscript_args; i++)
      if (strv_push(&j->argv, &n, s->script_args[i])) return 1;
  }
  return build_env(s) ? 1 : 0;
}

/* Server refusals in Slurm's words (wrappers grep these), followed by
 * Phalanx's precise reason when Slurm's says less. */
static void submit_refused(struct submit *s, long status, const json_t *resp) {
  const json_t *err = json_object_get(resp, "error");
  const char *field = json_string_value(json_object_get(err, "field"));
  const char *code = json_string_value(json_object_get(err, "code"));
  /* The server names fields by their path in the request ("job.dependency"). */
  if (field && !strncmp(field, "job.", 4)) field += 4;
  char msg[512];
  px_client_error_text(status, resp, msg, sizeof msg);
  if (!s->cmd.slurm) {
    px_cmd_error(&s->cmd, "job refused: %s", msg);
    return;
  }
  const char *slurm = NULL;
  bool said = false; /* Slurm's own lines already name the problem */
  if (field && !strcmp(field, "partition")) {
    px_cmd_error(&s->cmd, "invalid partition specified: %s", s->spec.partition ? s->spec.partition : "");
    slurm = "Invalid partition name specified";
    said = true;
  } else if (field && (!strcmp(field, "account") || !strcmp(field, "user"))) {
    slurm = "Invalid account or account/partition combination specified";
  } else if (field && !strcmp(field, "qos")) {
    slurm = "Invalid qos specification";
  } else if (field && !strncmp(field, "time_limit", 10)) {
    slurm = "Requested time limit is invalid (missing or exceeds some limit)";
  } else if (field && !strcmp(field, "dependency")) {
    slurm = "Job dependency problem";
  } else if (field && !strcmp(field, "reservation")) {
    slurm = code && !strcmp(code, "PERM") ? "Access denied to requested reservation" : "Requested reservation is invalid";
  } else if (field && !strcmp(field, "time_min")) {
    slurm = "Invalid time-min specification (exceeds job's time or other limits)";
  } else if (field && (!strcmp(field, "nodelist") || !strcmp(field, "exclude"))) {
    bool names = strstr(msg, "no node named") || strstr(msg, "also excluded") || strstr(msg, "not in partition");
    slurm = names ? "Invalid node name specified" : "Requested node configuration is not available";
  } else if (field && !strcmp(field, "constraint")) {
    slurm = "Invalid feature specification";
  } else if (field && !strcmp(field, "array")) {
    slurm = "Invalid job array specification";
  } else if ((field && !strncmp(field, "gpu", 3)) || (code && (!strcmp(code, "LIMIT") || !strcmp(code, "RANGE")))) {
    slurm = "Requested node configuration is not available"; /* a GPU type or count no node has */
  }
  /* --test-only: Slurm's allocation test says "allocation failure:" bare */
  if (s->x.test_only) fprintf(stderr, "allocation failure: %s\n", slurm ? slurm : msg);
  else px_cmd_error(&s->cmd, "Batch job submission failed: %s", slurm ? slurm : msg);
  if (slurm && !said && strcmp(slurm, msg)) px_cmd_error(&s->cmd, "(phalanx: %s)", msg);
}

/* Slurm's checks across options that sbatch makes before it asks anything
 * (srun inside a job takes its task count from the job, so not there). */
static int cross_checks(struct submit *s) {
  struct px_jobspec *j = &s->spec;
  bool gpus = j->gpus || j->gpus_per_node || j->gpus_per_task || j->gpu_share;
  if (s->x.ntasks_per_gpu && j->gpus_per_task) {
    px_cmd_option_error(&s->cmd, &(struct px_cli_extra){.fatal = true},
                        "--gpus-per-task is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU");
    return 1;
  }
  if (s->x.ntasks_per_gpu && (j->gpus || j->gpus_per_node)) { /* N tasks for each of the job's GPUs */
    uint32_t nodes = j->nodes_min ? j->nodes_min : 1;
    j->ntasks = s->x.ntasks_per_gpu * (j->gpus ? j->gpus : j->gpus_per_node * nodes);
    return 0;
  }
  if (s->x.ntasks_per_gpu) {
    px_cmd_error(&s->cmd, "gres_job_state_validate: --ntasks-per-tres needs either a GRES GPU specification "
                          "or a node/ntask specification");
  } else if (j->gpus && j->gpus_per_task && j->ntasks && j->gpus / j->gpus_per_task != j->ntasks) {
    px_cmd_error(&s->cmd, "Failed to validate job spec. Based on --gpus and --gpus-per-task number of "
                          "requested tasks differ from -n/--ntasks.");
  } else if (j->gpus_per_task && !j->ntasks && !j->ntasks_per_node && !j->gpus) {
    px_cmd_error(&s->cmd, "Failed to validate job spec. --gpus-per-task used without either --gpus or "
                          "-n/--ntasks is not allowed.");
  } else if (j->mem_per_gpu_mib && !gpus) {
    px_cmd_error(&s->cmd, "Requested mem_per_tres=gres:gpu:%llu but did not request any GPU.",
                 (unsigned long long)j->mem_per_gpu_mib);
  } else {
    return 0;
  }
  px_cmd_error(&s->cmd, "Invalid generic resource (gres) specification");
  return 1;
}

/* --wait: poll until the job ends; the exit status is the job's. */
static int wait_job(struct submit *s, uint64_t id) {
  char path[64];
  snprintf(path, sizeof path, "/v1/jobs/%llu", (unsigned long long)id);
  for (;;) {
    long status = 0;
    json_t *resp = NULL;
    if (px_cmd_call(&s->cmd, "GET", path, NULL, &status, &resp)) return 1;
    struct px_job_info j;
    int rc = status == 200 ? px_cli_job_from_json(resp, &j) : PX_EPROTO;
    json_decref(resp);
    if (rc) return 1;
    bool done = px_cli_state_is_finished(j.state);
    int exit_code = !strcmp(j.state, "COMPLETED") ? 0 : j.exit_code ? j.exit_code : 1;
    px_cli_job_fini(&j);
    if (done) return exit_code;
    sleep(1);
  }
}

static int post_job(struct submit *s) {
  json_t *body = json_object(), *job = px_cli_jobspec_to_json(&s->spec), *resp = NULL;
  if (body && !job) {
    fprintf(stderr, "sbatch: error: the batch script, an option or an exported variable is "
                    "not valid UTF-8 text; convert it (iconv -t UTF-8) and submit again\n");
    json_decref(body);
    return 1;
  }
  if (!body || json_object_set_new(body, "job", job)) {
    json_decref(body);
    return 1;
  }
  long status = 0;
  int rc = px_cmd_call(&s->cmd, "POST", s->x.test_only ? "/v1/jobs?test_only=1" : "/v1/jobs",
                       body, &status, &resp);
  json_decref(body);
  if (rc) return 1;
  if (status / 100 != 2) {
    submit_refused(s, status, resp);
    json_decref(resp);
    return 1;
  }
  json_int_t id = json_integer_value(json_object_get(resp, "job_id"));
  if (s->x.test_only) {
    char when[32];
    px_cli_fmt_iso(when, sizeof when, json_integer_value(json_object_get(resp, "expected_start")), "Unknown");
    /* the server's dry run: the id the job would get, its estimated start and nodes (0: Unknown, none) */
    const char *nodes = json_string_value(json_object_get(resp, "nodelist"));
    const char *part = json_string_value(json_object_get(resp, "partition"));
    fprintf(stderr, "%s: Job %lld to start at %s using %lld processors on nodes %s in partition %s\n",
            s->cmd.prog, (long long)id, when, (long long)json_integer_value(json_object_get(resp, "ncpus")),
            nodes && *nodes ? nodes : "(null)", part && *part ? part : "(null)");
    json_decref(resp);
    return 0;
  }
  if (s->cmd.json) px_cmd_print_json(resp);
  else if (s->x.parsable) printf("%lld\n", (long long)id);
  else printf("%s %lld\n", s->cmd.slurm ? "Submitted batch job" : "Submitted job", (long long)id);
  fflush(stdout);
  json_decref(resp);
  return s->x.wait ? wait_job(s, (uint64_t)id) : 0;
}

static void sbatch_usage(const char *prog, enum px_cli_tool tool) {
  printf("Usage: %s [OPTIONS] [SCRIPT [ARGS...]]\n\n", prog);
  for (size_t i = 0; i < px_cli_nopts; i++) {
    const struct px_opt_def *o = &px_cli_opts[i];
    if (!o->apply || !(o->tools & (1u << tool))) continue;
    char flag[64];
    snprintf(flag, sizeof flag, "%s%c%s--%s%s", o->short_name ? "-" : "", o->short_name ? o->short_name : ' ',
             o->short_name ? ", " : "  ", o->name, o->arg == PX_ARG_REQUIRED ? "=VALUE" : o->arg == PX_ARG_OPTIONAL ? "[=VALUE]" : "");
    printf("  %-30s %s\n", flag[0] == ' ' ? flag + 1 : flag, o->help);
  }
  printf("\nOptions Phalanx refuses, and why: docs/slurm-migration.md\n");
}

static bool wants(int argc, char **argv, const char *a, const char *b) {
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] != '-') return false; /* the script: its own arguments follow */
    if (!strcmp(argv[i], a) || (b && !strcmp(argv[i], b))) return true;
  }
  return false;
}

static int submit_run(struct submit *s, int argc, char **argv, enum px_cli_tool tool) {
  struct px_diag d;
  int first;
  px_diag_clear(&d);
  int rc = px_cli_parse_argv(tool, argc, argv, &s->cli, &first, &d);
  if (rc) {
    px_cmd_error(&s->cmd, "%s", d.msg);
    if (rc == PX_EINVAL) fprintf(stderr, "Try \"%s --help\" for more information\n", s->cmd.prog);
    return 1;
  }
  if (first < argc) {
    s->script_path = argv[first];
    s->script_args = argv + first + 1;
    s->nscript_args = argc - first - 1;
  }
  if (load_script(s)) return 1;
  if (px_cli_parse_directives(s->script, &s->file, &d) || env_options(s, &d) ||
      px_cli_apply(&s->file, &s->spec, &s->x, s->cmd.now, &d) ||
      px_cli_apply(&s->env, &s->spec, &s->x, s->cmd.now, &d) ||
      px_cli_apply(&s->cli, &s->spec, &s->x, s->cmd.now, &d)) {
    return px_cmd_option_error(&s->cmd, &s->x, d.msg);
  }
  if (cross_checks(s)) return 1;
  s->cmd.json = s->x.json;
  if (fill_identity(s)) {
    px_cmd_error(&s->cmd, "out of memory");
    return 1;
  }
  return post_job(s);
}

int px_cmd_sbatch(int argc, char **argv, bool native) {
  enum px_cli_tool tool = native ? PX_TOOL_SUBMIT : PX_TOOL_SBATCH;
  const char *prog = native ? "phalanx submit" : "sbatch";
  if (wants(argc, argv, "--help", "-h")) {
    sbatch_usage(prog, tool);
    return 0;
  }
  if (wants(argc, argv, "--version", "-V")) {
    printf("slurm 22.05.8 (phalanx)\n");
    return 0;
  }
  struct submit s = {0};
  px_cmd_init(&s.cmd, prog, !native);
  px_jobspec_init(&s.spec);
  int rc = submit_run(&s, argc, argv, tool);
  px_cmd_fini(&s.cmd);
  px_jobspec_fini(&s.spec);
  px_cli_extra_fini(&s.x);
  px_cli_optlist_fini(&s.cli);
  px_cli_optlist_fini(&s.file);
  px_cli_optlist_fini(&s.env);
  free(s.script);
  return rc;
}
