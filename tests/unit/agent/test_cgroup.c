/*
 * test_cgroup.c - which cgroup version the agent picks, and the files the
 * v2 path writes, against a fake cgroupfs in a temporary directory (this
 * machine offers v1 controllers and a v2 mount without any, so the v2 path
 * would otherwise never run here). The fake is laid out like a hybrid host:
 * a cgroup2 mount at T/unified and v1 hierarchies at T/memory, T/cpuset,
 * T/pids and T/cpu,cpuacct, with this "process" in /svc.
 */
#include "px_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cgroup.h"
#include "util/error.h"

static char T[64];

static void put(const char *rel, const char *text) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", T, rel);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static char *get(const char *rel) {
  static char buf[512];
  char p[512];
  snprintf(p, sizeof p, "%s/%s", T, rel);
  FILE *f = fopen(p, "r");
  if (!f) fail_msg("%s: missing", rel);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

static void dir(const char *rel) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", T, rel);
  assert_int_equal(mkdir(p, 0755), 0);
}

static int setup(void **state) {
  (void)state;
  snprintf(T, sizeof T, "/tmp/pxcg.XXXXXX");
  assert_non_null(mkdtemp(T));
  const char *dirs[] = {"unified", "unified/svc", "unified/svc/agentlvl", "unified/svc/agentlvl/job_7",
                        "memory", "memory/svc", "cpuset", "pids", "cpu,cpuacct", "cpu,cpuacct/svc"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) dir(dirs[i]);
  char mi[2048];
  snprintf(mi, sizeof mi,
           "30 25 0:26 / %s/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
           "31 25 0:27 / %s/memory rw,nosuid - cgroup cgroup rw,memory\n"
           "32 25 0:28 / %s/cpuset rw,nosuid - cgroup cgroup rw,cpuset\n"
           "33 25 0:29 / %s/pids rw,nosuid - cgroup cgroup rw,pids\n"
           "34 25 0:30 / %s/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
           "35 25 8:1 / / rw - ext4 /dev/vda rw\n",
           T, T, T, T, T);
  put("mountinfo", mi);
  put("cgroup", "5:pids:/\n4:cpu,cpuacct:/svc\n3:cpuset:/\n2:memory:/svc\n0::/svc\n");
  /* what the kernel shows in a fresh v2 group */
  const char *files[] = {"cgroup.subtree_control", "agentlvl/cgroup.subtree_control", "agentlvl/job_7/memory.max",
                         "agentlvl/job_7/memory.swap.max", "agentlvl/job_7/cpuset.cpus", "agentlvl/job_7/pids.max",
                         "agentlvl/job_7/cgroup.procs", "agentlvl/job_7/cgroup.kill"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char rel[256];
    snprintf(rel, sizeof rel, "unified/svc/%s", files[i]);
    put(rel, "");
  }
  static char m[512], c[512]; /* kept by px_cg_set_proc_files */
  snprintf(m, sizeof m, "%s/mountinfo", T);
  snprintf(c, sizeof c, "%s/cgroup", T);
  px_cg_set_proc_files(m, c);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  px_cg_set_proc_files(NULL, NULL);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", T);
  return system(cmd) == 0 ? 0 : -1;
}

/* v2 mounted without controllers (this machine's case): v1 it is, each
 * controller under this process's own group in its hierarchy. */
static void hybrid_picks_v1(void **state) {
  (void)state;
  put("unified/svc/cgroup.controllers", "");
  static struct px_cg_layout lay;
  assert_int_equal(px_cg_probe(&lay, NULL, "agentlvl"), 0);
  assert_int_equal(lay.version, 1);
  char want[512];
  snprintf(want, sizeof want, "%s/memory/svc/agentlvl", T);
  assert_string_equal(lay.base[PX_CG_MEMORY], want);
  snprintf(want, sizeof want, "%s/cpuset/agentlvl", T);
  assert_string_equal(lay.base[PX_CG_CPUSET], want);
  snprintf(want, sizeof want, "%s/cpu,cpuacct/svc/agentlvl", T);
  assert_string_equal(lay.base[PX_CG_CPUACCT], want);
  assert_string_equal(lay.base[PX_CG_DEVICES], ""); /* not mounted */
  assert_true(px_cg_constrains_devices(&lay) == false);
  /* an explicit root replaces the own group */
  assert_int_equal(px_cg_probe(&lay, "/batch", "agentlvl"), 0);
  snprintf(want, sizeof want, "%s/memory/batch/agentlvl", T);
  assert_string_equal(lay.base[PX_CG_MEMORY], want);
}

/* v2 with the memory controller: v2 wins. */
static void v2_when_it_has_memory(void **state) {
  (void)state;
  put("unified/svc/cgroup.controllers", "cpuset cpu io memory pids\n");
  static struct px_cg_layout lay;
  assert_int_equal(px_cg_probe(&lay, NULL, "agentlvl"), 0);
  assert_int_equal(lay.version, 2);
  char want[512];
  snprintf(want, sizeof want, "%s/unified/svc/agentlvl", T);
  assert_string_equal(lay.base[0], want);
  /* a word that merely contains "memory" is not the controller */
  put("unified/svc/cgroup.controllers", "cpu nomemory pids\n");
  assert_int_equal(px_cg_probe(&lay, NULL, "agentlvl"), 0);
  assert_int_equal(lay.version, 1);
}

/* The v2 path's writes: controllers enabled above the job, the limits,
 * attach, the kill switch, and the accounting read back. */
