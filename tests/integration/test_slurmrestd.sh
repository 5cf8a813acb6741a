#!/usr/bin/env bash
# slurmrestd's API (data_parser v0.0.39) on a real `phalanx dev` cluster,
# with requests shaped as slurmrestd's documentation shows them: curl with
# X-SLURM-USER-NAME and X-SLURM-USER-TOKEN (a JWT, as `scontrol token`
# gives) over TCP, and the same paths over the Unix socket (local auth).
# Checks the shapes tools read: ping, diag statistics, job/submit's job_id,
# jobs / job/{id} (job_id, job_state, nodes, partition, time_limit's
# {"set","infinite","number"}), DELETE, nodes, partitions, reservations,
# slurmdb jobs (with their srun steps) / associations / qos, and errors[] for bad requests (each
# naming the field, changing nothing).
source "$(dirname "$0")/lib_dev.sh"
command -v jq >/dev/null && command -v curl >/dev/null || { echo "jq and curl are in make deps"; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_dev "squeue sdiag sacctmgr sacct sbatch srun" --nodes 2 --gpus 2 --cpus 8 --port "$port" --no-tls
me=$(id -un)
tok=$("$PHALANX" server token --state-dir "$tmp/state/server" --user "$me" --uid "$(id -u)" --lifetime 600)
[ -n "$tok" ] || { echo "no token"; exit 1; }
base=http://127.0.0.1:$port
# rest METHOD PATH [BODY]: prints the body, the HTTP status in $tmp/status
rest() {
  local data=()
  [ $# -ge 3 ] && data=(-H 'Content-Type: application/json' --data-binary "$3")
  curl -s -o "$tmp/body" -w '%{http_code}' -X "$1" -H "X-SLURM-USER-NAME: $me" \
    -H "X-SLURM-USER-TOKEN: $tok" "${data[@]}" "$base$2" >"$tmp/status"
  cat "$tmp/body"
}
status() { cat "$tmp/status"; }
bad() { # description, expected status, errno, message regex, METHOD PATH [BODY]
  local d=$1 st=$2 no=$3 re=$4
  shift 4
  rest "$@" >/dev/null
  [ "$(status)" = "$st" ] || fail "$d: status $(status), wanted $st: $(cat "$tmp/body")"
  check "$d" '.errors[0].error_number=='"$no"' and (.errors[0].error|test("'"$re"'")) and .meta!=null'
}
check() { # description, jq filter over the last body
  jq -e "$2" "$tmp/body" >/dev/null || { fail "$1: $(head -c 600 "$tmp/body")"; return 1; }
}
wait_for 30 sh -c "curl -s -H 'X-SLURM-USER-TOKEN: $tok' $base/slurm/v0.0.39/nodes |
  jq -e '[.nodes[]|select(.state==[\"IDLE\"])]|length==2' >/dev/null" || fail "nodes not idle"

# ping and the envelope every answer has
rest GET /slurm/v0.0.39/ping >/dev/null
[ "$(status)" = 200 ] || fail "ping: status $(status)"
check "ping" '.pings[0].ping=="UP" and .pings[0].mode=="primary" and .errors==[] and
  .meta.plugin.data_parser=="v0.0.39" and .meta.client.user=="'"$me"'"' && echo "ok   ping"

# submit as slurmrestd's documentation shows it
body='{"job":{"name":"rest1","account":"ops","partition":"batch","nodes":"1","tasks":1,
  "time_limit":{"set":true,"infinite":false,"number":5},"tres_per_node":"gres:gpu:1",
  "current_working_directory":"'"$tmp"'","standard_output":"'"$tmp"'/rest1.out",
  "environment":["PATH=/bin:/usr/bin","LANG=C"],"get_user_environment":true},
  "script":"#!/bin/bash\necho rest $SLURM_JOB_ID"}'
rest POST /slurm/v0.0.39/job/submit "$body" >/dev/null
[ "$(status)" = 200 ] || fail "submit: status $(status) $(cat "$tmp/body")"
check "submit" '(.job_id|type)=="number" and .step_id=="batch" and .errors==[] and
  (.warnings|map(.source)|index("get_user_environment"))!=null'
