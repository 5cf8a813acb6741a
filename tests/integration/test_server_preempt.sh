#!/usr/bin/env bash
# Preemption end to end on `phalanx dev` (real server, real agent process):
# one node of 8 GPUs; a low-QoS job holds all of them; a high-QoS job
# (QOS=high Preempt=low PreemptMode=requeue GraceTime=10 in the dev config)
# arrives. Expected, worked from the policy: the victim gets SIGTERM as its
# grace warning (it checkpoints: writes a marker), is stopped, and goes back
# to PENDING with the SAME job id; the preemptor runs on the freed GPUs; when
# the preemptor ends, the victim runs again (SLURM_RESTART_COUNT=1) and
# completes.
source "$(dirname "$0")/agent/lib.sh"
need_root
ensure_users
T=$(mktemp -d /tmp/pxpre.XXXXXX)
chmod 755 "$T"
DEV=
cleanup() {
  [ -n "$DEV" ] && { kill -TERM "$DEV" 2>/dev/null; wait "$DEV" 2>/dev/null; }
  for d in "$T"/c/agents/dev*/; do kill_leftovers "$d"; done
  [ -n "${PX_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/bin" && for c in sbatch squeue sacct; do ln -s "$PHALANX" "$T/bin/$c"; done
export PATH=$T/bin:$PATH
"$PHALANX" dev --nodes 1 --quiet --users pxtest1 --state-dir "$T/c" --ready-file "$T/ready" 2>"$T/dev.err" &
DEV=$!
wait_for 120 test -s "$T/ready" || fail "phalanx dev did not come up: $(cat "$T/dev.err")"
set -a; source "$T/ready"; set +a
WORK=$T/w; mkdir -p "$WORK" && chown pxtest1 "$WORK" && cd "$WORK"
state_of() { squeue -h -j "$1" -o %T 2>/dev/null | head -1; }
state_is() { [ "$(state_of "$1")" = "$2" ]; } # re-read on every try of wait_for

# The victim: on its first attempt it waits to be preempted, records the
# warning signal, and exits; on the second it completes at once.
victim=$(su pxtest1 -c "sbatch --parsable -A speech -q low --gres=gpu:8 -o $WORK/victim-%j.out --wrap '
echo attempt \${SLURM_RESTART_COUNT:-0}
[ -n \"\$SLURM_RESTART_COUNT\" ] && exit 0
trap \"echo got TERM; exit 0\" TERM
while :; do sleep 0.1; done'") || fail "victim not submitted"
wait_for 60 state_is "$victim" RUNNING || fail "victim never ran: $(squeue)"
ok "victim $victim runs on all 8 GPUs"

pre=$(su pxtest1 -c "sbatch --parsable -A speech -q high --gres=gpu:8 -o $WORK/pre-%j.out --wrap 'echo preemptor ran; sleep 1'") ||
  fail "preemptor not submitted"
wait_for 90 grep -q 'preemptor ran' "$WORK/pre-$pre.out" 2>/dev/null ||
  fail "preemptor never ran: $(squeue -o '%i %T %r'; cat "$T"/c/server.log | tail -20)"
grep -q 'got TERM' "$WORK/victim-$victim.out" || fail "victim got no warning signal: $(cat "$WORK/victim-$victim.out")"
ok "preemptor $pre ran after victim $victim was signalled and stopped"

# Same id back in the queue, then run again and complete.
wait_for 90 grep -q 'attempt 1' "$WORK/victim-$victim.out" ||
  fail "victim did not run again: $(squeue -o '%i %T %r'); $(cat "$WORK/victim-$victim.out")"
acct_state() { sacct -n -X -j "$1" -o State | head -1 | tr -d ' +'; }
acct_is() { [ "$(acct_state "$1")" = "$2" ]; }
wait_for 60 acct_is "$victim" COMPLETED ||
  fail "victim's final state $(acct_state "$victim"), expected COMPLETED"
[ "$(acct_state "$pre")" = COMPLETED ] || fail "preemptor's state $(acct_state "$pre")"
ok "victim requeued with its id, ran again (SLURM_RESTART_COUNT=1) and completed"
