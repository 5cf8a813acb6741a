#!/usr/bin/env bash
# test_proxy.sh - `phalanx proxy` with a real HAProxy, fed by a stand-in for
# the server's endpoints API (svc/endpoints_stub.py, a file we rewrite) and
# svc/replica.py (python3's http.server, each response in one write) as replicas:
#   - routing by path prefix (stripped) and by Host, 404 for no service;
#   - an endpoint change is applied at run time (no reload: same worker);
#   - a replica killed with kill -9 while a client loop runs costs no
#     failed request (HAProxy retries on another server);
#   - a replica taken out of the endpoints, then stopped, costs none either;
#   - a new service reloads HAProxy gracefully and is routed, and five
#     reloads under a keep-alive client loop cost no request;
#   - a service outgrowing its slots gets more (reload), and the load
#     reports reach the server's /v1/services/NAME/load.
set -euo pipefail
: "${PHALANX:?set PHALANX to the phalanx binary}"
: "${PX_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
source "$PX_SRC/tests/integration/lib_skip.sh"
command -v haproxy >/dev/null || px_skip haproxy "no haproxy (make deps installs Debian's package)"
T=$(mktemp -d /tmp/px-proxy-XXXXXX)
PIDS=()
cleanup() {
  local rc=$?
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ $rc -ne 0 ]; then
    echo "--- proxy log" >&2; cat "$T/proxy.log" >&2 || true
    echo "--- haproxy log" >&2; tail -20 "$T/run/haproxy.log" >&2 || true
  fi
  rm -rf "$T"
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $* (${SECONDS}s)"; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() {
  local what=$1; shift
  local deadline=$((SECONDS + 20))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "timed out waiting for: $what"
    sleep 0.05
  done
}

