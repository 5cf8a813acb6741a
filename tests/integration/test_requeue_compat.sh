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
# 3. `scontrol requeue` of a finished batch job requeues it (exit 0,
#    silent), for COMPLETED, FAILED, CANCELLED (ran or not) and TIMEOUT:
#      $ scontrol requeue 3        (COMPLETED)      [exit 0]
#      JobState=PENDING Reason=None ... Restarts=1
#    requeuehold of one: `JobState=PENDING Reason=job_requeued_in_held_state`;
#    a finished --no-requeue job: `Requested operation is presently disabled
#    for job 8` [exit 1]. It survives a kill -9 of the server (journal),
#    also when a checkpoint had archived the finished job.
# 4. `scontrol update` of a running job's field that changes only while it
#    pends: `Job is no longer pending execution for job 7` [exit 1] (Slurm
#    says so for Partition=, MinMemoryNode=, Gres=, Dependency=, StartTime=).
# Before: REQUEUED for 1 (2 held already), "Job has already finished" for 3,
# and "... (Phalanx changes pending jobs only)" for 4.
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
as_alice squeue -h -t PD -o %i | grep -qx "$v" || fail "squeue -t PD lacks $v: $(as_alice squeue -h -t PD -o %i)"
[ "$(as_alice sacct -D -n -X -P -j "$v" -o State | tr '\n' ' ')" = "PREEMPTED PENDING " ] ||
  fail "sacct -D -j $v: $(as_alice sacct -D -n -X -P -j "$v" -o State | tr '\n' ' ')"
ok "1. preempted job $v: PENDING Reason=Resources Restarts=1 (scontrol, squeue, REST); sacct -D keeps PREEMPTED"

report "$u" COMPLETED 0
wait_for "job $v running again" view_is "$v" '["RUNNING",1]'
[ "$(launch_restart "$v")" = 1 ] || fail "second start order of job $v: restart_count $(launch_restart "$v")"
ok "2. the new attempt's start order carries restart_count 1 (SLURM_RESTART_COUNT=1)"

# ---- 3. scontrol requeue of finished jobs
requeue_ok() { # JOB RESTARTS: scontrol requeue succeeds, silent; the job pends or runs again
  local out
  out=$(as_alice scontrol requeue "$1" 2>&1) || fail "scontrol requeue $1 (finished): $out"
  [ -z "$out" ] || fail "scontrol requeue $1 printed: $out"
  wait_for "job $1 running again" view_is "$1" "[\"RUNNING\",$2]"
  [ "$(launch_restart "$1")" = "$2" ] || fail "start order of job $1 after requeue: restart_count $(launch_restart "$1")"
}
report "$v" COMPLETED 1
wait_for "job $v completed" job_is "$v" COMPLETED
# checkpointed first (--checkpoint-jobs 1): its history left the journal for the archive
archived() { [ "$(sqlite3 "$STATE/state.db" "SELECT COUNT(*) FROM archive WHERE job_id = $v")" = 1 ]; }
wait_for "job $v archived" archived
requeue_ok "$v" 2
report "$v" FAILED 2 3
wait_for "job $v failed" job_is "$v" FAILED
requeue_ok "$v" 3
report "$v" TIMEOUT 3 0 15
wait_for "job $v timed out" job_is "$v" TIMEOUT
requeue_ok "$v" 4
expect 200 pxalice DELETE "/v1/jobs/$v" >/dev/null
report "$v" CANCELLED 4 0 15
wait_for "job $v cancelled" job_is "$v" CANCELLED
requeue_ok "$v" 5
[ "$(as_alice sacct -D -n -X -P -j "$v" -o State | tr '\n' ' ')" = "PREEMPTED COMPLETED FAILED TIMEOUT CANCELLED RUNNING " ] ||
  fail "sacct -D -j $v: $(as_alice sacct -D -n -X -P -j "$v" -o State | tr '\n' ' ')"
ok "3. scontrol requeue of COMPLETED, FAILED, TIMEOUT and CANCELLED job $v: pending, then run as attempts 2-5"

