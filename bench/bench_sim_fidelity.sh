#!/usr/bin/env bash
# sim_fidelity_wait_error_pct (issue 21): run a mix on a real `phalanx dev`
# cluster (emulated nodes; a job ends after its `sleep N`), export its
# accounting (`phalanx export`), replay it on the same slurm.conf
# (`phalanx sim --from-accounting`) and compare each job's wait: the mean
# absolute difference over the mean recorded wait, in percent (target <= 10).
# FID_JOBS (default 2000) jobs: 1, 2, 4 or 8 GPUs, one in ten a 2-node gang
# of 16, 2-10 s each, three accounts (vision, capped at 16 GPUs by `phalanx
# dev`'s GrpTRES, gets a third of the jobs on 4 nodes and fewer on more, 16
# GPUs' worth, so that its cap does not set the run's length alone),
# submitted in bursts of FID_BURST
# (default 40) a second onto FID_NODES (default 32) nodes x 8 GPUs, faster
# than those serve them, so that they queue (about 5 minutes on a 2-core
# machine; the short form, tests/integration/test_sim_fidelity.sh, runs 60
# jobs on 4 nodes in bursts of 20). Prints the figures it depends on (jobs
# compared, mean recorded wait, mean |difference|, the mean signed
# difference: a replay that drifts early or late shows there, the load
# average and the run's length) next to the percentage; fails when a job
# is missing from the export or from the comparison. FID_KEEP=DIR keeps the trace, the report and the per-job
# comparison (jobs.csv, `phalanx sim --fidelity-jobs`) in DIR. Fails too
# when an exported job lacks its time limit (accounting keeps it).
# FID_FAULTS=N (default 0) takes N nodes down during the run, as a dead
# node looks to the server: once FID_JOBS/4 jobs are submitted (the queue
# deep, every node busy) the first N nodes stop heartbeating (the
# emulator's silent file and SIGUSR1, emulate.h); after SlurmdTimeout the
# server marks them DOWN and requeues their jobs; FID_DOWN_S (default 20)
# seconds later they speak again and come back. Accounting records the
# outage (node events: `sacctmgr show event`), the export writes it to
# trace.nodes.csv beside trace.csv, and the replay takes the nodes out of
# service for its span. Prints how many jobs were
# requeued (their accounting rows' restart counts), how many jobs' waits
# differ, the error over the requeued jobs and over the others, the node
# periods exported and the outages the replay took (sim_fidelity_node_*),
# and the error of the same record replayed without them
# (sim_fidelity_wait_error_without_node_events_pct: the replay before
# accounting kept them).
# FID_PREEMPT=1 submits one job in 5 under QoS low and one in 11 under
# high, which preempts low (requeue, GraceTime 10 s: `phalanx dev`'s
# accounts.conf), and prints the same figures for the preempted jobs
# (tests/integration/test_sim_fidelity_preempt.sh: its short form).
set -uo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
source "$PX_SRC/tests/integration/lib_dev.sh"
njobs=${FID_JOBS:-2000} nnodes=${FID_NODES:-32} burst=${FID_BURST:-40}
t_begin=$SECONDS load_begin=$(cut -d' ' -f1 /proc/loadavg)
start_dev "sbatch squeue sinfo" --nodes "$nnodes" --gpus 8 --emulate --emulate-jobs sim
wait_for 60 sh -c "[ \"\$(sinfo -h -t idle -o %D -p batch)\" = $nnodes ]" ||
  { echo "bench_sim_fidelity: nodes not idle" >&2; exit 1; }
