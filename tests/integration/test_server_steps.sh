#!/usr/bin/env bash
# The job step API against the real server, with fake agents (root over the
# Unix socket): POST /v1/jobs/{id}/steps checks its caller and body (each
# 400 names the field), numbers steps from 0, lays the tasks out in blocks
# and queues one order per node of the step; the agents' step reports make
# GET .../steps/{n} RUNNING, then the worst end and exit code; DELETE sends
# a step-only signal; a step's end never ends the job. Port 42310.
source "$(dirname "$0")/lib_server.sh"
write_config
start_server
register_node n01
register_node n02
j=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"st","nodes_min":2,"script":"#!/bin/sh\n"}}' | jq .job_id)
wait_for "job running" job_is "$j" RUNNING
steps=/v1/jobs/$j/steps
names() { # names STATUS BODY FIELD: the error names FIELD
  local out
  out=$(expect "$1" pxalice POST "$steps" "$2")
  jq -e --arg f "$3" '.error.message | startswith($f)' <<<"$out" >/dev/null || fail "$2: '$out' does not name $3"
}
names 400 '{"argv":[],"out_dir":"/tmp/o"}' step.argv
names 400 '{"argv":["x"],"out_dir":"rel"}' step.out_dir
names 400 '{"argv":["x"],"out_dir":"/o","nodes":3}' step.nodes
names 400 '{"argv":["x"],"out_dir":"/o","env":["NOEQ"]}' step.env
names 400 '{"argv":["x"],"out_dir":"/o","gpus":1}' step.gpus
names 400 '{"argv":["x"],"out_dir":"/o","ntasks":2,"ntasks_per_node":1}' step.ntasks_per_node
expect 403 pxbob POST "$steps" '{"argv":["x"],"out_dir":"/o"}' >/dev/null
expect 404 pxalice POST /v1/jobs/424242/steps '{"argv":["x"],"out_dir":"/o"}' >/dev/null
ok "step requests are checked: caller, each field"

s=$(expect 201 pxalice POST "$steps" '{"argv":["hostname"],"out_dir":"/tmp/o","ntasks":3,"env":["A=1"]}')
[ "$(jq -c '[.step_id,.ntasks,.nodes]' <<<"$s")" = "[0,3,2]" ] || fail "first step: $s"
for n in n01 n02; do
  w=$(expect 200 root GET "/v1/agent/work?node=$n&after=0&timeout=0")
  [ "$(jq -c '.step[0] | [.job_id,.step_id,.nodes,.tasks_per_node,.ntasks,.argv,.env,.out_dir]' <<<"$w")" = \
    "[$j,0,[\"n01\",\"n02\"],[2,1],3,[\"hostname\"],[\"A=1\"],\"/tmp/o\"]" ] || fail "$n's step order: $w"
done
state() { expect 200 pxalice GET "$steps/$1" | jq -c "$2"; }
[ "$(state 0 '[.state,.exit_code]')" = '["RUNNING",0]' ] || fail "step 0 before reports: $(state 0 .)"
expect 403 pxbob GET "$steps/0" >/dev/null
report() { expect 200 root POST /v1/agent/report "{\"node\":\"$1\",\"job_id\":$j,\"state\":\"$2\",\"exit_code\":$3,\"step_id\":$4}" >/dev/null; }
report n01 COMPLETED 0 0
[ "$(state 0 '[.state,.nodes[0].state,.nodes[1].state]')" = '["RUNNING","COMPLETED","RUNNING"]' ] ||
  fail "step 0 after one report: $(state 0 .)"
report n02 FAILED 3 0
[ "$(state 0 '[.state,.exit_code,.nodes[1].exit_code,.nodes[1].tasks]')" = '["FAILED",3,3,1]' ] ||
  fail "step 0 after both reports: $(state 0 .)"
job_is "$j" RUNNING || fail "a step's end ended the job: $(job_state "$j")"
ok "a step: orders to both nodes, RUNNING until both report, then the worst end"

s=$(expect 201 pxalice POST "$steps" '{"argv":["sleep","9"],"out_dir":"/tmp/o","nodes":1}')
[ "$(jq -c '[.step_id,.ntasks,.nodes]' <<<"$s")" = "[1,1,1]" ] || fail "second step: $s"
expect 200 pxalice DELETE "$steps/1" >/dev/null
w=$(expect 200 root GET "/v1/agent/work?node=n01&after=0&timeout=0")
jq -e --argjson j "$j" '.signal | map(select(.job_id == $j and .step_id == 1 and .signal == 15)) | length == 1' <<<"$w" >/dev/null ||
  fail "no step-only signal for step 1: $w"
w=$(expect 200 root GET "/v1/agent/work?node=n02&after=0&timeout=0")
[ "$(jq '.step | length' <<<"$w")" = 1 ] || fail "n02 got the one-node step: $w"
report n01 FAILED 143 1
[ "$(state 1 .state)" = '"CANCELLED"' ] || fail "cancelled step: $(state 1 .)"
[ "$(expect 200 pxalice GET "$steps" | jq -c '[.steps[].step_id]')" = "[0,1]" ] || fail "step list"
expect 404 pxalice GET "$steps/7" >/dev/null
expect 400 pxalice GET "$steps/x" >/dev/null
ok "step ids count up; a one-node step goes to one node; DELETE signals only the step"

expect 200 pxalice DELETE "/v1/jobs/$j" >/dev/null
expect 409 pxalice POST "$steps" '{"argv":["x"],"out_dir":"/o"}' >/dev/null
ok "no step in a job that is not running"
