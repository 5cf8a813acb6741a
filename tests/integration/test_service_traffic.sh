#!/usr/bin/env bash
# Services with traffic, end to end: a real `phalanx dev` cluster (server,
# 6 agents heartbeating every second, so SlurmdTimeout is 5 s), its
# `phalanx proxy` in front of a real HAProxy, replicas as real processes
# spread one per node, and a client loop on loopback (bounded in count and
# time) that must see zero failed requests while
#  1. a rolling update replaces all 4 replicas (max_surge 1, max_unavailable 0);
#  2. a replica's process is killed with -9 (it is replaced);
#  3. the agent of one node is killed with -9 (its replicas leave the
#     endpoints when the node goes DOWN and start on nodes no sibling holds;
#     the agent started again kills the replica it left running);
#  4. a replica failing its HTTP health check is replaced;
#  5. a new version that never passes its health check is rolled back,
#     with the reason shown;
# and then
#  6. autoscaling: load through the proxy raises an autoscaled service from
#     1 replica to its max (3), and it returns to 1 after the load stops.
# No node but the one whose agent was killed may go DOWN: the agents'
# heartbeats must keep up with the 5 s timeout from their registration on
# (a first heartbeat due 10 s after an agent's start, its own default, once
# called every node DOWN 5 s in, and a rolling update lost all endpoints).
# The replicas are tests/integration/svc/replica.py on the port the agent
# hands them ($PORT), health-checked by the agents on GET /healthz.
source "$(dirname "$0")/lib_dev.sh"
command -v haproxy >/dev/null || px_skip haproxy "no haproxy (make deps installs Debian's package)"
[ "$(id -u)" = 0 ] || px_skip root "replicas run as a user through the agents (root needed)"
mkdir -p "$tmp/work"
# 6 nodes: 4 replicas spread one per node (placement packs, so only spread
# keeps them apart), a node for the update's surge, one for a dead node's
start_dev "squeue" --nodes 6 --cpus 8 --mem-mib 65536 --heartbeat 1
PROXY=$(sed -n 's/^PHALANX_PROXY=//p' "$tmp/ready")
[ -n "$PROXY" ] || { echo "FAIL phalanx dev started no proxy"; tail -5 "$tmp/state/proxy.log"; exit 1; }
# the replicas of this test: python3 replica.py running in $tmp/work
replica_pids() {
  local p
  for p in $(pgrep -f "python3 replica.py$"); do
    [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$tmp/work" ] && echo "$p"
  done
  return 0
}
# a node whose agent was killed keeps its replicas (and no agent stops them);
# the agent the test starts again is the test's to stop
agent_again=
stop_all() {
  [ -n "$agent_again" ] && kill "$agent_again" 2>/dev/null && wait "$agent_again" 2>/dev/null
  for p in $(replica_pids); do kill -9 "$p" 2>/dev/null; done
  cleanup
}
trap stop_all EXIT
api() { curl -sf --unix-socket "$PHALANX_SERVER" "http://x$1"; }
cd "$tmp/work"
cp "$PX_SRC/tests/integration/svc/replica.py" .
chmod 755 "$tmp" "$tmp/work"
svc() { "$PHALANX" service "$@"; }
field() { svc show "${2:-web}" --json | jq -r "$1"; }
jobs_of() { field '[.replica_jobs[].job_id] | sort | join(",")' "${1:-web}"; }
client() { # client NAME PATH SECONDS [CONCURRENCY]: in the background, until $tmp/stop.NAME exists
  rm -f "$tmp/stop.$1"
  PX_CLIENT_STOP=$tmp/stop.$1 python3 "$PX_SRC/tests/integration/svc/client.py" "$PROXY$2" 1000000 "$3" "${4:-4}" \
    >"$tmp/client.$1" &
  eval "client_$1=$!"
}
client_end() { # client_end NAME: stops it, prints its summary, true when nothing failed
  touch "$tmp/stop.$1"
  eval "wait \$client_$1"
  echo "     $1: $(head -1 "$tmp/client.$1")"
  grep -q ' failed 0 ' "$tmp/client.$1" || { tail -n +2 "$tmp/client.$1"; return 1; }
}

spec() { # spec VERSION [SICK [STARTUP_GRACE_S [PROGRESS_DEADLINE_S]]]: SICK=1 fails every health check
  cat <<EOF
name: web
account: ops
replicas: 4
resources: {cpus: 1}
command: ["python3", "replica.py"]
workdir: $tmp/work
env: {VERSION: "v$1", SICK: "${2:-0}"}
ports: [http]
health: {http: /healthz, port: http, interval_s: 1, timeout_s: 1, failure_threshold: 2, startup_grace_s: ${3:-10}}
spread: true
update: {max_surge: 1, max_unavailable: 0, progress_deadline_s: ${4:-120}}
drain_s: 2
EOF
}
ready_is() { [ "$(field '"\(.state) \(.ready)/\(.replicas) \(.generation)"')" = "$1" ]; }
# no two live replicas on one node
spread_ok() { [ "$(field '[.replica_jobs[] | select(.terminating | not) | .node] | (unique | length) == length')" = true ]; }
# the client's connections are open at the proxy: it is sending (before a kill)
client_on() { [ "$(ss -Htn state established "( dport = :${PROXY##*:} )" | wc -l)" -ge 4 ]; }
four_replicas() { [ "$(replica_pids | wc -l)" = 4 ]; }
serves() { [ "$(curl -s "$PROXY/web/who" | cut -d' ' -f1)" = "$1" ]; }
all_serve() { for _ in 1 2 3 4 5 6 7 8; do serves "$1" || return 1; done; }

spec 1 >web.yaml
svc apply web.yaml >/dev/null || fail "apply"
wait_for 90 ready_is "Running 4/4 1" || { fail "not 4/4: $(svc show web)"; exit 1; }
wait_for 30 all_serve v1 || { fail "v1 not served through $PROXY: $(curl -s "$PROXY/web/who")"; exit 1; }
spread_ok || fail "spread: $(field '[.replica_jobs[].node]')"
echo "ok   4 replicas ready and served through the proxy (${SECONDS}s)"

# 1. rolling update under load
client update /web/who 180
spec 2 >web.yaml
svc apply web.yaml >/dev/null || fail "apply v2"
wait_for 150 ready_is "Running 4/4 2" || fail "update not done: $(svc show web)"
wait_for 30 all_serve v2 || fail "v2 not served"
spread_ok || fail "spread after the update: $(field '[.replica_jobs[].node]')"
# the last old replica drains and stops under the client: 4 processes again
wait_for 30 four_replicas || fail "the old replicas did not stop: $(replica_pids | wc -l) replica processes"
client_end update || fail "requests failed during the rolling update"
echo "ok   rolling update of 4 replicas (${SECONDS}s)"

# 2. a replica's process killed with -9 under load
before=$(jobs_of)
client kill /web/who 120
wait_for 30 client_on || fail "the client did not connect to the proxy"
victim=$(replica_pids | head -n1)
kill -9 "$victim"
replaced() { [ "$(jobs_of)" != "$before" ] && ready_is "Running 4/4 2"; }
wait_for 60 replaced || fail "the killed replica was not replaced: $(svc show web)"
sleep 2 # traffic on the new set a while (a window, not a wait for anything)
client_end kill || fail "requests failed around a replica's kill -9"
echo "ok   replica kill -9 replaced (${SECONDS}s)"

# 3. one node's agent killed with -9 under load: its replica serves on
# until the server calls the node DOWN (SlurmdTimeout, 5 s here); then it
# leaves the endpoints (the proxy stops routing to it) and the controller
# starts a replacement on a node no sibling holds
node=$(field '.replica_jobs[0].node')
agent=$(pgrep -f "agent --server .* --node $node .*$tmp" | head -n1)
[ -n "$agent" ] || fail "no agent process for $node"
agent_cmd=()
[ -n "$agent" ] && mapfile -d '' agent_cmd <"/proc/$agent/cmdline"
client agent /web/who 120
wait_for 30 client_on || fail "the client did not connect to the proxy"
[ -n "$agent" ] && kill -9 "$agent"
moved() { [ "$(field "[.replica_jobs[] | select(.node == \"$node\")] | length")" = 0 ] && ready_is "Running 4/4 2"; }
wait_for 90 moved || fail "replicas not moved off $node: $(svc show web)"
api /v1/services/web/endpoints | jq -e --arg n "$node" '[.endpoints[] | select(.node == $n)] == []' >/dev/null ||
  fail "endpoints still on the DOWN node $node: $(api /v1/services/web/endpoints)"
spread_ok || fail "spread after the node loss: $(field '[.replica_jobs[].node]')"
sleep 3 # traffic on the new set a while (a window, not a wait for anything)
client_end agent || fail "requests failed around an agent's kill -9"
echo "ok   agent of $node killed -9, its replicas replaced elsewhere (${SECONDS}s)"
# the replica it left running is an orphan: the agent started again hears
# from the server that its job ended there, and stops it
[ "$(replica_pids | wc -l)" = 5 ] || fail "$(replica_pids | wc -l) replica processes, want 4 and the orphan"
if [ ${#agent_cmd[@]} -gt 0 ]; then
  "${agent_cmd[@]}" >"$tmp/agent-again.log" 2>&1 &
  agent_again=$!
fi
no_orphan() { [ "$(replica_pids | wc -l)" = 4 ]; }
wait_for 30 no_orphan || fail "the orphan on $node still runs: $(replica_pids | wc -l) replica processes"
node_up() { [[ "$(api /v1/nodes | jq -r --arg n "$node" '.nodes[] | select(.name == $n) | .state')" =~ ^(IDLE|MIXED|ALLOCATED)$ ]]; }
wait_for 30 node_up || fail "$node not back: $(api /v1/nodes | jq -c '.nodes[] | [.name, .state]')"
echo "ok   the agent of $node started again stopped the replica it left (${SECONDS}s)"

# 4. a replica failing its health check is replaced
wait_for 90 ready_is "Running 4/4 2" || fail "not back to 4/4 after the agent kill: $(svc show web)"
sick=$(field '.replica_jobs[] | select(.index == 1) | .job_id')
touch unhealthy-1
health_replaced() { [ "$(field '.replica_jobs[] | select(.index == 1) | .job_id')" != "$sick" ]; }
wait_for 60 health_replaced || fail "the unhealthy replica 1 was not replaced: $(svc show web)"
rm -f unhealthy-1
wait_for 60 ready_is "Running 4/4 2" || fail "not 4/4 after the health replacement: $(svc show web)"
echo "ok   unhealthy replica replaced (${SECONDS}s)"

# 5. a new version whose health check always fails is rolled back under
# load: the old replicas serve throughout (max_unavailable 0)
client rollback /web/who 180
spec 3 1 2 15 >web.yaml
svc apply web.yaml >/dev/null || fail "apply v3"
rolled_back() { ready_is "Running 4/4 4" && field .reason | grep -q '^rolled back: generation 3 '; }
wait_for 120 rolled_back || fail "v3 not rolled back: $(svc show web)"
# v3's replicas drain and stop under the client: 4 processes again
wait_for 30 four_replicas || fail "v3's replicas did not stop: $(replica_pids | wc -l) replica processes"
wait_for 30 all_serve v2 || fail "v2 not served after the rollback"
[ "$(field .spec.env.VERSION)" = v2 ] || fail "the spec after the rollback: $(field .spec)"
svc show web | grep -q 'rolled back' || fail "service show does not say why: $(svc show web)"
client_end rollback || fail "requests failed during the rollback"
echo "ok   a version failing health rolled back: $(field .reason) (${SECONDS}s)"

# 6. autoscaling on the proxy's load signal
cat >auto.yaml <<EOF
name: auto
account: ops
autoscale: {min: 1, max: 3, target_in_flight: 2, scale_up_window_s: 0, scale_down_window_s: 5}
resources: {cpus: 1}
command: ["python3", "replica.py"]
workdir: $tmp/work
ports: [http]
health: {http: /healthz, port: http, interval_s: 1}
drain_s: 1
EOF
svc apply auto.yaml >/dev/null || fail "apply auto"
replicas_are() { [ "$(field '.replicas' auto)" "$1" "$2" ]; }
auto_served() { curl -sf "$PROXY/auto/who" >/dev/null; }
wait_for 60 auto_served || fail "auto not served"
client load /auto/slow 90 8
wait_for 60 replicas_are -eq 3 || fail "not scaled up to max (3) under load: $(svc show auto)"
peak=$(field '.replicas' auto)
client_end load || fail "requests failed while scaling up"
wait_for 60 replicas_are -eq 1 || fail "no scale down after the load: $(svc show auto)"
field '.decisions[].reason' auto | grep -q '^autoscale' || fail "no autoscale decision recorded: $(field .decisions auto)"
echo "ok   autoscale 1 -> $peak -> 1 under load through the proxy (${SECONDS}s)"

svc delete auto >/dev/null
svc delete web >/dev/null
# no node went DOWN but the one whose agent the test killed
down=$(grep -o 'node [^ ]* is DOWN' "$tmp/state/server.log" | grep -v "node $node is" || true)
[ -z "$down" ] || fail "nodes went DOWN that nobody killed: $down"
exit $((fails > 0))
