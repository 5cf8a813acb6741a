#!/usr/bin/env bash
# End-to-end speed of a real local cluster (`phalanx dev`: the server and one
# agent process per node, emulated GPUs, every job a real process under its
# cgroup):
#   e2e_first_start_ms  submit -> the job's process running, one job on an idle
#                       cluster (median of 5; the job stamps its own start)
#   e2e_jobs_per_s      E2E_JOBS (10000) single-GPU `true` jobs submitted in
#                       batches of 500 to 64 nodes x 8 GPUs, from the first
#                       submit until no job is left pending or running;
#                       counts only jobs whose accounting row says COMPLETED
#                       and fails when any job ended otherwise
#   e2e_true_procs_per_s  the baseline it depends on, in the same run: bare
#                       `/bin/true` processes started one after another
#                       from this shell, per second
#   e2e_jobs_per_process_start  e2e_jobs_per_s / e2e_true_procs_per_s: jobs
#                       per bare process start, comparable across machines
#                       whose fork+exec cost differs (fourfold among VMs of
#                       one kind)
#   e2e_cpu_ms_per_job  CPU time of every process of the cluster (server,
#                       agents, supervisors, jobs) during the throughput run,
#                       per job: the figure that does not depend on what else
#                       runs on the machine (needs root and a v1 cpuacct
#                       hierarchy, where the bench runs in its own group;
#                       left out otherwise)
# Prints `name value unit` lines; fails when any job did not complete.
set -euo pipefail
: "${PHALANX:?}"
jobs=${E2E_JOBS:-10000}
nodes=${E2E_NODES:-64}
batch=$(( jobs < 500 ? jobs : 500 ))
tmp=$(mktemp -d /tmp/pxbench.XXXXXX)
chmod 755 "$tmp"
dev=
# The cluster's CPU time: this shell (and so everything it starts) moves
# into its own cpuacct group, whose usage counts the whole subtree.
acct=/sys/fs/cgroup/cpuacct/pxbench.$$
if [ "$(id -u)" -eq 0 ] && [ -w /sys/fs/cgroup/cpuacct ] && mkdir "$acct" 2>/dev/null; then
  echo $$ >"$acct/cgroup.procs" || acct=
else
  acct=
fi
cpu_ns() { if [ -n "$acct" ]; then cat "$acct/cpuacct.usage"; else echo 0; fi; }
cleanup() {
  [ -n "$dev" ] && { kill -TERM "$dev" 2>/dev/null; wait "$dev" 2>/dev/null || true; }
  rm -rf "$tmp"
  if [ -n "$acct" ]; then
    echo $$ >"$(dirname "$acct")/cgroup.procs" 2>/dev/null || true
    # agent levels left by killed agents first, then the group itself
    find "$acct" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
    rmdir "$acct" 2>/dev/null || true
  fi
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

# Waiting for the idle cluster: one curl process polls 20 times a second until nothing is pending or
# running (true) or the polls run out: a curl (or jq) started per poll costs
# ~10 ms of CPU each, which would be a good part of the CPU measured.
wait_idle() {
  awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++)
    print "url = \"http://localhost/v1/jobs?state=PENDING,RUNNING,COMPLETING&limit=1\"" }' >"$tmp/poll.cfg"
  local fd rc=0
  exec {fd}< <(exec curl -s --rate 20/s --unix-socket "$sock" -w '\n' -K "$tmp/poll.cfg")
  local poller=$!
  grep -m1 -q '"jobs":\[\]' <&"$fd" || rc=1
  kill "$poller" 2>/dev/null || true
  exec {fd}<&-
  return $rc
}
wait_idle 1200

# -- the baseline: bare process starts per second, now, on this machine
true_n=1000
t0=$(date +%s%N)
for ((i = 0; i < true_n; i++)); do /bin/true; done
true_per_s=$(awk -v n=$true_n -v ns=$(( $(date +%s%N) - t0 )) 'BEGIN { printf "%.1f", n * 1e9 / ns }')
echo "e2e_true_procs_per_s $true_per_s procs/s"

# -- throughput
one=$(jq -nc --arg wd "$tmp" '{name:"t", script:"#!/bin/sh\ntrue\n", gpus_per_node:1, workdir:$wd,
        submit_dir:$wd, stdout_path:"/dev/null", time_limit_s:600}')
body=$(jq -nc --argjson one "$one" --argjson n "$batch" '{jobs: [range($n) | $one]}')
printf '%s' "$body" >"$tmp/batch.json"
t0=$(now_ms)
c0=$(cpu_ns)
for ((sent = 0; sent < jobs; sent += batch)); do
  api -X POST --data-binary "@$tmp/batch.json" http://localhost/v1/jobs >/dev/null
done
wait_idle 72000 || { echo "bench_e2e: jobs still queued after an hour" >&2; exit 1; }
t1=$(now_ms)
c1=$(cpu_ns)
rows=$(api 'http://localhost/v1/accounting?limit=100000' | jq -c '[.jobs[] | select(.spec.name == "t") | .state] | group_by(.) | map({key: .[0], value: length}) | from_entries')
done_n=$(jq '.COMPLETED // 0' <<<"$rows")
echo "bench_e2e: $done_n of $jobs jobs COMPLETED in $((t1 - t0)) ms on $nodes agents (ends: $rows)" >&2
[ "$done_n" -eq "$jobs" ] || { echo "bench_e2e: only $done_n of $jobs jobs COMPLETED: $rows" >&2; exit 1; }
awk -v n="$done_n" -v ms="$((t1 - t0))" -v t="$true_per_s" 'BEGIN {
  r = n * 1000 / ms
  printf "e2e_jobs_per_s %.1f jobs/s\n", r
  printf "e2e_jobs_per_process_start %.3f jobs/proc\n", r / t }'
if [ -n "$acct" ]; then
  echo "bench_e2e: $(( (c1 - c0) / 1000000 )) ms of CPU in $((t1 - t0)) ms of wall time" >&2
  awk -v n="$jobs" -v ns="$((c1 - c0))" 'BEGIN { printf "e2e_cpu_ms_per_job %.2f ms\n", ns / 1e6 / n }'
fi
