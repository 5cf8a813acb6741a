#!/usr/bin/env bash
# Runs every benchmark: build/bench_* programs and bench/bench_*.sh scripts.
# Each prints `name value unit` lines. Exits non-zero when one fails.
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
rc=0
for b in "$build"/bench/bench_*; do
  [ -x "$b" ] || continue
  "$b" || { echo "bench: $b failed" >&2; rc=1; }
done
for s in bench/bench_*.sh; do
  [ -f "$s" ] || continue
  PHALANX="$PWD/$build/phalanx" PX_SRC="$PWD" bash "$s" || { echo "bench: $s failed" >&2; rc=1; }
done
exit $rc
