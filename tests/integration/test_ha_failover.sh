#!/usr/bin/env bash
# High availability under kill -9 (issue 16): two controllers on a real
# PostgreSQL, four emulated nodes running real job processes, three clients
# submitting through the CLI with both addresses (PHALANX_SERVER=a,b), and
# the leader killed -9 at random moments, three times, each time started
# again as a standby. Then:
#   1. every acknowledged job exists and completes (nothing lost);
#   2. no job ran twice (each job's process appends to a marker of its own);
#   3. each job has one accounting row (attempt 0, none requeued);
#   4. fair-share usage is charged once: the GPU-seconds of the shares equal
#      those of the accounting rows (twice as much would be a double charge);
#   5. the agents and the CLI followed every takeover on their own, and the
#      journal rows carry the terms of the leaders that wrote them;
#   6. an accounts change made before the takeovers (sacctmgr, an ACCT
#      record the standbys follow) is every later leader's;
#   7. so is an operator's drain with its cause (worded like the health
#      check's, it stays the operator's: nodes/drain.c);
#   8. and its accounting row (sacctmgr show event) is one, still open:
#      written by the leader that took the drain, never by a standby
#      following the journal nor by a later leader replaying it.
source "$(dirname "$0")/lib_ha.sh"

start_ctl a
wait_until 20 "a leads" is_leader a
TOKEN=$("$PHALANX" server token --state-dir "$T/a" --user root)
start_ctl b
start_agent "$(url a),$(url b)"
export PHALANX_SERVER="$(url a),$(url b)" PHALANX_TOKEN=$TOKEN PHALANX_CONF=$T/slurm.conf PHALANX_TIMEOUT=30
idle() { [ "$(api /v1/nodes | jq '[.nodes[] | select(.state == "IDLE" and .name != "n05")] | length')" = 4 ]; }
wait_until 30 "four idle nodes" idle
"$BIN/phalanx" accounts -i add account haacct fairshare=7 >/dev/null || fail "accounts add on the leader"
curl -sf -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"reason":"HealthCheck: manual"}' \
  "$(url a)/v1/nodes/n05/drain" >/dev/null || fail "drain n05 on the leader"
ok "a leads, b stands by, four emulated nodes registered"

# clients: each acknowledged job is "marker job_id" in acked.K
client() {
  local k=$1 i=0
  while [ ! -f "$T/stop" ]; do
    i=$((i + 1))
    local m="c${k}_$i" id
    if id=$("$BIN/sbatch" --parsable --gres=gpu:1 -t 5 --wrap "echo \$\$ >> $T/marks/$m; sleep 0.2" 2>>"$T/client.$k.err"); then
      echo "$m $id" >>"$T/acked.$k"
    fi
    sleep 0.05 # a steady storm, not the most this machine can submit: the test stays short
  done
}
CLIENTS=()
for k in 1 2 3; do client $k & CLIENTS+=($!); done

for round in 1 2 3; do
  sleep "$(python3 -c 'import random; print(round(random.uniform(0.5, 2.5), 2))')"
  L=$(leader) || fail "no leader before round $round"
  t=$(term)
  kill -9 "$(cat "$T/$L.pid")"
  start_ctl "$L" # back, as a standby
  wait_until 20 "a new leader after killing $L (term $t)" new_leader_above "$t"
  ok "round $round: killed $L (term $t); $(leader) leads (term $(term))"
done
# the last leader takes jobs too: one more acknowledged before the clients stop
acked() { cat "$T"/acked.* 2>/dev/null | wc -l; }
more_acked() { [ "$(acked)" -gt "$1" ]; }
wait_until 30 "a job acknowledged by $(leader)" more_acked "$(acked)"
touch "$T/stop"
wait "${CLIENTS[@]}"
cat "$T"/acked.* >"$T/acked"
n=$(wc -l <"$T/acked")
[ "$n" -ge 10 ] || fail "only $n jobs acknowledged: $(cat "$T"/client.*.err | tail -5)"
ok "$n jobs acknowledged by the clients across three takeovers"

