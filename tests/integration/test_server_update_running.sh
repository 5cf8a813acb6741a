#!/usr/bin/env bash
# PATCH /v1/jobs/{id} {"time_limit_s":N} of a RUNNING job (scontrol update
# TimeLimit=), against a real server and a fake agent: as Slurm, the owner
# may only lower the limit the job runs under, an operator may raise it; the
# change is journaled, shown, survives a restart, and the node's agent gets
# the new limit (a signal order that signals nothing, with time_limit_s);
# other fields of a running job are refused. The agent's side (the job then
# outlives its old limit): test_dev_time_limit.sh.
source "$(dirname "$0")/lib_server.sh"
write_config
start_server
register_node n01
j=$(expect 201 pxalice POST /v1/jobs '{"job":{"gpus_per_node":8,"time_limit_s":600,"script":"#!/bin/sh\nsleep 100\n"}}' | jq -r .job_id)
wait_for "job $j running" job_is "$j" RUNNING
seq=$(jq .seq <<<"$(expect 200 root GET "/v1/agent/work?node=n01&after=0&timeout=5")")
limit() { jq -r .spec.time_limit_s <<<"$(expect 200 pxalice GET /v1/jobs/$j)"; }

e=$(expect 403 pxalice PATCH /v1/jobs/$j '{"time_limit_s":1200}')
grep -q "users may only lower a time limit" <<<"$e" || fail "a user raising a running job's limit: $e"
expect 403 pxbob PATCH /v1/jobs/$j '{"time_limit_s":60}' >/dev/null
seq0=$(journal_seq)
expect 200 pxalice PATCH /v1/jobs/$j '{"time_limit_s":300}' >/dev/null
[ "$(limit)" = 300 ] || fail "limit after the owner lowered it: $(limit)"
[ "$(journal_seq)" -gt "$seq0" ] || fail "the new limit was not journaled"
work=$(expect 200 root GET "/v1/agent/work?node=n01&after=$seq&timeout=5")
seq=$(jq .seq <<<"$work")
[ "$(jq -c "[.signal[] | select(.job_id==$j) | [.signal, .grace_s, .time_limit_s]]" <<<"$work")" = '[[0,-1,300]]' ] ||
  fail "the agent was not told the lowered limit: $work"
ok "the owner lowers a running job's limit (journaled, the agent told), may not raise it"

expect 200 pxoper PATCH /v1/jobs/$j '{"time_limit_s":7200}' >/dev/null
[ "$(limit)" = 7200 ] || fail "limit after the operator raised it: $(limit)"
work=$(expect 200 root GET "/v1/agent/work?node=n01&after=$seq&timeout=5")
[ "$(jq -c "[.signal[] | select(.job_id==$j) | .time_limit_s]" <<<"$work")" = '[7200]' ] ||
  fail "the agent was not told the raised limit: $work"
e=$(expect 409 pxoper PATCH /v1/jobs/$j '{"time_limit_s":7000,"nice":1}')
grep -q "Job is no longer pending execution" <<<"$e" || fail "a running job's nice: $e"
[ "$(limit)" = 7200 ] || fail "a refused update changed the limit: $(limit)"
ok "an operator raises a running job's limit; other fields of a running job refused"

# the journal keeps it: after a restart the job still runs under 7200 s
stop_server
start_server
register_node n01 "[{\"job_id\":$j,\"state\":\"RUNNING\"}]"
[ "$(job_state "$j")" = RUNNING ] || fail "job $j after restart: $(job_state "$j")"
[ "$(limit)" = 7200 ] || fail "limit after a restart: $(limit)"
ok "the raised limit survives a restart"

# An agent from before version 0.2.0 refuses "time_limit_s" (its decoder is
# strict, and one refused order refuses the whole answer, poll after poll):
# the server leaves the new limit out for it; the orders beside it still
# arrive, and the answer's seq covers the one left out.
old=$(node_report n01 "[{\"job_id\":$j,\"state\":\"RUNNING\"}]" | jq -c '.version = "0.1.0"')
expect 200 root POST /v1/agent/register "$old" >/dev/null
seq=$(jq .seq <<<"$(expect 200 root GET "/v1/agent/work?node=n01&after=0&timeout=1")")
expect 200 pxoper PATCH /v1/jobs/$j '{"time_limit_s":3600}' >/dev/null
[ "$(limit)" = 3600 ] || fail "limit after the operator set it: $(limit)"
expect 200 pxalice DELETE /v1/jobs/$j >/dev/null
work=$(expect 200 root GET "/v1/agent/work?node=n01&after=$seq&timeout=5")
! grep -q time_limit_s <<<"$work" || fail "an agent of version 0.1.0 was sent a time limit: $work"
[ "$(jq -c "[.signal[] | select(.job_id==$j) | .reason]" <<<"$work")" = '["CANCELLED"]' ] ||
  fail "the cancel queued after the left-out limit did not arrive: $work"
seq=$(jq .seq <<<"$work")
work=$(expect 200 root GET "/v1/agent/work?node=n01&after=$seq&timeout=1")
[ "$(jq -c '.signal' <<<"$work")" = '[]' ] || fail "orders left after the agent acknowledged $seq: $work"
grep -q "node n01: agent version '0.1.0'" "$T/server.log" || fail "the server did not say why the limit was not sent"
ok "an agent older than 0.2.0 is not sent the new limit; the cancel after it arrives"
