/*
 * coretest.h - helpers shared by the core's tests: small clusters, one-line
 * submits, a cycle that returns its actions, and the invariant checker the
 * property tests run after every step.
 */
#ifndef PX_CORETEST_H
#define PX_CORETEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/core_int.h"
#include "core/testconf.h"

#define TC_MEM (1024u * 1024u) /* 1 TiB in MiB */

/* nnodes x gpn GPUs, 64 CPUs, 1 TiB, leaves of npl nodes (0: flat), one
 * partition p0, account "acct" under root with users alice and bob. */
static inline struct px_conf *tc_conf(uint32_t nnodes, uint32_t gpn, uint32_t npl, uint32_t lps) {
  struct px_testconf_spec s = {.nnodes = nnodes, .gpus_per_node = gpn, .cpus_per_node = 64,
                               .mem_mib = TC_MEM, .nodes_per_leaf = npl, .leaves_per_spine = lps};
  struct px_conf *c = px_testconf_new(&s);
  uint32_t a = px_testconf_account(c, "acct", 0, 1);
  px_testconf_user(c, "alice", a, 1);
  px_testconf_user(c, "bob", a, 1);
  return c;
}

static inline struct px_core *tc_core(const struct px_conf *conf) {
  int err = 0;
  struct px_core *c = px_core_new(conf, 1, &err);
  if (!c) fprintf(stderr, "px_core_new: %s\n", px_strerror(err));
  return c;
}

/* A spec for `user` asking nodes x gpn GPUs (nodes 0: a single-node job). */
static inline struct px_jobspec tc_spec(const char *user, uint32_t nodes, uint32_t gpn) {
  struct px_jobspec s;
  px_jobspec_init(&s);
  s.user = (char *)user;
  s.nodes_min = nodes;
  s.gpus_per_node = gpn;
  return s;
}

/* Submits and fails loudly (the spec's strings are borrowed, not freed). */
static inline int tc_submit(struct px_core *c, uint64_t id, const struct px_jobspec *s, int64_t now) {
  struct px_diag d;
  enum px_reason r;
  int rc = pxc_submit(c, id, s, now, &r, &d);
  if (rc) fprintf(stderr, "submit %llu: %s (%s, %s)\n", (unsigned long long)id, d.msg,
                  px_errname(rc), px_reason_name(r));
  return rc;
}

/* The START action for job id in out, or NULL. */
static inline const struct px_action *tc_started(const struct px_actions *out, uint64_t id) {
  for (size_t i = 0; i < out->len; i++)
    if (out->v[i].kind == PX_ACT_START && out->v[i].job_id == id) return &out->v[i];
  return NULL;
}

static inline enum px_reason tc_reason(struct px_core *c, uint64_t id) {
  struct px_job_view v;
  if (px_core_job_get(c, id, &v)) return PX_REASON_COUNT;
  return v.reason;
}

/*
 * Invariants over the whole core: per node, running jobs' GPU sets are
 * disjoint and within the node, CPU sets disjoint with the right counts, CPU
 * and memory sums within capacity and equal to the node's allocated figures;
 * exclusive nodes carry one job; tenancy holds one account per node.
 * Returns a message or NULL.
 */
