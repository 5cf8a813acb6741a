#!/usr/bin/env bash
# test_sim_fs_recorded.sh - `phalanx sim --from-accounting`: when the replay
# of the cluster's own keys runs every job when the record did, the recorded
# column's fair-share positions are the replay's (docs/simulator.md, "What
# each policy changes, per account"; src/sim/fs_record.c).
#
# The record is made so that the replay must reproduce it: 240 jobs of
# three accounts on 2 x 8 GPUs (some of no time, ended at their start, as
# a failed launch: the record's core once charged those for ever), fair
# share deciding the order, are replayed once (their recorded starts do
# not matter to a replay without journal seqs); the runs that replay chose
# (--fidelity-jobs) become the record, and that record is replayed again.
set -euo pipefail
: "${PHALANX:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || fail "python3 missing (make deps installs it)"

cat >"$tmp/slurm.conf" <<'EOF'
ClusterName=fsrec
SchedulerType=sched/builtin
PriorityType=priority/multifactor
PriorityWeightFairshare=10000
PriorityWeightAge=1000
PriorityMaxAge=7-0
PriorityDecayHalfLife=0-2
NodeName=g[1-2] CPUs=64 RealMemory=1000000 Gres=gpu:8 State=UNKNOWN
PartitionName=main Nodes=g[1-2] Default=YES MaxTime=UNLIMITED State=UP
AccountsFile=accounts.conf
EOF
cat >"$tmp/accounts.conf" <<'EOF'
Account=root Fairshare=1
Account=qa Fairshare=5 Users=root
Account=qb Fairshare=3 Users=root
Account=qc Fairshare=2 Users=root
EOF

# A record of 240 jobs, every one started at its submit (not a schedule).
python3 - "$tmp/first.csv" <<'PY'
import random, sys
rnd = random.Random(7)
rows, t = [], 0
for i in range(240):
    t += rnd.randint(0, 90)
    d = 0 if i % 20 == 7 else rnd.randint(60, 1800)  # some end as they start (a failed launch)
    g = rnd.choice([1, 1, 2, 4, 8, 16])
    q = rnd.choice(["qa", "qa", "qb", "qc"])
    rows.append(f"j{i},{t},{t},{t},{t + d},{d},{g},{2 if g > 8 else 1},root,{q},,,COMPLETED,7200,,")
with open(sys.argv[1], "w") as f:
    f.write("job_id,submit_s,eligible_s,start_s,end_s,duration_s,gpus,nodes,user,queue,qos,partition,status,"
            "time_limit_s,array_job_id,array_task_id\n" + "\n".join(rows) + "\n")
PY
"$PHALANX" sim --from-accounting "$tmp/first.csv" --config "$tmp/slurm.conf" --fidelity-jobs "$tmp/runs.csv" \
  >/dev/null 2>"$tmp/first.err" || fail "first replay: $(cat "$tmp/first.err")"

# The replay's runs become the record.
python3 - "$tmp/first.csv" "$tmp/runs.csv" "$tmp/record.csv" <<'PY'
import csv, sys
start = {r["job_id"]: int(r["replayed_start_s"]) for r in csv.DictReader(open(sys.argv[2]))}
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(start) == len(rows) == 240, (len(start), len(rows))
waited = 0
with open(sys.argv[3], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=rows[0].keys(), lineterminator="\n")
    w.writeheader()
    for r in rows:
        s = start[r["job_id"]]
        waited += s > int(r["submit_s"])
        r["start_s"], r["end_s"] = s, s + int(r["duration_s"])
        w.writerow(r)
assert waited > 100, f"only {waited} jobs waited: fair share had little to order"
PY

"$PHALANX" sim --from-accounting "$tmp/record.csv" --config "$tmp/slurm.conf" --json >"$tmp/r.json" \
  2>"$tmp/r.err" || fail "replay of the record: $(cat "$tmp/r.err")"
grep -q '^fidelity cluster: 240 jobs, mean |replayed wait - recorded wait| 0.0 s' "$tmp/r.err" ||
  fail "the replay does not reproduce the record: $(cat "$tmp/r.err")"
python3 - "$tmp/r.json" <<'PY' || fail "recorded and replayed positions differ"
import json, sys
pol = json.load(open(sys.argv[1]))["policies"]
rec, rep = pol[0], pol[1]
assert rec["policy"] == "recorded" and rep["policy"] == "cluster", (rec["policy"], rep["policy"])
moved = set()
for a, b in zip(rec["accounts"], rep["accounts"]):
    assert a["name"] == b["name"], (a["name"], b["name"])
    pa, pb = a["fair_share_position"], b["fair_share_position"]
    assert pa is not None and pb is not None, (a["name"], pa, pb)
    assert pa == pb, f'{a["name"]}: recorded {pa}, replayed {pb}'
    assert b["change"]["factor_avg"] == 0, (a["name"], b["change"])
    moved.add(pa["factor_avg"])
    print(a["name"], pa)
assert len(moved) > 1, "every account had the same position: nothing compared"
PY
echo "ok"
