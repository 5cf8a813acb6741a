#!/usr/bin/env bash
# Chaos: a server and 8 real agents (emulated GPUs) under a storm of
# submits, cancels, holds and releases, while a driver kills the server and
# random agents with SIGKILL at random moments and starts them again, for
# CHAOS_SECONDS (default 60; `make chaos` runs longer). Jobs end by
# themselves (short sleeps) and write a marker per run. At the end, with
# everything up and every job ended:
#  1. every acknowledged job exists, in a terminal state;
#  2. no job ran twice: no (job, attempt) has two markers, and a COMPLETED
#     job has a marker of its last attempt;
#  3. every ended job has exactly one accounting row per attempt: its last
#     with the journal's state, each earlier one with a requeue's state;
#  4. the account's fair-share usage equals what the jobs' rows charged,
#     every attempt of a requeued job included (each has its row);
#  5. the agents, stopped, leave no cgroup behind, although they were
#     killed with SIGKILL again and again (each restart sweeps what its
#     predecessor left; the exit trap removes what a failed run leaves).
# The seed is printed; CHAOS_SEED=<seed> replays the same choices (the
# timing of a real machine still differs).
source "$(dirname "$0")/lib_server.sh"
SECONDS_RUN=${CHAOS_SECONDS:-60}
SEED=${CHAOS_SEED:-$(( $(date +%s%N) % 1000000 ))}
echo "chaos: seed $SEED, $SECONDS_RUN s (replay: CHAOS_SEED=$SEED CHAOS_SECONDS=$SECONDS_RUN)"
RANDOM=$SEED
NODES=(n01 n02 n03 n04 n05 n06 n07 n08)
cat >"$T/slurm.conf" <<CONF
ClusterName=chaos
AllowRootJobs=YES
HeartbeatInterval=1
SlurmdTimeout=6
KillWait=1
PriorityDecayHalfLife=0
NodeName=n[01-08] CPUs=8 RealMemory=16384 Gres=gpu:h100:4
PartitionName=gpu Nodes=n[01-08] Default=YES MaxTime=1:00:00 DefaultTime=10:00 State=UP
CONF
echo "Account=ops Users=root" >"$T/accounts.conf"
M=$T/markers
mkdir -p "$M" "$T/agents" && chmod 777 "$M"
PORT=$(free_port)
AGENT_PIDS=()
STORM_PID=
chaos_cleanup() {
  local rc=$?
  set +e # an agent or the storm may be gone already: the rest must still go
  [ -n "$STORM_PID" ] && kill "$STORM_PID" 2>/dev/null
  for p in "${AGENT_PIDS[@]}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
  # jobs outlive a killed agent: end them by their process groups
  pkill_jobs
  remove_levels
  [ $rc -ne 0 ] && echo "chaos: FAILED with seed $SEED" >&2
  (exit $rc)
  cleanup
}
pkill_jobs() {
  local st
  for st in "$T"/agents/*/jobs/*/state.json; do
    [ -e "$st" ] || continue
    local pgid; pgid=$(jq -r '.pgid // 0' "$st" 2>/dev/null || echo 0)
    [ "$pgid" -gt 1 ] && kill -9 -- "-$pgid" 2>/dev/null || true
  done
  return 0
}
# The agents' cgroup levels (each logs its name at start), wherever they are.
levels() { grep -aoh "cgroup level [^ ]*" "$T"/agents/*.log 2>/dev/null | awk '{print $3}' | sort -u; }
level_dirs() {
  local l
  for l in $(levels); do find /sys/fs/cgroup -maxdepth 8 -type d -name "$l" 2>/dev/null; done
}
# What killed agents left: empty groups deepest first, retried while the
# killed jobs' last tasks exit (5 s at most).
remove_levels() {
  local d deadline=$((SECONDS + 5))
  while [ -n "$(level_dirs)" ] && [ $SECONDS -lt $deadline ]; do
    for d in $(level_dirs); do find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null; done
    sleep 0.1
  done
  return 0
}
trap chaos_cleanup EXIT

# the server on one port for the whole run (agents keep their URL)
server_up() {
  "$PHALANX" server --config "$T/slurm.conf" --state-dir "$STATE" --listen "127.0.0.1:$PORT" \
    >>"$T/server.log" 2>&1 &
  SERVER_PID=$!
  WAIT_S=60 wait_for "server answers" curl -sf --unix-socket "$SOCK" http://x/v1/whoami
}
agent_up() { # index
  local n=${NODES[$1]}
  "$PHALANX" agent --server "http://127.0.0.1:$PORT" --node "$n" --addr 127.0.0.1 \
    --state-dir "$T/agents/$n" --emulate-gpus 4:h100 --emulate-cpus 8 --emulate-mem 16384 \
    --kill-wait 1 --allow-root --token-file "$T/agents/$n.token" >>"$T/agents/$n.log" 2>&1 &
  AGENT_PIDS[$1]=$!
}
server_up
for i in "${!NODES[@]}"; do
  "$PHALANX" server token --state-dir "$STATE" --user root --uid 0 --node "${NODES[$i]}" >"$T/agents/${NODES[$i]}.token"
  agent_up "$i"
done
up_nodes() { api GET /v1/nodes | cut -d' ' -f2- | jq '[.nodes[] | select(.state != "DOWN")] | length'; }
WAIT_S=60 wait_for "8 agents registered" bash -c "[ \"\$(curl -s --unix-socket $SOCK http://x/v1/nodes | jq '[.nodes[] | select(.state != \"DOWN\")] | length')\" = 8 ]"
ok "server and 8 agents up"

# ---- the storm: one client, random verbs; errors while the server is down are expected
storm() {
  set +e # a refused connection (the server is down) is part of the game
  RANDOM=$((SEED + 1))
  local ids=() code body id
  while :; do
    case $((RANDOM % 10)) in
      0 | 1 | 2 | 3 | 4 | 5) # submit 1-4 jobs: 1 GPU, or a 2-node gang
        local n=$((1 + RANDOM % 4)) specs=() k
        for ((k = 0; k < n; k++)); do
          local gang="" d=$((RANDOM % 3))
          [ $((RANDOM % 5)) = 0 ] && gang='"nodes_min":2,"nodes_max":2,'
          specs+=("{\"name\":\"chaos\",${gang}\"gpus_per_node\":1,\"time_limit_s\":120,\"script\":\"#!/bin/sh\\necho \$SLURM_JOB_ID \${SLURM_RESTART_COUNT:-0} \$SLURMD_NODENAME >> $M/\$SLURM_JOB_ID.\${SLURM_RESTART_COUNT:-0}.\$SLURMD_NODENAME\\nsleep $d\"}")
        done
        body=$(IFS=,; echo "{\"jobs\":[${specs[*]}]}")
        code=$(curl -s -m 10 -o "$T/storm.out" -w '%{http_code}' --unix-socket "$SOCK" -X POST \
          -H 'Content-Type: application/json' --data-binary "$body" http://x/v1/jobs 2>/dev/null)
        if [ "$code" = 201 ]; then
          for id in $(jq -r '.job_ids[]' "$T/storm.out"); do ids+=("$id"); echo "$id" >>"$T/acked"; done
        fi
        ;;
      6 | 7) # cancel
        [ ${#ids[@]} -gt 0 ] && curl -s -m 10 -o /dev/null --unix-socket "$SOCK" -X DELETE "http://x/v1/jobs/${ids[$((RANDOM % ${#ids[@]}))]}" 2>/dev/null ;;
      8) # hold
        [ ${#ids[@]} -gt 0 ] && curl -s -m 10 -o /dev/null --unix-socket "$SOCK" -X POST "http://x/v1/jobs/${ids[$((RANDOM % ${#ids[@]}))]}/hold" 2>/dev/null ;;
      9) # release
        [ ${#ids[@]} -gt 0 ] && curl -s -m 10 -o /dev/null --unix-socket "$SOCK" -X POST "http://x/v1/jobs/${ids[$((RANDOM % ${#ids[@]}))]}/release" 2>/dev/null ;;
    esac
    sleep 0.0$((RANDOM % 10))
  done
}
: >"$T/acked"
storm &
STORM_PID=$!

# ---- the driver: kill -9 the server or an agent, start it again
kills_server=0 kills_agent=0 round=0
end=$((SECONDS + SECONDS_RUN))
while [ $SECONDS -lt $end ]; do
  sleep "$((1 + RANDOM % 4)).$((RANDOM % 10))"
  round=$((round + 1))
  if [ $((round % 3)) = 1 ]; then # the server every third round, an agent otherwise
    kill -9 "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true
    kills_server=$((kills_server + 1))
    sleep "0.$((RANDOM % 10))"
    server_up
  else
    i=$((RANDOM % 8))
    kill -9 "${AGENT_PIDS[$i]}" 2>/dev/null; wait "${AGENT_PIDS[$i]}" 2>/dev/null || true
    kills_agent=$((kills_agent + 1))
    # sometimes past SlurmdTimeout (6 s): its jobs are requeued or NODE_FAIL
    [ $((RANDOM % 4)) = 0 ] && sleep 8 || sleep "0.$((RANDOM % 10))"
    agent_up "$i"
  fi
done
kill "$STORM_PID" 2>/dev/null || fail "the storm client died early"
wait "$STORM_PID" 2>/dev/null || true
STORM_PID=
ok "storm over: $(wc -l <"$T/acked") jobs acknowledged, server killed $kills_server times, agents $kills_agent times"

# ---- settle: everything up, held jobs released, every job ended
WAIT_S=60 wait_for "8 nodes up" bash -c "[ \"\$(curl -s --unix-socket $SOCK http://x/v1/nodes | jq '[.nodes[] | select(.state != \"DOWN\")] | length')\" = 8 ]"
# releases are asked again while jobs wait: one answered 503 by a server
# busy with recovery (the machine loaded) leaves its job held otherwise
release_pending() {
  for id in $(api GET "/v1/jobs?state=PENDING" | cut -d' ' -f2- | jq -r '.jobs[].job_id'); do
    api POST "/v1/jobs/$id/release" >/dev/null
  done
}
live_jobs() { api GET "/v1/jobs?state=all&name=chaos" | cut -d' ' -f2- | jq -c '[.jobs[] | select(.state | IN("PENDING","RUNNING","REQUEUED"))]'; }
deadline=$((SECONDS + 180))
until [ "$(live_jobs | jq length)" = 0 ]; do
  if [ $SECONDS -ge $deadline ]; then
    live_jobs | jq -c '.[] | {job_id, state, reason, why, nodelist, restarts}' | head -10
    fail "timed out waiting for: every job ended"
  fi
  release_pending
  sleep 2
done
ok "settled: every job ended"

# ---- invariants
jobs=$(api GET "/v1/jobs?state=all&name=chaos" | cut -d' ' -f2-)
# 1. every acknowledged job exists, terminal
missing=$(comm -23 <(sort -u "$T/acked") <(jq -r '.jobs[].job_id' <<<"$jobs" | sort -u) | head -5)
[ -z "$missing" ] || fail "acknowledged jobs missing: $missing"
odd=$(jq -r '[.jobs[] | select(.state | IN("COMPLETED","FAILED","CANCELLED","TIMEOUT","NODE_FAIL","OUT_OF_MEMORY","PREEMPTED") | not) | "\(.job_id) \(.state)"] | join(", ")' <<<"$jobs")
[ -z "$odd" ] || fail "jobs in no sensible end state: $odd"
ok "1. all $(sort -u "$T/acked" | wc -l) acknowledged jobs exist and ended"
# 2. no (job, attempt) ran twice: one marker file per (job, attempt, node) and
#    one line in it; a gang's attempt runs on its 2 nodes, each once
twice=$(for f in "$M"/*; do [ -e "$f" ] && [ "$(wc -l <"$f")" -gt 1 ] && basename "$f"; done | head -5 || true)
[ -z "$twice" ] || fail "a job attempt ran twice on a node: $twice"
over=$(ls "$M" | awk -F. 'NR == FNR { nn[$1] = $2; next } { runs[$1 "." $2]++; job[$1 "." $2] = $1 }
  END { for (k in runs) if (runs[k] > (nn[job[k]] ? nn[job[k]] : 1)) print k " on " runs[k] " nodes" }' \
  <(jq -r '.jobs[] | "\(.job_id) \(.spec.nodes_min // 1)"' <<<"$jobs" | tr ' ' .) - | head -5 || true)
[ -z "$over" ] || fail "a job attempt ran on more nodes than it has: $over"
unrun=$(jq -r '.jobs[] | select(.state == "COMPLETED") | .job_id' <<<"$jobs" | while read -r id; do
  compgen -G "$M/$id.*" >/dev/null || echo "$id"
done | head -5 || true)
[ -z "$unrun" ] || fail "COMPLETED without having run: $unrun"
ok "2. no job attempt ran twice ($(ls "$M" | wc -l) runs)"
# 3. one accounting row per attempt of every ended job: the last with its
#    state, the earlier ones with the state of the requeue that ended them
rows=$(expect 200 root GET "/v1/accounting?user=root&since=1d&limit=100000")
# through files: a few hundred jobs' JSON is past the kernel's limit for one argument
printf '%s' "$jobs" >"$T/jobs.json"
printf '%s' "$rows" >"$T/rows.json"
bad=$(jq -rn --slurpfile js "$T/jobs.json" --slurpfile rs "$T/rows.json" '$js[0] as $j | $rs[0] as $r |
  ($r.jobs | group_by(.job_id) | map({key: (.[0].job_id | tostring), value: .}) | from_entries) as $by
  | [$j.jobs[] | ($by[.job_id | tostring] // []) as $m | (.restarts // 0) as $n
     | select(($m | map(.restarts // 0)) != [range(0; $n + 1)] or $m[-1].state != .state
              or ($m[:-1] | map(select(.state | IN("PREEMPTED", "REQUEUED", "NODE_FAIL") | not)) | length) > 0)
     | "\(.job_id) \(.state) restarts \($n): rows \($m | map(.state))"] | .[:5] | join("; ")')
[ -z "$bad" ] || fail "accounting disagrees with the journal: $bad"
requeued=$(jq '[.jobs[] | select((.restarts // 0) > 0)] | length' <<<"$jobs")
ok "3. one accounting row per attempt of every ended job, matching the journal ($requeued jobs requeued)"
# 4. fair-share usage equals what the jobs charged, attempt by attempt (no
#    decay configured). Usage accrues from each attempt's start to its end
#    or requeue (core/fairshare.c), at the times the rows keep: every
#    attempt has its row (a requeue writes the row of the attempt it ends).
#    So usage = the rows' sum, exactly, also for the jobs a checkpoint
#    (--checkpoint-jobs) moved out of the journal before a restart: their
#    archive rows keep every attempt, and recovery charges each one
#    (journal/archive_usage.c). The ok line counts the archived requeued
#    attempts, the case a restart once left out.
charged=$(jq '[.jobs[].billable_tres_s // 0] | add // 0' <<<"$rows")
archived=$(sqlite3 "$STATE/state.db" "SELECT COUNT(*) FROM acct a
  JOIN archive r ON r.job_id = a.job_id WHERE a.attempt < json_extract(r.data, '$.restarts');")
# integers of CPU-seconds added up in doubles: equal to a millionth
tol=$(jq -n --argjson a "$charged" '$a * 0.000001')
# /v1/shares is rebuilt at most once a second: the last ends may reach it
# a moment after the jobs' states do, so it is read again for a few seconds
usage_ok() {
  usage=$(api GET /v1/shares | cut -d' ' -f2- | jq '[.. | objects | select(.account? == "ops") | .raw_usage // empty][0] // 0')
  jq -ne --argjson a "$charged" --argjson b "$usage" --argjson t "$tol" '($b - $a | fabs) <= $t' >/dev/null
}
deadline=$((SECONDS + 5))
until usage_ok || [ $SECONDS -ge $deadline ]; do sleep 0.2; done
usage_ok || fail "fair-share usage $usage != $charged charged by the rows of $(jq '.jobs | length' <<<"$rows") attempts ($archived earlier attempts of archived requeued jobs among them)"
ok "4. fair-share usage $usage = the rows' $charged (every attempt's; $archived earlier attempts of archived requeued jobs)"
# 5. stopped (SIGTERM), the agents leave no cgroup behind
for i in "${!AGENT_PIDS[@]}"; do kill "${AGENT_PIDS[$i]}" 2>/dev/null; done
for i in "${!AGENT_PIDS[@]}"; do wait "${AGENT_PIDS[$i]}" 2>/dev/null; AGENT_PIDS[$i]=; done
left=$(level_dirs)
[ -z "$left" ] || fail "cgroups left behind: $(for d in $left; do echo "$d: $(ls "$d")"; done | head -5)"
swept=$(sed -n 's/.*removed \([0-9]*\) cgroup.*/\1/p' "$T"/agents/*.log | awk '{s += $1} END {print s + 0}')
ok "5. no cgroup left behind ($(levels | wc -l) agent levels; restarts swept $swept stale groups)"
echo "chaos: passed with seed $SEED"