static inline const char *tc_invariants(struct px_core *c) {
  static char msg[320];
  uint32_t nn = px_core_nnodes(c);
  px_bits64 *gpus = calloc(nn, sizeof *gpus);
  uint64_t *cpus = calloc(nn, sizeof *cpus), *mem = calloc(nn, sizeof *mem);
  uint32_t *tenant = malloc(nn * sizeof *tenant);
  uint64_t *cpuw = calloc((size_t)nn * 4, sizeof *cpuw);
  px_bits64 *shared = calloc(nn, sizeof *shared); /* GPUs carrying fractional jobs */
  uint32_t *share = calloc((size_t)nn * 64, sizeof *share); /* hundredths per GPU */
  const char *bad = NULL;
  for (uint32_t i = 0; i < nn; i++) tenant[i] = PX_NONE;
  size_t cur = 0;
  struct px_job_view v;
  while (!bad && px_core_job_next(c, &cur, &v)) {
    if (v.state != PX_JOB_RUNNING || v.array_tasks_pending || (v.array_job_id == v.job_id && !v.nalloc)) continue;
    if (!v.nalloc) { bad = "running job without a placement"; break; }
    for (uint32_t k = 0; k < v.nalloc && !bad; k++) {
      const struct px_alloc *a = &v.alloc[k];
      struct px_node_view nv;
      px_core_node_get(c, a->node, &nv);
      if (a->gpu_share) {
        uint32_t g = (uint32_t)__builtin_ctzll(a->gpus | 1ULL << 63);
        if (__builtin_popcountll(a->gpus) != 1) bad = "a fraction on other than one GPU";
        else if ((gpus[a->node] & ~shared[a->node]) & a->gpus) bad = "a fraction on a whole job's GPU";
        else if ((share[a->node * 64 + g] += a->gpu_share) > 100) bad = "a GPU shared over 100%";
        shared[a->node] |= a->gpus;
      } else if (gpus[a->node] & a->gpus) {
        bad = "GPU given twice";
      }
      if (a->gpus & ~px_bits64_range(0, (int)nv.gpus)) bad = "GPU outside node";
      gpus[a->node] |= a->gpus;
      cpus[a->node] += a->ncpu;
      mem[a->node] += a->mem_mib;
      uint32_t cnt = 0;
      for (uint32_t w = 0; w < a->ncpu_words; w++) {
        if (cpuw[a->node * 4 + w] & v.cpu_words[a->cpu_word + w]) bad = "CPU given twice";
        cpuw[a->node * 4 + w] |= v.cpu_words[a->cpu_word + w];
        cnt += (uint32_t)__builtin_popcountll(v.cpu_words[a->cpu_word + w]);
      }
      if (cnt != a->ncpu) bad = "CPU ids do not match the CPU count";
      if (c->parts[v.partition].exclusive_account) {
        if (tenant[a->node] != PX_NONE && tenant[a->node] != v.account) bad = "two tenants on a node";
        tenant[a->node] = v.account;
      }
    }
  }
  for (uint32_t i = 0; !bad && i < nn; i++) {
    struct px_node_view nv;
    px_core_node_get(c, i, &nv);
    if (cpus[i] > nv.cpus || mem[i] > nv.mem_mib) bad = "CPU or memory over-committed";
    else if (cpus[i] != nv.cpus_alloc || mem[i] != nv.mem_alloc_mib) bad = "node figures disagree with jobs";
    else if ((gpus[i] | nv.gpus_free | nv.gpus_bad) != px_bits64_range(0, (int)nv.gpus) ||
             (gpus[i] & nv.gpus_free) || (nv.gpus_bad & nv.gpus_free))
      bad = "node free GPUs disagree with jobs"; /* a GPU out of service is neither free nor lost */
    if (bad) snprintf(msg, sizeof msg, "node %u: %.64s", i, bad), bad = msg;
  }
  for (uint32_t i = 0; !bad && i < nn; i++) {
    struct px_node_view nv;
    px_core_node_get(c, i, &nv);
    if (nv.gpus_shared != shared[i]) bad = "node shared GPUs disagree with jobs";
    for (uint32_t g = 0; !bad && g < 64; g++)
      if ((shared[i] >> g & 1) && c->nodes[i].share_used[g] != share[i * 64 + g]) bad = "GPU share count disagrees with jobs";
  }
  free(gpus), free(cpus), free(mem), free(tenant), free(cpuw), free(shared), free(share);
  return bad;
}

/* An allocator (struct px_core_allocator's realloc, ud a struct tc_failer)
 * that fails the countdown-th call (counting from 1; 0: never), then works. */
struct tc_failer {
  long countdown, calls;
};
static inline void *tc_fail_realloc(void *ud, void *p, size_t old_n, size_t new_n) {
  struct tc_failer *f = ud;
  (void)old_n;
  if (new_n == 0) {
    free(p);
    return NULL;
  }
  f->calls++;
  if (--f->countdown == 0) return NULL;
  return realloc(p, new_n);
}

/* A test's cluster: conf, core and action buffer (include px_test.h first). */
struct tc_fx {
  struct px_conf *conf;
  struct px_core *core;
  struct px_actions out;
};

static inline void tc_open(struct tc_fx *f) {
  f->core = tc_core(f->conf);
  assert_non_null(f->core);
  px_actions_init(&f->out);
}

static inline void tc_close(struct tc_fx *f) {
  assert_null(tc_invariants(f->core));
  px_actions_fini(&f->out);
  px_core_free(f->core);
  px_conf_free(f->conf);
}

static inline void tc_cycle(struct tc_fx *f, int64_t now) {
  assert_int_equal(px_core_cycle(f->core, now, &f->out), 0);
  assert_null(tc_invariants(f->core));
}

#endif
