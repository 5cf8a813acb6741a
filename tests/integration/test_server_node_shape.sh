#!/usr/bin/env bash
# A node whose real agent (emulated GPUs) registers with fewer GPUs or CPUs
# than its NodeName= line says, against a real server (docs/agent.md,
# "Resources"; server/nodes/node_shape.c):
#  - it is drained with Slurm 22.05's reason (`sinfo -R`: "gres/gpu count
#    reported lower than configured (2 < 4)"), and a job that needs its GPUs
#    runs on the other node, the next one waits;
#  - its agent restarted with the configured count resumes it, and the
#    waiting job runs there; also after a server kill -9 (the drain and its
#    reason are journaled);
#  - an operator's drain is neither replaced by the check's nor lifted by a
#    full registration, also when its reason is worded like the check's
#    ("Low CPUs (reported: fan)"): the check knows its own drain by its
#    cause (drain_cause in /v1/nodes), journaled with the drain, so neither
#    changes through a server kill -9 between the drain and a registration;
#  - `sinfo -R` and `scontrol show node` say who drained it and when, as
#    Slurm does: the server's user for the check's drain (Slurm: SlurmUser),
#    the operator for theirs, at a time within the test's window; the drain
#    keeps both through a kill -9 (journaled), a resume clears them.
source "$(dirname "$0")/lib_server.sh"
[ "$(id -u)" -eq 0 ] || px_skip root "needs root (the agent runs jobs as their users)"
cat >"$T/slurm.conf" <<CONF
ClusterName=test
HeartbeatInterval=1
KillWait=1
NodeName=n[01-02] CPUs=8 RealMemory=16G Gres=gpu:h100:4
PartitionName=gpu Nodes=n[01-02] Default=YES MaxTime=1:00:00 State=UP
CONF
echo "Account=ml Fairshare=60 Users=pxalice" >"$T/accounts.conf"
chmod 755 "$T"
start_server
mkdir -p "$T/bin"
ln -s "$PHALANX" "$T/bin/sinfo"
ln -s "$PHALANX" "$T/bin/scontrol"
export PHALANX_SERVER=$SOCK PATH="$T/bin:$PATH"

declare -A AGENT
# agent_up NODE GPUS [CPUS]: NODE's agent with GPUS emulated h100s (and CPUS CPUs, default 8).
agent_up() {
  "$PHALANX" agent --server "$SOCK" --node "$1" --state-dir "$T/agent-$1" --emulate-gpus "$2:h100" \
    --emulate-cpus "${3:-8}" --emulate-mem 16384 --kill-wait 1 --heartbeat 1 --kill-jobs-on-exit \
    >>"$T/agent-$1.log" 2>&1 &
  AGENT[$1]=$!
  EXTRA_PIDS+=($!)
}
agent_down() {
  kill "${AGENT[$1]}" 2>/dev/null || true
  wait "${AGENT[$1]}" 2>/dev/null || true
}
node_is() { expect 200 root GET "/v1/nodes/$1" | jq -e "$2" >/dev/null; }
node() { expect 200 root GET "/v1/nodes/$1" | jq -c '{state, reason}'; }
submit() {
  expect 201 pxalice POST /v1/jobs "{\"job\":{\"name\":\"$1\",\"gpus_per_node\":4,\"workdir\":\"$T\",\"script\":\"#!/bin/sh\\nsleep 300\"}}" |
    jq -r .job_id
}
job() { api GET "/v1/jobs?id=$1" | cut -d' ' -f2- | jq -c ".jobs[0] | $2"; }
job_on() { [ "$(job "$1" '[.state, .nodelist]')" = "[\"RUNNING\",\"$2\"]" ]; }
job_waits() { job "$1" '.state == "PENDING" and ((.reason // "None") != "None")' | grep -qx true; }

# signed NODE USER SINCE: sinfo -R lists NODE's reason as set by USER at a
# time from SINCE to now (its TIMESTAMP, printed in local time, read back)
signed() {
  local line ts
  line=$(sinfo -R -h -o '%n|%u|%H' | grep "^$1|") || fail "sinfo -R lists no $1: $(sinfo -R)"
  [ "${line%|*}" = "$1|$2" ] || fail "sinfo -R: $line, want $1 set by $2"
  ts=$(date -d "${line##*|}" +%s) || fail "sinfo -R: $1's TIMESTAMP ${line##*|}"
  [ "$ts" -ge "$3" ] && [ "$ts" -le "$(date +%s)" ] ||
    fail "sinfo -R: $1 set at ${line##*|}, not since $(date -d "@$3" +%FT%T)"
}
SERVER_USER=$(id -un) # the user the server runs as: its own drains are by it
SHORT="gres/gpu count reported lower than configured (2 < 4)"
t0=$(date +%s)
agent_up n01 2 # two of its four GPUs are gone
agent_up n02 4
wait_for "n01 drained" node_is n01 ".state == \"DRAINED\" and .reason == \"$SHORT\""
wait_for "n02 idle" node_is n02 '.state == "IDLE"'
sinfo -R -h -o '%n %E' | grep -qx "n01 $SHORT" || fail "sinfo -R: $(sinfo -R)"
signed n01 "$SERVER_USER" "$t0"
ok "an agent with 2 of 4 GPUs: n01 drained, sinfo -R: $SHORT by $SERVER_USER at $(sinfo -R -h -o %H -n n01)"

j1=$(submit first)
wait_for "job $j1 on n02" job_on "$j1" n02
j2=$(submit second)
wait_for "job $j2 considered" job_waits "$j2"
job_waits "$j2" || fail "job $j2 while n01 is short: $(job "$j2" '[.state, .nodelist, .reason]')"
ok "a 4-GPU job runs on n02 instead; the next waits ($(job "$j2" .reason)) while n01 is short"

