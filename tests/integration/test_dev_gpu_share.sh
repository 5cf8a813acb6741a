#!/usr/bin/env bash
# Fractional GPUs on a real `phalanx dev` cluster (one node, 2 emulated
# GPUs; dev's batch partition has GpuShares=YES): two --gpus=0.5 jobs share
# one GPU (same CUDA_VISIBLE_DEVICES, the MPS limits in their environment,
# which says plainly that nothing enforces them without MPS), a third opens
# the other GPU, a whole-GPU job waits instead of landing on a shared GPU
# and takes the second one once it is whole again; squeue and scontrol show
# the fraction; bad fractions are refused with the option named; a finished
# 0.5 job is charged half a GPU in the usage report and in fair share.
source "$(dirname "$0")/lib_dev.sh"
start_dev "sbatch squeue scontrol scancel sinfo sacct" --nodes 1 --gpus 2
api() { curl -s --unix-socket "$tmp/state/server.sock" "http://x$1" "${@:2}"; }
field() { api "/v1/jobs/$1" | jq -r ".$2 // empty"; }
state_is() { [ "$(field "$1" state)" = "$2" ]; }
launch_file() { echo "$tmp/state/agents/dev1/jobs/$1.0/launch.json"; }
launch() { jq -c "$2" "$(launch_file "$1")" 2>/dev/null; } # JOB FILTER
envof() { sed -n "s/^$2=//p" "$tmp/env.$1" 2>/dev/null; }                            # JOB NAME
cd "$tmp" || exit 1
submit() { # ACCOUNT GPUS SECONDS: prints the job id
  sbatch --parsable -A "$1" --gpus="$2" -t 10 --wrap "$(save_env); sleep $3"
}
run_one() { # ACCOUNT GPUS: a job that stays, once it runs and wrote its environment
  local j
  j=$(submit "$1" "$2" 600) || { echo "FAIL sbatch --gpus=$2" >&2; exit 1; }
  wait_for 60 state_is "$j" RUNNING || { echo "FAIL job $j: $(api "/v1/jobs/$j")" >&2; exit 1; }
  wait_for 30 test -s "$tmp/env.$j" || { echo "FAIL job $j wrote no environment" >&2; exit 1; }
  echo "$j"
}
wait_for 60 sh -c '[ "$(sinfo -h -t idle -o %D -p batch)" = 1 ]' || { echo "FAIL node not idle"; sinfo; exit 1; }

j1=$(run_one ops 0.5) && j2=$(run_one ops 0.5) && j3=$(run_one ops 0.5) || exit 1
g1=$(launch "$j1" .gpus) g2=$(launch "$j2" .gpus) g3=$(launch "$j3" .gpus)
[ "$g1" = "$g2" ] || fail "0.5 jobs $j1 and $j2 on GPUs $g1 and $g2, not one shared GPU"
[ "$g3" != "$g1" ] || fail "third 0.5 job $j3 did not open another GPU ($g3)"
[ "$(launch "$j1" .gpu_share)" = 50 ] || fail "launch of $j1: gpu_share $(launch "$j1" .gpu_share)"
v1=$(envof "$j1" CUDA_VISIBLE_DEVICES) v2=$(envof "$j2" CUDA_VISIBLE_DEVICES) v3=$(envof "$j3" CUDA_VISIBLE_DEVICES)
[ -n "$v1" ] && [ "$v1" = "$v2" ] && [ "$v1" != "$v3" ] || fail "CUDA_VISIBLE_DEVICES $v1 / $v2 / $v3"
[ "$(envof "$j1" CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)" = 50 ] || fail "no CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 in $j1"
envof "$j1" CUDA_MPS_PINNED_DEVICE_MEM_LIMIT | grep -Eq '^0=[0-9]+MB$' ||
  fail "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT of $j1: $(envof "$j1" CUDA_MPS_PINNED_DEVICE_MEM_LIMIT)"
[ "$(envof "$j1" PHALANX_GPU_SHARE)" = 0.50 ] || fail "PHALANX_GPU_SHARE of $j1: $(envof "$j1" PHALANX_GPU_SHARE)"
envof "$j1" PHALANX_GPU_SHARE_ENFORCED | grep -q '^none: no CUDA MPS' ||
  fail "PHALANX_GPU_SHARE_ENFORCED of $j1: $(envof "$j1" PHALANX_GPU_SHARE_ENFORCED)"
echo "ok   0.5 jobs $j1 and $j2 share GPU $g1 (CUDA_VISIBLE_DEVICES=$v1, MPS limits set, not enforced here); $j3 opened GPU $g3"

[ "$(squeue -h -j "$j1" -o %b)" = "gres:gpu:0.50" ] || fail "squeue %b: $(squeue -h -j "$j1" -o %b)"
scontrol show job "$j1" | grep -q "TresPerJob=gres:gpu:0.50" || fail "scontrol show job: $(scontrol show job "$j1")"
scontrol show job "$j1" | grep -q "gres/gpu=0.50" || fail "scontrol TRES: $(scontrol show job "$j1" | grep -i tres)"
scontrol show node dev1 | grep -q "GpusShared=2 GpuSharesUsed=1.50" || fail "scontrol show node: $(scontrol show node dev1)"
echo "ok   squeue and scontrol show the fraction"

