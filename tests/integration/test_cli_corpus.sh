#!/usr/bin/env bash
# Every script of the corpus (tests/data/scripts/) submitted with `sbatch`
# as a user would, through the real client: it must be accepted ("Submitted
# batch job N", exit 0) and the job the server holds must carry the name
# and time limit the script asked for.
#
# The server here is the API stand-in (cli_fake_server.py): `phalanx dev`
# (server + agents) has not landed yet, so placement, environment and output
# files are not checked by this test; the unit test cli/test_corpus_parse
# checks every directive of every script.
set -uo pipefail
: "${PHALANX:?}" "${PX_SRC:?}"
tmp=$(mktemp -d)
srv_pid=
trap '[ -n "$srv_pid" ] && kill $srv_pid 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/work"
for c in sbatch squeue scontrol; do ln -s "$PHALANX" "$tmp/bin/$c"; done
export PATH="$tmp/bin:$PATH" PHALANX_SERVER="unix:$tmp/px.sock" TZ=UTC
python3 "$PX_SRC/tests/integration/cli_fake_server.py" "$tmp/px.sock" &
srv_pid=$!
deadline=$((SECONDS + 10))
until [ -S "$tmp/px.sock" ]; do
  [ $SECONDS -ge $deadline ] && { echo "stand-in server did not start"; exit 1; }
  sleep 0.05
done
cd "$tmp/work"
fails=0 n=0
for script in "$PX_SRC"/tests/data/scripts/*.sh; do
  n=$((n + 1))
  base=$(basename "$script")
  out=$(sbatch "$script" 2>&1)
  rc=$?
  id=${out#Submitted batch job }
  if [ $rc -ne 0 ] || [ "$out" != "Submitted batch job $id" ]; then
    echo "FAIL $base: rc=$rc: $out"; fails=$((fails + 1)); continue
  fi
  # The name: the script's name= expectation, else the script's file name.
  want=$(grep -o '# expect:.*name=[^=]*' "$script" | sed -E 's/.* name=|# expect: name=//; s/ [a-z_]+$//' | head -n1)
  [ -n "$want" ] || want=$base
  got=$(scontrol show job "$id" | sed -n 's/^JobId=[0-9]* JobName=//p')
  if [ "$got" != "$want" ]; then
    echo "FAIL $base: JobName=$got, want $want"; fails=$((fails + 1)); continue
  fi
  echo "ok   $base -> job $id ($got)"
done
[ $n -ge 30 ] || { echo "FAIL only $n scripts in the corpus"; fails=$((fails + 1)); }
# Scripts that parse squeue see every one of them.
[ "$(squeue -h -o %i | wc -l)" -eq "$n" ] || { echo "FAIL squeue -h -o %i does not list $n jobs"; fails=$((fails + 1)); }
exit $((fails > 0))
