#!/usr/bin/env bash
# Pooled cgroups (cgroup.h): on v1 a node's jobs run in slot groups that the
# agent reuses, and nothing of a slot's previous job carries over:
#  1. a job after a 150 MiB job runs in the same group and reports its own
#     peak, not the one before;
#  2. a job after an OUT_OF_MEMORY job in the same group completes (the OOM
#     count and the memory limit are the new job's);
#  3. device rules: a job given GPU 1 after one given GPU 0 opens GPU 1;
#  4. a slot whose job still runs is not handed out again, even by an agent
#     restarted (kill -9) meanwhile, which removes the idle groups its
#     predecessor left (and only those), and kills the processes in a group
#     no job of it claims (an orphan no server order would reach);
#  5. the agent, stopped, leaves no group behind.
# Steps 4 and 5 run with the machine busy (CPU loops, bounded in time): a
# killed task's exit then takes long enough for its group to refuse rmdir
# for a while, and teardown must wait it out.
# The server is the protocol stand-in (agent/mock_server.py) on loopback.
source "$(dirname "$0")/agent/lib.sh"
need_root
ensure_users
[ -d /sys/fs/cgroup/memory ] || px_skip cgroup-v1 "no cgroup v1 memory hierarchy (pooling is v1 only)"
T=$(mktemp -d /tmp/pxpool.XXXXXX)
chmod 755 "$T"
AGENT_PID=
LOAD_PIDS=()
stop_load() { for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; LOAD_PIDS=(); }
cleanup() {
  [ -n "$AGENT_PID" ] && { kill "$AGENT_PID" 2>/dev/null || true; wait "$AGENT_PID" 2>/dev/null || true; }
  [ -n "${MOCK_PID:-}" ] && { kill "$MOCK_PID" 2>/dev/null || true; }
  stop_load
  kill_leftovers "$T/state"
  rm -rf "$T"
}
trap cleanup EXIT
WORK=$T/w; mkdir -p "$WORK" && chown pxtest1 "$WORK"
start_mock 127.0.0.1 "$(free_port)"
start_agent() {
  "$PHALANX" agent --server "$MOCK" --node n01 --state-dir "$T/state" --emulate-gpus 2 --kill-wait 1 \
    2>>"$T/agent.log" &
  AGENT_PID=$!
  wait_for 30 registered n01 || fail "agent did not register"
}
ended() { mock_get /test/reports | jq -e --argjson j "$1" 'any(.[]; .job_id == $j and .state != "RUNNING")' >/dev/null; }
# run_job ID SCRIPT [jq...]: launches a job and waits for its report
run_job() {
  local id=$1 script=$2; shift 2
  mock_post "/test/launch?node=n01" "$(launch_json "$id" pxtest1 "$script" "$@")"
  wait_for 60 ended "$id" || fail "job $id did not end: $(mock_get /test/reports | jq -c "map(select(.job_id == $id))")"
}
report() { mock_get /test/reports | jq -r --argjson j "$1" "[.[] | select(.job_id == \$j and .state != \"RUNNING\")][-1].$2"; }
memcg_of() { sed -n 's/^[0-9]*:memory://p' "$WORK/cg.$1"; }
start_agent

# 1. peak memory: 150 MiB, then next to nothing, in the same group
cg='cat /proc/self/cgroup > '"$WORK"'/cg.$SLURM_JOB_ID'
run_job 1 "#!/bin/sh
$cg
exec python3 -c 'b = bytearray(150 << 20)'" '.mem_mib = 1024'
[ "$(report 1 state)" = COMPLETED ] || fail "job 1: $(report 1 state)"
[ "$(report 1 peak_mem_mib)" -ge 140 ] || fail "job 1 peak $(report 1 peak_mem_mib) MiB, want >= 140"
run_job 2 "#!/bin/sh
$cg" '.mem_mib = 1024'
[ -n "$(memcg_of 1)" ] && [ "$(memcg_of 1)" = "$(memcg_of 2)" ] || fail "job 2 not in job 1's group: $(memcg_of 1) vs $(memcg_of 2)"
case $(memcg_of 2) in */slot_*) ;; *) fail "job 2's group $(memcg_of 2) is not a pooled slot" ;; esac
[ "$(report 2 peak_mem_mib)" -lt 50 ] || fail "job 2 reported job 1's peak: $(report 2 peak_mem_mib) MiB"
ok "the slot's next job reports its own peak ($(report 2 peak_mem_mib) MiB after $(report 1 peak_mem_mib) MiB)"

# 2. an OOM kill and a lower limit, then a job that fits
run_job 3 "#!/bin/sh
$cg
exec python3 -c 'b = bytearray(256 << 20)'" '.mem_mib = 64'
[ "$(report 3 state)" = OUT_OF_MEMORY ] || fail "job 3: $(report 3 state)"
run_job 4 "#!/bin/sh
$cg
exec python3 -c 'b = bytearray(100 << 20)'" '.mem_mib = 512'
[ "$(memcg_of 3)" = "$(memcg_of 4)" ] || fail "job 4 not in job 3's group"
[ "$(report 4 state)" = COMPLETED ] || fail "job 4 after an OOM in its group: $(report 4 state)"
ok "after an OUT_OF_MEMORY job, the slot's next job (a higher limit) COMPLETED"

