#!/usr/bin/env bash
# test_sim_philly.sh - the acceptance run: the public Philly trace (82,247
# jobs) on 64x8 runs to completion with its conservation check holding.
# The trace lives beside the clone (../shared/traces/, or $PX_TRACES_DIR);
# without it, skip (CI has it: .ci/run fails if this skips there).
set -euo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
source "$(dirname "$0")/lib_skip.sh"
trace=${PX_TRACES_DIR:-$PX_SRC/../shared/traces}/philly_pollux.csv
if [ ! -r "$trace" ]; then
  px_skip shared "$trace absent (see PROVENANCE.md of the shared traces)"
fi
# The acceptance command names build/phalanx: use the optimised build when
# `make test` made it (the sanitised one replays 82,247 jobs several times slower).
[ -x "$PX_SRC/build/phalanx" ] && PHALANX=$PX_SRC/build/phalanx
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$PHALANX" sim --trace "$trace" --cluster 64x8 --json > "$out"
grep -q '"conserved": true' "$out" || { echo "FAIL: conservation" >&2; exit 1; }
grep -q '"jobs": 82247' "$out" || { echo "FAIL: job count" >&2; exit 1; }
grep -q '"done": 82247' "$out" || { echo "FAIL: not every job done" >&2; exit 1; }
echo ok
