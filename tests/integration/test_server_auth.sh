#!/usr/bin/env bash
# Authentication and authorisation with real processes: SO_PEERCRED on the
# Unix socket, a real munged with its own key, HS256 JWTs minted by the
# server's key; 401 for missing/forged/expired credentials, 403 with the
# rule for each role violation (and logged), agents bound to their node,
# per-user rate limits with 429.
source "$(dirname "$0")/lib_server.sh"
write_config
start_munged
start_server --munge-socket "$MUNGE_SOCK"

# --- identities
w=$(expect 200 pxalice GET /v1/whoami)
[ "$(jq -r '.user+" "+.method' <<<"$w")" = "pxalice peercred" ] || fail "peercred: $w"
[ "$(jq -c .roles <<<"$w")" = '["user"]' ] || fail "roles: $w"
[ "$(expect 200 pxoper GET /v1/whoami | jq -c .roles)" = '["user","operator"]' ] || fail "operator role"
[ "$(expect 200 root GET /v1/whoami | jq -c .roles)" = '["user","operator","admin"]' ] || fail "admin role"
ok "peercred identities and roles"

# --- 401 on TCP
tcp_expect 401 "" GET /v1/jobs | jq -e '.error.code=="UNAUTHENTICATED"' >/dev/null
tcp_expect 401 "Basic YWxpY2U6eA==" GET /v1/jobs >/dev/null
tcp_expect 401 "Bearer not.a.token" GET /v1/jobs >/dev/null
tcp_expect 401 "MUNGE garbage" GET /v1/jobs >/dev/null
hdr=$(curl -s -D - -o /dev/null "http://127.0.0.1:$PORT/v1/jobs" | tr -d '\r' | grep -i '^WWW-Authenticate:')
[ -n "$hdr" ] || fail "401 without WWW-Authenticate"
# /metrics and the API document are open
tcp_expect 200 "" GET /metrics >/dev/null
ok "401 without or with bad credentials"

# --- JWT
tok=$("$PHALANX" server token --state-dir "$STATE" --user pxalice --lifetime 600)
w=$(tcp_expect 200 "Bearer $tok" GET /v1/whoami)
[ "$(jq -r '.user+" "+.method' <<<"$w")" = "pxalice jwt" ] || fail "jwt: $w"
[ "$(jq -r .uid <<<"$w")" = "$(id -u pxalice)" ] || fail "jwt uid: $w"
# watches over TCP wait without a thread: with more parked watches than the
# listener has threads (4-16), another request is still answered at once;
# a parked watch answers at its deadline, or at once when a change comes
seq=$(tcp_expect 200 "Bearer $tok" GET "/v1/watch?after=0&timeout=0" | jq .seq)
wpids=()
for i in $(seq 20); do
  curl -s -o "$T/watch.$i" -H "Authorization: Bearer $tok" "http://127.0.0.1:$PORT/v1/watch?after=$seq&timeout=4" &
  wpids+=($!)
done
# the watches connected (the server then parks each as it reads it)
watches_open() { [ "$(ss -Htn state established "( dport = :$PORT )" | wc -l)" -ge 20 ]; }
wait_for "20 watches connected" watches_open
t0=$(date +%s%N)
tcp_expect 200 "Bearer $tok" GET /v1/whoami >/dev/null
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
ms_who=$ms
[ "$ms" -lt 2000 ] || fail "whoami took $ms ms behind 20 parked watches"
api_as pxalice POST /v1/jobs '{"job":{"name":"woke","hold":true}}' >/dev/null
for p in "${wpids[@]}"; do wait "$p"; done
woke=$(cat "$T"/watch.* | jq -r '[.jobs[].spec.name] | join(",")' | sort -u)
[ "$woke" = woke ] || fail "parked watches answered with: $woke"
t0=$(date +%s%N)
w=$(tcp_expect 200 "Bearer $tok" GET "/v1/watch?after=$(journal_seq)&timeout=1")
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -ge 900 ] && [ "$(jq '.jobs | length' <<<"$w")" = 0 ] || fail "an idle watch: $ms ms, $w"
ok "watches over TCP park: whoami in ${ms_who} ms behind 20 of them, woken by a change, idle ones at their deadline"
# forged: same claims, another key; expired; alg none; tampered payload
forge() { # forge KEYFILE_OR_EMPTY EXP ALG
  python3 - "$@" <<'PY'
import base64, hashlib, hmac, json, sys, time
key, exp, alg = sys.argv[1], int(sys.argv[2]), sys.argv[3]
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
head = b64(json.dumps({"alg": alg, "typ": "JWT"}).encode())
body = b64(json.dumps({"sub": "pxalice", "uid": 0, "exp": int(time.time()) + exp}).encode())
msg = (head + "." + body).encode()
sig = b64(hmac.new(open(key, "rb").read(), msg, hashlib.sha256).digest()) if alg == "HS256" else ""
print(head + "." + body + "." + sig)
PY
}
head -c 32 /dev/urandom >"$T/other.key"
tcp_expect 401 "Bearer $(forge "$T/other.key" 600 HS256)" GET /v1/whoami >/dev/null
tcp_expect 401 "Bearer $(forge "$STATE/jwt.key" -60 HS256)" GET /v1/whoami | jq -e '.error.message|test("expired")' >/dev/null
tcp_expect 401 "Bearer $(forge "$STATE/jwt.key" 600 none)" GET /v1/whoami >/dev/null
good=$(forge "$STATE/jwt.key" 600 HS256)
tcp_expect 200 "Bearer $good" GET /v1/whoami >/dev/null
tampered=$(cut -d. -f1 <<<"$good").$(printf '{"sub":"root","uid":0,"exp":9999999999}' | base64 -w0 | tr '+/' '-_' | tr -d =).$(cut -d. -f3 <<<"$good")
tcp_expect 401 "Bearer $tampered" GET /v1/whoami >/dev/null
# a user mints a token for herself over the Unix socket, not for others
tok2=$(expect 201 pxalice POST /v1/tokens '{"lifetime_s":600}' | jq -r .token)
tcp_expect 200 "Bearer $tok2" GET /v1/whoami | jq -e '.user=="pxalice"' >/dev/null
expect 403 pxalice POST /v1/tokens '{"user":"pxbob"}' | jq -e '.error.message|test("token-self")' >/dev/null
ok "JWT: valid, forged, expired, alg none, tampered, self-service"

