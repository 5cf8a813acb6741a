#!/usr/bin/env bash
# lib_server.sh - sourced by the test_server_*.sh tests: a temp directory, a
# small cluster configuration, test users, a server process and helpers to
# talk to it. Everything started here is stopped by the EXIT trap, by pid.
# Waiting is always "until a condition holds or a deadline passes".
set -euo pipefail

: "${PHALANX:?set PHALANX to the phalanx binary}"
: "${PX_SRC:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
source "$(dirname "${BASH_SOURCE[0]}")/lib_skip.sh"
T=$(mktemp -d /tmp/px-test-XXXXXX)
chmod 755 "$T"
STATE=$T/state
SOCK=$STATE/phalanx.sock
SERVER_PID=
EXTRA_PIDS=()
PORT= # set by start_server

cleanup() {
  local rc=$?
  if [ -n "$SERVER_PID" ]; then kill -9 "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true; fi
  for p in "${EXTRA_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "${PG_DIR:-}" ] && bash "$PX_SRC/tests/integration/pg_ctl.sh" stop "$PG_DIR"
  if [ $rc -ne 0 ] && [ -f "$T/server.log" ]; then
    echo "--- server log (last 30 lines)" >&2
    tail -30 "$T/server.log" >&2
  fi
  rm -rf "$T"
  exit $rc
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $* (${SECONDS}s)"; }

# Test users (system accounts without a home or login shell).
for u in pxalice pxbob pxcoord pxoper pxeve; do px_user "$u" -r -M -s /usr/sbin/nologin || true; done

write_config() {
  cat >"$T/slurm.conf" <<CONF
ClusterName=test
AllowRootJobs=NO
HeartbeatInterval=2
SlurmdTimeout=${NODE_TIMEOUT:-30}
KillWait=2
NodeName=n[01-04] CPUs=64 RealMemory=512G Gres=gpu:h100:8
PartitionName=gpu Nodes=n[01-04] Default=YES MaxTime=2-0 DefaultTime=1:00:00 State=UP
PartitionName=small Nodes=n[01-02] MaxTime=1:00:00 State=UP
CONF
  cat >"$T/accounts.conf" <<CONF
Account=ml Fairshare=60 Users=pxalice,pxbob Coordinators=pxcoord
Account=physics Fairshare=40 Users=pxeve,pxcoord,pxoper
User=pxoper Account=ml DefaultAccount=physics
CONF
}

# A TCP port free right now: a fixed one in the ephemeral range (32768-60999)
# can be held by some client's connection when the server starts.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_server [extra args...]: starts (on a free TCP port, kept in PORT) and
# waits until it answers.
start_server() {
  PORT=$(free_port)
  "$PHALANX" server --config "$T/slurm.conf" --state-dir "$STATE" \
    --listen "127.0.0.1:$PORT" --operators pxoper "$@" >>"$T/server.log" 2>&1 &
  SERVER_PID=$!
  local deadline=$((SECONDS + 60))
  until curl -sf --unix-socket "$SOCK" http://x/v1/whoami >/dev/null 2>&1; do
    kill -0 "$SERVER_PID" 2>/dev/null || fail "server exited at start"
    [ $SECONDS -lt $deadline ] || fail "server did not answer within 60 s"
    sleep 0.05
  done
}

stop_server() { # stop_server [signal]
  kill "-${1:-TERM}" "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

# api METHOD PATH [BODY] as root: prints "STATUS BODY".
api() { api_as root "$@"; }
api_as() {
  local user=$1 method=$2 path=$3 body=${4:-}
  local args=(-s -o "$T/.out.$user" -w '%{http_code}' --unix-socket "$SOCK" -X "$method")
  [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
  local code
  if [ "$user" = root ]; then
    code=$(curl "${args[@]}" "http://x$path")
  else
    chmod 777 "$T"
    code=$(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups curl "${args[@]}" "http://x$path")
  fi
  echo "$code $(cat "$T/.out.$user")"
}

# expect STATUS "METHOD PATH [BODY]" as USER: checks the status, prints the body.
expect() {
  local want=$1 user=$2; shift 2
  local out code
  out=$(api_as "$user" "$@")
  code=${out%% *}
  [ "$code" = "$want" ] || fail "$user $1 $2: status $code, want $want: ${out#* }"
  echo "${out#* }"
}

# node_report NODE [JOBS]: the registration of a healthy node NODE: the CPUs,
# memory and GPUs its configuration gives it (as the server lists it: a node
# that reports fewer is drained, docs/agent.md), knowing JOBS (default []).
node_report() {
  expect 200 root GET "/v1/nodes/$1" | jq -c --argjson jobs "${2:-[]}" '
    (if .gres then [.gres | split(",")[] | split(":") | .[1] as $t | range(.[2] | tonumber) | $t]
     else [range(.gpus) as $i | .gpu_type // ""] end) as $types
    | {node: .name, addr: "127.0.0.1", cpus, mem_mib, version: "test", jobs: $jobs,
       gpus: [$types | to_entries[] | {index: .key, uuid: "GPU-FAKE-\(.key)", type: .value}]}'
}

# A fake agent for node $1 over the Unix socket (root: an administrator).
register_node() {
  expect 200 root POST /v1/agent/register "$(node_report "$1" "${2:-[]}")" >/dev/null
}

# wait_for DESCRIPTION COMMAND...: retries COMMAND until it succeeds, WAIT_S
# (default 30) seconds at most.
wait_for() {
  local what=$1; shift
  local deadline=$((SECONDS + ${WAIT_S:-30}))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "timed out waiting for: $what"
    sleep 0.05
  done
}

# holds_for N CHECK...: CHECK (which fails the test itself) holds, tried
# every 0.2 s, while the server runs N more scheduling cycles and 2 s at
# least (30 s at most). "Nothing happens" is watched over cycles, not only
# seconds: a busy machine runs fewer of them in a given time.
cycles() { curl -s --unix-socket "$SOCK" http://x/metrics | awk '$1 == "phalanx_scheduler_cycles_total" { print $2 }'; }
holds_for() {
  local n=$1 c0 t0=$SECONDS
  shift
  c0=$(cycles)
  [ -n "$c0" ] || fail "no phalanx_scheduler_cycles_total in /metrics"
  while [ $SECONDS -lt $((t0 + 2)) ] || [ "$(cycles)" -lt $((c0 + n)) ]; do
    "$@"
    [ $SECONDS -lt $((t0 + 30)) ] || fail "the server ran fewer than $n cycles in 30 s"
    sleep 0.2
  done
  "$@"
}

# pg_store_or_done: a private PostgreSQL for a test's second part (cleanup
# stops it: PG_DIR); sets store=(--store URL) and store_name. Without its
# server binaries it says so and ends the test, passed on SQLite.
pg_store_or_done() {
  local conn rc
  conn=$(bash "$PX_SRC/tests/integration/pg_ctl.sh" start "$T/pg/db") && rc=0 || rc=$?
  if [ $rc -eq 77 ]; then
    echo "ok - PostgreSQL part skipped: its server binaries are not installed"
    exit 0
  fi
  [ $rc -eq 0 ] || fail "cannot start PostgreSQL"
  PG_DIR=$T/pg/db
  store=(--store "$conn")
  store_name=PostgreSQL
}

# again_on_postgresql: pg_store_or_done with the state directory emptied,
# for the caller's scenario to run again from scratch.
again_on_postgresql() {
  pg_store_or_done
  rm -rf "$STATE"
}

job_state() { api GET "/v1/jobs?id=$1" | cut -d' ' -f2- | jq -r '.jobs[0].state'; }
job_is() { [ "$(job_state "$1")" = "$2" ]; }
journal_seq() { curl -s --unix-socket "$SOCK" 'http://x/v1/jobs?limit=1' | jq .seq; } # the published snapshot's journal seq

# start_munged: a private munged with its own key, socket in $T/munge.
MUNGE_SOCK=
start_munged() {
  command -v munged >/dev/null || fail "munged is not installed (Debian package munge)"
  local m=$T/munge
  mkdir -p "$m" && chmod 755 "$m"
  dd if=/dev/urandom of="$m/munge.key" bs=1024 count=1 2>/dev/null
  chmod 600 "$m/munge.key"
  munged -F --socket="$m/munge.sock" --key-file="$m/munge.key" --pid-file="$m/munged.pid" \
    --log-file="$m/munged.log" --seed-file="$m/munged.seed" >"$m/out" 2>&1 &
  EXTRA_PIDS+=($!)
  MUNGE_SOCK=$m/munge.sock
  wait_for "munged socket" test -S "$MUNGE_SOCK"
}

# tcp AUTH_HEADER METHOD PATH [BODY]: prints "STATUS BODY" over TCP.
tcp() {
  local auth=$1 method=$2 path=$3 body=${4:-}
  local args=(-s -o "$T/.tcp" -w '%{http_code}' -X "$method")
  [ -n "$auth" ] && args+=(-H "Authorization: $auth")
  [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
  local code
  code=$(curl "${args[@]}" "http://127.0.0.1:$PORT$path")
  echo "$code $(cat "$T/.tcp")"
}
tcp_expect() {
  local want=$1; shift
  local out
  out=$(tcp "$@")
  [ "${out%% *}" = "$want" ] || fail "tcp $2 $3: status ${out%% *}, want $want: ${out#* }"
  echo "${out#* }"
}
# A MUNGE credential made as USER with payload (node name) or none.
munge_cred() {
  local user=$1 payload=${2:-}
  local args=(-S "$MUNGE_SOCK")
  if [ -n "$payload" ]; then args+=(-s "$payload"); else args+=(-n); fi
  if [ "$user" = root ]; then munge "${args[@]}"
  else setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups munge "${args[@]}"; fi
}
