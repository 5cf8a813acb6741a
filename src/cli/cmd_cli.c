/*
 * cmd_cli.c - dispatch of the native verbs (`phalanx queue`) and of Slurm's
 * command names (argv[0] == "squeue"), and the one table that also makes
 * `phalanx help [VERB]` and the man page (`phalanx help --man`, kept in
 * man/phalanx.1 and checked against this table by a test).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cmd_common.h"
#include "cli/opts_apply.h"
#include "commands.h"

struct verb {
  const char *name;
  int (*slurm_style)(int argc, char **argv, bool native); /* shared with a Slurm command */
  int (*native)(int argc, char **argv);
  const char *synopsis, *summary, *slurm;
};

static const struct verb verbs[] = {
    {"submit", px_cmd_sbatch, NULL, "submit [OPTIONS] [SCRIPT [ARGS]] | submit --wrap CMD",
     "submit a batch script (#PHX or #SBATCH lines) or a command", "sbatch"},
    {"queue", px_cmd_squeue, NULL, "queue [-u USERS|--me] [-A ACCTS] [-p PARTS] [-t STATES] [-j IDS] [-l] [-o FMT]",
     "list pending and running jobs", "squeue"},
    {"show", NULL, px_verb_show, "show JOBID", "everything about one job", "scontrol show job"},
    {"why", NULL, px_verb_why, "why JOBID",
     "why a job is pending, what would let it run, and when it should start", "squeue --start"},
    {"cancel", px_cmd_scancel, NULL, "cancel [-s SIGNAL] [-u USER] [-n NAME] [-t STATE] [JOBID...]",
     "cancel or signal jobs (array tasks as 12_3 or 12_[1-4])", "scancel"},
    {"hold", NULL, px_verb_jobop, "hold JOBID[,JOBID...]", "keep pending jobs from starting", "scontrol hold"},
    {"release", NULL, px_verb_jobop, "release JOBID[,JOBID...]", "let held jobs start", "scontrol release"},
    {"update", NULL, px_verb_update, "update JOBID TimeLimit=T|Nice=N|Priority=N ...",
     "change a job's time limit, nice value or (operators) priority", "scontrol update"},
    {"nodes", px_cmd_sinfo, NULL, "nodes [-n NODES] [-t STATES] [-l] [-o FMT]",
     "list nodes, one line per node and partition", "sinfo -N"},
    {"drain", NULL, px_verb_nodeop, "drain NODES --reason TEXT",
     "stop placing jobs on nodes (running jobs finish)", "scontrol update State=DRAIN"},
    {"resume", NULL, px_verb_nodeop, "resume NODES", "return drained nodes to service",
     "scontrol update State=RESUME"},
    {"partitions", NULL, px_verb_partitions, "partitions [-s] [-p PARTS]",
     "list partitions with their limits and node states", "sinfo"},
    {"share", px_cmd_sshare, NULL, "share [-l] [-A ACCTS] [-u USERS]",
     "the account tree with shares, usage and fair-share factor", "sshare -a"},
    {"usage", NULL, px_verb_usage, "usage [--since 30d|WHEN] [--by account|user|partition|service] [--json]",
     "resource usage per account or user", "sreport"},
    {"jobs", px_cmd_sacct, NULL, "jobs [-j IDS] [-S START] [-E END] [-s STATES] [-X] [-o FIELDS]",
     "finished and running jobs from accounting", "sacct"},
    {"export", NULL, px_verb_export, "export [--since 30d|WHEN] [--output FILE] [--nodes-output FILE]",
     "finished jobs as a simulator trace, for phalanx sim --from-accounting, and the nodes' down and drain periods "
     "beside it (FILE.nodes.csv; docs/simulator.md)",
     "none"},
    {"prio", px_cmd_sprio, NULL, "prio [-l] [-j IDS]", "the priority factors of pending jobs", "sprio"},
    {"stat", px_cmd_sstat, NULL, "stat -j JOB[,JOB...] [-o FIELDS] [-p|-P] [-n]",
     "what running jobs use now: memory (in use, peak), CPU per task", "sstat"},
    {"diag", px_cmd_sdiag, NULL, "diag [-r] [-i|-t|-T]",
     "scheduling cycles, backfill and request statistics", "sdiag"},
    {"accounts", px_cmd_sacctmgr, NULL, "accounts show assoc|account|user|qos [-P] [-n] [format=F]",
     "the accounts tree, users and QoS", "sacctmgr show"},
    {"accounts", px_cmd_sacctmgr, NULL, "accounts show event [-P|-p] [-n] [Start=T] [End=T] [Nodes=LIST]",
     "the nodes' down and drain periods from accounting", "sacctmgr show event"},
    {"accounts", px_cmd_sacctmgr, NULL,
     "accounts [-i] add|modify|delete account|user|qos [where] name=N [account=A] [set] [fairshare=N] [GrpTRES=gres/gpu=N] [MaxJobs=N] ...",
     "change accounts, user associations and QoS online (journaled; operators only)", "sacctmgr add, modify, delete"},
    {"reserve", NULL, px_verb_reserve, "reserve --name N (--nodes L|--gpus N --partition P) [--start T] --duration D [--account A]",
     "reserve nodes or GPUs for an account, or for maintenance", "scontrol create reservation"},
    {"token", NULL, px_verb_token, "token [--lifetime D-HH:MM:SS]",
     "print an API token for remote use (PHALANX_TOKEN)", "scontrol token"},
    {"service", NULL, px_verb_service, "service apply FILE | list | show NAME | scale NAME N | delete NAME | logs NAME [REPLICA]",
     "long-running services: replicas kept up, rolling updates, autoscaling (docs/services.md)", "none"},
    {"exec", NULL, px_verb_exec, "exec JOBID -- COMMAND [ARGS...]",
     "run a command inside a running job, on a terminal when stdin is one (docs/interactive.md)", "none"},
    {"session", NULL, px_verb_session, "session start [--gpus N] [-t TIME] [--idle TIME] [OPTIONS] -- COMMAND [ARGS...]",
     "a web application (a notebook) as a job, at an authenticated URL on the server (docs/interactive.md)", "none"},
    {"attach", NULL, px_verb_attach, "attach JOBID[.STEPID]", "follow a running job's or step's output", "sattach"},
    {"ui", NULL, px_verb_ui, "ui [--lifetime D-HH:MM:SS]",
     "print the web dashboard's address with a sign-in link for you", "none"},
};
#define NVERBS (sizeof verbs / sizeof verbs[0])

