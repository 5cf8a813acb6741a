#!/usr/bin/env bash
# Emulated nodes (phalanx agent --emulate-nodes, src/agent/emulate.h) against
# the real server, through `phalanx dev --emulate`: eight nodes from one
# agent process, simulated jobs, heartbeat 2 s (SlurmdTimeout 10 s).
#  1. registration: every node IDLE with its own GPUs, CPUs and memory;
#  2. a 3-node gang runs across emulated nodes to COMPLETED;
#  3. cancel: a running gang ends CANCELLED and its nodes are IDLE again;
#  4. node failure: a node that stops heartbeating goes DOWN and its
#     requeueable gang runs again elsewhere; it comes back when it speaks;
#  5. agent restart: kill -9 of the emulator and a restart on the same state
#     directory: the running job ends once, COMPLETED, never started twice;
#  6. a GPU fault injected with `phalanx dev inject` reaches the server.
# The emulator runs from the build under test (ASan: a leak fails step 7).
source "$(dirname "$0")/agent/lib.sh"
T=$(mktemp -d /tmp/pxemu.XXXXXX)
DEV= EMU=
cleanup() {
  [ -n "$EMU" ] && kill "$EMU" 2>/dev/null
  [ -n "$DEV" ] && { kill -TERM "$DEV" 2>/dev/null; wait "$DEV" 2>/dev/null; }
  [ -n "${PX_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
"$PHALANX" dev --nodes 8 --emulate --emulate-jobs sim --heartbeat 2 --quiet --state-dir "$T/c" \
  --ready-file "$T/ready" 2>"$T/dev.err" &
DEV=$!
wait_for 90 test -s "$T/ready" || fail "phalanx dev did not come up: $(cat "$T/dev.err")"
SOCK=$T/c/server.sock
ESTATE=$T/c/agents/emulated
api() { curl -sf --unix-socket "$SOCK" "http://localhost$1" "${@:2}"; }
state_of() { api "/v1/jobs/$1" | jq -r .state; }
has_state() { [ "$(state_of "$1")" = "$2" ]; }
node_state() { api /v1/nodes | jq -r --arg n "$1" '.nodes[] | select(.name == $n) | .state'; }
submit() { # NODES SECONDS [requeue]
  api /v1/jobs -H 'Content-Type: application/json' -d "{\"job\":{\"nodes_min\":$1,\"nodes_max\":$1,
    \"gpus_per_node\":8,\"time_limit_s\":600,\"argv\":[\"sleep\",\"$2\"],\"workdir\":\"/tmp\",
    \"requeue\":${3:-false}}}" | jq -r '.job_id // .jobs[0].job_id'
}
emulator_pid() { pgrep -f -- "--emulate-nodes dev\[1-8\] --state-dir $ESTATE" | head -1; }

# 1. registration
all_idle() { [ "$(api /v1/nodes | jq '[.nodes[] | select(.state == "IDLE")] | length')" = 8 ]; }
wait_for 30 all_idle || fail "not every emulated node IDLE: $(api /v1/nodes | jq -c '[.nodes[].state]')"
api /v1/nodes | jq -e '[.nodes[] | select(.gpus == 8 and .cpus == 32 and .mem_mib == 131072)] | length == 8' \
  >/dev/null || fail "emulated resources: $(api /v1/nodes | jq -c '.nodes[0]')"
ok "8 emulated nodes from one process registered, each with 8 GPUs, 32 CPUs, 128 GiB"

# 2. a gang across emulated nodes
J=$(submit 3 1)
wait_for 30 has_state "$J" COMPLETED || fail "gang $J: $(state_of "$J")"
[ "$(api "/v1/jobs/$J" | jq -r .nnodes)" = 3 ] || fail "gang $J ran on $(api "/v1/jobs/$J" | jq -r .nodelist)"
ok "a 3-node gang ran across emulated nodes ($(api "/v1/jobs/$J" | jq -r .nodelist))"

# 3. cancel
J=$(submit 2 300)
wait_for 30 has_state "$J" RUNNING || fail "job $J did not start: $(state_of "$J")"
NODES=$(api "/v1/jobs/$J" | jq -r .nodelist)
# the node listing re-renders the nodes whose allocation changed (pub_nodes.c)
busy() { [ "$(api /v1/nodes | jq '[.nodes[] | select(.gpus_alloc > 0 and .state != "IDLE")] | length')" = 2 ]; }
wait_for 10 busy || fail "nodes of running gang $J: $(api /v1/nodes | jq -c '[.nodes[] | {name, state, gpus_alloc}]')"
api "/v1/jobs/$J" -X DELETE >/dev/null || fail "cancel $J refused"
wait_for 30 has_state "$J" CANCELLED || fail "job $J after cancel: $(state_of "$J")"
wait_for 30 all_idle || fail "nodes after cancel: $(api /v1/nodes | jq -c '[.nodes[].state]')"
ok "cancelling a running gang on $NODES ends it and frees the nodes"

# 4. node failure: one node goes silent
J=$(submit 2 300 true)
wait_for 30 has_state "$J" RUNNING || fail "job $J did not start"
VICTIM=$(api "/v1/jobs/$J" | jq -r '.gpus_by_node' | cut -d: -f1)
EMU=$(emulator_pid)
[ -n "$EMU" ] || fail "no emulator process"
echo "$VICTIM" >"$ESTATE/silent"
kill -USR1 "$EMU"
node_down() { [[ $(node_state "$VICTIM") == DOWN* ]]; }
wait_for 30 node_down || fail "$VICTIM silent but $(node_state "$VICTIM")"
requeued() { [ "$(api "/v1/jobs/$J" | jq -r ".restarts // 0")" -ge 1 ] && has_state "$J" RUNNING; }
wait_for 30 requeued || fail "job $J after its node failed: $(api "/v1/jobs/$J" | jq -c '[.state,.restarts,.nodelist]')"
api "/v1/jobs/$J" | jq -r .gpus_by_node | grep -q "$VICTIM:" && fail "job $J runs again on the dead node"
: >"$ESTATE/silent"
kill -USR1 "$EMU"
back() { [ "$(node_state "$VICTIM")" = IDLE ]; }
wait_for 30 back || fail "$VICTIM did not come back: $(node_state "$VICTIM")"
api "/v1/jobs/$J" -X DELETE >/dev/null
wait_for 30 has_state "$J" CANCELLED || fail "job $J not cancelled"
ok "a silent emulated node went DOWN, its gang was requeued elsewhere, and it came back"

# 5. agent restart: kill -9, start again with the same command line
J=$(submit 2 6)
wait_for 30 has_state "$J" RUNNING || fail "job $J did not start"
mapfile -d '' CMD <"/proc/$EMU/cmdline"
kill -9 "$EMU"
wait_for 10 bash -c "! kill -0 $EMU" || fail "emulator survived kill -9"
"${CMD[@]}" 2>>"$T/emu2.err" &
EMU=$!
wait_for 40 has_state "$J" COMPLETED || fail "job $J after the agent restart: $(state_of "$J")"
[ "$(api "/v1/jobs/$J" | jq -r ".restarts // 0")" = 0 ] || fail "job $J was requeued across the agent restart: $(api "/v1/jobs/$J")"
starts=$(grep -c "^S [0-9]* $J 0 " "$ESTATE/emulate.log" || true)
[ "$starts" = 2 ] || fail "job $J started $starts times on its 2 nodes: $(grep " $J " "$ESTATE/emulate.log")"
wait_for 30 all_idle || fail "nodes after the restart: $(api /v1/nodes | jq -c '[.nodes[].state]')"
ok "the emulator restarted (kill -9): its running job ended once, COMPLETED, never started twice"

# 6. an injected GPU fault (`phalanx dev inject`): the emulated node reports it
"$PHALANX" dev inject "$T/c" dev3 5 xid 79 "fallen off the bus" || fail "inject refused"
gpu_out() { api /v1/nodes/dev3 | jq -e '.gpus_out == 1 and (.gpu_health | test("^5:UNUSABLE"))' >/dev/null; }
wait_for 10 gpu_out || fail "dev3 after the injected XID: $(api /v1/nodes/dev3)"
ok "an injected XID on dev3 GPU 5 reached the server from the emulator"

# 7. a clean stop (no leak reported by a sanitizer build)
kill -TERM "$EMU"
wait "$EMU" || fail "the emulator exited $? at SIGTERM: $(tail -5 "$T/emu2.err")"
EMU=
if grep -q "Sanitizer" "$T/emu2.err" "$T/c/agents/emulated.log"; then
  fail "sanitizer report: $(grep -h -A5 Sanitizer "$T/emu2.err" "$T/c/agents/emulated.log")"
fi
ok "the emulator stops cleanly"
