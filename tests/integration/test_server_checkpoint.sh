#!/usr/bin/env bash
# Checkpoints: finished jobs move from the journal to the archive (one
# transaction), except those a live job's dependency names; after a kill -9
# the server rebuilds the same table from archive + journal, and job ids go
# on from the highest one. Also: Operators= in the configuration and
# --operators on the command line both count; reservations created through
# the API (administrators) are journaled and survive the restart. STORE_URL=postgresql://...
# runs it against PostgreSQL (test_server_pg.sh).
source "$(dirname "$0")/lib_server.sh"
write_config
echo "Operators=pxbob" >>"$T/slurm.conf"
store=(${STORE_URL:+--store "$STORE_URL"})
start_server --checkpoint-jobs 8 "${store[@]}" # all 8 ended before the first checkpoint, however slow the cancels

# 8 jobs, and a 9th that depends on the first
ids=$(expect 201 pxalice POST /v1/jobs '{"jobs":[{"name":"c1"},{"name":"c2"},{"name":"c3"},{"name":"c4"},{"name":"c5"},{"name":"c6"},{"name":"c7"},{"name":"c8"}]}')
[ "$(jq -c .job_ids <<<"$ids")" = "[1,2,3,4,5,6,7,8]" ] || fail "ids $ids"
expect 201 pxalice POST /v1/jobs '{"job":{"name":"dep","dependency":"afterany:1","hold":true}}' >/dev/null
for id in 1 2 3 4 5 6 7 8; do expect 200 pxalice DELETE "/v1/jobs/$id" >/dev/null; done
before=$(expect 200 pxalice GET "/v1/jobs?state=all" | jq -c '[.jobs[] | {job_id, state, cancelled_by, name: .spec.name, submit_time, end_time}]')

if [ -z "${STORE_URL:-}" ]; then
  db() { sqlite3 "$STATE/state.db" "$1"; }
else
  db() { psql -Atq "$STORE_URL" -c "$1"; }
fi
archived() { [ "$(db 'SELECT COUNT(*) FROM archive')" = 7 ]; }
wait_for "7 jobs archived" archived
[ "$(db 'SELECT job_id FROM archive ORDER BY job_id' | tr '\n' ' ')" = "2 3 4 5 6 7 8 " ] ||
  fail "archived: $(db 'SELECT job_id FROM archive' | tr '\n' ' ')"
left=$(db 'SELECT COUNT(*) FROM journal WHERE job_id BETWEEN 2 AND 8')
[ "$left" = 0 ] || fail "$left journal records of archived jobs left"
[ "$(db 'SELECT COUNT(*) FROM journal WHERE job_id = 1')" -ge 2 ] || fail "job 1 (a dependency) left the journal"
ok "checkpoint: finished jobs archived and out of the journal; a dependency kept"

# a reservation through the API: administrators only, checked, journaled
now=$(date +%s)
resv="{\"name\":\"train\",\"start_s\":$((now + 3600)),\"duration_s\":7200,\"nodes\":[\"n03\"],\"account\":\"ml\"}"
e=$(expect 403 pxalice POST /v1/reservations "$resv")
grep -q "rule admin" <<<"$e" || fail "reservation by a user: $e"
e=$(expect 400 root POST /v1/reservations '{"name":"x","duration_s":60,"nodes":["zz9"],"account":"ml"}')
[ "$(jq -r .error.field <<<"$e")" = nodes ] || fail "unknown node: $e"
e=$(expect 400 root POST /v1/reservations '{"name":"x","duration_s":60,"nodes":["n01"],"account":"ml","color":1}')
[ "$(jq -r .error.field <<<"$e")" = color ] || fail "unknown field: $e"
expect 400 root POST /v1/reservations '{"name":"x","nodes":["n01"],"account":"ml"}' >/dev/null
expect 201 root POST /v1/reservations "$resv" >/dev/null
expect 409 root POST /v1/reservations "$resv" >/dev/null
l=$(expect 200 pxalice GET /v1/reservations)
[ "$(jq -c '.reservations[] | select(.name=="train") | [.nodes, .account, .end_s - .start_s]' <<<"$l")" = '[["n03"],"ml",7200]' ] ||
  fail "reservation listed: $l"
ok "reservation created by an administrator, refused to others and when bad"