static const struct {
  const char *name;
  int (*run)(int argc, char **argv, bool native);
} slurm_cmds[] = {
    {"sbatch", px_cmd_sbatch},   {"squeue", px_cmd_squeue}, {"scancel", px_cmd_scancel},
    {"sinfo", px_cmd_sinfo},     {"sacct", px_cmd_sacct},   {"sshare", px_cmd_sshare},
    {"scontrol", px_cmd_scontrol}, {"sprio", px_cmd_sprio}, {"srun", px_cmd_srun},
    {"salloc", px_cmd_salloc},   {"sdiag", px_cmd_sdiag},   {"sacctmgr", px_cmd_sacctmgr},
    {"sstat", px_cmd_sstat},
    {"sattach", px_cmd_sattach},
};

int px_slurm_main(int argc, char **argv) {
  for (size_t i = 0; i < sizeof slurm_cmds / sizeof slurm_cmds[0]; i++)
    if (!strcmp(argv[0], slurm_cmds[i].name)) return slurm_cmds[i].run(argc, argv, false);
  return -1;
}

void px_cli_usage(void) {
  printf("job and cluster commands (every one takes --json; 'phalanx help VERB' for more):\n");
  for (size_t i = 0; i < NVERBS; i++) printf("  %-10s %s\n", verbs[i].name, verbs[i].summary);
}

static void help_verb(const struct verb *v) {
  printf("usage: phalanx %s [--json]\n\n%s.\nSlurm equivalent: %s\n", v->synopsis, v->summary, v->slurm);
  if (v->slurm_style == px_cmd_sbatch) {
    printf("\nOptions (also as #PHX or #SBATCH lines before the first command of the script;\n"
           "the command line wins):\n");
    for (size_t i = 0; i < px_cli_nopts; i++)
      if (px_cli_opts[i].apply && (px_cli_opts[i].tools & (1u << PX_TOOL_SUBMIT)))
        printf("  --%-18s %s\n", px_cli_opts[i].name, px_cli_opts[i].help);
  }
}

/* roff escapes: a leading '.' or '\'' and every backslash and '-'. */
static void roff(const char *s) {
  if (*s == '.' || *s == '\'') fputs("\\&", stdout);
  for (; *s; s++) {
    if (*s == '\\') fputs("\\e", stdout);
    else if (*s == '-') fputs("\\-", stdout);
    else putchar(*s);
  }
}

