#!/usr/bin/env bash
# GPU faults reported to the server (POST /v1/agent/gpu) under the site's
# GpuFaultPolicy= (docs/gpus.md), with fake agents over the API: an XID on
# a GPU of a running 2-node gang requeues the gang whole (same id, restart
# count 1) and it runs again off that GPU, while the job on the node's
# healthy GPUs keeps running; the GPU is out of service in the node's
# listing and in /metrics; a second fault quarantines it, which a node
# resume does not clear and gpu_resume does; a lost GPU (policy
# gpu+drain+fail) drains the node naming GPU and fault and fails the job on
# it; an application XID does nothing; the GPU's state survives a restart;
# bad reports are refused naming the field.
source "$(dirname "$0")/lib_server.sh"
write_config
cat >>"$T/slurm.conf" <<CONF
GpuQuarantineFaults=2
GpuNodeFlapFaults=4
GpuFaultPolicy=lost:gpu+drain+fail,nvlink:gpu+requeue+grace
CONF
start_server
for n in n01 n02 n03 n04; do register_node $n; done
heartbeat() { for n in n01 n02 n03 n04; do api POST /v1/agent/heartbeat "{\"node\":\"$n\"}" >/dev/null; done; }
gpu_fault() { api POST /v1/agent/gpu "{\"node\":\"$1\",\"gpu\":$2,\"fault\":\"$3\",\"code\":${4:-0},\"detail\":\"${5:-}\"}"; }
node_json() { expect 200 root GET "/v1/nodes/$1"; }
# GPUs a job's launch order (restart N) gives node $1
gpus_of() { expect 200 root GET "/v1/agent/work?node=$1&after=0&timeout=0" | jq -c --argjson j "$2" --argjson r "$3" '[.launch[] | select(.job_id==$j and (.restart_count // 0)==$r) | .gpus[]]'; }

gang=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"gang","nodes_min":2,"nodes_max":2,"gpus_per_node":6,"script":"#!/bin/sh\ntrue"}}' | jq -r .job_id)
wait_for "gang running" job_is "$gang" RUNNING
first=$(expect 200 root GET "/v1/jobs/$gang" | jq -r .nodelist | sed 's/n\[\([0-9]*\).*/n\1/')
others=$(for n in n01 n02 n03 n04; do [ "$n" = "$first" ] || printf '%s,' "$n"; done)
small=$(expect 201 pxbob POST /v1/jobs "{\"job\":{\"name\":\"small\",\"exclude\":\"${others%,}\",\"gpus_per_node\":2,\"script\":\"#!/bin/sh\\ntrue\"}}" | jq -r .job_id)
wait_for "small job running" job_is "$small" RUNNING
gpu=$(gpus_of "$first" "$gang" 0 | jq '.[0]')
[ "$(expect 200 root GET "/v1/jobs/$small" | jq -r .nodelist)" = "$first" ] || fail "small job not on $first"
ok "gang $gang on $(expect 200 root GET "/v1/jobs/$gang" | jq -r .nodelist), job $small on $first's other GPUs"

t0=$(date +%s%N)
expect 200 root POST /v1/agent/gpu "{\"node\":\"$first\",\"gpu\":$gpu,\"fault\":\"xid\",\"code\":79,\"detail\":\"fallen off the bus\"}" >/dev/null
restarted() { [ "$(expect 200 root GET "/v1/jobs/$gang" | jq -r '.restarts // 0')" = 1 ]; }
wait_for "gang requeued" restarted
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
job_is "$small" RUNNING || fail "the job on the healthy GPUs stopped: $(job_state "$small")"
work=$(expect 200 root GET "/v1/agent/work?node=$first&after=0&timeout=0")
jq -e --argjson j "$gang" '[.signal[] | select(.job_id==$j and .reason=="NODE_FAIL")] | length == 1' <<<"$work" >/dev/null ||
  fail "no stop order for the gang on $first: $work"
heartbeat
wait_for "gang running again" job_is "$gang" RUNNING
for n in n01 n02 n03 n04; do
  [ "$n" = "$first" ] || continue
  gpus_of "$n" "$gang" 1 | jq -e --argjson g "$gpu" 'index($g) == null' >/dev/null || fail "the gang runs on the faulty GPU again"
done
node=$(node_json "$first")
jq -e --argjson g "$gpu" '.gpus_out == 1 and (.gpu_health | test("^\($g):UNUSABLE\\(GPU \($g): xid 79: fallen off the bus\\)$")) and .state != "DRAINED"' <<<"$node" >/dev/null ||
  fail "node listing: $node"
