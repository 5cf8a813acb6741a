/*
 * Property tests: seeded random event sequences (submits of every shape,
 * cancels, holds, ends, requeues, node failures, cycles) on a small cluster
 * with a switch tree, NVLink groups, two GPU types, features, an
 * exclusive_account partition, limits and fractions of shared GPUs (p0
 * offers GPU shares). After every step the invariants
 * hold: no GPU/CPU/memory over-committed, every started job has its whole
 * shape placed on nodes of its partition that were up and match its
 * constraint, tenancy and group limits respected. The same seed gives the
 * same action bytes. Then an allocation-failure loop: every event and cycle
 * either succeeds or returns PX_ENOMEM leaving a consistent core.
 */
#include "px_test.h"

#include "core/coretest.h"

struct rng { uint64_t s; };
static uint32_t rnd(struct rng *r, uint32_t n) {
  r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)((r->s >> 33) % n);
}

static struct px_conf *prop_conf(void) {
  struct px_testconf_spec s = {.nnodes = 24, .gpus_per_node = 8, .cpus_per_node = 32,
                               .mem_mib = 256 * 1024, .gpu_groups = 2, .gpu_type = "a100",
                               .nodes_per_leaf = 4, .leaves_per_spine = 3};
  struct px_conf *c = px_testconf_new(&s);
  for (uint32_t n = 16; n < 24; n++) c->nodes[n].gpu_type = "h100";
  for (uint32_t n = 0; n < 24; n += 3) px_testconf_features(c, n, n % 2 ? "ib" : "ib,nvme");
  c->partitions[0].nnodes = 20;                       /* p0: n0-19 (both types) */
  c->partitions[0].gpu_shares = true;
  uint32_t t = px_testconf_partition(c, "tenant", 12, 12); /* n12-23 */
  c->partitions[t].exclusive_account = true;
  c->partitions[t].max_time_s = 7200;
  uint32_t a = px_testconf_account(c, "teamA", 0, 3), b = px_testconf_account(c, "teamB", 0, 1);
  c->accounts[a].grp_gpus = 64;
  c->accounts[b].max_jobs = 6;
  const char *users[] = {"u0", "u1", "u2", "u3"};
  for (int i = 0; i < 4; i++) px_testconf_user(c, users[i], i < 2 ? a : b, 1);
  uint32_t q = px_testconf_qos(c, "capped", 10);
  c->qos[q].max_gpus_per_user = 24;
  c->sched.weight_jobsize = 500;
  c->sched.weight_qos = 1000;
  c->sched.billing_weight_gpu = 1;
  c->sched.decay_half_life_s = 3600;
  return c;
}

static void random_spec(struct rng *r, struct px_jobspec *s, uint64_t next_id) {
  static const char *users[] = {"u0", "u1", "u2", "u3"};
  px_jobspec_init(s);
  s->user = (char *)users[rnd(r, 4)];
  switch (rnd(r, 7)) {
  case 0: s->gpus_per_node = 1 + rnd(r, 8); break;                        /* one node */
  case 1: s->nodes_min = 2 + rnd(r, 4); s->gpus_per_node = 8; break;       /* gang */
  case 2: s->ntasks = 1 + rnd(r, 12); s->gpus_per_task = 1; break;         /* flexible */
  case 3: s->gpus = 2 + rnd(r, 12); break;                                 /* --gpus */
  case 4: s->ntasks = 1 + rnd(r, 4); s->cpus_per_task = 1 + rnd(r, 8); break; /* CPU only */
  case 5: s->gpu_share = 1 + rnd(r, 99); break;                           /* a fraction */
  default: s->nodes_min = 1 + rnd(r, 2); s->gpus_per_node = 2 * (1 + rnd(r, 2)); break;
  }
  if (rnd(r, 5) == 0) s->partition = (char *)"tenant";
  if (rnd(r, 6) == 0) s->gpu_type = (char *)(rnd(r, 2) ? "h100" : "a100");
  if (rnd(r, 6) == 0) s->constraint = (char *)(rnd(r, 2) ? "nvme" : "ib|nvme");
  if (rnd(r, 8) == 0) s->exclusive = true;
  if (rnd(r, 6) == 0) s->qos = (char *)"capped";
  if (rnd(r, 10) == 0) s->mem_per_node_mib = 1024 * (1 + rnd(r, 64));
  if (rnd(r, 12) == 0) s->hold = true;
  if (rnd(r, 10) == 0) s->switches = 1, s->switches_wait_s = rnd(r, 200);
  if (rnd(r, 15) == 0) s->array = (char *)(rnd(r, 2) ? "0-5%2" : "1,3,7-9");
  if (rnd(r, 10) == 0 && next_id > 5) {
    static char dep[48];
    snprintf(dep, sizeof dep, "%s:%llu", rnd(r, 2) ? "afterok" : "afterany",
             (unsigned long long)(next_id - 1 - rnd(r, 5)));
    s->dependency = dep;
  }
  if (rnd(r, 10) == 0) s->name = (char *)"same", s->dependency = (char *)"singleton";
}

