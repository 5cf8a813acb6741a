/*
 * Realistic multi-file configurations parsed from disk: the 1,024-node
 * tests/data/conf/atlas (Include, AccountsFile=, topology.conf beside
 * slurm.conf, Include inside the accounts file) and examples/cluster. Every
 * expected number is counted by hand from those files; the comments say how.
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"

static struct px_conf *load(const char *rel, struct px_conf_diags *d) {
  char path[1024];
  const char *src = getenv("PX_SRC");
  snprintf(path, sizeof path, "%s/%s", src ? src : ".", rel);
  struct px_conf *c = NULL;
  int rc = px_conf_load(path, &c, d);
  for (size_t i = 0; rc && i < d->len; i++) {
    char line[1400];
    px_conf_msg_format(&d->v[i], line, sizeof line);
    print_error("%s\n", line);
  }
  assert_int_equal(rc, 0);
  assert_non_null(c);
  return c;
}

static void atlas_nodes(void **state) {
  (void)state;
  struct px_conf_diags d = {0};
  struct px_conf *c = load("tests/data/conf/atlas/slurm.conf", &d);
  assert_string_equal(c->cluster_name, "atlas"); /* ClusterName=Atlas, folded like Slurm */
  /* slurm.conf, nodes.conf, partitions.conf, topology.conf, accounts.conf, qos.conf */
  assert_int_equal(c->nfiles, 6);
  assert_non_null(strstr(c->files[1], "nodes.conf"));
  assert_non_null(strstr(c->files[5], "accounts/qos.conf"));
  /* 16 cpu + 896 h100 + 111 a100 + 1 a100 (gpu1008) */
  assert_int_equal(c->nnodes, 1024);
  const struct px_conf_node *cpu01 = &c->nodes[0], *g1 = &c->nodes[16], *g9 = &c->nodes[24];
  assert_string_equal(cpu01->name, "cpu01");
  assert_int_equal(cpu01->cpus, 128);
  assert_int_equal(cpu01->sockets, 1);
  assert_int_equal(cpu01->mem_mib, 512000);
  assert_int_equal(cpu01->ngpu, 0);
  assert_null(cpu01->gpu_type);
  assert_int_equal(cpu01->nfeatures, 2);
  assert_int_equal(cpu01->weight, 10);
  assert_string_equal(g1->name, "gpu0001");
  assert_int_equal(g1->sockets, 2);     /* Boards=1 x SocketsPerBoard=2 */
  assert_int_equal(g1->cpus, 192);      /* 2 x 48 x 2 */
  assert_int_equal(g1->mem_mib, 2000000);
  assert_int_equal(g1->ngpu, 8);
  assert_string_equal(g1->gpu_type, "h100");
  assert_int_equal(g1->gpu_groups, 2);
  assert_int_equal(g1->nfeatures, 3);
  assert_string_equal(g1->features[2], "nvlink");
  assert_string_equal(g1->addr, "10.1.1.1");   /* 10.1.[1-112].[1-8]: the last group fastest */
  assert_string_equal(g9->addr, "10.1.2.1");   /* gpu0009 starts rack 2 */
  assert_string_equal(c->nodes[911].addr, "10.1.112.8"); /* gpu0896 */
  const struct px_conf_node *a1 = &c->nodes[912], *last = &c->nodes[1023];
  assert_string_equal(a1->name, "gpu0897");
  assert_string_equal(a1->gpu_type, "a100");
  assert_null(a1->addr);
  assert_int_equal(a1->mem_mib, 1000000);
  assert_int_equal(a1->state, PX_NODE_CONF_UP);
  assert_string_equal(last->name, "gpu1008");
  assert_int_equal(last->state, PX_NODE_CONF_DRAIN);
  uint64_t cpus = 0, gpus = 0;
  for (uint32_t i = 0; i < c->nnodes; i++) cpus += c->nodes[i].cpus, gpus += c->nodes[i].ngpu;
  assert_int_equal(cpus, 195584); /* 16 x 128 + 1008 x 192 */
  assert_int_equal(gpus, 8064);   /* 1008 x 8 */
  /* 12 ignored Slurm keys, each once: 9 in slurm.conf, Reason, LinkSpeed, Description */
  assert_int_equal(d.nwarnings, 12);
  assert_int_equal(d.nerrors, 0);
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

