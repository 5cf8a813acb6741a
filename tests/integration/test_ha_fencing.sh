#!/usr/bin/env bash
# High availability: fencing and a database restart (issue 16).
#   1. a leader paused (SIGSTOP) past its lease while clients wait on it and
#      a job of its is due to start: the standby takes over and starts the
#      job; the old leader, continued (SIGCONT), writes nothing (no journal
#      row of its term after the takeover), starts nothing (the job ran
#      once) and exits 75 (deposed) to come back as a standby; every job a
#      client heard "Submitted" for exists;
#   2. PostgreSQL restarted under both controllers: they reconnect, one
#      leads, a job submitted afterwards runs, nothing acknowledged is lost;
#   3. the real agent (processes, cgroups) follows a kill -9 of the leader:
#      a job submitted after it runs on its node, once.
source "$(dirname "$0")/lib_ha.sh"

start_ctl a
wait_until 20 "a leads" is_leader a
TOKEN=$("$PHALANX" server token --state-dir "$T/a" --user root)
start_ctl b
start_agent "$(url a),$(url b)"
start_real_agent "$(url a),$(url b)"
export PHALANX_TOKEN=$TOKEN PHALANX_CONF=$T/slurm.conf PHALANX_TIMEOUT=20
export PHALANX_SERVER="$(url a),$(url b)"
idle() { [ "$(api /v1/nodes | jq '[.nodes[] | select(.state == "IDLE" and .name != "n05")] | length')" = 4 ]; }
wait_until 30 "four idle nodes" idle
ping=$("$BIN/scontrol" ping)
echo "$ping" | grep -q "^Slurmctld(primary) at $(url a) is UP (term 1, lag 0)" &&
  echo "$ping" | grep -q "^Slurmctld(backup1) at $(url b) is UP (term 1" || fail "scontrol ping: $ping"
ok "a leads, b stands by, four nodes; scontrol ping shows both"


submit() { # MARKER [sbatch options...]: prints the job id when acknowledged
  local m=$1; shift
  "$BIN/sbatch" --parsable --gres=gpu:1 -t 5 "$@" --wrap "echo \$\$ >> $T/marks/$m; sleep 0.5"
}
ran_once() { [ "$(wc -l <"$T/marks/$1" 2>/dev/null)" = 1 ]; }
state() { api "/v1/jobs?state=all&id=$1" | jq -r '.jobs[0].state'; }
is_state() { [ "$(state "$1")" = "$2" ]; }

# 1. fencing
X=$(submit x --begin=now+4) || fail "submit x"
t=$(term)
A=$(cat "$T/a.pid")
kill -STOP "$A"
# clients that asked the paused leader itself (only its address)
PAUSED=()
for k in 1 2 3; do
  (PHALANX_SERVER=$(url a) submit "p$k" >"$T/paused.$k" 2>/dev/null) &
  PAUSED+=($!)
done
wait_until 20 "b leads after a paused" new_leader_above "$t"
t2=$(term)
ok "a paused (SIGSTOP); b leads, term $t2"
wait_until 30 "job $X started by b" is_state "$X" RUNNING
first=$(psql_q "SELECT min(seq) FROM journal WHERE term = $t2")
kill -CONT "$A"
wait_until 20 "a exits deposed (75)" grep -q "exit 75" "$T/a.exits"
wait "${PAUSED[@]}"
late=$(psql_q "SELECT count(*) FROM journal WHERE term = $t AND seq > $first")
[ "$late" = 0 ] || fail "the deposed leader wrote $late journal rows after the takeover"
wait_until 30 "job $X completed" is_state "$X" COMPLETED
ran_once x || fail "job $X ran $(wc -l <"$T/marks/x" 2>/dev/null) times"
for k in 1 2 3; do
  id=$(cat "$T/paused.$k")
  [ -z "$id" ] || [ "$(state "$id")" != null ] || fail "job $id acknowledged by the paused leader is lost"
done
grep -q "no longer the leader\|lost the lease" "$T/a.log" || fail "a did not say why it stopped"
ok "1. continued, a wrote nothing after the takeover, started nothing (job $X ran once, by b) and exited 75"
wait_until 30 "a back as a standby" sh -c "\"$PHALANX\" server status --store '$CONN' --json | jq -e '.controllers[] | select(.name == \"a\" and .role == \"standby\" and .age_ms < 1500)'"

# 2. database restart
before=$(api "/v1/jobs?state=all" | jq '.jobs | length')
bash "$HERE/pg_ctl.sh" restart "$T/db" || fail "PostgreSQL did not restart"
wait_until 40 "a leader after the database restart" sh -c "\"$PHALANX\" server status --store '$CONN' --json | jq -e '[.controllers[] | select(.role == \"leader\" and .age_ms < 1500)] | length == 1'"
Y=$(PHALANX_TIMEOUT=30 submit y) || fail "submit after the database restart"
wait_until 30 "job $Y completed" is_state "$Y" COMPLETED
after=$(api "/v1/jobs?state=all" | jq '.jobs | length')
[ "$after" -ge "$before" ] || fail "jobs before the restart: $before, after: $after"
ran_once y || fail "job $Y ran more than once"
ok "2. database restarted: $(leader) leads (term $(term)), job $Y ran, $after jobs known ($before before)"

# 3. the real agent follows a takeover
n05_up() { api /v1/nodes/n05 | jq -e '.state == "IDLE"'; }
wait_until 30 "n05 (real agent) idle" n05_up
standby_up() { status_json | jq -e '[.controllers[] | select(.role == "standby" and .age_ms < 1500)] | length == 1'; }
wait_until 30 "a standby to take over (one may be restarting after the database restart)" standby_up
t=$(term)
kill -9 "$(cat "$T/$(leader).pid")"
Z=""
for try in 1 2 3; do Z=$(submit z -p solo) && break; done # a connection the dying leader took is reset
[ -n "$Z" ] || fail "submit to the real agent's node after the kill"
wait_until 30 "a new leader" new_leader_above "$t"
wait_until 40 "job $Z completed on n05" is_state "$Z" COMPLETED
ran_once z || fail "job $Z ran $(wc -l <"$T/marks/z" 2>/dev/null) times"
ok "3. the real agent followed the takeover to $(leader) (term $(term)): job $Z ran on n05 once"
