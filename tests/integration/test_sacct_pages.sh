#!/usr/bin/env bash
# sacct over several pages of accounting (10,000 rows a page, fetched ahead
# by threads of their own, cmd_sacct.c): one real 2-node job with two srun
# steps, its accounting row copied to 25,000 more job ids, and runs of jobs
# with three attempts (requeued twice) where pages end, so that a page ends
# inside a job's attempts. Checks that every job is printed once, in order,
# as its latest attempt with its steps, in text, parsable and --json form,
# that -j reaches a job on a later page, and the cursor the server ends a
# full page with.
source "$(dirname "$0")/lib_dev.sh"
command -v jq >/dev/null && command -v python3 >/dev/null || { echo "jq and python3 are in make deps"; exit 1; }
start_dev "sbatch sacct srun" --nodes 2 --gpus 2 --cpus 8
cd "$tmp"
printf '#!/bin/bash\n#SBATCH -N 2 -t 5\nsrun true\nsrun true\n' >job.sh
id=$(sbatch --parsable -A ops job.sh) || { echo "sbatch failed"; exit 1; }
wait_for 60 sh -c "[ \"\$(sacct -n -P -o JobID -j $id | wc -l)\" = 4 ]" ||
  { echo "job $id did not finish with its steps: $(sacct -P -j "$id")"; exit 1; }
# 25,000 copies (ids 100001..125000); ids 109990..110010 and 119980..120020
# get attempts 1 and 2 too (the second page's first row falls in the first run)
python3 - "$tmp/state/server/state.db" "$id" <<'PY' || { echo "cannot copy the accounting row"; exit 1; }
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=30)
cols = [r[1] for r in db.execute("PRAGMA table_info(acct)")]
rest = ", ".join(c for c in cols if c not in ("job_id", "attempt"))
with db:
    db.execute(f"""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 25000)
                   INSERT INTO acct(job_id, attempt, {rest}) SELECT 100000 + i, 0, {rest} FROM acct, n
                   WHERE acct.job_id = ?""", (int(sys.argv[2]),))
    for lo, hi in ((109990, 110010), (119980, 120020)):
        for a in (1, 2):
            db.execute(f"""INSERT INTO acct(job_id, attempt, {rest}) SELECT job_id, ?, {rest} FROM acct
                           WHERE job_id BETWEEN ? AND ? AND attempt = 0""", (a, lo, hi))
PY
sacct -a -S 2020-01-01 -n -P -o JobID,Restarts,State >"$tmp/p" || fail "sacct -P exited $?"
[ "$(wc -l <"$tmp/p")" = $((25001 * 4)) ] || fail "sacct -P printed $(wc -l <"$tmp/p") lines, want $((25001 * 4))"
grep -v '\.' "$tmp/p" | cut -d'|' -f1 >"$tmp/ids"
seq 100001 125000 | sed "1i $id" | cmp -s - "$tmp/ids" || fail "the jobs are not each once in order: $(diff <(seq 100001 125000 | sed "1i $id") "$tmp/ids" | head -5)"
want_restarts() { if [ "$1" -ge 109990 ] && [ "$1" -le 110010 ] || [ "$1" -ge 119980 ] && [ "$1" -le 120020 ]; then echo 2; else echo 0; fi; }
for j in 109989 109990 109993 110010 110011 119980 120001 120020 125000; do
  got=$(grep -E "^$j(\.[0-9a-z]+)?\|" "$tmp/p" | cut -d'|' -f1,2 | tr '\n' ' ')
  r=$(want_restarts $j)
  [ "$got" = "$j|$r $j.batch|$r $j.0|$r $j.1|$r " ] || fail "job $j: $got"
done
[ "$(sacct -a -S 2020-01-01 | wc -l)" = $((25001 * 4 + 2)) ] || fail "sacct's table: not every line"
n=$(sacct -a -S 2020-01-01 --json | jq '.jobs | length') || fail "sacct --json"
[ "$n" = 25001 ] || fail "sacct --json: $n jobs, want 25001"
[ "$(sacct -n -P -o JobID,Restarts -j 120001 | head -1)" = "120001|2" ] || fail "sacct -j 120001: $(sacct -P -j 120001)"
# the cursor a full page ends with (next_after): before its last job, whose
# rows the next page holds whole; after it when the page holds one job only
sock=${PHALANX_SERVER#unix:}
page() { curl -s --unix-socket "$sock" "http://px/v1/accounting?since=1577836800&$1"; }
page "limit=3&after=109988" | jq -e '(.jobs|map(.job_id))==[109989,109990,109990] and .next_after==109989' >/dev/null ||
  fail "a page ending inside a job's attempts: $(page "limit=3&after=109988" | head -c 300)"
page "limit=3&after=109989" | jq -e '(.jobs|map(.restarts // 0))==[0,1,2] and .next_after==109990' >/dev/null ||
  fail "a page of one job: $(page "limit=3&after=109989" | head -c 300)"
page "limit=11&after=124990" | jq -e '(.jobs|length)==10 and has("next_after")==false' >/dev/null ||
  fail "a last page says next_after"
[ "$fails" = 0 ] && echo "ok   sacct over three pages: 25,001 jobs once each, in order, latest attempts, steps"
exit $((fails > 0))
