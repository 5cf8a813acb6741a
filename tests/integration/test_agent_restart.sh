#!/usr/bin/env bash
# Agent and server restarts lose no job outcome and start no task twice:
#  1. an agent killed with -9 while its job runs leaves the job running; the
#     restarted agent re-registers listing the job, reattaches, ignores the
#     launch order the server sends again, and reports the job's end;
#  2. a job that ends while the server is away is reported when it returns.
# And the agent's zygote (agent/zygote.h) dies with it, however it dies,
# while the supervisors it forked live on and read as supervisors (not as
# the zygote they were forked from); SIGTERM to an orphaned supervisor
# cancels its job (4); an agent of pid 1 (a container's init) has its zygote too (6).
# The server here is the protocol stand-in (agent/mock_server.py) on loopback.
source "$(dirname "$0")/agent/lib.sh"
need_root
ensure_users
T=$(mktemp -d /tmp/pxrst.XXXXXX)
chmod 755 "$T"
AGENT_PID=
cleanup() {
  # TERM: the agent removes its cgroup level on the way out (jobs are gone by
  # now). Its wait's status (143) must not end this trap under set -e: the
  # mock server and the temporary directory were left behind that way.
  [ -n "$AGENT_PID" ] && { kill "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null || true; }
  [ -n "${UNSHARE_PID:-}" ] && { wait "$UNSHARE_PID" 2>/dev/null || true; } # ends with the agent, its child
  [ -n "${MOCK_PID:-}" ] && kill "$MOCK_PID" 2>/dev/null
  kill_leftovers "$T/state"
  rm -rf "$T"
}
trap cleanup EXIT
WORK=$T/w; mkdir -p "$WORK" && chown pxtest1 "$WORK"
PORT=$(free_port)
start_mock 127.0.0.1 $PORT
start_agent() {
  "$PHALANX" agent --server "$MOCK" --node n01 --state-dir "$T/state" --emulate-gpus 2 --kill-wait 1 \
    --log-level debug 2>>"$T/agent.log" &
  AGENT_PID=$!
}

# 1. kill -9 the agent mid-job, restart it.
launch_json 21 pxtest1 '#!/bin/sh
echo started >> '"$WORK"'/starts
while [ ! -e '"$WORK"'/go ]; do sleep 0.05; done
echo finished' >"$T/21.json"
start_agent
wait_for 30 registered n01 || fail "agent did not register"
ZYG=$(zygote_of "$AGENT_PID")
mock_post "/test/launch?node=n01" "$(cat "$T/21.json")"
wait_for 30 test -e "$WORK/starts" || fail "job 21 did not start"
sup=$(jq -r .supervisor "$T/state/jobs/21.0/state.json")
line=$(cmdline "$sup")
[[ $line == *"--supervise "*21.0* && $line != *--zygote* ]] || fail "supervisor $sup reads as: $line"
kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true
kill -0 "$sup" || fail "the job's supervisor died with the agent"
if [ -n "$ZYG" ]; then
  wait_for 10 gone "$ZYG" || fail "zygote $ZYG outlived its agent killed -9: $(cmdline "$ZYG")"
  ok "agent killed -9: its zygote $ZYG is gone, the job's supervisor ($line) runs on"
fi
start_agent
# the restart registers again, with the running job listed
two_regs() { mock_get /test/registrations | jq -e '.n01 | length == 2 and (.[1].jobs | any(.job_id == 21 and .state == "RUNNING"))' >/dev/null; }
wait_for 30 two_regs || fail "re-registration without job 21: $(mock_get /test/registrations)"
# the stand-in resends every order from seq 0 to a fresh agent: the launch must not run again
touch "$WORK/go"
wait_for 30 reported 21 n01 COMPLETED || fail "job 21's end not reported: $(mock_get /test/reports)"
[ "$(wc -l <"$WORK/starts")" -eq 1 ] || fail "job 21 started $(wc -l <"$WORK/starts") times"
grep -q finished "$WORK/slurm-21.out" || fail "job 21 did not finish its script"
ok "agent killed -9 mid-job: job kept running, reattached, not started twice, end reported"

# 2. The job ends while the server refuses reports; the end arrives once it is back.
launch_json 22 pxtest1 '#!/bin/sh
touch '"$WORK"'/started22
while [ ! -e '"$WORK"'/go22 ]; do sleep 0.05; done' >"$T/22.json"
mock_post "/test/launch?node=n01" "$(cat "$T/22.json")"
wait_for 30 test -e "$WORK/started22" || fail "job 22 not running"
mock_post /test/reports_down
touch "$WORK/go22"
wait_for 30 test -e "$T/state/jobs/22.0/status.json" || fail "job 22 did not end"
! reported 22 n01 COMPLETED || fail "report accepted while the server was down"
mock_post /test/reports_up
wait_for 30 reported 22 n01 COMPLETED || fail "job 22's end never reported"
wait_for 30 test ! -e "$T/state/jobs/22.0" || fail "job 22's directory kept after the server acknowledged"
ok "an end during a server outage is reported when the server returns"

# 3. Acknowledged jobs' directories are reused (renamed into place with their
# files): a job started in one reports its own end, never the previous one's.
pooled() { [ -n "$(ls -A "$T/state/jobs/.free" 2>/dev/null)" ]; }
wait_for 30 pooled || fail "no ended job's directory kept for reuse"
launch_json 24 pxtest1 '#!/bin/sh
[ -e "$(dirname "$0")/status.json" ] && echo stale > '"$WORK"'/stale24
exit 3' >"$T/24.json"
mock_post "/test/launch?node=n01" "$(cat "$T/24.json")"
wait_for 30 reported 24 n01 FAILED || fail "job 24's end not reported as its own: $(mock_get /test/reports)"
! reported 24 n01 COMPLETED || fail "job 24 reported with a previous job's end"
[ ! -e "$WORK/stale24" ] || fail "job 24's directory held an end (status.json) while it ran"
[ -e "$WORK/slurm-24.out" ] || fail "job 24 did not run"
ok "a recycled job directory carries nothing of the job before"

# 4. SIGTERM to a supervisor whose agent is gone cancels its job (it was read
# and dropped: such supervisors outlived every kill but -9); the restarted
# agent reports the end.
launch_json 25 pxtest1 '#!/bin/sh
touch '"$WORK"'/started25
while [ ! -e '"$WORK"'/go25 ]; do sleep 0.05; done' >"$T/25.json"
mock_post "/test/launch?node=n01" "$(cat "$T/25.json")"
wait_for 30 test -e "$WORK/started25" || fail "job 25 not running"
sup=$(jq -r .supervisor "$T/state/jobs/25.0/state.json")
kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true
kill -TERM "$sup"
wait_for 30 test -e "$T/state/jobs/25.0/status.json" || fail "SIGTERM to supervisor $sup did not end job 25"
[ "$(field "$T/state/jobs/25.0/status.json" state)" = CANCELLED ] ||
  fail "job 25 ended $(field "$T/state/jobs/25.0/status.json" state) after its supervisor's SIGTERM"
wait_for 10 gone "$sup" || fail "supervisor $sup still runs after writing job 25's end"
start_agent
wait_for 30 reported 25 n01 CANCELLED || fail "job 25's end not reported: $(mock_get /test/reports)"
ok "SIGTERM to an orphaned supervisor cancels its job; the restarted agent reports it"

# 5. The server process itself restarts (all its memory gone) while a job runs.
launch_json 23 pxtest1 '#!/bin/sh
touch '"$WORK"'/started23
while [ ! -e '"$WORK"'/go23 ]; do sleep 0.05; done' >"$T/23.json"
mock_post "/test/launch?node=n01" "$(cat "$T/23.json")"
wait_for 30 test -e "$WORK/started23" || fail "job 23 not running"
kill "$MOCK_PID"; wait "$MOCK_PID" 2>/dev/null || true
touch "$WORK/go23"
wait_for 30 test -e "$T/state/jobs/23.0/status.json" || fail "job 23 did not end"
start_mock 127.0.0.1 $PORT
wait_for 30 reported 23 n01 COMPLETED || fail "job 23's end not reported to the restarted server"
ok "server restarted while the job ran: the agent re-registered and reported the end"
# 6. An agent that is its PID namespace's init (pid 1: a container's
# entrypoint) has its zygote too (it refused pid 1: every supervisor was
# exec'd, and the log said the factory stopped answering). unshare ignores
# SIGTERM while it waits: the agent itself (its child) is the one stopped.
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true
unshare --pid --fork --mount-proc "$PHALANX" agent --server "$MOCK" --node n01 --state-dir "$T/state" \
  --emulate-gpus 2 --kill-wait 1 2>>"$T/agent1.log" &
UNSHARE_PID=$!
agent_in_ns() { AGENT_PID=$(ps -o pid= --ppid "$UNSHARE_PID" | tr -d ' '); [ -n "$AGENT_PID" ]; }
wait_for 10 agent_in_ns || fail "no agent under unshare"
launch_json 26 pxtest1 '#!/bin/sh
touch '"$WORK"'/started26
while [ ! -e '"$WORK"'/go26 ]; do sleep 0.05; done' >"$T/26.json"
mock_post "/test/launch?node=n01" "$(cat "$T/26.json")"
wait_for 30 test -e "$WORK/started26" || fail "job 26 not running under an agent of pid 1: $(tail -5 "$T/agent1.log")"
# the agent's child named for the job (state.json has its pid in the agent's namespace)
sup=$(ps -o pid=,comm= --ppid "$AGENT_PID" | awk '$2 == "px-job26" { print $1 }')
[[ $(cmdline "$sup") == *phalanx-supervisor\ --supervise* ]] || fail "job 26's supervisor was not forked by a zygote: $(cmdline "$sup")"
! grep -q "factory stopped answering" "$T/agent1.log" || fail "the zygote of an agent of pid 1 stopped: $(grep factory "$T/agent1.log")"
touch "$WORK/go26"
wait_for 30 reported 26 n01 COMPLETED || fail "job 26's end not reported: $(mock_get /test/reports)"
kill "$AGENT_PID"; wait "$UNSHARE_PID" 2>/dev/null || true
AGENT_PID=
ok "an agent of pid 1 (a container's init) forks its supervisors from its zygote"
sanitizer_clean "$T"/agent.log "$T"/agent1.log
