#!/usr/bin/env bash
# High availability on PostgreSQL (issue 16). Prints:
#   ha_jobs_in_store           the jobs in the store at the failover (held, pending)
#   ha_standby_lag_ms          p50 and max (ha_standby_lag_ms_max) during a submit
#                              storm: a submit acknowledged by the leader, to the
#                              standby having applied the journal up to it
#   ha_failover_s              kill -9 of the leader to the first job started by
#                              the new leader (a job submitted right after the
#                              kill through the CLI with both addresses), lease
#                              included; ha_lease_s is the lease (the baseline)
#   ha_takeover_tail_s         what the new leader's last journal read took
#   api_submit_per_s_postgresql and api_submit_per_s_sqlite
#                              bench_server's 4-client durable single submits on
#                              each backend, one after the other, same machine
# PX_HA_JOBS (default 100000) sets the jobs in the store. Without PostgreSQL's
# server binaries it says so and prints nothing.
set -uo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
BIN=$(dirname "$PHALANX")
JOBS=${PX_HA_JOBS:-100000}
LEASE_MS=3000
T=$(mktemp -d /tmp/px-bench-ha-XXXXXX)
chmod 755 "$T"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  bash "$PX_SRC/tests/integration/pg_ctl.sh" stop "$T/db"
  [ -n "${PX_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "bench_ha: $*" >&2; exit 1; }
CONN=$(bash "$PX_SRC/tests/integration/pg_ctl.sh" start "$T/db")
case $? in
  0) ;;
  77) echo "bench_ha: PostgreSQL server binaries not installed: skipped" >&2; exit 0 ;;
  *) fail "cannot start PostgreSQL" ;;
esac
now() { date +%s.%N; }
until_ok() { # SECONDS COMMAND...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.02; done
}

