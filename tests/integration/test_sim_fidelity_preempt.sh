#!/usr/bin/env bash
# Fidelity of a replay of the cluster's own accounting when jobs were
# preempted during the run (docs/simulator.md, "What-if on your own
# cluster"): the short form of bench/bench_sim_fidelity.sh with
# FID_PREEMPT=1: 60 jobs on 4 nodes x 8 emulated GPUs in bursts of 20, one
# in 5 under QoS low and one in 11 under high, which preempts low (requeue:
# `phalanx dev`'s accounts.conf). Then export, replay on the cluster's
# slurm.conf and compare each job's wait. Holds:
#  - a preemption happened: the journal has a requeue "Preempted", of a low
#    job only, and each such job is requeued in accounting (another job
#    requeued there needs its own requeue record: a node declared down
#    under load);
#  - each preempted job is exported with all its attempts (attempt 0..n,
#    once each, n its requeues in the journal, runs in order, the earlier
#    ones PREEMPTED, the last one's start the journal's last start, after
#    its last requeue), and every job with its QoS (11 low, 5 high);
#  - every job is exported and replayed (the bench checks it);
#  - the error stays within 25% of the mean recorded wait. The replay runs
#    a preempted job once, as soon as it can; its first start is compared
#    with its first attempt's (seen: 14.3-15.1% over the 3-6 requeued
#    jobs, 0.5-3.3% over the others; over all 60: 0.7%, 2.7% and 4.8% at
#    load 2-4). Before every attempt was exported, the preempted jobs'
#    error was 79-100% and all 60 jobs' 10.5%, 9.3% and 5.6% beside a
#    `make -j2` (load average 4-14), 3.1% at load 6; the bound, over twice
#    that worst, is kept until the new figures are seen under such load.
#    It catches a replay that stops following the record around the
#    preemptions (the other jobs' waits move too); the checks above catch
#    an export that loses an attempt or the QoS. About 60 s.
source "$(dirname "$0")/lib_fidelity.sh"
command -v sqlite3 >/dev/null || { echo "FAIL sqlite3 is missing (make deps installs it)"; exit 1; }
keep=$(mktemp -d)
trap 'rm -rf "$keep"' EXIT
run_bench FID_PREEMPT=1 FID_KEEP="$keep"
jobs=$(fig sim_fidelity_jobs) pct=$(fig sim_fidelity_wait_error_pct) requeued=$(fig sim_fidelity_requeued_jobs)
[ "${requeued:-0}" -ge 1 ] || { echo "FAIL no job was preempted"; exit 1; }
db() { sqlite3 -separator , "$keep/server/state.db" "$1"; }
# the journal's preemptions: each preempted job once, with its QoS
db "SELECT DISTINCT job_id FROM journal WHERE kind = 'requeue' AND json_extract(data, '$.reason') = 'Preempted'
  ORDER BY job_id" >"$keep/preempted.txt"
[ -s "$keep/preempted.txt" ] || { echo "FAIL no requeue in the journal says Preempted"; exit 1; }
# every preempted job is requeued in accounting; a job requeued for another
# reason (a node declared down while a loaded machine starved its agent's
# heartbeats) is not a preemption: it must have its own requeue record
missing=$(comm -23 <(sort "$keep/preempted.txt") <(sort "$keep/requeued.txt") | paste -sd' ')
[ -z "$missing" ] || { echo "FAIL preempted jobs not requeued in accounting: $missing"; exit 1; }
for j in $(comm -13 <(sort "$keep/preempted.txt") <(sort "$keep/requeued.txt")); do
  why=$(db "SELECT json_extract(data, '$.reason') FROM journal WHERE kind = 'requeue' AND job_id = $j" | paste -sd' ')
  [ -n "$why" ] || { echo "FAIL job $j requeued in accounting without a requeue record"; exit 1; }
  echo "note: job $j was also requeued, not preempted ($why)"
done
# per preempted job: its QoS, its last start's seq after its last requeue
# and how many requeues it had
db "SELECT job_id, json_extract((SELECT data FROM journal s WHERE s.job_id = r.job_id AND s.kind = 'submit'), '$.spec.qos'),
    (SELECT MAX(seq) FROM journal s WHERE s.job_id = r.job_id AND s.kind = 'start'), MAX(seq), COUNT(*)
  FROM journal r WHERE kind = 'requeue' AND job_id IN ($(paste -sd, "$keep/preempted.txt")) GROUP BY job_id" \
  >"$keep/last_runs.txt"
attempts PREEMPTED "$keep/preempted.txt" "$keep/trace.csv" >"$keep/attempts.txt"
bad=$(awk 'NR == FNR { split($0, f, ","); qos[f[1]] = f[2]; last[f[1]] = f[3]; rq[f[1]] = f[4]; nrq[f[1]] = f[5]; next }
  $1 == "bad" { bad = bad " " substr($0, 5); next }
  { seen[$1] = 1
    if ($2 != nrq[$1] + 1) bad = bad " " $1 ":rows=" $2 "(requeues " nrq[$1] ")"
    if ($3 != last[$1] || last[$1] <= rq[$1]) bad = bad " " $1 ":start_seq=" $3 "(last start " last[$1] ", requeue " rq[$1] ")"
    if (qos[$1] != "low" || $5 != "low") bad = bad " " $1 ":qos=" qos[$1] "/" $5 }
  END { for (j in qos) if (!(j in seen)) bad = bad " " j ":not exported"; print bad }' \
  "$keep/last_runs.txt" "$keep/attempts.txt")
# every job's QoS, counted on its first attempt's row
bad=$bad$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $(c["attempt"]) == 0 { q[$(c["qos"])]++ }
  END { if (q["low"] != 11 || q["high"] != 5) print " qos:low=" q["low"] + 0 ",high=" q["high"] + 0 }' "$keep/trace.csv")
[ -z "$bad" ] || { echo "FAIL preempted jobs exported wrongly:$bad"; exit 1; }
awk -v p="$pct" 'BEGIN { exit !(p != "" && p <= 25) }' ||
  { echo "FAIL fidelity error $pct% with preemptions: over 25%"; exit 1; }
echo "ok - replay after preemptions: $jobs jobs, $requeued preempted (every attempt exported once, in order, QoS low), error $pct%"
