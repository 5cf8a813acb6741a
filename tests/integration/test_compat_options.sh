#!/usr/bin/env bash
# The Slurm compatibility corpus of job options (tests/compat/, issue 17) on a
# real `phalanx dev` cluster of 4 nodes dev[1-4]: every script is submitted
# with sbatch (its #SBATCH lines are the options under test), runs, and its
# output holds the KEY=VALUE lines its "# expect:" lines name, which are what
# Slurm 22.05 gave for the same script on the reference harness (recorded in
# its "# slurm:" lines). Then tests/compat/errors.txt: each refused command
# line gives Slurm's first stderr line and exit status.
source "$(dirname "$0")/lib_dev.sh"
corpus=$PX_SRC/tests/compat
work=$tmp/work
mkdir -p "$work"
start_dev "sbatch squeue scancel sinfo sacct scontrol srun" --nodes 4 --cpus 128 --mem-mib 1048576
wait_for 30 sh -c '[ "$(sinfo -h -t idle -o %D -p batch)" = 4 ]' || { echo "nodes not idle"; sinfo; exit 1; }
cd "$work"
printf 'dev1\ndev4\n' >nodes.txt
printf 'dev1, dev3\ndev4\n' >flaky.txt
printf '#!/bin/sh\n#SBATCH --mem-per-cpu=1G\ntrue\n' >memcpu.sh
# The reservation 14_reservation.sh runs in: dev3, for the dev cluster's
# account, made just before it (an account's reservation is blocked in
# backfill's plan for the account's other jobs too, so the earlier scripts
# must not meet it).
# Made as a Slurm site makes it; its mistakes are refused by name first.
make_reservation() {
  local out
  out=$(scontrol create reservation ReservationName=bad Nodes=dev3 Duration=60 Users=alice 2>&1)
  [[ $out == *"Users=alice: reservations are made for an account"* ]] || fail "reservation Users=: $out"
  out=$(scontrol create reservation ReservationName=bad Nodes=dev3 Duration=forever 2>&1)
  [[ $out == *"Duration=forever:"* ]] || fail "reservation Duration=: $out"
  out=$(scontrol create reservation ReservationName=compat Nodes=dev3 Duration=60 Accounts=ops 2>&1)
  [ "$out" = "Reservation created: compat" ] || fail "reservation: $out"
  out=$("$PHALANX" reserve --name compat --nodes dev3 --duration 60 --account ops 2>&1)
  [[ $out == *"compat"* ]] && [[ $out != "Reservation created"* ]] || fail "reservation name taken: $out"
}

