#!/usr/bin/env bash
# API round trips against a real server over its Unix socket: submit (one
# and a batch), list with filters and paging, show, hold/release, update,
# cancel; a fake agent registers, the job starts (journaled, then the launch
# order appears for the agent), the agent reports the end, accounting and
# usage show it; drain/resume; watch; partitions, shares, 404 and 405.
# Run with STORE_URL=postgresql://... (test_server_pg.sh) for PostgreSQL.
source "$(dirname "$0")/lib_server.sh"
write_config
start_server ${STORE_URL:+--store "$STORE_URL"}

# submit one job as pxalice: the server fills user, uid, partition, account
out=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"train","gpus_per_node":2,"script":"#!/bin/sh\ntrue\n","time_limit_s":600}}')
j1=$(jq -r .job_id <<<"$out")
[ "$j1" = 1 ] || fail "first job id $j1, want 1"
show=$(expect 200 pxalice GET /v1/jobs/$j1)
[ "$(jq -r .spec.user <<<"$show")" = pxalice ] || fail "user not filled: $show"
[ "$(jq -r .spec.uid <<<"$show")" = "$(id -u pxalice)" ] || fail "uid not filled"
[ "$(jq -r .spec.partition <<<"$show")" = gpu ] || fail "default partition not filled"
[ "$(jq -r .state <<<"$show")" = PENDING ] || fail "state $(jq -r .state <<<"$show")"
# the full spec (script) only on request
full=$(expect 200 pxalice GET "/v1/jobs/$j1?spec=full")
[ "$(jq -r .spec.script <<<"$full")" = $'#!/bin/sh\ntrue' ] || fail "script not kept: $full"
ok "submit and show"

# a batch of three as pxbob, ids consecutive
out=$(expect 201 pxbob POST /v1/jobs '{"jobs":[{"name":"b1"},{"name":"b2","partition":"small"},{"name":"b3"}]}')
[ "$(jq -c .job_ids <<<"$out")" = "[2,3,4]" ] || fail "batch ids $out"
ok "batch submit"

# listing: read your writes (a job acknowledged is listed at once, no wait),
# filters and paging (pages of 2 over 4 jobs: ids 1,2 then 3,4)
l=$(expect 200 pxbob GET /v1/jobs)
[ "$(jq -c '[.jobs[].job_id]' <<<"$l")" = "[1,2,3,4]" ] || fail "acknowledged jobs not listed at once: $l"
l=$(expect 200 pxalice GET "/v1/jobs?user=pxbob")
[ "$(jq -c '[.jobs[].job_id]' <<<"$l")" = "[2,3,4]" ] || fail "user filter: $l"
l=$(expect 200 pxalice GET "/v1/jobs?partition=small")
[ "$(jq -c '[.jobs[].job_id]' <<<"$l")" = "[3]" ] || fail "partition filter: $l"
l=$(expect 200 pxalice GET "/v1/jobs?name=b3")
[ "$(jq -c '[.jobs[].job_id]' <<<"$l")" = "[4]" ] || fail "name filter: $l"
l=$(expect 200 pxalice GET "/v1/jobs?id=1,3")
[ "$(jq -c '[.jobs[].job_id]' <<<"$l")" = "[1,3]" ] || fail "id filter: $l"
l=$(expect 200 pxalice GET "/v1/jobs?limit=2")
[ "$(jq -c '[.jobs[].job_id]' <<<"$l")" = "[1,2]" ] && [ "$(jq .next <<<"$l")" = 2 ] || fail "page 1: $l"
l=$(expect 200 pxalice GET "/v1/jobs?limit=2&after=2")
[ "$(jq -c '[.jobs[].job_id]' <<<"$l")" = "[3,4]" ] && [ "$(jq .next <<<"$l")" = 0 ] || fail "page 2: $l"
l=$(expect 200 pxalice GET "/v1/jobs?state=PENDING&account=ml")
[ "$(jq '.jobs|length' <<<"$l")" = 4 ] || fail "state+account filter: $l"
# fields=: only the named members, in the server's order; unknown names refused
l=$(expect 200 pxalice GET "/v1/jobs?fields=state,job_id&user=pxbob")
[ "$(jq -c '.jobs' <<<"$l")" = '[{"job_id":2,"state":"PENDING"},{"job_id":3,"state":"PENDING"},{"job_id":4,"state":"PENDING"}]' ] ||
  fail "fields=state,job_id: $l"
