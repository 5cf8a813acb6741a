/*
 * fuzz_agent_msg.c - libFuzzer target for the server <-> agent message
 * decoders (proto/agent_msg.h): node report, launch order, task report,
 * signal order, job step order, report batch and the long-poll work answer,
 * with a service replica's launch ("service") and report (ports, health).
 * The first input byte picks
 * the decoder, the rest is the JSON text. Properties:
 *   - a failed decode leaves the output struct untouched (the header
 *     promises nothing is half-filled: we pre-fill it with a pattern);
 *   - a successful one re-encodes, decodes to an equal message (every field
 *     compared) and encodes to the same text again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_eq.h"
#include "proto/agent_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SE(f) fuzz_str_eq(a->f, b->f)
#define NE(f) (a->f == b->f)
#define CE(f) (strncmp(a->f, b->f, sizeof a->f) == 0)
#define PATTERN 0x5a

static bool untouched(const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i] != PATTERN) return false;
  return true;
}

static bool gpu_eq(const struct px_gpu_info *a, const struct px_gpu_info *b) {
  return NE(index) && CE(uuid) && CE(type) && NE(mem_mib) && NE(group);
}

static bool known_eq(const struct px_known_job *a, const struct px_known_job *b) {
  return NE(job_id) && CE(state) && NE(exit_code) && NE(term_signal);
}

static bool report_eq(const struct px_node_report *a, const struct px_node_report *b) {
  if (!(CE(node) && CE(addr) && NE(cpus) && NE(mem_mib) && CE(version) && NE(ngpus) && NE(njobs)))
    return false;
  for (uint32_t i = 0; i < a->ngpus; i++)
    if (!gpu_eq(&a->gpus[i], &b->gpus[i])) return false;
  for (uint32_t i = 0; i < a->njobs; i++)
    if (!known_eq(&a->jobs[i], &b->jobs[i])) return false;
  return true;
}

/* Per-node arrays: absent on both sides, or nnodes equal entries. */
static bool pernode_eq(const uint32_t *a, const uint32_t *b, uint32_t n) {
  if (!a || !b) return !a && !b;
  return fuzz_u32v_eq(a, n, b, n);
}

static bool health_eq(const struct px_health_check *a, const struct px_health_check *b) {
  return NE(type) && CE(port) && CE(path) && fuzz_strv_eq(a->command, b->command) &&
         NE(interval_s) && NE(timeout_s) && NE(failure_threshold) && NE(startup_grace_s);
}

static bool service_eq(const struct px_launch_service *a, const struct px_launch_service *b) {
  if (!a || !b) return !a && !b;
  return CE(name) && NE(replica) && NE(generation) && NE(nports) &&
         fuzz_strv_eq(a->ports, b->ports) &&
         health_eq(&a->health, &b->health);
}

static bool launch_eq(const struct px_launch *a, const struct px_launch *b) {
  return service_eq(a->service, b->service) && NE(job_id) && NE(array_job_id) && NE(array_task_id) && NE(restart_count) && SE(name) &&
         SE(user) && SE(account) && SE(partition) && SE(qos) && NE(uid) && NE(gid) &&
         SE(workdir) && SE(submit_dir) && SE(script) && fuzz_strv_eq(a->argv, b->argv) &&
         SE(stdout_path) && SE(stderr_path) && SE(stdin_path) && fuzz_strv_eq(a->env, b->env) &&
         NE(time_limit_s) && NE(start_time) && NE(signal_num) && NE(signal_time_s) &&
         fuzz_strv_eq(a->nodes, b->nodes) && fuzz_strv_eq(a->node_addrs, b->node_addrs) &&
         NE(nnodes) && NE(node_rank) && NE(ntasks) &&
         pernode_eq(a->tasks_per_node, b->tasks_per_node, a->nnodes) && NE(cpus_per_task) &&
         fuzz_u32v_eq(a->gpus, a->ngpus, b->gpus, b->ngpus) &&
         pernode_eq(a->gpus_per_node, b->gpus_per_node, a->nnodes) &&
         fuzz_u32v_eq(a->cpu_ids, a->ncpu_ids, b->cpu_ids, b->ncpu_ids) && NE(ncpus) &&
         NE(mem_mib) && NE(master_port);
}

static bool task_svc_eq(const struct px_task_report *a, const struct px_task_report *b) {
  if (!(NE(has_service) && NE(nports) && CE(health) && CE(health_reason))) return false;
  for (uint32_t i = 0; i < a->nports; i++)
    if (!(NE(ports[i]) && CE(port_names[i]))) return false;
  return true;
}

static bool task_eq(const struct px_task_report *a, const struct px_task_report *b) {
  return task_svc_eq(a, b) && CE(node) && NE(job_id) && CE(state) && NE(exit_code) && NE(term_signal) &&
         NE(restart_count) && NE(requeue_requested) && NE(peak_mem_mib) && NE(cpu_time_ms) &&
         NE(start_time) && NE(end_time) && NE(is_step) && (!a->is_step || NE(step_id));
}

