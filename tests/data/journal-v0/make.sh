#!/usr/bin/env bash
# make.sh - records journal-v0/: a SQLite store written by the server as it
# was before the journal record became the versioned core event (issue 13),
# and what that server showed before it stopped (expected.json). The test
# test_server_journal_v0.sh replays state.db into the current server and
# expects the same jobs, states and usage.
#
# The session is scripted through the API with fake agents over the Unix
# socket (as the test_server_*.sh tests): submits (a plain job, a batch, an
# array, a two-node gang), a cancel, hold/release, an update, starts, ends,
# a requeue, a node drain/resume, a partition down/up and a reservation.
# Run from the repository root with PHALANX=build/phalanx; it rewrites
# tests/data/journal-v0/{state.db,expected.json,slurm.conf,accounts.conf}.
OUTDIR=$(cd "$(dirname "$0")" && pwd)
source "$OUTDIR/../../integration/lib_server.sh"
NODE_TIMEOUT=100000
write_config
start_server

submit() { expect 201 "$1" POST /v1/jobs "$2"; }
report() { # report NODE JOB STATE [EXIT] [REQUEUE]
  expect 200 root POST /v1/agent/report "{\"node\":\"$1\",\"job_id\":$2,\"state\":\"$3\",\"exit_code\":${4:-0},\"term_signal\":0,\"requeue_requested\":${5:-false},\"peak_mem_mib\":64,\"cpu_time_ms\":900,\"start_time\":0,\"end_time\":0}" >/dev/null
}
running_on() { [ "$(api GET "/v1/jobs?id=$1" | cut -d' ' -f2- | jq -r '.jobs[0] | "\(.state) \(.nodelist)"')" = "RUNNING $2" ]; }

# 1-4: before any node is up, everything stays pending
submit pxalice '{"job":{"name":"train","gpus_per_node":2,"script":"#!/bin/sh\ntrue\n","time_limit_s":600,"requeue":true}}' >/dev/null  # 1
submit pxbob '{"jobs":[{"name":"b1","gpus_per_node":1},{"name":"b2","partition":"small","gpus_per_node":1},{"name":"b3","gpus_per_node":8}]}' >/dev/null  # 2,3,4
submit pxeve '{"job":{"name":"sweep","array":"0-3%2","gpus_per_node":1,"script":"#!/bin/sh\ntrue\n"}}' >/dev/null  # 5 (tasks 6-9)
submit pxoper '{"job":{"name":"gang","nodes_min":2,"nodes_max":2,"gpus_per_node":8,"time_limit_s":3600}}' >/dev/null  # 10
expect 200 pxbob DELETE /v1/jobs/3 >/dev/null                     # cancel pending
expect 200 pxbob POST /v1/jobs/4/hold >/dev/null
expect 200 pxbob POST /v1/jobs/4/release >/dev/null
expect 200 pxoper PATCH /v1/jobs/4 '{"nice":10,"time_limit_s":1200}' >/dev/null
expect 200 pxoper POST /v1/jobs/2/hold >/dev/null                 # admin hold, kept
expect 200 pxoper POST /v1/partitions/small/down '{"reason":"maint"}' >/dev/null
expect 200 pxoper POST /v1/partitions/small/up >/dev/null
now=$(date +%s)
expect 201 root POST /v1/reservations "{\"name\":\"train\",\"start_s\":$((now + 315360000)),\"duration_s\":7200,\"nodes\":[\"n04\"],\"account\":\"ml\"}" >/dev/null

# nodes come: jobs start (journaled "start")
for n in n01 n02 n03 n04; do register_node $n; done
wait_for "job 1 running" job_is 1 RUNNING
wait_for "gang running" job_is 10 RUNNING
wait_for "array task 6 running" job_is 6 RUNNING
expect 200 pxoper POST /v1/nodes/n04/drain '{"reason":"disk"}' >/dev/null
expect 200 pxoper POST /v1/nodes/n04/resume >/dev/null
expect 200 pxoper POST /v1/nodes/n03/drain '{"reason":"fan"}' >/dev/null  # kept drained

node_of() { api GET "/v1/jobs?id=$1" | cut -d' ' -f2- | jq -r '.jobs[0].nodelist'; }
# job 1 asks to be requeued once, then runs again and completes
n1=$(node_of 1)
report "$n1" 1 COMPLETED 0 true
wait_for "job 1 restarted" bash -c "curl -s --unix-socket $SOCK http://x/v1/jobs/1 | jq -e '.state==\"RUNNING\" and .restarts==1'"
n1=$(node_of 1)
expect 200 root POST /v1/agent/report "{\"node\":\"$n1\",\"job_id\":1,\"state\":\"COMPLETED\",\"exit_code\":0,\"term_signal\":0,\"requeue_requested\":false,\"peak_mem_mib\":64,\"cpu_time_ms\":900,\"start_time\":0,\"end_time\":0,\"restart_count\":1}" >/dev/null
wait_for "job 1 completed" job_is 1 COMPLETED
# array tasks: 6 completes, 7 fails; 8 and 9 start after them
report "$(node_of 6)" 6 COMPLETED
report "$(node_of 7)" 7 FAILED 3
wait_for "task 8 running" job_is 8 RUNNING
report "$(node_of 8)" 8 COMPLETED
# a running job cancelled: the stop order, then the agent's end report
wait_for "job 4 running" job_is 4 RUNNING
expect 200 pxbob DELETE /v1/jobs/4 >/dev/null
report "$(node_of 4)" 4 CANCELLED 0
wait_for "job 4 cancelled" job_is 4 CANCELLED

source "$OUTDIR/dump.sh"
dump >"$T/before.json"
stop_server TERM
start_server
dump >"$T/after.json"
diff "$T/before.json" "$T/after.json" || fail "the recording server does not reproduce itself"
stop_server TERM
sqlite3 "$STATE/state.db" 'PRAGMA wal_checkpoint(TRUNCATE); VACUUM;'
cp "$STATE/state.db" "$OUTDIR/state.db"
cp "$T/slurm.conf" "$T/accounts.conf" "$OUTDIR/"
cp "$T/before.json" "$OUTDIR/expected.json"
ok "recorded $(du -k "$OUTDIR/state.db" | cut -f1) KiB, $(jq '.jobs|length' "$OUTDIR/expected.json") jobs"
