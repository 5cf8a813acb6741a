#!/usr/bin/env bash
# A journal written before the journal record became the versioned core
# event (issue 13): tests/data/journal-v0/state.db, recorded by make.sh
# beside it from a scripted session (submits incl. an array and a two-node
# gang, cancels of a pending and a running job, hold/release, update,
# starts, ends, a requeue, drains, a partition down/up, a reservation).
# The current server recovers from it the same jobs, states, allocations,
# reservations, accounting rows and usage that the recording server showed
# (expected.json); a job submitted afterwards gets the next id. One edit of
# expected.json since: time_limit_s of the jobs submitted without a limit is
# the partition's DefaultTime (3600) where the recording server showed null
# (issue 17: the server keeps and shows the limit the scheduler gave).
source "$(dirname "$0")/lib_server.sh"
DATA=${PX_TESTDATA:-$PX_SRC/tests/data}/journal-v0
source "$DATA/dump.sh"
NODE_TIMEOUT=100000
cp "$DATA/slurm.conf" "$DATA/accounts.conf" "$T/"
mkdir -p "$STATE"
cp "$DATA/state.db" "$STATE/state.db"
chmod 600 "$STATE/state.db"
start_server
dump >"$T/have.json"
diff "$DATA/expected.json" "$T/have.json" >"$T/diff" || { cat "$T/diff" >&2; fail "recovered state differs from expected.json"; }
ok "journal-v0 replayed: $(jq '.jobs|length' "$T/have.json") jobs, states, allocations and usage as recorded"
# its drain record predates the reason's user (sinfo -R's USER): not known;
# its time is the record's; its cause, inferred by the loader from a reason
# none of the server's checks wrote, an operator's
n03=$(expect 200 root GET /v1/nodes/n03)
echo "$n03" | jq -e '.reason == "fan" and (has("reason_user") | not) and .reason_time > 1700000000 and
  .drain_cause == "operator"' >/dev/null ||
  fail "n03's drain from the old journal: $(echo "$n03" | jq -c '{reason, reason_user, reason_time, drain_cause}')"
ok "an old drain record: reason fan, set by nobody known, at the record's time, an operator's"

id=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"after","gpus_per_node":1}}' | jq .job_id)
[ "$id" = 11 ] || fail "next job id $id, want 11"
# the old journal and the new record it now holds survive another restart
stop_server TERM
start_server
[ "$(job_state 11)" = PENDING ] || fail "job 11 after a second restart: $(job_state 11)"
dump | jq 'del(.jobs[] | select(.job_id==11))' >"$T/again.json"
diff "$DATA/expected.json" "$T/again.json" >&2 || fail "second restart differs"
ok "a new record after the old ones: next id, and both replay again"
