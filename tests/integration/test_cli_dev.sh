#!/usr/bin/env bash
# End to end on a real `phalanx dev` cluster (server + 4 agents, emulated
# GPUs), through the Slurm names:
#  1. the issue's acceptance line: `sbatch --wrap hostname && squeue && sacct`;
#  2. every corpus script (tests/data/scripts/) with its #SBATCH header kept
#     and its body replaced by a probe that prints the job's environment:
#     accepted (or refused where Phalanx knowingly refuses), scheduled as
#     asked (nodes, GPUs per node, name, array task), its output file where
#     Slurm puts it (-o pattern or slurm-%j.out / slurm-%A_%a.out), and its
#     state in sacct;
#  3. srun outside an allocation (allocate, run, stream, exit status);
#  4. salloc, and srun in its shell.
# The cluster runs from the plain build (build/phalanx, which `make test`
# builds first) when there is one: the sanitizer build's agents are too slow
# to register in time, and this test is about the CLI, which runs from
# $PHALANX (under the sanitizers in `make test`). PX_DEV_PHALANX overrides.
# The command line adds `-A ops -t 10 -D WORK` to every script: the dev
# cluster's accounts and 1-day MaxTime differ from the corpus's cluster, and
# the command line winning over #SBATCH lines is Slurm's rule under test too.
source "$(dirname "$0")/lib_dev.sh"
mkdir -p "$tmp/work/logs" "$tmp/work/sweep"
start_dev "sbatch squeue scancel sinfo sacct scontrol srun salloc" --nodes 4 --cpus 128 --mem-mib 1048576
wait_for 30 sh -c '[ "$(sinfo -h -t idle -o %D -p batch)" = 4 ]' || { echo "nodes not idle"; sinfo; exit 1; }
work=$tmp/work
cd "$work"