mkdir -p "$tmp/out" && cd "$tmp/out"
faults=${FID_FAULTS:-0} down_s=${FID_DOWN_S:-20} fault_pid='' preempt=${FID_PREEMPT:-0}
api() { curl -sf --unix-socket "$tmp/state/server.sock" "http://localhost$1"; }
# NODE... all in state STATE (a prefix: DOWN, DOWN+DRAIN...)
nodes_in() { # STATE NODE...
  local want=$1 n
  shift
  for n in "$@"; do
    api /v1/nodes | jq -e --arg n "$n" --arg s "$want" '.nodes[] | select(.name == $n) | .state | startswith($s)' >/dev/null || return 1
  done
}
nodes_back() { # NODE...: none DOWN any more
  local n
  for n in "$@"; do nodes_in DOWN "$n" && return 1; done
  return 0
}
# The first $faults nodes go silent (a dead node to the server), are seen
# DOWN, stay so $down_s seconds, speak again and are seen back.
take_nodes_down() {
  local estate=$tmp/state/agents/emulated victims emu
  mapfile -t victims < <(api /v1/nodes | jq -r '.nodes[].name' | sort | head -n "$faults")
  emu=$(pgrep -f -- "--state-dir $estate " | head -1)
  if [ -z "$emu" ] || [ "${#victims[@]}" != "$faults" ]; then
    echo "bench_sim_fidelity: no emulator or not $faults nodes" >&2
    return 1
  fi
  echo "silent $(date +%s) ${victims[*]}" >"$tmp/out/faults.log"
  printf '%s\n' "${victims[@]}" >"$estate/silent" && kill -USR1 "$emu"
  wait_for 120 nodes_in DOWN "${victims[@]}" || { echo "bench_sim_fidelity: ${victims[*]} not DOWN" >&2; return 1; }
  echo "down $(date +%s)" >>"$tmp/out/faults.log"
  sleep "$down_s" # the outage itself: how long the nodes stay dead
  : >"$estate/silent" && kill -USR1 "$emu"
  wait_for 120 nodes_back "${victims[@]}" ||
    { echo "bench_sim_fidelity: ${victims[*]} did not come back" >&2; return 1; }
  echo "up $(date +%s)" >>"$tmp/out/faults.log"
}
RANDOM=7
vis=$((nnodes / 2)) # one job in vis is vision's: 16 of the cluster's GPUs
[ "$vis" -lt 3 ] && vis=3
for i in $(seq 1 "$njobs"); do
  g=$((1 << (RANDOM % 4))) d=$((2 + RANDOM % 9)) a=vision n=1
  [ $((RANDOM % vis)) != 0 ] && { a=ops; [ $((RANDOM % 2)) = 0 ] && a=speech; }
  [ $((RANDOM % 10)) = 0 ] && { n=2; g=8; }
  q=() # the default QoS (normal) unless FID_PREEMPT
  [ "$preempt" = 1 ] && [ $((i % 5)) = 0 ] && q=(-q low)
  [ "$preempt" = 1 ] && [ $((i % 11)) = 0 ] && q=(-q high)
  sbatch -A "$a" "${q[@]}" -N $n --gres=gpu:$g -t 5 --wrap "sleep $d" >/dev/null || { echo "bench_sim_fidelity: sbatch" >&2; exit 1; }
  [ $((i % burst)) = 0 ] && sleep 1
  [ "$faults" -gt 0 ] && [ "$i" = $((njobs / 4)) ] && { take_nodes_down & fault_pid=$!; }
done
[ -z "$fault_pid" ] || wait "$fault_pid" || exit 1
wait_for $((njobs * 2 + 120)) sh -c '[ "$(squeue -h | wc -l)" = 0 ]' || { echo "bench_sim_fidelity: jobs left" >&2; exit 1; }
"$PHALANX" export --since 1d --output trace.csv 2>export.err || { cat export.err >&2; exit 1; }
# a row per attempt: a requeued job's earlier runs too, under its one id
exported=$(awk -F, 'NR > 1 && !($1 in id) { id[$1]; n++ } END { print n + 0 }' trace.csv)
[ "$exported" = "$njobs" ] || { echo "bench_sim_fidelity: exported $exported of $njobs jobs" >&2; exit 1; }
"$PHALANX" sim --from-accounting trace.csv --config "$tmp/state/slurm.conf" --fidelity-jobs jobs.csv \
  >report.txt 2>sim.err || { cat sim.err >&2; exit 1; }
