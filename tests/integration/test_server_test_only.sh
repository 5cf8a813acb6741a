#!/usr/bin/env bash
# POST /v1/jobs?test_only=1 (sbatch --test-only) against a real server: the
# job is judged as a submit would judge it (the same refusals, byte for
# byte), the answer names the id it would get, when and on which nodes it
# would start and its CPUs, and nothing is kept: no job listed, no journal
# record, the id still free for the next real submit. sbatch --test-only
# prints Slurm's line from it.
source "$(dirname "$0")/lib_server.sh"
write_config
start_server
for n in n01 n02 n03 n04; do register_node $n; done

seq0=$(journal_seq)
a=$(expect 200 pxalice POST '/v1/jobs?test_only=1' '{"job":{"gpus_per_node":8,"ntasks":4,"script":"#!/bin/sh\ntrue\n","time_limit_s":600}}')
now=$(date +%s)
[ "$(jq -r .job_id <<<"$a")" = 1 ] || fail "test_only job id: $a"
[ "$(jq -r .test_only <<<"$a")" = true ] || fail "test_only not said: $a"
[ "$(jq -r .nodelist <<<"$a")" = n01 ] || fail "test_only nodes: $a"
[ "$(jq -r .ncpus <<<"$a")" = 4 ] || fail "test_only CPUs: $a"
[ "$(jq -r .partition <<<"$a")" = gpu ] || fail "test_only partition: $a"
t=$(jq -r .expected_start <<<"$a")
[ $((now - t)) -ge 0 ] && [ $((now - t)) -le 5 ] || fail "test_only start $t, now $now"
g=$(expect 200 pxalice POST '/v1/jobs?test_only=1' '{"job":{"nodes_min":2,"nodes_max":2,"gpus_per_node":8,"partition":"small"}}')
[ "$(jq -r .nodelist <<<"$g")" = 'n[01-02]' ] || fail "test_only gang nodes: $g"
[ "$(jq '.jobs|length' <<<"$(expect 200 pxalice GET /v1/jobs)")" = 0 ] || fail "a tested job is listed"
[ "$(journal_seq)" = "$seq0" ] || fail "a test journaled something (seq $(journal_seq), was $seq0)"
ok "test_only answers start, nodes, CPUs and keeps nothing"

# the same refusals as a submit, byte for byte
for body in '{"job":{"partition":"small","time_limit_s":7200}}' '{"job":{"partition":"nosuch"}}' \
  '{"job":{"gpus_per_node":9}}' '{"job":{"account":"physics"}}'; do
  real=$(api_as pxalice POST /v1/jobs "$body")
  test=$(api_as pxalice POST '/v1/jobs?test_only=1' "$body")
  [ "$real" = "$test" ] || fail "test_only refusal differs from submit's for $body: $test vs $real"
  [ "${real%% *}" != 201 ] || fail "expected a refusal for $body: $real"
done
e=$(expect 400 pxalice POST '/v1/jobs?test_only=yes' '{"job":{}}')
[ "$(jq -r .error.field <<<"$e")" = test_only ] || fail "bad test_only value: $e"
e=$(expect 400 pxalice POST '/v1/jobs?test_only=1' '{"jobs":[{},{}]}')
grep -q "not a batch" <<<"$e" || fail "batch test: $e"
ok "test_only refuses as submit does"

# sbatch --test-only prints Slurm's line
mkdir -p "$T/bin" && ln -s "$PHALANX" "$T/bin/sbatch"
line=$(cd "$T" && setpriv --reuid=pxalice --regid="$(id -g pxalice)" --clear-groups \
  env PATH="$T/bin:$PATH" PHALANX_SERVER="unix:$SOCK" TZ=UTC sbatch --test-only -N2 --gres=gpu:8 -t 10 --wrap true 2>&1)
