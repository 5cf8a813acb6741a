/*
 * step_table.h - the job steps the server knows (step_table.c): a table
 * folded from STEP records (core/event.h), read by the step requests
 * (loop/steps.c) and by the job's accounting row (journal/commit.c).
 */
#ifndef PX_SERVER_STEP_TABLE_H
#define PX_SERVER_STEP_TABLE_H

#include <stdbool.h>
#include <stdint.h>

struct px_server;
struct px_sjob;
struct px_event;
struct px_task_report;

struct px_sstep {
  uint64_t job_id;
  uint32_t step_id, restart, nnodes, ntasks;
  uint32_t *node;                /* conf node index per step node */
  uint32_t *tasks;               /* tasks per step node */
  char (*state)[24];             /* per node: "RUNNING" until its report */
  int32_t *exit_code, *term_signal;
  bool cancelled;
  char *name;                    /* the command's argv[0] (sacct JobName) */
  char *out_dir;                 /* where its tasks write (phalanx attach follows it) */
  bool pty;                      /* a terminal step: its output goes to the terminal */
  bool local;                    /* run by srun itself on its node, which reports the end */
  int64_t start_time, end_time;  /* end: the last node's report */
  uint64_t peak_mem_mib;         /* the largest of its nodes' */
  uint64_t cpu_time_ms;          /* the sum of its nodes' */
};

struct px_steps {
  struct px_sstep *v;            /* oldest first */
  size_t len, cap;
};

void px_steps_free(struct px_steps *st);
struct px_sstep *px_steps_find(struct px_steps *st, uint64_t job, uint32_t restart, uint32_t id);
/* The id the job's next step gets: 0, 1, ... per attempt, as Slurm's. */
uint32_t px_steps_next_id(const struct px_steps *st, uint64_t job, uint32_t restart);
/* Per-node arrays for nnodes nodes, each RUNNING. 0 or PX_ENOMEM. */
int px_sstep_alloc(struct px_sstep *t, uint32_t nnodes);
void px_sstep_drop(struct px_sstep *t);

/* STEP records' "step" objects (step_table.c's comment), malloc'd. */
char *px_step_rec_start(const struct px_server *s, const struct px_sstep *t, int64_t now);
char *px_step_rec_end(const struct px_task_report *r, const char *node, int64_t now);
char *px_step_rec_cancel(const struct px_sstep *t);
/* The table follows a STEP event (others: nothing). Always 0: a record the
 * table cannot hold is logged, not the caller's failure. */
int px_steps_fold(struct px_server *s, const struct px_event *ev);

bool px_sstep_running(const struct px_sstep *t);
/* The step's state name with its exit code and signal. */
const char *px_sstep_state(const struct px_sstep *t, bool job_over, int32_t *exit_code, int32_t *sig);
/* The steps of j's current attempt for its accounting row: a JSON array
 * (malloc'd), NULL when it ran none. */
char *px_steps_acct_text(struct px_server *s, const struct px_sjob *j);

#endif
