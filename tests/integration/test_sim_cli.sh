#!/usr/bin/env bash
# test_sim_cli.sh - `phalanx sim` as a user runs it: byte-identical JSON for
# the same inputs, the conservation verdict, the table, precise input errors,
# silence on a non-terminal stderr, and the pictures.
set -euo pipefail
: "${PHALANX:?}" "${PX_SRC:?}" "${PX_TESTDATA:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
trace=$PX_TESTDATA/traces/mix_500.csv
pol=$PX_SRC/examples/policies

# Determinism: two processes, two policies each, same bytes.
"$PHALANX" sim --trace "$trace" --cluster 8x8 --policy "$pol/fifo.conf" --policy "$pol/multifactor.conf" \
  --json > "$tmp/a.json" 2> "$tmp/a.err"
"$PHALANX" sim --trace "$trace" --cluster 8x8 --policy "$pol/fifo.conf" --policy "$pol/multifactor.conf" \
  --json > "$tmp/b.json"
cmp "$tmp/a.json" "$tmp/b.json" || fail "JSON differs between identical runs"
grep -q '"conserved": true' "$tmp/a.json" || fail "conservation not reported true"
grep -q '"more GPUs than the cluster": 1' "$tmp/a.json" || fail "oversized job not reported as skipped"
grep -q '"fractional_gpus_rounded_up": 1' "$tmp/a.json" || fail "fractional GPU request not counted"
[ "$(grep -c '"policy":' "$tmp/a.json")" -eq 2 ] || fail "expected two policies side by side"
# stderr is not a terminal here: no progress bar, nothing at all.
[ ! -s "$tmp/a.err" ] || fail "stderr not silent: $(head -c 200 "$tmp/a.err")"
if command -v python3 >/dev/null; then python3 -m json.tool "$tmp/a.json" > /dev/null || fail "invalid JSON"; fi

# Injected GPU failures (--gpu-failures): the same bytes again, the work they
# cost conserved, the GPU-hours lost reported in both forms.
"$PHALANX" sim --trace "$trace" --cluster 8x8 --gpu-failures 0.5 --gpu-repair 7200 --json > "$tmp/f1.json"
"$PHALANX" sim --trace "$trace" --cluster 8x8 --gpu-failures 0.5 --gpu-repair 7200 --json > "$tmp/f2.json"
cmp "$tmp/f1.json" "$tmp/f2.json" || fail "JSON with GPU failures differs between identical runs"
python3 - "$tmp/f1.json" <<'PY' || fail "GPU failures: $(grep gpu_failures "$tmp/f1.json")"
import json, sys
r = json.load(open(sys.argv[1]))["policies"][0]
g, c = r["gpu_failures"], r["conservation"]
assert g["failures"] > 0 and g["jobs_requeued"] > 0 and g["gpu_h_lost"] > 0, g
assert abs(g["gpu_h_out_of_service"] - 2 * g["failures"]) < 1e-6, g  # 7,200 s each
assert c["ok"] and c["gpu_s_lost_to_failures"] > 0, c
assert r["done"] == 501 and r["stuck"] == 0, r["done"]
PY
"$PHALANX" sim --trace "$trace" --cluster 8x8 --gpu-failures 0.5 | grep -Eq '^GPU-h lost \(work\) +[0-9.]+$' ||
  fail "table: no GPU-h lost row"
"$PHALANX" sim --trace "$trace" --cluster 8x8 --gpu-failures -1 > /dev/null 2> "$tmp/gf.err" && fail "negative rate accepted"
grep -q -- "--gpu-failures -1: a rate per GPU per day" "$tmp/gf.err" || fail "rate error: $(cat "$tmp/gf.err")"

# The table: one column per policy, the verdict row.
"$PHALANX" sim --trace "$trace" --cluster 8x8 --policy "$pol/fifo.conf" > "$tmp/table.txt"
grep -Eq '^jobs done +501$' "$tmp/table.txt" || fail "table: jobs done (502 jobs - 1 skipped)"
grep -Eq '^conservation +ok$' "$tmp/table.txt" || fail "table: conservation row"