[[ "$line" =~ ^sbatch:\ Job\ 1\ to\ start\ at\ 20[0-9-]+T[0-9:]+\ using\ 2\ processors\ on\ nodes\ n\[01-02\]\ in\ partition\ gpu$ ]] ||
  fail "sbatch --test-only: $line"
[ "$(jq '[.jobs[] | select(.job_id > 0)] | length' <<<"$(expect 200 pxalice GET '/v1/jobs?state=all')")" = 0 ] ||
  fail "sbatch --test-only left a job"
ok "sbatch --test-only: $line"

# the id is still free; a full cluster: the start is when the running job
# ends (its start plus its limit, to the second), on the nodes it frees
j=$(expect 201 pxalice POST /v1/jobs '{"job":{"nodes_min":4,"nodes_max":4,"gpus_per_node":8,"time_limit_s":600,"script":"#!/bin/sh\nsleep 100\n"}}' | jq -r .job_id)
[ "$j" = 1 ] || fail "the first real job got id $j, want 1 (a test used an id)"
wait_for "job $j running" job_is "$j" RUNNING
end1=$(( $(api GET "/v1/jobs?id=$j" | cut -d' ' -f2- | jq -r '.jobs[0].start_time') + 600 ))
b=$(expect 200 pxalice POST '/v1/jobs?test_only=1' '{"job":{"gpus_per_node":1,"time_limit_s":60}}')
[ "$(jq -r .job_id <<<"$b")" = 2 ] && [ "$(jq -r .expected_start <<<"$b")" = "$end1" ] &&
  [[ "$(jq -r .nodelist <<<"$b")" =~ ^n0[1-4]$ ]] || fail "test_only on a full cluster (job 1 ends at $end1): $b"
ok "test_only uses no id; a full cluster: the start is the running job's end"

# a job queued ahead (all four nodes for 1200 s from job 1's end) comes
# first: a one-node job starts after it; once it is held, it does not count
q=$(expect 201 pxalice POST /v1/jobs '{"job":{"nodes_min":4,"nodes_max":4,"gpus_per_node":8,"time_limit_s":1200,"script":"#!/bin/sh\ntrue\n"}}' | jq -r .job_id)
job_reason() { api GET "/v1/jobs?id=$1" | cut -d' ' -f2- | jq -r '.jobs[0].reason'; }
reason_is() { [ "$(job_reason "$1")" = "$2" ]; }
wait_for "job $q waits for resources" reason_is "$q" Resources
c=$(expect 200 pxalice POST '/v1/jobs?test_only=1' '{"job":{"gpus_per_node":1,"time_limit_s":60}}')
t=$(jq -r .expected_start <<<"$c")
[ "$t" -ge $((end1 + 1200)) ] && [ "$t" -le $((end1 + 1200 + 300)) ] ||
  fail "test_only behind job $q: start $t, want its end $((end1 + 1200)) (to the plan's 300 s slots)"
line=$(cd "$T" && setpriv --reuid=pxalice --regid="$(id -g pxalice)" --clear-groups \
  env PATH="$T/bin:$PATH" PHALANX_SERVER="unix:$SOCK" TZ=UTC sbatch --test-only --gres=gpu:1 -t 1 --wrap true 2>&1)
want=$(TZ=UTC date -d "@$t" +%Y-%m-%dT%H:%M:%S)
[[ "$line" =~ ^sbatch:\ Job\ 3\ to\ start\ at\ $want\ using\ 1\ processors\ on\ nodes\ n0[1-4]\ in\ partition\ gpu$ ]] ||
  fail "sbatch --test-only behind job $q: $line (want $want)"
expect 200 pxalice POST "/v1/jobs/$q/hold" '{}' >/dev/null
h=$(expect 200 pxalice POST '/v1/jobs?test_only=1' '{"job":{"gpus_per_node":1,"time_limit_s":60}}')
[ "$(jq -r .expected_start <<<"$h")" = "$end1" ] || fail "test_only with job $q held: $h (job 1 ends at $end1)"
ok "test_only counts the jobs queued ahead: $line"
