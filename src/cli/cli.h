/*
 * cli.h - private interface of the command-line layer: Slurm option parsing
 * (sbatch/srun/salloc flags and #SBATCH / #PHX lines into a px_jobspec), the
 * output formatters (pure functions from the view structs of proto/views.h to
 * text, byte-compatible with Slurm 22.05), and the small value parsers the
 * CLI needs.
 *
 * Nothing here talks to the server; client.c and the commands do. Keeping the
 * parsers and formatters pure is what lets the golden tests feed the jobs of
 * the real Slurm transcript and compare output byte for byte.
 */
#ifndef PX_CLI_CLI_H
#define PX_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/jobspec.h"
#include "proto/views.h"
#include "util/error.h"

/* ---- values (cli_units.c) ------------------------------------------------ */

/* Slurm time forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, UNLIMITED/INFINITE.
 * Writes seconds (PX_CLI_UNLIMITED for unlimited). 0 or PX_EINVAL. */
#define PX_CLI_UNLIMITED INT64_MAX
int px_cli_duration_parse(const char *s, int64_t *out_s);
/* "100", "100M", "80G", "1.5T", "512K" (default unit MiB) into MiB, rounding
 * up. 0 or PX_EINVAL / PX_ERANGE. */
int px_cli_size_parse_mib(const char *s, uint64_t *out_mib);
/* Expands "gpu[0001-0003,7],cpu1" into names; the caller frees each and the
 * array. 0, PX_EINVAL or PX_ENOMEM. */
int px_cli_hostlist_expand(const char *s, char ***names, size_t *n);
/* Compresses names (any order) into Slurm's sorted range form. Heap string. */
char *px_cli_hostlist_compress(char *const *names, size_t n);
void px_cli_strv_free(char **v, size_t n);
/* --begin / sacct -S forms (opts_begin.c): now[+-]N[unit], ISO date[time],
 * HH:MM[:SS], midnight, noon, teatime, today, tomorrow. */
int px_cli_time_parse(const char *val, int64_t now, int64_t *out);
/* The position Slurm's "Invalid time specification (pos=N): VAL" names. */
int px_cli_time_error_pos(const char *val);
/* "USR1", "SIGTERM", "9" into a signal number; -1 when unknown. */
int px_cli_signal_number(const char *name);

/* ---- time rendering (fmt_time.c) ------------------------------------------ */

/* squeue TIME: M:SS, H:MM:SS, D-HH:MM:SS; "UNLIMITED" for PX_CLI_UNLIMITED. */
void px_cli_fmt_elapsed(char *buf, size_t n, int64_t s);
/* scontrol / sacct: HH:MM:SS, D-HH:MM:SS. */
void px_cli_fmt_hms(char *buf, size_t n, int64_t s);
/* sinfo: D-HH:MM:SS always with days once >= 1 day, else H:MM:SS like squeue;
 * "infinite" for unlimited. */
void px_cli_fmt_sinfo_time(char *buf, size_t n, int64_t s);
/* ISO local time "2026-12-02T13:38:46"; `none` when t == 0. */
void px_cli_fmt_iso(char *buf, size_t n, int64_t t, const char *none);

/* ---- job states (fmt_time.c) ----------------------------------------------- */

/* "PD" for "PENDING", ... ; the long name itself when unknown. */
const char *px_cli_state_compact(const char *state);
/* Accepts a long name or a compact code in any case; writes the long name.
 * false when neither. */
bool px_cli_state_normalise(const char *in, char *out, size_t n);
bool px_cli_state_is_active(const char *state);
bool px_cli_state_is_finished(const char *state);

/* ---- sbatch / srun / salloc options (opts.c, script.c) -------------------- */

enum px_cli_tool { PX_TOOL_SBATCH, PX_TOOL_SRUN, PX_TOOL_SALLOC, PX_TOOL_SUBMIT };

/* What the command itself does with, beyond the job spec. */
struct px_cli_extra {
  bool parsable, test_only, quiet, wait, pty, label, json;
  int verbose;
  char *wrap;                 /* --wrap text */
  char *export_spec;          /* --export as written; NULL means ALL */
  uint32_t mem_set;           /* which of --mem / -per-cpu / -per-gpu were given, all sources */
  bool fatal;                 /* the error is one Slurm reports as "fatal:", not "error:" */
  int exit_status;            /* an option error's exit status where Slurm's is not 1 (255) */
  bool bare_first;            /* the error's first line is printed without "prog: error: " */
  uint32_t ntasks_per_gpu;    /* --ntasks-per-gpu: sbatch makes the task count from the GPUs */
};

/* One option as found on the command line or in a directive line. */
struct px_cli_opt {
  const struct px_opt_def *def;
  char *val;                  /* NULL for a flag */
  int line;                   /* script line, 0 for the command line */
};

struct px_cli_optlist {
  struct px_cli_opt *v;
  size_t len, cap;
};
void px_cli_optlist_fini(struct px_cli_optlist *l);

/* Parses argv[1..] up to the first non-option (the script or command), which
 * is returned as *first_arg (index into argv, argc when none). Options are
 * validated by name and argument presence, not applied. On error fills d (the
 * message names the option) and returns PX_EINVAL or PX_EUNSUPPORTED. */
int px_cli_parse_argv(enum px_cli_tool tool, int argc, char **argv, struct px_cli_optlist *out,
                      int *first_arg, struct px_diag *d);
/* Extracts #SBATCH (and #PHX) directives: only lines before the first
 * command line count. Same errors as above, with d->line set. */
int px_cli_parse_directives(const char *script, struct px_cli_optlist *out, struct px_diag *d);
/* Applies options in order to spec and extra. now is the Unix time used by
 * --begin. Returns 0 or a negative code with d naming the option. */
