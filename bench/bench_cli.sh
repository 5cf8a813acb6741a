#!/usr/bin/env bash
# CLI speed, whole commands as users and workflow tools run them:
#   cli_sbatch_per_s   sequential `sbatch --wrap true` processes, one per job
#   cli_squeue_10k_ms  one `squeue` with 10,000 pending jobs (fetch + sort + print)
# Targets: >= 500 per second and <= 100 ms (Slurm 22.05 on this machine: ~30/s and ~400 ms).
#
# The server is `phalanx dev` once it exists; until then the API stand-in of
# the integration tests (tests/integration/cli_fake_server.py), which adds
# its own (Python) time to every request, so these figures are upper bounds
# on the CLI's own cost. Prints `name value unit` lines.
set -uo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
tmp=$(mktemp -d)
srv_pid=
trap '[ -n "$srv_pid" ] && kill $srv_pid 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/work"
ln -s "$PHALANX" "$tmp/bin/sbatch"
ln -s "$PHALANX" "$tmp/bin/squeue"
export PATH="$tmp/bin:$PATH" PHALANX_SERVER="unix:$tmp/px.sock"
python3 "$PX_SRC/tests/integration/cli_fake_server.py" "$tmp/px.sock" &
srv_pid=$!
deadline=$((SECONDS + 10))
until [ -S "$tmp/px.sock" ]; do
  [ $SECONDS -ge $deadline ] && { echo "bench_cli: server did not start" >&2; exit 1; }
  sleep 0.05
done
echo "bench_cli: server = API stand-in (phalanx dev not available yet)" >&2
cd "$tmp/work"
now_ns() { date +%s%N; }

n=1000
sbatch --wrap true >/dev/null # warm the page cache
t0=$(now_ns)
for ((i = 0; i < n; i++)); do
  sbatch --wrap true >/dev/null || { echo "bench_cli: sbatch failed" >&2; exit 1; }
done
t1=$(now_ns)
echo "cli_sbatch_per_s $((n * 1000000000 / (t1 - t0))) per_s"

curl -s --unix-socket "$tmp/px.sock" -X POST "http://x/test/populate?n=$((10000 - n - 1))" >/dev/null
[ "$(squeue -h -o %i | wc -l)" -eq 10000 ] || { echo "bench_cli: expected 10000 jobs" >&2; exit 1; }
best=
for r in 1 2 3 4 5; do
  t0=$(now_ns)
  squeue >/dev/null
  t1=$(now_ns)
  ms=$(((t1 - t0) / 1000000))
  [ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
done
echo "cli_squeue_10k_ms $best ms"
