#!/usr/bin/env bash
# Job arrays through the server, as Slurm shows them: while tasks are left
# to start, the listing has one record for them (array_job_id = job_id,
# array_pending "2-5%2", the throttle kept) and one per started task; once
# none is left that record is no longer listed (show still finds it, its
# state following the tasks); accounting has rows for the tasks only.
# Cancelling the array cancels its pending remainder and its running tasks.
# All of it survives a kill -9 (journal replay). A fake agent reports ends.
source "$(dirname "$0")/lib_server.sh"
write_config
start_server

NONE=4294967295
list() { api GET "/v1/jobs$1" | cut -d' ' -f2-; }
# the array record's line in the listing: "STATE PENDING-TASKS", or nothing
record_line() { list "?id=$1" | jq -r --argjson a "$1" '.jobs[] | select(.job_id==$a) | "\(.state) \(.array_pending)"'; }
record_is() { [ "$(record_line "$1")" = "$2" ]; }
report() { # report JOB STATE [EXIT]
  expect 200 root POST /v1/agent/report "{\"node\":\"n01\",\"job_id\":$1,\"state\":\"$2\",\"exit_code\":${3:-0},\"term_signal\":0,\"requeue_requested\":false,\"peak_mem_mib\":0,\"cpu_time_ms\":0,\"start_time\":0,\"end_time\":0}" >/dev/null
}
# (array_task_id 0 is left out of the JSON as a default, as every zero)
running() { list "?id=$1&state=RUNNING" | jq -r '[.jobs[] | .array_task_id // 0] | sort | map(tostring) | join(",")'; }
running_is() { [ "$(running "$1")" = "$2" ]; }

# 1. before any node: one line for the whole array, with its throttle
a=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"sweep","array":"0-5%2","gpus_per_node":1,"script":"#!/bin/sh\ntrue\n"}}' | jq .job_id)
l=$(list "?id=$a")
[ "$(jq '.jobs|length' <<<"$l")" = 1 ] || fail "array listed as $(jq -c '[.jobs[].job_id]' <<<"$l")"
jq -e --argjson a "$a" --argjson none $NONE '.jobs[0] | .job_id==$a and .array_job_id==$a and .array_task_id==$none and .array_pending=="0-5%2" and .state=="PENDING"' <<<"$l" >/dev/null ||
  fail "pending array record: $(jq -c '.jobs[0] | {job_id,array_job_id,array_task_id,array_pending,state}' <<<"$l")"
ok "pending array: one record J_[0-5%2]"

# 2. n01 comes: two tasks start (%2), the record keeps the rest
register_node n01
WAIT_S=15 wait_for "tasks 0,1 running" running_is "$a" 0,1
record_is "$a" "PENDING 2-5%2" || fail "record after 2 starts: $(record_line "$a")"
l=$(list "?id=$a&state=RUNNING")
jq -e --argjson a "$a" '[.jobs[] | .array_job_id==$a and .job_id==$a+1+(.array_task_id // 0)] | all' <<<"$l" >/dev/null ||
  fail "task ids: $(jq -c '[.jobs[] | {job_id,array_job_id,array_task_id}]' <<<"$l")"
report $((a + 1)) COMPLETED
wait_for "task 2 started" running_is "$a" 1,2
record_is "$a" "PENDING 3-5%2" || fail "record after task 0 ended: $(record_line "$a")"
ok "started tasks listed as J_N, the record as J_[3-5%2]"

# 3. kill -9 and restart: the same picture from the journal
stop_server KILL
start_server
record_is "$a" "PENDING 3-5%2" || fail "record after restart: $(record_line "$a")"
register_node n01 '[{"job_id":'$((a + 2))',"state":"RUNNING","exit_code":0,"term_signal":0},{"job_id":'$((a + 3))',"state":"RUNNING","exit_code":0,"term_signal":0}]'
running_is "$a" 1,2 || fail "running tasks after restart: $(running "$a")"
ok "array progress survives kill -9"