static void help_man(void) {
  printf(".\\\" Generated by 'phalanx help --man' from src/cli/cmd_cli.c and src/cli/opts.c; do not edit.\n"
         ".TH PHALANX 1 \"\" \"phalanx\" \"User Commands\"\n.SH NAME\nphalanx \\- GPU cluster workload manager: "
         "jobs, nodes and Slurm-compatible commands\n.SH SYNOPSIS\n.B phalanx\n.I VERB\n[\\fIARGS\\fR] [\\-\\-json]\n"
         ".SH DESCRIPTION\nEvery verb talks to the Phalanx server found from \\fBPHALANX_SERVER\\fR "
         "(unix:/path, http://host:port on loopback, or https://host:port), then the \\fBSocketPath=\\fR "
         "or \\fBListen=\\fR line of the "
         "configuration (\\fBPHALANX_CONF\\fR), then the local socket " PX_CLI_DEFAULT_SOCKET ".\n"
         "Under the names sbatch, squeue, scancel, sinfo, sacct, sshare, scontrol, sprio, srun, salloc, sdiag, sacctmgr and sstat "
         "the same binary accepts Slurm's options and prints Slurm's formats.\n.SH VERBS\n");
  for (size_t i = 0; i < NVERBS; i++) {
    printf(".TP\n.B phalanx ");
    roff(verbs[i].synopsis);
    printf("\n");
    roff(verbs[i].summary);
    printf(" (Slurm: ");
    roff(verbs[i].slurm);
    printf(").\n");
  }
  printf(".SH JOB OPTIONS\nAccepted by submit and sbatch on the command line and in #PHX / #SBATCH lines.\n");
  for (size_t i = 0; i < px_cli_nopts; i++) {
    const struct px_opt_def *o = &px_cli_opts[i];
    if (!o->apply) continue;
    printf(".TP\n.B \\-\\-");
    roff(o->name);
    if (o->short_name) printf(", \\-%c", o->short_name);
    printf("\n");
    roff(o->help);
    printf("\n");
  }
  printf(".SH REFUSED SLURM OPTIONS\nThese are errors that name the option, never silently ignored:\n");
  for (size_t i = 0; i < px_cli_nopts; i++) {
    const struct px_opt_def *o = &px_cli_opts[i];
    if (o->apply) continue;
    printf(".TP\n.B \\-\\-");
    roff(o->name);
    printf("\n");
    roff(o->help);
    printf("\n");
  }
  printf(".SH ENVIRONMENT\n.TP\n.B PHALANX_SERVER\nwhere the server is.\n.TP\n.B PHALANX_TOKEN\n"
         "API token for a remote server.\n.TP\n.B PHALANX_CA_FILE\nthe CA that signed an https server's "
         "certificate (PEM; default the configuration's \\fBTLSCAFile=\\fR, else the system's CAs).\n"
         ".TP\n.B PHALANX_TIMEOUT\nseconds to wait for an answer "
         "(default 30).\n.SH SEE ALSO\ndocs/cli.md, docs/slurm-migration.md\n");
}

/* The option table as Markdown, for docs/slurm-migration.md (a test checks it is current). */
static void help_options_md(void) {
  static const char *const tools[] = {"sbatch", "srun", "salloc", "submit"};
  printf("| option | short | sbatch | srun | salloc | submit | status |\n|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < px_cli_nopts; i++) {
    const struct px_opt_def *o = &px_cli_opts[i];
    printf("| `--%s` | %s%c%s |", o->name, o->short_name ? "`-" : "", o->short_name ? o->short_name : ' ',
           o->short_name ? "`" : "");
    for (size_t t = 0; t < sizeof tools / sizeof tools[0]; t++)
      printf(" %s |", (o->tools & (1u << t)) ? "yes" : "");
    printf(" %s: %s |\n", o->apply ? (o->apply == px_opt_ignored ? "accepted, no effect" : "supported")
                                    : "**refused**", o->help);
  }
}

static int help(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--man")) {
    help_man();
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "--options-md")) {
    help_options_md();
    return 0;
  }
  for (size_t i = 0; i < NVERBS; i++) {
    if (argc > 1 && !strcmp(argv[1], verbs[i].name)) {
      help_verb(&verbs[i]);
      return 0;
    }
  }
  fprintf(stderr, "phalanx help: no verb '%s'; the verbs are:\n", argc > 1 ? argv[1] : "");
  px_cli_usage();
  return 2;
}

int px_cli_main(int argc, char **argv) {
  if (!strcmp(argv[0], "help")) return help(argc, argv);
  for (size_t i = 0; i < NVERBS; i++) {
    if (strcmp(argv[0], verbs[i].name)) continue;
    for (int k = 1; k < argc; k++)
      if (!strcmp(argv[k], "--help") && verbs[i].slurm_style != px_cmd_sbatch) {
        help_verb(&verbs[i]);
        return 0;
      }
    return verbs[i].native ? verbs[i].native(argc, argv) : verbs[i].slurm_style(argc, argv, true);
  }
  return -1;
}
