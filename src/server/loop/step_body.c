/*
 * step_body.c - the job steps' request bodies (step_body.h): read with
 * proto/json_rd.h, so every error names its field, then checked against
 * what a step may ask (its job's nodes, one node and one task for a
 * terminal, one node for a step srun runs itself).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/container_spec.h"
#include "proto/json_rd.h"
#include "server/loop/step_body.h"

void px_step_body_fini(struct px_step_body *b) {
  free(b->pty_session);
  free(b->pty_secret);
  free(b->node);
  px_strv_free(b->argv);
  px_strv_free(b->env);
  free(b->cwd);
  free(b->out_dir);
  free(b->distribution);
  px_jobspec_fini(&b->ctr);
}

/* "pty":true: one task on the job's first node, in a relay session. */
static void pty_decode(struct px_rd *rd, struct px_step_body *b) {
  px_rd_bool(rd, "pty", false, &b->pty);
  px_rd_bool(rd, "raw", false, &b->raw);
  px_rd_u32(rd, "rows", false, &b->rows);
  px_rd_u32(rd, "cols", false, &b->cols);
  px_rd_str(rd, "pty_session", false, &b->pty_session);
  px_rd_str(rd, "pty_secret", false, &b->pty_secret);
  if (rd->err || !b->pty) return;
  if (b->local) px_rd_fail(rd, "local", "a terminal step is the agents' to run");
  else if (b->rows > 65535 || b->cols > 65535) px_rd_fail(rd, b->rows > 65535 ? "rows" : "cols", "more than 65535");
  else if (b->nodes > 1) px_rd_fail(rd, "nodes", "a terminal runs on one node, not %u", b->nodes);
  else if (b->ntasks > 1 || b->per_node > 1) px_rd_fail(rd, "ntasks", "a terminal runs one task");
  else if (!b->pty_session || !b->pty_secret) px_rd_fail(rd, "pty", "no relay session (the server opens it)");
  b->nodes = b->ntasks = 1;
  b->per_node = 0;
}

/* "local":true: srun's own tasks on its one node, nothing for the agents. */
static void local_check(struct px_rd *rd, struct px_step_body *b) {
  if (rd->err || !b->local) return;
  if (b->nodes > 1) px_rd_fail(rd, "nodes", "a step srun runs itself is on its own node, not %u nodes", b->nodes);
  else if (b->ctr.container_image) px_rd_fail(rd, "container_image", "a container step is the agents' to run");
  b->nodes = 1;
}

static void container_check(struct px_rd *rd, struct px_step_body *b) {
  struct px_diag why;
  if (rd->err || !px_container_spec_check(&b->ctr, "", &why)) return;
  size_t f = strcspn(why.msg, ":"); /* "container_x: why": the field, then why */
  char field[32];
  snprintf(field, sizeof field, "%.*s", (int)(f < sizeof field ? f : sizeof field - 1), why.msg);
  px_rd_fail(rd, field, "%s", why.msg[f] ? why.msg + f + 2 : why.msg);
}

static void distribution_check(struct px_rd *rd, const struct px_step_body *b) {
  if (rd->err || !b->distribution) return; /* srun -m: Slurm's grammar, the job spec's check */
  struct px_jobspec probe;
  px_jobspec_init(&probe);
  probe.distribution = b->distribution;
  probe.nodelist = "-"; /* arbitrary: the step's nodes are the job's */
  struct px_diag why;
  if (px_jobspec_check_launch(&probe, &why)) px_rd_fail(rd, "distribution", "%s", why.msg);
}

