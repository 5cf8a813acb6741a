#!/usr/bin/env bash
# What a Slurm user sees around requeue, against a real server with a fake
# agent (one node of 8 GPUs, a PriorityTier=2 partition that preempts the
# default one). Each check quotes Slurm 22.05.8 (../shared/slurm, 64 nodes,
# checked 2026-12-05):
# 1. A preempted job waiting again is PENDING with Restarts=1 in `scontrol
#    show job`, `squeue` and the REST view, not a state of its own:
#      JobState=PENDING Reason=BeginTime Dependency=(null)
#      Requeue=1 Restarts=1 BatchFlag=1 Reboot=0 ExitCode=0:0
#    squeue: `1 batch big root PD 0:00 64 (BeginTime)`. Slurm's BeginTime
#    is its 121 s delay of a requeued batch job (EligibleTime = requeue +
#    121 s); Phalanx adds no delay, so it shows its scheduler's reason (here
#    Resources: the preemptor holds the node). sacct -D keeps the PREEMPTED
#    row of the attempt that ended.
# 2. The start order of the new attempt carries its restart count (the agent
#    sets SLURM_RESTART_COUNT from it; Slurm: unset on the first run,
#    `SLURM_RESTART_COUNT=1` on the run after a preemption).
# Before: REQUEUED for 1 (2 held already).
source "$(dirname "$0")/lib_server.sh"
command -v jq >/dev/null || fail "jq is in make deps"
cat >"$T/slurm.conf" <<CONF
ClusterName=test
HeartbeatInterval=2
SlurmdTimeout=600
KillWait=2
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
NodeName=n01 CPUs=64 RealMemory=512G Gres=gpu:h100:8
PartitionName=gpu Nodes=n01 Default=YES PriorityTier=1 MaxTime=2-0 State=UP
PartitionName=urgent Nodes=n01 PriorityTier=2 MaxTime=2-0 State=UP
CONF
cat >"$T/accounts.conf" <<CONF
Account=ml Fairshare=60 Users=pxalice
CONF
mkdir -p "$T/bin" && for c in scontrol squeue sacct; do ln -s "$PHALANX" "$T/bin/$c"; done
as_alice() { setpriv --reuid=pxalice --regid="$(id -g pxalice)" --clear-groups \
  env PATH="$T/bin:$PATH" PHALANX_SERVER="unix:$SOCK" "$@"; }
start_server --checkpoint-jobs 1
register_node n01

job() { # [PARTITION] [EXTRA JSON FIELDS]: a job of 8 GPUs; prints its id
  expect 201 pxalice POST /v1/jobs "{\"job\":{\"name\":\"rq\",\"partition\":\"${1:-gpu}\",\"gpus_per_node\":8${2:+,$2},\"script\":\"#!/bin/sh\\ntrue\"}}" |
    jq -r .job_id
}
report() { # JOB STATE RESTART [EXIT] [SIGNAL]
  expect 200 root POST /v1/agent/report "{\"node\":\"n01\",\"job_id\":$1,\"state\":\"$2\",\"exit_code\":${4:-0},\"term_signal\":${5:-0},\"requeue_requested\":false,\"peak_mem_mib\":0,\"cpu_time_ms\":0,\"start_time\":0,\"end_time\":0,\"restart_count\":$3}" >/dev/null
}
view() { api GET "/v1/jobs?id=$1" | cut -d' ' -f2- | jq -c '.jobs[0] | [.state, .restarts]'; }
view_is() { [ "$(view "$1")" = "$2" ]; }
reason_is() { [ "$(as_alice squeue -h -j "$1" -o %r)" = "$2" ]; }
# the restart count of job $1's start order on n01 (item 2)
launch_restart() {
  expect 200 root GET "/v1/agent/work?node=n01&after=0&timeout=1" |
    jq -r --argjson j "$1" '[.launch[] | select(.job_id == $j) | .restart_count // 0] | last'
}

# ---- 1. a preempted job waiting again
v=$(job)
wait_for "job $v running" job_is "$v" RUNNING
[ "$(launch_restart "$v")" = 0 ] || fail "first start order of job $v: restart_count $(launch_restart "$v")"
u=$(job urgent)
preempt_order() {
  expect 200 root GET "/v1/agent/work?node=n01&after=0&timeout=1" |
    jq -e --argjson j "$v" '[.signal[] | select(.job_id == $j and .reason == "PREEMPTED")] | length > 0'
}
wait_for "the stop order of job $v (preempted by $u)" preempt_order
report "$v" CANCELLED 0 0 15
wait_for "job $u running" job_is "$u" RUNNING
view_is "$v" '["PENDING",1]' || fail "REST view of the requeued job $v: $(view "$v"), want [\"PENDING\",1]"
wait_for "job $v judged by a cycle" reason_is "$v" Resources
show=$(as_alice scontrol show job "$v")
grep -q "^   JobState=PENDING Reason=Resources Dependency=(null)$" <<<"$show" || fail "scontrol show job $v: $show"
grep -q "^   Requeue=1 Restarts=1 BatchFlag=1 Reboot=0 ExitCode=0:0$" <<<"$show" || fail "scontrol show job $v: $show"
[ "$(as_alice squeue -h -j "$v" -o '%t %T %r')" = "PD PENDING Resources" ] ||
  fail "squeue -j $v: $(as_alice squeue -h -j "$v" -o '%t %T %r')"
as_alice squeue -h -o '%i %t' | grep -qx "$v PD" || fail "squeue (active jobs) lacks $v: $(as_alice squeue -h -o '%i %t')"
[ "$(as_alice sacct -D -n -X -P -j "$v" -o State | tr '\n' ' ')" = "PREEMPTED PENDING " ] ||
  fail "sacct -D -j $v: $(as_alice sacct -D -n -X -P -j "$v" -o State | tr '\n' ' ')"
ok "1. preempted job $v: PENDING Reason=Resources Restarts=1 (scontrol, squeue, REST); sacct -D keeps PREEMPTED"

report "$u" COMPLETED 0
wait_for "job $v running again" view_is "$v" '["RUNNING",1]'
[ "$(launch_restart "$v")" = 1 ] || fail "second start order of job $v: restart_count $(launch_restart "$v")"
ok "2. the new attempt's start order carries restart_count 1 (SLURM_RESTART_COUNT=1)"
