#!/usr/bin/env bash
# The front end as users run it: where the plain build's phalanx is the
# static musl binary (CMakeLists.txt, PX_MUSL_FRONT_END), the CLI's
# end-to-end tests run again against it. `make test` runs the others against
# the sanitizer build, which is glibc's: this is where musl's libc (its NSS,
# stdio, qsort, strerror texts) and our memcpy meet the golden outputs and a
# real cluster. Skipped when that binary is missing or is not the musl one.
set -uo pipefail
: "${PX_SRC:?}"
bin=${PX_MUSL_PHALANX:-$PX_SRC/build/phalanx}
if [ ! -x "$bin" ] || readelf -l "$bin" 2>/dev/null | grep -q 'program interpreter'; then
  echo "skip: $bin is not a static (musl) front end"
  exit 0
fi
here=$(dirname "$0")
rc=0
for t in test_cli_commands test_cli_dev; do
  echo "== $t with $bin"
  PHALANX=$bin bash "$here/$t.sh" || { echo "FAIL $t with $bin"; rc=1; }
done
exit $rc