id=$(jq -r .job_id "$tmp/body")
echo "ok   job/submit: job $id"
wait_for 30 sh -c "[ \"\$(squeue -h -j $id -o %T -t all)\" = COMPLETED ]" || fail "job $id did not complete"
[ "$(cat "$tmp/rest1.out" 2>/dev/null)" = "rest $id" ] || fail "job $id output: $(cat "$tmp/rest1.out" 2>&1)"
rest GET "/slurm/v0.0.39/job/$id" >/dev/null
check "job/{id}" '.jobs|length==1' &&
  check "job/{id} fields" '.jobs[0] | .job_id=='"$id"' and .job_state=="COMPLETED" and .name=="rest1" and
    .partition=="batch" and .account=="ops" and .batch_flag==true and .user_name=="'"$me"'" and (.nodes|length>0) and
    .time_limit=={"set":true,"infinite":false,"number":5} and
    .exit_code=={"set":true,"infinite":false,"number":0} and .restart_cnt==0 and (.tres_req_str|test("gres/gpu=1")) and .tres_per_node=="gres:gpu:1"' &&
  echo "ok   job/$id: COMPLETED on $(jq -r '.jobs[0].nodes' "$tmp/body")"

# a failing job: slurmctld's exit_code is the wait status, slurmdbd's is verbose
body='{"job":{"name":"fails","account":"ops","tres_per_node":"gres/gpu:h100=1","current_working_directory":"'"$tmp"'"},"script":"#!/bin/sh\nexit 3"}'
rest POST /slurm/v0.0.39/job/submit "$body" >/dev/null
failing=$(jq -r .job_id "$tmp/body")
wait_for 30 sh -c "[ \"\$(squeue -h -j $failing -o %T -t all)\" = FAILED ]" || fail "job $failing did not fail"
rest GET "/slurm/v0.0.39/job/$failing" >/dev/null
check "exit_code" '.jobs[0] | .job_state=="FAILED" and .exit_code.number==768 and .tres_per_node=="gres:gpu:h100:1"' && echo "ok   job/$failing: FAILED, exit_code 768 (3 << 8)"

# a job with two srun steps over its two nodes (a one-node job runs its sruns
# itself, unaccounted), for slurmdb's steps below
printf '#!/bin/bash\nsrun true\nsrun false\n' >"$tmp/steps.sh"
stepped=$(cd "$tmp" && sbatch --parsable -A ops -N 2 -t 5 steps.sh) || fail "sbatch steps.sh"

# POST job/{id}: a held job's limit and nice changed, then released (hold false)
body='{"job":{"name":"held","account":"ops","hold":true,"time_limit":3,"current_working_directory":"'"$tmp"'"},"script":"#!/bin/sh\ntrue"}'
rest POST /slurm/v0.0.39/job/submit "$body" >/dev/null
held=$(jq -r .job_id "$tmp/body")
rest POST "/slurm/v0.0.39/job/$held" '{"time_limit":7,"nice":5,"environment":["PATH=/bin"]}' >/dev/null
[ "$(status)" = 200 ] && check "update" '.results==[{"job_id":'"$held"',"error_code":0,"error":"","why":""}] and
  (.warnings|map(.source)|index("environment"))!=null' || fail "update: $(status)"
rest GET "/slurm/v0.0.39/job/$held" >/dev/null
check "updated" '.jobs[0] | .time_limit.number==7 and .nice==5 and .job_state=="PENDING" and .hold==true'
bad "update name" 400 9002 'job.name: cannot be changed' POST "/slurm/v0.0.39/job/$held" '{"name":"x"}'
bad "update unknown job" 404 2017 'no such job' POST /slurm/v0.0.39/job/999999 '{"nice":1}'
rest POST "/slurm/v0.0.39/job/$held" '{"hold":false}' >/dev/null
wait_for 30 sh -c "[ \"\$(squeue -h -j $held -o %T -t all)\" = COMPLETED ]" || fail "released job $held did not run"
echo "ok   POST job/$held: time_limit, nice, hold"

# a long job: listed RUNNING, then DELETE cancels it
body='{"job":{"name":"long","account":"ops","time_limit":10,"environment":{"A":"1"},
  "current_working_directory":"'"$tmp"'"},"script":"#!/bin/sh\nsleep 300"}'
rest POST /slurm/v0.0.39/job/submit/ "$body" >/dev/null
long=$(jq -r .job_id "$tmp/body")
wait_for 30 sh -c "curl -s -H 'X-SLURM-USER-TOKEN: $tok' $base/slurm/v0.0.39/jobs/ |
  jq -e '.jobs[]|select(.job_id==$long and .job_state==\"RUNNING\")' >/dev/null" || fail "job $long not RUNNING"
