#!/usr/bin/env bash
# The MPS road of fractional GPUs (docs/gpus.md), with a stand-in
# nvidia-cuda-mps-control on the agents' PATH (the real one needs an NVIDIA
# driver): the agent finds it; two 0.5 jobs on one GPU start its control
# daemon once (with only that GPU visible, in STATE/mps/gpu<N>), run under
# it (CUDA_MPS_PIPE_DIRECTORY, CUDA_VISIBLE_DEVICES=0, "mps:" in
# PHALANX_GPU_SHARE_ENFORCED), and the daemon is told to quit when the
# second one ends, not the first.
source "$(dirname "$0")/lib_dev.sh"
mkdir -p "$tmp/mpsbin"
cat >"$tmp/mpsbin/nvidia-cuda-mps-control" <<'EOF'
#!/bin/sh
# stand-in: `-d` leaves a "daemon" and its pid file; stdin "quit" ends it
d=${CUDA_MPS_PIPE_DIRECTORY:?}
if [ "${1:-}" = -d ]; then
  echo "start gpu=$CUDA_VISIBLE_DEVICES log=$CUDA_MPS_LOG_DIRECTORY" >>"$d/fake.log"
  setsid sleep 600 </dev/null >/dev/null 2>&1 &
  echo $! >"$d/nvidia-cuda-mps-control.pid"
  exit 0
fi
read -r cmd
echo "$cmd gpu=$CUDA_VISIBLE_DEVICES" >>"$d/fake.log"
[ "$cmd" = quit ] && kill "$(cat "$d/nvidia-cuda-mps-control.pid")" && rm -f "$d/nvidia-cuda-mps-control.pid"
exit 0
EOF
chmod +x "$tmp/mpsbin/nvidia-cuda-mps-control"
export PATH="$tmp/mpsbin:$PATH"
stray() { # a stand-in daemon left by a failed run dies with the test
  local f
  for f in "$tmp"/state/agents/*/mps/gpu*/nvidia-cuda-mps-control.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
}
trap 'stray; cleanup' EXIT
start_dev "sbatch scancel" --nodes 1 --gpus 2
api() { curl -s --unix-socket "$tmp/state/server.sock" "http://x$1" "${@:2}"; }
state_is() { [ "$(api "/v1/jobs/$1" | jq -r .state)" = "$2" ]; }
envof() { sed -n "s/^$2=//p" "$tmp/env.$1" 2>/dev/null; }
cd "$tmp" || exit 1
grep -q "GPU shares: MPS through $tmp/mpsbin/nvidia-cuda-mps-control" "$tmp/state/agents/dev1.log" ||
  fail "the agent did not find the control program: $(grep -i 'GPU shares' "$tmp/state/agents/dev1.log")"
run_one() {
  local j
  j=$(sbatch --parsable -A ops --gpus=0.5 -t 10 --wrap "$(save_env); sleep 600") || exit 1
  wait_for 60 state_is "$j" RUNNING && wait_for 30 test -s "$tmp/env.$j" ||
    { echo "FAIL job $j: $(api "/v1/jobs/$j")" >&2; exit 1; }
  echo "$j"
}
j1=$(run_one) && j2=$(run_one) || exit 1
g=$(envof "$j1" SLURM_JOB_GPUS)
pipe=$tmp/state/agents/dev1/mps/gpu$g
[ "$(envof "$j2" SLURM_JOB_GPUS)" = "$g" ] || fail "the two 0.5 jobs are on GPUs $g and $(envof "$j2" SLURM_JOB_GPUS)"
for j in "$j1" "$j2"; do
  [ "$(envof "$j" CUDA_MPS_PIPE_DIRECTORY)" = "$pipe" ] || fail "job $j: CUDA_MPS_PIPE_DIRECTORY=$(envof "$j" CUDA_MPS_PIPE_DIRECTORY)"
  [ "$(envof "$j" CUDA_VISIBLE_DEVICES)" = 0 ] || fail "job $j: CUDA_VISIBLE_DEVICES=$(envof "$j" CUDA_VISIBLE_DEVICES) under MPS"
  envof "$j" PHALANX_GPU_SHARE_ENFORCED | grep -q '^mps: ' || fail "job $j: $(envof "$j" PHALANX_GPU_SHARE_ENFORCED)"
done
[ "$(grep -c '^start' "$pipe/fake.log")" = 1 ] || fail "daemon starts: $(cat "$pipe/fake.log")"
grep -q "^start gpu=$g log=$pipe/log$" "$pipe/fake.log" || fail "daemon environment: $(cat "$pipe/fake.log")"
echo "ok   jobs $j1 and $j2 share GPU $g under one MPS control daemon ($pipe)"

scancel "$j1"
wait_for 30 sh -c "[ ! -e $pipe/jobs/$j1 ]" || fail "job $j1 still listed in $pipe/jobs after its end"
grep -q '^quit' "$pipe/fake.log" && fail "the daemon was told to quit while job $j2 still runs"
daemon=$(cat "$pipe/nvidia-cuda-mps-control.pid" 2>/dev/null)
kill -0 "$daemon" 2>/dev/null || fail "the daemon did not outlive the first share"
scancel "$j2"
wait_for 30 grep -q "^quit gpu=$g" "$pipe/fake.log" || fail "no quit after the last share: $(cat "$pipe/fake.log")"
wait_for 10 sh -c "! kill -0 $daemon 2>/dev/null" || fail "the daemon $daemon still runs"
echo "ok   the daemon outlived job $j1 and quit when job $j2, the GPU's last share, ended"
exit $((fails > 0))