l=$(expect 200 pxalice GET "/v1/jobs?fields=spec&id=3")
[ "$(jq -c '.jobs[0] | keys' <<<"$l")" = '["spec"]' ] && [ "$(jq -r '.jobs[0].spec.partition' <<<"$l")" = small ] ||
  fail "fields=spec: $l"
e=$(expect 400 pxalice GET "/v1/jobs?fields=job_id,nosuch")
[ "$(jq -r .error.field <<<"$e")" = fields ] && grep -q nosuch <<<"$e" || fail "unknown field: $e"
ok "list filters, paging and fields"

# hold / release / update / cancel of a pending job
expect 200 pxbob POST /v1/jobs/2/hold >/dev/null
wait_for "job 2 held" bash -c "curl -s --unix-socket $SOCK 'http://x/v1/jobs?id=2' | jq -e '.jobs[0].reason==\"JobHeldUser\"'"
expect 200 pxbob POST /v1/jobs/2/release >/dev/null
expect 200 pxbob PATCH /v1/jobs/2 '{"nice":10}' >/dev/null
[ "$(expect 200 pxbob GET /v1/jobs/2 | jq .spec.nice)" = 10 ] || fail "nice not updated"
expect 200 pxbob DELETE /v1/jobs/3 >/dev/null
wait_for "job 3 cancelled" job_is 3 CANCELLED
[ "$(expect 200 pxbob GET /v1/jobs/3 | jq -r .cancelled_by)" = pxbob ] || fail "cancelled_by"
expect 409 pxbob DELETE /v1/jobs/3 >/dev/null
ok "hold, release, update, cancel"

# an agent registers n01: job 1 (2 GPUs) starts there, journaled before the order
register_node n01
wait_for "job 1 running" job_is 1 RUNNING
show=$(expect 200 pxalice GET /v1/jobs/1)
[ "$(jq -r .nodelist <<<"$show")" = n01 ] || fail "nodelist: $show"
[ "$(jq -r .ngpus <<<"$show")" = 2 ] || fail "ngpus: $show"
work=$(expect 200 root GET "/v1/agent/work?node=n01&after=0&timeout=5")
[ "$(jq '[.launch[] | select(.job_id==1)] | length' <<<"$work")" = 1 ] || fail "no launch order: $work"
[ "$(jq -r '.launch[] | select(.job_id==1) | .user' <<<"$work")" = pxalice ] || fail "launch user"
[ "$(jq -c '.launch[] | select(.job_id==1) | .gpus' <<<"$work")" = "[0,1]" ] || fail "launch gpus"
seq=$(jq .seq <<<"$work")
# orders are acknowledged by asking for later ones: nothing more now
work=$(expect 200 root GET "/v1/agent/work?node=n01&after=$seq&timeout=0")
[ "$(jq '.launch|length' <<<"$work")" = 0 ] || fail "order not acknowledged: $work"
ok "agent register, start, launch order"

# running job: only its time limit changes (test_server_update_running.sh); a nice gets 409
expect 409 pxalice PATCH /v1/jobs/1 '{"nice":5}' >/dev/null
# the agent reports the end; a repeated report is acknowledged (retries are safe)
rep='{"node":"n01","job_id":1,"state":"COMPLETED","exit_code":0,"term_signal":0,"requeue_requested":false,"peak_mem_mib":100,"cpu_time_ms":1500,"start_time":0,"end_time":0}'
expect 200 root POST /v1/agent/report "$rep" >/dev/null
expect 200 root POST /v1/agent/report "$rep" >/dev/null
wait_for "job 1 completed" job_is 1 COMPLETED
acct=$(expect 200 pxalice GET "/v1/accounting?user=pxalice")
[ "$(jq -r '.jobs[0].state' <<<"$acct")" = COMPLETED ] || fail "accounting row: $acct"
[ "$(jq -r '.jobs[0].ngpus' <<<"$acct")" = 2 ] || fail "accounting gpus: $acct"
usage=$(expect 200 pxalice GET "/v1/usage?since=1d&by=user")
[ "$(jq -r '.usage[0].key' <<<"$usage")" = pxalice ] || fail "usage: $usage"
[ "$(jq -r '.usage[0].jobs' <<<"$usage")" = 1 ] || fail "usage jobs: $usage"
expect 200 pxalice GET "/v1/usage?by=account" >/dev/null
expect 200 pxalice GET "/v1/usage?by=partition" >/dev/null
ok "report, accounting, usage"

