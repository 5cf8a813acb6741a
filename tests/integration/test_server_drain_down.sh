#!/usr/bin/env bash
# A drained node whose agent goes silent keeps its drain's reason, user and
# time (sinfo -R), as Slurm keeps a node's reason when it stops responding:
#  - an operator's drain ("bad fan" by pxoper) through the node going DOWN
#    (no heartbeat within SlurmdTimeout) and its agent registering again;
#  - the same for a drained node whose agent never comes back after a
#    server restart (DOWN once SlurmdTimeout passes);
# an undrained node going silent is DOWN "Not responding" by the server.
# slurmrestd's node view: state ["DOWN","DRAIN"] for the silent drained node.
source "$(dirname "$0")/lib_server.sh"
NODE_TIMEOUT=2
write_config
start_server
register_node n01
register_node n02
node() { expect 200 root GET "/v1/nodes/$1"; }
node_is() { node "$1" | jq -e "$2" >/dev/null; }
sig() { node "$1" | jq -c '[.reason, .reason_user, .reason_time, .drain_cause]'; }
expect 200 pxoper POST /v1/nodes/n01/drain '{"reason":"bad fan"}' >/dev/null
drained=$(sig n01)
[ "$(jq -c '[.[0], .[1], .[3]]' <<<"$drained")" = '["bad fan","pxoper","operator"]' ] || fail "n01 drained: $drained"
wait_for "n01 down" node_is n01 '.state | test("DOWN")'
wait_for "n02 down" node_is n02 '.state | test("DOWN")'
[ "$(sig n01)" = "$drained" ] || fail "n01 down: $(sig n01), want $drained"
node_is n02 ".reason == \"Not responding\" and .reason_user == \"$(id -un)\"" || fail "n02 down: $(node n02)"
# slurmrestd's view says it as slurmctld does: DOWN and still DRAIN, with the
# drain's reason, user and time; the silent undrained node DOWN alone
sr() { expect 200 root GET "/slurm/v0.0.39/node/$1" | jq -c '.nodes[0] | [.state, .reason, .reason_set_by_user, .reason_changed_at]'; }
[ "$(sr n01)" = "$(jq -c '[["DOWN","DRAIN"], .[0], .[1], .[2]]' <<<"$drained")" ] || fail "slurmrestd n01 down: $(sr n01)"
[ "$(sr n02 | jq -c '.[0:3]')" = "[[\"DOWN\"],\"Not responding\",\"$(id -un)\"]" ] || fail "slurmrestd n02 down: $(sr n02)"
register_node n01
wait_for "n01 registered" node_is n01 '.state == "DRAINED"'
[ "$(sr n01 | jq -c '.[0]')" = '["IDLE","DRAIN"]' ] || fail "slurmrestd n01 back: $(sr n01)"
[ "$(sig n01)" = "$drained" ] || fail "n01 back: $(sig n01), want $drained"
ok "an operator's drain keeps its reason, user and time through the node's silence: $drained"

stop_server KILL
start_server
wait_for "n01 given up" bash -c "grep -q 'node n01: no agent since the server started' '$T/server.log'"
[ "$(sig n01)" = "$drained" ] || fail "n01 without its agent after a restart: $(sig n01), want $drained"
ok "and when its agent never comes back after a restart"
