#!/usr/bin/env bash
# TLS on the TCP listener (docs/operations.md, Transport security):
#  1. a real server and agent over TLS: the agent registers, a job runs;
#  2. the CLI over https:// verifies the server against PHALANX_CA_FILE;
#     `phalanx ui` links to https://;
#  3. a wrong CA is refused, by the agent and by the CLI, with an error that
#     names the CA file;
#  4. plain TCP on an address other than loopback is refused at start, with
#     the keys to set in the message;
#  5. over plain TCP (AllowPlainTCP=YES), a bearer token from a peer that is
#     not loopback (another network namespace, over a veth pair) is refused,
#     while an open route (/metrics) is served to it.
source "$(dirname "$0")/lib_server.sh"
AGENT_PIDS=()
NS=
tls_cleanup() {
  local rc=$?
  set +e
  for p in "${AGENT_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  [ -n "$NS" ] && ip netns del "$NS" 2>/dev/null
  [ -n "$NS" ] && ip link del "h$NS" 2>/dev/null
  [ $rc -ne 0 ] && tail -5 "$T"/agents/*.log >&2
  (exit $rc)
  cleanup
}
trap tls_cleanup EXIT

write_config
"$PHALANX" dev --make-certs "$T/tls" >/dev/null || fail "phalanx dev --make-certs"
"$PHALANX" dev --make-certs "$T/other" >/dev/null || fail "a second CA"
cat >>"$T/slurm.conf" <<CONF
TLSCertFile=$T/tls/server.pem
TLSKeyFile=$T/tls/server.key
TLSCAFile=$T/tls/ca.pem
CONF
start_server
grep -q "listening on 127.0.0.1:$PORT (TLS)" "$T/server.log" || fail "the server does not say it listens with TLS"
URL=https://127.0.0.1:$PORT

# ---- 1. a real agent over TLS; a job runs
mkdir -p "$T/agents"
agent() { # NODE CA_FILE
  "$PHALANX" server token --state-dir "$STATE" --user root --uid 0 --node "$1" >"$T/agents/$1.token"
  "$PHALANX" agent --server "$URL" --ca-file "$2" --node "$1" --addr 127.0.0.1 \
    --state-dir "$T/agents/$1" --emulate-gpus 8:h100 --emulate-cpus 64 --emulate-mem 524288 --kill-wait 1 \
    --allow-root --token-file "$T/agents/$1.token" >>"$T/agents/$1.log" 2>&1 &
  AGENT_PIDS+=($!)
}
node_state() { api GET /v1/nodes | cut -d' ' -f2- | jq -r ".nodes[] | select(.name == \"$1\") | .state"; }
node_up() { local s; s=$(node_state "$1"); [ -n "$s" ] && [ "$s" != DOWN ]; }
agent n01 "$T/tls/ca.pem"
wait_for "n01 registered over TLS" node_up n01
mkdir -p "$T/work" && chmod 777 "$T/work"
id=$(expect 201 pxalice POST /v1/jobs "{\"jobs\":[{\"name\":\"tls\",\"time_limit_s\":60,\"partition\":\"small\",\"workdir\":\"$T/work\",\"script\":\"#!/bin/sh\\necho over-tls\\n\"}]}" | jq -r '.job_ids[0]')
wait_for "job $id COMPLETED" job_is "$id" COMPLETED
ok "agent registered over TLS and job $id ran"

# ---- 2. the CLI over https:// (the lean front end hands it to phalanxd)
tok=$("$PHALANX" server token --state-dir "$STATE" --user root --uid 0)
out=$(PHALANX_SERVER=$URL PHALANX_CA_FILE=$T/tls/ca.pem PHALANX_TOKEN=$tok "$PHALANX" queue --all --states all 2>&1) ||
  fail "phalanx queue over https: $out"
grep -q "$id" <<<"$out" || fail "phalanx queue over https does not list job $id: $out"
link=$(PHALANX_SERVER=$SOCK "$PHALANX" ui) || fail "phalanx ui failed"
[[ $link == "$URL/ui/#token="* ]] || fail "the dashboard's link is not https: $link"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/tls/ca.pem" "$URL/v1/openapi.json")
[ "$code" = 200 ] || fail "an open route over https with the CA: HTTP $code"
ok "CLI over https with the right CA; the dashboard's link is https"

# ---- 3. a wrong CA: refused, and the error names the CA file
if out=$(PHALANX_SERVER=$URL PHALANX_CA_FILE=$T/other/ca.pem PHALANX_TOKEN=$tok "$PHALANX" queue 2>&1); then
  fail "the CLI accepted a server its CA did not sign: $out"
fi
grep -q "certificate is not signed by the CA in $T/other/ca.pem" <<<"$out" || fail "CLI error not precise: $out"
agent n02 "$T/other/ca.pem"
wait_for "the agent's log names the wrong CA" grep -q "not signed by the CA in $T/other/ca.pem" "$T/agents/n02.log"
node_up n02 && fail "n02 registered with a CA that did not sign the server's certificate"
curl -s -o /dev/null "http://127.0.0.1:$PORT/metrics" && fail "the TLS listener answered plain HTTP"
ok "wrong CA refused (CLI: $(tail -1 <<<"$out" | cut -c1-90)...)"

# ---- 4. plain TCP off loopback: refused at start
sed '/^TLS/d' "$T/slurm.conf" >"$T/plain.conf"
if out=$(timeout 20 "$PHALANX" server --config "$T/plain.conf" --state-dir "$T/plain" \
  --listen "0.0.0.0:$(free_port)" 2>&1); then
  fail "a plain TCP listener on 0.0.0.0 started"
fi
grep -q "plain TCP on an address other than loopback.*set TLSCertFile= and TLSKeyFile=" <<<"$out" ||
  fail "the refusal does not name the keys: $out"
ok "plain TCP on 0.0.0.0 refused at start"

# ---- 5. a token over plain TCP from a peer that is not loopback
[ "$(id -u)" = 0 ] || px_skip root "network namespaces need root"
command -v ip >/dev/null || px_skip iproute2 "no ip command"
stop_server
# a /24 no other run on the machine holds (the host side of the veth is in
# the host's namespace, where a second suite's same test makes its own)
net=$(( $$ % 200 + 20 ))
while ip -o addr show | grep -q " 10\.79\.$net\."; do net=$(( net % 200 + 21 )); done
NS=pxtls$$
ip netns add "$NS" || px_skip root "cannot create a network namespace"
ip link add "h$NS" type veth peer name "p$NS"
ip link set "p$NS" netns "$NS"
ip addr add "10.79.$net.1/24" dev "h$NS"
ip link set "h$NS" up
ip -n "$NS" addr add "10.79.$net.2/24" dev "p$NS"
ip -n "$NS" link set "p$NS" up
ip -n "$NS" link set lo up
sed -i '/^TLS/d' "$T/slurm.conf"
echo "AllowPlainTCP=YES" >>"$T/slurm.conf"
PORT=$(free_port)
"$PHALANX" server --config "$T/slurm.conf" --state-dir "$STATE" --listen "10.79.$net.1:$PORT" \
  >>"$T/server.log" 2>&1 &
SERVER_PID=$!
wait_for "the plain server answers" curl -sf --unix-socket "$SOCK" http://x/v1/whoami
IN="nsenter --net=/run/netns/$NS"
WAIT_S=10 wait_for "the namespace reaches the server" $IN curl -sf -o /dev/null "http://10.79.$net.1:$PORT/metrics"
code=$($IN curl -s -o "$T/peer.out" -w '%{http_code}' -H "Authorization: Bearer $tok" "http://10.79.$net.1:$PORT/v1/jobs")
[ "$code" = 401 ] || fail "a bearer token over plain TCP from 10.79.$net.2: HTTP $code, want 401"
grep -q "not accepted over plain TCP from 10.79.$net.2" "$T/peer.out" || fail "401 without the reason: $(cat "$T/peer.out")"
code=$($IN curl -s -o "$T/peer.out" -w '%{http_code}' -H "Authorization: MUNGE notacredential" "http://10.79.$net.1:$PORT/v1/jobs")
[ "$code" = 401 ] || fail "a MUNGE header over plain TCP from the peer: HTTP $code, want 401"
grep -q "not accepted over plain TCP" "$T/peer.out" || fail "MUNGE refused for another reason: $(cat "$T/peer.out")"
grep -q "AllowPlainTCP=YES" "$T/server.log" || fail "no warning about the plain listener in the log"
ok "token over plain TCP from a non-loopback peer refused (HTTP 401), /metrics served"
