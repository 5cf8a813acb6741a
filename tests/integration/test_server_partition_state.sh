#!/usr/bin/env bash
# A partition's state at run time (scontrol update PartitionName=P
# State=DOWN|UP): only operators change it (403 naming the rule, 404 for an
# unknown partition); DOWN keeps its jobs queued with reason PartitionDown
# while the other partition's jobs start; the listing says so ("up":false,
# which sinfo prints as "down"); the state survives a kill -9 of the server
# (journal replay); UP lets the held-back job start. A fake agent registers
# node n01 so that jobs can start.
source "$(dirname "$0")/lib_server.sh"
write_config
start_server
register_node n01
part_up() { api GET /v1/partitions | cut -d' ' -f2- | jq -r --arg p "$1" '.partitions[] | select(.name==$p) | .up'; }
reason_of() { api GET "/v1/jobs/$1" | cut -d' ' -f2- | jq -r .reason; }
reason_is() { [ "$(reason_of "$1")" = "$2" ]; }

expect 403 pxalice POST /v1/partitions/gpu/down | jq -e '.error.message | test("operator")' >/dev/null ||
  fail "a user's partition change is not refused naming the rule"
expect 404 pxoper POST /v1/partitions/nosuch/down >/dev/null
[ "$(part_up gpu)" = true ] || fail "gpu not up before the change"
expect 200 pxoper POST /v1/partitions/gpu/down '{"reason":"maintenance"}' >/dev/null
wait_for "gpu listed down" sh -c "[ \"\$(curl -s --unix-socket $SOCK http://x/v1/partitions | jq -r '.partitions[] | select(.name==\"gpu\") | .up')\" = false ]"
[ "$(part_up small)" = true ] || fail "small went down with gpu"
ok "only operators change a partition's state; the listing follows"

held=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"held","partition":"gpu","gpus_per_node":1,"script":"#!/bin/sh\ntrue\n"}}' | jq .job_id)
other=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"other","partition":"small","gpus_per_node":1,"script":"#!/bin/sh\ntrue\n"}}' | jq .job_id)
wait_for "job $other running" job_is "$other" RUNNING
wait_for "job $held reason PartitionDown" reason_is "$held" PartitionDown
[ "$(job_state "$held")" = PENDING ] || fail "job $held in a down partition: $(job_state "$held")"
ok "a down partition's job waits (PartitionDown), the other partition's runs"

stop_server KILL
start_server
[ "$(part_up gpu)" = false ] || fail "gpu up again after a restart: the change was not journaled"
register_node n01 "[{\"job_id\":$other,\"state\":\"RUNNING\",\"exit_code\":0,\"term_signal\":0}]"
wait_for "job $held reason PartitionDown after restart" reason_is "$held" PartitionDown
expect 200 pxoper POST /v1/partitions/gpu/up >/dev/null
wait_for "job $held running after gpu is up" job_is "$held" RUNNING
[ "$(part_up gpu)" = true ] || fail "gpu not listed up"
ok "the state survives a kill -9; UP starts the waiting job"
