/*
 * fuzz_eq.h - field-by-field equality of the wire structs, shared by the
 * round-trip fuzz targets (tests/fuzz/fuzz_*_json.c, fuzz_agent_msg.c). A
 * round trip must give back every field, so each comparison names them all;
 * a field added to a struct without being added here is a visible gap.
 * FUZZ_CHECK aborts with the failing expression so the crash report names it.
 */
#ifndef PX_FUZZ_EQ_H
#define PX_FUZZ_EQ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jobspec.h"

#define FUZZ_CHECK(cond)                                                      \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                \
    }                                                                         \
  } while (0)

/* NUL-terminated copy of the fuzzer's bytes. */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return NULL;
  memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

static inline bool fuzz_str_eq(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* NULL-terminated string vectors: both absent, or the same entries. */
static inline bool fuzz_strv_eq(char *const *a, char *const *b) {
  if (!a || !b) return !a && !b;
  size_t i = 0;
  for (; a[i] && b[i]; i++)
    if (strcmp(a[i], b[i])) return false;
  return !a[i] && !b[i];
}

static inline bool fuzz_u32v_eq(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb) {
  return na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}

static inline bool fuzz_spec_eq(const struct px_jobspec *a, const struct px_jobspec *b) {
#define SE(f) fuzz_str_eq(a->f, b->f)
#define NE(f) (a->f == b->f)
  return SE(name) && SE(user) && NE(uid) && NE(gid) && SE(account) && SE(partition) && SE(qos) &&
         NE(nodes_min) && NE(nodes_max) && NE(ntasks) && NE(ntasks_per_node) &&
         NE(cpus_per_task) && NE(gpus) && NE(gpus_per_node) && NE(gpus_per_task) &&
         SE(gpu_type) && NE(mem_per_node_mib) && NE(mem_per_cpu_mib) && NE(mem_per_gpu_mib) &&
         NE(time_limit_s) && NE(nice) && SE(constraint) && NE(exclusive) && NE(switches) &&
         NE(switches_wait_s) && NE(hold) && NE(begin_s) && SE(dependency) && SE(array) &&
         NE(requeue) && NE(no_requeue_given) && NE(signal_num) && NE(signal_time_s) &&
         NE(signal_batch_only) && SE(script) && fuzz_strv_eq(a->argv, b->argv) && SE(workdir) &&
         SE(submit_dir) && SE(stdout_path) && SE(stderr_path) && SE(stdin_path) &&
         fuzz_strv_eq(a->env, b->env) && SE(comment) && SE(mail_type) && SE(mail_user);
#undef SE
#undef NE
}

/* A spec that px_jobspec_init left and nobody filled. */
static inline bool fuzz_spec_is_empty(const struct px_jobspec *s) {
  struct px_jobspec e;
  px_jobspec_init(&e);
  return fuzz_spec_eq(s, &e);
}

#endif