# 1. every acknowledged job exists and completes
ids=$(cut -d' ' -f2 "$T/acked" | paste -sd,)
all_done() {
  local ids_part done=0
  for ids_part in $(cut -d' ' -f2 "$T/acked" | xargs -n 50 | tr ' ' ','); do
    done=$((done + $(api "/v1/jobs?state=all&id=$ids_part&limit=100" | jq '[.jobs[] | select(.state == "COMPLETED")] | length')))
  done
  [ "$done" -eq "$n" ]
}
wait_until 60 "every acknowledged job COMPLETED" all_done
ok "1. every acknowledged job exists and COMPLETED"

# 2. none ran twice
bad=$(cd "$T/marks" && while read -r m id; do
  [ -f "$m" ] || { echo "job $id ($m) completed without running its process"; continue; }
done <"$T/acked"; awk 'FNR == 2 { print "ran twice: " FILENAME }' ./*)
[ -z "$bad" ] || fail "$bad"
ok "2. no job ran twice (one marker line each)"

# 3. one accounting row each, none requeued
rows=$(psql_q "SELECT count(*) FROM acct WHERE job_id IN ($ids)")
again=$(psql_q "SELECT count(*) FROM acct WHERE job_id IN ($ids) AND attempt > 0")
[ "$rows" -eq "$n" ] && [ "$again" -eq 0 ] || fail "accounting rows: $rows for $n jobs, $again requeued"
ok "3. one accounting row per job ($rows)"

# 4. usage charged once: the core's fair-share usage (GPU-seconds, decayed
#    little over a minute) against the accounting rows'
acct_gpu_s=$(psql_q "SELECT COALESCE(sum(ngpus * (end_time - start_time)), 0) FROM acct")
share=$(api /v1/shares | jq '[.. | objects | select(.name? == "ml" or .account? == "ml") | .raw_usage? // empty] | max // 0')
python3 - "$acct_gpu_s" "$share" <<'PY' || fail "fair-share usage $share GPU-s vs accounting $acct_gpu_s"
import sys
acct, share = float(sys.argv[1]), float(sys.argv[2])
# whole seconds in the rows, decay and jobs that ran under a second: loose, but
# a double charge (2x) or none (0) is far outside
sys.exit(0 if acct == 0 or 0.5 * acct <= share <= 1.5 * acct + 5 else 1)
PY
ok "4. fair-share usage charged once ($share GPU-s; accounting says $acct_gpu_s)"

# 5. the journal's newest rows carry the term of the leader now (older
#    terms' rows may have left for the archive at checkpoints)
top=$(psql_q "SELECT term FROM journal ORDER BY seq DESC LIMIT 1")
[ "$top" = "$(term)" ] || fail "the newest journal row has term $top, the leader term $(term)"
ok "5. journal rows carry the writer's term ($top); agents and CLI followed on their own"

# 6. the accounts change is the leader's now
[ "$("$BIN/phalanx" accounts -n -P show assoc where account=haacct format=account,share)" = "haacct|7" ] ||
  fail "the accounts change after the takeovers: $("$BIN/phalanx" accounts -n -P show assoc)"
ok "6. an accounts change made before the takeovers holds on the leader ($(leader))"

# 7. the drain's cause is the leader's now
n05=$(api /v1/nodes/n05 | jq -c '{reason, drain_cause}')
[ "$n05" = '{"reason":"HealthCheck: manual","drain_cause":"operator"}' ] || fail "n05 after the takeovers: $n05"
ok "7. an operator's drain made before the takeovers keeps its cause on the leader ($(leader)): $n05"

# 8. one node event for that drain, open (nodes/node_acct.c: live only)
rows=$(psql_q "SELECT state, reason, cause, time_end FROM node_event WHERE node = 'n05'")
[ "$rows" = "DRAIN|HealthCheck: manual|operator|0" ] || fail "n05's node events after the takeovers: $rows"
ok "8. the drain's accounting row written once, still open: $rows"
