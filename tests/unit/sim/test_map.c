/*
 * test_map.c - the cluster shorthand and the mapping rules from trace jobs
 * to core jobs: accounts, limits, node counts, skipped jobs, arrival order.
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jobspec.h"
#include "sim/cluster.h"
#include "sim/sim.h"

static void test_cluster_parse(void **state) {
  (void)state;
  uint32_t n, g;
  struct px_diag d;
  assert_int_equal(px_sim_cluster_parse("256x8", &n, &g, &d), 0);
  assert_int_equal(n, 256);
  assert_int_equal(g, 8);
  assert_int_equal(px_sim_cluster_parse("64x", &n, &g, &d), PX_EINVAL);
  assert_int_equal(px_sim_cluster_parse("x8", &n, &g, &d), PX_EINVAL);
  assert_int_equal(px_sim_cluster_parse("0x8", &n, &g, &d), PX_EINVAL);
  assert_int_equal(px_sim_cluster_parse("4x65", &n, &g, &d), PX_EINVAL);
  assert_int_equal(px_sim_cluster_parse("-4x8", &n, &g, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "NODESxGPUS"));
}

/* 70 nodes: leaves of 32, 32 and 6 nodes under one spine; accounts a, b with user leaves. */
static void test_cluster_build(void **state) {
  (void)state;
  const char *acc[] = {"a", "b"};
  struct px_conf *c = px_sim_cluster_new(70, 4, acc, 2, NULL);
  assert_non_null(c);
  assert_int_equal(c->nnodes, 70);
  assert_int_equal(c->nodes[69].ngpu, 4);
  assert_int_equal(c->nodes[69].cpus, 64);
  assert_int_equal(c->nodes[69].mem_mib, 1024u * 1024u);
  assert_int_equal(c->nswitches, 4);
  assert_int_equal(c->switches[2].nnodes, 6);
  assert_int_equal(c->nodes[64].leaf_switch, 2);
  assert_int_equal(c->switches[0].parent, 3);
  assert_string_equal(c->switches[3].name, "spine");
  assert_int_equal(c->switches[3].nchildren, 3);
  assert_int_equal(c->npartitions, 1);
  assert_int_equal(c->partitions[0].nnodes, 70);
  assert_int_equal(c->naccounts, 5); /* root, a, a(user), b, b(user) */
  assert_string_equal(c->accounts[3].name, "b");
  assert_true(c->accounts[4].is_user);
  assert_int_equal(c->accounts[4].parent, 3);
  px_conf_free(c);
  /* Queue names become account names in configuration text: plain words only. */
  const char *bad[] = {"ok", "two words"};
  struct px_diag d;
  assert_null(px_sim_cluster_new(2, 8, bad, 2, &d));
  assert_string_equal(d.msg, "queue 'two words' cannot be an account name (letters, digits, _ - . only)");
  /* One leaf: no spine. */
  c = px_sim_cluster_new(1, 8, acc, 1, NULL);
  assert_int_equal(c->nswitches, 1);
  assert_int_equal(c->switches[0].parent, PX_NONE);
  px_conf_free(c);
}

/*
 * Cluster 4x8 = 32 GPUs. Expected by the rules in map.c:
 *  j1  5 GPUs, no nodes     -> 1 node; limit ceil(100 x 2 / 60) = 4 min = 240 s
 *  j2 12 GPUs               -> ceil(12/8) = 2 nodes; limit 2 x 3600 = 7200 s
 *  j3 40 GPUs               -> skipped: more GPUs than the cluster
 *  j4  8 GPUs on 5 nodes    -> skipped: more nodes than the cluster
 *  j5 16 GPUs on 1 node     -> skipped: 16 per node > 8
 *  j6  1 GPU, limit 50 s    -> the trace's limit kept; submitted at 0, so first
 *  j7  0.5 GPU, 10 s        -> 1 GPU, limit 60 s (at least a minute), queue "" -> default
 */
