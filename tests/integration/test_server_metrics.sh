#!/usr/bin/env bash
# GET /metrics in the Prometheus text format: validated with promtool (the
# Debian prometheus package) after traffic of every kind, and checked for the
# families the operators' dashboards rely on, with values worked out from
# what this test did (2 jobs submitted, 1 running with 2 GPUs on n01).
source "$(dirname "$0")/lib_server.sh"
write_config
start_server
register_node n01
a=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"m1","gpus_per_node":2}}' | jq .job_id)
expect 201 pxalice POST /v1/jobs '{"job":{"name":"m2","gpus_per_node":8,"nodes_min":4}}' >/dev/null
wait_for "job $a running" job_is "$a" RUNNING
expect 404 pxalice GET /v1/jobs/999 >/dev/null
expect 400 pxalice POST /v1/jobs '{"job":{"gpus":-1}}' >/dev/null
curl -s "http://127.0.0.1:$PORT/v1/jobs" >/dev/null # a 401
# the state lines are refreshed once a second: wait until they show the start
metrics() { curl -s --unix-socket "$SOCK" http://x/metrics; }
gauges_now() {
  local t
  t=$(metrics)
  grep -q '^phalanx_jobs{partition="gpu",state="RUNNING"} 1$' <<<"$t" &&
    grep -q '^phalanx_jobs{partition="gpu",state="PENDING"} 1$' <<<"$t"
}
wait_for "gauges updated" gauges_now
metrics >"$T/metrics.txt"

if command -v promtool >/dev/null; then
  promtool check metrics <"$T/metrics.txt" >"$T/promtool.out" 2>&1 || { cat "$T/promtool.out"; fail "promtool check metrics"; }
  ok "promtool check metrics passes"
else
  fail "promtool not installed (Debian package prometheus; scripts/deps.sh installs it)"
fi

m() { grep -F "$1" "$T/metrics.txt" | awk '{print $NF}'; }
[ "$(m 'phalanx_jobs{partition="gpu",state="PENDING"}')" = 1 ] || fail "pending jobs gauge: $(grep "^phalanx_jobs" "$T/metrics.txt" | tr "\n" " ")"
[ "$(m 'phalanx_gpus{partition="gpu",state="allocated"}')" = 2 ] || fail "allocated GPUs"
[ "$(m 'phalanx_gpus{partition="gpu",state="idle"}')" = 6 ] || fail "idle GPUs (n01: 8 - 2)"
[ "$(m 'phalanx_gpus{partition="gpu",state="down"}')" = 24 ] || fail "down GPUs (n02-n04 not registered)"
[ "$(m 'phalanx_api_requests_total{endpoint="/v1/jobs/{}",status="404"}')" = 1 ] || fail "404 counted"
[ "$(m 'phalanx_api_requests_total{endpoint="/v1/jobs",status="401"}')" = 1 ] || fail "401 counted"
for fam in phalanx_scheduler_cycle_duration_seconds_bucket phalanx_journal_commit_duration_seconds_count \
    phalanx_job_queue_wait_seconds_count phalanx_api_request_duration_seconds_bucket \
    phalanx_fairshare_factor phalanx_scheduler_cycles_total; do
  grep -q "^$fam" "$T/metrics.txt" || fail "missing $fam"
done
[ "$(m 'phalanx_job_queue_wait_seconds_count')" = 1 ] || fail "one job started: one queue wait sample"
ok "jobs, GPUs, API counters, histograms, fair share present with the expected values"
