/*
 * test_discover.c - emulated GPUs, NVLink grouping, the drain reason for a
 * node short of its configuration, and the job directory's files.
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/discover.h"
#include "agent/jobdir.h"
#include "proto/agent_msg.h"

static void emulated(void **state) {
  (void)state;
  static struct px_node_res r;
  assert_int_equal(px_discover_gpus_emulated(&r, "8:h100:2", "n07"), 0);
  assert_int_equal(r.ngpus, 8);
  assert_true(r.emulated);
  assert_string_equal(r.gpus[5].uuid, "GPU-EMU-n07-5");
  assert_string_equal(r.gpus[5].type, "h100");
  /* two even groups: 0-3 and 4-7 */
  assert_int_equal(r.gpus[3].group, 0);
  assert_int_equal(r.gpus[4].group, 1);
  assert_int_equal(px_discover_gpus_emulated(&r, "4", "n"), 0);
  assert_string_equal(r.gpus[0].type, "emu");
  assert_int_equal(r.gpus[3].group, 0);
  const char *bad[] = {"", "x", "8:", "3:a100:4", "65", "2:a100:0", "2x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (px_discover_gpus_emulated(&r, bad[i], "n") != PX_EINVAL) fail_msg("'%s' accepted", bad[i]);
}

/* A mixed MIG layout: packed onto GPUs of 7 slices in the order given,
 * then ordered by profile name (as the server numbers a node's types). */
static void emulated_mig_layout(void **state) {
  (void)state;
  static struct px_node_res r;
  assert_int_equal(px_discover_gpus_emulated(&r, "7:1g.10gb,1:3g.40gb,2:2g.20gb,1:4g.40gb", "e1"), 0);
  assert_int_equal(r.ngpus, 11);
  const char *want[][2] = {{"1g.10gb", "MIG-EMU-e1-0-0"}, {"1g.10gb", "MIG-EMU-e1-0-6"}, {"2g.20gb", "MIG-EMU-e1-1-1"},
                           {"2g.20gb", "MIG-EMU-e1-1-2"}, {"3g.40gb", "MIG-EMU-e1-1-0"}, {"4g.40gb", "MIG-EMU-e1-2-0"}};
  uint32_t at[] = {0, 6, 7, 8, 9, 10};
  for (int i = 0; i < 6; i++) {
    assert_string_equal(r.gpus[at[i]].type, want[i][0]);
    assert_string_equal(r.gpus[at[i]].uuid, want[i][1]);
    assert_int_equal(r.gpus[at[i]].index, at[i]);
  }
  assert_int_equal(r.gpus[9].group, 1);  /* the 3g.40gb shares GPU 1 with the 2g.20gb */
  assert_int_equal(r.gpus[10].group, 2); /* 4g.40gb: 4 slices, no room left on GPU 1 */
  assert_int_equal(r.gpus[9].mem_mib, 40960);
  /* whole GPUs beside instances: a GPU each, after the profiles by name */
  assert_int_equal(px_discover_gpus_emulated(&r, "1:h100,2:3g.40gb", "e1"), 0);
  assert_int_equal(r.ngpus, 3);
  assert_string_equal(r.gpus[0].uuid, "MIG-EMU-e1-1-0");
  assert_string_equal(r.gpus[2].uuid, "GPU-EMU-e1-0");
  assert_int_equal(r.gpus[2].group, 0);
  assert_true(px_gpus_are_mig(&r));
  const char *bad[] = {"7:1g.10gb,x", "7:1g.10gb,2:", "7:1g.10gb,", "60:1g.10gb,5:1g.10gb", "1:1g.10gb,1:"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_int_equal(px_discover_gpus_emulated(&r, bad[i], "e1"), PX_EINVAL);
}

static void grouping(void **state) {
  (void)state;
  bool l[16] = {0};
  uint32_t g[4];
#define LINK(a, b) (l[(a) * 4 + (b)] = l[(b) * 4 + (a)] = true)
  LINK(2, 3);
  LINK(0, 1);
  px_gpu_group(l, 4, g);
  assert_int_equal(g[0], 0), assert_int_equal(g[1], 0), assert_int_equal(g[2], 1), assert_int_equal(g[3], 1);
  memset(l, 0, sizeof l);
  LINK(3, 1);
  LINK(1, 2); /* chain 3-1-2: one island; 0 alone comes first */
  px_gpu_group(l, 4, g);
  assert_int_equal(g[0], 0), assert_int_equal(g[1], 1), assert_int_equal(g[2], 1), assert_int_equal(g[3], 1);
}

static void shortfall(void **state) {
  (void)state;
  struct px_gpu_info gpus[4] = {{.type = "h100"}, {.type = "h100"}, {.type = "a100"}, {.type = "h100"}};
  struct px_node_report r = {.node = "n1", .cpus = 32, .mem_mib = 100000, .gpus = gpus, .ngpus = 4};
  char buf[512];
  assert_false(px_node_report_shortfall(&r, 32, 100000, 4, NULL, buf, sizeof buf));
  assert_string_equal(buf, "");
  /* 3 of the 4 GPUs are h100, configured 8 h100; 32 CPUs of 64 */
  assert_true(px_node_report_shortfall(&r, 64, 100000, 8, "h100", buf, sizeof buf));
  assert_string_equal(buf, "Low CPUs (reported:32 < configured:64); "
                           "gres/gpu:h100 count reported lower than configured (3 < 8)");
  /* all of them of the type counted: Slurm 22.05's words exactly (no type) */
  for (int i = 0; i < 4; i++) snprintf(gpus[i].type, sizeof gpus[i].type, "h100");
  assert_true(px_node_report_shortfall(&r, 32, 100000, 8, "h100", buf, sizeof buf));
  assert_string_equal(buf, "gres/gpu count reported lower than configured (4 < 8)");
  assert_true(px_node_report_shortfall(&r, 1, 131072, 0, NULL, buf, sizeof buf));
  assert_string_equal(buf, "Low RealMemory (reported:100000 < 100.00% of configured:131072)");
}

static void jobdir_files(void **state) {
  (void)state;
  char dir[] = "/tmp/pxjd.XXXXXX";
  assert_non_null(mkdtemp(dir));
  struct px_job_status st = {.job_id = 9, .state = "OUT_OF_MEMORY", .term_signal = 9, .peak_mem_mib = 64};
  struct px_job_status got;
  assert_int_equal(px_status_read(dir, &got), PX_ENOENT); /* not ended yet */
  assert_int_equal(px_status_write(dir, &st), 0);
  assert_int_equal(px_status_read(dir, &got), 0);
  assert_string_equal(got.state, "OUT_OF_MEMORY");
  assert_int_equal(got.peak_mem_mib, 64);
  struct px_site s = {.node = "n1", .cgroup_name = "phalanx_n1.0", .kill_wait_s = 7, .allow_root = true}, s2;
  assert_int_equal(px_site_write(dir, &s), 0);
  assert_int_equal(px_site_read(dir, &s2), 0);
  assert_int_equal(s2.kill_wait_s, 7);
  assert_true(s2.allow_root);
  assert_true(px_proc_same(getpid(), px_proc_start(getpid())));
  assert_false(px_proc_same(getpid(), px_proc_start(getpid()) + 1)); /* a reused pid starts later */
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(emulated),
      cmocka_unit_test(emulated_mig_layout),
      cmocka_unit_test(grouping),
      cmocka_unit_test(shortfall),
      cmocka_unit_test(jobdir_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
