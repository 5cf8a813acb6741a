#!/usr/bin/env bash
# A running job's time limit raised (scontrol update JobId= TimeLimit=) on a
# real `phalanx dev` cluster: the server tells the job's agent, whose
# supervisor enforces the limit, so the job outlives its old limit and
# COMPLETES; its twin, left alone under the same short limit, ends TIMEOUT
# (the limit is really enforced). Server rules: test_server_update_running.sh.
source "$(dirname "$0")/lib_dev.sh"
start_dev "scontrol sacct sinfo" --nodes 1 --cpus 8
wait_for 60 sh -c '[ "$(sinfo -h -t idle -o %D -p batch)" = 1 ]' || { echo "node not idle"; sinfo; exit 1; }
sock=${PHALANX_SERVER#unix:}
submit() { # limit, seconds of sleep: prints the job id
  curl -sf --unix-socket "$sock" -H 'Content-Type: application/json' -X POST http://x/v1/jobs --data-binary \
    "{\"job\":{\"account\":\"ops\",\"ntasks\":1,\"time_limit_s\":$1,\"workdir\":\"$tmp\",\"script\":\"#!/bin/sh\\nsleep $2\\n\"}}" |
    jq -r .job_id
}
state() { sacct -X -n -P -o State -j "$1" | head -1; }
running() { [ "$(state "$1")" = RUNNING ]; }
ended() { [[ "$(state "$1")" =~ ^(COMPLETED|TIMEOUT|FAILED|CANCELLED) ]]; }
# 8 s limits, 14 s sleeps: the raise lands well before the old limit even on a busy machine
a=$(submit 8 14)
b=$(submit 8 14)
wait_for 30 running "$a" || fail "job $a did not start: $(state "$a")"
scontrol update JobId="$a" TimeLimit=2 || fail "scontrol update TimeLimit of running job $a"
[ "$(scontrol show job "$a" | grep -o 'TimeLimit=[^ ]*')" = TimeLimit=00:02:00 ] ||
  fail "job $a: $(scontrol show job "$a" | grep -o 'TimeLimit=[^ ]*')"
wait_for 60 ended "$a" && wait_for 60 ended "$b" || fail "jobs did not end: $a $(state "$a"), $b $(state "$b")"
[ "$(state "$b")" = TIMEOUT ] || fail "job $b under its 8 s limit ended $(state "$b"), want TIMEOUT"
[ "$(state "$a")" = COMPLETED ] || fail "job $a with its limit raised ended $(state "$a"), want COMPLETED"
[ "$fails" = 0 ] && echo "ok   job $a outlived its old 8 s limit after the raise (COMPLETED); job $b ended TIMEOUT"
exit "$fails"