# --- MUNGE
w=$(tcp_expect 200 "MUNGE $(munge_cred pxbob)" GET /v1/whoami)
[ "$(jq -r '.user+" "+.method' <<<"$w")" = "pxbob munge" ] || fail "munge: $w"
cred=$(munge_cred pxbob)
tcp_expect 200 "MUNGE $cred" GET /v1/whoami >/dev/null
tcp_expect 401 "MUNGE $cred" GET /v1/whoami | jq -e '.error.message|test("replay";"i")' >/dev/null
ok "MUNGE: identity, replay refused"

# --- agents are bound to their node
reg() { node_report "$1"; }
tcp_expect 200 "MUNGE $(munge_cred root n02)" POST /v1/agent/register "$(reg n02)" >/dev/null
tcp_expect 403 "MUNGE $(munge_cred root n02)" POST /v1/agent/register "$(reg n03)" | jq -e '.error.message|test("agent-node")' >/dev/null
ntok=$("$PHALANX" server token --state-dir "$STATE" --user root --uid 0 --node n01 --lifetime 600)
tcp_expect 403 "Bearer $ntok" POST /v1/agent/heartbeat '{"node":"n02"}' >/dev/null
tcp_expect 403 "Bearer $ntok" GET "/v1/agent/work?node=n02&after=0&timeout=0" >/dev/null
# a user is no agent, even for a node named in her credential
tcp_expect 403 "MUNGE $(munge_cred pxalice n02)" POST /v1/agent/heartbeat '{"node":"n03"}' >/dev/null
expect 403 pxalice POST /v1/agent/register "$(reg n04)" >/dev/null
ok "agents only for their own node"

# --- roles (each denial 403 with its rule, logged)
j=$(expect 201 pxalice POST /v1/jobs '{"job":{"name":"a","gpus_per_node":8,"nodes_min":4}}' | jq .job_id)
expect 403 pxbob DELETE /v1/jobs/$j | jq -e '.error.message|test("own-job")' >/dev/null
expect 403 pxeve POST /v1/jobs/$j/hold >/dev/null
expect 200 pxcoord POST /v1/jobs/$j/hold >/dev/null     # coordinator of ml
expect 200 pxalice POST /v1/jobs/$j/release >/dev/null
expect 403 pxalice PATCH /v1/jobs/$j '{"priority":5}' | jq -e '.error.message|test("operator")' >/dev/null
expect 403 pxalice PATCH /v1/jobs/$j '{"nice":-5}' >/dev/null
expect 200 pxalice PATCH /v1/jobs/$j '{"nice":5}' >/dev/null
expect 200 pxoper PATCH /v1/jobs/$j '{"priority":5}' >/dev/null
expect 403 pxalice POST /v1/nodes/n01/drain '{"reason":"x"}' >/dev/null
expect 200 pxoper POST /v1/nodes/n01/drain '{"reason":"x"}' >/dev/null
expect 403 pxalice POST /v1/jobs '{"job":{"user":"pxbob"}}' | jq -e '.error.message|test("submit-as")' >/dev/null
expect 403 root POST /v1/jobs '{"job":{"name":"r"}}' | jq -e '.error.message|test("root-jobs")' >/dev/null
expect 200 pxeve GET "/v1/jobs?id=$j" | jq -e '.jobs|length==1' >/dev/null  # summaries are public
grep -q 'denied (own-job): user pxbob' "$T/server.log" || fail "denial not logged"
ok "roles: own job, coordinator, operator, submit-as, root jobs; denials logged"

# --- rate limit: 1 request/s, burst 2, per user; root is exempt
stop_server TERM
start_server --munge-socket "$MUNGE_SOCK" --rate-limit 1
codes=$(for i in $(seq 25); do api_as pxalice GET /v1/whoami | cut -d' ' -f1; done | sort | uniq -c)
grep -q ' 429$' <<<"$codes" || fail "no 429 after 25 quick requests: $codes"
expect 200 root GET /v1/whoami >/dev/null
expect 200 pxbob GET /v1/whoami >/dev/null   # another user is not starved
r=$(api_as pxalice GET /v1/whoami)
[ "${r%% *}" = 429 ] && { jq -e '.error.code=="RATE_LIMITED"' <<<"${r#* }" >/dev/null || fail "429 body"; }
ok "rate limit 429 per user"