rest GET /slurm/v0.0.39/jobs >/dev/null
check "jobs" '[.jobs[].job_id]|index('"$long"')!=null' && echo "ok   jobs lists $long RUNNING"
rest DELETE "/slurm/v0.0.39/job/$long" >/dev/null
[ "$(status)" = 200 ] && check "delete" '.errors==[]' || fail "delete: $(status)"
wait_for 30 sh -c "[ \"\$(squeue -h -j $long -o %T -t all)\" = CANCELLED ]" || fail "job $long not cancelled"
echo "ok   DELETE job/$long: CANCELLED"

# errors: slurmrestd's errors[] shape, precise, nothing submitted
n_before=$(squeue -h -t all | wc -l)
bad "unknown field" 400 9002 'job.partitions: unknown' POST /slurm/v0.0.39/job/submit \
  '{"job":{"partitions":"x"},"script":"#!/bin/sh\ntrue"}'
bad "no script" 400 9002 '^script: missing' POST /slurm/v0.0.39/job/submit '{"job":{}}'
bad "not JSON" 400 9001 '^body: not JSON' POST /slurm/v0.0.39/job/submit '{"job":'
bad "time_limit type" 400 9002 'job.time_limit: expected an integer' POST /slurm/v0.0.39/job/submit \
  '{"job":{"time_limit":"10"},"script":"#!/bin/sh\ntrue"}'
bad "hetjob" 400 9002 'heterogeneous' POST /slurm/v0.0.39/job/submit '{"jobs":[{}],"script":"#!/bin/sh"}'
bad "not a GPU" 400 9002 'job.tres_per_node: only GPUs' POST /slurm/v0.0.39/job/submit \
  '{"job":{"tres_per_node":"gres:fpga:1"},"script":"#!/bin/sh\ntrue"}'
bad "bad partition" 400 9002 'partition' POST /slurm/v0.0.39/job/submit \
  '{"job":{"partition":"nosuch","environment":[]},"script":"#!/bin/sh\ntrue"}'
bad "no such job" 404 2017 'Invalid job id' GET /slurm/v0.0.39/job/999999
bad "bad job id" 400 2017 "job_id: 'abc'" GET /slurm/v0.0.39/job/abc
bad "bad signal" 400 9000 "signal: unknown signal 'NOPE'" DELETE "/slurm/v0.0.39/job/$id?signal=NOPE"
bad "no such path" 404 9003 'no such endpoint' GET /slurm/v0.0.39/nosuch
[ "$(squeue -h -t all | wc -l)" = "$n_before" ] || fail "a refused request submitted a job"
curl -s -o "$tmp/body" -w '%{http_code}' -H "X-SLURM-USER-TOKEN: not.a.token" "$base/slurm/v0.0.39/jobs" >"$tmp/status"
[ "$(status)" = 401 ] && check "bad token" '.errors[0].error_number==1007' || fail "bad token: $(status)"
curl -s -o "$tmp/body" -w '%{http_code}' -H "X-SLURM-USER-TOKEN: $tok" -H "X-SLURM-USER-NAME: nosuchuser" \
  "$base/slurm/v0.0.39/jobs" >"$tmp/status"
if [ "$me" = root ]; then [ "$(status)" = 401 ] && check "act as" '.errors[0].error|test("no such user")' || fail "root as nosuchuser"
else [ "$(status)" = 401 ] && check "act as" '.errors[0].error|test("only an administrator")' || fail "user as nosuchuser"; fi
if [ "$me" = root ] && id nobody >/dev/null 2>&1; then # an administrator acts as another user
  curl -s -o "$tmp/body" -H "X-SLURM-USER-TOKEN: $tok" -H "X-SLURM-USER-NAME: nobody" "$base/slurm/v0.0.39/ping"
  check "act as nobody" '.meta.client.user=="nobody"'
fi
echo "ok   errors[]: field and problem named, nothing submitted, bad tokens refused"

# the cluster's listings
rest GET /slurm/v0.0.39/nodes >/dev/null
check "nodes" '.nodes|length==2 and all(.[]; (.name|length>0) and .cpus==8 and .gres=="gpu:h100:2" and
  (.partitions|index("batch"))!=null and (.state|type)=="array")' && echo "ok   nodes"
