#!/usr/bin/env bash
# The site's node health check and `scontrol reboot` with a real agent
# (emulated GPUs) against a real server:
#  - HealthCheckProgram= failing drains the node with its message
#    ("HealthCheck: ..."), passing again resumes it;
#  - the check lifts only its own drain, known by its cause: an operator's
#    drain worded like the check's ("HealthCheck: manual") stays through a
#    failing and a passing result;
#  - `scontrol reboot ASAP nextstate=RESUME` drains the node at once, waits
#    for its job to end, then the agent runs RebootProgram=; the agent
#    registering again (the node back from its reboot) returns it to service;
#  - bad reboot requests are refused naming the field, and only operators
#    may ask.
source "$(dirname "$0")/lib_server.sh"
[ "$(id -u)" -eq 0 ] || px_skip root "needs root (the agent runs jobs as their users)"
cat >"$T/hc.sh" <<SH
#!/bin/sh
if [ -e "$T/sick" ]; then echo "check_fs_mount: /scratch not mounted"; exit 1; fi
exit 0
SH
printf '#!/bin/sh\necho "$(date +%%s)" >>"%s/rebooted"\n' "$T" >"$T/reboot.sh"
chmod 755 "$T" "$T/hc.sh" "$T/reboot.sh"
cat >"$T/slurm.conf" <<CONF
ClusterName=test
HeartbeatInterval=1
KillWait=1
HealthCheckProgram=$T/hc.sh
HealthCheckInterval=1
HealthCheckNodeState=ANY,CYCLE
RebootProgram=$T/reboot.sh
NodeName=n01 CPUs=8 RealMemory=16G Gres=gpu:h100:4
PartitionName=gpu Nodes=n01 Default=YES MaxTime=1:00:00 State=UP
CONF
echo "Account=ml Fairshare=60 Users=pxalice" >"$T/accounts.conf"
start_server
agent_up() {
  "$PHALANX" agent --server "$SOCK" --node n01 --state-dir "$T/agent" --emulate-gpus 4:h100 --emulate-cpus 8 \
    --emulate-mem 16384 --kill-wait 1 --heartbeat 1 --kill-jobs-on-exit >>"$T/agent.log" 2>&1 &
  AGENT=$!
  EXTRA_PIDS+=($AGENT)
}
agent_up
node() { expect 200 root GET /v1/nodes/n01; }
node_is() { node | jq -e "$1" >/dev/null; }
wait_for "agent registered" node_is '.state == "IDLE"'

touch "$T/sick"
wait_for "drained by the health check" node_is '.state == "DRAINED" and .reason == "HealthCheck: check_fs_mount: /scratch not mounted"'
node_is ".reason_user == \"$(id -un)\" and .reason_time > 0 and .drain_cause == \"health_check\"" ||
  fail "the check's drain is the server's: $(node)"
ok "a failing health check drains the node: $(node | jq -r .reason) (by $(id -un), the server's user)"
rm "$T/sick"
wait_for "resumed by the health check" node_is '.state == "IDLE" and (.reason // "") == ""'
ok "the check passing again resumes the node"

# health OK [MESSAGE]: a check result as the agent posts it; answered once
# the server has acted on it (a drain or resume is durable, and listings
# read after it show it)
health() { expect 200 root POST /v1/agent/health "{\"node\":\"n01\",\"ok\":$1,\"message\":\"${2:-}\"}" >/dev/null; }
manual='.state == "DRAINED" and .reason == "HealthCheck: manual" and .drain_cause == "operator" and .reason_user == "pxoper"'
expect 200 pxoper POST /v1/nodes/n01/drain '{"reason":"HealthCheck: manual"}' >/dev/null
node_is "$manual" || fail "an operator's drain worded like the check's: $(node)"
health false "check_fs_mount: /scratch not mounted"
node_is "$manual" || fail "a failing check replaced an operator's drain: $(node)"
health true
node_is "$manual" || fail "a passing check lifted an operator's drain worded like its own: $(node)"
expect 200 pxoper POST /v1/nodes/n01/resume >/dev/null
wait_for "resumed by the operator" node_is '.state == "IDLE" and (.reason // "") == "" and (has("drain_cause") | not)'
ok "an operator's drain worded like the check's (HealthCheck: manual, cause operator) stays through the check failing and passing"

expect 400 pxoper POST /v1/nodes/n01/reboot '{"next_state":"LATER"}' | jq -e '.error.field == "next_state"' >/dev/null ||
  fail "bad next_state"
expect 403 pxalice POST /v1/nodes/n01/reboot '{"asap":true}' >/dev/null
job=$(expect 201 pxalice POST /v1/jobs "{\"job\":{\"name\":\"w\",\"gpus_per_node\":1,\"workdir\":\"$T\",\"script\":\"#!/bin/sh\\nsleep 300\"}}" | jq -r .job_id)
wait_for "job running" job_is "$job" RUNNING
expect 200 pxoper POST /v1/nodes/n01/reboot '{"asap":true,"next_state":"RESUME","reason":"driver update"}' >/dev/null
node_is '.state == "DRAINING" and .reason == "Reboot ASAP: driver update" and .reboot == "REBOOT_REQUESTED" and
  .reason_user == "pxoper"' || fail "after reboot ASAP: $(node)"
sr=$(expect 200 root GET /slurm/v0.0.39/node/n01 | jq -c '.nodes[0].state')
[ "$sr" = '["ALLOCATED","DRAIN","REBOOT_REQUESTED"]' ] || fail "slurmrestd's state after reboot ASAP: $sr"
# a negative: give the agent three heartbeats (1 s each) to (wrongly) reboot
past() { [ "$SECONDS" -ge "$1" ]; }
wait_for "three heartbeat intervals" past $((SECONDS + 3))
[ ! -e "$T/rebooted" ] || fail "rebooted while job $job runs"
ok "scontrol reboot ASAP: node DRAINING (Reboot ASAP: driver update), no reboot while job $job runs"

expect 200 pxalice DELETE "/v1/jobs/$job" >/dev/null
wait_for "RebootProgram ran" test -s "$T/rebooted"
node_is '.reboot == "REBOOT_ISSUED"' || fail "reboot state: $(node)"
kill "$AGENT" && wait "$AGENT" 2>/dev/null # the machine goes down with its agent...
agent_up                                   # ...and comes back
wait_for "back in service" node_is '.state == "IDLE" and (.reason // "") == "" and .reboot == null'
[ "$(wc -l <"$T/rebooted")" = 1 ] || fail "RebootProgram ran $(wc -l <"$T/rebooted") times"
ok "the job ended: RebootProgram ran once; the agent registering again resumed the node (nextstate=RESUME)"
