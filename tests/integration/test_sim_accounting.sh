#!/usr/bin/env bash
# What-if on the cluster's own history (docs/simulator.md): jobs run on a real
# `phalanx dev` cluster (server + 2 agents), `phalanx export` writes their
# accounting as a simulator trace, `phalanx sim --from-accounting` replays it
# on the cluster's own slurm.conf.
#  1. every finished job appears exactly once, with its GPUs, nodes, account,
#     QoS, partition, array parent, time limit and times as accounting has
#     them (start after submit, duration = end - start), its dependency and
#     name as written (a name with a comma and quotes quoted); a job
#     cancelled while pending is counted, not exported;
#  2. the replay's first column is the recorded run: all jobs done, the
#     conservation check holds in every column;
#  3. fidelity (short form of bench sim_fidelity_wait_error_pct): the replay
#     of the cluster's own policy reproduces the recorded waits within a
#     loose tolerance (launch latency and run-time noise of a busy machine);
#  4. a requeued job: each attempt accounting keeps exported once, in order,
#     with its own times and state (the attempt column), replayed once,
#     its earlier run lost in the recorded column.
source "$(dirname "$0")/lib_dev.sh"
start_dev "sbatch squeue scancel sacct sinfo " --nodes 2 --gpus 4
wait_for 60 sh -c '[ "$(sinfo -h -t idle -o %D -p batch)" = 2 ]' || { echo "nodes not idle"; sinfo; exit 1; }
cd "$tmp"

