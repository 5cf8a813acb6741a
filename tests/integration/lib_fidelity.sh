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
# attempts STATUS IDS TRACE: the exported rows (TRACE, `phalanx export`) of
# each job listed in IDS (one id a line) that a requeue ran again: attempts
# 0..n, once each and in order, each run after the one before (start_seq <
# end_seq < the next start_seq), the earlier ones ended STATUS. Prints a
# line a job: `ID ROWS LAST_START_SEQ LAST_START_UNIX QOS`, or `bad ID: why`.
attempts() {
  awk -F, -v want="$1" 'NR == FNR { ids[$1] = 1; next }
    FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    !($1 in ids) { next }
    { j = $1; a = $(c["attempt"]); s = $(c["start_seq"]); e = $(c["end_seq"])
      if (a != n[j]++) why[j] = why[j] " attempt " a " as row " n[j] - 1
      if (!(s > prev[j] && e > s)) why[j] = why[j] " attempt " a " ran seq " s "-" e " after " prev[j]
      if (a > 0 && st[j] != want) why[j] = why[j] " attempt " a - 1 " ended " st[j]
      prev[j] = e; st[j] = $(c["status"]); last[j] = s; at[j] = $(c["time0_unix_s"]) + $(c["start_s"]); qos[j] = $(c["qos"]) }
    END { for (j in ids) if (n[j] < 2) print "bad " j ": " n[j] + 0 " rows"
      else if (why[j] != "") print "bad " j ":" why[j]
      else print j, n[j], last[j], at[j], qos[j] }' "$2" "$3"
}