int px_cli_apply(const struct px_cli_optlist *l, struct px_jobspec *spec, struct px_cli_extra *x,
                 int64_t now, struct px_diag *d);
/* Checks a script for the "#!" line. */
bool px_cli_script_has_shebang(const char *script);
void px_cli_extra_fini(struct px_cli_extra *x);

/* The table of options (one source for parsing, help, man pages and docs). */
enum px_opt_arg { PX_ARG_NONE, PX_ARG_REQUIRED, PX_ARG_OPTIONAL };
struct px_opt_def {
  const char *name;           /* long name without dashes */
  char short_name;            /* 0 when none */
  enum px_opt_arg arg;
  unsigned tools;             /* bit per px_cli_tool */
  int (*apply)(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
               struct px_diag *d);
  const char *help;           /* one line; for refused options: why */
};
extern const struct px_opt_def px_cli_opts[];
extern const size_t px_cli_nopts;

/* ---- column formats (fmt_cols.c) ----------------------------------------- */

/* One item of a Slurm format string: literal text or a field. */
struct px_col {
  char key;                   /* field letter, or 0 for literal text */
  const char *lname;          /* -O field name when key is 0 and this is a field */
  bool right;                 /* '.' given */
  int width;                  /* -1: none */
  char *text;                 /* literal text (owned) */
};
struct px_cols {
  struct px_col *v;
  size_t len;
};
/* "%.18i %.9P ..." into items. 0 or PX_EINVAL (d names the bad spec). */
int px_cols_parse(const char *fmt, struct px_cols *out, struct px_diag *d);
/* -O "JobID:10,Name:.8,..." with names mapped to letters by table; default
 * width dflt_width, no separator. */
struct px_col_name {
  const char *name;
  char key;
};
int px_cols_parse_long(const char *fmt, const struct px_col_name *names, int dflt_width,
                       struct px_cols *out, struct px_diag *d);
void px_cols_fini(struct px_cols *c);
/* Writes v into out with width/justification/truncation (squeue rules). */
void px_cols_put(FILE *out, const struct px_col *c, const char *v);

/* ---- formatters (fmt_*.c) ------------------------------------------------ */

struct px_squeue_opts {
  const char *format;         /* -o, or NULL for the default */
  const char *long_format;    /* -O */
  const char *sort;           /* --sort, NULL for "P,t,-p" */
  bool noheader, long_list, start;
  int64_t now;
};
int px_fmt_squeue(FILE *out, const struct px_job_info *jobs, size_t n, const struct px_squeue_opts *o,
                  struct px_diag *d);

struct px_sinfo_opts {
  const char *format, *long_format;
  bool noheader, node_list, long_list, summarize, reasons;
  int64_t now;
};
int px_fmt_sinfo(FILE *out, const struct px_partition_info *parts, size_t nparts,
                 const struct px_node_info *nodes, size_t nnodes, const struct px_sinfo_opts *o,
                 struct px_diag *d);

struct px_sacct_opts {
  const char *format;         /* -o */
  bool noheader, allocations, parsable, parsable2;
  int64_t now;
};
int px_fmt_sacct(FILE *out, const struct px_job_info *jobs, size_t n,
                 const struct px_sacct_opts *o, struct px_diag *d);
/* The same in pieces, for jobs that come a page at a time: _new checks the
 * format (PX_EINVAL naming a bad field, nothing printed) and prints the
 * header; _print_jobs prints jobs' lines; _free writes what is buffered. */
struct px_sacct_printer;
int px_sacct_printer_new(FILE *out, const struct px_sacct_opts *o, struct px_sacct_printer **p,
                         struct px_diag *d);
void px_sacct_print_jobs(struct px_sacct_printer *p, const struct px_job_info *jobs, size_t n);
void px_sacct_printer_free(struct px_sacct_printer *p);

struct px_sshare_opts {
  bool long_list, noheader, parsable, parsable2;
};
void px_fmt_sshare(FILE *out, const struct px_share_info *rows, size_t n,
                   const struct px_sshare_opts *o);
/* sacctmgr's show tables (fmt_sacctmgr.c) from the slurmdb documents
 * ({"associations"|"accounts"|"users"|"qos": [...]}). format: sacctmgr's
 * format= list (NULL: the default columns). PX_EINVAL names an unknown
 * field in d. */
enum px_sacctmgr_entity { PX_SACCTMGR_ASSOC, PX_SACCTMGR_ACCOUNT, PX_SACCTMGR_USER, PX_SACCTMGR_QOS };
struct px_sacctmgr_opts {
  bool noheader, parsable, parsable2;
  const char *format;
};
struct json_t;
int px_fmt_sacctmgr(FILE *out, enum px_sacctmgr_entity e, const struct json_t *doc,
                    const struct px_sacctmgr_opts *o, struct px_diag *d);

/* sdiag (fmt_sdiag.c): diag is GET /v1/diag's document (a json_t);
 * sort_by: 'c' count, 'i' id, 't' total time, 'T' average time. */
struct json_t;
void px_fmt_sdiag(FILE *out, const struct json_t *diag, char sort_by);
void px_fmt_sprio(FILE *out, const struct px_job_info *jobs, size_t n, bool long_list,
                  bool noheader);

/* scontrol show ... (fmt_scontrol.c) */
void px_fmt_scontrol_job(FILE *out, const struct px_job_info *j, int64_t now);
void px_fmt_scontrol_node(FILE *out, const struct px_node_info *n);
/* nodes: all nodes; those in the partition give its CPU and memory totals. */
void px_fmt_scontrol_partition(FILE *out, const struct px_partition_info *p,
                               const struct px_node_info *nodes, size_t nnodes);

#endif
