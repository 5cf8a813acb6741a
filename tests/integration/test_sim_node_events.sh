#!/usr/bin/env bash
# test_sim_node_events.sh - `phalanx sim --from-accounting` with the nodes'
# down and drain periods of the record (docs/simulator.md, "The nodes'
# outages"; src/sim/node_events.h), as a user runs it:
#  - FILE.nodes.csv beside FILE.csv is read by default: the job on the
#    node that went DOWN is requeued at the outage and runs again once the
#    node is back, as the record says (fidelity error 0.0%); the report
#    says how many outages the replay took and jobs it requeued;
#  - --no-node-events replays without them (the job runs through: the
#    record's first job's wait differs), --node-events PATH names another;
#  - a bad file is refused (exit 2) with its line, column and field named,
#    a node the cluster lacks and another export's time0_unix_s too.
set -euo pipefail
: "${PHALANX:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$tmp/slurm.conf" <<'EOF'
ClusterName=nev
SchedulerType=sched/builtin
NodeName=g1 CPUs=64 RealMemory=1000000 Gres=gpu:8 State=UNKNOWN
PartitionName=main Nodes=g1 Default=YES MaxTime=UNLIMITED State=UP
AccountsFile=accounts.conf
EOF
cat >"$tmp/accounts.conf" <<'EOF'
Account=qa Fairshare=1 Users=root
EOF
# a ran 0-30 until g1 went DOWN at 30, ran again 40-140 once it was back;
# b (submitted at 10) waited for it: 140-240
cat >"$tmp/rec.csv" <<'EOF'
job_id,submit_s,start_s,end_s,duration_s,gpus,nodes,user,queue,status,time_limit_s,attempt,time0_unix_s
1,0,0,30,30,8,1,root,qa,NODE_FAIL,1000,0,1700000000
1,0,40,140,100,8,1,root,qa,COMPLETED,1000,1,1700000000
2,10,140,240,100,8,1,root,qa,COMPLETED,1000,0,1700000000
EOF
printf 'node,state,start_s,end_s,reason,cause,user,time0_unix_s\ng1,DOWN,30,40,Not responding,,root,1700000000\n' \
  >"$tmp/rec.nodes.csv"
sim() { "$PHALANX" sim --from-accounting "$tmp/rec.csv" --config "$tmp/slurm.conf" "$@"; }

sim >"$tmp/out" 2>"$tmp/err" || fail "sim: $(cat "$tmp/err")"
grep -q 'rec.nodes.csv: 1 node periods (1 DOWN, 0 DRAIN) taken out of service' "$tmp/err" || fail "stderr: $(cat "$tmp/err")"
grep -q '^node outages cluster: 1 replayed, 1 jobs requeued by them$' "$tmp/out" || fail "report: $(cat "$tmp/out")"
grep -q '^fidelity cluster: 2 jobs, .* error 0.0%' "$tmp/out" || fail "fidelity: $(grep fidelity "$tmp/out")"
echo "ok - the record's outage replayed from rec.nodes.csv: the job requeued at it, error 0.0%"

sim --no-node-events >"$tmp/out2" 2>&1 || fail "sim --no-node-events: $(cat "$tmp/out2")"
grep -q '^node outages' "$tmp/out2" && fail "--no-node-events still replayed outages"
grep -q '^fidelity cluster: 2 jobs, .* error 0.0%' "$tmp/out2" && fail "without the outage the replay matches the record"
mv "$tmp/rec.nodes.csv" "$tmp/elsewhere.csv"
sim --node-events "$tmp/elsewhere.csv" >"$tmp/out3" 2>&1 || fail "sim --node-events: $(cat "$tmp/out3")"
grep -q '^node outages cluster: 1 replayed' "$tmp/out3" || fail "--node-events PATH: $(cat "$tmp/out3")"
echo "ok - --no-node-events and --node-events PATH"

refused() { # WANT ROWS...: the file with these rows is refused, saying WANT
  local want=$1
  shift
  printf 'node,state,start_s,end_s,reason,cause,user,time0_unix_s\n' >"$tmp/bad.csv"
  printf '%s\n' "$@" >>"$tmp/bad.csv"
  local rc=0
  sim --node-events "$tmp/bad.csv" >"$tmp/bad.out" 2>&1 || rc=$?
  [ "$rc" = 2 ] || fail "rows $* accepted (exit $rc): $(cat "$tmp/bad.out")"
  grep -qF "$want" "$tmp/bad.out" || fail "rows $*: $(cat "$tmp/bad.out"), want $want"
}
refused 'bad.csv: line 2, column 4 (state): expected DOWN or DRAIN' 'g1,UP,30,40,,,,'
refused 'bad.csv: line 3, column 13 (end_s): before start_s' 'g1,DOWN,30,40,,,,' 'g1,DRAIN,50,49,,,,'
refused 'line 2, column 1 (node): g7 is not a node of the cluster' 'g7,DOWN,30,40,,,,'
refused 'time0_unix_s 1600000000 is not the jobs trace'"'"'s (1700000000)' 'g1,DOWN,30,40,,,,1600000000'
echo "ok - bad node periods refused, the line, column and field named"