/* Checks START actions against the rules the invariant checker cannot see. */
static const char *check_starts(struct px_core *c, const struct px_conf *conf, const struct px_actions *out) {
  for (size_t i = 0; i < out->len; i++) {
    const struct px_action *a = &out->v[i];
    if (a->kind != PX_ACT_START) continue;
    struct px_job_view v;
    if (px_core_job_get(c, a->job_id, &v) || v.state != PX_JOB_RUNNING) return "started job not running";
    const struct pxc_job *j = pxc_job_find(c, a->job_id);
    uint32_t units = 0;
    for (uint32_t k = 0; k < a->nalloc; k++) {
      const struct px_alloc *al = &out->allocs[a->alloc_first + k];
      const struct px_conf_partition *p = &conf->partitions[v.partition];
      bool in = false;
      for (uint32_t m = 0; m < p->nnodes; m++) in |= p->nodes[m] == al->node;
      if (!in) return "node outside the job's partition";
      if (c->nodes[al->node].down || c->nodes[al->node].drain) return "node not usable";
      if (j->gpu_type != PX_NONE && c->nodes[al->node].gpu_type != j->gpu_type) return "wrong GPU type";
      if (j->constraint != PX_NONE) {
        const struct pxc_constraint *k2 = &c->cons[j->constraint];
        bool ok = false;
        for (uint32_t t = 0; t < k2->nterms; t++) ok |= (c->nodes[al->node].features & k2->terms[t]) == k2->terms[t];
        if (!ok) return "constraint not met";
      }
      uint32_t g = (uint32_t)px_bits64_count(al->gpus);
      if (j->shape.exclusive) {
        if (g != c->nodes[al->node].ngpu) return "exclusive job without its whole node";
        units += 1;
      } else if (j->shape.per_node_max == 1) {
        if (g != j->shape.gpu) return "node got the wrong GPU count";
        /* within one NVLink group when it fits one (groups of 4) */
        if (g && g <= 4 && (al->gpus & 0x0f) && (al->gpus & 0xf0)) return "GPUs split over groups";
        units += 1;
      } else {
        units += j->shape.gpu ? g / j->shape.gpu : (al->ncpu - j->shape.base_cpu) / j->shape.cpu;
      }
    }
    if (j->shape.exclusive ? a->nalloc != j->shape.nmin && j->shape.per_node_max == 1 : units != j->shape.units)
      return "not all tasks placed";
  }
  /* Order: within a partition, no job started ahead of a better-ranked job
   * that waited for resources (the builtin reserve stage). */
  size_t cur = 0;
  struct px_job_view w;
  while (px_core_job_next(c, &cur, &w)) {
    if (w.state != PX_JOB_PENDING || (w.reason != PX_REASON_RESOURCES && w.reason != PX_REASON_TOPOLOGY))
      continue;
    for (size_t i = 0; i < out->len; i++) {
      struct px_job_view s;
      px_core_job_get(c, out->v[i].job_id, &s);
      if (s.partition != w.partition) continue;
      bool better = w.prio.priority > s.prio.priority ||
                    (w.prio.priority == s.prio.priority &&
                     (w.submit_s < s.submit_s || (w.submit_s == s.submit_s && w.job_id < s.job_id)));
      if (better && w.array_job_id != s.array_job_id) return "a job started ahead of a blocked better one";
    }
  }
  /* QoS capped: 24 GPUs per user; teamB (account 2): MaxJobs 6 per user. */
  uint64_t qgpus[4] = {0}, tjobs[4] = {0};
  cur = 0;
  while (px_core_job_next(c, &cur, &w)) {
    if (w.state != PX_JOB_RUNNING || !w.nalloc) continue;
    int u = w.user[1] - '0';
    if (w.qos == 1) qgpus[u] += w.gpu_share ? w.gpu_share : w.ngpus * 100; /* hundredths */
    if (w.account == 2) tjobs[u]++;
  }
  for (int u = 0; u < 4; u++)
    if (qgpus[u] > 24 * 100 || tjobs[u] > 6) return "a per-user limit was exceeded";
  /* group GPU limit of teamA (account 1) */
  if (c->assoc[1].run_cgpus > 64 * 100) return "GrpTRES exceeded";
  if (c->assoc[1].grp_gpus == 64) {
    uint64_t sum = 0;
    cur = 0;
    while (px_core_job_next(c, &cur, &w))
      if (w.state == PX_JOB_RUNNING && w.account == 1 && w.nalloc) sum += w.gpu_share ? w.gpu_share : w.ngpus * 100;
    if (sum > 64 * 100 || sum != c->assoc[1].run_cgpus) return "group GPU counter wrong";
  }
  return NULL;
}

