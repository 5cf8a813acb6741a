#!/usr/bin/env bash
# The front end as users run it: where the plain build's phalanx is the
# static musl binary (CMakeLists.txt, PX_MUSL_FRONT_END), the CLI's
# end-to-end tests run again against it. `make test` runs the others against
# the sanitizer build, which is glibc's: this is where musl's libc (its NSS,
# stdio, qsort, strerror texts) and our memcpy meet the golden outputs and a
# real cluster. Skipped when that binary is missing or is not the musl one.
set -uo pipefail
: "${PX_SRC:?}"
source "$(dirname "$0")/lib_skip.sh"
bin=${PX_MUSL_PHALANX:-$PX_SRC/build/phalanx}
if [ ! -x "$bin" ] || readelf -l "$bin" 2>/dev/null | grep -q 'program interpreter'; then
  px_skip musl "$bin is not a static (musl) front end"
fi
here=$(dirname "$0")
rc=0 skipped=0
for t in test_cli_commands test_cli_dev; do
  echo "== $t with $bin"
  PHALANX=$bin bash "$here/$t.sh"
  case $? in
    0) ;;
    77) skipped=77 ;; # it recorded why (lib_skip.sh)
    *) echo "FAIL $t with $bin"; rc=1 ;;
  esac
done
[ $rc -ne 0 ] && exit $rc
exit $skipped
