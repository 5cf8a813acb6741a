#!/usr/bin/env bash
# scontrol requeue on a real `phalanx dev` cluster: the running job's
# processes are killed by its agent, the job goes back to the queue and
# runs again (a second attempt, Restarts=1), with only that attempt's
# processes alive; scontrol requeuehold leaves it pending, held, with none.
# Server rules and refusals: test_server_requeue.sh.
source "$(dirname "$0")/lib_dev.sh"
start_dev "sbatch scontrol scancel sinfo squeue" --nodes 1 --cpus 8
wait_for 60 sh -c '[ "$(sinfo -h -t idle -o %D -p batch)" = 1 ]' || { echo "node not idle"; sinfo; exit 1; }
u=$(($$ % 90000 + 10000)) # this run's sleeps: another suite's are not ours
cd "$tmp"
id=$(sbatch --parsable -A ops -t 10 --wrap "echo start >> $tmp/attempts; exec sleep 4791$u")
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
[ "$fails" = 0 ] && echo "ok   requeue: job $id killed and run again (Restarts=1); requeuehold: killed and held; a pending job refused as Slurm"
exit "$fails"