node1=$(jq -r '.nodes[0].name' "$tmp/body")
rest GET "/slurm/v0.0.39/node/$node1" >/dev/null
check "node/{name}" '.nodes|length==1 and .[0].name=="'"$node1"'"' && echo "ok   node/$node1"
# who drained it and when (v0.0.39's reason_set_by_user, reason_changed_at)
t0=$(date +%s)
"$PHALANX" drain "$node1" --reason "bad fan" >/dev/null || fail "drain $node1"
rest GET "/slurm/v0.0.39/node/$node1" >/dev/null
check "drained node's reason" '.nodes[0] | .reason=="bad fan" and .reason_set_by_user=="'"$me"'" and
  .reason_changed_at>='"$t0"' and .reason_changed_at<='"$(($(date +%s) + 1))" &&
  echo "ok   node/$node1 drained: reason_set_by_user $me, reason_changed_at in the test's window"
"$PHALANX" resume "$node1" || fail "resume $node1"
rest GET "/slurm/v0.0.39/node/$node1" >/dev/null
check "resumed node's reason" '.nodes[0] | .reason=="" and .reason_set_by_user=="" and .reason_changed_at==0'
bad "no such node" 404 9003 "node_name: no such node 'nosuch'" GET /slurm/v0.0.39/node/nosuch
rest GET /slurm/v0.0.39/partition/batch >/dev/null
check "partition/{name}" '.partitions|length==1 and .[0].name=="batch"'
rest GET /slurm/v0.0.39/partitions >/dev/null
check "partitions" '[.partitions[]|select(.name=="batch")][0] | .nodes.total==2 and
  .partition.state==["UP"] and (.maximums.time|has("infinite"))' && echo "ok   partitions"
rest GET /slurm/v0.0.39/reservations >/dev/null
check "reservations" '.reservations|type=="array"' && echo "ok   reservations"
rest GET /slurm/v0.0.39/diag >/dev/null
check "diag" '.statistics | .schedule_cycle_total>0 and .jobs_submitted>=2 and
  (.rpcs_by_message_type|map(select(.message_type=="REQUEST_SUBMIT_BATCH_JOB" and .type_id==4003))|length==1) and
  (.rpcs_by_user|map(.user)|index("'"$me"'"))!=null' && echo "ok   diag"

# sdiag on the same cluster: Slurm 22.05's layout (tests/unit/cli/test_golden_sdiag.c
# holds it byte for byte), with this cluster's cycles, submits and users
sdiag >"$tmp/sdiag" || fail "sdiag exited $?"
grep -q '^sdiag output at ' "$tmp/sdiag" && grep -q '^Main schedule statistics (microseconds):$' "$tmp/sdiag" &&
  grep -Eq $'^\tTotal cycles: [1-9]' "$tmp/sdiag" &&
  grep -Eq $'^\tREQUEST_SUBMIT_BATCH_JOB +\( 4003\) count:[1-9]' "$tmp/sdiag" &&
  grep -Eq $'^\t'"$me"' +\( *'"$(id -u)"'\) count:[0-9]+' "$tmp/sdiag" &&
  grep -q '^Jobs submitted: [1-9]' "$tmp/sdiag" || fail "sdiag: $(cat "$tmp/sdiag")"
sdiag --json | jq -e '.main.count>0 and (.rpcs_by_type|length>0)' >/dev/null || fail "sdiag --json"
if [ "$me" = root ]; then
  [ "$(sdiag -r)" = "Reset scheduling statistics" ] || fail "sdiag -r"
  sdiag | grep -q '^Jobs submitted: 0$' || fail "sdiag after -r: $(sdiag | head -12)"
fi
echo "ok   sdiag"

# slurmdb: the accounting store and the configured accounts and QoS
wait_for 30 sh -c "curl -s -H 'X-SLURM-USER-TOKEN: $tok' $base/slurmdb/v0.0.39/jobs |
  jq -e '.jobs[]|select(.job_id==$id and .state.current==\"COMPLETED\")' >/dev/null" || fail "slurmdb jobs: no $id"
rest GET "/slurmdb/v0.0.39/jobs?users=$me" >/dev/null
check "slurmdb jobs" '[.jobs[]|select(.job_id=='"$id"')][0] | .name=="rest1" and .account=="ops" and
  .exit_code.return_code==0 and .exit_code.status=="SUCCESS" and (.tres.allocated|map(.type)|index("gres"))!=null and
  .meta==null' && check "slurmdb failed job" '[.jobs[]|select(.job_id=='"$failing"')][0] |
  .state.current=="FAILED" and .exit_code=={"status":"ERROR","return_code":3,"signal":{"signal_id":0,"name":""}}' &&
  echo "ok   slurmdb jobs"
