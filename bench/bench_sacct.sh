#!/usr/bin/env bash
# sacct over a big accounting history, against a `phalanx dev` cluster:
#   cli_sacct_100k_ms        one `sacct -a -S 2020-01-01` (every page of
#                            /v1/accounting fetched, decoded, formatted and
#                            printed) over 100,001 finished jobs, each with its
#                            batch step and two srun steps: 400,004 lines
#   cli_sacct_100k_fetch_ms  100,000 of those rows in one curl request (the
#                            server's share: query, JSON, transfer)
#   cli_sacct_100k_cpu_ms    the CPU (user + system) of that sacct, all its
#                            threads: what it costs on a busy machine
#   cli_true_ms              one bare /bin/true process (the process-start
#                            baseline the CLI figure includes)
#   bench_load_1m            the load average when the timing began: sacct
#                            and the server want a core each, so the figures
#                            need a quiet machine (a load near the core count
#                            doubles them)
# The history: one real 2-node job runs two srun steps; its accounting row
# (as the server wrote it, steps included) is copied to 100,000 more job ids
# in the store (running 100,000 jobs would take minutes and measure the
# launcher, not sacct). Each timed sacct writes to a file (in /dev/shm
# where there is one: a file, not /dev/null, so that the bench can check
# that every run printed every line; it fails otherwise). Best of five.
# Target: cli_sacct_100k_ms <= 500.
set -uo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
tmp=$(mktemp -d)
dev_pid=
trap '[ -n "$dev_pid" ] && kill -- -$dev_pid 2>/dev/null && wait $dev_pid 2>/dev/null; rm -rf "$tmp"' EXIT
die() { echo "bench_sacct: $*" >&2; exit 1; }
mkdir -p "$tmp/bin" "$tmp/work"
for c in sbatch sacct srun; do ln -s "$PHALANX" "$tmp/bin/$c"; done
export PATH="$tmp/bin:$PATH" TZ=UTC
setsid "$PHALANX" dev --nodes 2 --state-dir "$tmp/state" --ready-file "$tmp/ready" --quiet >"$tmp/dev.log" 2>&1 &
dev_pid=$!
deadline=$((SECONDS + 120))
until [ -s "$tmp/ready" ]; do
  [ $SECONDS -ge $deadline ] && die "phalanx dev did not start"
  sleep 0.1
done
export PHALANX_SERVER=$(sed -n 's/^PHALANX_SERVER=//p' "$tmp/ready")
cd "$tmp/work"
printf '#!/bin/bash\n#SBATCH -N 2 -t 5\nsrun true\nsrun true\n' >job.sh
id=$(sbatch --parsable -A ops job.sh) || die "sbatch failed"
deadline=$((SECONDS + 60))
until [ "$(sacct -n -P -o JobID -j "$id" | wc -l)" = 4 ]; do
  [ $SECONDS -ge $deadline ] && die "job $id did not finish with its steps: $(sacct -P -j "$id")"
  sleep 0.2
done
python3 - "$tmp/state/server/state.db" "$id" <<'PY' || die "cannot copy the accounting row"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=30)
cols = [r[1] for r in db.execute("PRAGMA table_info(acct)")]
rest = ", ".join(c for c in cols if c != "job_id")
with db:
    db.execute(f"""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
                   INSERT INTO acct(job_id, {rest}) SELECT 10000000 + i, {rest} FROM acct, n
                   WHERE acct.job_id = ?""", (int(sys.argv[2]),))
PY
now_ns() { date +%s%N; }
want=$((100001 * 4 + 2)) # the rows' lines, the header and its dashes
lines=$(sacct -a -S 2020-01-01 -n -P | wc -l)
[ "$lines" = $((want - 2)) ] || die "sacct -n -P printed $lines lines, want $((want - 2))"
out=$tmp/sacct.out
[ -d /dev/shm ] && [ -w /dev/shm ] && out=$(mktemp /dev/shm/bench_sacct.XXXXXX)
trap '[ -n "$dev_pid" ] && kill -- -$dev_pid 2>/dev/null && wait $dev_pid 2>/dev/null; rm -rf "$tmp" "$out"' EXIT
load=$(cut -d' ' -f1 /proc/loadavg)
best= cpu_best=
TIMEFORMAT='%3U %3S'
for _ in 1 2 3 4 5; do
  t0=$(now_ns)
  cpu=$({ time sacct -a -S 2020-01-01 >"$out"; } 2>&1) || die "sacct failed: $cpu"
  t1=$(now_ns)
  lines=$(wc -l <"$out")
  [ "$lines" = "$want" ] || die "sacct printed $lines lines, want $want"
  ms=$(((t1 - t0) / 1000000))
  cpu_ms=$(awk '{ printf "%d", ($1 + $2) * 1000 }' <<<"$cpu")
  if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  if [ -z "$cpu_best" ] || [ "$cpu_ms" -lt "$cpu_best" ]; then cpu_best=$cpu_ms; fi
done
sock=${PHALANX_SERVER#unix:}
fetch() { curl -s --unix-socket "$sock" -o /dev/null "http://px/v1/accounting?since=1577836800&limit=100000"; }
fbest=
for _ in 1 2 3; do
  t0=$(now_ns); fetch; t1=$(now_ns)
  ms=$(((t1 - t0) / 1000000))
  if [ -z "$fbest" ] || [ "$ms" -lt "$fbest" ]; then fbest=$ms; fi
done
t0=$(now_ns); for _ in $(seq 100); do /bin/true; done; t1=$(now_ns)
echo "cli_sacct_100k_ms $best ms"
echo "cli_sacct_100k_cpu_ms $cpu_best ms"
echo "cli_sacct_100k_fetch_ms $fbest ms"
awk -v d=$((t1 - t0)) 'BEGIN { printf "cli_true_ms %.2f ms\n", d / 100 / 1e6 }'
echo "bench_load_1m $load load"
