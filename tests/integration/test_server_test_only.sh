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

# the id is still free; a full cluster: no start now (0), no nodes
j=$(expect 201 pxalice POST /v1/jobs '{"job":{"nodes_min":4,"nodes_max":4,"gpus_per_node":8,"time_limit_s":600,"script":"#!/bin/sh\nsleep 100\n"}}' | jq -r .job_id)
[ "$j" = 1 ] || fail "the first real job got id $j, want 1 (a test used an id)"
wait_for "job $j running" job_is "$j" RUNNING
b=$(expect 200 pxalice POST '/v1/jobs?test_only=1' '{"job":{"gpus_per_node":1,"time_limit_s":60}}')
[ "$(jq -r .job_id <<<"$b")" = 2 ] && [ "$(jq -r .expected_start <<<"$b")" = 0 ] && [ "$(jq -r .nodelist <<<"$b")" = "" ] ||
  fail "test_only on a full cluster: $b"
ok "test_only uses no id; a full cluster gives no start now"

