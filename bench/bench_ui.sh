#!/usr/bin/env bash
# The web dashboard in headless Chromium against a server with 1,024 nodes
# (registered as their agents would, without agent processes) and 10,000
# jobs: ui_first_render_ms, ui_update_latency_ms, ui_assets_kib (and the
# figures to read them by); web/test/bench_ui.mjs says what each measures.
# Skips (exit 0) without node, Chromium or web/node_modules (make deps).
set -euo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
nodes=${UI_NODES:-1024} jobs=${UI_JOBS:-10000}
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if ! command -v node >/dev/null || [ -z "$chromium" ] || [ ! -d "$PX_SRC/web/node_modules/puppeteer-core" ]; then
  echo "bench_ui: needs node, chromium and web/node_modules (make deps); skipped" >&2
  exit 0
fi
tmp=$(mktemp -d /tmp/pxbench-ui.XXXXXX)
server=
cleanup() {
  [ -n "$server" ] && { kill -TERM "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; }
  rm -rf "$tmp"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
last=$(printf 'g%04d' "$nodes")
cat >"$tmp/slurm.conf" <<CONF
ClusterName=bench
AllowRootJobs=YES
SlurmdTimeout=3600
SchedulerType=sched/backfill
PriorityType=priority/multifactor
PriorityWeightFairshare=10000
PriorityWeightAge=1000
NodeName=g[0001-${last#g}] CPUs=64 RealMemory=512G Gres=gpu:h100:8
PartitionName=batch Nodes=ALL Default=YES MaxTime=2-0 State=UP
CONF
{
  for a in vision speech nlp robotics rl genomics climate ops probe; do echo "Account=$a Fairshare=10 Users=root"; done
  echo "User=root Account=ops DefaultAccount=ops"
} >"$tmp/accounts.conf"
for ((i = 1; i <= nodes; i += 16)); do
  hi=$((i + 15 > nodes ? nodes : i + 15))
  printf 'SwitchName=leaf%d Nodes=g[%04d-%04d]\n' $(((i + 15) / 16)) "$i" "$hi"
done >"$tmp/topology.conf"
"$PHALANX" server --config "$tmp/slurm.conf" --state-dir "$tmp/state" --listen "127.0.0.1:$port" \
  --socket "$tmp/server.sock" >"$tmp/server.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do
  curl -sf --unix-socket "$tmp/server.sock" http://x/v1/whoami >/dev/null 2>&1 && break
  kill -0 "$server" || { cat "$tmp/server.log" >&2; exit 1; }
  sleep 0.1
done
link=$(PHALANX_SERVER=$tmp/server.sock "$PHALANX" ui)
SOCK=$tmp/server.sock LINK=$link NODES=$nodes JOBS=$jobs CHROMIUM=$chromium node "$PX_SRC/web/test/bench_ui.mjs"
