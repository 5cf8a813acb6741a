#!/usr/bin/env bash
# check_skips.sh SKIPLOG CTEST_OUTPUT - run by .ci/run after the tests: every
# test ctest reports "Skipped" must have recorded why in SKIPLOG
# (tests/integration/lib_skip.sh, tests/unit/px_test.h: "TEST NEED WHY"),
# and the NEED must really be missing on this machine. Fails otherwise.
set -uo pipefail
skiplog=$1 out=$2

# can NEED: does this machine have it? Probed here on its own, not by asking
# the tests (a test that probes wrongly would otherwise excuse itself).
can() {
  case $1 in
    root) [ "$(id -u)" = 0 ] ;;
    cgroup-v1) awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { found = 1 } END { exit !found }' /proc/mounts ;;
    postgresql) compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null ;;
    shared) [ -d "$(dirname "$0")/../../shared/traces" ] ;;
    cc) command -v cc >/dev/null ;;
    iproute2) command -v ip >/dev/null ;;
    browser) command -v node >/dev/null && { command -v chromium || command -v chromium-browser; } >/dev/null &&
      [ -d "$(dirname "$0")/../web/node_modules/puppeteer-core" ] ;;
    musl) compgen -G '/usr/lib/*musl*/musl-gcc.specs' >/dev/null || [ -e /usr/lib/musl/lib/musl-gcc.specs ] ;;
    oci-runtime) command -v crun >/dev/null && command -v busybox >/dev/null && unshare -m true 2>/dev/null ;;
    *) return 2 ;; # a reason nobody can check is not accepted
  esac
}

bad=0
while read -r test need why; do
  rc=0
  can "$need" || rc=$?
  case $rc in
    0) echo "ci: $test skipped ($need: $why), but this machine has $need"; bad=1 ;;
    2) echo "ci: $test skipped for an unknown reason '$need $why'"; bad=1 ;;
    *) echo "ci: $test skipped: this machine lacks $need ($why)" ;;
  esac
done < <(cat "$skiplog" 2>/dev/null)
# every test ctest lists as skipped must have said why
while read -r name; do
  grep -q "^$name " "$skiplog" 2>/dev/null || { echo "ci: $name skipped without a recorded reason"; bad=1; }
done < <(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$out")
exit $bad
