#!/usr/bin/env bash
# Services end to end on a real `phalanx dev` cluster (server + 4 agents,
# replicas as real processes): a service of 2 replicas of a tiny sh loop
#  1. apply, list, show, squeue shows the replicas as jobs, logs;
#  2. scale up to 4 and down to 2 (the highest indices go); spread puts
#     the 4 on 4 nodes;
#  3. a replica killed with -9 is replaced (a new job, the same index);
#  4. bad specs refused with the line and the field, nothing changed;
#  5. the server killed with -9 right after an update was acknowledged:
#     the update resumes after recovery, no service lost, no replica index
#     of a generation runs twice;
#  6. delete: the replicas drain, stop, and the service goes;
#  7. a replica preempted through QoS is replaced as soon as there is
#     room, without the backoff of a failure.
# Health "none" (ready once running) works with the agent as it is; ports
# and health checks through the proxy are test_proxy_* (h15p).
source "$(dirname "$0")/lib_dev.sh"
mkdir -p "$tmp/work"
start_dev "squeue sacct sbatch" --nodes 4 --cpus 16 --mem-mib 65536
cd "$tmp/work"
marker="pxsvc$$"
svc() { "$PHALANX" service "$@"; }
field() { svc show web --json | jq -r "$1"; }
# the replicas' processes on this host: the loop's $0 is the marker
procs() { pgrep -f "^sh -c .* $marker-$1\$" | wc -l; }

spec() { # spec VERSION REPLICAS
  cat <<EOF
name: web
account: ops
replicas: $2
resources: {cpus: 1}
command: ["sh", "-c", "echo up \$PX_REPLICA v$1; while :; do sleep 1; done", "$marker-v$1"]
env: {VERSION: "v$1"}
restart: {backoff_s: 1, max_backoff_s: 4}
update: {max_surge: 1, max_unavailable: 0}
drain_s: 1
spread: true
EOF
}
ready_is() { [ "$(field '"\(.state) \(.ready)/\(.replicas) \(.generation)"')" = "$1" ]; }

# 1. apply, list, show, squeue, logs
spec 1 2 >web.yaml
out=$(svc apply web.yaml) || fail "apply: $out"
[[ $out == "service web created (generation 1)" ]] || fail "apply said: $out"
wait_for 60 ready_is "Running 2/2 1" || fail "not running 2/2: $(svc show web)"
svc list | grep -Eq '^web +Running +2/2 +1 +ops' || fail "list: $(svc list)"
[ "$(field '[.replica_jobs[].index] | sort | join(",")')" = "0,1" ] || fail "indices: $(svc show web)"
squeue -h -o '%j %T' | grep -qx 'web-r0 RUNNING' || fail "squeue: $(squeue)"
wait_for 30 sh -c "$PHALANX service logs web 1 | grep -qx 'up 1 v1'" || fail "logs: $(svc logs web 1)"
[ "$(procs v1)" = 2 ] || fail "$(procs v1) replica processes, want 2"
echo "ok   apply, list, show, squeue, logs (${SECONDS}s)"

# 2. scale up, then down: indices 2 and 3 drain and stop
svc scale web 4 >/dev/null || fail "scale 4"
wait_for 60 ready_is "Running 4/4 1" || fail "not 4/4: $(svc show web)"
[ "$(field '[.replica_jobs[].node] | unique | length')" = 4 ] || fail "spread: $(svc show web)"
svc scale web 2 >/dev/null || fail "scale 2"
wait_for 60 sh -c "[ \"\$($PHALANX service show web --json | jq -c '[.replica_jobs[].index] | sort')\" = '[0,1]' ]" ||
  fail "scale down: $(svc show web)"
procs_are() { [ "$(procs "$1")" = "$2" ]; }
wait_for 30 procs_are v1 2 || fail "$(procs v1) processes after scale down"
field '.decisions[-1].reason' | grep -qx "scaled by $(id -un)" || fail "decision: $(field .decisions)"
echo "ok   scale 2 -> 4 -> 2 (${SECONDS}s)"

# 3. kill -9 one replica's process: its job fails, a new job takes the index
before=$(field '[.replica_jobs[].job_id] | sort | join(",")')
victim=$(pgrep -f "^sh -c .* $marker-v1\$" | head -n1)
kill -9 "$victim"
replaced() {
  local now
  now=$($PHALANX service show web --json | jq -r '[.replica_jobs[].job_id] | sort | join(",")')
  [ "$now" != "$before" ] && ready_is "Running 2/2 1"
}
wait_for 60 replaced || fail "not replaced: $(svc show web)"
[ "$(field '[.replica_jobs[].index] | sort | join(",")')" = "0,1" ] || fail "indices after kill: $(svc show web)"
[ "$(procs v1)" = 2 ] || fail "$(procs v1) processes after the replacement"
echo "ok   replica killed -9 replaced (jobs $before -> $(field '[.replica_jobs[].job_id] | sort | join(",")')) (${SECONDS}s)"

# 4. bad specs: refused with line and field, nothing changed
state_before=$(svc list)
bad() { # bad WANT: the spec on stdin
  cat >bad.yaml
  local out
  if out=$(svc apply bad.yaml 2>&1); then fail "accepted a bad spec (want '$1')"; fi
  [[ $out == *"$1"* ]] || fail "bad spec: '$out', want '$1'"
}
spec 1 2 | sed 's/^drain_s: 1$/drain_seconds: 1/' | bad "line 9: drain_seconds: unknown field"
spec 1 2 | sed 's/^replicas: 2$/replicas: -1/' | bad "line 3: replicas: must be 0 or more, not -1"
(spec 1 2; echo "ports: [http, metrics, http]") | bad "line 11: ports[2]: port 'http' clashes"
spec 1 2 | sed 's/^resources: {cpus: 1}$/resources: {cpus: 1, gpus: 16}/' |
  bad "line 4: resources.gpus: 16 GPUs per replica, but the nodes of partition batch have at most 8"
