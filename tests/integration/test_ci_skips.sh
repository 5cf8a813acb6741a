#!/usr/bin/env bash
# Test honesty (.ci/run): a test that skips exits 77 (ctest: "Skipped") and
# records why (lib_skip.sh); tests/check_skips.sh accepts a skip only when
# the reason holds on this machine, and fails a skip with no reason or one it
# cannot check. Before, skipping tests exited 0 and were counted as passed.
set -euo pipefail
: "${PX_SRC:?}"
T=$(mktemp -d /tmp/px-skips-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
check=$PX_SRC/tests/check_skips.sh

# px_skip: exit 77, one line in the log naming the test and the need
cat >"$T/test_demo.sh" <<SH
source "$PX_SRC/tests/integration/lib_skip.sh"
px_skip nosuchthing "nothing to see"
echo "not reached"
SH
rc=0
out=$(PX_SKIP_LOG=$T/log bash "$T/test_demo.sh") || rc=$?
[ $rc -eq 77 ] || fail "px_skip exited $rc, want 77"
[ "$out" = "SKIP (nosuchthing): nothing to see" ] || fail "px_skip said: $out"
[ "$(cat "$T/log")" = "integration/test_demo nosuchthing nothing to see" ] || fail "log: $(cat "$T/log")"

# check_skips.sh: a need nobody can check, a skip without a reason, a need
# this machine has: each fails; a need it lacks passes
printf '\t 7 - integration/test_demo (Skipped)\n' >"$T/ctest.out"
rc=0; msg=$("$check" "$T/log" "$T/ctest.out") || rc=$?
[ $rc -ne 0 ] && grep -q "unknown reason" <<<"$msg" || fail "an unknown need was accepted: $msg"
printf '\t 8 - integration/test_other (Skipped)\n' >"$T/ctest.out"
: >"$T/log"
rc=0; msg=$("$check" "$T/log" "$T/ctest.out") || rc=$?
[ $rc -ne 0 ] && grep -q "without a recorded reason" <<<"$msg" || fail "a silent skip was accepted: $msg"
echo "integration/test_other cc no C compiler" >"$T/log"
if command -v cc >/dev/null; then
  rc=0; msg=$("$check" "$T/log" "$T/ctest.out") || rc=$?
  [ $rc -ne 0 ] && grep -q "this machine has cc" <<<"$msg" || fail "a skip this machine can run was accepted: $msg"
fi
# a machine without cc: a PATH holding only the tools the check uses
mkdir "$T/bin"
for t in bash sed grep awk cat dirname id; do ln -s "$(command -v $t)" "$T/bin/$t"; done
PATH=$T/bin bash "$check" "$T/log" "$T/ctest.out" | grep -q "lacks cc" ||
  fail "a skip for a need this machine lacks (no cc on PATH) was refused"
echo "ok - skips are exit 77 with a reason, checked against the machine"
