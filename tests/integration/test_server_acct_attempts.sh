#!/usr/bin/env bash
# Accounting keeps a row per attempt of a requeued job, as Slurm's `sacct -D`
# shows them: one job (8 GPUs on n01, fake agent) is preempted by a job of
# a higher PriorityTier partition (attempt 0: PREEMPTED), asks for its
# requeue (attempt 1: REQUEUED), loses its node across a server restart
# (attempt 2: NODE_FAIL) and completes (attempt 3: COMPLETED). The server is
# killed with -9 right after every requeue is acknowledged (before the
# job's end) and once more at the end. Checks: each attempt's row exactly
# once, with its run (start, end = the requeue's time, node, GPUs, billing,
# start and end seqs); `sacct -D` lists every attempt, plain `sacct` only
# the latest (while the job waits again: the pending job, not the earlier
# row). Run on SQLite, then on PostgreSQL when its binaries are installed.
# Before: a requeue wrote no row, so only the last attempt was ever seen.
source "$(dirname "$0")/lib_server.sh"
command -v jq >/dev/null || fail "jq is in make deps"
mkdir -p "$T/bin" && ln -s "$PHALANX" "$T/bin/sacct"
export PATH=$T/bin:$PATH PHALANX_SERVER=$SOCK
cat >"$T/slurm.conf" <<CONF
ClusterName=test
HeartbeatInterval=2
SlurmdTimeout=600
KillWait=2
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
NodeName=n[01-02] CPUs=64 RealMemory=512G Gres=gpu:h100:8
PartitionName=gpu Nodes=n[01-02] Default=YES PriorityTier=1 MaxTime=2-0 State=UP
PartitionName=urgent Nodes=n[01-02] PriorityTier=2 MaxTime=2-0 State=UP
CONF
cat >"$T/accounts.conf" <<CONF
Account=ml Fairshare=60 Users=pxalice
CONF