static void atlas_partitions(void **state) {
  (void)state;
  struct px_conf_diags d = {0};
  struct px_conf *c = load("tests/data/conf/atlas/slurm.conf", &d);
  assert_int_equal(c->npartitions, 4);
  assert_int_equal(c->default_partition, 0);
  const struct px_conf_partition *batch = &c->partitions[0], *a100 = &c->partitions[1],
                                 *cpu = &c->partitions[2], *urg = &c->partitions[3];
  assert_string_equal(batch->name, "batch");
  assert_true(batch->is_default);
  assert_int_equal(batch->nnodes, 896);
  assert_int_equal(batch->nodes[0], 16);   /* gpu0001 follows the 16 cpu nodes */
  assert_int_equal(batch->nodes[895], 911);
  assert_int_equal(batch->max_time_s, 604800);    /* 7-0 */
  assert_int_equal(batch->default_time_s, 14400); /* 4:00:00 */
  assert_int_equal(batch->preempt_mode, PX_PREEMPT_REQUEUE); /* the global PreemptMode */
  assert_null(batch->allow_accounts);
  assert_string_equal(a100->name, "a100");
  assert_false(a100->is_default);
  assert_int_equal(a100->nnodes, 112);
  assert_int_equal(a100->max_time_s, 172800);   /* PartitionName=DEFAULT MaxTime=2-0 */
  assert_int_equal(a100->default_time_s, 3600); /* DEFAULT DefaultTime=1:00:00 */
  assert_int_equal(a100->preempt_mode, PX_PREEMPT_CANCEL);
  assert_int_equal(a100->nallow_accounts, 2);
  assert_int_equal(a100->allow_accounts[0], 2); /* vision, then speech, in tree order (see below) */
  assert_int_equal(a100->allow_accounts[1], 6);
  assert_int_equal(cpu->max_time_s, PX_TIME_UNLIMITED);
  assert_int_equal(cpu->oversubscribe, PX_OVERSUB_YES);
  assert_int_equal(cpu->max_nodes, 4);
  assert_int_equal(cpu->nodes[15], 15);
  assert_int_equal(urg->nnodes, 136); /* 128 H100 + 8 A100 */
  assert_int_equal(urg->nodes[127], 143);
  assert_int_equal(urg->nodes[128], 912);
  assert_int_equal(urg->priority_tier, 10);
  assert_int_equal(urg->priority_job_factor, 10);
  assert_int_equal(urg->max_nodes, 16);
  assert_int_equal(urg->max_time_s, 43200);
  assert_int_equal(urg->preempt_mode, PX_PREEMPT_OFF);
  assert_true(urg->exclusive_account);
  assert_int_equal(urg->nallow_qos, 2);
  assert_int_equal(urg->allow_qos[0], 2); /* high */
  assert_int_equal(urg->allow_qos[1], 3); /* urgent */
  assert_int_equal(urg->ndeny_accounts, 1);
  assert_int_equal(urg->deny_accounts[0], 24); /* guests */
  for (uint32_t p = 0; p < c->npartitions; p++) /* node arrays ascend */
    for (uint32_t i = 1; i < c->partitions[p].nnodes; i++)
      assert_true(c->partitions[p].nodes[i - 1] < c->partitions[p].nodes[i]);
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

static void atlas_topology(void **state) {
  (void)state;
  struct px_conf_diags d = {0};
  struct px_conf *c = load("tests/data/conf/atlas/slurm.conf", &d);
  assert_int_equal(c->nswitches, 38); /* leaf01-36 and two islands */
  const struct px_conf_switch *leaf01 = &c->switches[0], *leaf36 = &c->switches[35];
  const struct px_conf_switch *h100 = &c->switches[36], *a100 = &c->switches[37];
  assert_string_equal(leaf01->name, "leaf01");
  assert_int_equal(leaf01->level, 0);
  assert_int_equal(leaf01->nnodes, 32);
  assert_int_equal(leaf01->nodes[0], 16);
  assert_int_equal(leaf01->parent, 36);
  assert_int_equal(leaf36->nnodes, 16);
  assert_int_equal(leaf36->parent, 37);
  assert_string_equal(h100->name, "island-h100");
  assert_int_equal(h100->level, 1);
  assert_int_equal(h100->nchildren, 28);
  assert_int_equal(h100->parent, PX_NONE);
  assert_int_equal(a100->nchildren, 8);   /* leaf29-35 (A100) and leaf36 (CPU) */
  assert_int_equal(c->nodes[0].leaf_switch, 35);   /* cpu01 */
  assert_int_equal(c->nodes[16].leaf_switch, 0);   /* gpu0001 */
  assert_int_equal(c->nodes[48].leaf_switch, 1);   /* gpu0033 */
  assert_int_equal(c->nodes[1023].leaf_switch, 34); /* gpu1008: leaf35 = gpu[0993-1008] */
  assert_int_equal(c->nblocks, 56);                /* 896 / 16 */
  assert_int_equal(c->blocks[55].nnodes, 16);
  assert_int_equal(c->nodes[16].block, 0);
  assert_int_equal(c->nodes[911].block, 55);
  assert_int_equal(c->nodes[912].block, PX_NONE);
  assert_int_equal(c->nodes[0].block, PX_NONE);
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

static void atlas_scheduling_and_phalanx_keys(void **state) {
  (void)state;
  struct px_conf_diags d = {0};
  struct px_conf *c = load("tests/data/conf/atlas/slurm.conf", &d);
  const struct px_conf_sched *s = &c->sched;
  assert_string_equal(s->scheduler_type, "sched/backfill");
  assert_int_equal(s->backfill, PX_BACKFILL_EASY);
  assert_int_equal(s->order, PX_ORDER_MULTIFACTOR);
  assert_int_equal(s->decay_half_life_s, 1209600); /* 14-0 */
  assert_int_equal(s->max_age_s, 604800);
  assert_int_equal(s->weight_fairshare, 100000);
  assert_int_equal(s->weight_jobsize, 0);
  assert_int_equal(s->weight_qos, 20000);
  assert_int_equal(s->weight_tres_cpu, 100);
  assert_int_equal(s->weight_tres_gpu, 5000);
  assert_int_equal(s->weight_tres, 5100);
  assert_string_equal(s->preempt_type, "preempt/qos");
  assert_int_equal(s->preempt_mode, PX_PREEMPT_REQUEUE);
  assert_true(s->billing_weight_cpu > 0.099 && s->billing_weight_cpu < 0.101);
  assert_true(s->billing_weight_mem_gib > 0.049 && s->billing_weight_mem_gib < 0.051); /* 0.05G: per GiB */
  assert_true(s->billing_weight_gpu > 3.99 && s->billing_weight_gpu < 4.01);
  assert_int_equal(s->placement, PX_PLACE_PACK);
  const struct px_conf_phalanx *p = &c->phalanx;
  assert_string_equal(p->state_dir, "/var/lib/phalanx/atlas");
  assert_string_equal(p->store_url, "postgresql://phalanx@db.atlas/phalanx");
  assert_string_equal(p->listen, "0.0.0.0:6817");
  assert_string_equal(p->socket_path, "/run/phalanx/atlas.sock");
  assert_int_equal(p->heartbeat_interval_s, 15);
  assert_int_equal(p->node_down_timeout_s, 120);
  assert_int_equal(p->kill_wait_s, 60);
  assert_true(p->private_jobs);
  assert_false(p->allow_root_jobs);
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

/* The tree in depth-first pre-order, worked out from accounts.conf by hand. */
static void atlas_accounts_and_qos(void **state) {
  (void)state;
  struct px_conf_diags d = {0};
  struct px_conf *c = load("tests/data/conf/atlas/slurm.conf", &d);
  static const struct {
    const char *name;
    uint32_t parent;
    bool user;
  } want[] = {
      {"root", PX_NONE, false}, {"research", 0, false}, {"vision", 1, false}, {"alice", 2, true},
      {"bob", 2, true},         {"erin", 2, true},      {"speech", 1, false}, {"frank", 6, true},
      {"grace", 6, true},       {"llm", 1, false},      {"heidi", 9, true},   {"ivan", 9, true},
      {"judy", 9, true},        {"bob", 9, true},       {"engineering", 0, false}, {"infra", 14, false},
      {"mallory", 15, true},    {"oscar", 15, true},    {"platform", 14, false}, {"peggy", 18, true},
      {"ops", 0, false},        {"oncall", 20, false},  {"trent", 21, true},  {"oscar", 21, true},
      {"guests", 0, false},     {"victor", 24, true},
  };
  assert_int_equal(c->naccounts, sizeof want / sizeof want[0]);
  for (uint32_t i = 0; i < c->naccounts; i++) {
    assert_string_equal(c->accounts[i].name, want[i].name);
    assert_int_equal(c->accounts[i].parent, want[i].parent);
    assert_int_equal(c->accounts[i].is_user, want[i].user);
  }
  const struct px_conf_account *a = c->accounts;
  assert_int_equal(a[3].fairshare, 2);  /* User=alice Account=vision Fairshare=2 */
  assert_int_equal(a[4].fairshare, 1);  /* bob under vision: the default share */
  assert_int_equal(a[13].fairshare, 3);
  assert_int_equal(a[13].max_jobs, 20);
  assert_true(a[13].is_default_account);  /* DefaultAccount=llm */
  assert_false(a[4].is_default_account);
  assert_true(a[3].is_default_account);   /* alice's only account */
  assert_true(a[23].is_default_account);  /* oscar: DefaultAccount=oncall */
  assert_false(a[17].is_default_account);
  assert_int_equal(a[2].fairshare, 40);
  assert_int_equal(a[2].grp_gpus, 2048);
  assert_int_equal(a[2].grp_cpus, 65536);
  assert_int_equal(a[2].grp_mem_mib, PX_NOLIMIT);
  assert_int_equal(a[2].max_jobs, 100);
  assert_int_equal(a[2].ncoordinators, 1);
  assert_string_equal(a[2].coordinators[0], "carol");
  assert_int_equal(a[2].guaranteed_gpus, 1024);
  assert_string_equal(a[2].cohort, "ml");
  assert_int_equal(a[2].borrow_limit_gpus, 512);
  assert_int_equal(a[2].lend_limit_gpus, 256);
  assert_int_equal(a[9].max_gpus_per_job, 1024);
  assert_int_equal(a[9].lend_limit_gpus, 0);
  assert_int_equal(a[9].borrow_limit_gpus, PX_NOLIMIT);
  assert_int_equal(a[1].grp_gpus, 6000);
  assert_int_equal(a[24].grp_mem_mib, 4194304); /* mem=4T */
  assert_int_equal(a[24].grp_nodes, 4);
  assert_int_equal(a[24].max_submit_jobs, 50);
  assert_string_equal(a[0].default_qos, "normal");
  assert_string_equal(a[21].default_qos, "high"); /* oncall inherits from ops */
  assert_string_equal(a[22].default_qos, "high"); /* and trent from oncall */
  assert_int_equal(c->nqos, 4);
  const struct px_conf_qos *q = c->qos;
  assert_string_equal(q[0].name, "normal");
  assert_int_equal(q[0].priority, 100);
  assert_int_equal(q[0].max_gpus_per_user, 256);
  assert_int_equal(q[0].preempt_mode, PX_PREEMPT_REQUEUE); /* cluster's */
  assert_string_equal(q[2].name, "high");
  assert_int_equal(q[2].npreempt, 2);
  assert_int_equal(q[2].preempt[0], 1); /* low */
  assert_int_equal(q[2].preempt[1], 0); /* normal */
  assert_int_equal(q[2].grace_time_s, 120);
  assert_int_equal(q[2].min_runtime_s, 1800); /* PreemptExemptTime=30 minutes */
  assert_int_equal(q[2].max_gpus_per_user, 64);
  assert_int_equal(q[2].max_jobs_per_user, 10);
  assert_int_equal(q[2].max_wall_s, 172800);
  assert_true(q[2].usage_factor > 1.99 && q[2].usage_factor < 2.01);
  assert_int_equal(q[3].preempt_mode, PX_PREEMPT_CANCEL);
  assert_int_equal(q[3].npreempt, 3);
  assert_int_equal(q[3].max_submit_per_user, 5);
  assert_true(q[1].usage_factor > 0.49 && q[1].usage_factor < 0.51);
  assert_int_equal(q[1].max_wall_s, PX_TIME_UNLIMITED);
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

static void example_dev_cluster(void **state) {
  (void)state;
  struct px_conf_diags d = {0};
  struct px_conf *c = load("examples/cluster/slurm.conf", &d);
  assert_string_equal(c->cluster_name, "dev");
  assert_int_equal(c->nnodes, 4);
  for (uint32_t i = 0; i < 4; i++) {
    assert_int_equal(c->nodes[i].ngpu, 8);
    assert_int_equal(c->nodes[i].gpu_groups, 2);
    assert_int_equal(c->nodes[i].cpus, 32); /* 2 x 16 x 1 */
    assert_int_equal(c->nodes[i].mem_mib, 131072);
    assert_string_equal(c->nodes[i].addr, "127.0.0.1");
    assert_int_equal(c->nodes[i].block, i / 2);
    assert_int_equal(c->nodes[i].leaf_switch, i / 2);
  }
  assert_int_equal(c->npartitions, 2);
  assert_int_equal(c->default_partition, 0);
  assert_int_equal(c->partitions[1].nnodes, 2);
  assert_int_equal(c->partitions[1].nodes[0], 2);
  assert_int_equal(c->partitions[1].nallow_qos, 2); /* high and normal: indexes 0 and 2, sorted */
  assert_int_equal(c->partitions[1].allow_qos[0], 0);
  assert_int_equal(c->partitions[1].allow_qos[1], 2);
  assert_int_equal(c->switches[2].level, 1);
  /* root, research, vision(alice, bob), speech(carol, bob), ops(root, dave) */
  assert_int_equal(c->naccounts, 11);
  assert_string_equal(c->accounts[5].name, "speech");
  assert_true(c->accounts[7].is_default_account);  /* bob: DefaultAccount=speech */
  assert_false(c->accounts[4].is_default_account);
  assert_string_equal(c->accounts[8].name, "ops");
  assert_string_equal(c->accounts[10].default_qos, "high");
  assert_int_equal(c->nqos, 3);
  assert_string_equal(c->phalanx.listen, "127.0.0.1:41017");
  assert_string_equal(c->phalanx.socket_path, "/tmp/phalanx-dev/phalanx.sock"); /* derived from StateDir */
  assert_true(c->phalanx.allow_root_jobs);
  assert_int_equal(d.nwarnings, 3);
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

/* The real Slurm harness's slurm.conf (tests/data/conf/slurm-bench): warnings only. */
static void slurm_harness_file(void **state) {
  (void)state;
  struct px_conf_diags d = {0};
  struct px_conf *c = load("tests/data/conf/slurm-bench/slurm.conf", &d);
  assert_int_equal(d.nerrors, 0);
  /* 40 global keys, NodeHostname and Port, PlugStackConfig: each once (MailProg is used) */
  assert_int_equal(d.nwarnings, 43);
  assert_string_equal(c->phalanx.mail_prog, "/bin/true");
  assert_int_equal(c->nnodes, 64);
  assert_string_equal(c->nodes[63].name, "gpu0064");
  assert_int_equal(c->nodes[0].cpus, 64);     /* CPUs=64 = Boards 1 x SocketsPerBoard 2 x 32 cores */
  assert_int_equal(c->nodes[0].sockets, 2);
  assert_int_equal(c->nodes[0].mem_mib, 1024000);
  assert_int_equal(c->nodes[0].ngpu, 8);
  assert_string_equal(c->nodes[0].addr, "127.0.0.1");
  assert_int_equal(c->npartitions, 2);
  assert_int_equal(c->default_partition, 0);
  assert_int_equal(c->partitions[0].max_time_s, 604800);
  assert_int_equal(c->partitions[0].default_time_s, 3600); /* DefaultTime=60 minutes */
  assert_int_equal(c->partitions[0].preempt_mode, PX_PREEMPT_REQUEUE);
  assert_int_equal(c->partitions[1].priority_tier, 2);
  assert_int_equal(c->partitions[1].preempt_mode, PX_PREEMPT_OFF);
  assert_int_equal(c->partitions[1].nnodes, 64);  /* Nodes=ALL */
  assert_int_equal(c->sched.decay_half_life_s, 86400);
  assert_int_equal(c->sched.max_age_s, 86400);
  assert_int_equal(c->sched.weight_jobsize, 1000);
  assert_string_equal(c->sched.preempt_type, "preempt/partition_prio");
  assert_int_equal(c->phalanx.node_down_timeout_s, 300);
  assert_int_equal(c->phalanx.kill_wait_s, 5);
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(atlas_nodes),
      cmocka_unit_test(atlas_partitions),
      cmocka_unit_test(atlas_topology),
      cmocka_unit_test(atlas_scheduling_and_phalanx_keys),
      cmocka_unit_test(atlas_accounts_and_qos),
      cmocka_unit_test(example_dev_cluster),
      cmocka_unit_test(slurm_harness_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