# kill -9 and restart: the same jobs, the same fields; ids go on
stop_server KILL
start_server --checkpoint-jobs 5 "${store[@]}"
after=$(expect 200 pxalice GET "/v1/jobs?state=all" | jq -c '[.jobs[] | {job_id, state, cancelled_by, name: .spec.name, submit_time, end_time}]')
[ "$after" = "$before" ] || fail "after restart: $after, before: $before"
[ "$(jq -r '.[] | select(.job_id==3) | .state' <<<"$after")" = CANCELLED ] || fail "job 3: $after"
[ "$(jq -r '.[] | select(.job_id==9) | .state' <<<"$after")" = PENDING ] || fail "job 9: $after"
full=$(expect 200 pxalice GET "/v1/jobs/5?spec=full")
[ "$(jq -r .spec.name <<<"$full")" = c5 ] || fail "archived job 5: $full"
new=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"next"}}')
[ "$(jq .job_id <<<"$new")" = 10 ] || fail "next id after recovery: $new"
expect 200 pxalice DELETE /v1/jobs/10 >/dev/null # it must not run on n01 below and add usage
ok "restart from archive + journal: same jobs, ids go on"
[ "$(expect 200 pxalice GET /v1/reservations | jq -c '.reservations | map(.name)')" = '["train"]' ] ||
  fail "reservation lost in the restart"
expect 409 root POST /v1/reservations "$resv" >/dev/null # the core has it again
ok "reservation kept across the restart"

# roles: Operators= (configuration) and --operators (command line) together
expect 200 pxbob POST /v1/nodes/n01/drain '{"reason":"conf operator"}' >/dev/null
expect 200 pxoper POST /v1/nodes/n01/resume '{}' >/dev/null
expect 403 pxalice POST /v1/nodes/n01/drain '{"reason":"not an operator"}' >/dev/null
ok "operators from the configuration and the command line"

# fair share survives a checkpoint and a restart: five jobs run on n01 (a
# fake agent) for a second or more, end, are archived; pxalice's usage is
# what the runs charged, before and after a kill -9
# (a server that archives every finished job at once, so the five are
# archived whatever else finishes beside them)
stop_server TERM
start_server --checkpoint-jobs 1 "${store[@]}"
register_node n01
ran=$(expect 201 pxalice POST /v1/jobs '{"jobs":[{"name":"r1","gpus_per_node":1},{"name":"r2","gpus_per_node":1},{"name":"r3","gpus_per_node":1},{"name":"r4","gpus_per_node":1},{"name":"r5","gpus_per_node":1}]}' | jq -r '.job_ids[]')
for id in $ran; do wait_for "job $id running" job_is "$id" RUNNING; done
last_start=$(api GET "/v1/jobs?state=all" | cut -d' ' -f2- | jq '[.jobs[] | .start_time // 0] | max')
wait_for "a second of run time" eval '[ "$(date +%s)" -gt '"$last_start"' ]'
for id in $ran; do
  expect 200 root POST /v1/agent/report "{\"node\":\"n01\",\"job_id\":$id,\"state\":\"COMPLETED\",\"exit_code\":0,\"term_signal\":0,\"requeue_requested\":false,\"peak_mem_mib\":0,\"cpu_time_ms\":0,\"start_time\":0,\"end_time\":0}" >/dev/null
  wait_for "job $id completed" job_is "$id" COMPLETED
done
in_archive() { [ "$(db "SELECT COUNT(*) FROM archive WHERE job_id IN ($(tr ' \n' ',,' <<<"$ran" | sed 's/,*$//'))")" = 5 ]; }
wait_for "the five jobs archived" in_archive
# What the five runs charged, worked out from their records alone: CPUs x
# run seconds (no billing weights configured; a half-life of days decays a
# few seconds by far less than the 0.1% allowed). The shares are published
# at most once a second: wait for them, before and after the restart.
ids_json=$(jq -sc . <<<"$ran")
want=$(api GET "/v1/jobs?state=all" | cut -d' ' -f2- |
  jq --argjson ids "$ids_json" '[.jobs[] | select(.job_id as $i | $ids | index($i)) | .ncpus * (.end_time - .start_time)] | add')
[ "$(jq "$want > 0" <<<true)" = true ] || fail "the five runs took no time: $want"
alice_usage() { expect 200 pxalice GET /v1/shares | jq '[.shares[] | select(.user=="pxalice") | .raw_usage // 0] | add'; }
jobs_seen() { api GET "/v1/jobs?state=all" | cut -d' ' -f2- | jq -c '[.jobs[] | [.job_id, .state, .ncpus, .start_time, .end_time]]'; }
wait_usage() { # wait_for, with what was seen when it gives up
  local deadline=$((SECONDS + 30))
  until usage_is_want; do
    [ $SECONDS -lt $deadline ] || fail "pxalice's usage $(alice_usage), want $want: $(jobs_seen)"
    sleep 0.05
  done
}
usage_is_want() { jq -e --argjson u "$(alice_usage)" --argjson w "$want" -n '($u - $w | fabs) <= 0.001 * $w' >/dev/null; }
wait_usage
stop_server KILL
start_server --checkpoint-jobs 1 "${store[@]}"
wait_usage
ok "fair-share usage of archived jobs kept across the restart ($want CPU-seconds)"
stop_server TERM