store=()
store_name=SQLite
job() { # [PARTITION]: a job of 8 GPUs; prints its id
  expect 201 pxalice POST /v1/jobs "{\"job\":{\"name\":\"att\",\"partition\":\"${1:-gpu}\",\"gpus_per_node\":8,\"script\":\"#!/bin/sh\\ntrue\"}}" |
    jq -r .job_id
}
report() { # JOB STATE RESTART [REQUEUE_REQUESTED] [SIGNAL]
  expect 200 root POST /v1/agent/report "{\"node\":\"n01\",\"job_id\":$1,\"state\":\"$2\",\"exit_code\":0,\"term_signal\":${5:-0},\"requeue_requested\":${4:-false},\"peak_mem_mib\":0,\"cpu_time_ms\":0,\"start_time\":0,\"end_time\":0,\"restart_count\":$3}" >/dev/null
}
running_known() {
  api GET "/v1/jobs?state=RUNNING" | cut -d' ' -f2- |
    jq -c '[.jobs[] | {job_id, state: "RUNNING", exit_code: 0, term_signal: 0}]'
}
restart() { start_server "${store[@]}"; register_node n01 "${1:-$(running_known)}"; }
crash() { # the server killed with -9 and started again, n01 knowing its running jobs
  local known
  known=$(running_known)
  stop_server KILL
  restart "$known"
}
rows_of() { expect 200 root GET "/v1/accounting?id=$1&since=1d" | jq -c '[.jobs[] | select(.job_id == '"$1"')]'; }
restarts_is() { [ "$(api GET "/v1/jobs?id=$1" | cut -d' ' -f2- | jq -r '.jobs[0].restarts')" = "$2" ]; }
running_attempt() { job_is "$1" RUNNING && restarts_is "$1" "$2"; }
# check_row JOB ATTEMPT STATE: exactly one row of that attempt, in STATE,
# with the run it had: n01, 8 GPUs, ended at or after its start, billed 8
# GPUs x its seconds (no TRESBillingWeights), its end record after its start's.
check_row() {
  local rows
  rows=$(rows_of "$1")
  jq -e --argjson a "$2" --arg st "$3" '
    [.[] | select((.restarts // 0) == $a)] | length == 1 and (.[0] | .state == $st and .nodelist == "n01"
      and .ngpus == 8 and .start_time > 0 and .end_time >= .start_time and (.billable_tres_s // 0) == 8 * (.end_time - .start_time)
      and .start_seq > 0 and .end_seq > .start_seq)' <<<"$rows" >/dev/null ||
    fail "job $1 attempt $2: want one $3 row with its run: $rows"
}
sacct_states() { sacct "$@" -n -X -P -o JobID,Restarts,State | tr '\n' ' '; }

scenario() {
  local v u rows want
  restart '[]'
  # attempt 0: preempted by a job of the urgent partition
  v=$(job)
  wait_for "job $v running" job_is "$v" RUNNING
  u=$(job urgent)
  preempt_order() {
    expect 200 root GET "/v1/agent/work?node=n01&after=0&timeout=1" |
      jq -e --argjson j "$v" '[.signal[] | select(.job_id == $j and .reason == "PREEMPTED")] | length > 0'
  }
  wait_for "the stop order of job $v (preempted by $u)" preempt_order
  report "$v" CANCELLED 0 false 15
  job_is "$v" PENDING && restarts_is "$v" 1 || fail "job $v is $(job_state "$v") after its preempted end, want PENDING (Restarts=1)"
  crash
  check_row "$v" 0 PREEMPTED
  wait_for "job $u running" job_is "$u" RUNNING
  # while it waits again: sacct shows the pending job, -D its row too
  [ "$(sacct_states -j "$v")" = "$v|1|PENDING " ] || fail "sacct -j $v while pending again: $(sacct_states -j "$v")"
  [ "$(sacct_states -D -j "$v")" = "$v|0|PREEMPTED $v|1|PENDING " ] ||
    fail "sacct -D -j $v while pending again: $(sacct_states -D -j "$v")"
  ok "attempt 0 of job $v: one PREEMPTED row after kill -9; sacct -D shows it, sacct the pending job"

  # attempt 1: the job asks for its requeue (scontrol requeue from within)
  report "$u" COMPLETED 0
  wait_for "job $v running again" running_attempt "$v" 1
  report "$v" COMPLETED 1 true
  crash
  check_row "$v" 1 REQUEUED
  # attempt 2: its node forgets it across a restart (NodeFail requeue)
  wait_for "job $v running a third time" running_attempt "$v" 2
  stop_server KILL
  restart '[]'
  wait_for "job $v requeued on its node's failure" restarts_is "$v" 3
  crash
  check_row "$v" 2 NODE_FAIL
  ok "attempts 1 and 2: one REQUEUED and one NODE_FAIL row after kill -9"

  # attempt 3 completes; every attempt once, after one more kill -9
  wait_for "job $v running a fourth time" running_attempt "$v" 3
  report "$v" COMPLETED 3
  crash
  rows=$(rows_of "$v")
  [ "$(jq -c '[.[] | [.restarts // 0, .state]]' <<<"$rows")" = '[[0,"PREEMPTED"],[1,"REQUEUED"],[2,"NODE_FAIL"],[3,"COMPLETED"]]' ] ||
    fail "job $v's rows: $rows"
  # each attempt's run ends before the next one starts
  jq -e '[range(1; length) as $i | .[$i - 1].end_time <= .[$i].start_time and .[$i - 1].end_seq < .[$i].start_seq] | all' \
    <<<"$rows" >/dev/null || fail "job $v's attempts overlap: $rows"
  want="$v|0|PREEMPTED $v|1|REQUEUED $v|2|NODE_FAIL $v|3|COMPLETED "
  [ "$(sacct_states -D -j "$v")" = "$want" ] || fail "sacct -D -j $v: $(sacct_states -D -j "$v"), want $want"
  [ "$(sacct_states -j "$v")" = "$v|3|COMPLETED " ] || fail "sacct -j $v: $(sacct_states -j "$v")"
  sacct -D -X -j "$v" -o JobID,Partition,AllocCPUS,State,ExitCode,Start,End,NodeList | sed 's/^/  /'
  ok "job $v: four attempts, one row each; sacct -D lists them, sacct the last (${store_name})"
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID" || fail "the server exited $? on SIGTERM (a sanitizer's report: $(grep -m1 -A3 Sanitizer "$T/server.log"))"
  SERVER_PID=
}

scenario
# the same on PostgreSQL
again_on_postgresql
scenario
