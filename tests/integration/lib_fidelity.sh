# lib_fidelity.sh - sourced by the test_sim_fidelity*.sh tests.
# run_bench [VAR=VALUE...]: bench/bench_sim_fidelity.sh's short form (60
# jobs on 4 nodes x 8 emulated GPUs in bursts of 20) with those settings
# added; prints its output (kept in $out) and fails the test when the
# bench fails or compares other than the 60 jobs. fig NAME: one of its
# figures (the value of the line `NAME value unit`).
set -uo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
run_bench() {
  out=$(env FID_JOBS=60 FID_NODES=4 FID_BURST=20 "$@" bash "$PX_SRC/bench/bench_sim_fidelity.sh" 2>&1)
  local rc=$?
  echo "$out"
  [ $rc = 0 ] || { echo "FAIL bench_sim_fidelity.sh ($*) exited $rc"; exit 1; }
  [ "$(fig sim_fidelity_jobs)" = 60 ] || { echo "FAIL compared $(fig sim_fidelity_jobs) of 60 jobs"; exit 1; }
}
fig() { echo "$out" | awk -v k="$1" '$1 == k { print $2 }'; }
