/*
 * Table-driven tests of sbatch option parsing: each option family into its
 * px_jobspec field (expected values worked out by hand from Slurm's
 * documented forms: "-t 1-2" is one day two hours = 93600 s, "--mem=1.5G" is
 * 1536 MiB, ...), every refused option, bad values with Slurm's wording, and
 * the precedence of the command line over #SBATCH lines.
 */
#include "px_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "spec_fields.h"

/* 2026-12-02T13:38:50Z */
#define NOW 1796218730LL

static int split(char *line, char **argv, int max) {
  int n = 0;
  argv[n++] = "sbatch";
  for (char *t = strtok(line, " "); t && n < max; t = strtok(NULL, " ")) argv[n++] = t;
  return n;
}

/* Parses and applies a command line; returns the code, fills spec/extra. */
static int run_cli(const char *line, struct px_jobspec *s, struct px_cli_extra *x,
                   struct px_diag *d) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", line);
  char *argv[64];
  int argc = split(buf, argv, 64), first;
  struct px_cli_optlist l = {0};
  px_jobspec_init(s);
  memset(x, 0, sizeof *x);
  int rc = px_cli_parse_argv(PX_TOOL_SBATCH, argc, argv, &l, &first, d);
  if (!rc) rc = px_cli_apply(&l, s, x, NOW, d);
  px_cli_optlist_fini(&l);
  return rc;
}

