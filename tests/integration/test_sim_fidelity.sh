#!/usr/bin/env bash
# Fidelity of a replay of the cluster's own accounting (docs/simulator.md,
# "What-if on your own cluster"): the short form of bench
# sim_fidelity_wait_error_pct, the same script with 60 jobs on 4 nodes x 8
# emulated GPUs in bursts of 20 (the bench: 2,000 on 32). They run on a
# real `phalanx dev` cluster, are exported and replayed on its slurm.conf,
# and each job's replayed wait is compared with its recorded one. The
# replay works from recorded facts (run times as the server held the
# GPUs, time limits, arrivals, the server's order of events, where its
# cycles ran, its clock), so a busy machine moves the record and the
# replay together (bench: 0.0% on 300, 2,000 and 3,000 jobs). Tolerance:
# the issue's 10% of the mean wait, or a mean |difference| of 1 s (waits
# are whole seconds; 60 jobs wait little).
source "$(dirname "$0")/lib_fidelity.sh"
run_bench
jobs=$(fig sim_fidelity_jobs) pct=$(fig sim_fidelity_wait_error_pct) diff=$(fig sim_fidelity_wait_abs_diff_s)
awk -v p="$pct" -v d="$diff" 'BEGIN { exit !(p != "" && (p <= 10 || d <= 1)) }' ||
  { echo "FAIL fidelity error $pct% (mean |difference| $diff s): over 10% and 1 s"; exit 1; }
echo "ok - replay of the recorded policy: $jobs jobs, error $pct% of the mean wait"