# 4. every task started: the record leaves the listing, show follows the tasks
for t in 2 3 4; do
  report $((a + t)) COMPLETED
  wait_for "task $((t + 1)) started" bash -c "curl -s --unix-socket $SOCK 'http://x/v1/jobs?id=$((a + t + 2))' | jq -e '.jobs[0].state==\"RUNNING\"'"
done
wait_for "record unlisted" bash -c "[ -z \"\$(curl -s --unix-socket $SOCK 'http://x/v1/jobs?id=$a' | jq -r '.jobs[] | select(.job_id==$a) | .job_id')\" ]"
[ -z "$(list "?state=all" | jq -r --argjson a "$a" '.jobs[] | select(.job_id==$a) | .job_id')" ] || fail "record listed with state=all"
[ "$(expect 200 pxalice GET /v1/jobs/$a | jq -r .state)" = RUNNING ] || fail "record state while tasks run"
report $((a + 5)) COMPLETED
report $((a + 6)) FAILED 3
wait_for "array ended" bash -c "curl -s --unix-socket $SOCK http://x/v1/jobs/$a | jq -e '.state==\"FAILED\"'"
acct=$(expect 200 pxalice GET "/v1/accounting?user=pxalice")
[ "$(jq --argjson a "$a" '[.jobs[] | select(.array_job_id==$a)] | length' <<<"$acct")" = 6 ] || fail "task rows: $acct"
[ "$(jq --argjson a "$a" '[.jobs[] | select(.job_id==$a)] | length' <<<"$acct")" = 0 ] || fail "the array record has an accounting row: $acct"
ok "no line once all started; FAILED when a task failed; accounting rows of tasks only"

# 5. scancel of the array: running tasks and the pending remainder
b=$(expect 201 pxbob POST /v1/jobs '{"job":{"name":"c","array":"1,3,5,7%1","gpus_per_node":1}}' | jq .job_id)
wait_for "task 1 running" running_is "$b" 1
record_is "$b" "PENDING 3,5,7%1" || fail "list remainder: $(record_line "$b")"
expect 200 pxbob DELETE /v1/jobs/$b >/dev/null
work=$(expect 200 root GET "/v1/agent/work?node=n01&after=0&timeout=5")
jq -e --argjson t $((b + 1)) '[.signal[] | select(.job_id==$t)] | length > 0' <<<"$work" >/dev/null || fail "no stop order for the running task: $work"
report $((b + 1)) CANCELLED 0
wait_for "array cancelled" bash -c "curl -s --unix-socket $SOCK http://x/v1/jobs/$b | jq -e '.state==\"CANCELLED\" and .cancelled_by==\"pxbob\"'"
[ "$(expect 200 pxbob GET /v1/jobs/$((b + 1)) | jq -r .state)" = CANCELLED ] || fail "running task not cancelled"
expect 404 pxbob GET /v1/jobs/$((b + 2)) >/dev/null # never started: no record
[ -z "$(record_line "$b")" ] || fail "cancelled array still listed: $(record_line "$b")"
acct=$(expect 200 pxbob GET "/v1/accounting?user=pxbob")
[ "$(jq -c '[.jobs[] | [.job_id, .state]]' <<<"$acct")" = "[[$((b + 1)),\"CANCELLED\"]]" ] || fail "accounting after cancel: $acct"
ok "scancel J: running task stopped, remainder dropped, record CANCELLED"

# 6. after another restart the ended arrays keep their states; nothing restarts
stop_server KILL
start_server
register_node n01
[ "$(expect 200 pxalice GET /v1/jobs/$a | jq -r .state)" = FAILED ] || fail "array $a after restart"
[ "$(expect 200 pxbob GET /v1/jobs/$b | jq -r .state)" = CANCELLED ] || fail "array $b after restart"
none_back() { [ -z "$(list "?state=RUNNING,PENDING" | jq -r '.jobs[].job_id')" ] || fail "jobs back after restart: $(list "?state=RUNNING,PENDING")"; }
holds_for 2 none_back # two cycles: nothing of either array runs again
ok "ended arrays stay ended across restarts"

