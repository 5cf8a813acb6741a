#!/usr/bin/env bash
# Malformed and hostile requests, table-driven: each must get its HTTP
# status, its stable error code and (where there is one) the field, and none
# may change the state: the journal sequence, the job list and the node
# states are compared before and after the whole table.
source "$(dirname "$0")/lib_server.sh"
NODE_TIMEOUT=600 # the table takes a while; no heartbeats here
write_config
start_server
register_node n01
j=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"keep","gpus_per_node":8,"nodes_min":4}}' | jq .job_id)
r=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"runs","gpus_per_node":1}}' | jq .job_id)
wait_for "job $r running" job_is "$r" RUNNING
# the scheduler's cycles may still refine the big job's reason (Priority
# while the start budget of a cycle is spent, then ReqNodeNotAvail: it needs
# four nodes and only n01 is up); the snapshot must not race that
job_reason() { api GET "/v1/jobs?id=$1" | cut -d' ' -f2- | jq -r '.jobs[0].reason'; }
wait_for "job $j reason settled" eval '[ "$(job_reason "$j")" = ReqNodeNotAvail ]'

# bodies too big to write inline
head -c $((10 * 1024 * 1024)) /dev/zero | tr '\0' 'a' | sed 's/^/{"job":{"name":"/; s/$/"}}/' >"$T/10mb.json"
python3 -c 'print("[" * 100000 + "]" * 100000)' >"$T/deep.json"
printf '{"job":{"name":"\xff\xfe"}}' >"$T/badutf8.json"
ghost=$("$PHALANX" server token --state-dir "$STATE" --user ghost --uid 54321 --lifetime 600)

before_seq=$(journal_seq)
before_jobs=$(api GET "/v1/jobs?state=all" | cut -d' ' -f2- | jq -c '[.jobs[] | [.job_id, .state, .spec.nice, .reason]]')
before_nodes=$(api GET /v1/nodes | cut -d' ' -f2- | jq -c '[.nodes[] | [.name, .state, .reason]]')

