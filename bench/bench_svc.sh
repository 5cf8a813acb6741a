#!/usr/bin/env bash
# Services on a real `phalanx dev` cluster (4 nodes, heartbeat 1 s, so
# SlurmdTimeout=5 s) with its `phalanx proxy` (HAProxy) in front:
#   svc_first_ready_ms         apply of a 1-replica service to its first ready
#                              endpoint in /v1/services/web/endpoints (target 500)
#   svc_rolling_update_errors  failed requests of a steady client loop (4 at a
#                              time, keep-alive) through the proxy during a
#                              rolling update of 8 replicas (target 0)
#   svc_rolling_update_s       apply of the new version to all 8 ready on it
#   svc_failover_s             a node killed (its agent and its replica, -9) to a
#                              ready replacement on another node, not the
#                              surviving replica's (spread) (target <=
#                              SlurmdTimeout + 2 = 7 s); then the node's agent
#                              is started again and must register
# with the baselines they rest on: the replica program's own start to
# listening (svc_app_start_ms) and the cluster's SlurmdTimeout. Each checks the
# work happened (the endpoint listed, v2 served by 8 replicas, the
# replacement on another node) and fails otherwise. Skips (exit 0) without
# haproxy or as non-root.
set -euo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
if ! command -v haproxy >/dev/null || [ "$(id -u)" != 0 ]; then
  echo "bench_svc: needs haproxy (make deps) and root; skipped" >&2
  exit 0