# 7. a finished task whose start the core cannot take back at recovery (n01
# shrank under its allocation): its index stays used in the core's array
# (px_core_array_skip), its replayed end is counted there, so the core
# never starts its id again and the array ends as it did
c=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"r","array":"0-1","cpus_per_task":20}}' | jq .job_id)
wait_for "both tasks running" running_is "$c" 0,1
report $((c + 1)) COMPLETED
report $((c + 2)) COMPLETED
wait_for "array $c completed" bash -c "curl -s --unix-socket $SOCK http://x/v1/jobs/$c | jq -e '.state==\"COMPLETED\"'"
stop_server KILL
sed -i 's/^NodeName=n\[01-04\] .*/NodeName=n01 CPUs=16 RealMemory=512G Gres=gpu:h100:8\nNodeName=n[02-04] CPUs=64 RealMemory=512G Gres=gpu:h100:8/' "$T/slurm.conf"
start_server
grep -q "job $((c + 1)) runs outside the scheduler" "$T/server.log" || fail "task restore did not fail as the test needs"
for n in n01 n02 n03 n04; do register_node $n; done
no_relaunch() { # no_relaunch ARRAY NODE...: no launch order of the array's tasks
  local a=$1 n work; shift
  for n in "$@"; do
    work=$(expect 200 root GET "/v1/agent/work?node=$n&after=0&timeout=0")
    [ "$(jq --argjson a "$a" '[.launch[] | select(.array_job_id==$a)] | length' <<<"$work")" = 0 ] || fail "relaunched on $n: $work"
  done
}
holds_for 2 no_relaunch "$c" n01 n02 n03 n04 # two cycles: nothing of the array starts again
for t in 1 2; do
  [ "$(expect 200 pxalice GET /v1/jobs/$((c + t)) | jq -r .state)" = COMPLETED ] || fail "task $((c + t)) ran again"
done
[ "$(expect 200 pxalice GET /v1/jobs/$c | jq -r .state)" = COMPLETED ] || fail "array $c after recovery"
! grep -q "array task $((c + 1)) already ended" "$T/server.log" || fail "the core started task $((c + 1)) again"
wait_for "no CPUs held" bash -c "curl -s --unix-socket $SOCK http://x/v1/nodes | jq -e '[.nodes[].cpus_alloc // 0] | add == 0'"
ok "finished tasks the core could not restore keep their index: not started again"

# 8. the same for a task still RUNNING at the restart (its GPUs 4-7 are gone
# from n01): the core must not start its id again elsewhere while it runs;
# its end, reported later, ends the array
sed -i 's/^NodeName=n01 .*/NodeName=n01 CPUs=64 RealMemory=512G Gres=gpu:h100:8/' "$T/slurm.conf"
stop_server TERM
start_server
register_node n01
d=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"g","array":"0-1","gpus_per_node":4}}' | jq .job_id)
wait_for "both tasks running on n01" running_is "$d" 0,1
stop_server KILL
sed -i 's/^NodeName=n01 .*/NodeName=n01 CPUs=64 RealMemory=512G Gres=gpu:h100:4/' "$T/slurm.conf"
start_server
grep -q "job $((d + 2)) runs outside the scheduler" "$T/server.log" || fail "task $((d + 2)) restore did not fail as the test needs"
known="[{\"job_id\":$((d + 1)),\"state\":\"RUNNING\",\"exit_code\":0,\"term_signal\":0},{\"job_id\":$((d + 2)),\"state\":\"RUNNING\",\"exit_code\":0,\"term_signal\":0}]"
register_node n01 "$known"
for n in n02 n03 n04; do register_node $n; done # room for task 1 elsewhere
stay_on_n01() { no_relaunch "$d" n02 n03 n04; running_is "$d" 0,1 || fail "tasks after recovery: $(list "?id=$d")"; }
holds_for 2 stay_on_n01
[ "$(expect 200 pxalice GET /v1/jobs/$((d + 2)) | jq -r .nodelist)" = n01 ] || fail "task 1 moved"
report $((d + 1)) COMPLETED
report $((d + 2)) COMPLETED
wait_for "array $d completed" bash -c "curl -s --unix-socket $SOCK http://x/v1/jobs/$d | jq -e '.state==\"COMPLETED\"'"
wait_for "n01 no longer held" bash -c "curl -s --unix-socket $SOCK http://x/v1/nodes | jq -e '.nodes[] | select(.name==\"n01\") | .state | test(\"DRAIN\") | not'"
stop_server TERM
starts=$(sqlite3 "$STATE/state.db" "SELECT COUNT(*) FROM journal WHERE kind='start' AND job_id=$((d + 2))")
[ "$starts" = 1 ] || fail "task $((d + 2)) started $starts times"
ok "a running task the core could not restore is not started twice; its end ends the array"

