/*
 * Every error path of the configuration parser, table-driven: each case is a
 * small configuration (slurm.conf, topology, accounts texts), the file and
 * line the error must name, and a phrase its message must contain. Each must
 * fail with PX_EPARSE and return no configuration.
 */
#include "px_test.h"

#include <stdio.h>
#include <string.h>

#include "conf/conf.h"

#define N1 "NodeName=n[1-4] CPUs=4 Gres=gpu:2\n" /* four nodes most cases use */

struct err_case {
  const char *slurm, *topo, *acct;
  const char *file; /* slurm.conf, topology.conf or accounts.conf */
  int line;
  const char *phrase;
};

static const struct err_case cases[] = {
    /* reading */
    {"NodeName=n1 Reason=\"broken\n", NULL, NULL, "slurm.conf", 1, "unterminated '\"'"},
    {"NodeName=n1 CPUs\n", NULL, NULL, "slurm.conf", 1, "expected Key=Value, got 'CPUs'"},
    {"=5\n", NULL, NULL, "slurm.conf", 1, "expected Key=Value, got '=5'"},
    {"# c\nInclude other.conf\n", NULL, NULL, "slurm.conf", 2, "needs a configuration read from files"},
    {"Include\n", NULL, NULL, "slurm.conf", 1, "Include needs a file name"},
    {"Include a b\n", NULL, NULL, "slurm.conf", 1, "Include takes one file name"},
    {"TopologyFile=t.conf\n", NULL, NULL, "slurm.conf", 1, "naming files needs"},
    {"AccountsFile=a.conf\n", NULL, NULL, "slurm.conf", 1, "naming files needs"},
    /* keys */
    {"PartitonName=x\n", NULL, NULL, "slurm.conf", 1, "unknown key PartitonName on a slurm.conf line; did you mean PartitionName?"},
    {"\nFrobnicate=1\n", NULL, NULL, "slurm.conf", 2, "unknown key Frobnicate on a slurm.conf line (see docs/config.md)"},
    {"NodeName=n1 Gress=gpu:1\n", NULL, NULL, "slurm.conf", 1, "did you mean Gres?"},
    {"NodeName=n1 Nodes=n1\n", NULL, NULL, "slurm.conf", 1, "Nodes is a key of PartitionName lines, not of NodeName lines"},
    {"MaxTime=5\n", NULL, NULL, "slurm.conf", 1, "MaxTime is a key of PartitionName lines, not of slurm.conf lines"},
    {"NodeName=n1 NodeName=n2\n", NULL, NULL, "slurm.conf", 1, "NodeName must be the first key of its line"},
    /* GPU health and node checks (docs/gpus.md) */
    {N1 "GpuFaultPolicy=xid:gpu+explode\n", NULL, NULL, "slurm.conf", 2, "action 'explode' is not one of"},
    {N1 "GpuFaultPolicy=melt:gpu\n", NULL, NULL, "slurm.conf", 2, "class 'melt' is not one of"},
    {N1 "GpuFaultPolicy=ecc:requeue+fail\n", NULL, NULL, "slurm.conf", 2, "requeue and fail exclude each other"},
    {N1 "GpuFaultPolicy=ecc:none+gpu\n", NULL, NULL, "slurm.conf", 2, "none goes alone"},
    {N1 "GpuFaultPolicy=ecc:gpu+grace\n", NULL, NULL, "slurm.conf", 2, "grace goes with requeue"},
    {N1 "GpuFaultPolicy=xid\n", NULL, NULL, "slurm.conf", 2, "want CLASS:ACTIONS"},
    {N1 "GpuHealthIntervalMs=5\n", NULL, NULL, "slurm.conf", 2, "milliseconds, 100 to 60000"},
    {N1 "HealthCheckNodeState=BUSY\n", NULL, NULL, "slurm.conf", 2, "ANY ALLOC MIXED IDLE NONDRAINED_IDLE CYCLE"},
    /* global values */
    {"ClusterName=\n", NULL, NULL, "slurm.conf", 1, "a value"}, /* once folded a constant default (fuzz_conf) */
    {"PriorityFavorSmall=maybe\n", NULL, NULL, "slurm.conf", 1, "PriorityFavorSmall=maybe: expected one of YES, NO"},
    {"SchedulerType=sched/wiki\n", NULL, NULL, "slurm.conf", 1, "expected one of sched/backfill or sched/builtin"},
    {"SelectType=select/bluegene\n", NULL, NULL, "slurm.conf", 1, "select/cons_tres"},
    {"PreemptType=preempt/magic\n", NULL, NULL, "slurm.conf", 1, "preempt/partition_prio"},
    {"TopologyPlugin=topology/hypercube\n", NULL, NULL, "slurm.conf", 1, "topology/tree"},
    {"PriorityDecayHalfLife=1:75:00\n", NULL, NULL, "slurm.conf", 1, "PriorityDecayHalfLife=1:75:00: minutes must be 0-59"},
    {"PriorityMaxAge=soon\n", NULL, NULL, "slurm.conf", 1, "PriorityMaxAge=soon: position 1"},
    {"PriorityWeightAge=-1\n", NULL, NULL, "slurm.conf", 1, "PriorityWeightAge=-1: expected a whole number from 0 to 4294967294"},
    {"PriorityWeightQOS=4294967295\n", NULL, NULL, "slurm.conf", 1, "expected a whole number"},
    {"PriorityWeightTRES=CPU=x\n", NULL, NULL, "slurm.conf", 1, "PriorityWeightTRES=x: expected a whole number"},
    {"PriorityWeightTRES=Node=5\n", NULL, NULL, "slurm.conf", 1, "weights for CPU, Mem and GRES/gpu"},
    {"PriorityWeightTRES=license/x=5\n", NULL, NULL, "slurm.conf", 1, "expected TRES limits like"},
    {"TRESBillingWeights=GPU=1\n", NULL, NULL, "slurm.conf", 1, "expected weights like CPU=1.0,Mem=0.25G,GRES/gpu=2.0"},
    {"TRESBillingWeights=GRES/gpu=nan\n", NULL, NULL, "slurm.conf", 1, "expected weights like"},
    {"TRESBillingWeights=CPU=1e99\n", NULL, NULL, "slurm.conf", 1, "expected weights like"},
    {"TRESBillingWeights=Mem=1X\n", NULL, NULL, "slurm.conf", 1, "expected weights like"},
    {"PrivateData=secrets\n", NULL, NULL, "slurm.conf", 1, "PrivateData=secrets: expected a list of accounts"},
    {"Listen=localhost\n", NULL, NULL, "slurm.conf", 1, "Listen=localhost: expected HOST:PORT"},
    {"Listen=h:70000\n", NULL, NULL, "slurm.conf", 1, "port from 1 to 65535"},
    {"HeartbeatInterval=0\n", NULL, NULL, "slurm.conf", 1, "HeartbeatInterval=0: expected a whole number of seconds, at least 1"},
    {"KillWait=30s\n", NULL, NULL, "slurm.conf", 1, "KillWait=30s: expected a whole number"},
    {"StateDir=\n", NULL, NULL, "slurm.conf", 1, "StateDir=: expected a value"},
    {"BackfillMode=aggressive\n", NULL, NULL, "slurm.conf", 1, "expected one of easy, conservative or none"},
    {"BackfillDepth=-3\n", NULL, NULL, "slurm.conf", 1, "BackfillDepth=-3: expected a whole number"},
    {"Placement=random\n", NULL, NULL, "slurm.conf", 1, "expected one of pack or spread"},
    {"PriorityOrder=random\n", NULL, NULL, "slurm.conf", 1, "expected one of multifactor, fifo or las"},
    {"PreemptMode=SOMETIMES\n", NULL, NULL, "slurm.conf", 1, "expected one of OFF, CANCEL, REQUEUE or SUSPEND"},
    {"SchedulerType=sched/builtin\nBackfillMode=easy\n", NULL, NULL, "slurm.conf", 2, "BackfillMode asks for backfill but SchedulerType=sched/builtin (line 1)"},
    {"PriorityType=priority/basic\nPriorityOrder=multifactor\n", NULL, NULL, "slurm.conf", 2, "needs PriorityType=priority/multifactor"},
    /* nodes */
    {"NodeName=gpu[3-1]\n", NULL, NULL, "slurm.conf", 1, "NodeName=gpu[3-1]: position 5: range goes down"},
    {"NodeName=n[1-200000]\n", NULL, NULL, "slurm.conf", 1, "too many names"},
    {"NodeName=\n", NULL, NULL, "slurm.conf", 1, "expected node names"},
    {"NodeName=n[1-3] NodeAddr=a[1-2]\n", NULL, NULL, "slurm.conf", 1, "NodeAddr=a[1-2] names 2 addresses for 3 nodes"},
    {"NodeName=n1 NodeAddr=a[\n", NULL, NULL, "slurm.conf", 1, "NodeAddr=a[: position 3: unclosed '['"},
    {"NodeName=n1\nNodeName=n[0-1]\n", NULL, NULL, "slurm.conf", 2, "node n1 is already defined at slurm.conf:1"},
    {"NodeName=n1 CPUs=lots\n", NULL, NULL, "slurm.conf", 1, "CPUs=lots: expected a whole number"},
    {"NodeName=n1 CPUs=0\n", NULL, NULL, "slurm.conf", 1, "CPUs=0: expected a whole number, at least 1"},
    {"NodeName=n1 ThreadsPerCore=0\n", NULL, NULL, "slurm.conf", 1, "at least 1"},
    {"NodeName=n1 RealMemory=12X\n", NULL, NULL, "slurm.conf", 1, "RealMemory=12X: position 3: unknown size suffix 'X'"},
    {"NodeName=n1 Gres=gpu:4,gpu:h100:4\n", NULL, NULL, "slurm.conf", 1, "untyped GPUs beside typed ones"},
    {"NodeName=n1 Gres=gpu:h100:4,gpu:4\n", NULL, NULL, "slurm.conf", 1, "untyped GPUs beside typed ones"},
    {"NodeName=n1 Gres=gpu:65\n", NULL, NULL, "slurm.conf", 1, "Gres=65: expected a whole number from 0 to 64"},
    {"NodeName=n1 Gres=gpu:h100:40,gpu:h100:40\n", NULL, NULL, "slurm.conf", 1, "at most 64 GPUs per node"},
    {"NodeName=n1 Gres=gpu:x\n", NULL, NULL, "slurm.conf", 1, "expected gpu:COUNT or gpu:TYPE:COUNT"},
    {"NodeName=n1 Gres=gpu,,mps:4\n", NULL, NULL, "slurm.conf", 1, "without empty items"},
    {"NodeName=n1 Gres=gpu:6 GpuGroups=4\n", NULL, NULL, "slurm.conf", 1, "GpuGroups=4 does not divide the node's 6 GPUs evenly"},
    {"NodeName=n1 GpuGroups=2\n", NULL, NULL, "slurm.conf", 1, "GpuGroups=2 on a node without GPUs"},
    {"NodeName=n1 Gres=gpu:2 GpuShares=maybe\n", NULL, NULL, "slurm.conf", 1, "GpuShares=maybe"},
    {"NodeName=n1 CPUs=10 Sockets=2 CoresPerSocket=4\n", NULL, NULL, "slurm.conf", 1, "CPUs=10 does not match the layout: 2 sockets x 4 cores x 1 threads = 8"},
    {"NodeName=n1 Sockets=2 SocketsPerBoard=2\n", NULL, NULL, "slurm.conf", 1, "give Sockets or SocketsPerBoard, not both"},
    {"NodeName=n1 Sockets=4096 CoresPerSocket=4096\n", NULL, NULL, "slurm.conf", 1, "is more than 1048576 CPUs"},
    {"NodeName=n1 Boards=65536 SocketsPerBoard=65536\n", NULL, NULL, "slurm.conf", 1, "is more than 1048576 CPUs"},
    {"NodeName=n1 CoresPerSocket=4000000000 ThreadsPerCore=4000000000\n", NULL, NULL, "slurm.conf", 1, "more than 1048576"},
    {"NodeName=n1 State=BROKEN\n", NULL, NULL, "slurm.conf", 1, "State=BROKEN: expected one of UNKNOWN, IDLE, UP, DOWN, DRAIN or FUTURE"},
    {"NodeName=n1 Features=a,,b\n", NULL, NULL, "slurm.conf", 1, "Features=a,,b: expected a comma-separated list without empty items"},
    {"NodeName=n1 Weight=heavy\n", NULL, NULL, "slurm.conf", 1, "Weight=heavy"},
    /* partitions */
    {N1 "PartitionName=p Nodes=n9\n", NULL, NULL, "slurm.conf", 2, "Nodes=n9: node n9 is not defined by any NodeName line"},
    {N1 "PartitionName=p Nodes=n[4-9]\n", NULL, NULL, "slurm.conf", 2, "node n5 is not defined by any NodeName line (nor are others)"},
    {N1 "PartitionName=p Nodes=n[\n", NULL, NULL, "slurm.conf", 2, "Nodes=n[: position 3: unclosed '['"},
    {N1 "PartitionName=p\nPartitionName=p\n", NULL, NULL, "slurm.conf", 3, "partition p is already defined at slurm.conf:2"},
    {N1 "PartitionName=p DefaultTime=2-0 MaxTime=1-0\n", NULL, NULL, "slurm.conf", 2, "DefaultTime is longer than MaxTime"},
    {N1 "PartitionName=DEFAULT MaxTime=1:00:00\nPartitionName=p DefaultTime=2:00:00\n", NULL, NULL, "slurm.conf", 3, "DefaultTime is longer than MaxTime"},
    {"PartitionName=a,b\n", NULL, NULL, "slurm.conf", 1, "PartitionName=a,b: expected a partition name"},
    {"PartitionName=p AllowAccounts=ghost\n", NULL, NULL, "slurm.conf", 1, "AllowAccounts=ghost: no account named ghost"},
    {"PartitionName=p DenyAccounts=a,,b\n", NULL, NULL, "slurm.conf", 1, "without empty items"},
    {"PartitionName=p AllowQos=gold\n", NULL, NULL, "slurm.conf", 1, "AllowQos=gold: no QoS named gold"},
    {"PartitionName=p OverSubscribe=SOMETIMES\n", NULL, NULL, "slurm.conf", 1, "expected one of NO, YES, EXCLUSIVE or FORCE"},
    {"PartitionName=p OverSubscribe=EXCLUSIVE:2\n", NULL, NULL, "slurm.conf", 1, "expected NO, YES[:N], EXCLUSIVE or FORCE[:N]"},
    {"PartitionName=p OverSubscribe=YES:x\n", NULL, NULL, "slurm.conf", 1, "OverSubscribe=x: expected a whole number"},
    {"PartitionName=p MaxNodes=many\n", NULL, NULL, "slurm.conf", 1, "MaxNodes=many: expected a whole number"},
    {"PartitionName=p State=SLEEPY\n", NULL, NULL, "slurm.conf", 1, "expected one of UP, DOWN, DRAIN or INACTIVE"},
    {"PartitionName=p Default=PERHAPS\n", NULL, NULL, "slurm.conf", 1, "Default=PERHAPS: expected one of YES, NO"},
    {"PartitionName=p PreemptMode=KILL\n", NULL, NULL, "slurm.conf", 1, "PreemptMode=KILL"},
    /* topology */
    {N1, "SwitchName=s\n", NULL, "topology.conf", 1, "SwitchName=s needs either Nodes= (a leaf switch) or Switches="},
    {N1, "\nSwitchName=s Nodes=n1 Switches=t\n", NULL, "topology.conf", 2, "needs either Nodes="},
    {N1, "BlockName=b\n", NULL, "topology.conf", 1, "BlockName=b needs Nodes="},
    {N1, "SwitchName=a,b Nodes=n1\n", NULL, "topology.conf", 1, "SwitchName=a,b: expected one name"},
    {N1, "BlockName=[x] Nodes=n1\n", NULL, "topology.conf", 1, "expected one name"},
    {N1, "Frobs=1\n", NULL, "topology.conf", 1, "unknown key Frobs on a topology.conf line"},
    {N1, "SwitchName=s Nodes=n1 Speed=1\n", NULL, "topology.conf", 1, "unknown key Speed on a SwitchName line"},
    {N1, "SwitchName=s Nodes=n9\n", NULL, "topology.conf", 1, "node n9 is not defined"},
    {N1, "SwitchName=s Nodes=n[1-2\n", NULL, "topology.conf", 1, "unclosed"},
    {N1, "SwitchName=l Nodes=n1\nSwitchName=top Switches=l,x\n", NULL, "topology.conf", 2, "Switches=l,x: no switch named x"},
    {N1, "SwitchName=l Nodes=n1\nSwitchName=top Switches=l[\n", NULL, "topology.conf", 2, "Switches=l[: position 3"},
    {N1, "SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n[2-3]\n", NULL, "topology.conf", 2, "node n2 is under two leaf switches, a and b"},
    {N1, "SwitchName=l Nodes=n1\nSwitchName=a Switches=l\nSwitchName=b Switches=l\n", NULL, "topology.conf", 3, "switch l has two parents, a and b"},
    {N1, "SwitchName=a Switches=a\n", NULL, "topology.conf", 1, "switch a lists itself in Switches="},
    {N1, "SwitchName=l Nodes=n1\nSwitchName=a Switches=l,b\nSwitchName=b Switches=a\n", NULL, "topology.conf", 1, "the switches above l form a loop"},
    {N1, "SwitchName=l Nodes=n1\nSwitchName=a Switches=b\nSwitchName=b Switches=a\n", NULL, "topology.conf", 2, "switch a has no leaf switch below it"},
    {N1, "SwitchName=s Nodes=n1\nSwitchName=s Nodes=n2\n", NULL, "topology.conf", 2, "switch s is already defined at topology.conf:1"},
    {N1, "BlockName=b Nodes=n1\nBlockName=b Nodes=n2\n", NULL, "topology.conf", 2, "block b is already defined at topology.conf:1"},
    {N1, "BlockName=b Nodes=n[1-2]\nBlockName=c Nodes=n[2-3]\n", NULL, "topology.conf", 2, "node n2 is in two blocks, b and c"},
    {N1, "BlockName=b Nodes=x1\n", NULL, "topology.conf", 1, "node x1 is not defined"},
    /* accounts */
    {"", NULL, "Account=a Fairshares=2\n", "accounts.conf", 1, "unknown key Fairshares on a Account line; did you mean Fairshare?"},
    {"", NULL, "Frob=1\n", "accounts.conf", 1, "unknown key Frob on a accounts file line"},
    {"", NULL, "Account=a\nAccount=A\n", "accounts.conf", 2, "Account a is already defined at accounts.conf:1"},
    {"", NULL, "Account=a Parent=x\n", "accounts.conf", 1, "Account a: Parent=x is not an account"},
    {"", NULL, "Account=a Parent=b\nAccount=b Parent=a\n", "accounts.conf", 2, "Account b: its Parent chain loops"},
    {"", NULL, "Account=root Parent=x\n", "accounts.conf", 1, "Account root is the top of the tree"},
    {"", NULL, "Account=a Users=u,v,u\n", "accounts.conf", 1, "Users: u is listed twice for account a"},
    {"", NULL, "Account=a Users=u,,v\n", "accounts.conf", 1, "Users=u,,v: expected a comma-separated list"},
    {"", NULL, "User=u\n", "accounts.conf", 1, "User=u needs Account= (the association) or DefaultAccount="},
    {"", NULL, "User=u Account=ghost\n", "accounts.conf", 1, "User=u: Account=ghost is not an account"},
    {"", NULL, "Account=a\nUser=u Account=a\nUser=u Account=a\n", "accounts.conf", 3, "User=u Account=a is already defined at accounts.conf:2"},
    {"", NULL, "Account=a Users=u\nAccount=b\nUser=u DefaultAccount=b\n", "accounts.conf", 3, "DefaultAccount=b is not one of the user's accounts"},
    {"", NULL, "Account=a Users=u\nAccount=b Users=u\nUser=u DefaultAccount=a\nUser=u DefaultAccount=b\n", "accounts.conf", 4, "a second DefaultAccount (b)"},
    {"", NULL, "Account=a DefaultQOS=gold\n", "accounts.conf", 1, "a: DefaultQOS=gold is not a QOS of the accounts file"},
    {"", NULL, "Account=a Users=u\nUser=u Account=a DefaultQOS=gold\n", "accounts.conf", 2, "u: DefaultQOS=gold"},
    {"", NULL, "Account=a BorrowingLimit=4\n", "accounts.conf", 1, "BorrowingLimit needs a Cohort"},
    {"", NULL, "Account=a GuaranteedGPUs=4 LendingLimit=8\n", "accounts.conf", 1, "LendingLimit=8 is more than GuaranteedGPUs=4"},
    {"", NULL, "Account=a GuaranteedGPUs=lots\n", "accounts.conf", 1, "GuaranteedGPUs=lots"},
    {"", NULL, "Account=a GrpTRES=gpus=4\n", "accounts.conf", 1, "expected TRES limits like gres/gpu=64"},
    {"", NULL, "Account=a GrpTRES=gres/gpu=many\n", "accounts.conf", 1, "GrpTRES=many: expected a whole number"},
    {"", NULL, "Account=a GrpTRES=mem=1Q\n", "accounts.conf", 1, "mem=1Q: position 2: unknown size suffix"},
    {"", NULL, "Account=a GrpTRES=\n", "accounts.conf", 1, "GrpTRES=: expected TRES limits"},
    {"", NULL, "Account=a GrpTRES=gres/gpu:h100=4\n", "accounts.conf", 1, "limits per GPU type (gres/gpu:h100) are not supported"},
    {"", NULL, "Account=a MaxTRES=cpu=4\n", "accounts.conf", 1, "MaxTRES=cpu=4: expected a GPU limit"},
    {"", NULL, "Account=a MaxJobs=some\n", "accounts.conf", 1, "MaxJobs=some: expected a whole number"},
    {"", NULL, "Account=a Fairshare=parents\n", "accounts.conf", 1, "Fairshare=parents: expected a whole number"},
    {"Operators=a,,b\n", NULL, NULL, "slurm.conf", 1, "Operators=a,,b: expected a comma-separated list"},
    {"", NULL, "Account=a,b\n", "accounts.conf", 1, "Account=a,b: expected one name"},
    {"", NULL, "Account=a Coordinators=,x\n", "accounts.conf", 1, "without empty items"},
    {"", NULL, "QOS=high\nQOS=HIGH\n", "accounts.conf", 2, "QOS high is already defined at accounts.conf:1"},
    {"", NULL, "QOS=high Preempt=ghost\n", "accounts.conf", 1, "Preempt=ghost: no QOS named ghost"},
    {"", NULL, "QOS=high Preempt=normal,high\n", "accounts.conf", 1, "QOS high cannot preempt itself"},
    {"", NULL, "QOS=high PreemptMode=sometimes\n", "accounts.conf", 1, "expected one of CLUSTER, OFF, CANCEL, REQUEUE or SUSPEND"},
    {"", NULL, "QOS=high UsageFactor=-1\n", "accounts.conf", 1, "UsageFactor=-1: expected a non-negative number"},
    {"", NULL, "QOS=high UsageFactor=nan\n", "accounts.conf", 1, "expected a non-negative number"},
    {"", NULL, "QOS=high MaxWall=forever\n", "accounts.conf", 1, "MaxWall=forever"},
    {"", NULL, "QOS=high GraceTime=2m\n", "accounts.conf", 1, "GraceTime=2m: expected a whole number"},
    {"", NULL, "QOS=high MaxTRESPerUser=node=2\n", "accounts.conf", 1, "expected a GPU limit"},
    {"", NULL, "QOS=\n", "accounts.conf", 1, "QOS=: expected one name"},
};