static void test_mapping_rules(void **state) {
  (void)state;
  const char *text =
      "job_id,submit_s,duration_s,gpus,nodes,user,queue,status,time_limit_s\n"
      "j1,10,100,5,,,vcB,,\n"
      "j2,10,3600,12,,,vcA,,\n"
      "j3,20,1,40,,,vcA,,\n"
      "j4,20,1,8,5,,vcA,,\n"
      "j5,20,1,16,1,,vcA,,\n"
      "j6,0,100,1,,,vcA,,50\n"
      "j7,30,10,0.5,,,,,\n";
  struct px_trace t;
  assert_int_equal(px_trace_parse(&t, text, strlen(text), NULL), 0);
  const char **names;
  uint32_t n;
  assert_int_equal(px_sim_trace_accounts(&t, &names, &n), 0);
  assert_int_equal(n, 3);
  assert_string_equal(names[0], "default");
  assert_string_equal(names[1], "vcA");
  assert_string_equal(names[2], "vcB");
  struct px_conf *c = px_sim_cluster_new(4, 8, names, n, NULL);
  free(names);
  struct px_sim_setup s;
  struct px_diag d;
  if (px_sim_setup_init(&s, &t, c, 2.0, &d)) fail_msg("%s", d.msg);
  assert_int_equal(s.total_gpus, 32);
  /* Sorted by submit, then line: j6(0) j1(10) j2(10) j3 j4 j5(20) j7(30). */
  const char *order[] = {"j6", "j1", "j2", "j3", "j4", "j5", "j7"};
  for (int i = 0; i < 7; i++)
    assert_string_equal(px_trace_id(&t, &t.jobs.v[s.jobs[i].trace_index]), order[i]);
  assert_int_equal(s.jobs[0].limit_s, 50);
  assert_int_equal(s.jobs[1].nodes, 1);
  assert_int_equal(s.jobs[1].limit_s, 240);
  assert_int_equal(s.jobs[1].account, 2);
  assert_int_equal(s.jobs[2].nodes, 2);
  assert_int_equal(s.jobs[2].limit_s, 7200);
  assert_int_equal(s.jobs[3].skip, PX_SIM_SKIP_TOO_MANY_GPUS);
  assert_int_equal(s.jobs[4].skip, PX_SIM_SKIP_TOO_MANY_NODES);
  assert_int_equal(s.jobs[5].skip, PX_SIM_SKIP_GPUS_PER_NODE);
  assert_int_equal(s.jobs[6].gpus, 1);
  assert_int_equal(s.jobs[6].limit_s, 60);
  assert_int_equal(s.jobs[6].account, 0);
  assert_int_equal(s.nskipped[PX_SIM_RUNS], 4);
  assert_int_equal(s.nskipped[PX_SIM_SKIP_TOO_MANY_GPUS] + s.nskipped[PX_SIM_SKIP_TOO_MANY_NODES] +
                       s.nskipped[PX_SIM_SKIP_GPUS_PER_NODE],
                   3);
  assert_int_equal(s.account_assoc[1], 4); /* root, default, default(user), vcA, vcA(user) */
  px_sim_setup_fini(&s);
  assert_int_equal(px_sim_setup_init(&s, &t, c, 0.5, &d), PX_EINVAL);
  px_conf_free(c);
  /* A cluster without the trace's accounts is refused, naming the queue. */
  const char *other[] = {"x"};
  c = px_sim_cluster_new(4, 8, other, 1, NULL);
  assert_int_equal(px_sim_setup_init(&s, &t, c, 2.0, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "'default'"));
  px_conf_free(c);
  px_trace_fini(&t);
}

/* The recorded user: a job runs under its user's association when the
 * accounts tree has that user under its account, else under the account's
 * first user (bob is not in ops, carol nowhere, j4 names nobody). */