# 3. device rules start over: GPU 0's job, then GPU 1's
mkdir -p "$T/dev" && mknod "$T/dev/nvidia0" c 195 0 && mknod "$T/dev/nvidia1" c 195 1 && chmod 666 "$T"/dev/*
probe="#!/bin/sh
$cg
cat $T/dev/nvidia0 2>&1; cat $T/dev/nvidia1 2>&1"
run_job 5 "$probe" '.gpus = [0]'
run_job 6 "$probe" '.gpus = [1]'
[ "$(memcg_of 5)" = "$(memcg_of 6)" ] || fail "job 6 not in job 5's group"
grep -q 'nvidia1: Operation not permitted' "$WORK/slurm-5.out" || fail "job 5 opened GPU 1: $(cat "$WORK/slurm-5.out")"
grep -q 'nvidia1: No such device or address' "$WORK/slurm-6.out" || fail "job 6 denied its GPU 1: $(cat "$WORK/slurm-6.out")"
grep -q 'nvidia0: Operation not permitted' "$WORK/slurm-6.out" || fail "job 6 opened GPU 0: $(cat "$WORK/slurm-6.out")"
ok "device rules are the slot's current job's"

# 4. a running job's slot stays its own across an agent restart
# busy: two CPU loops per core, 90 s at most (stop_load ends them sooner)
for _ in $(seq $(( $(nproc) * 2 ))); do timeout 90 sh -c 'while :; do :; done' & LOAD_PIDS+=($!); done
mock_post "/test/launch?node=n01" "$(launch_json 7 pxtest1 "#!/bin/sh
$cg
while [ ! -e $WORK/go7 ]; do sleep 0.05; done")"
wait_for 30 test -s "$WORK/cg.7" || fail "job 7 did not start"
mock_post "/test/forget?node=n01" # the acknowledged orders (jobs 1-7): not sent again
kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true
# what a killed agent can leave besides: an idle slot, an ended job's group
stale=/sys/fs/cgroup/memory$(dirname "$(memcg_of 7)")
mkdir "$stale/slot_9" "$stale/job_999"
# an orphan: a process in a slot group whose job the state directory lost
mkdir "$stale/slot_10"
sleep 300 &
orphan=$!
echo "$orphan" >"$stale/slot_10/cgroup.procs"
start_agent
# (the stand-in knows n01 already: wait for the new agent's word, not its registration)
wait_for 30 grep -q "removed [0-9]* cgroup(s) an earlier agent of this node left behind" "$T/agent.log" ||
  fail "the restarted agent did not sweep its level: $(grep -a cgroup "$T/agent.log" | tail -5)"
[ ! -d "$stale/slot_9" ] && [ ! -d "$stale/job_999" ] || fail "stale groups kept: $(ls "$stale")"
wait_for 10 sh -c "! kill -0 $orphan 2>/dev/null" || { kill -9 "$orphan"; fail "the orphan $orphan in slot_10 still ran"; }
wait "$orphan" 2>/dev/null || true
[ ! -d "$stale/slot_10" ] || fail "the orphan's group slot_10 kept: $(grep -a slot_10 "$T/agent.log")"
[ -d "/sys/fs/cgroup/memory$(memcg_of 7)" ] || fail "running job 7's group $(memcg_of 7) was swept"
run_job 8 "#!/bin/sh
$cg"
[ "$(memcg_of 8)" != "$(memcg_of 7)" ] || fail "job 8 was put in running job 7's group $(memcg_of 7)"
touch "$WORK/go7"
wait_for 30 reported 7 n01 COMPLETED || fail "job 7 did not complete"
ok "a running job's slot is not handed out again after an agent restart; stale idle groups swept"

# 5. stopped, the agent removes its idle groups and its level
level=/sys/fs/cgroup/memory$(dirname "$(memcg_of 8)")
[ -d "$level" ] || fail "no agent level $level while it runs"
wait_for 30 sh -c "! ls $T/state/jobs | grep -q '^7\\.'" || fail "job 7's end was not acknowledged"
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true; AGENT_PID=
[ ! -d "$level" ] || fail "groups left behind: $(ls "$level"); $(grep -a -A2 cgroup "$T"/agent.log | tail -12)"
# each job ran once: a stand-in that sent the acknowledged orders again to
# the restarted agent ran jobs 1-6 twice, and under load the second runs
# still held their slots (rightly kept) when the agent stopped
runs=$(mock_get /test/reports | jq -c '[.[] | select(.state != "RUNNING") | .job_id] | group_by(.) | map(length) | unique')
[ "$runs" = "[1]" ] || fail "jobs ended more than once (ends per job: $runs)"
ok "the stopped agent left no cgroup behind (machine busy); each job ran once"
stop_load
sanitizer_clean "$T"/agent.log
