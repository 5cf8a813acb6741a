#!/usr/bin/env bash
# Interactive terminals (docs/interactive.md) on a real `phalanx dev` cluster
# (2 nodes; agents reach the server over TLS, the CLI over its socket):
#   pty_keystroke_echo_ms      one keystroke to its echo through the whole
#                              path, p50 of 300 keys (target <= 20): the CLI in
#                              raw mode, the server's relay, the pty host on
#                              the node, the remote terminal's echo, and back
#   pty_keystroke_echo_p99_ms  the same, p99
# with the baseline it rests on: pty_keystroke_echo_local_ms, the same keys
# echoed by a local pseudo-terminal (no network, no relay). The keys are typed
# into `phalanx exec JOB -- cat` running in a held batch job; each must come
# back (the script fails otherwise); the local terminal is raw from the
# start, so each echo came from the node.
set -euo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
tmp=$(mktemp -d /tmp/pxbench-pty.XXXXXX)
dev=
cleanup() {
  [ -n "$dev" ] && { kill -TERM "$dev" 2>/dev/null; wait "$dev" 2>/dev/null || true; }
  rm -rf "$tmp"
}
trap cleanup EXIT
die() { echo "bench_pty: $*" >&2; exit 1; }
keys=300
"$PHALANX" dev --nodes 2 --cpus 4 --mem-mib 8192 --state-dir "$tmp/dev" --ready-file "$tmp/ready" \
  --quiet >"$tmp/dev.log" 2>&1 &
dev=$!
for _ in $(seq 1 1200); do [ -s "$tmp/ready" ] && break; kill -0 "$dev" || die "dev exited"; sleep 0.1; done
set -a; source "$tmp/ready"; set +a
cd "$tmp"
out=$("$PHALANX" submit -t 10 -o /dev/null --wrap 'exec sleep 600')
job=${out##* }
for _ in $(seq 1 600); do
  [ "$("$PHALANX" queue -h -j "$job" -o %T 2>/dev/null)" = RUNNING ] && break
  sleep 0.1
done
[ "$("$PHALANX" queue -h -j "$job" -o %T)" = RUNNING ] || die "job $job did not start"
read -r p50 p99 n < <(python3 "$PX_SRC/bench/pty_echo.py" --raw $keys "$PHALANX" exec "$job" -- cat) || die "the remote echo failed"
read -r l50 _ _ < <(python3 "$PX_SRC/bench/pty_echo.py" $keys cat) || die "the local echo failed"
[ "$n" = $keys ] || die "only $n of $keys keys echoed"
echo "pty_keystroke_echo_ms $p50 ms"
echo "pty_keystroke_echo_p99_ms $p99 ms"
echo "pty_keystroke_echo_local_ms $l50 ms"