static bool has_error(const struct px_conf_diags *d, const struct err_case *c) {
  for (size_t i = 0; i < d->len; i++)
    if (d->v[i].is_error && d->v[i].line == c->line && !strcmp(d->v[i].file, c->file) &&
        strstr(d->v[i].text, c->phrase))
      return true;
  return false;
}

static void every_error_names_file_line_and_problem(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const struct err_case *c = &cases[i];
    struct px_conf_text t = {c->slurm, c->topo, c->acct, "slurm.conf", 0};
    struct px_conf *conf = (struct px_conf *)&t; /* must not be touched */
    struct px_conf_diags d = {0};
    int rc = px_conf_parse_text(&t, &conf, &d);
    if (rc != PX_EPARSE || !has_error(&d, c) || conf != (struct px_conf *)&t) {
      print_error("case %zu: want %s:%d '%s', rc %d, got:\n", i, c->file, c->line, c->phrase, rc);
      for (size_t k = 0; k < d.len; k++) {
        char line[1400];
        px_conf_msg_format(&d.v[k], line, sizeof line);
        print_error("  %s\n", line);
      }
      fail();
    }
    assert_true(d.nerrors >= 1);
    px_conf_diags_fini(&d);
  }
}

/* All errors are reported, not just the first, and the count is right. */
static void all_errors_are_collected(void **state) {
  (void)state;
  const char *text = "NodeName=n1 CPUs=x\n"       /* 1 */
                     "NodeName=n2 Gres=gpu:99\n"  /* 2 */
                     "Bogus=1\n"                  /* 3 */
                     "PartitionName=p Nodes=n7\n" /* 4: unknown node, found at build */
                     "SlurmUser=slurm\n";         /* a warning, not an error */
  struct px_conf *c = NULL;
  struct px_conf_diags d = {0};
  assert_int_equal(px_conf_parse_string(text, "x.conf", &c, &d), PX_EPARSE);
  assert_null(c);
  assert_int_equal(d.nerrors, 4);
  assert_int_equal(d.nwarnings, 1);
  assert_int_equal(d.len, 5);
  int lines[5];
  for (size_t i = 0; i < d.len; i++) lines[i] = d.v[i].line;
  assert_int_equal(lines[0], 1);
  assert_int_equal(lines[1], 2);
  assert_int_equal(lines[2], 3);
  assert_int_equal(lines[3], 5); /* the warning, seen while reading */
  assert_int_equal(lines[4], 4); /* the dangling reference, seen while building */
  char buf[256];
  px_conf_msg_format(&d.v[0], buf, sizeof buf);
  assert_string_equal(buf, "x.conf:1: error: CPUs=x: expected a whole number from 0 to 4294967294");
  px_conf_msg_format(&d.v[3], buf, sizeof buf);
  assert_string_equal(buf, "x.conf:5: warning: SlurmUser: a Slurm key that Phalanx does not use; ignored (reported once)");
  px_conf_diags_fini(&d);
}

/* The message store is capped; the counts are not. */
static void many_errors_are_counted_past_the_cap(void **state) {
  (void)state;
  enum { N = PX_CONF_MAX_MSGS + 100 };
  static char text[N * 8];
  size_t len = 0;
  for (int i = 0; i < N; i++) len += (size_t)snprintf(text + len, sizeof text - len, "Bad%d=1\n", i % 10);
  struct px_conf *c = NULL;
  struct px_conf_diags d = {0};
  assert_int_equal(px_conf_parse_string(text, NULL, &c, &d), PX_EPARSE);
  assert_int_equal(d.nerrors, N);
  assert_int_equal(d.len, PX_CONF_MAX_MSGS);
  assert_string_equal(d.v[0].file, "slurm.conf");
  px_conf_diags_fini(&d);
  /* Without a diags struct the result is the same, silently. */
  assert_int_equal(px_conf_parse_string(text, NULL, &c, NULL), PX_EPARSE);
  assert_null(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_error_names_file_line_and_problem),
      cmocka_unit_test(all_errors_are_collected),
      cmocka_unit_test(many_errors_are_counted_past_the_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
