#!/usr/bin/env bash
# A journal written before a drain's record named its cause (server/journal/
# journal.c, "drain records from before the cause was kept"): the server
# infers each old drain's cause from its record at recovery, and only
# there, so the checks still lift their own old drains and never an
# operator's:
#  - the server's own drains (a short registration, a failed health check,
#    signed by the server's user) get the check's cause: a full
#    registration and a passing check lift them;
#  - an operator's drains worded like those checks' reasons ("Low CPUs
#    (reported: fan)", "HealthCheck: manual"), signed by the operator, are
#    the operator's: they stay.
# The old journal is made here from a current one, its records' causes
# removed (what older servers wrote).
source "$(dirname "$0")/lib_server.sh"
command -v sqlite3 >/dev/null || px_skip sqlite3 "needs the sqlite3 shell to edit the journal"
NODE_TIMEOUT=100000
write_config
start_server
for n in n01 n02 n03 n04; do register_node $n; done
node() { expect 200 root GET "/v1/nodes/$1"; }
node_is() { node "$1" | jq -e "$2" >/dev/null; }
health() { expect 200 root POST /v1/agent/health "{\"node\":\"$1\",\"ok\":$2,\"message\":\"${3:-}\"}" >/dev/null; }
register_short() { # n01 with 2 of its 8 GPUs: drained by the registration check
  expect 200 root POST /v1/agent/register "$(node_report n01 | jq -c '.gpus |= .[0:2]')" >/dev/null
}
drained() { # drained NODE REASON CAUSE
  node_is "$1" ".state == \"DRAINED\" and .reason == \"$2\" and .drain_cause == \"$3\""
}
SHORT="gres/gpu count reported lower than configured (2 < 8)"
register_short
health n04 false "disk"
expect 200 pxoper POST /v1/nodes/n02/drain '{"reason":"Low CPUs (reported: fan)"}' >/dev/null
expect 200 pxoper POST /v1/nodes/n03/drain '{"reason":"HealthCheck: manual"}' >/dev/null
drained n01 "$SHORT" registration || fail "n01: $(node n01)"
drained n04 "HealthCheck: disk" health_check || fail "n04: $(node n04)"
stop_server TERM
n=$(sqlite3 "$STATE/state.db" "SELECT COUNT(*) FROM journal WHERE kind='drain' AND json_extract(data,'\$.cause') IS NOT NULL")
[ "$n" = 4 ] || fail "$n drain records name a cause, want 4"
sqlite3 "$STATE/state.db" "UPDATE journal SET data = json_remove(data, '\$.cause') WHERE kind='drain'"
start_server
for n in n01 n02 n03 n04; do register_node $n; done # every one with all it has
health n03 true
health n04 true
wait_for "n01 lifted (its old drain: the registration's)" node_is n01 '.state == "IDLE" and (has("drain_cause") | not)'
wait_for "n04 lifted (its old drain: the health check's)" node_is n04 '.state == "IDLE" and (has("drain_cause") | not)'
drained n02 "Low CPUs (reported: fan)" operator || fail "the operator's old drain of n02: $(node n02)"
drained n03 "HealthCheck: manual" operator || fail "the operator's old drain of n03: $(node n03)"
ok "old drain records without a cause: the checks' own lifted by a full registration and a passing check, the operator's look-alikes stay"
