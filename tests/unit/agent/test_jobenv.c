/*
 * test_jobenv.c - the job environment, output patterns and compressed lists.
 * Expected values are the forms in the Slurm 22.05 capture (research notes,
 * section 2): a 2-node gang with one task per node shows SLURM_TASKS_PER_NODE
 * 1(x2), SLURM_JOB_NODELIST gpu[0001-0002], the batch step ranks 0.
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/hostnames.h"
#include "agent/jobenv.h"
#include "agent/outpath.h"

static void hostlists(void **state) {
  (void)state;
  char buf[128];
  char *a[] = {"gpu0001", "gpu0002"};
  assert_int_equal(px_agent_hostlist(a, 2, buf, sizeof buf), 0);
  assert_string_equal(buf, "gpu[0001-0002]");
  /* canonical, as Slurm prints it: sorted, whatever the rank order */
  char *b[] = {"n04", "n02", "n01", "x9", "login"};
  px_agent_hostlist(b, 5, buf, sizeof buf);
  assert_string_equal(buf, "login,n[01-02,04],x9");
  assert_int_equal(px_agent_hostlist(a, 2, buf, 8), PX_ERANGE);
  uint32_t v[] = {64, 64, 8};
  px_agent_count_list(v, 3, buf, sizeof buf);
  assert_string_equal(buf, "64(x2),8");
  px_agent_count_list(v + 2, 1, buf, sizeof buf);
  assert_string_equal(buf, "8");
}

static char *nodes[] = {"gpu0001", "gpu0002", NULL};
static char *addrs[] = {"10.77.0.2", "10.77.0.3", NULL};
static char *uenv[] = {"PATH=/usr/bin:/bin", "SLURM_JOB_ID=999", "HOME=/home/a", NULL};
static uint32_t tpn[] = {1, 1}, gpus[] = {2, 5}, gpn[] = {2, 2};

static struct px_launch gang(void) {
  struct px_launch l = {.job_id = 10058, .name = "gangenv", .user = "alice", .uid = 1001, .gid = 1002,
                        .account = "llm", .partition = "batch", .submit_dir = "/home/a",
                        .workdir = "/home/a/w", .env = uenv, .nodes = nodes, .node_addrs = addrs,
                        .nnodes = 2, .node_rank = 1, .ntasks = 2, .tasks_per_node = tpn,
                        .cpus_per_task = 64, .gpus = gpus, .ngpus = 2, .gpus_per_node = gpn,
                        .ncpus = 64};
  return l;
}

static void gang_task_env(void **state) {
  (void)state;
  struct px_launch l = gang();
  struct px_jobenv_site site = {"bench", "gpu0002", false, NULL, 0, NULL};
  struct px_task_ident t = {.local_id = 0, .proc_id = px_jobenv_proc_id(&l, 0), .local_tasks = 1};
  assert_int_equal(t.proc_id, 1); /* one task on node 0 before us */
  struct px_strvec e = {0};
  assert_int_equal(px_jobenv_build(&l, &site, &t, &e), 0);
  assert_null(e.v[e.len - 1]);
  struct {
    const char *k, *v;
  } want[] = {{"SLURM_JOB_ID", "10058"},       /* the user's stale value is replaced */
              {"PHALANX_JOB_ID", "10058"},     {"SLURM_JOB_NODELIST", "gpu[0001-0002]"},
              {"SLURM_TASKS_PER_NODE", "1(x2)"}, {"SLURM_NNODES", "2"},
              {"SLURM_NTASKS", "2"},            {"SLURM_NTASKS_PER_NODE", "1"},
              {"SLURM_PROCID", "1"},            {"SLURM_LOCALID", "0"},
              {"SLURM_NODEID", "1"},            {"SLURM_JOB_CPUS_PER_NODE", "64(x2)"},
              {"SLURM_CPUS_PER_TASK", "64"},    {"SLURM_GPUS_ON_NODE", "2"},
              {"SLURM_JOB_GPUS", "2,5"},        {"CUDA_VISIBLE_DEVICES", "2,5"},
              {"GPU_DEVICE_ORDINAL", "2,5"},    {"SLURMD_NODENAME", "gpu0002"},
              {"SLURM_JOB_ACCOUNT", "llm"},     {"SLURM_JOB_PARTITION", "batch"},
              {"SLURM_SUBMIT_DIR", "/home/a"},  {"SLURM_NODE_ALIASES", "(null)"},
              {"MASTER_ADDR", "10.77.0.2"},     {"MASTER_PORT", "30058"}, /* 20000 + 10058 % 20000 */
              {"WORLD_SIZE", "2"},              {"RANK", "1"},
              {"LOCAL_RANK", "0"},              {"LOCAL_WORLD_SIZE", "1"},
              {"SLURM_GTIDS", "1"},             {"SLURM_STEP_ID", "0"},
              {"PATH", "/usr/bin:/bin"},        {"SLURM_CLUSTER_NAME", "bench"}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const char *got = px_jobenv_get(&e, want[i].k);
    if (!got || strcmp(got, want[i].v) != 0) fail_msg("%s=%s, want %s", want[i].k, got ? got : "(unset)", want[i].v);
  }
  assert_null(px_jobenv_get(&e, "SLURM_ARRAY_JOB_ID"));
  px_strvec_free_all(&e);
}