# 1. The acceptance line.
out=$(sbatch -A ops --wrap 'hostname' && squeue && sacct)
first=$(printf '%s\n' "$out" | head -n1)
id=${first#Submitted batch job }
[ "$first" = "Submitted batch job $id" ] || fail "acceptance: first line '$first'"
printf '%s\n' "$out" | grep -q '^             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)$' ||
  fail "acceptance: no squeue header"
printf '%s\n' "$out" | grep -q '^JobID           JobName  Partition    Account  AllocCPUS      State ExitCode $' ||
  fail "acceptance: no sacct header"
wait_for 30 sh -c "sacct -X -n -P -o State -j $id | grep -qx COMPLETED" || fail "acceptance: job $id did not complete"
[ "$(cat "slurm-$id.out" 2>/dev/null)" = "$(hostname)" ] || fail "acceptance: slurm-$id.out is not the hostname"
# sbatch names no user: the server takes the submitter from the socket's credentials.
[ "$(sacct -X -n -P -o User -j "$id")" = "$(id -un)" ] || fail "acceptance: job $id is not $(id -un)'s"
echo "ok   sbatch --wrap hostname && squeue && sacct (job $id, ${SECONDS}s)"

# 2. The corpus. expect KEY SCRIPT: a value from the script's "# expect:" lines.
expect() {
  grep -o "# expect:.*" "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n1
}
# Every script at once, as a user's burst (this once stalled the queue: an
# array task started after later jobs had their records was refused a
# record by the server, so its allocation was never released; fixed in
# src/server/jobs.c, and 03_array_sweep's throttled tasks below check it).
declare -A job_of refused
scripts=$(ls "$PX_SRC"/tests/data/scripts/*.sh)
for script in $scripts; do
  base=$(basename "$script" .sh)
  # The header up to the first command, then the probe.
  awk '!/^[[:space:]]*(#|$)/ { exit } { print }' "$script" >"$work/$base.sh"
  printf 'env | grep -E "^(SLURM_|CUDA_VISIBLE_DEVICES=)" | sort\necho probe ok\n' >>"$work/$base.sh"
  out=$(sbatch -A ops -t 10 -D "$work" "$work/$base.sh" 2>&1)
  case $base in
    06_dep_train) # afterok on a job that never existed: refused (Slurm too)
      [[ $out == *"Batch job submission failed: Job dependency problem"* ]] || fail "$base: $out"
      refused[$base]=1; continue ;;
    16_constraint) # no node has feature "ib": refused at once (Slurm would pend forever)
      [[ $out == *"Batch job submission failed"* ]] || fail "$base: $out"
      refused[$base]=1; continue ;;
  esac
  id=${out#Submitted batch job }
  if [ "$out" != "Submitted batch job $id" ]; then fail "$base: $out"; continue; fi
  job_of[$base]=$id
done
echo "ok   submitted ${#job_of[@]} corpus scripts, ${#refused[@]} refused as expected (${SECONDS}s)"

# Held and --begin jobs stay pending with Slurm's reasons (the server
# refreshes reasons after its cycle: wait for it, with a deadline).
reason_is() { [ "$(squeue -h -j "$1" -o %r)" = "$2" ]; }
wait_for 15 reason_is "${job_of[18_held]}" JobHeldUser || fail "18_held: reason $(squeue -h -j "${job_of[18_held]}" -o %r)"
wait_for 15 reason_is "${job_of[17_begin_later]}" BeginTime || fail "17_begin_later: reason $(squeue -h -j "${job_of[17_begin_later]}" -o %r)"
scancel "${job_of[18_held]}" "${job_of[17_begin_later]}"
indexes() { # "0-15%4" or "1,3,5" -> one index per line
  local spec=${1%\%*} part
  for part in ${spec//,/ }; do
    if [[ $part == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
  done
}
array_done() { # every task of array job $1 ($2: spec, $3: output pattern) wrote its file
  local t
  for t in $(indexes "$2"); do grep -q '^probe ok$' "$(printf "$3" "$1" "$t")" 2>/dev/null || return 1; done
}
wait_for 60 array_done "${job_of[04_array_list]}" "1,3,5,7" "slurm-%s_%s.out" || fail "04_array_list: tasks missing"
wait_for 90 array_done "${job_of[03_array_sweep]}" "0-15%4" "sweep/%s_%s.out" || {
  fail "03_array_sweep: $(ls sweep | grep -c '\.out$') of 16 tasks ran"
  squeue -t all -h -o '%.10i %T %R' | grep -v -e COMPLETED -e CANCELLED
  sinfo -h -o '%N %t %C'
}
# An array's own record (squeue's J_[...] line) is gone once its last task
# has started, as in Slurm; its tasks are the J_N lines.
[ -z "$(squeue -h -t PD -j "${job_of[04_array_list]}" -o %i)" ] ||
  fail "array record: job ${job_of[04_array_list]} still PENDING after every task ran: $(squeue -h -t PD -j "${job_of[04_array_list]}" -o '%i %T %r')"
# Every job ends (17 and 18 wait on purpose and are cancelled above).
left() { squeue -h -o %i; }
all_done() { [ -z "$(left)" ]; }
wait_for 90 all_done || fail "jobs still queued: $(left | paste -sd' ')"

# The usage report (sreport's job): a table with account ops and as many
# jobs as sacct counts started for it (jobs cancelled while pending used
# nothing); a bad --by is refused before asking.
usage_out=$("$PHALANX" usage --since 1d)
ops_jobs=$(sacct -a -X -n -P -o Account,Start -S now-1days | grep -c '^ops|[0-9]')
[[ $(head -1 <<<"$usage_out") == "ACCOUNT "*"GPU-HOURS"*"JOBS"*"FAIRSHARE" ]] || fail "usage header: $usage_out"
[ "$(awk '$1=="ops" {print $4}' <<<"$usage_out")" = "$ops_jobs" ] || fail "usage: ops jobs vs sacct's $ops_jobs: $usage_out"
got=$("$PHALANX" usage --by colour 2>&1); rc=$?
[[ $rc == 2 && $got == *"--by colour: must be account, user, partition or service"* ]] || fail "usage --by colour: rc=$rc $got"
echo "ok   usage report matches sacct ($ops_jobs jobs of ops)"

states=$(sacct -a -X -n -P -o JobID,State)
for base in "${!job_of[@]}"; do
  id=${job_of[$base]} script="$PX_SRC/tests/data/scripts/$base.sh"
  want_state=COMPLETED
  [[ $base == 17_* || $base == 18_* ]] && want_state="CANCELLED by root"
  array=$(expect array "$script")
  if [ -n "$array" ]; then # every task: its own output file with its own index
    for task in $(indexes "$array"); do
      f=slurm-${id}_$task.out
      [ "$base" = 03_array_sweep ] && f=sweep/${id}_$task.out
      grep -q "^SLURM_ARRAY_TASK_ID=$task$" "$f" 2>/dev/null || fail "$base: $f lacks SLURM_ARRAY_TASK_ID=$task"
    done
    continue
  fi
  got_state=$(printf '%s\n' "$states" | sed -n "s/^$id|//p")
  [ "$got_state" = "$want_state" ] || { fail "$base: job $id is '$got_state', want '$want_state'"; continue; }
  [ "$want_state" = COMPLETED ] || continue
  name=$(grep -o '# expect:.*' "$script" | grep -o 'name=.*' | sed -E 's/^name=//; s/ [a-z_]+=.*//' | head -n1)
  [ -n "$name" ] || name=$base.sh
  out=slurm-$id.out
  pattern=$(sed -n -E 's/^#SBATCH (-o |--output=)//p' "$script" | head -n1)
  [ -n "$pattern" ] && out=$(printf '%s' "$pattern" | sed "s/%x/$name/g; s/%j/$id/g")
  grep -q '^probe ok$' "$out" 2>/dev/null || { fail "$base: no output in $out"; continue; }
  nodes=$(expect nodes_min "$script"); nodes=${nodes:-1}
  got_nodes=$(sed -n 's/^SLURM_JOB_NUM_NODES=//p' "$out")
  [ "$got_nodes" -ge "$nodes" ] 2>/dev/null || fail "$base: $got_nodes nodes, want $nodes"
  [ "$(sed -n 's/^SLURM_JOB_NAME=//p' "$out")" = "$name" ] || fail "$base: SLURM_JOB_NAME is not '$name'"
  gpn=$(expect gpus_per_node "$script")
  g=$(expect gpus "$script"); [ -z "$gpn" ] && [ -n "$g" ] && gpn=$((g / nodes))
  if [ -n "$gpn" ] && [ "$gpn" != 0 ]; then
    cuda=$(sed -n 's/^CUDA_VISIBLE_DEVICES=//p' "$out")
    [ "$(printf '%s' "$cuda" | tr ',' '\n' | grep -c .)" = "$gpn" ] || fail "$base: CUDA_VISIBLE_DEVICES=$cuda, want $gpn GPUs"
  fi
done
echo "ok   corpus checked: states, output files, nodes, names, GPUs"

# 3. srun outside an allocation: allocates, runs the step in it, streams the
# tasks' output here, returns the highest task exit status, leaves no file.
mkdir -p "$work/srun" && cd "$work/srun"
got=$(srun -A ops -t 5 -n 2 --gpus-per-task=1 bash -c 'echo "task $SLURM_PROCID gpu $CUDA_VISIBLE_DEVICES"' | sort)
[ "$got" = "task 0 gpu 0
task 1 gpu 1" ] || fail "srun -n 2: '$got'"
got=$(srun -A ops -t 5 bash -c 'echo out; echo err >&2; exit 3' 2>"$tmp/srun.err")
rc=$?
[ "$got $rc" = "out 3" ] || fail "srun exit status: '$got' rc=$rc"
grep -qx err "$tmp/srun.err" || fail "srun stderr: $(cat "$tmp/srun.err")"
got=$(srun -A ops -t 5 -N 2 bash -c 'echo $SLURM_NODEID' | sort | paste -sd,)
[ "$got" = "0,1" ] || fail "srun -N 2 (a task on each node): '$got'"
[ -z "$(ls -A)" ] || fail "srun left files: $(ls -A | paste -sd' ')"
echo "ok   srun outside an allocation"

# 4. salloc: the command runs here with the allocation's variables; srun in
# it runs on the allocation's node with its GPUs (through the server's step
# API, with the shell's environment of that moment); the command's status is
# salloc's; the allocation then ends (COMPLETED) and no file is left.
got=$(salloc -A ops -t 5 --gpus=2 bash -c 'echo "job $SLURM_JOB_ID nodes $SLURM_NNODES";
  srun bash -c "echo step \$SLURM_JOB_ID gpus \$CUDA_VISIBLE_DEVICES"; srun false; echo "srun rc $?";
  export PX_LATE=1; srun bash -c "echo late \$PX_LATE"; exit 7' 2>"$tmp/salloc.err")
rc=$?
alloc=$(sed -n 's/^salloc: Granted job allocation //p' "$tmp/salloc.err")
[ "$got rc=$rc" = "job $alloc nodes 1
step $alloc gpus 0,1
srun rc 1
late 1 rc=7" ] || fail "salloc: '$got' rc=$rc, stderr: $(cat "$tmp/salloc.err")"
grep -qx "salloc: Relinquishing job allocation $alloc" "$tmp/salloc.err" || fail "salloc did not relinquish"
wait_for 10 sh -c "squeue -h -t all -j $alloc -o %T | grep -qx COMPLETED" || fail "salloc's job $alloc: $(squeue -h -t all -j "$alloc" -o %T)"
[ -z "$(ls -A)" ] || fail "salloc left files: $(ls -A | paste -sd' ')"
cd "$work"
echo "ok   salloc and srun in it"

# 5. scontrol update PartitionName=urgent State=DOWN: sinfo says "down", a
# job there waits (PartitionDown), State=UP lets it run; DRAIN is refused
# with what to use instead.
scontrol update PartitionName=urgent State=DOWN || fail "scontrol update State=DOWN failed"
[ "$(sinfo -h -p urgent -o %a)" = down ] || fail "sinfo after State=DOWN: $(sinfo -p urgent)"
pd=$(sbatch --parsable -A ops -p urgent -t 5 --wrap true)
wait_for 10 sh -c "squeue -h -j $pd -o %r | grep -qx PartitionDown" || fail "job $pd in a down partition: $(squeue -j "$pd")"
err=$(scontrol update PartitionName=urgent State=DRAIN 2>&1) && fail "State=DRAIN accepted"
[[ $err == *"UP and DOWN are"* ]] || fail "State=DRAIN message: $err"
scontrol update PartitionName=urgent State=UP || fail "scontrol update State=UP failed"
wait_for 30 sh -c "sacct -X -n -P -o State -j $pd | grep -qx COMPLETED" || fail "job $pd after State=UP: $(squeue -j "$pd")"
[ "$(sinfo -h -p urgent -o %a)" = up ] || fail "sinfo after State=UP: $(sinfo -p urgent)"
echo "ok   scontrol update PartitionName State=DOWN/UP"
[ $fails -eq 0 ] && echo "all dev-cluster checks passed"
exit $((fails > 0))
