#!/usr/bin/env bash
# The drain recovery puts on a job's nodes when it cannot give the job back
# to the scheduler (its node shrank under it in the configuration: the job
# runs on outside the scheduler, docs/operations.md "Recovery") is listed
# like any other drain (server/nodes/drain.c):
#  - `sinfo -R` gives it the server's user (Slurm: SlurmUser) and the time
#    recovery held the node (not TIMESTAMP Unknown), as it prints an
#    operator's drain beside it; /v1/nodes says reason_user, reason_time and
#    drain_cause "recovery";
#  - the job's end lets the node go: no reason, user, time or cause left.
source "$(dirname "$0")/lib_server.sh"
NODE_TIMEOUT=100000
write_config
start_server
mkdir -p "$T/bin"
ln -s "$PHALANX" "$T/bin/sinfo"
export PHALANX_SERVER=$SOCK PATH="$T/bin:$PATH"
for n in n01 n02 n03 n04; do register_node $n; done
node() { expect 200 root GET "/v1/nodes/$1"; }
node_is() { node "$1" | jq -e "$2" >/dev/null; }

job=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"big","partition":"small","gpus_per_node":8}}' | jq .job_id)
wait_for "job $job running" job_is "$job" RUNNING
N=$(api GET "/v1/jobs?id=$job" | cut -d' ' -f2- | jq -r '.jobs[0].nodelist')
stop_server KILL
sed -i 's/Gres=gpu:h100:8/Gres=gpu:h100:4/' "$T/slurm.conf" # its 8 GPUs are no longer there to give back
t0=$(date +%s)
start_server
grep -q "job $job runs outside the scheduler" "$T/server.log" || fail "job $job was given back: the test needs it outside"
known="[{\"job_id\":$job,\"state\":\"RUNNING\",\"exit_code\":0,\"term_signal\":0}]"
for n in n01 n02 n03 n04; do
  if [ "$n" = "$N" ]; then register_node "$n" "$known"; else register_node "$n"; fi
done
O=n03
[ "$N" != "$O" ] || fail "job $job on $O (partition small is n01-n02)"
expect 200 pxoper POST "/v1/nodes/$O/drain" '{"reason":"bad fan"}' >/dev/null

# signed NODE USER: sinfo -R lists NODE's reason as set by USER at a time
# from t0 to now (its TIMESTAMP, printed in local time, read back)
signed() {
  local line ts
  line=$(sinfo -R -h -o '%n|%u|%H' | grep "^$1|") || fail "sinfo -R lists no $1: $(sinfo -R)"
  [ "${line%|*}" = "$1|$2" ] || fail "sinfo -R: $line, want $1 set by $2"
  ts=$(date -d "${line##*|}" +%s 2>/dev/null) || fail "sinfo -R: $1's TIMESTAMP ${line##*|}"
  [ "$ts" -ge "$t0" ] && [ "$ts" -le "$(date +%s)" ] ||
    fail "sinfo -R: $1 set at ${line##*|}, not since $(date -d "@$t0" +%FT%T)"
}
USER_SELF=$(id -un) # the user the server runs as
node_is "$N" '.reason == "phalanx: recovered running jobs" and .drain_cause == "recovery" and
  .reason_user == "'"$USER_SELF"'" and .reason_time > 0' || fail "$N held by recovery: $(node "$N")"
signed "$N" "$USER_SELF"
signed "$O" pxoper
sinfo -R | grep -q "Unknown" && fail "sinfo -R prints an unknown field: $(sinfo -R)"
ok "recovery's drain of $N: sinfo -R by $USER_SELF at $(sinfo -R -h -o %H -n "$N"), as $O's by pxoper at $(sinfo -R -h -o %H -n "$O")"

expect 200 root POST /v1/agent/report "{\"node\":\"$N\",\"job_id\":$job,\"state\":\"COMPLETED\",\"exit_code\":0,\"term_signal\":0,\"requeue_requested\":false,\"peak_mem_mib\":0,\"cpu_time_ms\":0,\"start_time\":0,\"end_time\":0}" >/dev/null
wait_for "job $job ended" job_is "$job" COMPLETED
wait_for "$N let go" node_is "$N" '.state == "IDLE"'
node_is "$N" '(has("reason") or has("reason_user") or has("reason_time") or has("drain_cause")) | not' ||
  fail "$N after the job's end: $(node "$N")"
ok "job $job's end lets $N go: no reason, user, time or cause left"
