#!/usr/bin/env bash
# Multi-node job steps end to end on a real `phalanx dev` cluster (server and
# 3 agents with emulated GPUs): a 2-node batch job whose script runs
#   srun                      one task on each node (the job's layout)
#   srun -N 2 -n 4 -l         two tasks per node, output labelled with the rank
#   srun ... exit 3 on rank 1 srun's status is the highest task status
# and srun -N 2 outside an allocation (allocate, run the step, stream). Each
# task's environment (ranks, node, step id, GPUs, MASTER_ADDR) is checked,
# and the tasks really ran on both nodes (their SLURMD_NODENAME, and the
# step's output files are gone afterwards). The server's TCP port is any
# free one (a fixed one in the ephemeral range can be taken by a client).
source "$(dirname "$0")/lib_dev.sh"
mkdir -p "$tmp/work"
start_dev "sbatch squeue sacct srun" --nodes 3 --gpus 4 --cpus 16 --mem-mib 65536
work=$tmp/work
cd "$work"

cat >"$work/job.sh" <<'SH'
#!/bin/bash
#SBATCH -N 2 --gpus-per-node=2 -t 5
probe='echo "$SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID $SLURMD_NODENAME $SLURM_STEP_ID $SLURM_STEP_NUM_TASKS $SLURM_STEP_NODELIST $RANK $LOCAL_RANK $WORLD_SIZE $MASTER_ADDR $CUDA_VISIBLE_DEVICES $SLURM_JOB_NODELIST $MY_VAR"'
export MY_VAR=exported
srun bash -c "$probe" | sort > step0.txt
echo "rc0 $?"
srun -N 2 -n 4 -l bash -c "$probe; echo err \$SLURM_PROCID >&2" > step1.txt 2> step1.err
echo "rc1 $?"
srun bash -c 'echo rank $SLURM_PROCID; [ $SLURM_PROCID = 1 ] && exit 3; exit 0' > step2.txt 2> step2.err
echo "rc2 $?"
srun -N 2 -n 4 --gpus-per-task=1 -l bash -c 'echo $SLURM_LOCALID $CUDA_VISIBLE_DEVICES $GPU_DEVICE_ORDINAL' > step3.txt
echo "rc3 $?"
srun -N 2 -n 6 --gpus-per-task=1 true 2> step4.err
echo "rc4 $?"
SH
out=$(sbatch -A ops -o "$work/job.out" "$work/job.sh" 2>&1)
id=${out#Submitted batch job }
[ "$out" = "Submitted batch job $id" ] || { echo "sbatch: $out"; exit 1; }
wait_for 90 sh -c "sacct -X -n -P -o State -j $id | grep -qx COMPLETED" ||
  { fail "job $id did not complete: $(sacct -X -n -P -o State -j "$id") $(cat job.out)"; }
nodes=$(squeue -h -t all -j "$id" -o %N)
grep -qx 'rc0 0' job.out || fail "step 0 status: $(cat job.out)"
grep -qx 'rc1 0' job.out || fail "step 1 status: $(cat job.out)"
grep -qx 'rc2 3' job.out || fail "step 2: srun's status is not the highest task's: $(cat job.out)"

# step 0: one task per node, ranks 0 and 1 on the job's two nodes
read -r n0 n1 < <(awk '{print $4}' step0.txt | paste -sd' ')
[ "$(wc -l < step0.txt)" = 2 ] || fail "step 0: want 2 tasks: $(cat step0.txt)"
[ -n "$n0" ] && [ -n "$n1" ] && [ "$n0" != "$n1" ] || fail "step 0: tasks not on two nodes: $(cat step0.txt)"
set -- $(sed -n 1p step0.txt)
[ "$1 $2 $3 $5 $6 $8 $9 ${10} ${12} ${14}" = "0 0 0 0 2 0 0 2 0,1 exported" ] || fail "step 0 rank 0: $(sed -n 1p step0.txt)"
set -- $(sed -n 2p step0.txt)
[ "$1 $2 $3 $5 $6 $8 $9 ${10} ${12} ${14}" = "1 0 1 0 2 1 0 2 0,1 exported" ] || fail "step 0 rank 1: $(sed -n 2p step0.txt)"
[ "$7" = "$nodes" ] && [ "${13}" = "$nodes" ] || fail "step 0: node lists '$7' '${13}' want $nodes"
m1=$(awk 'NR==1 {print $11}' step0.txt); m2=$(awk 'NR==2 {print $11}' step0.txt)
[ -n "$m1" ] && [ "$m1" = "$m2" ] || fail "step 0: MASTER_ADDR differs: '$m1' '$m2'"

# step 1: -n 4 over 2 nodes, labelled; ranks 0-1 on the first node, 2-3 on the second
for r in 0 1 2 3; do
  line=$(grep "^$r: " step1.txt)
  set -- ${line#*: }
  want_node=$([ $r -lt 2 ] && echo "$n0" || echo "$n1")
  [ "$1 $2 $3 $4 $5 $6 $8 $9 ${10}" = "$r $((r % 2)) $((r / 2)) $want_node 1 4 $r $((r % 2)) 4" ] ||
    fail "step 1 rank $r: '$line'"
  grep -qx "$r: err $r" step1.err || fail "step 1 rank $r stderr: $(cat step1.err)"
done
[ "$(wc -l < step1.txt)" = 4 ] || fail "step 1: want 4 lines: $(cat step1.txt)"
grep -q "error: .*: task 1: Exited with exit code 3" step2.err || fail "step 2 stderr: $(cat step2.err)"
[ "$(sort step2.txt | paste -sd,)" = "rank 0,rank 1" ] || fail "step 2 output: $(cat step2.txt)"
# step 3: --gpus-per-task=1, two tasks per node: each sees its own one of the node's two GPUs
for r in 0 1 2 3; do
  grep -qx "$r: $((r % 2)) $((r % 2)) $((r % 2))" step3.txt || fail "step 3 rank $r: $(cat step3.txt)"
done
grep -qx 'rc3 0' job.out || fail "step 3 status: $(cat job.out)"
# step 4: three tasks of one GPU each on a node where the job holds two: refused, saying why
grep -qx 'rc4 1' job.out || fail "step 4 (too many GPUs) should fail: $(cat job.out)"
grep -q "gpus_per_task: 3 tasks x 1 GPUs on .* exceed the job's 2 GPUs there" step4.err || fail "step 4 message: $(cat step4.err)"
[ -z "$(ls -A | grep phalanx-srun)" ] || fail "srun left its output directories: $(ls -A)"
echo "ok   srun in a 2-node batch job: tasks on both nodes, ranks, step ids, output, exit status"

# SIGTERM to srun cancels its step on both nodes: the tasks end, srun ends
# with their status, no process is left, and the job goes on (the tasks'
# sleep carries this run's number: another suite's same test is not ours)
cat >"$work/cancel.sh" <<SH
#!/bin/bash
#SBATCH -N 2 -t 5
srun bash -c 'echo up > up.\$SLURM_PROCID; exec sleep 4793.$RUN_NO' &
pid=\$!
for i in \$(seq 150); do [ -e up.0 ] && [ -e up.1 ] && break; sleep 0.2; done
kill -TERM \$pid
wait \$pid
echo "srun rc \$?"
SH
out=$(sbatch -A ops -o "$work/cancel.out" "$work/cancel.sh" 2>&1)
id=${out#Submitted batch job }
wait_for 90 sh -c "sacct -X -n -P -o State -j $id | grep -qx COMPLETED" ||
  fail "job $id (step cancel) did not complete: $(sacct -X -n -P -o State -j "$id") $(cat cancel.out)"
grep -q 'cancelling step' cancel.out || fail "srun did not cancel its step: $(cat cancel.out)"
grep -qx 'srun rc 143' cancel.out || fail "cancelled step's status: $(cat cancel.out)"
[ -z "$(pgrep -f "sleep 4793\\.$RUN_NO")" ] || fail "a cancelled step's task is still running"
echo "ok   SIGTERM to srun cancels the step on both nodes"

# srun -N 2 outside an allocation: allocates, runs the step on both nodes, streams
mkdir -p "$work/out" && cd "$work/out"
got=$(srun -A ops -t 5 -N 2 bash -c 'echo "$SLURM_PROCID $SLURM_NNODES"' | sort | paste -sd,)
[ "$got" = "0 2,1 2" ] || fail "srun -N 2 outside an allocation: '$got'"
[ -z "$(ls -A)" ] || fail "srun left files: $(ls -A | paste -sd' ')"
echo "ok   srun -N 2 outside an allocation"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; tail -n 30 "$tmp/dev.log"; exit 1; }
echo "PASS"
