/*
 * spec_fields.h - renders one named field of a parsed job spec (or of the
 * command's extras) as text, so table-driven tests can say "time_limit_s=600".
 */
#ifndef PX_TEST_CLI_SPEC_FIELDS_H
#define PX_TEST_CLI_SPEC_FIELDS_H

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static inline void field(const struct px_jobspec *s, const struct px_cli_extra *x, const char *f,
                  char *buf, size_t n) {
#define S(name) if (!strcmp(f, #name)) { snprintf(buf, n, "%s", s->name ? s->name : "(null)"); return; }
#define U(name) if (!strcmp(f, #name)) { snprintf(buf, n, "%lld", (long long)s->name); return; }
  S(name) S(account) S(partition) S(qos) S(gpu_type) S(constraint) S(dependency) S(array)
  S(workdir) S(stdout_path) S(stderr_path) S(stdin_path) S(mail_type) S(mail_user) S(comment)
  S(nodelist) S(exclude) S(reservation) S(open_mode) S(hint) S(distribution)
  U(nodes_min) U(nodes_max) U(ntasks) U(ntasks_per_node) U(cpus_per_task) U(gpus)
  U(gpus_per_node) U(gpus_per_task) U(gpu_share) U(mem_per_node_mib) U(mem_per_cpu_mib) U(mem_per_gpu_mib)
  U(time_limit_s) U(nice) U(exclusive) U(switches) U(switches_wait_s) U(hold) U(begin_s)
  U(requeue) U(no_requeue_given) U(signal_num) U(signal_time_s) U(signal_batch_only)
  U(cpus_per_gpu) U(time_min_s)
#undef S
#undef U
  if (!strcmp(f, "wrap")) snprintf(buf, n, "%s", x->wrap ? x->wrap : "(null)");
  else if (!strcmp(f, "export")) snprintf(buf, n, "%s", x->export_spec ? x->export_spec : "(null)");
  else if (!strcmp(f, "parsable")) snprintf(buf, n, "%d", x->parsable);
  else if (!strcmp(f, "test_only")) snprintf(buf, n, "%d", x->test_only);
  else if (!strcmp(f, "verbose")) snprintf(buf, n, "%d", x->verbose);
  else fail_msg("no field %s", f);
}

#endif
