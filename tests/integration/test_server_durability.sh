#!/usr/bin/env bash
# Durability with real processes: 4 clients submit 20,000 jobs; the server is
# killed with SIGKILL at a random moment; after a restart every job a client
# heard yes for is there exactly once with its full spec, and no job is there
# twice. Then again with agents registered, so that the kill lands while
# scheduling cycles start jobs: after the restart no job was started twice
# (journal), and the jobs that were running are still running, not requeued.
# STORE_URL=postgresql://... runs it against PostgreSQL (test_server_pg.sh).
source "$(dirname "$0")/lib_server.sh"
NODE_TIMEOUT=600
write_config
sed -i 's/AllowRootJobs=NO/AllowRootJobs=YES/' "$T/slurm.conf"
echo "Account=ops Users=root" >>"$T/accounts.conf"
STORM=$(dirname "$PHALANX")/bench/bench_server
[ -x "$STORM" ] || fail "storm client $STORM not built"
store=(${STORE_URL:+--store "$STORE_URL"})

acked() { cat "$T"/ack/*/ack.* 2>/dev/null | wc -l; }

# run_storm KILL_AFTER TAG: storm in the background, SIGKILL after KILL_AFTER acks.
run_storm() {
  mkdir -p "$T/ack/$2"
  "$STORM" storm "$SOCK" 4 20000 "$T/ack/$2" "$2" >"$T/storm.out" 2>&1 &
  local storm=$!
  WAIT_S=180 wait_for "$1 acknowledgements" bash -c "[ \$(cat $T/ack/*/ack.* 2>/dev/null | wc -l) -ge $1 ]"
  kill -9 "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
  wait "$storm" || true # the clients stop at the first refused connection
}

# check_acked: every acknowledged job once, with its spec; no marker twice.
check_acked() {
  api GET "/v1/jobs?state=all" | cut -d' ' -f2- >"$T/all.json"
  jq -r '.jobs[] | select(.spec.name=="storm") | "\(.job_id) \(.spec.comment)"' "$T/all.json" | sort >"$T/have"
  sort "$T"/ack/*/ack.* >"$T/want"
  local missing dup
  missing=$(comm -23 "$T/want" "$T/have" | sed -n 1,5p)
  [ -z "$missing" ] || fail "acknowledged but missing after restart: $missing"
  dup=$(cut -d' ' -f2 "$T/have" | sort | uniq -d | sed -n 1,5p)
  [ -z "$dup" ] || fail "submitted twice: $dup"
  jq -e '[.jobs[] | select(.spec.name=="storm") | select(.spec.gpus_per_node!=1 or .spec.time_limit_s!=600)] | length==0' \
    "$T/all.json" >/dev/null || fail "spec fields changed"
  # the launch fields of a sample, from the full spec
  for line in $(shuf -n 20 "$T/want" 2>/dev/null | tr ' ' ':'); do
    local id=${line%%:*} mark=${line#*:} s
    s=$(expect 200 root GET "/v1/jobs/$id?spec=full")
    [ "$(jq -r .spec.script <<<"$s")" = "$(printf '#!/bin/sh\n# marker %s\nsleep 1' "$mark")" ] || fail "job $id script: $s"
    [ "$(jq -r '.spec.env[0]' <<<"$s")" = "PX_MARK=$mark" ] || fail "job $id env"
  done
}

# 1. a storm, killed at a random moment
start_server "${store[@]}"
run_storm $((2000 + RANDOM % 12000)) r1-
n=$(acked)
start_server "${store[@]}"
check_acked
ok "kill -9 after $n acknowledged submits: all present once with full spec"

# 2. agents registered: cycles start jobs during the storm
for node in n01 n02 n03 n04; do register_node $node; done
run_storm $(( $(acked) + 500 + RANDOM % 3000 )) r2-
start_server "${store[@]}"
check_acked
running=$(jq -r '[.jobs[] | select(.state=="RUNNING") | .job_id] | length' "$T/all.json")
[ "$running" -gt 0 ] || fail "no job was running at the kill (nothing tested)"
# the scheduler holds their exact GPUs again (their START events, px_core_apply): before any
# agent is back (nodes DOWN, so no cycle starts anything), each node's
# allocated GPUs are those of the jobs the journal runs there
nodes=$(api GET /v1/nodes | cut -d' ' -f2-)
for node in n01 n02 n03 n04; do
  want=$(jq --arg n $node '[.jobs[] | select(.state=="RUNNING" and .nodelist==$n) | .ngpus] | add // 0' "$T/all.json")
  have=$(jq --arg n $node '.nodes[] | select(.name==$n) | .gpus_alloc // 0' <<<"$nodes")
  [ "$want" = "$have" ] || fail "$node: $have GPUs allocated after recovery, its running jobs hold $want"
done
# agents come back knowing what they run: those jobs stay RUNNING
for node in n01 n02 n03 n04; do
  known=$(jq -c --arg n $node '[.jobs[] | select(.state=="RUNNING" and .nodelist==$n) | {job_id, state:"RUNNING", exit_code:0, term_signal:0}]' "$T/all.json")
  register_node $node "$known"
done
api GET "/v1/jobs?state=RUNNING" | cut -d' ' -f2- | jq -r '.jobs[].job_id' | sort >"$T/run_after"
jq -r '.jobs[] | select(.state=="RUNNING") | .job_id' "$T/all.json" | sort >"$T/run_before"
[ -z "$(comm -23 "$T/run_before" "$T/run_after")" ] || fail "running jobs not kept after recovery"
# and no node is held drained for them
wait_for "nodes registered" bash -c "curl -s --unix-socket $SOCK http://x/v1/nodes | jq -e '[.nodes[] | select(.state==\"DOWN\")] | length == 0'"
drained=$(api GET /v1/nodes | cut -d' ' -f2- | jq -r '[.nodes[] | select(.state|test("DRAIN")) | .name] | join(",")')
[ -z "$drained" ] || fail "nodes drained after recovery: $drained"
stop_server TERM
if [ -z "${STORE_URL:-}" ]; then
  twice=$(sqlite3 "$STATE/state.db" "SELECT job_id FROM journal WHERE kind='start' GROUP BY job_id HAVING COUNT(*) > 1 LIMIT 5")
else
  twice=$(psql -Atq "$STORE_URL" -c "SELECT job_id FROM journal WHERE kind='start' GROUP BY job_id HAVING COUNT(*) > 1 LIMIT 5")
fi
[ -z "$twice" ] || fail "started twice: $twice"
ok "kill -9 while cycles start jobs: $running running jobs kept, none started twice"