cat >"$T/slurm.conf" <<CONF
ClusterName=bench
AllowRootJobs=YES
HeartbeatInterval=1
NodeName=n[01-04] CPUs=64 RealMemory=512G Gres=gpu:h100:8
NodeName=n05 CPUs=64 RealMemory=512G Gres=gpu:h100:8
PartitionName=gpu Nodes=n[01-04] Default=YES MaxTime=2-0 DefaultTime=1:00:00 State=UP
PartitionName=ha Nodes=n05 MaxTime=1:00:00 State=UP
CONF
echo "Account=ml Fairshare=100 Users=root" >"$T/accounts.conf"
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
declare -A PORT=([a]=$(port) [b]=$(port))
start_ctl() {
  mkdir -p "$T/$1"
  [ -f "$T/a/jwt.key" ] && cp "$T/a/jwt.key" "$T/$1/jwt.key" 2>/dev/null
  "$PHALANX" server --config "$T/slurm.conf" --state-dir "$T/$1" --store "$CONN" --listen "127.0.0.1:${PORT[$1]}" \
    --ha --name "$1" --lease-ms $LEASE_MS --rate-limit 0 --log-level info >>"$T/$1.log" 2>&1 &
  PIDS+=($!)
  echo $! >"$T/$1.pid"
  until_ok 60 curl -sf "http://127.0.0.1:${PORT[$1]}/v1/controllers" || fail "controller $1 did not start"
}
ctl() { curl -sf "http://127.0.0.1:${PORT[$1]}/v1/controllers"; }
leads() { [ "$(ctl "$1" | jq -r .leader)" = "http://127.0.0.1:${PORT[$1]}" ] && curl -sf --unix-socket "$T/$1/phalanx.sock" http://x/v1/whoami; }
applied() { ctl "$1" | jq .applied_seq; }

start_ctl a
until_ok 20 leads a || fail "a does not lead"
start_ctl b
for n in n01 n02 n03 n04 n05; do "$PHALANX" server token --state-dir "$T/a" --user root --node $n >"$T/$n.token"; done
"$PHALANX" agent --server "http://127.0.0.1:${PORT[a]},http://127.0.0.1:${PORT[b]}" --emulate-nodes 'n[01-05]' \
  --emulate-gpus 8:h100 --emulate-cpus 64 --emulate-mem 524288 --emulate-jobs sim --token-dir "$T" --state-dir "$T/agent" --heartbeat 1 >>"$T/agent.log" 2>&1 &
PIDS+=($!)

# the store: JOBS held jobs, in batches of 1,000 through the leader's socket
python3 - "$T/batch.json" <<'PY'
import json, sys
job = {"nodes_min": 1, "nodes_max": 1, "gpus_per_node": 1, "time_limit_s": 60, "hold": True,
       "argv": ["sleep", "1"], "workdir": "/tmp"}
json.dump({"jobs": [job] * 1000}, open(sys.argv[1], "w"))
PY
t0=$(now)
for ((i = 0; i < JOBS / 1000; i++)); do
  curl -sf --unix-socket "$T/a/phalanx.sock" http://x/v1/jobs -H 'Content-Type: application/json' \
    --data-binary @"$T/batch.json" >/dev/null || fail "batch $i refused"
done
loaded=$(psql -Atq "$CONN" -c "SELECT count(*) FROM journal WHERE kind = 'submit'")
echo "bench_ha: $loaded submit records written in $(python3 -c "print(round($(now) - $t0, 1))") s" >&2
until_ok 120 sh -c "[ \"\$(curl -sf http://127.0.0.1:${PORT[b]}/v1/controllers | jq .applied_seq)\" -ge \"\$(curl -sf http://127.0.0.1:${PORT[a]}/v1/controllers | jq .applied_seq)\" ]" ||
  fail "the standby did not catch up"

# lag during a storm: 4 clients submitting through the leader's socket
"$BIN/bench/bench_server" storm "$T/a/phalanx.sock" 4 8000 "$T" >/dev/null 2>&1 &
STORM=$!
sleep 0.5
: >"$T/lags"
for ((k = 0; k < 30; k++)); do
  curl -sf --unix-socket "$T/a/phalanx.sock" http://x/v1/jobs -H 'Content-Type: application/json' \
    -d '{"job":{"nodes_min":1,"nodes_max":1,"gpus_per_node":1,"time_limit_s":60,"hold":true,"argv":["true"],"workdir":"/tmp"}}' >/dev/null ||
    continue
  ta=$(now)
  s=$(applied a)
  until_ok 10 sh -c "[ \"\$(curl -sf http://127.0.0.1:${PORT[b]}/v1/controllers | jq .applied_seq)\" -ge $s ]" || fail "standby lag over 10 s"
  python3 -c "print(round(($(now) - $ta) * 1000, 1))" >>"$T/lags"
  kill -0 $STORM 2>/dev/null || break
done
wait $STORM
[ "$(wc -l <"$T/lags")" -ge 5 ] || fail "too few lag samples"
sort -n "$T/lags" | awk '{ v[NR] = $1 } END { printf "ha_standby_lag_ms %.1f ms\nha_standby_lag_ms_max %.1f ms\n", v[int((NR + 1) / 2)], v[NR] }'
echo "ha_standby_lag_samples $(wc -l <"$T/lags") samples (the standby reads the journal every 100 ms)"

# failover: kill -9 the leader, submit right away through the CLI, time to RUNNING
export PHALANX_SERVER="http://127.0.0.1:${PORT[a]},http://127.0.0.1:${PORT[b]}" PHALANX_CONF=$T/slurm.conf
export PHALANX_TOKEN=$("$PHALANX" server token --state-dir "$T/a" --user root) PHALANX_TIMEOUT=30
# n05 (partition ha) is kept free for the job that times the failover
until_ok 30 sh -c "curl -sf --unix-socket $T/a/phalanx.sock http://x/v1/nodes/n05 | jq -e '.state == \"IDLE\"'" ||
  fail "n05 not up"
in_store=$(psql -Atq "$CONN" -c "SELECT count(DISTINCT job_id) FROM journal WHERE kind = 'submit'")
kill -9 "$(cat "$T/a.pid")"
t0=$(now)
echo "bench_ha: killed the leader at $(date -u +%T.%N)" >&2
# (a connection the dying leader accepted is reset: the CLI cannot know
# whether it was received and does not resend; the user, here, does)
for try in 1 2 3; do
  J=$("$BIN/sbatch" --parsable -p ha --gres=gpu:1 -t 1 --wrap 'sleep 30' 2>>"$T/sbatch.err") && break
done
[ -n "${J:-}" ] || fail "submit after the kill: $(cat "$T/sbatch.err")"
echo "bench_ha: job $J acknowledged $(python3 -c "print(round($(now) - $t0, 2))") s after the kill" >&2
started() { [ "$(curl -sf --unix-socket "$T/b/phalanx.sock" "http://x/v1/jobs?id=$J" | jq -r '.jobs[0].state')" = RUNNING ]; }
until_ok 60 started || fail "job $J did not start on the new leader"
echo "ha_failover_s $(python3 -c "print(round($(now) - $t0, 2))") s"
echo "ha_lease_s $(python3 -c "print($LEASE_MS / 1000)") s"
echo "ha_jobs_in_store $in_store jobs"
tail_s=$(grep -o "the tail took [0-9.]*" "$T/b.log" | tail -1 | awk '{print $4}')
echo "ha_takeover_tail_s ${tail_s:-0} s"
kill -9 "${PIDS[@]}" 2>/dev/null
wait 2>/dev/null
PIDS=()

# api_submit_per_s on each backend (bench_server starts its own server)
psql -Atq "$CONN" -c "DROP TABLE journal, snapshot, acct, archive, px_leader, px_controllers" || fail "drop"
pg=$(PX_BENCH_STORE=$CONN "$BIN/bench/bench_server" submit 5000 2>/dev/null | awk '/^api_submit_per_s/ {print $2}')
sq=$("$BIN/bench/bench_server" submit 5000 2>/dev/null | awk '/^api_submit_per_s/ {print $2}')
[ -n "$pg" ] && [ -n "$sq" ] || fail "bench_server submit failed"
echo "api_submit_per_s_postgresql $pg jobs/s"
echo "api_submit_per_s_sqlite $sq jobs/s"