struct run_log { uint64_t hash; unsigned starts, events, shared; };

static void mix(uint64_t *h, uint64_t x) { *h = (*h ^ x) * 1099511628211ULL; }

/* One random run; fails the test on a broken invariant. */
static void random_run(uint64_t seed, unsigned steps, struct run_log *log) {
  struct px_conf *conf = prop_conf();
  struct px_core *c = tc_core(conf);
  assert_non_null(c);
  struct px_actions out;
  px_actions_init(&out);
  struct rng r = {seed};
  uint64_t next_id = 1, running[512];
  unsigned nrun = 0;
  int64_t now = 1000;
  *log = (struct run_log){14695981039346656037ULL, 0, 0, 0};
  for (unsigned step = 0; step < steps; step++) {
    now += rnd(&r, 30);
    uint32_t ev = rnd(&r, 20);
    if (ev < 8) {
      struct px_jobspec s;
      random_spec(&r, &s, next_id);
      int64_t n = px_core_ids_needed(&s, NULL);
      assert_true(n >= 1);
      int rc = pxc_submit(c, next_id, &s, now, NULL, NULL);
      mix(&log->hash, (uint64_t)rc);
      next_id += (uint64_t)n;
    } else if (ev < 11 && nrun) {
      unsigned k = rnd(&r, nrun);
      enum px_job_state st = rnd(&r, 4) ? PX_JOB_COMPLETED : PX_JOB_FAILED;
      assert_int_equal(pxc_job_ended(c, running[k], st, st != PX_JOB_COMPLETED, now, NULL), 0);
      running[k] = running[--nrun];
    } else if (ev == 11 && nrun) {
      unsigned k = rnd(&r, nrun);
      assert_int_equal(pxc_job_requeue(c, running[k], false, now, NULL), 0);
      running[k] = running[--nrun];
    } else if (ev == 12) {
      uint64_t id = 1 + rnd(&r, (uint32_t)next_id);
      mix(&log->hash, (uint64_t)pxc_cancel(c, id, now, NULL));
    } else if (ev == 13) {
      uint64_t id = 1 + rnd(&r, (uint32_t)next_id);
      mix(&log->hash, (uint64_t)(rnd(&r, 2) ? pxc_hold(c, id, rnd(&r, 2), now, NULL)
                                            : pxc_release(c, id, true, now, NULL)));
    } else if (ev == 14) {
      uint32_t node = rnd(&r, 24);
      enum px_node_event ne = (enum px_node_event)rnd(&r, 4);
      assert_int_equal(pxc_node_event(c, node, ne, "prop", now, NULL), 0);
      /* a down node's jobs are ended by the caller (NODE_FAIL) */
      if (ne == PX_NODE_EV_DOWN)
        for (unsigned k = 0; k < nrun;) {
          struct px_job_view v;
          px_core_job_get(c, running[k], &v);
          bool on = false;
          for (uint32_t m = 0; m < v.nalloc; m++) on |= v.alloc[m].node == node;
          if (on) {
            assert_int_equal(pxc_job_ended(c, running[k], PX_JOB_NODE_FAIL, 1, now, NULL), 0);
            running[k] = running[--nrun];
          } else {
            k++;
          }
        }
    } else {
      assert_int_equal(px_core_cycle(c, now, &out), 0);
      const char *bad = check_starts(c, conf, &out);
      if (bad) fail_msg("seed %llu step %u: %s", (unsigned long long)seed, step, bad);
      for (size_t i = 0; i < out.len; i++) {
        const struct px_action *a = &out.v[i];
        mix(&log->hash, a->job_id);
        for (uint32_t k = 0; k < a->nalloc; k++) {
          mix(&log->hash, out.allocs[a->alloc_first + k].node);
          mix(&log->hash, out.allocs[a->alloc_first + k].gpus);
          mix(&log->hash, out.allocs[a->alloc_first + k].mem_mib);
          log->shared += out.allocs[a->alloc_first + k].gpu_share > 0;
        }
        if (nrun < 512) running[nrun++] = a->job_id;
        else assert_int_equal(pxc_job_ended(c, a->job_id, PX_JOB_COMPLETED, 0, now, NULL), 0);
        log->starts++;
      }
    }
    log->events++;
    const char *bad = tc_invariants(c);
    if (bad) fail_msg("seed %llu step %u: %s", (unsigned long long)seed, step, bad);
  }
  /* Reasons of pending jobs are names squeue knows. */
  size_t cur = 0;
  struct px_job_view v;
  while (px_core_job_next(c, &cur, &v))
    if (v.state == PX_JOB_PENDING) assert_string_not_equal(px_reason_name(v.reason), "");
  px_actions_fini(&out);
  px_core_free(c);
  px_conf_free(conf);
}

