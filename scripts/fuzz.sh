#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time from its seed corpus
# (tests/fuzz/corpus/<target>/). Any crash, leak or sanitizer report fails.
set -uo pipefail
build=${1:-build-fuzz}
seconds=${2:-60}
cd "$(dirname "$0")/.."
rc=0
n=0
for f in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$f" ] || continue
  name=$(basename "$f")
  seeds=tests/fuzz/corpus/${name#fuzz_}
  work=$(mktemp -d)
  [ -d "$seeds" ] && cp -r "$seeds"/. "$work"/
  echo "fuzz: $name for ${seconds}s"
  if ! "$f" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
         -print_final_stats=1 -artifact_prefix="$work/" "$work" > "$work/log" 2>&1; then
    echo "fuzz: $name FAILED; log and reproducer:" >&2
    tail -40 "$work/log" >&2
    ls "$work"/crash-* "$work"/leak-* 2>/dev/null >&2
    rc=1
  else
    grep -E 'stat::number_of_executed_units' "$work/log" | sed "s/^/fuzz: $name /"
    rm -rf "$work"
  fi
  n=$((n + 1))
done
echo "fuzz: $n targets, $([ $rc -eq 0 ] && echo all clean || echo FAILURES)"
exit $rc