static void test_recorded_user(void **state) {
  (void)state;
  const struct px_conf_text ct = {
      .slurm = "NodeName=n[1-2] CPUs=8 Gres=gpu:8\nPartitionName=batch Nodes=ALL Default=YES\n",
      .accounts = "Account=ops Users=alice,dave\nAccount=vision Users=bob\n"};
  struct px_conf *c = NULL;
  assert_int_equal(px_conf_parse_text(&ct, &c, NULL), 0);
  const char *text = "job_id,submit_s,duration_s,gpus,nodes,user,queue,status\n"
                     "j1,0,10,1,,dave,ops,\nj2,1,10,1,,bob,ops,\nj3,2,10,1,,carol,ops,\n"
                     "j4,3,10,1,,,ops,\nj5,4,10,1,,bob,vision,\nj6,5,10,1,,dave,ops,\n";
  struct px_trace t;
  assert_int_equal(px_trace_parse(&t, text, strlen(text), NULL), 0);
  struct px_sim_setup s;
  struct px_diag d;
  if (px_sim_setup_init(&s, &t, c, 2.0, &d)) fail_msg("%s", d.msg);
  const char *expect[] = {"dave", "alice", "alice", "alice", "bob", "dave"};
  for (uint32_t i = 0; i < s.njobs; i++) {
    const struct px_conf_account *a = &c->accounts[s.jobs[i].assoc];
    assert_true(a->is_user);
    assert_string_equal(a->name, expect[i]);
    assert_string_equal(c->accounts[a->parent].name, i == 4 ? "vision" : "ops");
  }
  px_sim_setup_fini(&s);
  px_trace_fini(&t);
  px_conf_free(c);
}

/* The name a job is submitted under: its trace name when it runs as its
 * recorded user, qualified by that user when the accounts tree lacks them
 * under its account (so another user's namesake does not hold a
 * singleton); none without a name. */
static void test_job_names(void **state) {
  (void)state;
  const struct px_conf_text ct = {
      .slurm = "NodeName=n[1-2] CPUs=8 Gres=gpu:8\nPartitionName=batch Nodes=ALL Default=YES\n",
      .accounts = "Account=ops Users=alice,dave\n"};
  struct px_conf *c = NULL;
  assert_int_equal(px_conf_parse_text(&ct, &c, NULL), 0);
  const char *text = "job_id,submit_s,duration_s,gpus,nodes,user,queue,status,name\n"
                     "j1,0,10,1,,dave,ops,,train\nj2,1,10,1,,carol,ops,,train\nj3,2,10,1,,,ops,,train\n"
                     "j4,3,10,1,,dave,ops,,\nj5,4,10,1,,dave,ops,,\"a,\"\"b\"\"\"\n";
  struct px_trace t;
  assert_int_equal(px_trace_parse(&t, text, strlen(text), NULL), 0);
  struct px_sim_setup s;
  struct px_diag d;
  if (px_sim_setup_init(&s, &t, c, 2.0, &d)) fail_msg("%s", d.msg);
  assert_string_equal(px_sim_job_name(&s, 0), "train");       /* runs as dave */
  assert_string_equal(px_sim_job_name(&s, 1), "carol/train"); /* runs as alice */
  assert_string_equal(px_sim_job_name(&s, 2), "train");       /* no recorded user */
  assert_null(px_sim_job_name(&s, 3));
  assert_string_equal(px_sim_job_name(&s, 4), "a,\"b\"");
  assert_ptr_equal(px_sim_job_name(&s, 0), px_sim_job_name(&s, 2)); /* one copy */
  struct px_jobspec spec;
  px_sim_job_spec(&s, 1, s.jobs[1].assoc, &spec);
  assert_string_equal(spec.name, "carol/train");
  assert_string_equal(spec.user, "alice");
  px_sim_setup_fini(&s);
  px_trace_fini(&t);
  /* a trace without names: none kept */
  const char *plain = "job_id,submit_s,duration_s,gpus,nodes,user,queue,status\nj,0,1,1,,,ops,\n";
  assert_int_equal(px_trace_parse(&t, plain, strlen(plain), NULL), 0);
  if (px_sim_setup_init(&s, &t, c, 2.0, &d)) fail_msg("%s", d.msg);
  assert_null(s.job_name);
  assert_null(px_sim_job_name(&s, 0));
  px_sim_setup_fini(&s);
  px_trace_fini(&t);
  px_conf_free(c);
}

