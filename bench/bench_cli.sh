#!/usr/bin/env bash
# CLI speed, whole commands as users and workflow tools run them, against a
# `phalanx dev` cluster (server + 4 agents):
#   cli_sbatch_per_s   sequential `sbatch --wrap true` processes, one per job
#   cli_true_per_s     the same loop with /bin/true: the machine's ceiling for
#                      any command run as one process per job
#   cli_squeue_10k_ms  one `squeue` with 10,000 pending jobs (fetch, decode, sort, print)
# Targets: >= 500 per second and <= 100 ms (Slurm 22.05 on this machine: ~30/s
# and ~400 ms). Prints `name value unit` lines; progress goes to stderr.
set -uo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
tmp=$(mktemp -d)
dev_pid=
trap '[ -n "$dev_pid" ] && kill -- -$dev_pid 2>/dev/null && wait $dev_pid 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/work"
ln -s "$PHALANX" "$tmp/bin/sbatch"
ln -s "$PHALANX" "$tmp/bin/squeue"
export PATH="$tmp/bin:$PATH"
setsid "$PHALANX" dev --nodes 4 --port 44107 --state-dir "$tmp/state" --ready-file "$tmp/ready" --quiet \
  >"$tmp/dev.log" 2>&1 &
dev_pid=$!
deadline=$((SECONDS + 120))
until [ -s "$tmp/ready" ]; do
  [ $SECONDS -ge $deadline ] && { echo "bench_cli: phalanx dev did not start" >&2; exit 1; }
  sleep 0.1
done
export PHALANX_SERVER=$(sed -n 's/^PHALANX_SERVER=//p' "$tmp/ready")
cd "$tmp/work"
now_ns() { date +%s%N; }

n=300
sbatch -A ops --wrap true >/dev/null || { echo "bench_cli: sbatch failed" >&2; exit 1; }
t0=$(now_ns)
for ((i = 0; i < n; i++)); do
  sbatch -A ops --wrap true >/dev/null || { echo "bench_cli: sbatch failed" >&2; exit 1; }
done
t1=$(now_ns)
echo "cli_sbatch_per_s $((n * 1000000000 / (t1 - t0))) per_s"
# The ceiling any one-process-per-job command has on this machine: the same
# loop starting /bin/true (fork + exec alone, no work, no server).
t0=$(now_ns)
for ((i = 0; i < n; i++)); do /bin/true; done
t1=$(now_ns)
echo "cli_true_per_s $((n * 1000000000 / (t1 - t0))) per_s"

# 10,000 held jobs in one API request (held: they stay pending).
python3 -c 'import json; print(json.dumps({"jobs": [{"name": "filler", "account": "ops", "hold": True,
  "time_limit_s": 600, "script": "#!/bin/sh\ntrue\n"} for _ in range(10000)]}))' >"$tmp/jobs.json"
curl -s --unix-socket "$PHALANX_SERVER" -H 'Content-Type: application/json' -d @"$tmp/jobs.json" \
  http://localhost/v1/jobs >/dev/null
pending=$(squeue -h -t PD -o %i | wc -l)
[ "$pending" -ge 10000 ] || { echo "bench_cli: only $pending pending jobs" >&2; exit 1; }
best=
for r in 1 2 3 4 5; do
  t0=$(now_ns)
  squeue >/dev/null
  t1=$(now_ns)
  ms=$(((t1 - t0) / 1000000))
  if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
done
echo "cli_squeue_10k_ms $best ms"
