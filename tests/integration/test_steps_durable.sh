#!/usr/bin/env bash
# Job steps are durable and in accounting (issue 17), on a real `phalanx dev`
# cluster of 2 nodes. A 2-node batch job runs three srun steps:
#   0  both tasks hold 64 MiB and spin for a moment, then exit 0
#   1  both tasks wait for a file the test creates after it killed the
#      server (kill -9) and `phalanx dev` started a new one: srun waits for
#      the server and still returns the step's status
#   2  task 1 exits 3
# Then sacct lists N.batch, N.0, N.1, N.2 with their own states, exit codes,
# node counts, MaxRSS and TotalCPU, as Slurm 22.05's sacct does. A second
# job mixes steps srun runs itself on the batch node (-N 1) with one the
# agents run: one sequence of ids, all in sacct with what they used.
source "$(dirname "$0")/lib_dev.sh"
mkdir -p "$tmp/work"
start_dev "sbatch squeue sacct srun" --nodes 2 --cpus 8 --mem-mib 16384
work=$tmp/work
cd "$work"
cat >"$work/hold.py" <<'PY'
import time
block = bytearray(64 << 20)
for i in range(0, len(block), 4096):
    block[i] = 1  # touch every page: resident
t = time.process_time()
while time.process_time() - t < 0.3:
    pass
