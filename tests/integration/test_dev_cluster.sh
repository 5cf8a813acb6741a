#!/usr/bin/env bash
# The whole system on one machine: `phalanx dev` (the real server and three
# agents as separate processes, over TLS), driven with the Slurm commands.
#  1. a 2-node gang sees its node list and ranks; cancelling a running gang
#     leaves no process on either node;
#  2. an agent killed with -9 makes its node DOWN; the requeueable gang that
#     ran there runs again on other nodes to completion; when the agent comes
#     back, the first attempt's processes still on its node are ended.
source "$(dirname "$0")/agent/lib.sh"
need_root
ensure_users
T=$(mktemp -d /tmp/pxdevc.XXXXXX)
chmod 755 "$T"
DEV=
AGENT1=
cleanup() {
  [ -n "$AGENT1" ] && kill "$AGENT1" 2>/dev/null
  [ -n "$DEV" ] && { kill -TERM "$DEV" 2>/dev/null; wait "$DEV" 2>/dev/null; }
  for d in "$T"/c/agents/dev*/; do kill_leftovers "$d"; done
  [ -n "${PX_KEEP:-}" ] || rm -rf "$T" # PX_KEEP=1 keeps the logs of a failed run
}
trap cleanup EXIT
mkdir -p "$T/bin" && for c in sbatch squeue scancel sinfo sacct; do ln -s "$PHALANX" "$T/bin/$c"; done
export PATH=$T/bin:$PATH
"$PHALANX" dev --nodes 3 --quiet --users pxtest1,pxtest2 --state-dir "$T/c" --ready-file "$T/ready" 2>"$T/dev.err" &
DEV=$!
wait_for 60 test -s "$T/ready" || fail "phalanx dev did not come up: $(cat "$T/dev.err")"
set -a; source "$T/ready"; set +a
WORK=$T/w; mkdir -p "$WORK" && chown pxtest1 "$WORK" && cd "$WORK"
# its agents registered with a server that speaks only TLS, with the throwaway CA
grep -q "listening on 127.0.0.1:[0-9]* (TLS)" "$T/c/server.log" && [ -s "$T/c/tls/ca.pem" ] ||
  fail "the dev server is not on TLS: $(grep listening "$T/c/server.log")"
# the job's state from the server's API (independent of the CLI's formatting)
state_of() { curl -sf --unix-socket "$PHALANX_SERVER" "http://localhost/v1/jobs/$1" | jq -r .state; }
has_state() { [ "$(state_of "$1")" = "$2" ]; }

# 1. gang environment, then cancel a running gang.
su pxtest1 -c "sbatch -N 2 --ntasks-per-node=1 --gres=gpu:8 -J envg -o $WORK/envg.out --wrap 'env | sort'" >/dev/null
wait_for 30 has_state 1 COMPLETED || fail "gang 1: $(state_of 1) $(tail -3 "$T"/c/agents/*.log)"
grep -qx 'SLURM_JOB_NODELIST=dev\[1-2\]' "$WORK/envg.out" && grep -qx 'SLURM_TASKS_PER_NODE=1(x2)' "$WORK/envg.out" &&
  grep -qx 'SLURM_JOB_USER=pxtest1' "$WORK/envg.out" && grep -qx 'CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7' "$WORK/envg.out" ||
  fail "gang env: $(grep -E 'NODELIST|TASKS_PER|JOB_USER|CUDA' "$WORK/envg.out")"
ok "2-node gang through the real server: nodes, tasks, user, GPUs"

# (the sleeps carry this run's number: another suite's same test is not ours)
su pxtest1 -c "sbatch -N 2 --gres=gpu:8 -J hold --wrap 'trap \"\" TERM; setsid sleep 4741.$RUN_NO & sleep 4742.$RUN_NO'" >/dev/null
qstate() { squeue -h -o '%i %T' | awk -v j="$1" '$1 == j { print $2 }'; }
running() { [ "$(qstate 2)" = RUNNING ] && [ -n "$(procs_with "sleep 474[12]\\.$RUN_NO")" ]; }
wait_for 30 running || fail "gang 2 did not start"
scancel 2
wait_for 30 has_state 2 CANCELLED || fail "gang 2 after scancel: $(state_of 2)"
gone() { [ -z "$(procs_with "sleep 474[12]\\.$RUN_NO")" ]; }
wait_for 30 gone || fail "processes left after scancel: $(procs_with "sleep 474[12]\\.$RUN_NO")"
ok "scancel of a running gang leaves no process behind"

# 2. kill -9 the agent of a node running a requeueable gang.
su pxtest1 -c "sbatch -N 2 --gres=gpu:8 --requeue -J requeue -o $WORK/rq.out --wrap '
echo \"attempt \${SLURM_RESTART_COUNT:-0} on \$SLURM_JOB_NODELIST\"
[ -n \"\$SLURM_RESTART_COUNT\" ] || exec sleep 4751.$RUN_NO'" >/dev/null
wait_for 30 grep -q "attempt 0" "$WORK/rq.out" || fail "gang 3 did not start"
first=$(squeue -h -o '%i %N' | awk '$1 == 3 { print $2 }')
victim=$(sed -n 's/.*on dev\[\?\([0-9]\).*/dev\1/p' "$WORK/rq.out" | head -1)
# the oldest match: the agent's supervisors are forks of it, with its command line
apid=$(pgrep -o -f -- "--node $victim --addr 127.0.0.1 --state-dir $T/c/agents/$victim") || fail "no agent for $victim"
tr '\0' '\n' </proc/$apid/cmdline >"$T/agent.cmd"
kill -9 "$apid"
down() { sinfo -h -N -n "$victim" -o %T | grep -qi down; }
wait_for 40 down || fail "$victim not DOWN after its agent died: $(sinfo -N)"
wait_for 60 has_state 3 COMPLETED || fail "gang 3 not completed after requeue: $(state_of 3); $(squeue)"
grep -q "attempt 1 on" "$WORK/rq.out" || fail "no second attempt: $(cat "$WORK/rq.out")"
! grep "attempt 1 on" "$WORK/rq.out" | grep -q "$victim\b" || fail "second attempt reused the dead node: $(cat "$WORK/rq.out")"
ok "agent kill -9: $victim DOWN, gang (first on $first) requeued and completed elsewhere"

# The first attempt still runs on the dead agent's node (its supervisor lives on).
# The agent's return makes the server stop it.
mapfile -t cmd <"$T/agent.cmd"
"${cmd[@]}" 2>>"$T/agent-restart.log" &
AGENT1=$!
stale_gone() { [ -z "$(procs_with "sleep 4751\\.$RUN_NO")" ]; }
wait_for 30 stale_gone || fail "the first attempt still runs on $victim after its agent returned"
ok "the returning agent ends the stale first attempt"
sanitizer_clean "$T"/c/agents/*.log "$T"/agent-restart.log "$T"/dev.err
