#!/usr/bin/env bash
# The GPU health watch through real NVML calls: the agent loads the
# stand-in libnvidia-ml (agent/fake_nvml.c, four H100s) with dlopen and
# watches it as it would a driver's; the test scripts faults into the
# stand-in's file while a job runs against a real server: an XID event
# requeues the job on that GPU (restart count 1), a growing double-bit ECC
# count takes its GPU out, throttling is counted only, and a lost GPU (calls
# answering GPU_IS_LOST) drains the node naming GPU and fault.
source "$(dirname "$0")/lib_server.sh"
source "$(dirname "$0")/lib_nvml.sh"
nvml_node gpu:h100:4 GpuHealthIntervalMs=200
grep -q "watching 4 GPUs through NVML" "$T/agent.log" || fail "no NVML watch: $(cat "$T/agent.log")"

job=$(expect 201 pxalice POST /v1/jobs "{\"job\":{\"name\":\"w\",\"gpus_per_node\":2,\"workdir\":\"$T\",\"script\":\"#!/bin/sh\\nsleep 300\"}}" | jq -r .job_id)
wait_for "job running" job_is "$job" RUNNING
launch() { jq -c .gpus "$T/agent/jobs/$job.$1/launch.json"; }
wait_for "launch order" launch 0
gpu=$(launch 0 | jq '.[0]')
echo "xid $gpu 79" >>"$T/faults"
restarted() { [ "$(expect 200 root GET "/v1/jobs/$job" | jq -r '.restarts // 0')" = 1 ]; }
wait_for "job requeued by the XID" restarted
node_is ".gpus_out == 1 and (.gpu_health | test(\"^$gpu:UNUSABLE\\\\(GPU $gpu: xid 79\"))" || fail "after XID: $(expect 200 root GET /v1/nodes/n01)"
ok "XID 79 event on GPU $gpu (nvmlEventSetWait_v2): job $job requeued, GPU out of service"

wait_for "job running again" job_is "$job" RUNNING
wait_for "attempt 1 launched" launch 1
launch 1 | jq -e --argjson g "$gpu" 'index($g) == null' >/dev/null || fail "attempt 1 on the faulty GPU: $(launch 1)"
other=$(launch 1 | jq '.[0]')
spare=$(for g in 0 1 2 3; do [ "$g" != "$gpu" ] && ! launch 1 | jq -e --argjson g "$g" 'index($g) != null' >/dev/null && echo "$g"; done | head -n1)
echo "ecc $spare 2" >>"$T/faults"
wait_for "ECC takes GPU $spare out" node_is '.gpus_out == 2'
ok "double-bit ECC count on GPU $spare grew: out of service"

echo "throttle $other 64" >>"$T/faults"
metric() { curl -s --unix-socket "$SOCK" http://x/metrics | grep -q "^$1"; }
wait_for "throttling counted" metric 'phalanx_gpu_faults_total{fault="throttle"} 1'
job_is "$job" RUNNING || fail "throttling stopped the job"
ok "thermal throttling on GPU $other: counted, the job keeps running"

echo "lost $other" >>"$T/faults"
wait_for "node drained by the lost GPU" node_is "(.state | test(\"DRAIN\")) and (.reason | test(\"GPU $other: lost\"))"
restarted2() { [ "$(expect 200 root GET "/v1/jobs/$job" | jq -r '.restarts // 0')" = 2 ]; }
wait_for "job requeued by the lost GPU" restarted2
ok "GPU $other lost (GPU_IS_LOST): node drained ($(expect 200 root GET /v1/nodes/n01 | jq -r .reason)), job requeued"