(spec 1 2 | sed 's/^name: web$/name: other/') | sed 's/^account: ops$/account: nosuch/' | bad "line 2: account"
[ "$(svc list)" = "$state_before" ] || fail "a refused spec changed something: $(svc list)"
echo "ok   bad specs refused with line and field, nothing changed (${SECONDS}s)"

# 5. server kill -9 right after an update is acknowledged
spec 2 2 >web.yaml
out=$(svc apply web.yaml) || fail "update: $out"
[[ $out == "service web updated: rolling out (generation 2)" ]] || fail "update said: $out"
old_pid=$(cat "$tmp/state/server.pid")
kill -9 "$old_pid"
back() { [ "$(cat "$tmp/state/server.pid")" != "$old_pid" ] && $PHALANX service list >/dev/null 2>&1; }
wait_for 60 back || fail "the server did not come back"
done_update() {
  ready_is "Running 2/2 2" &&
    [ "$($PHALANX service show web --json | jq -c '[.replica_jobs[] | [.generation, .index]] | sort')" = '[[2,0],[2,1]]' ]
}
wait_for 90 done_update || fail "the update did not finish after recovery: $(svc show web)"
wait_for 30 procs_are v1 0 || fail "$(procs v1) old replicas left"
# with no health check a replica is ready once started, which the server
# decides before the agent has the order (sent again if the restart lost it)
wait_for 30 procs_are v2 2 || fail "$(procs v2) new replica processes, want 2 (one per index)"
# each (generation 2, index) started once: one job per name ever ran v2
ran() { grep -l "^up $1 v2\$" web-*.out | wc -l; }
has_run() { [ "$(ran "$1")" -ge 1 ]; }
for i in 0 1; do
  wait_for 10 has_run "$i" # its first line may trail its process by a moment
  [ "$(ran $i)" = 1 ] || fail "replica $i of generation 2 ran $(ran $i) times"
done
echo "ok   server killed -9 mid-update: resumed, nothing lost, no replica twice (${SECONDS}s)"

# GPU-hours by service: the replicas' jobs under their service's name
svc_jobs=$("$PHALANX" usage --by service --json | jq -r '.usage[] | select(.key == "web") | .jobs')
[ "${svc_jobs:-0}" -ge 4 ] || fail "usage by service: $("$PHALANX" usage --by service)"
echo "ok   usage --by service counts web's $svc_jobs replica jobs (${SECONDS}s)"

# 6. delete
svc delete web >/dev/null || fail "delete"
gone() { ! $PHALANX service show web >/dev/null 2>&1; }
wait_for 60 gone || fail "not deleted: $(svc show web)"
wait_for 30 procs_are 'v[12]' 0 ||
  fail "replicas left after delete: $(pgrep -af "$marker-v"; sacct -n -P -o JobID,JobName,State)"
sacct -n -P -o JobName,State | grep -q '^web-r0|CANCELLED' || fail "sacct: $(sacct -n -P -o JobName,State)"
[ "$(svc list | wc -l)" = 1 ] || fail "list after delete: $(svc list)"
echo "ok   delete: drained, stopped, gone (${SECONDS}s)"

# 7. alone on the cluster, a replica preempted (QoS low, every node's GPUs
# wanted by a high job of 3 s) ends PREEMPTED, not requeued, and its
# replacement starts when the high job ends: a preemption is not the
# replica's failure, so not after the 30 s backoff
cat >pre.yaml <<EOF
name: pre
account: ops
qos: low
replicas: 1
resources: {gpus: 8, cpus: 1}
command: ["sh", "-c", "while :; do sleep 1; done", "$marker-pre"]
restart: {backoff_s: 30, max_backoff_s: 60}
EOF
svc apply pre.yaml >/dev/null || fail "apply pre"
pre_field() { svc show pre --json | jq -r "$1"; }
wait_for 60 sh -c "[ \"\$($PHALANX service show pre --json | jq -r .state)\" = Running ]" || fail "pre not running: $(svc show pre)"
pre_job=$(pre_field '.replica_jobs[0].job_id')
high=$(sbatch --parsable --qos high -N 4 --gpus-per-node 8 --wrap "sleep 3") || fail "sbatch high"
pre_back() { [ "$(pre_field '[.replica_jobs[] | select(.state == "ready") | .job_id] | join(",")')" != "$pre_job" ] &&
  [ "$(pre_field .ready)" = 1 ] && [ "$(pre_field .state)" = Running ]; }
wait_for 25 pre_back || fail "the preempted replica not replaced at once: $(svc show pre; squeue -t all)"
sacct -n -P -j "$pre_job" -o State | grep -q '^PREEMPTED' || fail "replica job $pre_job: $(sacct -n -P -j "$pre_job" -o JobID,State)"
svc delete pre >/dev/null
pre_gone() { ! $PHALANX service show pre >/dev/null 2>&1; }
wait_for 60 pre_gone || fail "pre not deleted: $(svc show pre)"
echo "ok   a replica preempted by job $high replaced at once (${SECONDS}s)"
exit $((fails > 0))