static void invariants_hold_over_random_runs(void **state) {
  (void)state;
  unsigned total = 0, shared = 0;
  for (uint64_t seed = 1; seed <= 8; seed++) {
    struct run_log log;
    random_run(seed, 1200, &log);
    total += log.starts;
    shared += log.shared;
  }
  assert_true(total > 600); /* the runs did schedule work */
  assert_true(shared > 30); /* fractions among it */
}

/* The queue key's priority (prio.c computes only the factors of non-zero
 * weight) equals the one sprio shows (every factor), for every pending job
 * the cycle keyed, under weight sets that take either path. */
static void queue_priority_equals_shown_priority(void **state) {
  (void)state;
  for (int set = 0; set < 3; set++) {
    struct px_conf *conf = prop_conf();
    conf->sched.weight_jobsize = set == 2 ? 500 : 0;
    conf->sched.weight_partition = set == 1 ? 0 : 700;
    conf->sched.weight_qos = set == 1 ? 0 : 1000;
    conf->sched.weight_age = 1000 + 333 * (uint32_t)set;
    struct px_core *c = tc_core(conf);
    struct px_actions out;
    px_actions_init(&out);
    struct rng r = {77 + (uint64_t)set};
    uint64_t id = 1;
    uint32_t compared = 0;
    for (int64_t now = 1000; now < 1000 + 40 * 3700; now += 3700) {
      for (int k = 0; k < 10; k++) {
        struct px_jobspec s;
        random_spec(&r, &s, id);
        s.dependency = NULL, s.array = NULL, s.nice = (int32_t)rnd(&r, 200) - 100;
        pxc_submit(c, id++, &s, now, NULL, NULL);
      }
      assert_int_equal(px_core_cycle(c, now, &out), 0);
      for (size_t slot = 0; slot < c->njob_slots; slot++) {
        const struct pxc_job *j = &c->jobs[slot];
        if (j->state != PX_JOB_PENDING || j->eligible_s == 0) continue;
        struct px_job_view v;
        assert_int_equal(px_core_job_get(c, j->id, &v), 0);
        if (v.prio.priority != j->priority)
          fail_msg("set %d job %llu: key %u, shown %u", set, (unsigned long long)j->id, j->priority, v.prio.priority);
        compared++;
      }
    }
    assert_true(compared > 100);
    px_actions_fini(&out);
    px_core_free(c);
    px_conf_free(conf);
  }
}

static void same_seed_same_actions(void **state) {
  (void)state;
  struct run_log a, b, c;
  random_run(77, 1500, &a);
  random_run(77, 1500, &b);
  random_run(78, 1500, &c);
  assert_int_equal(a.hash, b.hash);
  assert_int_equal(a.starts, b.starts);
  assert_int_not_equal(a.hash, c.hash);
}

/* A scripted scenario run once per allocation: each step either succeeds
 * or says PX_ENOMEM, the core stays consistent, and a failed submit keeps
 * nothing. LSan checks nothing leaks. */
static void allocation_failures_are_reported(void **state) {
  (void)state;
  struct px_conf *conf = prop_conf();
  long total = 0;
  for (long n = 1;; n++) {
    struct tc_failer fl = {n, 0};
    struct px_core_allocator al = {tc_fail_realloc, &fl};
    int err = 0;
    struct px_core *c = px_core_new_with_alloc(conf, 1, &al, &err);
    if (!c) {
      assert_int_equal(err, PX_ENOMEM);
      continue;
    }
    struct px_actions out;
    px_actions_init(&out);
    struct rng r = {5};
    for (uint64_t id = 1; id < 60; id++) {
      struct px_jobspec s;
      random_spec(&r, &s, id);
      size_t before = px_core_njobs(c);
      int rc = pxc_submit(c, id * 20, &s, 100, NULL, NULL);
      if (rc == PX_ENOMEM) assert_int_equal(px_core_njobs(c), before);
      if (id % 10 == 0) {
        rc = px_core_cycle(c, 100 + (int64_t)id, &out);
        assert_true(rc == 0 || rc == PX_ENOMEM);
        assert_null(tc_invariants(c));
      }
    }
    px_actions_fini(&out);
    px_core_free(c);
    if (fl.countdown > 0) { /* no failure was injected: every allocation covered */
      total = n;
      break;
    }
  }
  assert_true(total > 50);
  px_conf_free(conf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(invariants_hold_over_random_runs),
      cmocka_unit_test(same_seed_same_actions),
      cmocka_unit_test(queue_priority_equals_shown_priority),
      cmocka_unit_test(allocation_failures_are_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
