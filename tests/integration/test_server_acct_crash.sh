#!/usr/bin/env bash
# Accounting agrees with the journal across a kill -9 at the worst moment:
# right after a job's end is acknowledged (the earliest moment it is
# durable), for each way a job ends: completed, failed, cancelled while
# running, NODE_FAIL (--no-requeue), requeued then completed, cancelled
# while pending, an array task. After the restart every ended job has
# exactly one accounting row per attempt, the last with the journal's state
# (an earlier attempt's row: test_server_acct_attempts). Before: a job
# cancelled while pending never had a row at all.
source "$(dirname "$0")/lib_server.sh"
NODE_TIMEOUT=600
write_config
start_server
register_node n01
job() { expect 201 pxalice POST /v1/jobs "{\"job\":{\"name\":\"acct\",\"gpus_per_node\":8,\"script\":\"#!/bin/sh\\ntrue\"${1:-}}}" | jq -r .job_id; }
report() { # JOB STATE [EXIT]
  expect 200 root POST /v1/agent/report "{\"node\":\"n01\",\"job_id\":$1,\"state\":\"$2\",\"exit_code\":${3:-0},\"term_signal\":0,\"requeue_requested\":false,\"peak_mem_mib\":0,\"cpu_time_ms\":0,\"start_time\":0,\"end_time\":0,\"restart_count\":${4:-0}}" >/dev/null
}
crash() { stop_server KILL; start_server; register_node n01 "$(running_known)"; }
running_known() {
  api GET "/v1/jobs?state=RUNNING" | cut -d' ' -f2- |
    jq -c '[.jobs[] | {job_id, state: "RUNNING", exit_code: 0, term_signal: 0}]'
}
# check: for every ended job, one row per attempt, the last with the journal's state
check() {
  local jobs rows
  jobs=$(api GET "/v1/jobs?state=all&name=acct" | cut -d' ' -f2-)
  rows=$(expect 200 pxalice GET "/v1/accounting?user=pxalice&since=1d")
  local bad
  bad=$(jq -rn --argjson j "$jobs" --argjson r "$rows" '
    [$j.jobs[] | select(.state | IN("PENDING","RUNNING","REQUEUED") | not)] as $ended
    | [$ended[] | . as $e | [$r.jobs[] | select(.job_id == $e.job_id)] as $m
       | select(($m | map(.restarts // 0)) != [range(0; ($e.restarts // 0) + 1)] or $m[-1].state != $e.state)
       | "\($e.job_id) \($e.state): rows \($m | map(.state))"] | join("; ")')
  [ -z "$bad" ] || fail "$1: accounting disagrees with the journal: $bad"
}
run_next() { wait_for "job $1 running" job_is "$1" RUNNING; }

a=$(job); run_next "$a"; report "$a" COMPLETED; crash; check "completed"
b=$(job); run_next "$b"; report "$b" FAILED 3; crash; check "failed"
c=$(job); run_next "$c"; expect 200 pxalice DELETE "/v1/jobs/$c" >/dev/null; report "$c" CANCELLED 0; crash; check "cancelled while running"
ok "completed, failed, cancelled while running: one row each after kill -9"

# a job cancelled while pending (n01 busy with another)
hold=$(job); run_next "$hold"
p=$(job)
expect 200 pxalice DELETE "/v1/jobs/$p" >/dev/null
crash; check "cancelled while pending"
ok "cancelled while pending: its row is there after kill -9"

# NODE_FAIL: the running job's node is drained by an agent that no longer
# knows it (the journal's job is not on the node after recovery)
report "$hold" COMPLETED
nf=$(job ',"requeue":false'); run_next "$nf"
stop_server KILL; start_server; register_node n01 # does not list it
wait_for "job $nf NODE_FAIL" job_is "$nf" NODE_FAIL
crash; check "node fail"
# requeued (the node forgets it), then completed on its second attempt
rq=$(job); run_next "$rq"
stop_server KILL; start_server; register_node n01
wait_for "job $rq running again" job_is "$rq" RUNNING
report "$rq" COMPLETED 0 1; crash; check "requeued then completed"
ok "NODE_FAIL and requeued-then-completed: one row each after kill -9"

# an array: one task completes, the rest is cancelled
arr=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"acct","gpus_per_node":8,"array":"0-2","script":"#!/bin/sh\ntrue"}}' | jq -r .job_id)
wait_for "an array task running" bash -c "[ -n \"\$(curl -s --unix-socket $SOCK 'http://x/v1/jobs?state=RUNNING' | jq -r '.jobs[0].job_id // empty')\" ]"
t=$(api GET "/v1/jobs?state=RUNNING" | cut -d' ' -f2- | jq -r '.jobs[0].job_id')
report "$t" COMPLETED
expect 200 pxalice DELETE "/v1/jobs/$arr" >/dev/null
crash; check "array"
ok "array: its task's row after kill -9"