agent_down n01
agent_up n01 4
wait_for "n01 resumed" node_is n01 '(.state == "IDLE" or .state == "MIXED" or .state == "ALLOCATED") and (.reason // "") == ""'
wait_for "job $j2 on n01" job_on "$j2" n01
ok "n01's agent back with 4 GPUs: resumed, job $j2 runs there"

expect 200 pxalice DELETE "/v1/jobs/$j2" >/dev/null
wait_for "job $j2 ended" job_is "$j2" CANCELLED
agent_down n01
agent_up n01 4 4 # half its CPUs: the reason follows what is short now
wait_for "n01 drained for its CPUs" node_is n01 '.state == "DRAINED" and .reason == "Low CPUs (reported:4 < configured:8)"'
agent_down n01
agent_up n01 4
wait_for "n01 resumed again" node_is n01 '.state == "IDLE" and (.reason // "") == ""'
ok "4 of 8 CPUs: drained (Low CPUs (reported:4 < configured:8)); all 8 again: resumed"

agent_down n01
agent_up n01 2
wait_for "n01 drained again" node_is n01 ".state == \"DRAINED\" and .reason == \"$SHORT\""
signed_at=$(expect 200 root GET /v1/nodes/n01 | jq -c '[.reason_user, .reason_time, .drain_cause]')
[ "$(jq -r '.[2]' <<<"$signed_at")" = registration ] || fail "the check's drain: cause $signed_at"
stop_server KILL
start_server
# the drain is journaled with its reason: the restarted server still knows it
# is the check's, so the agents coming back (n01 still short) keep it and a
# full registration lifts it
wait_for "n01 back, still drained" node_is n01 ".state == \"DRAINED\" and .reason == \"$SHORT\""
wait_for "job $j1 still on n02" job_on "$j1" n02
now_at=$(expect 200 root GET /v1/nodes/n01 | jq -c '[.reason_user, .reason_time, .drain_cause]')
[ "$now_at" = "$signed_at" ] || fail "the drain's user, time and cause after kill -9: $now_at, want $signed_at"
agent_down n01
agent_up n01 4
wait_for "n01 resumed after the restart" node_is n01 '.state == "IDLE" and (.reason // "") == ""'
ok "the check's drain outlives a server kill -9 (journaled) and is still lifted by a full registration"

# restart_n01 GPUS: n01's agent again with GPUS, once the server has answered its registration
restart_n01() {
  local before
  before=$(grep -c "registered with the server" "$T/agent-n01.log" || true)
  agent_down n01
  agent_up n01 "$1"
  wait_for "n01 registered" sh -c "[ \$(grep -c 'registered with the server' '$T/agent-n01.log') -gt $before ]"
}
# seen_after_submit: a job submitted now has been through a cycle, so the
# listing read next is newer than anything the server answered before
seen_after_submit() {
  local j
  j=$(submit probe)
  wait_for "job $j considered" job_waits "$j"
}
t0=$(date +%s)
expect 200 pxoper POST /v1/nodes/n01/drain '{"reason":"bad fan"}' >/dev/null
signed n01 pxoper "$t0"
shown=$(scontrol show node n01 | grep -o 'Reason=.*')
[ "$shown" = "Reason=bad fan [pxoper@$(sinfo -R -h -o %H -n n01)]" ] || fail "scontrol show node: $shown"
ok "an operator's drain: sinfo -R's USER pxoper, scontrol show node: $shown"
restart_n01 2
seen_after_submit
node_is n01 '.state == "DRAINED" and .reason == "bad fan"' || fail "operator's drain after a short registration: $(node n01)"
restart_n01 4
seen_after_submit
node_is n01 '.state == "DRAINED" and .reason == "bad fan"' || fail "operator's drain after a full registration: $(node n01)"
ok "an operator's drain stays through short and full registrations (reason: bad fan)"

# An operator's drain worded like the check's own reason: the check knows
# its drain by its cause, not by its words; the cause is journaled, so a
# server killed between the drain and the registrations knows it too.
LOOKALIKE="Low CPUs (reported: fan)"
mine=".state == \"DRAINED\" and .reason == \"$LOOKALIKE\" and .drain_cause == \"operator\" and .reason_user == \"pxoper\""
expect 200 pxoper POST /v1/nodes/n01/drain "{\"reason\":\"$LOOKALIKE\"}" >/dev/null
node_is n01 "$mine" || fail "an operator's drain worded like the check's: $(node n01)"
restart_n01 2
seen_after_submit
node_is n01 "$mine" || fail "the check replaced an operator's drain worded like its own: $(node n01)"
restart_n01 4
seen_after_submit
node_is n01 "$mine" || fail "a full registration lifted an operator's drain worded like the check's: $(node n01)"
stop_server KILL
start_server
wait_for "n01 back after kill -9" node_is n01 "$mine"
restart_n01 4
seen_after_submit
node_is n01 "$mine" || fail "after kill -9, a full registration lifted the operator's drain: $(node n01)"
ok "an operator's drain worded like the check's ($LOOKALIKE) is neither replaced nor lifted by registrations, across a kill -9"
expect 200 pxoper POST /v1/nodes/n01/resume >/dev/null
wait_for "n01 resumed by the operator" node_is n01 '.state != "DRAINED" and (.reason // "") == ""'
node_is n01 '(has("reason_user") or has("reason_time") or has("drain_cause")) | not' || fail "resumed n01 keeps its reason's signature or cause"
ok "an operator's resume lifts it and clears its user, time and cause"

# The agents stop here, while the server runs: with --kill-jobs-on-exit they
# end their jobs and remove their cgroups on the way out, which must not race
# the removal of $T at exit.
agent_down n01
agent_down n02