PY
cat >"$work/job.sh" <<SH
#!/bin/bash
#SBATCH -N 2 -t 5
srun python3 $work/hold.py
echo "rc0 \$?"
srun bash -c 'touch $work/waiting.\$SLURM_PROCID; while [ ! -e $work/release ]; do sleep 0.1; done; echo done \$SLURM_PROCID'
echo "rc1 \$?"
srun bash -c '[ \$SLURM_PROCID = 1 ] && exit 3; exit 0'
echo "rc2 \$?"
SH
out=$(sbatch -A ops -o "$work/job.out" "$work/job.sh" 2>&1)
id=${out#Submitted batch job }
[ "$out" = "Submitted batch job $id" ] || { echo "sbatch: $out"; exit 1; }
both_waiting() { [ -e "$work/waiting.0" ] && [ -e "$work/waiting.1" ]; }
wait_for 60 both_waiting || { fail "step 1 did not start on both nodes: $(cat job.out 2>/dev/null)"; exit 1; }

pid_file=$tmp/state/server.pid
old=$(cat "$pid_file")
kill -9 "$old"
restarted() { [ "$(cat "$pid_file" 2>/dev/null)" != "$old" ] && squeue -h -j "$id" >/dev/null 2>&1; }
wait_for 60 restarted || { fail "the server did not come back"; exit 1; }
steps=$(curl -s --unix-socket "${PHALANX_SERVER#unix:}" "http://px/v1/jobs/$id/steps")
[ "$(jq -r '[.steps[] | .state] | join(",")' <<<"$steps")" = "COMPLETED,RUNNING" ] ||
  fail "the restarted server does not know the job's steps: $steps"
touch "$work/release"
wait_for 90 sh -c "sacct -X -n -P -o State -j $id | grep -qx COMPLETED" ||
  { fail "job $id did not complete: $(sacct -X -n -P -o State -j "$id") $(cat job.out)"; exit 1; }
grep -qx 'rc0 0' job.out || fail "step 0 status: $(cat job.out)"
grep -qx 'rc1 0' job.out || fail "step 1 (across the server restart) status: $(cat job.out)"
grep -qx 'done 0' job.out && grep -qx 'done 1' job.out || fail "step 1 output: $(cat job.out)"
grep -qx 'rc2 3' job.out || fail "step 2 status: $(cat job.out)"
echo "ok   srun rode out a kill -9 of the server; the restarted server knew the running step"

rows=$(sacct -n -P -o JobID,JobName,State,ExitCode,NNodes -j "$id")
want="$id|job.sh|COMPLETED|0:0|2
$id.batch|batch|COMPLETED|0:0|1
$id.0|python3|COMPLETED|0:0|2
$id.1|bash|COMPLETED|0:0|2
$id.2|bash|FAILED|3:0|2"
[ "$rows" = "$want" ] || fail "sacct steps:
$rows
want
$want"
read -r rss cpu < <(sacct -n -P -o JobID,MaxRSS,TotalCPU -j "$id" | awk -F'|' -v s="$id.0" '$1 "" == s "" { print $2, $3 }')
kib=${rss%K}
[[ $kib =~ ^[0-9]+$ ]] && [ "$kib" -ge 65536 ] || fail "step 0 MaxRSS '$rss', want at least 64 MiB"
# MM:SS.mmm: the two tasks' 0.3 s of spinning each
[[ $cpu =~ ^[0-9]{2}:[0-9]{2}\.[0-9]{3}$ ]] && awk -F: -v c="$cpu" 'BEGIN { split(c, p, ":"); exit !(p[1] * 60 + p[2] >= 0.6) }' ||
  fail "step 0 TotalCPU '$cpu', want MM:SS.mmm of at least 0.6 s"
echo "ok   sacct lists the batch step and steps 0-2 with their states, exit codes, MaxRSS ($rss) and TotalCPU ($cpu)"

cat >"$work/local.sh" <<SH
#!/bin/bash
#SBATCH -N 2 -t 5
srun -N 1 -n 2 python3 $work/hold.py
echo "rl0 \$?"
srun bash -c 'echo agents \$SLURM_STEP_ID'
srun -N 1 -n 1 bash -c 'echo local \$SLURM_STEP_ID; exit 4'
echo "rl2 \$?"
SH
out=$(sbatch -A ops -o "$work/local.out" "$work/local.sh" 2>&1)
lid=${out#Submitted batch job }
wait_for 90 sh -c "sacct -X -n -P -o State -j $lid | grep -qx COMPLETED" ||
  { fail "job $lid did not complete: $(sacct -X -n -P -o State -j "$lid") $(cat local.out)"; exit 1; }
got=$(grep -v -e '^agents' -e '^srun: ' local.out; grep '^agents' local.out | sort -u)
grep -qx 'srun: error: dev1: task 0: Exited with exit code 4' local.out || fail "srun's error line: $(cat local.out)"
[ "$got" = "rl0 0
local 2
rl2 4
agents 1" ] || fail "srun's own steps and the agents' share one id sequence: $(cat local.out)"
rows=$(sacct -n -P -o JobID,JobName,State,ExitCode,NNodes -j "$lid")
want="$lid|local.sh|COMPLETED|0:0|2
$lid.batch|batch|COMPLETED|0:0|1
$lid.0|python3|COMPLETED|0:0|1
$lid.1|bash|COMPLETED|0:0|2
$lid.2|bash|FAILED|4:0|1"
[ "$rows" = "$want" ] || fail "sacct with srun's own steps:
$rows
want
$want"
rss=$(sacct -n -P -o JobID,MaxRSS -j "$lid" | awk -F'|' -v s="$lid.0" '$1 "" == s "" { print $2 }')
kib=${rss%K}
[[ $kib =~ ^[0-9]+$ ]] && [ "$kib" -ge 65536 ] || fail "srun's own step 0 MaxRSS '$rss', want at least 64 MiB"
api() { curl -s --unix-socket "${PHALANX_SERVER#unix:}" -H 'Content-Type: application/json' -d "$2" "http://px/v1/jobs/$1/end"; }
msg=$(api "$lid/steps/0" '{"exit_code":300}' | jq -r .error.message)
[ "$msg" = "end.exit_code: 300 is not 0-255" ] || fail "a bad end: $msg"
msg=$(api "$lid/steps/1" '{"exit_code":0}' | jq -r .error.message)
[ "$msg" = "step $lid.1 is run by the agents: they report its end" ] || fail "an agents' step's end from a client: $msg"
[ "$(sacct -n -P -o JobID,State -j "$lid" | grep "^$lid\.0|")" = "$lid.0|COMPLETED" ] || fail "a refused end changed step $lid.0"
echo "ok   srun's own steps (-N 1) recorded: ids in one sequence with the agents', sacct rows with node counts, exit codes and MaxRSS ($rss); bad ends refused by field"
[ "$fails" = 0 ]
