/*
 * The shared syntax (comments, continuation, quotes, case), DEFAULT lines,
 * defaults and derivations, and the file-level behaviours (Include, files
 * beside slurm.conf, unreadable files) on temporary directories.
 */
#include "px_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "conf/conf.h"

static struct px_conf *parse_ok(const char *slurm, const char *topo, const char *acct,
                                struct px_conf_diags *d) {
  struct px_conf_text t = {slurm, topo, acct, NULL, 0};
  struct px_conf *c = NULL;
  int rc = px_conf_parse_text(&t, &c, d);
  for (size_t i = 0; rc && i < d->len; i++) print_error("%s:%d: %s\n", d->v[i].file, d->v[i].line, d->v[i].text);
  assert_int_equal(rc, 0);
  return c;
}

static void comments_continuation_quotes_and_case(void **state) {
  (void)state;
  const char *text = "# a comment line\n"
                     "nodename=n[1-2] cpus=8 \\\n"
                     "   gres=GPU:H100:4   # trailing comment\r\n"
                     "\n"
                     "NODENAME=n3 Features=\"a,b\" STATE=drain Reason=\"disk # 3 replaced\"\n"
                     "partitionname=p nodes=all default=yes maxtime=unlimited state=Up\n"
                     "schedulertype=SCHED/BUILTIN\n";
  struct px_conf_diags d = {0};
  struct px_conf *c = parse_ok(text, NULL, NULL, &d);
  assert_int_equal(c->nnodes, 3);
  assert_int_equal(c->nodes[1].cpus, 8);
  assert_int_equal(c->nodes[1].ngpu, 4);
  assert_string_equal(c->nodes[1].gpu_type, "H100"); /* the type is a name: kept as written */
  assert_int_equal(c->nodes[2].state, PX_NODE_CONF_DRAIN);
  assert_int_equal(c->nodes[2].nfeatures, 2);
  assert_int_equal(c->partitions[0].nnodes, 3);
  assert_int_equal(c->partitions[0].max_time_s, PX_TIME_UNLIMITED);
  assert_int_equal(c->default_partition, 0);
  assert_string_equal(c->sched.scheduler_type, "sched/builtin");
  assert_int_equal(c->sched.backfill, PX_BACKFILL_NONE); /* builtin has no backfill */
  assert_int_equal(d.nwarnings, 1);                      /* Reason, once */
  assert_int_equal(d.v[0].line, 5);
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

static void default_lines_apply_to_what_follows(void **state) {
  (void)state;
  const char *text = "NodeName=a1 CPUs=2\n"
                     "NodeName=DEFAULT CPUs=16 Gres=gpu:8 Weight=3\n"
                     "NodeName=b[1-2]\n"
                     "NodeName=c1 Weight=1\n"
                     "NodeName=DEFAULT CPUs=4 Gres=gpu:0\n"
                     "NodeName=d1\n"
                     "PartitionName=DEFAULT MaxTime=1-0 PriorityTier=5\n"
                     "PartitionName=p Nodes=b[1-2],c1\n"
                     "PartitionName=DEFAULT MaxTime=30\n"
                     "PartitionName=q Nodes=a1 Default=YES\n";
  struct px_conf_diags d = {0};
  struct px_conf *c = parse_ok(text, NULL, NULL, &d);
  assert_int_equal(c->nnodes, 5);
  assert_int_equal(c->nodes[0].cpus, 2);  /* before the DEFAULT line */
  assert_int_equal(c->nodes[0].ngpu, 0);
  assert_int_equal(c->nodes[0].weight, 1);
  assert_int_equal(c->nodes[1].cpus, 16);
  assert_int_equal(c->nodes[1].ngpu, 8);
  assert_int_equal(c->nodes[2].weight, 3);
  assert_int_equal(c->nodes[3].weight, 1); /* its own value wins */
  assert_int_equal(c->nodes[4].cpus, 4);
  assert_int_equal(c->nodes[4].ngpu, 0);
  assert_int_equal(c->nodes[4].weight, 3); /* from the first DEFAULT, not reset */
  assert_int_equal(c->partitions[0].max_time_s, 86400);
  assert_int_equal(c->partitions[0].default_time_s, 86400); /* DefaultTime absent: MaxTime */
  assert_int_equal(c->partitions[0].priority_tier, 5);
  assert_int_equal(c->partitions[1].max_time_s, 1800);
  assert_int_equal(c->partitions[1].priority_tier, 5);
  assert_int_equal(c->default_partition, 1);
  assert_false(c->partitions[0].is_default);
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

/* With nothing but nodes, every default named in conf.h and docs/config.md. */
static void defaults_without_accounts_or_topology(void **state) {
  (void)state;
  struct px_conf_diags d = {0};
  struct px_conf *c = parse_ok("NodeName=n1\nPartitionName=p Nodes=n1\n", NULL, NULL, &d);
  assert_string_equal(c->cluster_name, "cluster");
  const struct px_conf_node *n = &c->nodes[0];
  assert_int_equal(n->cpus, 1);
  assert_int_equal(n->mem_mib, 1);
  assert_int_equal(n->gpu_groups, 1);
  assert_int_equal(n->weight, 1);
  assert_int_equal(n->leaf_switch, PX_NONE);
  assert_int_equal(n->block, PX_NONE);
  assert_int_equal(c->default_partition, PX_NONE); /* as in Slurm: no Default=YES, no default */
  const struct px_conf_partition *p = &c->partitions[0];
  assert_true(p->up);
  assert_int_equal(p->max_nodes, UINT32_MAX);
  assert_int_equal(p->priority_tier, 1);
  assert_int_equal(p->priority_job_factor, 1);
  assert_int_equal(p->oversubscribe, PX_OVERSUB_NO);
  assert_int_equal(p->preempt_mode, PX_PREEMPT_OFF);
  assert_int_equal(c->naccounts, 1);
  assert_string_equal(c->accounts[0].name, "root");
  assert_int_equal(c->accounts[0].parent, PX_NONE);
  assert_int_equal(c->accounts[0].grp_gpus, PX_NOLIMIT);
  assert_string_equal(c->accounts[0].default_qos, "normal");
  assert_int_equal(c->nqos, 1);
  assert_string_equal(c->qos[0].name, "normal");
  assert_int_equal(c->qos[0].max_wall_s, PX_TIME_UNLIMITED);
  assert_int_equal(c->nswitches, 0);
  const struct px_conf_sched *s = &c->sched;
  assert_int_equal(s->backfill, PX_BACKFILL_CONSERVATIVE);
  assert_int_equal(s->backfill_depth, UINT32_MAX);
  assert_int_equal(s->order, PX_ORDER_MULTIFACTOR);
  assert_int_equal(s->decay_half_life_s, 7 * 86400);
  assert_int_equal(s->weight_fairshare, 10000);
  assert_true(s->billing_weight_gpu == 1.0);
  assert_string_equal(c->phalanx.state_dir, "/var/lib/phalanx");
  assert_string_equal(c->phalanx.socket_path, "/var/lib/phalanx/phalanx.sock");
  assert_int_equal(c->phalanx.kill_wait_s, 30);
  assert_int_equal(c->phalanx.node_down_timeout_s, 300);
  assert_int_equal(c->nfiles, 0);
  assert_int_equal(d.nwarnings, 0);
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

static void small_choices_and_warnings(void **state) {
  (void)state;
  const char *text = "PriorityType=priority/basic\nBackfillDepth=ALL\nPreemptMode=SUSPEND,GANG\n"
                     "SlurmUser=a\nslurmuser=b\nPrivateData=jobs,usage\n"
                     "NodeName=n1 Gres=gpu:2,mps:100\n"
                     "PartitionName=a Nodes=n1 Default=YES\nPartitionName=b Nodes=n1 Default=YES Shared=FORCE:4\n"
                     "Operators=ann,bo\nAdministrators=cy\n";
  struct px_conf_diags d = {0};
  struct px_conf *c = parse_ok(text, NULL, "QOS=high Preempt=normal\nAccount=a Users=u,v Fairshare=PARENT\n"
                               "User=v Account=a Fairshare=parent\n", &d);
  assert_int_equal(c->phalanx.noperators, 2);
  assert_string_equal(c->phalanx.operators[1], "bo");
  assert_int_equal(c->phalanx.nadministrators, 1);
  assert_string_equal(c->phalanx.administrators[0], "cy");
  assert_int_equal(c->accounts[1].fairshare, PX_FAIRSHARE_PARENT);  /* a */
  assert_int_equal(c->accounts[2].fairshare, 1);                    /* u */
  assert_int_equal(c->accounts[3].fairshare, PX_FAIRSHARE_PARENT);  /* v */
  assert_int_equal(c->sched.order, PX_ORDER_FIFO); /* priority/basic */
  assert_int_equal(c->sched.preempt_mode, PX_PREEMPT_SUSPEND);
  assert_int_equal(c->partitions[1].oversubscribe, PX_OVERSUB_FORCE);
  assert_int_equal(c->default_partition, 1); /* the last Default=YES, with a warning */
  assert_int_equal(c->nodes[0].ngpu, 2);
  assert_true(c->phalanx.private_jobs);
  /* SlurmUser once; PrivateData=usage; mps; two defaults; Preempt without preempt/qos */
  assert_int_equal(d.nwarnings, 5);
  assert_int_equal(d.nerrors, 0);
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

/* MIG profiles side by side: types by name, indices in that order, a
 * type given twice adds up; the Gres string says them back. */
static void several_gpu_types_on_a_node(void **state) {
  (void)state;
  struct px_conf_diags d = {0};
  struct px_conf *c = parse_ok("NodeName=m1 Gres=gpu:3g.40gb:1,gpu:1g.10gb:7,gpu:2g.20gb:2,gpu:1g.10gb:7\n"
                               "NodeName=m2 Gres=gpu:h100:8\nPartitionName=p Nodes=m[1-2] Default=YES\n",
                               NULL, NULL, &d);
  const struct px_conf_node *n = &c->nodes[0];
  assert_int_equal(n->ngpu, 17);
  assert_null(n->gpu_type);
  assert_int_equal(n->ngpu_types, 3);
  assert_string_equal(n->gpu_types[0].type, "1g.10gb");
  assert_int_equal(n->gpu_types[0].count, 14);
  assert_string_equal(px_conf_gpu_type_at(n, 13), "1g.10gb");
  assert_string_equal(px_conf_gpu_type_at(n, 14), "2g.20gb");
  assert_string_equal(px_conf_gpu_type_at(n, 16), "3g.40gb");
  assert_null(px_conf_gpu_type_at(n, 17));
  char buf[128];
  px_conf_gres_str(n, buf, sizeof buf);
  assert_string_equal(buf, "gpu:1g.10gb:14,gpu:2g.20gb:2,gpu:3g.40gb:1");
  px_conf_gres_count_str(n, 1ULL << 16 | 1ULL << 14 | 3, buf, sizeof buf);
  assert_string_equal(buf, "gpu:1g.10gb:2,gpu:2g.20gb:1,gpu:3g.40gb:1");
  assert_string_equal(c->nodes[1].gpu_type, "h100");
  assert_int_equal(c->nodes[1].ngpu_types, 0);
  assert_string_equal(px_conf_gpu_type_at(&c->nodes[1], 7), "h100");
  px_conf_gres_str(&c->nodes[1], buf, sizeof buf);
  assert_string_equal(buf, "gpu:h100:8");
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

static char dir[64];

static void write_file(const char *name, const char *text) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int load(const char *name, struct px_conf **c, struct px_conf_diags *d) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  *c = NULL;
  return px_conf_load(path, c, d);
}

static int make_dir(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/px-conf-test-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd);
}

static bool has(const struct px_conf_diags *d, const char *phrase) {
  for (size_t i = 0; i < d->len; i++)
    if (strstr(d->v[i].text, phrase)) return true;
  return false;
}

static void includes_and_side_files(void **state) {
  (void)state;
  write_file("slurm.conf", "ClusterName=t\nInclude sub/nodes*.conf\nTopologyPlugin=topology/none\n");
  char sub[128];
  snprintf(sub, sizeof sub, "mkdir -p %s/sub", dir);
  assert_int_equal(system(sub), 0);
  write_file("sub/nodes1.conf", "NodeName=a[1-2] Gres=gpu:4\n");
  write_file("sub/nodes2.conf", "NodeName=b1\nPartitionName=p Nodes=ALL\n");
  write_file("topology.conf", "SwitchName=s Nodes=a1\n"); /* skipped: TopologyPlugin=topology/none */
  write_file("accounts.conf", "Account=x Users=u\n");
  struct px_conf *c;
  struct px_conf_diags d = {0};
  assert_int_equal(load("slurm.conf", &c, &d), 0);
  assert_int_equal(c->nnodes, 3);
  assert_int_equal(c->partitions[0].nnodes, 3);
  assert_int_equal(c->nswitches, 0);
  assert_int_equal(c->naccounts, 3); /* root, x, u */
  assert_int_equal(c->nfiles, 4);   /* slurm.conf, the two includes in glob order, accounts.conf */
  assert_non_null(strstr(c->files[1], "sub/nodes1.conf"));
  assert_non_null(strstr(c->files[3], "accounts.conf"));
  px_conf_free(c);
  px_conf_diags_fini(&d);

  /* Named files win over the ones beside slurm.conf, relative to its directory. */
  write_file("slurm.conf", "NodeName=a1\nTopologyFile=sub/topo\nAccountsFile=sub/acct\n");
  write_file("sub/topo", "BlockName=b Nodes=a1\n");
  write_file("sub/acct", "QOS=gold\n");
  assert_int_equal(load("slurm.conf", &c, &d), 0);
  assert_int_equal(c->nblocks, 1);
  assert_int_equal(c->nswitches, 0);
  assert_int_equal(c->nqos, 2);
  assert_int_equal(c->naccounts, 1);
  px_conf_free(c);
  px_conf_diags_fini(&d);
}

static void unreadable_files_are_errors(void **state) {
  (void)state;
  struct px_conf *c;
  struct px_conf_diags d = {0};
  assert_int_equal(load("nope.conf", &c, &d), PX_EIO);
  assert_null(c);
  assert_true(has(&d, "nope.conf: No such file or directory"));
  px_conf_diags_fini(&d);

  write_file("loop.conf", "NodeName=x1\nInclude loop.conf\n");
  assert_int_equal(load("loop.conf", &c, &d), PX_EPARSE);
  assert_true(has(&d, "nested more than 8 deep"));
  px_conf_diags_fini(&d);

  write_file("dev.conf", "Include /dev/null\n");
  assert_int_equal(load("dev.conf", &c, &d), PX_EIO);
  assert_true(has(&d, "/dev/null: not a regular file"));
  px_conf_diags_fini(&d);

  write_file("glob.conf", "Include none-*.conf\n");
  assert_int_equal(load("glob.conf", &c, &d), PX_EPARSE);
  assert_true(has(&d, "Include none-*.conf: no file matches"));
  px_conf_diags_fini(&d);

  char path[256];
  snprintf(path, sizeof path, "%s/nul.conf", dir);
  FILE *f = fopen(path, "w");
  fwrite("NodeName=a\0b\n", 1, 13, f);
  fclose(f);
  assert_int_equal(load("nul.conf", &c, &d), PX_EIO);
  assert_true(has(&d, "contains a NUL byte"));
  px_conf_diags_fini(&d);

  write_file("named.conf", "NodeName=a1\nAccountsFile=missing.acct\n");
  assert_int_equal(load("named.conf", &c, &d), PX_EIO);
  assert_true(has(&d, "missing.acct: No such file or directory"));
  assert_int_equal(d.v[0].line, 2); /* named where AccountsFile= was given */
  px_conf_diags_fini(&d);
}

static void config_check_command(void **state) {
  (void)state;
  /* The command's exit codes; its output is read by people, checked in integration. */
  write_file("good.conf", "NodeName=a1 Gres=gpu:8\nPartitionName=p Nodes=a1 Default=YES\n");
  write_file("bad.conf", "NodeName=a1 Gres=gpu:800\n");
  char good[256], bad[256];
  snprintf(good, sizeof good, "%s/good.conf", dir);
  snprintf(bad, sizeof bad, "%s/bad.conf", dir);
  FILE *saved_out = stdout, *saved_err = stderr;
  stdout = fopen("/dev/null", "w");
  stderr = fopen("/dev/null", "w");
  char *ok_argv[] = {"config", "check", good, NULL};
  char *bad_argv[] = {"config", "check", good, bad, NULL};
  char *usage_argv[] = {"config", "frob", NULL};
  int rc_ok = px_cmd_config(3, ok_argv), rc_bad = px_cmd_config(4, bad_argv), rc_usage = px_cmd_config(2, usage_argv);
  fclose(stdout);
  fclose(stderr);
  stdout = saved_out;
  stderr = saved_err;
  assert_int_equal(rc_ok, 0);
  assert_int_equal(rc_bad, 1);
  assert_int_equal(rc_usage, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(comments_continuation_quotes_and_case),
      cmocka_unit_test(several_gpu_types_on_a_node),
      cmocka_unit_test(default_lines_apply_to_what_follows),
      cmocka_unit_test(defaults_without_accounts_or_topology),
      cmocka_unit_test(small_choices_and_warnings),
      cmocka_unit_test(includes_and_side_files),
      cmocka_unit_test(unreadable_files_are_errors),
      cmocka_unit_test(config_check_command),
  };
  return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