# a job cancelled while pending (it never ran: job $v holds the node), requeued held
h=$(job)
wait_for "job $h judged by a cycle" reason_is "$h" Resources
expect 200 pxalice DELETE "/v1/jobs/$h" >/dev/null
wait_for "job $h cancelled" job_is "$h" CANCELLED
out=$(as_alice scontrol requeuehold "$h" 2>&1) || fail "scontrol requeuehold $h (cancelled pending): $out"
view_is "$h" '["PENDING",1]' || fail "requeueheld job $h: $(view "$h")"
show=$(as_alice scontrol show job "$h")
# Slurm's reason for it; a cycle then shows the core's hold (as for a running job's requeuehold)
grep -Eq "^   JobState=PENDING Reason=(job_requeued_in_held_state|JobHeldUser) " <<<"$show" || fail "scontrol show job $h: $show"
grep -q "^   Priority=0 " <<<"$show" || fail "requeueheld job $h is not held: $show"
# the journal replays it: a server killed with -9 restarts with the job pending
stop_server KILL
start_server --checkpoint-jobs 1
register_node n01 "[{\"job_id\":$v,\"state\":\"RUNNING\",\"exit_code\":0,\"term_signal\":0}]"
view_is "$h" '["PENDING",1]' || fail "requeued job $h after a restart: $(view "$h")"
view_is "$v" '["RUNNING",5]' || fail "job $v after a restart: $(view "$v")"
ok "3. requeuehold of a job cancelled while pending: held, Restarts=1, kept across kill -9"

n=$(job gpu '"requeue":false')
report "$v" COMPLETED 5
wait_for "job $n running" job_is "$n" RUNNING
report "$n" COMPLETED 0
wait_for "job $n completed" job_is "$n" COMPLETED
if out=$(as_alice scontrol requeue "$n" 2>&1); then fail "scontrol requeue of a finished --no-requeue job succeeded: $out"; fi
[ "$out" = "Requested operation is presently disabled for job $n" ] || fail "scontrol requeue of finished --no-requeue $n: $out"
job_is "$n" COMPLETED || fail "a refused requeue changed job $n: $(job_state "$n")"
ok "3. a finished --no-requeue job is refused in Slurm's words"

# A finished job requeued waits from its requeue on (Slurm resets its
# SubmitTime), as a running one's age restarts: job y, queued before x's
# requeue, goes first (equal priorities go by the time they wait from).
x=$(job)
wait_for "job $x running" job_is "$x" RUNNING
report "$x" COMPLETED 0
b=$(job)
wait_for "job $b running" job_is "$b" RUNNING
y=$(job)
wait_for "job $y judged by a cycle" reason_is "$y" Resources
ysub=$(expect 200 root GET "/v1/jobs/$y" | jq .submit_time)
past() { [ "$(date +%s)" -gt "$1" ]; } # times are whole seconds
wait_for "the second after job $y's submission" past "$ysub"
out=$(as_alice scontrol requeue "$x" 2>&1) || fail "scontrol requeue $x: $out"
report "$b" COMPLETED 0
wait_for "job $y running" job_is "$y" RUNNING
view_is "$x" '["PENDING",1]' || fail "requeued job $x went before job $y queued before its requeue: $(view "$x")"
report "$y" COMPLETED 0
wait_for "job $x running after $y" view_is "$x" '["RUNNING",1]'
report "$x" COMPLETED 1
ok "3. a requeued finished job waits from its requeue: job $y queued before it starts first"

# ---- 4. scontrol update of a running job
r=$(job)
wait_for "job $r running" job_is "$r" RUNNING
if out=$(as_alice scontrol update JobId="$r" Nice=5 2>&1); then fail "update Nice of running job $r succeeded: $out"; fi
[ "$out" = "Job is no longer pending execution for job $r" ] || fail "scontrol update Nice of running job $r: $out"
if out=$(as_alice scontrol update JobId="$r" TimeLimit=30 Nice=5 2>&1); then fail "update of running job $r succeeded: $out"; fi
[ "$out" = "Job is no longer pending execution for job $r" ] || fail "scontrol update TimeLimit+Nice of running job $r: $out"
e=$(expect 409 pxalice PATCH "/v1/jobs/$r" '{"nice":5}')
grep -q "Job is no longer pending execution" <<<"$e" || fail "PATCH nice of running job $r: $e"
ok "4. scontrol update of a running job's pending-only field: Slurm's 'Job is no longer pending execution'"