# 9. checkpoints: an array leaves the journal whole (record and tasks) once
# its record ended, not before; after a kill -9 it is rebuilt from the
# archive as it was, nothing of it runs again, and ids go on past every id
# an array reserved (also a cancelled one's unstarted tasks)
db() { sqlite3 "$STATE/state.db" "$1"; }
start_server --checkpoint-jobs 1
for n in n01 n02 n03 n04; do register_node $n; done
e=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"arch","array":"0-2","cpus_per_task":2}}' | jq .job_id)
wait_for "array $e running" running_is "$e" 0,1,2
report $((e + 1)) COMPLETED
report $((e + 2)) COMPLETED
not_archived() { [ "$(db "SELECT COUNT(*) FROM archive WHERE job_id BETWEEN $e AND $((e + 3))")" = 0 ] || fail "array $e archived while a task runs"; }
holds_for 2 not_archived # a checkpoint's time (timers run every second): the live array stays
report $((e + 3)) FAILED 3
wait_for "array $e archived" bash -c "[ \$(sqlite3 $STATE/state.db 'SELECT COUNT(*) FROM archive WHERE job_id BETWEEN $e AND $((e + 3))') = 4 ]"
[ "$(db "SELECT COUNT(*) FROM journal WHERE job_id BETWEEN $e AND $((e + 3))")" = 0 ] || fail "records of array $e left in the journal"
for x in "$a" "$b" "$c" "$d"; do # the ended arrays of the sections above went too
  [ "$(db "SELECT COUNT(*) FROM journal WHERE job_id = $x")" = 0 ] || fail "array $x left in the journal"
done
# cancelled with tasks never started: their ids stay reserved
g=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"arch2","array":"0-3%1","cpus_per_task":2}}' | jq .job_id)
wait_for "array $g task 0 running" running_is "$g" 0
expect 200 pxalice DELETE "/v1/jobs/$g" >/dev/null
report $((g + 1)) CANCELLED
wait_for "array $g archived" bash -c "[ \$(sqlite3 $STATE/state.db 'SELECT COUNT(*) FROM archive WHERE job_id BETWEEN $g AND $((g + 4))') = 2 ]"
shown() { expect 200 pxalice GET "/v1/jobs/$1" | jq -c '{job_id, state, array_job_id, array_task_id, array_pending, exit_code}'; }
before=$(for x in "$b" "$e" $((e + 1)) $((e + 3)) "$g" $((g + 1)); do shown "$x"; done)
stop_server KILL
start_server --checkpoint-jobs 1
for n in n01 n02 n03 n04; do register_node $n; done
after=$(for x in "$b" "$e" $((e + 1)) $((e + 3)) "$g" $((g + 1)); do shown "$x"; done)
[ "$after" = "$before" ] || fail "after restart: $after, before: $before"
[ "$(expect 200 pxalice GET /v1/jobs/$e | jq -r .state)" = FAILED ] || fail "array $e after restart"
nothing_again() { no_relaunch "$e" n01 n02 n03 n04; none_back; }
holds_for 2 nothing_again # two cycles: nothing of it starts again
[ "$(db "SELECT MAX(job_id) FROM archive")" = $((g + 1)) ] || fail "archive: $(db "SELECT job_id FROM archive" | tr '\n' ' ')"
f=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"after"}}' | jq .job_id)
[ "$f" -gt $((g + 4)) ] || fail "new job $f reuses an id array $g reserved (to $((g + 4)))"
ok "an ended array is archived whole (not before), rebuilt after kill -9, ids go on"
