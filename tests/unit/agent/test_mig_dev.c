/*
 * test_mig_dev.c - naming MIG instances' devices (agent/mig_dev.h): the
 * nvidia-caps major from /proc/devices, capability minors from the
 * driver's mig-minors (its format: "gpu0/gi1/access 12"), the per-index
 * file the agent writes and the denials a job gets from it.
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/mig_dev.h"

static const char minors[] = "config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\n"
                             "gpu0/gi2/access 21\ngpu0/gi2/ci0/access 22\ngpu1/gi1/access 102\n"
                             "gpu1/gi1/ci0/access 103\ngpu10/gi1/access 999";

static void parsers(void **state) {
  (void)state;
  assert_int_equal(px_mig_caps_major("Character devices:\n  1 mem\n195 nvidia\n237 nvidia-caps\n"), 237);
  assert_int_equal(px_mig_caps_major("195 nvidia\n237 nvidia-capsule\n"), -1); /* the whole name */
  assert_int_equal(px_mig_caps_major(""), -1);
  assert_int_equal(px_mig_cap_minor(minors, 0, 1, -1), 12);
  assert_int_equal(px_mig_cap_minor(minors, 0, 1, 0), 13);
  assert_int_equal(px_mig_cap_minor(minors, 0, 2, 0), 22);
  assert_int_equal(px_mig_cap_minor(minors, 1, 1, -1), 102);
  assert_int_equal(px_mig_cap_minor(minors, 1, 2, -1), -1);   /* no such instance */
  assert_int_equal(px_mig_cap_minor(minors, 1, 1, 1), -1);
  assert_int_equal(px_mig_cap_minor(minors, 10, 1, -1), 999); /* last line, no newline */
}

static struct px_gpu_info inst(uint32_t i, int32_t minor, int32_t gi) {
  struct px_gpu_info g = {.index = i, .dev_minor = minor, .mig_gi = gi, .mig_ci = 0};
  snprintf(g.uuid, sizeof g.uuid, "MIG-%u", i);
  return g;
}

/* Three instances: two on GPU 0, one on GPU 1, and GPU 2 whole beside
 * them. A job on instance 1 is denied GPUs 1 and 2 and instance 0's and
 * 2's capabilities, never its own. */
static void file_and_denials(void **state) {
  (void)state;
  char dir[] = "/tmp/px-mig-XXXXXX", path[64], mpath[64], dpath[64];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/gpu_devices", dir);
  snprintf(mpath, sizeof mpath, "%s/mig-minors", dir);
  snprintf(dpath, sizeof dpath, "%s/devices", dir);
  FILE *f = fopen(mpath, "w");
  fputs(minors, f);
  fclose(f);
  f = fopen(dpath, "w");
  fputs("237 nvidia-caps\n", f);
  fclose(f);
  setenv("PHALANX_MIG_MINORS", mpath, 1);
  setenv("PHALANX_PROC_DEVICES", dpath, 1);
  struct px_node_res r = {.ngpus = 4};
  r.gpus[0] = inst(0, 0, 1), r.gpus[1] = inst(1, 0, 2), r.gpus[2] = inst(2, 1, 1);
  r.gpus[3] = (struct px_gpu_info){.index = 3, .uuid = "GPU-whole", .dev_minor = 2, .mig_gi = -1, .mig_ci = -1};
  char why[256] = "";
  assert_int_equal(px_mig_devices_write(&r, path, why, sizeof why), 0);
  struct px_cg_dev deny[PX_MIG_DEVS_MAX];
  uint32_t n = 0, gpus[] = {1};
  assert_int_equal(px_mig_devices_deny(path, gpus, 1, deny, &n), 0);
  struct px_cg_dev want[] = {{237, 12}, {237, 13}, {195, 1}, {237, 102}, {237, 103}, {195, 2}};
  assert_int_equal(n, 6);
  for (uint32_t i = 0; i < n; i++) assert_true(deny[i].major == want[i].major && deny[i].minor == want[i].minor);
  uint32_t all[] = {0, 1, 2, 3};
  assert_int_equal(px_mig_devices_deny(path, all, 4, deny, &n), 0);
  assert_int_equal(n, 0);
  /* an instance the driver does not list: no file, and why says which */
  r.gpus[2].mig_gi = 5;
  unlink(path);
  assert_int_equal(px_mig_devices_write(&r, path, why, sizeof why), PX_ENOENT);
  assert_non_null(strstr(why, "MIG-2"));
  assert_int_equal(access(path, F_OK), -1);
  setenv("PHALANX_PROC_DEVICES", mpath, 1); /* no nvidia-caps line */
  assert_int_equal(px_mig_devices_write(&r, path, why, sizeof why), PX_ENOENT);
  assert_non_null(strstr(why, "nvidia-caps"));
  unsetenv("PHALANX_MIG_MINORS");
  unsetenv("PHALANX_PROC_DEVICES");
  unlink(mpath), unlink(dpath), rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(parsers), cmocka_unit_test(file_and_denials)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