# With FID_FAULTS or FID_PREEMPT: the jobs the outage or a preemption
# requeued (restart count > 0 in their accounting rows), how many jobs'
# replayed waits differ at all, and the error over the requeued jobs and
# over the rest.
requeue_figures() {
  api "/v1/accounting?since=$(($(date +%s) - 86400))&limit=100000" |
    jq -r '.jobs[] | select((.restarts // 0) > 0) | .job_id' | sort -un >requeued.txt
  [ -s requeued.txt ] || { echo "bench_sim_fidelity: no job was requeued" >&2; exit 1; }
  [ "$faults" = 0 ] || echo "sim_fidelity_nodes_down $faults nodes, $(awk '/^down/ { d = $2 } /^up/ { u = $2 } END { print u - d }' faults.log) s seen DOWN, $(awk '/^silent/ { s = $2 } /^down/ { d = $2 } END { print d - s }' faults.log) s silent before"
  echo "sim_fidelity_requeued_jobs $(wc -l <requeued.txt) jobs"
  awk -F, 'NR == FNR { rq[$1] = 1; next } FNR > 1 { k = ($1 in rq) ? "requeued" : "others"
      d = $10 < 0 ? -$10 : $10; diff[k] += d; w[k] += $8; if (d) n++ }
    END { printf "sim_fidelity_jobs_differing %d jobs\n", n
      for (k in w) printf "sim_fidelity_wait_error_%s_pct %.1f %%\n", k, w[k] ? 100 * diff[k] / w[k] : 0 }' \
    requeued.txt jobs.csv | sort
  [ -z "${FID_KEEP:-}" ] || cp requeued.txt "$FID_KEEP/"
  [ -z "${FID_KEEP:-}" ] || [ "$faults" = 0 ] || cp faults.log "$FID_KEEP/"
  [ "$faults" = 0 ] && return
  local periods down
  periods=$(($(wc -l <trace.nodes.csv) - 1))
  down=$(awk -F, 'NR > 1 && $2 == "DOWN" { n++ } END { print n + 0 }' trace.nodes.csv)
  [ "$down" -ge "$faults" ] || { echo "bench_sim_fidelity: $down DOWN periods exported for $faults nodes down" >&2; exit 1; }
  echo "sim_fidelity_node_periods $periods periods ($down DOWN)"
  echo "sim_fidelity_node_outages_replayed $(sed -n 's/^node outages cluster: \([0-9]*\) replayed, \([0-9]*\) jobs.*/\1 outages, \2 jobs requeued by them/p' report.txt)"
  "$PHALANX" sim --from-accounting trace.csv --config "$tmp/state/slurm.conf" --no-node-events >without_node_events.txt 2>&1 ||
    { cat without_node_events.txt >&2; exit 1; }
  sed -n "s/^fidelity cluster: .* error \([0-9.]*\)% .*/sim_fidelity_wait_error_without_node_events_pct \1 %/p" without_node_events.txt
}
[ -n "${FID_KEEP:-}" ] && cp trace.csv trace.nodes.csv jobs.csv report.txt "$tmp/state/"*.conf "$FID_KEEP/" && cp -r "$tmp/state/server" "$FID_KEEP/"
line=$(grep '^fidelity cluster:' report.txt) || { echo "bench_sim_fidelity: no fidelity line" >&2; exit 1; }
compared=$(echo "$line" | sed -n 's/^fidelity cluster: \([0-9]*\) jobs.*/\1/p')
[ "$compared" = "$njobs" ] || { echo "bench_sim_fidelity: compared $compared of $njobs jobs" >&2; exit 1; }
[ "$(($(wc -l <jobs.csv) - 1))" = "$njobs" ] || { echo "bench_sim_fidelity: jobs.csv lacks jobs" >&2; exit 1; }
bias=$(awk -F, 'NR > 1 { s += $10; n++ } END { if (n) printf "%.1f", s / n }' jobs.csv)
# accounting keeps each job's time limit: none may be left to the estimate
nolimit=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "time_limit_s") c = i } NR > 1 && $c == "" { n++ } END { print n + 0 }' trace.csv)
echo "$line" | sed -n 's/^fidelity cluster: \([0-9]*\) jobs, mean |replayed wait - recorded wait| \([0-9.]*\) s, mean recorded wait \([0-9.]*\) s, error \([0-9.]*\)% .*/sim_fidelity_jobs \1 jobs\nsim_fidelity_wait_abs_diff_s \2 s\nsim_fidelity_recorded_wait_s \3 s\nsim_fidelity_wait_error_pct \4 %/p'
echo "sim_fidelity_wait_bias_s $bias s"
{ [ "$faults" -gt 0 ] || [ "$preempt" = 1 ]; } && requeue_figures
# What each part of the record is worth: the same record replayed without
# the seqs of the starts (a cycle after each event instead of where the
# server's cycles ran), without any seq (whole seconds: a second's ends,
# by job, before its submits), and on the simulator's own clock instead of
# the server's (time0_unix_s: backfill aligns its plan to Unix time).
head -1 trace.csv | grep -q ',submit_seq,start_seq,end_seq,time0_unix_s,dependency$' ||
  { echo "bench_sim_fidelity: no submit_seq, start_seq, end_seq, time0_unix_s" >&2; exit 1; }
ablate() { # NAME COLUMNS-TO-DROP...: the error of the replay without them
  local name=$1
  shift
  awk -F, -v OFS=, -v drop=" $* " 'NR == 1 { for (i = 1; i <= NF; i++) keep[i] = index(drop, " " $i " ") == 0 }
    { s = ""; for (i = 1; i <= NF; i++) if (keep[i]) s = s (s == "" ? "" : ",") $i; print s }' trace.csv >"$name.csv"
  "$PHALANX" sim --from-accounting "$name.csv" --node-events trace.nodes.csv --config "$tmp/state/slurm.conf" >"$name.txt" 2>&1 || { cat "$name.txt" >&2; exit 1; }
  sed -n "s/^fidelity cluster: .* error \([0-9.]*\)% .*/sim_fidelity_wait_error_${name}_pct \1 %/p" "$name.txt"
}
ablate without_cycles start_seq
ablate whole_seconds submit_seq start_seq end_seq
ablate sim_clock time0_unix_s
echo "sim_fidelity_cluster $nnodes nodes x 8 GPUs, bursts of $burst jobs a second"
echo "sim_fidelity_load $load_begin -> $(cut -d' ' -f1 /proc/loadavg) (1-minute load average, start -> end)"
echo "sim_fidelity_run_s $((SECONDS - t_begin)) s"
echo "sim_fidelity_jobs_without_limit $nolimit jobs"
[ "$nolimit" = 0 ] || { echo "bench_sim_fidelity: $nolimit exported jobs lack their time limit" >&2; exit 1; }