static void batch_env_renumbered_array(void **state) {
  (void)state;
  struct px_launch l = gang();
  l.node_rank = 0;
  l.array_job_id = 10059;
  l.array_task_id = 1;
  l.ntasks = 1;
  l.nnodes = 1;
  struct px_jobenv_site site = {NULL, "gpu0001", true, NULL, 0, NULL};
  struct px_task_ident t = {.batch = true, .local_tasks = 1};
  struct px_strvec e = {0};
  assert_int_equal(px_jobenv_build(&l, &site, &t, &e), 0);
  assert_string_equal(px_jobenv_get(&e, "CUDA_VISIBLE_DEVICES"), "0,1"); /* constrained: renumbered */
  assert_string_equal(px_jobenv_get(&e, "SLURM_JOB_GPUS"), "2,5");       /* physical */
  assert_string_equal(px_jobenv_get(&e, "SLURM_ARRAY_JOB_ID"), "10059");
  assert_string_equal(px_jobenv_get(&e, "SLURM_ARRAY_TASK_ID"), "1");
  assert_string_equal(px_jobenv_get(&e, "SLURM_GTIDS"), "0");
  assert_string_equal(px_jobenv_get(&e, "ENVIRONMENT"), "BATCH");
  assert_null(px_jobenv_get(&e, "SLURM_NTASKS")); /* one task: Slurm leaves it out */
  assert_null(px_jobenv_get(&e, "SLURM_STEP_ID"));
  px_strvec_free_all(&e);
  l.ngpus = 0;
  assert_int_equal(px_jobenv_build(&l, &site, &t, &e), 0);
  assert_null(px_jobenv_get(&e, "CUDA_VISIBLE_DEVICES"));
  px_strvec_free_all(&e);
}

static void output_patterns(void **state) {
  (void)state;
  struct px_launch l = gang();
  char buf[256];
  assert_int_equal(px_outpath_expand(NULL, &l, "gpu0001", 0, buf, sizeof buf), 0);
  assert_string_equal(buf, "/home/a/w/slurm-10058.out");
  px_outpath_expand("/o/%x-%u-%N-%t-%%-%6j.%q", &l, "gpu0001", 3, buf, sizeof buf);
  assert_string_equal(buf, "/o/gangenv-alice-gpu0001-3-%-010058.%q");
  l.array_job_id = 10059;
  l.array_task_id = 2;
  l.job_id = 10061;
  px_outpath_expand(NULL, &l, "gpu0001", 0, buf, sizeof buf);
  assert_string_equal(buf, "/home/a/w/slurm-10059_2.out");
  px_outpath_expand("out/%A.%a.%j", &l, "gpu0001", 0, buf, sizeof buf);
  assert_string_equal(buf, "/home/a/w/out/10059.2.10061");
  assert_int_equal(px_outpath_expand("%j", &l, "x", 0, buf, 8), PX_ERANGE);
}

/* A fractional job: its one GPU, the MPS limits cut from the GPU's memory,
 * and plainly whether MPS enforces them (docs/gpus.md). */
