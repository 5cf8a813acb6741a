#!/usr/bin/env bash
# POST /v1/jobs/{id}/requeue and /requeuehold (scontrol requeue, requeuehold)
# against a real server with fake agents: only the owner, a coordinator or
# an operator may; a running job is stopped on its node (a SIGKILL order whose
# end the agent does not report) and is PENDING again at once, journaled,
# same id, Restarts 1, then starts again; requeuehold keeps it held until
# released; Slurm's refusals (a pending job, --no-requeue, an unknown id).
source "$(dirname "$0")/lib_server.sh"
waits() { [[ "$(job_state "$1")" =~ ^(PENDING|REQUEUED)$ ]]; } # a requeued job lists as REQUEUED
write_config
start_server
register_node n01
register_node n02

j=$(expect 201 pxalice POST /v1/jobs '{"job":{"gpus_per_node":8,"time_limit_s":600,"script":"#!/bin/sh\nsleep 100\n"}}' | jq -r .job_id)
wait_for "job $j running" job_is "$j" RUNNING
work=$(expect 200 root GET "/v1/agent/work?node=n01&after=0&timeout=5")
seq=$(jq .seq <<<"$work")

e=$(expect 403 pxbob POST /v1/jobs/$j/requeue)
grep -q "own-job" <<<"$e" || fail "another user's requeue: $e"
seq0=$(journal_seq)
expect 200 pxalice POST /v1/jobs/$j/requeue >/dev/null
[ "$(journal_seq)" -gt "$seq0" ] || fail "requeue not journaled"
work=$(expect 200 root GET "/v1/agent/work?node=n01&after=$seq&timeout=5")
[ "$(jq -c "[.signal[] | select(.job_id==$j) | [.signal, .reason]]" <<<"$work")" = '[[9,"NODE_FAIL"]]' ] ||
  fail "no stop order for the requeued job: $work"
wait_for "job $j running again" job_is "$j" RUNNING
show=$(expect 200 pxalice GET /v1/jobs/$j)
[ "$(jq -r .restarts <<<"$show")" = 1 ] || fail "restarts after requeue: $show"
ok "the owner requeues a running job: stopped, journaled, pending, started again"

# requeuehold by an operator: held until released
expect 200 pxoper POST /v1/jobs/$j/requeuehold >/dev/null
wait_for "job $j pending" waits "$j"
show=$(expect 200 pxalice GET /v1/jobs/$j)
[ "$(jq -r .restarts <<<"$show")" = 2 ] || fail "restarts after requeuehold: $show"
# a cycle has judged it once its reason is the core's hold, not the requeue's word
held() { [ "$(jq -r .reason <<<"$(expect 200 pxalice GET /v1/jobs/$j)")" = JobHeldUser ]; }
wait_for "job $j held by the scheduler" held
waits "$j" || fail "a requeueheld job started"
e=$(expect 409 pxalice POST /v1/jobs/$j/requeue)
grep -q "Job is pending execution" <<<"$e" || fail "requeue of a pending job: $e"
expect 200 pxalice POST /v1/jobs/$j/release >/dev/null
wait_for "job $j running after release" job_is "$j" RUNNING
ok "requeuehold keeps the job held; a pending job is refused as Slurm"

# --no-requeue: Slurm's "presently disabled"; an unknown id: 404
k=$(expect 201 pxbob POST /v1/jobs '{"job":{"gpus_per_node":8,"requeue":false,"time_limit_s":600,"script":"#!/bin/sh\nsleep 100\n"}}' | jq -r .job_id)
wait_for "job $k running" job_is "$k" RUNNING
e=$(expect 409 pxbob POST /v1/jobs/$k/requeue)
grep -q "presently disabled" <<<"$e" && [ "$(jq -r .error.code <<<"$e")" = DISABLED ] || fail "no-requeue job: $e"
expect 404 pxbob POST /v1/jobs/999/requeue >/dev/null
ok "no-requeue and unknown jobs refused"

# scontrol requeue / requeuehold through the CLI
mkdir -p "$T/bin" && ln -s "$PHALANX" "$T/bin/scontrol"
as_user() { setpriv --reuid="$1" --regid="$(id -g "$1")" --clear-groups \
  env PATH="$T/bin:$PATH" PHALANX_SERVER="unix:$SOCK" "${@:2}"; }
as_alice() { as_user pxalice "$@"; }
out=$(as_alice scontrol requeue "$j" 2>&1) || fail "scontrol requeue: $out"
wait_for "job $j pending or running again" test "$(jq -r .restarts <<<"$(expect 200 pxalice GET /v1/jobs/$j)")" = 3
wait_for "job $j running" job_is "$j" RUNNING
out=$(as_alice scontrol requeuehold "$j" 2>&1) || fail "scontrol requeuehold: $out"
wait_for "job $j pending" waits "$j"
if out=$(as_alice scontrol requeue "$j" 2>&1); then fail "scontrol requeue of a pending job succeeded: $out"; fi
[ "$out" = "Job is pending execution for job $j" ] || fail "scontrol requeue of a pending job: $out"
# Slurm's bare lines for the other refusals: --no-requeue, another user's job
if out=$(as_user pxbob scontrol requeue "$k" 2>&1); then fail "scontrol requeue of a --no-requeue job succeeded: $out"; fi
[ "$out" = "Requested operation is presently disabled for job $k" ] || fail "scontrol requeue of a --no-requeue job: $out"
if out=$(as_alice scontrol requeue "$k" 2>&1); then fail "scontrol requeue of another user's job succeeded: $out"; fi
[ "$out" = "Access/permission denied for job $k" ] || fail "scontrol requeue of another user's job: $out"
ok "scontrol requeue and requeuehold; refusals in Slurm's words"