# watch: a long-poll from the current seq returns with the job submitted meanwhile
seq=$(expect 200 pxalice GET "/v1/watch?after=0&timeout=0" | jq .seq)
( sleep 0.3; api_as pxbob POST /v1/jobs '{"job":{"name":"late","hold":true}}' >/dev/null ) &
bg=$!
w=$(expect 200 pxalice GET "/v1/watch?after=$seq&timeout=10")
[ "$(jq -c '[.jobs[].spec.name]' <<<"$w")" = '["late"]' ] || fail "watch: $w"
wait $bg
ok "watch"

# nodes, drain (operator) and resume
n=$(expect 200 pxalice GET /v1/nodes)
[ "$(jq '.nodes|length' <<<"$n")" = 4 ] || fail "nodes: $n"
jq -e ".nodes[0].state==\"MIXED\"" <<<"$n" >/dev/null || fail "n01 state: $(jq -c ".nodes[0]" <<<"$n")"
expect 200 pxoper POST /v1/nodes/n01/drain '{"reason":"bad fan"}' >/dev/null
wait_for "n01 draining" bash -c "curl -s --unix-socket $SOCK http://x/v1/nodes/n01 | jq -e '.state==\"DRAINING\" and .reason==\"bad fan\"'"
expect 200 pxoper POST /v1/nodes/n01/resume >/dev/null
wait_for "n01 back" bash -c "curl -s --unix-socket $SOCK http://x/v1/nodes/n01 | jq -e '.state==\"MIXED\"'"
expect 404 pxoper POST /v1/nodes/zz99/drain '{"reason":"x"}' >/dev/null
ok "nodes, drain, resume"

p=$(expect 200 pxalice GET /v1/partitions)
[ "$(jq -c '[.partitions[].name]' <<<"$p")" = '["gpu","small"]' ] || fail "partitions: $p"
[ "$(jq '.partitions[0].ngpus' <<<"$p")" = 32 ] || fail "gpu partition GPUs: $p"
expect 200 pxalice GET /v1/shares | jq -e '.shares|type=="array"' >/dev/null
expect 200 pxalice GET /v1/reservations >/dev/null
expect 404 pxalice GET /v1/nope >/dev/null
expect 405 pxalice PUT /v1/jobs >/dev/null
expect 404 pxalice GET /v1/jobs/999 >/dev/null
ok "partitions, shares, errors"

# attempts: a late report about an earlier attempt of a requeued job is
# acknowledged and ignored; one about an attempt not started is refused
id=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"rq","gpus_per_node":1}}' | jq .job_id)
wait_for "job $id running" job_is "$id" RUNNING
rq() { # rq STATE RESTART_COUNT [REQUEUE]
  echo "{\"node\":\"n01\",\"job_id\":$id,\"state\":\"$1\",\"exit_code\":0,\"term_signal\":0,\"requeue_requested\":${3:-false},\"peak_mem_mib\":0,\"cpu_time_ms\":0,\"start_time\":0,\"end_time\":0,\"restart_count\":$2}"
}
expect 200 root POST /v1/agent/report "$(rq COMPLETED 0 true)" >/dev/null
wait_for "job $id restarted" bash -c "curl -s --unix-socket $SOCK http://x/v1/jobs/$id | jq -e '.state==\"RUNNING\" and .restarts==1'"
expect 200 root POST /v1/agent/report "$(rq FAILED 0)" >/dev/null
[ "$(job_state "$id")" = RUNNING ] || fail "a stale report ended attempt 1: $(job_state "$id")"
e=$(expect 409 root POST /v1/agent/report "$(rq FAILED 7)")
[ "$(jq -r .error.field <<<"$e")" = restart_count ] || fail "future attempt: $e"
expect 200 root POST /v1/agent/report "$(rq COMPLETED 1)" >/dev/null
wait_for "job $id completed" job_is "$id" COMPLETED
ok "reports on other attempts"

# without an account a job goes to the user's DefaultAccount= (pxoper: ml
# first in the tree, physics the default), with one to that one
o=$(expect 201 pxoper POST /v1/jobs '{"jobs":[{"name":"d1","hold":true},{"name":"d2","account":"ml","hold":true}]}')
d1=$(jq '.job_ids[0]' <<<"$o")
[ "$(expect 200 pxoper GET /v1/jobs/$d1 | jq -r .spec.account)" = physics ] || fail "DefaultAccount=physics not used"
[ "$(expect 200 pxoper GET /v1/jobs/$((d1 + 1)) | jq -r .spec.account)" = ml ] || fail "--account ml not kept"
ok "default account"