# --time-min in backfill (first, before the corpus's reservation blocks dev3): A holds dev1 (10 min), B needs all four nodes and
# is reserved from A's end; C (60 min, TimeMin 5) on dev2 would delay B, so
# it starts with its limit cut to end by B's start; D, the same without
# --time-min, waits. scontrol shows C's cut limit, as Slurm's.
running() { [ "$(squeue -h -j "$1" -o %t)" = R ]; }
a=$(sbatch --parsable -A ops -w dev1 --exclusive -t 10 --wrap 'sleep 600')
wait_for 30 running "$a" || fail "time-min: A did not start"
b=$(sbatch --parsable -A ops -N 4 --exclusive -t 10 --wrap true)
c=$(sbatch --parsable -A ops -w dev2 --exclusive -t 60 --time-min=5 --wrap 'sleep 600')
d=$(sbatch --parsable -A ops -w dev3 --exclusive -t 60 --wrap 'sleep 600')
wait_for 30 running "$c" || fail "time-min: C did not start: $(squeue)"
limit=$(scontrol show job "$c" | grep -o 'TimeLimit=[^ ]*')
limit=${limit#TimeLimit=}
secs=$(awk -F: '{print $1 * 3600 + $2 * 60 + $3}' <<<"$limit")
[ "$secs" -ge 300 ] && [ "$secs" -le 1500 ] || fail "time-min: C runs under $limit, want 5 to 25 minutes"
scontrol show job "$c" | grep -q 'TimeMin=00:05:00' || fail "time-min: C's TimeMin"
[ "$(squeue -h -j "$d" -o %t)" = PD ] || fail "time-min: D without --time-min started"
scancel "$a" "$b" "$c" "$d"
echo "ok   --time-min: C started with TimeLimit=$limit while D waits"

expect_lines() { grep -o '^# expect: .*' "$1" | sed 's/^# expect: //'; }
runs_of() { local r; r=$(sed -n 's/^# runs: //p' "$1"); echo "${r:-1}"; }
out_file() { # the -o of the script, else slurm-ID.out
  local o
  o=$(sed -n 's/^#SBATCH -o //p' "$1")
  echo "${o:-slurm-$2.out}"
}
finished() { [ "$(sacct -X -n -P -o State -j "$1")" = COMPLETED ]; }

declare -A job_of
for script in "$corpus"/[0-9]*.sh; do
  base=$(basename "$script" .sh)
  [ "$base" = 14_reservation ] && make_reservation
  for _ in $(seq "$(runs_of "$script")"); do
    out=$(sbatch -A ops -t 20 "$script" 2>&1)
    id=${out#Submitted batch job }
    [ "$out" = "Submitted batch job $id" ] || { fail "$base: $out"; continue 2; }
    job_of[$base]=$id
    # runs of one output file follow each other (the append case)
    wait_for 60 finished "$id" || { fail "$base: job $id did not complete: $(sacct -X -n -P -o State -j "$id")"; continue 2; }
  done
done
for script in "$corpus"/[0-9]*.sh; do
  base=$(basename "$script" .sh)
  id=${job_of[$base]:-}
  [ -n "$id" ] || continue
  wait_for 60 finished "$id" || { fail "$base: job $id did not complete"; continue; }
  file=$(out_file "$script" "$id")
  while IFS= read -r want; do
    if [[ $want == lines=* ]]; then
      got="lines=$(grep -c . "$file")"
    else
      got=$(grep -m1 -x -F -- "$want" "$file" || true)
    fi
    [ "$got" = "$want" ] || fail "$base (job $id): want '$want', $file has: $(tr '\n' '|' <"$file")"
  done < <(expect_lines "$script")
  echo "ok   $base"
done

# Outputs as Slurm 22.05's from the moment of submission (transcript and
# harness): no -t is the partition's DefaultTime (dev's batch: 1:00:00), the
# QoS is named (normal), and a job waiting on a dependency says Dependency at
# once, its terms marked (unfulfilled).
held=$(sbatch --parsable -A ops -H --wrap true)
dep=$(sbatch --parsable -A ops -d "afterok:$held" --wrap true)
show=$(scontrol show job "$held")
grep -q '^   RunTime=00:00:00 TimeLimit=01:00:00 TimeMin=N/A$' <<<"$show" || fail "default TimeLimit: $show"
grep -q '^   Priority=0 Nice=0 Account=ops QOS=normal$' <<<"$show" || fail "held: Priority=0, QOS name: $show"
[ "$(squeue -h -j "$dep" -o %Q)" -gt 0 ] || fail "priority of a job that is not held: $(squeue -h -j "$dep" -o %Q)"
[ "$(squeue -h -j "$dep" -o '%r %E')" = "Dependency afterok:$held(unfulfilled)" ] ||
  fail "dependency at submission: $(squeue -h -j "$dep" -o '%r %E')"
scontrol show job "$dep" | grep -q "^   JobState=PENDING Reason=Dependency Dependency=afterok:$held(unfulfilled)$" ||
  fail "scontrol dependency: $(scontrol show job "$dep")"
begin=$(sbatch --parsable -A ops --begin=now+1hour --wrap true)
[ "$(squeue -h -j "$begin" -o %r)" = BeginTime ] || fail "--begin at submission: $(squeue -h -j "$begin" -o %r)"
scancel "$held" "$dep" "$begin"
echo "ok   scontrol show job defaults (TimeLimit, QOS) and Dependency at submission"

# scontrol delete reservation: refused while a job asked for it, then gone
# (the listing, and a second delete says so).
out=$(scontrol create reservation ReservationName=busy Nodes=dev4 StartTime=now+2hours Duration=60 Accounts=ops 2>&1)
[ "$out" = "Reservation created: busy" ] || fail "reservation busy: $out"
waiting=$(sbatch --parsable -A ops --reservation=busy --wrap true)
out=$(scontrol delete ReservationName=busy 2>&1)
[[ $out == *"Error deleting the reservation: "*"reservation busy is in use by job $waiting"* ]] || fail "busy delete: $out"
scancel "$waiting"
gone() { [ -z "$(scontrol delete ReservationName=busy 2>&1)" ]; }
wait_for 10 gone || fail "delete after the job left: $(scontrol delete ReservationName=busy 2>&1)"
curl -s --unix-socket "${PHALANX_SERVER#unix:}" http://px/v1/reservations | grep -q '"busy"' && fail "busy still listed"
out=$(scontrol delete ReservationName=busy 2>&1)
[[ $out == *"no reservation busy"* ]] || fail "second delete: $out"
echo "ok   scontrol delete reservation: refused while job $waiting waits for it, then gone"

# The refusals, with Slurm's first line and exit status.
while IFS=$'\t' read -r args want rc; do
  [[ -z $args || $args == \#* ]] && continue
  # shellcheck disable=SC2086 # the corpus line is the command line
  got=$(sbatch -A ops -t 20 $args 2>&1 >/dev/null)
  got_rc=$?
  if [[ $want == differs:* ]]; then
    [ "$got_rc" = "$rc" ] || fail "sbatch $args: exit $got_rc, want $rc ($got)"
    echo "ok   sbatch $args (known difference, refused: $(tail -n1 <<<"$got"))"
    continue
  fi
  [ "$(head -n1 <<<"$got")" = "$want" ] && [ "$got_rc" = "$rc" ] ||
    fail "sbatch $args: got '$(head -n1 <<<"$got")' exit $got_rc, want '$want' exit $rc"
done <"$corpus/errors.txt"
echo "ok   $(grep -c $'^[^#].*\t' "$corpus/errors.txt") refusals checked"

# The other commands' refusals (commands.txt): the whole command line, with
# $HELD a held job of this test's and $ENDED one that has completed.
held=$(sbatch --parsable -A ops -H -t 20 --wrap true)
ended=$(sbatch --parsable -A ops -t 20 --wrap true)
wait_for 60 finished "$ended" || fail "job $ended did not complete"
while IFS=$'\t' read -r cmd want rc; do
  [[ -z $cmd || $cmd == \#* ]] && continue
  cmd=${cmd//\$HELD/$held} cmd=${cmd//\$ENDED/$ended} want=${want//\$ENDED/$ended}
  [ "$want" = "(none)" ] && want=
  # shellcheck disable=SC2086 # the corpus line is the command line
  got=$($cmd 2>&1 >/dev/null)
  got_rc=$?
  if [[ $want == differs:* ]]; then
    [ "$got_rc" = "$rc" ] || fail "$cmd: exit $got_rc, want $rc ($got)"
    continue
  fi
  [ "$(head -n1 <<<"$got")" = "$want" ] && [ "$got_rc" = "$rc" ] ||
    fail "$cmd: got '$(head -n1 <<<"$got")' exit $got_rc, want '$want' exit $rc"
done <"$corpus/commands.txt"
echo "ok   $(grep -c $'^[^#].*\t' "$corpus/commands.txt") command refusals checked"

# Outputs (h65's sweep, each as Slurm 22.05 gave it on the harness).
limit_of() { scontrol show job "$1" | grep -o 'TimeLimit=[^ ]*'; }
# --time forms: whole minutes, rounded up (-t 0:30 is 00:01:00), D-H and D-H:M
for form in "0:30=00:01:00" "90=01:30:00" "5:30=00:06:00" "0-2=02:00:00" "0-2:3=02:03:00"; do
  id=$(sbatch --parsable -A ops -H -t "${form%%=*}" --wrap true)
  [ "$(limit_of "$id")" = "TimeLimit=${form#*=}" ] || fail "-t ${form%%=*}: $(limit_of "$id"), want ${form#*=}"
  scancel "$id"
done
# %p: the priority as a fraction with Slurm's 14 decimals (a held job's is 0)
[ "$(squeue -h -j "$held" -o %p)" = 0.00000000000000 ] || fail "%p of a held job: $(squeue -h -j "$held" -o %p)"
# squeue's %v %h %n %x %g %G %w %O, and sacct's %-N (left-justified) widths
want="(null)|OK|||$(id -gn)|$(id -g)|(null)|0"
[ "$(squeue -h -j "$held" -o '%v|%h|%n|%x|%g|%G|%w|%O')" = "$want" ] ||
  fail "squeue %v..%O: $(squeue -h -j "$held" -o '%v|%h|%n|%x|%g|%G|%w|%O'), want $want"
[ "$(sacct -X -j "$ended" -o JobID%-15,State%-12 | head -n1)" = "JobID           State        " ] ||
  fail "sacct %-N: '$(sacct -X -j "$ended" -o JobID%-15,State%-12 | head -n1)'"
# sinfo %X %Y %Z %b %O: the node's layout as %z gives it, features, no load
[ "$(sinfo -h -N -n dev4 -p batch -o '%X|%Y|%Z|%b|%O')" = "1|128|1|(null)|N/A" ] ||
  fail "sinfo %X..%O: $(sinfo -h -N -n dev4 -p batch -o '%X|%Y|%Z|%b|%O' 2>&1)"
# scontrol update TimeLimit=+T / -T: relative to the job's limit
scontrol update JobId="$held" TimeLimit=+10 && [ "$(limit_of "$held")" = TimeLimit=00:30:00 ] ||
  fail "TimeLimit=+10 on 20 min: $(limit_of "$held")"
scontrol update JobId="$held" TimeLimit=-3 && [ "$(limit_of "$held")" = TimeLimit=00:27:00 ] ||
  fail "TimeLimit=-3: $(limit_of "$held")"
# an array's pending tasks with a step: Slurm writes them out; -r a line each; %0 is no throttle
arr=$(sbatch --parsable -A ops -H -t 5 --array=1-9:2%2 --wrap true)
[ "$(squeue -h -j "$arr" -o %i)" = "${arr}_[1,3,5,7,9%2]" ] || fail "array step: $(squeue -h -j "$arr" -o %i)"
[ "$(squeue -r -h -j "$arr" -o %i | sort | paste -sd' ')" = "${arr}_1 ${arr}_3 ${arr}_5 ${arr}_7 ${arr}_9" ] ||
  fail "squeue -r: $(squeue -r -h -j "$arr" -o %i | paste -sd' ')"
arr0=$(sbatch --parsable -A ops -H -t 5 --array=1-3%0 --wrap true)
[ "$(squeue -h -j "$arr0" -o %i)" = "${arr0}_[1-3]" ] || fail "--array=1-3%0: $(squeue -h -j "$arr0" -o %i)"
# one dependency term per job, joined as the list is
dep=$(sbatch --parsable -A ops -t 5 -d "afterok:$held:$arr,singleton" --wrap true)
[ "$(squeue -h -j "$dep" -o %E)" = "afterok:$held(unfulfilled),afterok:$arr(unfulfilled),singleton(unfulfilled)" ] ||
  fail "dependency terms: $(squeue -h -j "$dep" -o %E)"
# --begin: squeue --start shows the begin time, not N/A
t0=$(date +%s)
later=$(sbatch --parsable -A ops -t 5 --begin=now+1hour --wrap true)
t1=$(date +%s)
start=$(date -d "$(squeue --start -h -j "$later" -o %S)" +%s 2>/dev/null || echo 0)
[ "$start" -ge $((t0 + 3600)) ] && [ "$start" -le $((t1 + 3600)) ] ||
  fail "--start of a --begin job: $(squeue --start -h -j "$later" -o %S)"
scancel "$arr" "$arr0" "$dep" "$later"
# --test-only: one line on stderr, and no job left queued or run
out=$(sbatch -A ops -t 5 --test-only --wrap 'touch ran' 2>&1)
[[ $out =~ ^sbatch:\ Job\ ([0-9]+)\ to\ start\ at\ .*\ using\ 1\ processors\ on\ nodes\ .*\ in\ partition\ batch$ ]] ||
  fail "--test-only: $out"
tid=${BASH_REMATCH[1]:-0}
[ -z "$(squeue -h -t all -j "$tid" -o %t 2>/dev/null)" ] || fail "--test-only left job $tid: $(squeue -h -t all -j "$tid" -o %t)"
# --wait: the job's exit status; --parsable of an array: the bare id
sbatch -A ops -t 5 --wait --wrap 'exit 3' >/dev/null
[ $? = 3 ] || fail "--wait did not return the job's 3"
[[ $(sbatch --parsable -A ops -t 5 -H --array=1-2 --wrap true) =~ ^[0-9]+$ ]] || fail "--parsable --array"
# squeue -j of an ended job: not listed (only -t all shows it), exit 0
out=$(squeue -h -j "$tid")
[ $? = 0 ] && [ -z "$out" ] || fail "squeue -j ended job: '$out'"
# output patterns %A_%a %j %u %x %%
pat=$(sbatch --parsable -A ops -t 5 -J pj --array=1-2 -o 'o-%A_%a-%j-%u-%x-%%.txt' --wrap true)
done_tasks() { [ "$(ls o-"${pat}"_[12]-*-"$(id -un)"-pj-%.txt 2>/dev/null | wc -l)" = 2 ]; }
wait_for 60 done_tasks || fail "output patterns: $(ls o-* 2>&1)"
scancel "$held"
echo "ok   outputs: -t forms, TimeLimit=+/-, array steps and -r, dependency terms, --start, --test-only, --wait, patterns"
[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all compat options ok"