metric() { curl -s --unix-socket "$SOCK" http://x/metrics | grep -q "^$1"; } # the state gauges lag up to a second
wait_for "phalanx_gpu_health in /metrics" metric "phalanx_gpu_health{node=\"$first\",gpu=\"$gpu\",state=\"UNUSABLE\"} 1"
wait_for "the GPU counted down" metric 'phalanx_gpus{partition="gpu",state="down"} 1'
ok "xid 79: gang requeued whole in ${ms} ms (restart 1), runs again off GPU $gpu; job $small keeps running; GPU UNUSABLE in listing and metrics"

# an application's XID (13) is no GPU fault; throttling is only counted
gpu_fault "$first" 1 xid 13 >/dev/null
gpu_fault "$first" 1 throttle 64 >/dev/null
[ "$(node_json "$first" | jq .gpus_out)" = 1 ] || fail "xid 13 or throttling took a GPU out"
wait_for "throttling counted" metric 'phalanx_gpu_faults_total{fault="throttle"} 1'
ok "xid 13 and throttling: counted, nothing taken out"

# a second fault within the window quarantines; a node resume keeps it out
gpu_fault "$first" "$gpu" ecc 2 >/dev/null
node_json "$first" | jq -e '.gpu_health | test("QUARANTINED")' >/dev/null || fail "not quarantined: $(node_json "$first")"
expect 200 pxoper POST "/v1/nodes/$first/resume" >/dev/null
node_json "$first" | jq -e '.gpu_health | test("QUARANTINED")' >/dev/null || fail "a node resume cleared the quarantine"
ok "second fault: GPU $gpu QUARANTINED; a node resume keeps it out"

# the state survives a restart (journal records)
stop_server KILL
start_server
node_json "$first" | jq -e --argjson g "$gpu" '.gpus_out == 1 and (.gpu_health | test("^\($g):QUARANTINED"))' >/dev/null ||
  fail "after restart: $(node_json "$first")"
for n in n01 n02 n03 n04; do register_node $n; done
ok "after a restart GPU $gpu is still QUARANTINED"

expect 403 pxalice POST "/v1/nodes/$first/gpu_resume" '{"gpu":"0"}' >/dev/null
expect 400 root POST "/v1/nodes/$first/gpu_resume" '{"gpu":"x"}' | jq -e '.error.field == "gpu"' >/dev/null || fail "bad gpu"
expect 200 pxoper POST "/v1/nodes/$first/gpu_resume" "{\"gpu\":\"$gpu\"}" >/dev/null
node_json "$first" | jq -e '(.gpus_out // 0) == 0 and .gpu_health == null' >/dev/null || fail "not cleared: $(node_json "$first")"
ok "gpu_resume by an operator clears the quarantine (others: 403)"

# a lost GPU under policy gpu+drain+fail: the node drains, the job on it fails
heartbeat
wait_for "small job running" job_is "$small" RUNNING
# (the fake agents re-registered knowing no job: the small job was requeued, it runs again)
sg=$(gpus_of "$first" "$small" "$(expect 200 root GET "/v1/jobs/$small" | jq '.restarts // 0')" | jq '.[0]')
gpu_fault "$first" "$sg" lost >/dev/null
wait_for "small job NODE_FAIL" job_is "$small" NODE_FAIL
node=$(node_json "$first")
jq -e --argjson g "$sg" '(.state | test("DRAIN")) and .reason == "GPU \($g): lost" and .drain_cause == "gpu_fault"' \
  <<<"$node" >/dev/null || fail "lost: $node"
ok "lost GPU $sg: $first drained (GPU $sg: lost), job $small NODE_FAIL"

# bad reports change nothing and name the field
expect 400 root POST /v1/agent/gpu "{\"node\":\"$first\",\"gpu\":64,\"fault\":\"xid\"}" | jq -e '.error.field == "gpu"' >/dev/null || fail "gpu 64"
expect 400 root POST /v1/agent/gpu "{\"node\":\"$first\",\"gpu\":9,\"fault\":\"xid\"}" | jq -e '.error.field == "gpu"' >/dev/null || fail "gpu 9 of 8"
expect 400 root POST /v1/agent/gpu "{\"node\":\"$first\",\"gpu\":1,\"fault\":\"melted\"}" | jq -e '.error.field == "fault"' >/dev/null || fail "fault"
expect 404 root POST /v1/agent/gpu '{"node":"zz","gpu":1,"fault":"xid"}' >/dev/null
expect 403 pxalice POST /v1/agent/gpu "{\"node\":\"$first\",\"gpu\":1,\"fault\":\"xid\",\"code\":79}" >/dev/null
[ "$(node_json "$first" | jq .gpus_out)" = 1 ] || fail "a refused report changed the node"
ok "bad reports refused naming the field (gpu, fault), unknown node 404, a user 403"

# a node whose GPUs keep failing is drained as flapping (4 faults on 4 GPUs)
for g in 0 1 2; do gpu_fault n03 $g xid 48 >/dev/null; done
node_json n03 | jq -e '.state != "DRAINED" and .gpus_out == 3' >/dev/null || fail "n03 after 3 faults: $(node_json n03)"
gpu_fault n03 3 xid 48 >/dev/null
node_json n03 | jq -e '(.state | test("DRAIN")) and (.reason | test("node flapping"))' >/dev/null || fail "n03 flapping: $(node_json n03)"
ok "4 GPU faults on n03 within the window: drained as flapping ($(node_json n03 | jq -r .reason))"

# grace: the job on the GPU is told to stop (SIGTERM, KillWait), keeps
# running meanwhile, and is requeued (reason GpuFault) when its end comes
heartbeat
g=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"ckpt","exclude":"n01,n02,n03","gpus_per_node":1,"script":"#!/bin/sh\ntrue"}}' | jq -r .job_id)
wait_for "job $g running" job_is "$g" RUNNING
gg=$(gpus_of n04 "$g" 0 | jq '.[0]')
gpu_fault n04 "$gg" nvlink 2 >/dev/null
job_is "$g" RUNNING || fail "grace: job $g stopped at once: $(job_state "$g")"
expect 200 root GET "/v1/agent/work?node=n04&after=0&timeout=0" |
  jq -e --argjson j "$g" '[.signal[] | select(.job_id==$j and .signal==15 and .reason=="PREEMPTED")] | length == 1' >/dev/null ||
  fail "grace: no SIGTERM order for job $g"
expect 200 root POST /v1/agent/report "{\"node\":\"n04\",\"job_id\":$g,\"state\":\"PREEMPTED\",\"exit_code\":0,\"term_signal\":15}" >/dev/null
wait_for "job $g requeued" sh -c "[ \"\$(curl -s --unix-socket $SOCK http://x/v1/jobs/$g | jq -r '.restarts // 0')\" = 1 ]"
ok "grace: job $g signalled (SIGTERM), kept running, requeued when it ended"
