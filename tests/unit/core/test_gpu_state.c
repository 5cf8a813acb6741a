/*
 * PX_EV_GPU: a GPU out of service is never placed on while the node's
 * other GPUs stay in service; a job holding it keeps it until its end,
 * which does not free it; back in service it is free again; a refused
 * event changes nothing.
 */
#include "px_test.h"

#include "core/coretest.h"
#include "core/event.h"

static int gpu_ev(struct tc_fx *f, uint32_t node, uint32_t gpu, bool usable, int64_t now) {
  struct px_event ev = {.kind = PX_EV_GPU, .node = node, .gpu = gpu, .gpu_usable = usable};
  struct px_event_result res;
  return px_core_apply(f->core, &ev, now, &res);
}

static px_bits64 node_free(struct tc_fx *f, uint32_t node) {
  struct px_node_view nv;
  assert_int_equal(px_core_node_get(f->core, node, &nv), 0);
  return nv.gpus_free;
}

static uint32_t job_node(struct tc_fx *f, uint64_t id, px_bits64 *gpus) {
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f->core, id, &v), 0);
  assert_int_equal(v.state, PX_JOB_RUNNING);
  *gpus = v.alloc[0].gpus;
  return v.alloc[0].node;
}

/* Node 0 with GPU 3 out: an 8-GPU job goes to node 1, a 7-GPU job fits
 * node 0 around the bad GPU, and a 1-GPU job then finds no room. */
static void bad_gpu_is_never_placed(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(2, 8, 0, 0)};
  tc_open(&f);
  assert_int_equal(gpu_ev(&f, 0, 3, false, 5), 0);
  assert_true((node_free(&f, 0) & (1ULL << 3)) == 0);
  struct px_jobspec a = tc_spec("alice", 0, 8), b = tc_spec("bob", 0, 7), c = tc_spec("bob", 0, 1);
  assert_int_equal(tc_submit(f.core, 1, &a, 10), 0);
  assert_int_equal(tc_submit(f.core, 2, &b, 10), 0);
  assert_int_equal(tc_submit(f.core, 3, &c, 10), 0);
  tc_cycle(&f, 20);
  px_bits64 g;
  assert_int_equal(job_node(&f, 1, &g), 1);
  assert_int_equal(job_node(&f, 2, &g), 0);
  assert_true((g & (1ULL << 3)) == 0);
  struct px_job_view v;
  assert_int_equal(px_core_job_get(f.core, 3, &v), 0);
  assert_int_equal(v.state, PX_JOB_PENDING);
  struct px_node_view nv;
  px_core_node_get(f.core, 0, &nv);
  assert_int_equal(nv.gpus_alloc, 7); /* the bad GPU is not counted as allocated */
  assert_int_equal(nv.gpus_bad, 1ULL << 3);
  tc_close(&f);
}

/* A GPU that goes out under a running job stays out after the job ends,
 * and comes back free when put back in service. */
static void held_gpu_stays_out_after_release(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(1, 8, 0, 0)};
  tc_open(&f);
  struct px_jobspec a = tc_spec("alice", 0, 2);
  assert_int_equal(tc_submit(f.core, 1, &a, 10), 0);
  tc_cycle(&f, 20);
  px_bits64 held;
  job_node(&f, 1, &held);
  uint32_t gpu = (uint32_t)__builtin_ctzll(held);
  assert_int_equal(gpu_ev(&f, 0, gpu, false, 25), 0);
  assert_int_equal(gpu_ev(&f, 0, gpu, false, 26), 0); /* again: nothing more */
  struct px_event end = {.kind = PX_EV_END, .job_id = 1, .state = PX_JOB_COMPLETED};
  struct px_event_result res;
  assert_int_equal(px_core_apply(f.core, &end, 30, &res), 0);
  assert_int_equal(px_bits64_count(node_free(&f, 0)), 7);
  assert_true((node_free(&f, 0) & (1ULL << gpu)) == 0);
  assert_int_equal(gpu_ev(&f, 0, gpu, true, 40), 0);
  assert_int_equal(px_bits64_count(node_free(&f, 0)), 8);
  /* out and back while still held: freed once, by the job's end */
  assert_int_equal(tc_submit(f.core, 2, &a, 50), 0);
  tc_cycle(&f, 60);
  job_node(&f, 2, &held);
  gpu = (uint32_t)__builtin_ctzll(held);
  assert_int_equal(gpu_ev(&f, 0, gpu, false, 61), 0);
  assert_int_equal(gpu_ev(&f, 0, gpu, true, 62), 0);
  assert_int_equal(px_bits64_count(node_free(&f, 0)), 6);
  end.job_id = 2;
  assert_int_equal(px_core_apply(f.core, &end, 70, &res), 0);
  assert_int_equal(px_bits64_count(node_free(&f, 0)), 8);
  tc_close(&f);
}

static void refusals_change_nothing(void **state) {
  (void)state;
  struct tc_fx f = {.conf = tc_conf(1, 4, 0, 0)};
  tc_open(&f);
  struct px_event ev = {.kind = PX_EV_GPU, .node = 0, .gpu = 4};
  struct px_event_result res;
  assert_int_equal(px_core_apply(f.core, &ev, 1, &res), PX_EINVAL);
  assert_non_null(strstr(res.diag.msg, "gpu"));
  ev.node = 7, ev.gpu = 0;
  assert_int_equal(px_core_apply(f.core, &ev, 1, &res), PX_ENOENT);
  assert_int_equal(px_bits64_count(node_free(&f, 0)), 4);
  tc_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_gpu_is_never_placed),
      cmocka_unit_test(held_gpu_stays_out_after_release),
      cmocka_unit_test(refusals_change_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