/* --qos-map: first matching rule wins; queue names case-insensitive; errors name the rule. */
static void test_qos_map(void **state) {
  (void)state;
  const char *text =
      "job_id,submit_s,duration_s,gpus,nodes,user,queue,status\n"
      "a,0,10,1,,,vcA,\n"  /* gpus<=1 -> normal (rule 3) */
      "b,1,10,16,,,vcA,\n" /* gpus>=9 -> high (rule 2) */
      "c,2,10,1,,,vcB,\n"  /* queue vcB -> high (rule 1, before rule 3) */
      "d,3,10,4,,,vcA,\n"; /* no rule: the account's default */
  struct px_trace t;
  assert_int_equal(px_trace_parse(&t, text, strlen(text), NULL), 0);
  const char **names;
  uint32_t n;
  assert_int_equal(px_sim_trace_accounts(&t, &names, &n), 0);
  struct px_conf *c = px_sim_cluster_new(4, 8, names, n, NULL);
  free(names);
  assert_int_not_equal(px_conf_find_qos(c, PX_SIM_HIGH_QOS), PX_NONE);
  struct px_sim_setup s;
  struct px_diag d;
  if (px_sim_setup_init(&s, &t, c, 2.0, &d)) fail_msg("%s", d.msg);
  for (uint32_t i = 0; i < s.njobs; i++) assert_int_equal(s.jobs[i].qos, 0);
  if (px_sim_setup_qos(&s, "queue=VCB:high,gpus>=9:high,gpus<=1:normal", &d)) fail_msg("%s", d.msg);
  assert_int_equal(s.nqos_rules, 3);
  assert_int_equal(s.jobs[0].qos, 3);
  assert_int_equal(s.jobs[1].qos, 2);
  assert_int_equal(s.jobs[2].qos, 1);
  assert_int_equal(s.jobs[3].qos, 0);
  assert_string_equal(s.qos_names[0], "high");
  assert_string_equal(s.qos_names[2], "normal");
  assert_int_equal(s.qos_jobs[0] + s.qos_jobs[1] + s.qos_jobs[2], 3);
  static const struct {
    const char *spec, *msg;
  } bad[] = {
      {"gpus>=9", "--qos-map rule 1 'gpus>=9': expected RULE:QOS, e.g. gpus>=9:high"},
      {"gpus>=9:high,queue=vcC:high", "--qos-map rule 2: the trace has no queue 'vcC'"},
      {"gpus>9:high", "--qos-map rule 1 'gpus>9': expected queue=NAME, gpus>=N or gpus<=N"},
      {"gpus>=x:high", "--qos-map rule 1 'gpus>=x': expected queue=NAME, gpus>=N or gpus<=N"},
      {"gpus<=2:vip", "--qos-map rule 1 'gpus<=2:vip': the cluster has no QoS 'vip'"},
      {"queue=:high", "--qos-map rule 1: queue= needs a queue name"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(px_sim_setup_qos(&s, bad[i].spec, &d), PX_EINVAL);
    assert_string_equal(d.msg, bad[i].msg);
  }
  px_sim_setup_fini(&s);
  px_conf_free(c);
  px_trace_fini(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cluster_parse),
      cmocka_unit_test(test_cluster_build),
      cmocka_unit_test(test_mapping_rules), cmocka_unit_test(test_recorded_user),
      cmocka_unit_test(test_qos_map),         cmocka_unit_test(test_job_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
