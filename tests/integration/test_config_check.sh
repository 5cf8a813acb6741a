#!/usr/bin/env bash
# `phalanx config check`: the summary of a good configuration (numbers counted
# by hand from tests/data/conf/atlas), the errors of a bad one with file:line,
# and the exit codes (0 good, 1 any error, 2 usage).
set -euo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$PHALANX" config check "$PX_SRC/tests/data/conf/atlas/slurm.conf" >"$tmp/out" 2>"$tmp/err" || fail "atlas: exit $?"
expect() { grep -qF -- "$1" "$tmp/out" || { cat "$tmp/out" >&2; fail "missing: $1"; }; }
expect "slurm.conf: OK (6 files read, 12 warnings)"
expect "cluster:    atlas"
expect "nodes:      1024  cpu[01-16],gpu[0001-1008]"
expect "CPUs:       195584"
expect "GPUs:       8064 (h100: 7168, a100: 896)"
expect "partitions: 4"
expect "  batch*: 896 nodes, 7168 GPUs, MaxTime=7-00:00:00"
expect "  urgent: 136 nodes, 1088 GPUs, MaxTime=12:00:00, PriorityTier=10, ExclusiveAccount, up  gpu[0001-0128,0897-0904]"
expect "switches:   38 in 2 levels (36 leaf)"
expect "blocks:     56"
expect "accounts:   11 (with root), 15 user associations"
expect "QoS:        normal, low, high, urgent"
[ "$(grep -c 'warning:' "$tmp/err")" -eq 12 ] || fail "want 12 warnings"

cat >"$tmp/slurm.conf" <<'CONF'
NodeName=n[1-4] Gres=gpu:8
PartitionName=p Nodes=n[1-5] Default=YES
CONF
printf 'Account=a Fairshares=3\n' >"$tmp/accounts.conf"
rc=0
"$PHALANX" config check "$PX_SRC/examples/cluster/slurm.conf" "$tmp/slurm.conf" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 1 ] || fail "bad config: exit $rc, want 1"
grep -qF "$tmp/slurm.conf:2: error: Nodes=n[1-5]: node n5 is not defined by any NodeName line" "$tmp/err" || fail "no node error"
grep -qF "$tmp/accounts.conf:1: error: unknown key Fairshares on a Account line; did you mean Fairshare?" "$tmp/err" \
  || fail "no accounts error"
grep -qF "$tmp/slurm.conf: 2 errors" "$tmp/out" || fail "no error count"
grep -qF "examples/cluster/slurm.conf: OK" "$tmp/out" || fail "the good file of the two was not checked"

rc=0
"$PHALANX" config >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "usage: exit $rc, want 2"
echo "config check: ok"
