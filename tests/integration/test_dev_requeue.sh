#!/usr/bin/env bash
# scontrol requeue on a real `phalanx dev` cluster: the running job's
# processes are killed by its agent, the job goes back to the queue and
# runs again (a second attempt, Restarts=1), with only that attempt's
# processes alive; scontrol requeuehold leaves it pending, held, with none.
# Its environment has SLURM_RESTART_COUNT from the second run on (Slurm
# 22.05: unset on the first run, 1 on the run after a requeue). Once
# cancelled, scontrol requeue runs it again (Slurm requeues a finished batch
# job), as its fourth attempt: SLURM_RESTART_COUNT=3.
# Server rules and refusals: test_server_requeue.sh, test_requeue_compat.sh.
source "$(dirname "$0")/lib_dev.sh"
start_dev "sbatch scontrol scancel sinfo squeue" --nodes 1 --cpus 8
wait_for 60 sh -c '[ "$(sinfo -h -t idle -o %D -p batch)" = 1 ]' || { echo "node not idle"; sinfo; exit 1; }
u=$(($$ % 90000 + 10000)) # this run's sleeps: another suite's are not ours
cd "$tmp"
id=$(sbatch --parsable -A ops -t 10 --wrap "echo start \${SLURM_RESTART_COUNT-unset} >> $tmp/attempts; exec sleep 4791$u")
attempts() { [ "$(wc -l <"$tmp/attempts" 2>/dev/null || echo 0)" = "$1" ]; }
procs() { [ "$(pgrep -fc "sleep 4791$u")" = "$1" ]; }
wait_for 30 attempts 1 && wait_for 30 procs 1 || fail "job $id did not start"
scontrol requeue "$id" || fail "scontrol requeue $id"
wait_for 30 attempts 2 || fail "job $id did not run again after the requeue"
wait_for 30 procs 1 || fail "after the requeue $(pgrep -fc "sleep 4791$u") processes of job $id, want 1"
restarts() { scontrol show job "$id" | grep -q "Restarts=$1 "; }
restarts 1 || fail "job $id: $(scontrol show job "$id" | grep -o 'Restarts=[0-9]*')"
scontrol requeuehold "$id" || fail "scontrol requeuehold $id"
wait_for 30 procs 0 || fail "job $id's processes outlived the requeuehold"
held() { squeue -h -j "$id" -o %r | grep -q JobHeld; }
wait_for 30 held || fail "job $id not held: $(squeue -h -j "$id" -o '%T %r')"
attempts 2 || fail "a requeueheld job ran again"
if out=$(scontrol requeue "$id" 2>&1); then fail "scontrol requeue of a pending job succeeded: $out"; fi
[ "$out" = "Job is pending execution for job $id" ] || fail "scontrol requeue of a pending job: $out"
scancel "$id"
cancelled() { [ "$(squeue -h -t all -j "$id" -o %T)" = CANCELLED ]; }
wait_for 30 cancelled || fail "job $id not cancelled: $(squeue -h -t all -j "$id" -o %T)"
out=$(scontrol requeue "$id" 2>&1) || fail "scontrol requeue of cancelled job $id: $out"
wait_for 30 attempts 3 && wait_for 30 procs 1 || fail "job $id did not run again after its requeue once cancelled"
[ "$(paste -sd' ' "$tmp/attempts")" = "start unset start 1 start 3" ] ||
  fail "SLURM_RESTART_COUNT of job $id's runs: $(paste -sd' ' "$tmp/attempts")"
scancel "$id"
wait_for 30 procs 0 || fail "job $id's processes outlived its scancel"
[ "$fails" = 0 ] && echo "ok   requeue: job $id killed and run again (Restarts=1); requeuehold: killed and held; a pending job refused as Slurm; cancelled, requeued and run again; SLURM_RESTART_COUNT unset, 1, 3"
exit "$fails"