whole=$(submit ops 1 600) || fail "sbatch --gpus=1"
reason_is() { [ "$(field "$whole" reason)" = "$1" ]; }
wait_for 30 reason_is Resources || fail "whole-GPU job $whole: $(api "/v1/jobs/$whole" | jq -c '{state, reason}')"
state_is "$whole" PENDING || fail "whole-GPU job $whole runs beside the shares: $(launch "$whole" .gpus)"
scancel "$j3"
wait_for 60 state_is "$whole" RUNNING || fail "whole-GPU job $whole did not start once GPU $g3 was whole"
# RUNNING is published once the start is journaled; the agent writes the
# launch when the order reaches it, which a loaded machine may delay
wait_for 30 test -s "$(launch_file "$whole")" || fail "whole-GPU job $whole: no launch on the agent"
[ "$(launch "$whole" .gpus)" = "$g3" ] || fail "whole-GPU job $whole on $(launch "$whole" .gpus), not the freed $g3"
[ "$(launch "$whole" '.gpu_share // 0')" = 0 ] || fail "whole-GPU job $whole got a share"
echo "ok   a whole-GPU job waited while both GPUs were shared, then took GPU $g3 when its last share ended"

# a killed server takes the shares back from its journal: GPU $g1 is still
# full (two halves), so a new 0.5 job waits instead of landing there
old=$(cat "$tmp/state/server.pid")
kill -9 "$old"
restarted() { [ "$(cat "$tmp/state/server.pid")" != "$old" ] && api /v1/nodes >/dev/null; }
wait_for 60 restarted || { echo "FAIL the server did not come back"; exit 1; }
for j in "$j1" "$j2" "$whole"; do state_is "$j" RUNNING || fail "job $j after the restart: $(field "$j" state)"; done
late=$(submit ops 0.5 600) || fail "sbatch after the restart"
late_reason() { [ "$(field "$late" reason)" = Resources ]; }
wait_for 30 late_reason || fail "0.5 job $late after the restart: $(api "/v1/jobs/$late" | jq -c '{state, reason}')"
scontrol show node dev1 | grep -q "GpusShared=1 GpuSharesUsed=1.00" || fail "after the restart: $(scontrol show node dev1)"
scancel "$late"
echo "ok   after kill -9 of the server the shares are back: GPU $g1 full, a new 0.5 job waits"

for bad in "--gpus=0.3x|Invalid --gpus specification: 0.3x" "--gpus=1.5|a fraction is part of one GPU" \
  "--gres=gpu:0.333|GPU fractions are in hundredths"; do
  out=$(sbatch -A ops "${bad%%|*}" --wrap true 2>&1) && fail "sbatch ${bad%%|*} accepted: $out"
  grep -qF "${bad#*|}" <<<"$out" || fail "sbatch ${bad%%|*}: $out"
done
out=$(sbatch -A ops --gpus=0.5 -N 2 --wrap true 2>&1) && fail "a fraction on 2 nodes accepted: $out"
grep -q "gpu_share: a fraction of one GPU runs on one node" <<<"$out" || fail "sbatch --gpus=0.5 -N 2: $out"
echo "ok   bad fractions refused, naming the option or field"

scancel "$j1" "$j2" "$whole"
since=$(date +%s)
half=$(submit speech 0.5 2) || fail "sbatch speech"
wait_for 60 state_is "$half" COMPLETED || fail "0.5 job $half: $(api "/v1/jobs/$half" | jq -c '{state, reason}')"
secs=$(( $(field "$half" end_time) - $(field "$half" start_time) ))
usage_row() { api "/v1/usage?by=account&since=$since" | jq -e '.usage[] | select(.key == "speech")' >/dev/null; }
wait_for 30 usage_row || fail "no usage row for speech: $(api "/v1/usage?by=account&since=$since")"
got=$(api "/v1/usage?by=account&since=$since" | jq '.usage[] | select(.key == "speech") | .gpu_hours * 3600')
jq -en --argjson g "$got" --argjson s "$secs" '($g - 0.5 * $s) | fabs < 0.01' >/dev/null ||
  fail "usage of the 0.5 job: $got GPU-seconds for $secs s (want $(jq -n "0.5 * $secs"))"
# /v1/shares is rebuilt at most once a second: right after COMPLETED it may
# still show the usage of a moment before the end (another job's end was
# published within that second), so the charge is waited for
fs_charged() {
  raw=$(api /v1/shares | jq '[.. | objects | select(.account? == "speech" and (.user? == null)) | .raw_usage][0] // 0')
  jq -en --argjson r "$raw" --argjson s "$secs" '$s > 0 and (($r - 0.5 * $s) | fabs) <= 0.02 * $s' >/dev/null
}
wait_for 10 fs_charged || fail "fair share of the 0.5 job: raw usage $raw for $secs s (want about $(jq -n "0.5 * $secs"))"
sacct -n -P -j "$half" -o AllocTRES | grep -q "gres/gpu=0.50" || fail "sacct AllocTRES: $(sacct -n -P -j "$half" -o AllocTRES)"
echo "ok   the 0.5 job ran $secs s and was charged $got GPU-seconds (usage) and $raw billable seconds (fair share)"
exit $((fails > 0))