# USER|METHOD|PATH|BODY (@file for a file)|STATUS|CODE|FIELD ("-": no field)
cases=$(cat <<TABLE
pxalice|POST|/v1/jobs|{"job":{"name":"a"|400|PARSE|body
pxalice|POST|/v1/jobs|[1,2]|400|INVALID|body
pxalice|POST|/v1/jobs||400|PARSE|body
pxalice|POST|/v1/jobs|"just a string"|400|PARSE|body
pxalice|POST|/v1/jobs|{"job":{"gpus":-1}}|400|RANGE|job.gpus
pxalice|POST|/v1/jobs|{"job":{"gpus":99999999999999999999999}}|400|PARSE|body
pxalice|POST|/v1/jobs|{"job":{"gpus":1e400}}|400|PARSE|body
pxalice|POST|/v1/jobs|{"job":{"gpus":"8"}}|400|INVALID|job.gpus
pxalice|POST|/v1/jobs|{"job":{"gpus":2.5}}|400|INVALID|job.gpus
pxalice|POST|/v1/jobs|{"job":{"nodes_min":-3}}|400|RANGE|job.nodes_min
pxalice|POST|/v1/jobs|{"job":{"ntasks":20000000}}|400|RANGE|job.ntasks
pxalice|POST|/v1/jobs|{"job":{"mem_per_node_mib":9223372036854775807}}|400|RANGE|job.mem_per_node_mib
pxalice|POST|/v1/jobs|{"job":{"cpu":4}}|400|INVALID|job.cpu
pxalice|POST|/v1/jobs|{"job":{"name":"a"},"extra":1}|400|INVALID|extra
pxalice|POST|/v1/jobs|{"jobs":[]}|400|INVALID|jobs
pxalice|POST|/v1/jobs|{"jobs":{"name":"x"}}|400|INVALID|jobs
pxalice|POST|/v1/jobs|{"job":{"time_limit_s":-1}}|400|RANGE|job.time_limit_s
pxalice|POST|/v1/jobs|{"job":{"stdout_path":"../../etc/passwd"}}|400|INVALID|job.stdout_path
pxalice|POST|/v1/jobs|{"job":{"stderr_path":"/home/x/../../root/.ssh/authorized_keys"}}|400|INVALID|job.stderr_path
pxalice|POST|/v1/jobs|{"job":{"stdin_path":".."}}|400|INVALID|job.stdin_path
pxalice|POST|/v1/jobs|{"job":{"name":"a\\u0000b"}}|400|PARSE|body
pxalice|POST|/v1/jobs|{"job":{"name":"line\\nbreak"}}|400|INVALID|job.name
pxalice|POST|/v1/jobs|{"job":{"env":["NOEQUALS"]}}|400|INVALID|job.env
pxalice|POST|/v1/jobs|{"job":{"argv":[]}}|400|INVALID|job.argv
pxalice|POST|/v1/jobs|{"job":{"uid":4294967295}}|400|RANGE|job.uid
pxalice|POST|/v1/jobs|{"job":{"gpus":1,"gpus":2}}|400|PARSE|body
pxalice|POST|/v1/jobs|{"job":{"nodes_min":5,"nodes_max":2}}|400|INVALID|job.nodes_max
pxalice|POST|/v1/jobs|{"job":{"partition":"nosuch"}}|400|INVALID|job.partition
pxalice|POST|/v1/jobs|{"job":{"account":"physics"}}|403|FORBIDDEN|job.account
pxalice|POST|/v1/jobs|{"job":{"qos":"nosuch"}}|400|INVALID|job.qos
pxalice|POST|/v1/jobs|{"job":{"gpus_per_node":64}}|403|LIMIT|job.gpus
pxalice|POST|/v1/jobs|{"job":{"array":"0-99999999"}}|400|RANGE|job.array
pxalice|POST|/v1/jobs|{"job":{"dependency":"afterok:abc"}}|400|INVALID|job.dependency
pxalice|POST|/v1/jobs|{"job":{"user":"pxbob"}}|403|FORBIDDEN|-
pxalice|POST|/v1/jobs|{"jobs":[{"name":"ok"},{"gpus":-1}]}|400|RANGE|jobs[1].gpus
pxalice|POST|/v1/jobs|{"jobs":[{"name":"ok"},{"partition":"x"}]}|400|INVALID|jobs[1].partition
pxalice|POST|/v1/jobs|@$T/10mb.json|413|TOO_LARGE|body
pxalice|POST|/v1/jobs|@$T/deep.json|400|PARSE|body
pxalice|POST|/v1/jobs|@$T/badutf8.json|400|PARSE|body
ghost|POST|/v1/jobs|{"job":{"name":"g"}}|403|FORBIDDEN|job.account
pxalice|DELETE|/v1/jobs/abc||400|INVALID|id
pxalice|DELETE|/v1/jobs/0||400|INVALID|id
pxalice|DELETE|/v1/jobs/999999||404|NOT_FOUND|-
pxalice|DELETE|/v1/jobs/$j?signal=99||400|RANGE|signal
pxalice|DELETE|/v1/jobs/18446744073709551616||400|INVALID|id
pxalice|PATCH|/v1/jobs/$j|{"time_limit_s":"x"}|400|INVALID|time_limit_s
pxalice|PATCH|/v1/jobs/$j|{}|400|INVALID|body
pxalice|PATCH|/v1/jobs/$j|{"nice":1,"foo":2}|400|INVALID|foo
pxalice|PATCH|/v1/jobs/$j|{"nice":-2147483647}|400|RANGE|nice
pxbob|PATCH|/v1/jobs/$j|{"nice":1}|403|FORBIDDEN|-
root|POST|/v1/nodes/n02/drain|{"reason":123}|400|INVALID|reason
root|POST|/v1/nodes/n02/drain|{}|400|INVALID|reason
root|POST|/v1/nodes/n02/drain|{"reason":"x","why":"y"}|400|INVALID|why
root|POST|/v1/nodes/..%2F..%2Fetc/drain|{"reason":"x"}|404|NOT_FOUND|-
pxalice|GET|/v1/jobs?limit=-1||400|RANGE|limit
pxalice|GET|/v1/jobs?id=1,x||400|INVALID|id
pxalice|GET|/v1/usage?by=planet||400|INVALID|by
pxalice|GET|/v1/usage?since=yesterday||400|INVALID|since
pxalice|GET|/v1/watch?timeout=9999||400|RANGE|timeout
pxalice|GET|/v1/../../etc/passwd||404|NOT_FOUND|-
pxalice|PUT|/v1/jobs|{}|405|METHOD_NOT_ALLOWED|-
pxalice|POST|/v1/agent/report|{"node":"n01","job_id":$r,"state":"COMPLETED","exit_code":0,"term_signal":0,"requeue_requested":false,"peak_mem_mib":0,"cpu_time_ms":0,"start_time":0,"end_time":0}|403|FORBIDDEN|-
root|POST|/v1/agent/report|{"node":"n02","job_id":$r,"state":"COMPLETED","exit_code":0,"term_signal":0,"requeue_requested":false,"peak_mem_mib":0,"cpu_time_ms":0,"start_time":0,"end_time":0}|409|STATE|node
root|POST|/v1/agent/report|{"node":"n01","job_id":$r,"state":"EXPLODED","exit_code":0,"term_signal":0,"requeue_requested":false,"peak_mem_mib":0,"cpu_time_ms":0,"start_time":0,"end_time":0}|400|INVALID|task_report.state
root|POST|/v1/agent/report|{"node":"n01","job_id":777777,"state":"COMPLETED","exit_code":0,"term_signal":0,"requeue_requested":false,"peak_mem_mib":0,"cpu_time_ms":0,"start_time":0,"end_time":0}|404|NOT_FOUND|job_id
root|POST|/v1/agent/report|{"node":"n01","job_id":$r}|400|INVALID|-
root|POST|/v1/agent/register|{"node":"zz99","addr":"x","cpus":1,"mem_mib":1,"gpus":[],"jobs":[],"version":"t"}|404|NOT_FOUND|node
root|POST|/v1/agent/register|{"node":"n02","addr":"x","cpus":-1,"mem_mib":1,"gpus":[],"jobs":[],"version":"t"}|400|-|-
root|POST|/v1/agent/heartbeat|{"node":"n03"}|409|REGISTER|node
TABLE
)

n=0
while IFS='|' read -r user method path body status code field; do
  [ -z "$user" ] && continue
  n=$((n + 1))
  args=(-s -o "$T/.bad.$user" -w '%{http_code}' -X "$method" --path-as-is)
  if [ "${body:0:1}" = @ ]; then args+=(-H 'Content-Type: application/json' --data-binary "$body")
  elif [ -n "$body" ]; then args+=(-H 'Content-Type: application/json' --data-binary "$body")
  elif [ "$method" = POST ]; then args+=(--data-binary "")
  fi
  if [ "$user" = ghost ]; then
    got=$(curl "${args[@]}" -H "Authorization: Bearer $ghost" "http://127.0.0.1:$PORT$path")
  elif [ "$user" = root ]; then
    got=$(curl "${args[@]}" --unix-socket "$SOCK" "http://x$path")
  else
    chmod 777 "$T"
    got=$(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups \
          curl "${args[@]}" --unix-socket "$SOCK" "http://x$path")
  fi
  ans=$(cat "$T/.bad.$user")
  [ "$got" = "$status" ] || fail "case $n ($method $path ${body:0:60}): status $got, want $status: ${ans:0:300}"
  [ "$code" = - ] || [ "$(jq -r .error.code <<<"$ans")" = "$code" ] || fail "case $n: code in $ans, want $code"
  [ "$field" = - ] || [ "$(jq -r .error.field <<<"$ans")" = "$field" ] || fail "case $n: field in $ans, want $field"
done <<<"$cases"
[ $n -ge 40 ] || fail "only $n cases"
ok "$n hostile requests answered with their status, code and field"

[ "$(journal_seq)" = "$before_seq" ] || fail "journal moved: $before_seq -> $(journal_seq)"
after_jobs=$(api GET "/v1/jobs?state=all" | cut -d' ' -f2- | jq -c '[.jobs[] | [.job_id, .state, .spec.nice, .reason]]')
[ "$after_jobs" = "$before_jobs" ] || fail "jobs changed: $before_jobs -> $after_jobs"
after_nodes=$(api GET /v1/nodes | cut -d' ' -f2- | jq -c '[.nodes[] | [.name, .state, .reason]]')
[ "$after_nodes" = "$before_nodes" ] || fail "nodes changed: $before_nodes -> $after_nodes"
kill -0 "$SERVER_PID" || fail "server died"
ok "state unchanged (journal seq $before_seq, jobs, nodes)"