static void gpu_share_env(void **state) {
  (void)state;
  struct px_launch l = gang();
  uint32_t gpu = 3;
  l.node_rank = 0;
  l.nnodes = 1;
  l.ntasks = 1;
  l.gpus = &gpu;
  l.ngpus = 1;
  l.gpu_share = 50;
  struct px_jobenv_site site = {NULL, "gpu0001", false, NULL, 81920, NULL};
  struct px_task_ident t = {.batch = true, .local_tasks = 1};
  struct px_strvec e = {0};
  assert_int_equal(px_jobenv_build(&l, &site, &t, &e), 0);
  assert_string_equal(px_jobenv_get(&e, "CUDA_VISIBLE_DEVICES"), "3");
  assert_string_equal(px_jobenv_get(&e, "PHALANX_GPU_SHARE"), "0.50");
  assert_string_equal(px_jobenv_get(&e, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "50");
  assert_string_equal(px_jobenv_get(&e, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=40960MB");
  assert_non_null(strstr(px_jobenv_get(&e, "PHALANX_GPU_SHARE_ENFORCED"), "none: no CUDA MPS"));
  assert_null(px_jobenv_get(&e, "CUDA_MPS_PIPE_DIRECTORY"));
  px_strvec_free_all(&e);
  site.mps_pipe = "/var/lib/phalanx/mps/gpu3";
  l.gpu_share = 5;
  assert_int_equal(px_jobenv_build(&l, &site, &t, &e), 0);
  assert_string_equal(px_jobenv_get(&e, "CUDA_VISIBLE_DEVICES"), "0"); /* the daemon renumbers its one GPU */
  assert_string_equal(px_jobenv_get(&e, "SLURM_JOB_GPUS"), "3");
  assert_string_equal(px_jobenv_get(&e, "PHALANX_GPU_SHARE"), "0.05");
  assert_string_equal(px_jobenv_get(&e, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=4096MB");
  assert_string_equal(px_jobenv_get(&e, "CUDA_MPS_PIPE_DIRECTORY"), "/var/lib/phalanx/mps/gpu3");
  assert_non_null(strstr(px_jobenv_get(&e, "PHALANX_GPU_SHARE_ENFORCED"), "mps: "));
  px_strvec_free_all(&e);
}

/* MIG instances: CUDA_VISIBLE_DEVICES names the job's instances by UUID
 * (from the node's UUID file), SLURM_JOB_GPUS keeps the indices. */
static void mig_instances_by_uuid(void **state) {
  (void)state;
  char file[] = "/tmp/pxmigXXXXXX";
  int fd = mkstemp(file);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  for (int i = 0; i < 8; i++) fprintf(f, "MIG-fake-%d-%d\n", i / 2, i % 2);
  fclose(f);
  struct px_launch l = gang();
  struct px_jobenv_site site = {NULL, "gpu0001", false, file, 0, NULL};
  struct px_task_ident t = {.batch = true, .local_tasks = 1};
  struct px_strvec e = {0};
  assert_int_equal(px_jobenv_build(&l, &site, &t, &e), 0);
  assert_string_equal(px_jobenv_get(&e, "CUDA_VISIBLE_DEVICES"), "MIG-fake-1-0,MIG-fake-2-1");
  assert_string_equal(px_jobenv_get(&e, "SLURM_JOB_GPUS"), "2,5");
  px_strvec_free_all(&e);
  unlink(file);
}

/* -m: ranks per node, worked by hand. 7 tasks over 3 nodes of 3, 2, 2:
 * block 0-2 | 3-4 | 5-6; cyclic deals one at a time: 0,3,6 | 1,4 | 2,5;
 * plane=2 deals two at a time: 0,1,6 | 2,3 | 4,5. And the layout options
 * reach the environment as Slurm's batch shows them (the harness: --open-mode
 * as its letter). */
static void distributions_and_layout_env(void **state) {
  (void)state;
  static uint32_t counts[] = {3, 2, 2};
  static const struct {
    const char *dist;
    uint32_t want[3][3];
  } cases[] = {{NULL, {{0, 1, 2}, {3, 4}, {5, 6}}},
               {"block:cyclic", {{0, 1, 2}, {3, 4}, {5, 6}}},
               {"cyclic", {{0, 3, 6}, {1, 4}, {2, 5}}},
               {"cyclic:block,Pack", {{0, 3, 6}, {1, 4}, {2, 5}}},
               {"plane=2", {{0, 1, 6}, {2, 3}, {4, 5}}}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (uint32_t node = 0; node < 3; node++)
      for (uint32_t k = 0; k < counts[node]; k++) {
        struct px_launch l = {.nnodes = 3, .node_rank = node, .ntasks = 7, .tasks_per_node = counts,
                              .distribution = (char *)cases[c].dist};
        uint32_t got = px_jobenv_proc_id(&l, k);
        if (got != cases[c].want[node][k])
          fail_msg("%s: node %u task %u is rank %u, want %u", cases[c].dist ? cases[c].dist : "block", node, k, got,
                   cases[c].want[node][k]);
      }
  struct px_launch l = gang();
  l.open_mode = "append", l.hint = "nomultithread", l.distribution = "cyclic", l.cpus_per_gpu = 2;
  struct px_jobenv_site site = {"bench", "gpu0002", false, NULL, 0, NULL};
  struct px_task_ident t = {.local_id = 0, .proc_id = 1, .local_tasks = 1, .batch = true};
  struct px_strvec e = {0};
  assert_int_equal(px_jobenv_build(&l, &site, &t, &e), 0);
  assert_string_equal(px_jobenv_get(&e, "SLURM_OPEN_MODE"), "a");
  assert_string_equal(px_jobenv_get(&e, "SLURM_HINT"), "nomultithread");
  assert_string_equal(px_jobenv_get(&e, "SLURM_DISTRIBUTION"), "cyclic");
  assert_string_equal(px_jobenv_get(&e, "SLURM_CPUS_PER_GPU"), "2");
  px_strvec_free_all(&e);
  l = gang(); /* not given: not set, as Slurm */
  assert_int_equal(px_jobenv_build(&l, &site, &t, &e), 0);
  assert_null(px_jobenv_get(&e, "SLURM_OPEN_MODE"));
  assert_null(px_jobenv_get(&e, "SLURM_DISTRIBUTION"));
  px_strvec_free_all(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hostlists),
      cmocka_unit_test(gang_task_env),
      cmocka_unit_test(batch_env_renumbered_array),
      cmocka_unit_test(output_patterns),
      cmocka_unit_test(mig_instances_by_uuid), cmocka_unit_test(gpu_share_env),
      cmocka_unit_test(distributions_and_layout_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
