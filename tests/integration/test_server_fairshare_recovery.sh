#!/usr/bin/env bash
# Fair share after a crash recovery, every attempt of a requeued job
# included. One job of pxalice (8 GPUs on n01, fake agent) is requeued twice
# (scontrol requeue: POST /v1/jobs/{id}/requeue) and completes: three
# attempts, each charging fair share from its start to its requeue or end.
# A checkpoint (--checkpoint-jobs 1) moves it from the journal to the
# archive; the server is killed with -9 and started again. Her raw usage
# (/v1/shares) must be what the three attempts charged, as before the kill:
#  1. no decay (PriorityDecayHalfLife=0): the sum of her accounting rows'
#     billable_tres_s, before the kill and after the restart;
#  2. a half-life of 60 s: usage decays from each charge's time, so the value
#     read after the restart is the one read just before the kill decayed by
#     the time between the reads, and each is the rows' attempts decayed from
#     their own ends to its time (U(t) * 2^(t/hl) does not change while nothing
#     runs, so each read gives the time it was computed at: within the read's).
# Run on SQLite, then (no decay) on PostgreSQL when its binaries are installed.
# Before: a restart charged an archived job's last attempt only (the earlier
# ones' starts and requeues had left the journal with it): 1/3 of the usage.
source "$(dirname "$0")/lib_server.sh"
command -v jq >/dev/null || fail "jq is in make deps"
command -v sqlite3 >/dev/null || fail "sqlite3 is in make deps"
HL=60
store=()
store_name=SQLite
db() { if [ ${#store[@]} -eq 0 ]; then sqlite3 "$STATE/state.db" "$1"; else psql -Atq "${store[1]}" -c "$1"; fi; }
# how many earlier attempts JOB's archive row keeps
archived_attempts() {
  if [ ${#store[@]} -eq 0 ]; then db "SELECT COALESCE(json_array_length(data, '\$.attempts'), 0) FROM archive WHERE job_id = $1"
  else db "SELECT COALESCE(json_array_length((data::json)->'attempts'), 0) FROM archive WHERE job_id = $1"; fi
}

config() { # PriorityDecayHalfLife
  cat >"$T/slurm.conf" <<CONF
ClusterName=test
HeartbeatInterval=2
SlurmdTimeout=600
KillWait=2
PriorityDecayHalfLife=$1
NodeName=n01 CPUs=64 RealMemory=512G Gres=gpu:h100:8
PartitionName=gpu Nodes=n01 Default=YES MaxTime=2-0 State=UP
CONF
  echo "Account=ml Fairshare=60 Users=pxalice" >"$T/accounts.conf"
}
usage() { api GET /v1/shares | cut -d' ' -f2- | jq '[.shares[] | select(.user == "pxalice") | .raw_usage][0] // 0'; }
restarts_is() { [ "$(api GET "/v1/jobs?id=$1" | cut -d' ' -f2- | jq -r '.jobs[0].restarts // 0')" = "$2" ]; }
running_attempt() { job_is "$1" RUNNING && restarts_is "$1" "$2"; }
start_of() { api GET "/v1/jobs?id=$1" | cut -d' ' -f2- | jq -r '.jobs[0].start_time'; }
ran_2s() { [ "$(date +%s)" -ge $(($(start_of "$1") + 2)) ]; } # each attempt charges 2 s at least
acct_rows() { expect 200 root GET "/v1/accounting?user=pxalice&since=1d" | jq -c '[.jobs[] | {restarts, start_time, end_time, billable_tres_s}]'; }
# usage_is WANT: pxalice's raw usage is WANT (to a millionth)
usage_is() { jq -ne --argjson u "$(usage)" --argjson w "$1" '($u - $w | fabs) <= 1e-6 * $w' >/dev/null; }

# A fresh read while usage decays: "U W0 W1", U first published after W0
# (the previous read's time) and by W1, so computed at a cycle's time (whole
# seconds) between about W0 - 2 and W1: a cycle runs once a second, the
# text is rebuilt once a second (checked with 5 s to spare for a loaded
# machine). An idle server publishes nothing: a held job's submit (which
# charges nothing) wakes it.
fresh_usage() {
  local u0 u w0 w1 deadline=$((SECONDS + 30))
  u0=$(usage)
  w0=$(date +%s.%N)
  while :; do
    u=$(usage)
    w1=$(date +%s.%N)
    [ "$u" != "$u0" ] && break
    [ $SECONDS -lt $deadline ] || fail "pxalice's usage $u0 did not decay in 30 s"
    w0=$w1
    expect 201 pxalice POST /v1/jobs '{"job":{"name":"poke","hold":true}}' >/dev/null
    sleep 0.2
  done
  echo "$u $w0 $w1"
}
# the time (s) at which the attempts of ROWS decayed to usage U: each charged
# rate * hl/ln2 * (1 - 2^-(dur/hl)) at its end, halved every hl after
implied_time() { # ROWS U
  jq -n --argjson r "$1" --argjson u "$2" --argjson hl "$HL" '
    ($r | map(.start_time) | min) as $t0
    | ($r | map((.billable_tres_s / (.end_time - .start_time)) * $hl / 0.6931471805599453
          * (1 - pow(2; -(.end_time - .start_time) / $hl)) * pow(2; (.end_time - $t0) / $hl)) | add) as $k
    | $t0 + $hl * (($k / $u) | log2)'
}
# within READ (U W0 W1) the rows' attempts give U's time
read_fits() { # ROWS READ
  local u w0 w1 t
  read -r u w0 w1 <<<"$2"
  t=$(implied_time "$1" "$u")
  jq -ne --argjson t "$t" --argjson a "$w0" --argjson b "$w1" '$t >= $a - 5 and $t <= $b + 1' >/dev/null ||
    fail "usage $u at $t by the rows' attempts, read between $w0 and $w1 ($store_name): $1"
  echo "$t"
}

scenario() { # half-life in seconds (0: no decay), as PriorityDecayHalfLife
  local hl=$1 v rows sum before after
  rm -rf "$STATE"
  config "$2"
  start_server --checkpoint-jobs 1 "${store[@]}"
  register_node n01
  v=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"fsr","gpus_per_node":8,"script":"#!/bin/sh\nsleep 100\n"}}' | jq -r .job_id)
  for n in 0 1; do
    wait_for "job $v running attempt $n" running_attempt "$v" "$n"
    wait_for "attempt $n of job $v running 2 s" ran_2s "$v"
    expect 200 pxalice POST "/v1/jobs/$v/requeue" >/dev/null
  done
  wait_for "job $v running attempt 2" running_attempt "$v" 2
  wait_for "attempt 2 of job $v running 2 s" ran_2s "$v"
  expect 200 root POST /v1/agent/report "{\"node\":\"n01\",\"job_id\":$v,\"state\":\"COMPLETED\",\"exit_code\":0,\"term_signal\":0,\"requeue_requested\":false,\"peak_mem_mib\":0,\"cpu_time_ms\":0,\"start_time\":0,\"end_time\":0,\"restart_count\":2}" >/dev/null
  wait_for "job $v completed" job_is "$v" COMPLETED
  archived() { [ "$(db "SELECT COUNT(*) FROM archive WHERE job_id = $v")" = 1 ]; }
  wait_for "job $v archived" archived
  [ "$(db "SELECT COUNT(*) FROM journal WHERE job_id = $v")" = 0 ] || fail "job $v's records left in the journal"
  [ "$(archived_attempts "$v")" = 2 ] || fail "job $v's archive row keeps $(archived_attempts "$v") earlier attempts, want 2"
  rows=$(acct_rows)
  [ "$(jq -c 'map(.restarts // 0)' <<<"$rows")" = '[0,1,2]' ] || fail "rows of job $v: $rows"
  jq -e 'all(.[]; .billable_tres_s > 0)' <<<"$rows" >/dev/null || fail "an attempt charged nothing: $rows"
  sum=$(jq 'map(.billable_tres_s) | add' <<<"$rows")

  if [ "$hl" = 0 ]; then
    wait_for "pxalice's usage = the rows' $sum before the kill" usage_is "$sum"
    stop_server KILL
    start_server --checkpoint-jobs 1 "${store[@]}"
    local deadline=$((SECONDS + 10))
    until usage_is "$sum" || [ $SECONDS -ge $deadline ]; do sleep 0.1; done
    usage_is "$sum" || fail "after kill -9 and restart: pxalice's usage $(usage), want the rows' $sum (3 attempts: $rows)"
    ok "no decay ($store_name): usage $sum = the 3 attempts' rows, before the kill and after the restart"
    [ ${#store[@]} -eq 0 ] && old_archive "$v" "$rows"
  else
    before=$(fresh_usage)
    local tb ta
    tb=$(read_fits "$rows" "$before")
    stop_server KILL
    start_server --checkpoint-jobs 1 "${store[@]}"
    after=$(fresh_usage)
    ta=$(read_fits "$rows" "$after")
    # the value after is the value before, decayed over the time between the reads
    read -r ub w0b w1b <<<"$before"
    read -r ua w0a w1a <<<"$after"
    jq -ne --argjson ub "$ub" --argjson ua "$ua" --argjson w0b "$w0b" --argjson w1b "$w1b" --argjson w0a "$w0a" \
      --argjson w1a "$w1a" --argjson hl "$hl" \
      '($hl * (($ub / $ua) | log2)) as $d | $d >= $w0a - $w1b - 5 and $d <= $w1a - $w0b + 5' >/dev/null ||
      fail "usage $ua after the restart is not $ub (before the kill) decayed over $w0b..$w1a"
    ok "half-life ${hl} s ($store_name): usage $ub before the kill, $ua after = it decayed $(jq -n "$ta - $tb | . * 10 | round / 10") s; both the 3 attempts' rows decayed from their own ends"
  fi
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID" || fail "the server exited $? on SIGTERM (a sanitizer's report: $(grep -m1 -A3 Sanitizer "$T/server.log"))"
  SERVER_PID=
}

# An archive row of an older server (no "attempts") still loads: its job as
# it was, its last attempt charged (what that server charged).
old_archive() { # JOB ROWS
  local last show
  stop_server KILL
  db "UPDATE archive SET data = json_remove(data, '\$.attempts') WHERE job_id = $1"
  [ "$(db "SELECT json_type(data, '\$.attempts') IS NULL FROM archive WHERE job_id = $1")" = 1 ] ||
    fail "attempts still in job $1's archive row"
  start_server "${store[@]}"
  show=$(expect 200 pxalice GET "/v1/jobs/$1")
  jq -e '.state == "COMPLETED" and .restarts == 2' <<<"$show" >/dev/null || fail "job $1 from an older archive row: $show"
  last=$(jq '.[-1].billable_tres_s' <<<"$2")
  wait_for "pxalice's usage = the last attempt's $last" usage_is "$last"
  ok "an older archive row (no attempts) loads: job $1 COMPLETED, restarts 2, its last attempt's $last charged"
}

scenario 0 0
scenario "$HL" 1:00
# no decay again on PostgreSQL
pg_store_or_done
scenario 0 0
