/*
 * policytest.h - helpers for the issue-4 policy tests (backfill, preemption,
 * quotas, reservations): a fixture around coretest.h's small clusters, jobs
 * with a time limit submitted at a given time, and action lookups.
 */
#ifndef PX_POLICYTEST_H
#define PX_POLICYTEST_H

#include "core/coretest.h"
#include "core/policy.h"

struct pf {
  struct px_conf *conf;
  struct px_core *core;
  struct px_actions out;
};

static inline void pf_open(struct pf *f) {
  f->core = tc_core(f->conf);
  assert_non_null(f->core);
  px_actions_init(&f->out);
}

static inline void pf_close(struct pf *f) {
  assert_null(tc_invariants(f->core));
  px_actions_fini(&f->out);
  px_core_free(f->core);
  px_conf_free(f->conf);
}

static inline void pf_cycle(struct pf *f, int64_t now) {
  assert_int_equal(px_core_cycle(f->core, now, &f->out), 0);
  assert_null(tc_invariants(f->core));
}

/* Submits nodes x gpn GPUs (nodes 0: one node) for time_s at now. */
static inline void pf_sub(struct pf *f, uint64_t id, const char *user, uint32_t nodes, uint32_t gpn,
                          int64_t time_s, int64_t now) {
  struct px_jobspec s = tc_spec(user, nodes, gpn);
  s.time_limit_s = time_s;
  assert_int_equal(tc_submit(f->core, id, &s, now), 0);
}

static inline void pf_sub_spec(struct pf *f, uint64_t id, struct px_jobspec *s, int64_t now) {
  assert_int_equal(tc_submit(f->core, id, s, now), 0);
}

static inline const struct px_action *pf_action(const struct px_actions *out, enum px_action_kind k,
                                                uint64_t id) {
  for (size_t i = 0; i < out->len; i++)
    if (out->v[i].kind == k && out->v[i].job_id == id) return &out->v[i];
  return NULL;
}

static inline size_t pf_count(const struct px_actions *out, enum px_action_kind k) {
  size_t n = 0;
  for (size_t i = 0; i < out->len; i++) n += out->v[i].kind == k;
  return n;
}

/* The first node of a START action. */
static inline uint32_t pf_node(const struct px_actions *out, uint64_t id) {
  const struct px_action *a = tc_started(out, id);
  return a ? out->allocs[a->alloc_first].node : PX_NONE;
}

static inline struct px_job_view pf_view(struct px_core *c, uint64_t id) {
  struct px_job_view v;
  memset(&v, 0, sizeof v);
  assert_int_equal(px_core_job_get(c, id, &v), 0);
  return v;
}

static inline void pf_end(struct pf *f, uint64_t id, int64_t now) {
  assert_int_equal(pxc_job_ended(f->core, id, PX_JOB_COMPLETED, 0, now, NULL), 0);
}

/* The reclaim scenario's start: user's 8-GPU jobs 1 (at 0) and 2 (at 100)
 * fill two nodes of 8, the second borrowing its cohort's idle quota. */
static inline void pf_borrow_two_nodes(struct pf *f, const char *user) {
  pf_sub(f, 1, user, 1, 8, 86400, 0);
  pf_cycle(f, 0);
  pf_sub(f, 2, user, 1, 8, 86400, 100);
  pf_cycle(f, 100);
  assert_non_null(tc_started(&f->out, 2));
}

#endif
