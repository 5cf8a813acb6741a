#!/usr/bin/env bash
# Services with traffic, end to end: a real `phalanx dev` cluster (server,
# 6 agents, replicas as real processes), its `phalanx proxy` in front of a
# real HAProxy, and a client loop on loopback (bounded in count and time)
# that must see zero failed requests while
#  1. a rolling update replaces all 4 replicas (max_surge 1, max_unavailable 0);
#  2. a replica's process is killed with -9 (it is replaced);
#  3. the agent of one node is killed with -9;
# and then
#  4. a replica failing its HTTP health check is replaced;
#  5. autoscaling: load through the proxy raises an autoscaled service from
#     1 replica toward its max, and it returns to 1 after the load stops.
# The replicas are tests/integration/svc/replica.py on the port the agent
# hands them ($PORT), health-checked by the agents on GET /healthz.
source "$(dirname "$0")/lib_dev.sh"
command -v haproxy >/dev/null || px_skip haproxy "no haproxy (make deps installs Debian's package)"
[ "$(id -u)" = 0 ] || px_skip root "replicas run as a user through the agents (root needed)"
mkdir -p "$tmp/work"
# 6 nodes of 8 CPUs and replicas of 8 CPUs: one replica per node (a dead
# node costs one of four), a node for the update's surge, one for the autoscaler
start_dev "squeue" --nodes 6 --cpus 8 --mem-mib 65536
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
# a node whose agent was killed keeps its replicas (and no agent stops them)
trap 'for p in $(replica_pids); do kill -9 "$p" 2>/dev/null; done; cleanup' EXIT
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

spec() { # spec VERSION
  cat <<EOF
name: web
account: ops
replicas: 4
resources: {cpus: 8}
command: ["python3", "replica.py"]
workdir: $tmp/work
env: {VERSION: "v$1"}
ports: [http]
health: {http: /healthz, port: http, interval_s: 1, timeout_s: 1, failure_threshold: 2, startup_grace_s: 10}
spread: true
update: {max_surge: 1, max_unavailable: 0}
drain_s: 2
EOF
}
ready_is() { [ "$(field '"\(.state) \(.ready)/\(.replicas) \(.generation)"')" = "$1" ]; }
serves() { [ "$(curl -s "$PROXY/web/who" | cut -d' ' -f1)" = "$1" ]; }
all_serve() { for _ in 1 2 3 4 5 6 7 8; do serves "$1" || return 1; done; }

spec 1 >web.yaml
svc apply web.yaml >/dev/null || fail "apply"
wait_for 90 ready_is "Running 4/4 1" || { fail "not 4/4: $(svc show web)"; exit 1; }
wait_for 30 all_serve v1 || { fail "v1 not served through $PROXY: $(curl -s "$PROXY/web/who")"; exit 1; }
echo "ok   4 replicas ready and served through the proxy (${SECONDS}s)"

# 1. rolling update under load
client update /web/who 180
spec 2 >web.yaml
svc apply web.yaml >/dev/null || fail "apply v2"
wait_for 150 ready_is "Running 4/4 2" || fail "update not done: $(svc show web)"
wait_for 30 all_serve v2 || fail "v2 not served"
sleep 3 # the last old replica drained and stopped under the client
client_end update || fail "requests failed during the rolling update"
echo "ok   rolling update of 4 replicas (${SECONDS}s)"

# 2. a replica's process killed with -9 under load
before=$(jobs_of)
client kill /web/who 120
sleep 1
victim=$(replica_pids | head -n1)
kill -9 "$victim"
replaced() { [ "$(jobs_of)" != "$before" ] && ready_is "Running 4/4 2"; }
wait_for 60 replaced || fail "the killed replica was not replaced: $(svc show web)"
sleep 2
client_end kill || fail "requests failed around a replica's kill -9"
echo "ok   replica kill -9 replaced (${SECONDS}s)"

# 3. one node's agent killed with -9 under load: its replicas serve on
# until the server calls the node DOWN (SlurmdTimeout, 10 s here) and the
# controller starts replacements elsewhere
node=$(field '.replica_jobs[0].node')
agent=$(pgrep -f "agent --server .* --node $node .*$tmp" | head -n1)
[ -n "$agent" ] || fail "no agent process for $node"
client agent /web/who 120
sleep 1
[ -n "$agent" ] && kill -9 "$agent"
moved() { [ "$(field "[.replica_jobs[] | select(.node == \"$node\")] | length")" = 0 ] && ready_is "Running 4/4 2"; }
wait_for 90 moved || fail "replicas not moved off $node: $(svc show web)"
sleep 3
client_end agent || fail "requests failed around an agent's kill -9"
echo "ok   agent of $node killed -9, its replicas replaced elsewhere (${SECONDS}s)"

# 4. a replica failing its health check is replaced
wait_for 90 ready_is "Running 4/4 2" || fail "not back to 4/4 after the agent kill: $(svc show web)"
sick=$(field '.replica_jobs[] | select(.index == 1) | .job_id')
touch unhealthy-1
health_replaced() { [ "$(field '.replica_jobs[] | select(.index == 1) | .job_id')" != "$sick" ]; }
wait_for 60 health_replaced || fail "the unhealthy replica 1 was not replaced: $(svc show web)"
rm -f unhealthy-1
wait_for 60 ready_is "Running 4/4 2" || fail "not 4/4 after the health replacement: $(svc show web)"
echo "ok   unhealthy replica replaced (${SECONDS}s)"

# 5. autoscaling on the proxy's load signal
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
wait_for 60 replicas_are -ge 2 || fail "no scale up under load: $(svc show auto)"
peak=$(field '.replicas' auto)
client_end load || fail "requests failed while scaling up"
wait_for 60 replicas_are -eq 1 || fail "no scale down after the load: $(svc show auto)"
field '.decisions[].reason' auto | grep -q '^autoscale' || fail "no autoscale decision recorded: $(field .decisions auto)"
echo "ok   autoscale 1 -> $peak -> 1 under load through the proxy (${SECONDS}s)"

svc delete auto >/dev/null
svc delete web >/dev/null
exit $((fails > 0))