# each job's srun steps, from the same step data sacct prints
wait_for 30 sh -c "[ \"\$(sacct -n -P -o JobID -j $stepped | wc -l)\" = 4 ]" || fail "job $stepped: $(sacct -P -j $stepped; cat "$tmp"/slurm-$stepped.out)"
rest GET "/slurmdb/v0.0.39/jobs?users=$me" >/dev/null
check "slurmdb steps" '[.jobs[]|select(.job_id=='"$stepped"')][0].steps as $s | ($s|length)==2 and
  ($s|map(.step.id))==["'"$stepped"'.0","'"$stepped"'.1"] and ($s|map(.step.name))==["true","false"] and
  $s[0].state=="COMPLETED" and $s[0].exit_code.status=="SUCCESS" and
  $s[1].state=="FAILED" and $s[1].exit_code=={"status":"ERROR","return_code":1,"signal":{"signal_id":0,"name":""}} and
  ($s|all(.time.end>=.time.start and .time.start>0 and .nodes.count==2 and .tasks.count>=1 and
    (.time.total|has("seconds")) and (.tres.requested.max|type)=="array" and .step.job_id=='"$stepped"'))' &&
  check "slurmdb no steps" '[.jobs[]|select(.job_id=='"$id"')][0].steps==[]' && echo "ok   slurmdb steps"
check "slurmdb meta" '.meta.plugin.type=="openapi/dbv0.0.39"'
rest GET /slurmdb/v0.0.39/associations >/dev/null
check "associations" '[.associations[]|select(.account=="ops" and .user=="")]|length==1' && echo "ok   associations"
rest GET /slurmdb/v0.0.39/qos >/dev/null
check "qos" '[.qos[]|select(.name=="normal")][0] | (.priority|has("set")) and (.preempt.mode|type)=="array"' &&
  echo "ok   qos"

# sacctmgr shows the configured tree (the dev cluster's accounts.conf)
out=$(sacctmgr -n -P show assoc format=account,user,share,grptres,defqos)
grep -qx 'vision||40|gres/gpu=4|normal' <<<"$out" && grep -qx "vision|$me|1||normal" <<<"$out" &&
  grep -qx 'research||60||normal' <<<"$out" || fail "sacctmgr show assoc: $out"
[ "$(sacctmgr -n -P show assoc | head -1 | cut -d'|' -f1,2)" = "dev|root" ] || fail "sacctmgr: the root first"
[ "$(sacctmgr -P show account | sed -n 2p)" = "ops|ops|root" ] || fail "sacctmgr show account: $(sacctmgr -P show account)"
[ "$(sacctmgr -n -P show assoc where account=speech user=$me format=account,user)" = "speech|$me" ] ||
  fail "sacctmgr conditions"
sacctmgr -n -P show qos format=name,priority,preempt | grep -qx 'high|1000|low' || fail "sacctmgr show qos"
sacctmgr --json show users | jq -e '.[0].default.account=="ops"' >/dev/null || fail "sacctmgr --json"
sacctmgr show foo 2>"$tmp/err" && fail "sacctmgr show foo succeeded"
grep -q '^No valid entity in list command$' "$tmp/err" || fail "sacctmgr show foo: $(cat "$tmp/err")"
sacctmgr show assoc format=foo 2>"$tmp/err" && fail "format=foo succeeded"
grep -qx "Unknown field 'foo'" "$tmp/err" || fail "format=foo: $(cat "$tmp/err")"
# changes are online (test_sacctmgr_write.sh); without -i and no answer, nothing changes
out=$(sacctmgr add account x </dev/null)
grep -qx ' Changes Discarded' <<<"$out" || fail "sacctmgr add without an answer: $out"
sacctmgr -n -P show account format=account | grep -qx x && fail "a discarded add applied"
echo "ok   sacctmgr show assoc/account/user/qos"

# the Unix socket: local auth, the headers name the same user
curl -s --unix-socket "$PHALANX_SERVER" -o "$tmp/body" -H "X-SLURM-USER-NAME: $me" \
  http://localhost/slurm/v0.0.39/ping >/dev/null
check "unix ping" '.pings[0].ping=="UP" and .meta.client.user=="'"$me"'"' && echo "ok   Unix socket, X-SLURM-USER-NAME"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS test_slurmrestd"