# 1. A mix that queues on 8 GPUs: singles, fours, a 2-node gang, an array, a
# dependency, another account, QoS and partition, a singleton pair (one
# name, one user: the second waits for the first to end); and one job
# cancelled while it waits behind a hold.
sub() { sbatch --parsable -t 5 "$@" | cut -d';' -f1; }
ids=()
for i in 1 2 3 4 5 6; do ids+=("$(sub -A ops --gres=gpu:1 --wrap "sleep $((i % 3 * 2 + 4))")"); done
for i in 1 2; do ids+=("$(sub -A vision --gres=gpu:4 --wrap 'sleep 6')"); done
ids+=("$(sub -A speech -N 2 --gres=gpu:4 --wrap 'sleep 6')")
arr=$(sub -A ops --array=0-3 --gres=gpu:2 --wrap 'sleep 2')
ids+=("$(sub -A vision -p urgent --qos high --gres=gpu:2 --wrap 'sleep 2')")
ids+=("$(sub -A ops -d "afterok:${ids[0]}" --gres=gpu:1 --wrap 'sleep 2')")
pair='pair, "x"'
for i in 1 2; do ids+=("$(sub -A ops -J "$pair" -d singleton --gres=gpu:1 --wrap 'sleep 2')"); done
held=$(sbatch --parsable -H -A ops --gres=gpu:1 --wrap 'sleep 1')
scancel "$held"
nsub=$((${#ids[@]} + 4))
wait_for 180 sh -c '[ "$(squeue -h | wc -l)" = 0 ]' || { fail "jobs did not finish: $(squeue)"; exit 1; }
done_acct() { [ "$(sacct -n -X -S now-1hour -s CD -o JobID | wc -l)" -ge "$nsub" ]; }
wait_for 60 done_acct || fail "accounting has $(sacct -n -X -S now-1hour -o JobID,State | wc -l) rows"

# the accounting rows keep each job's time limit (sacct's Timelimit): -t 5
limits=$(sacct -n -X -S now-1hour -s CD -o Timelimit | sort -u | tr -d ' ')
[ "$limits" = 00:05:00 ] || fail "accounting's time limits: $limits"
"$PHALANX" export --since 1h --output trace.csv 2>export.err || fail "export: $(cat export.err)"
grep -q "^phalanx export: $nsub jobs .*; 1 never started" export.err || fail "export summary: $(cat export.err)"
head -1 trace.csv | grep -qx 'job_id,submit_s,eligible_s,start_s,end_s,duration_s,gpus,nodes,user,queue,qos,partition,status,time_limit_s,array_job_id,array_task_id,name,attempt,submit_seq,start_seq,end_seq,time0_unix_s,dependency' ||
  fail "export header: $(head -1 trace.csv)"
t0=$(sed -n 's/.*times from \([0-9]*\), Unix.*/\1/p' export.err)
python3 - trace.csv "$t0" "$arr" "$held" "${ids[@]}" <<'PY' || fail "exported rows: $(cat trace.csv)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t0, arr, held, ids = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
by_id = {}
for r in rows:
    assert r["job_id"] not in by_id, ("twice", r)
    by_id[r["job_id"]] = r
    sub, start, end, dur = (int(r[k]) for k in ("submit_s", "start_s", "end_s", "duration_s"))
    assert 0 <= sub <= start <= end and dur == end - start, r
    assert r["status"] == "COMPLETED" and r["user"] == "root", r
    assert r["time_limit_s"] == "300", r  # -t 5, from the job's accounting row
    assert r["time0_unix_s"] == t0, (t0, r)  # the server's clock at second 0
    assert r["attempt"] == "0", r  # none was requeued
assert held not in by_id, "a job that never started was exported"
tasks = [r for r in rows if r["array_job_id"] == arr]
assert sorted(int(r["array_task_id"]) for r in tasks) == [0, 1, 2, 3], tasks
assert all(r["gpus"] == "2" and r["queue"] == "ops" for r in tasks), tasks
assert len(rows) == len(ids) + 4, len(rows)
for i in ids: assert i in by_id, ("missing", i)
g = by_id[ids[8]]  # the 2-node gang
assert (g["gpus"], g["nodes"], g["queue"]) == ("8", "2", "speech"), g
u = by_id[ids[9]]
assert (u["partition"], u["qos"], u["queue"]) == ("urgent", "high", "vision"), u
assert by_id[ids[0]]["partition"] == "batch", by_id[ids[0]]
dep = by_id[ids[10]]
assert int(dep["start_s"]) >= int(by_id[ids[0]]["end_s"]), (dep, by_id[ids[0]])
# its -d as written, in the record's ids; no other job but the pair has one
assert dep["dependency"] == "afterok:" + ids[0], dep
p1, p2 = by_id[ids[11]], by_id[ids[12]]
assert all(r["dependency"] == "" for r in rows if r not in (dep, p1, p2)), rows
# the pair: its name as written (quoted in the file), one after the other
assert p1["dependency"] == p2["dependency"] == "singleton", (p1, p2)
assert p1["name"] == p2["name"] == 'pair, "x"', (p1, p2)
assert int(p2["start_s"]) >= int(p1["end_s"]), (p1, p2)
assert all(r["name"] == "wrap" for r in rows if r not in (p1, p2)), rows
# the server's order of submits and ends (journal seqs, finer than the
# seconds): every end after its submit, each end its own, an array's tasks
# submitted with it, and the order of the seconds kept
seq = {k: {i: int(r[k]) for i, r in by_id.items()} for k in ("submit_seq", "start_seq", "end_seq")}
for i, r in by_id.items(): assert 0 < seq["submit_seq"][i] < seq["start_seq"][i] < seq["end_seq"][i], r
assert len(set(seq["end_seq"].values())) == len(rows), seq
assert len(set(seq["start_seq"].values())) == len(rows), seq
assert len({seq["submit_seq"][r["job_id"]] for r in tasks}) == 1, tasks
for a in rows:
    for b in rows:
        for t, k in (("submit_s", "submit_seq"), ("start_s", "start_seq"), ("end_s", "end_seq")):
            if int(a[t]) < int(b[t]): assert seq[k][a["job_id"]] < seq[k][b["job_id"]], (t, a, b)
PY
ok() { echo "ok - $*"; }
ok "export: each of $nsub finished jobs once, with resources, times, account, QoS, partition, array, dependency, name, event order"

# 2 and 3. The replay on the cluster's own slurm.conf, the record first.
"$PHALANX" sim --from-accounting trace.csv --config "$tmp/state/slurm.conf" \
  --policy "$PX_SRC/examples/policies/fifo.conf" --fidelity-jobs fid.csv >report.txt 2>sim.err ||
  fail "sim --from-accounting: $(cat sim.err report.txt)"
grep -E '^ *policy|^ *jobs done|conserv' report.txt | head -5
awk '/^ *policy/ { exit !($2 == "recorded" && $3 == "cluster" && $4 == "fifo") }' report.txt ||
  fail "columns are not recorded, cluster, fifo: $(head -5 report.txt)"
grep -qE "^ *jobs done +$nsub +$nsub +$nsub *$" report.txt || fail "jobs done: $(grep 'jobs done' report.txt)"
grep -qE "^ *conservation +ok +ok +ok *$" report.txt || fail "conservation: $(grep conservation report.txt)"
fid=$(grep "^fidelity cluster:" report.txt) || fail "no fidelity line: $(tail -3 report.txt)"
echo "$fid"
# Before the record kept the server's order of events, its cycles and its
# clock, whether the 2-node gang went before or after the array tasks
# flipped between runs (3% to 185%); with them, 3.7-37% (the dependency,
# not replayed: its job 2 s early, and in one run what it took pushed
# others); with the dependency replayed, 0.0% in 4 runs of 4. The bound:
# a mean |wait difference| of 1 s at most (a second of launch noise).
# The figure on a larger mix is bench_sim_fidelity's, and
# test_sim_fidelity.sh is its short form (docs/simulator.md).
diff=$(echo "$fid" | sed -n 's/.*recorded wait| \([0-9.]*\) s, mean recorded wait \([0-9.]*\) s.*/\1 \2/p')
pct=$(echo "$fid" | sed -n 's/.*error \([0-9.]*\)% of the mean wait/\1/p')
awk -v d="$diff" 'BEGIN { split(d, x, " "); exit !(d != "" && x[1] <= 1.0) }' ||
  fail "fidelity: mean |wait difference| and mean wait $diff s: over 1 s"
# the dependent job starts in the replay after the job it named ended
# there, and the singleton pair's second after its first
python3 - fid.csv trace.csv "${ids[0]}" "${ids[10]}" "${ids[11]}" "${ids[12]}" <<'PY' ||
import csv, sys
rows = {r["job_id"]: r for r in csv.DictReader(open(sys.argv[1]))}
dur = {r["job_id"]: int(r["duration_s"]) for r in csv.DictReader(open(sys.argv[2]))}
for first, then in ((sys.argv[3], sys.argv[4]), (sys.argv[5], sys.argv[6])):
    a, b = rows[first], rows[then]
    assert int(b["replayed_start_s"]) >= int(a["replayed_start_s"]) + dur[first], (a, b)
PY
  fail "dependency or singleton not replayed: $(cat fid.csv)"
ok "replay: recorded first, every job done, conserved, fidelity $pct%, the dependency and the singleton held"

# An export written before accounting kept the order of events (no
# submit_seq, start_seq, end_seq) still replays, every job done.
cut -d, -f1-16 trace.csv >old.csv
"$PHALANX" sim --from-accounting old.csv --config "$tmp/state/slurm.conf" >old.txt 2>old.err ||
  fail "sim --from-accounting of an older export: $(cat old.err)"
grep -qE "^ *jobs done +$nsub +$nsub *$" old.txt || fail "older export: $(grep 'jobs done' old.txt)"
ok "an older export without the order of events replays"

# A foreign row is refused with its line named, and nothing is run.
awk -F, -v OFS=, 'NR == 3 { $6 = $6 + 1 } 1' trace.csv >bad.csv
if "$PHALANX" sim --from-accounting bad.csv --config "$tmp/state/slurm.conf" >/dev/null 2>bad.err; then
  fail "a row whose duration is not end - start was accepted"
fi
grep -q "bad.csv: line 3, column [0-9]* (duration_s): differs from end_s - start_s" bad.err || fail "bad row: $(cat bad.err)"
ok "a foreign row is refused: $(cat bad.err)"

# 4. A requeued job: a `low` gang on all 8 GPUs, preempted by a `high` job
# (phalanx dev's QoS: requeue), that ends at once on its second attempt.
# The server writes the row of each attempt: attempt 0, PREEMPTED, from
# its first start to its requeue, then attempt 1's, COMPLETED.
api() { curl -sf --unix-socket "$tmp/state/server.sock" "http://x$1"; }
rq=$(sub -A ops -q low --requeue -N 2 --gres=gpu:4 --wrap '[ "${SLURM_RESTART_COUNT:-0}" -gt 0 ] || sleep 120')
wait_for 30 sh -c "[ \"\$(squeue -h -j $rq -o %T)\" = RUNNING ]" || fail "job $rq did not start: $(squeue)"
sleep 1 # its first run holds its GPUs a second at least
hi=$(sub -A ops -q high --gres=gpu:1 --wrap 'sleep 1')
restarted() { [ "$(api "/v1/jobs/$rq" | jq -r '.restarts // 0')" = 1 ]; }
wait_for 60 restarted || fail "job $rq not requeued by $hi: $(squeue)"
attempt1() { [ "$(sacct -n -X -j "$rq" -o State,Restarts | tr -s ' ' | sed 's/^ //; s/ $//')" = "COMPLETED 1" ]; }
wait_for 90 attempt1 || fail "job $rq: $(sacct -n -X -j "$rq" -o State,Restarts)"
wait_for 30 sh -c '[ "$(squeue -h | wc -l)" = 0 ]' || fail "jobs left: $(squeue)"
rows=$(sacct -D -n -X -j "$rq" -o State,Restarts | tr -s ' ' | sed 's/^ //; s/ $//')
[ "$rows" = "$(printf 'PREEMPTED 0\nCOMPLETED 1')" ] || fail "job $rq's attempts in sacct -D: $rows"
"$PHALANX" export --since 1h --output trace2.csv 2>export2.err || fail "export: $(cat export2.err)"
grep -q "^phalanx export: $((nsub + 2)) jobs .*; 1 earlier attempts of requeued jobs" export2.err ||
  fail "export summary: $(cat export2.err)"
python3 - trace2.csv "$rq" <<'PY' || fail "the requeued job's rows: $(grep "^$rq," trace2.csv)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
mine = [r for r in rows if r["job_id"] == sys.argv[2]]
assert [r["attempt"] for r in mine] == ["0", "1"], mine  # each attempt once, in order
assert [r["status"] for r in mine] == ["PREEMPTED", "COMPLETED"], mine
at = [i for i, r in enumerate(rows) if r["job_id"] == sys.argv[2]]
assert at[1] == at[0] + 1, at  # together
a, b = mine
assert a["submit_s"] == b["submit_s"] and a["gpus"] == b["gpus"] == "8", mine
assert int(a["start_s"]) < int(a["end_s"]) <= int(b["start_s"]) <= int(b["end_s"]), mine
seqs = [r[k] for r in (a, b) for k in ("submit_seq", "start_seq", "end_seq")]
assert all(seqs), mine  # the server's row of attempt 0 keeps the order of events
assert int(a["start_seq"]) < int(a["end_seq"]) < int(b["start_seq"]), mine
assert int(a["end_s"]) <= int(b["start_s"]), mine
PY
"$PHALANX" sim --from-accounting trace2.csv --config "$tmp/state/slurm.conf" --json >rq.json 2>rq.err ||
  fail "sim --from-accounting with a requeued job: $(cat rq.err)"
lost=$(python3 -c 'import csv, sys; print(sum(int(r["duration_s"]) * int(r["gpus"]) for r in csv.DictReader(open(sys.argv[1]))
  if r["job_id"] == sys.argv[2] and r["attempt"] == "0"))' trace2.csv "$rq") # its first run's GPU-seconds
jq -e --argjson n $((nsub + 2)) --argjson lost "${lost:-0}" '.policies[0] | .policy == "recorded" and .done == $n
  and .preemptions == 1 and .conservation.ok and .conservation.gpu_s_lost_to_preemption == $lost and $lost > 0' \
  rq.json >/dev/null || fail "recorded column with the requeued job (lost ${lost:-?} GPU-s): $(jq -c '.policies[0] | {done, preemptions, conservation}' rq.json)"
jq -e --argjson n $((nsub + 2)) '[.policies[] | .done == $n and .conservation.ok] | all' rq.json >/dev/null ||
  fail "replays with the requeued job: $(jq -c '[.policies[] | {policy, done, conservation}]' rq.json)"
ok "requeued job $rq: attempts 0 and 1 exported once each, in order; replayed once; its first run (${lost:-?} GPU-s) lost in the recorded column"
exit $((fails > 0))
