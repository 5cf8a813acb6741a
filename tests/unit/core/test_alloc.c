/*
 * The core's own containers (alloc.c): the u64 -> u32 map with
 * backward-shift deletion checked against a plain array, the string intern
 * table, and the allocator's byte count returning to its start.
 */
#include "px_test.h"

#include "core/coretest.h"

static void map_matches_reference(void **state) {
  (void)state;
  struct px_conf *conf = tc_conf(1, 8, 0, 0);
  struct px_core *c = tc_core(conf);
  size_t bytes0 = c->bytes;
  enum { N = 3000 };
  static int64_t ref[N]; /* -1: absent */
  for (int i = 0; i < N; i++) ref[i] = -1;
  struct pxc_map m = {0};
  uint64_t x = 99;
  for (int step = 0; step < 100000; step++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t k = (x >> 33) % N;
    uint64_t key = k * 0x9E3779B97F4A7C15ULL; /* spread keys, collide buckets */
    if ((x >> 20) % 3 == 0) {
      assert_int_equal(pxc_map_del(&m, key), ref[k] >= 0);
      ref[k] = -1;
    } else {
      assert_int_equal(pxc_map_put(c, &m, key, (uint32_t)step), 0);
      ref[k] = step;
    }
  }
  size_t live = 0;
  for (uint64_t k = 0; k < N; k++) {
    uint32_t v;
    bool found = pxc_map_get(&m, k * 0x9E3779B97F4A7C15ULL, &v);
    assert_int_equal(found, ref[k] >= 0);
    if (found) assert_int_equal(v, (uint32_t)ref[k]), live++;
  }
  assert_int_equal(m.len, live);
  pxc_map_fini(c, &m);
  assert_int_equal(c->bytes, bytes0); /* every byte given back */
  px_core_free(c);
  px_conf_free(conf);
}

static void intern_gives_stable_ids(void **state) {
  (void)state;
  struct px_conf *conf = tc_conf(1, 8, 0, 0);
  struct px_core *c = tc_core(conf);
  uint32_t a, b, a2;
  assert_int_equal(pxc_intern(c, "alpha", &a), 0);
  assert_int_equal(pxc_intern(c, "beta", &b), 0);
  assert_int_equal(pxc_intern(c, "alpha", &a2), 0);
  assert_int_equal(a, a2);
  assert_int_not_equal(a, b);
  assert_string_equal(pxc_str(c, b), "beta");
  assert_int_equal(pxc_lookup(c, "gamma"), PX_NONE);
  assert_int_equal(pxc_lookup(c, "beta"), b);
  assert_int_equal(px_core_node_index(c, "n00000"), 0);
  assert_int_equal(px_core_node_index(c, "nope"), PX_NONE);
  px_core_free(c);
  px_conf_free(conf);
}

/* Bytes in use come back to the empty-queue figure after jobs come and go. */
static void job_memory_is_returned(void **state) {
  (void)state;
  struct px_conf *conf = tc_conf(2, 8, 0, 0);
  struct px_core *c = tc_core(conf);
  struct px_actions out;
  px_actions_init(&out);
  struct px_jobspec s = tc_spec("alice", 0, 1);
  s.dependency = NULL;
  assert_int_equal(tc_submit(c, 1, &s, 10), 0); /* warm every container once */
  assert_int_equal(px_core_cycle(c, 11, &out), 0);
  assert_int_equal(pxc_job_ended(c, 1, PX_JOB_COMPLETED, 0, 12, NULL), 0);
  assert_int_equal(px_core_cycle(c, 1000, &out), 0); /* purges the finished entry */
  struct px_core_stats st0, st1;
  px_core_stats(c, &st0);
  for (uint64_t id = 2; id < 6; id++) assert_int_equal(tc_submit(c, id, &s, 1001), 0);
  assert_int_equal(px_core_cycle(c, 1002, &out), 0);
  for (uint64_t id = 2; id < 6; id++)
    assert_int_equal(pxc_job_ended(c, id, PX_JOB_COMPLETED, 0, 1003, NULL), 0);
  assert_int_equal(px_core_cycle(c, 2000, &out), 0);
  px_core_stats(c, &st1);
  assert_int_equal(st1.pending_records, 0);
  assert_true(st1.bytes_in_use <= st0.bytes_in_use + 4096); /* containers keep capacity only */
  px_actions_fini(&out);
  px_core_free(c);
  px_conf_free(conf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(map_matches_reference),
      cmocka_unit_test(intern_gives_stable_ids),
      cmocka_unit_test(job_memory_is_returned),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
