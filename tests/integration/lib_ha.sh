#!/usr/bin/env bash
# lib_ha.sh - sourced by the high-availability tests (issue 16): a real
# PostgreSQL started for the test (skip, 77, when its binaries are missing),
# controllers (`phalanx server --ha`) each under a tiny supervisor that
# starts it again when it exits 75 (deposed, as systemd's
# RestartForceExitStatus=75 would), one emulator of four nodes with real job
# processes, and helpers that ask the store who leads. Everything started
# here is stopped by the EXIT trap, by pid. Waits are deadlines on conditions.
set -uo pipefail
: "${PHALANX:?set PHALANX to the phalanxd binary}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=$(dirname "$PHALANX")
source "$HERE/lib_skip.sh"
T=$(mktemp -d /tmp/px-ha-XXXXXX)
chmod 755 "$T"
SUPS=()
AGENT=
LEASE_MS=${LEASE_MS:-2000}

ha_cleanup() {
  local rc=$?
  for p in "${SUPS[@]}"; do kill "$p" 2>/dev/null; done
  for f in "$T"/*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
  for f in "$T"/*.pid; do [ -f "$f" ] && kill -CONT "$(cat "$f")" 2>/dev/null; done
  [ -n "$AGENT" ] && { kill "$AGENT" 2>/dev/null; wait "$AGENT" 2>/dev/null; }
  [ -n "${REAL:-}" ] && { kill "$REAL" 2>/dev/null; wait "$REAL" 2>/dev/null; }
  wait 2>/dev/null
  if [ $rc -ne 0 ]; then
    for l in "$T"/*.log; do echo "--- $l (last 15 lines)" >&2; tail -15 "$l" >&2; done
  fi
  [ -n "${PX_KEEP:-}" ] && psql -Atq "$CONN" -c "SELECT seq, term, kind, job_id, data FROM journal ORDER BY seq" >"$T/journal.txt" 2>&1
  bash "$HERE/pg_ctl.sh" stop "$T/db"
  [ -n "${PX_KEEP:-}" ] || rm -rf "$T"
  exit $rc
}
trap ha_cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $* (${SECONDS}s, $(date +%T.%N | cut -c1-12))"; }

# wait_until SECONDS DESCRIPTION COMMAND...
wait_until() {
  local limit=$1 what=$2; shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "timed out ($limit s) waiting for: $what"
    sleep 0.1
  done
}

CONN=$(bash "$HERE/pg_ctl.sh" start "$T/db")
case $? in
  0) ;;
  77) trap - EXIT; rm -rf "$T"; px_skip postgresql "PostgreSQL server binaries not installed (Debian package postgresql)" ;;
  *) fail "cannot start PostgreSQL" ;;
esac

cat >"$T/slurm.conf" <<CONF
ClusterName=ha
AllowRootJobs=YES
HeartbeatInterval=1
SlurmdTimeout=30
NodeName=n[01-04] CPUs=64 RealMemory=512G Gres=gpu:h100:8
NodeName=n05 CPUs=4 RealMemory=8G Gres=gpu:2
PartitionName=gpu Nodes=n[01-04] Default=YES MaxTime=2-0 DefaultTime=1:00:00 State=UP
PartitionName=solo Nodes=n05 MaxTime=1:00:00 State=UP
CONF
echo "Account=ml Fairshare=100 Users=root" >"$T/accounts.conf"
mkdir -p "$T/marks" "$T/tok"
chmod 777 "$T/marks"

declare -A PORT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_ctl NAME: a controller under its supervisor (the pid of the server
# itself is in $T/NAME.pid). Controllers share the JWT key, as they must.
start_ctl() {
  local name=$1
  [ -n "${PORT[$name]:-}" ] || PORT[$name]=$(free_port)
  mkdir -p "$T/$name"
  [ -f "$T/jwt.key" ] && cp "$T/jwt.key" "$T/$name/jwt.key"
  (
    while :; do
      "$PHALANX" server --config "$T/slurm.conf" --state-dir "$T/$name" --store "$CONN" \
        --listen "127.0.0.1:${PORT[$name]}" --ha --name "$name" --lease-ms "$LEASE_MS" --log-level "${HA_LOG:-info}" \
        >>"$T/$name.log" 2>&1 &
      echo $! >"$T/$name.pid"
      wait $!
      rc=$?
      echo "exit $rc" >>"$T/$name.exits"
      [ $rc -eq 75 ] || exit $rc
    done
  ) &
  SUPS+=($!)
  wait_until 30 "controller $name answers" curl -sf "$(url "$name")/v1/controllers"
  [ -f "$T/jwt.key" ] || cp "$T/$name/jwt.key" "$T/jwt.key"
}

url() { echo "http://127.0.0.1:${PORT[$1]}"; }
status_json() { "$PHALANX" server status --store "$CONN" --json 2>/dev/null; }
# The leader as the store sees it: a fresh report with role leader.
leader() { status_json | jq -er '[.controllers[] | select(.role == "leader" and .age_ms < 1500)][0].name'; }
term() { status_json | jq -er '.term'; }
is_leader() { [ "$(leader)" = "$1" ]; }
# A leader whose term is above $1 answers.
new_leader_above() {
  local l t
  l=$(leader) && t=$(term) && [ "$t" -gt "$1" ] && curl -sf -H "Authorization: Bearer $TOKEN" "$(url "$l")/v1/whoami"
}

start_agent() {
  for n in n01 n02 n03 n04; do
    "$PHALANX" server token --state-dir "$T/a" --user root --node $n >"$T/tok/$n.token"
  done
  "$PHALANX" agent --server "$1" --emulate-nodes 'n[01-04]' --emulate-jobs real --token-dir "$T/tok" \
    --emulate-gpus 8:h100 --emulate-cpus 64 --emulate-mem 524288 --state-dir "$T/agent" --heartbeat 1 >>"$T/agent.log" 2>&1 &
  AGENT=$!
}

# start_real_agent URLS: the real agent (processes, cgroups) for n05, with two emulated GPUs
# (and n05's CPUs and memory: a node reporting fewer than configured is drained).
REAL=
start_real_agent() {
  "$PHALANX" server token --state-dir "$T/a" --user root --node n05 >"$T/tok/n05.token"
  "$PHALANX" agent --server "$1" --node n05 --state-dir "$T/real" --emulate-gpus 2 --emulate-cpus 4 --emulate-mem 8192 --kill-wait 1 --allow-root \
    --token-file "$T/tok/n05.token" --heartbeat 1 >>"$T/real.log" 2>&1 &
  REAL=$!
}

# api PATH: the leader's answer (through the CLI's own failover is not needed here).
api() { curl -sf -H "Authorization: Bearer $TOKEN" "$(url "$(leader)")$1"; }
psql_q() { psql -Atq "$CONN" -c "$1"; }
