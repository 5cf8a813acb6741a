#!/usr/bin/env bash
# `phalanx dev` restarts a server that dies, as a service manager would, and
# keeps its agents: kill -9 the server while a job runs; a new server comes
# up on the same state directory, the job is recovered and completes once,
# the agents are the same processes, and the cluster takes new work.
source "$(dirname "$0")/agent/lib.sh"
need_root
T=$(mktemp -d /tmp/pxdevr.XXXXXX)
chmod 755 "$T"
DEV=
cleanup() {
  [ -n "$DEV" ] && { kill -TERM "$DEV" 2>/dev/null; wait "$DEV" 2>/dev/null; }
  for d in "$T"/c/agents/dev*/; do [ -d "$d" ] && kill_leftovers "$d"; done
  [ -n "${PX_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
"$PHALANX" dev --nodes 2 --quiet --state-dir "$T/c" --ready-file "$T/ready" 2>"$T/dev.err" &
DEV=$!
wait_for 60 test -s "$T/ready" || fail "phalanx dev did not come up: $(cat "$T/dev.err")"
SOCK=$T/c/server.sock
api() { curl -sf --max-time 5 --unix-socket "$SOCK" "http://localhost$1" "${@:2}"; }
state_of() { api "/v1/jobs/$1" | jq -r .state; }
has_state() { [ "$(state_of "$1")" = "$2" ]; }
submit() { # SECONDS
  api /v1/jobs -H 'Content-Type: application/json' -d "{\"job\":{\"gpus_per_node\":1,\"time_limit_s\":120,
    \"argv\":[\"sleep\",\"$1\"],\"workdir\":\"/tmp\"}}" | jq -r '.job_id // .jobs[0].job_id'
}
SERVER=$(cat "$T/c/server.pid")
# dev's children but the server and the proxy (dev_proxy.h)
agents() { pgrep -P "$DEV" -f ' agent ' | grep -vx "$(cat "$T/c/server.pid")" | sort | tr '\n' ' '; }
AGENTS=$(agents)
[ "$(wc -w <<<"$AGENTS")" = 2 ] || fail "expected 2 agent processes under dev, found: $AGENTS"

J=$(submit 8)
wait_for 30 has_state "$J" RUNNING || fail "job $J did not start: $(state_of "$J")"
kill -9 "$SERVER"
restarted() { [ "$(cat "$T/c/server.pid")" != "$SERVER" ] && api /v1/nodes >/dev/null; }
wait_for 30 restarted || fail "the server did not come back: $(cat "$T/dev.err")"
grep -q "starting it again" "$T/dev.err" || fail "dev did not say it restarted the server: $(cat "$T/dev.err")"
ok "kill -9 of the server: dev started a new one ($(cat "$T/c/server.pid"), was $SERVER)"

wait_for 40 has_state "$J" COMPLETED || fail "job $J after the server restart: $(api "/v1/jobs/$J")"
[ "$(api "/v1/jobs/$J" | jq -r '.restarts // 0')" = 0 ] || fail "job $J ran again: $(api "/v1/jobs/$J")"
ok "the running job was recovered and completed once"

[ "$(agents)" = "$AGENTS" ] || fail "agents changed across the server restart: was $AGENTS, now $(agents)"
ok "the agents kept running ($AGENTS)"

K=$(submit 1)
wait_for 30 has_state "$K" COMPLETED || fail "new job $K after the restart: $(state_of "$K")"
ok "the restarted cluster takes new work"
