#!/usr/bin/env bash
# End-to-end speed of a real local cluster (`phalanx dev`: the server and one
# agent process per node, emulated GPUs, every job a real process under its
# cgroup):
#   e2e_first_start_ms  submit -> the job's process running, one job on an idle
#                       cluster (median of 5; the job stamps its own start)
#   e2e_jobs_per_s      E2E_JOBS (10000) single-GPU `true` jobs submitted in
#                       batches of 500 to 64 nodes x 8 GPUs, from the first
#                       submit until no job is left pending or running
# Prints `name value unit` lines. Skips (exit 0) when the server is not built.
set -euo pipefail
: "${PHALANX:?}"
jobs=${E2E_JOBS:-10000}
nodes=${E2E_NODES:-64}
batch=500
if [[ $("$PHALANX" server --help 2>&1 || true) == *"not built yet"* ]]; then
  echo "bench_e2e: the server is not built yet; skipped" >&2
  exit 0
fi
tmp=$(mktemp -d /tmp/pxbench.XXXXXX)
chmod 755 "$tmp"
dev=
cleanup() {
  [ -n "$dev" ] && { kill -TERM "$dev" 2>/dev/null; wait "$dev" 2>/dev/null || true; }
  rm -rf "$tmp"
}
trap cleanup EXIT
"$PHALANX" dev --nodes "$nodes" --gpus 8 --quiet --state-dir "$tmp/c" --ready-file "$tmp/ready" &
dev=$!
for _ in $(seq 1 1800); do [ -s "$tmp/ready" ] && break; kill -0 "$dev"; sleep 0.1; done
[ -s "$tmp/ready" ] || { echo "bench_e2e: cluster did not start" >&2; exit 1; }
sock=$tmp/c/server.sock
api() { curl -sf --unix-socket "$sock" -H 'Content-Type: application/json' "$@"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# -- first start: submit one job, the job writes its own start time
firsts=()
for i in 1 2 3 4 5; do
  spec=$(jq -n --arg wd "$tmp" --arg f "$tmp/start.$i" \
    '{job:{name:"first", script:("#!/bin/sh\ndate +%s%N > " + $f + "\n"), gpus_per_node:1,
           workdir:$wd, submit_dir:$wd, stdout_path:"/dev/null", time_limit_s:60}}')
  t0=$(date +%s%N)
  api -X POST --data-binary "$spec" http://localhost/v1/jobs >/dev/null
  for _ in $(seq 1 1000); do [ -s "$tmp/start.$i" ] && break; sleep 0.005; done
  [ -s "$tmp/start.$i" ] || { echo "bench_e2e: job $i never started" >&2; exit 1; }
  firsts+=($(( ($(cat "$tmp/start.$i") - t0) / 1000000 )))
done
median=$(printf '%s\n' "${firsts[@]}" | sort -n | sed -n 3p)
echo "e2e_first_start_ms $median ms"

# wait for the idle cluster again
idle() { [ "$(api 'http://localhost/v1/jobs?state=PENDING,RUNNING,COMPLETING&limit=1' | jq '.jobs | length')" -eq 0 ]; }
for _ in $(seq 1 600); do idle && break; sleep 0.1; done

# -- throughput
one=$(jq -nc --arg wd "$tmp" '{name:"t", script:"#!/bin/sh\ntrue\n", gpus_per_node:1, workdir:$wd,
        submit_dir:$wd, stdout_path:"/dev/null", time_limit_s:600}')
body=$(jq -nc --argjson one "$one" --argjson n "$batch" '{jobs: [range($n) | $one]}')
printf '%s' "$body" >"$tmp/batch.json"
t0=$(now_ms)
for ((sent = 0; sent < jobs; sent += batch)); do
  api -X POST --data-binary "@$tmp/batch.json" http://localhost/v1/jobs >/dev/null
done
for _ in $(seq 1 36000); do idle && break; sleep 0.1; done
idle || { echo "bench_e2e: jobs still queued after an hour" >&2; exit 1; }
t1=$(now_ms)
done_n=$(api 'http://localhost/v1/accounting?state=COMPLETED&limit=100000' | jq '[.jobs[] | select(.spec.name == "t")] | length' 2>/dev/null || echo "?")
echo "bench_e2e: $done_n of $jobs jobs COMPLETED in $((t1 - t0)) ms on $nodes agents" >&2
awk -v n="$jobs" -v ms="$((t1 - t0))" 'BEGIN { printf "e2e_jobs_per_s %.1f jobs/s\n", n * 1000 / ms }'
