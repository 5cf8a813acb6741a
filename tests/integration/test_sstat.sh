#!/usr/bin/env bash
# sstat on a real `phalanx dev` cluster of 2 nodes (heartbeat 1 s): a 2-node
# job whose tasks hold 64 MiB and spin shows, within a few heartbeats, a
# MaxRSS of at least 64 MiB on one of its nodes, CPU time growing, and its
# tasks counted; another user is refused; a finished job is not running.
source "$(dirname "$0")/lib_dev.sh"
[ "$(id -u)" -eq 0 ] || px_skip root "needs root (cgroups of the jobs)"
mkdir -p "$tmp/work"
start_dev "sbatch squeue sstat scancel sacct srun" --nodes 2 --heartbeat 1
cd "$tmp/work"
cat >hold.py <<'PY'
import time
block = bytearray(64 << 20)
for i in range(0, len(block), 4096):
    block[i] = 1
t = time.time()
while time.time() - t < 120:
    pass
PY
id=$(sbatch --parsable -A ops -N 2 -t 5 --wrap "srun python3 $tmp/work/hold.py")
running() { [ "$(squeue -h -j "$id" -o %T)" = RUNNING ]; }
wait_for 60 running || { fail "job $id did not start"; exit 1; }
big() {
  line=$(sstat -n -P -j "$id" -o JobID,MaxRSS,MaxRSSNode,AveCPU,NTasks 2>/dev/null) || return 1
  IFS='|' read -r jid rss node cpu ntasks <<<"$line"
  [ "${rss%K}" -ge 65536 ] 2>/dev/null && [[ $node == dev[12] ]] && [ "$ntasks" -ge 2 ] && [ "$cpu" != 00:00.000 ]
}
wait_for 60 big || fail "sstat: '$(sstat -P -j "$id" -o JobID,MaxRSS,MaxRSSNode,AveCPU,NTasks 2>&1)'"
echo "ok   sstat -j $id: $line"
out=$(sstat -j "$id")
[ "$(sed -n 1p <<<"$out" | awk '{print $1, $2, $3}')" = "JobID MaxRSS MaxRSSNode" ] || fail "sstat header: $out"
out=$(sstat -j "$id" -o JobID,Nope 2>&1)
[[ $out == *'Invalid field requested: "Nope"'* ]] || fail "bad field: $out"
if command -v setpriv >/dev/null; then
  chmod 755 "$tmp" "$tmp/state" # the socket's directory: another user reaches the server, which refuses
  out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$PHALANX" stat -j "$id" 2>&1)
  [[ $out == *"rule own-job"* ]] || fail "another user: $out"
fi
scancel "$id"
done_() { [ "$(squeue -h -t all -j "$id" -o %T)" = CANCELLED ]; }
wait_for 30 done_ || fail "job $id did not end"
out=$(sstat -j "$id" 2>&1)
[[ $out == *"couldn't get steps for job $id"*"is not running"* ]] || fail "finished job: $out"
echo "ok   sstat's refusals: a bad field, another user, a job that no longer runs"
[ "$fails" = 0 ]
