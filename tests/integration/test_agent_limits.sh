#!/usr/bin/env bash
# Ending jobs leaves nothing behind: a cancelled job whose processes ignore
# SIGTERM, fork into new sessions and daemonise is gone entirely after the
# grace time (CANCELLED); a job reaching its time limit gets its --signal
# ahead of the limit, then SIGTERM, then SIGKILL after KillWait (TIMEOUT).
source "$(dirname "$0")/agent/lib.sh"
need_root
ensure_users
T=$(mktemp -d /tmp/pxlim.XXXXXX)
chmod 755 "$T"
cleanup() { kill_leftovers "$T/state"; rm -rf "$T"; }
trap cleanup EXIT
WORK=$T/w; mkdir -p "$WORK" && chown pxtest1 "$WORK"
run() { "$PHALANX" agent --run-local "$1" --state-dir "$T/state" --kill-wait 1 2>>"$T/agent.log"; }

# The jobs' sleeps carry this run's number (u, lib_skip.sh's RUN_NO): a
# second suite running the same test on the machine must not count as this
# one's leftovers.
u=.$RUN_NO

# 1. Cancel with a 1 s grace: everything ignores SIGTERM, so SIGKILL must reach
#    the process group, a setsid'd child and a double-forked daemon alike.
launch_json 11 pxtest1 '#!/bin/bash
trap "" TERM
sleep 4711'"$u"' &
setsid sleep 4712'"$u"' &
( setsid bash -c "sleep 4713'"$u"' &" & )
echo started > '"$WORK"'/started
wait' >"$T/11.json"
run "$T/11.json" >"$T/11.st" &
runner=$!
jobdir=$T/state/jobs/11.0
all_up() { [ -e "$WORK/started" ] && [ "$(procs_with "sleep 471[123]\\$u" | wc -l)" -eq 3 ]; }
wait_for 30 all_up || fail "job 11's processes did not start"
memcg=$(jq -r '.cgroup.memory' "$jobdir/state.json")
[ "$(wc -l <"$memcg/cgroup.procs")" -ge 4 ] || fail "job 11's processes are not all in its cgroup $memcg"
echo "15 1 CANCELLED" >"$jobdir/ctl"
wait $runner
[ "$(field "$T/11.st" state)" = CANCELLED ] || fail "job 11: $(cat "$T/11.st")"
[ -z "$(procs_with "sleep 471[123]\\$u")" ] || fail "processes left after cancel: $(procs_with "sleep 471[123]\\$u")"
[ ! -d "$memcg" ] || fail "cgroup $memcg left behind"
ok "cancel: SIGTERM ignored, SIGKILL after grace, no process or cgroup left"

# 2. Time limit 9 s (from a whole-second start) with --signal=USR1@2 and KillWait 1 s.
# USR1 comes 6-7 s after the launch is written: room for the supervisor (ASan) to start and bash to install its traps even
# on a loaded 2-core machine (with less, USR1 could kill bash before `trap`).
launch_json 12 pxtest1 '#!/bin/bash
trap "echo got USR1" USR1
trap "echo got TERM" TERM
setsid sleep 4721'"$u"' &
while :; do sleep 0.05; done' ".time_limit_s = 9" ".start_time = $(date +%s)" ".signal_num = 10" \
  ".signal_time_s = 2" >"$T/12.json"
t0=$(date +%s%N)
run "$T/12.json" >"$T/12.st"
elapsed_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$(field "$T/12.st" state)" = TIMEOUT ] || fail "job 12: $(cat "$T/12.st")"
out=$WORK/slurm-12.out
grep -q "got USR1" "$out" && grep -q "got TERM" "$out" || fail "signals not seen: $(cat "$out")"
[ "$(grep -c 'got USR1' "$out")" -eq 1 ] || fail "--signal delivered more than once: $(cat "$out")"
[ "$(grep -n -m1 'got USR1' "$out" | cut -d: -f1)" -lt "$(grep -n -m1 'got TERM' "$out" | cut -d: -f1)" ] ||
  fail "--signal came after SIGTERM"
[ -z "$(procs_with "sleep 4721\\$u")" ] || fail "process left after the time limit"
# limit 9 s + KillWait 1 s, less up to a second (the start is whole seconds)
[ "$elapsed_ms" -ge 8000 ] && [ "$elapsed_ms" -le 20000 ] || fail "TIMEOUT after $elapsed_ms ms"
ok "time limit: --signal, then SIGTERM, then SIGKILL after KillWait (TIMEOUT after $elapsed_ms ms)"

# 3. CPU time counts every process of the job, a daemonised one included:
#    the burner leaves the job's process tree (setsid, its parent gone) and
#    writes what bash's `times` says it used before the job ends.
launch_json 13 pxtest1 '#!/bin/bash
( setsid bash -c "x=0; while [ \$x -lt 400000 ]; do x=\$((x+1)); done; times > '"$WORK"'/burn.times" & )
until [ -s '"$WORK"'/burn.times ]; do sleep 0.05; done' >"$T/13.json"
run "$T/13.json" >"$T/13.st"
[ "$(field "$T/13.st" state)" = COMPLETED ] || fail "job 13: $(cat "$T/13.st")"
# first line of `times`: the shell's own user and system time, "0m0.412s 0m0.004s"
burn_ms=$(head -1 "$WORK/burn.times" | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/);
  printf "%d", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }')
cpu_ms=$(field "$T/13.st" cpu_time_ms)
[ "$burn_ms" -ge 100 ] || fail "the burner used only $burn_ms ms: the check would prove nothing"
[ "$cpu_ms" -ge "$burn_ms" ] || fail "job 13 reported $cpu_ms ms of CPU; its daemonised burner alone used $burn_ms ms"
ok "CPU time: $cpu_ms ms reported, of which the daemonised burner used $burn_ms ms"
sanitizer_clean "$T"/agent.log
