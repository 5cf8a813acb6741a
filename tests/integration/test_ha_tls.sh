#!/usr/bin/env bash
# High availability over TLS (issue 16): two controllers on https (their
# advertised addresses https:// too), the CLI given both https addresses:
# a submit goes to the leader, and after a kill -9 of the leader a submit
# reaches the new one on its own (the CLI's https transport follows a
# standby's 503 and a refused connection as the plain one does).
source "$(dirname "$0")/lib_ha.sh"
"$PHALANX" dev --make-certs "$T/tls" >/dev/null || fail "phalanx dev --make-certs"
cat >>"$T/slurm.conf" <<CONF
TLSCertFile=$T/tls/server.pem
TLSKeyFile=$T/tls/server.key
CONF
curl() { command curl --cacert "$T/tls/ca.pem" "$@"; }
url() { echo "https://127.0.0.1:${PORT[$1]}"; }
start_ctl a
wait_until 20 "a leads" is_leader a
TOKEN=$("$PHALANX" server token --state-dir "$T/a" --user root)
start_ctl b
export PHALANX_SERVER="$(url a),$(url b)" PHALANX_TOKEN=$TOKEN PHALANX_CONF=$T/slurm.conf \
  PHALANX_CA_FILE=$T/tls/ca.pem PHALANX_TIMEOUT=30
[ "$(status_json | jq -r '.controllers[] | select(.name == "b") | .addr')" = "$(url b)" ] ||
  fail "b advertises $(status_json | jq -c .)"
J1=$("$BIN/sbatch" --parsable --hold --wrap true) || fail "submit to a over https"
t=$(term)
kill -9 "$(cat "$T/a.pid")"
J2=""
for try in 1 2 3; do J2=$("$BIN/sbatch" --parsable --hold --wrap true 2>>"$T/sbatch.err") && break; done
[ -n "$J2" ] || fail "submit after the kill: $(cat "$T/sbatch.err")"
wait_until 10 "b reports itself leader" new_leader_above "$t"
n=$("$BIN/squeue" -h -t all -o %i | sort -n | paste -sd,)
[ "$n" = "$J1,$J2" ] || fail "squeue over https after the takeover: '$n', want $J1,$J2"
ok "over https the CLI followed the takeover to b (term $(term)): jobs $J1 and $J2"
