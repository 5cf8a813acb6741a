#!/usr/bin/env bash
# The short form of bench_cp's burst: 2,000 emulated nodes x 8 GPUs (one
# agent process, simulated jobs) and 3,000 jobs of mixed sizes (1 GPU to
# 16-node gangs, 1-4 s) submitted at once. Every job must end COMPLETED,
# never requeued, and each of its nodes must have started it once and ended
# it once (the emulator's state log: an S and an E line per job and node).
# The cluster runs from the plain build when there is one (as lib_dev.sh).
source "$(dirname "$0")/agent/lib.sh"
BIN=${PX_DEV_PHALANX:-$PX_SRC/build/phalanx}
[ -x "$BIN" ] || BIN=$PHALANX
T=$(mktemp -d /tmp/pxburst.XXXXXX)
DEV=
cleanup() {
  [ -n "$DEV" ] && { kill -TERM "$DEV" 2>/dev/null; wait "$DEV" 2>/dev/null; }
  [ -n "${PX_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
"$BIN" dev --nodes 2000 --emulate-jobs sim --quiet --state-dir "$T/c" --ready-file "$T/ready" 2>"$T/dev.err" &
DEV=$!
wait_for 90 test -s "$T/ready" || fail "2,000 emulated nodes did not come up: $(cat "$T/dev.err")"
SOCK=$T/c/server.sock
api() { curl -sf --unix-socket "$SOCK" "http://localhost$1" "${@:2}"; }
ok "2,000 emulated nodes registered"

# the jobs, in batches of 1,000: {GPUs per node, nodes} drawn from the bench's mix
NJOBS=3000
for b in 0 1 2; do
  awk -v seed=$((7 + b)) -v n=1000 'BEGIN {
    srand(seed); split("1 2 4 8 8 8 8 8", g, " "); split("1 1 1 1 2 4 8 16", nn, " ");
    split("30 10 10 20 15 8 5 2", w, " ");
    printf "{\"jobs\":[";
    for (i = 0; i < n; i++) {
      r = int(rand() * 100); k = 1; acc = w[1]; while (r >= acc) acc += w[++k];
      printf "%s{\"name\":\"burst\",\"nodes_min\":%d,\"nodes_max\":%d,\"gpus_per_node\":%d,", i ? "," : "", nn[k], nn[k], g[k];
      printf "\"time_limit_s\":300,\"argv\":[\"sleep\",\"%d\"],\"workdir\":\"/tmp\"}", 1 + int(rand() * 4);
    }
    printf "]}" }' >"$T/batch$b.json"
  api /v1/jobs -H 'Content-Type: application/json' --data-binary "@$T/batch$b.json" >/dev/null ||
    fail "batch $b refused"
done
listing() { api "/v1/jobs?state=all&fields=job_id,state,nnodes,restarts&limit=100000" >"$T/jobs.json"; }
all_ended() {
  listing && [ "$(jq '[.jobs[] | select(.state != "PENDING" and .state != "RUNNING")] | length' "$T/jobs.json")" = $NJOBS ]
}
wait_for 150 all_ended || fail "not every job ended: $(jq -c '[.jobs[].state] | group_by(.) | map({(.[0]): length}) | add' "$T/jobs.json")"
jq -e --argjson n $NJOBS '[.jobs[] | select(.state == "COMPLETED" and (.restarts // 0) == 0)] | length == $n' \
  "$T/jobs.json" >/dev/null ||
  fail "jobs not COMPLETED on their first run: $(jq -c '[.jobs[] | select(.state != "COMPLETED" or (.restarts // 0) != 0)][:5]' "$T/jobs.json")"
ok "$NJOBS jobs of mixed sizes completed, none requeued"

# each job started and ended once on each of its nodes
jq -r '.jobs[] | "\(.job_id) \(.nnodes)"' "$T/jobs.json" | sort >"$T/want"
awk '$1 == "S" { s[$3]++ } $1 == "E" { e[$3]++ } END { for (j in s) print j, s[j], e[j] }' \
  "$T/c/agents/emulated/emulate.log" | sort >"$T/got"
bad=$(join "$T/want" "$T/got" | awk '$2 != $3 || $2 != $4' | head -5)
[ -z "$bad" ] && [ "$(wc -l <"$T/got")" = $NJOBS ] ||
  fail "starts and ends per job (id nodes starts ends): ${bad:-$(wc -l <"$T/got") jobs in the log}"
ok "every job started once and ended once on each of its nodes"