# replicas: svc/replica.py answering GET /who with their name
declare -A RPORT RPID
replica() { # svc/replica.py: GET /who answers "$1", each response in one write
  mkdir -p "$T/r/$1"
  RPORT[$1]=$(free_port)
  (cd "$T/r/$1" && VERSION=$1 PORT=${RPORT[$1]} exec python3 "$PX_SRC/tests/integration/svc/replica.py") >/dev/null 2>&1 &
  RPID[$1]=$!
  PIDS+=($!)
  wait_for "replica $1" curl -sf "http://127.0.0.1:${RPORT[$1]}/who"
}
SEQ=0
# endpoints "web:a,b api:c": rewrites the stub's answer
endpoints() {
  SEQ=$((SEQ + 1))
  local svcs="" s name reps r eps
  for s in "$@"; do
    name=${s%%:*} reps=${s#*:} eps=""
    for r in ${reps//,/ }; do
      eps="$eps${eps:+,}{\"replica\":0,\"job_id\":1,\"node\":\"n1\",\"host\":\"localhost\",\"ports\":{\"http\":${RPORT[$r]:-$r}}}"
    done
    svcs="$svcs${svcs:+,}{\"name\":\"$name\",\"ports\":[\"http\"],\"endpoints\":[$eps]}"
  done
  echo "{\"seq\":$SEQ,\"services\":[$svcs]}" >"$T/ep.tmp" && mv "$T/ep.tmp" "$T/ep.json"
}
get() { curl -sf "${@:2}" "http://127.0.0.1:$PP$1"; }
worker() { echo "show info" | python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"show info\n"); print([l for l in s.makefile().read().splitlines() if l.startswith("Pid:")][0])' "$T/run/admin.sock"; }
# the client's four connections are open at the proxy: it is sending
client_on() { [ "$(ss -Htn state established "( dport = :$PP )" | wc -l)" -ge 4 ]; }
# eight requests in a row answered by c: the proxy applied b's removal
only_c() { for _ in 1 2 3 4 5 6 7 8; do [ "$(curl -s "http://127.0.0.1:$PP/web/who")" = c ] || return 1; done; }
client() { python3 "$PX_SRC/tests/integration/svc/client.py" "http://127.0.0.1:$PP$1" "$2" "$3" 4; }

for r in a b c d; do replica $r; done
SP=$(free_port) PP=$(free_port)
endpoints "web:a"
python3 "$PX_SRC/tests/integration/svc/endpoints_stub.py" "$SP" "$T/ep.json" "$T/loads.log" &
PIDS+=($!)
wait_for "the stub" curl -sf "http://127.0.0.1:$SP/v1/services/endpoints"
"$PHALANX" proxy --server "http://127.0.0.1:$SP" --listen "127.0.0.1:$PP" --run-dir "$T/run" \
  --ready-file "$T/ready" >"$T/proxy.log" 2>&1 &
PIDS+=($!)
wait_for "the proxy's ready file" test -s "$T/ready"
wait_for "web routed" get /web/who
[ "$(get /web/who)" = a ] || fail "path prefix: $(get /web/who)"
[ "$(get /who -H 'Host: web')" = a ] || fail "Host web"
[ "$(get /who -H 'Host: web.example.org:8080')" = a ] || fail "Host web.example.org:8080"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PP/nosuch/who")
[ "$code" = 404 ] || fail "no such service: status $code"
ok "routing by path prefix and Host; 404 for no service"

w0=$(worker)
endpoints "web:a,b"
wait_for "b in rotation" bash -c "for i in 1 2 3 4; do curl -s http://127.0.0.1:$PP/web/who; done | grep -q b"
[ "$(worker)" = "$w0" ] || fail "an endpoint change reloaded haproxy"
ok "endpoint change applied at run time, no reload"

# kill -9 a replica still listed: retries on another server hide it
client /web/who 100000 3 >"$T/c1" &
cpid=$!
wait_for "the client connected" client_on
kill -9 "${RPID[a]}"
wait $cpid
cat "$T/c1"
grep -q ' failed 0 ' "$T/c1" || fail "requests failed around a replica's kill -9"
ok "replica kill -9 under load: $(head -1 "$T/c1")"

# draining: out of the endpoints first, stopped after
endpoints "web:b,c"
wait_for "c in rotation" bash -c "for i in 1 2 3 4; do curl -s http://127.0.0.1:$PP/web/who; done | grep -q c"
client /web/who 100000 3 >"$T/c2" &
cpid=$!
wait_for "the client connected" client_on
endpoints "web:c"
wait_for "b out of rotation" only_c
kill "${RPID[b]}"
wait $cpid
grep -q ' failed 0 ' "$T/c2" || fail "requests failed while a replica was drained: $(cat "$T/c2")"
ok "replica drained then stopped: $(head -1 "$T/c2")"

# reloads under a client loop (keep-alive): the old worker answers a
# request on an idle connection with Connection: close instead of closing
# it under the client (option idle-close-on-response)
client /web/who 100000 8 >"$T/c4" &
cpid=$!
new_worker() { [ "$(worker)" != "$w" ]; }
for svcs in "api:d" "" "api:d" "" "api:d"; do
  w=$(worker)
  endpoints "web:c" ${svcs:+"$svcs"}
  wait_for "a reload" new_worker
  sleep 0.3 # requests on the new worker a while (a window, not a wait for anything)
done
wait $cpid
grep -q ' failed 0 ' "$T/c4" || fail "requests failed across reloads: $(cat "$T/c4")"
wait_for "api routed" get /api/who
[ "$(get /api/who)" = d ] || fail "api"
[ "$(get /web/who)" = c ] || fail "web after the reload"
[ "$(worker)" != "$w0" ] || fail "a new service did not reload haproxy"
ok "a new service reloads haproxy gracefully; 5 reloads under a client loop: $(head -1 "$T/c4")"

# nine endpoints for eight slots (eight of them closed ports nobody serves)
many="c"
for i in 1 2 3 4 5 6 7 8; do many="$many,$(free_port)"; done
endpoints "web:$many" "api:d"
wait_for "sixteen slots" grep -q "server s16 " "$T/run/haproxy.cfg"
client /web/who 200 10 >"$T/c3"
grep -q ' failed 0 ' "$T/c3" || fail "closed endpoints cost failed requests: $(cat "$T/c3")"
ok "a service outgrowing its slots gets more; closed endpoints cost no request"

wait_for "load reports" grep -q '^web {"in_flight":[0-9]*,"requests_per_s":[0-9.]*}' "$T/loads.log"
grep '^web' "$T/loads.log" | awk '{ split($2, a, /[:,}]/); if (a[4] + 0 > 0) found = 1 } END { exit !found }' ||
  fail "no load report counted requests: $(tail -3 "$T/loads.log")"
ok "load reported to /v1/services/NAME/load"