static void options_map_to_jobspec(void **state) {
  static const struct {
    const char *args, *field, *want;
  } cases[] = {
      {"-J train", "name", "train"},
      {"--job-name=train", "name", "train"},
      {"-A llm", "account", "llm"},
      {"--account llm", "account", "llm"},
      {"-p batch", "partition", "batch"},
      {"-q high", "qos", "high"},
      {"-N 4", "nodes_min", "4"},
      {"-N 4", "nodes_max", "4"},
      {"--nodes=2-8", "nodes_min", "2"},
      {"--nodes=2-8", "nodes_max", "8"},
      {"-n 16", "ntasks", "16"},
      {"--ntasks-per-node=8", "ntasks_per_node", "8"},
      {"-c 12", "cpus_per_task", "12"},
      {"-c12", "cpus_per_task", "12"},
      {"--gpus=16", "gpus", "16"},
      {"-G h100:4", "gpus", "4"},
      {"-G h100:4", "gpu_type", "h100"},
      {"--gpus-per-node=8", "gpus_per_node", "8"},
      {"--gpus-per-node=a100:2", "gpu_type", "a100"},
      {"--gpus-per-task=1", "gpus_per_task", "1"},
      {"--gres=gpu:2", "gpus_per_node", "2"},
      {"--gpus=0.5", "gpu_share", "50"},
      {"--gpus=0.5", "gpus", "0"},
      {"-G h100:.25", "gpu_share", "25"},
      {"-G h100:.25", "gpu_type", "h100"},
      {"--gpus=0.05", "gpu_share", "5"},
      {"--gpus=2.0", "gpus", "2"},
      {"--gres=gpu:0.3", "gpu_share", "30"},
      {"--gres=gpu:0.30", "gpus_per_node", "0"},
      {"--gres=gpu:h100:8", "gpus_per_node", "8"},
      {"--gres=gpu:h100:8", "gpu_type", "h100"},
      {"--gres=gpu", "gpus_per_node", "1"},
      {"--gres=gpu:h100", "gpu_type", "h100"},
      {"--gres=gres/gpu:3", "gpus_per_node", "3"},
      {"--mem=100G", "mem_per_node_mib", "102400"},
      {"--mem=512", "mem_per_node_mib", "512"},
      {"--mem=1T", "mem_per_node_mib", "1048576"},
      {"--mem=0", "mem_per_node_mib", "0"}, /* "not given": memory in proportion to the share of the node */
      {"--mem-per-cpu=4G", "mem_per_cpu_mib", "4096"},
      {"--mem-per-gpu=80G", "mem_per_gpu_mib", "81920"},
      {"-t 5", "time_limit_s", "300"},
      {"-t 5:30", "time_limit_s", "360"}, /* Slurm keeps whole minutes, rounding up */
      {"-t 0:30", "time_limit_s", "60"},
      {"-t 0", "time_limit_s", "9223372036854775807"}, /* 0 is UNLIMITED */
      {"-t 1-2", "time_limit_s", "93600"},
      {"-t 1-2:3", "time_limit_s", "93780"},
      {"-t 90", "time_limit_s", "5400"},
      {"--gpus=0", "gpus", "0"}, /* no GPUs, as Slurm */
      {"-t 1:00:00", "time_limit_s", "3600"},
      {"-t 1-2", "time_limit_s", "93600"},
      {"-t 1-2:30", "time_limit_s", "95400"},
      {"--time=2-00:00:10", "time_limit_s", "172860"},
      {"-t UNLIMITED", "time_limit_s", "9223372036854775807"},
      {"-o out-%j.txt", "stdout_path", "out-%j.txt"},
      {"-e err-%A_%a.txt", "stderr_path", "err-%A_%a.txt"},
      {"-i in.txt", "stdin_path", "in.txt"},
      {"--array=0-99%10", "array", "0-99%10"},
      {"-a 1,3,5", "array", "1,3,5"},
      {"-d afterok:12:13", "dependency", "afterok:12:13"},
      {"--dependency=singleton", "dependency", "singleton"},
      {"--exclusive", "exclusive", "1"},
      {"-C a100&ib", "constraint", "a100&ib"},
      {"--no-requeue", "requeue", "0"},
      {"--no-requeue", "no_requeue_given", "1"},
      {"--no-requeue --requeue", "requeue", "1"},
      {"--signal=USR1@120", "signal_num", "10"},
      {"--signal=USR1@120", "signal_time_s", "120"},
      {"--signal=B:SIGTERM", "signal_batch_only", "1"},
      {"--signal=B:SIGTERM", "signal_time_s", "60"},
      {"--signal=9", "signal_num", "9"},
      {"--nice", "nice", "100"},
      {"--nice=-5", "nice", "-5"},
      {"-H", "hold", "1"},
      {"--hold", "hold", "1"},
      {"--begin=now+1hour", "begin_s", "1796222330"},
      {"--begin=now+90", "begin_s", "1796218820"},
      {"-b 2026-12-24T08:00:00", "begin_s", "1798099200"},
      {"-b 2026-12-24", "begin_s", "1798070400"},
      {"--begin=16:00", "begin_s", "1796227200"},
      {"--begin=13:00", "begin_s", "1796302800"}, /* already past today: tomorrow */
      {"--begin=midnight", "begin_s", "1796256000"},
      {"-D /tmp/work", "workdir", "/tmp/work"},
      {"--chdir=/tmp/work", "workdir", "/tmp/work"},
      {"--export=NONE", "export", "NONE"},
      {"--export=ALL,FOO=bar", "export", "ALL,FOO=bar"},
      {"--wrap=hostname", "wrap", "hostname"},
      {"--parsable", "parsable", "1"},
      {"--test-only", "test_only", "1"},
      {"--switches=2@10:00", "switches", "2"},
      {"--switches=2@10:00", "switches_wait_s", "600"},
      {"--mail-type=END,FAIL", "mail_type", "END,FAIL"},
      {"--mail-user=a@b.c", "mail_user", "a@b.c"},
      {"--comment=hello", "comment", "hello"},
      {"-vv", "verbose", "2"},
      {"-Hv", "hold", "1"},
      {"-J a -J b", "name", "b"},
      /* issue 17: the options real scripts use */
      {"-w gpu[01-02],gpu07", "nodelist", "gpu[01-02],gpu07"},
      {"--nodelist=n1", "nodelist", "n1"},
      {"-x n[3-4]", "exclude", "n[3-4]"},
      {"--exclude=n9", "exclude", "n9"},
      {"--reservation=maint", "reservation", "maint"},
      {"--cpus-per-gpu=8", "cpus_per_gpu", "8"},
      {"--open-mode=append", "open_mode", "append"},
      {"--open-mode=a", "open_mode", "append"}, /* Slurm reads the first letter */
      {"--open-mode=Truncate", "open_mode", "truncate"},
      {"--hint=nomultithread", "hint", "nomultithread"},
      {"--hint=Compute_Bound,multithread", "hint", "compute_bound,multithread"},
      {"-m cyclic", "distribution", "cyclic"},
      {"--distribution=plane=4", "distribution", "plane=4"},
      {"-m block:cyclic,Pack", "distribution", "block:cyclic,Pack"},
      {"-m arbitrary -w n1", "distribution", "arbitrary"},
      {"--time-min=30", "time_min_s", "1800"},
      {"--time-min=1-0", "time_min_s", "86400"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct px_jobspec s;
    struct px_cli_extra x;
    struct px_diag d;
    int rc = run_cli(cases[i].args, &s, &x, &d);
    if (rc) fail_msg("'%s' failed: %s", cases[i].args, d.msg);
    char got[256];
    field(&s, &x, cases[i].field, got, sizeof got);
    if (strcmp(got, cases[i].want))
      fail_msg("'%s': %s = %s, want %s", cases[i].args, cases[i].field, got, cases[i].want);
    px_jobspec_fini(&s);
    px_cli_extra_fini(&x);
  }
}

static void bad_values_are_errors_with_slurms_words(void **state) {
  static const struct {
    const char *args, *msg;
  } cases[] = {
      {"-t abc", "Invalid --time specification"},
      {"-t 1:2:3:4", "Invalid --time specification"},
      {"-N 0", "Batch job submission failed: Node count specification invalid"},
      {"-N abc", "\"abc\" is not a valid node count"},
      {"-N 2-abc", "\"abc\" is not a valid node count"},
      {"-N 8-2", "Maximum node count 2 is less than minimum node count 8"},
      {"-n x", "Invalid numeric value \"x\" for --ntasks."},
      {"-c -1", "Invalid numeric value \"-1\" for --cpus-per-task."},
      {"--mem=lots", "Invalid --mem specification"},
      {"--mem=10X", "Invalid --mem specification"},
      {"--mem=1.5G", "Invalid --mem specification"}, /* Slurm takes whole numbers only */
      {"--gres=mps:100", "Invalid generic resource (gres) specification\n(phalanx: mps:100"},
      {"--gres=shard:2", "shard:2: Phalanx shares a GPU by fractions: --gpus=0.5 or --gres=gpu:0.5"},
      {"--gres=gpu:h100:x", "Invalid numeric value \"x\" for --gres."},
      {"--gpus=0.3x", "Invalid --gpus specification: 0.3x (a GPU count, or a fraction of one GPU from 0.01 to 0.99)"},
      {"--gpus=1.5", "Invalid --gpus specification: 1.5 (a fraction is part of one GPU"},
      {"--gpus=0.333", "Invalid --gpus specification: 0.333 (GPU fractions are in hundredths"},
      {"--gpus=0.0", "Invalid --gpus specification: 0.0 (a fraction is part of one GPU"},
      {"--gpus-per-task=0.5", "Invalid --gpus-per-task specification: 0.5 (fractions of a GPU only with --gpus"},
      {"--signal=FOO", "Invalid --signal specification"},
      {"--signal=B:USR1@-5", "Invalid --signal specification"},
      {"--mem-per-gpu=abc", "Invalid --mem-per-gpu specification"},
      {"--exclusive=bogus", "Invalid --exclusive specification"},
      {"--nice=abc", "Invalid --nice value: abc"},
      {"--begin=someday", "Invalid time specification (pos=0): someday\nInvalid --begin specification"},
      {"--begin=now+1fortnight", "Invalid time specification (pos=4): now+1fortnight"},
      {"--begin=2026-13-45", "Invalid time specification (pos=5): 2026-13-45"},
      {"--exclusive=user", "--exclusive=user is not supported"},
      {"--mem=1G --mem-per-cpu=1G", "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."},
      {"--mem-per-cpu=1G --mem-per-gpu=2G", "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."},
      /* issue 17: Slurm 22.05's words, from the reference harness */
      {"--cpus-per-gpu=0", "Invalid numeric value \"0\" for --cpus-per-gpu."},
      {"--cpus-per-gpu=abc", "Invalid numeric value \"abc\" for --cpus-per-gpu."},
      {"--cpus-per-gpu=4 -c 2", "--cpus-per-gpu is mutually exclusive with --cpus-per-task"},
      {"--open-mode=bogus", "Invalid --open-mode specification"},
      {"--hint=bogus", "unrecognized --hint argument \"bogus\", see --hint=help"},
      {"-m bogus", "Invalid --distribution specification"},
      {"-m cyclic:bogus", "Invalid --distribution specification"},
      {"-m block:cyclic:cyclic:cyclic", "Invalid --distribution specification"},
      {"-m plane", "Invalid plane size or size not specified"},
      {"-m plane=0", "Invalid plane size or size not specified"},
      {"-m arbitrary", "With Arbitrary distribution you need to specify a nodelist or hostfile with the -w option"},
      {"--time-min=bogus", "Invalid --time-min specification"},
      {"--time-min=0", "Invalid time-min specification (exceeds job's time or other limits)"},
      {"-w /nonexistent/nodes", "slurm_allocate_resources error opening file /nonexistent/nodes, No such file or directory"},
      {"-w n[1-3] -N 2", "invalid number of nodes (-N 3-2)"},
      {"--nodelist=", "--nodelist: empty node list"},
      {"--bogus", "unrecognized option '--bogus'"},
      {"-Z", "unrecognized option '-Z'"},
      {"-t", "option requires an argument -- 't'"},
      {"--time", "option '--time' requires an argument"},
      {"--hold=yes", "option '--hold' doesn't allow an argument"},
      {"--pty", "option --pty does not apply to this command"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct px_jobspec s;
    struct px_cli_extra x;
    struct px_diag d;
    int rc = run_cli(cases[i].args, &s, &x, &d);
    if (!rc) fail_msg("'%s' was accepted", cases[i].args);
    if (!strstr(d.msg, cases[i].msg))
      fail_msg("'%s': message '%s' lacks '%s'", cases[i].args, d.msg, cases[i].msg);
    px_jobspec_fini(&s);
    px_cli_extra_fini(&x);
  }
}

static void every_refused_option_is_named(void **state) {
  size_t refused = 0;
  for (size_t i = 0; i < px_cli_nopts; i++) {
    const struct px_opt_def *o = &px_cli_opts[i];
    if (o->apply) continue;
    refused++;
    char line[128];
    snprintf(line, sizeof line, o->arg == PX_ARG_REQUIRED ? "--%s=x" : "--%s", o->name);
    struct px_jobspec s;
    struct px_cli_extra x;
    struct px_diag d;
    assert_int_equal(run_cli(line, &s, &x, &d), PX_EUNSUPPORTED);
    char want[96];
    snprintf(want, sizeof want, "option --%s is not supported by Phalanx", o->name);
    if (!strstr(d.msg, want) || !strstr(d.msg, o->help)) fail_msg("%s: %s", line, d.msg);
    if (o->short_name) { /* the short form is refused the same way */
      snprintf(line, sizeof line, o->arg == PX_ARG_NONE ? "-%c" : "-%c x", o->short_name);
      assert_int_equal(run_cli(line, &s, &x, &d), PX_EUNSUPPORTED);
      assert_non_null(strstr(d.msg, want));
    }
    px_jobspec_fini(&s);
  }
  assert_true(refused >= 40); /* the table lists the Slurm options users meet */
}

static void directives_then_command_line(void **state) {
  const char *script = "#!/bin/bash\n"
                       "#SBATCH -J fromfile\n"
                       "#SBATCH --time=2 # a comment after the option\n"
                       "\n"
                       "# an ordinary comment\n"
                       "#SBATCH --gres=gpu:h100:2 -c 4\n"
                       "#PHX --comment \"two words\"\n"
                       "#SBATCHX -J ignored-not-a-directive\n"
                       "#sbatch -J ignored-lower-case\n"
                       "srun hostname\n"
                       "#SBATCH -J ignored-after-first-command\n";
  struct px_cli_optlist file = {0}, cli = {0};
  struct px_diag d;
  assert_int_equal(px_cli_parse_directives(script, &file, &d), 0);
  assert_int_equal(file.len, 5);
  char *argv[] = {"sbatch", "-t", "30", "job.sh", "arg1", NULL};
  int first;
  assert_int_equal(px_cli_parse_argv(PX_TOOL_SBATCH, 5, argv, &cli, &first, &d), 0);
  assert_int_equal(first, 3); /* the script; its own arguments follow */
  struct px_jobspec s;
  struct px_cli_extra x = {0};
  px_jobspec_init(&s);
  assert_int_equal(px_cli_apply(&file, &s, &x, NOW, &d), 0);
  assert_int_equal(px_cli_apply(&cli, &s, &x, NOW, &d), 0);
  assert_string_equal(s.name, "fromfile");
  assert_int_equal(s.time_limit_s, 1800); /* command line wins over "#SBATCH --time=2" */
  assert_int_equal(s.gpus_per_node, 2);
  assert_string_equal(s.gpu_type, "h100");
  assert_int_equal(s.cpus_per_task, 4);
  assert_string_equal(s.comment, "two words");
  px_jobspec_fini(&s);
  px_cli_optlist_fini(&file);
  px_cli_optlist_fini(&cli);
}

static void directive_errors_name_the_line(void **state) {
  struct px_cli_optlist l = {0};
  struct px_diag d;
  assert_int_equal(px_cli_parse_directives("#!/bin/sh\n#SBATCH -J ok\n#SBATCH --licenses=x\n", &l, &d),
                   PX_EUNSUPPORTED);
  assert_int_equal(d.line, 3);
  assert_non_null(strstr(d.msg, "batch script line 3: option --licenses is not supported"));
  px_cli_optlist_fini(&l);
  assert_int_equal(px_cli_parse_directives("#!/bin/sh\n#SBATCH -t 5 stray\n", &l, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "line 2: unexpected argument 'stray'"));
  px_cli_optlist_fini(&l);
  /* A bad value in a directive is reported with its line at apply time. */
  assert_int_equal(px_cli_parse_directives("#!/bin/sh\n\n#SBATCH -t never\n", &l, &d), 0);
  struct px_jobspec s;
  struct px_cli_extra x = {0};
  px_jobspec_init(&s);
  assert_int_equal(px_cli_apply(&l, &s, &x, NOW, &d), PX_EINVAL);
  assert_string_equal(d.msg, "batch script line 3: Invalid --time specification");
  px_jobspec_fini(&s);
  px_cli_optlist_fini(&l);
  assert_true(px_cli_script_has_shebang("#!/bin/bash\n"));
  assert_false(px_cli_script_has_shebang("echo hi\n"));
}

/* Slurm 22.05 counts the script's memory form with the command line's (the
 * harness: "#SBATCH --mem-per-cpu=1G" and "sbatch --mem=2G" is its fatal
 * error); the same form in both is an ordinary override. */
static void memory_forms_across_sources(void **state) {
  static const struct {
    const char *script, *cli;
    int rc;
  } cases[] = {{"#!/bin/sh\n#SBATCH --mem-per-cpu=1G\n", "--mem=2G", PX_EINVAL},
               {"#!/bin/sh\n#SBATCH --mem-per-cpu=1G\n", "--mem-per-gpu=40G", PX_EINVAL},
               {"#!/bin/sh\n#SBATCH --mem=64G\n", "--mem=32G", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct px_cli_optlist file = {0}, cli = {0};
    struct px_diag d;
    assert_int_equal(px_cli_parse_directives(cases[i].script, &file, &d), 0);
    char *argv[] = {"sbatch", (char *)cases[i].cli, NULL};
    int first;
    assert_int_equal(px_cli_parse_argv(PX_TOOL_SBATCH, 2, argv, &cli, &first, &d), 0);
    struct px_jobspec s;
    struct px_cli_extra x = {0};
    px_jobspec_init(&s);
    assert_int_equal(px_cli_apply(&file, &s, &x, NOW, &d), 0);
    assert_int_equal(px_cli_apply(&cli, &s, &x, NOW, &d), cases[i].rc);
    assert_int_equal(x.fatal, cases[i].rc != 0); /* "sbatch: fatal: ..." as Slurm */
    if (!cases[i].rc) assert_int_equal(s.mem_per_node_mib, 32768);
    px_jobspec_fini(&s);
    px_cli_optlist_fini(&file);
    px_cli_optlist_fini(&cli);
  }
}

/* What public job scripts write (docs/slurm-migration.md's survey): one
 * --mail-type word per line adding up, sizes with a trailing B, getopt's
 * abbreviations, Slurm's --tasks-per-node alias, --wait-all-nodes and
 * --overcommit accepted; a bad word, an ambiguous prefix refused. */
static void scripts_as_written(void **state) {
  const char *script = "#!/bin/bash\n"
                       "#SBATCH --mail-type=begin\n"
                       "#SBATCH --mail-type=END,fail\n"
                       "#SBATCH --mem=40GB\n"
                       "#SBATCH --err=e.log --out=o.log\n"
                       "#SBATCH --tasks-per-node=8 --wait-all-nodes=1 --overcommit --exclusive\n"
                       "#SBATCH --gres=gpu:0 --gpus-per-task=0\n";
  struct px_cli_optlist file = {0};
  struct px_diag d;
  assert_int_equal(px_cli_parse_directives(script, &file, &d), 0);
  struct px_jobspec s;
  struct px_cli_extra x = {0};
  px_jobspec_init(&s);
  if (px_cli_apply(&file, &s, &x, NOW, &d)) fail_msg("%s", d.msg);
  assert_string_equal(s.mail_type, "BEGIN,END,FAIL");
  assert_int_equal(s.mem_per_node_mib, 40960);
  assert_string_equal(s.stderr_path, "e.log");
  assert_string_equal(s.stdout_path, "o.log");
  assert_int_equal(s.ntasks_per_node, 8);
  assert_int_equal(s.gpus_per_node, 0); /* gpu:0: no GPUs, as Slurm */
  assert_int_equal(s.gpus_per_task, 0);
  px_jobspec_fini(&s);
  px_cli_optlist_fini(&file);
  const struct {
    const char *line, *phrase;
  } bad[] = {
      {"--mail-type=SOMETIMES", "Invalid --mail-type specification"},
      {"--wait-all-nodes=2", "Invalid --wait-all-nodes specification"},
      {"--mem=100B", "Invalid --mem specification"},
      {"--ti=5", "option '--ti' is ambiguous"},   /* --time, --time-min */
      {"--co=x", "option '--co' is ambiguous"},   /* --comment, --constraint, --contiguous, ... */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    px_diag_clear(&d);
    if (!run_cli(bad[i].line, &s, &x, &d) || !strstr(d.msg, bad[i].phrase)) fail_msg("%s: '%s'", bad[i].line, d.msg);
    px_jobspec_fini(&s);
  }
}

/* A node list with a '/' is a file of names: blanks, commas and newlines
 * separate them (Slurm's reading); an empty file is refused. */
static void node_files(void **state) {
  char path[] = "/tmp/px-nodes-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs("gpu01, gpu03\n\n gpu[05-06]\n", f);
  fclose(f);
  char line[128];
  struct px_jobspec s;
  struct px_cli_extra x;
  struct px_diag d;
  snprintf(line, sizeof line, "-w %s -x %s", path, path);
  assert_int_equal(run_cli(line, &s, &x, &d), 0);
  assert_string_equal(s.nodelist, "gpu01,gpu03,gpu[05-06]");
  assert_string_equal(s.exclude, "gpu01,gpu03,gpu[05-06]");
  px_jobspec_fini(&s);
  f = fopen(path, "w");
  fputs(" \n", f);
  fclose(f);
  snprintf(line, sizeof line, "--exclude=%s", path);
  assert_int_equal(run_cli(line, &s, &x, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "names no node"));
  px_jobspec_fini(&s);
  unlink(path);
}

int main(void) {
  setenv("TZ", "UTC", 1);
  tzset();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(options_map_to_jobspec),
      cmocka_unit_test(bad_values_are_errors_with_slurms_words),
      cmocka_unit_test(every_refused_option_is_named),
      cmocka_unit_test(directives_then_command_line),
      cmocka_unit_test(directive_errors_name_the_line),
      cmocka_unit_test(memory_forms_across_sources),
      cmocka_unit_test(node_files),
      cmocka_unit_test(scripts_as_written),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
