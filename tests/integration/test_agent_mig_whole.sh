#!/usr/bin/env bash
# Whole GPUs beside MIG instances on one node (issue 19): the stand-in NVML
# with FAKE_NVML_MIG=partial has GPUs 0 and 1 out of MIG mode (whole h100s)
# and GPUs 2 and 3 as two 3g.40gb each. Gres=gpu:h100:2,gpu:3g.40gb:4
# numbers them by type name: 3g.40gb 0-3 (GPU 2's, then GPU 3's), h100 4-5
# (GPUs 0, 1). A job asking `gpu:h100:1` gets a whole GPU, named by its UUID
# in CUDA_VISIBLE_DEVICES, and a device cgroup that opens its /dev/nvidiaN
# and nothing of the others (whole or MIG); a 3g.40gb job gets an instance;
# an XID on a whole GPU takes it alone out of service.
source "$(dirname "$0")/lib_server.sh"
source "$(dirname "$0")/lib_nvml.sh"
caps=$(for m in $(seq 234 -1 200); do grep -q "^ *$m " /proc/devices || { echo "$m"; break; }; done)
mkdir -p "$T/dev"
printf '%s nvidia-caps\n' "$caps" >"$T/devices"
for g in 0 1 2 3; do mknod "$T/dev/nvidia$g" c 195 "$g"; done
for g in 2 3; do
  for gi in 1 2; do
    m=$((100 * g + 2 * gi))
    printf 'gpu%s/gi%s/access %s\ngpu%s/gi%s/ci0/access %s\n' "$g" "$gi" "$m" "$g" "$gi" $((m + 1)) >>"$T/mig-minors"
    mknod "$T/dev/cap-$g-$gi" c "$caps" "$m"
  done
done
chmod 666 "$T"/dev/*
NVML_ENV="FAKE_NVML_MIG=partial PHALANX_MIG_MINORS=$T/mig-minors PHALANX_PROC_DEVICES=$T/devices" \
  nvml_node gpu:h100:2,gpu:3g.40gb:4
node_is '.gpus == 6 and .gres == "gpu:3g.40gb:4,gpu:h100:2"' || fail "n01: $(expect 200 root GET /v1/nodes/n01)"
grep -q "6 MIG instances (3g.40gb x4, h100 x2).*device cgroup denies" "$T/agent.log" || fail "agent log: $(cat "$T/agent.log")"
W=$T/w
mkdir -m 1777 "$W"
submit() { expect 201 pxalice POST /v1/jobs "{\"job\":{\"name\":\"m\",\"gpus_per_node\":1,\"gpu_type\":\"$1\",\"workdir\":\"$W\",\"script\":\"#!/bin/sh\\nfor d in $T/dev/*; do cat \$d; done > $W/open.\$SLURM_JOB_ID 2>&1\\necho \$CUDA_VISIBLE_DEVICES > $W/cvd.\$SLURM_JOB_ID.\${SLURM_RESTART_COUNT:-0}\\nsleep 300\"}}" | jq -r .job_id; }
jw=$(submit h100) && jm=$(submit 3g.40gb) || fail "submit"
for j in $jw $jm; do wait_for "job $j running" job_is "$j" RUNNING; wait_for "job $j's environment" test -s "$W/cvd.$j.0"; done
[ "$(jq -c .gpus "$T/agent/jobs/$jw.0/launch.json")" = "[4]" ] && [ "$(cat "$W/cvd.$jw.0")" = GPU-fake-0 ] ||
  fail "h100 job on $(jq -c .gpus "$T/agent/jobs/$jw.0/launch.json") sees $(cat "$W/cvd.$jw.0")"
[ "$(jq -c .gpus "$T/agent/jobs/$jm.0/launch.json")" = "[0]" ] && [ "$(cat "$W/cvd.$jm.0")" = MIG-fake-2-0 ] ||
  fail "3g.40gb job on $(jq -c .gpus "$T/agent/jobs/$jm.0/launch.json") sees $(cat "$W/cvd.$jm.0")"
ok "h100 job $jw sees $(cat "$W/cvd.$jw.0"), 3g.40gb job $jm sees $(cat "$W/cvd.$jm.0")"
if [ -d /sys/fs/cgroup/devices ]; then
  denied() { grep -q "$T/dev/$2: Operation not permitted" "$W/open.$1"; }
  ! denied "$jw" nvidia0 && denied "$jw" nvidia1 && denied "$jw" nvidia2 && denied "$jw" nvidia3 &&
    denied "$jw" cap-2-1 && denied "$jw" cap-3-2 || fail "h100 job's devices: $(cat "$W/open.$jw")"
  ! denied "$jm" nvidia2 && ! denied "$jm" cap-2-1 && denied "$jm" cap-2-2 && denied "$jm" nvidia0 && denied "$jm" nvidia3 ||
    fail "3g.40gb job's devices: $(cat "$W/open.$jm")"
  ok "device cgroups: the h100 job opens /dev/nvidia0 only, the 3g.40gb job GPU 2 and its own capability"
fi
echo "xid 0 79" >>"$T/faults"
out1() { node_is '.gpus_out == 1 and (.gpu_health | test("^4:UNUSABLE"))'; }
wait_for "GPU 0 (index 4) out of service" out1
wait_for "h100 job requeued" sh -c "[ \"\$(curl -s --unix-socket '$SOCK' http://x/v1/jobs/$jw | jq -r '.restarts // 0')\" -ge 1 ]"
job_is "$jm" RUNNING || fail "the 3g.40gb job stopped: $(expect 200 root GET "/v1/jobs/$jm")"
ok "XID on whole GPU 0: index 4 alone out of service, job $jw requeued, job $jm runs on"
nvml_stop_agent
