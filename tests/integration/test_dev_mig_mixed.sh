#!/usr/bin/env bash
# An emulated mixed MIG layout on a real `phalanx dev` cluster (issue 19):
# `--gpus 7:1g.10gb,1:3g.40gb,2:2g.20gb` makes each node GPU 0 as seven
# 1g.10gb instances and GPU 1 as a 3g.40gb beside two 2g.20gb; the node
# advertises the three typed GRES (scontrol show node, sinfo), and jobs
# asking --gres=gpu:3g.40gb:1 and --gpus=1g.10gb:2 run on instances of
# exactly those profiles, seeing exactly their MIG UUIDs; a profile the
# node lacks is refused with the field named.
source "$(dirname "$0")/lib_dev.sh"
start_dev "sbatch scontrol sinfo" --nodes 1 --gpus 7:1g.10gb,1:3g.40gb,2:2g.20gb
api() { curl -s --unix-socket "$tmp/state/server.sock" "http://x$1" "${@:2}"; }
state_is() { [ "$(api "/v1/jobs/$1" | jq -r .state)" = "$2" ]; }
cd "$tmp" || exit 1
gres=gpu:1g.10gb:7,gpu:2g.20gb:2,gpu:3g.40gb:1
wait_for 60 sh -c '[ "$(sinfo -h -t idle -o %D -p batch)" = 1 ]' || { echo "FAIL node not idle"; sinfo; exit 1; }
scontrol show node dev1 | grep -qx "   Gres=$gres" || fail "scontrol show node: $(scontrol show node dev1 | grep Gres)"
[ "$(sinfo -h -p batch -o %G)" = "$gres" ] || fail "sinfo %G: $(sinfo -h -p batch -o %G)"
echo "ok   dev1 advertises $gres"

run() { # SBATCH-GPU-OPTION: prints the job id once it runs and wrote what it sees
  local j
  j=$(sbatch --parsable -t 10 "$1" --wrap "echo \$CUDA_VISIBLE_DEVICES > $tmp/cvd.\$SLURM_JOB_ID; sleep 600") ||
    { echo "FAIL sbatch $1: $j" >&2; exit 1; }
  wait_for 60 state_is "$j" RUNNING && wait_for 30 test -s "$tmp/cvd.$j" || { echo "FAIL job $j: $(api "/v1/jobs/$j")" >&2; exit 1; }
  echo "$j"
}
j3=$(run --gres=gpu:3g.40gb:1) && j1=$(run --gpus=1g.10gb:2) || exit 1
# indices by type name: 1g.10gb 0-6 (GPU 0), 2g.20gb 7-8 and 3g.40gb 9 (GPU 1, instances 1-2 and 0)
[ "$(cat "$tmp/cvd.$j3")" = MIG-EMU-dev1-1-0 ] || fail "3g.40gb job sees $(cat "$tmp/cvd.$j3")"
cvd1=$(cat "$tmp/cvd.$j1")
echo "$cvd1" | grep -Eqx 'MIG-EMU-dev1-0-[0-6],MIG-EMU-dev1-0-[0-6]' || fail "1g.10gb x2 job sees $cvd1"
api /v1/nodes/dev1 | jq -e '.gpus_alloc == 3 and .gres_used == "gpu:1g.10gb:2,gpu:2g.20gb:0,gpu:3g.40gb:1"' >/dev/null ||
  fail "dev1: $(api /v1/nodes/dev1)"
scontrol show node dev1 | grep -qx "   GresUsed=gpu:1g.10gb:2,gpu:2g.20gb:0,gpu:3g.40gb:1" ||
  fail "scontrol show node: $(scontrol show node dev1 | grep Gres)"
api /slurm/v0.0.39/nodes | jq -e --arg g "$gres" '.nodes[0].gres == $g and .nodes[0].gres_used == "gpu:1g.10gb:2,gpu:2g.20gb:0,gpu:3g.40gb:1"' >/dev/null ||
  fail "slurmrestd nodes: $(api /slurm/v0.0.39/nodes | head -c 600)"
echo "ok   --gres=gpu:3g.40gb:1 sees $(cat "$tmp/cvd.$j3"), --gpus=1g.10gb:2 sees $cvd1"
out=$(sbatch --gres=gpu:4g.40gb:1 --wrap true 2>&1) && fail "a profile dev1 lacks was accepted: $out"
echo "$out" | grep -q 'gpu_type: no node has GPUs of type "4g.40gb"' || fail "refusal: $out"
echo "ok   --gres=gpu:4g.40gb:1 refused: $out"
exit $((fails > 0))