# Input errors name line and column, exit status 2.
printf 'job_id,submit_s,duration_s,gpus,nodes,user,queue,status\nx,0,10,two,,,,\n' > "$tmp/bad.csv"
set +e
"$PHALANX" sim --trace "$tmp/bad.csv" --cluster 1x8 > /dev/null 2> "$tmp/bad.err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "bad trace: exit $rc, expected 2"
grep -q 'bad.csv: line 2, column 8 (gpus): not a non-negative number' "$tmp/bad.err" || fail "bad trace message: $(cat "$tmp/bad.err")"
set +e
"$PHALANX" sim --trace "$trace" --cluster 8by8 > /dev/null 2> "$tmp/bad.err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q 'expected NODESxGPUS' "$tmp/bad.err" || fail "bad --cluster: exit $rc"
printf 'NodeName=n1\n' > "$tmp/bad.conf"
set +e
"$PHALANX" sim --trace "$trace" --cluster 8x8 --policy "$tmp/bad.conf" > /dev/null 2> "$tmp/bad.err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q 'bad.conf: line 1: NodeName is not a scheduling key' "$tmp/bad.err" || fail "bad policy: exit $rc"

# A configuration file instead of --cluster: the hand-worked gang scenario
# (tests/unit/sim/test_scenarios.c) on the same two nodes ends at 250 s;
# a trace queue without an account is refused by name.
conf=$PX_TESTDATA/traces/cluster_2x8/slurm.conf
"$PHALANX" sim --trace "$PX_TESTDATA/traces/gang_whole_node.csv" --config "$conf" --json > "$tmp/c.json" 2> "$tmp/c.err"
grep -q '"makespan_s": 250,' "$tmp/c.json" || fail "--config: makespan"
[ ! -s "$tmp/c.err" ] || fail "--config: unexpected messages: $(cat "$tmp/c.err")"
set +e
"$PHALANX" sim --trace "$trace" --config "$conf" > /dev/null 2> "$tmp/bad.err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "trace queue 'vcA' has no account" "$tmp/bad.err" || fail "--config: unknown queue: exit $rc"

# Pictures. Their data and gnuplot script are written whatever the
# machine; drawing them needs gnuplot, which `make deps` installs
# (scripts/deps.sh: gnuplot-nox): without it this test fails, naming it,
# after checking what needs no gnuplot.
set +e
"$PHALANX" sim --trace "$trace" --cluster 8x8 --policy "$pol/fifo.conf" --policy "$pol/multifactor.conf" \
  --plots "$tmp/plots" > /dev/null 2> "$tmp/plots.err"
rc=$?
set -e
# Per account: waits and GPU-hours by policy (bars), and each policy's
# fair-share position over time (every replay samples its core).
"$PHALANX" sim --trace "$trace" --cluster 8x8 --policy "$pol/fifo.conf" --policy "$pol/multifactor.conf" \
  --json > "$tmp/p.json"
[ "$(grep -c '"fair_share_position": {' "$tmp/p.json")" -eq 6 ] || fail "fair-share positions: 3 accounts x 2 policies"
[ -s "$tmp/plots/plots.gp" ] || fail "plots.gp not written"
for d in 00_fifo.fs 01_multifactor.fs acct_wait.dat acct_gpu_h.dat; do
  [ -s "$tmp/plots/$d" ] || fail "missing picture data $d"
done
[ "$(grep -c '^"vc[ABC]" ' "$tmp/plots/acct_wait.dat")" -eq 3 ] || fail "acct_wait.dat: one row per account"
[ "$(grep -c '^"vc[ABC]" ' "$tmp/plots/acct_gpu_h.dat")" -eq 3 ] || fail "acct_gpu_h.dat: one row per account"
if ! command -v gnuplot >/dev/null; then
  grep -q 'gnuplot not found; data and .*plots.gp are written' "$tmp/plots.err" && [ $rc -ne 0 ] ||
    fail "--plots without gnuplot: exit $rc, $(cat "$tmp/plots.err")"
  fail "gnuplot missing: the pictures cannot be checked (make deps installs gnuplot-nox)"
fi
[ $rc -eq 0 ] && [ ! -s "$tmp/plots.err" ] || fail "--plots: exit $rc, $(cat "$tmp/plots.err")"
pics="utilisation queue jct_cdf acct_wait acct_gpu_h fairshare_00_fifo fairshare_01_multifactor"
for p in $pics shares_00_fifo shares_01_multifactor; do
  [ -s "$tmp/plots/$p.png" ] && head -c 8 "$tmp/plots/$p.png" | od -An -c | grep -q 'P   N   G' ||
    fail "$p.png missing or not a PNG"
done
for p in $pics; do # the shares pictures are PNG only
  [ -s "$tmp/plots/$p.svg" ] && grep -q '<svg' "$tmp/plots/$p.svg" && grep -q '</svg>' "$tmp/plots/$p.svg" ||
    fail "$p.svg missing or not an SVG"
done
echo "ok"
