#!/usr/bin/env bash
# CLI speed, whole commands as users and workflow tools run them, against a
# `phalanx dev` cluster (server + 4 agents):
#   cli_sbatch_per_s          sequential `sbatch --wrap true` processes, one per
#                             job, with nothing scheduled (the partition DOWN,
#                             so the jobs stay pending): the pure submit rate
#   cli_sbatch_cpu_ms         CPU time of one of those sbatch processes (the
#                             client alone; less noisy than the rate on a
#                             shared machine)
#   cli_sbatch_running_per_s  the same loop while the cluster runs every job
#   cli_true_per_s            the same loop with /bin/true: the machine's
#                             ceiling for any command run as one process per job
#   cli_true_cpu_ms           CPU time of one /bin/true process
#   cli_sbatch_per_true       cli_sbatch_per_s / cli_true_per_s of this run: the
#                             share of the machine's process-start ceiling an
#                             sbatch reaches (comparable across machines)
#   cli_squeue_10k_ms         one `squeue` with 10,000 pending jobs (fetch,
#                             decode, sort, print)
# Why cli_sbatch_per_s runs with nothing scheduled: the Slurm figure it is
# compared with (~30/s, ../shared/slurm/measure.sh, burst phase) is Slurm's
# "pure sbatch rate", measured with the partition DOWN so that no job starts
# while sbatch runs; so is ours (`scontrol update PartitionName=batch
# State=DOWN`: the jobs are accepted and stay pending, PartitionDown). With
# jobs running, every `true`
# job also costs server, agent, supervisor and job CPU on the same two cores
# (about 5 ms each), which the second figure shows.
# Targets: cli_sbatch_per_s >= 500, cli_squeue_10k_ms <= 100 (Slurm 22.05 on
# this machine: ~30/s and ~400 ms). Prints `name value unit` lines; progress
# goes to stderr.
set -uo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
tmp=$(mktemp -d)
dev_pid=
trap '[ -n "$dev_pid" ] && kill -- -$dev_pid 2>/dev/null && wait $dev_pid 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/work"
for c in sbatch squeue scancel scontrol; do ln -s "$PHALANX" "$tmp/bin/$c"; done
export PATH="$tmp/bin:$PATH"
nodes=4
setsid "$PHALANX" dev --nodes $nodes --port "${PX_BENCH_CLI_PORT:-44107}" --state-dir "$tmp/state" --ready-file "$tmp/ready" --quiet \
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
die() { echo "bench_cli: $*" >&2; exit 1; }
# CPU milliseconds of this shell's finished children so far (bash's `times`).
# `times` runs in this shell, not in a $(...) subshell that has no children.
children_cpu_ms() {
  times >"$tmp/times"
  awk 'END { s = 0; for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); s += p[1] * 60 + p[2] } printf "%d", s * 1000 }' "$tmp/times"
}
# Runs "$@" n times in a row; prints the rate and (with a CPU name) the CPU per run.
rate() { # name cpu_name command...
  local name=$1 cpu_name=$2 i t0 t1 c0 c1
  shift 2
  "$@" >/dev/null || die "$* failed"
  children_cpu_ms >"$tmp/c0"
  t0=$(now_ns)
  for ((i = 0; i < n; i++)); do
    "$@" >/dev/null || die "$* failed"
  done
  t1=$(now_ns)
  children_cpu_ms >"$tmp/c1"
  last_rate=$((n * 1000000000 / (t1 - t0)))
  echo "$name $last_rate per_s"
  c0=$(<"$tmp/c0") c1=$(<"$tmp/c1")
  [ -n "$cpu_name" ] && awk -v c=$((c1 - c0)) -v n=$n -v m="$cpu_name" 'BEGIN { printf "%s %.2f ms\n", m, c / n }'
}
active() { squeue -h -t PD,R,CG -o %i | wc -l; }
wait_idle() {
  local deadline=$((SECONDS + 120))
  until [ "$(active)" -eq 0 ]; do
    [ $SECONDS -ge $deadline ] && die "jobs still active after 120 s"
    sleep 0.2
  done
}

n=300
scontrol update PartitionName=batch State=DOWN || die "cannot set the partition down"
rate cli_sbatch_per_s cli_sbatch_cpu_ms sbatch -A ops --wrap true
sbatch_rate=$last_rate
scancel -t PD -u "$(id -un)" || die "scancel failed"
scontrol update PartitionName=batch State=UP || die "cannot set the partition up"
wait_idle
rate cli_sbatch_running_per_s "" sbatch -A ops --wrap true
wait_idle
rate cli_true_per_s cli_true_cpu_ms /bin/true
awk -v s="$sbatch_rate" -v t="$last_rate" 'BEGIN { printf "cli_sbatch_per_true %.3f ratio\n", s / t }'

# 10,000 held jobs in one API request (held: they stay pending).
python3 -c 'import json; print(json.dumps({"jobs": [{"name": "filler", "account": "ops", "hold": True,
  "time_limit_s": 600, "script": "#!/bin/sh\ntrue\n"} for _ in range(10000)]}))' >"$tmp/jobs.json"
curl -s --unix-socket "$PHALANX_SERVER" -H 'Content-Type: application/json' -d @"$tmp/jobs.json" \
  http://localhost/v1/jobs >/dev/null
pending=$(squeue -h -t PD -o %i | wc -l)
[ "$pending" -ge 10000 ] || die "only $pending pending jobs"
best=
for r in 1 2 3 4 5; do
  t0=$(now_ns)
  squeue >/dev/null
  t1=$(now_ns)
  ms=$(((t1 - t0) / 1000000))
  if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
done
echo "cli_squeue_10k_ms $best ms"
