#!/usr/bin/env bash
# Web sessions (docs/interactive.md) on a real `phalanx dev` cluster: a web
# application (tests/integration/session_app.py; the same path a notebook
# takes: it listens on $PORT under $PHALANX_SESSION_BASE) started with
# `phalanx session start --gpus 1 -t 10 --idle 0:04`:
#   - the command prints the session's URL once the application answers;
#     the session is a job like any (squeue lists it, with its GPU)
#   - through the server's HTTPS listener: no credential 401; the printed URL
#     (its one token) sets a cookie for the session's path and redirects
#     (other query arguments kept); then GET and POST reach the application
#     with their paths, queries and bodies, and the user it is for (a
#     client cannot name another)
#   - an upgraded connection (a WebSocket's way) carries bytes both ways
#   - another user is refused (403, rule own-job); an unknown session 404
#   - unused for its idle time, the session ends and so does its job
source "$(dirname "$0")/lib_dev.sh"
start_dev "squeue sacct" --nodes 2 --gpus 2 --cpus 4 --mem-mib 8192
ln -s "$PHALANX" "$tmp/bin/phalanx"
mkdir -p "$tmp/work" && cd "$tmp/work"
me=$(id -un)

out=$(timeout 120 phalanx session start --gpus 1 -t 10 --idle 0:04 -- python3 "$PX_SRC/tests/integration/session_app.py" 2>&1)
job=$(sed -n 's/^Submitted session job //p' <<<"$out")
url=$(sed -n 's/^Session [0-9]* is ready: //p' <<<"$out")
[ -n "$job" ] && [[ "$url" == https://*"/sessions/$job/?phalanx_token="* ]] || { fail "session start: $out"; exit 1; }
[ "$(squeue -h -j "$job" -o %T)" = RUNNING ] || fail "the session in squeue: $(squeue -j "$job")"
ngpus=$(curl -s --unix-socket "$PHALANX_SERVER" "http://x/v1/jobs/$job" | jq -r .ngpus)
[ "$ngpus" = 1 ] || fail "the session's GPUs: $ngpus"
echo "ok   session start: the URL once the application answers; a job like any"

ca=$tmp/state/tls/ca.pem
base=${url%%\?*}
code=$(curl -s -o "$tmp/r" -w '%{http_code}' --cacert "$ca" "${base}x")
[ "$code" = 401 ] || fail "no credential: $code $(cat "$tmp/r")"
got=$(curl -s -c "$tmp/jar" -b "$tmp/jar" -L -w '%{num_redirects}' --cacert "$ca" "$url&keep=a%20b")
[ "$got" = "path=/sessions/$job/?keep=a%20b user=$me base=/sessions/$job/ body=
1" ] || fail "first visit: '$got'"
grep -q "/sessions/$job/.*phalanx_session" "$tmp/jar" || fail "no session cookie: $(cat "$tmp/jar")"
got=$(curl -s -b "$tmp/jar" --cacert "$ca" -H 'X-Forwarded-User: mallory' "${base}deep/path?x=1")
[ "$got" = "path=/sessions/$job/deep/path?x=1 user=$me base=/sessions/$job/ body=" ] || fail "GET with the cookie: '$got'"
got=$(curl -s -b "$tmp/jar" --cacert "$ca" -d 'cell=1+1' -D "$tmp/h" "${base}run")
[ "$got" = "path=/sessions/$job/run user=$me base=/sessions/$job/ body=cell=1+1" ] || fail "POST: '$got'"
grep -qi '^X-App: session-app' "$tmp/h" || fail "the application's headers: $(cat "$tmp/h")"
echo "ok   the URL: 401 without a credential, a cookie from its token, GET and POST through"

# an upgraded connection (what a notebook's kernels open): 101 with the
# application's headers, then bytes both ways
got=$(python3 - "$PHALANX_SERVER" "$job" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(("GET /sessions/%s/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: x-echo\r\n"
           "X-Echo-Key: k1\r\n\r\n" % sys.argv[2]).encode())
s.settimeout(20)
got = b""
while b"\r\n\r\n" not in got:
    got += s.recv(4096)
head, rest = got.split(b"\r\n\r\n", 1)
s.sendall(b"hello kernel")
while len(rest) < 12:
    rest += s.recv(4096)
print(head.split(b"\r\n")[0].decode(), b"X-Echo-Key: k1" in head, rest.decode())
PY
)
[ "$got" = "HTTP/1.1 101 Switching Protocols True HELLO KERNEL" ] || fail "an upgraded connection: '$got'"
echo "ok   an upgrade (a WebSocket's way) passes both ways"

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 755 "$tmp"
  err=$(setpriv --reuid=65534 --regid=65534 --clear-groups curl -s --unix-socket "$PHALANX_SERVER" "http://x/sessions/$job/")
  grep -q "session $job belongs to $me: only its user and operators open it (rule own-job)" <<<"$err" ||
    fail "another user: $err"
fi
code=$(curl -s -o "$tmp/r" -w '%{http_code}' --unix-socket "$PHALANX_SERVER" "http://x/sessions/424242/")
[ "$code" = 404 ] || fail "an unknown session: $code $(cat "$tmp/r")"
echo "ok   another user refused, an unknown session 404"

wait_for 60 sh -c "sacct -X -n -P -o State -j $job | grep -qx COMPLETED" ||
  fail "the unused session did not end: $(sacct -X -n -P -o State -j "$job")"
grep -q "no use for 4 s: the session ends" "slurm-$job.out" || fail "the session's end: $(cat "slurm-$job.out")"
echo "ok   unused for its idle time, the session and its job end"
exit $((fails > 0))
