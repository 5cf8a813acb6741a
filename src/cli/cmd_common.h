/*
 * cmd_common.h - what every CLI command shares (cmd_common.c): error lines
 * in the right voice (Slurm's "sbatch: error: ..." under Slurm's names,
 * "phalanx VERB: ..." natively), the lazily opened server connection, and
 * fetching lists of view records.
 */
#ifndef PX_CLI_CMD_COMMON_H
#define PX_CLI_CMD_COMMON_H

#include <stdbool.h>

#include "cli/cli.h"
#include "cli/cli_json.h"
#include "cli/client.h"

struct px_cmd {
  const char *prog;           /* "sbatch", or "phalanx queue" */
  bool slurm;                 /* Slurm's voice and formats */
  bool json;                  /* --json: print records as JSON */
  bool connected;
  struct px_client client;
  int64_t now;
};

void px_cmd_init(struct px_cmd *c, const char *prog, bool slurm);
void px_cmd_fini(struct px_cmd *c);
/* "<prog>: error: <msg>" (Slurm) or "<prog>: <msg>" to stderr. */
void px_cmd_error(const struct px_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An option's error (px_cli_apply): "error: MSG", or "fatal: MSG" where Slurm
 * says so. Returns the exit status Slurm gives (1, or 255 for some values). */
int px_cmd_option_error(const struct px_cmd *c, const struct px_cli_extra *x, const char *msg);

/* A request; when the server cannot be reached prints one line and returns
 * non-zero. Any HTTP answer returns 0 with *status and *resp set. */
int px_cmd_call(struct px_cmd *c, const char *method, const char *path, json_t *body,
                long *status, json_t **resp);
/* GET path and decode the array under key. Prints the error itself. */
int px_cmd_get_jobs(struct px_cmd *c, const char *path, struct px_job_info **v, size_t *n);
/* The same in two halves: the 2xx answer's body (malloc'd, NUL-terminated),
 * then its jobs decoded. Each prints its error and returns 1. */
int px_cmd_get_text(struct px_cmd *c, const char *path, char **text, size_t *len);
int px_cmd_jobs_from_text(struct px_cmd *c, const char *path, const char *text, size_t len,
                          struct px_job_info **v, size_t *n);
int px_cmd_get_nodes(struct px_cmd *c, struct px_node_info **v, size_t *n);
int px_cmd_get_partitions(struct px_cmd *c, struct px_partition_info **v, size_t *n);
int px_cmd_get_shares(struct px_cmd *c, struct px_share_info **v, size_t *n);

/* squeue's and scancel's job filters: comma lists, NULL = any. With no
 * states, only active jobs pass, except jobs named with -j. */
struct px_job_filter {
  const char *users, *accounts, *partitions, *states, *jobs, *names;
};
bool px_cmd_job_filter(const struct px_job_info *j, const struct px_job_filter *f);
/* Slurm 22.05's job states as squeue -t lists them when it refuses one. */
#define PX_SLURM_JOB_STATES                                                                   \
  "PENDING,RUNNING,SUSPENDED,COMPLETED,CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,"         \
  "BOOT_FAIL,DEADLINE,OUT_OF_MEMORY,COMPLETING,CONFIGURING,RESIZING,RESV_DEL_HOLD,REQUEUED,"  \
  "REQUEUE_FED,REQUEUE_HOLD,REVOKED,SIGNALING,SPECIAL_EXIT,STAGE_OUT,STOPPED"
/* The first word of a comma list of job states (long or compact, any case,
 * or "all") that is none, else NULL; bad points into buf. */
const char *px_cmd_bad_state(const char *list, char *buf, size_t n);
/* The first id of a comma list that is not a job id (12, 12_3, 12_[1-4];
 * with steps 12.batch, 12.0 too), else NULL; bad points into buf. */
const char *px_cmd_bad_job_id(const char *list, bool steps, char *buf, size_t n);

/* POST /v1/jobs/{id}/{op} (hold, release, requeue) for a comma list of ids. */
int px_cmd_job_op(struct px_cmd *c, const char *op, const char *ids);
/* POST /v1/nodes/{name}/{op} (drain, resume) for a hostlist. */
int px_cmd_node_op(struct px_cmd *c, const char *op, const char *nodes, const char *reason);
/* POST /v1/nodes/{name}/OP with body (borrowed, NULL: none) for each node of the hostlist. */
int px_cmd_node_post(struct px_cmd *c, const char *op, const char *nodes, json_t *body);

/* `srun` outside an allocation (cmd_srun_alloc.c): allocate a job that runs
 * argv's srun in it, follow its output, return its exit status. */
int px_srun_outside(struct px_cmd *c, struct px_jobspec *spec, const struct px_cli_extra *x, int argc,
                    char **argv, int first);

/* A terminal step in a running job (cmd_pty.c): argv on a pseudo-terminal
 * of the job's first node (or node, one of the job's), through the server's
 * relay; with_env sends our environment (srun --pty), else the job's is used
 * (exec). Returns the command's exit status (1 after a message when it
 * could not run). */
int px_pty_step(struct px_cmd *c, const char *job, char **argv, bool with_env, const char *node);

/* Prints a JSON value (pretty, one trailing newline). */
void px_cmd_print_json(const json_t *v);
/* {"<key>": [jobs as JSON]}, printed as px_cmd_print_json does. */
void px_cmd_print_jobs_json(const struct px_job_info *v, size_t n, const char *key);
/* Columns of the terminal on stdout, or 0 when not a terminal. */
int px_cmd_term_width(void);
/* The calling user's name (static storage). */
const char *px_cmd_user(void);

/* Comma list membership ("a,b,c" contains "b"). */
bool px_cmd_list_has(const char *list, const char *item);

/* The per-command entry points (cmd_*.c). */
int px_cmd_sbatch(int argc, char **argv, bool native);
int px_cmd_squeue(int argc, char **argv, bool native);
int px_cmd_scancel(int argc, char **argv, bool native);
int px_cmd_sinfo(int argc, char **argv, bool native);
int px_cmd_sacct(int argc, char **argv, bool native);
int px_cmd_sshare(int argc, char **argv, bool native);
int px_cmd_sprio(int argc, char **argv, bool native);
int px_cmd_sdiag(int argc, char **argv, bool native); /* cmd_sdiag.c */
int px_cmd_sacctmgr(int argc, char **argv, bool native); /* cmd_sacctmgr.c */
/* sacctmgr show event [Start=] [End=] [Nodes=] from argv[first] (the
 * conditions; cmd_sacctmgr_event.c). 0 or 1. */
struct px_sacctmgr_opts;
int px_sacctmgr_show_event(struct px_cmd *c, int argc, char **argv, int first, const struct px_sacctmgr_opts *o);
/* sacctmgr add|create|modify|update|delete|remove from argv[first] (the
 * entity) on (cmd_sacctmgr_edit.c); immediate: -i (no question); quiet: -Q
 * (with -i nothing printed but errors: scripts such as ColdFront's). */
int px_sacctmgr_change(struct px_cmd *c, int argc, char **argv, int first, const char *verb, bool immediate,
                       bool quiet);
int px_cmd_sstat(int argc, char **argv, bool native);    /* cmd_sstat.c */
int px_cmd_scontrol(int argc, char **argv, bool native);
/* scontrol create reservation KEY=VALUE... (cmd_reserve.c). */
int px_scontrol_create_resv(struct px_cmd *c, int argc, char **argv);
int px_scontrol_delete_resv(struct px_cmd *c, int argc, char **argv);
int px_cmd_srun(int argc, char **argv, bool native);
int px_cmd_salloc(int argc, char **argv, bool native);
/* Native-only verbs (cmd_verbs.c). */
int px_verb_show(int argc, char **argv);
int px_verb_why(int argc, char **argv);
int px_verb_jobop(int argc, char **argv);      /* hold, release */
int px_verb_update(int argc, char **argv);
int px_verb_nodeop(int argc, char **argv);     /* drain, resume */
int px_verb_partitions(int argc, char **argv);
int px_verb_usage(int argc, char **argv);
int px_verb_reserve(int argc, char **argv);
int px_verb_token(int argc, char **argv);
int px_verb_ui(int argc, char **argv);         /* cmd_ui.c */
int px_verb_export(int argc, char **argv);     /* cmd_export.c */
/* --since: a span back from now (30d, 12h, 90m) or a time (px_cli_time_parse);
 * 0, or 2 after saying why on stderr. */
int px_cmd_parse_since(const struct px_cmd *c, const char *since, int64_t *t);
int px_verb_service(int argc, char **argv);    /* cmd_service.c */
int px_verb_exec(int argc, char **argv);       /* cmd_exec.c */
int px_verb_attach(int argc, char **argv);     /* cmd_attach.c */
int px_verb_session(int argc, char **argv);    /* cmd_session.c */
int px_cmd_sattach(int argc, char **argv, bool native);

#endif