static void v2_files(void **state) {
  (void)state;
  put("unified/svc/cgroup.controllers", "cpuset cpu io memory pids\n");
  static struct px_cg_layout lay;
  static struct px_cgroup cg;
  assert_int_equal(px_cg_probe(&lay, NULL, "agentlvl"), 0);
  assert_int_equal(lay.version, 2);
  struct px_cg_limits lim = {.mem_mib = 512, .cpus = "2-3", .pids_max = 100};
  char err[512] = "";
  assert_int_equal(px_cg_create(&lay, "job_7", &lim, &cg, err, sizeof err), 0);
  assert_int_equal(cg.version, 2);
  assert_string_equal(get("unified/svc/cgroup.subtree_control"), "+memory\n+cpuset\n+pids\n+cpu\n");
  assert_string_equal(get("unified/svc/agentlvl/cgroup.subtree_control"), "+memory\n+cpuset\n+pids\n+cpu\n");
  assert_string_equal(get("unified/svc/agentlvl/job_7/memory.max"), "536870912");
  assert_string_equal(get("unified/svc/agentlvl/job_7/memory.swap.max"), "0");
  assert_string_equal(get("unified/svc/agentlvl/job_7/cpuset.cpus"), "2-3");
  assert_string_equal(get("unified/svc/agentlvl/job_7/pids.max"), "100");
  assert_int_equal(px_cg_attach(&cg, 4242), 0);
  assert_string_equal(get("unified/svc/agentlvl/job_7/cgroup.procs"), "4242");
  assert_int_equal(px_cg_count(&cg), 1);
  /* SIGKILL on v2 is cgroup.kill, not a signal per pid (4242 is no process of ours) */
  assert_int_equal(px_cg_kill(&cg, SIGKILL), 1);
  assert_string_equal(get("unified/svc/agentlvl/job_7/cgroup.kill"), "1");
  put("unified/svc/agentlvl/job_7/memory.peak", "1073741824\n");
  put("unified/svc/agentlvl/job_7/cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n");
  put("unified/svc/agentlvl/job_7/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  struct px_cg_stats st;
  px_cg_stats(&cg, &st);
  assert_int_equal(st.peak_mem_mib, 1024);
  assert_int_equal(st.cpu_time_ms, 2500);
  assert_int_equal(st.oom_kills, 1);
  assert_true(st.mem_limit_hit);
  /* no device controller on v2: isolation of GPUs rests on CUDA_VISIBLE_DEVICES */
  assert_false(px_cg_constrains_devices(&lay));
}

/* A limit file the kernel does not offer is an error naming it. */
static void v2_missing_file(void **state) {
  (void)state;
  put("unified/svc/cgroup.controllers", "memory\n");
  static struct px_cg_layout lay;
  static struct px_cgroup cg;
  assert_int_equal(px_cg_probe(&lay, NULL, "agentlvl"), 0);
  char p[512];
  snprintf(p, sizeof p, "%s/unified/svc/agentlvl/job_7/pids.max", T);
  unlink(p);
  struct px_cg_limits lim = {.mem_mib = 64, .pids_max = 10};
  char err[512] = "";
  assert_int_equal(px_cg_create(&lay, "job_7", &lim, &cg, err, sizeof err), PX_EIO);
  if (!strstr(err, "cannot set pids.max in ")) fail_msg("error: %s", err);
  put("unified/svc/agentlvl/job_7/pids.max", "");
}

/* The zygote's memo answers the same question without reading again. */
static void remembered(void **state) {
  (void)state;
  put("unified/svc/cgroup.controllers", "memory pids\n");
  px_cg_probe_remember(NULL, "agentlvl");
  put("unified/svc/cgroup.controllers", "");
  static struct px_cg_layout lay;
  assert_int_equal(px_cg_probe(&lay, NULL, "agentlvl"), 0);
  assert_int_equal(lay.version, 2);       /* from memory */
  assert_int_equal(px_cg_probe(&lay, NULL, "other"), 0);
  assert_int_equal(lay.version, 1);       /* other arguments: probed afresh */
  px_cg_probe_remember(NULL, "");         /* forget (no agent level is named "") */
}

/* This machine: v1 controllers and a v2 mount without them must give v1. */
static void this_machine(void **state) {
  (void)state;
  px_cg_set_proc_files(NULL, NULL);
  char ctl[256] = "";
  FILE *f = fopen("/sys/fs/cgroup/unified/cgroup.controllers", "r");
  if (f) {
    if (!fgets(ctl, sizeof ctl, f)) ctl[0] = '\0';
    fclose(f);
  }
  if (!f || strstr(ctl, "memory") || access("/sys/fs/cgroup/memory", W_OK) != 0) {
    px_test_skip("agent/test_cgroup", "cgroup-v1",
                 "this_machine: not a hybrid host with writable v1 memory");
    skip();
  }
  static struct px_cg_layout lay;
  assert_int_equal(px_cg_probe(&lay, NULL, "pxtest"), 0);
  assert_int_equal(lay.version, 1);
  assert_true(lay.base[PX_CG_MEMORY][0] != '\0');
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(hybrid_picks_v1, setup, teardown),
      cmocka_unit_test_setup_teardown(v2_when_it_has_memory, setup, teardown),
      cmocka_unit_test_setup_teardown(v2_files, setup, teardown),
      cmocka_unit_test_setup_teardown(v2_missing_file, setup, teardown),
      cmocka_unit_test_setup_teardown(remembered, setup, teardown),
      cmocka_unit_test(this_machine),
  };
  return px_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
