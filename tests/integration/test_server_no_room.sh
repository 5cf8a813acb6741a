#!/usr/bin/env bash
# A cycle that could start nothing is not run every few milliseconds: with
# no node up, a storm of submits costs at most one cycle per 0.1 s (plus
# the second's periodic one), where it cost one per submit group before;
# new jobs still get their reasons within that time. Once a node comes up
# with room, jobs start at once, as ever.
source "$(dirname "$0")/lib_server.sh"
write_config
start_server
cycles() { curl -s --unix-socket "$SOCK" http://x/metrics | awk '$1 == "phalanx_scheduler_cycle_duration_seconds_count" { print $2 }'; }
reason_of() { api GET "/v1/jobs/$1" | cut -d' ' -f2- | jq -r .reason; }
has_reason() { [ "$(reason_of "$1")" != None ] && [ -n "$(reason_of "$1")" ]; }

c0=$(cycles)
t0=$(date +%s%N)
for i in $(seq 1 60); do
  expect 201 pxalice POST /v1/jobs '{"job":{"name":"storm","gpus_per_node":1,"script":"#!/bin/sh\ntrue\n"}}' >/dev/null
done
last=$(api GET '/v1/jobs?name=storm' | cut -d' ' -f2- | jq '[.jobs[].job_id] | max')
wait_for "job $last has a pending reason" has_reason "$last"
c1=$(cycles)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
allowed=$(( ms / 100 + ms / 1000 + 3 ))
[ $((c1 - c0)) -le "$allowed" ] || fail "$((c1 - c0)) cycles in $ms ms for 60 submits with no node up (at most $allowed)"
ok "no node up: $((c1 - c0)) cycles in $ms ms for 60 submits; reasons still set ($(reason_of "$last"))"

register_node n01 # room for 8 of them: the registration wakes the loop, which cycles
running() { [ "$(api GET '/v1/jobs?name=storm&state=RUNNING' | cut -d' ' -f2- | jq '.jobs | length')" = 8 ]; }
WAIT_S=5 wait_for "8 storm jobs running on n01" running
ok "once a node has room, the waiting jobs start at once"