static bool signal_eq(const struct px_signal_order *a, const struct px_signal_order *b) {
  return NE(job_id) && NE(signal) && NE(grace_s) && CE(reason) && NE(is_step) &&
         (!a->is_step || NE(step_id));
}

static bool step_eq(const struct px_step_order *a, const struct px_step_order *b) {
  return NE(job_id) && NE(step_id) && NE(restart_count) && fuzz_strv_eq(a->argv, b->argv) &&
         fuzz_strv_eq(a->env, b->env) && SE(cwd) && SE(out_dir) && fuzz_strv_eq(a->nodes, b->nodes) &&
         NE(nnodes) && pernode_eq(a->tasks_per_node, b->tasks_per_node, a->nnodes) && NE(ntasks);
}

static bool work_eq(const struct px_agent_work *a, const struct px_agent_work *b) {
  if (!(NE(seq) && NE(nlaunch) && NE(nsignal) && NE(nstep))) return false;
  for (uint32_t i = 0; i < a->nstep; i++)
    if (!step_eq(&a->step[i], &b->step[i])) return false;
  for (uint32_t i = 0; i < a->nlaunch; i++)
    if (!launch_eq(&a->launch[i], &b->launch[i])) return false;
  for (uint32_t i = 0; i < a->nsignal; i++)
    if (!signal_eq(&a->signal[i], &b->signal[i])) return false;
  return true;
}

static void nofini(void *p) { (void)p; }

/* One codec: T the struct, enc/dec/fini its functions, eq the comparison. */
#define ROUND_TRIP(fn, T, enc, dec, fini, eq)                                   \
  static void fn(const char *text) {                                           \
    T a, b;                                                                    \
    struct px_diag d = {0};                                                    \
    memset(&a, PATTERN, sizeof a);                                             \
    if (dec(text, &a, &d)) {                                                   \
      FUZZ_CHECK(untouched(&a, sizeof a));                                     \
      return;                                                                  \
    }                                                                          \
    char *once = enc(&a);                                                      \
    FUZZ_CHECK(once != NULL);                                                  \
    int rc = dec(once, &b, &d);                                                \
    if (rc) fprintf(stderr, "re-decode of %s failed: %s\n", once, d.msg);      \
    FUZZ_CHECK(rc == 0 && eq(&a, &b));                                         \
    char *twice = enc(&b);                                                     \
    FUZZ_CHECK(twice != NULL && strcmp(once, twice) == 0);                     \
    free(once);                                                                \
    free(twice);                                                               \
    fini(&a);                                                                  \
    fini(&b);                                                                  \
  }
ROUND_TRIP(fuzz_report, struct px_node_report, px_node_report_encode, px_node_report_decode,
           px_node_report_fini, report_eq)
ROUND_TRIP(fuzz_launch, struct px_launch, px_launch_encode, px_launch_decode, px_launch_fini,
           launch_eq)
ROUND_TRIP(fuzz_task, struct px_task_report, px_task_report_encode, px_task_report_decode, nofini,
           task_eq)
ROUND_TRIP(fuzz_signal, struct px_signal_order, px_signal_order_encode, px_signal_order_decode,
           nofini, signal_eq)
ROUND_TRIP(fuzz_step, struct px_step_order, px_step_order_encode, px_step_order_decode,
           px_step_order_fini, step_eq)
ROUND_TRIP(fuzz_work, struct px_agent_work, px_agent_work_encode, px_agent_work_decode,
           px_agent_work_fini, work_eq)

/* The batch form: decoded reports, encoded one by one and as a batch again,
 * decode to the same reports. */
static void fuzz_batch(const char *text) {
  struct px_task_report *a = NULL, *b = NULL;
  uint32_t na = 0, nb = 0;
  struct px_diag d = {0};
  if (px_task_reports_decode(text, &a, &na, &d)) return;
  char **each = calloc(na ? na : 1, sizeof *each);
  FUZZ_CHECK(each != NULL);
  for (uint32_t i = 0; i < na; i++) FUZZ_CHECK((each[i] = px_task_report_encode(&a[i])) != NULL);
  char *batch = px_task_reports_encode(each, na);
  FUZZ_CHECK(batch != NULL && px_task_reports_decode(batch, &b, &nb, &d) == 0 && nb == na);
  for (uint32_t i = 0; i < na; i++) FUZZ_CHECK(task_eq(&a[i], &b[i]));
  for (uint32_t i = 0; i < na; i++) free(each[i]);
  free(each);
  free(batch);
  free(a);
  free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  char *text = fuzz_text(data + 1, size - 1);
  if (!text) return 0;
  switch (data[0] % 7) {
    case 0: fuzz_report(text); break;
    case 1: fuzz_launch(text); break;
    case 2: fuzz_task(text); break;
    case 3: fuzz_signal(text); break;
    case 4: fuzz_step(text); break;
    case 5: fuzz_batch(text); break;
    default: fuzz_work(text); break;
  }
  free(text);
  return 0;
}