fi
tmp=$(mktemp -d /tmp/pxbench-svc.XXXXXX)
chmod 755 "$tmp"
dev= agent_again=
cleanup() {
  # the agent started again after the failover is the bench's (it removes
  # its cgroups as it stops; the one killed -9 could not)
  [ -n "$agent_again" ] && { kill -TERM "$agent_again" 2>/dev/null; wait "$agent_again" 2>/dev/null || true; }
  for p in $(pgrep -f "python3 replica.py$" || true); do
    [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$tmp" ] && kill -9 "$p"
  done
  [ -n "$dev" ] && { kill -TERM "$dev" 2>/dev/null; wait "$dev" 2>/dev/null || true; }
  rm -rf "$tmp"
}
trap cleanup EXIT
die() { echo "bench_svc: $*" >&2; exit 1; }
now_ms() { date +%s%3N; }
"$PHALANX" dev --nodes 4 --cpus 16 --mem-mib 65536 --heartbeat 1 --state-dir "$tmp/dev" --ready-file "$tmp/ready" \
  --quiet >"$tmp/dev.log" 2>&1 &
dev=$!
for _ in $(seq 1 1200); do [ -s "$tmp/ready" ] && break; kill -0 "$dev" || die "dev exited"; sleep 0.1; done
set -a; source "$tmp/ready"; set +a
[ -n "${PHALANX_PROXY:-}" ] || die "phalanx dev started no proxy"
cd "$tmp" && cp "$PX_SRC/tests/integration/svc/replica.py" .
api() { curl -sf --unix-socket "$PHALANX_SERVER" "http://x$1"; }
svc() { "$PHALANX" service "$@"; }
spec() { # spec NAME REPLICAS VERSION
  printf '%s\n' "name: $1" "account: ops" "replicas: $2" "resources: {cpus: 1}" 'command: ["python3", "replica.py"]' \
    "workdir: $tmp" "env: {VERSION: v$3}" "ports: [http]" "spread: ${4:-false}" \
    "health: {http: /healthz, port: http, interval_s: 1, timeout_s: 1, failure_threshold: 2}" \
    "update: {max_surge: 1, max_unavailable: 0}" "drain_s: 1" >"$1.yaml"
}
wait_until() { # wait_until SECONDS CONDITION...
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.01; done
}

# baseline: the replica program alone, start to answering
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
t0=$(now_ms)
PORT=$port python3 replica.py & app=$!
wait_until 10 curl -sf "http://127.0.0.1:$port/healthz" -o /dev/null || die "replica.py did not start"
echo "svc_app_start_ms $(($(now_ms) - t0)) ms"
kill $app; wait $app 2>/dev/null || true

# svc_first_ready_ms
spec one 1 1
listed() { [ "$(api /v1/services/one/endpoints | jq '.endpoints | length')" -ge 1 ]; }
t0=$(now_ms)
svc apply one.yaml >/dev/null
wait_until 30 listed || die "no ready endpoint for 'one' within 30 s: $(svc show one)"
echo "svc_first_ready_ms $(($(now_ms) - t0)) ms (target 500)"
svc delete one >/dev/null

# svc_rolling_update_errors, svc_rolling_update_s: 8 replicas under steady load
spec web 8 1
svc apply web.yaml >/dev/null
state_is() { [ "$(svc show web --json | jq -r '"\(.state) \(.ready)/\(.replicas) \(.generation)"')" = "$1" ]; }
wait_until 120 state_is "Running 8/8 1" || die "8 replicas not ready: $(svc show web)"
wait_until 30 curl -sf "$PHALANX_PROXY/web/who" -o /dev/null || die "web not served through the proxy"
PX_CLIENT_STOP=$tmp/stop python3 "$PX_SRC/tests/integration/svc/client.py" "$PHALANX_PROXY/web/who" 10000000 300 4 \
  >"$tmp/client" &
client=$!
sleep 1
spec web 8 2
t0=$(now_ms)
svc apply web.yaml >/dev/null
wait_until 240 state_is "Running 8/8 2" || die "the update did not finish: $(svc show web)"
t1=$(now_ms)
sleep 2 # the last old replica drains under load
touch "$tmp/stop"
wait $client
read -r _ requests _ failed _ < "$tmp/client"
served=$(for _ in $(seq 1 16); do curl -s "$PHALANX_PROXY/web/who"; done | sort -u)
[ "$(echo "$served" | cut -d' ' -f1 | sort -u)" = v2 ] || die "not every reply from v2 after the update: $served"
[ "$(echo "$served" | wc -l)" -ge 2 ] || die "only one replica answered after the update"
[ "$requests" -gt 0 ] || die "the client made no request"
echo "svc_rolling_update_errors $failed requests (of $requests; target 0)"
[ "$failed" = 0 ] || { tail -n +2 "$tmp/client"; tail -15 "$tmp/dev/proxy.log"; } >&2
echo "svc_rolling_update_s $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1000 }') s (8 replicas, max_surge 1)"
svc delete web >/dev/null

# svc_failover_s: a node dies (its agent and replica 0, -9) under a 2-replica service
spec fo 2 1 true
svc apply fo.yaml >/dev/null
fo_ready() { [ "$(svc show fo --json | jq -r '"\(.state) \(.ready)"')" = "Running 2" ]; }
wait_until 60 fo_ready || die "fo not ready: $(svc show fo)"
node=$(svc show fo --json | jq -r '.replica_jobs[0].node')
sibling=$(svc show fo --json | jq -r '.replica_jobs[1].node')
agent=$(pgrep -f "agent --server .* --node $node .*$tmp" | head -n1)
[ -n "$agent" ] || die "no agent for $node"
mapfile -d '' agent_cmd <"/proc/$agent/cmdline"
victim=""
for p in $(pgrep -f "python3 replica.py$" || true); do
  tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "PX_SERVICE=fo" &&
    tr '\0' '\n' <"/proc/$p/environ" | grep -qx "PX_REPLICA=0" && victim=$p
done
t0=$(now_ms)
kill -9 "$agent" ${victim:+"$victim"}
# done: two ready endpoints, none on the dead node (the replacement is a
# new job: a lost node ends a replica NODE_FAIL)
replaced() {
  api /v1/services/fo/endpoints | jq -e --arg n "$node" \
    '(.endpoints | length) >= 2 and ([.endpoints[] | select(.node == $n)] | length) == 0' >/dev/null
}
wait_until 90 replaced || die "no ready replacement off $node: $(api /v1/services/fo/endpoints)"
t1=$(now_ms)
nodes=$(api /v1/services/fo/endpoints | jq -r '[.endpoints[].node] | sort | join(" ")')
[ "$(echo "$nodes" | tr ' ' '\n' | sort -u | wc -l)" = 2 ] || die "spread: both replicas on one node after the failover ($nodes; the sibling ran on $sibling)"
echo "svc_failover_s $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1000 }') s (SlurmdTimeout 5 s; target 7)"
# the node comes back: its agent, started again, registers, is told that
# nothing of what it reattached runs there any more, and sweeps its cgroups
"${agent_cmd[@]}" >"$tmp/agent-again.log" 2>&1 &
agent_again=$!
node_up() { [[ "$(api /v1/nodes | jq -r --arg n "$node" '.nodes[] | select(.name == $n) | .state')" =~ ^(IDLE|MIXED|ALLOCATED)$ ]]; }
wait_until 30 node_up || die "$node did not come back: $(tail -5 "$tmp/agent-again.log")"
exit 0