static void limits_check(struct px_rd *rd, const struct px_step_body *b, uint32_t job_nodes) {
  if (!rd->err && b->gpus_per_task > 64) px_rd_fail(rd, "gpus_per_task", "%u is more than 64", b->gpus_per_task);
  if (!rd->err && !b->nargv) px_rd_fail(rd, "argv", "must not be empty");
  if (!rd->err && b->out_dir && b->out_dir[0] != '/') px_rd_fail(rd, "out_dir", "must be an absolute path");
  if (!rd->err && b->cwd && b->cwd[0] != '/') px_rd_fail(rd, "cwd", "must be an absolute path");
  for (uint32_t i = 0; !rd->err && i < b->nenv; i++)
    if (!strchr(b->env[i], '=') || b->env[i][0] == '=') px_rd_fail(rd, "env", "entry %u is not K=V", i);
  if (!rd->err && b->nodes > job_nodes)
    px_rd_fail(rd, "nodes", "%u is more than the job's %u nodes", b->nodes, job_nodes);
  if (!rd->err && b->ntasks && b->per_node) px_rd_fail(rd, "ntasks_per_node", "give ntasks or ntasks_per_node, not both");
  if (!rd->err && (b->ntasks > 65536 || b->per_node > 1024))
    px_rd_fail(rd, b->ntasks ? "ntasks" : "ntasks_per_node", "too many tasks");
}

int px_step_body_decode(const char *text, struct px_step_body *b, uint32_t job_nodes, struct px_diag *d) {
  json_t *j;
  int rc = px_rd_parse(text, &j, d);
  if (rc) return rc;
  struct px_rd rd;
  px_rd_init(&rd, j, "step", d);
  px_rd_bool(&rd, "local", false, &b->local);
  px_rd_strv(&rd, "argv", true, &b->argv, &b->nargv);
  px_rd_strv(&rd, "env", false, &b->env, &b->nenv);
  px_rd_str(&rd, "cwd", false, &b->cwd);
  px_rd_str(&rd, "out_dir", !b->local, &b->out_dir); /* srun's own tasks write to srun */
  px_rd_u32(&rd, "nodes", false, &b->nodes);
  px_rd_u32(&rd, "ntasks", false, &b->ntasks);
  px_rd_u32(&rd, "ntasks_per_node", false, &b->per_node);
  px_rd_u32(&rd, "gpus_per_task", false, &b->gpus_per_task);
  px_rd_str(&rd, "distribution", false, &b->distribution);
  px_rd_str(&rd, "container_image", false, &b->ctr.container_image);
  px_rd_str(&rd, "container_mounts", false, &b->ctr.container_mounts);
  px_rd_str(&rd, "container_workdir", false, &b->ctr.container_workdir);
  px_rd_str(&rd, "container_env", false, &b->ctr.container_env);
  px_rd_str(&rd, "node", false, &b->node);
  pty_decode(&rd, b);
  if (!rd.err && b->node && !b->pty && !b->local)
    px_rd_fail(&rd, "node", "only a terminal step (\"pty\":true) or a local one names its node");
  local_check(&rd, b);
  container_check(&rd, b);
  distribution_check(&rd, b);
  limits_check(&rd, b, job_nodes);
  rc = px_rd_done(&rd);
  json_decref(j);
  return rc;
}

int px_step_end_decode(const char *text, struct px_step_end *e, struct px_diag *d) {
  json_t *j;
  int rc = px_rd_parse(text, &j, d);
  if (rc) return rc;
  struct px_rd rd;
  px_rd_init(&rd, j, "end", d);
  *e = (struct px_step_end){0};
  px_rd_i32(&rd, "exit_code", true, &e->exit_code);
  px_rd_i32(&rd, "term_signal", false, &e->term_signal);
  px_rd_u64(&rd, "peak_mem_mib", false, &e->peak_mem_mib);
  px_rd_u64(&rd, "cpu_time_ms", false, &e->cpu_time_ms);
  if (!rd.err && (e->exit_code < 0 || e->exit_code > 255)) px_rd_fail(&rd, "exit_code", "%d is not 0-255", e->exit_code);
  if (!rd.err && (e->term_signal < 0 || e->term_signal > 64))
    px_rd_fail(&rd, "term_signal", "%d is not a signal number", e->term_signal);
  rc = px_rd_done(&rd);
  json_decref(j);
  return rc;
}
